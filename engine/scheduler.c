/*
 * scheduler.c - creating and running the scheduler of include/ksched/scheduler.h.
 *
 * One framework per profile (looked up by the pod's schedulerName), a worker pool sized
 * by `parallelism` (capped at the online cores: more threads than cores only adds
 * hand-off latency to a per-node loop), the queue ordered by the profiles' QueueSort
 * plugin (validation guarantees every profile has the same one), and the binder threads.
 */
#include "scheduler_internal.h"

#include "ksched/api.h"
#include "ksched/config.h"
#include "ksched/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const event_names[] = {
#define KS_X(id, text) text,
    KS_SCHED_EVENT_MAP(KS_X)
#undef KS_X
};

const char *ks_sched_event_name(enum ks_sched_event_kind k)
{
    return event_names[k];
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool queue_less(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    return ks_fw_less(ctx, a, b);
}

void ks__emit(struct ks_scheduler *s, enum ks_sched_event_kind kind, const struct ks_pod *pod, uint32_t node,
              const char *message)
{
    if (!s->opts.on_event)
        return;
    struct ks_sched_event ev = {.kind = kind, .pod = pod, .node = node, .message = message};
    pthread_mutex_lock(&s->event_lock);
    s->opts.on_event(s->opts.ctx, &ev);
    pthread_mutex_unlock(&s->event_lock);
}

/* Preemption in process: the victim leaves the cache at once, as its deletion event would. */
static int evict_in_process(void *ctx, const struct ks_pod *victim, const struct ks_pod *preemptor,
                            uint32_t node)
{
    struct ks_scheduler *s = ctx;
    int rc = ks_cache_remove_pod(s->cache, victim);
    if (rc < 0)
        return rc;
    if (s->opts.on_event) {
        struct ks_sched_event ev = {.kind = KS_SCHED_PREEMPTED, .pod = victim, .node = node, .by = preemptor};
        pthread_mutex_lock(&s->event_lock);
        s->opts.on_event(s->opts.ctx, &ev);
        pthread_mutex_unlock(&s->event_lock);
    }
    ks_scheduler_notify(s, KS_EVENT_ASSIGNED_POD_DELETE);
    return 0;
}

static uint32_t worker_threads(const struct ks_scheduler_opts *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t want = o->parallelism ? o->parallelism : (uint32_t)o->config->parallelism;
    if (cores > 0 && want > (uint32_t)cores)
        want = (uint32_t)cores;
    return want ? want - 1 : 0; /* the scheduling thread is one of them */
}

int ks_scheduler_create(const struct ks_scheduler_opts *opts, struct ks_cache *cache,
                        struct ks_scheduler **out, struct ks_error *err)
{
    struct ks_scheduler *s = calloc(1, sizeof(*s));
    int rc = -ENOMEM;

    *out = NULL;
    if (!s)
        return -ENOMEM;
    s->opts = *opts;
    s->cache = cache;
    s->rng = opts->seeded ? opts->seed * 0x9e3779b97f4a7c15ull + 1 : (uint64_t)now_ns() | 1;
    pthread_mutex_init(&s->bind_lock, NULL);
    pthread_mutex_init(&s->event_lock, NULL);
    pthread_cond_init(&s->bind_ready, NULL);
    pthread_cond_init(&s->bind_idle, NULL);

    const struct ks_config *cfg = opts->config;
    if ((rc = ks_nominator_create(&s->nominator)) < 0)
        goto err;
    rc = -ENOMEM;
    s->nfw = cfg->nprofiles;
    if (!(s->fw = calloc(s->nfw, sizeof(*s->fw))) || !(s->fw_names = calloc(s->nfw, sizeof(*s->fw_names))))
        goto err;
    struct ks_framework_deps deps = {
        .evictor = {.evict = evict_in_process, .ctx = s},
        .cache = cache,
        .nominator = s->nominator,
        .objects = opts->objects,
    };
    for (uint32_t i = 0; i < s->nfw; i++) {
        if ((rc = ks_framework_create(&cfg->profiles[i], &deps, &s->fw[i], err)) < 0)
            goto err;
        s->fw_names[i] = ks_intern(cfg->profiles[i].scheduler_name);
    }
    if ((rc = ks_queue_create(queue_less, s->fw[0], &s->queue)) < 0 ||
        (rc = ks_workers_create(worker_threads(opts), &s->workers)) < 0 || (rc = ks__binders_start(s)) < 0)
        goto err;
    *out = s;
    return 0;
err:
    if (rc == -ENOMEM && err && !err->set)
        ks_error_set(err, NULL, 0, NULL, "out of memory creating the scheduler");
    ks_scheduler_destroy(s);
    return rc;
}

void ks_scheduler_destroy(struct ks_scheduler *s)
{
    if (!s)
        return;
    if (s->binders) {
        ks__wait_bindings(s);
        ks__binders_stop(s);
    }
    if (s->queue) {
        struct ks_queued_pod *qp;
        while ((qp = ks_queue_pop(s->queue, false)) || (qp = ks_queue_take_unschedulable(s->queue))) {
            ks_pod_put(qp->pod);
            ks_queued_pod_free(qp);
        }
        ks_queue_destroy(s->queue);
    }
    while (s->free_jobs) {
        struct ks_bind_job *j = s->free_jobs;
        s->free_jobs = j->next;
        ks_cycle_state_destroy(&j->cs);
        free(j);
    }
    ks_workers_destroy(s->workers);
    for (uint32_t i = 0; s->fw && i < s->nfw; i++)
        ks_framework_destroy(s->fw[i]);
    free(s->fw);
    free(s->fw_names);
    ks_nominator_destroy(s->nominator);
    ks__scratch_free(&s->scratch);
    pthread_cond_destroy(&s->bind_idle);
    pthread_cond_destroy(&s->bind_ready);
    pthread_mutex_destroy(&s->event_lock);
    pthread_mutex_destroy(&s->bind_lock);
    free(s);
}

int ks_scheduler_add_pod(struct ks_scheduler *s, const struct ks_pod *pod)
{
    bool served = false;
    for (uint32_t i = 0; i < s->nfw && !served; i++)
        served = s->fw_names[i] == pod->scheduler_name;
    if (!served)
        return 1;
    int rc = ks_queue_add(s->queue, ks_pod_get(pod), now_ns());
    if (rc < 0)
        ks_pod_put(pod);
    return rc;
}

void ks_scheduler_notify(struct ks_scheduler *s, unsigned events)
{
    ks_queue_move(s->queue, events, now_ns());
}

uint64_t ks_scheduler_run_until_idle(struct ks_scheduler *s)
{
    uint64_t cycles = 0;
    for (;;) {
        while (ks_scheduler_schedule_one(s, false))
            cycles++;
        ks__wait_bindings(s);
        uint32_t active, unsched;
        ks_queue_counts(s->queue, &active, &unsched);
        if (active == 0)
            return cycles;
    }
}
