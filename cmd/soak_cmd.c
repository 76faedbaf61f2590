/*
 * soak_cmd.c - `ksched soak`: parse the options, run the churn soak (soak_run.c), report.
 *
 * Exit status: 0 when every check held, 1 when some invariant was violated (or the run
 * failed), 2 on bad usage. The report goes to standard output (text, or one JSON object
 * with --json); progress lines, one per check, go to standard error with --verbose.
 */
#include "commands.h"
#include "ksched/internal/json_write.h"
#include "soak.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: ksched soak [--nodes N] [--pods M] [--seconds S] [--seed S] [--bind-failure-rate R]\n"
    "                   [--node-delete-rate D] [--check-every K] [--parallelism P] [--binders B]\n"
    "                   [--max-pods-per-node N] [--max-bound B] [--no-index] [--json] [--verbose]\n"
    "\n"
    "Churn soak: keep adding, updating and deleting nodes and pods while the scheduler runs,\n"
    "fail a fraction R of bindings, and check every K generator events and at the end that no\n"
    "pod is lost or bound twice and the cache, snapshot, queue and nominations agree.\n"
    "Stops once M pods were bound or after S seconds, whichever comes first.\n"
    "\n"
    "  --nodes N              cluster size, kept as nodes are deleted and replaced (default 500)\n"
    "  --pods M               pods to get bound (default 100000)\n"
    "  --seconds S            time limit (default 60)\n"
    "  --seed S               generator seed (default 1)\n"
    "  --bind-failure-rate R  fraction of bindings that fail, some after a delay (default 0.1)\n"
    "  --node-delete-rate D   per pod created, chance that a node is deleted and replaced (default 0.01)\n"
    "  --check-every K        generator events between full checks; 0: only at the end (default 50000)\n"
    "  --parallelism P        Filter/Score threads (default: the configuration's, capped at the cores)\n"
    "  --binders B            binder threads (default 2)\n"
    "  --max-pods-per-node N  allocatable pods of every node (default 40)\n"
    "  --max-bound B          at most B pods bound at once (default: 90% of the cpu and pod slots)\n"
    "  --no-index             never answer a cycle from the signature index: filter and score node\n"
    "                         by node in every cycle\n"
    "  --json                 the report as one JSON object\n"
    "  --verbose              a progress line per check on standard error\n";

static int bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "ksched soak: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return 2;
}

static int parse_u64(const char *flag, const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = v ? strtoull(v, &end, 10) : 0;
    if (!v || errno || end == v || *end || v[0] == '-')
        return bad("%s: expected a non-negative integer, got \"%s\"", flag, v ? v : "");
    *out = x;
    return 0;
}

static int parse_double(const char *flag, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = v ? strtod(v, &end) : 0;
    if (!v || errno || end == v || *end)
        return bad("%s: expected a number, got \"%s\"", flag, v ? v : "");
    *out = x;
    return 0;
}

static void print_text(const struct ks_soak_opts *o, const struct ks_soak_result *r)
{
    printf("soak: %u nodes, %.1f s wall, stopped by %s\n", o->nodes, r->wall_seconds,
           r->timed_out ? "--seconds" : "--pods");
    printf("  pods:     %" PRIu64 " bound (%.0f/s), %" PRIu64 " created, %" PRIu64 " deleted bound, %" PRIu64
           " deleted pending, %" PRIu64 " deleted with their node, %" PRIu64 " updated pending, %" PRIu64
           " ungated, %" PRIu64 " updated bound\n",
           r->pods_bound, r->wall_seconds > 0 ? (double)r->pods_bound / r->wall_seconds : 0.0,
           r->pods_created, r->pods_deleted_bound, r->pods_deleted_pending, r->pods_gc, r->pods_updated,
           r->pods_ungated, r->bound_updates);
    printf("  binds:    %" PRIu64 " calls, %" PRIu64 " failures injected (%" PRIu64
           " after a delay), %" PRIu64 " refused for a deleted pod\n",
           r->bind_calls, r->bind_failures_injected, r->bind_failures_delayed, r->bind_not_found);
    printf("  nodes:    %" PRIu64 " added, %" PRIu64 " deleted, %" PRIu64 " updated\n", r->nodes_added,
           r->nodes_deleted, r->nodes_updated);
    printf("  cycles:   %" PRIu64 " scheduling cycles (%" PRIu64 " indexed%s), %" PRIu64
           " unschedulable, %" PRIu64 " errors, %" PRIu64 " nominations, %" PRIu64 " preemption victims\n",
           r->cycles, r->indexed_cycles, o->no_index ? ", --no-index" : "", r->unschedulable_attempts,
           r->error_attempts, r->nominations, r->preemption_victims);
    printf("  checks:   %" PRIu64 " (peak %" PRIu64 " live pods), %" PRIu64 " generator events\n", r->checks,
           r->peak_live_pods, r->events);
    printf("  violations: %" PRIu64 "\n", r->report.nviolations);
    for (uint32_t i = 0; i < r->report.nkept; i++)
        printf("    %s\n", r->report.kept[i]);
}

static void print_json(const struct ks_soak_opts *o, const struct ks_soak_result *r)
{
    printf("{\"nodes\": %u, \"seed\": %" PRIu64 ", \"bind_failure_rate\": %g, \"node_delete_rate\": %g, "
           "\"wall_seconds\": %.3f, \"stopped_by\": \"%s\", \"no_index\": %s, ",
           o->nodes, o->seed, o->bind_failure_rate, o->node_delete_rate, r->wall_seconds,
           r->timed_out ? "seconds" : "pods", o->no_index ? "true" : "false");
    const struct {
        const char *name;
        uint64_t v;
    } f[] = {
        {"pods_bound", r->pods_bound},
        {"pods_created", r->pods_created},
        {"pods_deleted_bound", r->pods_deleted_bound},
        {"pods_deleted_pending", r->pods_deleted_pending},
        {"pods_deleted_with_node", r->pods_gc},
        {"pods_updated", r->pods_updated},
        {"pods_ungated", r->pods_ungated},
        {"bound_updates", r->bound_updates},
        {"bind_calls", r->bind_calls},
        {"bind_failures_injected", r->bind_failures_injected},
        {"bind_failures_delayed", r->bind_failures_delayed},
        {"bind_not_found", r->bind_not_found},
        {"nodes_added", r->nodes_added},
        {"nodes_deleted", r->nodes_deleted},
        {"nodes_updated", r->nodes_updated},
        {"cycles", r->cycles},
        {"indexed_cycles", r->indexed_cycles},
        {"unschedulable_attempts", r->unschedulable_attempts},
        {"error_attempts", r->error_attempts},
        {"nominations", r->nominations},
        {"preemption_victims", r->preemption_victims},
        {"checks", r->checks},
        {"peak_live_pods", r->peak_live_pods},
        {"events", r->events},
        {"violations", r->report.nviolations},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        printf("\"%s\": %" PRIu64 ", ", f[i].name, f[i].v);
    printf("\"violation_lines\": [");
    for (uint32_t i = 0; i < r->report.nkept; i++) {
        if (i)
            printf(", ");
        ks_json_write_cstr(stdout, r->report.kept[i]);
    }
    printf("]}\n");
}

int ks_cmd_soak(int argc, char **argv)
{
    struct ks_soak_opts o = {
        .nodes = 500,
        .pods = 100000,
        .seconds = 60,
        .seed = 1,
        .bind_failure_rate = 0.1,
        .node_delete_rate = 0.01,
        .check_every = 50000,
    };
    bool json = false;
    uint64_t u;
    int rc;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
            continue;
        } else if (strcmp(a, "--verbose") == 0) {
            o.progress = stderr;
            continue;
        } else if (strcmp(a, "--no-index") == 0) {
            o.no_index = true;
            continue;
        }
        if (strcmp(a, "--nodes") == 0 || strcmp(a, "--parallelism") == 0 || strcmp(a, "--binders") == 0 ||
            strcmp(a, "--max-pods-per-node") == 0) {
            if ((rc = parse_u64(a, v, &u)) != 0)
                return rc;
            if (u > UINT32_MAX)
                return bad("%s: too large: %s", a, v);
            *(a[2] == 'n'   ? &o.nodes
              : a[2] == 'p' ? &o.parallelism
              : a[2] == 'b' ? &o.binders
                            : &o.max_pods_per_node) = (uint32_t)u;
        } else if (strcmp(a, "--max-bound") == 0) {
            rc = parse_u64(a, v, &o.max_bound);
        } else if (strcmp(a, "--pods") == 0) {
            rc = parse_u64(a, v, &o.pods);
        } else if (strcmp(a, "--seed") == 0) {
            rc = parse_u64(a, v, &o.seed);
        } else if (strcmp(a, "--check-every") == 0) {
            rc = parse_u64(a, v, &o.check_every);
        } else if (strcmp(a, "--seconds") == 0) {
            rc = parse_double(a, v, &o.seconds);
        } else if (strcmp(a, "--bind-failure-rate") == 0) {
            rc = parse_double(a, v, &o.bind_failure_rate);
        } else if (strcmp(a, "--node-delete-rate") == 0) {
            rc = parse_double(a, v, &o.node_delete_rate);
        } else {
            fprintf(stderr, "ksched soak: unknown option \"%s\"\n%s", a, usage_text);
            return 2;
        }
        if (rc)
            return rc;
        i++;
    }

    struct ks_soak_result *r = calloc(1, sizeof(*r));
    struct ks_error err = {0};
    if (!r) {
        fprintf(stderr, "ksched soak: out of memory\n");
        return 1;
    }
    rc = ks_soak_run(&o, r, &err);
    if (rc < 0) {
        /* options have no file or line: the field (the option) and the message */
        if (err.field[0])
            fprintf(stderr, "ksched soak: %s: %s\n", err.field, err.msg);
        else
            fprintf(stderr, "ksched soak: %s\n", err.msg[0] ? err.msg : strerror(-rc));
        free(r);
        return rc == -EINVAL && err.field[0] ? 2 : 1;
    }
    if (json)
        print_json(&o, r);
    else
        print_text(&o, r);
    int status = r->report.nviolations ? 1 : 0;
    free(r);
    return status;
}
