/*
 * serve_cmd.c - `ksched serve`: its flags (serve/serve_flags.c), then the serving itself
 * (serve/serve_run.c, ks_serve_run).
 */
#include "commands.h"
#include "serve.h"

#include <stdio.h>

int ks_cmd_serve(int argc, char **argv)
{
    struct ks_serve_args a;
    int rc = ks_serve_parse_args(argc, argv, &a);
    if (rc < 0)
        return 2;
    if (rc > 0) {
        ks_serve_usage(stdout);
        return 0;
    }
    return ks_serve_run(&a);
}
