/*
 * test_flags.c - `ksched serve`'s flags (cmd/serve_flags.c): Go durations, kube-scheduler's
 * flag names, and the errors a bad flag gives.
 */
#include <criterion/criterion.h>

#include "serve.h"

Test(serve_flags, go_durations)
{
    static const struct {
        const char *s;
        int64_t ns;
    } ok[] = {{"15s", 15000000000}, {"1m30s", 90000000000},
              {"200ms", 200000000}, {"2h", 7200000000000},
              {"1.5s", 1500000000}, {"0", 0},
              {"10us", 10000},      {"3ns", 3}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t ns = -1;
        cr_expect_eq(ks_serve_parse_duration(ok[i].s, &ns), 0, "%s", ok[i].s);
        cr_expect_eq(ns, ok[i].ns, "%s: got %lld want %lld", ok[i].s, (long long)ns, (long long)ok[i].ns);
    }
    static const char *const bad[] = {"", "15", "s", "-1s", "1x", "1s2", "1e3s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ns;
        cr_expect_eq(ks_serve_parse_duration(bad[i], &ns), -EINVAL, "\"%s\" accepted", bad[i]);
    }
}

Test(serve_flags, long_and_upstream_names)
{
    char *argv[] = {"serve",
                    "--kubeconfig",
                    "/k",
                    "--leader-elect",
                    "--leader-elect-lease-duration=20s",
                    "--renew-deadline",
                    "12s",
                    "--retry-period=3s",
                    "--lock-namespace",
                    "ns",
                    "--leader-elect-resource-name=sched",
                    "--metrics-addr",
                    "127.0.0.1:0",
                    "--seed",
                    "7",
                    "--binders=8"};
    struct ks_serve_args a;
    cr_assert_eq(ks_serve_parse_args(sizeof(argv) / sizeof(argv[0]), argv, &a), 0);
    cr_expect_str_eq(a.kubeconfig, "/k");
    cr_expect_eq(a.leader_elect, 1);
    cr_expect_eq(a.lease_duration_ns, 20000000000);
    cr_expect_eq(a.renew_deadline_ns, 12000000000);
    cr_expect_eq(a.retry_period_ns, 3000000000);
    cr_expect_str_eq(a.lock_namespace, "ns");
    cr_expect_str_eq(a.lock_name, "sched");
    cr_expect_str_eq(a.metrics_addr, "127.0.0.1:0");
    cr_expect(a.seeded && a.seed == 7);
    cr_expect_eq(a.binders, 8);
}

Test(serve_flags, defaults_and_errors)
{
    struct ks_serve_args a;
    char *none[] = {"serve"};
    cr_assert_eq(ks_serve_parse_args(1, none, &a), 0);
    cr_expect_eq(a.leader_elect, -1, "unset: the configuration decides");
    cr_expect_str_eq(a.metrics_addr, "127.0.0.1:10259");
    cr_expect_null(a.kubeconfig);

    char *off[] = {"serve", "--leader-elect=false"};
    cr_assert_eq(ks_serve_parse_args(2, off, &a), 0);
    cr_expect_eq(a.leader_elect, 0);

    /* -h and --help anywhere ask for the usage */
    char *help[] = {"serve", "--kubeconfig", "/k", "--help"};
    cr_expect_eq(ks_serve_parse_args(4, help, &a), 1);
    char *h[] = {"serve", "-h"};
    cr_expect_eq(ks_serve_parse_args(2, h, &a), 1);

    char *bad[][3] = {{"serve", "--bogus", ""},
                      {"serve", "--seed", "x"},
                      {"serve", "--lease-duration", "15"},
                      {"serve", "--leader-elect=maybe", ""},
                      {"serve", "--kubeconfig", NULL},
                      {"serve", "--binders", "0"}};
    int n[] = {2, 3, 3, 2, 2, 3};
    for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
        cr_expect_eq(ks_serve_parse_args(n[i], bad[i], &a), -EINVAL, "case %zu accepted", i);
}
