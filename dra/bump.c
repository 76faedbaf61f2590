/*
 * bump.c - the structured allocator's bump allocation (struct dra_bump) and growable id
 * arrays.
 *
 * Invariant: head->data[0..used) is handed out; every other chunk of the chain is full.
 * `since` counts the bytes handed out since the last reset; a reset that finds more than
 * one chunk replaces the chain with a single chunk of 1.5 times that, so a scratch serving
 * calls of a steady size mallocs nothing after its first calls. Single-threaded.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_internal.h"

struct dra_chunk {
    struct dra_chunk *next;
    size_t cap;
    _Alignas(16) unsigned char data[];
};

enum { DRA_CHUNK_MIN = 4096 };

static size_t align16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static struct dra_chunk *chunk_new(size_t cap)
{
    struct dra_chunk *c = malloc(sizeof(*c) + cap);
    if (c) {
        c->next = NULL;
        c->cap = cap;
    }
    return c;
}

void *ks__dra_bump_alloc(struct dra_bump *b, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = align16(n ? n : 1);
    if (!b->head || b->head->cap - b->used < n) {
        size_t cap = b->head ? b->head->cap * 2 : DRA_CHUNK_MIN;
        if (cap < n)
            cap = n;
        struct dra_chunk *c = chunk_new(cap);
        if (!c)
            return NULL;
        c->next = b->head;
        b->head = c;
        b->used = 0;
        b->nchunks++;
    }
    void *p = b->head->data + b->used;
    b->used += n;
    b->since += n;
    return p;
}

void *ks__dra_bump_zalloc(struct dra_bump *b, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / 2 / size)
        return NULL;
    void *p = ks__dra_bump_alloc(b, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

char *ks__dra_bump_strndup(struct dra_bump *b, const char *s, size_t len)
{
    char *p = ks__dra_bump_alloc(b, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *ks__dra_bump_printf(struct dra_bump *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = ks__dra_bump_alloc(b, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void ks__dra_bump_reset(struct dra_bump *b)
{
    if (b->nchunks > 1) {
        size_t want = b->since + b->since / 2;
        ks__dra_bump_free(b);
        b->head = chunk_new(want < DRA_CHUNK_MIN ? DRA_CHUNK_MIN : want);
        b->nchunks = b->head ? 1 : 0;
    }
    b->used = 0;
    b->since = 0;
}

void ks__dra_bump_free(struct dra_bump *b)
{
    struct dra_chunk *c = b->head;
    while (c) {
        struct dra_chunk *next = c->next;
        free(c);
        c = next;
    }
    memset(b, 0, sizeof(*b));
}

int ks__dra_u32v_push(struct dra_u32v *v, uint32_t x)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 8;
        uint32_t *nv = realloc(v->v, (size_t)cap * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}
