/*
 * schedule_cmd.c - `ksched schedule [--config FILE] FILE...`.
 *
 * Loads every manifest (all or nothing) and reports what it holds. Bad input prints one
 * "FILE:LINE: FIELD: MESSAGE" line on standard error, nothing on standard output, and
 * exits 2.
 */
#include "commands.h"

#include "ksched/api.h"
#include "ksched/intern.h"
#include "ksched/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail_input(const struct ks_error *err)
{
    char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
    ks_error_format(err, msg, sizeof(msg));
    fprintf(stderr, "ksched: %s\n", msg);
    return 2;
}

static void summarise(const struct ks_objects *objs, int nfiles)
{
    uint32_t pending = 0;
    struct ks_pod **pods = ks_objects_pods(objs);
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        pending += pods[i]->node_name == KS_ID_EMPTY;
    printf("loaded %u nodes, %u pods (%u pending, %u bound)", ks_objects_count(objs, NODE),
           ks_objects_count(objs, POD), pending, ks_objects_count(objs, POD) - pending);
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        if (k != KS_KIND_NODE && k != KS_KIND_POD && objs->of[k].n)
            printf(", %u %s", objs->of[k].n, ks_kind_name((enum ks_kind)k));
    }
    printf(" from %d file%s\n", nfiles, nfiles == 1 ? "" : "s");
}

int ks_cmd_schedule(int argc, char **argv)
{
    const char **files = calloc((size_t)argc, sizeof(*files));
    int nfiles = 0, status;
    struct ks_error err = {0};
    struct ks_objects *objs = NULL;

    if (!files)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (++i < argc)
                files[nfiles++] = argv[i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "ksched schedule: unknown flag \"%s\"\n", argv[i]);
            free(files);
            return 2;
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (nfiles == 0) {
        fprintf(stderr, "usage: ksched schedule [--config FILE] FILE...\n");
        free(files);
        return 2;
    }
    int rc = ks_objects_load(files, nfiles, &objs, &err);
    if (rc == -ENOMEM && !err.set) {
        fprintf(stderr, "ksched: out of memory\n");
        status = 1;
    } else if (rc) {
        status = fail_input(&err);
    } else {
        summarise(objs, nfiles);
        status = 0;
    }
    ks_objects_destroy(objs);
    free(files);
    return status;
}
