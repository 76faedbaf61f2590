/*
 * cel_regex.c - regular expressions with Go's regexp semantics (see cel_regex.h): the
 * compiler from the parse tree of cel_regex_parse.c to a Thompson-style program, and the
 * Pike VM that finds the leftmost-first match in linear time.
 *
 * Mirrors Go's regexp/syntax simplify.go (how counted repetition expands: x{2,5} is
 * xx(x(x(x)?)?)?) and compile.go (the program shape, x* compiled as (x+)? when x can match
 * empty, golang.org/issue/46123), and regexp/exec.go (the NFA simulation and its
 * leftmost-first thread priority). The program shape decides which of several matches wins,
 * so the compiler builds the graph of alternations Go builds; only the capture instructions
 * are left out, as nothing here reports groups and they do not change priority.
 *
 * Invariants: a class node's ranges are sorted, disjoint and non-adjacent once parsed;
 * instruction 0 is FAIL, so pc 0 doubles as "no instruction" in patch lists; a compiled
 * struct ks_re is never written after ks_re_compile() returns.
 *
 * The search keeps two thread queues, each a sparse set over the program (Briggs and
 * Torczon), and a thread is a pc with the position its match would start at. Adding a pc
 * follows ALT, NOP and satisfied EMPTY instructions depth-first, out before arg, which is
 * the priority order; a pc already in the queue is not added twice, so a step is O(program)
 * and a search O(program * text). The first thread to reach MATCH cuts off every thread of
 * lower priority; new start threads stop once a match is known.
 */
#include "cel_regex.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel_regex_impl.h"

/* ---- UTF-8 -------------------------------------------------------------------------------------- */

/* The first byte of @r's UTF-8 encoding. */
static uint8_t utf8_lead(uint32_t r)
{
    if (r < 0x80)
        return (uint8_t)r;
    if (r < 0x800)
        return (uint8_t)(0xC0 | r >> 6);
    if (r < 0x10000)
        return (uint8_t)(0xE0 | r >> 12);
    return (uint8_t)(0xF0 | r >> 18);
}

/* ---- the program ------------------------------------------------------------------------------------ */

enum inst_op {
    I_FAIL,
    I_MATCH,
    I_RUNE1,      /* arg: the rune */
    I_CLASS,      /* arg: index into re->cls */
    I_ANY,        /* any rune */
    I_ANY_NOT_NL, /* any rune but \n */
    I_EMPTY,      /* arg: EMPTY_* that must all hold here */
    I_ALT,        /* out first, then arg */
    I_NOP,
};

/* Empty-width conditions (Go's syntax.EmptyOp). */
enum {
    EMPTY_BEGIN_LINE = 1 << 0,
    EMPTY_END_LINE = 1 << 1,
    EMPTY_BEGIN_TEXT = 1 << 2,
    EMPTY_END_TEXT = 1 << 3,
    EMPTY_WORD_BOUNDARY = 1 << 4,
    EMPTY_NO_WORD_BOUNDARY = 1 << 5,
};

struct inst {
    uint32_t op;  /* enum inst_op */
    uint32_t out; /* the next pc */
    uint32_t arg;
};

/* A class instruction's set: a bitmap of its ASCII members and its ranges in re->ranges. */
struct re_class {
    uint64_t ascii[2];
    uint32_t off; /* first pair in ranges */
    uint32_t n;   /* pairs */
};

/* A compiled regex: the program, its class sets, and what a search may skip ahead on. */
struct ks_re {
    struct inst *inst;
    uint32_t ninst;
    uint32_t start;
    struct re_class *cls;
    uint32_t *ranges; /* [lo, hi] pairs of every class */
    bool anchored;    /* every match begins at the start of the text */
    int first_byte;   /* every match begins with this byte, or -1 */
};

/* A hard cap on instructions, above what the parser's size estimate lets through. */
#define MAX_PROG (2 * RE_MAX_SIZE + 16)

struct compiler {
    struct inst *inst;
    size_t ninst, capinst;
    struct re_class *cls;
    size_t ncls, capcls;
    uint32_t *ranges;
    size_t nranges, capranges; /* pairs */
    struct re_runes tmp;
    int err; /* -ENOMEM or -E2BIG */
};

/*
 * The dangling exits of a fragment, to be pointed at what follows it: each entry is
 * pc << 1 | 1 for an arg field or pc << 1 for an out field, and the entries are chained
 * through those very fields (head first, 0 after the tail; 0 is the empty list).
 */
struct plist {
    uint32_t head;
    uint32_t tail;
};

/* A program fragment: its entry pc (0: it never matches), its exits, whether it can match empty. */
struct frag {
    uint32_t i;
    struct plist out;
    bool nullable;
};

static uint32_t *patch_field(struct compiler *c, uint32_t l)
{
    struct inst *in = &c->inst[l >> 1];

    return (l & 1) ? &in->arg : &in->out;
}

static struct plist plist_one(uint32_t l)
{
    struct plist p = {l, l};
    return p;
}

static void patch(struct compiler *c, struct plist l, uint32_t val)
{
    for (uint32_t e = l.head; e;) {
        uint32_t *f = patch_field(c, e);
        e = *f;
        *f = val;
    }
}

static struct plist patch_append(struct compiler *c, struct plist l1, struct plist l2)
{
    if (!l1.head)
        return l2;
    if (!l2.head)
        return l1;
    *patch_field(c, l1.tail) = l2.head;
    l1.tail = l2.tail;
    return l1;
}

/* A new instruction of @op with nothing patched; its fragment is nullable until told otherwise. */
static struct frag inst_new(struct compiler *c, int op)
{
    struct frag f = {0, {0, 0}, true};

    if (c->err)
        return f;
    if (c->ninst >= MAX_PROG) {
        c->err = -E2BIG;
        return f;
    }
    if (c->ninst == c->capinst) {
        size_t ncap = c->capinst ? c->capinst * 2 : 64;
        struct inst *ni = realloc(c->inst, ncap * sizeof(*ni));
        if (!ni) {
            c->err = -ENOMEM;
            return f;
        }
        c->inst = ni;
        c->capinst = ncap;
    }
    memset(&c->inst[c->ninst], 0, sizeof(c->inst[0]));
    c->inst[c->ninst].op = (uint32_t)op;
    f.i = (uint32_t)c->ninst++;
    return f;
}

/* An instruction whose single exit is its out field. */
static struct frag inst_out(struct compiler *c, int op, uint32_t arg)
{
    struct frag f = inst_new(c, op);

    if (f.i) {
        c->inst[f.i].arg = arg;
        f.out = plist_one(f.i << 1);
    }
    return f;
}

static struct frag frag_fail(void)
{
    struct frag f = {0, {0, 0}, false};
    return f;
}

static struct frag frag_cat(struct compiler *c, struct frag f1, struct frag f2)
{
    struct frag f = {0, {0, 0}, false};

    if (f1.i == 0 || f2.i == 0)
        return f;
    patch(c, f1.out, f2.i);
    f.i = f1.i;
    f.out = f2.out;
    f.nullable = f1.nullable && f2.nullable;
    return f;
}

static struct frag frag_alt(struct compiler *c, struct frag f1, struct frag f2)
{
    struct frag f;

    if (f1.i == 0)
        return f2;
    if (f2.i == 0)
        return f1;
    f = inst_new(c, I_ALT);
    if (!f.i)
        return f;
    c->inst[f.i].out = f1.i;
    c->inst[f.i].arg = f2.i;
    f.out = patch_append(c, f1.out, f2.out);
    f.nullable = f1.nullable || f2.nullable;
    return f;
}

static struct frag frag_quest(struct compiler *c, struct frag f1, bool lazy)
{
    struct frag f = inst_new(c, I_ALT);

    if (!f.i)
        return f;
    if (lazy) {
        c->inst[f.i].arg = f1.i;
        f.out = plist_one(f.i << 1);
    } else {
        c->inst[f.i].out = f1.i;
        f.out = plist_one(f.i << 1 | 1);
    }
    f.out = patch_append(c, f.out, f1.out);
    return f;
}

/* The loop of a plus or star: an ALT that tries @f1 again (first, unless lazy) or leaves. */
static struct frag frag_loop(struct compiler *c, struct frag f1, bool lazy)
{
    struct frag f = inst_new(c, I_ALT);

    if (!f.i)
        return f;
    if (lazy) {
        c->inst[f.i].arg = f1.i;
        f.out = plist_one(f.i << 1);
    } else {
        c->inst[f.i].out = f1.i;
        f.out = plist_one(f.i << 1 | 1);
    }
    patch(c, f1.out, f.i);
    return f;
}

static struct frag frag_plus(struct compiler *c, struct frag f1, bool lazy)
{
    struct frag f = frag_loop(c, f1, lazy);

    f.i = f1.i;
    f.nullable = f1.nullable;
    return f;
}

static struct frag frag_star(struct compiler *c, struct frag f1, bool lazy)
{
    /* x* as (x+)? when x can match empty, so that an empty x does not outrank leaving. */
    if (f1.nullable)
        return frag_quest(c, frag_plus(c, f1, lazy), lazy);
    return frag_loop(c, f1, lazy);
}

static int cls_push_range(struct compiler *c, uint32_t lo, uint32_t hi)
{
    if (c->nranges == c->capranges) {
        size_t ncap = c->capranges ? c->capranges * 2 : 32;
        uint32_t *nr = realloc(c->ranges, ncap * 2 * sizeof(*nr));
        if (!nr)
            return -ENOMEM;
        c->ranges = nr;
        c->capranges = ncap;
    }
    c->ranges[2 * c->nranges] = lo;
    c->ranges[2 * c->nranges + 1] = hi;
    c->nranges++;
    return 0;
}

/*
 * An instruction matching one rune of the clean class @k, which belongs to @owner: the copies
 * a counted repetition makes of a node share one class.
 */
static struct frag compile_class(struct compiler *c, const struct re_runes *k, struct re_node *owner)
{
    struct re_class *rc;
    struct frag f;

    if (owner->cls) {
        f = inst_out(c, I_CLASS, owner->cls - 1);
    } else if (k->n == 1 && k->r[0] == 0 && k->r[1] == RE_MAX_RUNE)
        f = inst_out(c, I_ANY, 0);
    else if (k->n == 2 && k->r[0] == 0 && k->r[1] == '\n' - 1 && k->r[2] == '\n' + 1 &&
             k->r[3] == RE_MAX_RUNE)
        f = inst_out(c, I_ANY_NOT_NL, 0);
    else if (k->n == 1 && k->r[0] == k->r[1])
        f = inst_out(c, I_RUNE1, k->r[0]);
    else {
        if (c->err)
            return frag_fail();
        if (c->ncls == c->capcls) {
            size_t ncap = c->capcls ? c->capcls * 2 : 8;
            struct re_class *nc = realloc(c->cls, ncap * sizeof(*nc));
            if (!nc) {
                c->err = -ENOMEM;
                return frag_fail();
            }
            c->cls = nc;
            c->capcls = ncap;
        }
        rc = &c->cls[c->ncls];
        memset(rc, 0, sizeof(*rc));
        rc->off = (uint32_t)c->nranges;
        for (size_t i = 0; i < k->n; i++) {
            uint32_t lo = k->r[2 * i], hi = k->r[2 * i + 1];
            if (cls_push_range(c, lo, hi) < 0) {
                c->err = -ENOMEM;
                return frag_fail();
            }
            for (uint32_t r = lo; r <= hi && r < 128; r++)
                rc->ascii[r >> 6] |= 1ull << (r & 63);
        }
        rc->n = (uint32_t)k->n;
        f = inst_out(c, I_CLASS, (uint32_t)c->ncls);
        if (f.i)
            owner->cls = (uint32_t)++c->ncls;
    }
    f.nullable = false;
    return f;
}

static struct frag compile_literal(struct compiler *c, struct re_node *re)
{
    uint32_t r = re->rune;
    struct frag f;

    if ((re->flags & RE_F_FOLD_CASE) && ks__re_simple_fold(r) != r) {
        if (re->cls)
            return compile_class(c, NULL, re);
        c->tmp.n = 0;
        for (uint32_t f2 = r;;) {
            if (ks__re_runes_add(&c->tmp, f2, f2) < 0) {
                c->err = -ENOMEM;
                return frag_fail();
            }
            if ((f2 = ks__re_simple_fold(f2)) == r)
                break;
        }
        ks__re_runes_clean(&c->tmp);
        return compile_class(c, &c->tmp, re);
    }
    f = inst_out(c, I_RUNE1, r);
    f.nullable = false;
    return f;
}

static struct frag compile(struct compiler *c, struct re_node *re);

/* x{min,max} as Go's Simplify expands it: min copies, then (x(x(x)?)?)? up to max, or x+ when unbounded. */
static struct frag compile_repeat(struct compiler *c, struct re_node *re)
{
    bool lazy = re->flags & RE_F_NON_GREEDY;
    struct re_node *x = re->sub[0];
    struct frag f = {0, {0, 0}, false}, suffix;

    if (re->min == 0 && re->max == 0)
        return inst_out(c, I_NOP, 0);
    if (re->max == -1) {
        if (re->min == 0)
            return frag_star(c, compile(c, x), lazy);
        for (int i = 0; i < re->min - 1; i++)
            f = i == 0 ? compile(c, x) : frag_cat(c, f, compile(c, x));
        suffix = frag_plus(c, compile(c, x), lazy);
        return re->min == 1 ? suffix : frag_cat(c, f, suffix);
    }
    if (re->min == 1 && re->max == 1)
        return compile(c, x);
    for (int i = 0; i < re->min; i++)
        f = i == 0 ? compile(c, x) : frag_cat(c, f, compile(c, x));
    if (re->max > re->min) {
        suffix = frag_quest(c, compile(c, x), lazy);
        for (int i = re->min + 1; i < re->max; i++)
            suffix = frag_quest(c, frag_cat(c, compile(c, x), suffix), lazy);
        return re->min == 0 ? suffix : frag_cat(c, f, suffix);
    }
    return f;
}

static struct frag compile(struct compiler *c, struct re_node *re)
{
    struct frag f;

    if (c->err)
        return frag_fail();
    switch (re->op) {
    case RE_OP_NO_MATCH:
        return frag_fail();
    case RE_OP_EMPTY_MATCH:
        return inst_out(c, I_NOP, 0);
    case RE_OP_LITERAL:
        return compile_literal(c, re);
    case RE_OP_CHAR_CLASS:
        return compile_class(c, &re->c, re);
    case RE_OP_ANY_CHAR_NOT_NL:
        f = inst_out(c, I_ANY_NOT_NL, 0);
        f.nullable = false;
        return f;
    case RE_OP_ANY_CHAR:
        f = inst_out(c, I_ANY, 0);
        f.nullable = false;
        return f;
    case RE_OP_BEGIN_LINE:
        return inst_out(c, I_EMPTY, EMPTY_BEGIN_LINE);
    case RE_OP_END_LINE:
        return inst_out(c, I_EMPTY, EMPTY_END_LINE);
    case RE_OP_BEGIN_TEXT:
        return inst_out(c, I_EMPTY, EMPTY_BEGIN_TEXT);
    case RE_OP_END_TEXT:
        return inst_out(c, I_EMPTY, EMPTY_END_TEXT);
    case RE_OP_WORD_BOUNDARY:
        return inst_out(c, I_EMPTY, EMPTY_WORD_BOUNDARY);
    case RE_OP_NO_WORD_BOUNDARY:
        return inst_out(c, I_EMPTY, EMPTY_NO_WORD_BOUNDARY);
    case RE_OP_CAPTURE:
        return compile(c, re->sub[0]); /* groups are not reported: no capture instructions */
    case RE_OP_STAR:
        return frag_star(c, compile(c, re->sub[0]), re->flags & RE_F_NON_GREEDY);
    case RE_OP_PLUS:
        return frag_plus(c, compile(c, re->sub[0]), re->flags & RE_F_NON_GREEDY);
    case RE_OP_QUEST:
        return frag_quest(c, compile(c, re->sub[0]), re->flags & RE_F_NON_GREEDY);
    case RE_OP_REPEAT:
        return compile_repeat(c, re);
    case RE_OP_CONCAT:
        f = compile(c, re->sub[0]);
        for (size_t i = 1; i < re->nsub; i++)
            f = frag_cat(c, f, compile(c, re->sub[i]));
        return f;
    case RE_OP_ALTERNATE:
        f = frag_fail();
        for (size_t i = 0; i < re->nsub; i++)
            f = frag_alt(c, f, compile(c, re->sub[i]));
        return f;
    }
    return frag_fail();
}

/* ---- compiling ---------------------------------------------------------------------------------- */

static void put(char *err, size_t errlen, size_t *n, const char *s, size_t len)
{
    for (size_t i = 0; i < len && *n + 1 < errlen; i++)
        err[(*n)++] = s[i];
    if (errlen)
        err[*n < errlen ? *n : errlen - 1] = '\0';
}

/* "error parsing regexp: CODE: `EXPR`", as Go's syntax.Error prints. */
static void format_error(char *err, size_t errlen, const char *code, const char *expr, size_t elen)
{
    static const char prefix[] = "error parsing regexp: ";
    size_t n = 0;

    put(err, errlen, &n, prefix, sizeof(prefix) - 1);
    put(err, errlen, &n, code, strlen(code));
    put(err, errlen, &n, ": `", 3);
    put(err, errlen, &n, expr, elen);
    put(err, errlen, &n, "`", 1);
}

/* The empty-width conditions every match must meet before its first rune (Go's Prog.StartCond). */
static uint32_t start_cond(const struct ks_re *re)
{
    uint32_t flags = 0, pc = re->start;

    for (;;) {
        const struct inst *in = &re->inst[pc];
        if (in->op == I_EMPTY)
            flags |= in->arg;
        else if (in->op != I_NOP)
            break;
        pc = in->out;
    }
    return flags;
}

/* The byte every match starts with, or -1: the first rune is one fixed rune (not U+FFFD). */
static int first_byte(const struct ks_re *re)
{
    uint32_t pc = re->start;

    while (re->inst[pc].op == I_NOP || re->inst[pc].op == I_EMPTY)
        pc = re->inst[pc].out;
    if (re->inst[pc].op == I_RUNE1 && re->inst[pc].arg != RE_RUNE_ERROR)
        return utf8_lead(re->inst[pc].arg);
    return -1;
}

static int build(struct compiler *c, struct re_node *tree, struct ks_re *re)
{
    struct frag f, match;

    inst_new(c, I_FAIL); /* pc 0 */
    f = compile(c, tree);
    match = inst_new(c, I_MATCH);
    if (c->err)
        return c->err;
    patch(c, f.out, match.i);
    re->inst = c->inst;
    re->ninst = (uint32_t)c->ninst;
    re->start = f.i;
    re->cls = c->cls;
    re->ranges = c->ranges;
    c->inst = NULL;
    c->cls = NULL;
    c->ranges = NULL;
    re->anchored = re->start && (start_cond(re) & EMPTY_BEGIN_TEXT);
    re->first_byte = re->start ? first_byte(re) : -1;
    return 0;
}

int ks_re_compile(const char *pattern, size_t len, struct ks_re **out, char *err, size_t errlen)
{
    struct re_parse pr = {0};
    struct compiler c = {0};
    struct ks_re *re = NULL;
    int rc;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    if (!pattern)
        pattern = "", len = 0;
    rc = ks__re_parse(pattern, len, &pr);
    if (rc == 0) {
        re = calloc(1, sizeof(*re));
        rc = re ? build(&c, pr.root, re) : -ENOMEM;
        if (rc == -E2BIG) {
            pr.code = RE_ERR_LARGE;
            pr.epos = 0;
            pr.eend = len;
            rc = -EINVAL;
        }
    }
    if (rc == -EINVAL)
        format_error(err, errlen, pr.code, pattern + pr.epos, pr.eend - pr.epos);
    else if (rc == -ENOMEM)
        put(err, errlen, &(size_t){0}, "out of memory", 13);
    ks__re_parse_free(&pr);
    free(c.inst);
    free(c.cls);
    free(c.ranges);
    free(c.tmp.r);
    if (rc) {
        ks_re_destroy(re);
        return rc;
    }
    *out = re;
    return 0;
}

void ks_re_destroy(struct ks_re *re)
{
    if (!re)
        return;
    free(re->inst);
    free(re->cls);
    free(re->ranges);
    free(re);
}

/* ---- searching ------------------------------------------------------------------------------------ */

struct re_thread {
    uint32_t pc;
    size_t start; /* where the match this thread would make begins */
};

/* A sparse set of pcs (dense in insertion order, which is priority order). */
struct re_queue {
    uint32_t *sparse;
    struct re_thread *dense;
    uint32_t n;
};

struct ks_re_scratch {
    struct re_queue q[2];
    uint32_t *stack; /* pending ALT branches while adding */
    size_t cap;      /* instructions the arrays hold */
};

int ks_re_scratch_create(struct ks_re_scratch **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

static void scratch_free_arrays(struct ks_re_scratch *s)
{
    for (int i = 0; i < 2; i++) {
        free(s->q[i].sparse);
        free(s->q[i].dense);
    }
    free(s->stack);
}

void ks_re_scratch_destroy(struct ks_re_scratch *s)
{
    if (!s)
        return;
    scratch_free_arrays(s);
    free(s);
}

/* Make room for a program of @n instructions; the sparse arrays are zeroed once, never read unset. */
static int scratch_reserve(struct ks_re_scratch *s, size_t n)
{
    struct ks_re_scratch g = {0};

    if (s->cap >= n)
        return 0;
    for (int i = 0; i < 2; i++) {
        g.q[i].sparse = calloc(n, sizeof(uint32_t));
        g.q[i].dense = malloc(n * sizeof(struct re_thread));
    }
    g.stack = malloc((n + 1) * sizeof(uint32_t));
    if (!g.q[0].sparse || !g.q[0].dense || !g.q[1].sparse || !g.q[1].dense || !g.stack) {
        scratch_free_arrays(&g);
        return -ENOMEM;
    }
    scratch_free_arrays(s);
    *s = g;
    s->cap = n;
    return 0;
}

static inline bool is_word_byte(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/*
 * The empty-width conditions that hold at @pos (Go's EmptyOpContext). Only ASCII matters to
 * them, so the bytes around @pos suffice: a byte >= 0x80 belongs to a rune that is neither
 * a word character nor a newline.
 */
static inline uint32_t context(const uint8_t *b, size_t len, size_t pos)
{
    int r1 = pos == 0 ? -1 : b[pos - 1];
    int r2 = pos >= len ? -1 : b[pos];
    uint32_t op = EMPTY_NO_WORD_BOUNDARY;
    bool boundary = false;

    if (is_word_byte(r1))
        boundary = true;
    else if (r1 == '\n')
        op |= EMPTY_BEGIN_LINE;
    else if (r1 < 0)
        op |= EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE;
    if (is_word_byte(r2))
        boundary = !boundary;
    else if (r2 == '\n')
        op |= EMPTY_END_LINE;
    else if (r2 < 0)
        op |= EMPTY_END_TEXT | EMPTY_END_LINE;
    if (boundary)
        op ^= EMPTY_WORD_BOUNDARY | EMPTY_NO_WORD_BOUNDARY;
    return op;
}

/* The rune at @pos, -1 at the end (with *@w 0). */
static inline int32_t rune_at(const uint8_t *b, size_t len, size_t pos, size_t *w)
{
    if (pos >= len) {
        *w = 0;
        return -1;
    }
    if (b[pos] < RE_RUNE_SELF) {
        *w = 1;
        return b[pos];
    }
    return re_utf8_decode(b + pos, len - pos, w);
}

static inline bool class_has(const struct ks_re *re, uint32_t idx, int32_t r)
{
    const struct re_class *k = &re->cls[idx];
    const uint32_t *rg = re->ranges + 2 * (size_t)k->off;
    uint32_t lo = 0, hi = k->n, u = (uint32_t)r;

    if (r < 128)
        return (k->ascii[u >> 6] >> (u & 63)) & 1;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (u < rg[2 * m])
            hi = m;
        else if (u > rg[2 * m + 1])
            lo = m + 1;
        else
            return true;
    }
    return false;
}

/*
 * Add the thread (@pc0, @start) to @q, following ALT (out first), NOP and every EMPTY whose
 * conditions @ctx meets, depth-first; a pc already in @q stays where it is.
 */
static void add(const struct ks_re *re, struct re_queue *q, uint32_t pc0, size_t start, uint32_t ctx,
                uint32_t *stack)
{
    size_t sp = 0;

    stack[sp++] = pc0;
    while (sp) {
        uint32_t pc = stack[--sp];
        for (;;) {
            const struct inst *in;
            uint32_t j;

            if (pc == 0)
                break;
            j = q->sparse[pc];
            if (j < q->n && q->dense[j].pc == pc)
                break;
            q->sparse[pc] = q->n;
            q->dense[q->n].pc = pc;
            q->dense[q->n].start = start;
            q->n++;
            in = &re->inst[pc];
            if (in->op == I_ALT) {
                stack[sp++] = in->arg;
                pc = in->out;
            } else if (in->op == I_NOP || (in->op == I_EMPTY && (in->arg & ~ctx) == 0)) {
                pc = in->out;
            } else {
                break;
            }
        }
    }
}

bool ks_re_find(const struct ks_re *re, const char *s, size_t len, size_t from, size_t *start, size_t *end,
                struct ks_re_scratch *scratch)
{
    const uint8_t *b = (const uint8_t *)s;
    struct re_queue *run, *next, *swap;
    bool matched = false;
    size_t pos = from, npos, w, mstart = 0, mend = 0;
    int32_t r;

    if (!re || !scratch || from > len || re->start == 0 || (re->anchored && from != 0))
        return false;
    if (scratch_reserve(scratch, re->ninst) < 0)
        return false;
    run = &scratch->q[0];
    next = &scratch->q[1];
    run->n = next->n = 0;
    r = rune_at(b, len, pos, &w);
    for (;;) {
        if (run->n == 0) {
            if (matched || (re->anchored && pos != 0))
                break;
            if (re->first_byte >= 0 && (pos >= len || b[pos] != re->first_byte)) {
                /* No thread alive: skip to where the first rune can be. */
                const uint8_t *hit = pos < len ? memchr(b + pos, re->first_byte, len - pos) : NULL;
                if (!hit)
                    break;
                pos = (size_t)(hit - b);
                r = rune_at(b, len, pos, &w);
            }
        }
        if (!matched)
            add(re, run, re->start, pos, context(b, len, pos), scratch->stack);
        npos = pos + w;
        uint32_t ctx = context(b, len, npos);
        for (uint32_t i = 0; i < run->n; i++) {
            const struct re_thread *t = &run->dense[i];
            const struct inst *in = &re->inst[t->pc];
            bool ok;

            switch (in->op) {
            case I_MATCH:
                /* Every thread after this one has lower priority: drop them. */
                matched = true;
                mstart = t->start;
                mend = pos;
                goto cut;
            case I_RUNE1:
                ok = r == (int32_t)in->arg;
                break;
            case I_CLASS:
                ok = r >= 0 && class_has(re, in->arg, r);
                break;
            case I_ANY:
                ok = r >= 0;
                break;
            case I_ANY_NOT_NL:
                ok = r >= 0 && r != '\n';
                break;
            default:
                continue;
            }
            if (ok)
                add(re, next, in->out, t->start, ctx, scratch->stack);
        }
    cut:
        run->n = 0;
        if (w == 0)
            break;
        pos = npos;
        r = rune_at(b, len, pos, &w);
        swap = run;
        run = next;
        next = swap;
    }
    if (matched) {
        *start = mstart;
        *end = mend;
    }
    return matched;
}
