/*
 * yaml_tree.c - libyaml event stream to struct ks_yaml_node trees.
 *
 * A stack of open collections collects child pointers in growable scratch vectors
 * (malloc'd, freed on close) and copies them into the stream's arena when the collection
 * ends, so the finished tree owns no memory outside the arena. Anchors are remembered
 * per document; an alias points at the anchored node. Each node's expanded size (the
 * number of nodes a decoder could visit through aliases) is summed, and a document past
 * KS_YAML_MAX_EXPANDED is rejected, as go-yaml rejects alias bombs. Duplicate map keys are
 * rejected: an object is never decoded from an ambiguous input.
 */
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum { KS_YAML_MAX_EXPANDED = 4 * 1000 * 1000, KS_YAML_MAX_DEPTH = 256 };

struct frame {
    struct ks_yaml_node *node;
    struct ks_yaml_node **kids; /* scratch: for maps, key and value alternate */
    uint32_t n, cap;
    uint64_t weight;
};

struct anchor {
    struct anchor *next;
    const char *name;
    struct ks_yaml_node *node;
    uint64_t weight;
};

struct builder {
    struct ks_yaml_stream *s;
    struct ks_error *err;
    struct frame stack[KS_YAML_MAX_DEPTH];
    int depth;
    struct anchor *anchors;
    struct ks_yaml_node *root;
    uint64_t root_weight;
    struct ks_yaml_node **docs; /* scratch vector of documents */
    uint32_t ndocs, capdocs;
};

static int fail(struct builder *b, int line, const char *fmt, const char *arg)
{
    return ks_error_set(b->err, b->s->file, line, NULL, fmt, arg);
}

static int push_kid(struct frame *f, struct ks_yaml_node *kid)
{
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? f->cap * 2 : 8;
        struct ks_yaml_node **k = realloc(f->kids, cap * sizeof(*k));
        if (!k)
            return -ENOMEM;
        f->kids = k;
        f->cap = cap;
    }
    f->kids[f->n++] = kid;
    return 0;
}

static int same_scalar(const struct ks_yaml_node *a, const struct ks_yaml_node *b)
{
    return a->kind == KS_YAML_SCALAR && b->kind == KS_YAML_SCALAR && a->len == b->len &&
           memcmp(a->str, b->str, a->len) == 0;
}

/* Attach a finished node (with its expanded weight) to the open collection or the document. */
static int attach(struct builder *b, struct ks_yaml_node *node, uint64_t weight, const char *anchor)
{
    if (anchor) {
        struct anchor *a = ks_arena_alloc(&b->s->arena, sizeof(*a));
        if (!a || !(a->name = ks_arena_strdup(&b->s->arena, anchor)))
            return -ENOMEM;
        a->node = node;
        a->weight = weight;
        a->next = b->anchors;
        b->anchors = a;
    }
    if (b->depth == 0) {
        b->root = node;
        b->root_weight = weight;
        return 0;
    }
    struct frame *f = &b->stack[b->depth - 1];
    if (f->node->kind == KS_YAML_MAP && f->n % 2 == 1) {
        /* node is a value: its key is the previous kid; reject a repeated key */
        struct ks_yaml_node *key = f->kids[f->n - 1];
        for (uint32_t i = 0; i + 1 < f->n; i += 2) {
            if (same_scalar(f->kids[i], key))
                return fail(b, key->line, "duplicate key \"%s\" in map", key->str);
        }
    }
    f->weight += weight;
    if (f->weight > KS_YAML_MAX_EXPANDED)
        return fail(b, node->line, "%s", "document too large once aliases are expanded");
    return push_kid(f, node);
}

static struct ks_yaml_node *new_node(struct builder *b, enum ks_yaml_kind kind, const yaml_mark_t *mark)
{
    struct ks_yaml_node *n = ks_arena_alloc(&b->s->arena, sizeof(*n));
    if (n) {
        n->kind = kind;
        n->line = (int)mark->line + 1;
    }
    return n;
}

static int open_collection(struct builder *b, enum ks_yaml_kind kind, const yaml_mark_t *mark)
{
    if (b->depth == KS_YAML_MAX_DEPTH)
        return fail(b, (int)mark->line + 1, "%s", "nesting too deep");
    struct ks_yaml_node *n = new_node(b, kind, mark);
    if (!n)
        return -ENOMEM;
    b->stack[b->depth++] = (struct frame){.node = n, .weight = 1};
    return 0;
}

static int close_collection(struct builder *b, const char *anchor)
{
    struct frame f = b->stack[--b->depth];
    struct ks_yaml_node *n = f.node;
    int rc = -ENOMEM;

    if (n->kind == KS_YAML_MAP) {
        n->n = f.n / 2;
        n->pairs = ks_arena_calloc(&b->s->arena, n->n ? n->n : 1, sizeof(*n->pairs));
        if (!n->pairs)
            goto out;
        for (uint32_t i = 0; i < n->n; i++)
            n->pairs[i] = (struct ks_yaml_pair){f.kids[2 * i], f.kids[2 * i + 1]};
    } else {
        n->n = f.n;
        n->items = ks_arena_calloc(&b->s->arena, n->n ? n->n : 1, sizeof(*n->items));
        if (!n->items)
            goto out;
        if (f.n)
            memcpy(n->items, f.kids, f.n * sizeof(*n->items));
    }
    rc = attach(b, n, f.weight, anchor);
out:
    free(f.kids);
    return rc;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
    struct ks_yaml_node *n = new_node(b, KS_YAML_SCALAR, &ev->start_mark);
    if (!n)
        return -ENOMEM;
    n->len = ev->data.scalar.length;
    n->str = ks_arena_strndup(&b->s->arena, (const char *)ev->data.scalar.value, n->len);
    if (!n->str)
        return -ENOMEM;
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    return attach(b, n, 1, (const char *)ev->data.scalar.anchor);
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    for (struct anchor *a = b->anchors; a; a = a->next) {
        if (strcmp(a->name, name) == 0)
            return attach(b, a->node, a->weight, NULL);
    }
    return fail(b, (int)ev->start_mark.line + 1, "unknown alias \"%s\"", name);
}

static int end_document(struct builder *b)
{
    if (b->ndocs == b->capdocs) {
        uint32_t cap = b->capdocs ? b->capdocs * 2 : 16;
        struct ks_yaml_node **d = realloc(b->docs, cap * sizeof(*d));
        if (!d)
            return -ENOMEM;
        b->docs = d;
        b->capdocs = cap;
    }
    b->docs[b->ndocs++] = b->root;
    b->root = NULL;
    b->anchors = NULL;
    return 0;
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return open_collection(b, KS_YAML_SEQ, &ev->start_mark);
    case YAML_MAPPING_START_EVENT:
        return open_collection(b, KS_YAML_MAP, &ev->start_mark);
    case YAML_DOCUMENT_END_EVENT:
        return end_document(b);
    default:
        return 0;
    }
}

int ks_yaml_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                  struct ks_error *err)
{
    struct ks_yaml_stream *s = calloc(1, sizeof(*s));
    yaml_parser_t parser;
    struct builder b = {.s = s, .err = err};
    int rc = -ENOMEM;

    *out = NULL;
    if (!s)
        return -ENOMEM;
    s->file = ks_arena_strdup(&s->arena, file ? file : "");
    if (!s->file || !yaml_parser_initialize(&parser)) {
        ks_yaml_stream_destroy(s);
        return -ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);

    /* libyaml gives a collection's anchor on its start event: keep it until the end event */
    char *coll_anchor[KS_YAML_MAX_DEPTH] = {0};
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            int line = (int)(parser.problem_mark.line + 1);
            rc = ks_error_set(err, s->file, line, NULL, "invalid YAML: %s%s%s",
                              parser.problem ? parser.problem : "syntax error", parser.context ? " " : "",
                              parser.context ? parser.context : "");
            break;
        }
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            rc = 0;
            break;
        }
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
            const yaml_char_t *a = ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                                        : ev.data.mapping_start.anchor;
            rc = on_event(&b, &ev);
            if (rc == 0 && a && !(coll_anchor[b.depth - 1] = strdup((const char *)a)))
                rc = -ENOMEM;
        } else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            char *a = coll_anchor[b.depth - 1];
            coll_anchor[b.depth - 1] = NULL;
            rc = close_collection(&b, a);
            free(a);
        } else {
            rc = on_event(&b, &ev);
        }
        yaml_event_delete(&ev);
        if (rc < 0)
            break;
    }
    yaml_parser_delete(&parser);
    for (int i = 0; i < KS_YAML_MAX_DEPTH; i++)
        free(coll_anchor[i]);
    while (b.depth > 0)
        free(b.stack[--b.depth].kids);

    if (rc == 0) {
        s->ndocs = b.ndocs;
        s->docs = ks_arena_calloc(&s->arena, b.ndocs ? b.ndocs : 1, sizeof(*s->docs));
        if (!s->docs)
            rc = -ENOMEM;
        else if (b.ndocs)
            memcpy(s->docs, b.docs, b.ndocs * sizeof(*s->docs));
    }
    free(b.docs);
    if (rc < 0) {
        if (rc == -ENOMEM)
            ks_error_set(err, file, 0, NULL, "out of memory");
        ks_yaml_stream_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int ks_yaml_parse_file(const char *path, struct ks_yaml_stream **out, struct ks_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc;

    *out = NULL;
    if (!f)
        return ks_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
    for (;;) {
        if (cap - len < 65536) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(f);
                return ks_error_set(err, path, 0, NULL, "out of memory");
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return ks_error_set(err, path, 0, NULL, "cannot read: %s", strerror(errno));
    }
    fclose(f);
    rc = ks_yaml_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}

void ks_yaml_stream_destroy(struct ks_yaml_stream *s)
{
    if (!s)
        return;
    ks_arena_destroy(&s->arena);
    free(s);
}

const struct ks_yaml_node *ks_yaml_get(const struct ks_yaml_node *map, const char *key)
{
    if (!map || map->kind != KS_YAML_MAP)
        return NULL;
    size_t len = strlen(key);
    for (uint32_t i = 0; i < map->n; i++) {
        const struct ks_yaml_node *k = map->pairs[i].key;
        if (k->kind == KS_YAML_SCALAR && k->len == len && memcmp(k->str, key, len) == 0)
            return map->pairs[i].value;
    }
    return NULL;
}

int ks_yaml_is_null(const struct ks_yaml_node *n)
{
    if (!n)
        return 1;
    if (n->kind != KS_YAML_SCALAR || !n->plain)
        return 0;
    return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
           strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

const char *ks_yaml_kind_name(const struct ks_yaml_node *n)
{
    if (!n)
        return "nothing";
    switch (n->kind) {
    case KS_YAML_SCALAR:
        return "a scalar";
    case KS_YAML_SEQ:
        return "a list";
    case KS_YAML_MAP:
        return "a map";
    }
    return "?";
}
