/*
 * test_metrics.c - the metrics registry (include/ksched/base/metrics.h): Prometheus text format
 * 0.0.4 as client_golang writes it; `ksched serve`'s scheduler metrics (serve/serve_metrics.c);
 * the engine's families (ksched/internal/metrics_sched.h) recorded by a scheduler over a small cluster.
 */
#include <criterion/criterion.h>

#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/metrics.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/metrics_sched.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *exposition(struct ks_metrics *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert(out);
    cr_assert_eq(ks_metrics_write(m, out), 0);
    fclose(out);
    return buf;
}

Test(metrics, doubles_as_go_formats_them)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {0.001, "0.001"},
        {16.384, "16.384"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1e6, "1e+06"},
        {123456, "123456"},
        {1.5e-05, "1.5e-05"},
        {0.0001, "0.0001"},
        {2.5, "2.5"},
        {-3, "-3"},
        {1.0 / 0.0, "+Inf"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[64];
        ks_metrics_format_double(cases[i].v, buf, sizeof(buf));
        cr_expect_str_eq(buf, cases[i].want, "%.17g: got %s want %s", cases[i].v, buf, cases[i].want);
    }
}

Test(metrics, counter_and_gauge_with_escaped_labels)
{
    struct ks_metrics *m;
    cr_assert_eq(ks_metrics_create(&m), 0);
    static const char *const labels[] = {"result", "profile", NULL};
    struct ks_metric_family *f =
        ks_metrics_family(m, KS_METRIC_COUNTER, "x_total", "Help with \\ and\nnewline.", labels, NULL, 0);
    cr_assert(f);
    struct ks_metric *a = ks_metric_series(f, (const char *const[]){"scheduled", "default-scheduler"});
    struct ks_metric *b = ks_metric_series(f, (const char *const[]){"error", "we\"ird\\"});
    cr_assert(a && b);
    cr_expect_eq(ks_metric_series(f, (const char *const[]){"scheduled", "default-scheduler"}), a,
                 "the same labels give the same series");
    ks_metric_inc(a);
    ks_metric_inc(a);
    ks_metric_add(b, 0.5);
    struct ks_metric_family *g = ks_metrics_family(m, KS_METRIC_GAUGE, "y", "A gauge.", NULL, NULL, 0);
    ks_metric_set(ks_metric_series(g, NULL), 7);
    char *text = exposition(m);
    cr_expect_str_eq(text, "# HELP x_total Help with \\\\ and\\nnewline.\n"
                           "# TYPE x_total counter\n"
                           "x_total{result=\"scheduled\",profile=\"default-scheduler\"} 2\n"
                           "x_total{result=\"error\",profile=\"we\\\"ird\\\\\"} 0.5\n"
                           "# HELP y A gauge.\n"
                           "# TYPE y gauge\n"
                           "y 7\n");
    free(text);
    ks_metrics_destroy(m);
}

Test(metrics, histogram_buckets_are_cumulative_with_inf_sum_and_count)
{
    struct ks_metrics *m;
    double b[3];
    ks_metrics_exponential_buckets(0.001, 2, 3, b);
    cr_expect(b[0] == 0.001 && b[1] == 0.002 && b[2] == 0.004);
    cr_assert_eq(ks_metrics_create(&m), 0);
    static const char *const labels[] = {"result", NULL};
    struct ks_metric_family *f = ks_metrics_family(m, KS_METRIC_HISTOGRAM, "h_seconds", "H.", labels, b, 3);
    struct ks_metric *s = ks_metric_series(f, (const char *const[]){"scheduled"});
    ks_metric_observe(s, 0.001); /* le is inclusive */
    ks_metric_observe(s, 0.003);
    ks_metric_observe(s, 5);
    cr_expect_eq(ks_metric_value(s), 3);
    char *text = exposition(m);
    cr_expect_str_eq(text, "# HELP h_seconds H.\n"
                           "# TYPE h_seconds histogram\n"
                           "h_seconds_bucket{result=\"scheduled\",le=\"0.001\"} 1\n"
                           "h_seconds_bucket{result=\"scheduled\",le=\"0.002\"} 1\n"
                           "h_seconds_bucket{result=\"scheduled\",le=\"0.004\"} 2\n"
                           "h_seconds_bucket{result=\"scheduled\",le=\"+Inf\"} 3\n"
                           "h_seconds_sum{result=\"scheduled\"} 5.004\n"
                           "h_seconds_count{result=\"scheduled\"} 3\n");
    free(text);
    ks_metrics_destroy(m);
}

Test(metrics, rejects_bad_families)
{
    struct ks_metrics *m;
    double unsorted[] = {1, 0.5};
    cr_assert_eq(ks_metrics_create(&m), 0);
    cr_expect_null(ks_metrics_family(m, KS_METRIC_HISTOGRAM, "a", "a", NULL, unsorted, 2));
    cr_expect_null(ks_metrics_family(m, KS_METRIC_HISTOGRAM, "b", "b", NULL, NULL, 0),
                   "a histogram needs buckets");
    cr_expect_null(ks_metrics_family(m, KS_METRIC_COUNTER, "c", "c", NULL, unsorted, 1),
                   "a counter has none");
    ks_metrics_destroy(m);
}

/* serve's metrics over a registry of their own, under the default configuration. */
struct serve_metrics {
    struct ks_metrics *reg;
    struct ks_config *cfg;
    struct ks_serve_metrics *sm;
};

static void serve_metrics_open(struct serve_metrics *t)
{
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_config_load_default(&t->cfg), 0);
    cr_assert_eq(ks_metrics_create(&t->reg), 0);
    cr_assert_eq(ks_serve_metrics_create(t->reg, t->cfg, &t->sm), 0);
}

static void serve_metrics_close(struct serve_metrics *t)
{
    ks_serve_metrics_destroy(t->sm);
    ks_metrics_destroy(t->reg);
    ks_config_destroy(t->cfg);
}

/* The scheduler's families: upstream names, labels, buckets; an attempt timed from its cycle. */
Test(metrics, scheduler_attempts_and_durations)
{
    struct serve_metrics t;
    serve_metrics_open(&t);

    struct ks_pod pod = {.scheduler_name = ks_intern("default-scheduler")};
    struct ks_queued_pod qp = {.pod = &pod, .attempts = 2, .initial_attempt_ns = 1000000000};
    ks_serve_metrics_cycle(t.sm, &qp, 2000000000);
    struct ks_sched_event ev = {.kind = KS_SCHED_UNSCHEDULABLE, .pod = &pod, .message = "no"};
    ks_serve_metrics_event(t.sm, &ev, 2003000000); /* 3 ms */
    ks_serve_metrics_cycle(t.sm, &qp, 3000000000);
    ev.kind = KS_SCHED_SCHEDULED;
    ks_serve_metrics_event(t.sm, &ev, 3000500000); /* 0.5 ms */

    char *text = exposition(t.reg);
    const char *want[] = {
        "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"} 1\n",
        "scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"default-scheduler\"} 1\n",
        "scheduler_schedule_attempts_total{result=\"error\",profile=\"default-scheduler\"} 0\n",
        "scheduler_scheduling_attempt_duration_seconds_bucket{result=\"unschedulable\",profile=\"default-"
        "scheduler\",le=\"0.002\"} 0\n",
        "scheduler_scheduling_attempt_duration_seconds_bucket{result=\"unschedulable\",profile=\"default-"
        "scheduler\",le=\"0.004\"} 1\n",
        "scheduler_scheduling_attempt_duration_seconds_bucket{result=\"scheduled\",profile=\"default-"
        "scheduler\",le=\"0.001\"} 1\n",
        "scheduler_scheduling_attempt_duration_seconds_bucket{result=\"scheduled\",profile=\"default-"
        "scheduler\",le=\"16.384\"} 1\n",
        "scheduler_e2e_scheduling_duration_seconds_count{result=\"scheduled\",profile=\"default-scheduler\"} "
        "1\n",
        "scheduler_pod_scheduling_attempts_bucket{le=\"2\"} 1\n",
        "scheduler_pod_scheduling_duration_seconds_bucket{attempts=\"2\",le=\"2.56\"} 1\n",
        "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"2\",le=\"2.56\"} 1\n",
        "scheduler_pending_pods{queue=\"gated\"} 0\n",
        "scheduler_preemption_attempts_total 1\n",
        "# TYPE scheduler_preemption_victims histogram\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(strstr(text, want[i]), "missing line %s in\n%s", want[i], text);
    free(text);
    serve_metrics_close(&t);
}

Test(metrics, attempts_label_caps_at_15_as_upstream)
{
    struct serve_metrics t;
    serve_metrics_open(&t);
    struct ks_pod pod = {.scheduler_name = ks_intern("default-scheduler")};
    struct ks_sched_event ev = {.kind = KS_SCHED_SCHEDULED, .pod = &pod};
    uint32_t attempts[] = {14, 15, 30};
    for (int i = 0; i < 3; i++) {
        struct ks_queued_pod qp = {.pod = &pod, .attempts = attempts[i], .initial_attempt_ns = 1000000000};
        ks_serve_metrics_cycle(t.sm, &qp, 2000000000);
        ks_serve_metrics_event(t.sm, &ev, 2000000000);
    }
    char *text = exposition(t.reg);
    cr_expect(strstr(text, "scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"14\"} 1\n"), "%s",
              text);
    cr_expect(strstr(text, "scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"15+\"} 2\n"), "%s",
              text);
    cr_expect(strstr(text, "scheduler_pod_scheduling_duration_seconds_count{attempts=\"15+\"} 2\n"), "%s",
              text);
    cr_expect(strstr(text,
                     "# HELP scheduler_pod_scheduling_duration_seconds [STABLE] (Deprecated since 1.29.0) "
                     "E2e latency"),
              "deprecated as component-base marks it");
    cr_expect(strstr(text, "# TYPE scheduler_framework_extension_point_duration_seconds histogram\n"),
              "serve's registry holds the engine's families too");
    free(text);
    serve_metrics_close(&t);
}

/* The value of the sample written as @series ("name{labels}"), -1 when there is none. */
static double sample(const char *text, const char *series)
{
    size_t len = strlen(series);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, series, len) == 0 && l[len] == ' ')
            return strtod(l + len + 1, NULL);
    }
    return -1;
}

Test(metrics, whole_counts_weighted_observations_and_single_writer_updates)
{
    struct ks_metrics *m;
    double b[2] = {1, 2};
    cr_assert_eq(ks_metrics_create(&m), 0);
    struct ks_metric_family *c = ks_metrics_family(m, KS_METRIC_COUNTER, "c_total", "C.", NULL, NULL, 0);
    struct ks_metric *cs = ks_metric_series(c, NULL);
    ks_metric_count(cs, 3);
    ks_metric_count_sw(cs, 4);
    ks_metric_add(cs, 0.5);
    cr_expect_eq(ks_metric_value(cs), 7.5, "got %g", ks_metric_value(cs));
    static const char *const labels[] = {"l", NULL};
    struct ks_metric_family *h = ks_metrics_family(m, KS_METRIC_HISTOGRAM, "h", "H.", labels, b, 2);
    ks_metrics_family_hide_unused(h);
    struct ks_metric *used = ks_metric_series(h, (const char *const[]){"used"});
    cr_assert(ks_metric_series(h, (const char *const[]){"unused"}));
    ks_metric_observe_n(used, 1.5, 4); /* four observations of 1.5 */
    ks_metric_observe_sw(used, 0.5);
    char *text = exposition(m);
    cr_expect_str_eq(text, "# HELP c_total C.\n"
                           "# TYPE c_total counter\n"
                           "c_total 7.5\n"
                           "# HELP h H.\n"
                           "# TYPE h histogram\n"
                           "h_bucket{l=\"used\",le=\"1\"} 1\n"
                           "h_bucket{l=\"used\",le=\"2\"} 5\n"
                           "h_bucket{l=\"used\",le=\"+Inf\"} 5\n"
                           "h_sum{l=\"used\"} 6.5\n"
                           "h_count{l=\"used\"} 5\n");
    free(text);
    ks_metrics_destroy(m);
}

static int collected;
static void count_collect(void *ctx)
{
    (void)ctx;
    collected++;
}

Test(metrics, collectors_run_at_each_write_until_removed)
{
    struct ks_metrics *m;
    cr_assert_eq(ks_metrics_create(&m), 0);
    for (int i = 0; i < KS_METRICS_MAX_COLLECTORS; i++)
        cr_assert_eq(ks_metrics_add_collector(m, count_collect, (void *)(intptr_t)i), 0);
    cr_expect_eq(ks_metrics_add_collector(m, count_collect, NULL), -ENOSPC);
    free(exposition(m));
    cr_expect_eq(collected, KS_METRICS_MAX_COLLECTORS);
    for (int i = 1; i < KS_METRICS_MAX_COLLECTORS; i++)
        ks_metrics_remove_collector(m, count_collect, (void *)(intptr_t)i);
    free(exposition(m));
    cr_expect_eq(collected, KS_METRICS_MAX_COLLECTORS + 1);
    ks_metrics_destroy(m);
}

/* ---- the engine's families over a small cluster ------------------------------------------------ */

struct engine_run {
    struct ks_metrics *reg;
    struct ks_sched_metrics *sm;
    struct ks_config *cfg;
    struct ks_objects *objs;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    uint32_t cycles, scheduled, unschedulable;
};

static void on_cycle(void *ctx, const struct ks_queued_pod *qp)
{
    (void)qp;
    ((struct engine_run *)ctx)->cycles++;
}

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct engine_run *r = ctx;
    r->scheduled += ev->kind == KS_SCHED_SCHEDULED;
    r->unschedulable += ev->kind == KS_SCHED_UNSCHEDULABLE;
}

/*
 * @nodes nodes of 4 cpu; @fit pending pods of 1 cpu; one pod of 100 cpu that fits nowhere;
 * one pod held by a scheduling gate. Scheduled until idle with @percent % of the cycles
 * sampled, every cycle filtering and scoring node by node (no_index: the counts below are
 * those of the per-node path); the scheduler is left alive (its gauges are read at the scrape).
 */
static void engine_run(struct engine_run *r, uint32_t nodes, uint32_t fit, uint32_t percent)
{
    size_t cap = 512 * (nodes + fit + 2), len = 0;
    char *yaml = malloc(cap);
    struct ks_error err = {0};

    for (uint32_t i = 0; i < nodes; i++)
        len += (size_t)snprintf(yaml + len, cap - len,
                                "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%u}\n"
                                "status:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n",
                                i);
    for (uint32_t i = 0; i < fit + 1; i++)
        len += (size_t)snprintf(yaml + len, cap - len,
                                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%u}\nspec:\n"
                                "  containers:\n  - name: c\n    resources: {requests: {cpu: \"%s\"}}\n",
                                i, i < fit ? "1" : "100");
    len += (size_t)snprintf(yaml + len, cap - len,
                            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: gated}\nspec:\n"
                            "  schedulingGates: [{name: example.com/wait}]\n  containers:\n  - name: c\n");
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_objects_load_buffer("cluster.yaml", yaml, len, &r->objs, &err), 0, "%s", err.msg);
    free(yaml);
    cr_assert_eq(ks_config_load_default(&r->cfg), 0);
    cr_assert_eq(ks_metrics_create(&r->reg), 0);
    cr_assert_eq(ks_sched_metrics_create(r->reg, &r->sm), 0);
    ks_sched_metrics_sample_percent(r->sm, percent);
    cr_assert_eq(ks_cache_create(&r->cache), 0);
    struct ks_scheduler_opts opts = {.config = r->cfg,
                                     .seeded = true,
                                     .seed = 7,
                                     .no_index = true,
                                     .on_event = on_event,
                                     .on_cycle = on_cycle,
                                     .ctx = r,
                                     .metrics = r->sm};
    cr_assert_eq(ks_scheduler_create(&opts, r->cache, &r->s, &err), 0, "%s", err.msg);
    struct ks_scheduler *other;
    cr_expect_eq(ks_scheduler_create(&opts, r->cache, &other, &err), -EBUSY,
                 "a set serves one scheduler at a time");
    for (uint32_t i = 0; i < ks_objects_count(r->objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(r->cache, ks_objects_nodes(r->objs)[i]), 0);
    r->objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(r->objs, POD); i++)
        cr_assert_eq(ks_scheduler_add_pod(r->s, ks_objects_pods(r->objs)[i]), 0);
    ks_scheduler_run_until_idle(r->s);
}

static void engine_done(struct engine_run *r)
{
    ks_scheduler_destroy(r->s);
    ks_sched_metrics_destroy(r->sm);
    ks_metrics_destroy(r->reg);
    ks_cache_destroy(r->cache);
    ks_objects_destroy(r->objs);
    ks_config_destroy(r->cfg);
    ks_rcu_unregister_thread();
}

#define PROFILE "profile=\"default-scheduler\""

Test(metrics, engine_families_with_upstream_names_labels_and_values)
{
    struct engine_run r = {0};
    engine_run(&r, 4, 6, 100);
    cr_assert_eq(r.scheduled, 6);
    cr_assert_geq(r.unschedulable, 1);
    uint32_t big = r.unschedulable; /* the 100-cpu pod's cycles; every other cycle bound its pod */
    cr_assert_eq(r.cycles, 6 + big);
    char *t = exposition(r.reg);

    /* HELP and TYPE as kube-scheduler writes them */
    const char *heads[] = {
        "# HELP scheduler_scheduling_algorithm_duration_seconds [BETA] Scheduling algorithm latency in "
        "seconds\n"
        "# TYPE scheduler_scheduling_algorithm_duration_seconds histogram\n",
        "# HELP scheduler_framework_extension_point_duration_seconds [STABLE] Latency for running all "
        "plugins of a "
        "specific extension point.\n# TYPE scheduler_framework_extension_point_duration_seconds histogram\n",
        "# HELP scheduler_plugin_execution_duration_seconds [BETA] Duration for running a plugin at a "
        "specific "
        "extension point.\n# TYPE scheduler_plugin_execution_duration_seconds histogram\n",
        "# HELP scheduler_plugin_evaluation_total [BETA] Number of attempts to schedule pods by each plugin "
        "and the "
        "extension point (available only in PreFilter, Filter, PreScore, and Score).\n"
        "# TYPE scheduler_plugin_evaluation_total counter\n",
        "# HELP scheduler_permit_wait_duration_seconds [BETA] Duration of waiting on permit.\n"
        "# TYPE scheduler_permit_wait_duration_seconds histogram\n",
        "# HELP scheduler_unschedulable_pods [BETA] The number of unschedulable pods broken down by plugin "
        "name. A "
        "pod will increment the gauge for all plugins that caused it to not schedule and so this metric have "
        "meaning only when broken down by plugin.\n# TYPE scheduler_unschedulable_pods gauge\n",
        "# HELP scheduler_cache_size [ALPHA] Number of nodes, pods, and assumed (bound) pods in the "
        "scheduler "
        "cache.\n# TYPE scheduler_cache_size gauge\n",
        "# HELP scheduler_scheduler_cache_size [ALPHA] (Deprecated since 1.33.0) Number of nodes, pods, and "
        "assumed (bound) pods in the scheduler cache.\n# TYPE scheduler_scheduler_cache_size gauge\n",
    };
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
        cr_expect(strstr(t, heads[i]), "missing\n%s", heads[i]);

    /* every cycle: the algorithm, PreFilter and Filter; the big pod: PostFilter; the others: the rest */
    cr_expect_eq(sample(t, "scheduler_scheduling_algorithm_duration_seconds_count"), r.cycles);
    struct {
        const char *series;
        double want;
    } points[] = {
        {"{extension_point=\"PreFilter\",status=\"Success\"," PROFILE "}", r.cycles},
        {"{extension_point=\"Filter\",status=\"Success\"," PROFILE "}", r.cycles},
        {"{extension_point=\"PostFilter\",status=\"Unschedulable\"," PROFILE "}", big},
        {"{extension_point=\"PreScore\",status=\"Success\"," PROFILE "}", 6},
        {"{extension_point=\"Score\",status=\"Success\"," PROFILE "}", 6},
        {"{extension_point=\"Reserve\",status=\"Success\"," PROFILE "}", 6},
        {"{extension_point=\"Permit\",status=\"Success\"," PROFILE "}", 6},
        {"{extension_point=\"PreBind\",status=\"Success\"," PROFILE "}", 6},
        {"{extension_point=\"Bind\",status=\"Success\"," PROFILE "}", 6},
        {"{extension_point=\"PostBind\",status=\"Success\"," PROFILE "}", 6},
    };
    for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
        char name[256];
        snprintf(name, sizeof(name), "scheduler_framework_extension_point_duration_seconds_count%s",
                 points[i].series);
        cr_expect_eq(sample(t, name), points[i].want, "%s: %g, want %g", name, sample(t, name),
                     points[i].want);
    }
    cr_expect(strstr(t,
                     "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Filter\","
                     "status=\"Success\"," PROFILE ",le=\"0.0001\"}"),
              "buckets from 0.1 ms");
    cr_expect(!strstr(t, "extension_point=\"Unreserve\""), "no pod was unreserved: no such series");

    /* evaluations: PreFilter per cycle, Filter per node (4 nodes), Score per feasible node */
    cr_expect_eq(sample(t, "scheduler_plugin_evaluation_total{plugin=\"NodeResourcesFit\",extension_point="
                           "\"PreFilter\"," PROFILE "}"),
                 r.cycles);
    cr_expect_eq(sample(t, "scheduler_plugin_evaluation_total{plugin=\"NodeUnschedulable\",extension_point="
                           "\"Filter\"," PROFILE "}"),
                 4 * r.cycles);
    cr_expect_eq(sample(t, "scheduler_plugin_evaluation_total{plugin=\"NodeResourcesFit\",extension_point="
                           "\"Filter\"," PROFILE "}"),
                 4 * r.cycles);
    cr_expect_eq(sample(t, "scheduler_plugin_evaluation_total{plugin=\"NodeResourcesFit\",extension_point="
                           "\"Score\"," PROFILE "}"),
                 4 * 6);
    cr_expect_eq(sample(t, "scheduler_plugin_evaluation_total{plugin=\"VolumeBinding\",extension_point="
                           "\"Filter\"," PROFILE "}"),
                 0, "made at the start, a plugin PreFilter skipped stays at 0");

    /* every cycle sampled: per-node plugin calls by the status each returned */
    cr_expect_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                           "extension_point=\"Filter\",status=\"Success\"}"),
                 4 * 6);
    cr_expect_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                           "extension_point=\"Filter\",status=\"UnschedulableAndUnresolvable\"}"),
                 4 * big, "100 cpu exceed every node's allocatable");
    cr_expect_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                           "extension_point=\"Score\",status=\"Success\"}"),
                 4 * 6);
    cr_expect_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                           "extension_point=\"PreFilter\",status=\"Success\"}"),
                 r.cycles);
    cr_expect_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"DefaultBinder\","
                           "extension_point=\"Bind\",status=\"Success\"}"),
                 6);
    cr_expect_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"DefaultPreemption\","
                           "extension_point=\"PostFilter\",status=\"Unschedulable\"}"),
                 big);
    cr_expect_gt(sample(t, "scheduler_plugin_execution_duration_seconds_sum{plugin=\"NodeResourcesFit\","
                           "extension_point=\"Filter\",status=\"Success\"}"),
                 0);
    cr_expect(strstr(t, "scheduler_plugin_execution_duration_seconds_bucket{plugin=\"NodeResourcesFit\","
                        "extension_point=\"Filter\",status=\"Success\",le=\"1e-05\"}"),
              "buckets from 10 us");

    /* gauges: the waiting pods' rejectors, the cache */
    cr_expect_eq(sample(t, "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\"," PROFILE "}"), 1);
    cr_expect_eq(sample(t, "scheduler_unschedulable_pods{plugin=\"SchedulingGates\"," PROFILE "}"), 1);
    cr_expect_eq(sample(t, "scheduler_unschedulable_pods{plugin=\"NodeAffinity\"," PROFILE "}"), -1,
                 "no series for a plugin that rejected nothing");
    const char *names[] = {"scheduler_cache_size", "scheduler_scheduler_cache_size"};
    for (int i = 0; i < 2; i++) {
        char n[96];
        snprintf(n, sizeof(n), "%s{type=\"nodes\"}", names[i]);
        cr_expect_eq(sample(t, n), 4);
        snprintf(n, sizeof(n), "%s{type=\"pods\"}", names[i]);
        cr_expect_eq(sample(t, n), 6);
        snprintf(n, sizeof(n), "%s{type=\"assumed_pods\"}", names[i]);
        cr_expect_eq(sample(t, n), 0);
    }
    cr_expect(!strstr(t, "scheduler_permit_wait_duration_seconds_count"), "no pod waited on Permit");
    free(t);

    /* the gated pod is deleted: its gate no longer counts */
    struct ks_pod *gated = NULL;
    for (uint32_t i = 0; i < ks_objects_count(r.objs, POD); i++) {
        if (strcmp(ks_objects_pods(r.objs)[i]->meta.name, "gated") == 0)
            gated = ks_objects_pods(r.objs)[i];
    }
    cr_assert(gated);
    cr_assert_eq(ks_scheduler_delete_pod(r.s, gated), 0);
    t = exposition(r.reg);
    cr_expect_eq(sample(t, "scheduler_unschedulable_pods{plugin=\"SchedulingGates\"," PROFILE "}"), 0);
    free(t);
    engine_done(&r);
}

Test(metrics, plugin_durations_only_in_the_sampled_share_of_cycles)
{
    struct engine_run r = {0};
    engine_run(&r, 4, 0, 0);
    char *t = exposition(r.reg);
    cr_expect(!strstr(t, "scheduler_plugin_execution_duration_seconds_count"), "nothing sampled at 0%%");
    cr_expect_eq(sample(t, "scheduler_plugin_evaluation_total{plugin=\"NodeResourcesFit\",extension_point="
                           "\"PreFilter\"," PROFILE "}"),
                 r.cycles, "evaluations are counted in every cycle");
    free(t);
    engine_done(&r);

    /* upstream's 10%: 400 pods on 200 nodes, one PreFilter call per cycle */
    struct engine_run d = {0};
    engine_run(&d, 200, 400, KS_PLUGIN_METRICS_SAMPLE_PERCENT);
    t = exposition(d.reg);
    double sampled =
        sample(t, "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                  "extension_point=\"PreFilter\",status=\"Success\"}");
    cr_expect(sampled >= 0.04 * d.cycles && sampled <= 0.2 * d.cycles, "%g of %u cycles sampled", sampled,
              d.cycles);
    free(t);
    engine_done(&d);
}

/*
 * scheduler_indexed_cycles_total: ksched's counter of the cycles the signature index answered,
 * read from the attached scheduler at each scrape (0 with no_index), kept once it is detached.
 */
Test(metrics, indexed_cycles_counter_follows_the_scheduler)
{
    char cluster[4096];
    size_t len = 0;
    for (int i = 0; i < 3; i++)
        len += (size_t)snprintf(cluster + len, sizeof(cluster) - len,
                                "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                                "status: {allocatable: {cpu: \"8\", memory: 8Gi, pods: \"110\"}}\n",
                                i);
    for (int i = 0; i < 12; i++)
        len +=
            (size_t)snprintf(cluster + len, sizeof(cluster) - len,
                             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n"
                             "  - {name: c, resources: {requests: {cpu: 100m}}}\n",
                             i);
    cr_assert_lt(len, sizeof(cluster));
    for (int no_index = 0; no_index < 2; no_index++) {
        struct serve_metrics t;
        struct ks_objects *objs;
        struct ks_cache *cache;
        struct ks_scheduler *s;
        struct ks_error err = {0};
        serve_metrics_open(&t);
        ks_rcu_register_thread();
        char *text = exposition(t.reg);
        cr_expect(strstr(text,
                         "# HELP scheduler_indexed_cycles_total [ALPHA] Number of scheduling cycles whose "
                         "node the signature index chose"),
                  "%s", text);
        cr_expect(strstr(text, "# TYPE scheduler_indexed_cycles_total counter\n"));
        cr_expect_eq(sample(text, "scheduler_indexed_cycles_total"), 0, "no scheduler attached yet");
        free(text);

        cr_assert_eq(ks_objects_load_buffer("cluster.yaml", cluster, len, &objs, &err), 0, "%s", err.msg);
        cr_assert_eq(ks_cache_create(&cache), 0);
        struct ks_scheduler_opts opts = {.config = t.cfg,
                                         .seeded = true,
                                         .seed = 3,
                                         .no_index = no_index,
                                         .metrics = ks_serve_metrics_engine(t.sm)};
        cr_assert_eq(ks_scheduler_create(&opts, cache, &s, &err), 0, "%s", err.msg);
        for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
            cr_assert_eq(ks_cache_add_node(cache, ks_objects_nodes(objs)[i]), 0);
        objs->of[KS_KIND_NODE].n = 0;
        ks_serve_metrics_attach(t.sm, s);
        for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
            cr_assert_eq(ks_scheduler_add_pod(s, ks_objects_pods(objs)[i]), 0);
        ks_scheduler_run_until_idle(s);
        uint64_t indexed = ks_scheduler_indexed_cycles(s);
        if (no_index)
            cr_expect_eq(indexed, 0, "no_index: every cycle filters and scores node by node");
        text = exposition(t.reg);
        cr_expect_eq(sample(text, "scheduler_indexed_cycles_total"), (double)indexed, "no_index %d: %s",
                     no_index, text);
        free(text);

        ks_serve_metrics_attach(t.sm, NULL);
        ks_scheduler_destroy(s);
        text = exposition(t.reg);
        cr_expect_eq(sample(text, "scheduler_indexed_cycles_total"), (double)indexed, "kept once detached");
        free(text);
        ks_cache_destroy(cache);
        ks_objects_destroy(objs);
        ks_rcu_unregister_thread();
        serve_metrics_close(&t);
    }
}
