/*
 * test_flags.c - `ksched serve`'s flags (serve/serve_flags.c): Go durations, kube-scheduler's
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
                    "--no-index",
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
    cr_expect_eq(a.secure_port, 0, "--metrics-addr alone: the only endpoint, as before the secure port");
    cr_expect(a.seeded && a.seed == 7);
    cr_expect_eq(a.binders, 8);
    cr_expect(a.no_index);
}

Test(serve_flags, defaults_and_errors)
{
    struct ks_serve_args a;
    char *none[] = {"serve"};
    cr_assert_eq(ks_serve_parse_args(1, none, &a), 0);
    cr_expect_eq(a.leader_elect, -1, "unset: the configuration decides");
    cr_expect_str_eq(a.metrics_addr, "", "no plain HTTP by default");
    cr_expect_eq(a.secure_port, 10259);
    cr_expect_str_eq(a.bind_address, "0.0.0.0");
    cr_expect_eq(a.token_ttl_ns, 10000000000);
    cr_expect_eq(a.allow_ttl_ns, 10000000000);
    cr_expect_eq(a.deny_ttl_ns, 10000000000);
    cr_expect_null(a.kubeconfig);
    cr_expect(!a.no_index, "the index is used unless --no-index");

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
                      {"serve", "--binders", "0"},
                      {"serve", "--no-index=true", ""}};
    int n[] = {2, 3, 3, 2, 2, 3, 2};
    for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
        cr_expect_eq(ks_serve_parse_args(n[i], bad[i], &a), -EINVAL, "case %zu accepted", i);
}

Test(serve_flags, serving)
{
    struct ks_serve_args a;
    char *both[] = {"serve",
                    "--secure-port=8443",
                    "--bind-address",
                    "::",
                    "--metrics-addr=localhost:9000",
                    "--tls-cert-file=/c",
                    "--tls-private-key-file",
                    "/k",
                    "--cert-dir=/d",
                    "--tls-min-version=VersionTLS13",
                    "--authorization-always-allow-paths=/healthz,/debug/*",
                    "--authentication-token-webhook-cache-ttl=0",
                    "--authorization-webhook-cache-authorized-ttl=1m",
                    "--authorization-webhook-cache-unauthorized-ttl",
                    "2s"};
    cr_assert_eq(ks_serve_parse_args(sizeof(both) / sizeof(both[0]), both, &a), 0);
    cr_expect_eq(a.secure_port, 8443);
    cr_expect_str_eq(a.bind_address, "::");
    cr_expect_str_eq(a.metrics_addr, "localhost:9000", "with --secure-port both endpoints are served");
    cr_expect_str_eq(a.tls_cert_file, "/c");
    cr_expect_str_eq(a.tls_private_key_file, "/k");
    cr_expect_str_eq(a.cert_dir, "/d");
    cr_expect(a.tls13_only);
    cr_expect_str_eq(a.always_allow_paths, "/healthz,/debug/*");
    cr_expect_eq(a.token_ttl_ns, 0, "0 turns the cache off");
    cr_expect_eq(a.allow_ttl_ns, 60000000000);
    cr_expect_eq(a.deny_ttl_ns, 2000000000);

    char *off[] = {"serve", "--secure-port", "0"};
    cr_assert_eq(ks_serve_parse_args(3, off, &a), 0);
    cr_expect(a.secure_port == 0 && a.metrics_addr[0] == 0, "no endpoint at all");
    char *none[] = {"serve", "--metrics-addr="};
    cr_assert_eq(ks_serve_parse_args(2, none, &a), 0);
    cr_expect(a.secure_port == 0 && a.metrics_addr[0] == 0,
              "--metrics-addr \"\" alone: no endpoint, as before");
    char *v6[] = {"serve", "--metrics-addr", "[::1]:9000"};
    cr_expect_eq(ks_serve_parse_args(3, v6, &a), 0);
    char *lo[] = {"serve", "--metrics-addr", "127.1.2.3:9000"};
    cr_expect_eq(ks_serve_parse_args(3, lo, &a), 0);

    char *bad[][3] = {{"serve", "--metrics-addr", "0.0.0.0:10259"},
                      {"serve", "--metrics-addr", ":10259"},
                      {"serve", "--metrics-addr", "10.0.0.1:80"},
                      {"serve", "--metrics-addr", "nonsense"},
                      {"serve", "--secure-port", "65536"},
                      {"serve", "--secure-port", "-1"},
                      {"serve", "--bind-address", "localhost"},
                      {"serve", "--tls-cert-file", "/c"},
                      {"serve", "--tls-private-key-file", "/k"},
                      {"serve", "--tls-min-version", "VersionTLS11"},
                      {"serve", "--authorization-always-allow-paths", "/a*b"},
                      {"serve", "--authentication-token-webhook-cache-ttl", "-1s"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(ks_serve_parse_args(3, bad[i], &a), -EINVAL, "%s %s accepted", bad[i][1], bad[i][2]);
}
