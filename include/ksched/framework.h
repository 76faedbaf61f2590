/*
 * framework.h - one scheduling framework per profile: plugin instances and the Run
 * functions of every extension point.
 *
 * Mirrors pkg/scheduler/framework/runtime/framework.go. A framework is built once from a
 * resolved profile (config.h): each plugin gets an instance (its init op) and a slot
 * index; per extension point the plugins that implement it are kept in an array in
 * configuration order, with score weights, so a cycle never compares names. Plugins that
 * a profile lists at a point but whose ops table has no op there are skipped.
 *
 * Status merging follows upstream: the first non-Success status of PreFilter, Filter,
 * Reserve, Permit (but Wait), PreBind ends the run; Skip from PreFilter / PreScore
 * removes that plugin from this cycle's Filter / Score (cs->skip_filter / skip_score);
 * PreFilter results are intersected; Unreserve runs in reverse order; the first Bind
 * plugin that does not return Skip decides.
 *
 * Context: Run functions are called by the scheduling thread unless stated otherwise;
 * ks_fw_run_filter() and ks_fw_score_node() are called by worker threads in parallel and
 * neither allocate nor lock. Binding functions run on binder threads.
 */
#ifndef KSCHED_FRAMEWORK_H
#define KSCHED_FRAMEWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/base/error.h"
#include "ksched/config_types.h"
#include "ksched/framework_types.h"
#include "ksched/queue_types.h"

struct ks_volume_api;
struct ks_dra_api;
struct ks_pod_groups;
struct ks_pod_group_preemptor;

/* Where Bind sends decisions (the in-process cache, or the API server). */
struct ks_binder_backend {
    /* bind - bind @pod to @node; 0, or a negative errno with @st filled. Binder threads. */
    int (*bind)(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st);
    void *ctx;
};

/*
 * How preemption evicts a victim (in process: remove it from the cache and report it; with
 * an API server: DELETE the pod). 0, or a negative errno. Scheduling thread.
 */
struct ks_evictor {
    int (*evict)(void *ctx, const struct ks_pod *victim, const struct ks_pod *preemptor, uint32_t node);
    void *ctx;
    /*
     * evict_async - asynchronous preemption (SchedulerAsyncPreemption): make the @n victims'
     * API calls (each one's DisruptionTarget condition, then its deletion, in order) off the
     * scheduling cycle, then call @done(@done_ctx, ok) from whatever thread made them (ok
     * false when a call failed; the victims after it are left alone). Returns 0 (@done will
     * be called), or a negative errno (it will not). Holds references to the pods it keeps.
     * NULL: evict() per victim within the cycle. Scheduling thread.
     */
    int (*evict_async)(void *ctx, const struct ks_pod *preemptor, uint32_t node,
                       const struct ks_pod *const *victims, uint32_t n, void (*done)(void *done_ctx, bool ok),
                       void *done_ctx);
};

/*
 * Activate (framework.Handle's Activate): move @pod from the unschedulable pods or backoffQ
 * to activeQ, running PreEnqueue again; nothing when it is elsewhere. With @gated_only,
 * only a pod that PreEnqueue holds back is moved. Any thread.
 */
struct ks_activator {
    void (*activate)(void *ctx, const struct ks_pod *pod, bool gated_only);
    void *ctx;
};

/*
 * The signature index's candidate trees, for the preemption evaluator
 * (engine/preemption_indexed.c): @tree gives the candidate tree (ksched/internal/preempt_tree.h) of
 * the index class a grouped diagnosis @d of this cycle came from, sized to d->nall, and
 * the positions changed since it was last read - *@nchanged of them in *@changed, or
 * KS_INDEX_REBUILD (ksched/internal/index.h) for every position - which the caller sets before
 * reading the tree. NULL when @d did not come from the index or out of memory. Scheduling
 * thread, inside the cycle's RCU read section.
 */
struct ks_preempt_tree;
struct ks_diagnosis;
struct ks_preempt_index {
    struct ks_preempt_tree *(*tree)(void *ctx, const struct ks_diagnosis *d, const uint32_t **changed,
                                    int64_t *nchanged);
    void (*answered)(void *ctx); /* the tree answered a preemption (a counter) */
    void *ctx;
};

/*
 * Where a plugin delivers the cluster events its own in-process changes cause (the
 * ResourceClaims DynamicResources writes and deallocates without an API server), as an
 * informer would deliver the server's: the queue moves the pods they may help. Any thread,
 * holding none of the plugin's locks. @old_obj and @new_obj are read during the call only.
 */
struct ks_event_sink {
    void (*emit)(void *ctx, enum ks_event_resource resource, const void *old_obj, const void *new_obj);
    void *ctx;
};

/* What a framework needs from the rest of the scheduler. */
struct ks_framework_deps {
    struct ks_binder_backend binder;
    struct ks_evictor evictor;
    struct ks_cache *cache;           /* for plugins that read cluster state beyond the snapshot */
    struct ks_nominator *nominator;   /* pods nominated by preemption (ksched/internal/nominator.h) */
    const struct ks_objects *objects; /* PVs, PVCs, storage classes, namespaces, PDBs... (may be NULL) */
    /* volume binding through an API server (ksched/volume_api.h); NULL: in process */
    const struct ks_volume_api *volume_api;
    /* DynamicResources' claim writes through an API server (ksched/internal/dra_api.h); NULL: in process */
    const struct ks_dra_api *dra_api;
    /* where the Run functions record (ksched/internal/metrics_sched.h); NULL: nowhere */
    struct ks_sched_metrics *metrics;
    struct ks_event_sink events;  /* emit NULL: not delivered */
    struct ks_pod_groups *groups; /* the pod groups (ksched/internal/pod_groups.h); NULL: none known */
    /*
     * Plugins keep no answer from one cycle for another (the scheduler's opts.no_index):
     * every cycle computes afresh, the reference the memos are tested against.
     */
    bool no_memo;
    struct ks_activator activator;         /* activate NULL: not available */
    struct ks_preempt_index preempt_index; /* tree NULL: no index (opts.no_index) */
};

struct ks_framework;
struct ks_sched_metrics;

/*
 * ks_framework_create - instantiate every plugin of @prof. Returns 0 and *out, or a
 * negative errno with @err naming the plugin whose init failed.
 */
int ks_framework_create(const struct ks_profile *prof, const struct ks_framework_deps *deps,
                        struct ks_framework **out, struct ks_error *err);

/* ks_framework_destroy - destroy every instance. No cycle may be running. Accepts NULL. */
void ks_framework_destroy(struct ks_framework *fw);

/* Introspection. */
const struct ks_profile *ks_framework_profile(const struct ks_framework *fw);
uint32_t ks_framework_nplugins(const struct ks_framework *fw);
const char *ks_framework_plugin_name(const struct ks_framework *fw, uint32_t slot);
const struct ks_framework_deps *ks_framework_deps(const struct ks_framework *fw);
/* Score plugins in run order: count, and for each its slot and weight. */
uint32_t ks_framework_nscore(const struct ks_framework *fw);
uint32_t ks_framework_score_slot(const struct ks_framework *fw, uint32_t i);
int32_t ks_framework_score_weight(const struct ks_framework *fw, uint32_t i);
bool ks_framework_has_filter(const struct ks_framework *fw);                     /* any Filter plugin */
bool ks_framework_filters_with(const struct ks_framework *fw, const char *name); /* plugin @name at Filter */

/*
 * ks_framework_explain_status - @st's reasons joined by ", " (its code's name when it has
 * none) into @buf, followed by ": " and the account of the plugin that returned it when that
 * plugin explains its Filter (ks_plugin.explain_filter) for @node. For --explain, during an
 * attempt callback, with the attempt's cycle state. At most @len bytes, NUL included.
 * Returns whether the plugin's account was appended.
 */
bool ks_framework_explain_status(const struct ks_framework *fw, const struct ks_cycle_state *cs,
                                 const struct ks_pod *pod, const struct ks_node_snap *node,
                                 const struct ks_status *st, char *buf, size_t len);
bool ks_framework_has_score(const struct ks_framework *fw);

/*
 * ks_fw_sign - @pod's signature (ksched/sign.h) into @sig (its len reset first): KS_SUCCESS
 * when every plugin the profile runs at PreFilter, Filter, PreScore or Score signed it,
 * after the pod's PreFilter filled @cs; KS_SKIP when one has no sign op, declined, or the
 * buffer was too small. Scheduling thread, inside the RCU read section; no allocation.
 */
struct ks_sign;
int ks_fw_sign(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
               struct ks_sign *sig);

/* Cycle state. init once; reset between cycles (keeps the arena's memory); clone for dry runs. */
void ks_cycle_state_init(struct ks_cycle_state *cs);
void ks_cycle_state_reset(struct ks_cycle_state *cs);
void ks_cycle_state_destroy(struct ks_cycle_state *cs);
/*
 * ks_cycle_state_clone - @dst (initialised) becomes a copy of @src for a dry run: skip
 * masks and seed copied, each plugin's data copied by its state_clone op (shared when the
 * plugin has none). @dst's arena is reset first; shared data lives in @src's arena, so
 * @src must not be reset while @dst is in use. Returns 0 or -ENOMEM. Scheduling thread.
 */
int ks_cycle_state_clone(struct ks_framework *fw, const struct ks_cycle_state *src,
                         struct ks_cycle_state *dst);

/* QueueSort: the profile's queue-sort plugin. Any thread. */
bool ks_fw_less(const struct ks_framework *fw, const struct ks_queued_pod *a, const struct ks_queued_pod *b);

/* PreFilter: run every PreFilter plugin; intersect their results into @res (all=true when none narrows). */
int ks_fw_run_pre_filter(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         struct ks_pre_filter_result *res, struct ks_status *st);

/* Filter: every non-skipped Filter plugin on @node in order; stops at the first failure (st->plugin set).
 * Workers. */
int ks_fw_run_filter(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, struct ks_status *st);

/* PreFilterExtensions over every PreFilter plugin that has them (nominated pods, preemption dry runs). */
int ks_fw_run_add_pod(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st);
int ks_fw_run_remove_pod(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st);

/* PostFilter: plugins in order until one returns Success (or a non-Unschedulable error). */
int ks_fw_run_post_filter(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                          struct ks_status *st);

/* PreScore over the feasible nodes. */
/*
 * ks_fw_run_pod_group_post_filter - RunPodGroupPostFilterPlugins: the profile's PostFilter
 * plugins that have a PodGroupPostFilter, in order, until one succeeds, one answers
 * UnschedulableAndUnresolvable or an error; the rejections' reasons are gathered. KS_SKIP
 * when the profile has none.
 */
int ks_fw_run_pod_group_post_filter(struct ks_framework *fw, struct ks_pod_group_preemptor *g,
                                    struct ks_status *st);
int ks_fw_run_pre_score(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                        const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st);

/*
 * ks_fw_score_node - every non-skipped Score plugin's raw score of @node into
 * scores[i] (i in score-plugin order; skipped plugins get 0). Workers.
 */
int ks_fw_score_node(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, int64_t *scores, struct ks_status *st);

/*
 * ks_fw_normalize_scores - NormalizeScore for each score plugin over the column
 * scores[node * nscore + i], checks each is within [0, KS_MAX_NODE_SCORE], multiplies by
 * the weights and sums each node's total into totals[node].
 */
int ks_fw_normalize_scores(struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *const *nodes, uint32_t n, int64_t *scores,
                           int64_t *totals, struct ks_status *st);

int ks_fw_run_reserve(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      uint32_t node, struct ks_status *st);
void ks_fw_run_unreserve(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         uint32_t node);

/*
 * Permit: Success, a rejection, or KS_WAIT when some plugin asked to wait (the pod is
 * then in the framework's waiting map with the shortest timeout). ks_fw_wait_on_permit()
 * blocks a binder thread until every waiting plugin allowed it (Success), one rejected it,
 * or the timeout passed (Unschedulable). allow/reject may come from any thread.
 */
int ks_fw_run_permit(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     uint32_t node, struct ks_status *st);
int ks_fw_wait_on_permit(struct ks_framework *fw, const struct ks_pod *pod, struct ks_status *st);
int ks_fw_allow(struct ks_framework *fw, const struct ks_pod *pod, const char *plugin);
int ks_fw_reject(struct ks_framework *fw, const struct ks_pod *pod, const char *plugin, const char *msg);
/* ks_fw_waiting_count - pods waiting on Permit. */
uint32_t ks_fw_waiting_count(struct ks_framework *fw);

/*
 * ks_fw_undecided_count - pods waiting on Permit that no allow, reject or timeout has
 * decided yet (a decided pod's binder may not have taken the decision yet). Any thread;
 * takes the framework's wait lock (KS_LOCK_PERMIT_WAIT).
 */
uint32_t ks_fw_undecided_count(struct ks_framework *fw);

/*
 * PreBind: every PreBind plugin in order; the first failure ends the run (rejections keep
 * their code, other failures become Error "running PreBind plugin %q: <message>"). A
 * plugin that returns KS_WAIT while cs->bind_wait is set (framework_types.h) stops the run
 * with KS_WAIT: the caller parks the binding until ks_bind_wait_done(), then calls
 * ks_fw_resume_pre_bind() with what it was given. KS_WAIT without cs->bind_wait is an
 * error. Binder threads.
 */
int ks_fw_run_pre_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                       uint32_t node, struct ks_status *st);
/*
 * ks_fw_resume_pre_bind - finish a PreBind run that returned KS_WAIT: @code and @result
 * (NULL: no reasons) are the waiting plugin's outcome, handled as if its op had returned
 * them; on Success the remaining PreBind plugins run. Same result as ks_fw_run_pre_bind().
 * Binder threads.
 */
int ks_fw_resume_pre_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                          uint32_t node, int code, const struct ks_status *result, struct ks_status *st);
int ks_fw_run_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                   uint32_t node, struct ks_status *st);
void ks_fw_run_post_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         uint32_t node);

/* ks_status_set - fill @st with @code and one reason (interned here: not for the hot path). */
int ks_status_set(struct ks_status *st, enum ks_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ks_code_name - "Success", "Unschedulable", ... */
const char *ks_code_name(enum ks_code code);

/*
 * Out-of-tree plugins: ks_registry_load() dlopens a shared object exporting
 * `const struct ks_plugin *ks_plugin_entry(void)`, checks its ABI version and that its
 * name is not taken, and adds it to the registry that configuration loading resolves
 * names against; 0, or -EINVAL with @err naming @path.
 * Context: start-up, before any configuration is loaded.
 */
int ks_registry_load(const char *path, struct ks_error *err);

/* ks_registry_report_fn - told about one object that cannot be loaded (@err names it). */
typedef void (*ks_registry_report_fn)(void *ctx, const struct ks_error *err);

/*
 * ks_registry_load_dir - every *.so in @dir, in name order, all or nothing: each object is
 * opened and checked as ks_registry_load() does (and no two may share a plugin name); when
 * all pass they are all added and 0 is returned. Otherwise none is added (the objects are
 * closed again), @report (when not NULL) is called once per failing object in name order,
 * and -EINVAL is returned with @err naming @dir ("N of M shared objects cannot be loaded as
 * plugins, so none was loaded"). A @dir that cannot be read: -errno, @err naming it.
 * Context: start-up, before any configuration is loaded; @report runs on the caller's thread.
 */
int ks_registry_load_dir(const char *dir, ks_registry_report_fn report, void *ctx, struct ks_error *err);

#endif
