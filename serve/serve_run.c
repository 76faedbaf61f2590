/*
 * serve_run.c - `ksched serve` once its flags are parsed (serve.h ks_serve_run; the command,
 * cmd/serve_cmd.c, parses them): schedule a cluster through its kube-apiserver, as
 * kube-scheduler does (cmd/kube-scheduler/app/server.go Run, pkg/scheduler/scheduler.go).
 *
 * Start-up: the KubeSchedulerConfiguration (bad input: FILE:LINE: FIELD: MESSAGE and exit
 * status 2), the kubeconfig (or the in-cluster service account), the HTTP endpoint, the
 * writer, the discovery of resource.k8s.io/v1 (GET /apis/resource.k8s.io/v1, retried as the
 * informers retry a failed list, until it answers or SIGTERM/SIGINT: a server that does not
 * serve it - 404, kube-apiserver before v1.34 - has its DRA kinds left unwatched, said once,
 * instead of informers that would never sync), then the informers and, with --leader-elect,
 * the lease. Informer events go
 * through a FIFO to the intake thread (serve_intake.c); when every kind's first LIST
 * has arrived (WaitForCacheSync) the intake thread creates the cache and the scheduler
 * and hands them what it recorded. The scheduling thread waits for that and, with leader
 * election, for the lease, then runs blocking scheduling cycles.
 *
 * Shutdown on SIGTERM/SIGINT: stop scheduling, stop the informers, let the bindings in
 * flight finish, send the queued writes (5 s at most), release the lease
 * (ReleaseOnCancel), exit 0. Losing the lease stops scheduling and exits 1 at once, as
 * kube-scheduler exits when leaderelection is lost.
 *
 * Every signal is blocked in every thread; the main thread takes SIGTERM/SIGINT with
 * sigtimedwait and polls the flags the other threads raise.
 */
#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/rcu.h"
#include "ksched/base/spin.h" /* ks__mono_ns */
#include "ksched/internal/config.h"
#include "ksched/internal/features.h"
#include "ksched/internal/json_write.h"
#include "ksched/internal/lease.h"
#include "ksched/internal/queue.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An informer event on its way to the intake thread; synced marks the end of the initial lists. */
struct queued_event {
    struct queued_event *next;
    bool synced;
    struct ks_watch_event ev;
    char strings[]; /* namespace, name, uid, resourceVersion */
};

struct serve {
    struct ks_serve_args a;
    struct ks_config *cfg;
    struct ks_kubeconfig kc;
    struct ks_kube_client *client;
    struct ks_kube_client *event_client; /* kube-scheduler's eventClient: its own rate limit */
    struct ks_metrics *reg;
    struct ks_serve_metrics *metrics;
    struct ks_metric *leader_gauge;
    struct ks_writer *writer;
    struct ks_evictor writer_evictor;
    struct ks_objects *objects;
    struct ks_intake *intake;
    struct ks_serve_volumes *volumes; /* VolumeBinding's updates and waits */
    struct ks_serve_dra *dra;         /* DynamicResources' claim writes */
    uint32_t kinds;                   /* the informers' kinds (the DRA kinds as discovery found them) */
    bool interrupted;                 /* SIGTERM/SIGINT during start-up */
    struct ks_informers *informers;
    struct ks_cache *cache;
    struct ks_scheduler *sched;
    struct ks_lease *lease;
    struct ks_http *http;       /* the secure port */
    struct ks_http *http_plain; /* --metrics-addr */
    struct ks_tls *tls;
    struct ks_auth *auth;
    struct ks_kube_client *auth_client; /* TokenReviews and SubjectAccessReviews */
    struct ks_mutex http_lock;          /* one answer at a time across both endpoints */
    bool leader_elect;

    struct ks_mutex lock; /* the FIFO; waking the scheduling thread */
    pthread_cond_t cond;
    struct queued_event *head, **tail;
    pthread_t intake_thread, sched_thread;
    bool intake_started, sched_started;

    _Atomic bool ready;   /* synced, the scheduler exists */
    _Atomic bool leading; /* we hold the lease (or run without election) */
    _Atomic bool quit;
    _Atomic bool lost;        /* the lease was lost: exit 1 */
    _Atomic bool unreachable; /* the informers' last request got no answer: not ready */
    _Atomic int failed;       /* the intake thread could not start the scheduler: exit 1 */
};

static int fail_input(const struct ks_error *err)
{
    char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
    ks_error_format(err, msg, sizeof(msg));
    fprintf(stderr, "ksched: %s\n", msg);
    return 2;
}

/* ---- informer thread -------------------------------------------------------------------- */

static void push(struct serve *sv, struct queued_event *q)
{
    ks_mutex_lock(&sv->lock);
    q->next = NULL;
    /* the intake thread waits only on an empty FIFO and takes all of it when it wakes: one
     * wakeup per batch, not per event (a futex wake per object dominated the initial lists) */
    if (!sv->head)
        pthread_cond_broadcast(&sv->cond);
    *sv->tail = q;
    sv->tail = &q->next;
    ks_mutex_unlock(&sv->lock);
}

static char *copy_str(char **dst, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    memcpy(*dst, s ? s : "", n);
    char *at = *dst;
    *dst += n;
    return at;
}

static void on_informer_event(void *ctx, const struct ks_watch_event *ev)
{
    struct serve *sv = ctx;
    size_t n = strlen(ev->namespace_ ? ev->namespace_ : "") + strlen(ev->name ? ev->name : "") +
               strlen(ev->uid ? ev->uid : "") + strlen(ev->resource_version ? ev->resource_version : "") + 4;
    struct queued_event *q = malloc(sizeof(*q) + n);
    if (!q) {
        fprintf(stderr, "ksched serve: out of memory queueing a %s event\n", ks_kind_name(ev->kind));
        ks_intake_discard(ev);
        return;
    }
    char *p = q->strings;
    q->synced = false;
    q->ev = *ev;
    q->ev.namespace_ = copy_str(&p, ev->namespace_);
    q->ev.name = copy_str(&p, ev->name);
    q->ev.uid = copy_str(&p, ev->uid);
    q->ev.resource_version = copy_str(&p, ev->resource_version);
    push(sv, q);
}

static void on_informer_synced(void *ctx)
{
    struct serve *sv = ctx;
    struct queued_event *q = calloc(1, sizeof(*q));
    if (!q) {
        atomic_store(&sv->failed, 1);
        return;
    }
    q->synced = true;
    push(sv, q);
}

static void on_informer_error(void *ctx, enum ks_kind kind, const char *message)
{
    (void)ctx;
    fprintf(stderr, "ksched serve: skipped a %s from the server: %s\n", ks_kind_name(kind), message);
}

static void on_informer_reachable(void *ctx, bool reachable)
{
    struct serve *sv = ctx;
    atomic_store(&sv->unreachable, !reachable);
    fprintf(stderr, "ksched serve: the API server %s\n", reachable ? "answers again" : "does not answer");
}

/* ---- scheduler callbacks ---------------------------------------------------------------- */

static void log_event(const struct ks_sched_event *ev)
{
    char key[600];
    flockfile(stdout);
    snprintf(key, sizeof(key), "%s/%s", ks_intern_str(ev->pod->meta.namespace_id), ev->pod->meta.name);
    fputs("{\"pod\":", stdout);
    ks_json_write_cstr(stdout, key);
    fputs(",\"status\":", stdout);
    ks_json_write_cstr(stdout, ks_sched_event_name(ev->kind));
    if (ev->kind == KS_SCHED_SCHEDULED || ev->kind == KS_SCHED_NOMINATED) {
        fputs(",\"node\":", stdout);
        ks_json_write_cstr(stdout, ks_intern_str(ev->node));
    }
    if (ev->message) {
        fputs(",\"message\":", stdout);
        ks_json_write_cstr(stdout, ev->message);
    }
    fputs("}\n", stdout);
    fflush(stdout);
    funlockfile(stdout);
}

/* Scheduler outcomes (serialised by the scheduler; scheduling or binder threads). */
static void on_sched_event(void *ctx, const struct ks_sched_event *ev)
{
    struct serve *sv = ctx;
    ks_serve_metrics_event(sv->metrics, ev, ks__mono_ns());
    ks_writer_on_sched_event(sv->writer, ev);
    log_event(ev);
}

/* After a PodGroup cycle (scheduling thread): the group's PodGroupInitiallyScheduled condition. */
static void on_group(void *ctx, const struct ks_group_attempt *g)
{
    struct serve *sv = ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ks_serve_on_group(sv->writer, sv->objects, g, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* Before each cycle (scheduling thread): the object changes queued since, and the attempt's start. */
static void on_cycle(void *ctx, const struct ks_queued_pod *qp)
{
    struct serve *sv = ctx;
    ks_intake_apply_objects(sv->intake);
    ks_serve_metrics_cycle(sv->metrics, qp, ks__mono_ns());
}

static int evict(void *ctx, const struct ks_pod *victim, const struct ks_pod *preemptor, uint32_t node)
{
    struct serve *sv = ctx;
    int rc = sv->writer_evictor.evict(sv->writer_evictor.ctx, victim, preemptor, node);
    if (rc == 0)
        ks_serve_metrics_victim(sv->metrics);
    return rc;
}

static int evict_async(void *ctx, const struct ks_pod *preemptor, uint32_t node,
                       const struct ks_pod *const *victims, uint32_t n, void (*done)(void *done_ctx, bool ok),
                       void *done_ctx)
{
    struct serve *sv = ctx;
    int rc =
        sv->writer_evictor.evict_async(sv->writer_evictor.ctx, preemptor, node, victims, n, done, done_ctx);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        ks_serve_metrics_victim(sv->metrics);
    return rc;
}

/* ---- intake thread ---------------------------------------------------------------------- */

/* WaitForCacheSync is over: build the cache and the scheduler and hand them the recorded objects. */
static int go_live(struct serve *sv)
{
    struct ks_error err = {0};
    struct ks_scheduler_opts opts = {
        .config = sv->cfg,
        .objects = sv->objects,
        .seed = sv->a.seed,
        .seeded = sv->a.seeded,
        .no_index = sv->a.no_index,
        .on_event = on_sched_event,
        .ctx = sv,
        .flusher = true,
        .binders = sv->a.binders,
        .binder = ks_writer_binder(sv->writer),
        .evictor = {.evict = evict, .evict_async = evict_async, .ctx = sv},
        .on_cycle = on_cycle,
        .on_group = on_group,
        .volume_api = ks_serve_volumes_api(sv->volumes),
        .dra_api = ks_serve_dra_api(sv->dra),
        .metrics = ks_serve_metrics_engine(sv->metrics),
    };
    int rc = ks_cache_create(&sv->cache);
    if (rc == 0)
        rc = ks_scheduler_create(&opts, sv->cache, &sv->sched, &err);
    if (rc < 0) {
        if (err.set)
            fail_input(&err);
        else
            fprintf(stderr, "ksched serve: creating the scheduler: %s\n", strerror(-rc));
        return rc;
    }
    if ((rc = ks_intake_go_live(sv->intake, sv->sched, sv->cache)) < 0) {
        fprintf(stderr, "ksched serve: loading the synced objects: %s\n", strerror(-rc));
        return rc;
    }
    ks_serve_metrics_attach(sv->metrics, sv->sched);
    struct ks_intake_stats st;
    ks_intake_stats(sv->intake, &st);
    fprintf(stderr, "ksched serve: caches synced: %u nodes, %u pods\n", st.nodes, st.pods);
    return 0;
}

static void *intake_main(void *arg)
{
    struct serve *sv = arg;
    ks_rcu_register_thread();
    ks_mutex_lock(&sv->lock);
    for (;;) {
        while (!sv->head && !atomic_load(&sv->quit))
            ks_cond_wait(&sv->cond, &sv->lock);
        if (atomic_load(&sv->quit))
            break;
        struct queued_event *batch = sv->head;
        sv->head = NULL;
        sv->tail = &sv->head;
        ks_mutex_unlock(&sv->lock);
        while (batch) {
            struct queued_event *q = batch;
            batch = q->next;
            if (q->synced) {
                if (!atomic_load(&sv->ready) && !atomic_load(&sv->quit)) {
                    if (go_live(sv) < 0) {
                        atomic_store(&sv->failed, 1);
                    } else {
                        ks_mutex_lock(&sv->lock);
                        atomic_store(&sv->ready, true);
                        pthread_cond_broadcast(&sv->cond);
                        ks_mutex_unlock(&sv->lock);
                    }
                }
            } else if (!atomic_load(&sv->failed) && !atomic_load(&sv->quit)) {
                ks_intake_apply(sv->intake, &q->ev);
            } else {
                ks_intake_discard(&q->ev);
            }
            free(q);
        }
        ks_mutex_lock(&sv->lock);
    }
    ks_mutex_unlock(&sv->lock);
    ks_rcu_unregister_thread();
    return NULL;
}

/* ---- scheduling thread ------------------------------------------------------------------ */

static void *sched_main(void *arg)
{
    struct serve *sv = arg;
    ks_rcu_register_thread();
    ks_mutex_lock(&sv->lock);
    while (!atomic_load(&sv->quit) && !(atomic_load(&sv->ready) && atomic_load(&sv->leading)))
        ks_cond_wait(&sv->cond, &sv->lock);
    ks_mutex_unlock(&sv->lock);
    if (!atomic_load(&sv->quit))
        fprintf(stderr, "ksched serve: scheduling\n");
    /* the queue is closed on shutdown, which wakes a blocked cycle */
    while (!atomic_load(&sv->quit) && atomic_load(&sv->leading))
        ks_scheduler_schedule_one(sv->sched, true);
    ks_rcu_unregister_thread();
    return NULL;
}

/* ---- leader election -------------------------------------------------------------------- */

static void on_started_leading(void *ctx)
{
    struct serve *sv = ctx;
    fprintf(stderr, "ksched serve: acquired the lease %s/%s\n", sv->cfg->leader_election.resource_namespace,
            sv->cfg->leader_election.resource_name);
    ks_metric_set(sv->leader_gauge, 1);
    ks_mutex_lock(&sv->lock);
    atomic_store(&sv->leading, true);
    pthread_cond_broadcast(&sv->cond);
    ks_mutex_unlock(&sv->lock);
}

static void on_stopped_leading(void *ctx)
{
    struct serve *sv = ctx;
    ks_metric_set(sv->leader_gauge, 0);
    atomic_store(&sv->leading, false);
    /* the main thread sees this within 100 ms and stops the scheduling thread */
    atomic_store(&sv->lost, true);
}

/* ---- HTTP ------------------------------------------------------------------------------- */

static bool lease_ok(struct serve *sv)
{
    /* client-go's HealthzAdaptor tolerates 20 s past the lease duration */
    return !sv->lease || ks_lease_healthy(sv->lease, INT64_C(20000000000));
}

static int http_answer(struct serve *sv, const char *path, FILE *out, const char **content_type)
{
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
        if (!lease_ok(sv)) {
            fputs("[-]leaderElection failed: the lease has not been renewed in time\nhealthz check failed\n",
                  out);
            return 500;
        }
        fputs("ok", out);
        return 200;
    }
    if (strcmp(path, "/readyz") == 0) {
        if (!atomic_load(&sv->ready)) {
            fputs(
                "[-]sched-handler-sync failed: waiting for the informers' first lists\nreadyz check failed\n",
                out);
            return 500;
        }
        if (atomic_load(&sv->unreachable)) {
            fputs("[-]apiserver-connection failed: the API server did not answer the informers' last "
                  "request\nreadyz check failed\n",
                  out);
            return 500;
        }
        if (!lease_ok(sv)) {
            fputs("[-]leaderElection failed: the lease has not been renewed in time\nreadyz check failed\n",
                  out);
            return 500;
        }
        fputs("ok", out);
        return 200;
    }
    if (strcmp(path, "/metrics") == 0) {
        *content_type = "text/plain; version=0.0.4; charset=utf-8";
        return ks_metrics_write(sv->reg, out) == 0 ? 200 : 500;
    }
    fputs("404 page not found\n", out);
    return 404;
}

/* The endpoints' handler (HTTP threads): the secure port and --metrics-addr take turns. */
static int http_handler(void *ctx, const char *path, FILE *out, const char **content_type)
{
    struct serve *sv = ctx;
    ks_mutex_lock(&sv->http_lock);
    int status = http_answer(sv, path, out, content_type);
    ks_mutex_unlock(&sv->http_lock);
    return status;
}

/* ---- start-up and shutdown -------------------------------------------------------------- */

/* Flags over the configuration's leaderElection and clientConnection. 0, or 2 on bad input. */
static int resolve(struct serve *sv)
{
    struct ks_leader_election *le = &sv->cfg->leader_election;
    const struct ks_serve_args *a = &sv->a;
    const char *ct = sv->cfg->client_connection.content_type;
    if (!a->content_type && ct && ct[0] && strcmp(ct, "application/json") != 0 &&
        strcmp(ct, "application/vnd.kubernetes.protobuf") != 0) {
        fprintf(stderr,
                "ksched: %s: clientConnection.contentType: Unsupported value: \"%s\": supported values: "
                "\"application/json\", \"application/vnd.kubernetes.protobuf\"\n",
                a->config ? a->config : "configuration", ct);
        return 2;
    }
    if (a->leader_elect >= 0)
        le->leader_elect = a->leader_elect;
    if (a->lease_duration_ns)
        le->lease_duration_ns = a->lease_duration_ns;
    if (a->renew_deadline_ns)
        le->renew_deadline_ns = a->renew_deadline_ns;
    if (a->retry_period_ns)
        le->retry_period_ns = a->retry_period_ns;
    if (a->lock_namespace)
        le->resource_namespace = a->lock_namespace;
    if (a->lock_name)
        le->resource_name = a->lock_name;
    if (!le->resource_namespace || !le->resource_namespace[0])
        le->resource_namespace = "kube-system";
    if (!le->resource_name || !le->resource_name[0])
        le->resource_name = "kube-scheduler";
    sv->leader_elect = le->leader_elect;
    if (sv->leader_elect && le->resource_lock && strcmp(le->resource_lock, "leases") != 0) {
        fprintf(stderr, "ksched serve: leaderElection.resourceLock \"%s\": only \"leases\" is supported\n",
                le->resource_lock);
        return 2;
    }
    return 0;
}

static int load_kubeconfig(struct serve *sv)
{
    struct ks_error err = {0};
    const char *path = sv->a.kubeconfig;
    if (!path && sv->cfg->client_connection.kubeconfig && sv->cfg->client_connection.kubeconfig[0])
        path = sv->cfg->client_connection.kubeconfig;
    int rc = path ? ks_kubeconfig_load(path, &sv->kc, &err) : ks_kubeconfig_in_cluster(NULL, &sv->kc, &err);
    if (rc == 0)
        return 0;
    if (err.set)
        return fail_input(&err);
    fprintf(stderr, "ksched: %s: %s\n", path ? path : "in-cluster configuration", strerror(-rc));
    return 2;
}

static int start_lease(struct serve *sv)
{
    char identity[512];
    const struct ks_leader_election *le = &sv->cfg->leader_election;
    if (sv->a.identity)
        snprintf(identity, sizeof(identity), "%s", sv->a.identity);
    else
        ks_lease_default_identity(identity, sizeof(identity));
    struct ks_lease_opts lo = {
        .client = sv->client,
        .namespace_ = le->resource_namespace,
        .name = le->resource_name,
        .identity = identity,
        .lease_duration_ns = le->lease_duration_ns,
        .renew_deadline_ns = le->renew_deadline_ns,
        .retry_period_ns = le->retry_period_ns,
        .jitter_seed = (uint64_t)ks__mono_ns(),
        .on_started_leading = on_started_leading,
        .on_stopped_leading = on_stopped_leading,
        .ctx = sv,
    };
    int rc = ks_lease_create(&lo, &sv->lease);
    if (rc == -EINVAL) {
        fprintf(stderr,
                "ksched serve: leader election needs lease duration > renew deadline > 1.2 x retry period "
                "(got %.3gs, %.3gs, %.3gs)\n",
                (double)le->lease_duration_ns / 1e9, (double)le->renew_deadline_ns / 1e9,
                (double)le->retry_period_ns / 1e9);
        return 2;
    }
    if (rc < 0) {
        fprintf(stderr, "ksched serve: leader election: %s\n", strerror(-rc));
        return 1;
    }
    return 0;
}

static int client_request(void *ctx, const char *method, const char *path, const char *content_type,
                          const char *body, size_t len, struct ks_kube_response *resp)
{
    return ks_kube_request(ctx, method, path, content_type, body, len, resp);
}

/*
 * The secure port (kube-scheduler's: HTTPS, each request authenticated by a TokenReview and
 * authorized by a SubjectAccessReview through a client of its own with upstream's delegating
 * limits, qps 200, burst 400, 10 s) and the plain loopback endpoint. 0 or the exit status.
 */
static int start_http(struct serve *sv, const struct ks_kube_client_opts *co)
{
    const struct ks_serve_args *a = &sv->a;
    struct ks_error err = {0};
    int rc, port = 0;
    if (a->secure_port > 0) {
        struct ks_tls_opts to = {.cert_file = a->tls_cert_file,
                                 .key_file = a->tls_private_key_file,
                                 .cert_dir = a->cert_dir,
                                 .bind_ip = a->bind_address,
                                 .tls13_only = a->tls13_only};
        if ((rc = ks_tls_create(&to, &sv->tls)) < 0)
            return rc == -EINVAL ? 2 : 1;
        struct ks_kube_client_opts ao = *co;
        ao.qps = 200;
        ao.burst = 400;
        ao.timeout_ms = 10000;
        if ((rc = ks_kube_client_create(&ao, &sv->auth_client, &err)) < 0) {
            if (err.set)
                return fail_input(&err);
            fprintf(stderr, "ksched serve: creating the API client: %s\n", strerror(-rc));
            return 1;
        }
        struct ks_auth_opts auo = {.transport = {.request = client_request, .ctx = sv->auth_client},
                                   .token_ttl_ns = a->token_ttl_ns,
                                   .allow_ttl_ns = a->allow_ttl_ns,
                                   .deny_ttl_ns = a->deny_ttl_ns,
                                   .always_allow_paths = a->always_allow_paths};
        if ((rc = ks_auth_create(&auo, &sv->auth)) < 0) {
            fprintf(stderr, "ksched serve: %s\n", strerror(-rc));
            return 1;
        }
        char addr[128];
        snprintf(addr, sizeof(addr), strchr(a->bind_address, ':') ? "[%s]:%d" : "%s:%d", a->bind_address,
                 a->secure_port);
        struct ks_http_opts ho = {.addr = addr,
                                  .flag = "--bind-address",
                                  .tls = sv->tls,
                                  .auth = sv->auth,
                                  .handler = http_handler,
                                  .ctx = sv};
        if ((rc = ks_http_start(&ho, &sv->http, &port)) < 0)
            return rc == -EINVAL ? 2 : 1;
        fprintf(stderr,
                "ksched serve: HTTPS on %s (port %d) with %s; every path but %s needs a token the API server "
                "authorizes\n",
                addr, port, ks_tls_describe(sv->tls),
                a->always_allow_paths ? a->always_allow_paths : "/healthz,/readyz,/livez");
    }
    if (a->metrics_addr[0]) {
        struct ks_http_opts ho = {.addr = a->metrics_addr, .handler = http_handler, .ctx = sv};
        if ((rc = ks_http_start(&ho, &sv->http_plain, &port)) < 0)
            return rc == -EINVAL ? 2 : 1;
        fprintf(stderr, "ksched serve: /healthz, /readyz and /metrics on %s (port %d)\n", a->metrics_addr,
                port);
    }
    return 0;
}

/*
 * Which resource.k8s.io/v1 kinds to watch (see the file comment): sv->kinds without the
 * ones the server does not serve. Retries with the informers' backoff (250 ms doubling to
 * 30 s, +-25%) while the answer says nothing, waiting for SIGTERM/SIGINT meanwhile (then
 * sv->interrupted). The main thread, during start-up; blocks. 0 or the exit status.
 */
static int discover_dra(struct serve *sv)
{
    struct ks_serve_transport t = {.request = client_request, .ctx = sv->client};
    int64_t backoff_ms = 250;
    uint64_t rng = (uint64_t)ks__mono_ns() | 1;
    uint32_t served;
    char msg[512];
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    for (;;) {
        int rc = ks_serve_dra_discover(&t, &served, msg, sizeof(msg));
        if (rc >= 0)
            break;
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int64_t wait_ms = backoff_ms - backoff_ms / 4 + (int64_t)(rng % (uint64_t)(backoff_ms / 2 + 1));
        fprintf(stderr, "ksched serve: discovering resource.k8s.io/v1: %s (again in %.2fs)\n", msg,
                (double)wait_ms / 1e3);
        struct timespec ts = {.tv_sec = wait_ms / 1000, .tv_nsec = wait_ms % 1000 * 1000000};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT) {
            fprintf(stderr, "ksched serve: %s: shutting down\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            sv->interrupted = true;
            return 0;
        }
        backoff_ms = backoff_ms * 2 > 30000 ? 30000 : backoff_ms * 2;
    }
    uint32_t all = ks_serve_dra_kinds(), missing = all & ~served;
    if (missing == all) {
        fprintf(stderr,
                "ksched serve: the API server does not serve resource.k8s.io/v1: DeviceClasses, "
                "ResourceSlices, ResourceClaims and ResourceClaimTemplates are not watched (pods with "
                "resource claims stay pending)\n");
    } else if (missing) {
        char names[256] = "";
        for (int k = 0; k < KS_KIND_COUNT; k++) {
            if (missing & (1u << k))
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%ss", names[0] ? ", " : "",
                         ks_kind_name((enum ks_kind)k));
        }
        fprintf(stderr, "ksched serve: resource.k8s.io/v1 lacks %s: not watched\n", names);
    }
    sv->kinds &= ~missing;
    return 0;
}

/* The metrics registry, serve's metrics and the leader-election gauge: 0, or 1 when out of memory. */
static int start_metrics(struct serve *sv)
{
    static const char *const name_label[] = {"name", NULL};
    struct ks_metric_family *leader;
    if (ks_metrics_create(&sv->reg) < 0 || ks_serve_metrics_create(sv->reg, sv->cfg, &sv->metrics) < 0 ||
        !(leader =
              ks_metrics_family(sv->reg, KS_METRIC_GAUGE, "leader_election_master_status",
                                "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
                                "indicates backup, 1 indicates master. 'name' is the string used to "
                                "identify the lease. Please make sure to group by name.",
                                name_label, NULL, 0)) ||
        !(sv->leader_gauge =
              ks_metric_series(leader, (const char *const[]){sv->cfg->leader_election.resource_name}))) {
        fprintf(stderr, "ksched serve: out of memory\n");
        return 1;
    }
    return 0;
}

/* The API writer (with its test and bench knobs), the intake and the volume and DRA writers: 0, 1 or 2. */
static int start_objects(struct serve *sv)
{
    int rc;
    struct ks_writer_opts wo = {.transport = {.request = client_request, .ctx = sv->client},
                                .events = {.request = client_request, .ctx = sv->event_client}};
    /* a test knob: Event series end after this much quiet instead of client-go's 6 min */
    const char *finish = getenv("KSCHED_EVENT_SERIES_FINISH");
    if (finish && (ks_serve_parse_duration(finish, &wo.series_finish_ns) < 0 || wo.series_finish_ns <= 0)) {
        fprintf(stderr, "ksched serve: KSCHED_EVENT_SERIES_FINISH=%s: not a positive duration\n", finish);
        return 2;
    }
    /* a bench knob: how many Events go out side by side (serve_writer.c) */
    const char *lanes = getenv("KSCHED_EVENT_LANES");
    if (lanes) {
        char *end;
        unsigned long n = strtoul(lanes, &end, 10);
        if (!lanes[0] || *end || n < 1 || n > 16) {
            fprintf(stderr, "ksched serve: KSCHED_EVENT_LANES=%s: not a number from 1 to 16\n", lanes);
            return 2;
        }
        wo.event_lanes = (uint32_t)n;
    }
    if ((rc = ks_writer_create(&wo, &sv->writer)) < 0 || !(sv->objects = calloc(1, sizeof(*sv->objects))) ||
        (rc = ks_intake_create(sv->objects, &sv->intake)) < 0) {
        fprintf(stderr, "ksched serve: %s\n", strerror(rc < 0 ? -rc : ENOMEM));
        return 1;
    }
    sv->writer_evictor = ks_writer_evictor(sv->writer);
    ks_intake_set_metrics(sv->intake, sv->metrics);
    struct ks_serve_volumes_opts vo = {.transport = {.request = client_request, .ctx = sv->client}};
    if ((rc = ks_serve_volumes_create(&vo, &sv->volumes)) < 0) {
        fprintf(stderr, "ksched serve: %s\n", strerror(-rc));
        return 1;
    }
    ks_intake_set_volumes(sv->intake, sv->volumes);
    struct ks_serve_dra_opts dro = {.transport = {.request = client_request, .ctx = sv->client}};
    if ((rc = ks_serve_dra_create(&dro, &sv->dra)) < 0) {
        fprintf(stderr, "ksched serve: %s\n", strerror(-rc));
        return 1;
    }
    return 0;
}

/* The intake and scheduling threads, the informers and leader election: 0 or 1. */
static int start_threads(struct serve *sv)
{
    struct ks_error err = {0};
    int rc;
    atomic_store(&sv->leading, !sv->leader_elect);
    if ((rc = pthread_create(&sv->intake_thread, NULL, intake_main, sv)) != 0)
        return 1;
    sv->intake_started = true;
    if ((rc = pthread_create(&sv->sched_thread, NULL, sched_main, sv)) != 0)
        return 1;
    sv->sched_started = true;
    struct ks_informer_opts io = {
        .client = sv->client,
        .kinds = sv->kinds,
        .on_event = on_informer_event,
        .on_synced = on_informer_synced,
        .on_error = on_informer_error,
        .on_reachable = on_informer_reachable,
        .ctx = sv,
    };
    if ((rc = ks_informers_start(&io, &sv->informers, &err)) < 0) {
        if (err.set)
            fail_input(&err);
        else
            fprintf(stderr, "ksched serve: starting the informers: %s\n", strerror(-rc));
        return 1;
    }
    if (sv->lease && (rc = ks_lease_start(sv->lease)) < 0) {
        fprintf(stderr, "ksched serve: starting leader election: %s\n", strerror(-rc));
        return 1;
    }
    if (sv->lease)
        fprintf(stderr, "ksched serve: leader election for %s/%s\n",
                sv->cfg->leader_election.resource_namespace, sv->cfg->leader_election.resource_name);
    return 0;
}

static int start(struct serve *sv)
{
    struct ks_error err = {0};
    int rc, status;

    if ((status = resolve(sv)) || (status = load_kubeconfig(sv)))
        return status;
    struct ks_kube_client_opts co = {
        .config = &sv->kc,
        .qps = sv->cfg->client_connection.qps,
        .burst = sv->cfg->client_connection.burst > 0 ? (uint32_t)sv->cfg->client_connection.burst : 0,
        .content_type = sv->a.content_type ? sv->a.content_type : sv->cfg->client_connection.content_type,
        .accept_content_types = sv->cfg->client_connection.accept_content_types,
    };
    if ((rc = ks_kube_client_create(&co, &sv->client, &err)) < 0 ||
        (rc = ks_kube_client_create(&co, &sv->event_client, &err)) < 0) {
        if (err.set)
            return fail_input(&err);
        fprintf(stderr, "ksched serve: creating the API client: %s\n", strerror(-rc));
        return 1;
    }
    /* the lease exists before the HTTP thread that reads it */
    if (sv->leader_elect && (status = start_lease(sv)))
        return status;
    if ((status = start_metrics(sv)) || (status = start_http(sv, &co)) || (status = start_objects(sv)))
        return status;
    sv->kinds = (1u << KS_KIND_COUNT) - 1;
    if (!ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD)) /* v1.37's default: not served, not read */
        sv->kinds &= ~((1u << KS_KIND_POD_GROUP) | (1u << KS_KIND_WORKLOAD));
    if ((status = discover_dra(sv)) || sv->interrupted)
        return status;
    return start_threads(sv);
}

static void stop(struct serve *sv)
{
    ks_mutex_lock(&sv->lock);
    atomic_store(&sv->quit, true);
    pthread_cond_broadcast(&sv->cond);
    /* the intake thread sets sched before it sets ready under this lock; without ready the
     * scheduling thread is still waiting on the condition and leaves on quit */
    struct ks_scheduler *running = atomic_load(&sv->ready) ? sv->sched : NULL;
    ks_mutex_unlock(&sv->lock);
    if (running)
        ks_queue_close(ks_scheduler_queue(running));
    if (sv->sched_started)
        pthread_join(sv->sched_thread, NULL);
    ks_informers_stop(sv->informers);
    if (sv->intake_started)
        pthread_join(sv->intake_thread, NULL);
    while (sv->head) {
        struct queued_event *q = sv->head;
        sv->head = q->next;
        if (!q->synced)
            ks_intake_discard(&q->ev);
        free(q);
    }
    /* volume waits end (their pods go back to the queue), then the bindings in flight
     * finish here; their outcomes still reach the writer */
    ks_serve_volumes_cancel(sv->volumes);
    ks_scheduler_destroy(sv->sched);
    ks_serve_volumes_destroy(sv->volumes);
    ks_serve_dra_destroy(sv->dra);
    if (sv->metrics)
        ks_serve_metrics_attach(sv->metrics, NULL);
    ks_writer_destroy(sv->writer, 5000);
    if (sv->lease && !atomic_load(&sv->lost))
        ks_lease_stop(sv->lease); /* ReleaseOnCancel */
    ks_lease_destroy(sv->lease);
    ks_http_stop(sv->http);
    ks_http_stop(sv->http_plain);
    ks_auth_destroy(sv->auth);
    ks_tls_destroy(sv->tls);
    ks_kube_client_destroy(sv->auth_client);
    ks_cache_destroy(sv->cache);
    ks_intake_destroy(sv->intake);
    ks_objects_destroy(sv->objects);
    ks_serve_metrics_destroy(sv->metrics);
    ks_metrics_destroy(sv->reg);
    ks_kube_client_destroy(sv->event_client);
    ks_kube_client_destroy(sv->client);
    ks_kubeconfig_free(&sv->kc);
    ks_config_destroy(sv->cfg);
    pthread_cond_destroy(&sv->cond);
    ks_mutex_destroy(&sv->lock);
    ks_mutex_destroy(&sv->http_lock);
}

int ks_serve_run(const struct ks_serve_args *a)
{
    struct serve sv = {.a = *a};
    struct ks_error err = {0};
    int status;

    int rc = sv.a.config ? ks_config_load_file(sv.a.config, &sv.cfg, &err) : ks_config_load_default(&sv.cfg);
    if (rc < 0) {
        if (err.set)
            return fail_input(&err);
        fprintf(stderr, "ksched: %s\n", strerror(-rc));
        return 1;
    }
    ks_mutex_init(&sv.lock, KS_LOCK_SERVE_FIFO);
    ks_mutex_init(&sv.http_lock, KS_LOCK_SERVE_HTTP);
    pthread_cond_init(&sv.cond, NULL);
    sv.tail = &sv.head;

    /* every thread created from here on inherits the blocked signals */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    status = start(&sv);
    if (status == 0 && !sv.interrupted) {
        sigdelset(&set, SIGPIPE);
        struct timespec tick = {.tv_nsec = 100000000};
        for (;;) {
            int sig = sigtimedwait(&set, NULL, &tick);
            if (sig == SIGTERM || sig == SIGINT) {
                fprintf(stderr, "ksched serve: %s: shutting down\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
                break;
            }
            if (atomic_load(&sv.lost)) {
                fprintf(stderr, "ksched serve: leaderelection lost\n");
                status = 1;
                break;
            }
            if (atomic_load(&sv.failed)) {
                status = 1;
                break;
            }
        }
    }
    stop(&sv);
    return status;
}
