/*
 * json_write.h - writing JSON text: one string writer for every JSON body and line ksched
 * produces (API requests, leases, the CLI's output), and one writer of parsed trees.
 */
#ifndef KSCHED_JSON_WRITE_H
#define KSCHED_JSON_WRITE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/*
 * ks_json_write_str - @len bytes of @s as a quoted JSON string on @out (RFC 8259 section 7):
 * quotes, backslashes and control characters escaped, every other byte as it is.
 */
void ks_json_write_str(FILE *out, const char *s, size_t len);

/* ks_json_write_cstr - the NUL-terminated @s as a quoted JSON string on @out. */
static inline void ks_json_write_cstr(FILE *out, const char *s)
{
    ks_json_write_str(out, s, strlen(s));
}

struct ks_yaml_node;

/*
 * ks_yaml_write_json - the tree @n (as ksched/internal/json_tree.h or ksched/internal/kube_proto.h give it)
 * as compact JSON on @out: plain scalars that are JSON literals (numbers, true, false, null) as written,
 * other plain nulls as null, every other scalar as a string. 0, or -EIO when writing failed.
 */
int ks_yaml_write_json(FILE *out, const struct ks_yaml_node *n);

#endif
