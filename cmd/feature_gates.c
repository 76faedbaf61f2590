/*
 * feature_gates.c - the --feature-gates flag shared by the subcommands; see
 * feature_gates.h. The syntax and the messages are those of kube-scheduler's flag
 * (k8s.io/component-base/featuregate), implemented in config/features.c.
 */
#include "feature_gates.h"
#include "ksched/base/flag.h"

#include "ksched/internal/features.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FLAG "--feature-gates"

int ks_cmd_feature_gates_arg(const char *cmd, int argc, char **argv, int *i)
{
    const char *value;
    struct ks_error err = {0};
    int taken = ks_cmd_flag_value(cmd, FLAG, argc, argv, i, &value);

    if (taken <= 0)
        return taken;
    int rc = ks_features_set(value, &err);
    if (rc == 0)
        return 1;
    if (rc == -ENOMEM)
        fprintf(stderr, "%s: %s: out of memory\n", cmd, FLAG);
    else
        fprintf(stderr, "%s: %s: %s\n", cmd, FLAG, err.msg);
    return -1;
}
