/*
 * test_pod_topology_spread.c - the PodTopologySpread plugin (plugins/pod_topology_spread.c)
 * and the counting helpers it shares (plugins/helpers/helper_spread.c, helper_spread_counter.c,
 * helper_spread_owners.c).
 *
 * Cases from upstream's podtopologyspread/filtering_test.go (TestPreFilterState,
 * TestPreFilterStateAddPod, TestPreFilterStateRemovePod, TestSingleConstraint,
 * TestMultipleConstraints), scoring_test.go (TestPreScoreStateEmptyNodes,
 * TestPodTopologySpreadScore) with their exact expectations; cases that only exercise a
 * disabled feature gate are left out (ksched runs with every gate of current upstream on).
 * The cluster is a real cache (so PreFilter and PreScore count over its snapshot, as the
 * plugin does in the scheduler) and the plugin instance is made inside a framework whose
 * deps carry that cache and the workload objects. Critical paths are compared as upstream
 * does: values with equal counts in alphabetical order.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>

#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/loader.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_helpers_spread.h"
#include "ksched/registry.h"
#include "ksched/yaml_tree.h"
#include "plugin_fixtures.h"

/* The case tables leave trailing fields of their rows out (zero: unset). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

TestSuite(podtopologyspread);

static const struct ks_plugin *const pts = &ks_plugin_pod_topology_spread;

#define MAXN 8  /* nodes per case */
#define MAXP 12 /* existing pods per case */
#define MAXC 4  /* constraints per pod */
#define MAXO 4  /* workload objects per case */

enum { DNS = KS_DO_NOT_SCHEDULE, SA = KS_SCHEDULE_ANYWAY };
enum { UNSET = KS_POLICY_UNSET, HONOR = KS_POLICY_HONOR, IGNORE = KS_POLICY_IGNORE };

/* One spread constraint: selector in selector syntax (NULL: nil, "": empty). */
struct tcons {
    int32_t skew;
    const char *key;
    int when;
    const char *sel;
    int32_t min_domains;
    int affinity, taints;
    const char *match_label_keys; /* comma separated, NULL for none */
};

struct tnode {
    const char *name, *labels, *taints;
};

struct tpod {
    const char *name, *node, *labels, *ns;
    bool terminating;
};

/* The pod being scheduled. */
struct tincoming {
    const char *labels;
    const char *ns;
    const char *node_selector; /* label syntax */
    const char *affinity;      /* one required node selector term, selector syntax */
    const char *tolerate;      /* a toleration {key, Exists} */
    const char *owner;         /* "Kind/name" of its controller (apiVersion from the kind) */
    struct tcons c[MAXC];
};

/* Workload objects: kind "Service", "ReplicationController", "ReplicaSet", "StatefulSet". */
struct tobj {
    const char *kind, *name, *selector, *ns;
};

#define ZN(z, n)            "zone=" z ",node=" n
#define FOO                 "foo"
#define BAR                 "bar"
#define UNSCHEDULABLE_TAINT "node.kubernetes.io/unschedulable:NoSchedule"

/* ---- environment ---------------------------------------------------------------------------- */

struct env {
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_objects objs;
    void *self;
};

static struct ks_pod *mk_pod(const char *ns, const char *name, const char *labels)
{
    struct ks_pod *p = ks_fake_pod(ns ? ns : "default", name);
    ks_fake_pod_labels(p, labels);
    fx_done(p);
    p->refs = 1;
    return p;
}

static void add_object(struct ks_objects *o, const struct tobj *t)
{
    enum ks_kind kind;
    void *obj;
    struct ks_object_meta *meta;
    if (strcmp(t->kind, "Service") == 0) {
        struct ks_service *s = fx_must(calloc(1, sizeof(*s)));
        s->has_selector = t->selector != NULL;
        s->selector = ks_fake_labels(&s->arena, t->selector);
        kind = KS_KIND_SERVICE, obj = s, meta = &s->meta;
    } else if (strcmp(t->kind, "ReplicationController") == 0) {
        struct ks_replication_controller *s = fx_must(calloc(1, sizeof(*s)));
        s->selector = ks_fake_labels(&s->arena, t->selector);
        kind = KS_KIND_REPLICATION_CONTROLLER, obj = s, meta = &s->meta;
    } else if (strcmp(t->kind, "ReplicaSet") == 0) {
        struct ks_replica_set *s = fx_must(calloc(1, sizeof(*s)));
        s->selector = ks_fake_selector(&s->arena, t->selector);
        kind = KS_KIND_REPLICA_SET, obj = s, meta = &s->meta;
    } else {
        struct ks_stateful_set *s = fx_must(calloc(1, sizeof(*s)));
        s->selector = ks_fake_selector(&s->arena, t->selector);
        kind = KS_KIND_STATEFUL_SET, obj = s, meta = &s->meta;
    }
    meta->name = t->name;
    meta->namespace_id = ks_intern(t->ns ? t->ns : "default");
    struct ks_objvec *v = &o->of[kind];
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 4;
        v->items = fx_must(realloc(v->items, v->cap * sizeof(*v->items)));
    }
    v->items[v->n++] = obj;
}

static void free_objects(struct ks_objects *o)
{
    for (uint32_t i = 0; i < o->of[KS_KIND_SERVICE].n; i++)
        ks_service_destroy(o->of[KS_KIND_SERVICE].items[i]);
    for (uint32_t i = 0; i < o->of[KS_KIND_REPLICATION_CONTROLLER].n; i++)
        ks_replication_controller_destroy(o->of[KS_KIND_REPLICATION_CONTROLLER].items[i]);
    for (uint32_t i = 0; i < o->of[KS_KIND_REPLICA_SET].n; i++)
        ks_replica_set_destroy(o->of[KS_KIND_REPLICA_SET].items[i]);
    for (uint32_t i = 0; i < o->of[KS_KIND_STATEFUL_SET].n; i++)
        ks_stateful_set_destroy(o->of[KS_KIND_STATEFUL_SET].items[i]);
    for (int k = 0; k < KS_KIND_COUNT; k++)
        free(o->of[k].items);
}

/* A cluster in a real cache, and the plugin with @args (NULL: System defaulting). */
static void env_init(struct env *e, const struct tnode *nodes, const struct tpod *pods,
                     const struct tobj *objs, const struct ks_podtopologyspread_args *args)
{
    struct ks_error err = {0};
    memset(e, 0, sizeof(*e));
    ks_rcu_register_thread();
    cr_assert(eq(int, ks_cache_create(&e->cache), 0));
    for (int i = 0; i < MAXN && nodes[i].name; i++) {
        struct ks_node *n = ks_fake_node(nodes[i].name, nodes[i].labels);
        if (nodes[i].taints)
            ks_fake_node_taints(n, nodes[i].taints);
        cr_assert(eq(int, ks_cache_add_node(e->cache, n), 0));
    }
    for (int i = 0; pods && i < MAXP && pods[i].name; i++) {
        struct ks_pod *p = mk_pod(pods[i].ns, pods[i].name, pods[i].labels);
        if (pods[i].terminating)
            p->meta.deletion_time = 1;
        p->node_name = ks_intern(pods[i].node);
        cr_assert(eq(int, ks_cache_add_pod(e->cache, p, p->node_name), 0));
    }
    cr_assert(ge(int, ks_cache_refresh(e->cache), 0));
    for (int i = 0; objs && i < MAXO && objs[i].kind; i++)
        add_object(&e->objs, &objs[i]);
    cr_assert(eq(int, ks_config_load_default(&e->cfg), 0));
    struct ks_framework_deps deps = {.cache = e->cache, .objects = &e->objs};
    cr_assert(eq(int, ks_framework_create(&e->cfg->profiles[0], &deps, &e->fw, &err), 0), "%s", err.msg);
    struct ks_plugin_init in = {.args = args, .slot = 0, .framework = e->fw};
    cr_assert(eq(int, pts->init(&in, &e->self, &err), 0));
}

static void env_free(struct env *e)
{
    pts->destroy(e->self);
    ks_framework_destroy(e->fw);
    ks_config_destroy(e->cfg);
    ks_cache_destroy(e->cache);
    free_objects(&e->objs);
    ks_rcu_unregister_thread();
}

static struct ks_pod *incoming(const struct tincoming *t)
{
    struct ks_pod *p = ks_fake_pod(t->ns ? t->ns : "default", "p");
    ks_fake_pod_labels(p, t->labels);
    if (t->node_selector)
        p->node_selector = ks_fake_labels(&p->arena, t->node_selector);
    if (t->affinity) {
        p->affinity.node_affinity =
            fx_must(ks_arena_calloc(&p->arena, 1, sizeof(*p->affinity.node_affinity)));
        p->affinity.node_affinity->required = KS_FAKE_NODE_SELECTOR(&p->arena, {t->affinity, NULL});
    }
    if (t->tolerate)
        ks_fake_pod_toleration(p, ks_fake_toleration(t->tolerate, "Exists", "", ""));
    if (t->owner) {
        const char *slash = strchr(t->owner, '/');
        struct ks_owner_ref *o = fx_must(ks_arena_calloc(&p->arena, 1, sizeof(*o)));
        o->kind = ks_arena_strndup(&p->arena, t->owner, (size_t)(slash - t->owner));
        o->name = slash + 1;
        o->api_version = strcmp(o->kind, "ReplicationController") == 0 ? "v1" : "apps/v1";
        o->controller = true;
        p->meta.owners = o;
        p->meta.nowners = 1;
    }
    uint32_t n = 0;
    while (n < MAXC && t->c[n].key)
        n++;
    if (n) {
        p->spread = fx_must(ks_arena_calloc(&p->arena, n, sizeof(*p->spread)));
        p->nspread = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct tcons *c = &t->c[i];
        struct ks_spread_constraint *s = &p->spread[i];
        s->max_skew = c->skew;
        s->topology_key = ks_intern(c->key);
        s->when_unsatisfiable = (enum ks_unsatisfiable_action)c->when;
        s->selector = ks_fake_selector(&p->arena, c->sel);
        s->min_domains = c->min_domains;
        s->node_affinity_policy = (enum ks_inclusion_policy)c->affinity;
        s->node_taints_policy = (enum ks_inclusion_policy)c->taints;
        if (c->match_label_keys) {
            char buf[128];
            snprintf(buf, sizeof(buf), "%s", c->match_label_keys);
            s->match_label_keys = fx_must(ks_arena_calloc(&p->arena, MAXC, sizeof(uint32_t)));
            for (char *save = NULL, *k = strtok_r(buf, ",", &save); k && s->nmatch_label_keys < MAXC;
                 k = strtok_r(NULL, ",", &save))
                s->match_label_keys[s->nmatch_label_keys++] = ks_intern(k);
        }
    }
    fx_done(p);
    p->refs = 1;
    return p;
}

/* ---- state checks ---------------------------------------------------------------------------- */

/* @d holds exactly the "value=count,..." pairs of @want. */
static void expect_counts(const struct ks_spread_domains *d, const char *want, const char *what)
{
    char buf[256];
    uint32_t n = 0;
    snprintf(buf, sizeof(buf), "%s", want);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        cr_assert(eq != NULL);
        *eq = '\0';
        const struct ks_spread_domain *e = ks_spread_domains_find(d, ks_intern(tok));
        cr_expect(e != NULL, "%s: domain %s missing", what, tok);
        if (e)
            cr_expect(eq(i64, e->count, atoll(eq + 1)), "%s: domain %s", what, tok);
        n++;
    }
    cr_expect(eq(u32, d->n, n), "%s: number of domains", what);
}

/* Critical paths as "value=num,value=num" after upstream's test sort. */
static void expect_paths(const struct ks_spread_paths *p, const char *want, const char *what)
{
    char got[256];
    const char *v0 = ks_intern_str(p->value[0]), *v1 = ks_intern_str(p->value[1]);
    if (p->num[0] == p->num[1] && strcmp(v0, v1) > 0) {
        const char *t = v0;
        v0 = v1;
        v1 = t;
    }
    snprintf(got, sizeof(got), "%s=%lld,%s=%lld", v0, (long long)p->num[0], v1, (long long)p->num[1]);
    cr_expect(eq(str, got, (char *)want), "%s: critical paths", what);
}

/* Constraints and counts of the PreFilter state. */
struct twant {
    const char *counts[MAXC];
    const char *paths[MAXC];
};

static void expect_state(const struct ks_cycle_state *cs, const struct twant *w, const char *name)
{
    const struct ks_pts_cycle *c = cs->slot[0];
    cr_assert(c && c->filter, "%s: no PreFilter state", name);
    const struct ks_pts_filter_state *s = c->filter;
    uint32_t n = 0;
    while (n < MAXC && w->counts[n])
        n++;
    cr_assert(eq(u32, s->n, n), "%s: constraints", name);
    for (uint32_t i = 0; i < n; i++) {
        expect_counts(&s->counts[i], w->counts[i], name);
        expect_paths(&s->paths[i], w->paths[i], name);
    }
}

static int pre_filter(struct env *e, struct ks_cycle_state *cs, const struct ks_pod *pod)
{
    struct ks_pre_filter_result res = {.all = true};
    struct ks_status st = {0};
    ks_rcu_read_lock();
    int rc = pts->pre_filter(e->self, cs, pod, &res, &st);
    ks_rcu_read_unlock();
    return rc;
}

/* ---- PreFilter ------------------------------------------------------------------------------- */

struct prefilter_case {
    const char *name;
    struct tincoming pod;
    struct tnode nodes[MAXN];
    struct tpod existing[MAXP];
    struct tobj objs[MAXO];
    struct tcons defaults[MAXC]; /* List defaulting when set */
    int want_code;
    struct twant want;
};

#define NODES4                                                                                               \
    {"node-a", ZN("zone1", "node-a")}, {"node-b", ZN("zone1", "node-b")}, {"node-x", ZN("zone2", "node-x")}, \
    {                                                                                                        \
        "node-y", ZN("zone2", "node-y")                                                                      \
    }
#define P(name, node, labels)                                                                                \
    {                                                                                                        \
        name, node, labels, NULL, false                                                                      \
    }

static struct ks_podtopologyspread_args *list_args(const struct tcons *c, struct ks_podtopologyspread_args *a,
                                                   struct ks_spread_constraint *out)
{
    uint32_t n = 0;
    for (; n < MAXC && c[n].key; n++)
        out[n] = (struct ks_spread_constraint){.max_skew = c[n].skew,
                                               .topology_key = ks_intern(c[n].key),
                                               .when_unsatisfiable = (enum ks_unsatisfiable_action)c[n].when};
    *a = (struct ks_podtopologyspread_args){
        .nconstraints = n, .default_constraints = out, .defaulting = KS_SPREAD_DEFAULTING_LIST};
    return a;
}

static const struct prefilter_case prefilter_cases[] = {
    {"clean cluster with one spreadConstraint",
     {"foo=", .c = {{5, "zone", DNS, "foo=bar"}}},
     {NODES4},
     {{0}},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=0,zone2=0"}, {"zone1=0,zone2=0"}}},
    {"normal case with one spreadConstraint",
     {"foo=", .c = {{1, "zone", DNS, FOO}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=2"}, {"zone2=2,zone1=3"}}},
    {"normal case with null label selector",
     {"foo=", .c = {{1, "zone", DNS, NULL}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=0,zone2=0"}, {"zone1=0,zone2=0"}}},
    {"normal case with one spreadConstraint, on a 3-zone cluster",
     {"foo=", .c = {{1, "zone", DNS, FOO}}},
     {NODES4, {"node-o", ZN("zone3", "node-o")}, {"node-p", ZN("zone3", "node-p")}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=2,zone3=0"}, {"zone3=0,zone2=2"}}},
    {"namespace mismatch doesn't count",
     {"foo=", .c = {{1, "zone", DNS, FOO}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="),
      {"p-a2", "node-a", "foo=", "ns1"},
      P("p-b1", "node-b", "foo="),
      {"p-y1", "node-y", "foo=", "ns2"},
      P("p-y2", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=2,zone2=1"}, {"zone2=1,zone1=2"}}},
    {"normal case with two spreadConstraints",
     {"foo=", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, FOO}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo="), P("p-y3", "node-y", "foo="),
      P("p-y4", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=4", "node-a=2,node-b=1,node-x=0,node-y=4"}, {"zone1=3,zone2=4", "node-x=0,node-b=1"}}},
    {"soft spreadConstraints should be bypassed",
     {"foo=",
      .c = {{1, "zone", SA, FOO}, {1, "zone", DNS, FOO}, {1, "node", SA, FOO}, {1, "node", DNS, FOO}}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", ZN("zone1", "node-b")},
      {"node-y", ZN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo="), P("p-y3", "node-y", "foo="),
      P("p-y4", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=4", "node-a=2,node-b=1,node-y=4"}, {"zone1=3,zone2=4", "node-b=1,node-a=2"}}},
    {"different labelSelectors - simple version",
     {"foo=,bar=", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, BAR}}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", ZN("zone1", "node-b")},
      {"node-y", ZN("zone2", "node-y")}},
     {P("p-a", "node-a", "foo="), P("p-b", "node-b", "bar=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=1,zone2=0", "node-a=0,node-b=1,node-y=0"}, {"zone2=0,zone1=1", "node-a=0,node-y=0"}}},
    {"different labelSelectors - complex pods",
     {"foo=,bar=", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, BAR}}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", ZN("zone1", "node-b")},
      {"node-y", ZN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo=,bar="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=,bar="), P("p-y3", "node-y", "foo="),
      P("p-y4", "node-y", "foo=,bar=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=4", "node-a=1,node-b=0,node-y=2"}, {"zone1=3,zone2=4", "node-b=0,node-a=1"}}},
    {"two spreadConstraints, and with podAffinity",
     {"foo=", .affinity = "node notin (node-x)", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, FOO}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo="), P("p-y3", "node-y", "foo="),
      P("p-y4", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=4", "node-a=2,node-b=1,node-y=4"}, {"zone1=3,zone2=4", "node-b=1,node-a=2"}}},
    {"default constraints and a service",
     {"foo=bar,baz=kar"},
     {{0}},
     {{0}},
     {{"Service", "svc", "foo=bar"}},
     {{3, "node", DNS}, {2, "node", SA}, {5, "rack", DNS}},
     KS_SUCCESS,
     {{"", ""}, {"=2147483647,=2147483647", "=2147483647,=2147483647"}}},
    {"default constraints and a service that doesn't match",
     {"foo=bar"},
     {{0}},
     {{0}},
     {{"Service", "svc", "baz=kep"}},
     {{3, "node", DNS}},
     KS_SKIP},
    {"default constraints and a service, but pod has constraints",
     {"foo=bar,baz=tar", .c = {{1, "zone", DNS, "baz=tar"}, {2, "planet", SA, "fot=rok"}}},
     {{0}},
     {{0}},
     {{"Service", "svc", "foo=bar"}},
     {{2, "node", DNS}},
     KS_SUCCESS,
     {{""}, {"=2147483647,=2147483647"}}},
    {"default soft constraints and a service",
     {"foo=bar"},
     {{0}},
     {{0}},
     {{"Service", "svc", "foo=bar"}},
     {{2, "node", SA}},
     KS_SKIP},
    {"TpKeyToDomainsNum is calculated when MinDomains is enabled",
     {"foo=", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, FOO}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo="), P("p-y3", "node-y", "foo="),
      P("p-y4", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=4", "node-a=2,node-b=1,node-x=0,node-y=4"}, {"zone1=3,zone2=4", "node-x=0,node-b=1"}}},
    {"NodeAffinityPolicy honored with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {{1, "node", DNS, BAR}}},
     {{"node-a", "node=node-a,foo="}, {"node-b", "node=node-b,foo="}, {"node-c", "node=node-c,bar="}},
     {P("p-a", "node-a", "bar="), P("p-b", "node-b", "bar="), P("p-c", "node-b", "bar="),
      P("p-d", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2"}, {"node-a=1,node-b=2"}}},
    {"NodeAffinityPolicy ignored with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {{1, "node", DNS, BAR, 0, IGNORE}}},
     {{"node-a", "node=node-a,foo="}, {"node-b", "node=node-b,foo="}, {"node-c", "node=node-c,bar="}},
     {P("p-a", "node-a", "bar="), P("p-b", "node-b", "bar="), P("p-c", "node-b", "bar="),
      P("p-d", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2,node-c=0"}, {"node-c=0,node-a=1"}}},
    {"NodeAffinityPolicy honored with nodeAffinity",
     {"foo=", .affinity = "foo=", .c = {{1, "node", DNS, BAR}}},
     {{"node-a", "node=node-a,foo="}, {"node-b", "node=node-b,foo="}, {"node-c", "node=node-c,bar="}},
     {P("p-a", "node-a", "bar="), P("p-c", "node-b", "bar="), P("p-d", "node-b", "bar="),
      P("p-e", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2"}, {"node-a=1,node-b=2"}}},
    {"NodeAffinityPolicy ignored with nodeAffinity",
     {"foo=", .affinity = "foo=", .c = {{1, "node", DNS, BAR, 0, IGNORE}}},
     {{"node-a", "node=node-a,foo="}, {"node-b", "node=node-b,foo="}, {"node-c", "node=node-c,bar="}},
     {P("p-a", "node-a", "bar="), P("p-b", "node-b", "bar="), P("p-c", "node-b", "bar="),
      P("p-d", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2,node-c=0"}, {"node-c=0,node-a=1"}}},
    {"NodeTaintsPolicy ignored",
     {"foo=", .c = {{1, "node", DNS, BAR}}},
     {{"node-a", "node=node-a"},
      {"node-b", "node=node-b"},
      {"node-c", "node=node-c,bar=", UNSCHEDULABLE_TAINT}},
     {P("p-a", "node-a", "bar="), P("p-b", "node-b", "bar="), P("p-c", "node-b", "bar="),
      P("p-d", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2,node-c=0"}, {"node-c=0,node-a=1"}}},
    {"NodeTaintsPolicy honored",
     {"foo=", .c = {{1, "node", DNS, BAR, 0, UNSET, HONOR}}},
     {{"node-a", "node=node-a"},
      {"node-b", "node=node-b"},
      {"node-c", "node=node-c,bar=", UNSCHEDULABLE_TAINT}},
     {P("p-a", "node-a", "bar="), P("p-b", "node-b", "bar="), P("p-c", "node-b", "bar="),
      P("p-d", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2"}, {"node-a=1,node-b=2"}}},
    {"NodeTaintsPolicy honored with tolerated taints",
     {"foo=", .tolerate = "node.kubernetes.io/unschedulable", .c = {{1, "node", DNS, BAR, 0, UNSET, HONOR}}},
     {{"node-a", "node=node-a"},
      {"node-b", "node=node-b"},
      {"node-c", "node=node-c,bar=", UNSCHEDULABLE_TAINT}},
     {P("p-a", "node-a", "bar="), P("p-b", "node-b", "bar="), P("p-c", "node-b", "bar="),
      P("p-d", "node-c", "")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"node-a=1,node-b=2,node-c=0"}, {"node-c=0,node-a=1"}}},
    {"two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     {"foo=", .node_selector = "foo=", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, FOO, 0, IGNORE}}},
     {{"node-a", ZN("zone1", "node-a") ",foo="},
      {"node-b", ZN("zone1", "node-b")},
      {"node-x", ZN("zone2", "node-x") ",foo="}},
     {P("p-b1", "node-b", "foo="), P("p-b2", "node-b", "foo="), P("p-x1", "node-x", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=0,zone2=1", "node-a=0,node-b=2,node-x=1"}, {"zone1=0,zone2=1", "node-a=0,node-x=1"}}},
    {"two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     {"foo=", .c = {{1, "zone", DNS, FOO, 0, UNSET, HONOR}, {1, "node", DNS, FOO}}},
     {{"node-a", ZN("zone1", "node-a") ",foo="},
      {"node-b", ZN("zone1", "node-b"), UNSCHEDULABLE_TAINT},
      {"node-x", ZN("zone2", "node-x") ",foo="}},
     {P("p-b1", "node-b", "foo="), P("p-b2", "node-b", "foo="), P("p-x1", "node-x", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=0,zone2=1", "node-a=0,node-b=2,node-x=1"}, {"zone1=0,zone2=1", "node-a=0,node-x=1"}}},
    {"two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     {"foo=", .node_selector = "foo=", .c = {{1, "zone", DNS, FOO}, {1, "node", DNS, FOO}}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", ZN("zone1", "node-b") ",foo=", UNSCHEDULABLE_TAINT},
      {"node-x", ZN("zone2", "node-x") ",foo="},
      {"node-y", ZN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-x1", "node-x", "foo="),
      P("p-y1", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=0,zone2=1", "node-b=0,node-x=1"}, {"zone1=0,zone2=1", "node-b=0,node-x=1"}}},
    {"two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
     {"foo=", .node_selector = "foo=",
      .c = {{1, "zone", DNS, FOO, 0, IGNORE}, {1, "node", DNS, FOO, 0, UNSET, HONOR}}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", ZN("zone1", "node-b") ",foo=", UNSCHEDULABLE_TAINT},
      {"node-x", ZN("zone2", "node-x") ",foo="},
      {"node-y", ZN("zone2", "node-y") ",foo="}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-x1", "node-x", "foo="),
      P("p-x2", "node-x", "foo="), P("p-y1", "node-y", "foo=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=2,zone2=3", "node-x=2,node-y=1"}, {"zone1=2,zone2=3", "node-y=1,node-x=2"}}},
    {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     {"foo=,bar=a", .c = {{1, "zone", DNS, FOO, 0, UNSET, UNSET, "bar"}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo=,bar=a"), P("p-b1", "node-b", "foo="),
      P("p-y1", "node-y", "foo=,bar=a"), P("p-y2", "node-y", "bar=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=1,zone2=1"}, {"zone1=1,zone2=1"}}},
    {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     {"foo=a", .c = {{1, "zone", DNS, "", 0, UNSET, UNSET, "foo"}}},
     {NODES4},
     {P("p-a1", "node-a", "foo=a"), P("p-a2", "node-a", "foo=a"), P("p-b1", "node-b", "foo=a"),
      P("p-y1", "node-y", "foo=a"), P("p-y2", "node-y", "foo=a")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=2"}, {"zone2=2,zone1=3"}}},
    {"key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
     {"foo=", .c = {{1, "zone", DNS, NULL, 0, UNSET, UNSET, "bar"}}},
     {NODES4},
     {P("p-a1", "node-a", "foo=a"), P("p-a2", "node-a", "foo=a"), P("p-b1", "node-b", "foo=a"),
      P("p-y1", "node-y", "foo=a"), P("p-y2", "node-y", "foo=a")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=0,zone2=0"}, {"zone1=0,zone2=0"}}},
    {"key in matchLabelKeys is ignored when it isn't exist in pod.labels",
     {"foo=", .c = {{1, "zone", DNS, FOO, 0, UNSET, UNSET, "bar"}}},
     {NODES4},
     {P("p-a1", "node-a", "foo=a"), P("p-a2", "node-a", "foo=a"), P("p-b1", "node-b", "foo=a"),
      P("p-y1", "node-y", "foo=a"), P("p-y2", "node-y", "foo=a")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=3,zone2=2"}, {"zone2=2,zone1=3"}}},
    {"two spreadConstraints with the same topologyKey",
     {"foo=,bar=", .c = {{1, "zone", DNS, FOO}, {1, "zone", DNS, BAR}}},
     {NODES4},
     {P("p-a1", "node-a", "foo=,bar="), P("p-b1", "node-b", "foo="), P("p-x1", "node-x", "bar="),
      P("p-y1", "node-y", "foo=,bar="), P("p-y2", "node-y", "bar=")},
     {{0}},
     {{0}},
     KS_SUCCESS,
     {{"zone1=2,zone2=1", "zone1=1,zone2=3"}, {"zone2=1,zone1=2", "zone1=1,zone2=3"}}},
    {"skip if not specified", {"foo="}, {{"node-a", ZN("zone1", "node-a")}}, {{0}}, {{0}}, {{0}}, KS_SKIP},
};

Test(podtopologyspread, upstream_pre_filter_state)
{
    for (size_t i = 0; i < sizeof(prefilter_cases) / sizeof(prefilter_cases[0]); i++) {
        const struct prefilter_case *c = &prefilter_cases[i];
        struct ks_podtopologyspread_args a;
        struct ks_spread_constraint dc[MAXC];
        struct env e;
        env_init(&e, c->nodes, c->existing, c->objs, list_args(c->defaults, &a, dc));
        struct ks_pod *pod = incoming(&c->pod);
        struct ks_cycle_state cs;
        fx_cs_init(&cs);
        cr_expect(eq(int, pre_filter(&e, &cs, pod), c->want_code), "%s", c->name);
        if (c->want_code == KS_SUCCESS)
            expect_state(&cs, &c->want, c->name);
        fx_cs_free(&cs);
        ks_pod_put(pod);
        env_free(&e);
    }
}

/* ---- AddPod / RemovePod --------------------------------------------------------------------------- */

struct update_case {
    const char *name;
    struct tincoming preemptor;
    struct tnode nodes[MAXN];
    struct tpod existing[MAXP];
    struct tpod changed; /* added or removed */
    int node;            /* index in nodes of the node it is added to / removed from */
    struct twant want;
};

static void run_update(const struct update_case *c, bool add)
{
    struct env e;
    struct ks_podtopologyspread_args a = {.defaulting = KS_SPREAD_DEFAULTING_LIST};
    env_init(&e, c->nodes, c->existing, NULL, &a);
    struct ks_pod *pod = incoming(&c->preemptor);
    struct ks_pod *other = mk_pod(c->changed.ns, c->changed.name, c->changed.labels);
    struct ks_cycle_state cs, copy;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    fx_cs_init(&copy);
    cr_assert(eq(int, pre_filter(&e, &cs, pod), KS_SUCCESS), "%s", c->name);

    /* preemption clones the state first: the clone changes, the original does not */
    void *clone = NULL;
    cr_assert(eq(int, pts->state_clone(e.self, cs.slot[0], &copy.arena, &clone), 0));
    copy.slot[0] = clone;
    ks_rcu_read_lock();
    const struct ks_node_snap *node =
        ks_snapshot_find(ks_cache_snapshot(e.cache), ks_intern(c->nodes[c->node].name));
    cr_assert(node != NULL);
    int rc = add ? pts->add_pod(e.self, &copy, pod, other, node, &st)
                 : pts->remove_pod(e.self, &copy, pod, other, node, &st);
    ks_rcu_read_unlock();
    cr_expect(eq(int, rc, KS_SUCCESS), "%s", c->name);
    expect_state(&copy, &c->want, c->name);

    fx_cs_free(&copy);
    fx_cs_free(&cs);
    ks_pod_put(other);
    ks_pod_put(pod);
    env_free(&e);
}

#define NODES_ABX                                                                                            \
    {"node-a", ZN("zone1", "node-a")}, {"node-b", ZN("zone1", "node-b")},                                    \
    {                                                                                                        \
        "node-x", ZN("zone2", "node-x")                                                                      \
    }
#define ZONE_FOO                                                                                             \
    {                                                                                                        \
        1, "zone", DNS, FOO                                                                                  \
    }
#define NODE_FOO                                                                                             \
    {                                                                                                        \
        1, "node", DNS, FOO                                                                                  \
    }

static const struct update_case add_cases[] = {
    {"node a and b both impact current min match",
     {"foo=", .c = {NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-b", ZN("zone1", "node-b")}},
     {{0}},
     P("p-a1", "node-a", "foo="),
     0,
     {{"node-a=1,node-b=0"}, {"node-b=0,node-a=1"}}},
    {"only node a impacts current min match",
     {"foo=", .c = {NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-b", ZN("zone1", "node-b")}},
     {P("p-b1", "node-b", "foo=")},
     P("p-a1", "node-a", "foo="),
     0,
     {{"node-a=1,node-b=1"}, {"node-a=1,node-b=1"}}},
    {"add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
     {"foo=", .c = {NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-b", ZN("zone1", "node-b")}},
     {P("p-b1", "node-b", "foo=")},
     {"p-a1", "node-a", "foo=", "ns1"},
     0,
     {{"node-a=0,node-b=1"}, {"node-a=0,node-b=1"}}},
    {"add pod on non-critical node won't trigger re-calculation",
     {"foo=", .c = {NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-b", ZN("zone1", "node-b")}},
     {P("p-b1", "node-b", "foo=")},
     P("p-b2", "node-b", "foo="),
     1,
     {{"node-a=0,node-b=2"}, {"node-a=0,node-b=2"}}},
    {"node a and x both impact topologyKeyToMinPodsMap on zone and node",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-x", ZN("zone2", "node-x")}},
     {{0}},
     P("p-a1", "node-a", "foo="),
     0,
     {{"zone1=1,zone2=0", "node-a=1,node-x=0"}, {"zone2=0,zone1=1", "node-x=0,node-a=1"}}},
    {"only node a impacts topologyKeyToMinPodsMap on zone and node",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-x", ZN("zone2", "node-x")}},
     {P("p-x1", "node-x", "foo=")},
     P("p-a1", "node-a", "foo="),
     0,
     {{"zone1=1,zone2=1", "node-a=1,node-x=1"}, {"zone1=1,zone2=1", "node-a=1,node-x=1"}}},
    {"node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {NODES_ABX},
     {P("p-b1", "node-b", "foo="), P("p-b2", "node-b", "foo="), P("p-x1", "node-x", "foo=")},
     P("p-a1", "node-a", "foo="),
     0,
     {{"zone1=3,zone2=1", "node-a=1,node-b=2,node-x=1"}, {"zone2=1,zone1=3", "node-a=1,node-x=1"}}},
    {"Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
     {"foo=,bar=", .c = {ZONE_FOO, {1, "node", DNS, BAR}}},
     {NODES_ABX},
     {P("p-b1", "node-b", "foo=,bar="), P("p-x1", "node-x", "foo=,bar="), P("p-x2", "node-x", "bar=")},
     P("p-a1", "node-a", "foo="),
     0,
     {{"zone1=2,zone2=1", "node-a=0,node-b=1,node-x=2"}, {"zone2=1,zone1=2", "node-a=0,node-b=1"}}},
    {"Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and "
     "node",
     {"foo=,bar=", .c = {ZONE_FOO, {1, "node", DNS, BAR}}},
     {NODES_ABX},
     {P("p-b1", "node-b", "bar="), P("p-x1", "node-x", "foo=,bar="), P("p-x2", "node-x", "bar=")},
     P("p-a1", "node-a", "foo=,bar="),
     0,
     {{"zone1=1,zone2=1", "node-a=1,node-b=1,node-x=2"}, {"zone1=1,zone2=1", "node-a=1,node-b=1"}}},
    {"add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     {"foo=", .affinity = "foo notin (bar)", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a") ",foo=bar"}, {"node-b", ZN("zone2", "node-b") ",foo="}},
     {P("p-a2", "node-a", "foo=,zone=zone1"), P("p-b1", "node-b", "foo=,zone=zone2")},
     P("p-a1", "node-a", "foo=,zone=zone1"),
     0,
     {{"zone2=1"}, {"zone2=1,=2147483647"}}},
    {"add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
     {"foo=", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a") ",foo=bar"}, {"node-b", ZN("zone2", "node-b") ",foo="}},
     {P("p-a1", "node-a", "foo=,zone=zone1"), P("p-b2", "node-b", "foo=,zone=zone2")},
     P("p-b1", "node-b", "foo=,zone=zone2"),
     1,
     {{"zone1=1,zone2=2"}, {"zone1=1,zone2=2"}}},
    {"add a label selector not matched pod when with NodeInclusionPolicy enabled",
     {"foo=", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a") ",foo=bar"}, {"node-b", ZN("zone2", "node-b") ",foo="}},
     {P("p-a1", "node-a", "foo=,zone=zone1"), P("p-b2", "node-b", "foo=,zone=zone2")},
     P("p-b1", "node-b", "zone=zone2"),
     1,
     {{"zone1=1,zone2=1"}, {"zone1=1,zone2=1"}}},
    {"add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
     {"foo=", .tolerate = "node.kubernetes.io/unschedulable", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a"), UNSCHEDULABLE_TAINT}, {"node-b", ZN("zone2", "node-b")}},
     {P("p-a1", "node-a", "foo=,zone=zone1"), P("p-b2", "node-b", "foo=,zone=zone2")},
     P("p-b1", "node-b", "foo=,zone=zone2"),
     1,
     {{"zone1=1,zone2=2"}, {"zone1=1,zone2=2"}}},
};

Test(podtopologyspread, upstream_pre_filter_state_add_pod)
{
    for (size_t i = 0; i < sizeof(add_cases) / sizeof(add_cases[0]); i++)
        run_update(&add_cases[i], true);
}

static const struct update_case remove_cases[] = {
    {"one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
     {"foo=", .c = {ZONE_FOO}},
     {NODES_ABX},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-x1", "node-x", "foo=")},
     P("p-a1", "node-a", "foo="),
     0,
     {{"zone1=1,zone2=1"}, {"zone1=1,zone2=1"}}},
    {"one spreadConstraint on node, topologyKeyToMinPodsMap changed",
     {"foo=", .c = {ZONE_FOO}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-x1", "node-x", "foo="),
      P("p-y1", "node-y", "foo=")},
     P("p-a1", "node-a", "foo="),
     0,
     {{"zone1=1,zone2=2"}, {"zone1=1,zone2=2"}}},
    {"delete an irrelevant pod won't help",
     {"foo=", .c = {ZONE_FOO}},
     {NODES4},
     {P("p-a0", "node-a", "bar="), P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-x1", "node-x", "foo="), P("p-y1", "node-y", "foo=")},
     P("p-a0", "node-a", "bar="),
     0,
     {{"zone1=2,zone2=2"}, {"zone1=2,zone2=2"}}},
    {"delete a non-existing pod won't help",
     {"foo=", .c = {ZONE_FOO}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-x1", "node-x", "foo="),
      P("p-y1", "node-y", "foo=")},
     P("p-a0", "node-a", "bar="),
     0,
     {{"zone1=2,zone2=2"}, {"zone1=2,zone2=2"}}},
    {"two spreadConstraints",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {NODES_ABX},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-x1", "node-x", "foo="), P("p-x2", "node-x", "foo=")},
     P("p-x1", "node-x", "foo="),
     2,
     {{"zone1=3,zone2=1", "node-a=2,node-b=1,node-x=1"}, {"zone2=1,zone1=3", "node-b=1,node-x=1"}}},
    {"remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     {"foo=", .affinity = "foo notin (bar)", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a") ",foo=bar"}, {"node-b", ZN("zone2", "node-b") ",foo="}},
     {P("p-a2", "node-a", "foo=,zone=zone1"), P("p-b1", "node-b", "foo=,zone=zone2")},
     P("p-a1", "node-a", "foo=,zone=zone1"),
     0,
     {{"zone2=1"}, {"zone2=1,=2147483647"}}},
    {"remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
     {"foo=", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a") ",foo=bar"}, {"node-b", ZN("zone2", "node-b") ",foo="}},
     {P("p-a1", "node-a", "foo=,zone=zone1"), P("p-b2", "node-b", "foo=,zone=zone2")},
     P("p-b1", "node-b", "foo=,zone=zone2"),
     1,
     {{"zone1=1,zone2=0"}, {"zone2=0,zone1=1"}}},
};

Test(podtopologyspread, upstream_pre_filter_state_remove_pod)
{
    for (size_t i = 0; i < sizeof(remove_cases) / sizeof(remove_cases[0]); i++)
        run_update(&remove_cases[i], false);
}

/* ---- Filter ---------------------------------------------------------------------------------- */

enum { S = KS_SUCCESS, U = KS_UNSCHEDULABLE, UU = KS_UNSCHEDULABLE_AND_UNRESOLVABLE };

struct filter_case {
    const char *name;
    struct tincoming pod;
    struct tnode nodes[MAXN];
    struct tpod existing[MAXP];
    int want[MAXN]; /* per node, in node order */
};

static void run_filter(const struct filter_case *c)
{
    struct env e;
    struct ks_podtopologyspread_args a = {.defaulting = KS_SPREAD_DEFAULTING_LIST};
    env_init(&e, c->nodes, c->existing, NULL, &a);
    struct ks_pod *pod = incoming(&c->pod);
    struct ks_cycle_state cs;
    fx_cs_init(&cs);
    cr_assert(eq(int, pre_filter(&e, &cs, pod), KS_SUCCESS), "%s", c->name);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e.cache);
    for (int i = 0; i < MAXN && c->nodes[i].name; i++) {
        struct ks_status st = {0};
        const struct ks_node_snap *node = ks_snapshot_find(snap, ks_intern(c->nodes[i].name));
        int rc = pts->filter(e.self, &cs, pod, node, &st);
        cr_expect(eq(int, rc, c->want[i]), "%s: %s", c->name, c->nodes[i].name);
        if (rc == U)
            cr_expect(
                eq(str, (char *)fx_reason(&st, 0), "node(s) didn't match pod topology spread constraints"));
        if (rc == UU)
            cr_expect(eq(str, (char *)fx_reason(&st, 0),
                         "node(s) didn't match pod topology spread constraints (missing required label)"));
    }
    ks_rcu_read_unlock();
    fx_cs_free(&cs);
    ks_pod_put(pod);
    env_free(&e);
}

#define P_A1_A2_B1_Y123                                                                                      \
    P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),                   \
        P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo="), P("p-y3", "node-y", "foo=")
#define NODES_FOO3_Y                                                                                         \
    {"node-a", "node=node-a,foo="}, {"node-b", "node=node-b,foo="}, {"node-x", "node=node-x,foo="},          \
    {                                                                                                        \
        "node-y", "node=node-y"                                                                              \
    }

static const struct filter_case single_cases[] = {
    {"no existing pods", {"foo=", .c = {ZONE_FOO}}, {NODES4}, {{0}}, {S, S, S, S}},
    {"no existing pods, incoming pod doesn't match itself",
     {"foo=", .c = {{1, "zone", DNS, BAR}}},
     {NODES4},
     {{0}},
     {S, S, S, S}},
    {"existing pods in a different namespace do not count",
     {"foo=", .c = {ZONE_FOO}},
     {NODES4},
     {{"p-a1", "node-a", "foo=", "ns1"},
      {"p-b1", "node-a", "foo=", "ns2"},
      P("p-x1", "node-x", "foo="),
      P("p-y1", "node-y", "foo=")},
     {S, S, U, U}},
    {"existing pods do not match null selector",
     {"foo=", .c = {{1, "zone", DNS, NULL}}},
     {NODES4},
     {P("p-x1", "node-x", "foo="), P("p-y1", "node-y", "foo=")},
     {S, S, S, S}},
    {"pods spread across zones as 3/3, all nodes fit",
     {"foo=", .c = {ZONE_FOO}},
     {NODES4},
     {P_A1_A2_B1_Y123},
     {S, S, S, S}},
    {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     {"foo=", .c = {ZONE_FOO}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", "zon=zone1,node=node-b"},
      {"node-x", ZN("zone2", "node-x")},
      {"node-y", ZN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-x1", "node-x", "foo="),
      P("p-y1", "node-y", "foo=")},
     {S, UU, U, U}},
    {"pod cannot be scheduled as all nodes don't have label 'rack'",
     {"foo=", .c = {{1, "rack", DNS, FOO}}},
     {{"node-a", ZN("zone1", "node-a")}, {"node-x", ZN("zone2", "node-x")}},
     {{0}},
     {UU, UU}},
    {"pods spread across nodes as 2/1/0/3, only node-x fits",
     {"foo=", .c = {NODE_FOO}},
     {NODES4},
     {P_A1_A2_B1_Y123},
     {U, U, S, U}},
    {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     {"foo=", .c = {{2, "node", DNS, FOO}}},
     {NODES4},
     {P_A1_A2_B1_Y123},
     {U, S, S, U}},
    {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     {"bar=", .c = {NODE_FOO}},
     {NODES4},
     {P_A1_A2_B1_Y123},
     {U, S, S, U}},
    {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     {"foo=", .affinity = "node in (node-a,node-y)", .c = {NODE_FOO}},
     {NODES4},
     {P_A1_A2_B1_Y123},
     {S, S, S, U}},
    {"terminating Pods should be excluded",
     {"foo=", .c = {NODE_FOO}},
     {{"node-a", "node=node-a"}, {"node-b", "node=node-b"}},
     {{"p-a", "node-a", "foo=", NULL, true}, P("p-b", "node-b", "foo=")},
     {S, U}},
    {"incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     {"foo=", .affinity = "node notin (node-b)", .c = {ZONE_FOO}},
     {NODES4},
     {P("p-b1", "node-b", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {S, S, U, U}},
    {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the "
     "third "
     "node fits",
     {"foo=", .c = {{2, "node", DNS, FOO, 4}}},
     {{"node-a", "node=node-a"}, {"node-b", "node=node-b"}, {"node-c", "node=node-c"}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-b2", "node-b", "foo="), P("p-c1", "node-c", "foo=")},
     {U, U, S}},
    {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all "
     "nodes fit",
     {"foo=", .c = {{2, "node", DNS, FOO, 2}}},
     {{"node-a", "node=node-a"}, {"node-b", "node=node-b"}, {"node-c", "node=node-c"}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-b2", "node-b", "foo="), P("p-c1", "node-c", "foo=")},
     {S, S, S}},
    {"pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third "
     "and "
     "fourth nodes fit",
     {"foo=", .c = {{2, "zone", DNS, FOO, 3}}},
     {NODES4},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, S}},
    {"pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all "
     "nodes "
     "fit",
     {"foo=", .c = {{2, "zone", DNS, FOO, 1}}},
     {NODES4},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {S, S, S, S}},
    {"NodeAffinityPolicy honored with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {NODE_FOO}},
     {NODES_FOO3_Y},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, S}},
    {"NodeAffinityPolicy ignored with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {{1, "node", DNS, FOO, 0, IGNORE}}},
     {NODES_FOO3_Y},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, U}},
    {"NodeAffinityPolicy honored with nodeAffinity",
     {"foo=", .affinity = "foo=", .c = {NODE_FOO}},
     {NODES_FOO3_Y},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, S}},
    {"NodeAffinityPolicy ignored with nodeAffinity",
     {"foo=", .affinity = "foo=", .c = {{1, "node", DNS, FOO, 0, IGNORE}}},
     {NODES_FOO3_Y},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, U}},
    {"NodeTaintsPolicy honored",
     {"foo=", .c = {{1, "node", DNS, FOO, 0, UNSET, HONOR}}},
     {{"node-a", "node=node-a,foo="},
      {"node-b", "node=node-b,foo="},
      {"node-x", "node=node-x,foo="},
      {"node-y", "node=node-y", UNSCHEDULABLE_TAINT}},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, S}},
    {"NodeTaintsPolicy ignored",
     {"foo=", .c = {NODE_FOO}},
     {{"node-a", "node=node-a,foo="},
      {"node-b", "node=node-b,foo="},
      {"node-x", "node=node-x,foo="},
      {"node-y", "node=node-y", UNSCHEDULABLE_TAINT}},
     {P("p-b1", "node-a", "foo="), P("p-b2", "node-b", "foo="), P("p-y1", "node-y", "foo=")},
     {U, U, S, U}},
};

Test(podtopologyspread, upstream_single_constraint)
{
    for (size_t i = 0; i < sizeof(single_cases) / sizeof(single_cases[0]); i++)
        run_filter(&single_cases[i]);
}

#define NODES_ZN_FOO                                                                                         \
    {"node-a", ZN("zone1", "node-a") ",foo="}, {"node-b", ZN("zone1", "node-b") ",foo="},                    \
    {                                                                                                        \
        "node-x", ZN("zone2", "node-x") ",foo="                                                              \
    }
#define P_A1_B1_Y1 P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-y1", "node-y", "foo=")

static const struct filter_case multiple_cases[] = {
    {"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {NODES4},
     {P_A1_A2_B1_Y123},
     {U, U, S, U}},
    {"two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {NODES4},
     {P_A1_A2_B1_Y123, P("p-y4", "node-y", "foo=")},
     {U, U, U, U}},
    {"Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
     {"foo=,bar=", .c = {ZONE_FOO, {1, "node", DNS, BAR}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-y1", "node-y", "bar=")},
     {U, U, S, U}},
    {"Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
     {"foo=,bar=", .c = {ZONE_FOO, {1, "node", DNS, BAR}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-x1", "node-x", "bar="), P("p-y1", "node-y", "bar=")},
     {U, U, U, U}},
    {"Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
     {"foo=,bar=", .c = {ZONE_FOO, {1, "node", DNS, BAR}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo=,bar="), P("p-y1", "node-y", "foo="),
      P("p-y2", "node-y", "foo=,bar="), P("p-y3", "node-y", "foo=")},
     {U, S, U, U}},
    {"Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     {"bar=", .c = {ZONE_FOO, {1, "node", DNS, BAR}}},
     {NODES4},
     {P("p-a1", "node-a", "foo="), P("p-x1", "node-x", "bar="), P("p-y1", "node-y", "bar=")},
     {S, S, U, U}},
    {"two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     {"foo=", .c = {ZONE_FOO, NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a")},
      {"node-b", ZN("zone1", "node-b")},
      {"node-x", "zone=zone2"},
      {"node-y", ZN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-y3", "node-y", "foo=")},
     {U, S, UU, U}},
    {"two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     {"foo=", .node_selector = "foo=", .c = {ZONE_FOO, {1, "node", DNS, FOO, 0, IGNORE}}},
     {NODES_ZN_FOO, {"node-y", ZN("zone2", "node-y")}},
     {P_A1_B1_Y1},
     {U, U, S, U}},
    {"two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     {"foo=", .c = {{1, "zone", DNS, FOO, 0, UNSET, HONOR}, NODE_FOO}},
     {NODES_ZN_FOO, {"node-y", ZN("zone2", "node-y"), UNSCHEDULABLE_TAINT}},
     {P_A1_B1_Y1},
     {U, U, S, U}},
    {"two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     {"foo=", .node_selector = "foo=", .c = {ZONE_FOO, NODE_FOO}},
     {{"node-a", ZN("zone1", "node-a") ",foo="},
      {"node-b", ZN("zone1", "node-b")},
      {"node-x", ZN("zone2", "node-x") ",foo="},
      {"node-y", ZN("zone2", "node-y") ",foo=", UNSCHEDULABLE_TAINT}},
     {P_A1_B1_Y1},
     {U, S, S, U}},
    {"two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
     {"foo=", .node_selector = "foo=",
      .c = {{1, "zone", DNS, FOO, 0, UNSET, HONOR}, {1, "node", DNS, FOO, 0, IGNORE}}},
     {{"node-a", ZN("zone1", "node-a") ",foo="},
      {"node-b", ZN("zone1", "node-b")},
      {"node-x", ZN("zone2", "node-x") ",foo="},
      {"node-y", ZN("zone2", "node-y") ",foo=", UNSCHEDULABLE_TAINT}},
     {P_A1_B1_Y1},
     {U, U, S, U}},
    {"two Constraints on zone, spreads = [3/3, 2/1]",
     {"foo=,bar=", .c = {{1, "zone", DNS, BAR}, ZONE_FOO}},
     {NODES4},
     {P("p-a1", "node-a", "foo=,bar="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=,bar="), P("p-y3", "node-y", "foo=")},
     {U, U, S, S}},
    {"two Constraints on zone, spreads = [3/4, 2/1]",
     {"foo=,bar=", .c = {{1, "zone", DNS, BAR}, ZONE_FOO}},
     {NODES4},
     {P("p-a1", "node-a", "foo=,bar="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=,bar="), P("p-y3", "node-y", "foo="),
      P("p-y4", "node-y", "foo=")},
     {U, U, U, U}},
};

Test(podtopologyspread, upstream_multiple_constraints)
{
    for (size_t i = 0; i < sizeof(multiple_cases) / sizeof(multiple_cases[0]); i++)
        run_filter(&multiple_cases[i]);
}

Test(podtopologyspread, filter_without_pre_filter_is_an_error)
{
    struct env e;
    struct ks_podtopologyspread_args a = {.defaulting = KS_SPREAD_DEFAULTING_LIST};
    env_init(&e, (struct tnode[]){{"node-a", "node=node-a"}, {0}}, NULL, NULL, &a);
    struct ks_pod *pod = incoming(&(struct tincoming){"foo="});
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    ks_rcu_read_lock();
    const struct ks_node_snap *node = ks_snapshot_find(ks_cache_snapshot(e.cache), ks_intern("node-a"));
    cr_expect(eq(int, pts->filter(e.self, &cs, pod, node, &st), KS_ERROR));
    ks_rcu_read_unlock();
    cr_expect(eq(str, (char *)fx_reason(&st, 0),
                 "reading \"PreFilterPodTopologySpread\" from cycleState: not found"));
    fx_cs_free(&cs);
    ks_pod_put(pod);
    env_free(&e);
}

/* ---- PreScore, Score, NormalizeScore ------------------------------------------------------------- */

#define HN(n)    "kubernetes.io/hostname=" n
#define HOSTNAME "kubernetes.io/hostname"

struct score_case {
    const char *name;
    struct tincoming pod;
    struct tnode nodes[MAXN];  /* candidates, in scoring order */
    struct tnode failed[MAXN]; /* in the snapshot, not candidates */
    struct tpod existing[MAXP];
    struct tobj objs[MAXO];
    int64_t want[MAXN];
};

/* Run PreScore over the candidates, then Score and NormalizeScore, as upstream's test. */
static void run_scores(const struct score_case *c, const struct ks_podtopologyspread_args *args)
{
    struct tnode all[2 * MAXN + 1] = {{0}};
    uint32_t n = 0, k = 0;
    for (int i = 0; i < MAXN && c->nodes[i].name; i++)
        all[k++] = c->nodes[i];
    n = k;
    for (int i = 0; i < MAXN && c->failed[i].name; i++)
        all[k++] = c->failed[i];
    struct env e;
    env_init(&e, all, c->existing, c->objs, args);
    struct ks_pod *pod = incoming(&c->pod);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e.cache);
    const struct ks_node_snap *cand[MAXN];
    int64_t scores[MAXN];
    for (uint32_t i = 0; i < n; i++)
        cand[i] = ks_snapshot_find(snap, ks_intern(c->nodes[i].name));
    cr_assert(eq(int, pts->pre_score(e.self, &cs, pod, cand, n, &st), KS_SUCCESS), "%s", c->name);
    for (uint32_t i = 0; i < n; i++)
        cr_assert(eq(int, pts->score(e.self, &cs, pod, cand[i], &scores[i], &st), KS_SUCCESS));
    cr_assert(eq(int, pts->normalize_score(e.self, &cs, pod, cand, scores, n, &st), KS_SUCCESS));
    ks_rcu_read_unlock();
    for (uint32_t i = 0; i < n; i++)
        cr_expect(eq(i64, scores[i], c->want[i]), "%s: %s", c->name, c->nodes[i].name);
    fx_cs_free(&cs);
    ks_pod_put(pod);
    env_free(&e);
}

#define NODES_HN4                                                                                            \
    {"node-a", HN("node-a")}, {"node-b", HN("node-b")}, {"node-c", HN("node-c")},                            \
    {                                                                                                        \
        "node-d", HN("node-d")                                                                               \
    }
#define P_2103                                                                                               \
    P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),                   \
        P("p-d1", "node-d", "foo="), P("p-d2", "node-d", "foo="), P("p-d3", "node-d", "foo=")
#define P_4321                                                                                               \
    P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-a3", "node-a", "foo="),                   \
        P("p-a4", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-b2", "node-b", "foo="),               \
        P("p-b3", "node-b", "foo="), P("p-c1", "node-c", "foo="), P("p-c2", "node-c", "foo="),               \
        P("p-d1", "node-d", "foo=")
#define P_4213                                                                                               \
    P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-a3", "node-a", "foo="),                   \
        P("p-a4", "node-a", "foo="), P("p-b1", "node-b", "foo="), P("p-b2", "node-b", "foo="),               \
        P("p-x1", "node-x", "foo="), P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo="),               \
        P("p-y3", "node-y", "foo=")
#define HOST_FOO(skew)                                                                                       \
    {                                                                                                        \
        skew, HOSTNAME, SA, FOO                                                                              \
    }
#define ZN_HN(z, n) "zone=" z "," HN(n)
#define NODE_ABC                                                                                             \
    {"node-a", "node=node-a,foo="}, {"node-b", "node=node-b,foo="},                                          \
    {                                                                                                        \
        "node-c", "node=node-c"                                                                              \
    }
#define P_ABC                                                                                                \
    P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),                   \
        P("p-c1", "node-c", "foo=")
#define NODES_ZN_HN4                                                                                         \
    {"node-a", ZN_HN("zone1", "node-a")}, {"node-b", ZN_HN("zone1", "node-b")},                              \
        {"node-c", ZN_HN("zone2", "node-c")},                                                                \
    {                                                                                                        \
        "node-d", ZN_HN("zone2", "node-d")                                                                   \
    }

static const struct score_case score_cases[] = {
    {"one constraint on node, no existing pods",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}, {"node-b", HN("node-b")}},
     {{0}},
     {{0}},
     {{0}},
     {100, 100}},
    {"one constraint on node, only one node is candidate",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}},
     {{"node-b", HN("node-b")}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo=")},
     {{0}},
     {100}},
    {"one constraint on node, all nodes have the same number of matching pods",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}, {"node-b", HN("node-b")}},
     {{0}},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo=")},
     {{0}},
     {100, 100}},
    {"one constraint on node, all 4 nodes are candidates",
     {"foo=", .c = {HOST_FOO(1)}},
     {NODES_HN4},
     {{0}},
     {P_2103},
     {{0}},
     {20, 60, 100, 0}},
    {"one constraint on node, null selector",
     {"foo=", .c = {{1, HOSTNAME, SA, NULL}}},
     {NODES_HN4},
     {{0}},
     {P_2103},
     {{0}},
     {100, 100, 100, 100}},
    {"one constraint on node, all 4 nodes are candidates, maxSkew=2",
     {"foo=", .c = {HOST_FOO(2)}},
     {NODES_HN4},
     {{0}},
     {P_2103},
     {{0}},
     {33, 66, 100, 16}},
    {"one constraint on node, all 4 nodes are candidates, maxSkew=3",
     {"foo=", .c = {HOST_FOO(3)}},
     {NODES_HN4},
     {{0}},
     {P_4321},
     {{0}},
     {44, 66, 77, 100}},
    {"system defaulting, nodes don't have zone, pods match service",
     {"foo="},
     {NODES_HN4},
     {{0}},
     {P_4321},
     {{"Service", "svc", "foo="}},
     {44, 66, 77, 100}},
    {"one constraint on node, 3 out of 4 nodes are candidates",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}, {"node-b", HN("node-b")}, {"node-x", HN("node-x")}},
     {{"node-y", HN("node-y")}},
     {P_4213},
     {{0}},
     {33, 83, 100}},
    {"one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}, {"node-b", "n=node-b"}, {"node-x", HN("node-x")}},
     {{"node-y", HN("node-y")}},
     {P_4213},
     {{0}},
     {16, 0, 100}},
    {"one constraint on zone, 3 out of 4 nodes are candidates",
     {"foo=", .c = {{1, "zone", SA, FOO}}},
     {{"node-a", ZN_HN("zone1", "node-a")},
      {"node-b", ZN_HN("zone1", "node-b")},
      {"node-x", ZN_HN("zone2", "node-x")}},
     {{"node-y", ZN_HN("zone2", "node-y")}},
     {P_4213},
     {{0}},
     {75, 75, 100}},
    {"two Constraints on zone and node, 2 out of 4 nodes are candidates",
     {"foo=", .c = {{1, "zone", SA, FOO}, HOST_FOO(1)}},
     {{"node-a", ZN_HN("zone1", "node-a")}, {"node-x", ZN_HN("zone2", "node-x")}},
     {{"node-b", ZN_HN("zone1", "node-b")}, {"node-y", ZN_HN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-x1", "node-x", "foo="), P("p-x2", "node-x", "foo="), P("p-y1", "node-y", "foo="),
      P("p-y2", "node-y", "foo="), P("p-y3", "node-y", "foo="), P("p-y4", "node-y", "foo=")},
     {{0}},
     {100, 63}},
    {"two Constraints on zone, 2 out of 4 nodes are candidates",
     {"foo=,bar=", .c = {{1, "zone", SA, FOO}, {1, "zone", SA, BAR}}},
     {{"node-a", "zone=zone1"}, {"node-x", "zone=zone2"}},
     {{"node-b", "zone=zone1"}, {"node-y", "zone=zone2"}},
     {P("p-a1", "node-a", "foo=,bar="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar="),
      P("p-y1", "node-y", "foo="), P("p-y2", "node-y", "foo=,bar="), P("p-y3", "node-y", "foo=")},
     {{0}},
     {85, 100}},
    {"two Constraints on zone and node, with different labelSelectors",
     {"foo=,bar=", .c = {{1, "zone", SA, FOO}, {1, HOSTNAME, SA, BAR}}},
     {{"node-a", ZN_HN("zone1", "node-a")},
      {"node-b", ZN_HN("zone1", "node-b")},
      {"node-x", ZN_HN("zone2", "node-x")},
      {"node-y", ZN_HN("zone2", "node-y")}},
     {{0}},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar="), P("p-y1", "node-y", "foo="),
      P("p-y2", "node-y", "bar=")},
     {{0}},
     {60, 20, 100, 60}},
    {"two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     {"foo=,bar=", .c = {{1, "zone", SA, FOO}, {1, HOSTNAME, SA, BAR}}},
     {{"node-a", ZN_HN("zone1", "node-a")},
      {"node-b", ZN_HN("zone1", "node-b")},
      {"node-x", ZN_HN("zone2", "node-x")},
      {"node-y", ZN_HN("zone2", "node-y")}},
     {{0}},
     {P("p-b1", "node-b", "bar="), P("p-x1", "node-x", "foo="), P("p-y1", "node-y", "foo=,bar=")},
     {{0}},
     {100, 60, 40, 0}},
    {"two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     {"foo=,bar=", .c = {{1, "zone", SA, FOO}, {1, HOSTNAME, SA, BAR}}},
     {{"node-a", ZN_HN("zone1", "node-a")},
      {"node-b", ZN_HN("zone1", "node-b")},
      {"node-x", ZN_HN("zone2", "node-x")}},
     {{"node-y", ZN_HN("zone2", "node-y")}},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar="), P("p-y1", "node-y", "foo="),
      P("p-y2", "node-y", "bar=")},
     {{0}},
     {50, 25, 100}},
    {"existing pods in a different namespace do not count",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}, {"node-b", HN("node-b")}},
     {{0}},
     {{"p-a1", "node-a", "foo=", "ns1"},
      P("p-a2", "node-a", "foo="),
      P("p-b1", "node-b", "foo="),
      P("p-b2", "node-b", "foo=")},
     {{0}},
     {100, 33}},
    {"terminating Pods should be excluded",
     {"foo=", .c = {HOST_FOO(1)}},
     {{"node-a", HN("node-a")}, {"node-b", HN("node-b")}},
     {{0}},
     {{"p-a", "node-a", "foo=", NULL, true}, P("p-b", "node-b", "foo=")},
     {{0}},
     {100, 0}},
    {"minDomains has no effect when ScheduleAnyway",
     {"foo=", .c = {{2, "node", SA, FOO, 10}}},
     {{"node-a", "node=node-a"}, {"node-b", "node=node-b"}, {"node-c", "node=node-c"}},
     {{0}},
     {P("p-a1", "node-a", "foo="), P("p-a2", "node-a", "foo="), P("p-b1", "node-b", "foo="),
      P("p-b2", "node-b", "foo="), P("p-c1", "node-c", "foo=")},
     {{0}},
     {75, 75, 100}},
    {"NodeAffinityPolicy honoed with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {{1, "node", SA, FOO}}},
     {NODE_ABC},
     {{0}},
     {P_ABC},
     {{0}},
     {0, 33, 100}},
    {"NodeAffinityPolicy ignored with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {{1, "node", SA, FOO, 0, IGNORE}}},
     {NODE_ABC},
     {{0}},
     {P_ABC},
     {{0}},
     {66, 100, 100}},
    {"NodeAffinityPolicy honoed with nodeAffinity",
     {"foo=", .affinity = "foo=", .c = {{1, "node", SA, FOO}}},
     {NODE_ABC},
     {{0}},
     {P_ABC},
     {{0}},
     {0, 33, 100}},
    {"NodeAffinityPolicy ignored with nodeAffinity",
     {"foo=", .affinity = "foo=", .c = {{1, "node", SA, FOO, 0, IGNORE}}},
     {NODE_ABC},
     {{0}},
     {P_ABC},
     {{0}},
     {66, 100, 100}},
    {"NodeTaintsPolicy honored",
     {"foo=", .c = {{1, "node", SA, FOO, 0, UNSET, HONOR}}},
     {{"node-a", "node=node-a"}, {"node-b", "node=node-b"}, {"node-c", "node=node-c", UNSCHEDULABLE_TAINT}},
     {{0}},
     {P_ABC},
     {{0}},
     {0, 33, 100}},
    {"NodeTaintsPolicy ignored",
     {"foo=", .c = {{1, "node", SA, FOO}}},
     {{"node-a", "node=node-a"}, {"node-b", "node=node-b"}, {"node-c", "node=node-c", UNSCHEDULABLE_TAINT}},
     {{0}},
     {P_ABC},
     {{0}},
     {66, 100, 100}},
    {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     {"foo=,bar=",
      .c = {{1, "zone", SA, "", 0, UNSET, UNSET, "foo"}, {1, HOSTNAME, SA, "", 0, UNSET, UNSET, "bar"}}},
     {NODES_ZN_HN4},
     {{0}},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar="), P("p-y1", "node-c", "foo="),
      P("p-y2", "node-c", "bar=")},
     {{0}},
     {60, 20, 60, 100}},
    {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     {"foo=,bar=,baz=", .c = {{1, "zone", SA, FOO}, {1, HOSTNAME, SA, BAR, 0, UNSET, UNSET, "baz"}}},
     {NODES_ZN_HN4},
     {{0}},
     {P("p-a1", "node-a", "foo="), P("p-b1", "node-b", "foo=,bar=,baz="), P("p-c1", "node-c", "foo="),
      P("p-c2", "node-c", "bar="), P("p-d3", "node-c", "bar=,baz=")},
     {{0}},
     {60, 20, 60, 100}},
};

Test(podtopologyspread, upstream_score)
{
    for (size_t i = 0; i < sizeof(score_cases) / sizeof(score_cases[0]); i++)
        run_scores(&score_cases[i], NULL);
}

/* TestPreScoreStateEmptyNodes: constraints, weights and the counts Score reads. */
struct prescore_case {
    const char *name;
    struct tincoming pod;
    struct tnode nodes[MAXN];
    struct tobj objs[MAXO];
    bool system; /* System defaulting, else List with @defaults */
    struct tcons defaults[MAXC];
    const char *keys[MAXC]; /* constraints' topology keys, in order */
    int32_t skews[MAXC];
    uint32_t sizes[MAXC];     /* topologyNormalizingWeight(size) */
    const char *counts[MAXC]; /* "value=count,..." Score reads (absent values count 0) */
};

static const struct prescore_case prescore_cases[] = {
    {"normal case",
     {"foo=", .c = {{1, "zone", SA, FOO}, HOST_FOO(1)}},
     {{"node-a", ZN_HN("zone1", "node-a")},
      {"node-b", ZN_HN("zone1", "node-b")},
      {"node-x", ZN_HN("zone2", "node-x")}},
     {{0}},
     false,
     {{0}},
     {"zone", HOSTNAME},
     {1, 1},
     {2, 3},
     {"zone1=0,zone2=0", ""}},
    {"null selector",
     {"foo=", .c = {{1, "zone", SA, NULL}}},
     {{"node-a", ZN_HN("zone1", "node-a")},
      {"node-b", ZN_HN("zone1", "node-b")},
      {"node-x", ZN_HN("zone2", "node-x")}},
     {{0}},
     false,
     {{0}},
     {"zone"},
     {1},
     {2},
     {"zone1=0,zone2=0"}},
    {"node-x doesn't have label zone",
     {"foo=", .c = {{1, "zone", SA, FOO}, {1, HOSTNAME, SA, BAR}}},
     {{"node-a", ZN_HN("zone1", "node-a")}, {"node-b", ZN_HN("zone1", "node-b")}, {"node-x", HN("node-x")}},
     {{0}},
     false,
     {{0}},
     {"zone", HOSTNAME},
     {1, 1},
     {1, 2},
     {"zone1=0", ""}},
    {"system default constraints and a replicaset",
     {"foo=tar,baz=sup", .owner = "ReplicaSet/rs1"},
     {{"node-a", HN("node-a") ",topology.kubernetes.io/zone=mars"},
      {"node-b", HN("node-b") ",topology.kubernetes.io/zone=mars"},
      {"node-c", HN("node-c")},
      {"node-d", HN("node-d")}},
     {{"ReplicaSet", "rs1", FOO}},
     true,
     {{0}},
     {HOSTNAME, "topology.kubernetes.io/zone"},
     {3, 5},
     {4, 2},
     {"", "mars=0,=0"}},
    {"default constraints and a replicaset",
     {"foo=tar,baz=sup", .owner = "ReplicaSet/rs1"},
     {{"node-a", "rack=rack1," HN("node-a") ",planet=mars"}},
     {{"ReplicaSet", "rs1", FOO}},
     false,
     {{1, HOSTNAME, SA}, {2, "rack", DNS}, {2, "planet", SA}},
     {HOSTNAME, "planet"},
     {1, 2},
     {1, 1},
     {"", "mars=0"}},
    {"default constraints and a replicaset, but pod has constraints",
     {"foo=bar,baz=sup", .owner = "ReplicaSet/rs1",
      .c = {{1, "zone", DNS, BAR}, {2, "planet", SA, "baz=sup"}}},
     {{"node-a", "planet=mars,galaxy=andromeda"}},
     {{"ReplicaSet", "rs1", FOO}},
     false,
     {{2, "galaxy", SA}},
     {"planet"},
     {2},
     {1},
     {"mars=0"}},
    {"NodeAffinityPolicy honored with labelSelectors",
     {"foo=", .node_selector = "foo=", .c = {{1, "zone", SA, BAR}}},
     {{"node-a", ZN_HN("zone1", "node-a") ",foo="},
      {"node-b", ZN_HN("zone1", "node-b") ",foo="},
      {"node-x", ZN_HN("zone2", "node-x")}},
     {{0}},
     false,
     {{0}},
     {"zone"},
     {1},
     {2},
     {"zone1=0,zone2=0"}},
    {"NodeTaintsPolicy honored",
     {"foo=", .c = {{1, "zone", SA, BAR, 0, UNSET, HONOR}}},
     {{"node-a", ZN_HN("zone1", "node-a") ",foo="},
      {"node-b", ZN_HN("zone1", "node-b") ",foo="},
      {"node-x", ZN_HN("zone2", "node-x"), UNSCHEDULABLE_TAINT}},
     {{0}},
     false,
     {{0}},
     {"zone"},
     {1},
     {2},
     {"zone1=0,zone2=0"}},
};

Test(podtopologyspread, upstream_pre_score_state)
{
    for (size_t i = 0; i < sizeof(prescore_cases) / sizeof(prescore_cases[0]); i++) {
        const struct prescore_case *c = &prescore_cases[i];
        struct ks_podtopologyspread_args a;
        struct ks_spread_constraint dc[MAXC];
        struct env e;
        env_init(&e, c->nodes, NULL, c->objs, c->system ? NULL : list_args(c->defaults, &a, dc));
        struct ks_pod *pod = incoming(&c->pod);
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        fx_cs_init(&cs);
        ks_rcu_read_lock();
        const struct ks_snapshot *snap = ks_cache_snapshot(e.cache);
        const struct ks_node_snap *cand[MAXN];
        uint32_t n = 0;
        for (; n < MAXN && c->nodes[n].name; n++)
            cand[n] = ks_snapshot_find(snap, ks_intern(c->nodes[n].name));
        cr_assert(eq(int, pts->pre_score(e.self, &cs, pod, cand, n, &st), KS_SUCCESS), "%s", c->name);
        ks_rcu_read_unlock();
        const struct ks_pts_cycle *cyc = cs.slot[0];
        const struct ks_pts_score_state *s = cyc->score;
        uint32_t k = 0;
        while (k < MAXC && c->keys[k])
            k++;
        cr_assert(eq(u32, s->n, k), "%s: constraints", c->name);
        for (uint32_t j = 0; j < k; j++) {
            cr_expect(eq(str, (char *)ks_intern_str(s->cons[j].topology_key), (char *)c->keys[j]), "%s",
                      c->name);
            cr_expect(eq(i32, s->cons[j].max_skew, c->skews[j]), "%s", c->name);
            cr_expect(eq(dbl, s->weight[j], ks_spread_log((double)c->sizes[j] + 2)), "%s: weight %u", c->name,
                      j);
            char buf[128];
            snprintf(buf, sizeof(buf), "%s", c->counts[j]);
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                char *eqs = strchr(tok, '=');
                *eqs = '\0';
                const struct ks_spread_domain *d = ks_spread_domains_find(&s->counts[j], ks_intern(tok));
                cr_expect(eq(i64, d ? d->count : 0, atoll(eqs + 1)), "%s: %s", c->name, tok);
            }
        }
        fx_cs_free(&cs);
        ks_pod_put(pod);
        env_free(&e);
    }
}

/* TestPreScoreSkip, and the Skip of PreFilter without DoNotSchedule constraints. */
Test(podtopologyspread, upstream_pre_score_skip)
{
    static const struct {
        const char *name;
        struct tincoming pod;
        struct tnode nodes[MAXN];
        struct tobj objs[MAXO];
        struct tcons defaults[MAXC];
    } cases[] = {
        {"the pod doesn't have soft topology spread Constraints",
         {""},
         {{"node-a", HN("node-a")}, {"node-b", HN("node-b")}}},
        {"default constraints and a replicaset that doesn't match",
         {"foo=bar,baz=sup", .owner = "ReplicaSet/rs2"},
         {{"node-a", "planet=mars"}},
         {{"ReplicaSet", "rs1", "tar"}},
         {{2, "planet", SA}}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_podtopologyspread_args a;
        struct ks_spread_constraint dc[MAXC];
        struct env e;
        env_init(&e, cases[i].nodes, NULL, cases[i].objs, list_args(cases[i].defaults, &a, dc));
        struct ks_pod *pod = incoming(&cases[i].pod);
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        fx_cs_init(&cs);
        ks_rcu_read_lock();
        const struct ks_node_snap *cand[1] = {
            ks_snapshot_find(ks_cache_snapshot(e.cache), ks_intern("node-a"))};
        cr_expect(eq(int, pts->pre_score(e.self, &cs, pod, cand, 1, &st), KS_SKIP), "%s", cases[i].name);
        ks_rcu_read_unlock();
        cr_expect(eq(int, pre_filter(&e, &cs, pod), KS_SKIP), "%s", cases[i].name);
        fx_cs_free(&cs);
        ks_pod_put(pod);
        env_free(&e);
    }
}

/* ---- counts kept across cycles ----------------------------------------------------------------- */

/* Two instances over one cache: @inc keeps its counter across cycles, @fresh starts anew each time. */
struct twin {
    struct env e;
    void *fresh;
};

static void expect_same_tables(const struct ks_spread_domains *a, const struct ks_spread_domains *b,
                               const char *what, int step)
{
    cr_expect(eq(u32, a->n, b->n), "%s step %d: domains", what, step);
    for (uint32_t k = 0; b->slots && k <= b->mask; k++) {
        const struct ks_spread_domain *d = &b->slots[k];
        if (d->value == KS_ID_NONE)
            continue;
        const struct ks_spread_domain *x = ks_spread_domains_find(a, d->value);
        cr_expect(x != NULL, "%s step %d: domain %s missing", what, step, ks_intern_str(d->value));
        if (x)
            cr_expect(eq(i64, x->count, d->count), "%s step %d: domain %s", what, step,
                      ks_intern_str(d->value));
    }
}

/*
 * PreScore's nodes with pods its hostname constraint counts (the index's per-node part):
 * every position whose pods the constraint's selector matches, with that count, once.
 */
static void expect_hosts(const struct ks_snapshot *snap, const struct ks_pts_score_state *s, int step)
{
    const struct ks_pts_constraint *host = NULL;
    for (uint32_t i = 0; i < s->n; i++)
        host = s->cons[i].topology_key == ks_wk.hostname_label ? &s->cons[i] : host;
    uint32_t listed = 0;
    for (uint32_t p = 0; host && p < snap->nnodes; p++) {
        uint32_t want = ks_spread_count_pods(ks_snapshot_node(snap, p), host->selector, s->ns), got = 0,
                 seen = 0;
        for (uint32_t k = 0; k < s->hosts.n; k++) {
            if (s->hosts.pos[k] == p) {
                got = s->hosts.count[k];
                seen++;
            }
        }
        cr_expect(eq(u32, got, want), "step %d: position %u counts %u pods, listed with %u", step, p, want,
                  got);
        cr_expect(le(u32, seen, 1), "step %d: position %u listed %u times", step, p, seen);
        listed += want != 0;
    }
    cr_expect(eq(u32, s->hosts.n, listed), "step %d: %u nodes listed, %u hold counted pods", step, s->hosts.n,
              listed);
}

/* PreFilter and PreScore of @pod through both instances agree. */
static void compare_twins(struct twin *t, const struct ks_pod *pod, int step)
{
    struct ks_cycle_state a, b;
    struct ks_status st = {0};
    struct ks_pre_filter_result res = {.all = true};
    fx_cs_init(&a);
    fx_cs_init(&b);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(t->e.cache);
    int ra = pts->pre_filter(t->e.self, &a, pod, &res, &st);
    int rb = pts->pre_filter(t->fresh, &b, pod, &res, &st);
    cr_assert(eq(int, ra, rb));
    if (ra == KS_SUCCESS) {
        const struct ks_pts_filter_state *x = ((struct ks_pts_cycle *)a.slot[0])->filter;
        const struct ks_pts_filter_state *y = ((struct ks_pts_cycle *)b.slot[0])->filter;
        for (uint32_t i = 0; i < y->n; i++) {
            expect_same_tables(&x->counts[i], &y->counts[i], "PreFilter", step);
            cr_expect(eq(i64, x->paths[i].num[0], y->paths[i].num[0]), "step %d: minimum", step);
        }
    }
    const struct ks_node_snap *all[64];
    uint32_t n = snap->nnodes < 64 ? snap->nnodes : 64;
    for (uint32_t i = 0; i < n; i++)
        all[i] = ks_snapshot_node(snap, i);
    ra = pts->pre_score(t->e.self, &a, pod, all, n, &st);
    rb = pts->pre_score(t->fresh, &b, pod, all, n, &st);
    cr_assert(eq(int, ra, rb));
    if (ra == KS_SUCCESS) {
        const struct ks_pts_score_state *x = ((struct ks_pts_cycle *)a.slot[0])->score;
        const struct ks_pts_score_state *y = ((struct ks_pts_cycle *)b.slot[0])->score;
        for (uint32_t i = 0; i < y->n; i++)
            expect_same_tables(&x->counts[i], &y->counts[i], "PreScore", step);
        expect_hosts(snap, x, step);
        expect_hosts(snap, y, step);
    }
    ks_rcu_read_unlock();
    fx_cs_free(&a);
    fx_cs_free(&b);
}

static uint64_t rng_state = 42;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

Test(podtopologyspread, counts_follow_cluster_changes)
{
    static const char *const zones[] = {"zone1", "zone2", "zone3"};
    static const char *const plabels[] = {"foo=", "bar=", "foo=,bar=", "app=web", ""};
    struct tnode nodes[MAXN + 1] = {{0}};
    char names[MAXN][16], labels[MAXN][128];
    for (int i = 0; i < MAXN; i++) {
        snprintf(names[i], sizeof(names[i]), "node-%d", i);
        snprintf(labels[i], sizeof(labels[i]), "zone=%s,node=%s,kubernetes.io/hostname=%s%s", zones[i % 3],
                 names[i], names[i], i % 4 ? ",foo=" : "");
        nodes[i] = (struct tnode){names[i], labels[i], i == 5 ? UNSCHEDULABLE_TAINT : NULL};
    }
    struct twin t;
    struct ks_podtopologyspread_args a;
    struct ks_spread_constraint dc[MAXC];
    struct tcons defaults[MAXC] = {{1, "zone", SA}, {2, "node", DNS}};
    env_init(&t.e, nodes, NULL, (struct tobj[]){{"Service", "web", "app=web"}, {0}},
             list_args(defaults, &a, dc));
    struct ks_error err = {0};
    struct ks_plugin_init in = {.args = &a, .slot = 0, .framework = t.e.fw};

    /* the pods being scheduled: own constraints with policies, and the List defaults through a Service */
    struct ks_pod *pods[] = {
        incoming(&(struct tincoming){"foo=", .c = {ZONE_FOO, NODE_FOO}}),
        incoming(&(struct tincoming){"foo=", .node_selector = "foo=",
                                     .c = {{1, "zone", DNS, FOO, 0, UNSET, HONOR}, {1, "zone", SA, BAR}}}),
        incoming(&(struct tincoming){"app=web"}),
        incoming(&(struct tincoming){"foo=", .c = {{1, "node", SA, FOO, 0, IGNORE}}}),
        /* spread-scored: PreScore lists the nodes holding pods its hostname constraint counts */
        incoming(
            &(struct tincoming){"foo=", .c = {{1, "kubernetes.io/hostname", SA, FOO}, {2, "zone", SA, FOO}}}),
    };
    const uint32_t npods = sizeof(pods) / sizeof(pods[0]);
    struct ks_pod *placed[64];
    uint32_t nplaced = 0, seq = 0;

    for (int step = 0; step < 120; step++) {
        uint32_t op = rnd(10);
        if (op < 5 && nplaced < 64) {
            char name[16];
            snprintf(name, sizeof(name), "x-%u", seq++);
            struct ks_pod *p = mk_pod(rnd(4) ? "default" : "other", name, plabels[rnd(5)]);
            p->node_name = ks_intern(names[rnd(MAXN)]);
            if (ks_cache_add_pod(t.e.cache, ks_pod_get(p), p->node_name) == 0)
                placed[nplaced++] = p;
            else
                ks_pod_put(p), ks_pod_put(p);
        } else if (op < 8 && nplaced) {
            uint32_t k = rnd(nplaced);
            ks_cache_remove_pod(t.e.cache, placed[k]);
            ks_pod_put(placed[k]);
            placed[k] = placed[--nplaced];
        } else if (op == 8) {
            /* relabel a node: another zone, with or without the foo label */
            uint32_t k = rnd(MAXN);
            char l[128];
            snprintf(l, sizeof(l), "zone=%s,node=%s,kubernetes.io/hostname=%s%s", zones[rnd(3)], names[k],
                     names[k], rnd(2) ? ",foo=" : "");
            struct ks_node *n = ks_fake_node(names[k], l);
            if (ks_cache_update_node(t.e.cache, n) < 0)
                ks_node_destroy(n); /* the node is away */
        } else {
            /* a node leaves and comes back */
            uint32_t k = rnd(MAXN);
            if (ks_cache_remove_node(t.e.cache, ks_intern(names[k])) < 0 || rnd(2)) {
                cr_assert(ge(int, ks_cache_refresh(t.e.cache), 0));
                struct ks_node *n = ks_fake_node(names[k], labels[k]);
                if (ks_cache_add_node(t.e.cache, n) < 0)
                    ks_node_destroy(n); /* it was still there */
            }
        }
        cr_assert(ge(int, ks_cache_refresh(t.e.cache), 0));
        cr_assert(eq(int, pts->init(&in, &t.fresh, &err), 0));
        for (uint32_t i = 0; i < npods; i++)
            compare_twins(&t, pods[(i + (uint32_t)step) % npods], step);
        pts->destroy(t.fresh);
    }
    for (uint32_t i = 0; i < nplaced; i++)
        ks_pod_put(placed[i]);
    for (uint32_t i = 0; i < npods; i++)
        ks_pod_put(pods[i]);
    env_free(&t.e);
}

/* More distinct queries than the counter keeps: entries are replaced, answers stay right. */
Test(podtopologyspread, counter_replaces_least_recently_used)
{
    struct twin t;
    struct ks_podtopologyspread_args a = {.defaulting = KS_SPREAD_DEFAULTING_LIST};
    env_init(&t.e, (struct tnode[]){NODES4, {0}},
             (struct tpod[]){P("p-a1", "node-a", "k=1"),
                             P("p-b1", "node-b", "k=2"),
                             P("p-x1", "node-x", "k=3"),
                             P("p-y1", "node-y", "k=1"),
                             {0}},
             NULL, &a);
    struct ks_error err = {0};
    struct ks_plugin_init in = {.args = &a, .slot = 0, .framework = t.e.fw};
    cr_assert(eq(int, pts->init(&in, &t.fresh, &err), 0));
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 12; k++) {
            char sel[16];
            snprintf(sel, sizeof(sel), "k=%d", k % 4);
            struct ks_pod *pod =
                incoming(&(struct tincoming){"", .c = {{1, k % 2 ? "zone" : "node", DNS, sel}}});
            compare_twins(&t, pod, round * 12 + k);
            ks_pod_put(pod);
        }
    }
    pts->destroy(t.fresh);
    env_free(&t.e);
}

/*
 * A new workload's selector matches no pod when first counted: the counter starts its
 * entry with nothing counted, on the layout of the entries that count the nodes alike
 * (same keys, policies, node selector), and later cycles recount the nodes its pods land
 * on from the layout's log. Each step compares with an instance that counts everything
 * afresh.
 */
Test(podtopologyspread, counter_starts_new_selectors_empty)
{
    static const char *const zones[] = {"zone1", "zone2", "zone3"};
    struct tnode nodes[MAXN + 1] = {{0}};
    char names[MAXN][16], labels[MAXN][128];
    for (int i = 0; i < MAXN; i++) {
        snprintf(names[i], sizeof(names[i]), "node-%d", i);
        snprintf(labels[i], sizeof(labels[i]), "zone=%s,kubernetes.io/hostname=%s%s", zones[i % 3], names[i],
                 i % 2 ? ",foo=" : "");
        nodes[i] = (struct tnode){names[i], labels[i], NULL};
    }
    struct twin t;
    env_init(&t.e, nodes, NULL, NULL, NULL);
    struct ks_error err = {0};
    struct ks_plugin_init in = {.slot = 0, .framework = t.e.fw};
    struct ks_pod *placed[64];
    uint32_t nplaced = 0;

    for (int w = 0; w < 16; w++) {
        char app[16], sel[16];
        snprintf(app, sizeof(app), "app=d%d", w);
        snprintf(sel, sizeof(sel), "app=d%d", w);
        /* every third workload's pods ask for foo nodes: a layout of their own (affinity honoured) */
        struct ks_pod *pod = incoming(&(struct tincoming){
            app, .node_selector = w % 3 == 2 ? "foo=" : NULL,
            .c = {{1, "kubernetes.io/hostname", SA, sel}, {2, "zone", SA, sel}, {1, "zone", DNS, sel}}});
        for (int round = 0; round < 3; round++) {
            cr_assert(eq(int, pts->init(&in, &t.fresh, &err), 0));
            compare_twins(&t, pod, w * 3 + round);
            pts->destroy(t.fresh);
            /* two pods of the workload land */
            for (int k = 0; k < 2 && nplaced < 64; k++) {
                char name[16];
                snprintf(name, sizeof(name), "d%d-%d-%d", w, round, k);
                struct ks_pod *p = mk_pod("default", name, app);
                p->node_name = ks_intern(names[rnd(MAXN)]);
                cr_assert(eq(int, ks_cache_add_pod(t.e.cache, ks_pod_get(p), p->node_name), 0));
                placed[nplaced++] = p;
            }
            cr_assert(ge(int, ks_cache_refresh(t.e.cache), 0));
        }
        ks_pod_put(pod);
    }
    for (uint32_t i = 0; i < nplaced; i++)
        ks_pod_put(placed[i]);
    env_free(&t.e);
}

/* AddPod on a cloned state leaves the original alone (preemption's dry runs). */
Test(podtopologyspread, state_clone_is_independent)
{
    struct env e;
    struct ks_podtopologyspread_args a = {.defaulting = KS_SPREAD_DEFAULTING_LIST};
    env_init(&e, (struct tnode[]){NODES4, {0}}, (struct tpod[]){P("p-a1", "node-a", "foo="), {0}}, NULL, &a);
    struct ks_pod *pod = incoming(&(struct tincoming){"foo=", .c = {ZONE_FOO}});
    struct ks_pod *other = mk_pod(NULL, "new", "foo=");
    struct ks_cycle_state cs, copy;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    fx_cs_init(&copy);
    cr_assert(eq(int, pre_filter(&e, &cs, pod), KS_SUCCESS));
    void *clone = NULL;
    cr_assert(eq(int, pts->state_clone(e.self, cs.slot[0], &copy.arena, &clone), 0));
    copy.slot[0] = clone;
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e.cache);
    const struct ks_node_snap *x = ks_snapshot_find(snap, ks_intern("node-x"));
    for (int i = 0; i < 3; i++)
        cr_assert(eq(int, pts->add_pod(e.self, &copy, pod, other, x, &st), KS_SUCCESS));
    /* node-x now holds 3 matching pods in the copy: 3 + 1 - 1 > 1 */
    cr_expect(eq(int, pts->filter(e.self, &copy, pod, x, &st), KS_UNSCHEDULABLE));
    cr_expect(eq(int, pts->filter(e.self, &cs, pod, x, &st), KS_SUCCESS));
    cr_assert(eq(int, pts->remove_pod(e.self, &copy, pod, other, x, &st), KS_SUCCESS));
    ks_rcu_read_unlock();
    expect_state(&cs, &(struct twant){{"zone1=1,zone2=0"}, {"zone2=0,zone1=1"}}, "original");
    expect_state(&copy, &(struct twant){{"zone1=1,zone2=2"}, {"zone1=1,zone2=2"}}, "copy");
    fx_cs_free(&copy);
    fx_cs_free(&cs);
    ks_pod_put(other);
    ks_pod_put(pod);
    env_free(&e);
}

/* ---- DefaultSelector ---------------------------------------------------------------------------- */

/* The requirements of @sel as sorted "key=value" pairs (In with one value) or "key:op". */
static void selector_string(const struct ks_label_selector *sel, char *out, size_t len)
{
    char items[8][64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < sel->nreqs && n < 8; i++) {
        const struct ks_requirement *r = &sel->reqs[i];
        if (r->op == KS_OP_IN && r->nvalues == 1)
            snprintf(items[n++], 64, "%s=%s", ks_intern_str(r->key), ks_intern_str(r->values[0]));
        else
            snprintf(items[n++], 64, "%s:%s", ks_intern_str(r->key), ks_selector_op_name(r->op));
    }
    qsort(items, n, sizeof(items[0]), (int (*)(const void *, const void *))strcmp);
    size_t off = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(out + off, len - off, "%s%s", i ? "," : "", items[i]);
}

Test(podtopologyspread, default_selector)
{
    static const struct {
        const char *name;
        struct tincoming pod;
        struct tobj objs[MAXO];
        const char *want;
    } cases[] = {
        {"no workloads", {"app=web"}, {{0}}, ""},
        {"services that select the pod are merged",
         {"app=web,tier=front,x=y"},
         {{"Service", "a", "app=web"}, {"Service", "b", "tier=front"}, {"Service", "c", "app=db"}},
         "app=web,tier=front"},
        {"services of other namespaces do not count",
         {"app=web"},
         {{"Service", "a", "app=web", "other"}},
         ""},
        {"a service without selector selects nothing, an empty one everything",
         {"app=web"},
         {{"Service", "nil", NULL}, {"Service", "empty", ""}},
         ""},
        {"the controlling replication controller wins on conflicts",
         {"app=web", .owner = "ReplicationController/rc"},
         {{"Service", "a", "app=web"}, {"ReplicationController", "rc", "app=other,v=1"}},
         "app=other,v=1"},
        {"replica set requirements are added",
         {"app=web", .owner = "ReplicaSet/rs"},
         {{"Service", "a", "app=web"}, {"ReplicaSet", "rs", "app in (web,db),!legacy"}},
         "app:In,app=web,legacy:DoesNotExist"},
        {"stateful set requirements are added",
         {"app=db", .owner = "StatefulSet/db"},
         {{"StatefulSet", "db", "app=db"}},
         "app=db"},
        {"an owner that is not loaded adds nothing",
         {"app=db", .owner = "StatefulSet/missing"},
         {{"StatefulSet", "db", "app=db"}},
         ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_objects objs = {0};
        struct ks_arena arena = {0};
        for (int k = 0; k < MAXO && cases[i].objs[k].kind; k++)
            add_object(&objs, &cases[i].objs[k]);
        struct ks_pod *pod = incoming(&cases[i].pod);
        /* by scanning the objects, and through their index */
        struct ks_spread_owners *owners;
        cr_assert(eq(int, ks_spread_owners_create(&owners), 0));
        const struct ks_spread_owners *ix[2] = {NULL, ks_spread_owners_sync(owners, &objs)};
        cr_assert(ix[1] != NULL);
        for (int k = 0; k < 2; k++) {
            const struct ks_label_selector *sel = NULL;
            char got[256];
            cr_assert(eq(int, ks_spread_default_selector(&objs, ix[k], pod, &arena, &sel), 0));
            cr_assert(sel != NULL);
            selector_string(sel, got, sizeof(got));
            cr_expect(eq(str, got, (char *)cases[i].want), "%s (%s)", cases[i].name, k ? "index" : "scan");
            cr_expect(eq(int, ks_spread_default_selects(&objs, ix[k], pod), sel->nreqs > 0), "%s",
                      cases[i].name);
        }
        ks_spread_owners_destroy(owners);
        ks_arena_destroy(&arena);
        ks_pod_put(pod);
        free_objects(&objs);
    }
}

/* The index of workloads follows changes to the objects (their generations), and finds the first of a name.
 */
Test(podtopologyspread, default_selector_index_follows_changes)
{
    struct ks_objects objs = {0};
    struct ks_arena arena = {0};
    struct ks_spread_owners *owners;
    const struct ks_label_selector *sel;
    char got[256];

    cr_assert(eq(int, ks_spread_owners_create(&owners), 0));
    add_object(&objs, &(struct tobj){"ReplicaSet", "a", "app=a"});
    struct ks_pod *pod = incoming(&(struct tincoming){"app=b,tier=x", .owner = "ReplicaSet/b"});
    const struct ks_spread_owners *ix = ks_spread_owners_sync(owners, &objs);
    cr_assert(eq(int, ks_spread_default_selector(&objs, ix, pod, &arena, &sel), 0));
    cr_expect(eq(u32, sel->nreqs, 0), "no ReplicaSet b yet");
    /* b and a Service arrive: the index is stale until synced again */
    add_object(&objs, &(struct tobj){"ReplicaSet", "b", "app=b"});
    add_object(&objs, &(struct tobj){"ReplicaSet", "b", "app=other"}); /* a second of the name: not found */
    add_object(&objs, &(struct tobj){"Service", "s", "tier=x"});
    objs.gen[KS_KIND_REPLICA_SET]++;
    objs.gen[KS_KIND_SERVICE]++;
    cr_expect(ks_spread_owners_current(owners, &objs) == NULL);
    ix = ks_spread_owners_sync(owners, &objs);
    cr_assert(ix == ks_spread_owners_current(owners, &objs));
    cr_assert(eq(int, ks_spread_default_selector(&objs, ix, pod, &arena, &sel), 0));
    selector_string(sel, got, sizeof(got));
    cr_expect(eq(str, got, "app=b,tier=x"));
    cr_expect(ks_spread_default_selects(&objs, ix, pod));
    ks_spread_owners_destroy(owners);
    ks_arena_destroy(&arena);
    ks_pod_put(pod);
    free_objects(&objs);
}

/* Owner references name controllers by apiVersion and kind exactly as upstream's GroupVersionKind. */
Test(podtopologyspread, default_selector_owner_versions)
{
    static const struct {
        const char *api_version, *kind;
        bool controller, selects;
    } cases[] = {
        {"apps/v1", "ReplicaSet", true, true},    {"apps/v1beta2", "ReplicaSet", true, false},
        {"v1", "ReplicaSet", true, false},        {"apps/v1", "ReplicaSet", false, false},
        {"apps/v1/x", "ReplicaSet", true, false}, {"extensions/v1beta1", "ReplicaSet", true, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_objects objs = {0};
        struct ks_arena arena = {0};
        add_object(&objs, &(struct tobj){"ReplicaSet", "rs", "app=web"});
        struct ks_pod *pod = incoming(&(struct tincoming){"app=web"});
        struct ks_owner_ref o = {.api_version = cases[i].api_version,
                                 .kind = cases[i].kind,
                                 .name = "rs",
                                 .controller = cases[i].controller};
        pod->meta.owners = &o;
        pod->meta.nowners = 1;
        const struct ks_label_selector *sel = NULL;
        cr_assert(eq(int, ks_spread_default_selector(&objs, NULL, pod, &arena, &sel), 0));
        cr_expect(eq(u32, sel->nreqs, cases[i].selects ? 1u : 0u), "%s %s controller=%d",
                  cases[i].api_version, cases[i].kind, cases[i].controller);
        pod->meta.owners = NULL;
        pod->meta.nowners = 0;
        ks_arena_destroy(&arena);
        ks_pod_put(pod);
        free_objects(&objs);
    }
}

/* ---- args and defaults ------------------------------------------------------------------------------- */

static int parse_args(const char *yaml, struct ks_podtopologyspread_args **out, struct ks_error *err)
{
    struct ks_yaml_stream *s = NULL;
    cr_assert(eq(int, ks_yaml_parse("args.yaml", yaml, strlen(yaml), &s, err), 0), "%s", err->msg);
    int rc = pts->args_parse(s->docs[0], "kubescheduler.config.k8s.io/v1", "args.yaml", (void **)out, err);
    ks_yaml_stream_destroy(s);
    return rc;
}

Test(podtopologyspread, args_defaults_and_validation)
{
    struct ks_podtopologyspread_args *a = NULL;
    struct ks_error err = {0};
    cr_assert(eq(int, pts->args_parse(NULL, "kubescheduler.config.k8s.io/v1", NULL, (void **)&a, &err), 0));
    cr_expect(eq(int, a->defaulting, KS_SPREAD_DEFAULTING_SYSTEM));
    cr_expect(eq(u32, a->nconstraints, 0));
    pts->args_destroy(a);

    cr_assert(
        eq(int,
           parse_args("defaultingType: List\ndefaultConstraints:\n"
                      "- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n",
                      &a, &err),
           0),
        "%s", err.msg);
    cr_expect(eq(int, a->defaulting, KS_SPREAD_DEFAULTING_LIST));
    cr_expect(eq(u32, a->nconstraints, 1));
    cr_expect(eq(int, a->default_constraints[0].when_unsatisfiable, KS_SCHEDULE_ANYWAY));
    pts->args_destroy(a);

    static const struct {
        const char *yaml, *field, *msg;
    } bad[] = {
        {"defaultingType: Cluster\n", "defaultingType", "Unsupported value: \"Cluster\""},
        {"defaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
         "defaultingType", "when .defaultConstraints are not empty"},
        {"defaultingType: List\ndefaultConstraints:\n- {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
         "DoNotSchedule}\n",
         "defaultConstraints[0].maxSkew", "not in valid range"},
        {"defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
         "DoNotSchedule, labelSelector: {matchLabels: {a: b}}}\n",
         "defaultConstraints[0].labelSelector", "must not define a selector"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ks_error e2 = {0};
        a = NULL;
        cr_expect(eq(int, parse_args(bad[i].yaml, &a, &e2), -EINVAL), "%s", bad[i].yaml);
        cr_expect(strstr(e2.field, bad[i].field) != NULL, "%s: field %s", bad[i].yaml, e2.field);
        cr_expect(strstr(e2.msg, bad[i].msg) != NULL, "%s: %s", bad[i].yaml, e2.msg);
        pts->args_destroy(a);
    }
}

/* System defaulting: hostname maxSkew 3 then zone maxSkew 5, ScheduleAnyway, for selected pods only. */
Test(podtopologyspread, system_default_constraints)
{
    struct env e;
    env_init(&e,
             (struct tnode[]){{"node-a", HN("node-a") ",topology.kubernetes.io/zone=z1"},
                              {"node-b", HN("node-b") ",topology.kubernetes.io/zone=z2"},
                              {0}},
             (struct tpod[]){P("p-a1", "node-a", "app=web"), {0}},
             (struct tobj[]){{"Service", "web", "app=web"}, {0}}, NULL);
    struct ks_pod *web = incoming(&(struct tincoming){"app=web"});
    struct ks_pod *plain = incoming(&(struct tincoming){"app=db"});
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    cr_expect(eq(int, pre_filter(&e, &cs, web), KS_SKIP), "system defaults are all ScheduleAnyway");
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(e.cache);
    const struct ks_node_snap *nodes[2] = {ks_snapshot_node(snap, 0), ks_snapshot_node(snap, 1)};
    cr_assert(eq(int, pts->pre_score(e.self, &cs, web, nodes, 2, &st), KS_SUCCESS));
    const struct ks_pts_score_state *s = ((struct ks_pts_cycle *)cs.slot[0])->score;
    cr_assert(eq(u32, s->n, 2));
    cr_expect(eq(str, (char *)ks_intern_str(s->cons[0].topology_key), HOSTNAME));
    cr_expect(eq(i32, s->cons[0].max_skew, 3));
    cr_expect(eq(str, (char *)ks_intern_str(s->cons[1].topology_key), "topology.kubernetes.io/zone"));
    cr_expect(eq(i32, s->cons[1].max_skew, 5));
    cr_expect(not(s->require_all));
    fx_cs_free(&cs);
    fx_cs_init(&cs);
    cr_expect(eq(int, pts->pre_score(e.self, &cs, plain, nodes, 2, &st), KS_SKIP), "nothing selects the pod");
    ks_rcu_read_unlock();
    fx_cs_free(&cs);
    ks_pod_put(web);
    ks_pod_put(plain);
    env_free(&e);
}

/* topologyNormalizingWeight uses Go's math.Log, which differs from the C library's log(3) in the last bit. */
Test(podtopologyspread, go_log)
{
    cr_expect(eq(dbl, ks_spread_log(1), 0.0));
    cr_expect(eq(dbl, ks_spread_log(2), 0.6931471805599453));
    cr_expect(eq(dbl, ks_spread_log(3), 1.0986122886681096));
    for (int n = 2; n < 60000; n += 7) {
        double g = ks_spread_log(n), c = log(n);
        cr_assert(g == c || g == nextafter(c, 0) || g == nextafter(c, 100), "log(%d): %.17g vs %.17g", n, g,
                  c);
    }
}

/* ---- counts over many snapshot chunks ------------------------------------------------------------ */

/* PreFilter's counts for @pod (one constraint) must be @want exactly. */
static void expect_prefilter_counts(struct env *e, const struct ks_pod *pod, const char *want,
                                    const char *what)
{
    struct ks_cycle_state cs;
    fx_cs_init(&cs);
    cr_assert(eq(int, pre_filter(e, &cs, pod), KS_SUCCESS), "%s", what);
    const struct ks_pts_cycle *c = cs.slot[0];
    cr_assert(c && c->filter && c->filter->n == 1, "%s", what);
    expect_counts(&c->filter->counts[0], want, what);
    fx_cs_free(&cs);
}

/*
 * 800 nodes (four chunks of the snapshot): after one assume, forget or node update the
 * counter walks only the chunk that changed (plugins/helpers/helper_node_memo.c), and the counts
 * must follow every change (never the stale value of the skipped chunks).
 */
Test(podtopologyspread, counts_follow_changes_in_one_chunk_of_many)
{
    struct env e;
    env_init(&e, (struct tnode[]){{0}}, NULL, NULL, NULL);
    char name[32], labels[96];
    for (int i = 0; i < 800; i++) {
        snprintf(name, sizeof(name), "m-%d", i);
        snprintf(labels, sizeof(labels), "zone=z%d,node=%s", i % 4, name);
        cr_assert(eq(int, ks_cache_add_node(e.cache, ks_fake_node(name, labels)), 0));
    }
    struct ks_pod *bound = mk_pod("default", "bound", "foo=");
    cr_assert(eq(int, ks_cache_add_pod(e.cache, bound, ks_intern("m-10")), 0));
    cr_assert(ge(int, ks_cache_refresh(e.cache), 0));
    struct ks_pod *pod = incoming(&(struct tincoming){"foo=", .c = {{1, "zone", DNS, FOO}}});
    expect_prefilter_counts(&e, pod, "z0=0,z1=0,z2=1,z3=0", "initial");
    /* that PreFilter had the cache track the selector: m-10's record now carries its count */
    cr_assert(eq(int, ks_cache_refresh(e.cache), 1));
    expect_prefilter_counts(&e, pod, "z0=0,z1=0,z2=1,z3=0", "read from the records");

    /* assume a matching pod on m-601 (zone z1, chunk 2) */
    struct ks_pod *assumed = mk_pod("default", "assumed", "foo=");
    cr_assert(eq(int, ks_cache_assume_pod(e.cache, assumed, ks_intern("m-601")), 0));
    cr_assert(eq(int, ks_cache_refresh(e.cache), 1));
    expect_prefilter_counts(&e, pod, "z0=0,z1=1,z2=1,z3=0", "after assume");

    /* forget it: back to zero, not the count of the assumed version */
    cr_assert(eq(int, ks_cache_forget_pod(e.cache, assumed), 0));
    cr_assert(eq(int, ks_cache_refresh(e.cache), 1));
    expect_prefilter_counts(&e, pod, "z0=0,z1=0,z2=1,z3=0", "after forget");

    /* the node with the bound pod moves to a new zone: the pod's count moves with it */
    cr_assert(eq(int, ks_cache_update_node(e.cache, ks_fake_node("m-10", "zone=zq,node=m-10")), 0));
    cr_assert(eq(int, ks_cache_refresh(e.cache), 1));
    expect_prefilter_counts(&e, pod, "z0=0,z1=0,z2=0,z3=0,zq=1", "after node update");

    /* it loses the zone label: out of the counts (PreFilter requires every key) */
    cr_assert(eq(int, ks_cache_update_node(e.cache, ks_fake_node("m-10", "node=m-10")), 0));
    cr_assert(eq(int, ks_cache_refresh(e.cache), 1));
    expect_prefilter_counts(&e, pod, "z0=0,z1=0,z2=0,z3=0", "after label removal");

    /* a pod bound far away, then a node leaves (the order is relisted) */
    struct ks_pod *far = mk_pod("default", "far", "foo=");
    cr_assert(eq(int, ks_cache_add_pod(e.cache, far, ks_intern("m-799")), 0));
    cr_assert(eq(int, ks_cache_remove_node(e.cache, ks_intern("m-0")), 0));
    cr_assert(ge(int, ks_cache_refresh(e.cache), 0));
    expect_prefilter_counts(&e, pod, "z0=0,z1=0,z2=0,z3=1", "after node removal");

    ks_pod_put(assumed);
    ks_pod_put(pod);
    env_free(&e);
}
