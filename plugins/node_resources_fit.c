/*
 * node_resources_fit.c - the NodeResourcesFit plugin: filters out nodes without room for
 * the pod's requests and scores nodes by allocation under a scoring strategy
 * (LeastAllocated, MostAllocated or RequestedToCapacityRatio) (PreFilter, Filter,
 * PreScore, Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/noderesources/fit.go (and helper/resource_fit.go
 * of newer upstream), least_allocated.go, most_allocated.go,
 * requested_to_capacity_ratio.go and resource_allocation.go. Args
 * (NodeResourcesFitArgs): defaults of SetDefaults_NodeResourcesFitArgs (LeastAllocated
 * over cpu and memory with weight 1; a resource weight of 0 means 1) and the checks of
 * ValidateNodeResourcesFitArgs (ignored resources are label names, groups contain no
 * '/', a known strategy type, weights in (0, 100], a shape exactly when the type is
 * RequestedToCapacityRatio).
 *
 * Filter (fitsRequest), reasons in upstream's order:
 *   - "Too many pods" when the node already runs its allowed pod count;
 *   - "Insufficient cpu" / "Insufficient memory" / "Insufficient ephemeral-storage" when a
 *     non-zero request exceeds allocatable minus requested;
 *   - "Insufficient <name>" for each requested scalar resource that does not fit (extended
 *     resources named in ignoredResources, or whose domain is in ignoredResourceGroups,
 *     are not checked), in name-id order (upstream walks a Go map: any order). An
 *     extended resource a DeviceClass provides (ksched/dra_extended.h) is not checked on a
 *     node whose allocatable offers none of it: DynamicResources allocates devices for it.
 * The code is Unschedulable, or UnschedulableAndUnresolvable when some request exceeds the
 * node's allocatable outright (no preemption could make room), as current upstream does.
 * At most KS_STATUS_MAX_REASONS reasons are kept; the code still reflects all of them.
 * Every message is interned at init or in PreFilter, so Filter copies ids only.
 *
 * Score: each configured resource with a non-zero allocatable on the node contributes
 * (resources the pod does not request are left out when they are scalar); cpu and memory
 * use the non-zero requests (100m / 200Mi per container that requests none) of the pod
 * and of the node's pods. LeastAllocated and MostAllocated average integer per-resource
 * scores by weight with integer division; RequestedToCapacityRatio maps utilization
 * through the broken-linear shape (scores scaled by MaxNodeScore / MaxCustomPriorityScore)
 * and rounds the weighted mean of the positive per-resource scores. PreScore stores the
 * pod's per-resource requests; it never skips (upstream returns nil). Without PreScore,
 * Score computes them itself, as upstream does.
 *
 * Signature: the requests PreFilter stored and the pod's request of each scored resource.
 *
 * State: one struct fit_state per cycle in the cycle's arena (PreFilter part, then the
 * PreScore requests); never changed by add_pod/remove_pod, so there is no state_clone.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/dra_extended.h"
#include "ksched/framework.h"
#include "ksched/internal/config_decode.h"
#include "ksched/loader.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/registry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- args ----------------------------------------------------------------------------------- */

static const char *const strategy_names[] = {
#define KS_X(id, text) text,
    KS_SCORING_STRATEGY_MAP(KS_X)
#undef KS_X
        NULL,
};

/* What decoding saw, for defaulting and for error lines. */
struct fit_src {
    const struct ks_yaml_node *strategy;  /* scoringStrategy */
    const struct ks_yaml_node *resources; /* scoringStrategy.resources */
    const struct ks_yaml_node *rtcr;      /* scoringStrategy.requestedToCapacityRatio */
    const struct ks_yaml_node *shape;     /* ...requestedToCapacityRatio.shape */
    const char *type;                     /* scoringStrategy.type as written ("" when absent) */
};

static int decode_strategy(struct ks_decoder *d, struct ks_noderesourcesfit_args *a, struct fit_src *s)
{
    static const char *const fields[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    static const char *const rtcr_fields[] = {"shape", NULL};
    int rc;

    size_t saved = ks_dec_push(d, "scoringStrategy");
    if ((rc = ks_cfg_strict(d, s->strategy, fields)) ||
        (rc = ks_dec_string(d, s->strategy, "type", &s->type)) ||
        (rc = ks_cfg_resources(d, s->strategy, "resources", &a->nresources, &a->resources, &s->resources)) ||
        (rc = ks_dec_map(d, s->strategy, "requestedToCapacityRatio", &s->rtcr)))
        return rc;
    if (s->rtcr) {
        size_t s2 = ks_dec_push(d, "requestedToCapacityRatio");
        if ((rc = ks_cfg_strict(d, s->rtcr, rtcr_fields)) ||
            (rc = ks_cfg_shape(d, s->rtcr, "shape", &a->nshape, &a->shape, &s->shape)))
            return rc;
        ks_dec_pop(d, s2);
        a->has_requested_to_capacity_ratio = true;
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int check_names(struct ks_decoder *d, const struct ks_yaml_node *node,
                       const struct ks_noderesourcesfit_args *a)
{
    const struct ks_yaml_node *res = ks_yaml_get(node, "ignoredResources");
    const struct ks_yaml_node *groups = ks_yaml_get(node, "ignoredResourceGroups");
    char field[64], why[512];

    for (uint32_t i = 0; i < a->nignored_resources; i++) {
        const char *name = ks_intern_str(a->ignored_resources[i]);
        if (!ks_cfg_qualified_name(name, why, sizeof(why))) {
            snprintf(field, sizeof(field), "ignoredResources[%u]", i);
            return ks_cfg_fail_at(d, ks_cfg_item_field(res, i, NULL), 0, field, "Invalid value: \"%s\": %s",
                                  name, why);
        }
    }
    for (uint32_t i = 0; i < a->nignored_resource_groups; i++) {
        const char *group = a->ignored_resource_groups[i];
        snprintf(field, sizeof(field), "ignoredResourceGroups[%u]", i);
        if (strchr(group, '/'))
            return ks_cfg_fail_at(d, ks_cfg_item_field(groups, i, NULL), 0, field,
                                  "Invalid value: \"%s\": resource group name can't contain '/'", group);
        if (!ks_cfg_qualified_name(group, why, sizeof(why)))
            return ks_cfg_fail_at(d, ks_cfg_item_field(groups, i, NULL), 0, field,
                                  "Invalid value: \"%s\": %s", group, why);
    }
    return 0;
}

static int check_strategy(struct ks_decoder *d, struct ks_noderesourcesfit_args *a, const struct fit_src *s,
                          int line)
{
    char field[96];
    int i, rc;

    for (i = 0; strategy_names[i]; i++) {
        if (strcmp(strategy_names[i], s->type) == 0)
            break;
    }
    if (!strategy_names[i])
        return ks_cfg_fail_at(
            d, ks_yaml_get(s->strategy, "type"), line, "scoringStrategy.type",
            "Unsupported value: \"%s\": supported values: \"LeastAllocated\", \"MostAllocated\", "
            "\"RequestedToCapacityRatio\"",
            s->type);
    a->strategy = (enum ks_scoring_strategy)i;
    for (uint32_t r = 0; r < a->nresources; r++) {
        if (a->resources[r].weight <= 0 || a->resources[r].weight > 100) {
            snprintf(field, sizeof(field), "scoringStrategy.resources[%u].weight", r);
            return ks_cfg_fail_at(d, ks_cfg_item_field(s->resources, r, "weight"), line, field,
                                  "Invalid value: %lld: resource weight of %s not in valid range (0, 100]",
                                  (long long)a->resources[r].weight, ks_intern_str(a->resources[r].name));
        }
    }
    if (a->strategy == KS_SCORING_REQUESTED_TO_CAPACITY_RATIO) {
        if (!s->rtcr)
            return ks_cfg_fail_at(d, s->strategy, line, "scoringStrategy.requestedToCapacityRatio",
                                  "Required value: must be specified when type is RequestedToCapacityRatio");
        size_t saved = d->plen;
        ks_dec_push(d, "scoringStrategy.requestedToCapacityRatio.shape");
        rc = ks_cfg_check_shape(d, s->shape, s->rtcr->line, a->nshape, a->shape);
        ks_dec_pop(d, saved);
        return rc;
    }
    if (s->rtcr)
        return ks_cfg_fail_at(d, s->rtcr, line, "scoringStrategy.requestedToCapacityRatio",
                              "Forbidden: must be nil when type is not RequestedToCapacityRatio");
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_noderesourcesfit_args *a)
{
    static const char *const fields[] = {"ignoredResources", "ignoredResourceGroups", "scoringStrategy",
                                         NULL};
    struct fit_src s = {.type = ""};
    enum ks_config_version version;
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "NodeResourcesFitArgs", api_version, fields, &version)) ||
        (rc = ks_dec_id_list(d, node, "ignoredResources", &a->nignored_resources, &a->ignored_resources)) ||
        (rc = ks_dec_string_list(d, node, "ignoredResourceGroups", &a->nignored_resource_groups,
                                 &a->ignored_resource_groups)) ||
        (rc = ks_dec_map(d, node, "scoringStrategy", &s.strategy)))
        return rc;
    if (s.strategy && (rc = decode_strategy(d, a, &s)))
        return rc;
    /* SetDefaults_NodeResourcesFitArgs */
    if (!s.strategy)
        s.type = strategy_names[KS_SCORING_LEAST_ALLOCATED];
    if (a->nresources == 0 && (rc = ks_cfg_default_resources(&a->arena, &a->nresources, &a->resources)))
        return ks_dec_nomem(d);
    for (uint32_t r = 0; r < a->nresources; r++) {
        if (a->resources[r].weight == 0)
            a->resources[r].weight = 1;
    }
    if ((rc = check_names(d, node, a)))
        return rc;
    return check_strategy(d, a, &s, node ? node->line : 0);
}

KS_DEFINE_ARGS_OPS(struct ks_noderesourcesfit_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_noderesourcesfit_args *a = args;

    if (a->nignored_resources) {
        ks_yaml_key_seq(o, "ignoredResources");
        for (uint32_t i = 0; i < a->nignored_resources; i++)
            ks_yaml_item_str(o, ks_intern_str(a->ignored_resources[i]));
        ks_yaml_end(o);
    }
    if (a->nignored_resource_groups) {
        ks_yaml_key_seq(o, "ignoredResourceGroups");
        for (uint32_t i = 0; i < a->nignored_resource_groups; i++)
            ks_yaml_item_str(o, a->ignored_resource_groups[i]);
        ks_yaml_end(o);
    }
    ks_yaml_key_map(o, "scoringStrategy");
    ks_yaml_key_str(o, "type", strategy_names[a->strategy]);
    ks_cfg_print_resources(o, "resources", a->nresources, a->resources);
    if (a->has_requested_to_capacity_ratio) {
        ks_yaml_key_map(o, "requestedToCapacityRatio");
        ks_cfg_print_shape(o, "shape", a->nshape, a->shape);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

/* ---- instance ------------------------------------------------------------------------------ */

struct fit {
    uint16_t slot;
    bool least_cpu_mem; /* LeastAllocated over exactly cpu then memory (the default): score_least_cpu_mem() */
    enum ks_scoring_strategy strategy;
    uint32_t nres;
    uint32_t nshape;
    uint32_t nignored;
    uint32_t ngroups;
    struct ks_res_spec *res;   /* scoringStrategy.resources */
    struct ks_fn_point *shape; /* requestedToCapacityRatio.shape, scores scaled to MaxNodeScore */
    uint32_t *ignored;         /* ignoredResources, interned */
    char **groups;             /* ignoredResourceGroups (own copies) */
    uint32_t msg_pods, msg_cpu, msg_memory, msg_ephemeral; /* interned reasons */
    uint32_t msg_no_state, msg_no_resources;
    const struct ks_objects *objs; /* the DeviceClasses that back extended resources; NULL: none */
};

/* One scalar resource the Filter checks: the pod's request and its interned reason. */
struct fit_scalar {
    uint32_t name;
    uint32_t reason; /* "Insufficient <name>" */
    int64_t value;
    bool dra; /* a DeviceClass provides it: a node that offers none leaves it to DynamicResources */
};

/* Cycle state: preFilterState (Resource) and preScoreState (podRequests). */
struct fit_state {
    bool filter_ready; /* PreFilter ran */
    int64_t milli_cpu;
    int64_t memory;
    int64_t ephemeral;
    const int64_t *score_req; /* per f->res entry, set by PreScore; NULL before */
    uint32_t nscalar;
    struct fit_scalar scalar[];
};

static void fit_free(struct fit *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->ngroups; i++)
        free(f->groups[i]);
    free(f->groups);
    free(f->ignored);
    free(f->shape);
    free(f->res);
    free(f);
}

static int intern_all(struct fit *f)
{
    f->msg_pods = ks_intern("Too many pods");
    f->msg_cpu = ks_intern("Insufficient cpu");
    f->msg_memory = ks_intern("Insufficient memory");
    f->msg_ephemeral = ks_intern("Insufficient ephemeral-storage");
    f->msg_no_state = ks_intern("error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
    f->msg_no_resources = ks_intern("resources not found");
    if (f->msg_pods == KS_ID_NONE || f->msg_cpu == KS_ID_NONE || f->msg_memory == KS_ID_NONE ||
        f->msg_ephemeral == KS_ID_NONE || f->msg_no_state == KS_ID_NONE || f->msg_no_resources == KS_ID_NONE)
        return -ENOMEM;
    return 0;
}

static int copy_args(struct fit *f, const struct ks_noderesourcesfit_args *a)
{
    f->strategy = a->strategy;
    f->nres = a->nresources;
    if (f->nres && !(f->res = calloc(f->nres, sizeof(*f->res))))
        return -ENOMEM;
    for (uint32_t i = 0; i < f->nres; i++)
        f->res[i] = (struct ks_res_spec){a->resources[i].name, ks_res_kind_of(a->resources[i].name),
                                         a->resources[i].weight};
    if (a->strategy == KS_SCORING_REQUESTED_TO_CAPACITY_RATIO) {
        f->nshape = a->nshape;
        if (f->nshape && !(f->shape = calloc(f->nshape, sizeof(*f->shape))))
            return -ENOMEM;
        for (uint32_t i = 0; i < f->nshape; i++)
            f->shape[i] = (struct ks_fn_point){a->shape[i].utilization,
                                               (int64_t)a->shape[i].score *
                                                   (KS_MAX_NODE_SCORE / KS_MAX_CUSTOM_PRIORITY_SCORE)};
    }
    f->nignored = a->nignored_resources;
    if (f->nignored && !(f->ignored = calloc(f->nignored, sizeof(*f->ignored))))
        return -ENOMEM;
    for (uint32_t i = 0; i < f->nignored; i++)
        f->ignored[i] = a->ignored_resources[i];
    if (a->nignored_resource_groups && !(f->groups = calloc(a->nignored_resource_groups, sizeof(*f->groups))))
        return -ENOMEM;
    for (uint32_t i = 0; i < a->nignored_resource_groups; i++) {
        if (!(f->groups[i] = strdup(a->ignored_resource_groups[i])))
            return -ENOMEM;
        f->ngroups++;
    }
    return 0;
}

/* The defaults of SetDefaults_NodeResourcesFitArgs, for a profile that hands no args. */
static int default_args(struct fit *f)
{
    f->strategy = KS_SCORING_LEAST_ALLOCATED;
    f->nres = 2;
    if (!(f->res = calloc(f->nres, sizeof(*f->res))))
        return -ENOMEM;
    f->res[0] = (struct ks_res_spec){ks_wk.cpu, KS_RES_CPU, 1};
    f->res[1] = (struct ks_res_spec){ks_wk.memory, KS_RES_MEMORY, 1};
    return 0;
}

/* init - NewFit. Start-up, one thread. */
static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct fit *f = calloc(1, sizeof(*f));
    int rc;

    (void)err;
    if (!f)
        return -ENOMEM;
    f->slot = in->slot;
    if (in->framework && ks_framework_deps(in->framework))
        f->objs = ks_framework_deps(in->framework)->objects;
    if ((rc = ks_api_init()) || (rc = intern_all(f)) ||
        (rc = in->args ? copy_args(f, in->args) : default_args(f)))
        goto err_free;
    f->least_cpu_mem = f->strategy == KS_SCORING_LEAST_ALLOCATED && f->nres == 2 &&
                       f->res[0].kind == KS_RES_CPU && f->res[1].kind == KS_RES_MEMORY;
    *self = f;
    return 0;

err_free:
    fit_free(f);
    return rc;
}

static void destroy(void *self)
{
    fit_free(self);
}

/* ---- PreFilter, Filter ------------------------------------------------------------------------ */

/* Is the extended resource @name one the args say not to check? PreFilter only (compares strings). */
static bool ignored(const struct fit *f, uint32_t name)
{
    if (f->nignored == 0 && f->ngroups == 0)
        return false;
    const char *s = ks_intern_str(name);
    if (!ks_is_extended_resource_name(s))
        return false;
    for (uint32_t i = 0; i < f->nignored; i++) {
        if (f->ignored[i] == name)
            return true;
    }
    size_t domain = strcspn(s, "/");
    for (uint32_t i = 0; i < f->ngroups; i++) {
        if (strlen(f->groups[i]) == domain && strncmp(f->groups[i], s, domain) == 0)
            return true;
    }
    return false;
}

/* The interned "Insufficient <name>", KS_ID_NONE when out of memory. */
static uint32_t insufficient(uint32_t name)
{
    const char *s = ks_intern_str(name);
    char small[384];
    int len = snprintf(small, sizeof(small), "Insufficient %s", s);

    if (len < 0)
        return KS_ID_NONE;
    if ((size_t)len < sizeof(small))
        return ks_intern_n(small, (size_t)len);
    char *big = malloc((size_t)len + 1);
    if (!big)
        return KS_ID_NONE;
    snprintf(big, (size_t)len + 1, "Insufficient %s", s);
    uint32_t id = ks_intern_n(big, (size_t)len);
    free(big);
    return id;
}

/* Whether a DeviceClass provides extended resource @name (the DeviceClass resolver). */
static bool backed_by_dra(const struct fit *f, uint32_t name)
{
    const struct ks_objvec *v = f->objs ? &f->objs->of[KS_KIND_DEVICE_CLASS] : NULL;
    const char *s = ks_intern_str(name);

    return v && v->n && ks_dra_extended_name(s) &&
           ks_dra_class_for_resource((const struct ks_device_class *const *)v->items, v->n, s);
}

/*
 * pre_filter - computePodResourceRequest into the cycle state, each scalar resource marked
 * when a DeviceClass backs it. Scheduling thread (the objects are the scheduling thread's);
 * may intern.
 */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    const struct fit *f = self;
    const struct ks_resources *r = &pod->requests;
    uint32_t n = 0;

    (void)res;
    for (uint32_t i = 0; i < r->nscalar; i++)
        n += r->scalar[i].value > 0 && !ignored(f, r->scalar[i].name);
    struct fit_state *s = ks_arena_alloc(&cs->arena, sizeof(*s) + (size_t)n * sizeof(s->scalar[0]));
    if (!s)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->filter_ready = true;
    s->milli_cpu = r->milli_cpu;
    s->memory = r->memory;
    s->ephemeral = r->ephemeral_storage;
    for (uint32_t i = 0; i < r->nscalar; i++) {
        const struct ks_resource_item *it = &r->scalar[i];
        if (it->value <= 0 || ignored(f, it->name))
            continue;
        uint32_t reason = insufficient(it->name);
        if (reason == KS_ID_NONE)
            return ks_status_set(st, KS_ERROR, "out of memory");
        s->scalar[s->nscalar++] =
            (struct fit_scalar){it->name, reason, it->value, backed_by_dra(f, it->name)};
    }
    cs->slot[f->slot] = s;
    return KS_SUCCESS;
}

/* Append one reason (the first KS_STATUS_MAX_REASONS are kept). */
static inline void add_reason(struct ks_status *st, uint32_t reason)
{
    if (st->nreasons < KS_STATUS_MAX_REASONS)
        st->reasons[st->nreasons++] = reason;
}

/* filter_node - fitsRequest. Worker threads; reads the cycle state; allocation-free, integers only. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct fit *f = self;
    const struct fit_state *s = cs->slot[f->slot];
    bool unresolvable = false;

    (void)pod;
    st->nreasons = 0;
    if (__builtin_expect(!s || !s->filter_ready, 0)) {
        add_reason(st, f->msg_no_state);
        st->code = KS_ERROR;
        return KS_ERROR;
    }
    if ((int64_t)node->npods + 1 > (int64_t)node->alloc_pods)
        add_reason(st, f->msg_pods);
    if (s->milli_cpu > 0 && s->milli_cpu > node->alloc_milli_cpu - node->req_milli_cpu) {
        add_reason(st, f->msg_cpu);
        unresolvable |= s->milli_cpu > node->alloc_milli_cpu;
    }
    if (s->memory > 0 && s->memory > node->alloc_memory - node->req_memory) {
        add_reason(st, f->msg_memory);
        unresolvable |= s->memory > node->alloc_memory;
    }
    if (s->ephemeral > 0 && s->ephemeral > node->alloc_ephemeral - node->req_ephemeral) {
        add_reason(st, f->msg_ephemeral);
        unresolvable |= s->ephemeral > node->alloc_ephemeral;
    }
    for (uint32_t i = 0; i < s->nscalar; i++) {
        const struct fit_scalar *sc = &s->scalar[i];
        int64_t alloc = node->node ? ks_resource_items_find(node->node->alloc.scalar,
                                                            node->node->alloc.nscalar, sc->name, NULL)
                                   : 0;
        int64_t used = ks_resource_items_find(node->req_scalar, node->nreq_scalar, sc->name, NULL);
        if (sc->dra && alloc == 0)
            continue; /* the node offers none: DynamicResources allocates devices for it */
        if (sc->value > alloc - used) {
            add_reason(st, sc->reason);
            unresolvable |= sc->value > alloc;
        }
    }
    if (st->nreasons == 0)
        return KS_SUCCESS;
    st->code = unresolvable ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : KS_UNSCHEDULABLE;
    return st->code;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- PreScore, Score ---------------------------------------------------------------------------- */

/* pre_score - calculatePodResourceRequestList into the cycle state. Scheduling thread. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t nnodes, struct ks_status *st)
{
    const struct fit *f = self;
    struct fit_state *s = cs->slot[f->slot];

    (void)nodes;
    (void)nnodes;
    if (!s && !(s = ks_arena_alloc(&cs->arena, sizeof(*s))))
        return ks_status_set(st, KS_ERROR, "out of memory");
    int64_t *req = ks_arena_calloc(&cs->arena, f->nres ? f->nres : 1, sizeof(*req));
    if (!req)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < f->nres; i++)
        req[i] = ks_res_pod_request(&f->res[i], false, pod);
    s->score_req = req;
    cs->slot[f->slot] = s;
    return KS_SUCCESS;
}

/* leastRequestedScore */
static inline int64_t least_requested(int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return 0;
    return (capacity - requested) * KS_MAX_NODE_SCORE / capacity;
}

/* mostRequestedScore: requests above capacity (non-zero defaults) count as full */
static inline int64_t most_requested(int64_t requested, int64_t capacity)
{
    if (capacity == 0)
        return 0;
    if (requested > capacity)
        requested = capacity;
    return requested * KS_MAX_NODE_SCORE / capacity;
}

/* The resourceScoringFunction of buildRequestedToCapacityRatioScorerFunction. */
static inline int64_t ratio_score(const struct fit *f, int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return ks_broken_linear(f->shape, f->nshape, 100);
    return ks_broken_linear(f->shape, f->nshape, requested * 100 / capacity);
}

/* The pod's request of resource @i: from PreScore, or computed here when PreScore did not run. */
static inline int64_t pod_request(const struct fit *f, const struct fit_state *s, const struct ks_pod *pod,
                                  uint32_t i)
{
    return s && s->score_req ? s->score_req[i] : ks_res_pod_request(&f->res[i], false, pod);
}

__attribute__((noinline, cold)) static int no_resources(const struct fit *f, struct ks_status *st)
{
    st->code = KS_ERROR;
    st->nreasons = 1;
    st->reasons[0] = f->msg_no_resources;
    return KS_ERROR;
}

/*
 * The default profile's case of score() (LeastAllocated over cpu and memory) with the
 * node's fields read directly: the same arithmetic as the generic loop, without a call and
 * two switches per resource.
 */
static inline int64_t score_least_cpu_mem(const struct fit *f, const struct fit_state *s,
                                          const struct ks_pod *pod, const struct ks_node_snap *node)
{
    int64_t node_score = 0, weight_sum = 0;
    if (node->alloc_milli_cpu) {
        int64_t req =
            node->nonzero_milli_cpu + (s && s->score_req ? s->score_req[0] : pod->nonzero_milli_cpu);
        node_score += least_requested(req, node->alloc_milli_cpu) * f->res[0].weight;
        weight_sum += f->res[0].weight;
    }
    if (node->alloc_memory) {
        int64_t req = node->nonzero_memory + (s && s->score_req ? s->score_req[1] : pod->nonzero_memory);
        node_score += least_requested(req, node->alloc_memory) * f->res[1].weight;
        weight_sum += f->res[1].weight;
    }
    if (weight_sum == 0)
        return 0;
    return weight_sum == 2 ? node_score / 2 : node_score / weight_sum;
}

/* score_node - resourceAllocationScorer.score. Worker threads; allocation-free. */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    const struct fit *f = self;
    const struct fit_state *s = cs->slot[f->slot];
    int64_t node_score = 0, weight_sum = 0;

    if (f->least_cpu_mem) {
        *out = score_least_cpu_mem(f, s, pod, node);
        return KS_SUCCESS;
    }
    *out = 0;
    if (__builtin_expect(f->nres == 0, 0))
        return no_resources(f, st);
    for (uint32_t i = 0; i < f->nres; i++) {
        int64_t requested;
        int64_t alloc = ks_res_alloc_req(&f->res[i], false, node, pod_request(f, s, pod, i), &requested);
        if (alloc == 0)
            continue;
        int64_t w = f->res[i].weight, v;
        switch (f->strategy) {
        case KS_SCORING_LEAST_ALLOCATED:
            v = least_requested(requested, alloc);
            break;
        case KS_SCORING_MOST_ALLOCATED:
            v = most_requested(requested, alloc);
            break;
        case KS_SCORING_REQUESTED_TO_CAPACITY_RATIO:
            v = ratio_score(f, requested, alloc);
            if (v <= 0)
                continue; /* only positive resource scores count, weight included */
            break;
        default:
            continue;
        }
        node_score += v * w;
        weight_sum += w;
    }
    if (weight_sum == 0)
        return KS_SUCCESS;
    if (f->strategy == KS_SCORING_REQUESTED_TO_CAPACITY_RATIO)
        *out = (int64_t)round((double)node_score / (double)weight_sum);
    else
        *out = node_score / weight_sum;
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/* ---- signature -------------------------------------------------------------------------------- */

/*
 * sign - what Filter reads: the requests PreFilter stored (overhead included; scalar
 * resources that are checked, their reasons following from their names), or that there
 * are none; what Score reads: the pod's request of each scored resource, with the
 * non-zero defaults, as PreScore will store them. Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct fit *f = self;
    const struct fit_state *s = cs->slot[f->slot];

    if (s && s->filter_ready) {
        ks_sign_u32(sig, s->nscalar);
        ks_sign_i64(sig, s->milli_cpu);
        ks_sign_i64(sig, s->memory);
        ks_sign_i64(sig, s->ephemeral);
        for (uint32_t i = 0; i < s->nscalar; i++) {
            ks_sign_u32(sig, s->scalar[i].name);
            ks_sign_i64(sig, s->scalar[i].value);
            ks_sign_u32(sig, s->scalar[i].dra);
        }
    } else {
        ks_sign_u32(sig, UINT32_MAX); /* no PreFilter state: Filter fails every node alike */
    }
    ks_sign_res_requests(sig, f->res, f->nres, false, pod);
    return KS_SUCCESS;
}

/* ---- plugin ----------------------------------------------------------------------------------- */

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* Whether @modified requests less than @original of something @target requests
 * (isSchedulableAfterPodScaleDown). */
static bool frees_requested(const struct ks_pod *target, const struct ks_pod *original,
                            const struct ks_pod *modified)
{
    const struct ks_resources *t = &target->requests, *o = &original->requests, *m = &modified->requests;
    if ((t->milli_cpu && o->milli_cpu > m->milli_cpu) || (t->memory && o->memory > m->memory) ||
        (t->ephemeral_storage && o->ephemeral_storage > m->ephemeral_storage))
        return true;
    for (uint32_t i = 0; i < t->nscalar; i++) {
        if (!t->scalar[i].value)
            continue;
        int64_t ov = ks_resource_items_find(o->scalar, o->nscalar, t->scalar[i].name, NULL);
        int64_t mv = ks_resource_items_find(m->scalar, m->nscalar, t->scalar[i].name, NULL);
        if (ov > mv)
            return true;
    }
    return false;
}

/* NodeResourcesFit: a scheduled pod deleted, or one that asks for less of what the pod needs. */
static enum ks_queueing_hint hint_fit_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                          const void *new_obj)
{
    const struct ks_pod *o = old_obj, *m = new_obj;
    (void)self;
    if (!m) {
        if (!o)
            return KS_QUEUE;
        return ks_pod_assigned_or_nominated(o) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (ks_hint_pod_is(m, pod))
        return KS_QUEUE;
    if (!ks_pod_assigned(m) || !o)
        return KS_QUEUE_SKIP;
    return frees_requested(pod, o, m) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static bool requests_nothing(const struct ks_resources *r)
{
    return !r->milli_cpu && !r->memory && !r->ephemeral_storage && !r->nscalar;
}

/* isFit on an empty node: would the pod fit the node's allocatable at all? */
static bool fits_empty(const struct ks_pod *pod, const struct ks_node *n)
{
    const struct ks_resources *r = &pod->requests, *a = &n->alloc;
    if (a->allowed_pods < 1)
        return false;
    if (requests_nothing(r))
        return true;
    if (r->milli_cpu > a->milli_cpu || r->memory > a->memory || r->ephemeral_storage > a->ephemeral_storage)
        return false;
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (r->scalar[i].value > ks_resource_items_find(a->scalar, a->nscalar, r->scalar[i].name, NULL))
            return false;
    }
    return true;
}

/* haveAnyRequestedResourcesIncreased */
static bool requested_increased(const struct ks_pod *pod, const struct ks_node *o, const struct ks_node *n)
{
    const struct ks_resources *r = &pod->requests, *a = &o->alloc, *b = &n->alloc;
    if (b->allowed_pods > a->allowed_pods)
        return true;
    if (requests_nothing(r))
        return false;
    if ((r->milli_cpu > 0 && b->milli_cpu > a->milli_cpu) || (r->memory > 0 && b->memory > a->memory) ||
        (r->ephemeral_storage > 0 && b->ephemeral_storage > a->ephemeral_storage))
        return true;
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (!r->scalar[i].value)
            continue;
        if (ks_resource_items_find(b->scalar, b->nscalar, r->scalar[i].name, NULL) >
            ks_resource_items_find(a->scalar, a->nscalar, r->scalar[i].name, NULL))
            return true;
    }
    return false;
}

/* NodeResourcesFit: a node added that could hold the pod, or one whose allocatable of what it asks grew. */
static enum ks_queueing_hint hint_fit_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                           const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (!n)
        return KS_QUEUE;
    if (!fits_empty(pod, n))
        return KS_QUEUE_SKIP;
    if (!o)
        return KS_QUEUE;
    return requested_increased(pod, o, n) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_POD, KS_ACT_DELETE | KS_ACT_UPDATE_POD_SCALE_DOWN}, hint_fit_pod},
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE}, hint_fit_node},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_node_resources_fit = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeResourcesFit",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .sign = sign,
    .events_to_register = events_to_register,
};
