/*
 * serve_events.c - events.k8s.io/v1 Events and their series (serve/serve.h), as client-go's
 * tools/events broadcaster records them for kube-scheduler.
 *
 * Mirrors staging/src/k8s.io/client-go/tools/events (event_recorder.go makeEvent,
 * event_broadcaster.go recordToSink, recordEvent, finishSeries, refreshExistingEventSeries):
 *   - An Event is named "<regarding name>.<eventTime in ns, hex>" in the regarding object's
 *     namespace.
 *   - Two Events are isomorphic when they agree on type, action, reason, reportingController,
 *     reportingInstance and the whole regarding and related references (resourceVersion
 *     included); the note is not part of the key. The first of a kind is POSTed and
 *     remembered. The second turns it into a series: a strategic merge patch of that first
 *     Event, {"series":{"count":2,"lastObservedTime":T}}. Later ones only count in memory
 *     (count + 1, lastObservedTime).
 *   - Every finish period (6 min) a series whose lastObservedTime is older than the period
 *     gets its final count patched and is forgotten, and a single Event whose eventTime is
 *     older than that is forgotten. Every refresh period (30 min) each series is patched
 *     with its count. The caller drives both (ks_event_series_tick).
 *   - A series patch answered 404 (the Event expired or was deleted) creates the Event whole,
 *     series included; that create answered 409 AlreadyExists means it was just created
 *     again, so the patch is retried (the writer does both, serve/serve_writer.c).
 *
 * Deviations: a patch that would write the count the server already has is not sent (the
 * server would write nothing); an Event created again after a 404 carries the note of the
 * series' second occurrence (upstream keeps the first's); a series is forgotten once its
 * final patch is queued, not when the server has answered.
 *
 * Memory: a single Event costs one map entry keyed by a 64-bit hash of the whole key and the
 * regarding object's name, uid and resourceVersion (the isomorphism test compares both);
 * a series also keeps its Event's body, to patch and re-create it without the regarding
 * object. Thread-safe: one mutex; it is never held while calling out.
 */
#include "serve.h"

#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/internal/json_write.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTE_MAX    1024 /* bytes of note the API accepts */
#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/"

struct series_entry {
    int64_t event_time_ns; /* the first Event's eventTime, the suffix of its name */
    int64_t last_ns;       /* series.lastObservedTime; 0 while single */
    uint32_t count;        /* 1 while single */
    uint32_t sent_count;   /* the count the server was last sent (0: none) */
    char *series;          /* a series: namespace, NUL, Event name, NUL, body up to the series */
};

struct ks_event_series {
    struct ks_mutex lock;
    int64_t finish_ns, refresh_ns;
    struct ks_smap events; /* series_key() -> struct series_entry */
    size_t nseries;
};

/* ---- JSON ------------------------------------------------------------------------------- */

/* metav1.MicroTime: RFC 3339 with microseconds, UTC. */
static void micro_time(int64_t ns, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%06dZ", (int)(ns % 1000000000 / 1000));
}

static const char *pod_ns(const struct ks_pod *pod)
{
    return ks_intern_str(pod->meta.namespace_id);
}

void ks_serve_object_ref(FILE *out, const char *kind, const char *namespace_, const char *name,
                         const char *uid, const char *resource_version)
{
    fputs("{\"kind\":", out);
    ks_json_write_cstr(out, kind);
    fputs(",\"namespace\":", out);
    ks_json_write_cstr(out, namespace_ ? namespace_ : "");
    fputs(",\"name\":", out);
    ks_json_write_cstr(out, name ? name : "");
    if (uid && uid[0]) {
        fputs(",\"uid\":", out);
        ks_json_write_cstr(out, uid);
    }
    fputs(",\"apiVersion\":\"v1\"", out);
    if (resource_version && resource_version[0]) {
        fputs(",\"resourceVersion\":", out);
        ks_json_write_cstr(out, resource_version);
    }
    fputc('}', out);
}

static void object_ref(FILE *out, const struct ks_pod *pod)
{
    ks_serve_object_ref(out, "Pod", pod_ns(pod), pod->meta.name, pod->meta.uid, pod->meta.resource_version);
}

/* The fields that make the key: "reportingController":...,"type":... (no braces). */
static void key_fields(FILE *out, const struct ks_serve_event *ev)
{
    fputs("\"reportingController\":", out);
    ks_json_write_cstr(out, ev->reporting_controller);
    fputs(",\"reportingInstance\":", out);
    ks_json_write_cstr(out, ev->reporting_instance);
    fputs(",\"action\":", out);
    ks_json_write_cstr(out, ev->action);
    fputs(",\"reason\":", out);
    ks_json_write_cstr(out, ev->reason);
    fputs(",\"regarding\":", out);
    object_ref(out, ev->regarding);
    if (ev->related) {
        fputs(",\"related\":", out);
        object_ref(out, ev->related);
    }
    fputs(",\"type\":", out);
    ks_json_write_cstr(out, ev->type);
}

static void event_name(const struct ks_serve_event *ev, int64_t event_time_ns, char *buf, size_t len)
{
    snprintf(buf, len, "%s.%llx", ev->regarding->meta.name, (unsigned long long)event_time_ns);
}

/* The Event up to where its series would go (no closing brace), eventTime @event_time_ns. */
static void event_head(FILE *out, const struct ks_serve_event *ev, int64_t event_time_ns)
{
    char name[400], when[40], note[NOTE_MAX + 1];
    event_name(ev, event_time_ns, name, sizeof(name));
    micro_time(event_time_ns, when, sizeof(when));
    snprintf(note, sizeof(note), "%s", ev->note ? ev->note : "");
    fputs("{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":", out);
    ks_json_write_cstr(out, name);
    fputs(",\"namespace\":", out);
    ks_json_write_cstr(out, pod_ns(ev->regarding));
    fputs("},\"eventTime\":", out);
    ks_json_write_cstr(out, when);
    fputc(',', out);
    key_fields(out, ev);
    fputs(",\"note\":", out);
    ks_json_write_cstr(out, note);
}

char *ks_serve_event_body(const struct ks_serve_event *ev, size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    event_head(out, ev, ev->now_ns);
    fputc('}', out);
    return ks_serve_text_close(out, &buf);
}

static void series_json(FILE *out, uint32_t count, int64_t last_ns)
{
    char when[40];
    micro_time(last_ns, when, sizeof(when));
    fprintf(out, "{\"count\":%u,\"lastObservedTime\":\"%s\"}", count, when);
}

/* ---- the cache -------------------------------------------------------------------------- */

/*
 * The map key of @ev: the hash of its key fields (16 hex digits), then the regarding object's
 * name, uid and resourceVersion, each after a '/', which none of them can hold (names are DNS
 * subdomains, uids and resourceVersions the API server's). Its length; 0 when it does not fit
 * in @cap (the Event is then not remembered); -ENOMEM.
 */
static int series_key(const struct ks_serve_event *ev, char *buf, size_t cap)
{
    const struct ks_pod *pod = ev->regarding;
    char *fields = NULL;
    size_t fields_len = 0;
    FILE *f = open_memstream(&fields, &fields_len);
    if (!f)
        return -ENOMEM;
    key_fields(f, ev);
    if (!ks_serve_text_close(f, &fields))
        return -ENOMEM;
    uint64_t h = ks_smap_hash(fields);
    free(fields);
    int n = snprintf(buf, cap, "%016llx/%s/%s/%s", (unsigned long long)h, pod->meta.name,
                     pod->meta.uid ? pod->meta.uid : "",
                     pod->meta.resource_version ? pod->meta.resource_version : "");
    return n < 0 || (size_t)n >= cap ? 0 : n;
}

int ks_event_series_create(int64_t finish_ns, int64_t refresh_ns, struct ks_event_series **out)
{
    struct ks_event_series *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    ks_mutex_init(&s->lock, KS_LOCK_SERVE_EVENTS);
    s->finish_ns = finish_ns > 0 ? finish_ns : KS_EVENT_SERIES_FINISH_NS;
    s->refresh_ns = refresh_ns > 0 ? refresh_ns : KS_EVENT_SERIES_REFRESH_NS;
    *out = s;
    return 0;
}

static void entry_free(void *value)
{
    struct series_entry *e = value;
    free(e->series);
    free(e);
}

void ks_event_series_destroy(struct ks_event_series *s)
{
    if (!s)
        return;
    ks_smap_clear(&s->events, entry_free);
    ks_mutex_destroy(&s->lock);
    free(s);
}

int64_t ks_event_series_period(const struct ks_event_series *s, bool refresh)
{
    return refresh ? s->refresh_ns : s->finish_ns;
}

void ks_event_write_free(struct ks_event_write *w)
{
    free(w->path);
    free(w->body);
    free(w->create_path);
    free(w->create_body);
    memset(w, 0, sizeof(*w));
}

/* ks_event_write.shard of an Event regarding @name (@len bytes) in @namespace_ */
static uint64_t event_shard(const char *namespace_, const char *name, size_t len)
{
    uint64_t h = ks_smap_hash(namespace_) ^ 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
    return h;
}

/* The PATCH that sets @e's series, and the Event created whole should it be gone. Lock held. */
static int series_write(const struct series_entry *e, struct ks_event_write *w)
{
    const char *ns = e->series, *name = ns + strlen(ns) + 1, *head = name + strlen(name) + 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *out;

    memset(w, 0, sizeof(*w));
    w->method = "PATCH";
    w->shard = event_shard(ns, name, (size_t)(strrchr(name, '.') - name)); /* "<regarding>.<hex>" */
    if (asprintf(&w->path, EVENTS_PATH "%s/events/%s", ns, name) < 0) {
        w->path = NULL;
        goto err;
    }
    if (asprintf(&w->create_path, EVENTS_PATH "%s/events", ns) < 0) {
        w->create_path = NULL;
        goto err;
    }
    if (!(out = open_memstream(&buf, &len)))
        goto err;
    fputs("{\"series\":", out);
    series_json(out, e->count, e->last_ns);
    fputc('}', out);
    if (!(w->body = ks_serve_text_close(out, &buf)))
        goto err;
    w->len = len;
    buf = NULL;
    if (!(out = open_memstream(&buf, &len)))
        goto err;
    fputs(head, out);
    fputs(",\"series\":", out);
    series_json(out, e->count, e->last_ns);
    fputc('}', out);
    if (!(w->create_body = ks_serve_text_close(out, &buf)))
        goto err;
    w->create_len = len;
    return 0;
err:
    ks_event_write_free(w);
    return -ENOMEM;
}

/* Make @e a series: keep what its patch and a re-create need. Lock held. */
static int promote(struct series_entry *e, const struct ks_serve_event *ev)
{
    char name[400], *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return -ENOMEM;
    event_name(ev, e->event_time_ns, name, sizeof(name));
    fputs(pod_ns(ev->regarding), out);
    fputc('\0', out);
    fputs(name, out);
    fputc('\0', out);
    event_head(out, ev, e->event_time_ns);
    if (!(e->series = ks_serve_text_close(out, &buf)))
        return -ENOMEM;
    return 0;
}

int ks_event_series_record(struct ks_event_series *s, const struct ks_serve_event *ev,
                           struct ks_event_write *out)
{
    char key[1300];
    int rc = -ENOMEM;

    memset(out, 0, sizeof(*out));
    int key_len = series_key(ev, key, sizeof(key));
    if (key_len < 0)
        return key_len;

    ks_mutex_lock(&s->lock);
    struct series_entry *e = key_len ? ks_smap_get(&s->events, key) : NULL;
    if (e && e->series) {
        /* a series already: only counted, written at the next finish or refresh */
        e->count++;
        e->last_ns = ev->now_ns;
        rc = 0;
    } else if (e) {
        /* the second: the first Event becomes a series */
        if (promote(e, ev) == 0) {
            e->count = 2;
            e->last_ns = ev->now_ns;
            s->nseries++;
            if ((rc = series_write(e, out)) == 0) {
                e->sent_count = 2;
                rc = 1;
            }
        }
    } else {
        /* the first: created, and remembered unless its key does not fit */
        size_t len = 0;
        char *body = ks_serve_event_body(ev, &len);
        if (body && asprintf(&out->path, EVENTS_PATH "%s/events", pod_ns(ev->regarding)) >= 0) {
            out->method = "POST";
            out->shard = event_shard(pod_ns(ev->regarding), ev->regarding->meta.name,
                                     strlen(ev->regarding->meta.name));
            out->body = body;
            out->len = len;
            rc = 1;
        } else {
            free(body);
            out->path = NULL;
        }
        if (rc == 1 && key_len && (e = calloc(1, sizeof(*e)))) {
            e->event_time_ns = ev->now_ns;
            e->count = 1;
            if (ks_smap_put(&s->events, key, e, NULL) < 0)
                free(e);
        }
    }
    ks_mutex_unlock(&s->lock);
    return rc;
}

/* What a tick gathers, under the lock. */
struct tick {
    struct ks_event_series *s;
    int64_t now_ns;
    bool refresh;
    struct ks_event_write *writes;
    size_t n, cap;
};

/* ks_smap_sweep() callback: queue @value's patch if it is due; true when it is forgotten. */
static bool tick_entry(void *ctx, const char *key, void *value)
{
    struct tick *t = ctx;
    struct series_entry *e = value;
    bool ended = (e->series ? e->last_ns : e->event_time_ns) < t->now_ns - t->s->finish_ns;
    (void)key;
    if (e->series && (ended || t->refresh) && e->count != e->sent_count) {
        if (t->n == t->cap) {
            size_t ncap = t->cap ? t->cap * 2 : 16;
            struct ks_event_write *g = realloc(t->writes, ncap * sizeof(*g));
            if (!g)
                return false; /* out of memory: the next tick tries again */
            t->writes = g;
            t->cap = ncap;
        }
        if (series_write(e, &t->writes[t->n]) < 0)
            return false;
        t->n++;
        e->sent_count = e->count;
    }
    if (!ended)
        return false;
    if (e->series)
        t->s->nseries--;
    entry_free(e);
    return true;
}

void ks_event_series_tick(struct ks_event_series *s, int64_t now_ns, bool refresh,
                          void (*emit)(void *ctx, struct ks_event_write *w), void *ctx)
{
    struct tick t = {.s = s, .now_ns = now_ns, .refresh = refresh};

    ks_mutex_lock(&s->lock);
    ks_smap_sweep(&s->events, tick_entry, &t);
    ks_mutex_unlock(&s->lock);
    for (size_t i = 0; i < t.n; i++)
        emit(ctx, &t.writes[i]);
    free(t.writes);
}

void ks_event_series_stats(struct ks_event_series *s, size_t *events, size_t *series)
{
    ks_mutex_lock(&s->lock);
    *events = s->events.n;
    *series = s->nseries;
    ks_mutex_unlock(&s->lock);
}
