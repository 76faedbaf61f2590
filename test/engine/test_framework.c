/*
 * test_framework.c - the framework runtime over fake plugins: building a framework from
 * a profile, and how every Run function merges its plugins' statuses (the cases of
 * upstream's framework_test.go, with its messages).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "fakes/fake_plugins.h"
#include "fakes/objects.h"
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

TestSuite(framework, .init = setup);

/* The one reason of @st, as a string. */
static const char *reason(const struct ks_status *st)
{
    cr_assert_eq(st->nreasons, 1, "want one reason, got %u", st->nreasons);
    return ks_intern_str(st->reasons[0]);
}

static void assert_reason(const struct ks_status *st, const char *want)
{
    const char *got = reason(st);
    cr_assert_str_eq(got, want, "reason: got \"%s\", want \"%s\"", got, want);
}

static void assert_log(const char *want)
{
    const char *got = ks_fake_log();
    cr_assert_str_eq(got, want, "calls: got \"%s\", want \"%s\"", got, want);
}

/* The slot of fake @i in @fw. */
static uint16_t slot_of(const struct ks_framework *fw, int i)
{
    for (uint32_t s = 0; s < ks_framework_nplugins(fw); s++) {
        if (strcmp(ks_framework_plugin_name(fw, s), ks_fake_plugins[i].name) == 0)
            return (uint16_t)s;
    }
    cr_assert_fail("%s is not in the framework", ks_fake_plugins[i].name);
    return KS_NO_PLUGIN;
}

struct fixture {
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_cycle_state cs;
    struct ks_pod pod;
    struct ks_status st;
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

/* ---- building ------------------------------------------------------------------------------- */

Test(framework, one_instance_per_plugin_in_point_order)
{
    struct ks_config *cfg;
    struct ks_framework *fw = ks_fake_framework(
        KS_FAKE_POINT2("filter", "FakeC",
                       "FakeB") "    score:\n      enabled:\n      - name: FakeB\n        weight: 3\n"
                                "      - name: FakeD\n",
        &cfg);

    /* queueSort (FakeA), filter (FakeC FakeB), score (FakeB FakeD), bind (FakeA) */
    assert_log("A.init C.init B.init D.init");
    cr_assert_eq(ks_framework_nplugins(fw), 4);
    cr_assert_str_eq(ks_framework_plugin_name(fw, 0), "FakeA");
    cr_assert_str_eq(ks_framework_plugin_name(fw, 1), "FakeC");
    cr_assert_str_eq(ks_framework_plugin_name(fw, 2), "FakeB");
    cr_assert_str_eq(ks_framework_plugin_name(fw, 3), "FakeD");
    cr_assert_null(ks_framework_plugin_name(fw, 4));
    cr_assert(ks_framework_has_filter(fw));
    cr_assert(ks_framework_has_score(fw));
    cr_assert_eq(ks_framework_nscore(fw), 2);
    cr_assert_eq(ks_framework_score_slot(fw, 0), 2);
    cr_assert_eq(ks_framework_score_weight(fw, 0), 3);
    cr_assert_eq(ks_framework_score_slot(fw, 1), 3);
    cr_assert_eq(ks_framework_score_weight(fw, 1), 1);
    cr_assert_eq(ks_framework_profile(fw), &cfg->profiles[0]);
    cr_assert_null(ks_framework_deps(fw)->cache);

    ks_fake_log_clear();
    ks_framework_destroy(fw);
    assert_log("D.destroy B.destroy C.destroy A.destroy");
    ks_config_destroy(cfg);
}

Test(framework, init_failure_names_the_plugin_and_unwinds)
{
    struct ks_config *cfg = ks_fake_config(KS_FAKE_POINT2("filter", "FakeB", "FakeC"));
    struct ks_framework *fw = (void *)1;
    struct ks_error err = {0};

    ks_fake(B)->code[KS_FAKE_INIT] = -EINVAL;
    int rc = ks_framework_create(&cfg->profiles[0], NULL, &fw, &err);
    cr_assert_eq(rc, -EINVAL);
    cr_assert_null(fw);
    cr_assert_str_eq(err.msg, "initializing plugin \"FakeB\": fake B refuses to start");
    assert_log("A.init B.init A.destroy");
    ks_config_destroy(cfg);
}

Test(framework, deps_are_copied)
{
    struct ks_config *cfg = ks_fake_config("");
    struct ks_framework *fw = NULL;
    struct ks_error err = {0};
    struct ks_framework_deps deps = {.cache = (struct ks_cache *)&err};

    cr_assert_eq(ks_framework_create(&cfg->profiles[0], &deps, &fw, &err), 0);
    cr_assert_eq(ks_framework_deps(fw)->cache, (struct ks_cache *)&err);
    cr_assert(!ks_framework_has_filter(fw));
    cr_assert(!ks_framework_has_score(fw));
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
}

Test(framework, less_is_the_queue_sort_plugin)
{
    struct fixture fx;
    struct ks_queued_pod a = {.timestamp_ns = 1}, b = {.timestamp_ns = 2};

    fx_open(&fx, KS_FAKE_POINT1("queueSort", "FakeC"));
    cr_assert(ks_fw_less(fx.fw, &a, &b));
    cr_assert(!ks_fw_less(fx.fw, &b, &a));
    assert_log("C.less C.less");
    fx_close(&fx);
}

/* ---- statuses ------------------------------------------------------------------------------- */

Test(framework, code_names)
{
    cr_assert_str_eq(ks_code_name(KS_SUCCESS), "Success");
    cr_assert_str_eq(ks_code_name(KS_ERROR), "Error");
    cr_assert_str_eq(ks_code_name(KS_UNSCHEDULABLE), "Unschedulable");
    cr_assert_str_eq(ks_code_name(KS_UNSCHEDULABLE_AND_UNRESOLVABLE), "UnschedulableAndUnresolvable");
    cr_assert_str_eq(ks_code_name(KS_WAIT), "Wait");
    cr_assert_str_eq(ks_code_name(KS_SKIP), "Skip");
    cr_assert_str_eq(ks_code_name(KS_PENDING), "Pending");
    cr_assert_str_eq(ks_code_name(KS_CODE_COUNT), "Unknown");
}

Test(framework, status_set_interns_one_reason)
{
    struct ks_status st = {.plugin = 3, .nreasons = 2};

    cr_assert_eq(ks_status_set(&st, KS_UNSCHEDULABLE, "node(s) had %d problems", 2), KS_UNSCHEDULABLE);
    cr_assert_eq(st.code, KS_UNSCHEDULABLE);
    cr_assert_eq(st.plugin, KS_NO_PLUGIN);
    assert_reason(&st, "node(s) had 2 problems");
    cr_assert_eq(st.reasons[0], ks_intern("node(s) had 2 problems"));
}

/* ---- PreFilter ------------------------------------------------------------------------------ */

#define PF_ABC KS_FAKE_POINT3("preFilter", "FakeA", "FakeB", "FakeC")

Test(framework, pre_filter_success_means_all_nodes)
{
    struct fixture fx;
    struct ks_pre_filter_result res = {0};

    fx_open(&fx, PF_ABC);
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_SUCCESS);
    cr_assert(res.all);
    cr_assert_eq(res.narrowed_by, 0);
    cr_assert_eq(fx.st.code, KS_SUCCESS);
    cr_assert_eq(fx.st.plugin, KS_NO_PLUGIN);
    cr_assert_eq(fx.cs.skip_filter, 0);
    assert_log("A.pre_filter B.pre_filter C.pre_filter");
    fx_close(&fx);
}

Test(framework, pre_filter_skip_skips_filter)
{
    struct fixture fx;
    struct ks_pre_filter_result res;
    struct ks_node_snap n1 = snap("n1");

    fx_open(&fx, PF_ABC KS_FAKE_POINT3("filter", "FakeA", "FakeB", "FakeC"));
    ks_fake(B)->code[KS_FAKE_PRE_FILTER] = KS_SKIP;
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_SUCCESS);
    cr_assert_eq(fx.cs.skip_filter, UINT64_C(1) << slot_of(fx.fw, B));
    ks_fake_log_clear();
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &fx.st), KS_SUCCESS);
    assert_log("A.filter C.filter");
    fx_close(&fx);
}

Test(framework, pre_filter_unresolvable_stops_at_once)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    ks_fake(A)->code[KS_FAKE_PRE_FILTER] = KS_SKIP;
    ks_fake(B)->code[KS_FAKE_PRE_FILTER] = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    ks_fake(B)->msg = "node(s) didn't match Pod's node affinity/selector";
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(fx.st.code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "node(s) didn't match Pod's node affinity/selector");
    /* the skip set is recorded on every return */
    cr_assert_eq(fx.cs.skip_filter, UINT64_C(1) << slot_of(fx.fw, A));
    assert_log("A.pre_filter B.pre_filter");
    fx_close(&fx);
}

Test(framework, pre_filter_unschedulable_runs_the_rest_and_keeps_the_last)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    ks_fake(A)->code[KS_FAKE_PRE_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(C)->code[KS_FAKE_PRE_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(C)->msg = "c says no";
    ks_fake(C)->msg2 = "and again";
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, C));
    cr_assert_eq(fx.st.nreasons, 2);
    cr_assert_str_eq(ks_intern_str(fx.st.reasons[0]), "c says no");
    cr_assert_str_eq(ks_intern_str(fx.st.reasons[1]), "and again");
    assert_log("A.pre_filter B.pre_filter C.pre_filter");
    fx_close(&fx);
}

Test(framework, pre_filter_error_is_wrapped)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    ks_fake(B)->code[KS_FAKE_PRE_FILTER] = KS_ERROR;
    ks_fake(B)->msg = "boom";
    ks_fake(B)->msg2 = "bang";
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_ERROR);
    cr_assert_eq(fx.st.code, KS_ERROR);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "running PreFilter plugin \"FakeB\": boom, bang");
    assert_log("A.pre_filter B.pre_filter");
    fx_close(&fx);
}

Test(framework, pre_filter_wait_is_an_error)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    ks_fake(A)->code[KS_FAKE_PRE_FILTER] = KS_WAIT;
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running PreFilter plugin \"FakeA\": FakeA pre_filter");
    fx_close(&fx);
}

static void narrow(int i, const char *a, const char *b, const char *c)
{
    struct ks_fake_behavior *f = ks_fake(i);
    const char *names[] = {a, b, c};

    f->narrow = true;
    f->nnames = 0;
    for (int k = 0; k < 3; k++) {
        if (names[k])
            f->names[f->nnames++] = ks_intern(names[k]);
    }
}

Test(framework, pre_filter_results_intersect)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    narrow(A, "n1", "n2", "n3");
    narrow(C, "n4", "n3", "n2");
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_SUCCESS);
    cr_assert(!res.all);
    cr_assert_eq(res.n, 2);
    uint32_t lo = ks_intern("n2") < ks_intern("n3") ? ks_intern("n2") : ks_intern("n3");
    uint32_t hi = ks_intern("n2") < ks_intern("n3") ? ks_intern("n3") : ks_intern("n2");
    cr_assert_eq(res.names[0], lo);
    cr_assert_eq(res.names[1], hi);
    cr_assert_eq(res.narrowed_by, (UINT64_C(1) << slot_of(fx.fw, A)) | (UINT64_C(1) << slot_of(fx.fw, C)));
    fx_close(&fx);
}

Test(framework, pre_filter_one_narrowing_plugin_is_the_result)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    narrow(B, "n7", NULL, NULL);
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_SUCCESS);
    cr_assert(!res.all);
    cr_assert_eq(res.n, 1);
    cr_assert_eq(res.names[0], ks_intern("n7"));
    fx_close(&fx);
}

Test(framework, pre_filter_empty_intersection_names_plugins_sorted)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, KS_FAKE_POINT3("preFilter", "FakeC", "FakeB", "FakeA"));
    narrow(C, "n1", "n2", NULL);
    narrow(A, "n3", NULL, NULL);
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_reason(&fx.st, "node(s) didn't satisfy plugin(s) [FakeA FakeC] simultaneously");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, A));
    cr_assert_eq(res.narrowed_by, (UINT64_C(1) << slot_of(fx.fw, A)) | (UINT64_C(1) << slot_of(fx.fw, C)));
    assert_log("C.pre_filter B.pre_filter A.pre_filter");
    fx_close(&fx);
}

Test(framework, pre_filter_empty_result_of_one_plugin)
{
    struct fixture fx;
    struct ks_pre_filter_result res;

    fx_open(&fx, PF_ABC);
    narrow(B, NULL, NULL, NULL);
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_reason(&fx.st, "node(s) didn't satisfy plugin FakeB");
    assert_log("A.pre_filter B.pre_filter");
    fx_close(&fx);
}

/* ---- PreFilterExtensions and cycle-state clones --------------------------------------------- */

Test(framework, add_remove_pod_skip_skipped_plugins)
{
    struct fixture fx;
    struct ks_pre_filter_result res;
    struct ks_node_snap n1 = snap("n1");

    fx_open(&fx, PF_ABC);
    ks_fake(B)->code[KS_FAKE_PRE_FILTER] = KS_SKIP;
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_SUCCESS);
    ks_fake_log_clear();
    cr_assert_eq(ks_fw_run_add_pod(fx.fw, &fx.cs, &fx.pod, &fx.pod, &n1, &fx.st), KS_SUCCESS);
    cr_assert_eq(ks_fw_run_remove_pod(fx.fw, &fx.cs, &fx.pod, &fx.pod, &n1, &fx.st), KS_SUCCESS);
    assert_log("A.add_pod C.add_pod A.remove_pod C.remove_pod");
    fx_close(&fx);
}

Test(framework, add_pod_error_is_wrapped)
{
    struct fixture fx;
    struct ks_pre_filter_result res;
    struct ks_node_snap n1 = snap("n1");

    fx_open(&fx, PF_ABC);
    ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st);
    ks_fake(B)->code[KS_FAKE_ADD_POD] = KS_UNSCHEDULABLE;
    cr_assert_eq(ks_fw_run_add_pod(fx.fw, &fx.cs, &fx.pod, &fx.pod, &n1, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running AddPod on PreFilter plugin \"FakeB\": FakeB add_pod");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    ks_fake(C)->code[KS_FAKE_REMOVE_POD] = KS_ERROR;
    cr_assert_eq(ks_fw_run_remove_pod(fx.fw, &fx.cs, &fx.pod, &fx.pod, &n1, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running RemovePod on PreFilter plugin \"FakeC\": FakeC remove_pod");
    fx_close(&fx);
}

Test(framework, clone_copies_state_for_dry_runs)
{
    struct fixture fx;
    struct ks_pre_filter_result res;
    struct ks_cycle_state dry;
    struct ks_node_snap n1 = snap("n1");

    fx_open(&fx, PF_ABC);
    ks_fake(C)->code[KS_FAKE_PRE_FILTER] = KS_SKIP;
    ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st);
    fx.cs.seed = 42;
    uint16_t a = slot_of(fx.fw, A);
    cr_assert_eq(ks_fake_state_pods(&fx.cs, a), 0);

    ks_cycle_state_init(&dry);
    cr_assert_eq(ks_cycle_state_clone(fx.fw, &fx.cs, &dry), 0);
    cr_assert_eq(dry.skip_filter, fx.cs.skip_filter);
    cr_assert_eq(dry.seed, 42);
    cr_assert_neq(dry.slot[a], fx.cs.slot[a]);
    ks_fw_run_add_pod(fx.fw, &dry, &fx.pod, &fx.pod, &n1, &fx.st);
    ks_fw_run_add_pod(fx.fw, &dry, &fx.pod, &fx.pod, &n1, &fx.st);
    cr_assert_eq(ks_fake_state_pods(&dry, a), 2);
    cr_assert_eq(ks_fake_state_pods(&fx.cs, a), 0);

    /* a second clone into the same state starts over */
    cr_assert_eq(ks_cycle_state_clone(fx.fw, &fx.cs, &dry), 0);
    cr_assert_eq(ks_fake_state_pods(&dry, a), 0);
    ks_cycle_state_destroy(&dry);

    ks_cycle_state_reset(&fx.cs);
    cr_assert_null(fx.cs.slot[a]);
    cr_assert_eq(fx.cs.skip_filter, 0);
    fx_close(&fx);
}

/* ---- Filter --------------------------------------------------------------------------------- */

#define F_ABC KS_FAKE_POINT3("filter", "FakeA", "FakeB", "FakeC")

Test(framework, filter_first_failure_ends)
{
    struct fixture fx;
    struct ks_node_snap n1 = snap("n1");

    fx_open(&fx, F_ABC);
    ks_fake(B)->code[KS_FAKE_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(B)->msg = "Insufficient cpu";
    ks_fake(C)->code[KS_FAKE_FILTER] = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.code, KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "Insufficient cpu");
    assert_log("A.filter B.filter");
    fx_close(&fx);
}

Test(framework, filter_per_node)
{
    struct fixture fx;
    struct ks_node_snap n1 = snap("n1"), n2 = snap("n2");

    fx_open(&fx, F_ABC);
    ks_fake(C)->code[KS_FAKE_FILTER] = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    ks_fake(C)->only_node = n2.name;
    fx.st.plugin = 7;
    fx.st.nreasons = 3;
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &fx.st), KS_SUCCESS);
    cr_assert_eq(fx.st.code, KS_SUCCESS);
    cr_assert_eq(fx.st.plugin, KS_NO_PLUGIN);
    cr_assert_eq(fx.st.nreasons, 0);
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n2, &fx.st), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, C));
    fx_close(&fx);
}

Test(framework, filter_non_rejection_is_an_error)
{
    struct fixture fx;
    struct ks_node_snap n1 = snap("n1");

    fx_open(&fx, F_ABC);
    ks_fake(B)->code[KS_FAKE_FILTER] = KS_SKIP;
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &fx.st), KS_ERROR);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "running \"FakeB\" filter plugin: FakeB filter");
    ks_fake(B)->code[KS_FAKE_FILTER] = KS_PENDING;
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &fx.st), KS_PENDING);
    fx_close(&fx);
}

/* ---- PostFilter ----------------------------------------------------------------------------- */

#define PO_ABC KS_FAKE_POINT3("postFilter", "FakeA", "FakeB", "FakeC")

Test(framework, post_filter_first_success_wins)
{
    struct fixture fx;
    struct ks_diagnosis diag = {0};
    struct ks_post_filter_result res;

    fx_open(&fx, PO_ABC);
    ks_fake(A)->code[KS_FAKE_POST_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(A)->nominate = ks_intern("n9");
    ks_fake(B)->nominate = ks_intern("n1");
    cr_assert_eq(ks_fw_run_post_filter(fx.fw, &fx.cs, &fx.pod, &diag, &res, &fx.st), KS_SUCCESS);
    cr_assert_eq(res.nominated_node, ks_intern("n1"));
    cr_assert_eq(fx.st.code, KS_SUCCESS);
    assert_log("A.post_filter B.post_filter");
    fx_close(&fx);
}

Test(framework, post_filter_all_unschedulable_merges_reasons)
{
    struct fixture fx;
    struct ks_diagnosis diag = {0};
    struct ks_post_filter_result res;

    fx_open(&fx, PO_ABC);
    for (int i = A; i <= C; i++)
        ks_fake(i)->code[KS_FAKE_POST_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(A)->msg = "0/3 nodes are available: preemption is not helpful";
    ks_fake(B)->nominate = ks_intern("n2");
    ks_fake(C)->msg = "c";
    ks_fake(C)->msg2 = "d";
    cr_assert_eq(ks_fw_run_post_filter(fx.fw, &fx.cs, &fx.pod, &diag, &res, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, A));
    cr_assert_eq(fx.st.nreasons, 4);
    cr_assert_str_eq(ks_intern_str(fx.st.reasons[0]), "0/3 nodes are available: preemption is not helpful");
    cr_assert_str_eq(ks_intern_str(fx.st.reasons[1]), "FakeB post_filter");
    cr_assert_str_eq(ks_intern_str(fx.st.reasons[2]), "c");
    cr_assert_str_eq(ks_intern_str(fx.st.reasons[3]), "d");
    cr_assert_eq(res.nominated_node, ks_intern("n2"));
    assert_log("A.post_filter B.post_filter C.post_filter");
    fx_close(&fx);
}

Test(framework, post_filter_unresolvable_and_error_stop)
{
    struct fixture fx;
    struct ks_diagnosis diag = {0};
    struct ks_post_filter_result res;

    fx_open(&fx, PO_ABC);
    ks_fake(A)->code[KS_FAKE_POST_FILTER] = KS_UNSCHEDULABLE;
    ks_fake(B)->code[KS_FAKE_POST_FILTER] = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    cr_assert_eq(ks_fw_run_post_filter(fx.fw, &fx.cs, &fx.pod, &diag, &res, &fx.st),
                 KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "FakeB post_filter");
    assert_log("A.post_filter B.post_filter");

    ks_fake_log_clear();
    ks_fake(B)->code[KS_FAKE_POST_FILTER] = KS_ERROR;
    ks_fake(B)->msg = "x";
    ks_fake(B)->msg2 = "y";
    cr_assert_eq(ks_fw_run_post_filter(fx.fw, &fx.cs, &fx.pod, &diag, &res, &fx.st), KS_ERROR);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "x, y");
    cr_assert_eq(res.nominated_node, KS_ID_EMPTY);
    assert_log("A.post_filter B.post_filter");
    fx_close(&fx);
}

/* ---- PreScore, Score, NormalizeScore -------------------------------------------------------- */

static int64_t score_by_pods(const struct ks_node_snap *node)
{
    return node->npods;
}

#define SCORES                                                                                               \
    KS_FAKE_POINT3("preScore", "FakeA", "FakeB", "FakeC")                                                    \
    "    score:\n      enabled:\n      - name: FakeA\n        weight: 2\n      - name: FakeB\n"              \
    "      - name: FakeC\n        weight: 3\n"

Test(framework, pre_score_skip_skips_score)
{
    struct fixture fx;
    struct ks_node_snap n1 = snap("n1");
    const struct ks_node_snap *nodes[] = {&n1};
    int64_t scores[3] = {-1, -1, -1};

    fx_open(&fx, SCORES);
    ks_fake(A)->score = 5;
    ks_fake(B)->score = 6;
    ks_fake(B)->code[KS_FAKE_PRE_SCORE] = KS_SKIP;
    ks_fake(C)->score = 7;
    cr_assert_eq(ks_fw_run_pre_score(fx.fw, &fx.cs, &fx.pod, nodes, 1, &fx.st), KS_SUCCESS);
    cr_assert_eq(fx.cs.skip_score, UINT64_C(1) << slot_of(fx.fw, B));
    cr_assert_eq(ks_fw_score_node(fx.fw, &fx.cs, &fx.pod, &n1, scores, &fx.st), KS_SUCCESS);
    cr_assert_eq(scores[0], 5);
    cr_assert_eq(scores[1], 0);
    cr_assert_eq(scores[2], 7);
    assert_log("A.pre_score B.pre_score C.pre_score A.score C.score");
    fx_close(&fx);
}

Test(framework, pre_score_error_is_wrapped)
{
    struct fixture fx;

    fx_open(&fx, SCORES);
    ks_fake(A)->code[KS_FAKE_PRE_SCORE] = KS_SKIP;
    ks_fake(B)->code[KS_FAKE_PRE_SCORE] = KS_UNSCHEDULABLE;
    cr_assert_eq(ks_fw_run_pre_score(fx.fw, &fx.cs, &fx.pod, NULL, 0, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running PreScore plugin \"FakeB\": FakeB pre_score");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    cr_assert_eq(fx.cs.skip_score, UINT64_C(1) << slot_of(fx.fw, A));
    assert_log("A.pre_score B.pre_score");
    fx_close(&fx);
}

Test(framework, score_error_is_wrapped)
{
    struct fixture fx;
    struct ks_node_snap n1 = snap("n1");
    int64_t scores[3];

    fx_open(&fx, SCORES);
    ks_fake(B)->code[KS_FAKE_SCORE] = KS_ERROR;
    ks_fake(B)->msg = "no data";
    cr_assert_eq(ks_fw_score_node(fx.fw, &fx.cs, &fx.pod, &n1, scores, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running Score plugins: plugin \"FakeB\" failed with: no data");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_log("A.score B.score");
    fx_close(&fx);
}

/* Score three nodes with npods 1, 2, 4 through every plugin, then normalise. */
static int score_three(struct fixture *fx, int64_t *scores, int64_t *totals)
{
    static struct ks_node_snap n[3];
    const struct ks_node_snap *nodes[3];

    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i + 1);
        n[i] = snap(name);
        n[i].npods = 1u << i;
        nodes[i] = &n[i];
        cr_assert_eq(ks_fw_score_node(fx->fw, &fx->cs, &fx->pod, &n[i], &scores[i * 3], &fx->st), KS_SUCCESS);
    }
    return ks_fw_normalize_scores(fx->fw, &fx->cs, &fx->pod, nodes, 3, scores, totals, &fx->st);
}

Test(framework, normalize_then_weights_then_totals)
{
    struct fixture fx;
    int64_t scores[9], totals[3];

    fx_open(&fx, SCORES);
    ks_fake(A)->score_fn = score_by_pods; /* 1 2 4 -> 25 50 100, weight 2 */
    ks_fake(A)->normalize = KS_FAKE_NORM_MAX;
    ks_fake(B)->score = 7;  /* kept, weight 1 */
    ks_fake(C)->score = 10; /* +5, weight 3 */
    ks_fake(C)->normalize = KS_FAKE_NORM_ADD;
    ks_fake(C)->norm_add = 5;
    cr_assert_eq(score_three(&fx, scores, totals), KS_SUCCESS);
    int64_t want[9] = {50, 7, 45, 100, 7, 45, 200, 7, 45};
    for (int i = 0; i < 9; i++)
        cr_assert_eq(scores[i], want[i], "scores[%d]: got %ld, want %ld", i, (long)scores[i], (long)want[i]);
    cr_assert_eq(totals[0], 102);
    cr_assert_eq(totals[1], 152);
    cr_assert_eq(totals[2], 252);
    fx_close(&fx);
}

Test(framework, normalize_skips_skipped_plugins)
{
    struct fixture fx;
    int64_t scores[9], totals[3];

    fx_open(&fx, SCORES);
    ks_fake(A)->score = 10;
    ks_fake(B)->score = 20;
    ks_fake(B)->code[KS_FAKE_PRE_SCORE] = KS_SKIP;
    ks_fake(C)->score = 30;
    cr_assert_eq(ks_fw_run_pre_score(fx.fw, &fx.cs, &fx.pod, NULL, 0, &fx.st), KS_SUCCESS);
    ks_fake_log_clear();
    cr_assert_eq(score_three(&fx, scores, totals), KS_SUCCESS);
    cr_assert_eq(totals[0], 10 * 2 + 30 * 3);
    cr_assert_eq(scores[1], 0);
    assert_log("A.score C.score A.score C.score A.score C.score A.normalize C.normalize");
    fx_close(&fx);
}

Test(framework, normalize_out_of_range_is_an_error)
{
    struct fixture fx;
    int64_t scores[9], totals[3];

    fx_open(&fx, SCORES);
    ks_fake(B)->score = 7;
    ks_fake(B)->normalize = KS_FAKE_NORM_ADD;
    ks_fake(B)->norm_add = 200;
    cr_assert_eq(score_three(&fx, scores, totals), KS_ERROR);
    assert_reason(&fx.st,
                  "applying score defaultWeights on Score plugins: plugin \"FakeB\" returns an invalid "
                  "score 207, it should in the range of [0, 100] after normalizing");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));

    ks_fake(B)->norm_add = -8;
    cr_assert_eq(score_three(&fx, scores, totals), KS_ERROR);
    assert_reason(&fx.st,
                  "applying score defaultWeights on Score plugins: plugin \"FakeB\" returns an invalid "
                  "score -1, it should in the range of [0, 100] after normalizing");
    fx_close(&fx);
}

Test(framework, normalize_error_is_wrapped)
{
    struct fixture fx;
    int64_t scores[9], totals[3];

    fx_open(&fx, SCORES);
    ks_fake(C)->code[KS_FAKE_NORMALIZE] = KS_ERROR;
    cr_assert_eq(score_three(&fx, scores, totals), KS_ERROR);
    assert_reason(&fx.st,
                  "running Normalize on Score plugins: plugin \"FakeC\" failed with: FakeC normalize");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, C));
    fx_close(&fx);
}

/* ---- Reserve, Unreserve --------------------------------------------------------------------- */

#define R_ABC KS_FAKE_POINT3("reserve", "FakeA", "FakeB", "FakeC")

Test(framework, reserve_first_failure_then_unreserve_in_reverse)
{
    struct fixture fx;

    fx_open(&fx, R_ABC);
    ks_fake(B)->code[KS_FAKE_RESERVE] = KS_UNSCHEDULABLE;
    cr_assert_eq(ks_fw_run_reserve(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "FakeB reserve");
    ks_fw_run_unreserve(fx.fw, &fx.cs, &fx.pod, 1);
    assert_log("A.reserve B.reserve C.unreserve B.unreserve A.unreserve");
    fx_close(&fx);
}

Test(framework, reserve_error_is_wrapped)
{
    struct fixture fx;

    fx_open(&fx, R_ABC);
    cr_assert_eq(ks_fw_run_reserve(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_SUCCESS);
    ks_fake(C)->code[KS_FAKE_RESERVE] = KS_ERROR;
    cr_assert_eq(ks_fw_run_reserve(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running Reserve plugin \"FakeC\": FakeC reserve");
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, C));
    fx_close(&fx);
}

/* ---- PreBind, Bind, PostBind ---------------------------------------------------------------- */

Test(framework, pre_bind_first_failure)
{
    struct fixture fx;

    fx_open(&fx, KS_FAKE_POINT3("preBind", "FakeA", "FakeB", "FakeC"));
    ks_fake(B)->code[KS_FAKE_PRE_BIND] = KS_ERROR;
    ks_fake(B)->msg = "volume not bound";
    cr_assert_eq(ks_fw_run_pre_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running PreBind plugin \"FakeB\": volume not bound");
    assert_log("A.pre_bind B.pre_bind");
    ks_fake(B)->code[KS_FAKE_PRE_BIND] = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    cr_assert_eq(ks_fw_run_pre_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    assert_reason(&fx.st, "volume not bound");
    fx_close(&fx);
}

Test(framework, bind_first_non_skip_wins)
{
    struct fixture fx;

    fx_open(&fx, KS_FAKE_POINT3("bind", "FakeA", "FakeB", "FakeC"));
    ks_fake(A)->code[KS_FAKE_BIND] = KS_SKIP;
    cr_assert_eq(ks_fw_run_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_SUCCESS);
    cr_assert_eq(fx.st.code, KS_SUCCESS);
    assert_log("A.bind B.bind");

    ks_fake_log_clear();
    ks_fake(B)->code[KS_FAKE_BIND] = KS_ERROR;
    ks_fake(B)->msg = "connection refused";
    cr_assert_eq(ks_fw_run_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_ERROR);
    assert_reason(&fx.st, "running Bind plugin \"FakeB\": connection refused");
    assert_log("A.bind B.bind");

    ks_fake(B)->code[KS_FAKE_BIND] = KS_UNSCHEDULABLE;
    cr_assert_eq(ks_fw_run_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "connection refused");
    fx_close(&fx);
}

Test(framework, bind_all_skip_is_skip)
{
    struct fixture fx;

    fx_open(&fx, KS_FAKE_POINT2("bind", "FakeA", "FakeB"));
    ks_fake(A)->code[KS_FAKE_BIND] = KS_SKIP;
    ks_fake(B)->code[KS_FAKE_BIND] = KS_SKIP;
    cr_assert_eq(ks_fw_run_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_SKIP);
    cr_assert_eq(fx.st.code, KS_SKIP);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_log("A.bind B.bind");
    fx_close(&fx);
}

Test(framework, post_bind_runs_all_in_order)
{
    struct fixture fx;

    fx_open(&fx, KS_FAKE_POINT3("postBind", "FakeC", "FakeA", "FakeB"));
    ks_fw_run_post_bind(fx.fw, &fx.cs, &fx.pod, 1);
    assert_log("C.post_bind A.post_bind B.post_bind");
    fx_close(&fx);
}

/* ---- points without plugins ----------------------------------------------------------------- */

Test(framework, empty_points_succeed)
{
    struct fixture fx;
    struct ks_pre_filter_result res;
    struct ks_post_filter_result pres;
    struct ks_diagnosis diag = {0};
    struct ks_node_snap n1 = snap("n1");
    const struct ks_node_snap *nodes[] = {&n1};
    int64_t scores[1], totals[1] = {-1};

    fx_open(&fx, "");
    cr_assert_eq(ks_fw_run_pre_filter(fx.fw, &fx.cs, &fx.pod, &res, &fx.st), KS_SUCCESS);
    cr_assert(res.all);
    cr_assert_eq(ks_fw_run_filter(fx.fw, &fx.cs, &fx.pod, &n1, &fx.st), KS_SUCCESS);
    cr_assert_eq(ks_fw_run_post_filter(fx.fw, &fx.cs, &fx.pod, &diag, &pres, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, KS_NO_PLUGIN);
    cr_assert_eq(ks_fw_run_pre_score(fx.fw, &fx.cs, &fx.pod, nodes, 1, &fx.st), KS_SUCCESS);
    cr_assert_eq(ks_fw_score_node(fx.fw, &fx.cs, &fx.pod, &n1, scores, &fx.st), KS_SUCCESS);
    cr_assert_eq(ks_fw_normalize_scores(fx.fw, &fx.cs, &fx.pod, nodes, 1, scores, totals, &fx.st),
                 KS_SUCCESS);
    cr_assert_eq(totals[0], 0);
    cr_assert_eq(ks_fw_run_reserve(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_SUCCESS);
    cr_assert_eq(ks_fw_run_permit(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_SUCCESS);
    cr_assert_eq(ks_fw_run_pre_bind(fx.fw, &fx.cs, &fx.pod, 1, &fx.st), KS_SUCCESS);
    assert_log("");
    fx_close(&fx);
}
