/*
 * test_node_affinity.c - the NodeAffinity plugin (plugins/node_affinity.c) and its
 * helper (plugins/helpers/helper_node_affinity.c).
 *
 * Cases from upstream's nodeaffinity/node_affinity_test.go: TestNodeAffinity (PreFilter
 * status and result, then Filter, with and without PreFilter, with addedAffinity) and
 * TestNodeAffinityPriority (PreScore, Score on every node, NormalizeScore; Skip and the
 * broken-affinity Error of PreScore), plus validation_pluginargs_test.go's
 * TestValidateNodeAffinityArgs through args_parse, and the helper's upstream messages.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/plugin_args.h"
#include "ksched/plugin_helpers_node_affinity.h"
#include "ksched/registry.h"
#include "ksched/yaml_tree.h"
#include "plugin_fixtures.h"

TestSuite(nodeaffinity);

static const struct ks_plugin *const na = &ks_plugin_node_affinity;

#define ERR_POD      "node(s) didn't match Pod's node affinity/selector"
#define ERR_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define ERR_CONFLICT "pod affinity terms conflict"
#define MAX_TERMS    3

/* ---- building pods and args ------------------------------------------------------------------ */

struct pref {
    int32_t weight;
    const char *exprs;
    const char *fields;
};

/* A pod's node placement: nodeSelector, required terms (nterms of them), preferred terms. */
struct placement {
    const char *node_selector; /* labels syntax; NULL: none */
    bool affinity;             /* spec.affinity.nodeAffinity is set (implied by terms) */
    bool required;             /* requiredDuringScheduling... is set (implied by nterms) */
    uint32_t nterms;
    struct ks_fake_term terms[MAX_TERMS];
    uint32_t npref;
    struct pref pref[MAX_TERMS];
    const char *invalid_not_in; /* a raw NotIn value on key foo, as term 0 (no fake syntax for it) */
};

static struct ks_pod *mk_pod(const struct placement *pl)
{
    struct ks_pod *pod = ks_fake_pod("default", "pod");
    struct ks_arena *a = &pod->arena;

    if (pl->node_selector)
        pod->node_selector = ks_fake_labels(a, pl->node_selector);
    if (pl->affinity || pl->required || pl->nterms || pl->npref || pl->invalid_not_in) {
        struct ks_node_affinity *aff = fx_must(ks_arena_calloc(a, 1, sizeof(*aff)));
        pod->affinity.node_affinity = aff;
        if (pl->required || pl->nterms)
            aff->required = ks_fake_node_selector(a, pl->nterms, pl->terms);
        if (pl->invalid_not_in) {
            struct ks_node_selector *sel = fx_must(ks_arena_calloc(a, 1, sizeof(*sel)));
            struct ks_requirement *r = fx_must(ks_arena_calloc(a, 1, sizeof(*r)));
            sel->terms = fx_must(ks_arena_calloc(a, 1, sizeof(*sel->terms)));
            sel->nterms = 1;
            sel->terms[0].nexprs = 1;
            sel->terms[0].exprs = r;
            r->key = ks_intern("foo");
            r->op = KS_OP_NOT_IN;
            r->nvalues = 1;
            r->values = fx_must(ks_arena_calloc(a, 1, sizeof(uint32_t)));
            r->values[0] = ks_intern(pl->invalid_not_in);
            aff->required = sel;
        }
        if (pl->npref) {
            aff->preferred = fx_must(ks_arena_calloc(a, pl->npref, sizeof(*aff->preferred)));
            aff->npreferred = pl->npref;
            for (uint32_t i = 0; i < pl->npref; i++) {
                aff->preferred[i].weight = pl->pref[i].weight;
                aff->preferred[i].term = ks_fake_term(a, pl->pref[i].exprs, pl->pref[i].fields);
            }
        }
    }
    return fx_done(pod);
}

/* args_parse of @yaml (the body of `args:`); NULL @yaml: no args. */
static void *parse_args(const char *yaml)
{
    struct ks_yaml_stream *ys = NULL;
    struct ks_error err = {0};
    void *args = NULL;

    if (!yaml)
        return NULL;
    cr_assert(eq(int, ks_yaml_parse("args.yaml", yaml, strlen(yaml), &ys, &err), 0), "%s", err.msg);
    int rc = na->args_parse(ys->docs[0], "kubescheduler.config.k8s.io/v1", "args.yaml", &args, &err);
    cr_assert(eq(int, rc, 0), "args_parse: %s: %s\n%s", err.field, err.msg, yaml);
    ks_yaml_stream_destroy(ys);
    return args;
}

/* args_parse of @yaml must fail at @line on @field with a message containing @msg. */
static void args_fail(const char *yaml, int line, const char *field, const char *msg)
{
    struct ks_yaml_stream *ys = NULL;
    struct ks_error err = {0};
    void *args = NULL;

    cr_assert(eq(int, ks_yaml_parse("args.yaml", yaml, strlen(yaml), &ys, &err), 0), "%s", err.msg);
    int rc = na->args_parse(ys->docs[0], "kubescheduler.config.k8s.io/v1", "args.yaml", &args, &err);
    cr_expect(eq(int, rc, -EINVAL), "args_parse accepted\n%s", yaml);
    cr_expect(eq(str, err.field, (char *)field), "field (message: %s)", err.msg);
    cr_expect(eq(int, err.line, line), "line of %s", err.field);
    cr_expect(strstr(err.msg, msg) != NULL, "message \"%s\" lacks \"%s\"", err.msg, msg);
    cr_expect(eq(ptr, args, NULL));
    ks_yaml_stream_destroy(ys);
}

/* The interned ids of "a,b,c", sorted, into @out; returns the count. */
static uint32_t ids_of(const char *csv, uint32_t *out)
{
    char buf[256], *save, *tok;
    uint32_t n = 0;

    snprintf(buf, sizeof(buf), "%s", csv);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint32_t id = ks_intern(tok), i = n++;
        while (i > 0 && out[i - 1] > id) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = id;
    }
    return n;
}

/* ---- Filter (TestNodeAffinity) ----------------------------------------------------------------- */

#define T(e, f)                                                                                              \
    {                                                                                                        \
        (e), (f)                                                                                             \
    }

struct filter_case {
    const char *name;
    struct placement pod;
    const char *labels;    /* the node's */
    const char *node_name; /* NULL: "node" */
    const char *args;      /* NodeAffinityArgs YAML, NULL: none */
    bool no_pre_filter;    /* run Filter without PreFilter */
    int pre_code;          /* KS_SUCCESS, KS_SKIP or KS_UNSCHEDULABLE_AND_UNRESOLVABLE */
    const char *pre_msg;
    const char *pre_names; /* the PreFilterResult's names, NULL: all nodes */
    const char *want;      /* Filter's reason, NULL: fits */
};

#define ADDED_NAME_NODE2                                                                                     \
    "addedAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n    nodeSelectorTerms:\n"            \
    "    - matchFields:\n      - {key: metadata.name, operator: In, values: [node2]}\n"

static const struct filter_case filter_cases[] = {
    {"missing labels",
     {.node_selector = "foo=bar"},
     NULL,
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"same labels", {.node_selector = "foo=bar"}, "foo=bar", NULL, NULL, false, KS_SUCCESS, NULL, NULL, NULL},
    {"node labels are superset",
     {.node_selector = "foo=bar"},
     "foo=bar,baz=blah",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"node labels are subset",
     {.node_selector = "foo=bar,baz=blah"},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with matchExpressions using In operator that matches the existing node",
     {.nterms = 1, .terms = {T("foo in (bar,value2)", NULL)}},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with matchExpressions using Gt operator that matches the existing node",
     {.nterms = 1, .terms = {T("kernel-version>0204", NULL)}},
     "kernel-version=0206",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with matchExpressions using NotIn operator that matches the existing node",
     {.nterms = 1, .terms = {T("mem-type notin (DDR,DDR2)", NULL)}},
     "mem-type=DDR3",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with matchExpressions using Exists operator that matches the existing node",
     {.nterms = 1, .terms = {T("GPU", NULL)}},
     "GPU=NVIDIA-GRID-K1",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with affinity that don't match node's labels won't schedule onto the node",
     {.nterms = 1, .terms = {T("foo in (value1,value2)", NULL)}},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the "
     "node",
     {.nterms = 1, .terms = {T(NULL, NULL)}},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with no Affinity will schedule onto a node",
     {0},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SKIP,
     NULL,
     NULL,
     NULL},
    {"Pod with Affinity but nil NodeSelector will schedule onto a node",
     {.affinity = true},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SKIP,
     NULL,
     NULL,
     NULL},
    {"Pod with multiple matchExpressions ANDed that matches the existing node",
     {.nterms = 1, .terms = {T("GPU, GPU notin (AMD,INTER)", NULL)}},
     "GPU=NVIDIA-GRID-K1",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     {.nterms = 1, .terms = {T("GPU, GPU in (AMD,INTER)", NULL)}},
     "GPU=NVIDIA-GRID-K1",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto "
     "the node",
     {.nterms = 2, .terms = {T("foo in (bar,value2)", NULL), T("diffkey in (wrong,value2)", NULL)}},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
     "satisfied, will schedule onto the node",
     {.node_selector = "foo=bar", .nterms = 1, .terms = {T("foo", NULL)}},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
     "deprecating) is not satisfied, won't schedule onto the node",
     {.node_selector = "foo=bar", .nterms = 1, .terms = {T("foo", NULL)}},
     "foo=barrrrrr",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with an invalid value in Affinity term won't be scheduled onto the node",
     {.invalid_not_in = "invalid value: ___@#$%^"},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with matchFields using In operator that matches the existing node",
     {.nterms = 1, .terms = {T(NULL, "metadata.name in (node1)")}},
     NULL,
     "node1",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     "node1",
     NULL},
    {"Pod with matchFields using In operator that does not match the existing node",
     {.nterms = 1, .terms = {T(NULL, "metadata.name in (node1)")}},
     NULL,
     "node2",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     "node1",
     ERR_POD},
    {"Pod with two terms: matchFields does not match, but matchExpressions matches",
     {.nterms = 2,
      .terms = {T(NULL, "metadata.name in (node1), metadata.name in (node2)"), T("foo in (bar)", NULL)}},
     "foo=bar",
     "node2",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Pod with one term: matchFields does not match, but matchExpressions matches",
     {.nterms = 1, .terms = {T("foo in (bar)", "metadata.name in (node1)")}},
     "foo=bar",
     "node2",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     "node1",
     ERR_POD},
    {"Pod with one term: both matchFields and matchExpressions match",
     {.nterms = 1, .terms = {T("foo in (bar)", "metadata.name in (node1)")}},
     "foo=bar",
     "node1",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     "node1",
     NULL},
    {"Pod with two terms: both matchFields and matchExpressions do not match",
     {.nterms = 2, .terms = {T(NULL, "metadata.name in (node1)"), T("foo in (not-match-to-bar)", NULL)}},
     "foo=bar",
     "node2",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Pod with two terms of node.Name affinity",
     {.nterms = 2, .terms = {T(NULL, "metadata.name in (node1)"), T(NULL, "metadata.name in (node2)")}},
     NULL,
     "node2",
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     "node1,node2",
     NULL},
    {"Pod with two conflicting mach field requirements",
     {.nterms = 1, .terms = {T(NULL, "metadata.name in (node1), metadata.name in (node2)")}},
     "foo=bar",
     "node2",
     NULL,
     false,
     KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
     ERR_CONFLICT,
     NULL,
     ERR_POD},
    {"Matches added affinity and Pod's node affinity",
     {.nterms = 1, .terms = {T("zone in (foo)", NULL)}},
     "zone=foo",
     "node2",
     ADDED_NAME_NODE2,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Matches added affinity but not Pod's node affinity",
     {.nterms = 1, .terms = {T("zone in (bar)", NULL)}},
     "zone=foo",
     "node2",
     ADDED_NAME_NODE2,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"Doesn't match added affinity",
     {0},
     "zone=foo",
     "node2",
     "addedAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n    nodeSelectorTerms:\n"
     "    - matchExpressions:\n      - {key: zone, operator: In, values: [bar]}\n",
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_ENFORCED},
    {"Matches node selector correctly even if PreFilter is not called",
     {.node_selector = "foo=bar"},
     "foo=bar,baz=blah",
     NULL,
     NULL,
     true,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"Matches node affinity correctly even if PreFilter is not called",
     {.nterms = 1, .terms = {T("GPU, GPU notin (AMD,INTER)", NULL)}},
     "GPU=NVIDIA-GRID-K1",
     NULL,
     NULL,
     true,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    /* ksched's own: an invalid term does not hide a valid one, with or without PreFilter */
    {"a term that does not parse is skipped, the next one still matches",
     {.nterms = 2, .terms = {T("bad/key/x in (a)", NULL), T("foo in (bar)", NULL)}},
     "foo=bar",
     NULL,
     NULL,
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     NULL},
    {"a term that does not parse never matches, even without PreFilter",
     {.nterms = 1, .terms = {T("foo notin (bad!)", NULL)}},
     "foo=bar",
     NULL,
     NULL,
     true,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_POD},
    {"an empty added required selector matches no node",
     {0},
     "foo=bar",
     NULL,
     "addedAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n    nodeSelectorTerms: []\n",
     false,
     KS_SUCCESS,
     NULL,
     NULL,
     ERR_ENFORCED},
};

static void run_filter_case(const struct filter_case *c)
{
    void *args = parse_args(c->args);
    void *self = fx_init(na, args);
    struct ks_pod *pod = mk_pod(&c->pod);
    struct ks_node *node = ks_fake_node(c->node_name ? c->node_name : "node", c->labels ? c->labels : "");
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);

    if (!c->no_pre_filter) {
        struct ks_pre_filter_result res = {.all = true};
        int code = na->pre_filter(self, &cs, pod, &res, &st);
        cr_expect(eq(int, code, c->pre_code), "%s: PreFilter code (%s)", c->name, fx_reason(&st, 0));
        if (c->pre_msg)
            cr_expect(eq(str, (char *)fx_reason(&st, 0), (char *)c->pre_msg), "%s: PreFilter", c->name);
        if (!c->pre_names) {
            cr_expect(res.all, "%s: PreFilterResult narrows to %u nodes", c->name, res.n);
        } else {
            uint32_t want[8];
            uint32_t n = ids_of(c->pre_names, want);
            cr_expect(res.all == false, "%s: PreFilterResult is all nodes", c->name);
            cr_expect(eq(u32, res.n, n), "%s: PreFilterResult size", c->name);
            for (uint32_t i = 0; i < n && i < res.n; i++)
                cr_expect(eq(u32, res.names[i], want[i]), "%s: PreFilterResult[%u]", c->name, i);
        }
    }
    struct ks_status fst = {0};
    int code = na->filter(self, &cs, pod, snap, &fst);
    if (!c->want) {
        cr_expect(eq(int, code, KS_SUCCESS), "%s: Filter (%s)", c->name, fx_reason(&fst, 0));
    } else {
        cr_expect(eq(int, code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE), "%s: Filter code", c->name);
        cr_expect(eq(u32, fst.nreasons, 1), "%s", c->name);
        cr_expect(eq(str, (char *)fx_reason(&fst, 0), (char *)c->want), "%s: Filter", c->name);
    }

    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    na->destroy(self);
    if (args)
        na->args_destroy(args);
}

Test(nodeaffinity, upstream_filter)
{
    for (size_t i = 0; i < sizeof(filter_cases) / sizeof(filter_cases[0]); i++)
        run_filter_case(&filter_cases[i]);
}

Test(nodeaffinity, pre_filter_names_are_a_sorted_set)
{
    /* repeated values, several terms overlapping: the union of the intersections, each once */
    static const struct filter_case c = {
        "union of intersections",
        {.nterms = 3,
         .terms = {T(NULL, "metadata.name in (c), metadata.name in (c)"), T(NULL, "metadata.name in (a)"),
                   T("x", "metadata.name in (c)")}},
        NULL,
        "a",
        NULL,
        false,
        KS_SUCCESS,
        NULL,
        "a,c",
        NULL};
    run_filter_case(&c);
}

/* ---- Score (TestNodeAffinityPriority) ------------------------------------------------------------- */

#define LABEL1 "foo=bar"
#define LABEL2 "key=value"
#define LABEL3 "az=az1"
#define LABEL4 "abc=az11,def=az22"
#define LABEL5 "foo=bar,key=value,az=az1"

#define AFFINITY1 .npref = 1, .pref = {{2, "foo in (bar)", NULL}}
#define AFFINITY2                                                                                            \
    .npref = 3, .pref = {                                                                                    \
                    {2, "foo in (bar)", NULL},                                                               \
                    {4, "key in (value)", NULL},                                                             \
                    {5, "foo in (bar), key in (value), az in (az1)", NULL},                                  \
    }

struct score_case {
    const char *name;
    struct placement pod;
    const char *nodes[3]; /* "name:labels" */
    int64_t want[3];
    const char *args;
    bool run_pre_score;
    int pre_code;
    const char *pre_msg;
};

static const struct score_case score_cases[] = {
    {"all nodes are same priority as NodeAffinity is nil",
     {0},
     {"node1:" LABEL1, "node2:" LABEL2, "node3:" LABEL3},
     {0, 0, 0},
     NULL,
     false,
     KS_SUCCESS,
     NULL},
    {"Skip is returned in PreScore when NodeAffinity is nil",
     {0},
     {"node1:" LABEL1},
     {0},
     NULL,
     true,
     KS_SKIP,
     NULL},
    {"PreScore returns error when an incoming Pod has a broken affinity",
     {.npref = 1, .pref = {{2, "invalid_key_placeholder in (bar)", NULL}}},
     {"node1:" LABEL1},
     {0},
     NULL,
     true,
     KS_ERROR,
     "[0].matchExpressions[0].key: Invalid value: \"invalid key\": name part must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
     "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is "
     "zero",
     {AFFINITY1},
     {"node1:" LABEL4, "node2:" LABEL2, "node3:" LABEL3},
     {0, 0, 0},
     NULL,
     true,
     KS_SUCCESS,
     NULL},
    {"only node1 matches the preferred scheduling requirements of pod",
     {AFFINITY1},
     {"node1:" LABEL1, "node2:" LABEL2, "node3:" LABEL3},
     {100, 0, 0},
     NULL,
     true,
     KS_SUCCESS,
     NULL},
    {"all nodes matches the preferred scheduling requirements of pod but with different priorities ",
     {AFFINITY2},
     {"node1:" LABEL1, "node5:" LABEL5, "node2:" LABEL2},
     {18, 100, 36},
     NULL,
     true,
     KS_SUCCESS,
     NULL},
    {"added affinity",
     {0},
     {"node1:" LABEL1, "node2:" LABEL2},
     {100, 0},
     "addedAffinity:\n  preferredDuringSchedulingIgnoredDuringExecution:\n  - weight: 2\n    preference:\n"
     "      matchExpressions:\n      - {key: foo, operator: In, values: [bar]}\n",
     true,
     KS_SUCCESS,
     NULL},
    {"added affinity and pod has default affinity",
     {AFFINITY1},
     {"node1:" LABEL1, "node2:" LABEL2, "node3:" LABEL5},
     {40, 60, 100},
     "addedAffinity:\n  preferredDuringSchedulingIgnoredDuringExecution:\n  - weight: 3\n    preference:\n"
     "      matchExpressions:\n      - {key: key, operator: In, values: [value]}\n",
     true,
     KS_SUCCESS,
     NULL},
    {"calculate the priorities correctly even if PreScore is not called",
     {AFFINITY2},
     {"node1:" LABEL1, "node5:" LABEL5, "node2:" LABEL2},
     {18, 100, 36},
     NULL,
     false,
     KS_SUCCESS,
     NULL},
    /* ksched's own: a term with weight 0 or no requirements counts nothing and is not checked */
    {"weight 0 and empty preferences are skipped",
     {.npref = 3,
      .pref = {{0, "foo in (bar)", NULL}, {7, NULL, NULL}, {1, NULL, "metadata.name in (node2)"}}},
     {"node1:" LABEL1, "node2:" LABEL2},
     {0, 100},
     NULL,
     true,
     KS_SUCCESS,
     NULL},
};

static void run_score_case(const struct score_case *c)
{
    void *args = parse_args(c->args);
    void *self = fx_init(na, args);
    struct ks_pod *pod = mk_pod(&c->pod);
    struct ks_node *nodes[3] = {0};
    struct ks_node_snap *snaps[3] = {0};
    int64_t scores[3] = {0};
    uint32_t n = 0;

    /* the broken key has a space, which the fake selector syntax cannot write */
    if (c->pod.npref && strstr(c->pod.pref[0].exprs ? c->pod.pref[0].exprs : "", "invalid_key_placeholder"))
        pod->affinity.node_affinity->preferred[0].term.exprs[0].key = ks_intern("invalid key");
    for (; n < 3 && c->nodes[n]; n++) {
        char name[32];
        const char *colon = strchr(c->nodes[n], ':');
        snprintf(name, sizeof(name), "%.*s", (int)(colon - c->nodes[n]), c->nodes[n]);
        nodes[n] = ks_fake_node(name, colon + 1);
        snaps[n] = fx_snap(nodes[n], NULL, 0);
    }
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    int code = KS_SUCCESS;
    if (c->run_pre_score) {
        code = na->pre_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, n, &st);
        cr_expect(eq(int, code, c->pre_code), "%s: PreScore (%s)", c->name, fx_reason(&st, 0));
        if (c->pre_msg)
            cr_expect(eq(str, (char *)fx_reason(&st, 0), (char *)c->pre_msg), "%s: PreScore", c->name);
    }
    if (code == KS_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            cr_assert(eq(int, na->score(self, &cs, pod, snaps[i], &scores[i], &st), KS_SUCCESS), "%s: %s",
                      c->name, fx_reason(&st, 0));
        }
        cr_assert(
            eq(int,
               na->normalize_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, scores, n, &st),
               KS_SUCCESS));
        for (uint32_t i = 0; i < n; i++)
            cr_expect(eq(i64, scores[i], c->want[i]), "%s: %s", c->name, c->nodes[i]);
    }

    fx_cs_free(&cs);
    for (uint32_t i = 0; i < n; i++) {
        fx_snap_free(snaps[i]);
        ks_node_destroy(nodes[i]);
    }
    ks_pod_destroy(pod);
    na->destroy(self);
    if (args)
        na->args_destroy(args);
}

Test(nodeaffinity, upstream_score)
{
    for (size_t i = 0; i < sizeof(score_cases) / sizeof(score_cases[0]); i++)
        run_score_case(&score_cases[i]);
}

Test(nodeaffinity, score_without_pre_score_reports_the_parse_error)
{
    static const struct placement pl = {
        .npref = 2, .pref = {{1, "foo in (ok)", NULL}, {3, "bad/key/x in (a), foo in (a_)", NULL}}};
    void *self = fx_init(na, NULL);
    struct ks_pod *pod = mk_pod(&pl);
    struct ks_node *node = ks_fake_node("n", "foo=ok");
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    int64_t score = -1;
    fx_cs_init(&cs);

    cr_expect(eq(int, na->score(self, &cs, pod, snap, &score, &st), KS_ERROR));
    /* several errors: errors.NewAggregate's "[e1, e2]" */
    cr_expect(
        eq(str, (char *)fx_reason(&st, 0),
           "[[1].matchExpressions[0].key: Invalid value: \"bad/key/x\": a qualified name must consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
           "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
           "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
           "'example.com/MyName'), [1].matchExpressions[1].values[0][foo]: Invalid value: \"a_\": a valid "
           "label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
           "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"));
    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    na->destroy(self);
}

/* ---- args (TestValidateNodeAffinityArgs) ------------------------------------------------------------ */

Test(nodeaffinity, args_valid)
{
    void *args = parse_args("addedAffinity:\n"
                            "  requiredDuringSchedulingIgnoredDuringExecution:\n"
                            "    nodeSelectorTerms:\n"
                            "    - matchExpressions:\n"
                            "      - {key: label-1, operator: In, values: [label-1-val]}\n"
                            "  preferredDuringSchedulingIgnoredDuringExecution:\n"
                            "  - weight: 1\n"
                            "    preference:\n"
                            "      matchFields:\n"
                            "      - {key: metadata.name, operator: In, values: [node-1]}\n");
    const struct ks_nodeaffinity_args *a = args;
    cr_assert(ne(ptr, a->added_affinity, NULL));
    cr_expect(eq(u32, a->added_affinity->required->nterms, 1));
    cr_expect(eq(u32, a->added_affinity->npreferred, 1));
    cr_expect(eq(u32, a->added_affinity->preferred[0].term.nfields, 1));
    na->args_destroy(args);

    /* no args, or no addedAffinity: nothing added */
    void *none = NULL;
    struct ks_error err = {0};
    cr_assert(eq(int, na->args_parse(NULL, "kubescheduler.config.k8s.io/v1", NULL, &none, &err), 0));
    cr_expect(eq(ptr, ((const struct ks_nodeaffinity_args *)none)->added_affinity, NULL));
    na->args_destroy(none);
}

Test(nodeaffinity, args_invalid)
{
    /* upstream's "invalid added affinity": the first of its two errors */
    args_fail(
        "addedAffinity:\n"
        "  requiredDuringSchedulingIgnoredDuringExecution:\n"
        "    nodeSelectorTerms:\n"
        "    - matchExpressions:\n"
        "      - key: invalid/label/key\n"
        "        operator: In\n"
        "        values: [label-1-val]\n"
        "  preferredDuringSchedulingIgnoredDuringExecution:\n"
        "  - weight: 1\n"
        "    preference:\n"
        "      matchFields:\n"
        "      - {key: metadata.name, operator: In, values: [node-1, node-2]}\n",
        5,
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions["
        "0].key",
        "Invalid value: \"invalid/label/key\": a qualified name must consist of alphanumeric characters");
    /* its second error, alone: a preferred term's path has no "preference", as upstream */
    args_fail("addedAffinity:\n"
              "  preferredDuringSchedulingIgnoredDuringExecution:\n"
              "  - weight: 1\n"
              "    preference:\n"
              "      matchFields:\n"
              "      - {key: metadata.name, operator: In, values: [node-1, node-2]}\n",
              5, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values",
              "one value");
    /* label values */
    args_fail("addedAffinity:\n"
              "  preferredDuringSchedulingIgnoredDuringExecution:\n"
              "  - weight: 1\n"
              "    preference:\n"
              "      matchExpressions:\n"
              "      - key: zone\n"
              "        operator: NotIn\n"
              "        values:\n"
              "        - ok\n"
              "        - -bad\n",
              10,
              "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[1]"
              "[zone]",
              "Invalid value: \"-bad\": a valid label must be an empty string");
    args_fail("addedAffinity:\n"
              "  requiredDuringSchedulingIgnoredDuringExecution:\n"
              "    nodeSelectorTerms:\n"
              "    - matchExpressions:\n"
              "      - {key: '', operator: Exists}\n",
              5,
              "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
              "matchExpressions[0].key",
              "Invalid value: \"\": name part must be non-empty; name part must consist of");
    /* what the object decoder checks, under the same paths */
    args_fail("addedAffinity:\n"
              "  requiredDuringSchedulingIgnoredDuringExecution:\n"
              "    nodeSelectorTerms:\n"
              "    - matchExpressions:\n"
              "      - {key: pool, operator: In}\n",
              5,
              "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
              "matchExpressions[0].values",
              "must be specified when `operator` is 'In' or 'NotIn'");
    args_fail("addedAffinity:\n"
              "  preferredDuringSchedulingIgnoredDuringExecution:\n"
              "  - weight: 1\n"
              "    preference:\n"
              "      matchExpressions:\n"
              "      - {key: n, operator: Gt, values: [x]}\n",
              6,
              "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values",
              "invalid integer \"x\"");
    /* strict decoding names the preference */
    args_fail("addedAffinity:\n"
              "  preferredDuringSchedulingIgnoredDuringExecution:\n"
              "  - weight: 1\n"
              "    preference:\n"
              "      matchLabels: {a: b}\n",
              5, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchLabels",
              "unknown field \"matchLabels\"");
    args_fail("addedAffinity:\n  podAffinity: {}\n", 2, "addedAffinity.podAffinity", "unknown field");
    args_fail("kind: NodeResourcesFitArgs\n", 1, "kind", "must be \"NodeAffinityArgs\"");
}

Test(nodeaffinity, args_print_round_trip)
{
    void *args = parse_args("addedAffinity:\n"
                            "  requiredDuringSchedulingIgnoredDuringExecution:\n"
                            "    nodeSelectorTerms:\n"
                            "    - matchExpressions:\n"
                            "      - {key: zone, operator: In, values: [a, b]}\n"
                            "  preferredDuringSchedulingIgnoredDuringExecution:\n"
                            "  - weight: 5\n"
                            "    preference:\n"
                            "      matchExpressions:\n"
                            "      - {key: disk, operator: Exists}\n");
    void *self = fx_init(na, args);
    struct ks_pod *pod = mk_pod(&(struct placement){0});
    struct ks_node *in = ks_fake_node("in", "zone=b,disk=ssd"), *out = ks_fake_node("out", "zone=c");
    struct ks_node_snap *sin = fx_snap(in, NULL, 0), *sout = fx_snap(out, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    struct ks_pre_filter_result res = {.all = true};
    int64_t score = -1;
    fx_cs_init(&cs);

    /* an added required selector alone keeps PreFilter from skipping */
    cr_expect(eq(int, na->pre_filter(self, &cs, pod, &res, &st), KS_SUCCESS));
    cr_expect(eq(int, na->filter(self, &cs, pod, sin, &st), KS_SUCCESS));
    cr_expect(eq(int, na->filter(self, &cs, pod, sout, &st), KS_UNSCHEDULABLE_AND_UNRESOLVABLE));
    cr_expect(eq(str, (char *)fx_reason(&st, 0), ERR_ENFORCED));
    cr_expect(eq(int, na->pre_score(self, &cs, pod, NULL, 0, &st), KS_SUCCESS));
    cr_expect(eq(int, na->score(self, &cs, pod, sin, &score, &st), KS_SUCCESS));
    cr_expect(eq(i64, score, 5));

    fx_cs_free(&cs);
    fx_snap_free(sin);
    fx_snap_free(sout);
    ks_node_destroy(in);
    ks_node_destroy(out);
    ks_pod_destroy(pod);
    na->destroy(self);
    na->args_destroy(args);
}

/* ---- helper: upstream's validation messages ------------------------------------------------------ */

Test(nodeaffinity, helper_qualified_names_and_label_values)
{
    static const struct {
        const char *in, *why; /* why NULL: valid */
    } keys[] = {
        {"foo", NULL},
        {"example.com/My_Name-1.x", NULL},
        {"a/b/c",
         "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
         "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
         "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
         "and '/' (e.g. 'example.com/MyName')"},
        {"/x", "prefix part must be non-empty"},
        {"Example.com/x",
         "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
         "or "
         "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
         "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
        {"x/",
         "name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', "
         "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
         "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "name part must be no more than 63 characters"},
        {"-x",
         "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    };
    char why[1024];
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        bool ok = ks_qualified_name_ok(keys[i].in, why, sizeof(why));
        cr_expect(eq(int, ok, keys[i].why == NULL), "%s", keys[i].in);
        if (keys[i].why)
            cr_expect(eq(str, why, (char *)keys[i].why), "%s", keys[i].in);
    }
    cr_expect(ks_label_value_ok("", why, sizeof(why)));
    cr_expect(ks_label_value_ok("a", why, sizeof(why)));
    cr_expect(ks_label_value_ok("My_value-1.2", why, sizeof(why)));
    cr_expect(ks_label_value_ok("a_", why, sizeof(why)) == false);
    cr_expect(ks_label_value_ok("-5", why, sizeof(why)) == false, "Gt/Lt numbers must be label values too");
    cr_expect(ks_label_value_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", why,
                                sizeof(why)) == false);
    cr_expect(
        eq(str, why,
           "must be no more than 63 characters; a valid label must be an empty string or consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
           "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
           "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
}
