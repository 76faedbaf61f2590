/*
 * commands.h - the subcommands of the ksched CLI.
 *
 * Each returns the process exit status: 0 on success, 1 on an internal failure, 2 on bad
 * input or usage (with one message on standard error and nothing on standard output).
 * argv[0] is the command's name. Each answers -h and --help with its usage on standard
 * output (exit 0); its usage text is kept in one place in its own file.
 */
#ifndef KSCHED_CMD_COMMANDS_H
#define KSCHED_CMD_COMMANDS_H

int ks_cmd_schedule(int argc, char **argv);
int ks_cmd_config(int argc, char **argv);
int ks_cmd_bench(int argc, char **argv);
int ks_cmd_serve(int argc, char **argv);
int ks_cmd_soak(int argc, char **argv);
int ks_cmd_version(int argc, char **argv);

#endif
