/*
 * flag.c - "--name VALUE" and "--name=VALUE" for the subcommands' value flags; see flag.h.
 */
#include "flag.h"

#include <stdio.h>
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
