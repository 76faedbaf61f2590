/*
 * cel_util.c - the CEL module's plumbing: bump arenas, growable strings, UTF-8 helpers and
 * the issue list with cel-go's display format.
 *
 * Issues mirror cel-go common/errors.go and common/error.go: each is reported at a code point
 * offset, turned into a 1-based line and 0-based column with the source's line offsets
 * (common/source.go), sorted stably by position and printed as
 *   ERROR: <input>:LINE:COL+1: message
 *    | the source line
 *    | ......^
 * where the caret line has one '.' per code point before the column (U+FF0E and U+FF3E for
 * wide characters). At most 100 issues are kept; more add "N more errors were truncated".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

/* ---- arena ---------------------------------------------------------------------------------------- */

struct cel_chunk {
    struct cel_chunk *next;
    size_t cap;
    _Alignas(16) char data[];
};

#define CHUNK_MIN 4096

void *ks__cel_alloc(struct cel_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    while (a->cur) {
        if (a->cur->cap - a->used >= n) {
            void *p = a->cur->data + a->used;
            a->used += n;
            return p;
        }
        /* reuse the next chunk kept by a reset, when it is big enough */
        if (!a->cur->next)
            break;
        a->cur = a->cur->next;
        a->used = 0;
    }
    size_t cap = CHUNK_MIN;
    if (a->cur && a->cur->cap * 2 > cap)
        cap = a->cur->cap * 2;
    while (cap < n)
        cap *= 2;
    struct cel_chunk *c = malloc(sizeof(*c) + cap);
    if (!c)
        return NULL;
    c->next = NULL;
    c->cap = cap;
    if (a->cur)
        a->cur->next = c;
    else
        a->head = c;
    a->cur = c;
    a->used = n;
    return c->data;
}

void *ks__cel_zalloc(struct cel_arena *a, size_t n)
{
    void *p = ks__cel_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *ks__cel_strndup(struct cel_arena *a, const char *p, size_t len)
{
    char *s = ks__cel_alloc(a, len + 1);
    if (!s)
        return NULL;
    if (len)
        memcpy(s, p, len);
    s[len] = 0;
    return s;
}

void ks__cel_arena_reset(struct cel_arena *a)
{
    a->cur = a->head;
    a->used = 0;
}

void ks__cel_arena_free(struct cel_arena *a)
{
    struct cel_chunk *c = a->head;
    while (c) {
        struct cel_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = a->cur = NULL;
    a->used = 0;
}

/* ---- string builder ---------------------------------------------------------------------------------- */

static bool sb_grow(struct cel_sb *b, size_t more)
{
    if (b->oom)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void ks__cel_sb_putn(struct cel_sb *b, const char *s, size_t n)
{
    if (!sb_grow(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void ks__cel_sb_puts(struct cel_sb *b, const char *s)
{
    ks__cel_sb_putn(b, s, strlen(s));
}

void ks__cel_sb_printf(struct cel_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !sb_grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ks__cel_sb_free(struct cel_sb *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- UTF-8 ------------------------------------------------------------------------------------------- */

int32_t ks__cel_utf8_decode(const char *s, size_t n, size_t *len)
{
    const unsigned char *p = (const unsigned char *)s;
    *len = 1;
    if (n == 0)
        return -1;
    if (p[0] < 0x80)
        return p[0];
    uint32_t cp, min;
    size_t need;
    if ((p[0] & 0xe0) == 0xc0) {
        cp = p[0] & 0x1f;
        need = 2;
        min = 0x80;
    } else if ((p[0] & 0xf0) == 0xe0) {
        cp = p[0] & 0x0f;
        need = 3;
        min = 0x800;
    } else if ((p[0] & 0xf8) == 0xf0) {
        cp = p[0] & 0x07;
        need = 4;
        min = 0x10000;
    } else {
        return -1;
    }
    if (n < need)
        return -1;
    for (size_t i = 1; i < need; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return -1;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    *len = need;
    return (int32_t)cp;
}

size_t ks__cel_utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        cp = 0xfffd;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

size_t ks__cel_utf8_count(const char *p, size_t n)
{
    size_t count = 0, i = 0;
    while (i < n) {
        unsigned char ch = (unsigned char)p[i];
        if (ch < 0x80) {
            i++;
        } else {
            size_t l;
            ks__cel_utf8_decode(p + i, n - i, &l);
            i += l;
        }
        count++;
    }
    return count;
}

bool ks__cel_utf8_valid(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)p[i] < 0x80) {
            i++;
            continue;
        }
        size_t l;
        if (ks__cel_utf8_decode(p + i, n - i, &l) < 0)
            return false;
        i += l;
    }
    return true;
}

/* ---- issues ----------------------------------------------------------------------------------------------
 */

#define MAX_ISSUES 100

/* The 1-based line and 0-based column (code points) of a code point offset. */
static void locate(const struct cel_source *src, uint32_t off, int32_t *line, int32_t *col)
{
    if (off == UINT32_MAX) {
        *line = -1;
        *col = -1;
        return;
    }
    int32_t l = 1;
    for (uint32_t i = 0; i < src->nlines; i++) {
        if (src->line_starts[i] > off)
            break;
        l++;
    }
    *line = l;
    *col = (int32_t)off - (l == 1 ? 0 : (int32_t)src->line_starts[l - 2]);
}

void ks__cel_issue(struct cel_issues *is, const struct cel_source *src, uint32_t off, const char *fmt, ...)
{
    is->total++;
    if (is->total > MAX_ISSUES || is->oom)
        return;
    if (is->n == is->cap) {
        uint32_t cap = is->cap ? is->cap * 2 : 8;
        struct cel_issue *v = realloc(is->v, cap * sizeof(*v));
        if (!v) {
            is->oom = true;
            return;
        }
        is->v = v;
        is->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    if (!msg) {
        is->oom = true;
        return;
    }
    struct cel_issue *e = &is->v[is->n++];
    e->off = off;
    e->msg = msg;
    locate(src, off, &e->line, &e->col);
}

void ks__cel_issues_free(struct cel_issues *is)
{
    for (uint32_t i = 0; i < is->n; i++)
        free(is->v[i].msg);
    free(is->v);
    is->v = NULL;
    is->n = is->cap = is->total = 0;
}

/* The bytes of line @line (1-based) of the source, without its newline. */
static bool snippet(const struct cel_source *src, int32_t line, const char **p, size_t *n)
{
    if (line < 1 || src->len == 0)
        return false;
    /* walk the bytes: line starts are code point offsets, the text is UTF-8 */
    int32_t cur = 1;
    size_t i = 0;
    while (cur < line && i < src->len) {
        if (src->text[i] == '\n')
            cur++;
        i++;
    }
    if (cur != line)
        return false;
    size_t j = i;
    while (j < src->len && src->text[j] != '\n')
        j++;
    *p = src->text + i;
    *n = j - i;
    return true;
}

static bool issue_before(const struct cel_issue *a, const struct cel_issue *b)
{
    return a->line < b->line || (a->line == b->line && a->col < b->col);
}

char *ks__cel_issues_string(struct cel_issues *is, const struct cel_source *src)
{
    /* stable insertion sort by (line, column), as sort.SliceStable */
    for (uint32_t i = 1; i < is->n; i++) {
        struct cel_issue t = is->v[i];
        uint32_t j = i;
        while (j > 0 && issue_before(&t, &is->v[j - 1])) {
            is->v[j] = is->v[j - 1];
            j--;
        }
        is->v[j] = t;
    }
    struct cel_sb b = {0};
    for (uint32_t i = 0; i < is->n; i++) {
        const struct cel_issue *e = &is->v[i];
        if (i)
            ks__cel_sb_puts(&b, "\n");
        ks__cel_sb_printf(&b, "ERROR: <input>:%d:%d: %s", e->line, e->col + 1, e->msg);
        const char *sp;
        size_t sn;
        if (snippet(src, e->line, &sp, &sn) && sn <= 16384) {
            ks__cel_sb_puts(&b, "\n | ");
            for (size_t k = 0; k < sn; k++)
                ks__cel_sb_putn(&b, sp[k] == '\t' ? " " : sp + k, 1);
            ks__cel_sb_puts(&b, "\n | ");
            size_t k = 0;
            for (int32_t c = 0; c < e->col && k < sn; c++) {
                size_t l;
                ks__cel_utf8_decode(sp + k, sn - k, &l);
                k += l;
                ks__cel_sb_puts(&b, l > 1 ? "\xef\xbc\x8e" : ".");
            }
            size_t l = 1;
            if (k < sn)
                ks__cel_utf8_decode(sp + k, sn - k, &l);
            ks__cel_sb_puts(&b, l > 1 ? "\xef\xbc\xbe" : "^");
        }
    }
    if (is->total > MAX_ISSUES)
        ks__cel_sb_printf(&b, "\n%u more errors were truncated", is->total - MAX_ISSUES);
    if (b.oom || !b.p) {
        ks__cel_sb_free(&b);
        return NULL;
    }
    return b.p;
}
