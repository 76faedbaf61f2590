/*
 * error.c - filling and formatting struct ks_error (see include/ksched/base/error.h).
 */
#include "ksched/base/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int ks_error_set(struct ks_error *err, const char *file, int line, const char *field, const char *fmt, ...)
{
    if (!err || err->set)
        return -EINVAL;
    va_list ap;
    snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
    err->line = line;
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    err->set = 1;
    return -EINVAL;
}

void ks_error_format(const struct ks_error *err, char *buf, size_t len)
{
    const char *file = err->file[0] ? err->file : "<input>";

    if (err->field[0])
        snprintf(buf, len, "%s:%d: %s: %s", file, err->line, err->field, err->msg);
    else
        snprintf(buf, len, "%s:%d: %s", file, err->line, err->msg);
}
