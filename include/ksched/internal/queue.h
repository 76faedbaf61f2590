/*
 * queue.h - the scheduling queue the scheduling loop pops pods from, and its parts.
 *
 * Mirrors kube-scheduler's PriorityQueue (backend/queue/scheduling_queue.go,
 * active_queue.go, backoff_queue.go, unschedulable_pods.go): pending pods wait in one of
 * three places -
 *   activeQ:       ready to be tried, in QueueSort order (a lock-free priority queue);
 *   backoffQ:      failed recently, waiting out podInitialBackoffSeconds x 2^(attempts-1)
 *                  (capped at podMaxBackoffSeconds), ordered by when that ends;
 *   unschedulable: rejected, waiting for a cluster event that one of the plugins that
 *                  rejected it says may help (EventsToRegister + QueueingHint), or for the
 *                  maximum unschedulable duration; gated pods (PreEnqueue) wait here too -
 * or are in flight: popped and being scheduled or bound. A pod is in exactly one place.
 *
 * Ownership: ks_queue_add() takes over the caller's reference to the pod; the queue
 * keeps one struct ks_queued_pod per pod (namespace/name) from then until the scheduler
 * is done with it (ks_queue_done) or the pod is deleted, and drops the reference when the
 * struct is freed. A pod is identified by namespace/name (by its address when it has no
 * name, as in tests).
 *
 * Context and locks: pops never lock (one consumer: the scheduling thread). There is no
 * queue-wide lock: an operation on one pod by name (add, update, delete, giving it back,
 * reading its place) takes the lock of its name's stripe of the lookup table
 * (KS_LOCK_QUEUE_POD in the lock order of ksched/base/lock.h), and pushes to the lock-free
 * activeQ under it; what touches backoffQ or the unschedulable pods (events, flushes,
 * failures, gated pods) takes their lock (KS_LOCK_QUEUE) too. Nothing runs under these
 * but the PreEnqueue plugins and QueueingHints the queue calls, which must not block and
 * may intern strings. Every thread that calls into the queue must be registered with RCU
 * (ksched/base/rcu.h): the active queue's readers run in RCU read sections.
 */
#ifndef KSCHED_QUEUE_H
#define KSCHED_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/queue_types.h"

/* Debug and sanitizer builds check the queue's invariants as they go (ks_queue_check). */
#if !defined(KS_QUEUE_DEBUG) && (defined(KS_TSAN) || defined(__SANITIZE_ADDRESS__))
#define KS_QUEUE_DEBUG 1
#endif

struct ks_nominator;
struct ks_plugin;
struct ks_status;

/* Comparison from the profiles' QueueSort plugin: true when @a pops before @b. */
typedef bool (*ks_queue_less_fn)(const void *ctx, const struct ks_queued_pod *a,
                                 const struct ks_queued_pod *b);

/* ======================================================================================== */
/* The active queue (queue/activeq.c): a lock-free concurrent priority queue.               */
/* ======================================================================================== */

struct ks_activeq;

/*
 * A handle to one entry, for removing it before it is popped. The active queue writes it
 * atomically: non-NULL from push until the entry is popped or removed. Zero-initialise.
 */
struct ks_activeq_handle {
    void *entry;
};

/* ks_activeq_release_fn - the queue no longer references @qp (an entry was reclaimed). Any thread. */
typedef void (*ks_activeq_release_fn)(void *ctx, struct ks_queued_pod *qp);

/*
 * ks_activeq_create - an empty active queue ordered by @less. @release (may be NULL) is
 * called once per pushed entry when its memory is reclaimed, possibly on the RCU
 * reclaimer thread (ks_rcu_call), after the entry was popped or removed. 0 or -ENOMEM.
 */
int ks_activeq_create(ks_queue_less_fn less, const void *less_ctx, ks_activeq_release_fn release,
                      void *release_ctx, struct ks_activeq **out);

/*
 * ks_activeq_destroy - free every entry (calling release for each) and the queue. No
 * other thread may use it; waits for reclamation already queued. Accepts NULL.
 */
void ks_activeq_destroy(struct ks_activeq *aq);

/*
 * ks_activeq_push_mp - insert @qp: multiple producers, lock-free, from any RCU-registered
 * thread. The comparison reads a copy of *qp taken here, so @qp's fields may change
 * afterwards, but qp->pod must stay valid until @qp is released. Takes its entry from the
 * queue's node pool, allocating only while the queue holds more entries than it ever did.
 * If @handle is not NULL it receives the entry (see ks_activeq_remove). Wakes a
 * consumer sleeping in ks_activeq_pop_sc(). 0 or -ENOMEM.
 */
int ks_activeq_push_mp(struct ks_activeq *aq, struct ks_queued_pod *qp, struct ks_activeq_handle *handle);

/*
 * ks_activeq_pop_sc - remove and return the first entry in QueueSort order: single
 * consumer (one thread at a time, and never mixed with ks_activeq_pop_mc on the same
 * queue), lock-free. Empty: NULL, or with @block sleep (futex) until a push or
 * ks_activeq_close(). Must not be called inside an RCU read section when @block.
 */
struct ks_queued_pod *ks_activeq_pop_sc(struct ks_activeq *aq, bool block);

/* ks_activeq_pop_mc - as ks_activeq_pop_sc without blocking, for any number of consumers. */
struct ks_queued_pod *ks_activeq_pop_mc(struct ks_activeq *aq);

/*
 * ks__activeq_set_restructure_every - each consumer unlinks the deleted prefix every
 * @pops of its pops (128 by default; and when it finds the queue empty), for stress tests that make
 * restructures race. Call before the first pop.
 */
void ks__activeq_set_restructure_every(struct ks_activeq *aq, uint32_t pops);

/*
 * ks__activeq_linked - nodes linked at skiplist level @level (0: every entry), deleted ones
 * not yet unlinked included (tests). Quiescent queue only.
 */
uint32_t ks__activeq_linked(struct ks_activeq *aq, uint32_t level);

/*
 * ks_activeq_remove - remove the entry behind @handle unless it was popped first. True
 * when this call removed it (the popper will skip it). Any thread; concurrent calls on
 * one handle are the caller's to serialise.
 */
bool ks_activeq_remove(struct ks_activeq *aq, struct ks_activeq_handle *handle);

/* ks_activeq_close - wake every sleeping consumer; blocking pops return NULL once empty. */
void ks_activeq_close(struct ks_activeq *aq);

/* ks_activeq_empty - no live entry (a snapshot: may change at once). Any thread. */
bool ks_activeq_empty(struct ks_activeq *aq);

/*
 * ks_activeq_walk - call @fn for every live entry in order and return how many there
 * were; false from @fn stops early. Quiescent queues only (tests, invariant checks).
 */
uint32_t ks_activeq_walk(struct ks_activeq *aq, bool (*fn)(void *ctx, const struct ks_queued_pod *qp),
                         void *ctx);

/* ======================================================================================== */
/* Event registrations and PreEnqueue plugins of one profile (queue/plugin_events.c).      */
/* ======================================================================================== */

struct ks_event_map;

/* One plugin of a profile, as the event map needs it. */
struct ks_event_map_plugin {
    const struct ks_plugin *plugin; /* its ops table */
    void *self;                     /* its instance in the profile */
    bool pre_enqueue;               /* enabled at the PreEnqueue point (run in this order) */
};

/*
 * ks_event_map_create - the events each plugin of a profile registers (its
 * events_to_register op), indexed by slot; a plugin that can reject a pod but registers
 * nothing is registered for every event. @plugins[slot] for slot < @n. 0 or -ENOMEM.
 * Context: start-up; the map is immutable afterwards and may be read from any thread.
 */
int ks_event_map_create(const struct ks_event_map_plugin *plugins, uint32_t n, struct ks_event_map **out);
void ks_event_map_destroy(struct ks_event_map *m);

/* ks_event_map_interested - some plugin of the profile registers @ev (isEventOfInterest). */
bool ks_event_map_interested(const struct ks_event_map *m, const struct ks_cluster_event *ev);

/* ks_event_map_registers - the plugin in @slot registers an event matching @ev (its gating events). */
bool ks_event_map_registers(const struct ks_event_map *m, uint16_t slot, const struct ks_cluster_event *ev);

/*
 * ks_event_map_kinds - the coarse event kinds (enum ks_cluster_event_kind) that the
 * plugins in @rejectors (slots) register: what a pod they rejected waits for.
 * KS_EVENT_ALL when @rejectors is 0.
 */
unsigned ks_event_map_kinds(const struct ks_event_map *m, uint64_t rejectors);

/* ks_event_match - @registered matches the incoming @ev (framework.MatchClusterEvents). */
bool ks_event_match(const struct ks_cluster_event *registered, const struct ks_cluster_event *ev);

/* How a pod goes back after an event (queueingStrategy). */
enum ks_requeue {
    KS_REQUEUE_SKIP,          /* stays where it is */
    KS_REQUEUE_AFTER_BACKOFF, /* to backoffQ, or activeQ if its backoff is over */
};

/*
 * ks_event_map_worth - isPodWorthRequeuing: does @ev (objects @old_obj / @new_obj) help a
 * pod that the plugins in @rejectors (slots) rejected? No rejectors or a wildcard event:
 * after backoff. Otherwise the hints of the rejectors' matching registrations decide.
 */
enum ks_requeue ks_event_map_worth(const struct ks_event_map *m, uint64_t rejectors, const struct ks_pod *pod,
                                   const struct ks_cluster_event *ev, const void *old_obj,
                                   const void *new_obj);

/*
 * ks_event_map_pre_enqueue - run the profile's PreEnqueue plugins on @pod in order.
 * Returns KS_NO_PLUGIN when all pass, else the slot of the first that did not, with
 * its status in @st.
 */
uint16_t ks_event_map_pre_enqueue(const struct ks_event_map *m, const struct ks_pod *pod,
                                  struct ks_status *st);

/* ks_event_name - "Node/UpdateNodeLabel|UpdateNodeTaint" into @buf (logs and tests). */
const char *ks_event_name(const struct ks_cluster_event *ev, char *buf, uint32_t len);

/*
 * ks_pod_update_events - PodSchedulingPropertiesChange: the events an update of a pod
 * from @old_pod to @new_pod makes (resource @resource: assigned or unscheduled pod), at
 * most KS_ACTION_COUNT of them into @out. Returns how many (at least one: a plain update).
 */
uint32_t ks_pod_update_events(const struct ks_pod *old_pod, const struct ks_pod *new_pod,
                              enum ks_event_resource resource, struct ks_cluster_event *out);

/*
 * ks_node_update_actions - NodeSchedulingPropertiesChange: the update actions (bits) a
 * change of a node from @old_node to @new_node makes; 0 when nothing relevant changed.
 */
uint32_t ks_node_update_actions(const struct ks_node *old_node, const struct ks_node *new_node);

/* ======================================================================================== */
/* The scheduling queue (queue/queue.c).                                                     */
/* ======================================================================================== */

struct ks_queue;

struct ks_queue_opts {
    ks_queue_less_fn less;
    const void *less_ctx;
    int64_t initial_backoff_ns;   /* podInitialBackoffSeconds; 0: no backoff */
    int64_t max_backoff_ns;       /* podMaxBackoffSeconds */
    int64_t max_unschedulable_ns; /* podMaxInUnschedulablePodsDuration; 0: 5 minutes */
    struct ks_clock clock;        /* where time comes from; now NULL: CLOCK_MONOTONIC */
    /*
     * Per profile (index = struct ks_queued_pod.profile), its event map; a pod's profile
     * is the one whose scheduler name (interned) equals its schedulerName. No profiles:
     * every pod is profile 0 without a map - no PreEnqueue, and a pod waits for the
     * coarse events it was given (ks_queue_add_unschedulable).
     */
    uint32_t nprofiles;
    const struct ks_event_map *const *maps;
    const uint32_t *scheduler_names;
    /*
     * The nominator (ksched/internal/nominator.h), or NULL: a pod deleted while in flight loses its
     * nomination when it is given back, since its scheduling cycle may have nominated it
     * after the deletion removed the old one (upstream's nominator skips removed pods).
     */
    struct ks_nominator *nominator;
};

/* Default of max_unschedulable_ns (DefaultPodMaxInUnschedulablePodsDuration). */
#define KS_QUEUE_MAX_UNSCHEDULABLE_NS (5 * 60 * INT64_C(1000000000))
/* Flush intervals the owner's flusher uses (scheduling_queue.go Run). */
#define KS_QUEUE_BACKOFF_FLUSH_NS       INT64_C(1000000000)
#define KS_QUEUE_UNSCHEDULABLE_FLUSH_NS (30 * INT64_C(1000000000))

int ks_queue_create_opts(const struct ks_queue_opts *opts, struct ks_queue **out);

/* ks_queue_create - ks_queue_create_opts with only a comparison: no backoff, no profiles. */
int ks_queue_create(ks_queue_less_fn less, const void *less_ctx, struct ks_queue **out);

/* ks_queue_destroy - drop every queued pod (and its reference). No pod may be in flight. Accepts NULL. */
void ks_queue_destroy(struct ks_queue *q);

/* ks_queue_now - the queue's clock. */
int64_t ks_queue_now(const struct ks_queue *q);

/*
 * ks_queue_add - a new pending pod (Add): PreEnqueue plugins, then activeQ, or the
 * unschedulable pods when gated. @now_ns is its queue timestamp (ks_queue_now() in
 * production; tests pass their own). Takes over the reference to @pod. 0, -EEXIST
 * when a pod of that namespace/name is queued already (nothing taken over), -ENOMEM.
 */
int ks_queue_add(struct ks_queue *q, const struct ks_pod *pod, int64_t now_ns);

/*
 * ks_queue_pop - the next pod to schedule, its attempts counted and its rejectors
 * cleared (it is in flight until given back); NULL when activeQ is empty (with @block:
 * sleeps until a pod arrives or the queue is closed). Starts a new scheduling cycle.
 * Context: the one consumer thread, outside RCU read sections; takes no lock.
 */
struct ks_queued_pod *ks_queue_pop(struct ks_queue *q, bool block);

/*
 * ks_queue_take - take the pod of @pod's namespace/name out of activeQ, backoffQ or the
 * unschedulable pods into flight, as a pop would (attempts counted, rejectors cleared),
 * within the current scheduling cycle: the other pending members of a pod group join the
 * member popped. NULL when it is not queued, already in flight, or gated by PreEnqueue (then
 * *@gated is set). Context: the consumer thread, outside RCU read sections.
 */
struct ks_queued_pod *ks_queue_take(struct ks_queue *q, const struct ks_pod *pod, bool *gated);

/* ks_queue_cycle - pods popped so far (upstream's schedulingCycle). */
uint64_t ks_queue_cycle(struct ks_queue *q);

/* Coarse event kinds (a bit set): what a pod waits for before its plugins' hints are asked. */
enum ks_cluster_event_kind {
    KS_EVENT_NODE_ADD = 1u << 0,
    KS_EVENT_NODE_UPDATE = 1u << 1,
    KS_EVENT_ASSIGNED_POD_ADD = 1u << 2,
    KS_EVENT_ASSIGNED_POD_DELETE = 1u << 3,
    KS_EVENT_ASSIGNED_POD_UPDATE = 1u << 4,
    KS_EVENT_NODE_DELETE = 1u << 5,
    KS_EVENT_UNSCHEDULED_POD_UPDATE = 1u << 6,
    KS_EVENT_STORAGE = 1u << 7, /* PV, PVC, StorageClass, CSI objects, VolumeAttachment */
    KS_EVENT_OTHER = 1u << 8,   /* resource claims, slices, device classes */
    KS_EVENT_ALL = (1u << 9) - 1,
};

/* ks_event_kind - the coarse kind of @ev. */
unsigned ks_event_kind(const struct ks_cluster_event *ev);

/*
 * ks_queue_add_unschedulable - give back a pod whose attempt in scheduling cycle @cycle
 * failed (AddUnschedulableIfNotPresent). Set qp->unschedulable_plugins first. @events:
 * the coarse kinds it waits for (a prefilter before its rejectors' hints; KS_EVENT_ALL
 * when unsure), or 0 when it failed with an error rather than a rejection. It goes to
 * backoffQ (activeQ once its backoff is over) on an error or when a move request came
 * during or after @cycle, else among the unschedulable pods. A pod updated while in
 * flight comes back as its latest version; one deleted meanwhile is dropped. The queue
 * owns @qp again. 0, or -ENOMEM when a newer version received meanwhile could not be
 * taken (the pod comes back as the version it had). A pod is never dropped for lack of
 * memory: when no other place can take it, it waits among the unschedulable pods.
 */
int ks_queue_add_unschedulable(struct ks_queue *q, struct ks_queued_pod *qp, uint64_t cycle, unsigned events);

/*
 * ks_queue_done - the scheduler is finished with an in-flight pod (bound, or skipped):
 * forget it and drop its reference.
 */
void ks_queue_done(struct ks_queue *q, struct ks_queued_pod *qp);

/*
 * ks_queue_move_event - MoveAllToActiveOrBackoffQueue for cluster event @ev, which
 * changed @old_obj into @new_obj (NULL on add / delete): every unschedulable pod it may
 * help (coarse kind, then the hints of the plugins that rejected it) goes to backoffQ or
 * activeQ; a move request is recorded when some plugin registers @ev.
 */
void ks_queue_move_event(struct ks_queue *q, const struct ks_cluster_event *ev, const void *old_obj,
                         const void *new_obj);

/* ks_queue_move - ks_queue_move_event for coarse @events without objects (hints see NULL). */
void ks_queue_move(struct ks_queue *q, unsigned events);

/*
 * ks_queue_activate - Activate: the pod of @pod's key, when it waits among the unschedulable
 * pods or in backoffQ (with @gated_only: among the unschedulable pods, held back by
 * PreEnqueue), goes to activeQ (PreEnqueue runs again: a gated pod stays unschedulable);
 * anywhere else, nothing changes. Any thread.
 */
void ks_queue_activate(struct ks_queue *q, const struct ks_pod *pod, bool gated_only);

/*
 * ks_queue_update - an unscheduled pod changed (Update): in activeQ or backoffQ it is
 * updated in place (re-sorted); among the unschedulable pods the update's events are
 * offered to its rejectors' hints (gates removed: PreEnqueue runs again); in flight it is
 * remembered for when it comes back; unknown, it is added. Takes over the reference to
 * @new_pod. 0 or -ENOMEM.
 */
int ks_queue_update(struct ks_queue *q, const struct ks_pod *old_pod, const struct ks_pod *new_pod);

/* ks_queue_delete - the pod (namespace/name) was deleted: removed wherever it is queued. True if it was. */
bool ks_queue_delete(struct ks_queue *q, const struct ks_pod *pod);

/* ks_queue_flush_backoff - move every pod whose backoff is over to activeQ (every second). */
void ks_queue_flush_backoff(struct ks_queue *q);

/* ks_queue_flush_unschedulable - retry pods unschedulable for longer than the maximum (every 30 s). */
void ks_queue_flush_unschedulable(struct ks_queue *q);

/*
 * ks_queue_backoff_bounds - the earliest and the latest backoff expiry in backoffQ;
 * false (and INT64_MAX, INT64_MIN) when it is empty. For batch runs that move the
 * clock to the next expiry instead of sleeping.
 */
bool ks_queue_backoff_bounds(struct ks_queue *q, int64_t *first_ns, int64_t *last_ns);

/* Where a pod is. */
enum ks_queue_where {
    KS_WHERE_NONE,
    KS_WHERE_ACTIVE,
    KS_WHERE_BACKOFF,
    KS_WHERE_UNSCHEDULABLE,
    KS_WHERE_IN_FLIGHT,
};

struct ks_queue_pod_info {
    enum ks_queue_where where;
    bool gated;
    uint16_t gating_plugin;    /* slot, KS_NO_PLUGIN when not gated */
    uint32_t gated_message;    /* interned PreEnqueue reason */
    int64_t backoff_expiry_ns; /* when its backoff ends (0 in activeQ or in flight) */
    /*
     * A copy. In activeQ or in flight, where the popper and the scheduling cycle write the
     * entry without the queue's locks, only what never changes: pod and profile.
     */
    struct ks_queued_pod pod;
};

/* ks_queue_pod_info - where the pod of @pod's namespace/name is; false when not queued. */
bool ks_queue_pod_info(struct ks_queue *q, const struct ks_pod *pod, struct ks_queue_pod_info *info);

struct ks_queue_counts {
    uint32_t active, backoff, unschedulable, gated, in_flight;
};

/* ks_queue_count - pods in each place (gated pods are counted among the unschedulable too). */
void ks_queue_count(struct ks_queue *q, struct ks_queue_counts *c);

/* ks_queue_active - pods in activeQ (ks_queue_count's active) without a lock: any thread. */
uint32_t ks_queue_active(struct ks_queue *q);

/*
 * ks_queue_rejections - for each plugin slot of profile @profile, how many queued pods
 * (in activeQ, backoffQ or among the unschedulable; not in flight) carry it in
 * unschedulable_plugins: their last attempt was rejected by it, or it gates them
 * (scheduler_unschedulable_pods). @out holds 64 entries. Any thread, lock-free.
 */
void ks_queue_rejections(struct ks_queue *q, uint16_t profile, uint32_t out[64]);

/* ks_queue_close - wake every blocked pop (which then returns NULL). */
void ks_queue_close(struct ks_queue *q);

/*
 * ks_queue_check - the invariant checker: every queued pod is in exactly one place and
 * each place agrees (activeQ entries, the backoff heap order and indices, the
 * unschedulable list, the lookup table, the counters). Returns 0, or -1 with the first
 * violation described in @msg. Quiescent queues only (no concurrent pop). Built in
 * every build; debug and sanitizer builds (KS_QUEUE_DEBUG) also run the cheap part after
 * every locked operation.
 */
int ks_queue_check(struct ks_queue *q, char *msg, uint32_t len);

#endif
