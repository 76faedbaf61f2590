/*
 * informer.c - LIST then WATCH every requested kind on one thread (see ksched/internal/kube.h).
 *
 * Mirrors client-go's Reflector + DeltaFIFO feeding one handler, per kind:
 *
 *   LISTING  GET <path>?[limit=N&]resourceVersion=R, then &continue=T pages, as the
 *            reflector's relistResourceVersion and pager choose them:
 *              R "0" - the first list: the API server answers from its watch cache, whole
 *                      (v1.25 ignores the limit there); a server that paginates it instead
 *                      (no watch cache) is remembered, and later lists keep the limit;
 *              R the last resourceVersion seen - every later list (after a watch's 410, a
 *                      failed list): from the watch cache too, at least that fresh, no limit;
 *              R ""  - consistent, from etcd, limit N: only after a list at R answered 410
 *                      Expired or 504 ResourceVersionTooLarge, until a list succeeds.
 *            Each page's items are delivered as they arrive, compared with what was
 *            delivered before (struct ks__seen): unknown key -> ADDED, other
 *            resourceVersion -> MODIFIED, same -> nothing. A list stamps every key it sees
 *            with its generation; when the last page is in, keys of an older generation
 *            vanished while we were not watching -> DELETED (obj NULL). 410 Gone on a
 *            continue token (it expired: the list took longer than etcd's compaction
 *            interval) lists everything at the same R in one unpaginated request, as
 *            client-go's pager falls back (FullListIfExpired), with a new generation:
 *            restarting the pages could expire again, for ever, on a large, slow list.
 *   WATCHING GET <path>?watch=1&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=T
 *            (T random in [300, 600) s, as the reflector's minWatchTimeout..2x). Events
 *            are framed by kube/watch_scan.c and checked against ks__seen the same way, so
 *            a replayed event is dropped and an event for a key never delivered becomes
 *            ADDED. BOOKMARK only moves RV. ERROR 410 or HTTP 410 -> LISTING. A stream
 *            that ends (server timeout, dropped connection) resumes from RV.
 *   BACKOFF  after a transport error or an unexpected status: 250 ms doubling to 30 s,
 *            +-25% jitter; reset once a response arrives with 200.
 *
 * Reachability (on_reachable): a transfer that got no HTTP answer at all (connection
 * refused, reset, timed out) marks the server unreachable; any answer, or a byte of a
 * watch stream, marks it reachable again.
 *
 * All kinds' transfers run concurrently in one curl multi handle, each kind on a connection
 * of its own: libcurl 7.88 (Debian 12) stalls HTTP/2 streams multiplexed on one connection
 * under load (against kube-apiserver v1.25, 5-10 pod LIST pages per 100,000-pod start-up
 * stopped after ~20 KB until their 30 s timeout; never with one stream per connection),
 * and a watch stalled that way would go quiet for minutes. An object that cannot be parsed or
 * decoded, an event of unknown type or junk in the stream goes to on_error and is skipped:
 * ks__seen changes only after an object decoded, so nothing is half-applied.
 *
 * Threads: ks_informers_start/stop and ks_informers_synced from any thread; everything
 * else, every callback included, on the informer thread. Cross-thread state: `stop` and
 * `synced` (atomics) and the multi handle's wakeup.
 */
#include "kube_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/spin.h" /* ks__mono_ns */
#include "ksched/internal/decode.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    KS_INF_BACKOFF_MIN_MS = 250,
    KS_INF_BACKOFF_MAX_MS = 30000,
    KS_INF_WATCH_MIN_S = 300,        /* timeoutSeconds in [300, 600) */
    KS_INF_ERROR_BODY_MAX = 1 << 20, /* an error answer beyond this is cut */
};

/* ---- resource paths ---- */

static const char *const resource_paths[KS_KIND_COUNT] = {
    [KS_KIND_NODE] = "/api/v1/nodes",
    [KS_KIND_POD] = "/api/v1/pods",
    [KS_KIND_PV] = "/api/v1/persistentvolumes",
    [KS_KIND_PVC] = "/api/v1/persistentvolumeclaims",
    [KS_KIND_STORAGE_CLASS] = "/apis/storage.k8s.io/v1/storageclasses",
    [KS_KIND_CSI_NODE] = "/apis/storage.k8s.io/v1/csinodes",
    [KS_KIND_PDB] = "/apis/policy/v1/poddisruptionbudgets",
    [KS_KIND_NAMESPACE] = "/api/v1/namespaces",
    [KS_KIND_PRIORITY_CLASS] = "/apis/scheduling.k8s.io/v1/priorityclasses",
    [KS_KIND_SERVICE] = "/api/v1/services",
    [KS_KIND_REPLICATION_CONTROLLER] = "/api/v1/replicationcontrollers",
    [KS_KIND_REPLICA_SET] = "/apis/apps/v1/replicasets",
    [KS_KIND_STATEFUL_SET] = "/apis/apps/v1/statefulsets",
    [KS_KIND_DEVICE_CLASS] = "/apis/resource.k8s.io/v1/deviceclasses",
    [KS_KIND_RESOURCE_SLICE] = "/apis/resource.k8s.io/v1/resourceslices",
    [KS_KIND_RESOURCE_CLAIM] = "/apis/resource.k8s.io/v1/resourceclaims",
    [KS_KIND_RESOURCE_CLAIM_TEMPLATE] = "/apis/resource.k8s.io/v1/resourceclaimtemplates",
    [KS_KIND_POD_GROUP] = "/apis/scheduling.k8s.io/v1beta1/podgroups",
    [KS_KIND_WORKLOAD] = "/apis/scheduling.k8s.io/v1beta1/workloads",
};

const char *ks_kube_resource_path(enum ks_kind kind)
{
    return (unsigned)kind < KS_KIND_COUNT ? resource_paths[kind] : NULL;
}

/*
 * Whether kube/proto/ has a message for @kind's objects: the group version of its path
 * ("/api/v1/..." is "v1", "/apis/G/V/..." is "G/V") and its name. A kind without one (the
 * resource.k8s.io kinds) is listed and watched as JSON, as client-go does for a type it has
 * no protobuf for; a server would otherwise answer protobuf ksched cannot read.
 */
static bool proto_known(enum ks_kind kind)
{
    const char *path = resource_paths[kind];
    bool group = strncmp(path, "/apis/", 6) == 0;
    const char *start = path + (group ? 6 : 5);
    const char *end = strchr(start, '/'); /* after the version ("v1/...") or the group ("g/v/...") */
    if (end && group)
        end = strchr(end + 1, '/');
    char api_version[128];
    size_t n = end ? (size_t)(end - start) : strlen(start);
    if (n >= sizeof(api_version))
        return false;
    memcpy(api_version, start, n);
    api_version[n] = '\0';
    return ks_proto_kind_known(api_version, ks_kind_name(kind));
}

/* ---- state ---- */

enum phase { PH_LIST, PH_WATCH };

struct kind_state {
    struct ks_informers *inf;
    enum ks_kind kind;
    enum phase phase;
    bool active;       /* a transfer is in the multi handle */
    bool synced;       /* the first complete LIST was delivered */
    bool relist;       /* the watch asked for a relist (ERROR 410) */
    bool unpaged;      /* the list's continue token expired: list without a limit */
    bool rv_gone;      /* a list at `rv` answered 410 or too large: list consistently */
    bool paginated;    /* the server paged a resourceVersion=0 list: it has no watch cache */
    bool list_rv0;     /* the list in progress asked for resourceVersion=0 */
    bool watch_events; /* the current watch delivered an event or bookmark */
    bool json;         /* kube/proto/ has no message for the kind: LIST and WATCH ask for JSON */
    int64_t due_ms;    /* start the next transfer no earlier */
    int backoff_ms;    /* next backoff; 0: none yet */
    uint32_t gen;      /* current list generation */
    char *rv;          /* resourceVersion to watch from */
    char *cont;        /* continue token of the list in progress */
    char *list_rv;     /* resourceVersion of the list in progress */
    struct ks__seen seen;
    CURL *h;
    struct curl_slist *hdrs;
    struct ks__list_scan list; /* a LIST answered 200, read item by item as it arrives */
    int list_rc;               /* what stopped reading it (0: nothing) */
    struct ks_error list_err;  /* ... when it was malformed */
    char *body;                /* any other answer: its Status, for the message */
    size_t body_len, body_cap;
    struct ks__watch_scan scan;
    char *path; /* request path of the current transfer, for messages */
    char errbuf[CURL_ERROR_SIZE];
};

struct ks_informers {
    struct ks_informer_opts opts;
    char *field_selector; /* escaped pod field selector */
    CURLM *multi;
    pthread_t thread;
    atomic_bool stop;
    atomic_bool synced;
    bool unreachable; /* the last transfer to end got no answer (see the top) */
    uint64_t rng;
    int nkinds;
    struct kind_state kinds[KS_KIND_COUNT];
};

static int64_t now_ms(void)
{
    return ks__mono_ns() / 1000000;
}

static uint64_t rng_next(struct ks_informers *inf)
{
    /* xorshift64*: jitter and watch timeouts only */
    inf->rng ^= inf->rng >> 12;
    inf->rng ^= inf->rng << 25;
    inf->rng ^= inf->rng >> 27;
    return inf->rng * 0x2545f4914f6cdd1dull;
}

static void report(struct kind_state *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(struct kind_state *k, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (k->inf->opts.on_error)
        k->inf->opts.on_error(k->inf->opts.ctx, k->kind, msg);
    else
        fprintf(stderr, "ksched: informer %s: %s\n", ks_kind_name(k->kind), msg);
}

static void backoff(struct kind_state *k)
{
    int b = k->backoff_ms ? k->backoff_ms : KS_INF_BACKOFF_MIN_MS;
    int jitter = (int)(rng_next(k->inf) % (uint64_t)(b / 2 + 1)) - b / 4;
    k->due_ms = now_ms() + b + jitter;
    k->backoff_ms = b * 2 > KS_INF_BACKOFF_MAX_MS ? KS_INF_BACKOFF_MAX_MS : b * 2;
}

/* ---- objects ---- */

struct meta_view {
    const char *ns, *name, *rv, *uid;
};

static const char *scalar_or(const struct ks_yaml_node *n, const char *dflt)
{
    return n && n->kind == KS_YAML_SCALAR && !ks_yaml_is_null(n) ? n->str : dflt;
}

/* metadata's keys straight from the tree; -EINVAL when there is no usable name */
static int meta_of(const struct ks_yaml_node *obj, struct meta_view *m)
{
    const struct ks_yaml_node *md = ks_yaml_get(obj, "metadata");
    m->name = scalar_or(ks_yaml_get(md, "name"), NULL);
    m->ns = scalar_or(ks_yaml_get(md, "namespace"), "");
    m->rv = scalar_or(ks_yaml_get(md, "resourceVersion"), "");
    m->uid = scalar_or(ks_yaml_get(md, "uid"), "");
    return m->name && m->name[0] ? 0 : -EINVAL;
}

static void deliver(struct kind_state *k, enum ks_watch_type type, const struct meta_view *m, void *obj)
{
    struct ks_watch_event ev = {
        .type = type,
        .kind = k->kind,
        .namespace_ = m->ns,
        .name = m->name,
        .uid = m->uid,
        .resource_version = m->rv,
        .obj = obj,
    };
    k->inf->opts.on_event(k->inf->opts.ctx, &ev);
}

/*
 * Apply one object as the server has it now (@deleted: it is gone): decide what the
 * handler must hear, decode, deliver, record. Returns 0 or -ENOMEM; bad objects are
 * reported and skipped.
 */
static int apply(struct kind_state *k, const struct ks_yaml_node *obj, bool deleted, const char *where)
{
    struct meta_view m;
    if (!obj || obj->kind != KS_YAML_MAP) {
        report(k, "%s: object is %s, not a map: skipped", where, ks_yaml_kind_name(obj));
        return 0;
    }
    if (meta_of(obj, &m)) {
        report(k, "%s: metadata.name: Required value: object skipped", where);
        return 0;
    }
    struct ks__seen_entry *e = ks__seen_get(&k->seen, m.ns, m.name);
    if (deleted && !e)
        return 0; /* never delivered: nothing to take back */
    if (!deleted && e && strcmp(e->rv, m.rv) == 0) {
        e->gen = k->gen; /* unchanged, but present */
        return 0;
    }

    void *o = NULL;
    struct ks_error err = {0};
    int rc = ks_object_decode_as(where, obj, k->kind, &o, &err);
    if (rc == -ENOMEM)
        return -ENOMEM;
    if (rc) {
        char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
        ks_error_format(&err, msg, sizeof(msg));
        report(k, "%s \"%s%s%s\": %s: skipped", ks_kind_name(k->kind), m.ns, m.ns[0] ? "/" : "", m.name, msg);
        if (e)
            e->gen = k->gen; /* it exists: a relist must not report it deleted */
        return 0;
    }
    if (deleted) {
        ks__seen_del(&k->seen, m.ns, m.name);
        deliver(k, KS_WATCH_DELETED, &m, o);
        return 0;
    }
    if (e && strcmp(e->uid, m.uid) != 0) {
        /* same name, new object: the old one was deleted while we were not looking */
        struct meta_view old = {.ns = m.ns, .name = m.name, .rv = e->rv, .uid = e->uid};
        char *orv = strdup(e->rv), *ouid = strdup(e->uid);
        if (!orv || !ouid) {
            free(orv);
            free(ouid);
            ks_object_destroy(k->kind, o);
            return -ENOMEM;
        }
        old.rv = orv;
        old.uid = ouid;
        ks__seen_del(&k->seen, m.ns, m.name);
        deliver(k, KS_WATCH_DELETED, &old, NULL);
        free(orv);
        free(ouid);
        e = NULL;
    }
    if (ks__seen_put(&k->seen, m.ns, m.name, m.rv, m.uid, k->gen)) {
        ks_object_destroy(k->kind, o);
        return -ENOMEM;
    }
    deliver(k, e ? KS_WATCH_MODIFIED : KS_WATCH_ADDED, &m, o);
    return 0;
}

/* ---- transfers ---- */

static int apply_item(void *ctx, const struct ks_yaml_node *item)
{
    struct kind_state *k = ctx;
    return apply(k, item, false, k->path);
}

/* the bytes of an error answer, kept whole for its Status message */
static size_t keep_body(char *data, size_t size, size_t nmemb, void *ctx);

static size_t on_list_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct kind_state *k = ctx;
    size_t n = size * nmemb;
    long status = 0;
    if (atomic_load_explicit(&k->inf->stop, memory_order_relaxed))
        return 0;
    curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200)
        return keep_body(data, size, nmemb, ctx);
    k->list_rc = ks__list_scan_feed(&k->list, k->path, data, n, apply_item, k, &k->list_err);
    return k->list_rc ? 0 : n; /* 0 aborts the transfer: transfer_done reads list_rc */
}

static size_t keep_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct kind_state *k = ctx;
    size_t n = size * nmemb;
    if (k->body_len + n >= KS_INF_ERROR_BODY_MAX)
        return n; /* the rest is not kept */
    if (k->body_cap - k->body_len < n + 1) {
        size_t cap = k->body_cap ? k->body_cap : 65536;
        while (cap - k->body_len < n + 1)
            cap *= 2;
        char *b = realloc(k->body, cap);
        if (!b)
            return 0;
        k->body = b;
        k->body_cap = cap;
    }
    memcpy(k->body + k->body_len, data, n);
    k->body_len += n;
    k->body[k->body_len] = '\0';
    return n;
}

static int on_watch_value(void *ctx, const char *text, size_t len, bool junk);

static void mark_reachable(struct ks_informers *inf, bool yes)
{
    if (inf->unreachable != yes)
        return;
    inf->unreachable = !yes;
    if (inf->opts.on_reachable)
        inf->opts.on_reachable(inf->opts.ctx, yes);
}

static size_t on_watch_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct kind_state *k = ctx;
    size_t n = size * nmemb;
    long status = 0;
    if (atomic_load_explicit(&k->inf->stop, memory_order_relaxed))
        return 0;
    curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) { /* an error Status body: kept for the message */
        return keep_body(data, size, nmemb, ctx);
    }
    mark_reachable(k->inf, true);
    ks__watch_scan_detect(&k->scan, k->h); /* JSON values or protobuf frames */
    int rc = ks__watch_scan_feed(&k->scan, data, n, on_watch_value, k);
    if (rc == -E2BIG || rc == -ENOMEM) {
        report(k, "WATCH %s: %s: stream dropped", k->path,
               rc == -E2BIG ? "an event larger than 64 MiB" : "out of memory");
        k->watch_events = false; /* resume after a backoff, not at once */
    }
    return rc ? 0 : n; /* 0 aborts the transfer (relist, stop, out of memory) */
}

static int append_param(char **url, const char *fmt, const char *value)
{
    char *n;
    if (asprintf(&n, fmt, *url, value) < 0)
        return -ENOMEM;
    free(*url);
    *url = n;
    return 0;
}

/*
 * The resourceVersion a list asks for (client-go's relistResourceVersion): "" (consistent)
 * after a list at the last one failed as too old or too new, "0" before anything was seen,
 * else the last resourceVersion seen.
 */
static const char *relist_rv(const struct kind_state *k)
{
    if (k->rv_gone)
        return "";
    return k->rv && k->rv[0] ? k->rv : "0";
}

static int start_transfer(struct kind_state *k)
{
    struct ks_informers *inf = k->inf;
    const char *base = resource_paths[k->kind];
    char *url = strdup(base);
    char num[32];
    int rc = -ENOMEM;

    if (!url)
        return -ENOMEM;
    if (k->phase == PH_LIST) {
        const char *rv = relist_rv(k);
        bool paged = !k->unpaged && (k->paginated || !rv[0] || strcmp(rv, "0") == 0);
        snprintf(num, sizeof(num), "%u", inf->opts.page_limit ? inf->opts.page_limit : 500);
        if (paged && append_param(&url, "%s?limit=%s", num))
            goto err_url;
        if (k->cont && paged) {
            char *c = curl_easy_escape(NULL, k->cont, 0);
            rc = c ? append_param(&url, "%s&continue=%s", c) : -ENOMEM;
            curl_free(c);
            if (rc)
                goto err_url;
        } else if (rv[0]) {
            char *e = curl_easy_escape(NULL, rv, 0);
            rc = e ? append_param(&url, strchr(url, '?') ? "%s&resourceVersion=%s" : "%s?resourceVersion=%s",
                                  e)
                   : -ENOMEM;
            curl_free(e);
            if (rc)
                goto err_url;
        }
        k->list_rv0 = !k->cont && strcmp(rv, "0") == 0;
    } else {
        char *rv = curl_easy_escape(NULL, k->rv ? k->rv : "", 0);
        rc = rv ? append_param(&url, "%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true", rv) : -ENOMEM;
        curl_free(rv);
        if (rc)
            goto err_url;
        snprintf(num, sizeof(num), "%u", KS_INF_WATCH_MIN_S + (unsigned)(rng_next(inf) % KS_INF_WATCH_MIN_S));
        if (append_param(&url, "%s&timeoutSeconds=%s", num))
            goto err_url;
    }
    if (k->kind == KS_KIND_POD && inf->field_selector[0] &&
        append_param(&url, strchr(url, '?') ? "%s&fieldSelector=%s" : "%s?fieldSelector=%s",
                     inf->field_selector))
        goto err_url;

    if (!k->h && !(k->h = curl_easy_init()))
        goto err_url;
    curl_easy_reset(k->h);
    if ((rc = ks__kube_client_setup(inf->opts.client, k->h, "GET", url, NULL, true, k->json, &k->hdrs)))
        goto err_url;
    if (k->phase == PH_LIST) {
        curl_easy_setopt(k->h, CURLOPT_TIMEOUT_MS, ks__kube_client_timeout_ms(inf->opts.client));
        curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_list_body);
    } else {
        curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_watch_body);
        /* no data at all for the whole server-side timeout plus a minute: the server is gone */
        curl_easy_setopt(k->h, CURLOPT_TIMEOUT_MS, (long)(2 * KS_INF_WATCH_MIN_S + 60) * 1000L);
        ks__watch_scan_reset(&k->scan);
        k->watch_events = false;
    }
    curl_easy_setopt(k->h, CURLOPT_WRITEDATA, k);
    curl_easy_setopt(k->h, CURLOPT_PRIVATE, k);
    curl_easy_setopt(k->h, CURLOPT_ERRORBUFFER, k->errbuf);
    k->errbuf[0] = '\0';
    k->body_len = 0;
    k->relist = false;
    k->list_rc = 0;
    ks__list_scan_reset(&k->list);
    if (curl_multi_add_handle(inf->multi, k->h) != CURLM_OK) {
        curl_slist_free_all(k->hdrs);
        k->hdrs = NULL;
        rc = -ENOMEM;
        goto err_url;
    }
    free(k->path);
    k->path = url;
    k->active = true;
    return 0;

err_url:
    free(url);
    return rc;
}

static void start_list(struct kind_state *k)
{
    k->phase = PH_LIST;
    k->unpaged = false;
    k->gen++;
    free(k->cont);
    k->cont = NULL;
}

/* a status body's message, or "" */
static void status_message(struct kind_state *k, char *out, size_t cap)
{
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    out[0] = '\0';
    if (k->body_len && ks_kube_body_parse(k->path, k->body, k->body_len, &s, &err) == 0) {
        snprintf(out, cap, "%s", scalar_or(ks_yaml_get(s->docs[0], "message"), ""));
        ks_yaml_stream_destroy(s);
    }
}

/* a 504's Status is ResourceVersionTooLarge (apierrors: the cause, or its message) */
static bool too_large(struct kind_state *k)
{
    char msg[512];
    status_message(k, msg, sizeof(msg));
    return strstr(msg, "Too large resource version") != NULL ||
           (k->body_len && memmem(k->body, k->body_len, "ResourceVersionTooLarge", 23) != NULL);
}

static void synced_check(struct ks_informers *inf)
{
    for (int i = 0; i < inf->nkinds; i++)
        if (!inf->kinds[i].synced)
            return;
    if (!atomic_load_explicit(&inf->synced, memory_order_relaxed)) {
        /* release: a thread that sees synced also sees what the handler did before it */
        atomic_store_explicit(&inf->synced, true, memory_order_release);
        if (inf->opts.on_synced)
            inf->opts.on_synced(inf->opts.ctx);
    }
}

static void deleted_while_away(void *ctx, const struct ks__seen_entry *e)
{
    struct kind_state *k = ctx;
    struct meta_view m = {.ns = e->key, .name = e->name, .rv = e->rv, .uid = e->uid};
    deliver(k, KS_WATCH_DELETED, &m, NULL);
}

/* A LIST answer ended with 200, its items delivered as they came: next page, or the end of the list. */
static int list_page(struct kind_state *k)
{
    struct ks_error err = {0};
    const char *rv, *cont;
    int rc = ks__list_scan_finish(&k->list, k->path, &rv, &cont, &err);
    if (rc == -ENOMEM)
        return rc;
    if (rc) {
        char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
        ks_error_format(&err, msg, sizeof(msg));
        report(k, "LIST: %s: the list starts over", msg);
        start_list(k);
        backoff(k);
        return 0;
    }
    if ((rc = ks__set_str(&k->list_rv, rv)) ||
        (rc = ks__set_str(&k->cont, cont[0] && !k->unpaged ? cont : NULL)))
        return rc;
    if (k->cont) {
        if (k->list_rv0)
            k->paginated = true; /* no watch cache: later lists at a resourceVersion page too */
        return 0;                /* next page now */
    }
    k->rv_gone = false;
    ks__seen_sweep(&k->seen, k->gen, deleted_while_away, k);
    if ((rc = ks__set_str(&k->rv, k->list_rv)))
        return rc;
    k->phase = PH_WATCH;
    if (!k->synced) {
        k->synced = true;
        synced_check(k->inf);
    }
    return 0;
}

/* one watch event (or junk) from the stream; nonzero aborts the stream */
static int on_watch_value(void *ctx, const char *text, size_t len, bool junk)
{
    struct kind_state *k = ctx;
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    int rc;

    if (atomic_load_explicit(&k->inf->stop, memory_order_relaxed))
        return -ECANCELED;
    if (junk) {
        report(k, "WATCH %s: not JSON, skipped: %.*s", k->path, (int)(len > 80 ? 80 : len), text);
        return 0;
    }
    rc = k->scan.framed ? ks_proto_parse_watch_event(k->path, text, len, &s, &err)
                        : ks_json_parse(k->path, text, len, &s, &err);
    if (rc == -ENOMEM)
        return rc;
    if (rc) {
        char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
        ks_error_format(&err, msg, sizeof(msg));
        report(k, "WATCH: %s: event skipped", msg);
        return 0;
    }
    const struct ks_yaml_node *ev = s->docs[0], *obj = ks_yaml_get(ev, "object");
    const char *type = scalar_or(ks_yaml_get(ev, "type"), "");
    struct meta_view m;
    rc = 0;
    if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED")) {
        k->watch_events = true;
        rc = apply(k, obj, type[0] == 'D', k->path);
        if (rc == 0 && obj && meta_of(obj, &m) == 0 && m.rv[0])
            rc = ks__set_str(&k->rv, m.rv);
    } else if (!strcmp(type, "BOOKMARK")) {
        k->watch_events = true;
        const char *rv = scalar_or(ks_yaml_get(ks_yaml_get(obj, "metadata"), "resourceVersion"), "");
        if (rv[0])
            rc = ks__set_str(&k->rv, rv);
    } else if (!strcmp(type, "ERROR")) {
        const char *code = scalar_or(ks_yaml_get(obj, "code"), "");
        const char *msg = scalar_or(ks_yaml_get(obj, "message"), "");
        if (!strcmp(code, "410")) {
            k->relist = true;
            rc = -ESTALE; /* ends the stream: relist */
        } else {
            report(k, "WATCH %s: ERROR %s: %s: watching again", k->path, code, msg);
            rc = -EPROTO; /* ends the stream: watch again after a backoff */
        }
    } else {
        report(k, "WATCH %s: unknown event type \"%s\": skipped", k->path, type);
    }
    ks_yaml_stream_destroy(s);
    return rc;
}

/* A transfer finished (@res from curl): decide the next one. */
static void transfer_done(struct kind_state *k, CURLcode res)
{
    long status = 0;
    char msg[512];
    int rc;

    curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 0 || res != CURLE_OK)
        mark_reachable(k->inf, status != 0);
    curl_multi_remove_handle(k->inf->multi, k->h);
    curl_slist_free_all(k->hdrs);
    k->hdrs = NULL;
    k->active = false;
    k->due_ms = 0;
    if (atomic_load_explicit(&k->inf->stop, memory_order_relaxed))
        return;

    if (k->phase == PH_WATCH && status == 200) {
        /* a stream always ends: on a relist request, the server's timeout, a drop or an error event */
        if (k->relist) {
            start_list(k);
        } else if (k->watch_events && (res == CURLE_OK || res == CURLE_PARTIAL_FILE ||
                                       res == CURLE_RECV_ERROR || res == CURLE_OPERATION_TIMEDOUT)) {
            k->backoff_ms = 0; /* it worked for a while: resume from rv at once */
        } else {
            backoff(k);
        }
        return;
    }
    if (k->phase == PH_LIST && k->list_rc) {
        /* the answer could not be read (its items so far were delivered): list again */
        char m[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
        if (k->list_rc == -ENOMEM || k->list_rc == -E2BIG)
            snprintf(m, sizeof(m), "%s %s", k->path,
                     k->list_rc == -E2BIG ? "an object larger than 64 MiB" : "out of memory");
        else
            ks_error_format(&k->list_err, m, sizeof(m));
        report(k, "LIST: %s: the list starts over", m);
        start_list(k);
        backoff(k);
        return;
    }
    if (res != CURLE_OK) {
        report(k, "%s %s: %s: retrying", k->phase == PH_LIST ? "LIST" : "WATCH", k->path,
               k->errbuf[0] ? k->errbuf : curl_easy_strerror(res));
        backoff(k);
        return;
    }
    if (status == 410 || (status == 504 && k->phase == PH_LIST && too_large(k))) {
        /* a continue token expired (then everything at once, at the same resourceVersion); a
         * list's resourceVersion is too old or not there yet (then a consistent list); the
         * watch's resourceVersion is too old (then a list at it, from the watch cache) */
        bool expired_page = k->phase == PH_LIST && k->cont;
        bool rv_gone = k->phase == PH_LIST && !k->cont;
        start_list(k);
        k->unpaged = expired_page;
        k->rv_gone = k->rv_gone || rv_gone;
        return;
    }
    if (status != 200) {
        status_message(k, msg, sizeof(msg));
        report(k, "%s %s: HTTP %ld%s%s: retrying", k->phase == PH_LIST ? "LIST" : "WATCH", k->path, status,
               msg[0] ? ": " : "", msg);
        backoff(k);
        return;
    }
    k->backoff_ms = 0;
    rc = list_page(k);
    if (rc == -ENOMEM) {
        report(k, "out of memory: the list starts over");
        start_list(k);
        backoff(k);
    }
}

static void *informer_main(void *arg)
{
    struct ks_informers *inf = arg;
    while (!atomic_load_explicit(&inf->stop, memory_order_acquire)) {
        int64_t now = now_ms(), wait = 1000;
        for (int i = 0; i < inf->nkinds; i++) {
            struct kind_state *k = &inf->kinds[i];
            if (k->active)
                continue;
            if (k->due_ms > now) {
                if (k->due_ms - now < wait)
                    wait = k->due_ms - now;
                continue;
            }
            if (start_transfer(k)) {
                report(k, "out of memory starting a request: retrying");
                backoff(k);
            }
        }
        int running = 0;
        curl_multi_perform(inf->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(inf->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            struct kind_state *k = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&k);
            transfer_done(k, m->data.result);
            wait = 0; /* start the next request at once */
        }
        if (wait > 0)
            curl_multi_poll(inf->multi, NULL, 0, (int)wait, NULL);
    }
    return NULL;
}

int ks_informers_start(const struct ks_informer_opts *opts, struct ks_informers **out, struct ks_error *err)
{
    struct ks_informers *inf;
    int rc = -ENOMEM;

    *out = NULL;
    if (!opts->client || !opts->on_event)
        return ks_error_set(err, NULL, 0, opts->client ? "on_event" : "client", "Required value");
    if (!opts->kinds || (opts->kinds >> KS_KIND_COUNT))
        return ks_error_set(err, NULL, 0, "kinds", "Invalid value: 0x%x: no kind, or an unknown one",
                            opts->kinds);
    if (!(inf = calloc(1, sizeof(*inf))))
        goto err_nomem;
    inf->opts = *opts;
    const char *sel =
        opts->pod_field_selector ? opts->pod_field_selector : "status.phase!=Succeeded,status.phase!=Failed";
    if (!(inf->field_selector = curl_easy_escape(NULL, sel, 0)))
        goto err_inf;
    inf->rng = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() ^ (uintptr_t)inf;
    if (!inf->rng)
        inf->rng = 1;
    for (int kind = 0; kind < KS_KIND_COUNT; kind++) {
        if (!(opts->kinds & (1u << kind)))
            continue;
        struct kind_state *k = &inf->kinds[inf->nkinds++];
        k->inf = inf;
        k->kind = (enum ks_kind)kind;
        k->json = !proto_known(k->kind);
        start_list(k);
    }
    if (!(inf->multi = curl_multi_init()))
        goto err_inf;
    curl_multi_setopt(inf->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING); /* see the top */
    atomic_init(&inf->stop, false);
    atomic_init(&inf->synced, false);
    if ((rc = -pthread_create(&inf->thread, NULL, informer_main, inf))) {
        ks_error_set(err, NULL, 0, NULL, "cannot start the informer thread: %s", strerror(-rc));
        goto err_inf;
    }
    *out = inf;
    return 0;

err_inf:
    if (inf->multi)
        curl_multi_cleanup(inf->multi);
    curl_free(inf->field_selector);
    free(inf);
err_nomem:
    if (rc == -ENOMEM)
        ks_error_set(err, NULL, 0, NULL, "out of memory");
    return rc;
}

void ks_informers_stop(struct ks_informers *inf)
{
    if (!inf)
        return;
    /* release: pairs with the thread's acquire load; wakeup interrupts curl_multi_poll */
    atomic_store_explicit(&inf->stop, true, memory_order_release);
    curl_multi_wakeup(inf->multi);
    pthread_join(inf->thread, NULL);
    for (int i = 0; i < inf->nkinds; i++) {
        struct kind_state *k = &inf->kinds[i];
        if (k->active)
            curl_multi_remove_handle(inf->multi, k->h);
        if (k->h)
            curl_easy_cleanup(k->h);
        curl_slist_free_all(k->hdrs);
        ks__seen_free(&k->seen);
        ks__watch_scan_free(&k->scan);
        ks__list_scan_free(&k->list);
        free(k->body);
        free(k->rv);
        free(k->cont);
        free(k->list_rv);
        free(k->path);
    }
    curl_multi_cleanup(inf->multi);
    curl_free(inf->field_selector);
    free(inf);
}

bool ks_informers_synced(const struct ks_informers *inf)
{
    /* acquire: pairs with the release in synced_check */
    return inf && atomic_load_explicit(&((struct ks_informers *)inf)->synced, memory_order_acquire);
}
