/*
 * test_image_locality.c - the ImageLocality plugin (plugins/image_locality.c).
 *
 * Cases from upstream's imagelocality/image_locality_test.go (TestImageLocalityPriority as
 * of the release that counts init containers, TestNormalizedImageName through Score).
 * Nodes go through the real cache, so the image summaries (how many nodes report each
 * name) and the snapshot's node count are the ones the plugin reads in a real cycle; the
 * plugin instance is made inside a framework whose deps hold that cache.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(imagelocality);

static const struct ks_plugin *const il = &ks_plugin_image_locality;

#define MB        (INT64_C(1024) * 1024)
#define MAX_IMGS  4
#define MAX_NAMES 3
#define MAX_NODES 3

struct image {
    const char *names[MAX_NAMES];
    int64_t size;
};

/* A node status: its images ({NULL} ends). */
struct status {
    struct image images[MAX_IMGS];
};

static struct ks_node *image_node(const char *name, const struct status *s)
{
    struct ks_node *node = ks_fake_node(name, "");
    uint32_t n = 0;
    while (n < MAX_IMGS && s->images[n].names[0])
        n++;
    node->images = fx_must(ks_arena_calloc(&node->arena, n ? n : 1, sizeof(*node->images)));
    node->nimages = n;
    for (uint32_t i = 0; i < n; i++) {
        struct ks_container_image *img = &node->images[i];
        uint32_t k = 0;
        while (k < MAX_NAMES && s->images[i].names[k])
            k++;
        img->names = fx_must(ks_arena_calloc(&node->arena, k, sizeof(*img->names)));
        for (uint32_t j = 0; j < k; j++)
            img->names[j] = ks_intern(s->images[i].names[j]);
        img->nnames = k;
        img->size_bytes = s->images[i].size;
    }
    return node;
}

/* A pod with containers and init containers of the given images (NULL ends each list). */
static struct ks_pod *image_pod(const char *const *containers, const char *const *inits)
{
    struct ks_pod *pod = ks_fake_pod("default", "pod");
    for (const char *const *c = containers; c && *c; c++)
        ks_fake_container(pod, NULL)->image = ks_intern(*c);
    for (const char *const *c = inits; c && *c; c++)
        ks_fake_init_container(pod, NULL, false)->image = ks_intern(*c);
    return fx_done(pod);
}

/* A cache with nodes, a default framework over it, and an ImageLocality instance in it. */
struct world {
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_framework *fw;
    void *self;
};

static void world_init(struct world *w)
{
    struct ks_error err = {0};
    cr_assert(eq(int, ks_cache_create(&w->cache), 0));
    cr_assert(eq(int, ks_config_load_default(&w->cfg), 0));
    struct ks_framework_deps deps = {.cache = w->cache};
    cr_assert(eq(int, ks_framework_create(&w->cfg->profiles[0], &deps, &w->fw, &err), 0), "%s", err.msg);
    struct ks_plugin_init in = {.slot = 0, .framework = w->fw};
    cr_assert(eq(int, il->init(&in, &w->self, &err), 0));
}

static void world_fini(struct world *w)
{
    il->destroy(w->self);
    ks_framework_destroy(w->fw);
    ks_config_destroy(w->cfg);
    ks_cache_destroy(w->cache);
}

/* Score @pod on node @name of the current snapshot. */
static int64_t score_on(struct world *w, const struct ks_pod *pod, const char *name)
{
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    int64_t score = -1;

    cr_assert(ge(int, ks_cache_refresh(w->cache), 0));
    fx_cs_init(&cs);
    ks_rcu_read_lock();
    const struct ks_node_snap *snap = ks_snapshot_find(ks_cache_snapshot(w->cache), ks_intern(name));
    cr_assert(ne(ptr, (void *)snap, NULL), "no node %s", name);
    int code = il->score(w->self, &cs, pod, snap, &score, &st);
    ks_rcu_read_unlock();
    cr_assert(eq(int, code, KS_SUCCESS), "%s", fx_reason(&st, 0));
    fx_cs_free(&cs);
    return score;
}

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

#define IMG(size, ...)                                                                                       \
    {                                                                                                        \
        {__VA_ARGS__}, (size)*MB                                                                             \
    }

static const struct status node403002000 = {{
    IMG(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    IMG(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    IMG(2000, "gcr.io/2000:latest"),
}};
static const struct status node25010 = {{
    IMG(250, "gcr.io/250:latest"),
    IMG(10, "gcr.io/10:latest", "gcr.io/10:v1"),
}};
static const struct status node60040900 = {{
    IMG(600, "gcr.io/600:latest"),
    IMG(40, "gcr.io/40:latest"),
    IMG(900, "gcr.io/900:latest"),
}};
static const struct status node300600900 = {{
    IMG(300, "gcr.io/300:latest"),
    IMG(600, "gcr.io/600:latest"),
    IMG(900, "gcr.io/900:latest"),
}};
static const struct status node400030 = {{
    IMG(4000, "gcr.io/4000:latest"),
    IMG(30, "gcr.io/30:latest"),
}};
static const struct status node203040 = {{
    IMG(20, "gcr.io/20:latest"),
    IMG(30, "gcr.io/30:latest"),
    IMG(40, "gcr.io/40:latest"),
}};
static const struct status no_images = {{{{NULL}, 0}}};

#define PODS(...) ((const char *const[]){__VA_ARGS__, NULL})

struct il_case {
    const char *name;
    const char *const *containers;
    const char *const *inits;
    const struct status *nodes[MAX_NODES];
    int64_t want[MAX_NODES];
};

Test(imagelocality, upstream_priority, .init = setup, .fini = teardown)
{
    const struct il_case cases[] = {
        {"two images spread on two nodes, prefer the larger image one",
         PODS("gcr.io/40", "gcr.io/250"),
         NULL,
         {&node403002000, &node25010},
         {0, 5}},
        {"two images on one node, prefer this node",
         PODS("gcr.io/40", "gcr.io/300"),
         NULL,
         {&node403002000, &node25010},
         {7, 0}},
        {"if exceed limit, use limit",
         PODS("gcr.io/10", "gcr.io/4000"),
         NULL,
         {&node400030, &node25010},
         {100, 0}},
        {"if exceed limit, use limit (with node which has no images present)",
         PODS("gcr.io/10", "gcr.io/4000"),
         NULL,
         {&node400030, &node25010, &no_images},
         {66, 0, 0}},
        {"pod with multiple large images, node2 is preferred",
         PODS("gcr.io/300", "gcr.io/600", "gcr.io/900"),
         NULL,
         {&node60040900, &node300600900, &no_images},
         {32, 36, 0}},
        {"pod with multiple small images",
         PODS("gcr.io/30", "gcr.io/40"),
         NULL,
         {&node203040, &node400030},
         {1, 0}},
        {"include InitContainers: two images spread on two nodes, prefer the larger image one",
         PODS("gcr.io/30"),
         PODS("gcr.io/300"),
         {&node403002000, &node203040},
         {6, 0}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct world w;
        world_init(&w);
        char names[MAX_NODES][16];
        uint32_t n = 0;
        for (; n < MAX_NODES && cases[c].nodes[n]; n++) {
            snprintf(names[n], sizeof(names[n]), "node%u", n + 1);
            cr_assert(eq(int, ks_cache_add_node(w.cache, image_node(names[n], cases[c].nodes[n])), 0));
        }
        struct ks_pod *pod = image_pod(cases[c].containers, cases[c].inits);
        for (uint32_t i = 0; i < n; i++)
            cr_expect(eq(i64, score_on(&w, pod, names[i]), cases[c].want[i]), "%s: %s", cases[c].name,
                      names[i]);
        ks_pod_destroy(pod);
        world_fini(&w);
    }
}

/*
 * TestNormalizedImageName through Score: one node holding one 500 MiB image under @reported;
 * a pod image @wanted matching it scores 100 * (500 - 23) / (1000 - 23) = 48.
 */
Test(imagelocality, normalized_image_names, .init = setup, .fini = teardown)
{
    static const struct {
        const char *wanted, *reported;
        int64_t want;
    } cases[] = {
        {"root", "root:latest", 48},                         /* add :latest postfix 1 */
        {"gcr.io:5000/root", "gcr.io:5000/root:latest", 48}, /* add :latest postfix 2 */
        {"root:tag", "root:tag", 48},                        /* keep it as is 1 */
        {"root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2",
         "root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2", 48}, /* keep 2 */
        {"root:tag", "root:tag:latest", 0},
        {"gcr.io:5000/root", "gcr.io:5000/root", 0}, /* node names are not normalized */
        {"", ":latest", 48},                         /* an image-less container, as upstream */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct world w;
        world_init(&w);
        struct status s = {{{{cases[c].reported}, 500 * MB}}};
        cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("n", &s)), 0));
        struct ks_pod *pod = image_pod(PODS(cases[c].wanted), NULL);
        cr_expect(eq(i64, score_on(&w, pod, "n"), cases[c].want), "%s vs %s", cases[c].wanted,
                  cases[c].reported);
        /* the memoised normalization answers the same the second time */
        cr_expect(eq(i64, score_on(&w, pod, "n"), cases[c].want), "%s again", cases[c].wanted);
        ks_pod_destroy(pod);
        world_fini(&w);
    }
}

/*
 * The total is the snapshot's node count, not the feasible nodes. numNodes is the count
 * taken when the node's own record was last rebuilt, as upstream's NodeInfo.Snapshot()
 * copies ImageStateSummary.NumNodes only for nodes whose generation moved: another node
 * gaining the image leaves an unchanged node's count stale.
 */
Test(imagelocality, spread_follows_the_snapshot, .init = setup, .fini = teardown)
{
    struct world w;
    world_init(&w);
    static const struct status big = {{IMG(3000, "app:v1")}};
    cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("a", &big)), 0));
    struct ks_pod *pod = image_pod(PODS("app:v1", "side:v1"), NULL);
    /* 1 of 1 nodes: 3000 MiB, clamped to 2000: 100 */
    cr_expect(eq(i64, score_on(&w, pod, "a"), 100));
    /* 1 of 4 nodes: 750 MiB: 100 * (750 - 23) / (2000 - 23) = 36 */
    cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("b", &no_images)), 0));
    cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("c", &no_images)), 0));
    cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("d", &no_images)), 0));
    cr_expect(eq(i64, score_on(&w, pod, "a"), 36));
    /* b now reports it too: b's new record counts 2 of 4 (1500 MiB: 74); a's record keeps 1 */
    cr_assert(eq(int, ks_cache_update_node(w.cache, image_node("b", &big)), 0));
    cr_expect(eq(i64, score_on(&w, pod, "b"), 74));
    cr_expect(eq(i64, score_on(&w, pod, "a"), 36));
    cr_expect(eq(i64, score_on(&w, pod, "c"), 0));
    /* once a's record is rebuilt it counts 2 as well */
    cr_assert(eq(int, ks_cache_update_node(w.cache, image_node("a", &big)), 0));
    cr_expect(eq(i64, score_on(&w, pod, "a"), 74));
    ks_pod_destroy(pod);
    world_fini(&w);
}

/* An untagged name nobody reports is remembered as absent only until new names are interned. */
Test(imagelocality, absent_names_are_looked_up_again, .init = setup, .fini = teardown)
{
    struct world w;
    world_init(&w);
    static const struct status other = {{IMG(500, "other:v1")}};
    cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("a", &other)), 0));
    struct ks_pod *pod = image_pod(PODS("brand-new-image"), NULL);
    cr_expect(eq(i64, score_on(&w, pod, "a"), 0));
    cr_expect(eq(i64, score_on(&w, pod, "a"), 0));
    /* a node now reports it: interning its name makes the memo look again */
    static const struct status fresh = {{IMG(500, "brand-new-image:latest")}};
    cr_assert(eq(int, ks_cache_add_node(w.cache, image_node("b", &fresh)), 0));
    /* 1 of 2 nodes: 250 MiB: 100 * (250 - 23) / (1000 - 23) = 23 */
    cr_expect(eq(i64, score_on(&w, pod, "b"), 23));
    ks_pod_destroy(pod);
    world_fini(&w);
}

Test(imagelocality, no_cache_is_an_error_only_when_an_image_is_found, .init = setup, .fini = teardown)
{
    void *self = fx_init(il, NULL);
    struct status s = {{IMG(500, "x:latest")}};
    struct ks_node *node = image_node("n", &s);
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_image_state img = {ks_intern("x:latest"), 500 * MB, 1};
    struct ks_pod *miss = image_pod(PODS("y"), NULL), *hit = image_pod(PODS("x"), NULL);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    int64_t score = -1;
    fx_cs_init(&cs);

    snap->images = &img;
    snap->nimages = 1;
    cr_expect(eq(int, il->score(self, &cs, miss, snap, &score, &st), KS_SUCCESS));
    cr_expect(eq(i64, score, 0));
    cr_expect(eq(int, il->score(self, &cs, hit, snap, &score, &st), KS_ERROR));
    snap->images = NULL;
    snap->nimages = 0;

    fx_cs_free(&cs);
    ks_pod_destroy(miss);
    ks_pod_destroy(hit);
    fx_snap_free(snap);
    ks_node_destroy(node);
    il->destroy(self);
}
