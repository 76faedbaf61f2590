/*
 * main.c - the ksched command: dispatch to a subcommand.
 */
#include "commands.h"

#include "ksched/api.h"
#include "ksched/rcu.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"schedule", ks_cmd_schedule,
     "schedule [--config FILE] FILE...   load manifests and schedule their pending pods"},
    {"config", ks_cmd_config,
     "config --print [--config FILE]      print the effective scheduler configuration"},
    {"serve", ks_cmd_serve,
     "serve [--kubeconfig FILE] [--leader-elect]  schedule a cluster through its API server (--help)"},
    {"bench", ks_cmd_bench,
     "bench --workload NAME --nodes N     run a scheduler_perf-style benchmark (--help for more)"},
    {"soak", ks_cmd_soak,
     "soak [--nodes N] [--pods M] ...     churn soak with injected faults and invariant checks (--help)"},
};

static int usage(FILE *out)
{
    fprintf(out, "usage: ksched COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %s\n", commands[i].help);
    return out == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)
        return usage(stdout);
    if (ks_api_init() < 0) {
        fprintf(stderr, "ksched: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            /* the main thread reads snapshots and retires them: it is an RCU reader */
            ks_rcu_register_thread();
            int status = commands[i].run(argc - 1, argv + 1);
            ks_rcu_unregister_thread();
            return status;
        }
    }
    fprintf(stderr, "ksched: unknown command \"%s\"\n", argv[1]);
    return usage(stderr);
}
