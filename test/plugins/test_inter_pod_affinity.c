/*
 * test_inter_pod_affinity.c - the InterPodAffinity plugin (plugins/inter_pod_affinity.c)
 * and the topology helpers it shares (plugins/helpers/helper_topology_pairs.c).
 *
 * Ports upstream's interpodaffinity tests with their expectations:
 *  - filtering_test.go: TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
 *    TestPreFilterDisabled, TestPreFilterStateAddRemovePod, TestPreFilterStateClone,
 *    TestGetTPMapMatchingIncomingAffinityAntiAffinity;
 *  - scoring_test.go: TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight;
 *  - args: defaults and ValidateInterPodAffinityArgs.
 * and ksched's own: matchLabelKeys / mismatchLabelKeys, namespace selectors against
 * missing Namespace objects, NormalizeScore's float arithmetic, the topology-pair map, the
 * namespace index, and the memos (counts kept across cycles must equal counts computed
 * from scratch while the cluster and the query change).
 * The rows that feed invalid label values ("{{.bad-value.}}") are left out: the manifest
 * loader rejects such pods before any plugin sees them.
 *
 * Each row builds a real cache (nodes, pods, RCU snapshot) and a framework whose deps
 * carry the cache and the Namespace objects, as `ksched schedule` does. The plugin's
 * source is compiled into this file under another symbol so the tests can read the
 * counts of its cycle state, as upstream's tests read preFilterState.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#define ks_plugin_inter_pod_affinity test_ipa_plugin
#include "../../plugins/inter_pod_affinity.c"
#undef ks_plugin_inter_pod_affinity

#include "ksched/base/rcu.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"
#include "plugin_fixtures.h"

static const struct ks_plugin *const ipa = &test_ipa_plugin;

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

TestSuite(interpodaffinity, .init = setup, .fini = teardown);

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- building pods, nodes and namespaces ------------------------------------------------------ */

enum tkind {
    NONE,
    REQ_AFF,   /* podAffinity.requiredDuringScheduling... */
    REQ_ANTI,  /* podAntiAffinity.requiredDuringScheduling... */
    PREF_AFF,  /* podAffinity.preferredDuringScheduling... */
    PREF_ANTI, /* podAntiAffinity.preferredDuringScheduling... */
};

/* One pod affinity term as strings. */
struct tterm {
    enum tkind kind;
    const char *sel;  /* labelSelector, objects.h selector syntax; NULL: nil */
    const char *topo; /* topologyKey ("" as upstream's tests leave it unset sometimes) */
    int32_t weight;   /* preferred terms */
    const char *ns;   /* namespaces "a,b"; NULL: none */
    const char *nssel;
    const char *match_keys; /* matchLabelKeys "a,b"; NULL: none */
    const char *mismatch_keys;
};

#define MAXT 4

/* Term builders: RA/RN required affinity/anti-affinity, PA/PN preferred with a weight; optional
 * designated fields (.ns, .nssel, .match_keys, .mismatch_keys) follow. */
#define RA(s, t, ...)                                                                                        \
    {                                                                                                        \
        .kind = REQ_AFF, .sel = (s), .topo = (t), __VA_ARGS__                                                \
    }
#define RN(s, t, ...)                                                                                        \
    {                                                                                                        \
        .kind = REQ_ANTI, .sel = (s), .topo = (t), __VA_ARGS__                                               \
    }
#define PA(w, s, t, ...)                                                                                     \
    {                                                                                                        \
        .kind = PREF_AFF, .weight = (w), .sel = (s), .topo = (t), __VA_ARGS__                                \
    }
#define PN(w, s, t, ...)                                                                                     \
    {                                                                                                        \
        .kind = PREF_ANTI, .weight = (w), .sel = (s), .topo = (t), __VA_ARGS__                               \
    }

/* A pod: namespace, labels, node (NULL for the incoming pod) and its terms. */
struct tpod {
    const char *ns;
    const char *labels;
    const char *node;
    struct tterm t[MAXT];
};

struct tnode {
    const char *name;
    const char *labels;
};

struct tns {
    const char *name;
    const char *labels;
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Interned ids of "a,b,c" in @a (@sorted: sorted and unique, as ks_dec_id_set gives). */
static uint32_t ids_of(struct ks_arena *a, const char *csv, bool sorted, uint32_t **out)
{
    uint32_t n = 0;
    *out = NULL;
    if (!csv)
        return 0;
    uint32_t *ids = fx_must(ks_arena_calloc(a, strlen(csv) + 1, sizeof(*ids)));
    for (const char *s = csv;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        ids[n++] = ks_intern_n(s, len);
        if (!comma)
            break;
        s = comma + 1;
    }
    if (sorted) {
        qsort(ids, n, sizeof(*ids), cmp_u32);
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (k == 0 || ids[k - 1] != ids[i])
                ids[k++] = ids[i];
        }
        n = k;
    }
    *out = ids;
    return n;
}

static void fill_term(struct ks_arena *a, const struct tterm *s, struct ks_pod_affinity_term *t)
{
    t->selector = ks_fake_selector(a, s->sel);
    t->topology_key = ks_intern(s->topo ? s->topo : "");
    t->nnamespaces = ids_of(a, s->ns, true, &t->namespaces);
    t->namespace_selector = ks_fake_selector(a, s->nssel);
    t->nmatch_label_keys = ids_of(a, s->match_keys, false, &t->match_label_keys);
    t->nmismatch_label_keys = ids_of(a, s->mismatch_keys, false, &t->mismatch_label_keys);
}

static uint32_t count_kind(const struct tpod *p, enum tkind k)
{
    uint32_t n = 0;
    for (int i = 0; i < MAXT; i++)
        n += p->t[i].kind == k;
    return n;
}

/* The pod affinity of one side (@req, @pref kinds) of @p, NULL when it has no such terms. */
static struct ks_pod_affinity *side(struct ks_arena *a, const struct tpod *p, enum tkind req, enum tkind pref)
{
    uint32_t nreq = count_kind(p, req), npref = count_kind(p, pref);
    if (!nreq && !npref)
        return NULL;
    struct ks_pod_affinity *pa = fx_must(ks_arena_calloc(a, 1, sizeof(*pa)));
    if (nreq)
        pa->required = fx_must(ks_arena_calloc(a, nreq, sizeof(*pa->required)));
    if (npref)
        pa->preferred = fx_must(ks_arena_calloc(a, npref, sizeof(*pa->preferred)));
    for (int i = 0; i < MAXT; i++) {
        const struct tterm *s = &p->t[i];
        if (s->kind == req) {
            fill_term(a, s, &pa->required[pa->nrequired++]);
        } else if (s->kind == pref) {
            pa->preferred[pa->npreferred].weight = s->weight;
            fill_term(a, s, &pa->preferred[pa->npreferred++].term);
        }
    }
    return pa;
}

static struct ks_pod *build_pod(const struct tpod *p, const char *name)
{
    struct ks_pod *pod = ks_fake_pod(p->ns ? p->ns : "", name);
    ks_fake_pod_labels(pod, p->labels ? p->labels : "");
    pod->affinity.pod_affinity = side(&pod->arena, p, REQ_AFF, PREF_AFF);
    pod->affinity.pod_anti_affinity = side(&pod->arena, p, REQ_ANTI, PREF_ANTI);
    if (p->node)
        pod->node_name = ks_intern(p->node);
    pod->refs = 1;
    return ks_fake_pod_done(pod);
}

/* ---- one cluster ------------------------------------------------------------------------------- */

#define MAXP 8
#define MAXN 5

struct env {
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_objects objs;
    struct ks_interpodaffinity_args args;
    void *self;
    struct ks_cycle_state cs;
    struct ks_pod *pod; /* the incoming pod */
    const struct ks_node_snap *nodes[MAXN];
    uint32_t nnodes;
};

static const struct tns team_namespaces[] = {
    {"subteam1.team1", "team=team1"},
    {"subteam2.team1", "team=team1"},
    {"subteam1.team2", "team=team2"},
    {"subteam2.team2", "team=team2"},
    {NULL, NULL},
};

/*
 * env_up - a cache with @nodes and @pods (until .name / .node is NULL), Namespace objects
 * @ns, the plugin with the given args, and the incoming @pod; leaves the RCU read lock
 * held (the scheduling thread's view) until env_down().
 */
static void env_up(struct env *e, const struct tpod *pod, const struct tpod *pods, const struct tnode *nodes,
                   const struct tns *ns, int32_t hard_weight, bool ignore_preferred)
{
    struct ks_error err = {0};
    memset(e, 0, sizeof(*e));
    cr_assert(eq(int, ks_cache_create(&e->cache), 0));
    for (uint32_t i = 0; i < MAXN && nodes && nodes[i].name; i++) {
        struct ks_node *n = ks_fake_node(nodes[i].name, nodes[i].labels);
        ks_fake_node_allocatable(n, "cpu=4,memory=8Gi,pods=110");
        cr_assert(eq(int, ks_cache_add_node(e->cache, n), 0));
    }
    for (uint32_t i = 0; i < MAXP && pods && pods[i].node; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%u", i);
        struct ks_pod *p = build_pod(&pods[i], name);
        if (ks_cache_add_pod(e->cache, p, p->node_name) != 0)
            ks_pod_destroy(p); /* a pod on a node that does not exist */
    }
    cr_assert(ge(int, ks_cache_refresh(e->cache), 0));

    struct ks_objvec *v = &e->objs.of[KS_KIND_NAMESPACE];
    for (uint32_t i = 0; ns && ns[i].name; i++)
        v->n++;
    v->cap = v->n;
    v->items = v->n ? fx_must(calloc(v->n, sizeof(void *))) : NULL;
    for (uint32_t i = 0; i < v->n; i++) {
        struct ks_namespace *o = fx_must(calloc(1, sizeof(*o)));
        o->meta.name = fx_must(ks_arena_strdup(&o->arena, ns[i].name));
        o->meta.labels = ks_fake_labels(&o->arena, ns[i].labels);
        v->items[i] = o;
    }

    cr_assert(eq(int, ks_config_load_default(&e->cfg), 0));
    struct ks_framework_deps deps = {.cache = e->cache, .objects = &e->objs};
    cr_assert(eq(int, ks_framework_create(&e->cfg->profiles[0], &deps, &e->fw, &err), 0), "%s", err.msg);
    e->args = (struct ks_interpodaffinity_args){
        .hard_pod_affinity_weight = hard_weight,
        .ignore_preferred_terms_of_existing_pods = ignore_preferred,
        .version = KS_CONFIG_V1,
    };
    struct ks_plugin_init in = {.args = &e->args, .slot = 0, .framework = e->fw};
    cr_assert(eq(int, ipa->init(&in, &e->self, &err), 0));
    ks_cycle_state_init(&e->cs);
    e->pod = build_pod(pod, "incoming");

    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(e->cache);
    for (uint32_t i = 0; i < MAXN && nodes && nodes[i].name; i++) {
        e->nodes[i] = ks_snapshot_find(s, ks_intern(nodes[i].name));
        cr_assert(e->nodes[i] != NULL, "node %s", nodes[i].name);
        e->nnodes++;
    }
}

static void env_down(struct env *e)
{
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&e->cs);
    ipa->destroy(e->self);
    ks_framework_destroy(e->fw);
    ks_config_destroy(e->cfg);
    ks_cache_destroy(e->cache);
    struct ks_objvec *v = &e->objs.of[KS_KIND_NAMESPACE];
    for (uint32_t i = 0; i < v->n; i++)
        ks_namespace_destroy(v->items[i]);
    free(v->items);
    ks_pod_destroy(e->pod);
}

static int run_pre_filter(struct env *e, struct ks_status *st)
{
    struct ks_pre_filter_result res = {.all = true};
    *st = (struct ks_status){0};
    return ipa->pre_filter(e->self, &e->cs, e->pod, &res, st);
}

static const struct ipa_filter_state *filter_state(const struct env *e)
{
    const struct ipa_state *s = e->cs.slot[0];
    return s ? s->filter : NULL;
}

/* ---- Filter tables ------------------------------------------------------------------------------- */

#define AFF   "node(s) didn't match pod affinity rules"
#define ANTI  "node(s) didn't match pod anti-affinity rules"
#define EXIST "node(s) didn't satisfy existing pods anti-affinity rules"
#define FITS                                                                                                 \
    {                                                                                                        \
        KS_SUCCESS, NULL                                                                                     \
    }
#define UU(m)                                                                                                \
    {                                                                                                        \
        KS_UNSCHEDULABLE_AND_UNRESOLVABLE, m                                                                 \
    }
#define UN(m)                                                                                                \
    {                                                                                                        \
        KS_UNSCHEDULABLE, m                                                                                  \
    }

struct want_status {
    int code;
    const char *msg;
};

struct filter_case {
    const char *name;
    struct tpod pod;
    struct tpod pods[MAXP];
    struct tnode nodes[MAXN];
    int pre_code; /* KS_SUCCESS or KS_SKIP */
    struct want_status want[MAXN];
};

static void run_filter_case(const struct filter_case *c, const struct tns *ns)
{
    struct env e;
    struct ks_status st;
    env_up(&e, &c->pod, c->pods, c->nodes, ns, 1, false);

    int code = run_pre_filter(&e, &st);
    cr_expect(eq(int, code, c->pre_code), "%s: PreFilter (%s)", c->name, fx_reason(&st, 0));
    if (code == KS_SUCCESS) {
        for (uint32_t i = 0; i < e.nnodes; i++) {
            st = (struct ks_status){0};
            code = ipa->filter(e.self, &e.cs, e.pod, e.nodes[i], &st);
            cr_expect(eq(int, code, c->want[i].code), "%s: %s", c->name, c->nodes[i].name);
            if (c->want[i].msg) {
                cr_expect(eq(u32, st.nreasons, 1), "%s: %s", c->name, c->nodes[i].name);
                cr_expect(eq(str, (char *)fx_reason(&st, 0), (char *)c->want[i].msg), "%s: %s", c->name,
                          c->nodes[i].name);
            }
        }
    }
    env_down(&e);
}

/* TestRequiredAffinitySingleNode */
Test(interpodaffinity, required_affinity_single_node)
{
#define NODE1                                                                                                \
    {                                                                                                        \
        {                                                                                                    \
            "node1", "region=r1,zone=z11"                                                                    \
        }                                                                                                    \
    }
#define POD                                                                                                  \
    {                                                                                                        \
        "", "service=securityscan", "node1",                                                                 \
        {                                                                                                    \
            {                                                                                                \
                0                                                                                            \
            }                                                                                                \
        }                                                                                                    \
    }
    static const struct filter_case cases[] = {
        {"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing "
         "pods",
         {0},
         {{0}},
         NODE1,
         KS_SKIP,
         {FITS}},
        {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator "
         "that "
         "matches the existing pod",
         {"", "security=S1", NULL, {RA("service in (securityscan,value2)", "region")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {FITS}},
        {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
         "operator in labelSelector that matches the existing pod",
         {"", "security=S1", NULL, {RA("service notin (securityscan3,value3)", "region")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {FITS}},
        {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
         {"", "security=S1", NULL, {RA("service in (securityscan,value2)", "", .ns = "DiffNameSpace")}},
         {{"ns", "service=securityscan", "node1", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {UU(AFF)}},
        {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
         {"", "service=securityscan", NULL, {RA("service in (antivirusscan,value2)", "")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {UU(AFF)}},
        {"satisfies the PodAffinity with different label Operators in multiple "
         "RequiredDuringSchedulingIgnoredDuringExecution ",
         {"",
          "security=S1",
          NULL,
          {RA("service, !wrongkey", "region"),
           RA("service in (securityscan), service notin (WrongValue)", "region")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {FITS}},
        {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto "
         "the "
         "node because one of the matchExpression item don't match.",
         {"",
          "security=S1",
          NULL,
          {RA("service, !wrongkey", "region"),
           RA("service in (securityscan2), service notin (WrongValue)", "region")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {UU(AFF)}},
        {"satisfies the PodAffinity and PodAntiAffinity with the existing pod",
         {"",
          "security=S1",
          NULL,
          {RA("service in (securityscan,value2)", "region"),
           RN("service in (antivirusscan,value2)", "node")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {FITS}},
        {"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
         {"",
          "security=S1",
          NULL,
          {RA("service in (securityscan,value2)", "region"),
           RN("service in (antivirusscan,value2)", "node")}},
         {{"", "service=securityscan", "node1", {RN("service in (antivirusscan,value2)", "node")}}},
         NODE1,
         KS_SUCCESS,
         {FITS}},
        {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
         {"",
          "security=S1",
          NULL,
          {RA("service in (securityscan,value2)", "region"), RN("service in (securityscan,value2)", "zone")}},
         {POD},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with "
         "the "
         "existing pod",
         {"",
          "service=securityscan",
          NULL,
          {RA("service in (securityscan,value2)", "region"),
           RN("service in (antivirusscan,value2)", "node")}},
         {{"", "service=securityscan", "node1", {RN("service in (securityscan,value2)", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(EXIST)}},
        {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
         {"", "service=securityscan", NULL, {RA("service notin (securityscan,value2)", "region")}},
         {{"", "service=securityscan", "node2", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {UU(AFF)}},
        {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
         "constraints. "
         "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
         {"", "service=securityscan", NULL, {{0}}},
         {{"", "service=securityscan", "node1", {RN("service in (securityscan,value2)", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(EXIST)}},
        {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
         "constraints. "
         "satisfy PodAntiAffinity symmetry with the existing pod",
         {"", "service=securityscan", NULL, {{0}}},
         {{"", "service=securityscan", "node1", {RN("service notin (securityscan,value2)", "zone")}}},
         NODE1,
         KS_SKIP,
         {FITS}},
        {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
         "incoming pod",
         {"", "service=securityscan", NULL, {RN("service", "region"), RN("security", "region")}},
         {{"", "security=S1", "node1", {RN("security", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
         "AffinityTerms",
         {"", "service=securityscan", NULL, {RN("service", "zone"), RN("security", "zone")}},
         {{"", "security=S1", "node1", {RN("security", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
         "AffinityTerms",
         {"", "security=S1", NULL, {RN("security", "zone")}},
         {{"", "service=securityscan", "node1", {RN("service", "zone"), RN("security", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(EXIST)}},
        {"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
         "AffinityTerms",
         {"", "abc=,xyz=", NULL, {RN("abc", "zone"), RN("def", "zone")}},
         {{"", "def=,xyz=", "node1", {RN("abc", "zone"), RN("def", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
         "AffinityTerms",
         {"", "def=,xyz=", NULL, {RN("abc", "zone"), RN("def", "zone")}},
         {{"", "abc=,xyz=", "node1", {RN("abc", "zone"), RN("def", "zone")}}},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"affinity with NamespaceSelector",
         {"",
          "security=S1",
          NULL,
          {RA("service in (securityscan,value2)", "region", .nssel = "team in (team1)")}},
         {{"subteam1.team1", "service=securityscan", "node1", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {FITS}},
        {"affinity with non-matching NamespaceSelector",
         {"",
          "security=S1",
          NULL,
          {RA("service in (securityscan,value2)", "region", .nssel = "team in (team1)")}},
         {{"subteam1.team2", "service=securityscan", "node1", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {UU(AFF)}},
        {"anti-affinity with matching NamespaceSelector",
         {"subteam1.team1",
          "security=S1",
          NULL,
          {RN("service in (securityscan,value2)", "zone", .nssel = "team in (team1)")}},
         {{"subteam2.team1", "service=securityscan", "node1", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"anti-affinity with matching all NamespaceSelector",
         {"subteam1.team1",
          "security=S1",
          NULL,
          {RN("service in (securityscan,value2)", "zone", .nssel = "")}},
         {{"subteam2.team1", "service=securityscan", "node1", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {UN(ANTI)}},
        {"anti-affinity with non-matching NamespaceSelector",
         {"subteam1.team1",
          "security=S1",
          NULL,
          {RN("service in (securityscan,value2)", "zone", .nssel = "team in (team1)")}},
         {{"subteam1.team2", "service=securityscan", "node1", {{0}}}},
         NODE1,
         KS_SUCCESS,
         {FITS}},
    };
#undef NODE1
#undef POD
    for (size_t i = 0; i < N(cases); i++)
        run_filter_case(&cases[i], team_namespaces);
}

/* TestRequiredAffinityMultipleNodes */
Test(interpodaffinity, required_affinity_multiple_nodes)
{
    static const struct tns ns1[] = {{"NS1", ""}, {NULL, NULL}};
#define CHINA_INDIA                                                                                          \
    {                                                                                                        \
        {"nodeA", "region=China"}, {"nodeB", "region=China,az=az1"},                                         \
        {                                                                                                    \
            "nodeC", "region=India"                                                                          \
        }                                                                                                    \
    }
#define R1Z1_R1Z1                                                                                            \
    {                                                                                                        \
        {"nodeA", "region=r1,zone=z1,hostname=nodeA"},                                                       \
        {                                                                                                    \
            "nodeB", "region=r1,zone=z1,hostname=nodeB"                                                      \
        }                                                                                                    \
    }
#define R1Z1_R1Z2                                                                                            \
    {                                                                                                        \
        {"nodeA", "region=r1,zone=z1,hostname=nodeA"},                                                       \
        {                                                                                                    \
            "nodeB", "region=r1,zone=z2,hostname=nodeB"                                                      \
        }                                                                                                    \
    }
    static const struct filter_case cases[] = {
        {"A pod can be scheduled onto all the nodes that have the same topology key & label value with one "
         "of "
         "them has an existing pod that matches the affinity rules",
         {"", NULL, NULL, {RA("foo in (bar)", "region")}},
         {{"", "foo=bar", "nodeA", {{0}}}},
         CHINA_INDIA,
         KS_SUCCESS,
         {FITS, FITS, UU(AFF)}},
        {"The affinity rule is to schedule all of the pods of this collection to the same zone. The first "
         "pod of "
         "the collection should not be blocked from being scheduled onto any node, even there's no existing "
         "pod "
         "that matches the rule anywhere.",
         {"",
          "foo=bar,service=securityscan",
          NULL,
          {RA("foo in (bar)", "zone"), RA("service in (securityscan)", "zone")}},
         {{"", "foo=bar", "nodeA", {{0}}}},
         {{"nodeA", "zone=az1,hostname=h1"}, {"nodeB", "zone=az2,hostname=h2"}},
         KS_SUCCESS,
         {FITS, FITS}},
        {"The first pod of the collection can only be scheduled on nodes labelled with the requested "
         "topology "
         "keys",
         {"",
          "foo=bar,service=securityscan",
          NULL,
          {RA("foo in (bar)", "zone"), RA("service in (securityscan)", "zone")}},
         {{"", "foo=bar", "nodeA", {{0}}}},
         {{"nodeA", "zoneLabel=az1,hostname=h1"}, {"nodeB", "zoneLabel=az2,hostname=h2"}},
         KS_SUCCESS,
         {UU(AFF), UU(AFF)}},
        {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
         "inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
         {"", NULL, NULL, {RN("foo in (abc)", "region")}},
         {{"", "foo=abc", "nodeA", {{0}}}},
         {{"nodeA", "region=r1,hostname=nodeA"}, {"nodeB", "region=r1,hostname=nodeB"}},
         KS_SUCCESS,
         {UN(ANTI), UN(ANTI)}},
        {"This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches "
         "a "
         "pod.",
         {"", NULL, NULL, {RN("foo in (abc)", "region"), RN("service in (securityscan)", "zone")}},
         {{"", "foo=abc,service=securityscan", "nodeA", {{0}}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(ANTI), UN(ANTI)}},
        {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
         "inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled "
         "onto "
         "nodeC",
         {"", NULL, NULL, {RN("foo in (abc)", "region")}},
         {{"", "foo=abc", "nodeA", {{0}}}},
         CHINA_INDIA,
         KS_SUCCESS,
         {UN(ANTI), UN(ANTI), FITS}},
        {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
         "inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto "
         "nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different "
         "namespace)",
         {"NS1", "foo=123", NULL, {RN("foo in (bar)", "region")}},
         {{"NS1", "foo=bar", "nodeA", {{0}}}, {"NS2", NULL, "nodeC", {RN("foo in (123)", "region")}}},
         CHINA_INDIA,
         KS_SUCCESS,
         {UN(ANTI), UN(ANTI), FITS}},
        {"Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
         "labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
         {"", "foo=", NULL, {{0}}},
         {{"", NULL, "nodeA", {RN("foo", "invalid-node-label")}}},
         R1Z1_R1Z1,
         KS_SKIP,
         {FITS, FITS}},
        {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey "
         "matches",
         {"", NULL, NULL, {RN("foo", "invalid-node-label")}},
         {{"", "foo=", "nodeA", {{0}}}},
         R1Z1_R1Z1,
         KS_SUCCESS,
         {FITS, FITS}},
        {"Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
         "existingPod's terms on all nodes",
         {"", "foo=,bar=", NULL, {{0}}},
         {{"", NULL, "nodeA", {RN("foo", "zone")}}, {"", NULL, "nodeA", {RN("bar", "region")}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(EXIST), UN(EXIST)}},
        {"Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least "
         "violates "
         "one anti-affinity rule of existingPod",
         {"", NULL, NULL, {RN("foo", "zone"), RN("bar", "region")}},
         {{"", "foo=", "nodeA", {{0}}}, {"", "bar=", "nodeB", {{0}}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(ANTI), UN(ANTI)}},
        {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
         "counted as "
         "a single term match - case when one term has invalid topologyKey",
         {"", "foo=,bar=", NULL, {{0}}},
         {{"", NULL, "nodeA", {RN("foo", "invalid-node-label"), RN("bar", "zone")}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(EXIST), FITS}},
        {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
         "counted as "
         "a single term match - case when one term has invalid topologyKey",
         {"", NULL, NULL, {RN("foo", "invalid-node-label"), RN("bar", "zone")}},
         {{"", "foo=,bar=", "nodeA", {{0}}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(ANTI), FITS}},
        {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
         "counted as "
         "a single term match - case when all terms have valid topologyKey",
         {"", "foo=,bar=", NULL, {{0}}},
         {{"", NULL, "nodeA", {RN("foo", "region"), RN("bar", "zone")}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(EXIST), UN(EXIST)}},
        {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
         "counted as "
         "a single term match - case when all terms have valid topologyKey",
         {"", NULL, NULL, {RN("foo", "region"), RN("bar", "zone")}},
         {{"", "foo=,bar=", "nodeA", {{0}}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UN(ANTI), UN(ANTI)}},
        {"Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity "
         "term "
         "matches incoming pod, so incoming pod can only be scheduled to nodeC",
         {"", "foo=,bar=", NULL, {{0}}},
         {{"", NULL, "nodeA", {RN("foo", "zone"), RN("labelA", "zone")}},
          {"", NULL, "nodeB", {RN("bar", "zone"), RN("labelB", "zone")}}},
         {{"nodeA", "region=r1,zone=z1,hostname=nodeA"},
          {"nodeB", "region=r1,zone=z2,hostname=nodeB"},
          {"nodeC", "region=r1,zone=z3,hostname=nodeC"}},
         KS_SUCCESS,
         {UN(EXIST), UN(EXIST), FITS}},
        {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
         "topologyKeys match",
         {"", NULL, NULL, {RA("foo", "region"), RA("bar", "zone")}},
         {{"", "foo=,bar=", "nodeA", {{0}}}},
         R1Z1_R1Z1,
         KS_SUCCESS,
         {FITS, FITS}},
        {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
         "topologyKeys match, and the match logic should be satisfied on the same pod",
         {"", NULL, NULL, {RA("foo", "region"), RA("bar", "zone")}},
         {{"", "foo=", "nodeA", {{0}}}, {"", "bar=", "nodeB", {{0}}}},
         R1Z1_R1Z2,
         KS_SUCCESS,
         {UU(AFF), UU(AFF)}},
    };
#undef CHINA_INDIA
#undef R1Z1_R1Z1
#undef R1Z1_R1Z2
    for (size_t i = 0; i < N(cases); i++)
        run_filter_case(&cases[i], ns1);
}

/* TestPreFilterDisabled */
Test(interpodaffinity, filter_without_pre_filter_is_an_error)
{
    static const struct tpod pod = {0};
    static const struct tnode nodes[] = {{"node1", ""}, {0}};
    struct env e;
    struct ks_status st = {0};
    env_up(&e, &pod, NULL, nodes, NULL, 1, false);
    cr_expect(eq(int, ipa->filter(e.self, &e.cs, e.pod, e.nodes[0], &st), KS_ERROR));
    cr_expect(eq(str, (char *)fx_reason(&st, 0),
                 "error reading \"PreFilterInterPodAffinity\" from cycleState: not found"));
    st = (struct ks_status){0};
    int64_t score = 0;
    cr_expect(eq(int, ipa->score(e.self, &e.cs, e.pod, e.nodes[0], &score, &st), KS_ERROR));
    cr_expect(eq(str, (char *)fx_reason(&st, 0),
                 "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found"));
    env_down(&e);
}

/* ---- counts ---------------------------------------------------------------------------------------- */

/* One expected (key, value, count). */
struct tcount {
    const char *key, *value;
    int64_t count;
};

#define MAXC 4

/* @m holds exactly the nonzero counts of @want (until .key is NULL), as upstream's maps after deletes. */
static void expect_counts(const struct ks_tp_map *m, const struct tcount *want, const char *what,
                          const char *name)
{
    uint32_t nwant = 0;
    for (; nwant < MAXC && want[nwant].key; nwant++) {
        int64_t got = ks_tp_map_get(m, ks_intern(want[nwant].key), ks_intern(want[nwant].value));
        cr_expect(eq(i64, got, want[nwant].count), "%s: %s {%s: %s}", name, what, want[nwant].key,
                  want[nwant].value);
    }
    cr_expect(eq(u32, m->nonzero, nwant), "%s: %s: pairs", name, what);
}

/* Two maps hold the same nonzero counts. */
static void expect_same_counts(const struct ks_tp_map *a, const struct ks_tp_map *b, const char *what,
                               const char *name)
{
    cr_expect(eq(u32, a->nonzero, b->nonzero), "%s: %s: pairs", name, what);
    for (uint32_t i = 0; a->slots && i <= a->mask; i++) {
        const struct ks_tp_entry *x = &a->slots[i];
        if (x->key != KS_ID_EMPTY && x->count != 0)
            cr_expect(eq(i64, ks_tp_map_get(b, x->key, x->value), x->count), "%s: %s {%s: %s}", name, what,
                      ks_intern_str(x->key), ks_intern_str(x->value));
    }
}

static void expect_same_state(const struct ipa_filter_state *a, const struct ipa_filter_state *b,
                              const char *name)
{
    expect_same_counts(&a->counts[MAP_EXISTING_ANTI], &b->counts[MAP_EXISTING_ANTI], "existing anti-affinity",
                       name);
    expect_same_counts(&a->counts[MAP_AFFINITY], &b->counts[MAP_AFFINITY], "affinity", name);
    expect_same_counts(&a->counts[MAP_ANTI], &b->counts[MAP_ANTI], "anti-affinity", name);
}

/* TestPreFilterStateAddRemovePod */
Test(interpodaffinity, pre_filter_state_add_remove_pod)
{
#define ANTI_FOO_BAR RN("foo in (bar)", "region")
#define ANTI_COMPLEX RN("foo in (bar,buzz)", "region"), RN("service notin (bar,security,test)", "zone")
#define AFF_COMPLEX  RA("foo in (bar,buzz)", "region"), RA("service notin (bar,security,test)", "zone")
    static const struct tnode nodes[] = {{"nodeA", "region=r1,zone=z11"},
                                         {"nodeB", "region=r1,zone=z12"},
                                         {"nodeC", "region=r2,zone=z21"},
                                         {0}};
    static const struct {
        const char *name;
        struct tpod pending;
        struct tpod existing[3]; /* the last slot is the added pod once appended */
        struct tpod added;
        struct tcount anti[MAXC];
        struct tcount affinity[MAXC];
    } cases[] = {
        {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
         {"", "foo=bar", NULL, {ANTI_FOO_BAR}},
         {{"", "foo=bar", "nodeA", {{0}}}, {"", NULL, "nodeC", {ANTI_FOO_BAR}}},
         {"", "foo=bar", "nodeB", {ANTI_FOO_BAR}},
         {{"region", "r1", 2}},
         {{0}}},
        {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
         {"", "foo=bar", NULL, {ANTI_COMPLEX}},
         {{"", "foo=bar", "nodeA", {{0}}}, {"", NULL, "nodeC", {ANTI_FOO_BAR}}},
         {"", "foo=bar", "nodeA", {ANTI_COMPLEX}},
         {{"region", "r1", 2}, {"zone", "z11", 2}, {"zone", "z21", 1}},
         {{0}}},
        {"preFilterState matching pod affinity and anti-affinity are updated correctly after adding and "
         "removing a pod",
         {"", "foo=bar", NULL, {AFF_COMPLEX}},
         {{"", "foo=bar", "nodeA", {{0}}}, {"", NULL, "nodeC", {ANTI_FOO_BAR, AFF_COMPLEX}}},
         {"", "foo=bar", "nodeA", {ANTI_COMPLEX}},
         {{0}},
         {{"region", "r1", 2}, {"zone", "z11", 2}}},
    };
#undef ANTI_FOO_BAR
#undef ANTI_COMPLEX
#undef AFF_COMPLEX
    for (size_t i = 0; i < N(cases); i++) {
        struct ks_status st;

        /*
         * The counts PreFilter computes with the added pod already in the cluster, kept in
         * an arena of their own (one cluster at a time: a cache is destroyed outside any
         * RCU read section).
         */
        struct tpod all[4] = {cases[i].existing[0], cases[i].existing[1], cases[i].added};
        struct ks_arena kept = KS_ARENA_INIT;
        void *with = NULL;
        struct env e;
        env_up(&e, &cases[i].pending, all, nodes, NULL, 1, false);
        cr_assert(eq(int, run_pre_filter(&e, &st), KS_SUCCESS), "%s", cases[i].name);
        cr_assert(eq(int, ipa->state_clone(e.self, e.cs.slot[0], &kept, &with), 0));
        env_down(&e);

        /* the state without it, then AddPod */
        env_up(&e, &cases[i].pending, cases[i].existing, nodes, NULL, 1, false);
        cr_assert(eq(int, run_pre_filter(&e, &st), KS_SUCCESS), "%s", cases[i].name);
        struct ks_cycle_state original;
        ks_cycle_state_init(&original);
        void *copy = NULL;
        cr_assert(eq(int, ipa->state_clone(e.self, e.cs.slot[0], &original.arena, &copy), 0));
        original.slot[0] = copy;

        struct ks_pod *added = build_pod(&cases[i].added, "added");
        const struct ks_node_snap *node = ks_snapshot_find(ks_cache_snapshot(e.cache), added->node_name);
        cr_assert(eq(int, ipa->add_pod(e.self, &e.cs, e.pod, added, node, &st), KS_SUCCESS));
        const struct ipa_filter_state *f = filter_state(&e);
        expect_counts(&f->counts[MAP_ANTI], cases[i].anti, "antiAffinityCounts", cases[i].name);
        expect_counts(&f->counts[MAP_AFFINITY], cases[i].affinity, "affinityCounts", cases[i].name);
        expect_same_state(f, ((const struct ipa_state *)with)->filter, cases[i].name);

        /* RemovePod brings back the original state */
        cr_assert(eq(int, ipa->remove_pod(e.self, &e.cs, e.pod, added, node, &st), KS_SUCCESS));
        const struct ipa_state *orig = original.slot[0];
        expect_same_state(filter_state(&e), orig->filter, cases[i].name);

        ks_pod_destroy(added);
        ks_cycle_state_destroy(&original);
        ks_arena_destroy(&kept);
        env_down(&e);
    }
}

/* TestPreFilterStateClone: a clone holds equal counts in storage of its own. */
Test(interpodaffinity, pre_filter_state_clone)
{
    static const struct tpod pod = {"", "foo=bar", NULL, {RN("foo", "name"), RA("foo", "name")}};
    static const struct tpod pods[] = {
        {"", "foo=bar", "node1", {RN("foo", "name")}},
        {"", "foo=bar", "node2", {RN("foo", "name")}},
        {0},
    };
    static const struct tnode nodes[] = {
        {"node1", "name=node1"}, {"node2", "name=node2"}, {"node3", "name=node3"}, {0}};
    struct env e;
    struct ks_status st;
    env_up(&e, &pod, pods, nodes, NULL, 1, false);
    cr_assert(eq(int, run_pre_filter(&e, &st), KS_SUCCESS));

    struct ks_arena arena = KS_ARENA_INIT;
    void *copy = NULL;
    cr_assert(eq(int, ipa->state_clone(e.self, e.cs.slot[0], &arena, &copy), 0));
    const struct ipa_state *c = copy, *s = e.cs.slot[0];
    cr_expect(c != s && c->filter != s->filter, "Clone returned the exact same object!");
    cr_expect(c->filter->counts[MAP_EXISTING_ANTI].slots != s->filter->counts[MAP_EXISTING_ANTI].slots);
    expect_same_state(c->filter, s->filter, "clone");
    expect_same_state(s->filter, c->filter, "clone");

    /* changing the clone leaves the source alone */
    struct ks_cycle_state dry = {0};
    dry.slot[0] = copy;
    struct ks_pod *other = build_pod(&pods[0], "other");
    cr_assert(eq(int, ipa->add_pod(e.self, &dry, e.pod, other, e.nodes[2], &st), KS_SUCCESS));
    cr_expect(eq(
        i64, ks_tp_map_get(&c->filter->counts[MAP_EXISTING_ANTI], ks_intern("name"), ks_intern("node3")), 1));
    cr_expect(eq(
        i64, ks_tp_map_get(&s->filter->counts[MAP_EXISTING_ANTI], ks_intern("name"), ks_intern("node3")), 0));
    cr_expect(eq(
        i64, ks_tp_map_get(&s->filter->counts[MAP_EXISTING_ANTI], ks_intern("name"), ks_intern("node1")), 1));

    ks_arena_destroy(&dry.arena);
    ks_arena_destroy(&arena);
    ks_pod_destroy(other);
    env_down(&e);
}

/* TestGetTPMapMatchingIncomingAffinityAntiAffinity */
Test(interpodaffinity, incoming_affinity_anti_affinity_counts)
{
#define AFFK(k)  RA(k, "hostname")
#define ANTIK(k) RN(k, "hostname")
    static const struct tnode nodes[] = {{"nodeA", "hostname=nodeA"}, {0}};
    static const struct {
        const char *name;
        struct tpod existing;
        struct tpod pod;
        struct tcount affinity[MAXC];
        struct tcount anti[MAXC];
    } cases[] = {
        {"nil test", {0}, {"", NULL, NULL, {{0}}}, {{0}}, {{0}}},
        {"incoming pod without affinity/anti-affinity causes a no-op",
         {"", "aaa=", "nodeA", {{0}}},
         {"", NULL, NULL, {{0}}},
         {{0}},
         {{0}}},
        {"no pod has label that violates incoming pod's affinity and anti-affinity",
         {"", "bbb=", "nodeA", {{0}}},
         {"", NULL, NULL, {AFFK("aaa"), ANTIK("aaa")}},
         {{0}},
         {{0}}},
        {"existing pod matches incoming pod's affinity and anti-affinity - single term case",
         {"", "aaa=", "nodeA", {{0}}},
         {"", NULL, NULL, {AFFK("aaa"), ANTIK("aaa")}},
         {{"hostname", "nodeA", 1}},
         {{"hostname", "nodeA", 1}}},
        {"existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
         {"", "aaa=,bbb=", "nodeA", {{0}}},
         {"", NULL, NULL, {AFFK("aaa"), AFFK("bbb"), ANTIK("aaa")}},
         {{"hostname", "nodeA", 2}},
         {{"hostname", "nodeA", 1}}},
        {"existing pod not match incoming pod's affinity but matches anti-affinity",
         {"", "aaa=", "nodeA", {{0}}},
         {"", NULL, NULL, {AFFK("aaa"), AFFK("bbb"), ANTIK("aaa"), ANTIK("bbb")}},
         {{0}},
         {{"hostname", "nodeA", 1}}},
        {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
         {"", "aaa=,bbb=", "nodeA", {{0}}},
         {"", NULL, NULL, {AFFK("aaa"), AFFK("ccc"), ANTIK("aaa"), ANTIK("ccc")}},
         {{0}},
         {{"hostname", "nodeA", 1}}},
        {"incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
         {"", "bbb=", "nodeA", {{0}}},
         {"", NULL, NULL, {AFFK("aaa"), AFFK("bbb"), ANTIK("aaa"), ANTIK("bbb")}},
         {{0}},
         {{"hostname", "nodeA", 1}}},
    };
#undef AFFK
#undef ANTIK
    for (size_t i = 0; i < N(cases); i++) {
        struct tpod pods[2] = {cases[i].existing};
        struct env e;
        struct ks_status st;
        env_up(&e, &cases[i].pod, pods, nodes, NULL, 1, false);
        int code = run_pre_filter(&e, &st);
        const struct ipa_filter_state *f = filter_state(&e);
        if (code == KS_SKIP) {
            /* no required terms: nothing counted */
            cr_expect(cases[i].affinity[0].key == NULL && cases[i].anti[0].key == NULL, "%s", cases[i].name);
        } else {
            cr_assert(eq(int, code, KS_SUCCESS), "%s", cases[i].name);
            expect_counts(&f->counts[MAP_AFFINITY], cases[i].affinity, "affinity", cases[i].name);
            expect_counts(&f->counts[MAP_ANTI], cases[i].anti, "anti-affinity", cases[i].name);
        }
        env_down(&e);
    }
}

/* ---- Score tables ---------------------------------------------------------------------------------- */

struct score_case {
    const char *name;
    struct tpod pod;
    struct tpod pods[MAXP];
    struct tnode nodes[MAXN];
    int64_t want[MAXN];
    int pre_code; /* PreScore: KS_SUCCESS or KS_SKIP */
    bool ignore_preferred;
    int32_t hard_weight;
};

static void run_score_case(const struct score_case *c)
{
    struct env e;
    struct ks_status st = {0};
    env_up(&e, &c->pod, c->pods, c->nodes, team_namespaces, c->hard_weight, c->ignore_preferred);

    int code = ipa->pre_score(e.self, &e.cs, e.pod, e.nodes, e.nnodes, &st);
    cr_expect(eq(int, code, c->pre_code), "%s: PreScore (%s)", c->name, fx_reason(&st, 0));
    if (code == KS_SUCCESS) {
        int64_t scores[MAXN] = {0};
        for (uint32_t i = 0; i < e.nnodes; i++)
            cr_expect(eq(int, ipa->score(e.self, &e.cs, e.pod, e.nodes[i], &scores[i], &st), KS_SUCCESS));
        cr_expect(
            eq(int, ipa->normalize_score(e.self, &e.cs, e.pod, e.nodes, scores, e.nnodes, &st), KS_SUCCESS));
        for (uint32_t i = 0; i < e.nnodes; i++)
            cr_expect(eq(i64, scores[i], c->want[i]), "%s: %s", c->name, c->nodes[i].name);
    }
    env_down(&e);
}

#define STAY_S1_REGION PA(5, "security in (S1)", "region")
#define STAY_S2_REGION PA(6, "security in (S2)", "region")
#define AFFINITY3                                                                                            \
    PA(8, "security notin (S1), security in (S2)", "region"), PA(2, "security, !wrongkey", "region")
#define HARD_AFFINITY   RA("security in (S1,value2)", "region"), RA("security, !wrongkey", "region")
#define AWAY_S1_AZ      PN(5, "security in (S1)", "az")
#define AWAY_S2_AZ      PN(5, "security in (S2)", "az")
#define STAY_S1_AWAY_S2 PA(8, "security in (S1)", "region"), AWAY_S2_AZ
#define AFF_NS_SELECTOR                                                                                      \
    PA(5, "security in (S1)", "region", .ns = "subteam2.team2", .nssel = "team in (team1)")
#define ANTI_NS_SELECTOR                                                                                     \
    PN(5, "security in (S1)", "region", .ns = "subteam2.team2", .nssel = "team in (team1)")
#define CHINA     "region=China"
#define INDIA     "region=India"
#define AZ1       "az=az1"
#define AZ2       "az=az2"
#define CHINA_AZ1 "region=China,az=az1"
#define S1        "security=S1"
#define S2        "security=S2"

/* TestPreferredAffinity */
Test(interpodaffinity, preferred_affinity)
{
    static const struct score_case cases[] = {
        {"all nodes are same priority as Affinity is nil",
         {"", S1, NULL, {{0}}},
         {{0}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {0},
         KS_SKIP,
         false,
         1},
        {"Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
         "which doesn't match either pods in nodes or in topology key",
         {"", S1, NULL, {STAY_S1_REGION}},
         {{"", S1, "node1", {{0}}}, {"", S2, "node2", {{0}}}, {"", S1, "node3", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {100, 0, 0},
         KS_SUCCESS,
         false,
         1},
        {"All the nodes that have the same topology key & label value with one of them has an existing pod "
         "that "
         "match the affinity rules, have the same score",
         {"", NULL, NULL, {STAY_S1_REGION}},
         {{"", S1, "node1", {{0}}}},
         {{"node1", CHINA}, {"node2", CHINA_AZ1}, {"node3", INDIA}},
         {100, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity: nodes in one region has more matching pods comparing to other region, so the region "
         "which "
         "has more matches will get high score",
         {"", S1, NULL, {STAY_S2_REGION}},
         {{"", S2, "node1", {{0}}},
          {"", S2, "node1", {{0}}},
          {"", S2, "node2", {{0}}},
          {"", S2, "node3", {{0}}},
          {"", S2, "node4", {{0}}},
          {"", S2, "node5", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", CHINA}, {"node4", CHINA}, {"node5", INDIA}},
         {100, 0, 100, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity: different Label operators and values for pod affinity scheduling preference, including "
         "some "
         "match failures ",
         {"", S1, NULL, {AFFINITY3}},
         {{"", S1, "node1", {{0}}}, {"", S2, "node2", {{0}}}, {"", S1, "node3", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {20, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod "
         "affinity "
         "symmetry",
         {"", S2, NULL, {{0}}},
         {{"", S1, "node1", {STAY_S1_REGION}}, {"", S2, "node2", {STAY_S2_REGION}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {0, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity symmetry with namespace selector",
         {"subteam1.team1", S1, NULL, {{0}}},
         {{"", S1, "node1", {AFF_NS_SELECTOR}}, {"", S2, "node2", {STAY_S2_REGION}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {100, 0, 0},
         KS_SUCCESS,
         false,
         1},
        {"AntiAffinity symmetry with namespace selector",
         {"subteam1.team1", S1, NULL, {{0}}},
         {{"", S1, "node1", {ANTI_NS_SELECTOR}}, {"", S2, "node2", {STAY_S2_REGION}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {0, 100, 100},
         KS_SUCCESS,
         false,
         1},
        {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity "
         "symmetry",
         {"", S1, NULL, {{0}}},
         {{"", S1, "node1", {HARD_AFFINITY}}, {"", S2, "node2", {HARD_AFFINITY}}},
         {{"node1", CHINA}, {"node2", INDIA}, {"node3", AZ1}},
         {100, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Anti Affinity: pod that does not match existing pods in node will get high score ",
         {"", S1, NULL, {AWAY_S1_AZ}},
         {{"", S1, "node1", {{0}}}, {"", S2, "node2", {{0}}}},
         {{"node1", AZ1}, {"node2", CHINA}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher "
         "score "
         "comparing to others ",
         {"", S1, NULL, {AWAY_S1_AZ}},
         {{"", S1, "node1", {{0}}}, {"", S1, "node2", {{0}}}},
         {{"node1", AZ1}, {"node2", CHINA}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
         "unmatches will get high score",
         {"", S1, NULL, {AWAY_S1_AZ}},
         {{"", S1, "node1", {{0}}}, {"", S1, "node1", {{0}}}, {"", S2, "node2", {{0}}}},
         {{"node1", AZ1}, {"node2", INDIA}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high "
         "score",
         {"", S2, NULL, {{0}}},
         {{"", S1, "node1", {AWAY_S2_AZ}}, {"", S2, "node2", {AWAY_S1_AZ}}},
         {{"node1", AZ1}, {"node2", AZ2}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in "
         "both pod "
         "affinity & anti affinity",
         {"", S1, NULL, {STAY_S1_AWAY_S2}},
         {{"", S1, "node1", {{0}}}, {"", S1, "node2", {{0}}}},
         {{"node1", CHINA}, {"node2", AZ1}},
         {100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
         "existing pods have the same labels",
         {"", S1, NULL, {STAY_S1_AWAY_S2}},
         {{"", S1, "node1", {{0}}},
          {"", S1, "node1", {{0}}},
          {"", S1, "node2", {{0}}},
          {"", S1, "node3", {{0}}},
          {"", S1, "node3", {{0}}},
          {"", S1, "node4", {{0}}},
          {"", S1, "node5", {{0}}}},
         {{"node1", CHINA_AZ1}, {"node2", INDIA}, {"node3", CHINA}, {"node4", CHINA}, {"node5", INDIA}},
         {100, 0, 100, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity and Anti Affinity and symmetry: considered only "
         "preferredDuringSchedulingIgnoredDuringExecution "
         "in both pod affinity & anti affinity & symmetry",
         {"", S1, NULL, {STAY_S1_AWAY_S2}},
         {{"", S1, "node1", {{0}}},
          {"", S2, "node2", {{0}}},
          {"", NULL, "node3", {STAY_S1_AWAY_S2}},
          {"", NULL, "node4", {AWAY_S1_AZ}}},
         {{"node1", CHINA}, {"node2", AZ1}, {"node3", INDIA}, {"node4", AZ2}},
         {100, 0, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Avoid panic when partial nodes in a topology don't have pods with affinity",
         {"", S1, NULL, {{0}}},
         {{"", S1, "node1", {{0}}}, {"", NULL, "node2", {STAY_S1_AWAY_S2}}},
         {{"node1", CHINA}, {"node2", CHINA}},
         {0, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity with pods matching NamespaceSelector",
         {"subteam1.team1", S1, NULL, {AFF_NS_SELECTOR}},
         {{"subteam1.team1", S1, "node1", {{0}}},
          {"subteam1.team1", S1, "node1", {{0}}},
          {"subteam1.team2", S1, "node1", {{0}}},
          {"subteam2.team1", S1, "node2", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}},
         {100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
         {"subteam1.team1", S1, NULL, {AFF_NS_SELECTOR}},
         {{"subteam1.team1", S1, "node1", {{0}}},
          {"subteam1.team1", S1, "node1", {{0}}},
          {"subteam2.team2", S1, "node1", {{0}}},
          {"subteam2.team1", S1, "node2", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}},
         {100, 0},
         KS_SUCCESS,
         false,
         1},
        {"Affinity with pods matching NamespaceSelector",
         {"subteam1.team1", S1, NULL, {ANTI_NS_SELECTOR}},
         {{"subteam1.team1", S1, "node1", {{0}}},
          {"subteam1.team1", S1, "node1", {{0}}},
          {"subteam1.team2", S1, "node1", {{0}}},
          {"subteam2.team1", S1, "node2", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
         {"subteam1.team1", S1, NULL, {ANTI_NS_SELECTOR}},
         {{"subteam1.team1", S1, "node1", {{0}}},
          {"subteam1.team1", S1, "node1", {{0}}},
          {"subteam2.team2", S1, "node1", {{0}}},
          {"subteam2.team1", S1, "node2", {{0}}}},
         {{"node1", CHINA}, {"node2", INDIA}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"Ignore preferred terms of existing pods",
         {"", S2, NULL, {{0}}},
         {{"", S1, "node1", {STAY_S1_AWAY_S2}}, {"", S2, "node2", {STAY_S2_REGION}}},
         {{"node1", CHINA}, {"node2", INDIA}},
         {0, 0},
         KS_SKIP,
         true,
         1},
        {"Do not ignore preferred terms of existing pods",
         {"", S2, NULL, {{0}}},
         {{"", S1, "node1", {STAY_S1_AWAY_S2}}, {"", S2, "node2", {STAY_S2_REGION}}},
         {{"node1", CHINA}, {"node2", INDIA}},
         {0, 100},
         KS_SUCCESS,
         false,
         1},
        {"No nodes to score", {"", S2, NULL, {{0}}}, {{0}}, {{0}}, {0}, KS_SKIP, false, 1},
    };
    for (size_t i = 0; i < N(cases); i++)
        run_score_case(&cases[i]);
}

/* TestPreferredAffinityWithHardPodAffinitySymmetricWeight */
Test(interpodaffinity, preferred_affinity_with_hard_pod_affinity_weight)
{
#define HARD_POD_AFFINITY RA("service in (S1)", "region", .ns = ",subteam2.team2", .nssel = "team in (team1)")
#define TWO_PODS                                                                                             \
    {                                                                                                        \
        {"", NULL, "node1", {HARD_POD_AFFINITY}},                                                            \
        {                                                                                                    \
            "", NULL, "node2",                                                                               \
            {                                                                                                \
                HARD_POD_AFFINITY                                                                            \
            }                                                                                                \
        }                                                                                                    \
    }
#define THREE_NODES                                                                                          \
    {                                                                                                        \
        {"node1", CHINA}, {"node2", INDIA},                                                                  \
        {                                                                                                    \
            "node3", AZ1                                                                                     \
        }                                                                                                    \
    }
    static const struct score_case cases[] = {
        {"with default weight",
         {"", "service=S1", NULL, {{0}}},
         TWO_PODS,
         THREE_NODES,
         {100, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"with zero weight", {"", "service=S1", NULL, {{0}}}, TWO_PODS, THREE_NODES, {0}, KS_SKIP, false, 0},
        {"with no matching namespace",
         {"subteam1.team2", "service=S1", NULL, {{0}}},
         TWO_PODS,
         THREE_NODES,
         {0},
         KS_SKIP,
         false,
         1},
        {"with matching NamespaceSelector",
         {"subteam1.team1", "service=S1", NULL, {{0}}},
         TWO_PODS,
         THREE_NODES,
         {100, 100, 0},
         KS_SUCCESS,
         false,
         1},
        {"with matching Namespaces",
         {"subteam2.team2", "service=S1", NULL, {{0}}},
         TWO_PODS,
         THREE_NODES,
         {100, 100, 0},
         KS_SUCCESS,
         false,
         1},
    };
#undef HARD_POD_AFFINITY
#undef TWO_PODS
#undef THREE_NODES
    for (size_t i = 0; i < N(cases); i++)
        run_score_case(&cases[i]);
}

/* NormalizeScore: float64 min-max scaling, truncated; negative raw scores included. */
Test(interpodaffinity, normalize_score_arithmetic)
{
    static const struct tpod pod = {"", S1, NULL, {STAY_S1_REGION}};
    static const struct tpod pods[] = {{"", S1, "node1", {{0}}}, {0}};
    static const struct tnode nodes[] = {{"node1", CHINA}, {0}};
    struct env e;
    struct ks_status st = {0};
    env_up(&e, &pod, pods, nodes, NULL, 1, false);
    cr_assert(eq(int, ipa->pre_score(e.self, &e.cs, e.pod, e.nodes, e.nnodes, &st), KS_SUCCESS));
    int64_t scores[] = {-7, 3, 0, -10, 11};
    cr_assert(eq(int, ipa->normalize_score(e.self, &e.cs, e.pod, NULL, scores, 5, &st), KS_SUCCESS));
    /* 100 * (s - min) / (max - min) in float64: 3/21, 13/21, 10/21, 0, 1 */
    int64_t want[] = {14, 61, 47, 0, 100};
    for (int i = 0; i < 5; i++)
        cr_expect(eq(i64, scores[i], want[i]), "score %d", i);
    int64_t same[] = {4, 4};
    cr_assert(eq(int, ipa->normalize_score(e.self, &e.cs, e.pod, NULL, same, 2, &st), KS_SUCCESS));
    cr_expect(eq(i64, same[0], 0));
    cr_expect(eq(i64, same[1], 0));
    env_down(&e);
}

/* ---- label keys, nodes without the topology label --------------------------------------------------- */

/* matchLabelKeys / mismatchLabelKeys are merged into the selector with the owner's values. */
Test(interpodaffinity, match_and_mismatch_label_keys)
{
    static const struct tnode nodes[] = {
        {"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}, {"nodeC", "zone=z3"}, {0}};
    static const struct tpod pods[] = {
        {"", "app=web,version=v1,tenant=a", "nodeA", {{0}}},
        {"", "app=web,version=v2,tenant=b", "nodeB", {{0}}},
        {"", "app=db,version=v1,tenant=a", "nodeC", {{0}}},
        {0},
    };
    static const struct {
        const char *name;
        struct tpod pod;
        struct want_status want[3];
    } cases[] = {
        {"matchLabelKeys: only pods of the same version repel",
         {"", "app=web,version=v1", NULL, {RN("app in (web)", "zone", .match_keys = "version")}},
         {UN(ANTI), FITS, FITS}},
        {"a key the owner lacks adds nothing",
         {"", "app=web", NULL, {RN("app in (web)", "zone", .match_keys = "version")}},
         {UN(ANTI), UN(ANTI), FITS}},
        {"mismatchLabelKeys: pods of another tenant repel",
         {"", "tenant=a", NULL, {RN("app", "zone", .mismatch_keys = "tenant")}},
         {FITS, UN(ANTI), FITS}},
        {"a nil selector gets no keys and matches nothing",
         {"", "version=v1", NULL, {RN(NULL, "zone", .match_keys = "version")}},
         {FITS, FITS, FITS}},
        {"affinity with matchLabelKeys",
         {"", "version=v2", NULL, {RA("app in (web)", "zone", .match_keys = "version")}},
         {UU(AFF), FITS, UU(AFF)}},
    };
    for (size_t i = 0; i < N(cases); i++) {
        struct filter_case c = {.name = cases[i].name, .pod = cases[i].pod, .pre_code = KS_SUCCESS};
        memcpy(c.pods, pods, sizeof(pods));
        memcpy(c.nodes, nodes, sizeof(nodes));
        memcpy(c.want, cases[i].want, sizeof(cases[i].want));
        run_filter_case(&c, NULL);
    }
}

/* An existing pod's term matches the incoming pod through the labels of its Namespace object. */
Test(interpodaffinity, existing_anti_affinity_namespace_selector)
{
    static const struct tnode nodes[] = {{"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}, {0}};
    static const struct filter_case cases[] = {
        {"the incoming pod's namespace is selected",
         {"subteam1.team1", "app=web", NULL, {{0}}},
         {{"other", NULL, "nodeA", {RN("app", "zone", .nssel = "team in (team1)")}}},
         {{"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}},
         KS_SUCCESS,
         {UN(EXIST), FITS}},
        {"not selected",
         {"subteam1.team2", "app=web", NULL, {{0}}},
         {{"other", NULL, "nodeA", {RN("app", "zone", .nssel = "team in (team1)")}}},
         {{"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}},
         KS_SKIP,
         {FITS, FITS}},
        {"a namespace without an object has no labels: NotIn matches",
         {"nowhere", "app=web", NULL, {{0}}},
         {{"other", NULL, "nodeA", {RN("app", "zone", .nssel = "team notin (team1)")}}},
         {{"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}},
         KS_SUCCESS,
         {UN(EXIST), FITS}},
        {"an empty namespaceSelector selects every namespace",
         {"nowhere", "app=web", NULL, {{0}}},
         {{"other", NULL, "nodeB", {RN("app", "zone", .nssel = "")}}},
         {{"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}},
         KS_SUCCESS,
         {FITS, UN(EXIST)}},
    };
    (void)nodes;
    for (size_t i = 0; i < N(cases); i++)
        run_filter_case(&cases[i], team_namespaces);
}

/* The incoming pod's namespaceSelector selects only namespaces that exist as objects. */
Test(interpodaffinity, incoming_namespace_selector_needs_namespace_objects)
{
    static const struct filter_case c = {
        "NotIn over a namespace that has no object",
        {"subteam1.team1", NULL, NULL, {RN("app", "zone", .nssel = "team notin (team2)")}},
        {{"nowhere", "app=web", "nodeA", {{0}}}, {"subteam2.team1", "app=web", "nodeB", {{0}}}},
        {{"nodeA", "zone=z1"}, {"nodeB", "zone=z2"}},
        KS_SUCCESS,
        {FITS, UN(ANTI)},
    };
    run_filter_case(&c, team_namespaces);
}

/* ---- the topology-pair map ---------------------------------------------------------------------------- */

Test(interpodaffinity, topology_pair_map)
{
    struct ks_arena a = KS_ARENA_INIT;
    struct ks_tp_map m = {0};
    uint32_t zone = ks_intern("zone"), host = ks_intern("host");

    cr_expect(eq(i64, ks_tp_map_get(&m, zone, 1), 0), "an empty map finds nothing");
    for (uint32_t v = 1; v <= 1000; v++)
        cr_assert(eq(int, ks_tp_map_add(&m, &a, host, v, (int64_t)v), 0));
    cr_assert(eq(int, ks_tp_map_add(&m, &a, zone, 7, 2), 0));
    cr_expect(eq(u32, m.nonzero, 1001));
    cr_expect(eq(u32, m.nkeys, 2));
    cr_expect(le(u32, m.used * 2, m.mask + 1), "at most half full");
    for (uint32_t v = 1; v <= 1000; v++)
        cr_expect(eq(i64, ks_tp_map_get(&m, host, v), (int64_t)v));
    cr_expect(eq(i64, ks_tp_map_get(&m, host, 1001), 0));
    cr_expect(eq(i64, ks_tp_map_get(&m, zone, 7), 2));

    /* back to zero: the pair stops counting but its key stays listed */
    cr_assert(eq(int, ks_tp_map_add(&m, &a, zone, 7, -2), 0));
    cr_expect(eq(u32, m.nonzero, 1000));
    cr_expect(eq(i64, ks_tp_map_get(&m, zone, 7), 0));
    cr_expect(eq(u32, m.nkeys, 2));
    /* a zero delta inserts the pair and its key, as upstream's scoreMap creates the key */
    cr_assert(eq(int, ks_tp_map_add(&m, &a, ks_intern("region"), 1, 0), 0));
    cr_expect(eq(u32, m.nkeys, 3));
    cr_expect(eq(u32, m.nonzero, 1000));

    struct ks_tp_map c;
    cr_assert(eq(int, ks_tp_map_clone(&c, &m, &a), 0));
    cr_assert(eq(int, ks_tp_map_add(&c, &a, host, 5, 1), 0));
    cr_expect(eq(i64, ks_tp_map_get(&c, host, 5), 6));
    cr_expect(eq(i64, ks_tp_map_get(&m, host, 5), 5), "the clone has storage of its own");
    ks_arena_destroy(&a);
}

Test(interpodaffinity, namespace_index)
{
    struct ks_objects objs = {0};
    struct ks_namespace a = {0}, b = {0};
    a.meta.name = "zeta";
    a.meta.labels = ks_fake_labels(&a.arena, "team=z");
    b.meta.name = "alpha";
    b.meta.labels = ks_fake_labels(&b.arena, "team=a");
    void *items[] = {&a, &b};
    objs.of[KS_KIND_NAMESPACE] = (struct ks_objvec){2, 2, items};

    struct ks_ns_index idx;
    cr_assert(eq(int, ks_ns_index_build(&idx, &objs), 0));
    cr_expect(eq(ptr, (void *)ks_ns_index_find(&idx, ks_intern("zeta")), &a.meta.labels));
    cr_expect(eq(ptr, (void *)ks_ns_index_find(&idx, ks_intern("alpha")), &b.meta.labels));
    cr_expect(eq(ptr, (void *)ks_ns_index_find(&idx, ks_intern("beta")), NULL));
    ks_ns_index_destroy(&idx);
    cr_assert(eq(int, ks_ns_index_build(&idx, NULL), 0));
    cr_expect(eq(ptr, (void *)ks_ns_index_find(&idx, ks_intern("zeta")), NULL));
    ks_ns_index_destroy(&idx);
    ks_arena_destroy(&a.arena);
    ks_arena_destroy(&b.arena);
}

/* ---- args --------------------------------------------------------------------------------------------- */

/* Parse @yaml as the args block with @api_version; returns the code, *out on success. */
static int parse_args(const char *yaml, const char *api_version, void **out, struct ks_error *err)
{
    struct ks_yaml_stream *s = NULL;
    *out = NULL;
    cr_assert(eq(int, ks_yaml_parse("args.yaml", yaml, strlen(yaml), &s, err), 0), "%s", err->msg);
    int rc = ipa->args_parse(s->ndocs ? s->docs[0] : NULL, api_version, "args.yaml", out, err);
    ks_yaml_stream_destroy(s);
    return rc;
}

Test(interpodaffinity, args_defaults)
{
    static const char *const versions[] = {"kubescheduler.config.k8s.io/v1",
                                           "kubescheduler.config.k8s.io/v1beta3",
                                           "kubescheduler.config.k8s.io/v1beta2"};
    for (size_t i = 0; i < N(versions); i++) {
        void *out = NULL;
        struct ks_error err = {0};
        cr_assert(eq(int, ipa->args_parse(NULL, versions[i], NULL, &out, &err), 0), "%s", err.msg);
        const struct ks_interpodaffinity_args *a = out;
        cr_expect(eq(i32, a->hard_pod_affinity_weight, 1), "%s", versions[i]);
        cr_expect(eq(int, a->ignore_preferred_terms_of_existing_pods, false), "%s", versions[i]);
        ipa->args_destroy(out);
    }
    void *out = NULL;
    struct ks_error err = {0};
    cr_assert(eq(int,
                 parse_args("hardPodAffinityWeight: 0\nignorePreferredTermsOfExistingPods: true\n",
                            "kubescheduler.config.k8s.io/v1", &out, &err),
                 0),
              "%s", err.msg);
    const struct ks_interpodaffinity_args *a = out;
    cr_expect(eq(i32, a->hard_pod_affinity_weight, 0));
    cr_expect(a->ignore_preferred_terms_of_existing_pods);
    ipa->args_destroy(out);
}

/* ValidateInterPodAffinityArgs and the fields each version knows. */
Test(interpodaffinity, args_validation)
{
    static const struct {
        const char *yaml, *version, *field, *msg;
    } cases[] = {
        {"hardPodAffinityWeight: -1\n", "kubescheduler.config.k8s.io/v1", "hardPodAffinityWeight",
         "Invalid value: -1: not in valid range [0, 100]"},
        {"hardPodAffinityWeight: 101\n", "kubescheduler.config.k8s.io/v1", "hardPodAffinityWeight",
         "Invalid value: 101: not in valid range [0, 100]"},
        {"ignorePreferredTermsOfExistingPods: true\n", "kubescheduler.config.k8s.io/v1beta2",
         "ignorePreferredTermsOfExistingPods", "unknown field \"ignorePreferredTermsOfExistingPods\""},
        {"hardPodAffinityWeights: 1\n", "kubescheduler.config.k8s.io/v1", "hardPodAffinityWeights",
         "unknown field \"hardPodAffinityWeights\""},
    };
    for (size_t i = 0; i < N(cases); i++) {
        void *out = NULL;
        struct ks_error err = {0};
        cr_expect(eq(int, parse_args(cases[i].yaml, cases[i].version, &out, &err), -EINVAL), "%s",
                  cases[i].yaml);
        cr_expect(out == NULL);
        cr_expect(strstr(err.field, cases[i].field) != NULL, "%s: field %s", cases[i].yaml, err.field);
        cr_expect(strstr(err.msg, cases[i].msg) != NULL, "%s: %s", cases[i].yaml, err.msg);
    }
}

/* ---- the memo -------------------------------------------------------------------------------------------
 */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static struct ks_node *memo_node(uint32_t i, uint32_t zone)
{
    char name[16], labels[64];
    snprintf(name, sizeof(name), "n%u", i);
    snprintf(labels, sizeof(labels), "zone=z%u,hostname=n%u", zone, i);
    struct ks_node *n = ks_fake_node(name, labels);
    ks_fake_node_allocatable(n, "cpu=64,memory=64Gi,pods=110");
    return n;
}

/* Two maps hold the same counts, zero entries aside (both directions). */
static void expect_equal_maps(const struct ks_tp_map *a, const struct ks_tp_map *b, const char *what,
                              int round)
{
    char name[32];
    snprintf(name, sizeof(name), "round %d", round);
    expect_same_counts(a, b, what, name);
    expect_same_counts(b, a, what, name);
}

/*
 * Counts kept across cycles equal counts computed from scratch while pods come and go,
 * node labels change, nodes leave and come back, and the query changes.
 */
Test(interpodaffinity, memo_follows_cluster_changes)
{
    enum { NODES = 12, ROUNDS = 300, MAXPODS = 64 };
    static const struct tpod shapes[] = {
        {"", "app=a", "x", {{0}}},
        {"", "app=b,tier=db", "x", {{0}}},
        {"", "app=a,tier=db", "x", {RN("app in (a)", "zone")}},
        {"", "tier=db", "x", {RN("tier", "hostname"), RA("app", "zone")}},
        {"other", "app=a", "x", {RN("app", "zone", .nssel = "")}},
        {"", "app=b", "x", {PA(3, "app in (a)", "zone"), RN("app in (b)", "hostname")}},
        {"", "tier=web", "x", {PN(2, "tier", "hostname")}},
    };
    static const struct tpod queries[] = {
        {"", "app=a", NULL, {RN("app in (a)", "zone"), RA("tier in (db)", "hostname")}},
        {"", "app=b", NULL, {RN("app", "hostname")}},
        {"", "tier=db", NULL, {RA("app in (a)", "zone")}},
        {"", "app=a", NULL, {PA(4, "tier in (db)", "zone"), PN(3, "app in (a)", "hostname")}},
        {"", "app=b", NULL, {RN("app", "zone"), PA(5, "app", "hostname")}},
    };
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_error err = {0};
    struct ks_pod *live[MAXPODS] = {0};
    bool node_up[NODES];
    uint32_t npods = 0, seq = 0;

    cr_assert(eq(int, ks_cache_create(&cache), 0));
    for (uint32_t i = 0; i < NODES; i++) {
        cr_assert(eq(int, ks_cache_add_node(cache, memo_node(i, i % 3)), 0));
        node_up[i] = true;
    }
    cr_assert(eq(int, ks_config_load_default(&cfg), 0));
    struct ks_framework_deps deps = {.cache = cache};
    cr_assert(eq(int, ks_framework_create(&cfg->profiles[0], &deps, &fw, &err), 0), "%s", err.msg);
    struct ks_interpodaffinity_args args = {.hard_pod_affinity_weight = 1, .version = KS_CONFIG_V1};
    struct ks_plugin_init in = {.args = &args, .slot = 0, .framework = fw};
    void *kept = NULL;
    cr_assert(eq(int, ipa->init(&in, &kept, &err), 0));
    ((struct inter_pod_affinity *)kept)->score_memo_min_nodes = 0; /* PreScore through its memo */
    struct ks_pod *query[N(queries)];
    for (size_t q = 0; q < N(queries); q++)
        query[q] = build_pod(&queries[q], "query");

    for (int round = 0; round < ROUNDS; round++) {
        uint64_t r = rng_next(&rng);
        uint32_t op = r % 10, node = (uint32_t)(r >> 8) % NODES;
        char node_name[16];
        snprintf(node_name, sizeof(node_name), "n%u", node);
        if (op < 5 && npods < MAXPODS) {
            char name[16];
            snprintf(name, sizeof(name), "m%u", seq++);
            struct tpod shape = shapes[(r >> 16) % N(shapes)];
            shape.node = node_name;
            struct ks_pod *p = build_pod(&shape, name);
            live[npods++] = ks_pod_get(p); /* the test's reference; the cache takes the other */
            cr_assert(eq(int, ks_cache_add_pod(cache, p, p->node_name), 0));
        } else if (op < 7 && npods) {
            uint32_t k = (uint32_t)(r >> 24) % npods;
            cr_assert(eq(int, ks_cache_remove_pod(cache, live[k]), 0));
            ks_pod_put(live[k]);
            live[k] = live[--npods];
        } else if (op < 9) {
            if (node_up[node])
                cr_assert(eq(int, ks_cache_update_node(cache, memo_node(node, (uint32_t)(r >> 32) % 3)), 0));
        } else if (node_up[node]) {
            cr_assert(eq(int, ks_cache_remove_node(cache, ks_intern(node_name)), 0));
            node_up[node] = false;
        } else {
            cr_assert(eq(int, ks_cache_add_node(cache, memo_node(node, node % 3)), 0));
            node_up[node] = true;
        }
        cr_assert(ge(int, ks_cache_refresh(cache), 0));

        /* the same query for runs of rounds, now and then another for one round */
        const struct ks_pod *pod =
            query[(round % 11 == 10) ? (r >> 40) % N(queries) : (round / 25) % N(queries)];
        void *fresh = NULL;
        cr_assert(eq(int, ipa->init(&in, &fresh, &err), 0));
        struct ks_cycle_state a, b;
        struct ks_pre_filter_result res = {.all = true};
        struct ks_status st = {0};
        ks_cycle_state_init(&a);
        ks_cycle_state_init(&b);

        ks_rcu_read_lock();
        int pa = ipa->pre_filter(kept, &a, pod, &res, &st);
        int pb = ipa->pre_filter(fresh, &b, pod, &res, &st);
        cr_assert(eq(int, pa, pb), "round %d: PreFilter", round);
        if (pa == KS_SUCCESS) {
            const struct ipa_filter_state *fa = ((const struct ipa_state *)a.slot[0])->filter;
            const struct ipa_filter_state *fb = ((const struct ipa_state *)b.slot[0])->filter;
            expect_equal_maps(&fa->counts[MAP_EXISTING_ANTI], &fb->counts[MAP_EXISTING_ANTI], "existing",
                              round);
            expect_equal_maps(&fa->counts[MAP_AFFINITY], &fb->counts[MAP_AFFINITY], "affinity", round);
            expect_equal_maps(&fa->counts[MAP_ANTI], &fb->counts[MAP_ANTI], "anti", round);
            const struct ks_snapshot *s = ks_cache_snapshot(cache);
            for (uint32_t i = 0; i < s->nnodes; i++) {
                struct ks_status sa = {0}, sb = {0};
                int ca = ipa->filter(kept, &a, pod, ks_snapshot_node(s, i), &sa);
                int cb = ipa->filter(fresh, &b, pod, ks_snapshot_node(s, i), &sb);
                cr_expect(eq(int, ca, cb), "round %d node %u", round, i);
            }
        }

        /* PreScore after this PreFilter (the memo knows which nodes weigh) and without it */
        struct ks_cycle_state c;
        void *plain = NULL;
        ks_cycle_state_init(&c);
        cr_assert(eq(int, ipa->init(&in, &plain, &err), 0));
        ((struct inter_pod_affinity *)plain)->score_memo_min_nodes = UINT32_MAX; /* counting directly */
        int sa = ipa->pre_score(kept, &a, pod, NULL, 0, &st);
        int sc = ipa->pre_score(plain, &c, pod, NULL, 0, &st);
        cr_expect(eq(int, sa, sc), "round %d: PreScore", round);
        if (sa == KS_SUCCESS && sc == KS_SUCCESS) {
            const struct ipa_score_state *xa = ((const struct ipa_state *)a.slot[0])->score;
            const struct ipa_score_state *xc = ((const struct ipa_state *)c.slot[0])->score;
            expect_equal_maps(&xa->scores, &xc->scores, "scores", round);
            const struct ks_snapshot *s = ks_cache_snapshot(cache);
            for (uint32_t i = 0; i < s->nnodes; i++) {
                int64_t va = -1, vc = -2;
                cr_expect(eq(int, ipa->score(kept, &a, pod, ks_snapshot_node(s, i), &va, &st), KS_SUCCESS));
                cr_expect(eq(int, ipa->score(plain, &c, pod, ks_snapshot_node(s, i), &vc, &st), KS_SUCCESS));
                cr_expect(eq(i64, va, vc), "round %d node %u: Score", round, i);
            }
        }
        ks_rcu_read_unlock();

        ks_cycle_state_destroy(&a);
        ks_cycle_state_destroy(&b);
        ks_cycle_state_destroy(&c);
        ipa->destroy(fresh);
        ipa->destroy(plain);
    }

    ipa->destroy(kept); /* drops the memo's reference to its query pod */
    for (size_t q = 0; q < N(queries); q++)
        ks_pod_put(query[q]);
    for (uint32_t k = 0; k < npods; k++)
        ks_pod_put(live[k]);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
    ks_cache_destroy(cache);
}

/* PreFilter's affinity counts for @pod must be exactly @want (nonzero pairs). */
static void expect_memo_affinity(void *self, const struct ks_pod *pod, const struct tcount *want,
                                 const char *name)
{
    struct ks_cycle_state cs;
    struct ks_pre_filter_result res = {.all = true};
    struct ks_status st = {0};
    ks_cycle_state_init(&cs);
    ks_rcu_read_lock();
    cr_assert(eq(int, ipa->pre_filter(self, &cs, pod, &res, &st), KS_SUCCESS), "%s", name);
    const struct ipa_filter_state *f = ((const struct ipa_state *)cs.slot[0])->filter;
    expect_counts(&f->counts[MAP_AFFINITY], want, "affinity", name);
    ks_rcu_read_unlock();
    ks_cycle_state_destroy(&cs);
}

/*
 * 700 nodes (three snapshot chunks): the PreFilter memo walks only the chunk an assume,
 * forget or node update replaced, and its counts follow each change (none stale).
 */
Test(interpodaffinity, memo_counts_follow_changes_in_one_chunk_of_many)
{
    static const struct tpod query = {"", "app=a", NULL, {RA("app in (a)", "zone")}};
    static const struct tpod matching = {"", "app=a", NULL, {{0}}};
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_error err = {0};

    cr_assert(eq(int, ks_cache_create(&cache), 0));
    for (uint32_t i = 0; i < 700; i++)
        cr_assert(eq(int, ks_cache_add_node(cache, memo_node(i, i % 3)), 0));
    struct tpod bound_shape = matching;
    bound_shape.node = "n5";
    struct ks_pod *bound = build_pod(&bound_shape, "bound");
    cr_assert(eq(int, ks_cache_add_pod(cache, bound, bound->node_name), 0));
    cr_assert(ge(int, ks_cache_refresh(cache), 0));
    cr_assert(eq(int, ks_config_load_default(&cfg), 0));
    struct ks_framework_deps deps = {.cache = cache};
    cr_assert(eq(int, ks_framework_create(&cfg->profiles[0], &deps, &fw, &err), 0), "%s", err.msg);
    struct ks_interpodaffinity_args args = {.hard_pod_affinity_weight = 1, .version = KS_CONFIG_V1};
    struct ks_plugin_init in = {.args = &args, .slot = 0, .framework = fw};
    void *self = NULL;
    cr_assert(eq(int, ipa->init(&in, &self, &err), 0));
    struct ks_pod *pod = build_pod(&query, "query");

    expect_memo_affinity(self, pod, (struct tcount[]){{"zone", "z2", 1}, {0}}, "initial");

    /* assume a matching pod on n600 (zone z0, the third chunk) */
    struct ks_pod *assumed = build_pod(&matching, "assumed");
    cr_assert(eq(int, ks_cache_assume_pod(cache, assumed, ks_intern("n600")), 0));
    cr_assert(eq(int, ks_cache_refresh(cache), 1));
    expect_memo_affinity(self, pod, (struct tcount[]){{"zone", "z2", 1}, {"zone", "z0", 1}, {0}}, "assume");

    cr_assert(eq(int, ks_cache_forget_pod(cache, assumed), 0));
    cr_assert(eq(int, ks_cache_refresh(cache), 1));
    expect_memo_affinity(self, pod, (struct tcount[]){{"zone", "z2", 1}, {0}}, "forget");

    /* the bound pod's node moves to zone z1 */
    cr_assert(eq(int, ks_cache_update_node(cache, memo_node(5, 1)), 0));
    cr_assert(eq(int, ks_cache_refresh(cache), 1));
    expect_memo_affinity(self, pod, (struct tcount[]){{"zone", "z1", 1}, {0}}, "node update");

    /* the walk read one chunk's records per change, not every node's */
    const struct inter_pod_affinity *p = self;
    cr_expect(lt(u64, p->filter_memo.counts.nodes.rec_reads, 700 + 4 * KS_SNAP_CHUNK));

    ipa->destroy(self);
    ks_pod_put(assumed);
    ks_pod_put(pod);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
    ks_cache_destroy(cache);
}
