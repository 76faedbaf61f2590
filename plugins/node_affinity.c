/*
 * node_affinity.c - the NodeAffinity plugin: the pod's node selector and required node
 * affinity as a filter, preferred node affinity as a score, plus a cluster-wide
 * addedAffinity every pod must also satisfy (PreFilter, Filter, PreScore, Score,
 * NormalizeScore).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go. Args
 * (NodeAffinityArgs): addedAffinity is optional; ValidateNodeAffinityArgs parses its
 * required selector and preferred terms as nodeaffinity.NewNodeSelector and
 * NewPreferredSchedulingTerms do (here through the object decoder's node selector
 * checks, then upstream's label key and value checks with upstream's field paths: a
 * preferred term's errors are reported under "preferred...[i].matchExpressions", without
 * "preference", as NewPreferredSchedulingTerms names them). A required selector without
 * terms is accepted, as upstream: it matches no node.
 *
 *  - PreFilter returns Skip when the pod has no required node affinity, no nodeSelector
 *    and there is no added required affinity. When every required term pins
 *    metadata.name with matchFields In, the result narrows the nodes to the union over
 *    the terms of the intersection of each term's values; when that union is empty the
 *    pod is UnschedulableAndUnresolvable "pod affinity terms conflict".
 *  - Filter: a node the added required affinity does not match is
 *    UnschedulableAndUnresolvable "node(s) didn't match scheduler-enforced node affinity";
 *    one the pod's nodeSelector or required terms do not match is
 *    UnschedulableAndUnresolvable "node(s) didn't match Pod's node affinity/selector".
 *  - PreScore returns Skip when neither the pod nor addedAffinity has preferred terms.
 *  - Score is the sum of the weights of the preferred terms (added ones first, then the
 *    pod's) that match the node; NormalizeScore is helper.DefaultNormalizeScore(100, false).
 *  - The signature is the nodeSelector, the required and the preferred terms; a pod whose
 *    required terms narrow the nodes by name is unsignable.
 *
 * Terms that upstream's parser rejects but the object decoder lets through (a
 * matchExpressions key that is not a qualified name, a value that is not a label value,
 * see plugin_helpers_node_affinity.h) never match as required terms and make the pod's
 * preferred terms an Error at PreScore, e.g. "[0].matchExpressions[0].key: Invalid value:
 * ...", as upstream.
 *
 * State: one struct na_state per cycle in the cycle's arena: PreFilter records which
 * required terms parse (checked once per pod), PreScore that the pod's preferred terms
 * do. add_pod / remove_pod never change it (no state_clone). The terms themselves are read from the pod,
 * which carries them decoded and interned. Filter and Score fall back to checking the terms themselves when
 * PreFilter / PreScore did not run, as upstream does. Every message but the parse errors is interned at init.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_node_affinity.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- args ----------------------------------------------------------------------------------- */

/* Strict decoding of a NodeSelectorTerm: the object decoder ignores unknown fields, args may not. */
static int strict_term(struct ks_decoder *d, const struct ks_yaml_node *term)
{
    static const char *const term_fields[] = {"matchExpressions", "matchFields", NULL};
    static const char *const req_fields[] = {"key", "operator", "values", NULL};
    static const char *const lists[] = {"matchExpressions", "matchFields"};
    int rc;

    if (term->kind != KS_YAML_MAP)
        return 0; /* the decoder reports the shape */
    if ((rc = ks_cfg_strict(d, term, term_fields)))
        return rc;
    for (int l = 0; l < 2; l++) {
        const struct ks_yaml_node *seq = ks_yaml_get(term, lists[l]);
        if (!seq || seq->kind != KS_YAML_SEQ)
            continue;
        size_t saved = ks_dec_push(d, lists[l]);
        for (uint32_t i = 0; i < seq->n; i++) {
            size_t s2 = ks_dec_push_index(d, i);
            if (seq->items[i]->kind == KS_YAML_MAP && (rc = ks_cfg_strict(d, seq->items[i], req_fields)))
                return rc;
            ks_dec_pop(d, s2);
        }
        ks_dec_pop(d, saved);
    }
    return 0;
}

/*
 * The checks labels.NewRequirement adds to the decoder's: every matchExpressions key is a
 * qualified name and every value a label value (errors at "...key" and
 * "...values[i][<key>]", as upstream). @term is the YAML of the decoded term @t; the
 * current path is the term's. Empty terms are skipped, as upstream skips them.
 */
static int check_term(struct ks_decoder *d, const struct ks_yaml_node *term,
                      const struct ks_node_selector_term *t)
{
    const struct ks_yaml_node *exprs = ks_yaml_get(term, "matchExpressions");
    char why[512], field[320];

    for (uint32_t i = 0; i < t->nexprs && exprs && exprs->kind == KS_YAML_SEQ && i < exprs->n; i++) {
        const struct ks_yaml_node *item = exprs->items[i];
        const struct ks_yaml_node *values = ks_yaml_get(item, "values");
        const char *key = ks_intern_str(t->exprs[i].key);
        size_t saved = ks_dec_push(d, "matchExpressions");
        ks_dec_push_index(d, i);
        if (!ks_qualified_name_ok(key, why, sizeof(why)))
            return ks_cfg_fail_at(d, ks_yaml_get(item, "key"), item->line, "key", "Invalid value: \"%s\": %s",
                                  key, why);
        for (uint32_t v = 0; values && values->kind == KS_YAML_SEQ && v < values->n; v++) {
            const struct ks_yaml_node *value = values->items[v];
            if (value->kind != KS_YAML_SCALAR || ks_label_value_ok(value->str, why, sizeof(why)))
                continue;
            /* upstream's path.Key(): "[key]" whatever the key (ks_cfg_fail_at parses indices only) */
            snprintf(field, sizeof(field), "values[%u][%s]", v, key);
            ks_dec_push(d, field);
            return ks_cfg_fail_at(d, value, 0, NULL, "Invalid value: \"%s\": %s", value->str, why);
        }
        ks_dec_pop(d, saved);
    }
    return 0;
}

static int decode_required(struct ks_decoder *d, const struct ks_yaml_node *aff, struct ks_node_affinity *na)
{
    static const char *const key = "requiredDuringSchedulingIgnoredDuringExecution";
    static const char *const fields[] = {"nodeSelectorTerms", NULL};
    const struct ks_yaml_node *req = NULL, *terms = NULL;
    int rc;

    if ((rc = ks_dec_map(d, aff, key, &req)) || !req)
        return rc;
    size_t saved = ks_dec_push(d, key);
    if ((rc = ks_cfg_strict(d, req, fields)) || (rc = ks_dec_seq(d, req, "nodeSelectorTerms", &terms)))
        return rc;
    if (!terms || terms->n == 0) {
        /* NewNodeSelector accepts a selector without terms: it matches no node */
        if (!(na->required = ks_arena_calloc(d->arena, 1, sizeof(*na->required))))
            return ks_dec_nomem(d);
        ks_dec_pop(d, saved);
        return 0;
    }
    size_t s2 = ks_dec_push(d, "nodeSelectorTerms");
    for (uint32_t i = 0; i < terms->n; i++) {
        size_t s3 = ks_dec_push_index(d, i);
        if ((rc = strict_term(d, terms->items[i])))
            return rc;
        ks_dec_pop(d, s3);
    }
    ks_dec_pop(d, saved);
    if ((rc = ks_dec_node_selector(d, aff, key, &na->required)))
        return rc;
    saved = ks_dec_push(d, key);
    ks_dec_push(d, "nodeSelectorTerms");
    for (uint32_t i = 0; i < na->required->nterms; i++) {
        s2 = ks_dec_push_index(d, i);
        if ((rc = check_term(d, terms->items[i], &na->required->terms[i])))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int decode_preferred(struct ks_decoder *d, const struct ks_yaml_node *aff, struct ks_node_affinity *na)
{
    static const char *const key = "preferredDuringSchedulingIgnoredDuringExecution";
    static const char *const fields[] = {"weight", "preference", NULL};
    const struct ks_yaml_node *seq = NULL;
    int rc;

    if ((rc = ks_dec_seq(d, aff, key, &seq)) || !seq)
        return rc;
    na->preferred = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*na->preferred));
    if (!na->preferred)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *item = seq->items[i], *pref = NULL;
        struct ks_preferred_term *t = &na->preferred[i];
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = ks_cfg_strict(d, item, fields)) || (rc = ks_dec_int32(d, item, "weight", &t->weight)) ||
            (rc = ks_dec_map(d, item, "preference", &pref)))
            return rc;
        if (pref) {
            /* strict decoding names the preference; the term's own checks do not (upstream's paths) */
            size_t s3 = ks_dec_push(d, "preference");
            if ((rc = strict_term(d, pref)))
                return rc;
            ks_dec_pop(d, s3);
            if ((rc = ks_dec_node_selector_term(d, pref, &t->term)) || (rc = check_term(d, pref, &t->term)))
                return rc;
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    na->npreferred = seq->n;
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_nodeaffinity_args *a)
{
    static const char *const fields[] = {"addedAffinity", NULL};
    static const char *const aff_fields[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                             "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    const struct ks_yaml_node *aff = NULL;
    enum ks_config_version version;
    int rc;

    if ((rc = ks_cfg_args_begin(d, node, "NodeAffinityArgs", api_version, fields, &version)) ||
        (rc = ks_dec_map(d, node, "addedAffinity", &aff)) || !aff)
        return rc;
    if (!(a->added_affinity = ks_arena_alloc(d->arena, sizeof(*a->added_affinity))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "addedAffinity");
    if ((rc = ks_cfg_strict(d, aff, aff_fields)) || (rc = decode_required(d, aff, a->added_affinity)) ||
        (rc = decode_preferred(d, aff, a->added_affinity)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_nodeaffinity_args, args_decode)

static void print_requirements(struct ks_yaml_out *o, const char *key, uint32_t n,
                               const struct ks_requirement *reqs)
{
    if (n == 0)
        return;
    ks_yaml_key_seq(o, key);
    for (uint32_t i = 0; i < n; i++) {
        ks_yaml_item_map(o);
        ks_yaml_key_str(o, "key", ks_intern_str(reqs[i].key));
        ks_yaml_key_str(o, "operator", ks_selector_op_name(reqs[i].op));
        if (reqs[i].nvalues) {
            ks_yaml_key_seq(o, "values");
            for (uint32_t v = 0; v < reqs[i].nvalues; v++)
                ks_yaml_item_str(o, ks_intern_str(reqs[i].values[v]));
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

static void print_term(struct ks_yaml_out *o, const struct ks_node_selector_term *t)
{
    print_requirements(o, "matchExpressions", t->nexprs, t->exprs);
    print_requirements(o, "matchFields", t->nfields, t->fields);
}

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_node_affinity *na = ((const struct ks_nodeaffinity_args *)args)->added_affinity;

    if (!na)
        return;
    ks_yaml_key_map(o, "addedAffinity");
    if (na->required) {
        ks_yaml_key_map(o, "requiredDuringSchedulingIgnoredDuringExecution");
        ks_yaml_key_seq(o, "nodeSelectorTerms");
        for (uint32_t i = 0; i < na->required->nterms; i++) {
            ks_yaml_item_map(o);
            print_term(o, &na->required->terms[i]);
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
        ks_yaml_end(o);
    }
    if (na->npreferred) {
        ks_yaml_key_seq(o, "preferredDuringSchedulingIgnoredDuringExecution");
        for (uint32_t i = 0; i < na->npreferred; i++) {
            ks_yaml_item_map(o);
            ks_yaml_key_int(o, "weight", na->preferred[i].weight);
            ks_yaml_key_map(o, "preference");
            print_term(o, &na->preferred[i].term);
            ks_yaml_end(o);
            ks_yaml_end(o);
        }
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

struct node_affinity {
    uint16_t slot;
    const struct ks_node_selector *added_required; /* addedAffinity's required selector, or NULL */
    uint32_t nadded_preferred;                     /* addedAffinity's preferred terms */
    const struct ks_preferred_term *added_preferred;
    uint32_t msg_pod;      /* ErrReasonPod */
    uint32_t msg_enforced; /* errReasonEnforced */
    uint32_t msg_conflict; /* errReasonConflict */
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    const struct ks_nodeaffinity_args *args = in->args;
    const struct ks_node_affinity *added = args ? args->added_affinity : NULL;
    struct node_affinity *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    if (added) {
        p->added_required = added->required;
        p->nadded_preferred = added->npreferred;
        p->added_preferred = added->preferred;
    }
    p->msg_pod = ks_intern("node(s) didn't match Pod's node affinity/selector");
    p->msg_enforced = ks_intern("node(s) didn't match scheduler-enforced node affinity");
    p->msg_conflict = ks_intern("pod affinity terms conflict");
    if (p->msg_pod == KS_ID_NONE || p->msg_enforced == KS_ID_NONE || p->msg_conflict == KS_ID_NONE) {
        free(p);
        return -ENOMEM;
    }
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    free(self);
}

static inline const struct ks_node_selector *pod_required(const struct ks_pod *pod)
{
    const struct ks_node_affinity *na = pod->affinity.node_affinity;
    return na ? na->required : NULL;
}

/* ---- PreFilter -------------------------------------------------------------------------------- */

/* @a and @b are sorted id sets; the intersection goes to @out (room for min(na, nb)). */
static uint32_t ids_intersect(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0, j = 0; i < na && j < nb;) {
        if (a[i] < b[j]) {
            i++;
        } else if (a[i] > b[j]) {
            j++;
        } else {
            out[n++] = a[i];
            i++;
            j++;
        }
    }
    return n;
}

/* @a and @b are sorted id sets; the union goes to @out (room for na + nb). */
static uint32_t ids_union(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb, uint32_t *out)
{
    uint32_t n = 0, i = 0, j = 0;
    while (i < na || j < nb) {
        if (j == nb || (i < na && a[i] < b[j]))
            out[n++] = a[i++];
        else if (i == na || b[j] < a[i])
            out[n++] = b[j++];
        else {
            out[n++] = a[i++];
            j++;
        }
    }
    return n;
}

/*
 * The nodes the required terms pin by name: for each term the intersection of the values
 * of its "metadata.name In" fields, united over the terms. Returns 1 with the set in
 * *names / *n (cycle arena), 0 when some term pins no name (every node is eligible), or
 * -ENOMEM.
 */
static int pinned_names(struct ks_cycle_state *cs, const struct ks_node_selector *sel, const uint32_t **names,
                        uint32_t *n)
{
    uint32_t total = 0;

    for (uint32_t t = 0; t < sel->nterms; t++) {
        const struct ks_node_selector_term *term = &sel->terms[t];
        bool pins = false;
        for (uint32_t f = 0; f < term->nfields; f++) {
            const struct ks_requirement *r = &term->fields[f];
            if (r->key == ks_wk.metadata_name && r->op == KS_OP_IN) {
                pins = true;
                total += r->nvalues;
            }
        }
        if (!pins)
            return 0;
    }
    /* acc: the union so far; term and tmp: scratch for one term's intersection and the next union */
    uint32_t *acc = ks_arena_alloc(&cs->arena, (size_t)(total ? total : 1) * sizeof(uint32_t));
    uint32_t *term_set = ks_arena_alloc(&cs->arena, (size_t)(total ? total : 1) * sizeof(uint32_t));
    uint32_t *tmp = ks_arena_alloc(&cs->arena, (size_t)(total ? total : 1) * sizeof(uint32_t));
    uint32_t nacc = 0;
    if (!acc || !term_set || !tmp)
        return -ENOMEM;
    for (uint32_t t = 0; t < sel->nterms; t++) {
        const struct ks_node_selector_term *term = &sel->terms[t];
        uint32_t nterm = 0;
        bool first = true;
        for (uint32_t f = 0; f < term->nfields; f++) {
            const struct ks_requirement *r = &term->fields[f];
            if (r->key != ks_wk.metadata_name || r->op != KS_OP_IN)
                continue;
            if (first) {
                /* values are sorted but may repeat: keep each once */
                for (uint32_t v = 0; v < r->nvalues; v++) {
                    if (nterm == 0 || term_set[nterm - 1] != r->values[v])
                        term_set[nterm++] = r->values[v];
                }
                first = false;
            } else {
                nterm = ids_intersect(term_set, nterm, r->values, r->nvalues, term_set);
            }
        }
        uint32_t nu = ids_union(acc, nacc, term_set, nterm, tmp);
        uint32_t *swap = acc;
        acc = tmp;
        tmp = swap;
        nacc = nu;
    }
    *names = acc;
    *n = nacc;
    return 1;
}

/*
 * The cycle state: which of the pod's required terms parse (upstream's parsed
 * RequiredNodeAffinity; valid is NULL when they all do), and whether PreFilter and
 * PreScore ran.
 */
struct na_state {
    const bool *valid;
    bool filtered; /* PreFilter checked the required terms */
    bool scored;   /* PreScore checked the pod's preferred terms */
};

/* The cycle's state, created on first use. Scheduling thread. */
static struct na_state *state_of(const struct node_affinity *p, struct ks_cycle_state *cs)
{
    struct na_state *s = cs->slot[p->slot];

    if (!s && (s = ks_arena_calloc(&cs->arena, 1, sizeof(*s))))
        cs->slot[p->slot] = s;
    return s;
}

/* The parse check of every required term, once per pod: NULL when all parse, -ENOMEM as @err. */
static const bool *check_required(struct ks_cycle_state *cs, const struct ks_node_selector *required,
                                  int *err)
{
    bool *valid = NULL;

    *err = 0;
    for (uint32_t i = 0; required && i < required->nterms; i++) {
        bool ok = ks_node_selector_term_valid(&required->terms[i]);
        if (ok && !valid)
            continue;
        if (!valid) {
            if (!(valid = ks_arena_alloc(&cs->arena, required->nterms * sizeof(*valid)))) {
                *err = -ENOMEM;
                return NULL;
            }
            for (uint32_t j = 0; j < i; j++)
                valid[j] = true;
        }
        valid[i] = ok;
    }
    return valid;
}

/* pre_filter - Skip, or narrow the nodes to the names the required terms pin. Scheduling thread. */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    const struct node_affinity *p = self;
    const struct ks_node_selector *required = pod_required(pod);
    struct na_state *s;
    int err;

    if (!required && !p->added_required && pod->node_selector.n == 0)
        return KS_SKIP;
    const bool *valid = check_required(cs, required, &err);
    if (err || !(s = state_of(p, cs)))
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->valid = valid;
    s->filtered = true;
    if (!required || required->nterms == 0)
        return KS_SUCCESS;

    const uint32_t *names = NULL;
    uint32_t n = 0;
    int rc = pinned_names(cs, required, &names, &n);
    if (rc < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    if (rc == 0)
        return KS_SUCCESS;
    if (n == 0) {
        st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
        st->nreasons = 1;
        st->reasons[0] = p->msg_conflict;
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    res->all = false;
    res->n = n;
    res->names = names;
    return KS_SUCCESS;
}

/* ---- Filter ----------------------------------------------------------------------------------- */

/*
 * filter - the added required affinity, then the pod's nodeSelector and required terms
 * (RequiredNodeAffinity.Match, terms that do not parse never matching). Without PreFilter
 * state the terms are checked here, as upstream's fallback. Worker threads; reads the
 * pod, the args, the cycle state and the node record only; allocation-free.
 */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    static const struct ks_labels no_labels;
    const struct node_affinity *p = self;
    const struct na_state *s = cs->slot[p->slot];
    const struct ks_labels *labels = node->node ? &node->node->meta.labels : &no_labels;
    const struct ks_node_selector *required = pod_required(pod);

    if (p->added_required && !ks_node_selector_matches(p->added_required, labels, node->name))
        return ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->msg_enforced);
    if (!ks_labels_superset(&pod->node_selector, labels))
        return ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->msg_pod);
    if (!required)
        return KS_SUCCESS;
    bool match = s && s->filtered && !s->valid
                     ? ks_node_selector_matches(required, labels, node->name)
                     : ks_node_selector_matches_parsed(required, s && s->filtered ? s->valid : NULL, labels,
                                                       node->name);
    return match ? KS_SUCCESS : ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->msg_pod);
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* ---- Score ------------------------------------------------------------------------------------ */

static inline uint32_t pod_npreferred(const struct ks_pod *pod)
{
    const struct ks_node_affinity *na = pod->affinity.node_affinity;
    return na ? na->npreferred : 0;
}

/* getPodPreferredNodeAffinity's parse error, formatted into @st. */
__attribute__((noinline, cold)) static int preferred_error(const struct ks_pod *pod, struct ks_status *st)
{
    char msg[2048];
    const struct ks_node_affinity *na = pod->affinity.node_affinity;

    if (!ks_preferred_terms_error(na->preferred, na->npreferred, msg, sizeof(msg)))
        return KS_SUCCESS;
    return ks_status_set(st, KS_ERROR, "%s", msg);
}

/* pre_score - Skip when no preferred term can score; Error when the pod's terms do not parse. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st)
{
    const struct node_affinity *p = self;
    struct na_state *s;
    int rc;

    (void)nodes;
    (void)n;
    if (pod_npreferred(pod) && (rc = preferred_error(pod, st)) != KS_SUCCESS)
        return rc;
    if (pod_npreferred(pod) == 0 && p->nadded_preferred == 0)
        return KS_SKIP;
    if (!(s = state_of(p, cs)))
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->scored = true;
    return KS_SUCCESS;
}

/* PreferredSchedulingTerms.Score: the weights of the terms matching the node, summed. */
static int64_t preferred_score(const struct ks_preferred_term *terms, uint32_t n,
                               const struct ks_labels *labels, uint32_t name)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (terms[i].weight != 0 && ks_node_selector_term_matches(&terms[i].term, labels, name))
            sum += terms[i].weight;
    }
    return sum;
}

/*
 * score - added preferred terms plus the pod's. Without PreScore the pod's terms are
 * checked here, as upstream's fallback. Worker threads; allocation-free unless the terms
 * do not parse (the error message is interned).
 */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    static const struct ks_labels no_labels;
    const struct node_affinity *p = self;
    const struct na_state *s = cs->slot[p->slot];
    const struct ks_labels *labels = node->node ? &node->node->meta.labels : &no_labels;
    const struct ks_node_affinity *na = pod->affinity.node_affinity;
    int64_t sum = preferred_score(p->added_preferred, p->nadded_preferred, labels, node->name);
    int rc;

    if (na && na->npreferred) {
        if (__builtin_expect(!s || !s->scored, 0) && (rc = preferred_error(pod, st)) != KS_SUCCESS)
            return rc;
        sum += preferred_score(na->preferred, na->npreferred, labels, node->name);
    }
    *out = sum;
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/* ---- signature -------------------------------------------------------------------------------- */

/* Whether PreFilter narrows the nodes: every required term pins metadata.name (pinned_names() gives 1). */
static bool pins_names(const struct ks_node_selector *required)
{
    if (!required || required->nterms == 0)
        return false;
    for (uint32_t t = 0; t < required->nterms; t++) {
        const struct ks_node_selector_term *term = &required->terms[t];
        bool pins = false;
        for (uint32_t f = 0; f < term->nfields && !pins; f++)
            pins = term->fields[f].key == ks_wk.metadata_name && term->fields[f].op == KS_OP_IN;
        if (!pins)
            return false;
    }
    return true;
}

/*
 * sign - Filter reads the nodeSelector and the required terms (which of them parse
 * follows from the terms), Score the preferred terms; addedAffinity is the profile's.
 * A pod whose PreFilter narrows the nodes by name declines: upstream then evaluates only
 * those nodes, a window no per-node answer describes. Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct ks_node_affinity *na = pod->affinity.node_affinity;
    const struct ks_node_selector *required = pod_required(pod);

    (void)self;
    (void)cs;
    if (pins_names(required))
        return KS_SKIP;
    ks_sign_labels(sig, &pod->node_selector);
    ks_sign_node_selector(sig, required);
    uint32_t npreferred = pod_npreferred(pod);
    ks_sign_u32(sig, npreferred);
    for (uint32_t i = 0; i < npreferred; i++) {
        ks_sign_u32(sig, (uint32_t)na->preferred[i].weight);
        ks_sign_node_selector_term(sig, &na->preferred[i].term);
    }
    return KS_SUCCESS;
}

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* The pod's nodeSelector and required node affinity (nodeaffinity.GetRequiredNodeAffinity), as Filter reads
 * them. */
static bool required_affinity_matches(const struct ks_pod *pod, const struct ks_node *n)
{
    const struct ks_node_selector *required = pod_required(pod);
    return ks_labels_superset(&pod->node_selector, &n->meta.labels) &&
           (!required || ks_node_selector_matches(required, &n->meta.labels, n->name_id));
}

/* NodeAffinity: the node (newly) matches the pod's required affinity. */
static enum ks_queueing_hint hint_node_affinity(void *self, const struct ks_pod *pod, const void *old_obj,
                                                const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (!n)
        return KS_QUEUE;
    if (!required_affinity_matches(pod, n))
        return KS_QUEUE_SKIP;
    return !o || !required_affinity_matches(pod, o) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL}, hint_node_affinity},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_node_affinity = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeAffinity",
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
    .normalize_score = ks_normalize_score_default,
    .sign = sign,
    .events_to_register = events_to_register,
};
