/*
 * serve_flags.c - the flags of `ksched serve` (cmd/serve.h). Leader-election flags take
 * kube-scheduler's names (--leader-elect-lease-duration...) as well as the short ones;
 * values may follow as the next argument or after '='. Durations are Go durations.
 * --feature-gates (cmd/feature_gates.c) is applied while parsing, before the
 * configuration is loaded, as for the other subcommands.
 */
#include "feature_gates.h"
#include "serve.h"

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

enum flag_kind { STR, DURATION, NUMBER };

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
    {"--metrics-addr", "--bind-address", STR, ARG(metrics_addr)},
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
    fputs("usage: ksched serve [--kubeconfig FILE] [--config FILE] [--leader-elect[=BOOL]]\n"
          "                    [--metrics-addr HOST:PORT] [--seed N] [--identity ID] [--binders N]\n"
          "                    [--lease-duration D] [--renew-deadline D] [--retry-period D]\n"
          "                    [--lock-namespace NS] [--lock-name NAME] [--feature-gates GATES]\n"
          "Schedules the pods of a cluster through its kube-apiserver, as kube-scheduler does.\n"
          "Without --kubeconfig (and no clientConnection.kubeconfig in the configuration) it uses\n"
          "the pod's service account. --metrics-addr \"\" turns /healthz, /readyz and /metrics off\n"
          "(default 127.0.0.1:10259). Durations are Go durations (15s, 1m30s). A value follows its\n"
          "flag as the next argument or after '='. kube-scheduler's names are accepted too:\n",
          out);
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        if (flags[k].alias)
            fprintf(out, "  %-36s as %s\n", flags[k].alias, flags[k].name);
    }
}

int ks_serve_parse_args(int argc, char **argv, struct ks_serve_args *a)
{
    memset(a, 0, sizeof(*a));
    a->leader_elect = -1;
    a->metrics_addr = "127.0.0.1:10259";
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
        } else if (f->kind == DURATION) {
            if (ks_serve_parse_duration(val, (int64_t *)field) < 0 || *(int64_t *)field <= 0) {
                fprintf(stderr, "ksched serve: %.*s: invalid duration \"%s\" (e.g. 15s, 1m30s)\n", (int)nlen,
                        arg, val);
                return -EINVAL;
            }
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
    return 0;
}
