/*
 * yaml_tree.c - libyaml event stream to struct ks_yaml_node trees.
 *
 * A stack of open collections collects child pointers in growable scratch vectors
 * (malloc'd, kept per depth for the next collection, freed when the parse ends) and copies
 * them into the stream's arena when the collection ends, so the finished tree owns no
 * memory outside the arena. Anchors are remembered
 * per document; an alias points at the anchored node. Decoders walk the tree with aliases
 * expanded, so the work and memory a document can cause is bounded relative to its own
 * size (alias bombs, "billion laughs"), as go-yaml bounds its alias-driven decodes: each
 * node's expanded weight (itself and everything below it, aliases expanded; saturating) is
 * kept, an alias adds its anchor's weight to the nodes the aliases produce, and a document
 * whose aliases produce more nodes than both KS_YAML_ALIAS_FLOOR and the number of nodes it
 * holds in its text is rejected. A document without aliases is never too large (its tree is
 * as large as its text). Duplicate map keys are rejected: an object is never decoded from an
 * ambiguous input; with KS_YAML_KEEP_DUPLICATES (manifests, which field validation checks as
 * the API server does) the later value wins and the repetitions are kept aside for the check.
 *
 * ks_yaml_parse_each() hands documents to a sink as they end and frees them, and, while a
 * document has no anchor, hands over each element of its top-level `items` sequence (a
 * List's objects) as soon as it is complete, built in a second arena that is reset after
 * the call: memory then holds one object of a `kind: List` at a time, not the whole List
 * (a cluster dump is one document of hundreds of thousands of objects). An element holding
 * an anchor, and every later one, stays in its document instead, as an alias may refer to
 * it. Files are read through libyaml's own buffered reader, never whole.
 */
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum { KS_YAML_MAX_DEPTH = 256 };

/* Nodes a document's aliases may always produce, however small the document. */
#define KS_YAML_ALIAS_FLOOR (4ull * 1000 * 1000)

/* An open collection. The scratch vectors stay with the stack slot for the next collection
 * at that depth and are freed when the parse ends. */
struct frame {
    struct ks_yaml_node *node;
    struct ks_yaml_node **kids; /* scratch: for maps, key and value alternate */
    uint32_t n, cap;
    uint64_t weight;
    struct ks_yaml_node **dups; /* scratch (KS_YAML_KEEP_DUPLICATES): repeated key, replaced value */
    uint32_t ndup, capdup;
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
    /* ks_yaml_parse_each(): the sink, the current document's nodes, its items' nodes */
    const struct ks_yaml_sink *sink;
    struct ks_arena doc_arena, item_arena;
    bool items_open;    /* stack[1] is the root map's `items` sequence */
    uint32_t nstreamed; /* items of the current document handed to the sink */
    unsigned flags;     /* KS_YAML_KEEP_DUPLICATES */
    struct frame stack[KS_YAML_MAX_DEPTH];
    int depth;
    struct anchor *anchors;
    struct ks_yaml_node *root;
    uint64_t root_weight;
    struct ks_yaml_node **docs; /* scratch vector of documents */
    uint32_t ndocs, capdocs;
    /* the current document: nodes in its text, nodes its aliases produce (saturating), and
     * the line of the alias that took the latter past alias_floor */
    uint64_t alias_floor;
    uint64_t text_nodes, alias_nodes;
    int alias_line;
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static int fail(struct builder *b, int line, const char *fmt, const char *arg)
{
    return ks_error_set(b->err, b->s->file, line, NULL, fmt, arg);
}

/* Where a node made now lives: the stream, or (parse_each) the document or the item arena. */
static struct ks_arena *arena(struct builder *b)
{
    if (!b->sink)
        return &b->s->arena;
    return b->items_open && b->depth >= 2 ? &b->item_arena : &b->doc_arena;
}

static bool is_scalar(const struct ks_yaml_node *n, const char *text)
{
    return n->kind == KS_YAML_SCALAR && n->len == strlen(text) && memcmp(n->str, text, n->len) == 0;
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

/* The value @value of the map key that ends @f's kids repeats the key kids[@i]: the later value
 * wins, as the API server decodes it; the repeated key and the value it replaces go aside. */
static int keep_duplicate(struct frame *f, uint32_t i, struct ks_yaml_node *value)
{
    if (f->ndup + 2 > f->capdup) {
        uint32_t cap = f->capdup ? f->capdup * 2 : 4;
        struct ks_yaml_node **d = realloc(f->dups, cap * sizeof(*d));
        if (!d)
            return -ENOMEM;
        f->dups = d;
        f->capdup = cap;
    }
    f->dups[f->ndup++] = f->kids[--f->n];
    f->dups[f->ndup++] = f->kids[i + 1];
    f->kids[i + 1] = value;
    return 0;
}

/*
 * A map key as the JSON key it becomes (yaml_json.c): an unquoted integer or boolean key
 * gets a copy spelled in decimal or as true/false (a key may be an anchored node used
 * elsewhere as a value); other keys stay as they are. NULL when out of memory.
 */
static struct ks_yaml_node *json_key(struct builder *b, struct ks_yaml_node *key)
{
    char buf[24];
    const char *text = ks_yaml_json_key(key, buf, sizeof(buf));
    if (text == key->str)
        return key;
    struct ks_yaml_node *k = ks_arena_alloc(arena(b), sizeof(*k));
    if (!k)
        return NULL;
    *k = *key;
    k->len = strlen(text);
    k->plain = 0;
    if (!(k->str = ks_arena_strndup(arena(b), text, k->len)))
        return NULL;
    return k;
}

/* Attach a finished node (with its expanded weight) to the open collection or the document. */
static int attach(struct builder *b, struct ks_yaml_node *node, uint64_t weight, const char *anchor)
{
    if (anchor) {
        struct anchor *a = ks_arena_alloc(arena(b), sizeof(*a));
        if (!a || !(a->name = ks_arena_strdup(arena(b), anchor)))
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
    if (f->node->kind == KS_YAML_MAP && f->n % 2 == 0 && node->kind == KS_YAML_SCALAR && node->plain &&
        !(node = json_key(b, node)))
        return -ENOMEM;
    if (f->node->kind == KS_YAML_MAP && f->n % 2 == 1) {
        /* node is a value: its key is the previous kid; reject a repeated key */
        struct ks_yaml_node *key = f->kids[f->n - 1];
        for (uint32_t i = 0; i + 1 < f->n; i += 2) {
            if (!same_scalar(f->kids[i], key))
                continue;
            /* a second top-level `items` cannot replace items already handed over */
            if (!(b->flags & KS_YAML_KEEP_DUPLICATES) || (b->depth == 1 && b->nstreamed))
                return fail(b, key->line, "duplicate key \"%s\" in map", key->str);
            f->weight = add_sat(f->weight, weight);
            return keep_duplicate(f, i, node);
        }
    }
    f->weight = add_sat(f->weight, weight);
    if (b->items_open && b->depth == 2 && !b->anchors) {
        /* an item of the root's `items`, and no anchor yet: hand it over, reuse its memory */
        int rc = b->sink->item(b->sink->ctx, node, b->nstreamed);
        ks_arena_reset(&b->item_arena);
        b->nstreamed++;
        return rc;
    }
    return push_kid(f, node);
}

static struct ks_yaml_node *new_node(struct builder *b, enum ks_yaml_kind kind, const yaml_mark_t *mark)
{
    struct ks_yaml_node *n = ks_arena_alloc(arena(b), sizeof(*n));
    if (n) {
        n->kind = kind;
        n->line = (int)mark->line + 1;
        b->text_nodes++;
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
    if (b->sink && b->depth == 1 && kind == KS_YAML_SEQ) {
        const struct frame *root = &b->stack[0];
        b->items_open = root->node->kind == KS_YAML_MAP && root->n % 2 == 1 &&
                        is_scalar(root->kids[root->n - 1], "items");
        /* a second top-level `items` cannot replace items already handed over */
        if (b->items_open && b->nstreamed)
            return fail(b, root->kids[root->n - 1]->line, "duplicate key \"%s\" in map", "items");
    }
    struct frame *f = &b->stack[b->depth++];
    f->node = n;
    f->n = f->ndup = 0;
    f->weight = 1;
    return 0;
}

static int close_collection(struct builder *b, const char *anchor)
{
    struct frame f = b->stack[--b->depth];
    struct ks_yaml_node *n = f.node;

    if (b->depth == 1)
        b->items_open = false; /* the sequence closing, if it was `items`, lives in doc_arena */
    if (n->kind == KS_YAML_MAP) {
        n->n = f.n / 2;
        n->ndup = f.ndup / 2;
        n->pairs = ks_arena_calloc(arena(b), n->n + n->ndup ? n->n + n->ndup : 1, sizeof(*n->pairs));
        if (!n->pairs)
            return -ENOMEM;
        for (uint32_t i = 0; i < n->n; i++)
            n->pairs[i] = (struct ks_yaml_pair){f.kids[2 * i], f.kids[2 * i + 1]};
        for (uint32_t i = 0; i < n->ndup; i++)
            n->pairs[n->n + i] = (struct ks_yaml_pair){f.dups[2 * i], f.dups[2 * i + 1]};
    } else {
        n->n = f.n;
        n->items = ks_arena_calloc(arena(b), n->n ? n->n : 1, sizeof(*n->items));
        if (!n->items)
            return -ENOMEM;
        if (f.n)
            memcpy(n->items, f.kids, f.n * sizeof(*n->items));
    }
    return attach(b, n, f.weight, anchor);
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
    struct ks_yaml_node *n = new_node(b, KS_YAML_SCALAR, &ev->start_mark);
    if (!n)
        return -ENOMEM;
    n->len = ev->data.scalar.length;
    n->str = ks_arena_strndup(arena(b), (const char *)ev->data.scalar.value, n->len);
    if (!n->str)
        return -ENOMEM;
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    return attach(b, n, 1, (const char *)ev->data.scalar.anchor);
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    for (struct anchor *a = b->anchors; a; a = a->next) {
        if (strcmp(a->name, name) == 0) {
            b->alias_nodes = add_sat(b->alias_nodes, a->weight);
            if (b->alias_nodes > b->alias_floor && !b->alias_line)
                b->alias_line = (int)ev->start_mark.line + 1;
            return attach(b, a->node, a->weight, NULL);
        }
    }
    return fail(b, (int)ev->start_mark.line + 1, "unknown alias \"%s\"", name);
}

static int end_document(struct builder *b)
{
    if (b->alias_nodes > b->alias_floor && b->alias_nodes > b->text_nodes)
        return fail(b, b->alias_line, "%s", "document too large once aliases are expanded");
    b->text_nodes = b->alias_nodes = 0;
    b->alias_line = 0;
    if (b->sink) {
        int rc = b->sink->doc(b->sink->ctx, b->root, b->nstreamed);
        b->root = NULL;
        b->anchors = NULL;
        b->nstreamed = 0;
        ks_arena_reset(&b->doc_arena);
        ks_arena_reset(&b->item_arena);
        return rc;
    }
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

/* The text @buf/@len, or the open file @in when not NULL, into *@out (a tree of every
 * document) or, with @sink, into @sink's callbacks (@out unused). */
static int parse(const char *file, const char *buf, size_t len, FILE *in, uint64_t alias_floor,
                 unsigned flags, const struct ks_yaml_sink *sink, struct ks_yaml_stream **out,
                 struct ks_error *err)
{
    struct ks_yaml_stream *s = calloc(1, sizeof(*s));
    yaml_parser_t parser;
    struct builder b = {.s = s, .err = err, .flags = flags, .alias_floor = alias_floor, .sink = sink};
    int rc = -ENOMEM;

    if (out)
        *out = NULL;
    if (!s)
        return -ENOMEM;
    s->file = ks_arena_strdup(&s->arena, file ? file : "");
    if (!s->file || !yaml_parser_initialize(&parser)) {
        ks_yaml_stream_destroy(s);
        return -ENOMEM;
    }
    if (in)
        yaml_parser_set_input_file(&parser, in);
    else
        yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);

    /* libyaml gives a collection's anchor on its start event: keep it until the end event */
    char *coll_anchor[KS_YAML_MAX_DEPTH] = {0};
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            int line = (int)(parser.problem_mark.line + 1);
            if (in && ferror(in))
                rc = ks_error_set(err, s->file, 0, NULL, "cannot read: %s", strerror(errno));
            else
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
    for (int i = 0; i < KS_YAML_MAX_DEPTH; i++) {
        free(b.stack[i].kids);
        free(b.stack[i].dups);
    }
    ks_arena_destroy(&b.doc_arena);
    ks_arena_destroy(&b.item_arena);

    if (rc == 0 && !sink) {
        s->ndocs = b.ndocs;
        s->docs = ks_arena_calloc(&s->arena, b.ndocs ? b.ndocs : 1, sizeof(*s->docs));
        if (!s->docs)
            rc = -ENOMEM;
        else if (b.ndocs)
            memcpy(s->docs, b.docs, b.ndocs * sizeof(*s->docs));
    }
    free(b.docs);
    if (rc < 0 || sink) {
        if (rc == -ENOMEM)
            ks_error_set(err, file, 0, NULL, "out of memory");
        ks_yaml_stream_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int ks_yaml_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                  struct ks_error *err)
{
    return parse(file, buf, len, NULL, KS_YAML_ALIAS_FLOOR, 0, NULL, out, err);
}

int ks_yaml_parse_flags(const char *file, const char *buf, size_t len, unsigned flags,
                        struct ks_yaml_stream **out, struct ks_error *err)
{
    return parse(file, buf, len, NULL, KS_YAML_ALIAS_FLOOR, flags, NULL, out, err);
}

int ks__yaml_parse_floor(const char *file, const char *buf, size_t len, uint64_t alias_floor,
                         struct ks_yaml_stream **out, struct ks_error *err)
{
    return parse(file, buf, len, NULL, alias_floor, 0, NULL, out, err);
}

int ks_yaml_parse_each(const char *file, const char *buf, size_t len, unsigned flags,
                       const struct ks_yaml_sink *sink, struct ks_error *err)
{
    return parse(file, buf, len, NULL, KS_YAML_ALIAS_FLOOR, flags, sink, NULL, err);
}

const char *ks_yaml_file_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "STDIN" : path;
}

static void close_input(FILE *f)
{
    if (f != stdin)
        fclose(f);
}

int ks_yaml_parse_file(const char *path, struct ks_yaml_stream **out, struct ks_error *err)
{
    return ks_yaml_parse_file_flags(path, 0, out, err);
}

/* @path ("-": standard input) through libyaml's reader into parse(). */
static int parse_file(const char *path, unsigned flags, const struct ks_yaml_sink *sink,
                      struct ks_yaml_stream **out, struct ks_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");

    if (out)
        *out = NULL;
    path = ks_yaml_file_name(path);
    if (!f)
        return ks_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
    int rc = parse(path, NULL, 0, f, KS_YAML_ALIAS_FLOOR, flags, sink, out, err);
    close_input(f);
    return rc;
}

int ks_yaml_parse_file_flags(const char *path, unsigned flags, struct ks_yaml_stream **out,
                             struct ks_error *err)
{
    return parse_file(path, flags, NULL, out, err);
}

int ks_yaml_parse_file_each(const char *path, unsigned flags, const struct ks_yaml_sink *sink,
                            struct ks_error *err)
{
    return parse_file(path, flags, sink, NULL, err);
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
