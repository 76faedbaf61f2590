/*
 * serve_writer.c - scheduling decisions written to the API server (serve/serve.h).
 *
 * Mirrors, for v1.22:
 *   - defaultbinder.Bind: POST a v1 Binding to pods/NAME/binding on the binder thread
 *     (201 Created binds; anything else is an error, so the scheduler forgets the assumed
 *     pod and requeues it - handleBindingCycleError; 409 is another scheduler's win).
 *   - recordSchedulingFailure / updatePod / util.PatchPodStatus: the PodScheduled=False
 *     condition (reason Unschedulable or SchedulerError, message the FailedScheduling text)
 *     as a strategic merge patch of pods/NAME/status, together with status.nominatedNodeName
 *     when preemption nominated a node; nothing is sent when the patch would change
 *     nothing (same status, reason and message; the message is compared with the one we
 *     sent last, because decoded pods do not keep condition messages).
 *   - The Events kube-scheduler records through client-go tools/events (events.k8s.io/v1), sent
 *     through a client of their own as kube-scheduler's eventClient (a separate write rate limit):
 *     FailedScheduling (Warning, action Scheduling), Scheduled (Normal, action Binding,
 *     "Successfully assigned NS/NAME to NODE"), Preempted on each victim (Normal, action
 *     Preempting, "Preempted by NS/NAME on node NODE"); reportingController is the
 *     profile's schedulerName, reportingInstance "<controller>-<hostname>". Repeated Events
 *     become series as the events library makes them (serve/serve_events.c): this thread
 *     ticks the series every finish period, and a series PATCH answered 404 creates the
 *     Event whole (409 on that create: the PATCH again).
 *   - Preemption's victims (serve_preempt.c, in order on lane 0): each one's DisruptionTarget
 *     condition patched onto its status, then the pod DELETEd, then its Preempted Event;
 *     with SchedulerAsyncPreemption the scheduler learns when a preemption's calls are done.
 * Deviations: a note longer than the 1024 bytes the API accepts is cut there; a pod whose
 * nomination we set and which then binds to another node gets status.nominatedNodeName
 * cleared (later releases do the same); a binding whose outcome is unknown (a transport
 * error: the request could have reached the server; or a 5xx) is not
 * taken as failed until a GET of the pod shows it unbound: kube-scheduler forgets it at
 * once, and when the server had applied it, the room it freed goes to a second pod and the
 * node ends up over its capacity.
 *
 * Everything but the Binding goes through writer threads, so the scheduling thread and the
 * binders never wait for the server: lanes, each a FIFO of prepared requests and a thread,
 * all under `lock`. Lane 0 sends the status patches, deletions and PodGroup patches in the
 * order they were made, and ticks the Event series. Events go through lanes of their own
 * (event_lanes, 4 by default), each on its own connection, so that they keep up with the
 * bindings: one request at a time on one connection tops out at a few hundred a second
 * against a real API server. The Event writes about one object (each Event's POST, its
 * series PATCHes) share a lane (their shard), so they reach the server in order. Events may be dropped when
 * more than max_queued writes wait; patches and deletes are not. A request that fails with no response, 429
 * or 5xx is retried twice; other failures are logged.
 */
#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/spin.h" /* ks__mono_ns */
#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct write_job {
    struct write_job *next;
    struct ks_preemption_calls *preempt; /* a preemption's calls (serve_preempt.c): the job is them */
    bool event;                          /* sent through opts.events */
    uint64_t shard;                      /* an Event's: picks its lane */
    char method[8];
    char *path, *content_type, *body;
    size_t len;
    char *create_path, *create_body; /* an Event series PATCH: the Event to create on 404 */
    size_t create_len;
};

/* A FIFO and the thread that sends it (see the top). Under the writer's lock. */
struct lane {
    struct ks_writer *w;
    pthread_t thread;
    bool started, busy;
    bool ticks; /* lane 0: also ticks the Event series */
    pthread_cond_t wake;
    struct write_job *head, **tail;
};

enum {
    KS_WRITER_LANES_MAX = 17,
    KS_BIND_VERIFY_S = 30, /* how long a binding of unknown outcome is looked up: an API server restart */
};

struct ks_writer {
    struct ks_writer_opts o;
    char hostname[256];
    struct ks_mutex lock;
    pthread_cond_t idle;
    struct lane lanes[KS_WRITER_LANES_MAX]; /* [0]: ordered writes; [1..nlanes): Events */
    int nlanes;
    uint32_t queued;
    bool quit;
    int64_t drain_deadline; /* CLOCK_MONOTONIC ns; 0: none */
    struct ks_writer_stats stats;
    struct ks_smap last_message; /* pod uid -> the condition message we sent last (strdup) */
    struct ks_event_series *series;
    int64_t next_finish, next_refresh; /* CLOCK_MONOTONIC ns of the next series ticks */

    /* the Nominated event, consumed by the failure of the same cycle (events are serialised) */
    const struct ks_pod *nominated_pod;
    uint32_t nominated_node;
};

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ks_serve_format_time(int64_t ns, bool micro, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        snprintf(buf + n, len - n, ".%06dZ", (int)(ns % 1000000000 / 1000));
    else
        snprintf(buf + n, len - n, "Z");
}

static const char *pod_ns(const struct ks_pod *pod)
{
    return ks_intern_str(pod->meta.namespace_id);
}

/* ---- request bodies --------------------------------------------------------------------- */

char *ks_serve_text_close(FILE *out, char **buf)
{
    if (fclose(out) != 0) {
        free(*buf);
        *buf = NULL;
    }
    return *buf;
}

char *ks_serve_binding_body(const struct ks_pod *pod, const char *node, size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":", out);
    ks_json_write_cstr(out, pod->meta.name);
    fputs(",\"namespace\":", out);
    ks_json_write_cstr(out, pod_ns(pod));
    if (pod->meta.uid && pod->meta.uid[0]) {
        fputs(",\"uid\":", out);
        ks_json_write_cstr(out, pod->meta.uid);
    }
    fputs("},\"target\":{\"kind\":\"Node\",\"name\":", out);
    ks_json_write_cstr(out, node);
    fputs("}}", out);
    return ks_serve_text_close(out, &buf);
}

char *ks_serve_condition_patch(const struct ks_pod *pod, const char *reason, const char *message,
                               const char *nominated, const char *last_message, int64_t now_ns,
                               bool *unchanged, size_t *len)
{
    const struct ks_pod_condition *cur = NULL;
    for (uint32_t i = 0; i < pod->nconditions && !cur; i++) {
        if (pod->conditions[i].type && strcmp(pod->conditions[i].type, "PodScheduled") == 0)
            cur = &pod->conditions[i];
    }
    bool same_status = cur && cur->status && strcmp(cur->status, "False") == 0;
    bool same_reason = same_status && cur->reason && strcmp(cur->reason, reason) == 0;
    bool same_condition = same_reason && last_message && strcmp(last_message, message) == 0;
    bool same_nomination = !nominated || (pod->nominated_node_name != KS_ID_EMPTY &&
                                          strcmp(ks_intern_str(pod->nominated_node_name), nominated) == 0);
    *unchanged = same_condition && same_nomination;
    if (*unchanged)
        return NULL;

    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    fputs("{\"status\":{", out);
    if (!same_condition) {
        /* the list's order by its merge key, then the changed element (CreateTwoWayMergePatch) */
        fputs("\"$setElementOrder/conditions\":[", out);
        for (uint32_t i = 0; i < pod->nconditions; i++) {
            fputs(i ? ",{\"type\":" : "{\"type\":", out);
            ks_json_write_cstr(out, pod->conditions[i].type ? pod->conditions[i].type : "");
            fputc('}', out);
        }
        if (!cur)
            fputs(pod->nconditions ? ",{\"type\":\"PodScheduled\"}" : "{\"type\":\"PodScheduled\"}", out);
        fputs("],\"conditions\":[{", out);
        if (!cur)
            fputs("\"lastProbeTime\":null,", out);
        if (!same_status) {
            char t[40];
            ks_serve_format_time(now_ns, false, t, sizeof(t));
            fputs("\"lastTransitionTime\":", out);
            ks_json_write_cstr(out, t);
            fputc(',', out);
        }
        fputs("\"message\":", out);
        ks_json_write_cstr(out, message);
        fputs(",\"reason\":", out);
        ks_json_write_cstr(out, reason);
        if (!same_status)
            fputs(",\"status\":\"False\"", out);
        fputs(",\"type\":\"PodScheduled\"}]", out);
    }
    if (!same_nomination) {
        fputs(same_condition ? "\"nominatedNodeName\":" : ",\"nominatedNodeName\":", out);
        ks_json_write_cstr(out, nominated);
    }
    fputs("}}", out);
    return ks_serve_text_close(out, &buf);
}

char *ks_serve_nominated_patch(const char *nominated, size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    fputs("{\"status\":{\"nominatedNodeName\":", out);
    if (nominated)
        ks_json_write_cstr(out, nominated);
    else
        fputs("null", out);
    fputs("}}", out);
    return ks_serve_text_close(out, &buf);
}

/* ---- the queue -------------------------------------------------------------------------- */

static void free_job(struct write_job *j)
{
    ks__preemption_calls_free(j->preempt);
    free(j->create_path);
    free(j->create_body);
    free(j->content_type);
    free(j->path);
    free(j->body);
    free(j);
}

/* Queue @j (the writer owns it from here): 0, or -ENOSPC when @droppable and the queue is full. */
static int push_job(struct ks_writer *w, struct write_job *j, bool droppable)
{
    struct lane *ln = j->event ? &w->lanes[1 + j->shard % (uint64_t)(w->nlanes - 1)] : &w->lanes[0];
    ks_mutex_lock(&w->lock);
    if (droppable && w->queued >= w->o.max_queued) {
        w->stats.dropped++;
        ks_mutex_unlock(&w->lock);
        free_job(j);
        return -ENOSPC;
    }
    *ln->tail = j;
    ln->tail = &j->next;
    w->queued++;
    pthread_cond_signal(&ln->wake);
    ks_mutex_unlock(&w->lock);
    return 0;
}

int ks_writer_enqueue(struct ks_writer *w, const char *method, const char *path, const char *content_type,
                      char *body, size_t len, bool droppable)
{
    struct write_job *j = calloc(1, sizeof(*j));
    if (!j || !(j->path = strdup(path)) || (content_type && !(j->content_type = strdup(content_type)))) {
        if (j)
            free(j->path);
        free(j);
        free(body);
        return -ENOMEM;
    }
    snprintf(j->method, sizeof(j->method), "%s", method);
    j->body = body;
    j->len = len;
    return push_job(w, j, droppable);
}

/* Queue an Event's request (droppable, as Events are); takes @ew's strings. */
static void enqueue_event(struct ks_writer *w, struct ks_event_write *ew)
{
    const char *ct =
        strcmp(ew->method, "PATCH") == 0 ? "application/strategic-merge-patch+json" : "application/json";
    struct write_job *j = calloc(1, sizeof(*j));
    if (!j || !(j->content_type = strdup(ct))) {
        free(j);
        ks_event_write_free(ew);
        return;
    }
    snprintf(j->method, sizeof(j->method), "%s", ew->method);
    j->event = true;
    j->shard = ew->shard;
    j->path = ew->path;
    j->body = ew->body;
    j->len = ew->len;
    j->create_path = ew->create_path;
    j->create_body = ew->create_body;
    j->create_len = ew->create_len;
    memset(ew, 0, sizeof(*ew));
    push_job(w, j, true);
}

static void emit_series(void *ctx, struct ks_event_write *ew)
{
    enqueue_event(ctx, ew);
}

static bool retryable(int rc, long status)
{
    return rc < 0 || status == 429 || status >= 500;
}

/* Before retry @attempt (1, 2): wait its back-off; false when shutting down and out of time. */
static bool retry_pause(struct ks_writer *w, int attempt)
{
    ks_mutex_lock(&w->lock);
    bool late = w->quit && w->drain_deadline && ks__mono_ns() > w->drain_deadline;
    ks_mutex_unlock(&w->lock);
    if (late)
        return false;
    usleep(100000u << attempt);
    return true;
}

int ks__writer_request(struct ks_writer *w, const char *method, const char *path, const char *content_type,
                       const char *body, size_t len, struct ks_kube_response *resp)
{
    int rc = -EIO;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (attempt && !retry_pause(w, attempt))
            break;
        ks_kube_response_free(resp);
        memset(resp, 0, sizeof(*resp));
        rc = w->o.transport.request(w->o.transport.ctx, method, path, content_type, body, len, resp);
        if (!retryable(rc, resp->status))
            break;
    }
    ks_mutex_lock(&w->lock);
    if (rc == 0 && resp->status >= 200 && resp->status < 300)
        w->stats.sent++;
    else
        w->stats.failed++;
    ks_mutex_unlock(&w->lock);
    return rc;
}

static void send_job(struct ks_writer *w, const struct write_job *j)
{
    struct ks_kube_response resp = {0};
    int rc = -EIO;
    if (j->preempt) {
        ks__preemption_calls_run(w, j->preempt);
        return;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        if (attempt && !retry_pause(w, attempt))
            break;
        ks_kube_response_free(&resp);
        memset(&resp, 0, sizeof(resp));
        const struct ks_serve_transport *t = j->event ? &w->o.events : &w->o.transport;
        rc = t->request(t->ctx, j->method, j->path, j->content_type, j->body, j->len, &resp);
        bool again = false;
        if (rc == 0 && resp.status == 404 && j->create_body) {
            /* the series' Event is gone: create it whole; 409 means it is back, so patch again */
            ks_kube_response_free(&resp);
            memset(&resp, 0, sizeof(resp));
            rc = t->request(t->ctx, "POST", j->create_path, "application/json", j->create_body, j->create_len,
                            &resp);
            again = rc == 0 && resp.status == 409;
        }
        if (!again && !retryable(rc, resp.status))
            break;
    }
    bool ok = rc == 0 && resp.status >= 200 && resp.status < 300;
    /* a victim already gone is what we wanted */
    ok = ok || (rc == 0 && resp.status == 404 && strcmp(j->method, "DELETE") == 0);
    if (!ok)
        fprintf(stderr, "ksched serve: %s %s: %s\n", j->method, j->path,
                rc < 0                      ? resp.error
                : resp.body && resp.body[0] ? resp.body
                                            : "no response body");
    ks_kube_response_free(&resp);
    ks_mutex_lock(&w->lock);
    if (ok)
        w->stats.sent++;
    else
        w->stats.failed++;
    ks_mutex_unlock(&w->lock);
}

/* finishSeries (and refreshExistingEventSeries when due) when a finish period has passed. Lock held. */
static void series_tick(struct ks_writer *w)
{
    ks_mutex_assert_held(&w->lock);
    int64_t now = ks__mono_ns();
    bool refresh = now >= w->next_refresh;
    w->next_finish = now + ks_event_series_period(w->series, false);
    if (refresh)
        w->next_refresh = now + ks_event_series_period(w->series, true);
    ks_mutex_unlock(&w->lock);
    ks_event_series_tick(w->series, wall_ns(), refresh, emit_series, w);
    ks_mutex_lock(&w->lock);
}

/* Nothing queued and nothing in progress on any lane. Lock held. */
static bool all_idle(const struct ks_writer *w)
{
    ks_mutex_assert_held(&w->lock);
    for (int i = 0; i < w->nlanes; i++)
        if (w->lanes[i].head || w->lanes[i].busy)
            return false;
    return true;
}

static void *lane_main(void *arg)
{
    struct lane *ln = arg;
    struct ks_writer *w = ln->w;
    ks_mutex_lock(&w->lock);
    for (;;) {
        while (!ln->head && !w->quit && !(ln->ticks && ks__mono_ns() >= w->next_finish)) {
            if (ln->ticks) {
                struct timespec until = {.tv_sec = w->next_finish / 1000000000,
                                         .tv_nsec = w->next_finish % 1000000000};
                ks_cond_timedwait(&ln->wake, &w->lock, &until); /* `wake` runs on CLOCK_MONOTONIC */
            } else {
                ks_cond_wait(&ln->wake, &w->lock);
            }
        }
        if (ln->ticks && !w->quit && ks__mono_ns() >= w->next_finish) {
            series_tick(w);
            continue;
        }
        if (!ln->head)
            break;
        if (w->quit && w->drain_deadline && ks__mono_ns() > w->drain_deadline) {
            /* shutting down and out of time: drop the rest */
            while (ln->head) {
                struct write_job *j = ln->head;
                ln->head = j->next;
                w->queued--;
                w->stats.dropped++;
                free_job(j);
            }
            break;
        }
        struct write_job *j = ln->head;
        ln->head = j->next;
        if (!ln->head)
            ln->tail = &ln->head;
        w->queued--;
        ln->busy = true;
        ks_mutex_unlock(&w->lock);
        send_job(w, j);
        free_job(j);
        ks_mutex_lock(&w->lock);
        ln->busy = false;
        if (all_idle(w))
            pthread_cond_broadcast(&w->idle);
    }
    ln->tail = &ln->head;
    pthread_cond_broadcast(&w->idle);
    ks_mutex_unlock(&w->lock);
    return NULL;
}

/* Stop and join the lanes that run, free the rest. */
static void lanes_stop(struct ks_writer *w)
{
    ks_mutex_lock(&w->lock);
    w->quit = true;
    for (int i = 0; i < w->nlanes; i++)
        pthread_cond_broadcast(&w->lanes[i].wake);
    ks_mutex_unlock(&w->lock);
    for (int i = 0; i < w->nlanes; i++) {
        struct lane *ln = &w->lanes[i];
        if (ln->started)
            pthread_join(ln->thread, NULL);
        pthread_cond_destroy(&ln->wake);
    }
}

int ks_writer_create(const struct ks_writer_opts *opts, struct ks_writer **out)
{
    struct ks_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->o = *opts;
    if (!w->o.events.request)
        w->o.events = w->o.transport;
    if (!w->o.max_queued)
        w->o.max_queued = 100000;
    if (gethostname(w->hostname, sizeof(w->hostname) - 1) < 0)
        snprintf(w->hostname, sizeof(w->hostname), "localhost");
    if (opts->reporting_instance)
        snprintf(w->hostname, sizeof(w->hostname), "%s", opts->reporting_instance);
    int rc = ks_event_series_create(opts->series_finish_ns, opts->series_refresh_ns, &w->series);
    if (rc < 0) {
        free(w);
        return rc;
    }
    w->next_finish = ks__mono_ns() + ks_event_series_period(w->series, false);
    w->next_refresh = ks__mono_ns() + ks_event_series_period(w->series, true);
    int events = opts->event_lanes ? (int)opts->event_lanes : KS_WRITER_EVENT_LANES;
    w->nlanes = 1 + (events < KS_WRITER_LANES_MAX - 1 ? events : KS_WRITER_LANES_MAX - 1);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    ks_mutex_init(&w->lock, KS_LOCK_SERVE_WRITER);
    pthread_cond_init(&w->idle, NULL);
    for (int i = 0; i < w->nlanes; i++) {
        struct lane *ln = &w->lanes[i];
        ln->w = w;
        ln->ticks = i == 0;
        ln->tail = &ln->head;
        pthread_cond_init(&ln->wake, &attr);
    }
    pthread_condattr_destroy(&attr);
    for (int i = 0; i < w->nlanes && rc == 0; i++) {
        rc = pthread_create(&w->lanes[i].thread, NULL, lane_main, &w->lanes[i]);
        w->lanes[i].started = rc == 0;
    }
    if (rc) {
        lanes_stop(w);
        pthread_cond_destroy(&w->idle);
        ks_mutex_destroy(&w->lock);
        ks_event_series_destroy(w->series);
        free(w);
        return -rc;
    }
    *out = w;
    return 0;
}

void ks_writer_flush(struct ks_writer *w)
{
    ks_mutex_lock(&w->lock);
    while (!all_idle(w))
        ks_cond_wait(&w->idle, &w->lock);
    ks_mutex_unlock(&w->lock);
}

void ks_writer_destroy(struct ks_writer *w, int64_t drain_ms)
{
    if (!w)
        return;
    ks_mutex_lock(&w->lock);
    w->drain_deadline = ks__mono_ns() + drain_ms * 1000000;
    ks_mutex_unlock(&w->lock);
    lanes_stop(w);
    ks_smap_clear(&w->last_message, free);
    ks_event_series_destroy(w->series);
    pthread_cond_destroy(&w->idle);
    ks_mutex_destroy(&w->lock);
    free(w);
}

void ks_writer_stats(struct ks_writer *w, struct ks_writer_stats *out)
{
    ks_mutex_lock(&w->lock);
    *out = w->stats;
    ks_mutex_unlock(&w->lock);
}

/* ---- binder and evictor ----------------------------------------------------------------- */

/* The "message" of a metav1.Status body, else the body itself. */
static void status_message(const struct ks_kube_response *resp, char *buf, size_t len)
{
    struct ks_yaml_stream *st = NULL;
    struct ks_error err = {0};
    buf[0] = '\0';
    if (resp->body && resp->len && ks_json_parse("response", resp->body, resp->len, &st, &err) == 0) {
        const struct ks_yaml_node *m = ks_yaml_get(st->docs[0], "message");
        if (m && m->kind == KS_YAML_SCALAR)
            snprintf(buf, len, "%s", m->str);
    }
    ks_yaml_stream_destroy(st);
    if (!buf[0])
        snprintf(buf, len, "%s", resp->status ? (resp->body ? resp->body : "") : resp->error);
}

/*
 * A binding the server may or may not have applied: any transport error, or a 5xx (etcd's
 * "request timed out" commits later). Even a refused connection: libcurl sends a request on
 * a pooled connection and, when that connection dies without an answer, connects afresh and
 * sends it again, so the error a new connection meets (refused while the server restarts,
 * a TLS or name failure) can hide a first attempt the server received and applied.
 */
static bool outcome_unknown(int rc, long status)
{
    return rc < 0 || status >= 500;
}

/*
 * What the server has of @pod after a binding to @node whose outcome is unknown: 1 bound
 * there, 0 not bound (or gone), -EEXIST bound elsewhere, -ETIMEDOUT when it did not tell
 * within KS_BIND_VERIFY_S (GET every second while it does not answer: a restarting API server).
 */
static int binding_outcome(struct ks_writer *w, const struct ks_pod *pod, uint32_t node)
{
    char path[800];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", pod_ns(pod), pod->meta.name);
    for (int attempt = 0; attempt < KS_BIND_VERIFY_S; attempt++) {
        if (attempt)
            sleep(1);
        struct ks_kube_response resp = {0};
        int rc = w->o.transport.request(w->o.transport.ctx, "GET", path, NULL, NULL, 0, &resp);
        if (rc < 0 || resp.status >= 500 || resp.status == 429) {
            ks_kube_response_free(&resp);
            continue;
        }
        int out = resp.status == 404 ? 0 : -EIO;
        struct ks_yaml_stream *doc = NULL;
        struct ks_error err = {0};
        if (resp.status == 200 && ks_json_parse(path, resp.body, resp.len, &doc, &err) == 0) {
            const struct ks_yaml_node *md = ks_yaml_get(doc->docs[0], "metadata");
            const struct ks_yaml_node *uid = ks_yaml_get(md, "uid");
            const struct ks_yaml_node *on = ks_yaml_get(ks_yaml_get(doc->docs[0], "spec"), "nodeName");
            const char *bound = on && on->kind == KS_YAML_SCALAR && !ks_yaml_is_null(on) ? on->str : "";
            if (pod->meta.uid && uid && uid->kind == KS_YAML_SCALAR && strcmp(uid->str, pod->meta.uid) != 0)
                out = 0; /* another pod of that name: ours is gone */
            else
                out = !bound[0] ? 0 : strcmp(bound, ks_intern_str(node)) == 0 ? 1 : -EEXIST;
        }
        ks_yaml_stream_destroy(doc);
        ks_kube_response_free(&resp);
        return out;
    }
    return -ETIMEDOUT;
}

static int bind_pod(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    struct ks_writer *w = ctx;
    char path[800], msg[512];
    size_t len = 0;
    char *body = ks_serve_binding_body(pod, ks_intern_str(node), &len);
    if (!body) {
        ks_status_set(st, KS_ERROR, "binding rejected: out of memory");
        return -ENOMEM;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", pod_ns(pod), pod->meta.name);
    struct ks_kube_response resp = {0};
    int rc = w->o.transport.request(w->o.transport.ctx, "POST", path, "application/json", body, len, &resp);
    free(body);
    if (rc == 0 && (resp.status == 201 || resp.status == 200)) {
        ks_kube_response_free(&resp);
        return 0;
    }
    status_message(&resp, msg, sizeof(msg));
    if (outcome_unknown(rc, resp.status) || (rc == 0 && resp.status == 409)) {
        /* forgetting a binding the server applied would give its room to another pod; a 409 may
         * be our own earlier attempt that was applied ("already assigned" to this very node) */
        int known = binding_outcome(w, pod, node);
        if (known == 1) {
            ks_kube_response_free(&resp);
            return 0;
        }
        if (known == -EEXIST) {
            rc = 0;
            resp.status = 409;
        } else if (known == 0 && rc == 0 && resp.status == 409) {
            resp.status = 500; /* not bound at all: a conflict of another kind, tried again */
        }
    }
    ks_status_set(st, KS_ERROR, "binding rejected: %s", msg);
    rc = rc < 0 ? rc : resp.status == 409 ? -EEXIST : -EIO;
    ks_kube_response_free(&resp);
    return rc;
}

struct ks_binder_backend ks_writer_binder(struct ks_writer *w)
{
    return (struct ks_binder_backend){.bind = bind_pod, .ctx = w};
}

static void queue_event(struct ks_writer *w, const struct ks_pod *regarding, const struct ks_pod *related,
                        const char *type, const char *reason, const char *action, const char *note,
                        const struct ks_pod *profile_pod)
{
    char instance[600];
    const char *controller = ks_intern_str(profile_pod->scheduler_name);
    snprintf(instance, sizeof(instance), "%s-%s", controller, w->hostname);
    struct ks_serve_event ev = {
        .regarding = regarding,
        .related = related,
        .type = type,
        .reason = reason,
        .action = action,
        .note = note,
        .reporting_controller = controller,
        .reporting_instance = instance,
        .now_ns = wall_ns(),
    };
    struct ks_event_write ew;
    int rc = ks_event_series_record(w->series, &ev, &ew);
    if (rc > 0) {
        enqueue_event(w, &ew);
    } else if (rc == 0) {
        ks_mutex_lock(&w->lock);
        w->stats.series_counted++;
        ks_mutex_unlock(&w->lock);
    }
}

static void pod_path(const struct ks_pod *pod, const char *sub, char *buf, size_t len)
{
    snprintf(buf, len, "/api/v1/namespaces/%s/pods/%s%s", pod_ns(pod), pod->meta.name, sub);
}

void ks__writer_preempted_event(struct ks_writer *w, const struct ks_pod *victim,
                                const struct ks_pod *preemptor, uint32_t node)
{
    char note[1200];
    snprintf(note, sizeof(note), "Preempted by %s/%s on node %s", pod_ns(preemptor), preemptor->meta.name,
             ks_intern_str(node));
    queue_event(w, victim, preemptor, "Normal", "Preempted", "Preempting", note, preemptor);
}

/* Queue @calls as one job of lane 0 (the writer owns them from here). 0 or -ENOMEM. */
static int push_calls(struct ks_writer *w, struct ks_preemption_calls *calls)
{
    struct write_job *j = calloc(1, sizeof(*j));
    if (!j) {
        ks__preemption_calls_free(calls);
        return -ENOMEM;
    }
    j->preempt = calls;
    return push_job(w, j, false);
}

static int evict(void *ctx, const struct ks_pod *victim, const struct ks_pod *preemptor, uint32_t node)
{
    struct ks_preemption_calls *calls = ks__preemption_calls_new(preemptor, node, &victim, 1, NULL, NULL);
    return calls ? push_calls(ctx, calls) : -ENOMEM;
}

static int evict_async(void *ctx, const struct ks_pod *preemptor, uint32_t node,
                       const struct ks_pod *const *victims, uint32_t n, void (*done)(void *done_ctx, bool ok),
                       void *done_ctx)
{
    struct ks_preemption_calls *calls = ks__preemption_calls_new(preemptor, node, victims, n, done, done_ctx);
    if (!calls)
        return -ENOMEM;
    push_calls(ctx,
               calls); /* when it fails, freeing the calls reports them failed: @done is called either way */
    return 0;
}

struct ks_evictor ks_writer_evictor(struct ks_writer *w)
{
    return (struct ks_evictor){.evict = evict, .evict_async = evict_async, .ctx = w};
}

/* ---- outcomes --------------------------------------------------------------------------- */

static void failure(struct ks_writer *w, const struct ks_sched_event *ev)
{
    const struct ks_pod *pod = ev->pod;
    const char *reason = ev->kind == KS_SCHED_UNSCHEDULABLE ? "Unschedulable" : "SchedulerError";
    const char *message = ev->message ? ev->message : "";
    const char *nominated = NULL;
    if (w->nominated_pod == pod)
        nominated = ks_intern_str(w->nominated_node);
    w->nominated_pod = NULL;

    const char *uid = pod->meta.uid ? pod->meta.uid : pod->meta.name;
    ks_mutex_lock(&w->lock);
    const char *last = ks_smap_get(&w->last_message, uid);
    bool unchanged = false;
    size_t len = 0;
    char *body = ks_serve_condition_patch(pod, reason, message, nominated, last, wall_ns(), &unchanged, &len);
    if (unchanged) {
        w->stats.skipped++;
    } else if (body) {
        char *copy = strdup(message), *old = NULL;
        if (copy && ks_smap_put(&w->last_message, uid, copy, (void **)&old) < 0)
            free(copy);
        free(old);
    }
    ks_mutex_unlock(&w->lock);
    if (body) {
        char path[800];
        pod_path(pod, "/status", path, sizeof(path));
        ks_writer_enqueue(w, "PATCH", path, "application/strategic-merge-patch+json", body, len, false);
    }
    queue_event(w, pod, NULL, "Warning", "FailedScheduling", "Scheduling", message, pod);
}

static void scheduled(struct ks_writer *w, const struct ks_sched_event *ev)
{
    const struct ks_pod *pod = ev->pod;
    const char *node = ks_intern_str(ev->node);
    char note[1200], path[800];

    ks_mutex_lock(&w->lock);
    free(ks_smap_del(&w->last_message, pod->meta.uid ? pod->meta.uid : pod->meta.name));
    ks_mutex_unlock(&w->lock);
    if (pod->nominated_node_name != KS_ID_EMPTY && pod->nominated_node_name != ev->node) {
        size_t len = 0;
        char *body = ks_serve_nominated_patch(NULL, &len);
        pod_path(pod, "/status", path, sizeof(path));
        if (body)
            ks_writer_enqueue(w, "PATCH", path, "application/strategic-merge-patch+json", body, len, false);
    }
    snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", pod_ns(pod), pod->meta.name, node);
    queue_event(w, pod, NULL, "Normal", "Scheduled", "Binding", note, pod);
}

void ks_writer_on_sched_event(struct ks_writer *w, const struct ks_sched_event *ev)
{
    switch (ev->kind) {
    case KS_SCHED_NOMINATED:
        w->nominated_pod = ev->pod;
        w->nominated_node = ev->node;
        break;
    case KS_SCHED_UNSCHEDULABLE:
    case KS_SCHED_ERROR:
        failure(w, ev);
        break;
    case KS_SCHED_SCHEDULED:
        scheduled(w, ev);
        break;
    case KS_SCHED_PREEMPTED:
        break; /* only the in-process evictor reports these; ours records the Event itself */
    }
}
