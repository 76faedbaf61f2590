/*
 * bench_test_load.h - the bench harness tests' loader of workload text: writes it to a
 * temporary file and loads it as `ksched bench` loads bench/workloads/ files. Test code.
 */
#ifndef KSCHED_TEST_BENCH_LOAD_H
#define KSCHED_TEST_BENCH_LOAD_H

#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ksched/api.h"

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

/* The end of a test workload after its ops: one measured createPods of template p, one workload. */
#define BENCH_TEST_TAIL                                                                                      \
    "- {opcode: createPods, count: 1, podTemplate: p, collectMetrics: true}\n"                               \
    "workloads:\n- {name: one, params: {n: 2}}\n"

/* Load @head, @ops and @tail as one workload file (a test's fixed parts around its ops). */
static inline int load_parts(const char *head, const char *ops, const char *tail,
                             struct ks_bench_workload **out, struct ks_error *err)
{
    char text[8192];
    cr_assert_lt((size_t)snprintf(text, sizeof(text), "%s%s%s", head, ops, tail), sizeof(text));
    return load_text(text, out, err);
}

/*
 * A load of case @i that must fail: -EINVAL, nothing made, the error naming @field at
 * @line with @msg in its message.
 */
static inline void expect_load_error(size_t i, int rc, struct ks_bench_workload *w,
                                     const struct ks_error *err, const char *field, const char *msg, int line)
{
    cr_expect_eq(rc, -EINVAL, "case %zu: %d", i, rc);
    cr_expect_null(w);
    cr_expect(eq(str, (char *)err->field, (char *)field), "case %zu", i);
    cr_expect_not_null(strstr(err->msg, msg), "case %zu: %s", i, err->msg);
    cr_expect_eq(err->line, line, "case %zu: line %d", i, err->line);
    ks_bench_workload_destroy(w);
}

/* Sets the API up for a suite of the bench tests. */
static inline void bench_test_init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

#endif
