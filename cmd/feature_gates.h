/*
 * feature_gates.h - kube-scheduler's --feature-gates flag for the ksched subcommands
 * (config, schedule, bench; serve when it parses it), applied to the process-wide gates
 * of ksched/internal/features.h before the configuration is loaded.
 */
#ifndef KSCHED_CMD_FEATURE_GATES_H
#define KSCHED_CMD_FEATURE_GATES_H

/*
 * ks_cmd_feature_gates_arg - if argv[*i] is "--feature-gates VALUE" or
 * "--feature-gates=VALUE", apply VALUE (ks_features_set) and leave *i on the last word
 * it used. Returns 0 when argv[*i] is another argument, 1 when applied, and -1 on a bad
 * or missing value after printing one line "@cmd: --feature-gates: MESSAGE" on standard
 * error (the caller exits with status 2). Context: argument parsing, main thread.
 */
int ks_cmd_feature_gates_arg(const char *cmd, int argc, char **argv, int *i);

#endif
