/*
 * node_resources_balanced_allocation.c - the NodeResourcesBalancedAllocation plugin:
 * scores nodes by how evenly the pod would leave their resources used (PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go. Args
 * (NodeResourcesBalancedAllocationArgs): resources default to cpu and memory and a weight
 * of 0 means 1 (SetDefaults_NodeResourcesBalancedAllocationArgs); names must be unique and
 * every weight must be 1 (ValidateNodeResourcesBalancedAllocationArgs).
 *
 * Score (balancedResourceScorer): for every configured resource with a non-zero
 * allocatable on the node (scalar resources only when the pod requests them), the
 * fraction requested / allocatable after adding the pod, capped at 1, in float64; the
 * standard deviation of the fractions (|f0 - f1| / 2 for two, the population formula for
 * more, 0 for fewer); score = (1 - std) * MaxNodeScore truncated to an integer. Requests
 * are the real ones (useRequested: no 100m / 200Mi defaults), for the pod and the node.
 * PreScore stores the pod's requests and returns Skip for a pod that requests none of
 * the resources (a best-effort pod: upstream skips it so such pods do not pile onto one
 * node); Score without PreScore computes them itself and scores 0 for such a pod. The
 * signature is those requests.
 *
 * Upstream's master has since replaced the formula with one that scores the change in
 * balance the pod makes; ksched follows the released behaviour that the conformance
 * scenarios were checked against.
 *
 * State: the pod's per-resource requests (an int64_t array parallel to the resources) in
 * the cycle's arena, never changed afterwards.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/registry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_noderesourcesbalancedallocation_args *a)
{
    static const char *const fields[] = {"resources", NULL};
    const struct ks_yaml_node *seq = NULL;
    enum ks_config_version version;
    char field[48];
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "NodeResourcesBalancedAllocationArgs", api_version, fields,
                                &version)) ||
        (rc = ks_cfg_resources(d, node, "resources", &a->nresources, &a->resources, &seq)))
        return rc;
    if (a->nresources == 0 && ks_cfg_default_resources(&a->arena, &a->nresources, &a->resources) < 0)
        return ks_dec_nomem(d);
    for (uint32_t i = 0; i < a->nresources; i++) {
        struct ks_resource_spec *r = &a->resources[i];
        if (r->weight == 0)
            r->weight = 1;
        for (uint32_t k = 0; k < i; k++) {
            if (a->resources[k].name == r->name) {
                snprintf(field, sizeof(field), "resources[%u].name", i);
                return ks_cfg_fail_at(d, ks_cfg_item_field(seq, i, "name"), 0, field,
                                      "Duplicate value: \"%s\"", ks_intern_str(r->name));
            }
        }
        if (r->weight != 1) {
            snprintf(field, sizeof(field), "resources[%u].weight", i);
            return ks_cfg_fail_at(d, ks_cfg_item_field(seq, i, "weight"), 0, field,
                                  "Invalid value: %lld: must be 1", (long long)r->weight);
        }
    }
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_noderesourcesbalancedallocation_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_noderesourcesbalancedallocation_args *a = args;
    ks_cfg_print_resources(o, "resources", a->nresources, a->resources);
}

/* ---- instance ------------------------------------------------------------------------------ */

struct balanced {
    uint16_t slot;
    bool cpu_mem; /* exactly cpu then memory (the default): score_cpu_mem() */
    uint32_t nres;
    struct ks_res_spec *res;
    uint32_t msg_no_resources;
};

static void balanced_free(struct balanced *b)
{
    if (!b)
        return;
    free(b->res);
    free(b);
}

/* init - NewBalancedAllocation. Start-up, one thread. */
static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    const struct ks_noderesourcesbalancedallocation_args *a = in->args;
    struct balanced *b = calloc(1, sizeof(*b));
    int rc = -ENOMEM;

    (void)err;
    if (!b)
        return -ENOMEM;
    b->slot = in->slot;
    if ((rc = ks_api_init()))
        goto err_free;
    rc = -ENOMEM;
    if ((b->msg_no_resources = ks_intern("resources not found")) == KS_ID_NONE)
        goto err_free;
    b->nres = a ? a->nresources : 2;
    if (b->nres && !(b->res = calloc(b->nres, sizeof(*b->res))))
        goto err_free;
    for (uint32_t i = 0; i < b->nres; i++) {
        uint32_t name = a ? a->resources[i].name : (i == 0 ? ks_wk.cpu : ks_wk.memory);
        b->res[i] = (struct ks_res_spec){name, ks_res_kind_of(name), a ? a->resources[i].weight : 1};
    }
    b->cpu_mem = b->nres == 2 && b->res[0].kind == KS_RES_CPU && b->res[1].kind == KS_RES_MEMORY;
    *self = b;
    return 0;

err_free:
    balanced_free(b);
    return rc;
}

static void destroy(void *self)
{
    balanced_free(self);
}

/* ---- PreScore, Score ---------------------------------------------------------------------------- */

/* pre_score - the pod's requests, or Skip for a best-effort pod. Scheduling thread. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t nnodes, struct ks_status *st)
{
    const struct balanced *b = self;
    bool best_effort = true;

    (void)nodes;
    (void)nnodes;
    /* balancedAllocationPreScoreState: podRequests, one per resource */
    int64_t *req = ks_arena_calloc(&cs->arena, b->nres ? b->nres : 1, sizeof(*req));
    if (!req)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < b->nres; i++) {
        req[i] = ks_res_pod_request(&b->res[i], true, pod);
        best_effort &= req[i] == 0;
    }
    if (best_effort)
        return KS_SKIP;
    cs->slot[b->slot] = req;
    return KS_SUCCESS;
}

/* The pod's request of resource @i: from PreScore, or computed here when PreScore did not run. */
static inline int64_t pod_request(const struct balanced *b, const int64_t *req, const struct ks_pod *pod,
                                  uint32_t i)
{
    return req ? req[i] : ks_res_pod_request(&b->res[i], true, pod);
}

/* The capped fraction of resource @i on @node; false when the node has none of it. */
static inline bool fraction(const struct balanced *b, const int64_t *s, const struct ks_pod *pod,
                            const struct ks_node_snap *node, uint32_t i, double *out)
{
    int64_t requested;
    int64_t alloc = ks_res_alloc_req(&b->res[i], true, node, pod_request(b, s, pod, i), &requested);

    if (alloc == 0)
        return false;
    double f = (double)requested / (double)alloc;
    *out = f > 1 ? 1 : f;
    return true;
}

__attribute__((noinline, cold)) static int no_resources(const struct balanced *b, struct ks_status *st)
{
    st->code = KS_ERROR;
    st->nreasons = 1;
    st->reasons[0] = b->msg_no_resources;
    return KS_ERROR;
}

/*
 * The default case of score() (cpu and memory, the pod's requests from PreScore) with the
 * node's fields read directly: the same float64 arithmetic as the generic loop for two
 * resources (one fraction alone has no spread), without a call and a switch per resource.
 */
static inline int64_t score_cpu_mem(const int64_t *req, const struct ks_node_snap *node)
{
    double f[2];
    uint32_t n = 0;
    if (node->alloc_milli_cpu) {
        double x = (double)(node->req_milli_cpu + req[0]) / (double)node->alloc_milli_cpu;
        f[n++] = x > 1 ? 1 : x;
    }
    if (node->alloc_memory) {
        double x = (double)(node->req_memory + req[1]) / (double)node->alloc_memory;
        f[n++] = x > 1 ? 1 : x;
    }
    double std = n == 2 ? fabs((f[0] - f[1]) / 2) : 0;
    return (int64_t)((1 - std) * (double)KS_MAX_NODE_SCORE);
}

/* score_node - balancedResourceScorer. Worker threads; allocation-free. */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    const struct balanced *b = self;
    const int64_t *s = cs->slot[b->slot];
    double total = 0, first[2] = {0, 0}, std = 0, f;
    uint32_t n = 0;

    if (s && b->cpu_mem) {
        *out = score_cpu_mem(s, node);
        return KS_SUCCESS;
    }
    *out = 0;
    if (!s) {
        bool best_effort = true;
        for (uint32_t i = 0; i < b->nres; i++)
            best_effort &= ks_res_pod_request(&b->res[i], true, pod) == 0;
        if (best_effort)
            return KS_SUCCESS;
    }
    if (__builtin_expect(b->nres == 0, 0))
        return no_resources(b, st);
    for (uint32_t i = 0; i < b->nres; i++) {
        if (!fraction(b, s, pod, node, i, &f))
            continue;
        total += f;
        if (n < 2)
            first[n] = f;
        n++;
    }
    if (n == 2) {
        std = fabs((first[0] - first[1]) / 2);
    } else if (n > 2) {
        double mean = total / (double)n, sum = 0;
        for (uint32_t i = 0; i < b->nres; i++) {
            if (fraction(b, s, pod, node, i, &f))
                sum = sum + (f - mean) * (f - mean);
        }
        std = sqrt(sum / (double)n);
    }
    *out = (int64_t)((1 - std) * (double)KS_MAX_NODE_SCORE);
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/*
 * sign - the pod's real request of each configured resource: what Score reads, and what
 * decides PreScore's Skip. Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct balanced *b = self;

    (void)cs;
    ks_sign_res_requests(sig, b->res, b->nres, true, pod);
    return KS_SUCCESS;
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_node_resources_balanced_allocation = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeResourcesBalancedAllocation",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
    .init = init,
    .destroy = destroy,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .sign = sign,
};
