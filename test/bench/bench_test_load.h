/*
 * bench_test_load.h - the bench harness tests' loader of workload text: writes it to a
 * temporary file and loads it as `ksched bench` loads bench/workloads/ files. Test code.
 */
#ifndef KSCHED_TEST_BENCH_LOAD_H
#define KSCHED_TEST_BENCH_LOAD_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

/* Load @text as a workload file: the loader's code, *@out and @err as it leaves them. */
static inline int load_text(const char *text, struct ks_bench_workload **out, struct ks_error *err)
{
    char path[] = "/tmp/ksched-workload-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fputs(text, f) >= 0, true);
    cr_assert_eq(fclose(f), 0);
    int rc = ks_bench_workload_load(path, out, err);
    unlink(path);
    return rc;
}

#endif
