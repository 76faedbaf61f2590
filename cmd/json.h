/*
 * json.h - writing JSON strings for the CLI's line-oriented output.
 */
#ifndef KSCHED_CMD_JSON_H
#define KSCHED_CMD_JSON_H

#include <stdio.h>

/* ks_json_str - write @s as a quoted JSON string (escaping quotes, backslashes, control characters). */
void ks_json_str(FILE *out, const char *s);

#endif
