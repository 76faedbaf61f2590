/*
 * test_framework_permit.c - Permit and the waiting-pods map: rejections, errors, waits
 * ended by allow, reject and per-plugin timeouts (short ones), with the messages of
 * upstream's framework.go and waiting_pods_map.go.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "fakes/fake_plugins.h"
#include "fakes/objects.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"

#define A 0
#define B 1
#define C 2

#define MS 1000000LL

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_fake_reset();
}

TestSuite(permit, .init = setup);

struct fixture {
    struct ks_config *cfg;
    struct ks_framework *fw;
    struct ks_cycle_state cs;
    struct ks_pod *pod;
    struct ks_status st;
};

static void fx_open(struct fixture *fx)
{
    memset(fx, 0, sizeof(*fx));
    fx->fw = ks_fake_framework(KS_FAKE_POINT3("permit", "FakeA", "FakeB", "FakeC"), &fx->cfg);
    ks_cycle_state_init(&fx->cs);
    fx->pod = ks_fake_pod_done(ks_fake_pod("default", "web-0"));
    ks_fake_log_clear();
}

static void fx_close(struct fixture *fx)
{
    ks_pod_destroy(fx->pod);
    ks_cycle_state_destroy(&fx->cs);
    ks_framework_destroy(fx->fw);
    ks_config_destroy(fx->cfg);
}

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

static uint16_t slot_of(const struct ks_framework *fw, int i)
{
    for (uint32_t s = 0; s < ks_framework_nplugins(fw); s++) {
        if (strcmp(ks_framework_plugin_name(fw, s), ks_fake_plugins[i].name) == 0)
            return (uint16_t)s;
    }
    cr_assert_fail("%s is not in the framework", ks_fake_plugins[i].name);
    return KS_NO_PLUGIN;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Test(permit, all_success)
{
    struct fixture fx;

    fx_open(&fx);
    cr_assert_eq(ks_fw_run_permit(fx.fw, &fx.cs, fx.pod, 1, &fx.st), KS_SUCCESS);
    cr_assert_eq(fx.st.code, KS_SUCCESS);
    cr_assert_eq(ks_fw_waiting_count(fx.fw), 0);
    /* a pod that is not waiting passes WaitOnPermit at once */
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_SUCCESS);
    cr_assert_str_eq(ks_fake_log(), "A.permit B.permit C.permit");
    fx_close(&fx);
}

Test(permit, rejection_ends_and_keeps_its_status)
{
    struct fixture fx;

    fx_open(&fx);
    ks_fake(A)->code[KS_FAKE_PERMIT] = KS_WAIT;
    ks_fake(A)->timeout_ns = 1000 * MS;
    ks_fake(B)->code[KS_FAKE_PERMIT] = KS_UNSCHEDULABLE;
    ks_fake(B)->msg = "quota exceeded";
    cr_assert_eq(ks_fw_run_permit(fx.fw, &fx.cs, fx.pod, 1, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    assert_reason(&fx.st, "quota exceeded");
    cr_assert_eq(ks_fw_waiting_count(fx.fw), 0);
    cr_assert_str_eq(ks_fake_log(), "A.permit B.permit");
    fx_close(&fx);
}

Test(permit, error_is_wrapped)
{
    struct fixture fx;

    fx_open(&fx);
    ks_fake(C)->code[KS_FAKE_PERMIT] = KS_ERROR;
    cr_assert_eq(ks_fw_run_permit(fx.fw, &fx.cs, fx.pod, 1, &fx.st), KS_ERROR);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, C));
    assert_reason(&fx.st, "running Permit plugin \"FakeC\": FakeC permit");
    fx_close(&fx);
}

struct signal_args {
    struct ks_framework *fw;
    const struct ks_pod *pod;
    int delay_ms;
    const char *allow[2];
    const char *reject_plugin;
    const char *reject_msg;
};

static void *signaller(void *arg)
{
    struct signal_args *a = arg;
    struct timespec ts = {.tv_sec = a->delay_ms / 1000, .tv_nsec = (a->delay_ms % 1000) * MS};

    nanosleep(&ts, NULL);
    for (int i = 0; i < 2; i++) {
        if (a->allow[i])
            cr_assert_eq(ks_fw_allow(a->fw, a->pod, a->allow[i]), 0);
    }
    if (a->reject_msg)
        cr_assert_eq(ks_fw_reject(a->fw, a->pod, a->reject_plugin, a->reject_msg), 0);
    return NULL;
}

static void wait_two(struct fixture *fx, int64_t ta, int64_t tb)
{
    ks_fake(A)->code[KS_FAKE_PERMIT] = KS_WAIT;
    ks_fake(A)->timeout_ns = ta;
    ks_fake(C)->code[KS_FAKE_PERMIT] = KS_WAIT;
    ks_fake(C)->timeout_ns = tb;
    cr_assert_eq(ks_fw_run_permit(fx->fw, &fx->cs, fx->pod, 1, &fx->st), KS_WAIT);
    cr_assert_eq(fx->st.code, KS_WAIT);
    assert_reason(&fx->st, "one or more plugins asked to wait and no plugin rejected pod \"web-0\"");
    cr_assert_eq(ks_fw_waiting_count(fx->fw), 1);
}

Test(permit, wait_until_every_plugin_allows)
{
    struct fixture fx;
    pthread_t t;

    fx_open(&fx);
    wait_two(&fx, 10000 * MS, 10000 * MS);
    struct signal_args args = {.fw = fx.fw, .pod = fx.pod, .delay_ms = 20, .allow = {"FakeA", "FakeC"}};
    cr_assert_eq(pthread_create(&t, NULL, signaller, &args), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_SUCCESS);
    pthread_join(t, NULL);
    cr_assert_eq(fx.st.code, KS_SUCCESS);
    cr_assert_eq(ks_fw_waiting_count(fx.fw), 0);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeA"), -ENOENT);
    fx_close(&fx);
}

Test(permit, allow_before_wait_is_kept)
{
    struct fixture fx;

    fx_open(&fx);
    wait_two(&fx, 10000 * MS, 10000 * MS);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeC"), 0);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeB"), 0); /* not waiting on B: no effect */
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeA"), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_SUCCESS);
    fx_close(&fx);
}

Test(permit, reject_while_waiting)
{
    struct fixture fx;
    pthread_t t;

    fx_open(&fx);
    wait_two(&fx, 10000 * MS, 10000 * MS);
    struct signal_args args = {.fw = fx.fw,
                               .pod = fx.pod,
                               .delay_ms = 20,
                               .allow = {"FakeA", NULL},
                               .reject_plugin = "FakeC",
                               .reject_msg = "gang incomplete"};
    cr_assert_eq(pthread_create(&t, NULL, signaller, &args), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_UNSCHEDULABLE);
    pthread_join(t, NULL);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, C));
    assert_reason(&fx.st, "gang incomplete");
    cr_assert_eq(ks_fw_waiting_count(fx.fw), 0);
    fx_close(&fx);
}

Test(permit, first_decision_wins)
{
    struct fixture fx;

    fx_open(&fx);
    wait_two(&fx, 10000 * MS, 10000 * MS);
    cr_assert_eq(ks_fw_reject(fx.fw, fx.pod, NULL, "removed"), 0);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeA"), 0);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeC"), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, KS_NO_PLUGIN);
    assert_reason(&fx.st, "removed");
    fx_close(&fx);
}

Test(permit, timeout_of_the_first_pending_plugin)
{
    struct fixture fx;

    fx_open(&fx);
    int64_t start = mono_ms();
    wait_two(&fx, 150 * MS, 60 * MS);
    /* C is allowed before its 60ms run out (at once, from this thread: a signaller thread
     * started late on a loaded machine would let C time out first); then A's 150ms do */
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeC"), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_UNSCHEDULABLE);
    int64_t waited = mono_ms() - start;
    cr_assert_geq(waited, 140, "returned after %ld ms", (long)waited);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, A));
    assert_reason(&fx.st, "rejected due to timeout after waiting 150ms at plugin FakeA");
    cr_assert_eq(ks_fw_waiting_count(fx.fw), 0);
    fx_close(&fx);
}

Test(permit, timeout_beats_a_late_allow)
{
    struct fixture fx;
    struct timespec ts = {.tv_nsec = 40 * MS};

    fx_open(&fx);
    wait_two(&fx, 10 * MS, 1500 * MS);
    nanosleep(&ts, NULL);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeA"), 0);
    cr_assert_eq(ks_fw_allow(fx.fw, fx.pod, "FakeC"), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_UNSCHEDULABLE);
    assert_reason(&fx.st, "rejected due to timeout after waiting 10ms at plugin FakeA");
    fx_close(&fx);
}

Test(permit, zero_timeout_rejects_at_once)
{
    struct fixture fx;

    fx_open(&fx);
    ks_fake(B)->code[KS_FAKE_PERMIT] = KS_WAIT;
    cr_assert_eq(ks_fw_run_permit(fx.fw, &fx.cs, fx.pod, 1, &fx.st), KS_WAIT);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_UNSCHEDULABLE);
    assert_reason(&fx.st, "rejected due to timeout after waiting 0s at plugin FakeB");
    fx_close(&fx);
}

Test(permit, long_timeouts_are_capped_and_rejectable)
{
    struct fixture fx;

    fx_open(&fx);
    ks_fake(B)->code[KS_FAKE_PERMIT] = KS_WAIT;
    ks_fake(B)->timeout_ns = 3600LL * 1000 * MS; /* an hour: capped at 15m */
    cr_assert_eq(ks_fw_run_permit(fx.fw, &fx.cs, fx.pod, 1, &fx.st), KS_WAIT);
    cr_assert_eq(ks_fw_reject(fx.fw, fx.pod, "FakeB", "no"), 0);
    cr_assert_eq(ks_fw_wait_on_permit(fx.fw, fx.pod, &fx.st), KS_UNSCHEDULABLE);
    cr_assert_eq(fx.st.plugin, slot_of(fx.fw, B));
    fx_close(&fx);
}

Test(permit, unknown_pods)
{
    struct fixture fx;
    struct ks_pod other = {.meta.name = "other", .meta.uid = "u-2"};

    fx_open(&fx);
    cr_assert_eq(ks_fw_allow(fx.fw, &other, "FakeA"), -ENOENT);
    cr_assert_eq(ks_fw_reject(fx.fw, &other, "FakeA", "x"), -ENOENT);
    fx_close(&fx);
}

Test(permit, waiting_pods_left_at_destroy_are_freed)
{
    struct fixture fx;

    fx_open(&fx);
    wait_two(&fx, 10000 * MS, 10000 * MS);
    fx_close(&fx); /* LeakSanitizer checks the entry went with the framework */
}
