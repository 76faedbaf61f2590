/*
 * yaml_out.c - block-style YAML writer (see include/ksched/internal/yaml_out.h).
 *
 * A stack of open collections. Header lines are written lazily: opening `key:` only
 * pushes a frame, and the first line written inside it (or its closing, when empty)
 * writes the header first, so empty collections come out as `{}` or `[]`. A map opened
 * as a list item writes "- " before its first key and indents the following keys by
 * two; lists under a key sit at the key's column, as sigs.k8s.io/yaml lays them out.
 *
 * Quoting follows YAML 1.1 resolution as go-yaml applies it: a scalar that would be read
 * as a boolean, null, number or timestamp, or that starts with an indicator or holds
 * ": ", " #" or control characters, is double-quoted with escapes.
 */
#include "ksched/internal/yaml_out.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

void ks_yaml_out_init(struct ks_yaml_out *o, FILE *fp)
{
    memset(o, 0, sizeof(*o));
    o->fp = fp;
    o->stack[0].started = 1; /* the root map has no header */
}

int ks_yaml_out_finish(struct ks_yaml_out *o)
{
    if (!o->error && o->depth != 0)
        o->error = -EINVAL;
    if (!o->error && fflush(o->fp) != 0)
        o->error = -EIO;
    return o->error;
}

static void put(struct ks_yaml_out *o, const char *s)
{
    if (!o->error && fputs(s, o->fp) == EOF)
        o->error = -EIO;
}

static void spaces(struct ks_yaml_out *o, int n)
{
    for (; n > 0 && !o->error; n--) {
        if (fputc(' ', o->fp) == EOF)
            o->error = -EIO;
    }
}

static bool is_special_word(const char *s)
{
    static const char *const words[] = {
        "y",     "Y",     "yes",   "Yes",   "YES",   "n",     "N",    "no",   "No",   "NO",
        "true",  "True",  "TRUE",  "false", "False", "FALSE", "on",   "On",   "ON",   "off",
        "Off",   "OFF",   "null",  "Null",  "NULL",  "~",     ".inf", ".Inf", ".INF", "-.inf",
        "-.Inf", "-.INF", "+.inf", "+.Inf", "+.INF", ".nan",  ".NaN", ".NAN", NULL,
    };
    for (int i = 0; words[i]; i++) {
        if (strcmp(s, words[i]) == 0)
            return true;
    }
    return false;
}

/* Integers, floats, sexagesimals and timestamps all start with an optional sign and a digit (or ".digit"). */
static bool looks_numeric(const char *s)
{
    const char *p = s + (*s == '-' || *s == '+');
    if (*p == '.')
        p++;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p; p++) {
        if (!strchr("0123456789abcdefABCDEFxXoO_.:+- TtZz", *p))
            return false;
    }
    return true;
}

bool ks_yaml_needs_quotes(const char *s)
{
    size_t len = strlen(s);

    if (len == 0 || is_special_word(s) || looks_numeric(s))
        return true;
    if (strchr(",[]{}#&*!|>'\"%@` \t", s[0]))
        return true;
    if (strchr("-?:", s[0]) && (s[1] == '\0' || s[1] == ' ' || s[1] == '\t'))
        return true;
    if (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == ':')
        return true;
    if (strstr(s, ": ") || strstr(s, " #") || strstr(s, ":\t"))
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return true;
    }
    return false;
}

static void scalar(struct ks_yaml_out *o, const char *s)
{
    if (!ks_yaml_needs_quotes(s)) {
        put(o, s);
        return;
    }
    put(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char buf[8];
        switch (*p) {
        case '"':
            put(o, "\\\"");
            break;
        case '\\':
            put(o, "\\\\");
            break;
        case '\n':
            put(o, "\\n");
            break;
        case '\t':
            put(o, "\\t");
            break;
        case '\r':
            put(o, "\\r");
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                snprintf(buf, sizeof(buf), "\\x%02x", *p);
            else
                buf[0] = (char)*p, buf[1] = '\0';
            put(o, buf);
        }
    }
    put(o, "\"");
}

static void start(struct ks_yaml_out *o, int i);

/* Write the indentation (and "- " marker) that begins a new line inside frame @i. */
static void line_prefix(struct ks_yaml_out *o, int i)
{
    struct ks_yaml_frame *f = &o->stack[i];

    start(o, i);
    if (f->item && f->nlines == 0) {
        spaces(o, o->stack[i - 1].indent);
        put(o, "- ");
    } else {
        spaces(o, f->indent);
    }
    if (f->nlines < UINT8_MAX)
        f->nlines++;
}

/* Make sure frame @i's header line exists before anything is written inside it. */
static void start(struct ks_yaml_out *o, int i)
{
    struct ks_yaml_frame *f = &o->stack[i];

    if (f->started)
        return;
    f->started = 1;
    if (f->key) {
        line_prefix(o, i - 1);
        put(o, f->key);
        put(o, ":\n");
    } else {
        start(o, i - 1); /* a list item: its "- " is written with its first line */
    }
}

static struct ks_yaml_frame *push(struct ks_yaml_out *o, bool seq, bool item, const char *key)
{
    if (o->depth + 1 >= KS_YAML_OUT_DEPTH) {
        if (!o->error)
            o->error = -EINVAL;
        return NULL;
    }
    struct ks_yaml_frame *parent = &o->stack[o->depth];
    struct ks_yaml_frame *f = &o->stack[++o->depth];
    memset(f, 0, sizeof(*f));
    f->seq = seq;
    f->item = item;
    f->key = key;
    /* a list under a key stays at the key's column; a map goes two deeper */
    f->indent = seq && !item ? parent->indent : parent->indent + 2;
    return f;
}

static bool in_map(struct ks_yaml_out *o)
{
    if (o->stack[o->depth].seq) {
        if (!o->error)
            o->error = -EINVAL;
        return false;
    }
    return true;
}

static bool in_seq(struct ks_yaml_out *o)
{
    if (!o->stack[o->depth].seq) {
        if (!o->error)
            o->error = -EINVAL;
        return false;
    }
    return true;
}

static void key_line(struct ks_yaml_out *o, const char *key)
{
    line_prefix(o, o->depth);
    put(o, key);
    put(o, ": ");
}

void ks_yaml_key_str(struct ks_yaml_out *o, const char *key, const char *value)
{
    if (!in_map(o))
        return;
    key_line(o, key);
    scalar(o, value ? value : "");
    put(o, "\n");
}

void ks_yaml_key_int(struct ks_yaml_out *o, const char *key, int64_t value)
{
    char buf[32];
    if (!in_map(o))
        return;
    snprintf(buf, sizeof(buf), "%" PRId64 "\n", value);
    key_line(o, key);
    put(o, buf);
}

void ks_yaml_key_bool(struct ks_yaml_out *o, const char *key, bool value)
{
    if (!in_map(o))
        return;
    key_line(o, key);
    put(o, value ? "true\n" : "false\n");
}

void ks_yaml_key_float(struct ks_yaml_out *o, const char *key, double value)
{
    char buf[64];
    if (!in_map(o))
        return;
    snprintf(buf, sizeof(buf), "%.7g\n", value);
    key_line(o, key);
    put(o, buf);
}

void ks_yaml_key_map(struct ks_yaml_out *o, const char *key)
{
    if (in_map(o))
        push(o, false, false, key);
}

void ks_yaml_key_seq(struct ks_yaml_out *o, const char *key)
{
    if (in_map(o))
        push(o, true, false, key);
}

void ks_yaml_item_str(struct ks_yaml_out *o, const char *value)
{
    if (!in_seq(o))
        return;
    line_prefix(o, o->depth);
    put(o, "- ");
    scalar(o, value ? value : "");
    put(o, "\n");
}

void ks_yaml_item_int(struct ks_yaml_out *o, int64_t value)
{
    char buf[32];
    if (!in_seq(o))
        return;
    snprintf(buf, sizeof(buf), "- %" PRId64 "\n", value);
    line_prefix(o, o->depth);
    put(o, buf);
}

void ks_yaml_item_map(struct ks_yaml_out *o)
{
    if (in_seq(o))
        push(o, false, true, NULL);
}

void ks_yaml_end(struct ks_yaml_out *o)
{
    struct ks_yaml_frame *f = &o->stack[o->depth];

    if (o->depth == 0) {
        if (!o->error)
            o->error = -EINVAL;
        return;
    }
    if (!f->started) {
        /* nothing was written inside: an empty flow collection on the header line */
        f->started = 1;
        if (f->key) {
            line_prefix(o, o->depth - 1);
            put(o, f->key);
            put(o, f->seq ? ": []\n" : ": {}\n");
        } else {
            line_prefix(o, o->depth - 1);
            put(o, f->seq ? "- []\n" : "- {}\n");
        }
    }
    o->depth--;
}
