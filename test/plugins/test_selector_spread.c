/*
 * test_selector_spread.c - the SelectorSpread plugin (plugins/selector_spread.c).
 *
 * Cases from upstream's selectorspread/selector_spread_test.go (Kubernetes 1.26):
 * TestSelectorSpreadScore and TestZoneSelectorSpreadPriority, run as upstream runs them
 * (PreScore, Score on every node, NormalizeScore). Upstream's fixtures leave some pods
 * and the pod being scheduled without a namespace, where its listers then read every
 * namespace; here those pods live in namespace "none" and the Services they would have
 * found there, which keeps every decision the same.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/loader.h"
#include "ksched/plugin_helpers_spread.h"
#include "ksched/registry.h"
#include "plugin_fixtures.h"

/* The case tables leave trailing fields of their rows out (zero: unset). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static void setup(void)
{
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

TestSuite(selectorspread, .init = setup, .fini = teardown);

static const struct ks_plugin *const ss = &ks_plugin_selector_spread;

#define MAXN 6
#define MAXP 6
#define MAXO 3

#define L1 "foo=bar,baz=blah"
#define L2 "bar=foo,baz=blah"

struct spod {
    const char *node; /* NULL: the pod being scheduled */
    const char *labels;
    const char *ns;    /* NULL: "default" */
    const char *owner; /* "Kind/name" of the controller, NULL for none */
    bool spread;       /* has a topology spread constraint of its own */
};

/* Workloads: kind "Service", "ReplicationController", "ReplicaSet", "StatefulSet". */
struct sobj {
    const char *kind, *name, *selector, *ns;
};

struct ss_case {
    const char *name;
    struct spod pod;
    struct spod pods[MAXP];
    struct sobj objs[MAXO];
    int64_t want[MAXN]; /* per node, in node order */
};

static struct ks_pod *mk_pod(const struct spod *s, const char *name)
{
    struct ks_pod *p = ks_fake_pod(s->ns ? s->ns : "default", name);
    ks_fake_pod_labels(p, s->labels);
    if (s->owner) {
        const char *slash = strchr(s->owner, '/');
        struct ks_owner_ref *o = fx_must(ks_arena_calloc(&p->arena, 1, sizeof(*o)));
        o->kind = ks_arena_strndup(&p->arena, s->owner, (size_t)(slash - s->owner));
        o->name = slash + 1;
        o->api_version = strcmp(o->kind, "ReplicationController") == 0 ? "v1" : "apps/v1";
        o->controller = true;
        p->meta.owners = o;
        p->meta.nowners = 1;
    }
    if (s->spread) {
        p->spread = fx_must(ks_arena_calloc(&p->arena, 1, sizeof(*p->spread)));
        p->spread[0] = (struct ks_spread_constraint){
            .max_skew = 1, .topology_key = ks_intern("foo"), .when_unsatisfiable = KS_DO_NOT_SCHEDULE};
        p->nspread = 1;
    }
    if (s->node)
        p->node_name = ks_intern(s->node);
    return fx_done(p);
}

static void add_object(struct ks_objects *o, const struct sobj *t)
{
    enum ks_kind kind;
    void *obj;
    struct ks_object_meta *meta;
    if (strcmp(t->kind, "Service") == 0) {
        struct ks_service *s = fx_must(calloc(1, sizeof(*s)));
        s->has_selector = true;
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

/* PreScore, Score on each node and NormalizeScore over @nodes (names) labelled @labels. */
static void run_case(const struct ss_case *c, const char *const *names, const char *const *labels, uint32_t n)
{
    struct ks_objects objs = {0};
    struct ks_config *cfg = NULL;
    struct ks_framework *fw = NULL;
    struct ks_error err = {0};
    for (int i = 0; i < MAXO && c->objs[i].kind; i++)
        add_object(&objs, &c->objs[i]);
    cr_assert(eq(int, ks_config_load_default(&cfg), 0));
    struct ks_framework_deps deps = {.objects = &objs};
    cr_assert(eq(int, ks_framework_create(&cfg->profiles[0], &deps, &fw, &err), 0), "%s", err.msg);
    struct ks_plugin_init in = {.slot = 0, .framework = fw};
    void *self = NULL;
    cr_assert(eq(int, ss->init(&in, &self, &err), 0));

    struct ks_pod *existing[MAXP] = {0};
    uint32_t np = 0;
    for (; np < MAXP && c->pods[np].node; np++) {
        char name[16];
        snprintf(name, sizeof(name), "p%u", np);
        existing[np] = mk_pod(&c->pods[np], name);
    }
    struct ks_node *nodes[MAXN];
    struct ks_node_snap *snaps[MAXN];
    for (uint32_t i = 0; i < n; i++) {
        struct ks_pod *on[MAXP];
        uint32_t k = 0;
        nodes[i] = ks_fake_node(names[i], labels ? labels[i] : "");
        for (uint32_t j = 0; j < np; j++) {
            if (strcmp(c->pods[j].node, names[i]) == 0)
                on[k++] = existing[j];
        }
        snaps[i] = fx_snap(nodes[i], on, k);
    }
    struct ks_pod *pod = mk_pod(&c->pod, "pod");
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    int64_t scores[MAXN];
    fx_cs_init(&cs);
    cr_assert(eq(int, ss->pre_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, n, &st),
                 KS_SUCCESS));
    for (uint32_t i = 0; i < n; i++)
        cr_assert(eq(int, ss->score(self, &cs, pod, snaps[i], &scores[i], &st), KS_SUCCESS), "%s", c->name);
    cr_assert(eq(
        int, ss->normalize_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, scores, n, &st),
        KS_SUCCESS));
    for (uint32_t i = 0; i < n; i++)
        cr_expect(eq(i64, scores[i], c->want[i]), "%s: %s", c->name, names[i]);

    fx_cs_free(&cs);
    for (uint32_t i = 0; i < n; i++) {
        fx_snap_free(snaps[i]);
        ks_node_destroy(nodes[i]);
    }
    for (uint32_t j = 0; j < np; j++)
        ks_pod_destroy(existing[j]);
    ks_pod_destroy(pod);
    ss->destroy(self);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
    free_objects(&objs);
}

/*
 * The same case through a real cache, twice: the first cycle has the cache track the
 * pod's selector and counts pods one by one; after a refresh the second reads the records'
 * counts (ks_spread_node_count). Both must score as upstream does.
 */
static void run_case_cached(const struct ss_case *c, const char *const *names, const char *const *labels,
                            uint32_t n)
{
    struct ks_objects objs = {0};
    struct ks_config *cfg = NULL;
    struct ks_framework *fw = NULL;
    struct ks_cache *cache = NULL;
    struct ks_error err = {0};
    for (int i = 0; i < MAXO && c->objs[i].kind; i++)
        add_object(&objs, &c->objs[i]);
    cr_assert(eq(int, ks_config_load_default(&cfg), 0));
    cr_assert(eq(int, ks_cache_create(&cache), 0));
    struct ks_framework_deps deps = {.objects = &objs, .cache = cache};
    cr_assert(eq(int, ks_framework_create(&cfg->profiles[0], &deps, &fw, &err), 0), "%s", err.msg);
    struct ks_plugin_init in = {.slot = 0, .framework = fw};
    void *self = NULL;
    cr_assert(eq(int, ss->init(&in, &self, &err), 0));
    for (uint32_t i = 0; i < n; i++)
        cr_assert(eq(int, ks_cache_add_node(cache, ks_fake_node(names[i], labels ? labels[i] : "")), 0));
    for (uint32_t j = 0; j < MAXP && c->pods[j].node; j++) {
        char name[16];
        snprintf(name, sizeof(name), "p%u", j);
        cr_assert(eq(int, ks_cache_add_pod(cache, mk_pod(&c->pods[j], name), ks_intern(c->pods[j].node)), 0));
    }
    struct ks_pod *pod = mk_pod(&c->pod, "pod");
    for (int cycle = 0; cycle < 2; cycle++) {
        cr_assert(ge(int, ks_cache_refresh(cache), 0));
        ks_rcu_read_lock();
        const struct ks_snapshot *snap = ks_cache_snapshot(cache);
        const struct ks_node_snap *snaps[MAXN];
        for (uint32_t i = 0; i < n; i++)
            snaps[i] = ks_snapshot_find(snap, ks_intern(names[i]));
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        int64_t scores[MAXN];
        fx_cs_init(&cs);
        cr_assert(eq(int, ss->pre_score(self, &cs, pod, snaps, n, &st), KS_SUCCESS));
        for (uint32_t i = 0; i < n; i++)
            cr_assert(eq(int, ss->score(self, &cs, pod, snaps[i], &scores[i], &st), KS_SUCCESS), "%s",
                      c->name);
        cr_assert(eq(int, ss->normalize_score(self, &cs, pod, snaps, scores, n, &st), KS_SUCCESS));
        for (uint32_t i = 0; i < n; i++)
            cr_expect(eq(i64, scores[i], c->want[i]), "%s: %s (cycle %d)", c->name, names[i], cycle);
        fx_cs_free(&cs);
        ks_rcu_read_unlock();
    }
    ks_pod_destroy(pod);
    ss->destroy(self);
    ks_framework_destroy(fw);
    ks_cache_destroy(cache);
    ks_config_destroy(cfg);
    free_objects(&objs);
}

static const struct ss_case spread_cases[] = {
    {"nothing scheduled", {NULL, "", "none"}, {{0}}, {{0}}, {100, 100}},
    {"no services", {NULL, L1, "none"}, {{"node1", "", "none"}}, {{0}}, {100, 100}},
    {"different services",
     {NULL, L1, "none"},
     {{"node1", L2, "none"}},
     {{"Service", "s1", "key=value", "none"}},
     {100, 100}},
    {"two pods, one service pod",
     {NULL, L1, "none"},
     {{"node1", L2, "none"}, {"node2", L1, "none"}},
     {{"Service", "s1", L1, "none"}},
     {100, 0}},
    {"five pods, one service pod in no namespace",
     {NULL, L1, "none"},
     {{"node1", L2, "none"},
      {"node1", L1},
      {"node1", L1, "ns1"},
      {"node2", L1, "none"},
      {"node2", L2, "none"}},
     {{"Service", "s1", L1, "none"}},
     {100, 0}},
    {"four pods, one service pod in default namespace",
     {NULL, L1},
     {{"node1", L1, "none"}, {"node1", L1, "ns1"}, {"node2", L1}, {"node2", L2, "none"}},
     {{"Service", "s1", L1}},
     {100, 0}},
    {"five pods, one service pod in specific namespace",
     {NULL, L1, "ns1"},
     {{"node1", L2, "none"},
      {"node1", L1},
      {"node1", L1, "ns2"},
      {"node2", L1, "ns1"},
      {"node2", L2, "none"}},
     {{"Service", "s1", L1, "ns1"}},
     {100, 0}},
    {"three pods, two service pods on different nodes",
     {NULL, L1, "none"},
     {{"node1", L2, "none"}, {"node1", L1, "none"}, {"node2", L1, "none"}},
     {{"Service", "s1", L1, "none"}},
     {0, 0}},
    {"four pods, three service pods",
     {NULL, L1, "none"},
     {{"node1", L2, "none"}, {"node1", L1, "none"}, {"node2", L1, "none"}, {"node2", L1, "none"}},
     {{"Service", "s1", L1, "none"}},
     {50, 0}},
    {"service with partial pod label matches",
     {NULL, L1, "none"},
     {{"node1", L2, "none"}, {"node1", L1, "none"}, {"node2", L1, "none"}},
     {{"Service", "s1", "baz=blah", "none"}},
     {0, 50}},
    {"service with partial pod label matches with service and replication controller",
     {NULL, L1, NULL, "ReplicationController/rc1"},
     {{"node1", L2}, {"node1", L1}, {"node2", L1}},
     {{"ReplicationController", "rc1", "foo=bar"},
      {"ReplicationController", "rc2", "bar=foo"},
      {"Service", "s1", "baz=blah"}},
     {0, 0}},
    {"service with partial pod label matches with service and replica set",
     {NULL, L1, NULL, "ReplicaSet/rs1"},
     {{"node1", L2}, {"node1", L1}, {"node2", L1}},
     {{"Service", "s1", "baz=blah"}, {"ReplicaSet", "rs1", "foo=bar"}, {"ReplicaSet", "rs2", "bar=foo"}},
     {0, 0}},
    {"service with partial pod label matches with service and statefulset",
     {NULL, L1, NULL, "StatefulSet/ss1"},
     {{"node1", L2}, {"node1", L1}, {"node2", L1}},
     {{"Service", "s1", "baz=blah"}, {"StatefulSet", "ss1", "foo=bar"}, {"StatefulSet", "ss2", "bar=foo"}},
     {0, 0}},
    {"disjoined service and replication controller matches no pods",
     {NULL, "foo=bar,bar=foo", NULL, "ReplicationController/rc3"},
     {{"node1", L2, NULL, "ReplicationController/rc2"},
      {"node1", L1, NULL, "ReplicationController/rc1"},
      {"node2", L1, NULL, "ReplicationController/rc1"}},
     {{"ReplicationController", "rc3", "foo=bar"}, {"Service", "s1", "bar=foo"}},
     {100, 100}},
    {"disjoined service and replica set matches no pods",
     {NULL, "foo=bar,bar=foo", NULL, "ReplicaSet/rs3"},
     {{"node1", L2, NULL, "ReplicaSet/rs2"},
      {"node1", L1, NULL, "ReplicaSet/rs1"},
      {"node2", L1, NULL, "ReplicaSet/rs1"}},
     {{"Service", "s1", "bar=foo"}, {"ReplicaSet", "rs3", "foo=bar"}},
     {100, 100}},
    {"disjoined service and stateful set matches no pods",
     {NULL, "foo=bar,bar=foo", NULL, "StatefulSet/ss3"},
     {{"node1", L2, NULL, "StatefulSet/ss2"},
      {"node1", L1, NULL, "StatefulSet/ss1"},
      {"node2", L1, NULL, "StatefulSet/ss1"}},
     {{"Service", "s1", "bar=foo"}, {"StatefulSet", "ss3", "foo=bar"}},
     {100, 100}},
    {"Replication controller with partial pod label matches",
     {NULL, L1, NULL, "ReplicationController/rc1"},
     {{"node1", L2, NULL, "ReplicationController/rc2"},
      {"node1", L1, NULL, "ReplicationController/rc1"},
      {"node2", L1, NULL, "ReplicationController/rc1"}},
     {{"ReplicationController", "rc1", "foo=bar"}},
     {0, 0}},
    {"Replica set with partial pod label matches",
     {NULL, L1, NULL, "ReplicaSet/rs1"},
     {{"node1", L2, NULL, "ReplicaSet/rs2"},
      {"node1", L1, NULL, "ReplicaSet/rs1"},
      {"node2", L1, NULL, "ReplicaSet/rs1"}},
     {{"ReplicaSet", "rs1", "foo=bar"}},
     {0, 0}},
    {"StatefulSet with partial pod label matches",
     {NULL, L1, NULL, "StatefulSet/ss1"},
     {{"node1", L2, NULL, "StatefulSet/ss2"},
      {"node1", L1, NULL, "StatefulSet/ss1"},
      {"node2", L1, NULL, "StatefulSet/ss1"}},
     {{"StatefulSet", "ss1", "foo=bar"}},
     {0, 0}},
    {"Another replication controller with partial pod label matches",
     {NULL, L1, NULL, "ReplicationController/rc3"},
     {{"node1", L2, NULL, "ReplicationController/rc2"},
      {"node1", L1, NULL, "ReplicationController/rc1"},
      {"node2", L1, NULL, "ReplicationController/rc1"}},
     {{"ReplicationController", "rc3", "baz=blah"}},
     {0, 50}},
    {"Another replication set with partial pod label matches",
     {NULL, L1, NULL, "ReplicaSet/rs3"},
     {{"node1", L2, NULL, "ReplicaSet/rs2"},
      {"node1", L1, NULL, "ReplicaSet/rs1"},
      {"node2", L1, NULL, "ReplicaSet/rs1"}},
     {{"ReplicaSet", "rs3", "baz=blah"}},
     {0, 50}},
    {"Another stateful set with partial pod label matches",
     {NULL, L1, NULL, "StatefulSet/ss3"},
     {{"node1", L2, NULL, "StatefulSet/ss2"},
      {"node1", L1, NULL, "StatefulSet/ss1"},
      {"node2", L1, NULL, "StatefulSet/ss1"}},
     {{"StatefulSet", "ss3", "baz=blah"}},
     {0, 50}},
    {"Another statefulset with TopologySpreadConstraints set in pod",
     {NULL, L1, NULL, "StatefulSet/ss1", true},
     {{"node1", L2, NULL, "StatefulSet/ss2"},
      {"node1", L1, NULL, "StatefulSet/ss1"},
      {"node2", L1, NULL, "StatefulSet/ss1"}},
     {{"StatefulSet", "ss1", "baz=blah"}},
     {0, 0}},
};

Test(selectorspread, upstream_selector_spread_score)
{
    static const char *const names[] = {"node1", "node2"};
    for (size_t i = 0; i < sizeof(spread_cases) / sizeof(spread_cases[0]); i++) {
        run_case(&spread_cases[i], names, NULL, 2);
        run_case_cached(&spread_cases[i], names, NULL, 2);
    }
}

#define M1Z1 "node1.zone1"
#define M1Z2 "node1.zone2"
#define M2Z2 "node2.zone2"
#define M1Z3 "node1.zone3"
#define M2Z3 "node2.zone3"
#define M3Z3 "node3.zone3"
#define ZL1  "label1=l1,baz=blah"
#define ZL2  "label2=l2,baz=blah"

static const struct ss_case zone_cases[] = {
    {"nothing scheduled", {NULL, "", "none"}, {{0}}, {{0}}, {100, 100, 100, 100, 100, 100}},
    {"no services", {NULL, ZL1}, {{M1Z1, ""}}, {{0}}, {100, 100, 100, 100, 100, 100}},
    {"different services",
     {NULL, ZL1},
     {{M1Z1, ZL2}},
     {{"Service", "s1", "key=value"}},
     {100, 100, 100, 100, 100, 100}},
    {"two pods, 0 matching",
     {NULL, ZL1},
     {{M1Z1, ZL2}, {M1Z2, ZL2}},
     {{"Service", "s1", ZL1}},
     {100, 100, 100, 100, 100, 100}},
    {"two pods, 1 matching (in z2)",
     {NULL, ZL1},
     {{M1Z1, ZL2}, {M1Z2, ZL1}},
     {{"Service", "s1", ZL1}},
     {100, 0, 33, 100, 100, 100}},
    {"five pods, 3 matching (z2=2, z3=1)",
     {NULL, ZL1},
     {{M1Z1, ZL2}, {M1Z2, ZL1}, {M2Z2, ZL1}, {M1Z3, ZL2}, {M2Z3, ZL1}},
     {{"Service", "s1", ZL1}},
     {100, 0, 0, 66, 33, 66}},
    {"four pods, 3 matching (z1=1, z2=1, z3=1)",
     {NULL, ZL1},
     {{M1Z1, ZL1}, {M1Z2, ZL1}, {M2Z2, ZL2}, {M1Z3, ZL1}},
     {{"Service", "s1", ZL1}},
     {0, 0, 33, 0, 33, 33}},
    {"five pods, 4 matching (z1=1, z2=2, z3=1)",
     {NULL, ZL1},
     {{M1Z1, ZL1}, {M1Z2, ZL1}, {M2Z2, ZL1}, {M2Z2, ZL2}, {M1Z3, ZL1}},
     {{"Service", "s1", ZL1}},
     {33, 0, 0, 33, 66, 66}},
    {"Replication controller spreading (z1=0, z2=1, z3=2)",
     {NULL, ZL1, NULL, "ReplicationController/rc1"},
     {{M1Z3, ZL1}, {M1Z2, ZL1}, {M1Z3, ZL1}},
     {{"ReplicationController", "rc1", ZL1}},
     {100, 50, 66, 0, 33, 33}},
};

Test(selectorspread, upstream_zone_selector_spread_priority)
{
    static const char *const names[] = {M1Z1, M1Z2, M2Z2, M1Z3, M2Z3, M3Z3};
    static const char *const labels[] = {
        "topology.kubernetes.io/zone=zone1", "topology.kubernetes.io/zone=zone2",
        "topology.kubernetes.io/zone=zone2", "topology.kubernetes.io/zone=zone3",
        "topology.kubernetes.io/zone=zone3", "topology.kubernetes.io/zone=zone3",
    };
    for (size_t i = 0; i < sizeof(zone_cases) / sizeof(zone_cases[0]); i++) {
        run_case(&zone_cases[i], names, labels, 6);
        run_case_cached(&zone_cases[i], names, labels, 6);
    }
}

/* GetZoneKey reads the beta failure-domain labels first, and a region alone is a zone key. */
Test(selectorspread, zone_key_labels)
{
    struct {
        const char *labels;
        bool has;
        const char *region, *zone;
    } cases[] = {
        {"", false, "", ""},
        {"topology.kubernetes.io/zone=z1", true, "", "z1"},
        {"failure-domain.beta.kubernetes.io/zone=b1,topology.kubernetes.io/zone=z1", true, "", "b1"},
        {"topology.kubernetes.io/region=r1", true, "r1", ""},
        {"failure-domain.beta.kubernetes.io/region=br,topology.kubernetes.io/"
         "region=r1,topology.kubernetes.io/zone=z",
         true, "br", "z"},
        {"topology.kubernetes.io/zone=", false, "", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_node *n = ks_fake_node("n", cases[i].labels);
        uint32_t region, zone;
        cr_expect(eq(int, ks_spread_zone_key(n, &region, &zone), cases[i].has), "%s", cases[i].labels);
        cr_expect(eq(str, (char *)ks_intern_str(region), (char *)cases[i].region), "%s", cases[i].labels);
        cr_expect(eq(str, (char *)ks_intern_str(zone), (char *)cases[i].zone), "%s", cases[i].labels);
        ks_node_destroy(n);
    }
}

Test(selectorspread, score_without_pre_score_is_an_error)
{
    void *self = fx_init(ss, NULL);
    struct ks_pod *pod = fx_done(ks_fake_pod("default", "p"));
    struct ks_node *node = ks_fake_node("n", "");
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    int64_t score;
    fx_cs_init(&cs);
    cr_expect(eq(int, ss->score(self, &cs, pod, snap, &score, &st), KS_ERROR));
    cr_expect(
        eq(str, (char *)fx_reason(&st, 0), "reading \"PreScoreSelectorSpread\" from cycleState: not found"));
    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    ss->destroy(self);
}
