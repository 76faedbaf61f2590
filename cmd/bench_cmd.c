/*
 * bench_cmd.c - `ksched bench --workload NAME [--nodes N | --size SIZE] ...` and
 * `ksched bench [--workload NAME] --list`: the flags (usage() below lists every one), then
 * the run (bench/harness/bench_run.c, ks_bench_run).
 */
#include "bench.h"
#include "commands.h"
#include "feature_gates.h"
#include "ksched/base/flag.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "ksched bench"

static int usage(FILE *out)
{
    fprintf(
        out,
        "usage: ksched bench --workload NAME [--nodes N | --size SIZE] [--pods M] [--existing-pods K]\n"
        "                    [--config FILE] [--feature-gates G] [--seed S] [--parallelism P] [--binders B]\n"
        "                    [--no-index] [--json] [--check] [--quiet]\n"
        "       ksched bench --list                   the workloads\n"
        "       ksched bench --workload NAME --list   its sizes: name, initNodes, labels\n"
        "  --workload NAME     bench/workloads/NAME.yaml (or a path to a workload file)\n"
        "  --nodes N           cluster size (default: the first size labelled performance); picks the\n"
        "                      size with the closest initNodes for the other parameters\n"
        "  --size SIZE         one of the workload's sizes (5000Nodes...), its initNodes unless --nodes\n"
        "  --pods M            measured pods (measurePods)\n"
        "  --existing-pods K   pods scheduled before measuring (initPods)\n"
        "  --config FILE       a KubeSchedulerConfiguration (default: kube-scheduler's defaults)\n"
        "  --feature-gates G   kube-scheduler's feature gates, Name=bool,... (before --config is read)\n"
        "  --seed S            seed tie-breaks (reproducible decisions)\n"
        "  --parallelism P     Filter/Score threads, the scheduling thread included (default: the config's,\n"
        "                      at most the online cores)\n"
        "  --binders B         binding threads (default 2)\n"
        "  --no-index          never answer a cycle from the signature index: filter and score node by\n"
        "                      node in every cycle (the same decisions; for comparing the two paths)\n"
        "  --json              end with one JSON object on its own line\n"
        "  --check             exit 1 unless every pod ended as its op expects and no node is overcommitted\n"
        "  --quiet             no progress bar\n");
    return out == stderr ? 2 : 0;
}

static int parse_u64(const char *flag, const char *val, uint64_t max, uint64_t *out)
{
    return ks_cmd_parse_u64(CMD, flag, val, max, out);
}

static int parse_args(int argc, char **argv, struct ks_bench_args *a)
{
    int rc;
    a->pods = a->existing = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val;
        uint64_t v;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(arg, "--json") == 0) {
            a->json = true;
        } else if (strcmp(arg, "--check") == 0) {
            a->check = true;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->quiet = true;
        } else if (strcmp(arg, "--list") == 0) {
            a->list = true;
        } else if (strcmp(arg, "--no-index") == 0) {
            a->no_index = true;
        } else if ((rc = ks_cmd_flag_value(CMD, "--workload", argc, argv, &i, &a->workload)) != 0 ||
                   (rc = ks_cmd_flag_value(CMD, "--size", argc, argv, &i, &a->size)) != 0 ||
                   (rc = ks_cmd_flag_value(CMD, "--config", argc, argv, &i, &a->config)) != 0 ||
                   (rc = ks_cmd_feature_gates_arg(CMD, argc, argv, &i)) != 0) {
            if (rc < 0)
                return -1;
        } else if ((rc = ks_cmd_flag_value(CMD, "--nodes", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || parse_u64("--nodes", val, 10000000, &v) < 0)
                return -1;
            a->nodes = (uint32_t)v;
            a->have_nodes = true;
        } else if ((rc = ks_cmd_flag_value(CMD, "--pods", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || parse_u64("--pods", val, 100000000, &v) < 0)
                return -1;
            a->pods = (int64_t)v;
        } else if ((rc = ks_cmd_flag_value(CMD, "--existing-pods", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || parse_u64("--existing-pods", val, 100000000, &v) < 0)
                return -1;
            a->existing = (int64_t)v;
        } else if ((rc = ks_cmd_flag_value(CMD, "--seed", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || parse_u64("--seed", val, UINT64_MAX, &a->seed) < 0)
                return -1;
            a->seeded = true;
        } else if ((rc = ks_cmd_flag_value(CMD, "--parallelism", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || parse_u64("--parallelism", val, 1024, &v) < 0)
                return -1;
            a->parallelism = (uint32_t)v;
        } else if ((rc = ks_cmd_flag_value(CMD, "--binders", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || parse_u64("--binders", val, 64, &v) < 0)
                return -1;
            a->binders = (uint32_t)v;
        } else {
            fprintf(stderr, "ksched bench: unknown or incomplete flag \"%s\"\n", arg);
            usage(stderr);
            return -1;
        }
    }
    if (!a->workload && !a->list) {
        usage(stderr);
        return -1;
    }
    return 0;
}

int ks_cmd_bench(int argc, char **argv)
{
    struct ks_bench_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    return ks_bench_run(&a, argv[0]);
}
