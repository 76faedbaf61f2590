/*
 * plugin_types.h - the ops table every scheduler plugin exports.
 *
 * One const struct ks_plugin per plugin (plugins/<name>.c exports ks_plugin_<name>), in
 * the manner of the kernel's struct sched_class: designated initialisers named after the
 * extension points, NULL meaning "not at this point". abi_version comes first and new
 * ops are only ever appended, so an out-of-tree plugin built against an older table keeps
 * working (SQLite's iVersion rule).
 *
 * The contract of each op - which thread calls it, whether it runs inside the RCU read
 * section that holds the cycle's node snapshot, whether it may allocate or block, what it
 * may do with the cycle state - is written above the op, and summed up here. "Scheduling"
 * is the one thread that runs scheduling cycles; "workers" are the Filter/Score pool
 * (base/workers.c), in which the scheduling thread takes part; "binder" is one of the
 * binding threads (engine/binder.c), several of which run binding cycles of different pods
 * at once, concurrently with the scheduling thread's cycles.
 *
 *   op                       thread                      RCU   allocates   blocks
 *   args_parse/print/destroy configuration load           no    yes         no
 *   init, destroy            start-up / shutdown          no    yes         no
 *   events_to_register       start-up                     no    no          no
 *   less, pre_enqueue        any thread that queues pods  no    no          no
 *   pre_filter               scheduling                   yes   yes         no
 *   add_pod, remove_pod      scheduling                   yes   yes         no
 *   filter, filter_nodes     workers, in parallel         yes   no          no
 *   post_filter              scheduling                   yes   yes         no
 *   pre_score                scheduling                   yes   yes         no
 *   score, score_nodes       workers, in parallel         yes   no          no
 *   sign                     scheduling                   yes   no          no
 *   normalize_score          scheduling                   yes   no          no
 *   state_clone              scheduling                   yes   yes         no
 *   reserve, permit          scheduling                   no    yes         no
 *   unreserve                scheduling or a binder       no    yes         no
 *   pre_bind, bind           a binder                     no    yes         yes
 *   post_bind                a binder                     no    yes         no
 *
 * Inside the RCU read section an op reads node records of the snapshot freely and must not
 * wait for a grace period; locks it takes there are leaves, held briefly. "blocks: no" means
 * no waiting on I/O, other threads or timers: the op delays every pod behind it.
 *
 * Cycle state: each op that receives @cs may keep data in its own slot (cs->slot[i], i its
 * index in the profile), allocated from cs->arena or owned by the plugin instance; the
 * framework never frees slot data. The arena is reset when the state is reused, after the
 * pod's cycles are over (binding done, or the pod handed back to the queue), so slot data
 * lives from PreFilter through the binding cycle: Reserve, Permit, PreBind, Bind, PostBind
 * and Unreserve read what PreFilter and PreScore stored. Filter and Score get @cs const
 * and only read it. add_pod / remove_pod change a clone made through state_clone (nominated
 * pods, preemption's dry runs), whose arena is freed when the clone is done.
 */
#ifndef KSCHED_PLUGIN_TYPES_H
#define KSCHED_PLUGIN_TYPES_H

#include <stdint.h>

#include <stdbool.h>

#include "ksched/base/error.h"
#include "ksched/yaml_tree.h"

#define KS_PLUGIN_ABI_VERSION 1u

struct ks_yaml_out;
struct ks_arena;
struct ks_cycle_state;
struct ks_pre_filter_result;
struct ks_diagnosis;
struct ks_post_filter_result;
struct ks_plugin_init;
struct ks_node_snap;
struct ks_pod;
struct ks_queued_pod;
struct ks_status;
struct ks_event_registration;
struct ks_sign;
struct ks_pod_group_preemptor;

struct ks_plugin {
    uint32_t abi_version; /* KS_PLUGIN_ABI_VERSION the plugin was built against */
    const char *name;     /* the name used in KubeSchedulerConfiguration */

    /*
     * args_parse - decode, default and validate this plugin's pluginConfig args.
     * @args is the `args` node of the plugin's pluginConfig entry, or NULL for defaults.
     * @api_version is the configuration's apiVersion (defaults differ between versions).
     * Returns 0 and a newly allocated *out (freed with args_destroy), or -EINVAL with @err
     * naming the field (relative to the args node; @file for the file name).
     * Context: configuration load, one thread; may allocate.
     */
    int (*args_parse)(const struct ks_yaml_node *args, const char *api_version, const char *file, void **out,
                      struct ks_error *err);

    /* args_print - write the (defaulted) args as the YAML body of `args:`; used by `ksched config --print`.
     */
    void (*args_print)(const void *args, struct ks_yaml_out *out);

    /* args_destroy - free what args_parse returned. Accepts NULL. */
    void (*args_destroy)(void *args);

    /*
     * init - create the plugin's instance for one profile (one framework). *self is passed
     * back to every op below. Context: start-up, one thread; may allocate.
     */
    int (*init)(const struct ks_plugin_init *in, void **self, struct ks_error *err);
    /* destroy - free the instance. Accepts NULL. */
    void (*destroy)(void *self);

    /*
     * The extension points. Every op returns a code (enum ks_code) and, for anything but
     * Success, fills @st (reasons are interned ids; see status_types.h). Each op's context
     * is in the table at the top of this file.
     */

    /*
     * QueueSort: true when @a must be popped before @b. Called by whichever thread adds to
     * or pops the active queue (event intake, binders requeueing a pod, the scheduling
     * thread, the backoff flush), possibly concurrently: pure, reads the two pods only, and
     * assumes no lock held; no allocation, no blocking, no calls into the queue.
     */
    bool (*less)(void *self, const struct ks_queued_pod *a, const struct ks_queued_pod *b);

    /*
     * PreFilter: compute per-pod state into @cs; may narrow the nodes through @res; Skip
     * skips Filter. Scheduling thread, inside the cycle's RCU read section; may allocate
     * (from cs->arena preferably) and take leaf locks.
     */
    int (*pre_filter)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st);
    /*
     * PreFilterExtensions: update the state in @cs as if @other were added to / removed from
     * @node. Scheduling thread, inside the RCU read section, on a clone of the cycle state
     * (pods nominated to @node before Filter; preemption's dry runs in PostFilter).
     */
    int (*add_pod)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                   const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st);
    int (*remove_pod)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st);
    /*
     * Filter: does @pod fit @node? Worker threads (the scheduling thread among them), in
     * parallel, inside the scheduling thread's RCU read section; reads @cs only;
     * allocation-free, lock-free, never blocks.
     */
    int (*filter)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                  const struct ks_node_snap *node, struct ks_status *st);
    /*
     * PostFilter: run when no node fits (preemption); may nominate a node in @res.
     * Scheduling thread, inside the RCU read section; may allocate (dry runs). Victims leave
     * through the framework's evictor, which queues their deletion and does not block.
     */
    int (*post_filter)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                       struct ks_status *st);
    /*
     * PreScore: per-pod state for Score over the @n feasible @nodes; Skip skips Score.
     * Scheduling thread, inside the RCU read section; may allocate.
     */
    int (*pre_score)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st);
    /* Score: @node's raw score. As Filter: workers in parallel, RCU, reads @cs only, allocation-free. */
    int (*score)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                 const struct ks_node_snap *node, int64_t *score, struct ks_status *st);
    /*
     * NormalizeScore: rescale @scores (parallel to @nodes) into [0, KS_MAX_NODE_SCORE].
     * Scheduling thread, inside the RCU read section; allocation-free.
     */
    int (*normalize_score)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                           struct ks_status *st);
    /*
     * Reserve: claim what the pod will use on @node before the binding cycle. Scheduling
     * thread, outside the RCU read section (after the host was chosen); may allocate and take
     * the plugin's locks.
     * Unreserve: give back what Reserve claimed; runs in reverse plugin order, must be
     * idempotent and cannot fail. Called on the scheduling thread when Reserve or Permit
     * fails, and on a binder thread when the binding cycle fails (Permit rejected or timed
     * out, PreBind or Bind failed), concurrently with the scheduling thread's cycles for
     * other pods: state it shares across pods needs the plugin's own lock. Outside RCU.
     */
    int (*reserve)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                   struct ks_status *st);
    void (*unreserve)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node);
    /*
     * Permit: Success, Unschedulable, or Wait with *timeout_ns set. Scheduling thread,
     * outside the RCU read section; never waits itself (the binder waits on a Wait).
     */
    int (*permit)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                  int64_t *timeout_ns, struct ks_status *st);
    /*
     * PreBind / Bind / PostBind: a binder thread, outside the RCU read section, one binding
     * cycle per pod at a time (binders run different pods' cycles in parallel). PreBind and
     * Bind may block on the API server (VolumeBinding's PV/PVC updates, DefaultBinder's
     * Binding POST): that holds up only this binder. PreBind may instead return Wait after
     * handing cs->bind_wait to whatever ends the wait (framework_types.h): the binding is
     * parked, no thread blocks. Bind returns Skip to let the next binder plugin act.
     * PostBind is informational and should not block.
     */
    int (*pre_bind)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                    struct ks_status *st);
    int (*bind)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                struct ks_status *st);
    void (*post_bind)(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node);

    /*
     * Ops below were appended after the extension points; the table only grows here.
     *
     * state_clone - copy this plugin's cycle-state data @src (its cs->slot[] entry) into
     * @arena for a dry run that changes it through add_pod / remove_pod (preemption, pods
     * nominated to a node), as upstream's StateData.Clone(). *dst receives the copy (NULL
     * stays NULL). NULL op: the plugin never changes its data after PreFilter, and the
     * clone shares @src. Returns 0 or -ENOMEM. Context: scheduling thread, inside the RCU
     * read section; may allocate (from @arena).
     */
    int (*state_clone)(void *self, const void *src, struct ks_arena *arena, void **dst);

    /*
     * Appended with the scheduling queue, within ABI version 1 (no plugin ABI has been
     * published yet); the next addition after a release bumps KS_PLUGIN_ABI_VERSION and is
     * read only from plugins built for it.
     */

    /*
     * events_to_register - EnqueueExtensions.EventsToRegister: the cluster events that may
     * make a pod this plugin rejected schedulable, each with an optional QueueingHint
     * (queue_types.h). Writes at most @max registrations into @out and returns how many
     * there are (more than @max: called again with room for all). NULL op: the plugin
     * registers nothing, and a pod it rejects is retried on every event (upstream's
     * default for plugins without EnqueueExtensions). Context: start-up, once per profile,
     * with the instance init made; may not block.
     */
    uint32_t (*events_to_register)(void *self, struct ks_event_registration *out, uint32_t max);

    /*
     * pre_enqueue - PreEnqueue: may @pod enter the active queue? Success, or a rejection
     * (UnschedulableAndUnresolvable) with the reason in @st: the pod then waits among the
     * unschedulable pods until an event this plugin registers (events_to_register) lets it
     * through. Context: the thread adding the pod to the queue (event intake, a binder
     * requeueing it, the flushers), possibly under one of the queue's locks, on several
     * threads at once: pure, no allocation, no blocking, no queue calls.
     */
    int (*pre_enqueue)(void *self, const struct ks_pod *pod, struct ks_status *st);

    /*
     * Appended with the batched Filter and Score passes, within ABI version 1. Both are
     * optional speed-ups of filter and score: a plugin without them is called per node.
     * KS_FILTER_NODES / KS_SCORE_NODES (plugin_batch.h) define them from the per-node op.
     *
     * filter_nodes - Filter over a block of nodes. For every i < @n with @ok[i] set: what
     * filter() gives for @nodes[i]; a node that is not Success gets @ok[i] = 0 and @st[i]
     * filled as filter() fills it, with st[i].code its code and st[i].plugin KS_NO_PLUGIN
     * (the framework stamps the plugin). Nodes with @ok[i] clear are not looked at.
     * Returns how many it cleared.
     * Context: worker threads, as filter.
     */
    uint32_t (*filter_nodes)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                             const struct ks_node_snap *const *nodes, uint32_t n, uint8_t *ok,
                             struct ks_status *st);
    /*
     * score_nodes - Score over a block of nodes: @out[i] = the score score() gives for
     * @nodes[i]. Returns Success, or anything else when score() is not Success for some
     * node: the framework then calls score() per node to report it. Context: as score.
     */
    int (*score_nodes)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_node_snap *const *nodes, uint32_t n, int64_t *out);

    /*
     * Appended with the signature index, within ABI version 1.
     *
     * sign - SignaturePlugin: append to @sig (ksched/sign.h) everything of @pod that this
     * plugin's Filter and Score read, and return KS_SUCCESS; or return KS_SKIP when they
     * read more than the pod and the node (the pod is then unsignable: its cycles take the
     * per-node path). @cs holds what the pod's PreFilter stored (PreScore has not run), so
     * a plugin may sign the state its PreFilter computed, or decline when that state
     * depends on other pods (existing pods' anti-affinity matching it, spread counts).
     *
     * By returning KS_SUCCESS the plugin promises, for every pod with the same bytes and
     * the same PreFilter Skip: its Filter status and raw Score on a node depend only on
     * those bytes and that node's record (struct ks_node_snap) in one snapshot, and on the
     * snapshot's node count; its PreScore does not read the nodes it is given and returns
     * the same code; its NormalizeScore, if any, gives equal scores to nodes whose raw
     * scores are equal. A plugin at PreFilter, Filter, PreScore or Score without this op
     * makes every pod of its profile unsignable.
     * Context: scheduling thread, inside the RCU read section; no allocation, no locks.
     */
    int (*sign)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig);

    /*
     * Appended with Dynamic Resource Allocation, within ABI version 1.
     *
     * explain_filter - for `ksched schedule --explain`: an account of why @node failed this
     * plugin's Filter for @pod with @st that says more than @st's reasons (DynamicResources:
     * which claim and request the node cannot serve, and why), written into @buf (at most
     * @len bytes, NUL included). Returns 1 when it wrote one, 0 when the reasons say all.
     * It changes nothing that Filter answers or that messages are built from. NULL op: the
     * reasons say all. Context: scheduling thread, inside the RCU read section, during the
     * attempt callback (ks_framework_explain_status); may be slow; no allocation.
     */
    int (*explain_filter)(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_node_snap *node, const struct ks_status *st, char *buf, size_t len);

    /*
     * Appended with workload-aware preemption, within ABI version 1.
     *
     * pod_group_post_filter - PodGroupPostFilter (a plugin enabled at PostFilter): the
     * PodGroup cycle of @g failed Unschedulable. Success when room was made for the group
     * (g->nominated filled), or a rejection; either may carry a message in @st, which the
     * group's status gets appended. Context: scheduling thread, outside the RCU read
     * section; may allocate, evict and nominate.
     */
    int (*pod_group_post_filter)(void *self, struct ks_pod_group_preemptor *g, struct ks_status *st);
};

#endif
