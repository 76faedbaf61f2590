/*
 * flag.c - "--name VALUE" and "--name=VALUE" for the subcommands' value flags; see flag.h.
 */
#include "ksched/base/flag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ks_cmd_flag_value(const char *cmd, const char *name, int argc, char **argv, int *i, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);

    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        fprintf(stderr, "%s: flag needs an argument: %s\n", cmd, name);
        return -1;
    }
    return 1;
}

int ks_cmd_parse_u64(const char *cmd, const char *flag, const char *val, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(val, &end, 10);
    if (errno || end == val || *end || val[0] == '-' || v > max) {
        fprintf(stderr, "%s: %s: invalid number \"%s\"\n", cmd, flag, val);
        return -1;
    }
    *out = v;
    return 0;
}
