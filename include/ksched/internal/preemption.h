/*
 * preemption.h - the preemption evaluator that PostFilter plugins share.
 *
 * Mirrors pkg/scheduler/framework/preemption/preemption.go (Evaluator: DryRunPreemption,
 * SelectCandidate, pickOneNodeForPreemption, prepareCandidate, getLowerPriorityNominatedPods),
 * the filter pass of framework/runtime's RunFilterPluginsWithNominatedPods, and
 * pkg/scheduler/util/utils.go (GetPodStartTime, MoreImportantPod, GetEarliestPodStartTime).
 * A preemption plugin supplies the per-node victim search (upstream's SelectVictimsOnNode)
 * as a callback, the way upstream's plugins implement preemption.Interface.
 *
 * Context: every function here runs on the scheduling thread during PostFilter, inside the
 * RCU read section that holds the snapshot the node records come from. They allocate (dry
 * runs copy node records and cycle states), so none is for the Filter or Score hot path.
 */
#ifndef KSCHED_PREEMPTION_H
#define KSCHED_PREEMPTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/arena.h"
#include "ksched/cache_types.h"
#include "ksched/framework.h"
#include "ksched/workload_types.h"

struct ks_nominator;
struct ks_preempt_memo;
struct ks_preempting;

/* ---- pod order (util/utils.go) --------------------------------------------------------------- */

/* ks_preempt_pod_start_time - GetPodStartTime: status.startTime, or @now_ns for a pod that has none. */
int64_t ks_preempt_pod_start_time(const struct ks_pod *pod, int64_t now_ns);

/* ks_preempt_more_important - MoreImportantPod: higher priority, or equal priority and started earlier. */
bool ks_preempt_more_important(const struct ks_pod *a, const struct ks_pod *b, int64_t now_ns);

/*
 * ks_preempt_sort - order @pods most important first. Stable (what Go's sort.Slice does for
 * the up-to-twelve victims of a typical node), so equally important pods keep their order.
 */
void ks_preempt_sort(const struct ks_pod **pods, uint32_t n, int64_t now_ns);

/*
 * ks_preempt_earliest_start - GetEarliestPodStartTime: the earliest start time among the
 * highest-priority pods of @pods. INT64_MIN when @n is 0.
 */
int64_t ks_preempt_earliest_start(const struct ks_pod *const *pods, uint32_t n, int64_t now_ns);

/*
 * ks_preempt_now_matters - whether the order of @node's pods below @priority depends on
 * "now": some have a start time and some have none.
 */
bool ks_preempt_now_matters(const struct ks_node_snap *node, int32_t priority);

/* ---- the evaluator ------------------------------------------------------------------------------ */

/* What a preemption attempt works with. */
struct ks_preemptor {
    struct ks_framework *fw;
    struct ks_cycle_state *cs;        /* the cycle's state after PreFilter; dry runs work on clones */
    const struct ks_pod *pod;         /* the preemptor */
    struct ks_nominator *nominator;   /* pods nominated to nodes; NULL for none */
    const struct ks_evictor *evictor; /* how victims leave; NULL or no evict op: they are not evicted */
    const char *plugin;               /* the plugin's name (rejecting pods waiting on Permit) */
    uint32_t npdbs;
    const struct ks_pod_disruption_budget *const *pdbs;
    int64_t now_ns; /* "now" for pods without a start time */
    /* verdicts remembered for this preemptor's key (ks_preempt_memo_begin succeeded), NULL: none */
    struct ks_preempt_memo *memo;
    /* asynchronous preemption's tracker when it is on and the evictor has evict_async, else NULL */
    struct ks_preempting *preempting;
    /* the index's candidate trees (framework deps), for a preemptor ks_preempt_indexed may serve; NULL: none
     */
    const struct ks_preempt_index *index;
};

/* A node where preemption makes room, and the pods it evicts (upstream's Candidate). */
struct ks_preempt_candidate {
    const struct ks_node_snap *node; /* the snapshot's record */
    uint32_t nvictims;
    const struct ks_pod **victims; /* most important first */
    int64_t npdb_violations;
};

/*
 * One node's dry run, as SelectVictimsOnNode receives it: a copy of the cycle state to
 * change with ks_fw_run_remove_pod / ks_fw_run_add_pod, scratch memory that is reset after
 * the node, and the pods nominated to the node that the preemptor must leave room for.
 */
struct ks_preempt_trial {
    const struct ks_node_snap *node; /* the snapshot's record */
    struct ks_cycle_state *state;    /* this node's clone of the cycle state */
    struct ks_cycle_state *scratch_state;
    struct ks_arena *arena; /* scratch: node records derived here live until the next node */
    uint32_t nnominated;
    const struct ks_pod *const *nominated; /* priority >= the preemptor's, the preemptor excluded */
};

/*
 * ks_preempt_trial_filter - RunFilterPluginsWithNominatedPods on @node (the trial's record
 * or one derived from it) with the trial's state: when pods are nominated to the node, the
 * Filter plugins run first as if they were there (a clone of the state with their AddPod,
 * a record derived with them), and if that passes, again without them. Returns the code,
 * with @st filled on failure.
 */
int ks_preempt_trial_filter(const struct ks_preemptor *p, struct ks_preempt_trial *t,
                            const struct ks_node_snap *node, struct ks_status *st);

/*
 * The plugin's victim search on one node (SelectVictimsOnNode). Returns KS_SUCCESS with
 * *out filled (victims allocated in @keep, which outlives the dry run), or a code with @st
 * filled: a rejection when the node cannot help, KS_ERROR when a plugin failed.
 */
typedef int (*ks_select_victims_fn)(void *ctx, const struct ks_preemptor *p, struct ks_preempt_trial *t,
                                    struct ks_arena *keep, struct ks_preempt_candidate *out,
                                    struct ks_status *st);

/*
 * ks_preempt_select_victims - DefaultPreemption's SelectVictimsOnNode (a
 * ks_select_victims_fn; @ctx unused): every pod of lower priority than the preemptor is a
 * potential victim; none is UnschedulableAndUnresolvable "No preemption victims found for
 * incoming pod". All are removed (RemovePod on the trial's state) and the pod must then
 * pass ks_preempt_trial_filter(), else that status is the answer. The potential victims
 * are then reprieved one by one, those whose eviction would violate a PodDisruptionBudget
 * first (filterPodsWithPDBViolation: a PDB of the pod's namespace whose non-empty selector
 * matches it and that does not list it as disrupted loses one allowed disruption; below
 * zero it is violated), each group most important first: a pod stays when the preemptor
 * still fits with it (AddPod, filter), else it is a victim (RemovePod again). The victims
 * come out most important first, with the number of PDB-violating ones.
 */
int ks_preempt_select_victims(void *ctx, const struct ks_preemptor *p, struct ks_preempt_trial *t,
                              struct ks_arena *keep, struct ks_preempt_candidate *out, struct ks_status *st);

/* The outcome of ks_preempt_dry_run(); everything lives in its arena. */
struct ks_preempt_dry_run {
    uint32_t ncandidates;
    struct ks_preempt_candidate *candidates; /* without PDB violations first, then with */
    uint32_t nfailed;
    const struct ks_node_snap **failed; /* nodes that gave no candidate, in dry-run order */
    struct ks_status *failed_status;    /* why, parallel to failed */
    struct ks_arena arena;
};

/*
 * ks_preempt_dry_run - DryRunPreemption over the @n @potential nodes starting at @offset
 * (wrapping), one node after another (upstream's run with parallelism 1): each node gets a
 * fresh clone of the cycle state and @select's verdict; a node that yields no victims is
 * an error ("expected at least one victim pod on node ..."). Stops once a candidate without
 * PDB violations exists and @num_candidates candidates were found; each of the two
 * candidate lists keeps at most @num_candidates. @out must be zeroed; free it with
 * ks_preempt_dry_run_free() whatever the result. Returns 0 or -ENOMEM.
 */
int ks_preempt_dry_run(const struct ks_preemptor *p, const struct ks_node_snap *const *potential, uint32_t n,
                       uint32_t offset, uint32_t num_candidates, ks_select_victims_fn select, void *ctx,
                       struct ks_preempt_dry_run *out);

void ks_preempt_dry_run_free(struct ks_preempt_dry_run *r);

/*
 * ks_preempt_indexed - the dry run and the choice of SelectCandidate at once, from the
 * signature index (engine/preemption_indexed.c): for a grouped diagnosis @d of this cycle
 * with @npotential Unschedulable nodes, the dry run from @offset with @num_candidates as
 * ks_preempt_dry_run() would make it, and only its chosen candidate, into @out (zeroed;
 * free it with ks_preempt_dry_run_free() whatever the result). For a preemptor with
 * p->index set only when no PDB exists and the preemptor is not nominated (the memo's
 * conditions). Returns 0; -ENOENT when the index cannot answer exactly (the caller runs
 * the dry run); -ENOMEM.
 */
int ks_preempt_indexed(const struct ks_preemptor *p, const struct ks_diagnosis *d, uint32_t npotential,
                       uint32_t offset, uint32_t num_candidates, ks_select_victims_fn select, void *ctx,
                       struct ks_preempt_dry_run *out);

/*
 * ks_preempt_dry_run_error - the errors of a dry run as one message, as upstream's error
 * aggregate prints them ("msg", or "[msg1, msg2]" without repeats), into @buf. Returns
 * false when no node failed with KS_ERROR.
 */
bool ks_preempt_dry_run_error(const struct ks_preempt_dry_run *r, char *buf, size_t len);

/*
 * The dry-run memo (engine/preemption_memo.c): SelectVictimsOnNode's verdict per node for
 * preemptors of one key, given back while the node's record and nominations are those it
 * was computed with. Owned by a preemption plugin; scheduling thread only.
 *   ks_preempt_memo_begin - the key of @pod (its signature with @cs's skips, its priority,
 *     @fw): true when the memo may serve its dry run over @nodes nodes (the memo is emptied
 *     when the key differs from the last one); false when the pod is not signable or out
 *     of memory. The caller also leaves the memo out when PDBs exist or the pod is
 *     nominated somewhere (its own nomination is not weighed on its node).
 *   ks_preempt_memo_get - the verdict on @node with @nominations (the node's
 *     ks_nominator_node_version): a code with @c or @st, or -ENOENT when it is not known.
 *     @c's victims are the memo's own, valid until its next ks_preempt_memo_begin (the
 *     dry run's puts for other nodes leave them alone).
 *   ks_preempt_memo_put - remember a verdict (errors, verdicts that depend on "now" and
 *     long victim lists are not).
 */
int ks_preempt_memo_create(struct ks_preempt_memo **out);
void ks_preempt_memo_destroy(struct ks_preempt_memo *m);
bool ks_preempt_memo_begin(struct ks_preempt_memo *m, const struct ks_framework *fw,
                           const struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t nodes);
int ks_preempt_memo_get(struct ks_preempt_memo *m, const struct ks_node_snap *node, uint64_t nominations,
                        struct ks_preempt_candidate *c, struct ks_status *st);
void ks_preempt_memo_put(struct ks_preempt_memo *m, const struct ks_preemptor *p,
                         const struct ks_node_snap *node, uint64_t nominations, int code,
                         const struct ks_preempt_candidate *c, const struct ks_status *st);
/* ks_preempt_memo_counts - verdicts given back, and asked for but not known, so far. */
void ks_preempt_memo_counts(const struct ks_preempt_memo *m, uint64_t *hits, uint64_t *misses);

/*
 * Asynchronous preemption (engine/preemption_async.c): the preemptors whose victims' API
 * calls are under way.
 *   ks_preempting_create - an empty tracker whose completions activate pods through
 *     @activator (copied; NULL or no op: none). 0 or -ENOMEM.
 *   ks_preempting_close - the owner lets go: the tracker is freed once no call is under way,
 *     and completions after this activate nothing. Accepts NULL.
 *   ks_preempting_start - hand the @n victims to @ev->evict_async for @preemptor, which is
 *     in the tracker until the calls are done; then it leaves, and is activated if they
 *     failed, or if PreEnqueue holds it back. A negative errno when nothing could be sent
 *     (the preemptor is activated then too). Scheduling thread.
 *   ks_preempting_has - whether @pod's preemption calls are under way (PreEnqueue). Any thread.
 *   ks_preempting_counts - preemptions under way, started and failed so far.
 */
int ks_preempting_create(const struct ks_activator *activator, struct ks_preempting **out);
void ks_preempting_close(struct ks_preempting *t);
int ks_preempting_start(struct ks_preempting *t, const struct ks_evictor *ev, const struct ks_pod *preemptor,
                        uint32_t node, const struct ks_pod *const *victims, uint32_t n);
bool ks_preempting_has(struct ks_preempting *t, const struct ks_pod *pod);
void ks_preempting_counts(struct ks_preempting *t, uint32_t *running, uint64_t *started, uint64_t *failed);

/*
 * ks_preempt_select - SelectCandidate / pickOneNodeForPreemption: fewest PDB violations,
 * then the lowest highest-victim priority, the smallest sum of victim priorities (each
 * shifted by 2^31 so negative priorities count), the fewest victims, the latest start of
 * the highest-priority victims, then the first. NULL when @n is 0.
 */
const struct ks_preempt_candidate *ks_preempt_select(const struct ks_preempt_candidate *c, uint32_t n,
                                                     int64_t now_ns);

/*
 * ks_preempt_prepare - prepareCandidate: evict every victim not already being deleted
 * (a victim waiting on Permit is rejected instead, as upstream), then drop the nominations
 * of lower-priority pods to the candidate's node. Returns KS_SUCCESS, or KS_ERROR with @st
 * filled when an eviction failed (the victims before it are gone). With p->preempting
 * (prepareCandidateAsync), the victims to evict go to ks_preempting_start instead, and the
 * result does not wait for their calls.
 */
int ks_preempt_prepare(const struct ks_preemptor *p, const struct ks_preempt_candidate *c,
                       struct ks_status *st);

/*
 * ks_preempt_fit_message - the FitError message of a preemption that found no candidate:
 * "0/@nall nodes are available: <histogram>." over the dry run's failures, every other node
 * counted as "Preemption is not helpful for scheduling". NULL @r: no node was tried.
 * Returns a malloc'd string, NULL when out of memory.
 */
char *ks_preempt_fit_message(const struct ks_preempt_dry_run *r, uint32_t nall);

/*
 * ks_preempt_no_victims_message - the same message for a dry run over @npotential nodes
 * none of which holds a pod of lower priority: each failed with "No preemption victims
 * found for incoming pod" (SelectVictimsOnNode's answer before any Filter), the other
 * nodes of @nall "Preemption is not helpful for scheduling". Malloc'd, NULL when out of memory.
 */
char *ks_preempt_no_victims_message(uint32_t npotential, uint32_t nall);

/*
 * ks_preempt_pod_terminating - podTerminatingByPreemption: @p is being deleted and carries
 * the DisruptionTarget condition (True, reason PreemptionByScheduler) preemption sets.
 */
bool ks_preempt_pod_terminating(const struct ks_pod *p);

/*
 * ks_preempt_pdb_take - one step of filterPodsWithPDBViolation: evicting @pod costs each PDB
 * of its namespace whose non-empty selector matches it, unless the PDB lists it as disrupted,
 * one of @allowed (parallel to p->pdbs, started at their disruptionsAllowed). True when a
 * PDB went below zero: the eviction would violate it.
 */
bool ks_preempt_pdb_take(const struct ks_preemptor *p, const struct ks_pod *pod, int32_t *allowed);

/* ---- workload-aware preemption (KEP-5710) ---------------------------------------------------------- */

/*
 * What PodGroupPostFilter is given when a PodGroup's cycle failed Unschedulable (upstream's
 * PodGroupInfo with its PodGroupSchedulingFunc): the group, the members of the cycle in their
 * order, and two what-ifs the engine runs on the cluster as the cache holds it, the pods
 * hidden with ks_cache_hide_pod() left out.
 */
struct ks_pod_group_preemptor {
    uint32_t namespace_id;
    const char *name;                     /* the PodGroup */
    const struct ks_pod_group_spec *spec; /* its spec */
    int32_t priority;                     /* its priority, every member's */
    uint32_t nmembers;
    const struct ks_pod *const *members;
    /*
     * schedule - the group's algorithm (members in order, each placed with the ones before it
     * assumed, PlacementFeasible after each): KS_SUCCESS with nodes[i] the node of member i
     * (KS_ID_NONE: not placed), or the group's rejection in @st. Nothing stays assumed.
     */
    int (*schedule)(void *ctx, uint32_t *nodes, struct ks_status *st);
    /*
     * Set by a successful schedule: every placed member is signable (ks_fw_sign), so its
     * Filter on a node reads that node alone - a pod put back elsewhere cannot change it, and
     * a refit need only run the members on the nodes that changed.
     */
    bool node_local;
    /*
     * refit - the members with nodes[i] set (KS_ID_NONE: left out), in order, each on its node
     * with the ones before it assumed there: KS_SUCCESS when every one passes Filter (the pods nominated to
     * the node counted), KS_UNSCHEDULABLE when one does not, another code with @st. Nothing stays assumed.
     */
    int (*refit)(void *ctx, const uint32_t *nodes, struct ks_status *st);
    void *ctx;
    uint32_t *nominated; /* out, per member: the node it is nominated to, KS_ID_EMPTY when none */
    uint32_t nvictims;   /* out: the pods evicted */
};

/*
 * ks_preempt_pod_group - PodGroupEvaluator.Preempt over the whole cluster (the cache and the
 * pod groups of @p->fw's dependencies), with @p's nominator, evictor and PDBs (@p->pod: the
 * group's first member, @p->cs unused):
 *   - not eligible: a member with preemptionPolicy Never (Unschedulable "not eligible due to
 *     preemptionPolicy=Never."); a member nominated to a node where a pod of lower priority is
 *     terminating because of preemption: the earlier preemption is under way (Success "ongoing
 *     preemption on nominated nodes", every member keeping its nomination);
 *   - victims are units: a pod, or every scheduled pod of a PodGroup whose disruptionMode is All;
 *     a unit's priority is its PodGroup's when the pod belongs to one that exists, else the pod's.
 *     Units of lower priority than the group are the potential victims (none: Unschedulable
 *     "No preemption victims found for incoming preemptor");
 *   - all of them are hidden, and g->schedule must then succeed (else its status);
 *   - units are ordered most important first (priority, a pod of a group before a lone pod,
 *     more pods, earlier start, uid), those violating a PDB first (a unit violates when one of
 *     its pods does); each is put back and kept when g->refit still succeeds, else it is a victim;
 *   - the victims are evicted (a victim waiting on Permit is rejected), each member with a node
 *     nominated to it: Success "found a placement for podgroup, preempting N victims".
 * Every hidden pod is back in the cache when it returns. Context: scheduling thread, outside
 * the RCU read section.
 */
int ks_preempt_pod_group(const struct ks_preemptor *p, struct ks_pod_group_preemptor *g,
                         struct ks_status *st);

/* Reasons of nodes where preemption cannot help, and of nodes without lower-priority pods. */
#define KS_PREEMPT_NOT_HELPFUL "Preemption is not helpful for scheduling"
#define KS_PREEMPT_NO_VICTIMS  "No preemption victims found for incoming pod"

#endif
