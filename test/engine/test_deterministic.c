/*
 * test_deterministic.c - the deterministic batch run (struct ks_scheduler_opts.deterministic):
 * a binding is settled before the next cycle, pods waiting on Permit excepted, and the
 * queue's logical clock orders pods added one after another.
 */
#include <criterion/criterion.h>

#include "../fakes/fake_plugins.h"
#include "../fakes/load_text.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct record {
    struct ks_scheduler *s;
    uint32_t cycles, scheduled, unschedulable;
    uint32_t unsettled; /* cycles that began with an earlier binding not yet done */
    char order[64][32]; /* Scheduled pods, in the order they were reported */
};

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct record *r = ctx;
    if (ev->kind == KS_SCHED_SCHEDULED && r->scheduled < 64)
        snprintf(r->order[r->scheduled++], sizeof(r->order[0]), "%s", ev->pod->meta.name);
    else if (ev->kind == KS_SCHED_UNSCHEDULABLE)
        r->unschedulable++;
}

/* Every cycle but the first finds the earlier pods bound (each fits: one Scheduled per cycle). */
static void on_cycle(void *ctx, const struct ks_queued_pod *qp)
{
    struct record *r = ctx;
    (void)qp;
    if (r->scheduled + r->unschedulable < r->cycles)
        r->unsettled++;
    r->cycles++;
}

/* A binding that takes a while, so that a run that does not wait for it would see it in flight. */
static int slow_bind(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    (void)ctx, (void)pod, (void)node, (void)st;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    return 0;
}

/* @nodes nodes of 8 cpu and @pods pods of 100m for the profile @scheduler, as manifests (malloc'd). */
static char *cluster_text(uint32_t nodes, uint32_t pods, const char *scheduler)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    for (uint32_t i = 0; i < nodes; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%u}\n"
                "status:\n  allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n",
                i);
    for (uint32_t i = 0; i < pods; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%02u}\nspec:\n  schedulerName: %s\n"
                "  containers: [{name: c, resources: {requests: {cpu: 100m, memory: 100Mi}}}]\n",
                i, scheduler);
    cr_assert_eq(fclose(f), 0);
    return text;
}

struct run {
    struct ks_objects *objs;
    struct ks_cache *cache;
};

/* Load the cluster of cluster_text() into a new scheduler with @opts reporting to @r. */
static void start(struct run *run, struct ks_scheduler_opts *opts, uint32_t nodes, uint32_t pods,
                  const char *scheduler, struct record *r)
{
    struct ks_error err = {0};
    char *text = cluster_text(nodes, pods, scheduler);
    cr_assert_eq(ks_test_load_text(text, KS_VALIDATE_STRICT, &run->objs, &err), 0, "%s", err.msg);
    free(text);
    cr_assert_eq(ks_cache_create(&run->cache), 0);
    opts->on_event = on_event;
    opts->on_cycle = on_cycle;
    opts->ctx = r;
    cr_assert_eq(ks_scheduler_create(opts, run->cache, &r->s, &err), 0, "%s", err.msg);
    for (uint32_t i = 0; i < ks_objects_count(run->objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(run->cache, ks_objects_nodes(run->objs)[i]), 0);
    run->objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(run->objs, POD); i++)
        cr_assert_eq(ks_scheduler_add_pod(r->s, ks_objects_pods(run->objs)[i]), 0);
}

static void finish(struct run *run, struct record *r)
{
    ks_scheduler_destroy(r->s);
    ks_cache_destroy(run->cache);
    ks_objects_destroy(run->objs);
}

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
}

TestSuite(deterministic, .init = setup);

Test(deterministic, every_cycle_starts_after_the_earlier_bindings_are_done)
{
    struct ks_config *cfg;
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    struct record r = {0};
    struct ks_scheduler_opts opts = {
        .config = cfg, .seeded = true, .seed = 3, .deterministic = true, .binder = {.bind = slow_bind}};
    struct run run;
    start(&run, &opts, 4, 20, "default-scheduler", &r);
    ks_scheduler_run_until_idle(r.s);
    finish(&run, &r);
    cr_expect_eq(r.scheduled, 20);
    cr_expect_eq(r.unsettled, 0, "%u cycles began with a binding in flight", r.unsettled);
    ks_config_destroy(cfg);
}

Test(deterministic, pods_of_one_priority_go_in_the_order_they_were_added)
{
    struct ks_config *cfg;
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    for (int round = 0; round < 3; round++) {
        struct record r = {0};
        struct ks_scheduler_opts opts = {.config = cfg, .seeded = true, .seed = 3, .deterministic = true};
        struct run run;
        start(&run, &opts, 3, 30, "default-scheduler", &r);
        ks_scheduler_run_until_idle(r.s);
        finish(&run, &r);
        cr_assert_eq(r.scheduled, 30);
        for (uint32_t i = 0; i < 30; i++) {
            char want[16];
            snprintf(want, sizeof(want), "pod-%02u", i);
            cr_expect_str_eq(r.order[i], want, "round %d: the %u-th pod bound", round, i);
        }
    }
    ks_config_destroy(cfg);
}

/*
 * A pod waiting on Permit does not hold the next cycles back: three pods wait at once (their
 * timeout is far off); deleting them ends the waits.
 */
Test(deterministic, pods_waiting_on_permit_do_not_hold_the_next_cycles)
{
    ks_fake_register();
    ks_fake_reset();
    ks_fake(0)->code[KS_FAKE_PERMIT] = KS_WAIT;
    ks_fake(0)->timeout_ns = INT64_C(600) * 1000000000;
    struct ks_config *cfg = ks_fake_config(KS_FAKE_POINT1("permit", "FakeA"));
    struct record r = {0};
    struct ks_scheduler_opts opts = {.config = cfg, .seeded = true, .seed = 3, .deterministic = true};
    struct run run;
    start(&run, &opts, 2, 3, "fake-scheduler", &r);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ks_scheduler_schedule_one(r.s, false), 1);
    cr_expect_eq(r.cycles, 3);
    cr_expect_eq(r.scheduled + r.unschedulable, 0, "every pod still waits on Permit");
    for (uint32_t i = 0; i < ks_objects_count(run.objs, POD); i++)
        ks_scheduler_delete_pod(r.s, ks_objects_pods(run.objs)[i]);
    ks_scheduler_run_until_idle(r.s);
    cr_expect_eq(r.scheduled, 0);
    finish(&run, &r);
    ks_config_destroy(cfg);
}
