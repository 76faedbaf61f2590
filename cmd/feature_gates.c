/*
 * feature_gates.c - the --feature-gates flag shared by the subcommands; see
 * feature_gates.h. The syntax and the messages are those of kube-scheduler's flag
 * (k8s.io/component-base/featuregate), implemented in engine/features.c.
 */
#include "feature_gates.h"

#include "ksched/features.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FLAG "--feature-gates"

int ks_cmd_feature_gates_arg(const char *cmd, int argc, char **argv, int *i)
{
    const char *arg = argv[*i], *value;
    struct ks_error err = {0};
    size_t n = strlen(FLAG);

    if (strncmp(arg, FLAG, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
        return 0;
    if (arg[n] == '=') {
        value = arg + n + 1;
    } else if (*i + 1 < argc) {
        value = argv[++*i];
    } else {
        fprintf(stderr, "%s: flag needs an argument: %s\n", cmd, FLAG);
        return -1;
    }
    int rc = ks_features_set(value, &err);
    if (rc == 0)
        return 1;
    if (rc == -ENOMEM)
        fprintf(stderr, "%s: %s: out of memory\n", cmd, FLAG);
    else
        fprintf(stderr, "%s: %s: %s\n", cmd, FLAG, err.msg);
    return -1;
}
