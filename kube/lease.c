/*
 * lease.c - leader election on a coordination.k8s.io/v1 Lease (include/ksched/internal/lease.h).
 *
 * Mirrors client-go tools/leaderelection/leaderelection.go (tryAcquireOrRenew, acquire,
 * renew, release) and resourcelock/leaselock.go (the Lease <-> LeaderElectionRecord
 * mapping). Invariants:
 *   - `observed` is the last record read or written and `observed_mono` the local
 *     monotonic time it was first seen in that form; expiry is judged only from these.
 *   - We are leader iff the observed record names our identity and the last renewal
 *     round has not run past renewDeadline. A renewal that reads another holder's
 *     unexpired record ends the leadership at once (client-go waits out renewDeadline).
 *   - Every write carries the resourceVersion of the object it replaces.
 * `leader` and `last_renew_ns` are atomics because /readyz and /healthz read them from
 * the HTTP thread; everything else belongs to the ticking thread.
 */
#include "ksched/internal/lease.h"

#include "ksched/base/lock.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ks_lease {
    struct ks_lease_opts o;
    char *ns, *name, *identity;
    struct ks_lease_record observed;
    bool have_observed;
    int64_t observed_mono;
    int64_t round_start; /* start of a failing renewal round, -1 when none */
    uint64_t rng;
    _Atomic bool leader;
    _Atomic int64_t last_renew_ns; /* monotonic time of the last successful acquire or renew */

    pthread_t thread;
    bool started, quit;
    struct ks_mutex lock;
    pthread_cond_t wake;
};

static int64_t sys_mono(void *ctx)
{
    (void)ctx;
    return ks__mono_ns();
}

static int64_t sys_wall(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int client_request(void *ctx, const char *method, const char *path, const char *content_type,
                          const char *body, size_t len, struct ks_kube_response *resp)
{
    return ks_kube_request(ctx, method, path, content_type, body, len, resp);
}

void ks_lease_format_micro_time(int64_t ns, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / 1000000000);
    int64_t frac = ns % 1000000000;
    if (frac < 0) {
        frac += 1000000000;
        secs--;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(frac / 1000));
}

void ks_lease_default_identity(char *buf, size_t len)
{
    char host[256] = "localhost";
    unsigned char u[16];
    FILE *f = fopen("/dev/urandom", "rb");
    bool ok = f && fread(u, 1, sizeof(u), f) == sizeof(u);
    if (f)
        fclose(f);
    if (!ok) {
        uint64_t x = (uint64_t)sys_wall(NULL) ^ ((uint64_t)getpid() << 32);
        for (int i = 0; i < 16; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            u[i] = (unsigned char)x;
        }
    }
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, len, "%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", host, u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int ks_lease_create(const struct ks_lease_opts *opts, struct ks_lease **out)
{
    *out = NULL;
    if (opts->lease_duration_ns <= 0 || opts->renew_deadline_ns <= 0 || opts->retry_period_ns <= 0 ||
        opts->lease_duration_ns <= opts->renew_deadline_ns ||
        /* client-go: renewDeadline must exceed JitterFactor(1.2) * retryPeriod */
        (double)opts->renew_deadline_ns <= 1.2 * (double)opts->retry_period_ns || !opts->namespace_ ||
        !opts->name || !opts->identity || !opts->identity[0] || (!opts->transport.request && !opts->client))
        return -EINVAL;
    struct ks_lease *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->o = *opts;
    if (!l->o.transport.request)
        l->o.transport = (struct ks_lease_transport){.request = client_request, .ctx = opts->client};
    if (!l->o.clock.mono_ns || !l->o.clock.wall_ns)
        l->o.clock = (struct ks_lease_clock){.mono_ns = sys_mono, .wall_ns = sys_wall};
    l->round_start = -1;
    l->rng = opts->jitter_seed * 0x9e3779b97f4a7c15ull + 1;
    atomic_init(&l->leader, false);
    atomic_init(&l->last_renew_ns, 0);
    ks_mutex_init(&l->lock, KS_LOCK_LEASE);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&l->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (!(l->ns = strdup(opts->namespace_)) || !(l->name = strdup(opts->name)) ||
        !(l->identity = strdup(opts->identity))) {
        ks_lease_destroy(l);
        return -ENOMEM;
    }
    *out = l;
    return 0;
}

void ks_lease_destroy(struct ks_lease *l)
{
    if (!l)
        return;
    if (l->started)
        ks_lease_stop(l);
    pthread_cond_destroy(&l->wake);
    ks_mutex_destroy(&l->lock);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
}

/* ---- the Lease object ------------------------------------------------------------------ */

static void copy_scalar(const struct ks_yaml_node *n, char *buf, size_t len)
{
    buf[0] = '\0';
    if (n && n->kind == KS_YAML_SCALAR && !ks_yaml_is_null(n))
        snprintf(buf, len, "%s", n->str);
}

static int32_t int_scalar(const struct ks_yaml_node *n)
{
    if (!n || n->kind != KS_YAML_SCALAR)
        return 0;
    return (int32_t)strtol(n->str, NULL, 10);
}

/* The record in a Lease's JSON. -EINVAL when it is not a Lease. */
static int parse_lease(const char *body, size_t len, struct ks_lease_record *rec)
{
    struct ks_yaml_stream *st = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse("lease", body, len, &st, &err);
    if (rc < 0)
        return rc;
    const struct ks_yaml_node *root = st->docs[0];
    const struct ks_yaml_node *meta = ks_yaml_get(root, "metadata");
    const struct ks_yaml_node *spec = ks_yaml_get(root, "spec");
    memset(rec, 0, sizeof(*rec));
    if (!meta || meta->kind != KS_YAML_MAP) {
        rc = -EINVAL;
        goto out;
    }
    copy_scalar(ks_yaml_get(meta, "resourceVersion"), rec->resource_version, sizeof(rec->resource_version));
    if (spec && spec->kind == KS_YAML_MAP) {
        copy_scalar(ks_yaml_get(spec, "holderIdentity"), rec->holder, sizeof(rec->holder));
        rec->lease_duration_s = int_scalar(ks_yaml_get(spec, "leaseDurationSeconds"));
        copy_scalar(ks_yaml_get(spec, "acquireTime"), rec->acquire_time, sizeof(rec->acquire_time));
        copy_scalar(ks_yaml_get(spec, "renewTime"), rec->renew_time, sizeof(rec->renew_time));
        rec->transitions = int_scalar(ks_yaml_get(spec, "leaseTransitions"));
    }
out:
    ks_yaml_stream_destroy(st);
    return rc;
}

/* The Lease object for @rec; NULL on ENOMEM. Free with free(). */
static char *lease_body(const struct ks_lease *l, const struct ks_lease_record *rec, const char *rv,
                        size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    fputs("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":", out);
    ks_json_write_cstr(out, l->name);
    fputs(",\"namespace\":", out);
    ks_json_write_cstr(out, l->ns);
    if (rv && rv[0]) {
        fputs(",\"resourceVersion\":", out);
        ks_json_write_cstr(out, rv);
    }
    fputs("},\"spec\":{\"holderIdentity\":", out);
    ks_json_write_cstr(out, rec->holder);
    fprintf(out, ",\"leaseDurationSeconds\":%d,\"acquireTime\":", (int)rec->lease_duration_s);
    ks_json_write_cstr(out, rec->acquire_time);
    fputs(",\"renewTime\":", out);
    ks_json_write_cstr(out, rec->renew_time);
    fprintf(out, ",\"leaseTransitions\":%d}}", (int)rec->transitions);
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* GET the lease: 0 and @rec, -ENOENT when there is none, -EIO on any other answer. */
static int lease_get(struct ks_lease *l, struct ks_lease_record *rec)
{
    char path[512];
    struct ks_kube_response resp = {0};
    snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    int rc = l->o.transport.request(l->o.transport.ctx, "GET", path, NULL, NULL, 0, &resp);
    if (rc == 0)
        rc = resp.status == 200 ? parse_lease(resp.body, resp.len, rec) : resp.status == 404 ? -ENOENT : -EIO;
    ks_kube_response_free(&resp);
    return rc;
}

/* Create (@rv NULL) or update the lease to @rec; on success @rec gets the new resourceVersion. */
static int lease_write(struct ks_lease *l, struct ks_lease_record *rec, const char *rv)
{
    char path[512];
    size_t len = 0;
    struct ks_kube_response resp = {0};
    char *body = lease_body(l, rec, rv, &len);
    if (!body)
        return -ENOMEM;
    if (rv)
        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    else
        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
    int rc = l->o.transport.request(l->o.transport.ctx, rv ? "PUT" : "POST", path, "application/json", body,
                                    len, &resp);
    free(body);
    if (rc == 0) {
        struct ks_lease_record got;
        if ((rv ? resp.status == 200 : resp.status == 201) && parse_lease(resp.body, resp.len, &got) == 0)
            snprintf(rec->resource_version, sizeof(rec->resource_version), "%s", got.resource_version);
        else
            rc = resp.status == 409 ? -EAGAIN : -EIO;
    }
    ks_kube_response_free(&resp);
    return rc;
}

static bool same_record(const struct ks_lease_record *a, const struct ks_lease_record *b)
{
    return strcmp(a->holder, b->holder) == 0 && a->lease_duration_s == b->lease_duration_s &&
           strcmp(a->acquire_time, b->acquire_time) == 0 && strcmp(a->renew_time, b->renew_time) == 0 &&
           a->transitions == b->transitions;
}

static bool observed_is_us(const struct ks_lease *l)
{
    return l->have_observed && strcmp(l->observed.holder, l->identity) == 0;
}

/* tryAcquireOrRenew: true when we hold the lease afterwards. */
static bool try_acquire_or_renew(struct ks_lease *l)
{
    struct ks_lease_record rec = {0}, old;
    char now[40];
    ks_lease_format_micro_time(l->o.clock.wall_ns(l->o.clock.ctx), now, sizeof(now));
    snprintf(rec.holder, sizeof(rec.holder), "%s", l->identity);
    rec.lease_duration_s = (int32_t)(l->o.lease_duration_ns / 1000000000);
    snprintf(rec.acquire_time, sizeof(rec.acquire_time), "%s", now);
    snprintf(rec.renew_time, sizeof(rec.renew_time), "%s", now);

    int rc = lease_get(l, &old);
    if (rc == -ENOENT) {
        if (lease_write(l, &rec, NULL) < 0)
            return false;
        l->observed = rec;
        l->have_observed = true;
        l->observed_mono = l->o.clock.mono_ns(l->o.clock.ctx);
        return true;
    }
    if (rc < 0)
        return false;
    if (!l->have_observed || !same_record(&l->observed, &old)) {
        l->observed = old;
        l->have_observed = true;
        l->observed_mono = l->o.clock.mono_ns(l->o.clock.ctx);
    }
    snprintf(l->observed.resource_version, sizeof(l->observed.resource_version), "%s", old.resource_version);
    bool ours = observed_is_us(l);
    if (old.holder[0] && !ours &&
        l->observed_mono + l->o.lease_duration_ns > l->o.clock.mono_ns(l->o.clock.ctx))
        return false; /* held by another candidate and not expired */
    if (ours) {
        snprintf(rec.acquire_time, sizeof(rec.acquire_time), "%s", old.acquire_time);
        rec.transitions = old.transitions;
    } else {
        rec.transitions = old.transitions + 1;
    }
    if (lease_write(l, &rec, old.resource_version) < 0)
        return false;
    l->observed = rec;
    l->observed_mono = l->o.clock.mono_ns(l->o.clock.ctx);
    return true;
}

/* retryPeriod, stretched by up to JitterFactor 1.2 for a candidate (wait.JitterUntil). */
static int64_t candidate_wait(struct ks_lease *l)
{
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    double r = (double)(l->rng >> 11) / (double)(UINT64_C(1) << 53);
    return l->o.retry_period_ns + (int64_t)(1.2 * r * (double)l->o.retry_period_ns);
}

static void lost(struct ks_lease *l)
{
    /* release: readers of is_leader must stop trusting the lease from here on */
    atomic_store_explicit(&l->leader, false, memory_order_release);
    l->round_start = -1;
    if (l->o.on_stopped_leading)
        l->o.on_stopped_leading(l->o.ctx);
}

int64_t ks_lease_tick(struct ks_lease *l)
{
    bool leader = atomic_load_explicit(&l->leader, memory_order_relaxed);
    int64_t start = l->o.clock.mono_ns(l->o.clock.ctx);

    if (!leader) {
        if (!try_acquire_or_renew(l))
            return candidate_wait(l);
        atomic_store_explicit(&l->last_renew_ns, l->o.clock.mono_ns(l->o.clock.ctx), memory_order_relaxed);
        /* release: pairs with the acquire load in ks_lease_is_leader */
        atomic_store_explicit(&l->leader, true, memory_order_release);
        l->round_start = -1;
        if (l->o.on_started_leading)
            l->o.on_started_leading(l->o.ctx);
        return l->o.retry_period_ns;
    }
    /* renew: PollImmediateUntil(retryPeriod, tryAcquireOrRenew, renewDeadline) */
    if (l->round_start < 0)
        l->round_start = start;
    if (start - l->round_start < l->o.renew_deadline_ns && try_acquire_or_renew(l) && observed_is_us(l)) {
        l->round_start = -1;
        atomic_store_explicit(&l->last_renew_ns, l->o.clock.mono_ns(l->o.clock.ctx), memory_order_relaxed);
        return l->o.retry_period_ns;
    }
    /* Another identity holds an unexpired lease: it leads now. client-go keeps retrying until
     * the renew deadline; ksched stops at once, so two schedulers never bind side by side. */
    if ((l->have_observed && l->observed.holder[0] && !observed_is_us(l)) ||
        l->o.clock.mono_ns(l->o.clock.ctx) - l->round_start >= l->o.renew_deadline_ns) {
        lost(l);
        return candidate_wait(l);
    }
    return l->o.retry_period_ns;
}

int ks_lease_release(struct ks_lease *l)
{
    if (!atomic_load_explicit(&l->leader, memory_order_relaxed) || !observed_is_us(l))
        return 0;
    struct ks_lease_record rec = {0};
    char now[40];
    ks_lease_format_micro_time(l->o.clock.wall_ns(l->o.clock.ctx), now, sizeof(now));
    rec.lease_duration_s = 1;
    snprintf(rec.acquire_time, sizeof(rec.acquire_time), "%s", now);
    snprintf(rec.renew_time, sizeof(rec.renew_time), "%s", now);
    rec.transitions = l->observed.transitions;
    int rc = lease_write(l, &rec, l->observed.resource_version);
    if (rc < 0)
        return rc;
    l->observed = rec;
    l->observed_mono = l->o.clock.mono_ns(l->o.clock.ctx);
    atomic_store_explicit(&l->leader, false, memory_order_release);
    return 0;
}

static void *lease_main(void *arg)
{
    struct ks_lease *l = arg;
    ks_mutex_lock(&l->lock);
    while (!l->quit) {
        ks_mutex_unlock(&l->lock);
        int64_t wait = ks_lease_tick(l);
        ks_mutex_lock(&l->lock);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t ns = until.tv_nsec + wait % 1000000000;
        until.tv_sec += (time_t)(wait / 1000000000 + ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!l->quit && ks_cond_timedwait(&l->wake, &l->lock, &until) != ETIMEDOUT)
            ;
    }
    ks_mutex_unlock(&l->lock);
    return NULL;
}

int ks_lease_start(struct ks_lease *l)
{
    int rc = pthread_create(&l->thread, NULL, lease_main, l);
    if (rc)
        return -rc;
    l->started = true;
    return 0;
}

void ks_lease_stop(struct ks_lease *l)
{
    if (l->started) {
        ks_mutex_lock(&l->lock);
        l->quit = true;
        pthread_cond_broadcast(&l->wake);
        ks_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
        l->started = false;
    }
    ks_lease_release(l);
}

bool ks_lease_is_leader(const struct ks_lease *l)
{
    /* acquire: pairs with the release stores in ks_lease_tick / lost */
    return atomic_load_explicit(&l->leader, memory_order_acquire);
}

bool ks_lease_healthy(const struct ks_lease *l, int64_t grace_ns)
{
    if (!ks_lease_is_leader(l))
        return true;
    int64_t last = atomic_load_explicit(&l->last_renew_ns, memory_order_relaxed);
    return l->o.clock.mono_ns(l->o.clock.ctx) - last <= l->o.lease_duration_ns + grace_ns;
}
