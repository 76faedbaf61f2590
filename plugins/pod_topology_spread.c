/*
 * pod_topology_spread.c - the PodTopologySpread plugin: topology spread constraints as a
 * filter (DoNotSchedule) and a score (ScheduleAnyway), with cluster default constraints
 * for pods that define none (PreFilter with AddPod/RemovePod, Filter, PreScore, Score,
 * NormalizeScore).
 *
 * Mirrors pkg/scheduler/framework/plugins/podtopologyspread/{plugin.go,common.go,
 * filtering.go,scoring.go} with every feature gate of current upstream on (minDomains,
 * nodeAffinityPolicy / nodeTaintsPolicy, matchLabelKeys).
 *
 * Args (PodTopologySpreadArgs): defaultingType defaults to System
 * (SetDefaults_PodTopologySpreadArgs; List for v1beta2 with the DefaultPodTopologySpread
 * feature gate off, ksched/internal/features.h); ValidatePodTopologySpreadArgs requires System or
 * List, no constraints with System, and per constraint a positive maxSkew, a valid
 * topologyKey, a known whenUnsatisfiable, no labelSelector (it is derived per pod) and no
 * repeated {topologyKey, whenUnsatisfiable}. System defaulting means upstream's built-in
 * constraints: {kubernetes.io/hostname, maxSkew 3} then {topology.kubernetes.io/zone,
 * maxSkew 5}, both ScheduleAnyway.
 *
 * Constraints of a pod (getConstraints): its own, of the extension point's action, with
 * matchLabelKeys merged into the selector; or, when it has none, the default constraints of
 * that action with the selector of the Services / ReplicationControllers / ReplicaSets /
 * StatefulSets that select it (helper.DefaultSelector; none: no constraints). Policies
 * default to nodeAffinityPolicy Honor and nodeTaintsPolicy Ignore, minDomains to 1.
 *
 * PreFilter counts, over every node of the snapshot (not only the feasible ones) that
 * carries all the constraints' keys and passes a constraint's inclusion policies, the
 * pods of the pod's namespace its selector matches (terminating pods excluded), per value
 * of its key; then the critical paths. The counts come from a counter kept across cycles
 * (plugins/helpers/helper_spread_counter.c) that recounts only the node records that changed,
 * skipping unchanged snapshot chunks (plugins/helpers/helper_node_memo.c), so a cycle costs
 * O(nodes / 256) chunk checks + O(domains), not O(pods). No DoNotSchedule constraint:
 * Skip. AddPod / RemovePod adjust a count and the paths as updateWithPod (and state_clone
 * copies them for preemption's dry runs).
 *
 * Filter, per constraint: a node without the key is UnschedulableAndUnresolvable
 * "node(s) didn't match pod topology spread constraints (missing required label)"; it is
 * Unschedulable "node(s) didn't match pod topology spread constraints" when
 * count(domain) + selfMatch - minMatch > maxSkew, minMatch being the critical path's
 * minimum, or 0 while fewer domains than minDomains exist.
 *
 * PreScore (ScheduleAnyway constraints; none: Skip; no node at all: Skip) counts like
 * PreFilter over all nodes, except that hostname constraints are counted per node in
 * Score and that with system defaulting a node need not carry every key. Score sums, per
 * constraint whose key the node carries, count * log(size + 2) + (maxSkew - 1), size being
 * the number of distinct values among the scored nodes (for hostname, the number of
 * scored nodes not ignored), and rounds half away from zero; nodes missing a key score 0
 * and are ignored by NormalizeScore, which maps s to 100 * (max + min - s) / max.
 *
 * Signature: a pod without constraints signs nothing; one with ScheduleAnyway constraints
 * only, over the hostname and at most one other key, is spread-scored (ksched/sign.h:
 * the index adds its Score per cycle, engine/index_spread.c); any other is unsignable.
 *
 * Context: PreFilter, PreScore, AddPod/RemovePod and NormalizeScore on the scheduling
 * thread inside the RCU read section; Filter and Score on workers, allocation-free,
 * reading the cycle state (cs->arena) and the node record only.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config_decode.h"
#include "ksched/internal/features.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_spread.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- args ----------------------------------------------------------------------------------- */

static const char *const policy_names[] = {"", "Honor", "Ignore", NULL}; /* enum ks_inclusion_policy */
static const char *const action_names[] = {"DoNotSchedule",
                                           "ScheduleAnyway"}; /* enum ks_unsatisfiable_action */

static int decode_constraint(struct ks_decoder *d, const struct ks_yaml_node *n,
                             struct ks_spread_constraint *c, const char **when)
{
    static const char *const fields[] = {"maxSkew",          "topologyKey",    "whenUnsatisfiable",
                                         "labelSelector",    "minDomains",     "nodeAffinityPolicy",
                                         "nodeTaintsPolicy", "matchLabelKeys", NULL};
    int affinity = KS_POLICY_UNSET, taints = KS_POLICY_UNSET, rc;

    c->topology_key = KS_ID_EMPTY;
    *when = "";
    if ((rc = ks_cfg_strict(d, n, fields)) || (rc = ks_dec_int32(d, n, "maxSkew", &c->max_skew)) ||
        (rc = ks_dec_id(d, n, "topologyKey", &c->topology_key)) ||
        (rc = ks_dec_string(d, n, "whenUnsatisfiable", when)) ||
        (rc = ks_dec_label_selector(d, n, "labelSelector", &c->selector)) ||
        (rc = ks_dec_int32(d, n, "minDomains", &c->min_domains)) ||
        (rc = ks_dec_enum(d, n, "nodeAffinityPolicy", policy_names, &affinity)) ||
        (rc = ks_dec_enum(d, n, "nodeTaintsPolicy", policy_names, &taints)) ||
        (rc = ks_dec_id_list(d, n, "matchLabelKeys", &c->nmatch_label_keys, &c->match_label_keys)))
        return rc;
    c->node_affinity_policy = (enum ks_inclusion_policy)affinity;
    c->node_taints_policy = (enum ks_inclusion_policy)taints;
    return 0;
}

static int check_constraint(struct ks_decoder *d, const struct ks_yaml_node *n,
                            const struct ks_spread_constraint *all, uint32_t i, const char *when)
{
    const struct ks_spread_constraint *c = &all[i];
    const char *key = ks_intern_str(c->topology_key);
    char why[512];

    if (c->max_skew <= 0)
        return ks_cfg_fail_at(d, ks_yaml_get(n, "maxSkew"), n->line, "maxSkew",
                              "Invalid value: %d: not in valid range (0, inf)", c->max_skew);
    if (!*key)
        return ks_cfg_fail_at(d, ks_yaml_get(n, "topologyKey"), n->line, "topologyKey",
                              "Required value: can not be empty");
    if (!ks_cfg_qualified_name(key, why, sizeof(why)))
        return ks_cfg_fail_at(d, ks_yaml_get(n, "topologyKey"), n->line, "topologyKey",
                              "Invalid value: \"%s\": %s", key, why);
    if (!*when)
        return ks_cfg_fail_at(d, ks_yaml_get(n, "whenUnsatisfiable"), n->line, "whenUnsatisfiable",
                              "Required value: can not be empty");
    if (strcmp(when, action_names[KS_DO_NOT_SCHEDULE]) != 0 &&
        strcmp(when, action_names[KS_SCHEDULE_ANYWAY]) != 0)
        return ks_cfg_fail_at(
            d, ks_yaml_get(n, "whenUnsatisfiable"), n->line, "whenUnsatisfiable",
            "Unsupported value: \"%s\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"", when);
    if (c->selector)
        return ks_cfg_fail_at(
            d, ks_yaml_get(n, "labelSelector"), n->line, "labelSelector",
            "Forbidden: constraint must not define a selector, as they deduced for each pod");
    for (uint32_t k = 0; k < i; k++) {
        if (all[k].topology_key == c->topology_key && all[k].when_unsatisfiable == c->when_unsatisfiable)
            return ks_cfg_fail_at(d, n, 0, NULL, "Duplicate value: \"{%s, %s}\"", key, when);
    }
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_podtopologyspread_args *a)
{
    static const char *const fields[] = {"defaultConstraints", "defaultingType", NULL};
    const struct ks_yaml_node *seq = NULL;
    const char *type = NULL;
    enum ks_config_version version;
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "PodTopologySpreadArgs", api_version, fields, &version)) ||
        (rc = ks_dec_seq(d, node, "defaultConstraints", &seq)) ||
        (rc = ks_dec_string(d, node, "defaultingType", &type)))
        return rc;
    uint32_t n = seq ? seq->n : 0;
    const char **when = ks_arena_calloc(d->arena, n ? n : 1, sizeof(*when));
    a->default_constraints = ks_arena_calloc(d->arena, n ? n : 1, sizeof(*a->default_constraints));
    if (!when || !a->default_constraints)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "defaultConstraints");
    for (uint32_t i = 0; i < n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = decode_constraint(d, seq->items[i], &a->default_constraints[i], &when[i])))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    a->nconstraints = n;

    /*
     * SetDefaults_PodTopologySpreadArgs (v1beta2 of 1.22: List while the
     * DefaultPodTopologySpread gate is off), then ValidatePodTopologySpreadArgs
     */
    if (!type || !*type)
        type = version == KS_CONFIG_V1BETA2 && !ks_feature_enabled(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD)
                   ? "List"
                   : "System";
    const struct ks_yaml_node *tn = ks_yaml_get(node, "defaultingType");
    int line = node ? node->line : 0;
    if (strcmp(type, "System") != 0 && strcmp(type, "List") != 0)
        return ks_cfg_fail_at(d, tn, line, "defaultingType",
                              "Unsupported value: \"%s\": supported values: \"System\", \"List\"", type);
    a->defaulting = strcmp(type, "List") == 0 ? KS_SPREAD_DEFAULTING_LIST : KS_SPREAD_DEFAULTING_SYSTEM;
    if (a->defaulting == KS_SPREAD_DEFAULTING_SYSTEM && n > 0)
        return ks_cfg_fail_at(d, tn, line, "defaultingType",
                              "Invalid value: \"System\": when .defaultConstraints are not empty");
    saved = ks_dec_push(d, "defaultConstraints");
    for (uint32_t i = 0; i < n; i++) {
        struct ks_spread_constraint *c = &a->default_constraints[i];
        c->when_unsatisfiable =
            strcmp(when[i], action_names[KS_SCHEDULE_ANYWAY]) == 0 ? KS_SCHEDULE_ANYWAY : KS_DO_NOT_SCHEDULE;
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = check_constraint(d, seq->items[i], a->default_constraints, i, when[i])))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_podtopologyspread_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_podtopologyspread_args *a = args;

    if (a->nconstraints) {
        ks_yaml_key_seq(o, "defaultConstraints");
        for (uint32_t i = 0; i < a->nconstraints; i++) {
            const struct ks_spread_constraint *c = &a->default_constraints[i];
            ks_yaml_item_map(o);
            ks_yaml_key_int(o, "maxSkew", c->max_skew);
            ks_yaml_key_str(o, "topologyKey", ks_intern_str(c->topology_key));
            ks_yaml_key_str(o, "whenUnsatisfiable", action_names[c->when_unsatisfiable]);
            if (c->min_domains)
                ks_yaml_key_int(o, "minDomains", c->min_domains);
            if (c->node_affinity_policy != KS_POLICY_UNSET)
                ks_yaml_key_str(o, "nodeAffinityPolicy", policy_names[c->node_affinity_policy]);
            if (c->node_taints_policy != KS_POLICY_UNSET)
                ks_yaml_key_str(o, "nodeTaintsPolicy", policy_names[c->node_taints_policy]);
            if (c->nmatch_label_keys) {
                ks_yaml_key_seq(o, "matchLabelKeys");
                for (uint32_t k = 0; k < c->nmatch_label_keys; k++)
                    ks_yaml_item_str(o, ks_intern_str(c->match_label_keys[k]));
                ks_yaml_end(o);
            }
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_key_str(o, "defaultingType", a->defaulting == KS_SPREAD_DEFAULTING_LIST ? "List" : "System");
}

/* ---- instance ------------------------------------------------------------------------------- */

/* Counted queries kept per profile: one per distinct pod template and action is typical. */
#define PTS_COUNTER_ENTRIES 8

struct pts {
    uint16_t slot;
    bool system_defaulted;
    uint32_t ndefaults;
    const struct ks_spread_constraint *defaults; /* args' list, or system[] */
    struct ks_spread_constraint system[2];
    struct ks_cache *cache;
    const struct ks_objects *objects;
    struct ks_spread_counter *counter;
    uint32_t hostname;
    uint32_t reason_skew;             /* ErrReasonConstraintsNotMatch */
    uint32_t reason_label;            /* ErrReasonNodeLabelNotMatch */
    struct ks_spread_tracker tracked; /* the selectors the cache counts, as the last cycles used them */
    struct ks_spread_owners *owners;  /* the workloads and Services the default selector reads, indexed */
};

static void destroy(void *self)
{
    struct pts *p = self;
    if (!p)
        return;
    ks_spread_counter_destroy(p->counter);
    ks_spread_tracker_destroy(&p->tracked);
    ks_spread_owners_destroy(p->owners);
    free(p);
}

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    const struct ks_podtopologyspread_args *a = in->args;
    struct pts *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p || ks_api_init() < 0 || ks_spread_counter_create(PTS_COUNTER_ENTRIES, &p->counter) < 0 ||
        ks_spread_owners_create(&p->owners) < 0) {
        if (p)
            ks_spread_counter_destroy(p->counter);
        free(p);
        return -ENOMEM;
    }
    p->slot = in->slot;
    p->hostname = ks_wk.hostname_label;
    p->reason_skew = ks_intern("node(s) didn't match pod topology spread constraints");
    p->reason_label =
        ks_intern("node(s) didn't match pod topology spread constraints (missing required label)");
    /* systemDefaultConstraints */
    p->system[0] = (struct ks_spread_constraint){
        .max_skew = 3, .topology_key = ks_wk.hostname_label, .when_unsatisfiable = KS_SCHEDULE_ANYWAY};
    p->system[1] = (struct ks_spread_constraint){
        .max_skew = 5, .topology_key = ks_wk.zone_label, .when_unsatisfiable = KS_SCHEDULE_ANYWAY};
    if (!a || a->defaulting == KS_SPREAD_DEFAULTING_SYSTEM) {
        p->system_defaulted = true;
        p->defaults = p->system;
        p->ndefaults = 2;
    } else {
        p->defaults = a->default_constraints;
        p->ndefaults = a->nconstraints;
    }
    if (in->framework) {
        const struct ks_framework_deps *deps = ks_framework_deps(in->framework);
        p->cache = deps->cache;
        p->objects = deps->objects;
    }
    if (p->reason_skew == KS_ID_NONE || p->reason_label == KS_ID_NONE) {
        destroy(p);
        return -ENOMEM;
    }
    *self = p;
    return 0;
}

/* ---- constraints ----------------------------------------------------------------------------- */

/* The snapshot PreFilter and PreScore count over; NULL without a cache (no nodes). */
static const struct ks_snapshot *snapshot_of(const struct pts *p)
{
    return p->cache ? ks_cache_snapshot(p->cache) : NULL;
}

/* One v1.TopologySpreadConstraint as filterTopologySpreadConstraints turns it into ours. */
static void constraint_of(const struct ks_spread_constraint *c, const struct ks_label_selector *sel,
                          const struct ks_pod *pod, uint32_t sel_id, struct ks_pts_constraint *out)
{
    *out = (struct ks_pts_constraint){
        .max_skew = c->max_skew,
        .topology_key = c->topology_key,
        .selector = sel,
        .min_domains = c->min_domains ? c->min_domains : 1,
        .honor_affinity = c->node_affinity_policy != KS_POLICY_IGNORE,
        .honor_taints = c->node_taints_policy == KS_POLICY_HONOR,
        .self_match = ks_label_selector_matches(sel, &pod->meta.labels),
        .sel_id = sel_id,
    };
}

/*
 * getConstraints for @action: the pod's own constraints, or the default ones with the
 * pod's default selector. *n is 0 when there are none. Returns 0 or -ENOMEM.
 */
static int constraints_of(struct pts *p, const struct ks_pod *pod, enum ks_unsatisfiable_action action,
                          struct ks_arena *arena, struct ks_pts_constraint **out, uint32_t *n)
{
    const struct ks_spread_constraint *list = pod->nspread ? pod->spread : p->defaults;
    uint32_t nlist = pod->nspread ? pod->nspread : p->ndefaults, k = 0;

    *n = 0;
    for (uint32_t i = 0; i < nlist; i++)
        k += list[i].when_unsatisfiable == action;
    if (k == 0)
        return 0;
    struct ks_pts_constraint *cons = ks_arena_calloc(arena, k, sizeof(*cons));
    if (!cons)
        return -ENOMEM;
    const struct ks_label_selector *dflt = NULL;
    if (!pod->nspread) {
        /* buildDefaultConstraints: nothing selects the pod, no default constraints */
        if (ks_spread_default_selector(p->objects, ks_spread_owners_sync(p->owners, p->objects), pod, arena,
                                       &dflt) < 0)
            return -ENOMEM;
        if (dflt->nreqs == 0)
            return 0;
    }
    k = 0;
    for (uint32_t i = 0; i < nlist; i++) {
        const struct ks_spread_constraint *c = &list[i];
        const struct ks_label_selector *sel = dflt;
        if (c->when_unsatisfiable != action)
            continue;
        if (!dflt && ks_spread_match_label_keys(c, &pod->meta.labels, arena, &sel) < 0)
            return -ENOMEM;
        bool empty;
        uint32_t id =
            ks_spread_counted_id(&p->tracked, p->cache, snapshot_of(p), pod->meta.namespace_id, sel, &empty);
        constraint_of(c, sel, pod, id, &cons[k]);
        cons[k++].sel_empty = empty || !sel;
    }
    *out = cons;
    *n = k;
    return 0;
}

/* Count @cons over every node into @counts (tables in @arena). */
static int count_domains(struct pts *p, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_pts_constraint *cons, uint32_t n, bool require_all,
                         bool per_node_hostname, struct ks_arena *arena, struct ks_spread_domains *counts,
                         struct ks_spread_hosts *hosts)
{
    const struct ks_snapshot *snap = snapshot_of(p);
    struct ks_spread_term *terms = ks_arena_calloc(arena, n, sizeof(*terms));
    if (!terms)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        terms[i] = (struct ks_spread_term){
            .topology_key = cons[i].topology_key,
            .selector = cons[i].selector,
            .honor_affinity = cons[i].honor_affinity,
            .honor_taints = cons[i].honor_taints,
            .per_node = per_node_hostname && cons[i].topology_key == p->hostname,
            .empty = cons[i].sel_empty,
            .sel_id = cons[i].sel_id,
        };
    if (!snap) {
        for (uint32_t i = 0; i < n; i++) {
            if (ks_spread_domains_clone(&counts[i], &(struct ks_spread_domains){0}, arena) < 0)
                return -ENOMEM;
        }
        return 0;
    }
    struct ks_spread_query q = {.ns = pod->meta.namespace_id,
                                .require_all = require_all,
                                .pod = pod,
                                .nterms = n,
                                .terms = terms,
                                .nlisting = cs->nlisting,
                                .listing = cs->listing,
                                .hosts = hosts};
    return ks_spread_counter_count(p->counter, snap, &q, arena, counts);
}

static struct ks_pts_cycle *cycle_of(const struct pts *p, struct ks_cycle_state *cs)
{
    struct ks_pts_cycle *c = cs->slot[p->slot];
    if (!c && (c = ks_arena_alloc(&cs->arena, sizeof(*c))))
        cs->slot[p->slot] = c;
    return c;
}

__attribute__((noinline, cold)) static int nomem(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "out of memory");
}

/* ---- PreFilter, AddPod, RemovePod ------------------------------------------------------------------ */

/* pre_filter - calPreFilterState. Scheduling thread, RCU read section. */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct pts *p = self;
    struct ks_pts_constraint *cons = NULL;
    uint32_t n;

    (void)res;
    ks_spread_owners_sync(p->owners, p->objects); /* for sign too, which may not allocate */
    if (constraints_of(p, pod, KS_DO_NOT_SCHEDULE, &cs->arena, &cons, &n) < 0)
        return nomem(st);
    if (n == 0)
        return KS_SKIP;
    struct ks_pts_cycle *c = cycle_of(p, cs);
    struct ks_pts_filter_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    struct ks_spread_domains *counts = ks_arena_calloc(&cs->arena, n, sizeof(*counts));
    struct ks_spread_paths *paths = ks_arena_calloc(&cs->arena, n, sizeof(*paths));
    if (!c || !s || !counts || !paths ||
        count_domains(p, cs, pod, cons, n, true, false, &cs->arena, counts, NULL) < 0)
        return nomem(st);
    for (uint32_t i = 0; i < n; i++) {
        ks_spread_paths_init(&paths[i]);
        for (uint32_t k = 0; counts[i].slots && k <= counts[i].mask; k++) {
            const struct ks_spread_domain *d = &counts[i].slots[k];
            if (d->value != KS_ID_NONE)
                ks_spread_paths_update(&paths[i], d->value, d->count);
        }
    }
    *s = (struct ks_pts_filter_state){.n = n, .cons = cons, .counts = counts, .paths = paths};
    c->filter = s;
    return KS_SUCCESS;
}

__attribute__((noinline, cold)) static int no_filter_state(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

/* updateWithPod: @other added (+1) to or removed (-1) from @node, for @pod's constraints. */
static int update_with_pod(struct pts *p, struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_pod *other, const struct ks_node_snap *node, int delta,
                           struct ks_status *st)
{
    const struct ks_pts_cycle *c = cs->slot[p->slot];
    struct ks_pts_filter_state *s = c ? c->filter : NULL;

    if (!s)
        return no_filter_state(st);
    if (other->meta.namespace_id != pod->meta.namespace_id || !node || !node->node)
        return KS_SUCCESS;
    const struct ks_labels *labels = &node->node->meta.labels;
    for (uint32_t i = 0; i < s->n; i++) {
        if (!ks_labels_get(labels, s->cons[i].topology_key, NULL))
            return KS_SUCCESS;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        const struct ks_pts_constraint *k = &s->cons[i];
        uint32_t value;
        int64_t now;
        if (!ks_label_selector_matches(k->selector, &other->meta.labels) ||
            (k->honor_affinity && !ks_spread_affinity_matches(pod, node->node)) ||
            (k->honor_taints && !ks_spread_taints_tolerated(pod, node->node)))
            continue;
        ks_labels_get(labels, k->topology_key, &value);
        if (ks_spread_domains_add(&s->counts[i], &cs->arena, value, delta, &now) < 0)
            return nomem(st);
        ks_spread_paths_update(&s->paths[i], value, now);
    }
    return KS_SUCCESS;
}

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

/* state_clone - preFilterState.Clone (the counts and paths; constraints shared) and the PreScore state
 * shared. */
static int state_clone(void *self, const void *src, struct ks_arena *arena, void **dst)
{
    const struct ks_pts_cycle *from = src;
    struct ks_pts_cycle *to = ks_arena_alloc(arena, sizeof(*to));

    (void)self;
    if (!to)
        return -ENOMEM;
    *to = *from;
    if (from->filter) {
        const struct ks_pts_filter_state *f = from->filter;
        struct ks_pts_filter_state *s = ks_arena_alloc(arena, sizeof(*s));
        struct ks_spread_domains *counts = ks_arena_calloc(arena, f->n ? f->n : 1, sizeof(*counts));
        struct ks_spread_paths *paths = ks_arena_calloc(arena, f->n ? f->n : 1, sizeof(*paths));
        if (!s || !counts || !paths)
            return -ENOMEM;
        for (uint32_t i = 0; i < f->n; i++) {
            if (ks_spread_domains_clone(&counts[i], &f->counts[i], arena) < 0)
                return -ENOMEM;
            paths[i] = f->paths[i];
        }
        *s = (struct ks_pts_filter_state){.n = f->n, .cons = f->cons, .counts = counts, .paths = paths};
        to->filter = s;
    }
    *dst = to;
    return 0;
}

/* ---- Filter --------------------------------------------------------------------------------- */

/* filter_node - Worker threads; reads the cycle state and the node's labels; allocation-free. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct pts *p = self;
    const struct ks_pts_cycle *c = cs->slot[p->slot];
    const struct ks_pts_filter_state *s = c ? c->filter : NULL;

    (void)pod;
    if (__builtin_expect(!s, 0))
        return no_filter_state(st);
    const struct ks_labels *labels = node->node ? &node->node->meta.labels : &(struct ks_labels){0, NULL};
    for (uint32_t i = 0; i < s->n; i++) {
        const struct ks_pts_constraint *k = &s->cons[i];
        uint32_t value;
        if (!ks_labels_get(labels, k->topology_key, &value)) {
            st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
            st->nreasons = 1;
            st->reasons[0] = p->reason_label;
            return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        }
        /* minMatchNum: the global minimum, 0 while fewer domains than minDomains exist */
        int64_t min = s->counts[i].n < (uint32_t)k->min_domains ? 0 : s->paths[i].num[0];
        const struct ks_spread_domain *d = ks_spread_domains_find(&s->counts[i], value);
        int64_t skew = (d ? d->count : 0) + (k->self_match ? 1 : 0) - min;
        if (skew > k->max_skew) {
            st->code = KS_UNSCHEDULABLE;
            st->nreasons = 1;
            st->reasons[0] = p->reason_skew;
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- PreScore, Score, NormalizeScore ------------------------------------------------------------ */

/* nodeLabelsMatchSpreadConstraints */
static bool has_all_keys(const struct ks_labels *labels, const struct ks_pts_constraint *cons, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!ks_labels_get(labels, cons[i].topology_key, NULL))
            return false;
    }
    return true;
}

/* Whether Score and NormalizeScore leave @node out (IgnoredNodes). */
static bool ignored(const struct ks_pts_score_state *s, const struct ks_node_snap *node)
{
    if (!s->require_all)
        return false;
    return !node->node || !has_all_keys(&node->node->meta.labels, s->cons, s->n);
}

/* The number of distinct values of @key among @nodes not ignored (initPreScoreState's topoSize). */
static int topology_size(const struct ks_pts_score_state *s, uint32_t key,
                         const struct ks_node_snap *const *nodes, uint32_t n, struct ks_arena *arena,
                         uint32_t *size)
{
    struct ks_spread_domains seen = {0};
    for (uint32_t i = 0; i < n; i++) {
        if (ignored(s, nodes[i]))
            continue;
        uint32_t value = KS_ID_EMPTY;
        if (nodes[i]->node)
            ks_labels_get(&nodes[i]->node->meta.labels, key, &value);
        if (!ks_spread_domains_find(&seen, value) && ks_spread_domains_add(&seen, arena, value, 0, NULL) < 0)
            return -ENOMEM;
    }
    *size = seen.n;
    return 0;
}

/* pre_score - initPreScoreState and the counts over all nodes. Scheduling thread, RCU read section. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t nnodes, struct ks_status *st)
{
    struct pts *p = self;
    const struct ks_snapshot *snap = snapshot_of(p);
    struct ks_pts_constraint *cons = NULL;
    uint32_t n;

    if (!snap || snap->nnodes == 0)
        return KS_SKIP;
    if (constraints_of(p, pod, KS_SCHEDULE_ANYWAY, &cs->arena, &cons, &n) < 0)
        return nomem(st);
    if (n == 0)
        return KS_SKIP;
    /* only non-system-default spreading needs every key on a node */
    bool require_all = pod->nspread > 0 || !p->system_defaulted;
    struct ks_pts_cycle *c = cycle_of(p, cs);
    struct ks_pts_score_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    struct ks_spread_domains *counts = ks_arena_calloc(&cs->arena, n, sizeof(*counts));
    double *weight = ks_arena_calloc(&cs->arena, n, sizeof(*weight));
    if (!c || !s || !counts || !weight)
        return nomem(st);
    *s = (struct ks_pts_score_state){.n = n,
                                     .require_all = require_all,
                                     .ns = pod->meta.namespace_id,
                                     .hostname = p->hostname,
                                     .cons = cons,
                                     .counts = counts,
                                     .weight = weight};
    uint32_t scored = 0;
    for (uint32_t i = 0; i < nnodes; i++)
        scored += !ignored(s, nodes[i]);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t size = scored;
        if (cons[i].topology_key != p->hostname &&
            topology_size(s, cons[i].topology_key, nodes, nnodes, &cs->arena, &size) < 0)
            return nomem(st);
        weight[i] = ks_pts_weight(size);
    }
    if (count_domains(p, cs, pod, cons, n, require_all, true, &cs->arena, counts, &s->hosts) < 0)
        return nomem(st);
    c->score = s;
    return KS_SUCCESS;
}

__attribute__((noinline, cold)) static int no_score_state(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR,
                         "error reading \"PreScorePodTopologySpread\" from cycleState: not found");
}

/* score_node - Worker threads; allocation-free. */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    const struct pts *p = self;
    const struct ks_pts_cycle *c = cs->slot[p->slot];
    const struct ks_pts_score_state *s = c ? c->score : NULL;

    (void)pod;
    if (__builtin_expect(!s, 0))
        return no_score_state(st);
    *out = 0;
    if (ignored(s, node) || !node->node)
        return KS_SUCCESS;
    double sum = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct ks_pts_constraint *k = &s->cons[i];
        uint32_t value;
        if (!ks_labels_get(&node->node->meta.labels, k->topology_key, &value))
            continue;
        int64_t cnt;
        if (k->topology_key == s->hostname) {
            cnt = ks_spread_node_count(node, k->selector, s->ns, k->sel_id);
        } else {
            const struct ks_spread_domain *d = ks_spread_domains_find(&s->counts[i], value);
            cnt = d ? d->count : 0;
        }
        sum += ks_pts_score_for_count(cnt, k->max_skew, s->weight[i]);
    }
    *out = (int64_t)round(sum);
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/*
 * sign - a pod without constraints (its own, or defaults that apply to it: a workload
 * selects it) signs nothing, as neither Filter nor Score runs for it. A pod whose
 * constraints are all ScheduleAnyway, keyed by the hostname and at most one other label,
 * is spread-scored (ksched/sign.h): Filter skips it, and the index adds the Score per
 * cycle from the counts; it signs what the index's per-node part reads (the keys, whether
 * a hostname constraint exists, whether nodes lacking a key are ignored). Any other pod
 * with constraints is unsignable: its Filter reads other pods' counts.
 * Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct pts *p = self;

    (void)cs;
    if (!pod->nspread &&
        !(p->ndefaults &&
          ks_spread_default_selects(p->objects, ks_spread_owners_current(p->owners, p->objects), pod)))
        return KS_SUCCESS;
    const struct ks_spread_constraint *list = pod->nspread ? pod->spread : p->defaults;
    uint32_t n = pod->nspread ? pod->nspread : p->ndefaults, domain = KS_ID_NONE;
    bool hostname = false;
    for (uint32_t i = 0; i < n; i++) {
        if (list[i].when_unsatisfiable != KS_SCHEDULE_ANYWAY)
            return KS_SKIP;
        if (list[i].topology_key == p->hostname)
            hostname = true;
        else if (domain != KS_ID_NONE && domain != list[i].topology_key)
            return KS_SKIP;
        else
            domain = list[i].topology_key;
    }
    ks_sign_u32(sig, domain);
    ks_sign_u32(sig, hostname);
    ks_sign_u32(sig, pod->nspread > 0 || !p->system_defaulted); /* pre_score's require_all */
    ks_sign_spread_scored(sig, domain);
    return KS_SUCCESS;
}

/* normalize_score - Scheduling thread. */
static int normalize_score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                           struct ks_status *st)
{
    const struct pts *p = self;
    const struct ks_pts_cycle *c = cs->slot[p->slot];
    const struct ks_pts_score_state *s = c ? c->score : NULL;
    int64_t min = INT64_MAX, max = 0;

    (void)pod;
    if (!s)
        return c ? KS_SUCCESS : no_score_state(st);
    for (uint32_t i = 0; i < n; i++) {
        if (ignored(s, nodes[i]))
            continue;
        if (scores[i] < min)
            min = scores[i];
        if (scores[i] > max)
            max = scores[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        if (ignored(s, nodes[i]))
            scores[i] = 0;
        else if (max == 0)
            scores[i] = KS_MAX_NODE_SCORE;
        else
            scores[i] = KS_MAX_NODE_SCORE * (max + min - scores[i]) / max;
    }
    return KS_SUCCESS;
}

/* ---- plugin ----------------------------------------------------------------------------------- */

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* The pod's hard spreading constraints; none means the plugin's defaults, which the hints treat as "may
 * help". */
static uint32_t hard_constraints(const struct ks_pod *pod)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < pod->nspread; i++)
        n += pod->spread[i].when_unsatisfiable == KS_DO_NOT_SCHEDULE;
    return n;
}

static bool spread_selector_matches(const struct ks_pod *pod, const struct ks_labels *labels)
{
    for (uint32_t i = 0; i < pod->nspread; i++) {
        const struct ks_spread_constraint *c = &pod->spread[i];
        if (c->when_unsatisfiable == KS_DO_NOT_SCHEDULE && ks_label_selector_matches(c->selector, labels))
            return true;
    }
    return false;
}

/* PodTopologySpread: a scheduled pod in the namespace that matches (or stops matching) a constraint. */
static enum ks_queueing_hint hint_spread_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                             const void *new_obj)
{
    const struct ks_pod *o = old_obj, *m = new_obj;
    (void)self;
#define INVOLVED(x)                                                                                          \
    (ks_hint_pod_is((x), pod) || (ks_pod_assigned(x) && (x)->meta.namespace_id == pod->meta.namespace_id))
    if ((m && !INVOLVED(m)) || (o && !INVOLVED(o)))
        return KS_QUEUE_SKIP;
#undef INVOLVED
    if (hard_constraints(pod) == 0)
        return KS_QUEUE;
    if (m && o) {
        if (ks_hint_pod_is(m, pod) && m->ntolerations != o->ntolerations) {
            for (uint32_t i = 0; i < pod->nspread; i++) {
                if (pod->spread[i].when_unsatisfiable == KS_DO_NOT_SCHEDULE &&
                    pod->spread[i].node_taints_policy == KS_POLICY_HONOR)
                    return KS_QUEUE;
            }
        }
        if (ks_labels_equal(&m->meta.labels, &o->meta.labels))
            return KS_QUEUE_SKIP;
        for (uint32_t i = 0; i < pod->nspread; i++) {
            const struct ks_spread_constraint *c = &pod->spread[i];
            if (c->when_unsatisfiable == KS_DO_NOT_SCHEDULE &&
                ks_label_selector_matches(c->selector, &o->meta.labels) !=
                    ks_label_selector_matches(c->selector, &m->meta.labels))
                return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    const struct ks_pod *x = m ? m : o;
    if (!x)
        return KS_QUEUE;
    return spread_selector_matches(pod, &x->meta.labels) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* nodeLabelsMatchSpreadConstraints: the node has every hard constraint's topology key. */
static bool node_has_spread_keys(const struct ks_pod *pod, const struct ks_node *n)
{
    uint32_t v;
    for (uint32_t i = 0; i < pod->nspread; i++) {
        const struct ks_spread_constraint *c = &pod->spread[i];
        if (c->when_unsatisfiable == KS_DO_NOT_SCHEDULE &&
            !ks_labels_get(&n->meta.labels, c->topology_key, &v))
            return false;
    }
    return true;
}

static bool spread_keys_changed(const struct ks_pod *pod, const struct ks_node *o, const struct ks_node *n)
{
    for (uint32_t i = 0; i < pod->nspread; i++) {
        const struct ks_spread_constraint *c = &pod->spread[i];
        if (c->when_unsatisfiable != KS_DO_NOT_SCHEDULE)
            continue;
        uint32_t a = KS_ID_NONE, b = KS_ID_NONE;
        ks_labels_get(&o->meta.labels, c->topology_key, &a);
        ks_labels_get(&n->meta.labels, c->topology_key, &b);
        if (a != b)
            return true;
    }
    return false;
}

/* PodTopologySpread: nodes entering or leaving the topology, or changing domain or taints. */
static enum ks_queueing_hint hint_spread_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                              const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (hard_constraints(pod) == 0)
        return KS_QUEUE;
    bool was = o && node_has_spread_keys(pod, o), is = n && node_has_spread_keys(pod, n);
    if (o && n) {
        if (was != is)
            return KS_QUEUE;
        return is && (spread_keys_changed(pod, o, n) || !ks_node_taints_equal(o, n)) ? KS_QUEUE
                                                                                     : KS_QUEUE_SKIP;
    }
    return (n ? is : was) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_UPDATE_POD_TOLERATION | KS_ACT_DELETE},
     hint_spread_pod},
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT},
     hint_spread_node},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_pod_topology_spread = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "PodTopologySpread",
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
