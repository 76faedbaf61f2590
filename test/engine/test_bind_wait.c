/*
 * test_bind_wait.c - a PreBind that waits (KS_WAIT with cs->bind_wait, framework_types.h):
 * the framework stops the run at the waiting plugin and resumes it with the plugin's
 * outcome; the binder parks the binding instead of holding its thread, finishes it when
 * the wait ends (also when it ends before PreBind returned), and a failed wait requeues
 * the pod with the plugin's wrapped message.
 */
#include <criterion/criterion.h>

#include "fakes/fake_plugins.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"
#include "ksched/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_fake_register();
    ks_fake_reset();
}

TestSuite(bind_wait, .init = setup);

static const char *reason(const struct ks_status *st)
{
    return st->nreasons ? ks_intern_str(st->reasons[0]) : "";
}

static void no_done(struct ks_bind_wait *w, int code, const struct ks_status *st)
{
    (void)w, (void)code, (void)st;
}

/* ---- the framework ---------------------------------------------------------------------- */

Test(bind_wait, wait_without_a_handle_is_an_error)
{
    struct ks_config *cfg;
    struct ks_framework *fw = ks_fake_framework(KS_FAKE_POINT2("preBind", "FakeA", "FakeB"), &cfg);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    ks_cycle_state_init(&cs);
    ks_fake_log_clear();
    ks_fake(0)->code[KS_FAKE_PRE_BIND] = KS_WAIT;
    ks_fake(0)->msg = "not now";
    cr_expect_eq(ks_fw_run_pre_bind(fw, &cs, NULL, 0, &st), KS_ERROR);
    cr_expect_str_eq(reason(&st), "running PreBind plugin \"FakeA\": not now");
    cr_expect_str_eq(ks_fake_log(), "A.pre_bind");
    ks_cycle_state_destroy(&cs);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
}

Test(bind_wait, run_stops_at_the_waiting_plugin_and_resumes_after_it)
{
    struct ks_config *cfg;
    struct ks_framework *fw = ks_fake_framework(KS_FAKE_POINT3("preBind", "FakeA", "FakeB", "FakeC"), &cfg);
    struct ks_bind_wait w = {.done = no_done};
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    ks_cycle_state_init(&cs);
    cs.bind_wait = &w;
    ks_fake_log_clear();
    ks_fake(1)->code[KS_FAKE_PRE_BIND] = KS_WAIT;
    cr_expect_eq(ks_fw_run_pre_bind(fw, &cs, NULL, 0, &st), KS_WAIT);
    cr_expect_str_eq(ks_fake_log(), "A.pre_bind B.pre_bind");
    ks_fake_log_clear();
    cr_expect_eq(ks_fw_resume_pre_bind(fw, &cs, NULL, 0, KS_SUCCESS, NULL, &st), KS_SUCCESS);
    cr_expect_str_eq(ks_fake_log(), "C.pre_bind", "the plugins after the waiting one run: %s", ks_fake_log());

    /* a failed wait is the waiting plugin's failure: wrapped, or a rejection kept */
    ks_fake_log_clear();
    cr_expect_eq(ks_fw_run_pre_bind(fw, &cs, NULL, 0, &st), KS_WAIT);
    struct ks_status result = {0};
    ks_status_set(&result, KS_ERROR, "binding volumes: context deadline exceeded");
    cr_expect_eq(ks_fw_resume_pre_bind(fw, &cs, NULL, 0, KS_ERROR, &result, &st), KS_ERROR);
    cr_expect_str_eq(reason(&st),
                     "running PreBind plugin \"FakeB\": binding volumes: context deadline exceeded");
    cr_expect_str_eq(ks_fake_log(), "A.pre_bind B.pre_bind");
    ks_status_set(&result, KS_UNSCHEDULABLE, "no room");
    cr_expect_eq(ks_fw_resume_pre_bind(fw, &cs, NULL, 0, KS_UNSCHEDULABLE, &result, &st), KS_UNSCHEDULABLE);
    cr_expect_str_eq(reason(&st), "no room");
    cr_expect_str_eq(ks_framework_plugin_name(fw, st.plugin), "FakeB");
    ks_cycle_state_destroy(&cs);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
}

/* ---- the binder ------------------------------------------------------------------------- */

/*
 * TestParker's PreBind hands its wait to the resolver thread; for pods named "eager-*" it
 * ends the wait itself before it returns KS_WAIT.
 */
#define MAX_WAITS 64
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct ks_bind_wait *waits[MAX_WAITS];
    const char *pods[MAX_WAITS];
    uint32_t n, taken, most_parked;
    bool failed_once;
} parker = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static int parker_pre_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                           struct ks_status *st)
{
    (void)self, (void)node, (void)st;
    if (!cs->bind_wait)
        return ks_status_set(st, KS_ERROR, "cannot wait");
    if (strncmp(pod->meta.name, "eager-", 6) == 0) {
        ks_bind_wait_done(cs->bind_wait, KS_SUCCESS, NULL);
        return KS_WAIT;
    }
    pthread_mutex_lock(&parker.lock);
    cr_assert_lt(parker.n, MAX_WAITS);
    parker.pods[parker.n] = pod->meta.name;
    parker.waits[parker.n++] = cs->bind_wait;
    uint32_t parked = parker.n - parker.taken;
    if (parked > parker.most_parked)
        parker.most_parked = parked;
    pthread_cond_broadcast(&parker.cond);
    pthread_mutex_unlock(&parker.lock);
    return KS_WAIT;
}

static int parker_init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    (void)in, (void)err;
    *self = NULL;
    return 0;
}

static const struct ks_plugin parker_plugin = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "TestParker",
    .init = parker_init,
    .pre_bind = parker_pre_bind,
};

static _Atomic bool resolver_quit;

/* Waits until 3 bindings are parked at once (one binder: none holds it), then ends every
 * wait: "fail-once" fails the first time, everything else succeeds. */
static void *resolver(void *arg)
{
    (void)arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    pthread_mutex_lock(&parker.lock);
    while (parker.n < 3 && !atomic_load(&resolver_quit)) {
        if (pthread_cond_timedwait(&parker.cond, &parker.lock, &deadline) != 0)
            break;
    }
    while (!atomic_load(&resolver_quit)) {
        while (parker.taken < parker.n) {
            uint32_t i = parker.taken++;
            struct ks_bind_wait *w = parker.waits[i];
            bool fail = strcmp(parker.pods[i], "fail-once") == 0 && !parker.failed_once;
            pthread_mutex_unlock(&parker.lock);
            if (fail) {
                struct ks_status st = {0};
                ks_status_set(&st, KS_ERROR, "volume gone");
                parker.failed_once = true;
                ks_bind_wait_done(w, KS_ERROR, &st);
            } else {
                ks_bind_wait_done(w, KS_SUCCESS, NULL);
            }
            pthread_mutex_lock(&parker.lock);
        }
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 5000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&parker.cond, &parker.lock, &t);
    }
    pthread_mutex_unlock(&parker.lock);
    return NULL;
}

struct outcome {
    pthread_mutex_t lock;
    uint32_t scheduled, errors;
    char error[512];
};

static void collect(void *ctx, const struct ks_sched_event *ev)
{
    struct outcome *o = ctx;
    pthread_mutex_lock(&o->lock);
    if (ev->kind == KS_SCHED_SCHEDULED)
        o->scheduled++;
    if (ev->kind == KS_SCHED_ERROR) {
        o->errors++;
        snprintf(o->error, sizeof(o->error), "%s: %s", ev->pod->meta.name, ev->message);
    }
    pthread_mutex_unlock(&o->lock);
}

#define NODE(n)                                                                                              \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " n                                                   \
    "}\nstatus: {allocatable: {cpu: '8', pods: '110'}}\n"
#define POD(n)                                                                                               \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " n ", namespace: default, uid: uid-" n "}\n"          \
    "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"

Test(bind_wait, parked_bindings_hold_no_binder_and_finish_when_the_wait_ends)
{
    static const char cfg_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                   "kind: KubeSchedulerConfiguration\n"
                                   "profiles:\n"
                                   "- schedulerName: default-scheduler\n"
                                   "  plugins:\n"
                                   "    preBind:\n"
                                   "      enabled:\n"
                                   "      - name: TestParker\n";
    static const char cluster[] =
        NODE("node-a") NODE("node-b") POD("web-0") POD("web-1") POD("fail-once") POD("eager-0");
    struct ks_error err = {0};
    struct ks_config *cfg;
    struct ks_objects *objs;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    struct outcome o = {.lock = PTHREAD_MUTEX_INITIALIZER};
    pthread_t t;

    if (!ks_registry_find("TestParker"))
        cr_assert_eq(ks_registry_add(&parker_plugin, &err), 0, "%s", err.msg);
    ks_rcu_register_thread();
    cr_assert_eq(ks_config_load_yaml("cfg.yaml", cfg_yaml, strlen(cfg_yaml), &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_objects_load_buffer("cluster.yaml", cluster, strlen(cluster), &objs, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ks_cache_create(&cache), 0);
    struct ks_scheduler_opts opts = {.config = cfg,
                                     .objects = objs,
                                     .binders = 1,
                                     .seeded = true,
                                     .seed = 1,
                                     .on_event = collect,
                                     .ctx = &o};
    cr_assert_eq(ks_scheduler_create(&opts, cache, &s, &err), 0, "%s", err.msg);
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(cache, ks_objects_nodes(objs)[i]), 0);
    objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        cr_assert_eq(ks_scheduler_add_pod(s, ks_objects_pods(objs)[i]), 0);
    cr_assert_eq(pthread_create(&t, NULL, resolver, NULL), 0);
    ks_scheduler_run_until_idle(s);
    atomic_store(&resolver_quit, true);
    pthread_join(t, NULL);

    cr_expect_geq(parker.most_parked, 3, "3 bindings parked at once on 1 binder (saw %u)",
                  parker.most_parked);
    cr_expect_eq(o.scheduled, 4, "scheduled %u", o.scheduled);
    cr_expect_eq(o.errors, 1, "errors %u", o.errors);
    cr_expect_str_eq(o.error, "fail-once: running PreBind plugin \"TestParker\": volume gone");
    /* the failed pod waited again on its retry */
    cr_expect_eq(parker.n, 4, "waits %u", parker.n);
    ks_scheduler_destroy(s);
    ks_cache_destroy(cache);
    ks_objects_destroy(objs);
    ks_config_destroy(cfg);
    ks_rcu_unregister_thread();
}
