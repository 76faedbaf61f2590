/*
 * inter_pod_affinity.c - the InterPodAffinity plugin: required pod affinity and
 * anti-affinity as a filter, preferred terms (and existing pods' hard affinity, weighted
 * by hardPodAffinityWeight) as a score (PreFilter with AddPod/RemovePod, Filter, PreScore,
 * Score, NormalizeScore).
 *
 * Mirrors pkg/scheduler/framework/plugins/interpodaffinity/{plugin.go,filtering.go,
 * scoring.go}. Args (InterPodAffinityArgs): hardPodAffinityWeight defaults to 1 and must be
 * 0..100 (SetDefaults_InterPodAffinityArgs, ValidateInterPodAffinityArgs);
 * ignorePreferredTermsOfExistingPods exists from v1beta3 on.
 *
 * PreFilter counts, per topology pair (key, value) of interned ids (struct ks_tp_map):
 *   - existing anti: required anti-affinity terms of existing pods that match the
 *     incoming pod;
 *   - affinity / anti: existing pods matching the incoming pod's required affinity (all
 *     terms by one pod) and anti-affinity terms (any term).
 * A pod without required terms needs only the first, from the snapshot's nodes with
 * required anti-affinity pods: O(those pods), counted into the cycle state's arena. A pod
 * with required terms needs every pod of the cluster; those counts are kept across cycles
 * in a memo (struct ks_tp_memo, one node's share per snapshot index; which record each
 * share came from is kept by the node memo shared with PodTopologySpread,
 * plugins/helpers/helper_node_memo.c): while consecutive such pods ask the same question
 * (namespace, labels, required terms), PreFilter skips the snapshot chunks whose generation
 * did not move and recounts only the nodes that changed, O(nodes / 256) + O(pods on
 * changed nodes); the cycle state borrows
 * the memo's maps (AddPod/RemovePod and clones copy them first). It returns Skip when the
 * pod has no required terms and no existing anti-affinity term matches it. Filter then
 * reads a few counts per node: no allocation, integer compares.
 *
 * Terms follow upstream's framework.AffinityTerm: an empty namespace list with a nil
 * namespaceSelector means the owner pod's namespace; for the incoming pod's terms the
 * namespaceSelector is unrolled into the namespaces of the Namespace objects it selects
 * (an empty selector selects every namespace, existing or not); an existing pod's term
 * matches the incoming pod through its namespace list or its selector applied to the
 * labels of the incoming pod's Namespace (none when it does not exist). A nil labelSelector
 * matches nothing. matchLabelKeys / mismatchLabelKeys are merged into the labelSelector
 * with the owner pod's label values, as the API server does at pod creation.
 *
 * Messages (one reason each): "node(s) didn't match pod affinity rules"
 * (UnschedulableAndUnresolvable), "node(s) didn't match pod anti-affinity rules" and
 * "node(s) didn't satisfy existing pods anti-affinity rules" (Unschedulable).
 *
 * PreScore sums weights per topology pair over the existing pods (only those with affinity
 * terms that weigh when the incoming pod has no preferred terms), through a second memo
 * keyed by the incoming pod's namespace, labels and preferred terms; it skips at once
 * when no pod that could weigh exists (the PreFilter memo counts them). Score adds the
 * pairs of the node's labels; NormalizeScore scales to [0, MaxNodeScore] between the
 * minimum and maximum with float arithmetic and truncation.
 *
 * Signature: a pod is signable only when neither Filter nor Score runs for it: it has no
 * terms of its own, no existing pod's required anti-affinity term matches it (PreFilter
 * skipped) and no existing pod's term would weigh for it (PreScore will skip). It then
 * signs nothing; the sign op decides anew for every pod, after its PreFilter.
 *
 * Context: PreFilter, AddPod, RemovePod, PreScore and NormalizeScore run on the scheduling
 * thread inside the RCU read section that holds the snapshot; Filter and Score on worker
 * threads, reading the cycle state only. The memos belong to the scheduling thread; what a
 * cycle state borrows from them stays valid until the plugin's next PreFilter (PreScore),
 * which only a later cycle runs. The namespace index is built at init from the
 * framework's loaded objects, which outlive the plugin.
 */
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_topology.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_interpodaffinity_args *a)
{
    static const char *const fields[] = {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", NULL};
    const struct ks_yaml_node *ignore = ks_yaml_get(node, "ignorePreferredTermsOfExistingPods");
    enum ks_config_version read_as;
    int rc;

    a->hard_pod_affinity_weight = 1;
    if (ks_config_version_parse(api_version, &a->version) < 0)
        a->version = KS_CONFIG_V1;
    if ((rc = ks_cfg_args_begin(d, node, "InterPodAffinityArgs", api_version, fields, &read_as)))
        return rc;
    if (ignore && read_as == KS_CONFIG_V1BETA2)
        return ks_cfg_fail_at(d, ignore, 0, "ignorePreferredTermsOfExistingPods",
                              "unknown field \"ignorePreferredTermsOfExistingPods\"");
    if ((rc = ks_dec_int32(d, node, "hardPodAffinityWeight", &a->hard_pod_affinity_weight)) ||
        (rc = ks_dec_bool(d, node, "ignorePreferredTermsOfExistingPods",
                          &a->ignore_preferred_terms_of_existing_pods)))
        return rc;
    if (a->hard_pod_affinity_weight < 0 || a->hard_pod_affinity_weight > 100)
        return ks_cfg_fail_at(d, ks_yaml_get(node, "hardPodAffinityWeight"), 0, "hardPodAffinityWeight",
                              "Invalid value: %d: not in valid range [0, 100]", a->hard_pod_affinity_weight);
    return 0;
}

KS_DEFINE_PLAIN_ARGS_OPS(struct ks_interpodaffinity_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_interpodaffinity_args *a = args;
    ks_yaml_key_int(o, "hardPodAffinityWeight", a->hard_pod_affinity_weight);
    if (a->version != KS_CONFIG_V1BETA2)
        ks_yaml_key_bool(o, "ignorePreferredTermsOfExistingPods", a->ignore_preferred_terms_of_existing_pods);
}

/* ---- instance ----------------------------------------------------------------------------------- */

/*
 * The three counts of PreFilter (preFilterState), and in the PreFilter memo a fourth: the
 * pods that PreScore weighs for any incoming pod (pod affinity, preferred anti-affinity),
 * all under one pseudo pair.
 */
enum { MAP_EXISTING_ANTI, MAP_AFFINITY, MAP_ANTI, MAP_WEIGHING, NMAPS = MAP_WEIGHING };
#define WEIGHING_KEY (KS_ID_NONE - 1)

/*
 * Below this many nodes with affinity pods, PreScore for a pod without preferred terms
 * counts them directly rather than through its memo (which walks every chunk of the
 * snapshot and recounts the changed ones).
 */
#define SCORE_MEMO_MIN_NODES 64

/*
 * Counts kept across cycles (struct ks_tp_memo) for the last query: PreFilter's for the
 * last pod with required terms, PreScore's for the last pod scored through the memo. A
 * query is the pod (a reference) whose namespace, labels and terms the counts depend on.
 */
struct ipa_memo {
    struct ks_pod *query; /* NULL: empty */
    struct ks_tp_memo counts;
};

struct inter_pod_affinity {
    uint16_t slot;
    int32_t hard_pod_affinity_weight;
    bool ignore_preferred_terms_of_existing_pods;
    struct ks_cache *cache;      /* the snapshot's source; NULL without a framework */
    struct ks_ns_index ns;       /* Namespace objects: the namespace lister */
    uint32_t msg_affinity;       /* ErrReasonAffinityRulesNotMatch */
    uint32_t msg_anti;           /* ErrReasonAntiAffinityRulesNotMatch */
    uint32_t msg_existing;       /* ErrReasonExistingAntiAffinityRulesNotMatch */
    struct ipa_memo filter_memo; /* scheduling thread only */
    struct ipa_memo score_memo;
    uint32_t score_memo_min_nodes; /* SCORE_MEMO_MIN_NODES (tests change it) */
};

static void memo_destroy(struct ipa_memo *m)
{
    ks_pod_put(m->query);
    ks_tp_memo_destroy(&m->counts);
    m->query = NULL;
}

/* Make @pod the memo's query, dropping the counts when @same says it asks something else. */
static void memo_query(struct ipa_memo *m, const struct ks_pod *pod,
                       bool (*same)(const struct ks_pod *, const struct ks_pod *))
{
    if (m->query && same(m->query, pod))
        return;
    ks_pod_put(m->query);
    ks_tp_memo_reset(&m->counts);
    m->query = ks_pod_get(pod);
}

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    const struct ks_interpodaffinity_args *a = in->args;
    struct inter_pod_affinity *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    p->hard_pod_affinity_weight = a ? a->hard_pod_affinity_weight : 1;
    p->ignore_preferred_terms_of_existing_pods = a && a->ignore_preferred_terms_of_existing_pods;
    p->score_memo_min_nodes = SCORE_MEMO_MIN_NODES;
    if (in->framework) {
        const struct ks_framework_deps *deps = ks_framework_deps(in->framework);
        p->cache = deps->cache;
        if (ks_ns_index_build(&p->ns, deps->objects) < 0)
            goto err_nomem;
    }
    p->msg_affinity = ks_intern("node(s) didn't match pod affinity rules");
    p->msg_anti = ks_intern("node(s) didn't match pod anti-affinity rules");
    p->msg_existing = ks_intern("node(s) didn't satisfy existing pods anti-affinity rules");
    if (p->msg_affinity == KS_ID_NONE || p->msg_anti == KS_ID_NONE || p->msg_existing == KS_ID_NONE)
        goto err_nomem;
    *self = p;
    return 0;

err_nomem:
    ks_ns_index_destroy(&p->ns);
    free(p);
    return -ENOMEM;
}

static void destroy(void *self)
{
    struct inter_pod_affinity *p = self;
    if (!p)
        return;
    memo_destroy(&p->filter_memo);
    memo_destroy(&p->score_memo);
    ks_ns_index_destroy(&p->ns);
    free(p);
}

/* ---- terms ------------------------------------------------------------------------------------- */

/*
 * One of the incoming pod's terms with its namespaces resolved (framework.AffinityTerm
 * after mergeAffinityTermNamespacesIfNotEmpty): every namespace (an empty
 * namespaceSelector), or a sorted list.
 */
struct ipa_term {
    const struct ks_pod_affinity_term *t;
    uint32_t topology_key;
    int32_t weight; /* preferred terms */
    bool all_namespaces;
    uint32_t nns;
    const uint32_t *ns;
};

static const struct ks_labels no_labels = {0, 0};

/* The labels of namespace @ns (GetNamespaceLabelsSnapshot): none when it does not exist. */
static const struct ks_labels *namespace_labels(const struct inter_pod_affinity *p, uint32_t ns)
{
    const struct ks_labels *l = ks_ns_index_find(&p->ns, ns);
    return l ? l : &no_labels;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Resolve @t of the incoming @pod into @out; arrays in @a. 0 or -ENOMEM. */
static int resolve_term(const struct inter_pod_affinity *p, struct ks_arena *a, const struct ks_pod *pod,
                        const struct ks_pod_affinity_term *t, int32_t weight, struct ipa_term *out)
{
    const struct ks_label_selector *sel = t->namespace_selector;

    *out = (struct ipa_term){.t = t, .topology_key = t->topology_key, .weight = weight};
    if (t->nnamespaces == 0 && !sel) {
        out->ns = &pod->meta.namespace_id;
        out->nns = 1;
        return 0;
    }
    out->ns = t->namespaces;
    out->nns = t->nnamespaces;
    if (!sel)
        return 0;
    if (sel->nreqs == 0) {
        out->all_namespaces = true;
        return 0;
    }
    uint32_t extra = 0;
    for (uint32_t i = 0; i < p->ns.n; i++)
        extra += ks_label_selector_matches(sel, p->ns.items[i].labels);
    if (extra == 0)
        return 0;
    uint32_t *ns = ks_arena_calloc(a, (size_t)t->nnamespaces + extra, sizeof(*ns));
    if (!ns)
        return -ENOMEM;
    uint32_t n = t->nnamespaces;
    if (n)
        memcpy(ns, t->namespaces, n * sizeof(*ns));
    for (uint32_t i = 0; i < p->ns.n; i++) {
        if (ks_label_selector_matches(sel, p->ns.items[i].labels))
            ns[n++] = p->ns.items[i].name;
    }
    qsort(ns, n, sizeof(*ns), cmp_id);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (k == 0 || ns[k - 1] != ns[i])
            ns[k++] = ns[i];
    }
    out->ns = ns;
    out->nns = k;
    return 0;
}

/* Resolve @n required (@weighted NULL) or preferred terms into a new array (NULL when @n is 0). */
static int resolve_terms(const struct inter_pod_affinity *p, struct ks_arena *a, const struct ks_pod *pod,
                         const struct ks_pod_affinity_term *required,
                         const struct ks_weighted_pod_affinity_term *weighted, uint32_t n,
                         const struct ipa_term **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    struct ipa_term *terms = ks_arena_calloc(a, n, sizeof(*terms));
    if (!terms)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        int rc = weighted ? resolve_term(p, a, pod, &weighted[i].term, weighted[i].weight, &terms[i])
                          : resolve_term(p, a, pod, &required[i], 0, &terms[i]);
        if (rc)
            return rc;
    }
    *out = terms;
    return 0;
}

/* The label selector of @t (matchLabelKeys merged with @owner's labels) matches @pod. */
static inline bool selector_matches(const struct ks_pod_affinity_term *t, const struct ks_pod *owner,
                                    const struct ks_pod *pod)
{
    if (t->nmatch_label_keys == 0 && t->nmismatch_label_keys == 0)
        return ks_label_selector_matches(t->selector, &pod->meta.labels);
    return ks_selector_matches_keys(t->selector, t->match_label_keys, t->nmatch_label_keys,
                                    t->mismatch_label_keys, t->nmismatch_label_keys, &owner->meta.labels,
                                    &pod->meta.labels);
}

/* An incoming pod's (@owner's) resolved term matches the existing @pod (AffinityTerm.Matches, nil labels). */
static inline bool incoming_term_matches(const struct ipa_term *rt, const struct ks_pod *owner,
                                         const struct ks_pod *pod)
{
    if (!rt->all_namespaces) {
        uint32_t ns = pod->meta.namespace_id;
        if (rt->nns == 1 ? rt->ns[0] != ns : !ks_ids_contain(rt->ns, rt->nns, ns))
            return false;
    }
    return selector_matches(rt->t, owner, pod);
}

/* podMatchesAllAffinityTerms: @pod matches every one of the @n terms (and there is one). */
static bool matches_all(const struct ipa_term *terms, uint32_t n, const struct ks_pod *owner,
                        const struct ks_pod *pod)
{
    if (n == 0)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (!incoming_term_matches(&terms[i], owner, pod))
            return false;
    }
    return true;
}

/*
 * An existing pod's (@owner's) term matches the incoming @pod whose namespace has
 * @ns_labels (AffinityTerm.Matches(pod, nsLabels) with the owner's namespaces).
 */
static bool existing_term_matches(const struct ks_pod_affinity_term *t, const struct ks_pod *owner,
                                  const struct ks_pod *pod, const struct ks_labels *ns_labels)
{
    bool in_ns;
    if (t->nnamespaces == 0 && !t->namespace_selector)
        in_ns = owner->meta.namespace_id == pod->meta.namespace_id;
    else
        in_ns = ks_ids_contain(t->namespaces, t->nnamespaces, pod->meta.namespace_id) ||
                ks_label_selector_matches(t->namespace_selector, ns_labels);
    return in_ns && selector_matches(t, owner, pod);
}

/* ---- cycle state ------------------------------------------------------------------------------- */

/*
 * preFilterState. The counts are either the cycle's own (in its arena) or borrowed from
 * the plugin's memo, valid until the plugin's next PreFilter: AddPod/RemovePod copy them
 * into the cycle's arena before the first change, and a clone always copies.
 */
struct ipa_filter_state {
    struct ks_tp_map counts[NMAPS]; /* existingAntiAffinityCounts, affinityCounts, antiAffinityCounts */
    bool borrowed;
    bool self_match; /* the pod matches all its own required affinity terms */
    uint32_t naffinity, nanti;
    const struct ipa_term *affinity_terms; /* the incoming pod's required terms */
    const struct ipa_term *anti_terms;
    const struct ks_labels *ns_labels; /* the incoming pod's namespace labels */
};

/* preScoreState */
struct ipa_score_state {
    struct ks_tp_map scores; /* topologyScore */
};

/* The plugin's cycle-state slot: both states (each NULL until its point ran). */
struct ipa_state {
    struct ipa_filter_state *filter;
    struct ipa_score_state *score;
};

static struct ipa_state *state_slot(const struct inter_pod_affinity *p, struct ks_cycle_state *cs)
{
    struct ipa_state *s = cs->slot[p->slot];
    if (!s) {
        s = ks_arena_alloc(&cs->arena, sizeof(*s));
        cs->slot[p->slot] = s;
    }
    return s;
}

__attribute__((noinline, cold)) static int out_of_memory(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "out of memory");
}

__attribute__((noinline, cold)) static int no_filter_state(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR,
                         "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

__attribute__((noinline, cold)) static int no_score_state(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR,
                         "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
}

__attribute__((noinline, cold)) static int no_snapshot(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "InterPodAffinity: no snapshot to read (the framework has no cache)");
}

/* Give @f counts of its own in @a (a no-op when they are already). 0 or -ENOMEM. */
static int own_counts(struct ipa_filter_state *f, struct ks_arena *a)
{
    if (!f->borrowed)
        return 0;
    for (int k = 0; k < NMAPS; k++) {
        if (ks_tp_map_clone(&f->counts[k], &f->counts[k], a))
            return -ENOMEM;
    }
    f->borrowed = false;
    return 0;
}

/* StateData.Clone: the counts are copied (AddPod/RemovePod change them); terms are shared. */
static int state_clone(void *self, const void *src, struct ks_arena *arena, void **dst)
{
    const struct ipa_state *s = src;
    struct ipa_state *c = ks_arena_alloc(arena, sizeof(*c));

    (void)self;
    if (!c)
        return -ENOMEM;
    *c = *s;
    if (s->filter) {
        struct ipa_filter_state *f = ks_arena_alloc(arena, sizeof(*f));
        if (!f)
            return -ENOMEM;
        *f = *s->filter;
        f->borrowed = true; /* copy whatever the source holds */
        if (own_counts(f, arena))
            return -ENOMEM;
        c->filter = f;
    }
    *dst = c;
    return 0;
}

/* ---- PreFilter counting --------------------------------------------------------------------------- */

/*
 * A node's share of the counts, handed pair by pair to @emit(@ctx, ...): existing pods'
 * required anti-affinity terms matching the incoming @pod, and existing pods matching the
 * incoming pod's terms (all of its affinity terms; any anti-affinity term). @incoming
 * false leaves out the latter (a pod without required terms).
 */
static int count_node(const struct ipa_filter_state *f, const struct ks_pod *pod,
                      const struct ks_node_snap *node, bool incoming, ks_tp_emit_fn emit, void *ctx)
{
    uint32_t value;

    for (uint32_t k = 0; k < node->nanti_affinity_pods; k++) {
        const struct ks_pod *q = node->anti_affinity_pods[k];
        const struct ks_pod_affinity *qa = q->affinity.pod_anti_affinity;
        for (uint32_t t = 0; t < qa->nrequired; t++) {
            const struct ks_pod_affinity_term *term = &qa->required[t];
            if (existing_term_matches(term, q, pod, f->ns_labels) &&
                ks_tp_node_value(node, term->topology_key, &value) &&
                emit(ctx, MAP_EXISTING_ANTI, term->topology_key, value, 1))
                return -ENOMEM;
        }
    }
    if (!incoming)
        return 0;
    for (uint32_t k = 0; k < node->npods; k++) {
        const struct ks_pod *q = node->pods[k];
        if (matches_all(f->affinity_terms, f->naffinity, pod, q)) {
            for (uint32_t t = 0; t < f->naffinity; t++) {
                uint32_t key = f->affinity_terms[t].topology_key;
                if (ks_tp_node_value(node, key, &value) && emit(ctx, MAP_AFFINITY, key, value, 1))
                    return -ENOMEM;
            }
        }
        for (uint32_t t = 0; t < f->nanti; t++) {
            uint32_t key = f->anti_terms[t].topology_key;
            if (incoming_term_matches(&f->anti_terms[t], pod, q) && ks_tp_node_value(node, key, &value) &&
                emit(ctx, MAP_ANTI, key, value, 1))
                return -ENOMEM;
        }
    }
    return 0;
}

/* Counting straight into maps of the cycle's arena. */
struct direct_ctx {
    struct ks_tp_map *maps;
    struct ks_arena *arena;
};

static int emit_direct(void *ctx, uint32_t map, uint32_t key, uint32_t value, int64_t count)
{
    struct direct_ctx *x = ctx;
    return ks_tp_map_add(&x->maps[map], x->arena, key, value, count);
}

/*
 * Whether a pod has terms that PreScore weighs even for an incoming pod without preferred
 * terms: pod affinity (required, for hardPodAffinityWeight, or preferred) or preferred
 * anti-affinity.
 */
static inline bool weighs_for_any_pod(const struct ks_pod *q)
{
    const struct ks_affinity *a = &q->affinity;
    return a->pod_affinity || (a->pod_anti_affinity && a->pod_anti_affinity->npreferred);
}

/* The PreFilter memo's share of a node: the counts, and its pods that PreScore weighs. */
struct filter_share_ctx {
    const struct ipa_filter_state *f;
    const struct ks_pod *pod;
};

static int filter_share(void *ctx, const struct ks_node_snap *node, ks_tp_emit_fn emit, void *ectx)
{
    const struct filter_share_ctx *x = ctx;
    int64_t weighing = 0;
    for (uint32_t k = 0; k < node->naffinity_pods; k++)
        weighing += weighs_for_any_pod(node->affinity_pods[k]);
    if (weighing && emit(ectx, MAP_WEIGHING, WEIGHING_KEY, 0, weighing))
        return -ENOMEM;
    return count_node(x->f, x->pod, node, true, emit, ectx);
}

/* getExistingAntiAffinityCounts over the nodes with required anti-affinity pods only. */
static int count_existing_anti(struct ipa_filter_state *f, struct ks_arena *a, const struct ks_snapshot *snap,
                               const struct ks_pod *pod)
{
    struct direct_ctx x = {f->counts, a};

    if (snap->nanti_affinity_nodes &&
        ks_tp_map_init(&f->counts[MAP_EXISTING_ANTI], a, snap->nanti_affinity_nodes))
        return -ENOMEM;
    for (uint32_t i = 0; i < snap->nanti_affinity_nodes; i++) {
        const struct ks_node_snap *node = ks_snapshot_node(snap, snap->anti_affinity_nodes[i]);
        if (count_node(f, pod, node, false, emit_direct, &x))
            return -ENOMEM;
    }
    return 0;
}

/*
 * The counts over the cycle's listing alone (a PodGroup placement: upstream lists only its
 * nodes), counted straight into the cycle's maps: the existing pods' anti-affinity, and with
 * @incoming the pods matching the incoming pod's terms.
 */
static int count_listed(struct ipa_filter_state *f, struct ks_arena *a, const struct ks_snapshot *snap,
                        const struct ks_pod *pod, const struct ks_cycle_state *cs, bool incoming)
{
    struct direct_ctx x = {f->counts, a};
    for (int k = 0; k < NMAPS; k++) {
        if (ks_tp_map_init(&f->counts[k], a, 16))
            return -ENOMEM;
    }
    if (!incoming) {
        /* only existing pods' anti-affinity counts: the listed nodes that have such pods */
        for (uint32_t i = 0; i < snap->nanti_affinity_nodes; i++) {
            const struct ks_node_snap *node = ks_snapshot_node(snap, snap->anti_affinity_nodes[i]);
            if (ks_sorted_ids_have(cs->listing, cs->nlisting, node->name) &&
                count_node(f, pod, node, false, emit_direct, &x))
                return -ENOMEM;
        }
        return 0;
    }
    for (uint32_t i = 0; i < cs->nlisting; i++) {
        const struct ks_node_snap *node = ks_snapshot_find(snap, cs->listing[i]);
        if (node && count_node(f, pod, node, true, emit_direct, &x))
            return -ENOMEM;
    }
    return 0;
}

/* ---- queries ------------------------------------------------------------------------------------ */

static bool ids_equal(uint32_t na, const uint32_t *a, uint32_t nb, const uint32_t *b)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

static bool selector_equal(const struct ks_label_selector *a, const struct ks_label_selector *b)
{
    if (!a || !b)
        return a == b;
    if (a->nreqs != b->nreqs)
        return false;
    for (uint32_t i = 0; i < a->nreqs; i++) {
        const struct ks_requirement *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->key != y->key || x->op != y->op || x->number != y->number ||
            !ids_equal(x->nvalues, x->values, y->nvalues, y->values))
            return false;
    }
    return true;
}

static bool term_equal(const struct ks_pod_affinity_term *x, const struct ks_pod_affinity_term *y)
{
    return x->topology_key == y->topology_key && selector_equal(x->selector, y->selector) &&
           selector_equal(x->namespace_selector, y->namespace_selector) &&
           ids_equal(x->nnamespaces, x->namespaces, y->nnamespaces, y->namespaces) &&
           ids_equal(x->nmatch_label_keys, x->match_label_keys, y->nmatch_label_keys, y->match_label_keys) &&
           ids_equal(x->nmismatch_label_keys, x->mismatch_label_keys, y->nmismatch_label_keys,
                     y->mismatch_label_keys);
}

static bool required_terms_equal(const struct ks_pod_affinity *a, const struct ks_pod_affinity *b)
{
    uint32_t n = a ? a->nrequired : 0;
    if (n != (b ? b->nrequired : 0))
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (!term_equal(&a->required[i], &b->required[i]))
            return false;
    }
    return true;
}

static bool same_namespace_and_labels(const struct ks_pod *a, const struct ks_pod *b)
{
    const struct ks_labels *la = &a->meta.labels, *lb = &b->meta.labels;
    return a->meta.namespace_id == b->meta.namespace_id && la->n == lb->n &&
           (la->n == 0 || memcmp(la->items, lb->items, la->n * sizeof(*la->items)) == 0);
}

static bool preferred_terms_equal(const struct ks_pod_affinity *a, const struct ks_pod_affinity *b)
{
    uint32_t n = a ? a->npreferred : 0;
    if (n != (b ? b->npreferred : 0))
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (a->preferred[i].weight != b->preferred[i].weight ||
            !term_equal(&a->preferred[i].term, &b->preferred[i].term))
            return false;
    }
    return true;
}

/* Whether @a and @b ask PreFilter the same question: namespace, labels and required terms. */
static bool same_filter_query(const struct ks_pod *a, const struct ks_pod *b)
{
    return same_namespace_and_labels(a, b) &&
           required_terms_equal(a->affinity.pod_affinity, b->affinity.pod_affinity) &&
           required_terms_equal(a->affinity.pod_anti_affinity, b->affinity.pod_anti_affinity);
}

/* Whether @a and @b ask PreScore the same question: namespace, labels and preferred terms. */
static bool same_score_query(const struct ks_pod *a, const struct ks_pod *b)
{
    return same_namespace_and_labels(a, b) &&
           preferred_terms_equal(a->affinity.pod_affinity, b->affinity.pod_affinity) &&
           preferred_terms_equal(a->affinity.pod_anti_affinity, b->affinity.pod_anti_affinity);
}

/* ---- PreFilter ------------------------------------------------------------------------------------ */

/* pre_filter - PreFilter. Scheduling thread, inside the snapshot's RCU read section. */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct inter_pod_affinity *p = self;
    const struct ks_pod_affinity *aff = pod->affinity.pod_affinity;
    const struct ks_pod_affinity *anti = pod->affinity.pod_anti_affinity;
    struct ks_arena *a = &cs->arena;

    (void)res;
    if (!p->cache)
        return no_snapshot(st);
    /* the live Namespaces (ks_ns_index_refresh; PreScore reads the index after this) */
    int ns_rebuilt = ks_ns_index_refresh(&p->ns);
    if (ns_rebuilt < 0)
        return out_of_memory(st);
    if (ns_rebuilt) {
        /* the memos' counts read the old namespace labels: the next query starts afresh */
        ks_pod_put(p->filter_memo.query);
        ks_pod_put(p->score_memo.query);
        p->filter_memo.query = p->score_memo.query = NULL;
    }
    const struct ks_snapshot *snap = ks_cache_snapshot(p->cache);
    struct ipa_filter_state *f = ks_arena_alloc(a, sizeof(*f));
    if (!f)
        return out_of_memory(st);
    f->naffinity = aff ? aff->nrequired : 0;
    f->nanti = anti ? anti->nrequired : 0;
    f->ns_labels = namespace_labels(p, pod->meta.namespace_id);
    if (resolve_terms(p, a, pod, aff ? aff->required : NULL, NULL, f->naffinity, &f->affinity_terms) ||
        resolve_terms(p, a, pod, anti ? anti->required : NULL, NULL, f->nanti, &f->anti_terms))
        return out_of_memory(st);
    if (cs->nlisting) {
        if (count_listed(f, a, snap, pod, cs, f->naffinity || f->nanti))
            return out_of_memory(st);
        if (f->naffinity == 0 && f->nanti == 0 && f->counts[MAP_EXISTING_ANTI].nonzero == 0)
            return KS_SKIP;
    } else if (f->naffinity == 0 && f->nanti == 0) {
        /* only existing pods' anti-affinity can reject: O(pods with such terms) */
        if (count_existing_anti(f, a, snap, pod))
            return out_of_memory(st);
        if (f->counts[MAP_EXISTING_ANTI].nonzero == 0)
            return KS_SKIP;
    } else {
        /* every pod of the cluster counts: recount only what changed since the last such pod */
        struct ipa_memo *m = &p->filter_memo;
        struct filter_share_ctx x = {f, pod};
        memo_query(m, pod, same_filter_query);
        if (ks_tp_memo_refresh(&m->counts, snap, filter_share, &x))
            return out_of_memory(st);
        memcpy(f->counts, m->counts.maps, sizeof(f->counts));
        f->borrowed = true;
    }
    f->self_match = matches_all(f->affinity_terms, f->naffinity, pod, pod);
    struct ipa_state *s = state_slot(p, cs);
    if (!s)
        return out_of_memory(st);
    s->filter = f;
    return KS_SUCCESS;
}

/* updateWithPod: account @other on @node into the counts with @multiplier (1 add, -1 remove). */
static int update_with_pod(const struct inter_pod_affinity *p, struct ks_cycle_state *cs,
                           const struct ks_pod *pod, const struct ks_pod *other,
                           const struct ks_node_snap *node, int64_t multiplier, struct ks_status *st)
{
    const struct ipa_state *s = cs->slot[p->slot];
    struct ipa_filter_state *f = s ? s->filter : NULL;
    struct ks_arena *a = &cs->arena;

    if (!f)
        return no_filter_state(st);
    if (own_counts(f, a))
        return out_of_memory(st);
    const struct ks_pod_affinity *oa = other->affinity.pod_anti_affinity;
    for (uint32_t t = 0; oa && t < oa->nrequired; t++) {
        const struct ks_pod_affinity_term *term = &oa->required[t];
        if (existing_term_matches(term, other, pod, f->ns_labels) &&
            ks_tp_map_add_node(&f->counts[MAP_EXISTING_ANTI], a, node, term->topology_key, multiplier))
            return out_of_memory(st);
    }
    if (matches_all(f->affinity_terms, f->naffinity, pod, other)) {
        for (uint32_t t = 0; t < f->naffinity; t++) {
            if (ks_tp_map_add_node(&f->counts[MAP_AFFINITY], a, node, f->affinity_terms[t].topology_key,
                                   multiplier))
                return out_of_memory(st);
        }
    }
    for (uint32_t t = 0; t < f->nanti; t++) {
        if (incoming_term_matches(&f->anti_terms[t], pod, other) &&
            ks_tp_map_add_node(&f->counts[MAP_ANTI], a, node, f->anti_terms[t].topology_key, multiplier))
            return out_of_memory(st);
    }
    return KS_SUCCESS;
}

/* add_pod / remove_pod - PreFilterExtensions. Scheduling thread (dry runs on cloned state). */
static int add_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                   const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    return update_with_pod(self, cs, pod, other, node, 1, st);
}

static int remove_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    return update_with_pod(self, cs, pod, other, node, -1, st);
}

/* ---- Filter --------------------------------------------------------------------------------------- */

/* satisfyPodAffinity */
static bool satisfies_affinity(const struct ipa_filter_state *f, const struct ks_labels *labels)
{
    bool pods_exist = true;
    for (uint32_t t = 0; t < f->naffinity; t++) {
        uint32_t key = f->affinity_terms[t].topology_key, value;
        if (!ks_labels_get(labels, key, &value))
            return false; /* every topology label must exist on the node */
        if (ks_tp_map_get(&f->counts[MAP_AFFINITY], key, value) <= 0)
            pods_exist = false;
    }
    /* the first pod of a group with affinity to itself: no pod matches anywhere yet */
    return pods_exist || (f->counts[MAP_AFFINITY].nonzero == 0 && f->self_match);
}

/* satisfyPodAntiAffinity */
static bool satisfies_anti_affinity(const struct ipa_filter_state *f, const struct ks_labels *labels)
{
    const struct ks_tp_map *m = &f->counts[MAP_ANTI];
    if (m->nonzero == 0)
        return true;
    for (uint32_t t = 0; t < f->nanti; t++) {
        uint32_t key = f->anti_terms[t].topology_key, value;
        if (ks_labels_get(labels, key, &value) && ks_tp_map_get(m, key, value) > 0)
            return false;
    }
    return true;
}

/*
 * satisfyExistingPodsAntiAffinity: upstream looks up every label of the node; only the
 * keys that have entries can hit, and a node has one value per key.
 */
static bool satisfies_existing_anti_affinity(const struct ipa_filter_state *f, const struct ks_labels *labels)
{
    const struct ks_tp_map *m = &f->counts[MAP_EXISTING_ANTI];
    if (m->nonzero == 0)
        return true;
    for (uint32_t k = 0; k < m->nkeys; k++) {
        uint32_t value;
        if (ks_labels_get(labels, m->keys[k], &value) && ks_tp_map_get(m, m->keys[k], value) > 0)
            return false;
    }
    return true;
}

/* filter_node - Filter. Worker threads; reads the cycle state only; allocation-free. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct inter_pod_affinity *p = self;
    const struct ipa_state *s = cs->slot[p->slot];
    const struct ipa_filter_state *f = s ? s->filter : NULL;

    (void)pod;
    if (__builtin_expect(!f, 0))
        return no_filter_state(st);
    const struct ks_labels *labels = ks_tp_node_labels(node);
    if (!satisfies_affinity(f, labels))
        return ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->msg_affinity);
    if (!satisfies_anti_affinity(f, labels))
        return ks_status_reject(st, KS_UNSCHEDULABLE, p->msg_anti);
    if (!satisfies_existing_anti_affinity(f, labels))
        return ks_status_reject(st, KS_UNSCHEDULABLE, p->msg_existing);
    return KS_SUCCESS;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- PreScore, Score, NormalizeScore ---------------------------------------------------------------- */

/* What PreScore weighs every existing pod against, and where the pairs go. */
struct score_ctx {
    ks_tp_emit_fn emit;
    void *ectx;
    const struct ks_pod *pod;
    const struct ks_labels *ns_labels;
    const struct ipa_term *affinity, *anti; /* the incoming pod's preferred terms */
    uint32_t naffinity, nanti;
    int32_t hard_weight;
    bool all_pods; /* the incoming pod has preferred terms: every existing pod weighs */
};

/* processTerm: add @weight to (@key, @node's value) when @matches and the node has the key. */
static inline int score_term(const struct score_ctx *x, const struct ks_node_snap *node, bool matches,
                             uint32_t key, int64_t weight)
{
    uint32_t value;
    if (!matches || !ks_tp_node_value(node, key, &value))
        return 0;
    return x->emit(x->ectx, 0, key, value, weight);
}

/* processExistingPod */
static int process_existing_pod(const struct score_ctx *x, const struct ks_pod *q,
                                const struct ks_node_snap *node)
{
    const struct ks_pod *pod = x->pod;
    const struct ks_pod_affinity *qa = q->affinity.pod_affinity;
    const struct ks_pod_affinity *qn = q->affinity.pod_anti_affinity;

    /*
     * upstream first skips nodes without labels: they have no topology key, so nothing
     * below adds anything there (score_term checks the key)
     */
    for (uint32_t t = 0; t < x->naffinity; t++) {
        const struct ipa_term *rt = &x->affinity[t];
        if (score_term(x, node, incoming_term_matches(rt, pod, q), rt->topology_key, rt->weight))
            return -ENOMEM;
    }
    for (uint32_t t = 0; t < x->nanti; t++) {
        const struct ipa_term *rt = &x->anti[t];
        if (score_term(x, node, incoming_term_matches(rt, pod, q), rt->topology_key, -(int64_t)rt->weight))
            return -ENOMEM;
    }
    if (qa && x->hard_weight > 0) {
        for (uint32_t t = 0; t < qa->nrequired; t++) {
            const struct ks_pod_affinity_term *term = &qa->required[t];
            if (score_term(x, node, existing_term_matches(term, q, pod, x->ns_labels), term->topology_key,
                           x->hard_weight))
                return -ENOMEM;
        }
    }
    for (uint32_t t = 0; qa && t < qa->npreferred; t++) {
        const struct ks_weighted_pod_affinity_term *w = &qa->preferred[t];
        if (score_term(x, node, existing_term_matches(&w->term, q, pod, x->ns_labels), w->term.topology_key,
                       w->weight))
            return -ENOMEM;
    }
    for (uint32_t t = 0; qn && t < qn->npreferred; t++) {
        const struct ks_weighted_pod_affinity_term *w = &qn->preferred[t];
        if (score_term(x, node, existing_term_matches(&w->term, q, pod, x->ns_labels), w->term.topology_key,
                       -(int64_t)w->weight))
            return -ENOMEM;
    }
    return 0;
}

/* A node's share of topologyScore: every pod, or only those with affinity terms that weigh. */
static int score_share(void *ctx, const struct ks_node_snap *node, ks_tp_emit_fn emit, void *ectx)
{
    struct score_ctx x = *(const struct score_ctx *)ctx;
    x.emit = emit;
    x.ectx = ectx;
    if (x.all_pods) {
        for (uint32_t k = 0; k < node->npods; k++) {
            if (process_existing_pod(&x, node->pods[k], node))
                return -ENOMEM;
        }
        return 0;
    }
    for (uint32_t k = 0; k < node->naffinity_pods; k++) {
        const struct ks_pod *q = node->affinity_pods[k];
        if (weighs_for_any_pod(q) && process_existing_pod(&x, q, node))
            return -ENOMEM;
    }
    return 0;
}

/*
 * Pods PreScore weighs for any incoming pod, when this cycle's PreFilter brought its memo
 * up to @snap; -1 when unknown.
 */
static int64_t weighing_pods(const struct inter_pod_affinity *p, const struct ks_snapshot *snap)
{
    const struct ipa_memo *m = &p->filter_memo;
    if (!m->query || !ks_tp_memo_synced(&m->counts, snap))
        return -1;
    return ks_tp_map_get(&m->counts.maps[MAP_WEIGHING], WEIGHING_KEY, 0);
}

/* pre_score - PreScore. Scheduling thread, inside the snapshot's RCU read section. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t nnodes, struct ks_status *st)
{
    struct inter_pod_affinity *p = self;
    const struct ks_pod_affinity *aff = pod->affinity.pod_affinity;
    const struct ks_pod_affinity *anti = pod->affinity.pod_anti_affinity;
    bool has_constraints = (aff && aff->npreferred) || (anti && anti->npreferred);
    struct ks_arena *a = &cs->arena;

    (void)nodes;
    (void)nnodes;
    /* optionally ignore existing pods' preferences when the incoming pod has none */
    if (p->ignore_preferred_terms_of_existing_pods && !has_constraints)
        return KS_SKIP;
    if (!p->cache)
        return no_snapshot(st);
    const struct ks_snapshot *snap = ks_cache_snapshot(p->cache);
    /* no preferences of its own, and no existing pod with terms that weigh: nothing to add */
    if (!has_constraints && weighing_pods(p, snap) == 0)
        return KS_SKIP;
    struct ipa_score_state *sc = ks_arena_alloc(a, sizeof(*sc));
    struct direct_ctx direct = {sc ? &sc->scores : NULL, a};
    struct score_ctx x = {
        .emit = emit_direct,
        .ectx = &direct,
        .pod = pod,
        .ns_labels = namespace_labels(p, pod->meta.namespace_id),
        .naffinity = aff ? aff->npreferred : 0,
        .nanti = anti ? anti->npreferred : 0,
        .hard_weight = p->hard_pod_affinity_weight,
        .all_pods = has_constraints,
    };
    if (!sc || resolve_terms(p, a, pod, NULL, aff ? aff->preferred : NULL, x.naffinity, &x.affinity) ||
        resolve_terms(p, a, pod, NULL, anti ? anti->preferred : NULL, x.nanti, &x.anti))
        return out_of_memory(st);

    if (cs->nlisting) {
        /* a PodGroup placement's listing: its nodes' shares alone */
        if (ks_tp_map_init(&sc->scores, a, 16))
            return out_of_memory(st);
        /* without preferences of its own only the nodes with affinity pods weigh in */
        uint32_t n = has_constraints ? cs->nlisting : snap->naffinity_nodes;
        for (uint32_t i = 0; i < n; i++) {
            const struct ks_node_snap *node = has_constraints
                                                  ? ks_snapshot_find(snap, cs->listing[i])
                                                  : ks_snapshot_node(snap, snap->affinity_nodes[i]);
            if (node && (has_constraints || ks_sorted_ids_have(cs->listing, cs->nlisting, node->name)) &&
                score_share(&x, node, emit_direct, &direct))
                return out_of_memory(st);
        }
        if (sc->scores.nkeys == 0)
            return KS_SKIP;
    } else if (has_constraints || snap->naffinity_nodes >= p->score_memo_min_nodes) {
        /* every node's share, recounted only where the record changed since the last such pod */
        struct ipa_memo *m = &p->score_memo;
        memo_query(m, pod, same_score_query);
        if (ks_tp_memo_refresh(&m->counts, snap, score_share, &x))
            return out_of_memory(st);
        if (m->counts.live == 0)
            return KS_SKIP;
        sc->scores = m->counts.maps[0]; /* read-only until the next PreScore */
    } else {
        /* only existing pods with affinity terms can weigh in */
        if (ks_tp_map_init(&sc->scores, a, 16))
            return out_of_memory(st);
        for (uint32_t i = 0; i < snap->naffinity_nodes; i++) {
            const struct ks_node_snap *node = ks_snapshot_node(snap, snap->affinity_nodes[i]);
            if (score_share(&x, node, emit_direct, &direct))
                return out_of_memory(st);
        }
        if (sc->scores.nkeys == 0)
            return KS_SKIP;
    }
    struct ipa_state *s = state_slot(p, cs);
    if (!s)
        return out_of_memory(st);
    s->score = sc;
    return KS_SUCCESS;
}

/* score_node - Score: the sum of the node's topology pairs. Worker threads; allocation-free. */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    const struct inter_pod_affinity *p = self;
    const struct ipa_state *s = cs->slot[p->slot];
    const struct ipa_score_state *sc = s ? s->score : NULL;

    (void)pod;
    if (__builtin_expect(!sc, 0))
        return no_score_state(st);
    const struct ks_labels *labels = ks_tp_node_labels(node);
    int64_t total = 0;
    for (uint32_t k = 0; k < sc->scores.nkeys; k++) {
        uint32_t key = sc->scores.keys[k], value;
        if (ks_labels_get(labels, key, &value))
            total += ks_tp_map_get(&sc->scores, key, value);
    }
    *out = total;
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/* normalize_score - NormalizeScore: min-max scaling in float64, truncated. Scheduling thread. */
static int normalize_score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                           struct ks_status *st)
{
    const struct inter_pod_affinity *p = self;
    const struct ipa_state *s = cs->slot[p->slot];
    const struct ipa_score_state *sc = s ? s->score : NULL;

    (void)pod;
    (void)nodes;
    if (!sc)
        return no_score_state(st);
    if (sc->scores.nkeys == 0)
        return KS_SUCCESS;
    int64_t min = INT64_MAX, max = INT64_MIN;
    for (uint32_t i = 0; i < n; i++) {
        if (scores[i] > max)
            max = scores[i];
        if (scores[i] < min)
            min = scores[i];
    }
    int64_t diff = max - min;
    for (uint32_t i = 0; i < n; i++) {
        double f = 0;
        if (diff > 0)
            f = (double)KS_MAX_NODE_SCORE * ((double)(scores[i] - min) / (double)diff);
        scores[i] = (int64_t)f;
    }
    return KS_SUCCESS;
}

/* ---- signature --------------------------------------------------------------------------------- */

/* An emit that stops score_share() at the first pair it would add (its "error"). */
static int emit_stop(void *ctx, uint32_t map, uint32_t key, uint32_t value, int64_t count)
{
    (void)map;
    (void)key;
    (void)value;
    (void)count;
    *(bool *)ctx = true;
    return -1;
}

/*
 * Whether PreScore would weigh some existing pod's term for @pod, a pod without terms of
 * its own: some pod with affinity terms (hard affinity when hardPodAffinityWeight > 0,
 * preferred terms) has one that matches @pod on a node carrying its topology key. When
 * none has, PreScore skips (nothing is added, through either of its paths).
 */
static bool existing_pods_weigh(const struct inter_pod_affinity *p, const struct ks_snapshot *snap,
                                const struct ks_pod *pod)
{
    bool found = false;
    struct score_ctx x = {
        .pod = pod,
        .ns_labels = namespace_labels(p, pod->meta.namespace_id),
        .hard_weight = p->hard_pod_affinity_weight,
    };
    for (uint32_t i = 0; i < snap->naffinity_nodes && !found; i++)
        score_share(&x, ks_snapshot_node(snap, snap->affinity_nodes[i]), emit_stop, &found);
    return found;
}

/*
 * sign - signable only when Filter and Score depend on no other pod: the pod has no
 * (anti-)affinity terms, its PreFilter skipped (no existing pod's required anti-affinity
 * matches it: the counts Filter reads are empty), and its PreScore will skip
 * (ignorePreferredTermsOfExistingPods, or no existing pod's term weighs for it). The
 * plugin then neither filters nor scores, and signs nothing. Scheduling thread, inside
 * the RCU read section of the snapshot PreFilter read; allocation-free; O(pods with
 * affinity terms) when some exist.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct inter_pod_affinity *p = self;
    const struct ks_pod_affinity *aff = pod->affinity.pod_affinity;
    const struct ks_pod_affinity *anti = pod->affinity.pod_anti_affinity;

    (void)sig;
    if ((aff && (aff->nrequired || aff->npreferred)) || (anti && (anti->nrequired || anti->npreferred)))
        return KS_SKIP;
    if (!(cs->skip_filter & (UINT64_C(1) << p->slot)))
        return KS_SKIP;
    if (p->ignore_preferred_terms_of_existing_pods)
        return KS_SUCCESS;
    if (!p->cache || existing_pods_weigh(p, ks_cache_snapshot(p->cache), pod))
        return KS_SKIP;
    return KS_SUCCESS;
}

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* One required (anti-)affinity term of @owner against @other (AffinityTerm.Matches without namespace labels).
 */
static bool hint_term_matches(const struct ks_pod *owner, const struct ks_pod_affinity_term *t,
                              const struct ks_pod *other)
{
    static const struct ks_labels no_labels;
    bool ns;
    if (t->nnamespaces == 0 && !t->namespace_selector) {
        ns = other->meta.namespace_id == owner->meta.namespace_id;
    } else {
        ns = false;
        for (uint32_t i = 0; i < t->nnamespaces && !ns; i++)
            ns = t->namespaces[i] == other->meta.namespace_id;
        if (!ns && t->namespace_selector)
            ns = ks_label_selector_matches(t->namespace_selector, &no_labels);
    }
    return ns && ks_label_selector_matches(t->selector, &other->meta.labels);
}

/* podMatchesAllAffinityTerms: false without terms. */
static bool hint_matches_all(const struct ks_pod *owner, const struct ks_pod_affinity *a,
                             const struct ks_pod *other)
{
    if (!a || a->nrequired == 0)
        return false;
    for (uint32_t i = 0; i < a->nrequired; i++) {
        if (!hint_term_matches(owner, &a->required[i], other))
            return false;
    }
    return true;
}

/* InterPodAffinity: a scheduled pod that (now) satisfies the affinity, or no longer the anti-affinity. */
static enum ks_queueing_hint hint_affinity_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                               const void *new_obj)
{
    const struct ks_pod *o = old_obj, *m = new_obj;
    const struct ks_pod_affinity *aff = pod->affinity.pod_affinity, *anti = pod->affinity.pod_anti_affinity;
    (void)self;
    if ((m && !ks_pod_assigned(m)) || (o && !ks_pod_assigned(o)))
        return KS_QUEUE_SKIP;
    if (m && o) {
        if (!hint_matches_all(pod, aff, o) && hint_matches_all(pod, aff, m))
            return KS_QUEUE;
        if (hint_matches_all(pod, anti, o) && !hint_matches_all(pod, anti, m))
            return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (m)
        return hint_matches_all(pod, aff, m) ? KS_QUEUE : KS_QUEUE_SKIP;
    if (o)
        return hint_matches_all(pod, anti, o) ? KS_QUEUE : KS_QUEUE_SKIP;
    return KS_QUEUE;
}

static bool has_topology_key(const struct ks_pod_affinity *a, const struct ks_node *n)
{
    uint32_t v;
    for (uint32_t i = 0; a && i < a->nrequired; i++) {
        if (ks_labels_get(&n->meta.labels, a->required[i].topology_key, &v))
            return true;
    }
    return false;
}

/* InterPodAffinity: a node that carries a topology key of the pod's terms. */
static enum ks_queueing_hint hint_affinity_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                                const void *new_obj)
{
    const struct ks_node *n = new_obj;
    (void)self;
    (void)old_obj;
    if (!n)
        return KS_QUEUE;
    return has_topology_key(pod->affinity.pod_affinity, n) ||
                   has_topology_key(pod->affinity.pod_anti_affinity, n)
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE}, hint_affinity_pod},
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT}, hint_affinity_node},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_inter_pod_affinity = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "InterPodAffinity",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .add_pod = add_pod,
    .remove_pod = remove_pod,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .normalize_score = normalize_score,
    .state_clone = state_clone,
    .sign = sign,
    .events_to_register = events_to_register,
};
