/*
 * scheduler.c - creating and running the scheduler of include/ksched/internal/scheduler.h, and the
 * cluster events it receives.
 *
 * One framework per profile (looked up by the pod's schedulerName), a worker pool sized
 * by `parallelism` (capped at the online cores: more threads than cores only adds
 * hand-off latency to a per-node loop), the scheduling queue (queue/) ordered by the
 * profiles' QueueSort plugin (validation guarantees every profile has the same one) with
 * one event map per profile, the binder threads, and optionally the queue's flusher.
 *
 * Events mirror pkg/scheduler/eventhandlers.go: pending pods go to the queue, bound pods
 * and nodes to the cache, and each change is then offered to the queue with its objects.
 * The cache is updated first, so a pod the event moves sees the change; the read section
 * around both keeps the object the cache replaced alive until the hints have read it (the
 * cache releases replaced objects only after a grace period).
 *
 * Time: the queue reads opts.clock, by default CLOCK_MONOTONIC plus `warp_ns`, which
 * ks_scheduler_run_until_idle() advances to the next backoff expiry instead of sleeping:
 * a batch run has no other source of events, so waiting in real time would change nothing.
 * A deterministic run (opts.deterministic) reads the logical clock plus `warp_ns` instead:
 * it moves only at pods added and cycles run (ks__logical_tick), so what the queue decides
 * by time (backoff over or not, the order of pods added one after another) depends on the
 * run's own steps, not on how fast the machine took them.
 */
#include "scheduler_internal.h"

#include "framework_internal.h"
#include "framework_metrics.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/rcu.h"
#include "ksched/base/spin.h"
#include "ksched/internal/config.h"
#include "ksched/internal/pod_groups.h"
#include "ksched/loader.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
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

/* The default clock: monotonic time moved forward by batch runs. Any thread. */
static int64_t warped_now(void *ctx)
{
    struct ks_scheduler *s = ctx;
    /* relaxed: the offset only grows; a reader that sees an older one reads an earlier time */
    return ks__mono_ns() + atomic_load_explicit(&s->warp_ns, memory_order_relaxed);
}

/*
 * The logical clock of a deterministic run. Its origin is arbitrary (only differences
 * matter); a fixed one keeps it far from KS_TIME_NONE and the same in every run. Relaxed:
 * only the scheduling thread moves it, and a binder reads it only between the cycles the
 * scheduling thread waits for (ks__bind_settle orders both).
 */
#define KS_LOGICAL_ORIGIN_NS INT64_C(1000000000000)

static int64_t logical_now(void *ctx)
{
    struct ks_scheduler *s = ctx;
    return KS_LOGICAL_ORIGIN_NS + atomic_load_explicit(&s->logical_ns, memory_order_relaxed) +
           atomic_load_explicit(&s->warp_ns, memory_order_relaxed);
}

void ks__logical_tick(struct ks_scheduler *s)
{
    if (s->opts.deterministic)
        atomic_fetch_add_explicit(&s->logical_ns, KS_LOGICAL_TICK_NS, memory_order_relaxed);
}

/* Move the scheduler's own clock (the default or the logical one) forward to @t. */
static void warp_to(struct ks_scheduler *s, int64_t t)
{
    int64_t now = s->clock.now(s->clock.ctx);
    if (t > now)
        atomic_fetch_add_explicit(&s->warp_ns, t - now, memory_order_relaxed);
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
    ks_mutex_lock(&s->event_lock);
    s->opts.on_event(s->opts.ctx, &ev);
    ks_mutex_unlock(&s->event_lock);
}

void ks__event(struct ks_scheduler *s, enum ks_event_resource resource, uint32_t actions, const void *old_obj,
               const void *new_obj)
{
    struct ks_cluster_event ev = {resource, actions};
    ks_queue_move_event(s->queue, &ev, old_obj, new_obj);
}

/*
 * A read-only view of @pod for the hints: every field up to the reference count (which
 * other threads change atomically, so it is not copied), no arena.
 */
static void pod_view(const struct ks_pod *pod, struct ks_pod *view)
{
    memset(view, 0, sizeof(*view));
    memcpy(view, pod, offsetof(struct ks_pod, refs));
}

void ks__assigned_pod_event(struct ks_scheduler *s, uint32_t actions, const struct ks_pod *pod, uint32_t node)
{
    struct ks_pod bound;
    pod_view(pod, &bound);
    bound.node_name = node;
    if (actions == KS_ACT_DELETE)
        ks__event(s, KS_ER_ASSIGNED_POD, actions, &bound, NULL);
    else
        ks__event(s, KS_ER_ASSIGNED_POD, actions, NULL, &bound);
}

static void progress(struct ks_scheduler *s);

/* A plugin's in-process change, delivered as the informer would deliver the server's event. */
static void emit_in_process(void *ctx, enum ks_event_resource resource, const void *old_obj,
                            const void *new_obj)
{
    struct ks_scheduler *s = ctx;
    uint32_t actions = !old_obj ? KS_ACT_ADD : !new_obj ? KS_ACT_DELETE : KS_ACT_UPDATE;

    progress(s);
    ks__event(s, resource, actions, old_obj, new_obj);
}

/* Preemption in process: the victim leaves the cache at once, as its deletion event would. */
static int evict_in_process(void *ctx, const struct ks_pod *victim, const struct ks_pod *preemptor,
                            uint32_t node)
{
    struct ks_scheduler *s = ctx;
    /* the victim stays readable: the caller's read section holds the snapshot that lists it */
    int rc = ks_cache_remove_pod(s->cache, victim);
    if (rc < 0)
        return rc;
    if (s->opts.on_event) {
        struct ks_sched_event ev = {.kind = KS_SCHED_PREEMPTED, .pod = victim, .node = node, .by = preemptor};
        ks_mutex_lock(&s->event_lock);
        s->opts.on_event(s->opts.ctx, &ev);
        ks_mutex_unlock(&s->event_lock);
    }
    atomic_fetch_add_explicit(&s->progress, 1, memory_order_relaxed);
    ks__assigned_pod_event(s, KS_ACT_DELETE, victim, node);
    return 0;
}

static void activate(void *ctx, const struct ks_pod *pod, bool gated_only)
{
    struct ks_scheduler *s = ctx;
    ks_queue_activate(s->queue, pod, gated_only);
}

static uint32_t worker_threads(const struct ks_scheduler_opts *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t want = o->parallelism ? o->parallelism : (uint32_t)o->config->parallelism;
    if (cores > 0 && want > (uint32_t)cores)
        want = (uint32_t)cores;
    return want ? want - 1 : 0; /* the scheduling thread is one of them */
}

/*
 * The event map of framework @fw. The plugin instances come from the framework's table
 * (framework_internal.h): the map hands them to PreEnqueue and the QueueingHints.
 */
static int build_map(const struct ks_framework *fw, struct ks_event_map **out)
{
    struct ks_event_map_plugin plugins[KS_MAX_PROFILE_PLUGINS];
    const struct ks_resolved_point *pre = ks_profile_point(fw->prof, KS_EXT_PRE_ENQUEUE);

    for (uint32_t i = 0; i < fw->nplugins; i++) {
        plugins[i] =
            (struct ks_event_map_plugin){.plugin = fw->plugins[i].plugin, .self = fw->plugins[i].self};
        for (uint32_t j = 0; j < pre->n; j++)
            plugins[i].pre_enqueue |= pre->items[j].plugin == fw->plugins[i].plugin;
    }
    return ks_event_map_create(plugins, fw->nplugins, out);
}

static void *flusher_main(void *arg)
{
    struct ks_scheduler *s = arg;
    int64_t last_unschedulable = ks__mono_ns();

    ks_rcu_register_thread();
    ks_mutex_lock(&s->flush_lock);
    while (!s->flush_quit) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += KS_QUEUE_BACKOFF_FLUSH_NS / 1000000000;
        ks_cond_timedwait(&s->flush_wake, &s->flush_lock, &until);
        if (s->flush_quit)
            break;
        ks_mutex_unlock(&s->flush_lock);
        ks_queue_flush_backoff(s->queue);
        if (ks__mono_ns() - last_unschedulable >= KS_QUEUE_UNSCHEDULABLE_FLUSH_NS) {
            ks_queue_flush_unschedulable(s->queue);
            last_unschedulable = ks__mono_ns();
        }
        ks_mutex_lock(&s->flush_lock);
    }
    ks_mutex_unlock(&s->flush_lock);
    ks_rcu_unregister_thread();
    return NULL;
}

static int flusher_start(struct ks_scheduler *s)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_destroy(&s->flush_wake);
    pthread_cond_init(&s->flush_wake, &attr);
    pthread_condattr_destroy(&attr);
    int rc = pthread_create(&s->flusher, NULL, flusher_main, s);
    if (rc)
        return -rc;
    s->flusher_started = true;
    return 0;
}

/* The PodGroup objects of the initial set (later ones arrive through ks_scheduler_object_event). */
static int add_pod_groups(struct ks_scheduler *s, const struct ks_objects *objects)
{
    if (!objects)
        return 0;
    const struct ks_objvec *v = &objects->of[KS_KIND_POD_GROUP];
    for (uint32_t i = 0; i < v->n; i++) {
        int rc = ks_pod_groups_set_object(s->groups, NULL, v->items[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
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
    s->rng = opts->seeded ? opts->seed * 0x9e3779b97f4a7c15ull + 1 : (uint64_t)ks__mono_ns() | 1;
    s->sample_rng = (s->rng ^ 0x5851f42d4c957f2dull) | 1;
    atomic_init(&s->warp_ns, 0);
    atomic_init(&s->logical_ns, 0);
    atomic_init(&s->progress, 0);
    if (opts->deterministic) {
        s->opts.clock = (struct ks_clock){0};
        s->opts.binders = 1; /* pods allowed by one Permit bind in the order they were permitted */
        s->clock = (struct ks_clock){.now = logical_now, .ctx = s};
    } else {
        s->clock = opts->clock.now ? opts->clock : (struct ks_clock){.now = warped_now, .ctx = s};
    }
    ks_mutex_init_adaptive(&s->bind_lock, KS_LOCK_BIND);
    ks_mutex_init(&s->event_lock, KS_LOCK_SCHED_EVENT);
    ks_mutex_init(&s->flush_lock, KS_LOCK_FLUSH);
    pthread_cond_init(&s->bind_ready, NULL);
    pthread_cond_init(&s->bind_idle, NULL);
    pthread_cond_init(&s->flush_wake, NULL);

    const struct ks_config *cfg = opts->config;
    if ((rc = ks_nominator_create(&s->nominator)) < 0 || (rc = ks_pod_groups_create(&s->groups)) < 0 ||
        (rc = add_pod_groups(s, opts->objects)) < 0)
        goto err;
    rc = -ENOMEM;
    s->nfw = cfg->nprofiles;
    if (!(s->fw = calloc(s->nfw, sizeof(*s->fw))) || !(s->fw_names = calloc(s->nfw, sizeof(*s->fw_names))) ||
        !(s->maps = calloc(s->nfw, sizeof(*s->maps))))
        goto err;
    struct ks_framework_deps deps = {
        .binder = opts->binder,
        .evictor =
            opts->evictor.evict ? opts->evictor : (struct ks_evictor){.evict = evict_in_process, .ctx = s},
        .cache = cache,
        .nominator = s->nominator,
        .objects = opts->objects,
        .volume_api = opts->volume_api,
        .dra_api = opts->dra_api,
        .metrics = opts->metrics,
        .events = {.emit = emit_in_process, .ctx = s},
        .groups = s->groups,
        .no_memo = opts->no_index,
        .activator = {.activate = activate, .ctx = s},
        .preempt_index = {.tree = opts->no_index ? NULL : ks__index_preempt_tree,
                          .answered = ks__index_preempt_answered,
                          .ctx = s},
    };
    for (uint32_t i = 0; i < s->nfw; i++) {
        if ((rc = ks_framework_create(&cfg->profiles[i], &deps, &s->fw[i], err)) < 0)
            goto err;
        s->fw_names[i] = ks_intern(cfg->profiles[i].scheduler_name);
        if ((rc = build_map(s->fw[i], &s->maps[i])) < 0)
            goto err;
    }
    struct ks_queue_opts qo = {
        .less = queue_less,
        .less_ctx = s->fw[0],
        .initial_backoff_ns = cfg->pod_initial_backoff_seconds * INT64_C(1000000000),
        .max_backoff_ns = cfg->pod_max_backoff_seconds * INT64_C(1000000000),
        .max_unschedulable_ns = opts->max_unschedulable_ns,
        .clock = s->clock,
        .nprofiles = s->nfw,
        .maps = (const struct ks_event_map *const *)s->maps,
        .scheduler_names = s->fw_names,
        .nominator = s->nominator,
    };
    if ((rc = ks_queue_create_opts(&qo, &s->queue)) < 0 ||
        (rc = ks_workers_create(worker_threads(opts), &s->workers)) < 0 ||
        (!opts->no_index && (rc = ks__index_path_init(s)) < 0))
        goto err;
    if (opts->metrics) {
        s->scratch.ntallies = ks_workers_count(s->workers);
        rc = -ENOMEM;
        if (!(s->scratch.tallies = aligned_alloc(64, s->scratch.ntallies * sizeof(*s->scratch.tallies))))
            goto err;
        memset(s->scratch.tallies, 0, s->scratch.ntallies * sizeof(*s->scratch.tallies));
        if ((rc = ks__sched_metrics_attach(opts->metrics, s, s->nfw)) < 0) {
            if (rc == -EBUSY && err)
                ks_error_set(err, NULL, 0, NULL, "the metrics already serve another scheduler");
            goto err;
        }
        s->metrics_attached = true;
    }
    if ((rc = ks__binders_start(s)) < 0 || (opts->flusher && (rc = flusher_start(s)) < 0))
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
    if (s->metrics_attached)
        ks__sched_metrics_detach(s->opts.metrics); /* no scrape reads this scheduler from here on */
    if (s->flusher_started) {
        ks_mutex_lock(&s->flush_lock);
        s->flush_quit = true;
        pthread_cond_broadcast(&s->flush_wake);
        ks_mutex_unlock(&s->flush_lock);
        pthread_join(s->flusher, NULL);
    }
    if (s->binders) {
        ks__wait_bindings(s);
        ks__binders_stop(s);
    }
    ks_queue_destroy(s->queue);
    while (s->free_jobs) {
        struct ks_bind_job *j = s->free_jobs;
        s->free_jobs = j->next;
        ks_cycle_state_destroy(&j->cs);
        free(j);
    }
    ks_workers_destroy(s->workers);
    ks__index_path_fini(s);
    for (uint32_t i = 0; s->maps && i < s->nfw; i++)
        ks_event_map_destroy(s->maps[i]);
    for (uint32_t i = 0; s->fw && i < s->nfw; i++)
        ks_framework_destroy(s->fw[i]);
    free(s->maps);
    free(s->fw);
    free(s->fw_names);
    ks_nominator_destroy(s->nominator);
    ks_pod_groups_destroy(s->groups);
    ks__nominated_free(&s->scratch.nom); /* before the scratch is cleared */
    free(s->scratch.tallies);
    ks__scratch_free(&s->scratch);
    ks__group_scratch_free(s);
    pthread_cond_destroy(&s->flush_wake);
    pthread_cond_destroy(&s->bind_idle);
    pthread_cond_destroy(&s->bind_ready);
    ks_mutex_destroy(&s->flush_lock);
    ks_mutex_destroy(&s->event_lock);
    ks_mutex_destroy(&s->bind_lock);
    free(s);
}

static struct ks_framework *framework_of(struct ks_scheduler *s, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < s->nfw; i++) {
        if (s->fw_names[i] == pod->scheduler_name)
            return s->fw[i];
    }
    return NULL;
}

static void progress(struct ks_scheduler *s)
{
    /* relaxed: a counter batch runs compare between rounds, after joining the binders */
    atomic_fetch_add_explicit(&s->progress, 1, memory_order_relaxed);
}

/* A bound pod enters the cache (taking a reference) and its group, then AssignedPod/Add. */
static int add_bound(struct ks_scheduler *s, const struct ks_pod *pod)
{
    if (pod->scheduling_group && ks_pod_groups_add_pod(s->groups, pod) < 0)
        return -ENOMEM;
    int rc = ks_cache_add_pod(s->cache, ks_pod_get(pod), pod->node_name);
    if (rc < 0) {
        ks_pod_put(pod);
        return rc;
    }
    progress(s);
    ks__event(s, KS_ER_ASSIGNED_POD, KS_ACT_ADD, NULL, pod);
    return 0;
}

/* Whether GangScheduling's PreEnqueue admits the members of @pod's group now. */
static bool group_admits(struct ks_scheduler *s, const struct ks_pod *pod)
{
    struct ks_pod_group_state gs;
    if (!ks_pod_groups_state(s->groups, pod->meta.namespace_id, ks_pod_group_key(pod), &gs) || !gs.exists)
        return false;
    return gs.spec.policy != KS_POD_GROUP_GANG || gs.all_pods >= (uint32_t)gs.spec.min_count;
}

int ks_scheduler_add_pod(struct ks_scheduler *s, const struct ks_pod *pod)
{
    if (pod->node_name != KS_ID_EMPTY)
        return add_bound(s, pod);
    if (!framework_of(s, pod))
        return 1;
    ks__logical_tick(s);
    /* a pod of a group counts among its group's pods before PreEnqueue reads the count */
    if (pod->scheduling_group && ks_pod_groups_add_pod(s->groups, pod) < 0)
        return -ENOMEM;
    int rc = ks_queue_add(s->queue, ks_pod_get(pod), ks_queue_now(s->queue));
    if (rc < 0) {
        ks_pod_put(pod);
        if (rc != -EEXIST && pod->scheduling_group)
            ks_pod_groups_delete_pod(s->groups, pod);
        return rc;
    }
    /*
     * GangScheduling's UnscheduledPod/Add: the pod may complete its gang's minCount. Its hint
     * queues the waiting members of the group, whose PreEnqueue then only admits them once
     * the group exists with enough pods: before that the event changes nothing and is not sent.
     */
    if (pod->scheduling_group && group_admits(s, pod))
        ks__event(s, KS_ER_UNSCHEDULED_POD, KS_ACT_ADD, NULL, pod);
    /* as upstream, a pod held by a PreEnqueue gate holds no room on its nominated node */
    struct ks_queue_pod_info info;
    if (pod->nominated_node_name != KS_ID_EMPTY && !(ks_queue_pod_info(s->queue, pod, &info) && info.gated))
        ks_nominator_add(s->nominator, pod, pod->nominated_node_name);
    progress(s);
    return 0;
}

int ks_scheduler_update_pod(struct ks_scheduler *s, const struct ks_pod *old_pod,
                            const struct ks_pod *new_pod)
{
    int rc = 0;
    progress(s);
    if (new_pod->scheduling_group && ks_pod_groups_add_pod(s->groups, new_pod) < 0)
        return -ENOMEM;
    if (new_pod->node_name != KS_ID_EMPTY) {
        if (!old_pod || old_pod->node_name == KS_ID_EMPTY) {
            /* bound by someone else: it leaves the queue (a pod in flight is dropped when it returns) */
            ks_queue_delete(s->queue, new_pod);
            ks_nominator_remove(s->nominator, new_pod);
            return add_bound(s, new_pod);
        }
        struct ks_cluster_event evs[KS_ACTION_COUNT];
        uint32_t n = ks_pod_update_events(old_pod, new_pod, KS_ER_ASSIGNED_POD, evs);
        /* the read section keeps @old_pod alive after the cache lets go of it */
        ks_rcu_read_lock();
        if ((rc = ks_cache_update_pod(s->cache, ks_pod_get(new_pod), new_pod->node_name)) < 0) {
            ks_pod_put(new_pod);
        } else {
            for (uint32_t i = 0; i < n; i++)
                ks_queue_move_event(s->queue, &evs[i], old_pod, new_pod);
        }
        ks_rcu_read_unlock();
        return rc;
    }
    if (!framework_of(s, new_pod))
        return 1;
    /* UpdateNominatedPod: a nomination follows the pod to its new version */
    uint32_t nominated = old_pod ? ks_nominator_node(s->nominator, old_pod) : KS_ID_EMPTY;
    if (nominated == KS_ID_EMPTY)
        nominated = new_pod->nominated_node_name;
    if (nominated != KS_ID_EMPTY)
        ks_nominator_add(s->nominator, new_pod, nominated);
    rc = ks_queue_update(s->queue, old_pod, ks_pod_get(new_pod));
    /*
     * A stale update: the pod was assumed, or bound and let go by the queue, before the
     * caller saw it (upstream skips updates of assumed pods). It keeps no nomination, and a
     * bound pod must not come back to the queue as a new pending one: checked after the
     * update, since the binder may confirm it and leave the queue at any moment before.
     * Bound or only assumed is read at one instant: a binding that failed between two
     * reads would make the assumed pod look bound, and the pod the failure requeues (with
     * this update) would be deleted - in neither the cache nor the queue.
     */
    bool assumed;
    if (ks_cache_pod_binding(s->cache, new_pod, &assumed) != KS_ID_NONE) {
        ks_nominator_remove(s->nominator, new_pod);
        if (!assumed)
            ks_queue_delete(s->queue, new_pod);
    }
    return rc;
}

int ks_scheduler_delete_pod(struct ks_scheduler *s, const struct ks_pod *pod)
{
    progress(s);
    if (pod->scheduling_group)
        ks_pod_groups_delete_pod(s->groups, pod);
    uint32_t nominated = ks_nominator_node(s->nominator, pod);
    bool queued = ks_queue_delete(s->queue, pod);
    ks_nominator_remove(s->nominator, pod);
    struct ks_framework *fw = framework_of(s, pod);
    if (fw)
        ks_fw_reject(fw, pod, NULL, "removed"); /* RejectWaitingPod: a pod waiting on Permit */
    if (queued) {
        /* a nominated pod held room on its node for others' Filter: that room is free now */
        if (nominated != KS_ID_EMPTY) {
            struct ks_pod view;
            pod_view(pod, &view);
            view.nominated_node_name = nominated;
            ks__event(s, KS_ER_UNSCHEDULED_POD, KS_ACT_DELETE, &view, NULL);
        }
    }
    /*
     * A pod in flight may already be assumed, its binding under way: a deleted pod holds no
     * room, so the assumption goes too, and the binder's confirmation then finds nothing to
     * confirm (ks_cache_confirm_pod). Bound already (the informer's bound version not seen
     * yet, as after a relist), it leaves the cache all the same.
     */
    uint32_t node = ks_cache_pod_node(s->cache, pod);
    if (node == KS_ID_NONE)
        return queued ? 0 : -ENOENT;
    ks_rcu_read_lock(); /* keeps @pod readable after the cache drops its reference */
    int rc = ks_cache_remove_pod(s->cache, pod);
    if (rc == 0)
        ks__assigned_pod_event(s, KS_ACT_DELETE, pod, node);
    ks_rcu_read_unlock();
    return rc;
}

int ks_scheduler_node_event(struct ks_scheduler *s, const struct ks_node *old_node, struct ks_node *new_node)
{
    int rc;
    progress(s);
    /* the read section keeps @old_node alive until the hints have read it */
    ks_rcu_read_lock();
    if (!old_node) {
        if ((rc = ks_cache_add_node(s->cache, new_node)) == 0)
            ks__event(s, KS_ER_NODE, KS_ACT_ADD, NULL, new_node);
    } else if (!new_node) {
        if ((rc = ks_cache_remove_node(s->cache, old_node->name_id)) == 0)
            ks__event(s, KS_ER_NODE, KS_ACT_DELETE, old_node, NULL);
    } else {
        uint32_t actions = ks_node_update_actions(old_node, new_node);
        if ((rc = ks_cache_update_node(s->cache, new_node)) == 0) {
            /* one event per kind of change, as NodeSchedulingPropertiesChange lists them */
            for (uint32_t i = 0; i < KS_ACTION_COUNT; i++) {
                if (actions & (1u << i))
                    ks__event(s, KS_ER_NODE, 1u << i, old_node, new_node);
            }
        }
    }
    ks_rcu_read_unlock();
    return rc;
}

void ks_scheduler_object_event(struct ks_scheduler *s, enum ks_event_resource resource, const void *old_obj,
                               const void *new_obj)
{
    if (resource == KS_ER_POD_GROUP)
        ks_pod_groups_set_object(s->groups, old_obj, new_obj);
    emit_in_process(s, resource, old_obj, new_obj);
}

uint64_t ks_scheduler_indexed_cycles(const struct ks_scheduler *s)
{
    return atomic_load_explicit(&s->indexed_cycles, memory_order_relaxed);
}

uint64_t ks_scheduler_indexed_unfit_cycles(const struct ks_scheduler *s)
{
    return atomic_load_explicit(&s->indexed_unfit_cycles, memory_order_relaxed);
}

uint64_t ks_scheduler_indexed_preemptions(const struct ks_scheduler *s)
{
    return atomic_load_explicit(&s->indexed_preemptions, memory_order_relaxed);
}

struct ks_queue *ks_scheduler_queue(struct ks_scheduler *s)
{
    return s->queue;
}

/* Schedule until activeQ is empty and no binding is in flight (bindings may requeue pods). */
static uint64_t drain(struct ks_scheduler *s)
{
    uint64_t cycles = 0;
    for (;;) {
        while (ks_scheduler_schedule_one(s, false))
            cycles++;
        ks__wait_bindings(s);
        if (!ks_queue_active(s->queue))
            return cycles;
    }
}

uint64_t ks_scheduler_run_until_idle(struct ks_scheduler *s)
{
    uint64_t cycles = 0, round_progress = 0;
    int64_t round_end = 0;
    bool in_round = false;

    for (;;) {
        cycles += drain(s);
        int64_t first, last;
        /* an injected clock belongs to its owner: only the default one is moved */
        if (!ks_queue_backoff_bounds(s->queue, &first, &last) || s->opts.clock.now)
            break;
        /*
         * A round retries every pod that was in backoff when it began. Another round is
         * worth it only if the last one bound a pod, evicted one, or saw an event:
         * otherwise the pods left would fail the same way forever.
         */
        uint64_t now_progress = atomic_load_explicit(&s->progress, memory_order_relaxed);
        if (!in_round || first > round_end) {
            if (in_round && now_progress == round_progress)
                break;
            in_round = true;
            round_end = last;
            round_progress = now_progress;
        }
        warp_to(s, first);
        ks_queue_flush_backoff(s->queue);
    }
#ifdef KS_QUEUE_DEBUG
    char msg[256];
    if (ks_queue_check(s->queue, msg, sizeof(msg)) < 0) {
        fprintf(stderr, "ksched queue invariant violated: %s\n", msg);
        abort();
    }
#endif
    return cycles;
}
