/*
 * scheduler_internal.h - state shared by the files of the scheduling loop.
 *
 * scheduler.c: creation, the run loop, events; schedule_one.c: one scheduling cycle;
 * find_nodes.c: PreFilter and the parallel Filter phase; prioritize.c: PreScore, the
 * parallel Score phase, normalisation and host selection; fit_error.c: the
 * FailedScheduling message; binder.c: the binding threads.
 *
 * Context: fields marked (sched) belong to the scheduling thread; (bind) to binder
 * threads under bind_lock. bind_lock, event_lock and flush_lock are KS_LOCK_BIND,
 * KS_LOCK_SCHED_EVENT and KS_LOCK_FLUSH in the lock order of include/ksched/base/lock.h.
 */
#ifndef KSCHED_ENGINE_SCHEDULER_INTERNAL_H
#define KSCHED_ENGINE_SCHEDULER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/base/lock.h"
#include "ksched/base/workers.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/scheduler.h"

struct ks_index;

/* A pod between its successful scheduling cycle and the end of its binding cycle. */
struct ks_bind_job {
    struct ks_bind_job *next;
    struct ks_queued_pod *qp;
    struct ks_framework *fw;
    struct ks_cycle_state cs;
    uint32_t node;
    uint64_t cycle;
    bool urgent; /* its pod waits on Permit: a binder is woken for it at once (binder.c) */
    /*
     * A PreBind that waits (binder.c): cs.bind_wait points at @wait while PreBind runs;
     * wait_state says who holds the job (bind_lock); a resumed job continues from PreBind
     * with wait_code / wait_st.
     */
    struct ks_scheduler *s;
    struct ks_bind_wait wait;
    uint8_t wait_state; /* (bind) KS_JOB_RUNNING, KS_JOB_PARKED, KS_JOB_RESOLVED */
    bool resumed;
    int wait_code;
    struct ks_status wait_st;
};

enum { KS_JOB_RUNNING, KS_JOB_PARKED, KS_JOB_RESOLVED };

/*
 * A node with pods nominated to it (by preemption) of at least the cycle's pod's priority:
 * the node as if they were running there, and the cycle state with their AddPod applied
 * (addGENominatedPods). Built by the scheduling thread before the parallel Filter; the
 * workers only read it.
 */
struct ks_nominated_node {
    uint32_t name;
    const struct ks_node_snap *derived;
    struct ks_cycle_state cs; /* initialised once, reused */
};

struct ks_nominated_scratch {
    uint32_t n, cap; /* nodes this cycle, sorted by name; allocated entries */
    struct ks_nominated_node *nodes;
    struct ks_arena arena;    /* derived records */
    uint32_t npods, cap_pods; /* nominations listed this cycle (references held until the next) */
    const struct ks_pod **pods;
    uint32_t *pod_nodes;
    uint64_t *sort;              /* cap_pods: node << 32 | listing index, to group the listing by node */
    const struct ks_pod **spare; /* cap_pods: the listing while it is regrouped */
};

struct ks_fw_tally; /* framework_metrics.h */

/* Growable scratch of one cycle (sched): reused, so steady state allocates nothing. */
struct ks_cycle_scratch {
    uint32_t cap_nodes;
    struct ks_status *status;              /* per evaluated position */
    uint8_t *ok;                           /* per evaluated position: passed Filter */
    const struct ks_node_snap **order;     /* evaluated nodes when PreFilter narrowed them */
    const struct ks_node_snap **evaluated; /* per evaluated position: the node (filter_block) */
    atomic_uint *block_state;              /* per Filter block: 0, or 1 + the nodes that passed once done */
    const struct ks_node_snap **feasible;
    const struct ks_node_snap **failed;
    struct ks_status *failed_status;
    uint32_t cap_scores;
    int64_t *scores; /* the planned Score pass's columns (framework_plan.h) */
    int64_t *rows;   /* feasible x nscore, for observers and the unplanned pass */
    int64_t *totals;
    struct ks_nominated_scratch nom;
    /* with metrics: one tally per worker for the Filter and Score passes (framework_metrics.h) */
    uint32_t ntallies;
    struct ks_fw_tally *tallies;
};

/*
 * The nodes a PodGroup cycle's placement limits the cycle to (upstream's AssumePlacement):
 * interned names, sorted; n 0: every node. Find, Filter and the FitError count only these
 * (a pod's cycle then never asks the signature index). (sched)
 */
struct ks_placement_view {
    uint32_t n;
    const uint32_t *names;
};

struct ks_scheduler {
    struct ks_scheduler_opts opts;
    struct ks_cache *cache;
    struct ks_queue *queue;
    struct ks_nominator *nominator;
    struct ks_pod_groups *groups; /* pod groups (GenericWorkload): members and specs */
    struct ks_workers *workers;
    uint32_t nfw;
    struct ks_framework **fw; /* one per profile, in profile order */
    uint32_t *fw_names;       /* interned schedulerName per framework */

    /* (sched) */
    uint32_t next_start;   /* nextStartNodeIndex */
    uint64_t rng;          /* xorshift state for tie-breaks */
    uint64_t sample_rng;   /* xorshift state for the cycles that time their plugins (not the tie-breaks') */
    bool metrics_attached; /* opts.metrics reads this scheduler at each scrape until it is destroyed */
    struct ks_cycle_scratch scratch;
    struct ks_index *index;      /* the signature index (ksched/internal/index.h); NULL with opts.no_index */
    uint8_t *sign_buf;           /* KS_SIGN_BUF bytes: the cycle's signature (index_path.c) */
    uint64_t nominations_seen;   /* the nominator's change cursor the index followed */
    struct ks_arena index_arena; /* a nominated position's derived record (index_path.c) */
    struct ks_cycle_state index_cs;         /* its cycle state with the nominated pods' AddPod */
    _Atomic uint64_t indexed_cycles;        /* cycles whose host the index chose (relaxed: a counter) */
    _Atomic uint64_t indexed_unfit_cycles;  /* cycles the index found no node fits (relaxed: a counter) */
    _Atomic uint64_t indexed_preemptions;   /* preemptions the candidate trees answered (relaxed) */
    struct ks_index_class *unfit_class;     /* the class of this cycle's unfit answer, NULL for none */
    bool bind_deferred;                     /* a binding waits for ks__bind_flush() (binder.c) */
    struct ks_bind_job *free_jobs;          /* recycled jobs, guarded by bind_lock */
    struct ks_group_scratch *group_scratch; /* the PodGroup cycle's arrays (schedule_podgroup.c) */
    struct ks_placement_view placement;     /* the nodes a PodGroup cycle's member may take (sched) */
    struct ks_placement_view
        listing;  /* the nodes its cycle lists, counts included: the placement's (sched) */
    bool what_if; /* a preemption's trial run of a PodGroup cycle: its attempts are not reported (sched) */

    /* binder pool */
    struct ks_mutex bind_lock;
    pthread_cond_t bind_ready;                 /* a job was queued, or quit */
    pthread_cond_t bind_idle;                  /* in-flight reached zero */
    struct ks_bind_job *bind_head, *bind_tail; /* (bind) */
    uint32_t bind_len;                         /* (bind) jobs in the FIFO */
    uint32_t in_flight;                        /* (bind) queued or being bound */
    uint32_t bind_sleeping;                    /* (bind) binders waiting on bind_ready */
    uint32_t bind_stuck;                       /* (bind) binders inside an urgent job */
    bool bind_spinner;                         /* (bind) a binder polls bind_queued instead of sleeping */
    atomic_uint bind_queued;                   /* bind_len, for the polling binder (relaxed) */
    bool bind_quit;
    uint32_t nbinders;
    pthread_t *binders;

    struct ks_mutex event_lock; /* serialises on_event callbacks */

    struct ks_event_map **maps; /* per framework: events and PreEnqueue plugins (queue/plugin_events.c) */
    struct ks_clock clock;      /* what the queue reads */
    _Atomic int64_t warp_ns;    /* how far batch runs moved the clock past its own time */
    _Atomic int64_t logical_ns; /* opts.deterministic: the logical clock's ticks (relaxed: see logical_now) */
    /* bindings, evictions and delivered events: a batch round of retries that moves it is worth another */
    _Atomic uint64_t progress;

    /* the flusher thread (opts.flusher) */
    pthread_t flusher;
    bool flusher_started;
    bool flush_quit; /* guarded by flush_lock */
    struct ks_mutex flush_lock;
    pthread_cond_t flush_wake; /* quit */
};

/* A job from the free list (or a new one), its cycle state reset. NULL when out of memory. */
struct ks_bind_job *ks__job_get(struct ks_scheduler *s);
void ks__job_put(struct ks_scheduler *s, struct ks_bind_job *job);

/* Emit an event to the user's callback (any thread). */
void ks__emit(struct ks_scheduler *s, enum ks_sched_event_kind kind, const struct ks_pod *pod, uint32_t node,
              const char *message);

/*
 * ks__failure - handle a failed attempt (scheduling or binding cycle): emit the event and
 * give the pod back to the queue (handleSchedulingFailure): a rejection (Unschedulable*)
 * with the plugins in @rejectors (slots) waits for the events they register; an error is
 * retried after backoff. Scheduling thread or a binder.
 */
void ks__failure(struct ks_scheduler *s, struct ks_framework *fw, struct ks_queued_pod *qp, uint64_t cycle,
                 int code, const char *message, uint64_t rejectors);

/*
 * ks__event - deliver cluster event @ev (objects @old_obj / @new_obj, NULL on add / delete)
 * to the queue. Any thread; the objects stay valid for the call.
 */
void ks__event(struct ks_scheduler *s, enum ks_event_resource resource, uint32_t actions, const void *old_obj,
               const void *new_obj);

/*
 * ks__assigned_pod_event - AssignedPod/@actions for @pod bound to @node: hints see a
 * shallow copy with spec.nodeName set (the in-process binder's pods keep theirs empty).
 */
void ks__assigned_pod_event(struct ks_scheduler *s, uint32_t actions, const struct ks_pod *pod,
                            uint32_t node);

/*
 * ks__nominations_list - every nomination into @nom's pods and pod_nodes, grouped by node
 * (nomination order kept within a node), each pod with a reference that
 * ks__nominations_release drops (as the next listing does). 0 or -ENOMEM. Scheduling thread.
 */
int ks__nominations_list(struct ks_scheduler *s, struct ks_nominated_scratch *nom);
void ks__nominations_release(struct ks_nominated_scratch *nom);

/*
 * Nominated pods on the Filter path (RunFilterPluginsWithNominatedPods), nominated_pods.c.
 * ks__nominated_prepare - for every node (or node @only alone; KS_ID_NONE: every node)
 * with nominated pods of priority >= @pod's (not @pod itself), build the derived record
 * and cloned state (scheduling thread, inside the read section holding @snap); what an
 * earlier call built is dropped. Nothing to do when the nominator is empty. Returns a code
 * with @st filled on Error.
 * ks__nominated_find - the entry of node @name this cycle, NULL when none (workers).
 * ks__filter_node - Filter @node, with the nominated pods when it has some: a first pass
 * with them added, and if that passes, a second without (workers); the calls count into
 * the worker's tally @t when the scheduler has metrics (NULL otherwise).
 */
int ks__nominated_prepare(struct ks_scheduler *s, struct ks_framework *fw, const struct ks_cycle_state *cs,
                          const struct ks_pod *pod, const struct ks_snapshot *snap, uint32_t only,
                          struct ks_status *st);
const struct ks_nominated_node *ks__nominated_find(const struct ks_nominated_scratch *nom, uint32_t name);
int ks__filter_node(const struct ks_framework *fw, const struct ks_nominated_scratch *nom,
                    const struct ks_cycle_state *cs, const struct ks_pod *pod,
                    const struct ks_node_snap *node, struct ks_status *st, struct ks_fw_tally *t);
void ks__nominated_free(struct ks_nominated_scratch *nom);

/*
 * binder.c. ks__bind_async - queue @job for a binder (scheduling thread). A sleeping
 * binder is woken only when no binder is awake and KS_BIND_BATCH jobs wait or @urgent;
 * returns true when the job was left for a later wake-up: the caller must then call
 * ks__bind_flush() before it stops scheduling (the active queue is empty, it is about to
 * block, or it returns to a caller that may wait for the binding).
 * ks__bind_flush - wake a sleeping binder if jobs wait (scheduling thread).
 * ks__wait_bindings - flush, then wait until no job is queued or being bound.
 */
enum { KS_BIND_BATCH = 8 };

/* How long a binder that found the FIFO empty looks at it before it sleeps, and its nap between looks
 * (binder.c). */
#define KS_BIND_SPIN_NS 200000
#define KS_BIND_NAP_NS  20000
int ks__binders_start(struct ks_scheduler *s);
void ks__binders_stop(struct ks_scheduler *s);
bool ks__bind_async(struct ks_scheduler *s, struct ks_bind_job *job, bool urgent);
void ks__bind_flush(struct ks_scheduler *s);
void ks__wait_bindings(struct ks_scheduler *s);

/*
 * Deterministic runs (opts.deterministic), binder.c. ks__bind_settle - wait until every
 * binding in flight is done but those of pods still waiting on Permit (scheduling thread).
 * ks__bind_inline - run @job's binding cycle on the calling scheduling thread, counted in
 * flight as a binder's is, after settling the earlier ones.
 */
void ks__bind_settle(struct ks_scheduler *s);
void ks__bind_inline(struct ks_scheduler *s, struct ks_bind_job *job);

/* The logical clock of a deterministic run moves one tick (any thread; a no-op otherwise). */
void ks__logical_tick(struct ks_scheduler *s);

/* find_nodes.c: PreFilter and Filter; returns a code, fills feasible/diag. */
struct ks_find_result {
    const struct ks_snapshot *snap;
    uint32_t nfeasible;
    const struct ks_node_snap **feasible;
    struct ks_diagnosis diag;
    bool indexed; /* the signature index answered: feasible[0] the one entry (no Score to run), or diag
                     grouped */
};
int ks__find_nodes(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                   const struct ks_pod *pod, const struct ks_snapshot *snap, struct ks_find_result *out,
                   struct ks_status *st);

/*
 * index_path.c: the signature index on the scheduling path (ksched/internal/index.h).
 * ks__index_path_init / _fini - create (opts.no_index unset) and free the index.
 * ks__index_cycle - after a PreFilter that let @pod through on every node (no
 * PreFilterResult narrowing), answer the cycle from the index when it can do so exactly,
 * moving nextStartNodeIndex as the Filter and Score phases would have: KS_INDEX_HOST with
 * *@host chosen; KS_INDEX_UNFIT when no node fits, with @d the grouped diagnosis of every
 * node's status (framework_types.h; valid until the next cycle); KS_INDEX_NO_ANSWER when
 * the cycle must take the phases (the pod or the cycle is not one the index serves).
 * Scheduling thread, inside the RCU read section holding @snap, which the index was
 * shown (ks_index_observe) in this cycle.
 */
enum { KS_SIGN_BUF = 4096 };
int ks__index_path_init(struct ks_scheduler *s);
void ks__index_path_fini(struct ks_scheduler *s);
/* ks__index_follow - show the index @snap and the nominations changed since the last cycle. */
void ks__index_follow(struct ks_scheduler *s, const struct ks_snapshot *snap);
enum ks_index_answer { KS_INDEX_NO_ANSWER, KS_INDEX_HOST, KS_INDEX_UNFIT };
/*
 * ks__index_preempt_tree / ks__index_preempt_answered - the framework deps' preempt_index
 * ops (ksched/framework.h); @ctx the scheduler.
 */
struct ks_preempt_tree *ks__index_preempt_tree(void *ctx, const struct ks_diagnosis *d,
                                               const uint32_t **changed, int64_t *nchanged);
void ks__index_preempt_answered(void *ctx);
enum ks_index_answer ks__index_cycle(struct ks_scheduler *s, struct ks_framework *fw,
                                     struct ks_cycle_state *cs, const struct ks_pod *pod,
                                     const struct ks_snapshot *snap, const struct ks_node_snap **host,
                                     struct ks_diagnosis *d);

/* The percentageOfNodesToScore that applies to @fw's cycles (100 with opts.explain). */
int32_t ks__percentage(const struct ks_scheduler *s, const struct ks_framework *fw);

/* prioritize.c: PreScore, Score, normalise, select; *host is the chosen node. */
int ks__prioritize(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                   const struct ks_pod *pod, const struct ks_find_result *found, uint32_t attempt,
                   const struct ks_node_snap **host, struct ks_status *st);

/* fit_error.c: upstream's FitError.Error() for @d into a malloc'd string (NULL when out of memory). */
char *ks__fit_error_message(const struct ks_diagnosis *d);

/* What ks__algorithm found for a pod no node fits. */
struct ks_unfit {
    bool post_filter;   /* in: run PostFilter and hand the pod back (a pod's own cycle) */
    char *message;      /* out without post_filter: the FitError message (malloc'd; NULL: out of memory) */
    uint64_t rejectors; /* out without post_filter: the plugins that rejected it */
};

/*
 * ks__algorithm - the scheduling algorithm for @job's pod on a freshly refreshed snapshot:
 * PreFilter, Filter, PreScore, Score, select. KS_SUCCESS with *@node; KS_UNSCHEDULABLE when
 * no node fits (see struct ks_unfit); any other code with @st filled (the pod not handed
 * back). Scheduling thread.
 */
int ks__algorithm(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job, int64_t start,
                  struct ks_unfit *unfit, uint32_t *node, struct ks_status *st);

/*
 * ks__schedule_pod_group - the PodGroup cycle (schedule_podgroup.c) for popped member @qp
 * of a pod group and the group's other queued members. Scheduling thread.
 */
void ks__schedule_pod_group(struct ks_scheduler *s, struct ks_queued_pod *qp);

/* ks__group_scratch_free - free what the PodGroup cycles kept. */
void ks__group_scratch_free(struct ks_scheduler *s);

/* ks__job_start - @job serves @qp's attempt in @cycle under @fw: its seed drawn; the start time when timed.
 */
int64_t ks__job_start(struct ks_scheduler *s, struct ks_bind_job *job, struct ks_framework *fw,
                      struct ks_queued_pod *qp, uint64_t cycle);

/* schedule_one.c: the profile serving @pod (NULL: none). */
struct ks_framework *ks__framework_for(struct ks_scheduler *s, const struct ks_pod *pod);

/*
 * ks__assume_reserve - assume @job's pod on @node in the cache (dropping its nomination when
 * @nominated_off) and run Reserve. KS_SUCCESS, or the failing code with @st filled after
 * Unreserve ran and the assumption was forgotten. Scheduling thread.
 */
int ks__assume_reserve(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job,
                       uint32_t node, bool nominated_off, struct ks_status *st);

/*
 * ks__permit_bind - Permit for @job's assumed and reserved pod, then its binding cycle
 * (inline in a deterministic run, else on a binder); a rejection unreserves, forgets and
 * gives the pod back. True when the binding waits for a later ks__bind_flush().
 */
bool ks__permit_bind(struct ks_scheduler *s, struct ks_framework *fw, struct ks_bind_job *job);

/* Grow the cycle scratch for @nodes nodes and @scores score cells. */
int ks__scratch_reserve(struct ks_cycle_scratch *sc, uint32_t nodes, uint32_t scores);
void ks__scratch_free(struct ks_cycle_scratch *sc);

/*
 * ks__prefetch_record - ask for the cache lines holding the first @bytes (a constant) of
 * node record @n, wherever the allocation starts in a line. Records are separate
 * allocations, so the hardware cannot guess the next one; the Filter and Score loops
 * call this a few nodes ahead of the one they work on. Any thread; reads nothing.
 */
static inline void ks__prefetch_record(const struct ks_node_snap *n, size_t bytes)
{
    const char *r = (const char *)n;
    for (size_t off = 0; off < bytes; off += 64)
        __builtin_prefetch(r + off);
    __builtin_prefetch(r + bytes - 1);
}

/*
 * ks__block_size - the block for a phase of about @n nodes on @w: four blocks per thread,
 * so a thread that starts late (its core was busy) costs little, the others taking its
 * share; at least @min, because each block pays a fixed cost (a call per plugin, and on a
 * big cluster the ramp of its record prefetches), at most @max; a multiple of 32.
 */
static inline uint32_t ks__block_size(const struct ks_workers *w, uint32_t n, uint32_t min, uint32_t max)
{
    uint32_t b = n / (4 * ks_workers_count(w));
    b = (b + 31) & ~31u;
    return b < min ? min : b > max ? max : b;
}

/* A random number for tie-breaks (sched). */
uint64_t ks__rand(struct ks_scheduler *s);

#endif
