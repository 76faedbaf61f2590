/*
 * test_framework_plan.c - the per-cycle Filter and Score plans (engine/framework_plan.h)
 * run exactly the calls the unplanned ks_fw_run_filter() / ks_fw_score_node() run, with
 * the same statuses and scores, and ks_fw_normalize_scores() clears the cells of skipped
 * plugins that a planned Score pass leaves untouched.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../../engine/framework_plan.h"
#include "fakes/fake_plugins.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"

#define A 0
#define B 1
#define C 2

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_fake_reset();
}

TestSuite(framework_plan, .init = setup);

struct fixture {
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_cycle_state cs;
    struct ks_pod pod;
};

static void fx_open(struct fixture *fx, const char *yaml)
{
    memset(fx, 0, sizeof(*fx));
    fx->fw = ks_fake_framework(yaml, &fx->cfg);
    ks_cycle_state_init(&fx->cs);
    fx->pod.meta.name = "p";
    ks_fake_log_clear();
}

static void fx_close(struct fixture *fx)
{
    ks_cycle_state_destroy(&fx->cs);
    ks_framework_destroy(fx->fw);
    ks_config_destroy(fx->cfg);
}

static struct ks_node_snap snap(const char *name)
{
    return (struct ks_node_snap){.name = ks_intern(name), .flags = KS_SNAP_HAS_NODE};
}

static void assert_same_status(const struct ks_status *a, const struct ks_status *b)
{
    cr_assert_eq(a->code, b->code, "code: planned %d, unplanned %d", a->code, b->code);
    cr_assert_eq(a->plugin, b->plugin, "plugin: planned %u, unplanned %u", a->plugin, b->plugin);
    cr_assert_eq(a->nreasons, b->nreasons, "reasons: planned %u, unplanned %u", a->nreasons, b->nreasons);
    for (uint16_t i = 0; i < a->nreasons; i++)
        cr_assert_str_eq(ks_intern_str(a->reasons[i]), ks_intern_str(b->reasons[i]));
}

#define FILTERS                                                                                              \
    KS_FAKE_POINT3("preFilter", "FakeA", "FakeB", "FakeC") KS_FAKE_POINT3("filter", "FakeA", "FakeB", "FakeC")

Test(framework_plan, filter_plan_runs_only_unskipped_calls_with_the_same_result)
{
    struct fixture fx;
    struct ks_pre_filter_result pre = {.all = true};
    struct ks_node_snap n1 = snap("n1"), n2 = snap("n2");
    struct ks_status planned = {0}, unplanned = {0};
    struct ks_fw_plan plan;

    fx_open(&fx, FILTERS);
    ks_fake(B)->code[KS_FAKE_PRE_FILTER] = KS_SKIP;
    ks_fake(C)->code[KS_FAKE_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(C)->msg = "Insufficient cpu";
    ks_fake(C)->only_node = n2.name;
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &pre, &planned), KS_SUCCESS);
    ks__fw_plan_filter(fx.fw, &fx.cs, &plan);
    cr_assert_eq(plan.n, 2, "FakeB skipped at PreFilter: two calls, got %u", plan.n);

    ks_fake_log_clear();
    cr_assert_eq(ks__fw_plan_run_filter(&plan, &fx.cs, &fx.pod, &n1, &planned), KS_SUCCESS);
    cr_assert_str_eq(ks_fake_log(), "A.filter C.filter");
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &unplanned), KS_SUCCESS);
    assert_same_status(&planned, &unplanned);

    cr_assert_eq(ks__fw_plan_run_filter(&plan, &fx.cs, &fx.pod, &n2, &planned), KS_UNSCHEDULABLE);
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n2, &unplanned), KS_UNSCHEDULABLE);
    assert_same_status(&planned, &unplanned);

    /* a code that is not a rejection is wrapped the same way */
    ks_fake(A)->code[KS_FAKE_FILTER] = KS_SKIP;
    cr_assert_eq(ks__fw_plan_run_filter(&plan, &fx.cs, &fx.pod, &n1, &planned), KS_ERROR);
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &unplanned), KS_ERROR);
    assert_same_status(&planned, &unplanned);
    cr_assert_str_eq(ks_intern_str(planned.reasons[0]), "running \"FakeA\" filter plugin: FakeA filter");
    fx_close(&fx);
}

#define SCORES                                                                                               \
    KS_FAKE_POINT3("preScore", "FakeA", "FakeB", "FakeC")                                                    \
    "    score:\n      enabled:\n      - name: FakeA\n        weight: 2\n      - name: FakeB\n"              \
    "      - name: FakeC\n        weight: 3\n"

static int64_t score_by_pods(const struct ks_node_snap *node)
{
    return node->npods;
}

/* Three nodes with npods 1, 2, 4 and the plugins of SCORES (FakeB skipped at PreScore). */
static void score_setup(struct fixture *fx, struct ks_node_snap *n, const struct ks_node_snap **nodes,
                        struct ks_fw_plan *plan)
{
    struct ks_status st = {0};

    fx_open(fx, SCORES);
    ks_fake(A)->score_fn = score_by_pods;
    ks_fake(A)->normalize = KS_FAKE_NORM_MAX;
    ks_fake(B)->code[KS_FAKE_PRE_SCORE] = KS_SKIP;
    ks_fake(B)->score = 9;
    ks_fake(C)->score = 10;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i + 1);
        n[i] = snap(name);
        n[i].npods = 1u << i;
        nodes[i] = &n[i];
    }
    cr_assert_eq(ks_fw_run_pre_score(fx->fw, &fx->cs, &fx->pod, nodes, 3, &st), KS_SUCCESS);
    ks__fw_plan_score(fx->fw, &fx->cs, plan);
    cr_assert(plan->normalized[0] && plan->normalized[1], "every fake has a NormalizeScore op");
    /*
     * FakeC's NormalizeScore keeps the scores (KS_FAKE_NORM_KEEP), so the plan may treat it
     * as a plugin without one: scored, range-checked and weighted in the Score pass. That is
     * the path of the in-tree resource plugins, which the fakes cannot show otherwise.
     */
    plan->normalized[1] = false;
}

/* The planned pass over @nodes into @cols (one column of 3 per plan call) and @totals. */
static int score_planned(struct fixture *fx, const struct ks_fw_plan *plan, const struct ks_node_snap **nodes,
                         int64_t *cols, int64_t *totals, bool *oor)
{
    return ks__fw_plan_score_nodes(plan, &fx->cs, &fx->pod, nodes, 3, cols, 3, totals, oor);
}

Test(framework_plan, planned_scoring_gives_the_unplanned_matrix_and_totals)
{
    struct fixture fx;
    struct ks_node_snap n[3];
    const struct ks_node_snap *nodes[3];
    int64_t cols[9], planned[9], unplanned[9], tp[3], tu[3];
    struct ks_status st = {0};
    struct ks_fw_plan plan;
    bool oor = false, redo = true;

    score_setup(&fx, n, nodes, &plan);
    cr_assert_eq(plan.n, 2, "FakeB skipped at PreScore: two calls, got %u", plan.n);
    cr_assert_eq(plan.col[0], 0);
    cr_assert_eq(plan.col[1], 2);

    ks_fake_log_clear();
    for (int i = 0; i < 3; i++)
        tp[i] = 12345; /* assigned, not added to */
    cr_assert_eq(score_planned(&fx, &plan, nodes, cols, tp, &oor), KS_SUCCESS);
    cr_assert_str_eq(ks_fake_log(), "A.score A.score A.score C.score C.score C.score");
    cr_assert(!oor);
    cr_assert_eq(ks__fw_plan_normalize(fx.fw, &plan, &fx.cs, &fx.pod, nodes, 3, cols, tp, &redo, &st),
                 KS_SUCCESS);
    cr_assert(!redo);
    for (int i = 0; i < 9; i++)
        planned[i] = 12345; /* every cell is written: the skipped one with 0 */
    ks__fw_plan_rows(&plan, 3, cols, 3, planned);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ks_fw_score_node(fx.fw, &fx.cs, &fx.pod, &n[i], &unplanned[i * 3], &st), KS_SUCCESS);
    cr_assert_eq(ks_fw_normalize_scores(fx.fw, &fx.cs, &fx.pod, nodes, 3, unplanned, tu, &st), KS_SUCCESS);
    for (int i = 0; i < 9; i++)
        cr_assert_eq(planned[i], unplanned[i], "cell %d: planned %lld, unplanned %lld", i,
                     (long long)planned[i], (long long)unplanned[i]);
    /* A: 1 2 4 -> 25 50 100, weight 2; B skipped: 0; C: 10, weight 3 */
    int64_t want[3] = {50 + 30, 100 + 30, 200 + 30};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(planned[i * 3 + 1], 0, "skipped cell of node %d: %lld", i,
                     (long long)planned[i * 3 + 1]);
        cr_assert_eq(tp[i], want[i], "total of node %d: got %lld, want %lld", i, (long long)tp[i],
                     (long long)want[i]);
        cr_assert_eq(tu[i], tp[i]);
    }
    fx_close(&fx);
}

Test(framework_plan, scores_out_of_range_ask_for_the_unplanned_path)
{
    struct fixture fx;
    struct ks_node_snap n[3];
    const struct ks_node_snap *nodes[3];
    int64_t cols[9], totals[3];
    struct ks_status st = {0};
    struct ks_fw_plan plan;
    bool oor = false, redo = false;

    /* a plugin without NormalizeScore: flagged while scoring */
    score_setup(&fx, n, nodes, &plan);
    ks_fake(C)->score = 101;
    cr_assert_eq(score_planned(&fx, &plan, nodes, cols, totals, &oor), KS_SUCCESS);
    cr_assert(oor, "101 from FakeC (no NormalizeScore) must be flagged");
    fx_close(&fx);

    /* a plugin whose NormalizeScore leaves the range: flagged by the normalisation */
    score_setup(&fx, n, nodes, &plan);
    ks_fake(A)->normalize = KS_FAKE_NORM_ADD;
    ks_fake(A)->norm_add = 200;
    oor = false;
    cr_assert_eq(score_planned(&fx, &plan, nodes, cols, totals, &oor), KS_SUCCESS);
    cr_assert(!oor, "FakeA's raw scores are left to its NormalizeScore");
    cr_assert_eq(ks__fw_plan_normalize(fx.fw, &plan, &fx.cs, &fx.pod, nodes, 3, cols, totals, &redo, &st),
                 KS_SUCCESS);
    cr_assert(redo, "201 after FakeA's NormalizeScore must send the cycle to the unplanned path");
    fx_close(&fx);

    /* a failing NormalizeScore is reported as the unplanned function reports it */
    score_setup(&fx, n, nodes, &plan);
    ks_fake(A)->code[KS_FAKE_NORMALIZE] = KS_ERROR;
    ks_fake(A)->msg = "boom";
    cr_assert_eq(score_planned(&fx, &plan, nodes, cols, totals, &oor), KS_SUCCESS);
    cr_assert_eq(ks__fw_plan_normalize(fx.fw, &plan, &fx.cs, &fx.pod, nodes, 3, cols, totals, &redo, &st),
                 KS_ERROR);
    cr_assert_str_eq(ks_intern_str(st.reasons[0]),
                     "running Normalize on Score plugins: plugin \"FakeA\" failed with: boom");
    fx_close(&fx);

    /* a failing Score makes the block report Error, for the caller to name the failure */
    score_setup(&fx, n, nodes, &plan);
    ks_fake(C)->code[KS_FAKE_SCORE] = KS_ERROR;
    cr_assert_eq(score_planned(&fx, &plan, nodes, cols, totals, &oor), KS_ERROR);
    fx_close(&fx);
}

Test(framework_plan, out_of_range_score_names_the_first_plugin_and_value)
{
    struct fixture fx;
    struct ks_node_snap n1 = snap("n1"), n2 = snap("n2");
    const struct ks_node_snap *nodes[] = {&n1, &n2};
    int64_t scores[6] = {1, 0, 2, 101, 0, -3}, totals[2];
    struct ks_status st = {0};

    fx_open(&fx, SCORES);
    /* row 0 is in range; row 1 has FakeA at 101 before FakeC at -3 */
    cr_assert_eq(ks_fw_normalize_scores(fx.fw, &fx.cs, &fx.pod, nodes, 2, scores, totals, &st), KS_ERROR);
    cr_assert_eq(st.nreasons, 1);
    cr_assert_str_eq(
        ks_intern_str(st.reasons[0]),
        "applying score defaultWeights on Score plugins: plugin \"FakeA\" returns an invalid score "
        "101, it should in the range of [0, 100] after normalizing");
    fx_close(&fx);
}
