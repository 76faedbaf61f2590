/*
 * error.h - input errors that name a file, a line and a field.
 *
 * Every edge that reads user input (manifests, configuration, API objects) reports a
 * failure through one struct ks_error filled by the first failing check; callers print
 * it as "FILE:LINE: FIELD: MESSAGE" and exit with status 2. Filling an error never
 * allocates, so it is safe on every failure path.
 */
#ifndef KSCHED_ERROR_H
#define KSCHED_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define KS_ERROR_FILE_MAX  512
#define KS_ERROR_FIELD_MAX 256
#define KS_ERROR_MSG_MAX   512

struct ks_error {
    char file[KS_ERROR_FILE_MAX];   /* input file name, "" when not from a file */
    int line;                       /* 1-based line, 0 when unknown */
    char field[KS_ERROR_FIELD_MAX]; /* dotted field path, e.g. spec.containers[0].resources.requests.cpu */
    char msg[KS_ERROR_MSG_MAX];
    int set; /* 1 once filled: the first error wins */
};

/*
 * ks_error_set - record an error unless one is already recorded.
 * @file and @field may be NULL. Returns -EINVAL so callers can `return ks_error_set(...)`.
 */
int ks_error_set(struct ks_error *err, const char *file, int line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ks_error_format - "FILE:LINE: FIELD: MESSAGE" into @buf (always NUL-terminated). */
void ks_error_format(const struct ks_error *err, char *buf, size_t len);

#endif
