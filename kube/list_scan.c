/*
 * list_scan.c - a LIST answer read item by item as its bytes arrive (see kube_internal.h):
 * the JSON half, and the choice between it and protobuf (kube/proto_list.c).
 *
 * JSON: a byte scanner tracks nesting depth and string state, as the watch framing does
 * (kube/watch_scan.c). Inside the top-level object, the string most recently closed at
 * depth 1 is a key or a value; a '[' right after the key "items" opens the items array.
 * Each value in that array (an object, or anything else, which the caller reports) is
 * handed to ks_json_parse() alone once whole, and its bytes dropped; every byte outside
 * the array goes to the shell, which ends up `{...,"items":[]}` and is parsed at the end
 * for the metadata. The buffer therefore holds one item at a time and the shell a few
 * hundred bytes, whatever the list's length.
 */
#include "kube_internal.h"

#include "ksched/internal/json_tree.h"
#include "ksched/internal/kube_proto.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_NONE, MODE_JSON, MODE_PROTO };

static int grow(char **buf, size_t *cap, size_t total)
{
    if (*cap >= total)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < total)
        c *= 2;
    char *b = realloc(*buf, c);
    if (!b)
        return -ENOMEM;
    *buf = b;
    *cap = c;
    return 0;
}

static int shell_put(struct ks__list_scan *ls, const char *s, size_t n)
{
    if (ls->shell_len + n + 1 > KS__SCAN_MAX)
        return -E2BIG;
    int rc = grow(&ls->shell, &ls->shell_cap, ls->shell_len + n + 1);
    if (rc)
        return rc;
    memcpy(ls->shell + ls->shell_len, s, n);
    ls->shell_len += n;
    ls->shell[ls->shell_len] = '\0';
    return 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* One item's text: parsed alone and handed on. */
static int emit(struct ks__list_scan *ls, const char *file, size_t end, ks__list_item_fn fn, void *ctx,
                struct ks_error *err)
{
    struct ks_yaml_stream *s;
    int rc = ks_json_parse(file, ls->buf + ls->start, end - ls->start, &s, err);
    if (rc)
        return rc;
    rc = fn(ctx, s->docs[0]);
    ks_yaml_stream_destroy(s);
    return rc;
}

/* The string state machine shared by the shell and the items: true when @c was inside a string. */
static bool in_string(struct ks__list_scan *ls, char c)
{
    return ks__json_in_string(&ls->in_str, &ls->esc, c);
}

static int json_feed(struct ks__list_scan *ls, const char *file, ks__list_item_fn fn, void *ctx,
                     struct ks_error *err)
{
    int rc = 0;
    for (; ls->pos < ls->len && rc == 0; ls->pos++) {
        char c = ls->buf[ls->pos];
        if (ls->in_item) {
            if (ls->in_str) {
                in_string(ls, c);
                if (!ls->in_str && ls->item_depth == 0) { /* a string item */
                    ls->in_item = false;
                    rc = emit(ls, file, ls->pos + 1, fn, ctx, err);
                }
            } else if (ls->scalar_item) {
                if (c == ',' || c == ']' || is_space(c)) {
                    ls->in_item = false;
                    rc = emit(ls, file, ls->pos, fn, ctx, err);
                    ls->pos--; /* the delimiter is the array's */
                }
            } else if (c == '"') {
                ls->in_str = true;
            } else if (c == '{' || c == '[') {
                ls->item_depth++;
            } else if ((c == '}' || c == ']') && --ls->item_depth == 0) {
                ls->in_item = false;
                rc = emit(ls, file, ls->pos + 1, fn, ctx, err);
            }
            continue;
        }
        if (ls->in_items) {
            if (is_space(c) || c == ',')
                continue;
            if (c == ']') {
                ls->in_items = false;
                ls->depth--;
                rc = shell_put(ls, "]", 1);
                continue;
            }
            ls->in_item = true;
            ls->start = ls->pos;
            ls->scalar_item = c != '{' && c != '[' && c != '"'; /* a number, true, false, null */
            ls->item_depth = c == '{' || c == '[';
            ls->in_str = c == '"';
            continue;
        }
        if (ls->depth == 0 && is_space(c))
            continue;
        if ((rc = shell_put(ls, &c, 1)))
            break;
        if (ls->in_str) {
            in_string(ls, c);
            if (ls->depth == 1 && ls->in_str && !ls->esc && c != '\\' && ls->keylen < sizeof(ls->key))
                ls->key[ls->keylen++] = c;
            else if (ls->depth == 1 && !ls->in_str)
                ls->key_items = ls->keylen == 5 && memcmp(ls->key, "items", 5) == 0;
            continue;
        }
        if (c == '"') {
            ls->in_str = true;
            ls->keylen = 0;
        } else if (c == '{' || c == '[') {
            if (ls->depth == 0 && c != '{')
                return ks_error_set(err, file, 1, NULL, "a list is a JSON object, not an array");
            ls->in_items = c == '[' && ls->depth == 1 && ls->key_items;
            ls->depth++;
        } else if (c == '}' || c == ']') {
            if (--ls->depth < 0)
                return ks_error_set(err, file, 1, NULL, "invalid JSON: '%c' closes nothing", c);
        } else if (ls->depth == 0) {
            return ks_error_set(err, file, 1, NULL, "invalid JSON: '%c' where a list should start", c);
        }
        if (ls->depth == 1 && c != '"')
            ls->key_items = ls->key_items && (c == ':' || is_space(c));
    }
    /* drop what is consumed: everything before the item in progress */
    size_t keep = ls->in_item ? ls->start : ls->pos;
    if (keep > 0) {
        memmove(ls->buf, ls->buf + keep, ls->len - keep);
        ls->len -= keep;
        ls->pos -= keep;
        ls->start -= keep < ls->start ? keep : ls->start;
    }
    if (rc == 0 && ls->len > KS__SCAN_MAX)
        rc = -E2BIG;
    return rc;
}

int ks__list_scan_feed(struct ks__list_scan *ls, const char *file, const char *data, size_t len,
                       ks__list_item_fn fn, void *ctx, struct ks_error *err)
{
    int rc = grow(&ls->buf, &ls->cap, ls->len + len);
    if (rc)
        return rc;
    memcpy(ls->buf + ls->len, data, len);
    ls->len += len;
    if (ls->mode == MODE_NONE) {
        size_t i = 0;
        while (i < ls->len && is_space(ls->buf[i]))
            i++;
        if (i == ls->len)
            return 0;
        if (ls->buf[i] == '{') {
            ls->mode = MODE_JSON;
        } else if (ls->len < 4) {
            return 0; /* maybe the protobuf magic, not whole yet */
        } else if (ks_proto_is_enveloped(ls->buf, ls->len)) {
            ls->mode = MODE_PROTO;
        } else {
            return ks_error_set(err, file, 1, NULL, "neither a JSON object nor an enveloped protobuf list");
        }
    }
    return ls->mode == MODE_JSON ? json_feed(ls, file, fn, ctx, err)
                                 : ks__proto_list_feed(ls, file, fn, ctx, err);
}

static const char *scalar_or_empty(const struct ks_yaml_node *n)
{
    return n && n->kind == KS_YAML_SCALAR && !ks_yaml_is_null(n) ? n->str : "";
}

int ks__list_scan_finish(struct ks__list_scan *ls, const char *file, const char **rv, const char **cont,
                         struct ks_error *err)
{
    int rc;
    if (ls->mode == MODE_PROTO) {
        if ((rc = ks__proto_list_finish(ls, file, err)))
            return rc;
    } else {
        if (ls->mode == MODE_NONE || ls->depth || ls->in_items || ls->in_item || ls->in_str)
            return ks_error_set(err, file, 1, NULL, "the list ends early (truncated JSON)");
        struct ks_yaml_stream *s;
        if ((rc = ks_json_parse(file, ls->shell, ls->shell_len, &s, err)))
            return rc;
        const struct ks_yaml_node *root = s->docs[0], *md = ks_yaml_get(root, "metadata"),
                                  *items = ks_yaml_get(root, "items");
        if (!ks_yaml_is_null(items) && items->kind != KS_YAML_SEQ) {
            rc = ks_error_set(err, file, items->line, "items", "is %s, not a list", ks_yaml_kind_name(items));
        } else if ((rc = ks__set_str(&ls->rv, scalar_or_empty(ks_yaml_get(md, "resourceVersion")))) ||
                   (rc = ks__set_str(&ls->cont, scalar_or_empty(ks_yaml_get(md, "continue"))))) {
            ks_error_set(err, file, 0, NULL, "out of memory");
        }
        ks_yaml_stream_destroy(s);
        if (rc)
            return rc;
    }
    *rv = ls->rv ? ls->rv : "";
    *cont = ls->cont ? ls->cont : "";
    return 0;
}

void ks__list_scan_reset(struct ks__list_scan *ls)
{
    ls->len = ls->pos = ls->start = ls->shell_len = ls->keylen = 0;
    ls->mode = MODE_NONE;
    ls->depth = ls->item_depth = ls->pstate = 0;
    ls->in_str = ls->esc = ls->in_items = ls->in_item = ls->key_items = ls->scalar_item = false;
    ls->raw_left = 0;
    ls->raw_seen = false;
    ls->list_desc = ls->item_desc = NULL;
    free(ls->rv);
    free(ls->cont);
    ls->rv = ls->cont = NULL;
}

void ks__list_scan_free(struct ks__list_scan *ls)
{
    ks__list_scan_reset(ls);
    free(ls->buf);
    free(ls->shell);
    memset(ls, 0, sizeof(*ls));
}
