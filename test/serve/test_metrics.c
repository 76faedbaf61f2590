/*
 * test_metrics.c - the metrics registry (include/ksched/metrics.h): Prometheus text format
 * 0.0.4 as client_golang writes it, and `ksched serve`'s scheduler metrics (cmd/serve_metrics.c).
 */
#include <criterion/criterion.h>

#include "serve.h"

#include "ksched/api.h"
#include "ksched/config.h"
#include "ksched/intern.h"
#include "ksched/metrics.h"

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

/* The scheduler's families: upstream names, labels, buckets; an attempt timed from its cycle. */
Test(metrics, scheduler_attempts_and_durations)
{
    struct ks_metrics *reg;
    struct ks_config *cfg;
    struct ks_serve_metrics *sm;
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    cr_assert_eq(ks_metrics_create(&reg), 0);
    cr_assert_eq(ks_serve_metrics_create(reg, cfg, &sm), 0);

    struct ks_pod pod = {.scheduler_name = ks_intern("default-scheduler")};
    struct ks_queued_pod qp = {.pod = &pod, .attempts = 2, .initial_attempt_ns = 1000000000};
    ks_serve_metrics_cycle(sm, &qp, 2000000000);
    struct ks_sched_event ev = {.kind = KS_SCHED_UNSCHEDULABLE, .pod = &pod, .message = "no"};
    ks_serve_metrics_event(sm, &ev, 2003000000); /* 3 ms */
    ks_serve_metrics_cycle(sm, &qp, 3000000000);
    ev.kind = KS_SCHED_SCHEDULED;
    ks_serve_metrics_event(sm, &ev, 3000500000); /* 0.5 ms */

    char *text = exposition(reg);
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
        "scheduler_pending_pods{queue=\"gated\"} 0\n",
        "scheduler_preemption_attempts_total 1\n",
        "# TYPE scheduler_preemption_victims histogram\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(strstr(text, want[i]), "missing line %s in\n%s", want[i], text);
    free(text);
    ks_serve_metrics_destroy(sm);
    ks_metrics_destroy(reg);
    ks_config_destroy(cfg);
}
