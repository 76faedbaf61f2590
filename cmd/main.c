/*
 * main.c - the ksched command: dispatch to a subcommand.
 *
 *   ksched COMMAND [ARGS]      run COMMAND (each answers -h/--help with its own usage)
 *   ksched help [COMMAND]      this list, or COMMAND's usage (as COMMAND --help)
 *   ksched -h | --help         this list, on standard output, exit 0
 *   ksched --version           as `ksched version`
 * No command, or an unknown one, is a usage error: the list on standard error, exit 2.
 * The list names each command with one line of what it does; the flags are only in the
 * command's own usage text.
 */
#include "commands.h"

#include "ksched/api.h"
#include "ksched/base/rcu.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"schedule", ks_cmd_schedule,
     "load manifests (FILE... or - for standard input) and schedule their pending pods"},
    {"config", ks_cmd_config, "validate a KubeSchedulerConfiguration or print the effective one"},
    {"serve", ks_cmd_serve, "schedule a cluster's pods through its kube-apiserver, as kube-scheduler"},
    {"bench", ks_cmd_bench, "run a scheduler_perf workload on a generated cluster"},
    {"soak", ks_cmd_soak, "churn soak with injected faults and invariant checks"},
    {"version", ks_cmd_version, "print the version and the git commit ksched was built from"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static int usage(FILE *out)
{
    fprintf(out, "usage: ksched COMMAND [ARGS]\n"
                 "       ksched help [COMMAND]\n"
                 "       ksched --version\n\n"
                 "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`ksched COMMAND --help` shows a command's flags.\n");
    return out == stderr ? 2 : 0;
}

static int find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, commands[i].name) == 0)
            return (int)i;
    }
    return -1;
}

static int run(int c, int argc, char **argv)
{
    if (ks_api_init() < 0) {
        fprintf(stderr, "ksched: out of memory\n");
        return 1;
    }
    /* the main thread reads snapshots and retires them: it is an RCU reader */
    ks_rcu_register_thread();
    int status = commands[c].run(argc, argv);
    ks_rcu_unregister_thread();
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || (strcmp(name, "help") == 0 && argc == 2))
        return usage(stdout);
    if (strcmp(name, "--version") == 0)
        name = "version";
    if (strcmp(name, "help") == 0) {
        int c = argc == 3 ? find(argv[2]) : -1;
        if (c < 0) {
            if (argc == 3)
                fprintf(stderr, "ksched help: unknown command \"%s\"\n", argv[2]);
            else
                fprintf(stderr, "ksched help: one COMMAND at most\n");
            return usage(stderr);
        }
        char help[] = "--help";
        char *args[] = {argv[2], help, NULL};
        return run(c, 2, args);
    }
    int c = find(name);
    if (c < 0) {
        fprintf(stderr, "ksched: unknown command \"%s\"\n", name);
        return usage(stderr);
    }
    argv[1] = (char *)commands[c].name;
    return run(c, argc - 1, argv + 1);
}
