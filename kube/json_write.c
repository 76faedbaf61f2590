/*
 * json_write.c - JSON string escaping, and a tree (ksched/yaml_tree.h) as JSON text (see
 * include/ksched/internal/json_write.h).
 */
#include "ksched/internal/json_write.h"

#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

void ks_json_write_str(FILE *out, const char *s, size_t len)
{
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        default:
            if (c < 0x20)
                fprintf(out, "\\u%04x", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
}

/* A JSON number, true, false or null: what a plain scalar may be written as. */
static bool json_literal(const char *s)
{
    if (!strcmp(s, "true") || !strcmp(s, "false") || !strcmp(s, "null"))
        return true;
    const char *p = s + (*s == '-');
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        if (*++p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p += p[1] == '+' || p[1] == '-' ? 2 : 1;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

static void write_node(FILE *out, const struct ks_yaml_node *n)
{
    if (!n) {
        fputs("null", out);
        return;
    }
    switch (n->kind) {
    case KS_YAML_SCALAR:
        if (n->plain && json_literal(n->str))
            fputs(n->str, out);
        else if (n->plain && ks_yaml_is_null(n))
            fputs("null", out);
        else
            ks_json_write_str(out, n->str, n->len);
        return;
    case KS_YAML_SEQ:
        fputc('[', out);
        for (uint32_t i = 0; i < n->n; i++) {
            if (i)
                fputc(',', out);
            write_node(out, n->items[i]);
        }
        fputc(']', out);
        return;
    case KS_YAML_MAP:
        fputc('{', out);
        for (uint32_t i = 0; i < n->n; i++) {
            if (i)
                fputc(',', out);
            ks_json_write_str(out, n->pairs[i].key->str, n->pairs[i].key->len);
            fputc(':', out);
            write_node(out, n->pairs[i].value);
        }
        fputc('}', out);
        return;
    }
}

int ks_yaml_write_json(FILE *out, const struct ks_yaml_node *n)
{
    write_node(out, n);
    return ferror(out) ? -EIO : 0;
}
