/*
 * serve_flags.c - the flags of `ksched serve` (serve/serve.h). Leader-election flags take
 * kube-scheduler's names (--leader-elect-lease-duration...) as well as the short ones;
 * values may follow as the next argument or after '='. Durations are Go durations.
 * --feature-gates (cmd/feature_gates.c) is applied while parsing, before the
 * configuration is loaded, as for the other subcommands.
 *
 * Serving: kube-scheduler's secure-serving, authentication and authorization flags
 * (--secure-port, --bind-address, --tls-*, --cert-dir, --authorization-always-allow-paths,
 * the review cache TTLs), and --metrics-addr for plain HTTP, which is refused on anything
 * but a loopback address. --metrics-addr alone keeps its meaning from before the secure
 * port: the one endpoint (so --metrics-addr "" turns every endpoint off).
 */
#include "feature_gates.h"
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int ks_serve_parse_duration(const char *s, int64_t *ns)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1},  {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6},
                 {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    double total = 0;
    const char *p = s;
    if (!*p)
        return -EINVAL;
    if (strcmp(p, "0") == 0) {
        *ns = 0;
        return 0;
    }
    while (*p) {
        char num[64], *end;
        size_t n = strspn(p, "0123456789.");
        if (n == 0 || n >= sizeof(num))
            return -EINVAL;
        memcpy(num, p, n);
        num[n] = '\0';
        double v = strtod(num, &end); /* digits and a point only: Go takes no exponent */
        if (*end)
            return -EINVAL;
        p += n;
        size_t best = 0;
        double mult = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t l = strlen(units[i].unit);
            /* the longest unit that matches ("ms" before "m") */
            if (l > best && strncmp(p, units[i].unit, l) == 0) {
                best = l;
                mult = units[i].ns;
            }
        }
        if (!best)
            return -EINVAL;
        p += best;
        total += v * mult;
    }
    if (!isfinite(total) || total > 9.2e18)
        return -EINVAL;
    *ns = (int64_t)llround(total);
    return 0;
}

static bool parse_bool(const char *v, int *out)
{
    if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "t") == 0 || strcmp(v, "True") == 0) {
        *out = 1;
        return true;
    }
    if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "f") == 0 || strcmp(v, "False") == 0) {
        *out = 0;
        return true;
    }
    return false;
}

enum flag_kind { STR, DURATION, TTL, PORT, NUMBER, MEDIA };

struct flag {
    const char *name, *alias;
    enum flag_kind kind;
    size_t offset;
};

#define ARG(field) offsetof(struct ks_serve_args, field)

/* The usage text names every entry of flags[] below; their kube-scheduler names are listed from it. */

static const struct flag flags[] = {
    {"--kubeconfig", NULL, STR, ARG(kubeconfig)},
    {"--config", NULL, STR, ARG(config)},
    {"--content-type", "--kube-api-content-type", MEDIA, ARG(content_type)},
    {"--metrics-addr", NULL, STR, ARG(metrics_addr)},
    {"--secure-port", NULL, PORT, ARG(secure_port)},
    {"--bind-address", NULL, STR, ARG(bind_address)},
    {"--tls-cert-file", NULL, STR, ARG(tls_cert_file)},
    {"--tls-private-key-file", NULL, STR, ARG(tls_private_key_file)},
    {"--cert-dir", NULL, STR, ARG(cert_dir)},
    {"--tls-min-version", NULL, STR, ARG(tls_min_version)},
    {"--authorization-always-allow-paths", NULL, STR, ARG(always_allow_paths)},
    {"--authentication-token-webhook-cache-ttl", NULL, TTL, ARG(token_ttl_ns)},
    {"--authorization-webhook-cache-authorized-ttl", NULL, TTL, ARG(allow_ttl_ns)},
    {"--authorization-webhook-cache-unauthorized-ttl", NULL, TTL, ARG(deny_ttl_ns)},
    {"--identity", NULL, STR, ARG(identity)},
    {"--seed", NULL, NUMBER, ARG(seed)},
    {"--binders", NULL, NUMBER, ARG(binders)},
    {"--lease-duration", "--leader-elect-lease-duration", DURATION, ARG(lease_duration_ns)},
    {"--renew-deadline", "--leader-elect-renew-deadline", DURATION, ARG(renew_deadline_ns)},
    {"--retry-period", "--leader-elect-retry-period", DURATION, ARG(retry_period_ns)},
    {"--lock-namespace", "--leader-elect-resource-namespace", STR, ARG(lock_namespace)},
    {"--lock-name", "--leader-elect-resource-name", STR, ARG(lock_name)},
};

void ks_serve_usage(FILE *out)
{
    fputs(
        "usage: ksched serve [--kubeconfig FILE] [--config FILE] [--leader-elect[=BOOL]]\n"
        "                    [--content-type json|protobuf]\n"
        "                    [--seed N] [--identity ID] [--binders N] [--no-index]\n"
        "                    [--lease-duration D] [--renew-deadline D] [--retry-period D]\n"
        "                    [--lock-namespace NS] [--lock-name NAME] [--feature-gates GATES]\n"
        "                    [--secure-port PORT] [--bind-address IP] [--cert-dir DIR]\n"
        "                    [--tls-cert-file FILE --tls-private-key-file FILE] [--tls-min-version V]\n"
        "                    [--authorization-always-allow-paths PATHS]\n"
        "                    [--authentication-token-webhook-cache-ttl D]\n"
        "                    [--authorization-webhook-cache-authorized-ttl D]\n"
        "                    [--authorization-webhook-cache-unauthorized-ttl D] [--metrics-addr HOST:PORT]\n"
        "Schedules the pods of a cluster through its kube-apiserver, as kube-scheduler does.\n"
        "Without --kubeconfig (and no clientConnection.kubeconfig in the configuration) it uses\n"
        "the pod's service account.\n"
        "--content-type json|protobuf: how it talks to the API server (default: the\n"
        "configuration's clientConnection.contentType, protobuf, as kube-scheduler: lists,\n"
        "watches, Bindings, Events and Leases in protobuf, patches as JSON).\n"
        "/healthz, /readyz, /livez and /metrics are served over HTTPS on --bind-address (default\n"
        "0.0.0.0) and --secure-port (default 10259; 0: not served), as kube-scheduler serves them:\n"
        "with the certificate of --tls-cert-file/--tls-private-key-file, or --cert-dir's\n"
        "kube-scheduler.crt/.key (made there when absent), or one made in memory at start. Every\n"
        "request is authenticated with a TokenReview of its bearer token (none: system:anonymous)\n"
        "and, but on --authorization-always-allow-paths (default /healthz,/readyz,/livez),\n"
        "authorized with a SubjectAccessReview; answers are cached for the TTLs (default 10s each).\n"
        "--metrics-addr serves the same paths over plain HTTP without authentication, on a\n"
        "loopback address only; given without --secure-port it is the only endpoint\n"
        "(--metrics-addr \"\" alone: none).\n"
        "--no-index: never answer a cycle from the signature index; every cycle filters and\n"
        "scores node by node (the same decisions; scheduler_indexed_cycles_total stays 0).\n"
        "Durations are Go durations (15s, 1m30s). A value follows its flag as the next argument\n"
        "or after '='. kube-scheduler's names are accepted too:\n",
        out);
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        if (flags[k].alias)
            fprintf(out, "  %-36s as %s\n", flags[k].alias, flags[k].name);
    }
}

static bool is_ip(const char *s)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* "127.0.0.1:PORT", "[::1]:PORT", "localhost:PORT" (any 127/8 address): loopback only. */
static bool loopback_addr(const char *addr)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1])
        return false;
    char host[64];
    size_t n = (size_t)(colon - addr);
    if (n >= sizeof(host))
        return false;
    memcpy(host, addr, n);
    host[n] = '\0';
    if (strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0)
        return true;
    struct in_addr a4;
    return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* The serving flags together: defaults that depend on each other, and what cannot work. */
static int check_serving(struct ks_serve_args *a)
{
    bool plain = a->metrics_addr != NULL;
    if (!plain)
        a->metrics_addr = "";
    if (a->secure_port < 0)
        a->secure_port = plain ? 0 : 10259; /* --metrics-addr alone: the one endpoint, as before */
    if (a->metrics_addr[0] && !loopback_addr(a->metrics_addr)) {
        fprintf(stderr,
                "ksched serve: --metrics-addr \"%s\": plain HTTP is served on a loopback HOST:PORT only "
                "(127.0.0.1, [::1], localhost); use --secure-port and --bind-address for other addresses\n",
                a->metrics_addr);
        return -EINVAL;
    }
    if (!is_ip(a->bind_address)) {
        fprintf(stderr, "ksched serve: --bind-address \"%s\": not an IP address\n", a->bind_address);
        return -EINVAL;
    }
    bool cert = a->tls_cert_file && a->tls_cert_file[0],
         key = a->tls_private_key_file && a->tls_private_key_file[0];
    if (cert != key) {
        fprintf(stderr,
                "ksched serve: --tls-cert-file and --tls-private-key-file go together: %s is missing\n",
                cert ? "--tls-private-key-file" : "--tls-cert-file");
        return -EINVAL;
    }
    if (a->tls_min_version && strcmp(a->tls_min_version, "VersionTLS12") != 0 &&
        strcmp(a->tls_min_version, "VersionTLS13") != 0) {
        fprintf(stderr, "ksched serve: --tls-min-version \"%s\": VersionTLS12 or VersionTLS13\n",
                a->tls_min_version);
        return -EINVAL;
    }
    a->tls13_only = a->tls_min_version && strcmp(a->tls_min_version, "VersionTLS13") == 0;
    if (a->always_allow_paths) {
        for (const char *p = a->always_allow_paths; (p = strchr(p, '*')); p++) {
            if (p[1] && p[1] != ',') {
                fprintf(stderr,
                        "ksched serve: --authorization-always-allow-paths \"%s\": only a trailing * is "
                        "allowed\n",
                        a->always_allow_paths);
                return -EINVAL;
            }
        }
    }
    return 0;
}

int ks_serve_parse_args(int argc, char **argv, struct ks_serve_args *a)
{
    memset(a, 0, sizeof(*a));
    a->leader_elect = -1;
    a->metrics_addr = NULL;
    a->secure_port = -1;
    a->bind_address = "0.0.0.0";
    a->token_ttl_ns = a->allow_ttl_ns = a->deny_ttl_ns = INT64_C(10000000000);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
        int gates = ks_cmd_feature_gates_arg("ksched serve", argc, argv, &i);
        if (gates < 0)
            return -EINVAL;
        if (gates)
            continue;
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nlen == strlen("--no-index") && strncmp(arg, "--no-index", nlen) == 0) {
            if (eq) {
                fprintf(stderr, "ksched serve: --no-index takes no value\n");
                return -EINVAL;
            }
            a->no_index = true;
            continue;
        }
        if (strncmp(arg, "--leader-elect", nlen) == 0 && nlen == strlen("--leader-elect")) {
            if (eq && !parse_bool(eq + 1, &a->leader_elect)) {
                fprintf(stderr, "ksched serve: --leader-elect: invalid boolean \"%s\"\n", eq + 1);
                return -EINVAL;
            }
            if (!eq)
                a->leader_elect = 1;
            continue;
        }
        const struct flag *f = NULL;
        for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]) && !f; k++) {
            if ((strlen(flags[k].name) == nlen && strncmp(arg, flags[k].name, nlen) == 0) ||
                (flags[k].alias && strlen(flags[k].alias) == nlen && strncmp(arg, flags[k].alias, nlen) == 0))
                f = &flags[k];
        }
        if (!f) {
            fprintf(stderr, "ksched serve: unknown flag or argument \"%s\"\n", arg);
            return -EINVAL;
        }
        const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!val) {
            fprintf(stderr, "ksched serve: %.*s needs a value\n", (int)nlen, arg);
            return -EINVAL;
        }
        char *field = (char *)a + f->offset;
        if (f->kind == STR) {
            *(const char **)field = val;
        } else if (f->kind == DURATION || f->kind == TTL) {
            if (ks_serve_parse_duration(val, (int64_t *)field) < 0 ||
                (f->kind == DURATION && *(int64_t *)field <= 0)) {
                fprintf(stderr, "ksched serve: %.*s: invalid duration \"%s\" (e.g. 15s, 1m30s)\n", (int)nlen,
                        arg, val);
                return -EINVAL;
            }
        } else if (f->kind == MEDIA) {
            if (strcmp(val, "json") == 0 || strcmp(val, "application/json") == 0) {
                *(const char **)field = "application/json";
            } else if (strcmp(val, "protobuf") == 0 ||
                       strcmp(val, "application/vnd.kubernetes.protobuf") == 0) {
                *(const char **)field = "application/vnd.kubernetes.protobuf";
            } else {
                fprintf(stderr,
                        "ksched serve: %.*s: \"%s\": json or protobuf (application/json, "
                        "application/vnd.kubernetes.protobuf)\n",
                        (int)nlen, arg, val);
                return -EINVAL;
            }
        } else if (f->kind == PORT) {
            char *end;
            errno = 0;
            long v = strtol(val, &end, 10);
            if (errno || end == val || *end || v < 0 || v > 65535) {
                fprintf(stderr, "ksched serve: %.*s: invalid port \"%s\" (0 to 65535)\n", (int)nlen, arg,
                        val);
                return -EINVAL;
            }
            *(int *)field = (int)v;
        } else {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(val, &end, 10);
            bool binders = f->offset == ARG(binders);
            if (errno || end == val || *end || val[0] == '-' || (binders && (v == 0 || v > 1024))) {
                fprintf(stderr, "ksched serve: %.*s: invalid number \"%s\"%s\n", (int)nlen, arg, val,
                        binders ? " (1 to 1024)" : "");
                return -EINVAL;
            }
            if (binders) {
                a->binders = (uint32_t)v;
            } else {
                a->seed = v;
                a->seeded = true;
            }
        }
    }
    return check_serving(a);
}
