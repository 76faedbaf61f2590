/*
 * field_check.c - unknown and duplicate fields of a manifest, against the API schema.
 *
 * Mirrors the API server's strict decoding (sigs.k8s.io/json's DisallowUnknownFields and
 * DisallowDuplicateFields, behind kubectl --validate): a struct's keys must be its fields,
 * case-sensitively; the keys of a map field (labels, resources.requests) are free; a list
 * checks each item; below a scalar or a free-form object (FieldsV1) only duplicates are
 * looked for, as the JSON decoder finds them at any depth. Paths are written like the API
 * server's ("spec.containers[0].resouces").
 *
 * The walk keeps no path while it goes: each level is a frame on the C stack linked to its
 * parent, and a path is spelled out only when a problem is reported, so a clean document
 * costs one lookup per key.
 */
#include "ksched/field_check.h"

#include "ksched/base/error.h"
#include "ksched/internal/api_schema.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int ks_validation_parse(const char *s, enum ks_validation *out)
{
    if (strcmp(s, "strict") == 0 || strcmp(s, "true") == 0)
        *out = KS_VALIDATE_STRICT;
    else if (strcmp(s, "warn") == 0)
        *out = KS_VALIDATE_WARN;
    else if (strcmp(s, "ignore") == 0 || strcmp(s, "false") == 0)
        *out = KS_VALIDATE_IGNORE;
    else
        return -EINVAL;
    return 0;
}

/* One level of the path: a map key, or (key NULL) a list index. */
struct frame {
    const struct frame *up;
    const struct ks_yaml_node *key;
    uint32_t index;
};

struct walk {
    ks_field_issue_fn issue;
    void *ctx;
    const char *prefix;
};

/* Append the path down to @f to @buf (of @len bytes) from offset @at; returns the new offset. */
static size_t put_path(char *buf, size_t len, size_t at, const struct frame *f)
{
    if (!f)
        return at;
    at = put_path(buf, len, at, f->up);
    if (at >= len)
        return at;
    if (f->key)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "." : "", f->key->str);
    else
        at += (size_t)snprintf(buf + at, len - at, "[%u]", f->index);
    return at;
}

static int report(const struct walk *w, const struct frame *f, const char *what)
{
    char path[KS_ERROR_FIELD_MAX], msg[KS_ERROR_MSG_MAX];
    size_t at = (size_t)snprintf(path, sizeof(path), "%s", w->prefix);
    if (at && path[at - 1] == '.')
        path[--at] = '\0'; /* put_path adds the dot */
    put_path(path, sizeof(path), at < sizeof(path) ? at : sizeof(path), f);
    snprintf(msg, sizeof(msg), "%s field \"%s\"", what, f->key->str);
    return w->issue(w->ctx, f->key->line, path, msg);
}

static int walk(const struct walk *w, const struct ks_yaml_node *n, uint32_t node, const struct frame *up)
{
    const struct ks_schema_node *s = &ks_schema_nodes[node];
    int rc;

    if (!n || n->kind == KS_YAML_SCALAR || s->kind == KS_SCHEMA_SEPARATE)
        return 0;
    if (n->kind == KS_YAML_SEQ) {
        uint32_t elem = s->kind == KS_SCHEMA_ARRAY ? s->ref : 0;
        for (uint32_t i = 0; i < n->n; i++) {
            struct frame f = {up, NULL, i};
            if ((rc = walk(w, n->items[i], elem, &f)))
                return rc;
        }
        return 0;
    }
    for (uint32_t i = 0; i < n->n; i++) {
        const struct ks_yaml_node *key = n->pairs[i].key;
        struct frame f = {up, key, 0};
        uint32_t child = 0;
        if (key->kind != KS_YAML_SCALAR)
            continue; /* not a field name; the decoders reject what they need */
        if (s->kind == KS_SCHEMA_OBJECT) {
            const struct ks_schema_field *fld = ks_schema_field_find(s, key->str, key->len);
            if (fld)
                child = fld->node;
            else if ((rc = report(w, &f, "unknown")))
                return rc;
        } else if (s->kind == KS_SCHEMA_MAP) {
            child = s->ref;
        }
        if ((rc = walk(w, n->pairs[i].value, child, &f)))
            return rc;
    }
    /* the value a duplicate replaced is not in the object, but its own duplicates were in
     * the input all the same */
    for (uint32_t i = 0; i < n->ndup; i++) {
        struct frame f = {up, n->pairs[n->n + i].key, 0};
        if ((rc = report(w, &f, "duplicate")) || (rc = walk(w, n->pairs[n->n + i].value, 0, &f)))
            return rc;
    }
    return 0;
}

int ks_field_check(const struct ks_yaml_node *doc, int64_t root, const char *prefix, ks_field_issue_fn issue,
                   void *ctx)
{
    if (root < 0 || (uint64_t)root >= ks_schema_nnodes)
        return 0;
    struct walk w = {issue, ctx, prefix ? prefix : ""};
    return walk(&w, doc, (uint32_t)root, NULL);
}
