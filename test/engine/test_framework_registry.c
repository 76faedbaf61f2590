/*
 * test_framework_registry.c - plugins added at run time: ks_registry_add() checks, the
 * extension points derived from ops, loading shared objects (every error path of
 * ks_registry_load(); ks_registry_load_dir() all or nothing, reporting every bad object),
 * and the example out-of-tree plugin NodeLabelPreference enabled by a configuration and
 * run through the framework.
 *
 * Each Criterion test runs in its own process, so what one test adds to the registry is
 * gone in the next.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../engine/framework_plan.h"
#include "fakes/fake_plugins.h"
#include "fakes/objects.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/config.h"
#include "ksched/registry.h"

#define PLUGIN(file) KS_PLUGIN_DIR "/" file

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_fake_reset();
}

TestSuite(registry, .init = setup);

/* ---- ks_registry_add ------------------------------------------------------------------------ */

static int noop_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_node_snap *node, struct ks_status *st)
{
    (void)self, (void)cs, (void)pod, (void)node, (void)st;
    return KS_SUCCESS;
}

static int noop_score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_node_snap *node, int64_t *score, struct ks_status *st)
{
    (void)self, (void)cs, (void)pod, (void)node, (void)st;
    *score = 0;
    return KS_SUCCESS;
}

static void noop_unreserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node)
{
    (void)self, (void)cs, (void)pod, (void)node;
}

static int noop_pre_enqueue(void *self, const struct ks_pod *pod, struct ks_status *st)
{
    (void)self;
    (void)pod;
    (void)st;
    return KS_SUCCESS;
}

static void add_fails(const struct ks_plugin *p, const char *want)
{
    struct ks_error err = {0};
    cr_assert_eq(ks_registry_add(p, &err), -EINVAL);
    cr_assert_str_eq(err.msg, want, "got \"%s\", want \"%s\"", err.msg, want);
}

Test(registry, add_checks)
{
    static const struct ks_plugin no_name = {.abi_version = KS_PLUGIN_ABI_VERSION};
    static const struct ks_plugin empty_name = {.abi_version = KS_PLUGIN_ABI_VERSION, .name = ""};
    static const struct ks_plugin old_abi = {.abi_version = 0, .name = "Old"};
    static const struct ks_plugin new_abi = {.abi_version = KS_PLUGIN_ABI_VERSION + 1, .name = "New"};
    static const struct ks_plugin intree = {.abi_version = KS_PLUGIN_ABI_VERSION, .name = "NodeResourcesFit"};
    static const struct ks_plugin mine = {
        .abi_version = KS_PLUGIN_ABI_VERSION, .name = "Mine", .filter = noop_filter};
    static const struct ks_plugin mine_again = {.abi_version = KS_PLUGIN_ABI_VERSION, .name = "Mine"};
    char want[256];
    struct ks_error err = {0};

    add_fails(NULL, "no plugin");
    add_fails(&no_name, "plugin has no name");
    add_fails(&empty_name, "plugin has no name");
    add_fails(&old_abi,
              "plugin \"Old\" was built for plugin ABI version 0, this ksched reads versions 1 to 1");
    snprintf(want, sizeof(want),
             "plugin \"New\" was built for plugin ABI version %u, this ksched reads versions 1 to %u",
             KS_PLUGIN_ABI_VERSION + 1, KS_PLUGIN_ABI_VERSION);
    add_fails(&new_abi, want);
    add_fails(&intree, "a plugin named NodeResourcesFit already exists");

    uint32_t before = ks_registry_count();
    cr_assert_null(ks_registry_find("Mine"));
    cr_assert_eq(ks_registry_add(&mine, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_registry_find("Mine"), &mine);
    cr_assert_eq(ks_registry_count(), before + 1);
    add_fails(&mine_again, "a plugin named Mine already exists");
    cr_assert_eq(ks_registry_find("Mine"), &mine);
}

Test(registry, add_is_bounded)
{
    static struct ks_plugin many[KS_REGISTRY_MAX_ADDED + 1];
    static char names[KS_REGISTRY_MAX_ADDED + 1][16];
    struct ks_error err = {0};

    for (int i = 0; i <= KS_REGISTRY_MAX_ADDED; i++) {
        snprintf(names[i], sizeof(names[i]), "Many%d", i);
        many[i] = (struct ks_plugin){.abi_version = KS_PLUGIN_ABI_VERSION, .name = names[i]};
    }
    for (int i = 0; i < KS_REGISTRY_MAX_ADDED; i++)
        cr_assert_eq(ks_registry_add(&many[i], &err), 0, "%s", err.msg);
    char want[128];
    snprintf(want, sizeof(want), "cannot add plugin Many%d: %d plugins were added already",
             KS_REGISTRY_MAX_ADDED, KS_REGISTRY_MAX_ADDED);
    add_fails(&many[KS_REGISTRY_MAX_ADDED], want);
}

Test(registry, points_from_ops)
{
    static const struct ks_plugin p = {.abi_version = KS_PLUGIN_ABI_VERSION,
                                       .name = "P",
                                       .filter = noop_filter,
                                       .score = noop_score,
                                       .unreserve = noop_unreserve};

    cr_assert_eq(ks_registry_points(&p), KS_EXT_BIT(FILTER) | KS_EXT_BIT(SCORE) | KS_EXT_BIT(RESERVE));
    cr_assert_eq(ks_registry_points(NULL), 0u);
    /* in-tree plugins: from their ops too */
    cr_assert_eq(ks_registry_points(ks_registry_find("DynamicResources")),
                 KS_EXT_BIT(PRE_ENQUEUE) | KS_EXT_BIT(PRE_FILTER) | KS_EXT_BIT(FILTER) |
                     KS_EXT_BIT(POST_FILTER) | KS_EXT_BIT(SCORE) | KS_EXT_BIT(RESERVE) |
                     KS_EXT_BIT(PRE_BIND));
    cr_assert_eq(ks_registry_points(ks_registry_find("NodeName")), KS_EXT_BIT(FILTER));
    cr_assert_eq(ks_registry_points(&ks_fake_plugins[0]),
                 KS_EXT_BIT(QUEUE_SORT) | KS_EXT_BIT(PRE_FILTER) | KS_EXT_BIT(FILTER) |
                     KS_EXT_BIT(POST_FILTER) | KS_EXT_BIT(PRE_SCORE) | KS_EXT_BIT(SCORE) |
                     KS_EXT_BIT(RESERVE) | KS_EXT_BIT(PERMIT) | KS_EXT_BIT(PRE_BIND) | KS_EXT_BIT(BIND) |
                     KS_EXT_BIT(POST_BIND));
}

Test(registry, pre_enqueue_op_is_the_pre_enqueue_point)
{
    static const struct ks_plugin p = {
        .abi_version = KS_PLUGIN_ABI_VERSION, .name = "Gate", .pre_enqueue = noop_pre_enqueue};
    cr_assert_eq(ks_registry_points(&p), KS_EXT_BIT(PRE_ENQUEUE));
}

/* The points every in-tree plugin has upstream (ExpandedPluginsV1), which its ops must give. */
Test(registry, intree_points_are_upstreams)
{
    const unsigned filters = KS_EXT_BIT(PRE_FILTER) | KS_EXT_BIT(FILTER);
    const unsigned scores = KS_EXT_BIT(PRE_SCORE) | KS_EXT_BIT(SCORE);
    const struct {
        const char *name;
        unsigned points;
    } want[] = {
        {"SchedulingGates", KS_EXT_BIT(PRE_ENQUEUE)},
        {"PrioritySort", KS_EXT_BIT(QUEUE_SORT)},
        {"NodeUnschedulable", KS_EXT_BIT(FILTER)},
        {"NodeName", KS_EXT_BIT(FILTER)},
        {"TaintToleration", KS_EXT_BIT(FILTER) | scores},
        {"NodeAffinity", filters | scores},
        {"NodePorts", filters},
        {"NodeResourcesFit", filters | scores},
        {"VolumeRestrictions", filters},
        {"NodeVolumeLimits", filters},
        {"EBSLimits", filters},
        {"GCEPDLimits", filters},
        {"AzureDiskLimits", filters},
        {"CinderLimits", filters},
        {"VolumeBinding", filters | scores | KS_EXT_BIT(RESERVE) | KS_EXT_BIT(PRE_BIND)},
        {"VolumeZone", filters},
        {"PodTopologySpread", filters | scores},
        {"InterPodAffinity", filters | scores},
        {"DefaultPreemption", KS_EXT_BIT(PRE_ENQUEUE) | KS_EXT_BIT(POST_FILTER)},
        {"NodeResourcesBalancedAllocation", scores},
        {"ImageLocality", KS_EXT_BIT(SCORE)},
        {"DefaultBinder", KS_EXT_BIT(BIND)},
        {"SelectorSpread", scores},
        {"DynamicResources", KS_EXT_BIT(PRE_ENQUEUE) | filters | KS_EXT_BIT(POST_FILTER) | KS_EXT_BIT(SCORE) |
                                 KS_EXT_BIT(RESERVE) | KS_EXT_BIT(PRE_BIND)},
        {"GangScheduling", KS_EXT_BIT(PRE_ENQUEUE)},
    };
    size_t n = 0;
    for (const struct ks_plugin *const *p = ks_registry; *p; p++)
        n++;
    cr_assert_eq(n, sizeof(want) / sizeof(want[0]), "%zu in-tree plugins, %zu expected", n,
                 sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const struct ks_plugin *p = ks_registry_find(want[i].name);
        cr_assert_not_null(p, "%s", want[i].name);
        cr_expect_eq(ks_registry_points(p), want[i].points, "%s: points %#x, want %#x", want[i].name,
                     ks_registry_points(p), want[i].points);
    }
}

Test(registry, config_rejects_a_point_the_plugin_lacks)
{
    static const struct ks_plugin p = {
        .abi_version = KS_PLUGIN_ABI_VERSION, .name = "OnlyFilter", .filter = noop_filter};
    static const char yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "profiles:\n"
                               "- plugins:\n"
                               "    score:\n"
                               "      enabled:\n"
                               "      - name: OnlyFilter\n";
    struct ks_error err = {0};
    struct ks_config *cfg = NULL;

    cr_assert_eq(ks_registry_add(&p, &err), 0);
    cr_assert_eq(ks_config_load_yaml("t.yaml", yaml, strlen(yaml), &cfg, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "plugin \"OnlyFilter\" does not extend ScorePlugin plugin");
}

/* ---- loading shared objects ----------------------------------------------------------------- */

static void load_fails(const char *path, const char *want)
{
    struct ks_error err = {0};
    cr_assert_lt(ks_registry_load(path, &err), 0);
    cr_assert_str_eq(err.file, path);
    cr_assert(strstr(err.msg, want), "message \"%s\" does not contain \"%s\"", err.msg, want);
}

Test(registry, load_errors)
{
    char want[256];

    load_fails(PLUGIN("does_not_exist.so"), "cannot load plugin: ");
    load_fails(PLUGIN("does_not_exist.so"), "No such file or directory");
    snprintf(want, sizeof(want),
             "plugin \"BrokenAbi\" was built for plugin ABI version 999, this ksched reads "
             "versions 1 to %u",
             KS_PLUGIN_ABI_VERSION);
    load_fails(PLUGIN("broken_abi.so"), want);
    load_fails(PLUGIN("broken_no_entry.so"), "not a ksched plugin: no ks_plugin_entry symbol (");
    load_fails(PLUGIN("broken_no_entry.so"), "undefined symbol: ks_plugin_entry");
    load_fails(PLUGIN("broken_clash.so"), "a plugin named NodeName already exists");
    load_fails(PLUGIN("broken_null.so"), "not a ksched plugin: ks_plugin_entry() returned no plugin");
    cr_assert_null(ks_registry_find("BrokenAbi"));
    cr_assert_null(ks_registry_find("Broken"));
}

Test(registry, load_twice_clashes)
{
    struct ks_error err = {0};

    cr_assert_eq(ks_registry_load(PLUGIN("node_label_preference.so"), &err), 0, "%s", err.msg);
    cr_assert_not_null(ks_registry_find("NodeLabelPreference"));
    load_fails(PLUGIN("node_label_preference.so"), "a plugin named NodeLabelPreference already exists");
}

/* What ks_registry_load_dir() reported, in order. */
struct reports {
    int n;
    char file[8][512];
    char msg[8][512];
};

static void collect(void *ctx, const struct ks_error *err)
{
    struct reports *r = ctx;
    cr_assert_lt(r->n, 8);
    snprintf(r->file[r->n], sizeof(r->file[0]), "%s", err->file);
    snprintf(r->msg[r->n], sizeof(r->msg[0]), "%s", err->msg);
    r->n++;
}

static void link_plugin(const char *dir, const char *target, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    cr_assert_eq(symlink(target, path), 0, "%s", path);
}

static void remove_dir(const char *dir, const char *const *names)
{
    char path[512];
    for (; *names; names++) {
        snprintf(path, sizeof(path), "%s/%s", dir, *names);
        unlink(path);
    }
    rmdir(dir);
}

Test(registry, load_dir_reports_every_bad_object_and_adds_none)
{
    struct ks_error err = {0};
    struct reports r = {0};
    static const char *const bad[] = {"broken_abi.so", "broken_clash.so", "broken_no_entry.so",
                                      "broken_null.so"};

    /* the build folder holds the example plugin and the four broken objects */
    cr_assert_eq(ks_registry_load_dir(KS_PLUGIN_DIR, collect, &r, &err), -EINVAL);
    cr_assert_eq(r.n, 4, "%d reports", r.n);
    for (int i = 0; i < 4; i++) {
        const char *base = strrchr(r.file[i], '/');
        cr_assert(base && strcmp(base + 1, bad[i]) == 0, "report %d names %s, want %s", i, r.file[i], bad[i]);
    }
    cr_assert(strstr(r.msg[0], "was built for plugin ABI version 999"), "%s", r.msg[0]);
    cr_assert(strstr(r.msg[1], "a plugin named NodeName already exists"), "%s", r.msg[1]);
    cr_assert(strstr(r.msg[2], "no ks_plugin_entry symbol"), "%s", r.msg[2]);
    cr_assert(strstr(r.msg[3], "returned no plugin"), "%s", r.msg[3]);
    cr_assert_str_eq(err.file, KS_PLUGIN_DIR);
    cr_assert_str_eq(err.msg, "4 of 5 shared objects cannot be loaded as plugins, so none was loaded");
    cr_assert_null(ks_registry_find("NodeLabelPreference"), "the good object was loaded half");

    /* nothing was left behind: the good object alone loads afterwards */
    err = (struct ks_error){0};
    cr_assert_eq(ks_registry_load(PLUGIN("node_label_preference.so"), &err), 0, "%s", err.msg);
    cr_assert_not_null(ks_registry_find("NodeLabelPreference"));
}

Test(registry, load_dir_rejects_two_objects_with_one_name)
{
    char dir[] = "/tmp/ks_plugins_XXXXXX";
    char want[600];
    struct ks_error err = {0};
    struct reports r = {0};
    static const char *const names[] = {"10-a.so", "20-b.so", "30-junk.so", NULL};

    cr_assert_not_null(mkdtemp(dir));
    link_plugin(dir, PLUGIN("node_label_preference.so"), "10-a.so");
    link_plugin(dir, PLUGIN("node_label_preference.so"), "20-b.so");
    snprintf(want, sizeof(want), "%s/30-junk.so", dir);
    FILE *f = fopen(want, "w");
    cr_assert_not_null(f);
    fputs("not an object\n", f);
    fclose(f);

    cr_assert_eq(ks_registry_load_dir(dir, collect, &r, &err), -EINVAL);
    cr_assert_eq(r.n, 2, "%d reports", r.n);
    snprintf(want, sizeof(want), "%s/20-b.so", dir);
    cr_assert_str_eq(r.file[0], want);
    snprintf(want, sizeof(want), "a plugin named NodeLabelPreference is also in %s/10-a.so", dir);
    cr_assert_str_eq(r.msg[0], want);
    cr_assert(strstr(r.msg[1], "cannot load plugin: "), "%s", r.msg[1]);
    cr_assert_str_eq(err.msg, "2 of 3 shared objects cannot be loaded as plugins, so none was loaded");
    cr_assert_null(ks_registry_find("NodeLabelPreference"));
    remove_dir(dir, names);
}

Test(registry, load_dir_loads_shared_objects_only)
{
    char dir[] = "/tmp/ks_plugins_XXXXXX";
    char path[512];
    struct ks_error err = {0};

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/10-nlp.so", dir);
    cr_assert_eq(symlink(PLUGIN("node_label_preference.so"), path), 0);
    snprintf(path, sizeof(path), "%s/README.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("not a plugin\n", f);
    fclose(f);

    int rc = ks_registry_load_dir(dir, NULL, NULL, &err);
    cr_assert_eq(rc, 0, "%s: %s", err.file, err.msg);
    cr_assert_not_null(ks_registry_find("NodeLabelPreference"));

    snprintf(path, sizeof(path), "%s/10-nlp.so", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/README.txt", dir);
    unlink(path);
    rmdir(dir);

    err = (struct ks_error){0};
    cr_assert_eq(ks_registry_load_dir(dir, NULL, NULL, &err), -ENOENT);
    cr_assert_str_eq(err.file, dir);
    cr_assert_str_eq(err.msg, "cannot open plugin directory: No such file or directory");
}

/* ---- the example plugin through a configuration and the framework --------------------------- */

static const char example_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                   "kind: KubeSchedulerConfiguration\n"
                                   "profiles:\n"
                                   "- schedulerName: labels\n"
                                   "  plugins:\n"
                                   "    multiPoint:\n"
                                   "      enabled:\n"
                                   "      - name: NodeLabelPreference\n"
                                   "        weight: 2\n";

static struct ks_node_snap snap_of(struct ks_node *node)
{
    return (struct ks_node_snap){.name = node->name_id, .node = node, .flags = KS_SNAP_HAS_NODE};
}

Test(registry, example_plugin_expands_from_multi_point)
{
    struct ks_error err = {0};
    struct ks_config *cfg = NULL;

    cr_assert_eq(ks_registry_load(PLUGIN("node_label_preference.so"), &err), 0, "%s", err.msg);
    int rc = ks_config_load_yaml("example.yaml", example_yaml, strlen(example_yaml), &cfg, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    const struct ks_profile *prof = ks_config_find_profile(cfg, "labels");
    cr_assert_not_null(prof);

    /* MultiPoint expands it into the points its ops implement, after the defaults */
    const struct ks_resolved_point *filter = ks_profile_point(prof, KS_EXT_FILTER);
    cr_assert_str_eq(filter->items[filter->n - 1].plugin->name, "NodeLabelPreference");
    const struct ks_resolved_point *score = ks_profile_point(prof, KS_EXT_SCORE);
    cr_assert_str_eq(score->items[score->n - 1].plugin->name, "NodeLabelPreference");
    cr_assert_eq(score->items[score->n - 1].weight, 2);
    const struct ks_resolved_point *pre_filter = ks_profile_point(prof, KS_EXT_PRE_FILTER);
    for (uint32_t i = 0; i < pre_filter->n; i++)
        cr_assert_str_neq(pre_filter->items[i].plugin->name, "NodeLabelPreference");
    ks_config_destroy(cfg);
}

/* The example plugin alone (the fakes sort and bind), so no in-tree plugin runs. */
static const char only_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "profiles:\n"
                                "- schedulerName: only\n"
                                "  plugins:\n"
                                "    multiPoint:\n"
                                "      disabled:\n"
                                "      - name: \"*\"\n"
                                "    queueSort:\n"
                                "      enabled:\n"
                                "      - name: FakeA\n"
                                "    bind:\n"
                                "      enabled:\n"
                                "      - name: FakeA\n"
                                "    filter:\n"
                                "      enabled:\n"
                                "      - name: NodeLabelPreference\n"
                                "    score:\n"
                                "      enabled:\n"
                                "      - name: NodeLabelPreference\n"
                                "        weight: 2\n";

Test(registry, example_plugin_filters_and_scores)
{
    struct ks_error err = {0};
    struct ks_config *cfg = NULL;
    struct ks_framework *fw = NULL;

    ks_fake_register();
    cr_assert_eq(ks_registry_load(PLUGIN("node_label_preference.so"), &err), 0, "%s", err.msg);
    int rc = ks_config_load_yaml("only.yaml", only_yaml, strlen(only_yaml), &cfg, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    cr_assert_eq(ks_framework_create(&cfg->profiles[0], NULL, &fw, &err), 0, "%s", err.msg);
    cr_assert(ks_framework_has_filter(fw));
    cr_assert_eq(ks_framework_nscore(fw), 1);
    cr_assert_eq(ks_framework_score_weight(fw, 0), 2);

    struct ks_node *nodes[4] = {
        ks_fake_node("n1", "example.com/preference=30"),
        ks_fake_node("n2", "example.com/avoid=true,example.com/preference=90"),
        ks_fake_node("n3", "example.com/preference=60,example.com/avoid=false"),
        ks_fake_node("n4", "example.com/preference=lots"),
    };
    struct ks_node_snap snaps[4];
    for (int i = 0; i < 4; i++)
        snaps[i] = snap_of(nodes[i]);
    struct ks_pod *pod = ks_fake_pod_done(ks_fake_pod("default", "p"));
    struct ks_cycle_state cs;
    struct ks_status st;
    struct ks_pre_filter_result res;
    const struct ks_node_snap *feasible[4];
    uint32_t nfeasible = 0;

    ks_cycle_state_init(&cs);
    cr_assert_eq(ks_fw_run_pre_filter(fw, &cs, pod, &res, &st), KS_SUCCESS);
    cr_assert(res.all);
    for (int i = 0; i < 4; i++) {
        int frc = ks_fw_run_filter(fw, &cs, pod, &snaps[i], &st);
        if (i == 1) {
            cr_assert_eq(frc, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
            cr_assert_str_eq(ks_framework_plugin_name(fw, st.plugin), "NodeLabelPreference");
            cr_assert_eq(st.nreasons, 1);
            cr_assert_str_eq(ks_intern_str(st.reasons[0]), "node(s) had label example.com/avoid=true");
            continue;
        }
        cr_assert_eq(frc, KS_SUCCESS, "n%d: %s", i + 1, ks_code_name(frc));
        feasible[nfeasible++] = &snaps[i];
    }
    cr_assert_eq(nfeasible, 3);

    /* the shared object's batched Filter (KS_FILTER_OPS) through the planned pass gives the same */
    const struct ks_node_snap *all[4] = {&snaps[0], &snaps[1], &snaps[2], &snaps[3]};
    uint8_t ok[4] = {1, 1, 1, 1};
    struct ks_status bst[4];
    struct ks_fw_plan plan;
    cr_assert_not_null(ks_registry_find("NodeLabelPreference")->filter_nodes);
    ks__fw_plan_filter(fw, &cs, &plan);
    cr_assert_eq(ks__fw_plan_filter_nodes(&plan, &cs, pod, all, 4, ok, bst), 3u);
    cr_assert(ok[0] && !ok[1] && ok[2] && ok[3]);
    cr_assert_eq(bst[1].code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_str_eq(ks_framework_plugin_name(fw, bst[1].plugin), "NodeLabelPreference");
    cr_assert_str_eq(ks_intern_str(bst[1].reasons[0]), "node(s) had label example.com/avoid=true");

    int64_t scores[3], totals[3];
    cr_assert_eq(ks_fw_run_pre_score(fw, &cs, pod, feasible, nfeasible, &st), KS_SUCCESS);
    for (uint32_t i = 0; i < nfeasible; i++)
        cr_assert_eq(ks_fw_score_node(fw, &cs, pod, feasible[i], &scores[i], &st), KS_SUCCESS);
    cr_assert_eq(scores[0], 30);
    cr_assert_eq(scores[1], 60);
    cr_assert_eq(scores[2], 0);
    cr_assert_eq(ks_fw_normalize_scores(fw, &cs, pod, feasible, nfeasible, scores, totals, &st), KS_SUCCESS);
    /* 30 60 0 -> 50 100 0, times weight 2 */
    cr_assert_eq(totals[0], 100);
    cr_assert_eq(totals[1], 200);
    cr_assert_eq(totals[2], 0);

    ks_cycle_state_destroy(&cs);
    ks_pod_destroy(pod);
    for (int i = 0; i < 4; i++)
        ks_node_destroy(nodes[i]);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
}
