/*
 * json_tree.c - JSON text to struct ks_yaml_node trees through yajl's event parser.
 *
 * yajl calls back once per token (map start, key, string, number, ...) and this file
 * builds the same tree api/yaml_tree.c builds from libyaml events, straight into the
 * stream's arena: there is no intermediate DOM. Children of the open collections are
 * gathered on one shared scratch stack (frame i owns kids[frame.start..]); closing a
 * collection copies its children into the arena and pops them, so parsing allocates
 * outside the arena only when the scratch stack grows.
 *
 * Line numbers: yajl reports no positions, so the text is fed one line at a time and
 * every node gets the line being fed. JSON tokens cannot contain a raw newline, so no
 * token spans two feeds; compact API JSON is one feed.
 *
 * Strings arrive unescaped (yajl turns \uXXXX and surrogate pairs into UTF-8 and checks
 * that the text is UTF-8; a lone surrogate becomes '?'). Numbers keep their literal text
 * (yajl's number callback), and true/false/null are plain scalars with that text, so
 * ks_yaml_is_null() and the decoders' integer and boolean parsing see what a YAML parser
 * would have produced. Duplicate keys are rejected, as in api/yaml_tree.c.
 */
#include "ksched/internal/json_tree.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

enum { KS_JSON_MAX_DEPTH = 512 };

struct frame {
    struct ks_yaml_node *node;
    uint32_t start; /* first child on the scratch stack */
};

struct builder {
    struct ks_yaml_stream *s;
    struct ks_error *err;
    int line;
    int failed; /* the builder set err (or ran out of memory) and cancelled the parse */
    int nomem;
    struct frame stack[KS_JSON_MAX_DEPTH];
    int depth;
    struct ks_yaml_node **kids; /* scratch: open collections' children (maps: key, value, ...) */
    uint32_t nkids, capkids;
    struct ks_yaml_node *root;
};

static int nomem(struct builder *b)
{
    b->failed = b->nomem = 1;
    return 0;
}

static int push_kid(struct builder *b, struct ks_yaml_node *n)
{
    if (b->nkids == b->capkids) {
        uint32_t cap = b->capkids ? b->capkids * 2 : 256;
        struct ks_yaml_node **k = realloc(b->kids, cap * sizeof(*k));
        if (!k)
            return -ENOMEM;
        b->kids = k;
        b->capkids = cap;
    }
    b->kids[b->nkids++] = n;
    return 0;
}

static int dup_key(const struct builder *b, const struct frame *f, const struct ks_yaml_node *key)
{
    for (uint32_t i = f->start; i < b->nkids; i += 2) {
        const struct ks_yaml_node *k = b->kids[i];
        if (k->len == key->len && memcmp(k->str, key->str, k->len) == 0)
            return 1;
    }
    return 0;
}

/* Attach a finished node to the open collection, or make it the root. 1 to go on, 0 to cancel. */
static int attach(struct builder *b, struct ks_yaml_node *n)
{
    if (b->depth == 0) {
        b->root = n;
        return 1;
    }
    return push_kid(b, n) == 0 ? 1 : nomem(b);
}

/* A scalar node and its text in one arena allocation (the text right after the node). */
static struct ks_yaml_node *scalar(struct builder *b, const char *s, size_t len, int plain)
{
    if (len > SIZE_MAX - sizeof(struct ks_yaml_node) - 1)
        return NULL;
    struct ks_yaml_node *n = ks_arena_alloc(&b->s->arena, sizeof(*n) + len + 1);
    if (!n)
        return NULL;
    char *text = (char *)(n + 1);
    memcpy(text, s, len);
    text[len] = '\0';
    n->str = text;
    n->kind = KS_YAML_SCALAR;
    n->line = b->line;
    n->plain = plain;
    n->len = len;
    return n;
}

static int add_scalar(void *ctx, const char *s, size_t len, int plain)
{
    struct builder *b = ctx;
    struct ks_yaml_node *n = scalar(b, s, len, plain);
    return n ? attach(b, n) : nomem(b);
}

static int on_null(void *ctx)
{
    return add_scalar(ctx, "null", 4, 1);
}

static int on_boolean(void *ctx, int v)
{
    return v ? add_scalar(ctx, "true", 4, 1) : add_scalar(ctx, "false", 5, 1);
}

static int on_number(void *ctx, const char *s, size_t len)
{
    return add_scalar(ctx, s, len, 1);
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    return add_scalar(ctx, (const char *)s, len, 0);
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
    struct builder *b = ctx;
    struct ks_yaml_node *k = scalar(b, (const char *)s, len, 0);
    if (!k)
        return nomem(b);
    if (dup_key(b, &b->stack[b->depth - 1], k)) {
        b->failed = 1;
        ks_error_set(b->err, b->s->file, b->line, NULL, "duplicate key \"%s\" in map", k->str);
        return 0;
    }
    return push_kid(b, k) == 0 ? 1 : nomem(b);
}

static int open_collection(void *ctx, enum ks_yaml_kind kind)
{
    struct builder *b = ctx;
    if (b->depth == KS_JSON_MAX_DEPTH) {
        b->failed = 1;
        ks_error_set(b->err, b->s->file, b->line, NULL, "nesting deeper than %d", KS_JSON_MAX_DEPTH);
        return 0;
    }
    struct ks_yaml_node *n = ks_arena_alloc(&b->s->arena, sizeof(*n));
    if (!n)
        return nomem(b);
    n->kind = kind;
    n->line = b->line;
    b->stack[b->depth++] = (struct frame){.node = n, .start = b->nkids};
    return 1;
}

static int close_collection(void *ctx)
{
    struct builder *b = ctx;
    struct frame f = b->stack[--b->depth];
    struct ks_yaml_node *n = f.node;
    uint32_t nk = b->nkids - f.start;

    if (n->kind == KS_YAML_MAP) {
        n->n = nk / 2;
        n->pairs = ks_arena_calloc(&b->s->arena, n->n ? n->n : 1, sizeof(*n->pairs));
        if (!n->pairs)
            return nomem(b);
        /* struct ks_yaml_pair is two node pointers: the scratch key/value order is its layout */
        _Static_assert(sizeof(struct ks_yaml_pair) == 2 * sizeof(struct ks_yaml_node *), "pair layout");
        if (nk)
            memcpy(n->pairs, b->kids + f.start, nk * sizeof(*b->kids));
    } else {
        n->n = nk;
        n->items = ks_arena_calloc(&b->s->arena, nk ? nk : 1, sizeof(*n->items));
        if (!n->items)
            return nomem(b);
        if (nk)
            memcpy(n->items, b->kids + f.start, nk * sizeof(*b->kids));
    }
    b->nkids = f.start;
    return attach(b, n);
}

static int on_start_map(void *ctx)
{
    return open_collection(ctx, KS_YAML_MAP);
}

static int on_start_array(void *ctx)
{
    return open_collection(ctx, KS_YAML_SEQ);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = close_collection,
    .yajl_start_array = on_start_array,
    .yajl_end_array = close_collection,
};

/* yajl's message for the error, first line only, "invalid JSON: ..." into err. */
static int syntax_error(struct builder *b, yajl_handle h, const char *chunk, size_t len)
{
    unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)chunk, len);
    const char *m = msg ? (const char *)msg : "syntax error";
    size_t mlen = strcspn(m, "\n");
    while (mlen > 0 && (m[mlen - 1] == ' ' || m[mlen - 1] == '.'))
        mlen--;
    ks_error_set(b->err, b->s->file, b->line, NULL, "invalid JSON: %.*s", (int)mlen, m);
    if (msg)
        yajl_free_error(h, msg);
    return -EINVAL;
}

int ks_json_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                  struct ks_error *err)
{
    struct ks_yaml_stream *s = calloc(1, sizeof(*s));
    struct builder *b = NULL;
    yajl_handle h = NULL;
    int rc = -ENOMEM;

    *out = NULL;
    if (!s)
        goto err_nomem;
    if (!(s->file = ks_arena_strdup(&s->arena, file ? file : "")))
        goto err_stream;
    if (!(b = calloc(1, sizeof(*b))))
        goto err_stream;
    *b = (struct builder){.s = s, .err = err, .line = 1};
    if (!(h = yajl_alloc(&callbacks, NULL, b)))
        goto err_builder;

    const char *p = buf, *end = buf + len;
    yajl_status st = yajl_status_ok;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        st = yajl_parse(h, (const unsigned char *)p, (size_t)(stop - p));
        if (st != yajl_status_ok)
            break;
        p = stop;
        if (nl)
            b->line++;
    }
    if (st == yajl_status_ok) {
        if (b->line > 1 && len > 0 && buf[len - 1] == '\n')
            b->line--; /* a truncation is reported on the last line of text */
        st = yajl_complete_parse(h);
        if (st == yajl_status_ok && !b->root) {
            ks_error_set(err, s->file, b->line, NULL, "invalid JSON: no value");
            rc = -EINVAL;
            goto err_yajl;
        }
    }
    if (st != yajl_status_ok) {
        if (b->nomem)
            rc = -ENOMEM;
        else if (b->failed)
            rc = -EINVAL;
        else
            rc = syntax_error(b, h, p, (size_t)(end - p));
        goto err_yajl;
    }
    if (!(s->docs = ks_arena_alloc(&s->arena, sizeof(*s->docs))))
        goto err_yajl;
    s->docs[0] = b->root;
    s->ndocs = 1;
    yajl_free(h);
    free(b->kids);
    free(b);
    *out = s;
    return 0;

err_yajl:
    yajl_free(h);
err_builder:
    free(b->kids);
    free(b);
err_stream:
    ks_yaml_stream_destroy(s);
err_nomem:
    if (rc == -ENOMEM)
        ks_error_set(err, file, 0, NULL, "out of memory");
    return rc;
}
