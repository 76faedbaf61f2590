/*
 * flag.h - the value flags of the ksched subcommands: "--name VALUE" or "--name=VALUE", as
 * kube-scheduler's and kubectl's flags (pflag) take them.
 */
#ifndef KSCHED_FLAG_H
#define KSCHED_FLAG_H

#include <stdint.h>

/*
 * ks_cmd_flag_value - if argv[*i] is @name followed by a value ("@name VALUE" or
 * "@name=VALUE"), set *@value and leave *i on the last word used. Returns 0 when argv[*i] is
 * another argument, 1 with *@value set, and -1 when the value is missing, after printing
 * "@cmd: flag needs an argument: @name" on standard error (the caller exits with status 2).
 * Context: argument parsing, main thread.
 */
int ks_cmd_flag_value(const char *cmd, const char *name, int argc, char **argv, int *i, const char **value);

/*
 * ks_cmd_parse_u64 - @val as a decimal number of at most @max into *@out: 0, or -1 after
 * printing "@cmd: @flag: invalid number "@val"" on standard error.
 */
int ks_cmd_parse_u64(const char *cmd, const char *flag, const char *val, uint64_t max, uint64_t *out);

#endif
