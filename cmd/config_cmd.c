/*
 * config_cmd.c - `ksched config [--print] [--feature-gates GATES] [--config FILE | FILE]`.
 *
 * Loads the scheduler configuration (kube-scheduler's defaults when no file is given; "-"
 * is standard input), validates it as kube-scheduler would at start-up and, with --print,
 * writes the effective configuration as YAML: every default applied, plugins merged with
 * the version's defaults, every plugin's defaulted args. Without --print it only validates
 * FILE and prints nothing; with neither --print nor a FILE there is nothing to do, which
 * is a usage error (exit 2), as `ksched schedule` without a FILE.
 * Bad input prints one "FILE:LINE: FIELD: MESSAGE" line on standard error, nothing on
 * standard output, and exits 2. The YAML is built in memory first, so a failure never
 * leaves partial output behind. --feature-gates (kube-scheduler's flag, ksched/internal/features.h)
 * is applied before the file is loaded, so defaults that depend on a gate follow it.
 */
#include "commands.h"
#include "feature_gates.h"
#include "ksched/base/flag.h"

#include "ksched/internal/config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(FILE *out)
{
    fprintf(out, "usage: ksched config --print [--feature-gates GATES] [--config FILE | FILE]\n"
                 "       ksched config [--feature-gates GATES] (--config FILE | FILE)\n"
                 "Validates the configuration as kube-scheduler does at start-up; with --print, writes it.\n"
                 "  --config FILE  a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, v1beta3 or "
                 "v1beta2);\n"
                 "                 - reads standard input; without it, kube-scheduler's default "
                 "configuration\n"
                 "  --print        write the effective configuration, defaults applied, as YAML\n"
                 "  --feature-gates GATES  Name=bool pairs, comma separated, as kube-scheduler's flag\n"
                 "                 (e.g. DefaultPodTopologySpread=false: v1beta2/v1beta3 default to "
                 "SelectorSpread)\n");
    return out == stderr ? 2 : 0;
}

static int print_config(const struct ks_config *cfg)
{
    struct ks_yaml_out o;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int rc;

    if (!mem) {
        fprintf(stderr, "ksched config: out of memory\n");
        return 1;
    }
    ks_yaml_out_init(&o, mem);
    ks_config_print(cfg, &o);
    rc = ks_yaml_out_finish(&o);
    if (fclose(mem) != 0 && rc == 0)
        rc = -EIO;
    if (rc == 0 && (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0))
        rc = -EIO;
    free(buf);
    if (rc) {
        fprintf(stderr, "ksched config: writing the configuration: %s\n", strerror(-rc));
        return 1;
    }
    return 0;
}

int ks_cmd_config(int argc, char **argv)
{
    const char *file = NULL;
    bool print = false;
    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    int rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--print") == 0) {
            print = true;
        } else if ((rc = ks_cmd_flag_value("ksched config", "--config", argc, argv, &i, &file)) != 0) {
            if (rc < 0)
                return usage(stderr);
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            return usage(stdout);
        } else if ((rc = ks_cmd_feature_gates_arg("ksched config", argc, argv, &i)) != 0) {
            if (rc < 0)
                return 2;
        } else if ((argv[i][0] != '-' || argv[i][1] == '\0') && !file) {
            file = argv[i];
        } else {
            fprintf(stderr, "ksched config: unknown argument \"%s\"\n", argv[i]);
            return usage(stderr);
        }
    }
    if (!print && !file) {
        fprintf(stderr,
                "ksched config: nothing to do: --print writes the configuration, a FILE is validated\n");
        return usage(stderr);
    }

    rc = file ? ks_config_load_file(file, &cfg, &err) : ks_config_load_default(&cfg);
    if (rc < 0) {
        if (!err.set) {
            fprintf(stderr, "ksched config: %s\n", strerror(-rc));
            return 1;
        }
        char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
        ks_error_format(&err, msg, sizeof(msg));
        fprintf(stderr, "ksched: %s\n", msg);
        return rc == -ENOMEM ? 1 : 2;
    }
    rc = print ? print_config(cfg) : 0;
    ks_config_destroy(cfg);
    return rc;
}
