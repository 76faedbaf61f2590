/*
 * cel_case.h - the CEL test-data runner shared by the data-driven CEL tests (conformance,
 * Kubernetes library tables): reads test/cel/data/<file>, compiles and evaluates each case
 * through the public ksched/internal/cel.h API and reports the cases whose outcome differs.
 *
 * Format: blocks separated by blank lines; '#' lines are comments. Each line is a keyword and
 * its arguments, strings JSON-quoted:
 *   test "name"                 - starts a case
 *   flags unchecked dyn_aggregates no_fold check_only libs=<bits>
 *   decl "x" "map(string, int)" - a variable and its type (type syntax of cel_case_type())
 *   bind "x" "{'a': 1}"         - its value, as a CEL expression evaluated in an empty env
 *   expr "..."                  - the expression
 *   value "..."                 - the expected value, as a CEL expression (compared by its text)
 *   error "text"                - an error is expected (compile or evaluation); the text, when
 *                                 not empty, must be contained in the message when `exact` is set
 *   exact                       - compare error texts (substring) strictly
 *   cost N / maxcost N          - the runtime cost, the estimated worst case
 *   limit N                     - the runtime cost limit
 *   skip "reason"               - a known difference: the case is counted, not run
 */
#ifndef KSCHED_TEST_CEL_CASE_H
#define KSCHED_TEST_CEL_CASE_H

#include <stddef.h>

struct cel_case_stats {
    unsigned run, passed, failed, skipped, err_text_mismatch;
};

/* Run every case of @file (relative to test/cel/data); failures printed to stderr. */
void cel_case_run_file(const char *file, unsigned default_libs, struct cel_case_stats *st);

#endif
