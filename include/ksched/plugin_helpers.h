/*
 * plugin_helpers.h - arithmetic and lookups shared by the in-tree plugins.
 *
 * Mirrors pkg/scheduler/framework/plugins/helper (normalize_score.go, shape_score.go) and
 * the resource bookkeeping of plugins/noderesources/resource_allocation.go that both
 * NodeResourcesFit and NodeResourcesBalancedAllocation score with.
 *
 * Context: every function here is pure, allocation-free and lock-free unless it says
 * otherwise, so Filter, Score and NormalizeScore may call them from any thread.
 */
#ifndef KSCHED_PLUGIN_HELPERS_H
#define KSCHED_PLUGIN_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/cache_types.h"
#include "ksched/status_types.h"

/* ---- statuses ------------------------------------------------------------------------------ */

/*
 * ks_status_reject - fill @st with @code and the one reason @msg (a message interned at
 * init) and return @code: how a Filter rejects a node without formatting or allocating.
 * Writes @st only.
 */
static inline int ks_status_reject(struct ks_status *st, enum ks_code code, uint32_t msg)
{
    st->code = code;
    st->nreasons = 1;
    st->reasons[0] = msg;
    return code;
}

/* ---- scores -------------------------------------------------------------------------------- */

/*
 * ks_default_normalize_score - helper.DefaultNormalizeScore: rescale the @n non-negative
 * @scores from [0, max(scores)] to [0, @max_priority] with integer division; with
 * @reverse, each result becomes @max_priority minus itself. When every score is 0 they
 * stay 0, or all become @max_priority with @reverse.
 */
void ks_default_normalize_score(int64_t max_priority, bool reverse, int64_t *scores, uint32_t n);

struct ks_cycle_state;

/*
 * ks_normalize_score_default, ks_normalize_score_reverse - NormalizeScore ops (plugin_types.h)
 * for a plugin whose normalisation is DefaultNormalizeScore(MaxNodeScore, false) or
 * (MaxNodeScore, true): ks_default_normalize_score() over @scores; nothing else is read.
 * Success always. Scheduling thread; allocation-free.
 */
int ks_normalize_score_default(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                               const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                               struct ks_status *st);
int ks_normalize_score_reverse(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                               const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                               struct ks_status *st);

/* One point of a broken linear function (helper.FunctionShapePoint). */
struct ks_fn_point {
    int64_t utilization;
    int64_t score;
};

/*
 * ks_broken_linear - helper.BuildBrokenLinearFunction evaluated at @p over the @n points
 * of @shape, utilization increasing: shape[0].score left of the first point, the last
 * score right of the last one, integer-interpolated (truncating) in between; 0 when @n is 0.
 */
int64_t ks_broken_linear(const struct ks_fn_point *shape, uint32_t n, int64_t p);

/* ---- resources ----------------------------------------------------------------------------- */

/*
 * ks_resource_items_find - the value of @name in @items (@n entries sorted by name id);
 * *found tells whether it is present (NULL @found allowed). 0 when absent.
 */
int64_t ks_resource_items_find(const struct ks_resource_item *items, uint32_t n, uint32_t name, bool *found);

/* How a scored resource is read from pods and nodes. */
enum ks_res_kind {
    KS_RES_CPU,
    KS_RES_MEMORY,
    KS_RES_EPHEMERAL,
    KS_RES_PODS,   /* "pods": requested by some pod specs, never allocatable as a score input */
    KS_RES_SCALAR, /* anything else: the scalar lists (names that are not scalar are never there) */
};

/* One resource a score plugin weighs (config.ResourceSpec resolved once at init). */
struct ks_res_spec {
    uint32_t name;
    enum ks_res_kind kind;
    int64_t weight;
};

/* ks_res_kind_of - the kind of resource @name. Requires ks_api_init(). */
enum ks_res_kind ks_res_kind_of(uint32_t name);

/*
 * ks_res_pod_request - resourceAllocationScorer.calculatePodResourceRequest: the pod's
 * request of @r, overhead included. @use_requested false (NodeResourcesFit) reads cpu and
 * memory with the 100m / 200Mi defaults for containers that request none; true
 * (BalancedAllocation) reads the real requests.
 */
int64_t ks_res_pod_request(const struct ks_res_spec *r, bool use_requested, const struct ks_pod *pod);

/*
 * ks_res_alloc_req - calculateResourceAllocatableRequest: returns @node's allocatable of
 * @r and sets *requested to what the node's pods request of it plus @pod_request. cpu and
 * memory use the non-zero requests of the node's pods unless @use_requested. A scalar
 * resource the pod does not request, or the node does not list, gives 0 (the caller then
 * leaves the resource out of the score, as upstream). Hot path: integer work only.
 */
int64_t ks_res_alloc_req(const struct ks_res_spec *r, bool use_requested, const struct ks_node_snap *node,
                         int64_t pod_request, int64_t *requested);

#endif
