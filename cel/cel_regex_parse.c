/*
 * cel_regex_parse.c - the parser of the regex engine: pattern text to parse tree, accepting
 * and rejecting exactly what Go's regexp/syntax.Parse does with the Perl flags (what
 * regexp.Compile uses), with the same error codes quoting the same part of the pattern.
 *
 * Mirrors Go's regexp/syntax parse.go: an operator stack that literals, classes and groups
 * are pushed on, `|` and `(` as markers in it, concatenation and alternation collapsing the
 * entries above the topmost marker, and repetition applying to the top entry (so `(?i)*`
 * repeats what precedes the flag group, and a repetition right after another is an error).
 * The limits are Go's: counts to 1000 (nested counts multiplied), a tree 1000 deep, an
 * estimated program of 128 MiB, 128 MiB of class runes. Left out are Go's tree rewrites that
 * do not change what matches: literal strings, alternation factoring and class merging.
 * (Until golang.org/issue/59007 was fixed, Go's factoring took a case-folded literal and
 * the same plain literal for one: `(?i:k)x|K` matched "k". There is no such step here.)
 *
 * Classes are built as sorted, merged rune ranges: (?i) closes them under simple case
 * folding (cel_regex_unicode.c), negation complements them over [0, 0x10FFFF].
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cel_regex_impl.h"

#define NONE SIZE_MAX /* "no position" for offsets into the pattern */

/* Go's limits (regexp/syntax parse.go): counts, nesting, estimated program size, class runes. */
#define MAX_REPEAT 1000
#define MAX_HEIGHT 1000
#define MAX_RUNES  ((128 << 20) / 4)

/* Go's error codes (regexp/syntax ErrorCode), the text between "error parsing regexp: " and the quote. */
#define ERR_INVALID_CHAR_RANGE  "invalid character class range"
#define ERR_INVALID_ESCAPE      "invalid escape sequence"
#define ERR_INVALID_NAMED_CAP   "invalid named capture"
#define ERR_INVALID_PERL_OP     "invalid or unsupported Perl syntax"
#define ERR_INVALID_REPEAT_OP   "invalid nested repetition operator"
#define ERR_INVALID_REPEAT_SIZE "invalid repeat count"
#define ERR_INVALID_UTF8        "invalid UTF-8"
#define ERR_MISSING_BRACKET     "missing closing ]"
#define ERR_MISSING_PAREN       "missing closing )"
#define ERR_MISSING_REPEAT_ARG  "missing argument to repetition operator"
#define ERR_TRAILING_BACKSLASH  "trailing backslash at end of expression"
#define ERR_UNEXPECTED_PAREN    "unexpected )"
#define ERR_NESTING_DEPTH       "expression nests too deeply"

/* ---- rune sets ------------------------------------------------------------------------------- */

int ks__re_runes_add(struct re_runes *c, uint32_t lo, uint32_t hi)
{
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 8;
        uint32_t *nr = realloc(c->r, ncap * 2 * sizeof(*nr));
        if (!nr)
            return -ENOMEM;
        c->r = nr;
        c->cap = ncap;
    }
    c->r[2 * c->n] = lo;
    c->r[2 * c->n + 1] = hi;
    c->n++;
    return 0;
}

static int class_add_cb(void *ctx, uint32_t lo, uint32_t hi)
{
    return ks__re_runes_add(ctx, lo, hi);
}

static int range_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] > y[1] ? -1 : x[1] < y[1];
}

void ks__re_runes_clean(struct re_runes *c)
{
    size_t w = 0;

    if (c->n < 2)
        return;
    for (size_t i = 1; i < c->n; i++) {
        if (c->r[2 * i] < c->r[2 * i - 2]) { /* most sets come sorted: sort only the others */
            qsort(c->r, c->n, 2 * sizeof(uint32_t), range_cmp);
            break;
        }
    }
    for (size_t i = 1; i < c->n; i++) {
        uint32_t lo = c->r[2 * i], hi = c->r[2 * i + 1];
        if (lo <= c->r[2 * w + 1] + 1) {
            if (hi > c->r[2 * w + 1])
                c->r[2 * w + 1] = hi;
            continue;
        }
        w++;
        c->r[2 * w] = lo;
        c->r[2 * w + 1] = hi;
    }
    c->n = w + 1;
}

/* Append the ranges of the clean class @x to @c, complemented when @negate. */
static int class_append(struct re_runes *c, const struct re_runes *x, bool negate)
{
    uint32_t next = 0;

    for (size_t i = 0; i < x->n; i++) {
        uint32_t lo = x->r[2 * i], hi = x->r[2 * i + 1];
        if (!negate) {
            if (ks__re_runes_add(c, lo, hi) < 0)
                return -ENOMEM;
            continue;
        }
        if (next < lo && ks__re_runes_add(c, next, lo - 1) < 0)
            return -ENOMEM;
        next = hi + 1;
    }
    if (negate && next <= RE_MAX_RUNE && ks__re_runes_add(c, next, RE_MAX_RUNE) < 0)
        return -ENOMEM;
    return 0;
}

/* Complement the clean class @c in place (through @tmp). */
static int class_negate(struct re_runes *c, struct re_runes *tmp)
{
    struct re_runes swap;

    tmp->n = 0;
    if (class_append(tmp, c, true) < 0)
        return -ENOMEM;
    swap = *c;
    *c = *tmp;
    *tmp = swap;
    return 0;
}

/* Add [lo, hi] and every rune that simple case folding makes equivalent to one in it. */
static int class_add_folded(struct re_runes *c, uint32_t lo, uint32_t hi)
{
    size_t a = 0, b = ks__re_fold_count;

    if (ks__re_runes_add(c, lo, hi) < 0)
        return -ENOMEM;
    while (a < b) { /* the first folding rune >= lo */
        size_t m = a + (b - a) / 2;
        if (ks__re_fold_next[m][0] < lo)
            a = m + 1;
        else
            b = m;
    }
    for (; a < ks__re_fold_count && ks__re_fold_next[a][0] <= hi; a++) {
        uint32_t r = ks__re_fold_next[a][0];
        for (uint32_t f = ks__re_fold_next[a][1]; f != r; f = ks__re_simple_fold(f))
            if ((f < lo || f > hi) && ks__re_runes_add(c, f, f) < 0)
                return -ENOMEM;
    }
    return 0;
}

/* Replace the clean class @c by its closure under case folding, clean. */
static int class_fold(struct re_runes *c, struct re_runes *tmp)
{
    struct re_runes swap;

    tmp->n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (class_add_folded(tmp, c->r[2 * i], c->r[2 * i + 1]) < 0)
            return -ENOMEM;
    ks__re_runes_clean(tmp);
    swap = *c;
    *c = *tmp;
    *tmp = swap;
    return 0;
}

/* ---- the parser -------------------------------------------------------------------------------- */

struct parser {
    const char *s; /* the whole pattern */
    size_t len;
    uint8_t flags;
    struct re_node **stack;
    size_t nstack, capstack;
    struct re_node *all;
    int ncap;
    size_t nrunes;       /* runes held by literals and classes (Go's numRunes) */
    struct re_runes tmp; /* work space of the class builders */
    struct re_runes tmp2;
    /* the error: code, and the quoted text [epos, eend) of the pattern */
    const char *code;
    size_t epos, eend;
};

static int perr(struct parser *p, const char *code, size_t pos, size_t end)
{
    p->code = code;
    p->epos = pos;
    p->eend = end;
    return -EINVAL;
}

static struct re_node *new_node(struct parser *p, int op)
{
    struct re_node *n = calloc(1, sizeof(*n));

    if (!n)
        return NULL;
    n->op = (uint8_t)op;
    n->all = p->all;
    p->all = n;
    return n;
}

static int node_add_sub(struct re_node *n, struct re_node *sub)
{
    if (n->nsub == n->capsub) {
        size_t ncap = n->capsub ? n->capsub * 2 : 2;
        struct re_node **ns = realloc(n->sub, ncap * sizeof(*ns));
        if (!ns)
            return -ENOMEM;
        n->sub = ns;
        n->capsub = ncap;
    }
    n->sub[n->nsub++] = sub;
    return 0;
}

static void free_nodes(struct re_node *n)
{
    while (n) {
        struct re_node *next = n->all;
        free(n->c.r);
        free(n->sub);
        free(n);
        n = next;
    }
}

/* Height and estimated size of @n from its subtrees; the limits Go checks on every new node. */
static int check_limits(struct parser *p, struct re_node *n)
{
    int64_t size = 0, sub = n->nsub ? n->sub[0]->size : 0;
    int h = 1;

    for (size_t i = 0; i < n->nsub; i++)
        if (n->sub[i]->height + 1 > h)
            h = n->sub[i]->height + 1;
    n->height = h;
    switch (n->op) {
    case RE_OP_LITERAL:
        size = 1;
        break;
    case RE_OP_CAPTURE:
    case RE_OP_STAR:
        size = 2 + sub;
        break;
    case RE_OP_PLUS:
    case RE_OP_QUEST:
        size = 1 + sub;
        break;
    case RE_OP_CONCAT:
    case RE_OP_ALTERNATE:
        for (size_t i = 0; i < n->nsub; i++)
            size += n->sub[i]->size;
        if (n->op == RE_OP_ALTERNATE && n->nsub > 1)
            size += (int64_t)n->nsub - 1;
        break;
    case RE_OP_REPEAT:
        if (n->max == -1)
            size = n->min == 0 ? 2 + sub : 1 + (int64_t)n->min * sub;
        else
            size = (int64_t)n->max * sub + (n->max - n->min);
        break;
    }
    n->size = size < 1 ? 1 : size;
    if (p->nrunes > MAX_RUNES || n->size > RE_MAX_SIZE)
        return perr(p, RE_ERR_LARGE, 0, p->len);
    if (n->height > MAX_HEIGHT)
        return perr(p, ERR_NESTING_DEPTH, 0, p->len);
    return 0;
}

static int push(struct parser *p, struct re_node *n)
{
    if (n->op == RE_OP_CHAR_CLASS)
        p->nrunes += 2 * n->c.n;
    else if (n->op == RE_OP_LITERAL)
        p->nrunes++;
    if (p->nstack == p->capstack) {
        size_t ncap = p->capstack ? p->capstack * 2 : 16;
        struct re_node **ns = realloc(p->stack, ncap * sizeof(*ns));
        if (!ns)
            return -ENOMEM;
        p->stack = ns;
        p->capstack = ncap;
    }
    p->stack[p->nstack++] = n;
    return check_limits(p, n);
}

/* Push a new node of @op carrying the current flags. */
static struct re_node *push_op(struct parser *p, int op, int *rc)
{
    struct re_node *n = new_node(p, op);

    if (!n) {
        *rc = -ENOMEM;
        return NULL;
    }
    n->flags = p->flags;
    *rc = push(p, n);
    return *rc ? NULL : n;
}

static int push_literal(struct parser *p, uint32_t r)
{
    int rc;
    struct re_node *n = push_op(p, RE_OP_LITERAL, &rc);

    if (n)
        n->rune = r;
    return rc;
}

/* Decode the pattern rune at *@t into *@r, moving *@t past it; invalid UTF-8 is an error. */
static int next_rune(struct parser *p, size_t *t, uint32_t *r)
{
    size_t w;
    int32_t c = re_utf8_decode((const uint8_t *)p->s + *t, p->len - *t, &w);

    if (c == RE_RUNE_ERROR && w == 1)
        return perr(p, ERR_INVALID_UTF8, *t, p->len);
    *r = (uint32_t)c;
    *t += w;
    return 0;
}

/* Go's checkUTF8 on [t, end): the error quotes from the bad byte to @end. */
static int check_utf8(struct parser *p, size_t t, size_t end)
{
    while (t < end) {
        size_t w;
        int32_t c = re_utf8_decode((const uint8_t *)p->s + t, end - t, &w);
        if (c == RE_RUNE_ERROR && w == 1)
            return perr(p, ERR_INVALID_UTF8, t, end);
        t += w;
    }
    return 0;
}

/* Combine the nodes above the topmost marker into one node of @op (flattening nested @op nodes). */
static struct re_node *collapse(struct parser *p, struct re_node **subs, size_t n, int op, int *rc)
{
    struct re_node *re;

    *rc = 0;
    if (n == 1)
        return subs[0];
    re = new_node(p, op);
    if (!re) {
        *rc = -ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (subs[i]->op == op) {
            for (size_t j = 0; j < subs[i]->nsub; j++)
                if ((*rc = node_add_sub(re, subs[i]->sub[j])) < 0)
                    return NULL;
        } else if ((*rc = node_add_sub(re, subs[i])) < 0) {
            return NULL;
        }
    }
    return re;
}

static size_t above_marker(struct parser *p)
{
    size_t i = p->nstack;

    while (i > 0 && p->stack[i - 1]->op < RE_OP_PSEUDO)
        i--;
    return i;
}

/* Replace the nodes above the topmost | or ( by their concatenation. */
static int concat(struct parser *p)
{
    size_t i = above_marker(p);
    struct re_node *re;
    int rc;

    if (i == p->nstack) {
        push_op(p, RE_OP_EMPTY_MATCH, &rc);
        return rc;
    }
    re = collapse(p, p->stack + i, p->nstack - i, RE_OP_CONCAT, &rc);
    if (!re)
        return rc;
    p->nstack = i;
    return push(p, re);
}

/* Replace the nodes above the topmost ( by their alternation. */
static int alternate(struct parser *p)
{
    size_t i = above_marker(p);
    struct re_node *re;
    int rc;

    if (i == p->nstack) {
        push_op(p, RE_OP_NO_MATCH, &rc);
        return rc;
    }
    re = collapse(p, p->stack + i, p->nstack - i, RE_OP_ALTERNATE, &rc);
    if (!re)
        return rc;
    p->nstack = i;
    return push(p, re);
}

/* If a | sits under the top node, swap the two (what is under the | becomes an alternation). */
static bool swap_vertical_bar(struct parser *p)
{
    size_t n = p->nstack;

    if (n >= 2 && p->stack[n - 2]->op == RE_OP_VERTICAL_BAR) {
        struct re_node *t = p->stack[n - 1];
        p->stack[n - 1] = p->stack[n - 2];
        p->stack[n - 2] = t;
        return true;
    }
    return false;
}

static int parse_vertical_bar(struct parser *p)
{
    int rc = concat(p);

    if (rc)
        return rc;
    if (!swap_vertical_bar(p))
        push_op(p, RE_OP_VERTICAL_BAR, &rc);
    return rc;
}

static int parse_right_paren(struct parser *p)
{
    struct re_node *re1, *re2;
    int rc = concat(p);

    if (rc)
        return rc;
    if (swap_vertical_bar(p))
        p->nstack--;
    if ((rc = alternate(p)))
        return rc;
    if (p->nstack < 2)
        return perr(p, ERR_UNEXPECTED_PAREN, 0, p->len);
    re1 = p->stack[p->nstack - 1];
    re2 = p->stack[p->nstack - 2];
    p->nstack -= 2;
    if (re2->op != RE_OP_LEFT_PAREN)
        return perr(p, ERR_UNEXPECTED_PAREN, 0, p->len);
    p->flags = re2->flags; /* the flags in force at the ( */
    if (re2->cap == 0)
        return push(p, re1);
    re2->op = RE_OP_CAPTURE;
    if ((rc = node_add_sub(re2, re1)))
        return rc;
    return push(p, re2);
}

/* Whether the nested repetitions of @re repeat its innermost part at most @n times (Go's repeatIsValid). */
static bool repeat_is_valid(const struct re_node *re, int n)
{
    if (re->op == RE_OP_REPEAT) {
        int m = re->max;
        if (m == 0)
            return true;
        if (m < 0)
            m = re->min;
        if (m > n)
            return false;
        if (m > 0)
            n /= m;
    }
    for (size_t i = 0; i < re->nsub; i++)
        if (!repeat_is_valid(re->sub[i], n))
            return false;
    return true;
}

/*
 * Apply the repetition operator at [@before, *@after) to the top of the stack; a following
 * `?` makes it lazy and moves *@after past it. @last_repeat is where the previous token
 * began if it was a repetition too (Perl forbids stacking them).
 */
static int repeat(struct parser *p, int op, int min, int max, size_t before, size_t *after,
                  size_t last_repeat)
{
    uint8_t flags = p->flags;
    struct re_node *sub, *re;
    int rc;

    if (*after < p->len && p->s[*after] == '?') {
        (*after)++;
        flags ^= RE_F_NON_GREEDY;
    }
    if (last_repeat != NONE)
        return perr(p, ERR_INVALID_REPEAT_OP, last_repeat, *after);
    if (p->nstack == 0 || p->stack[p->nstack - 1]->op >= RE_OP_PSEUDO)
        return perr(p, ERR_MISSING_REPEAT_ARG, before, *after);
    sub = p->stack[p->nstack - 1];
    if (!(re = new_node(p, op)))
        return -ENOMEM;
    re->min = min;
    re->max = max;
    re->flags = flags;
    if ((rc = node_add_sub(re, sub)))
        return rc;
    p->stack[p->nstack - 1] = re;
    if ((rc = check_limits(p, re)))
        return rc;
    if (op == RE_OP_REPEAT && (min >= 2 || max >= 2) && !repeat_is_valid(re, MAX_REPEAT))
        return perr(p, ERR_INVALID_REPEAT_SIZE, before, *after);
    return 0;
}

/* A decimal without leading zeros at *@t; -1 in *@n when it is 10^8 or more. */
static bool parse_int(struct parser *p, size_t *t, int *n)
{
    size_t i = *t;

    if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
        return false;
    if (p->len - i >= 2 && p->s[i] == '0' && p->s[i + 1] >= '0' && p->s[i + 1] <= '9')
        return false;
    *n = 0;
    for (; i < p->len && p->s[i] >= '0' && p->s[i] <= '9'; i++) {
        if (*n >= 100000000) {
            *n = -1;
            while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
                i++;
            break;
        }
        *n = *n * 10 + (p->s[i] - '0');
    }
    *t = i;
    return true;
}

/* {n}, {n,} or {n,m} at @t (max -1 for no bound); false when it is not of that form (then { is literal). */
static bool parse_repeat(struct parser *p, size_t t, int *min, int *max, size_t *after)
{
    if (t >= p->len || p->s[t] != '{')
        return false;
    t++;
    if (!parse_int(p, &t, min) || t >= p->len)
        return false;
    if (p->s[t] != ',') {
        *max = *min;
    } else {
        t++;
        if (t >= p->len)
            return false;
        if (p->s[t] == '}')
            *max = -1;
        else if (!parse_int(p, &t, max))
            return false;
        else if (*max < 0)
            *min = -1;
    }
    if (t >= p->len || p->s[t] != '}')
        return false;
    *after = t + 1;
    return true;
}

static bool is_alnum(uint32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int unhex(uint32_t c)
{
    if (c >= '0' && c <= '9')
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

/* A named capture (?P<name> or (?<name>, or flags (?i-s) and (?i: groups, at *@t. */
static int parse_perl_flags(struct parser *p, size_t *tp)
{
    size_t s = *tp, t = s, rest = p->len - s;
    bool with_p = rest > 4 && p->s[s + 2] == 'P' && p->s[s + 3] == '<';
    bool with_name = rest > 3 && p->s[s + 2] == '<';
    unsigned flags = p->flags;
    int sign = 1, rc;
    bool saw_flag = false;
    uint32_t c;

    if (with_p || with_name) {
        const char *gt = memchr(p->s + s, '>', rest);
        size_t name = s + (with_p ? 4 : 3), end;
        struct re_node *re;

        if (!gt) {
            if ((rc = check_utf8(p, s, p->len)))
                return rc;
            return perr(p, ERR_INVALID_NAMED_CAP, s, p->len);
        }
        end = (size_t)(gt - p->s);
        if ((rc = check_utf8(p, name, end)))
            return rc;
        bool valid = end > name;
        for (size_t i = name; i < end; i++)
            if (p->s[i] != '_' && !is_alnum((uint8_t)p->s[i]))
                valid = false;
        if (!valid)
            return perr(p, ERR_INVALID_NAMED_CAP, s, end + 1);
        p->ncap++;
        if (!(re = push_op(p, RE_OP_LEFT_PAREN, &rc)))
            return rc;
        re->cap = p->ncap;
        *tp = end + 1;
        return 0;
    }

    t += 2;
    while (t < p->len) {
        if ((rc = next_rune(p, &t, &c)))
            return rc;
        switch (c) {
        case 'i':
            flags |= RE_F_FOLD_CASE;
            saw_flag = true;
            continue;
        case 'm':
            flags &= ~(unsigned)RE_F_ONE_LINE;
            saw_flag = true;
            continue;
        case 's':
            flags |= RE_F_DOT_NL;
            saw_flag = true;
            continue;
        case 'U':
            flags |= RE_F_NON_GREEDY;
            saw_flag = true;
            continue;
        case '-':
            if (sign < 0)
                break;
            /* Invert, so that setting a flag below clears it once inverted back. */
            sign = -1;
            flags = ~flags;
            saw_flag = false;
            continue;
        case ':':
        case ')':
            if (sign < 0) {
                if (!saw_flag)
                    break;
                flags = ~flags;
            }
            if (c == ':' && !push_op(p, RE_OP_LEFT_PAREN, &rc))
                return rc; /* the ( keeps the flags outside the group */
            p->flags = (uint8_t)(flags & RE_F_ALL);
            *tp = t;
            return 0;
        }
        break;
    }
    return perr(p, ERR_INVALID_PERL_OP, s, t);
}

/* A single-character escape at *@t (a backslash), moving *@t past it. */
static int parse_escape(struct parser *p, size_t *tp, uint32_t *out)
{
    size_t s = *tp, t = s + 1;
    uint32_t c, r = 0;
    int rc;

    if (t >= p->len)
        return perr(p, ERR_TRAILING_BACKSLASH, 0, 0);
    if ((rc = next_rune(p, &t, &c)))
        return rc;
    switch (c) {
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
        /* A lone non-zero digit would be a backreference, which is not supported. */
        if (t >= p->len || p->s[t] < '0' || p->s[t] > '7')
            break;
        /* fallthrough */
    case '0':
        r = c - '0';
        for (int i = 1; i < 3 && t < p->len && p->s[t] >= '0' && p->s[t] <= '7'; i++)
            r = r * 8 + (uint32_t)(p->s[t++] - '0');
        *out = r;
        *tp = t;
        return 0;
    case 'x': {
        int x, y, nhex = 0;
        if (t >= p->len)
            break;
        if ((rc = next_rune(p, &t, &c)))
            return rc;
        if (c == '{') {
            for (;;) {
                if (t >= p->len)
                    goto bad;
                if ((rc = next_rune(p, &t, &c)))
                    return rc;
                if (c == '}')
                    break;
                if ((x = unhex(c)) < 0)
                    goto bad;
                r = r * 16 + (uint32_t)x;
                if (r > RE_MAX_RUNE)
                    goto bad;
                nhex++;
            }
            if (nhex == 0)
                goto bad;
            *out = r;
            *tp = t;
            return 0;
        }
        x = unhex(c);
        if ((rc = next_rune(p, &t, &c)))
            return rc;
        y = unhex(c);
        if (x < 0 || y < 0)
            break;
        *out = (uint32_t)(x * 16 + y);
        *tp = t;
        return 0;
    }
    case 'a':
        *out = '\a';
        *tp = t;
        return 0;
    case 'f':
        *out = '\f';
        *tp = t;
        return 0;
    case 'n':
        *out = '\n';
        *tp = t;
        return 0;
    case 'r':
        *out = '\r';
        *tp = t;
        return 0;
    case 't':
        *out = '\t';
        *tp = t;
        return 0;
    case 'v':
        *out = '\v';
        *tp = t;
        return 0;
    default:
        /* Escaped ASCII punctuation is itself; letters and digits are reserved. */
        if (c < RE_RUNE_SELF && !is_alnum(c)) {
            *out = c;
            *tp = t;
            return 0;
        }
        break;
    }
bad:
    return perr(p, ERR_INVALID_ESCAPE, s, t);
}

/* The ASCII classes of Perl (\d \s \w) and POSIX ([:alpha:] ...), as [lo, hi] pairs. */
struct ascii_group {
    const char *name;
    uint8_t n;
    uint8_t r[8];
};

static const struct ascii_group perl_groups[] = {
    {"d", 1, {'0', '9'}},
    {"s", 3, {'\t', '\n', '\f', '\r', ' ', ' '}},
    {"w", 4, {'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}},
};

static const struct ascii_group posix_groups[] = {
    {"alnum", 3, {'0', '9', 'A', 'Z', 'a', 'z'}},
    {"alpha", 2, {'A', 'Z', 'a', 'z'}},
    {"ascii", 1, {0, 0x7F}},
    {"blank", 2, {'\t', '\t', ' ', ' '}},
    {"cntrl", 2, {0, 0x1F, 0x7F, 0x7F}},
    {"digit", 1, {'0', '9'}},
    {"graph", 1, {'!', '~'}},
    {"lower", 1, {'a', 'z'}},
    {"print", 1, {' ', '~'}},
    {"punct", 4, {'!', '/', ':', '@', '[', '`', '{', '~'}},
    {"space", 2, {'\t', '\r', ' ', ' '}},
    {"upper", 1, {'A', 'Z'}},
    {"word", 4, {'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}},
    {"xdigit", 3, {'0', '9', 'A', 'F', 'a', 'f'}},
};

/*
 * Append the clean class in p->tmp to @dst: case-folded first under (?i), complemented when
 * @negate (Go's appendGroup and the tail of parseUnicodeClass).
 */
static int append_tmp(struct parser *p, struct re_runes *dst, bool negate)
{
    if ((p->flags & RE_F_FOLD_CASE) && class_fold(&p->tmp, &p->tmp2) < 0)
        return -ENOMEM;
    return class_append(dst, &p->tmp, negate);
}

static int append_group(struct parser *p, struct re_runes *dst, const struct ascii_group *g, bool negate)
{
    p->tmp.n = 0;
    for (int i = 0; i < g->n; i++)
        if (ks__re_runes_add(&p->tmp, g->r[2 * i], g->r[2 * i + 1]) < 0)
            return -ENOMEM;
    return append_tmp(p, dst, negate);
}

/* \d \s \w \D \S \W at @t: 1 appended (move past it), 0 none there. */
static int perl_class_escape(struct parser *p, size_t t, struct re_runes *dst)
{
    char c;

    if (p->len - t < 2 || p->s[t] != '\\')
        return 0;
    c = p->s[t + 1];
    for (size_t i = 0; i < sizeof(perl_groups) / sizeof(perl_groups[0]); i++) {
        if (c == perl_groups[i].name[0] || c == perl_groups[i].name[0] - 'a' + 'A') {
            int rc = append_group(p, dst, &perl_groups[i], c < 'a');
            return rc < 0 ? rc : 1;
        }
    }
    return 0;
}

/* [:alpha:] or [:^alpha:] at *@t inside a class: 1 appended, 0 none there, or an error. */
static int parse_named_class(struct parser *p, size_t *tp, struct re_runes *dst)
{
    size_t t = *tp, end, nlen;
    const char *name;
    bool negate;

    if (p->len - t < 2 || p->s[t] != '[' || p->s[t + 1] != ':')
        return 0;
    end = NONE;
    for (size_t i = t + 2; i + 1 < p->len; i++) {
        if (p->s[i] == ':' && p->s[i + 1] == ']') {
            end = i + 2;
            break;
        }
    }
    if (end == NONE)
        return 0;
    name = p->s + t + 2;
    nlen = end - 2 - (t + 2);
    negate = nlen > 0 && name[0] == '^';
    if (negate) {
        name++;
        nlen--;
    }
    for (size_t i = 0; i < sizeof(posix_groups) / sizeof(posix_groups[0]); i++) {
        if (strlen(posix_groups[i].name) == nlen && memcmp(posix_groups[i].name, name, nlen) == 0) {
            int rc = append_group(p, dst, &posix_groups[i], negate);
            if (rc < 0)
                return rc;
            *tp = end;
            return 1;
        }
    }
    return perr(p, ERR_INVALID_CHAR_RANGE, t, end);
}

/* \pN, \p{Name}, \PN, \P{^Name} at *@t: 1 appended, or an error (a \p is never a literal). */
static int parse_unicode_class(struct parser *p, size_t *tp, struct re_runes *dst)
{
    size_t s = *tp, t = s + 2, seq_end, name, name_end;
    bool negate = p->s[s + 1] == 'P', tneg;
    uint32_t c;
    int rc;

    if ((rc = next_rune(p, &t, &c)))
        return rc;
    if (c != '{') {
        seq_end = t;
        name = s + 2;
        name_end = t;
    } else {
        const char *close = memchr(p->s + s, '}', p->len - s);
        if (!close) {
            if ((rc = check_utf8(p, s, p->len)))
                return rc;
            return perr(p, ERR_INVALID_CHAR_RANGE, s, p->len);
        }
        seq_end = (size_t)(close - p->s) + 1;
        name = s + 3;
        name_end = seq_end - 1;
        if ((rc = check_utf8(p, name, name_end)))
            return rc;
    }
    if (name < name_end && p->s[name] == '^') {
        negate = !negate;
        name++;
    }
    p->tmp.n = 0;
    rc = ks__re_unicode_class(p->s + name, name_end - name, class_add_cb, &p->tmp, &tneg);
    if (rc < 0)
        return -ENOMEM;
    if (rc == 0)
        return perr(p, ERR_INVALID_CHAR_RANGE, s, seq_end);
    if (tneg)
        negate = !negate;
    ks__re_runes_clean(&p->tmp);
    if ((rc = append_tmp(p, dst, negate)) < 0)
        return rc;
    *tp = seq_end;
    return 1;
}

/* One character of a class, literal or escaped; @class_start is the [ (for the missing ] error). */
static int parse_class_char(struct parser *p, size_t *t, size_t class_start, uint32_t *r)
{
    if (*t >= p->len)
        return perr(p, ERR_MISSING_BRACKET, class_start, p->len);
    if (p->s[*t] == '\\')
        return parse_escape(p, t, r);
    return next_rune(p, t, r);
}

static int parse_class(struct parser *p, size_t *tp)
{
    size_t start = *tp, t = start + 1;
    bool negate = false, first = true;
    struct re_node *re;
    int rc;

    if (!(re = new_node(p, RE_OP_CHAR_CLASS)))
        return -ENOMEM;
    re->flags = p->flags;
    if (t < p->len && p->s[t] == '^') {
        negate = true;
        t++;
    }
    while (t >= p->len || p->s[t] != ']' || first) {
        size_t rng = t;
        uint32_t lo, hi;

        first = false;
        if (p->len - t > 2 && p->s[t] == '[' && p->s[t + 1] == ':') {
            if ((rc = parse_named_class(p, &t, &re->c)) < 0)
                return rc;
            if (rc)
                continue;
        }
        if (p->len - t >= 2 && p->s[t] == '\\' && (p->s[t + 1] == 'p' || p->s[t + 1] == 'P')) {
            if ((rc = parse_unicode_class(p, &t, &re->c)) < 0)
                return rc;
            continue;
        }
        if ((rc = perl_class_escape(p, t, &re->c)) < 0)
            return rc;
        if (rc) {
            t += 2;
            continue;
        }
        if ((rc = parse_class_char(p, &t, start, &lo)))
            return rc;
        hi = lo;
        /* [a-] means a or -, so a - before the closing ] is no range. */
        if (p->len - t >= 2 && p->s[t] == '-' && p->s[t + 1] != ']') {
            t++;
            if ((rc = parse_class_char(p, &t, start, &hi)))
                return rc;
            if (hi < lo)
                return perr(p, ERR_INVALID_CHAR_RANGE, rng, t);
        }
        rc =
            (p->flags & RE_F_FOLD_CASE) ? class_add_folded(&re->c, lo, hi) : ks__re_runes_add(&re->c, lo, hi);
        if (rc < 0)
            return rc;
    }
    t++; /* the ] */
    ks__re_runes_clean(&re->c);
    if (negate && class_negate(&re->c, &p->tmp) < 0)
        return -ENOMEM;
    *tp = t;
    return push(p, re);
}

/* A backslash at *@t outside a class. */
static int parse_backslash(struct parser *p, size_t *tp)
{
    size_t t = *tp;
    struct re_node *re;
    uint32_t r;
    int rc;

    if (p->len - t >= 2) {
        int op = 0;
        switch (p->s[t + 1]) {
        case 'A':
            op = RE_OP_BEGIN_TEXT;
            break;
        case 'b':
            op = RE_OP_WORD_BOUNDARY;
            break;
        case 'B':
            op = RE_OP_NO_WORD_BOUNDARY;
            break;
        case 'z':
            op = RE_OP_END_TEXT;
            break;
        case 'C': /* any byte: not supported */
            return perr(p, ERR_INVALID_ESCAPE, t, t + 2);
        case 'Q': { /* \Q ... \E: everything in between is literal */
            size_t lit = t + 2, lit_end = p->len, next = p->len;
            for (size_t i = lit; i + 1 < p->len; i++) {
                if (p->s[i] == '\\' && p->s[i + 1] == 'E') {
                    lit_end = i;
                    next = i + 2;
                    break;
                }
            }
            while (lit < lit_end) {
                size_t w;
                int32_t c = re_utf8_decode((const uint8_t *)p->s + lit, lit_end - lit, &w);
                if (c == RE_RUNE_ERROR && w == 1)
                    return perr(p, ERR_INVALID_UTF8, lit, lit_end);
                if ((rc = push_literal(p, (uint32_t)c)))
                    return rc;
                lit += w;
            }
            *tp = next;
            return 0;
        }
        }
        if (op) {
            push_op(p, op, &rc);
            *tp = t + 2;
            return rc;
        }
    }
    if (p->len - t >= 2 && (p->s[t + 1] == 'p' || p->s[t + 1] == 'P')) {
        if (!(re = new_node(p, RE_OP_CHAR_CLASS)))
            return -ENOMEM;
        re->flags = p->flags;
        if ((rc = parse_unicode_class(p, tp, &re->c)) < 0)
            return rc;
        ks__re_runes_clean(&re->c);
        return push(p, re);
    }
    if (p->len - t >= 2) {
        if (!(re = new_node(p, RE_OP_CHAR_CLASS)))
            return -ENOMEM;
        re->flags = p->flags;
        if ((rc = perl_class_escape(p, t, &re->c)) < 0)
            return rc;
        if (rc) {
            ks__re_runes_clean(&re->c);
            *tp = t + 2;
            return push(p, re);
        }
    }
    if ((rc = parse_escape(p, tp, &r)))
        return rc;
    return push_literal(p, r);
}

/* Parse p->s into the single node left on the stack (Go's parse with the Perl flags). */
static int parse(struct parser *p, struct re_node **out)
{
    size_t t = 0, last_repeat = NONE;
    uint32_t c;
    int rc = 0;

    p->flags = RE_F_ONE_LINE; /* Perl: ^ and $ match at the text's ends unless (?m) */
    while (t < p->len) {
        size_t rep = NONE;
        switch (p->s[t]) {
        default:
            if ((rc = next_rune(p, &t, &c)) || (rc = push_literal(p, c)))
                return rc;
            break;
        case '(':
            if (p->len - t >= 2 && p->s[t + 1] == '?') {
                if ((rc = parse_perl_flags(p, &t)))
                    return rc;
                break;
            }
            p->ncap++;
            {
                struct re_node *re = push_op(p, RE_OP_LEFT_PAREN, &rc);
                if (!re)
                    return rc;
                re->cap = p->ncap;
            }
            t++;
            break;
        case '|':
            if ((rc = parse_vertical_bar(p)))
                return rc;
            t++;
            break;
        case ')':
            if ((rc = parse_right_paren(p)))
                return rc;
            t++;
            break;
        case '^':
            push_op(p, (p->flags & RE_F_ONE_LINE) ? RE_OP_BEGIN_TEXT : RE_OP_BEGIN_LINE, &rc);
            if (rc)
                return rc;
            t++;
            break;
        case '$':
            push_op(p, (p->flags & RE_F_ONE_LINE) ? RE_OP_END_TEXT : RE_OP_END_LINE, &rc);
            if (rc)
                return rc;
            t++;
            break;
        case '.':
            push_op(p, (p->flags & RE_F_DOT_NL) ? RE_OP_ANY_CHAR : RE_OP_ANY_CHAR_NOT_NL, &rc);
            if (rc)
                return rc;
            t++;
            break;
        case '[':
            if ((rc = parse_class(p, &t)))
                return rc;
            break;
        case '*':
        case '+':
        case '?': {
            int op = p->s[t] == '*' ? RE_OP_STAR : p->s[t] == '+' ? RE_OP_PLUS : RE_OP_QUEST;
            size_t after = t + 1;
            if ((rc = repeat(p, op, 0, 0, t, &after, last_repeat)))
                return rc;
            rep = t;
            t = after;
            break;
        }
        case '{': {
            int min, max;
            size_t after;
            if (!parse_repeat(p, t, &min, &max, &after)) {
                /* Not a well-formed count: the { is a literal. */
                if ((rc = push_literal(p, '{')))
                    return rc;
                t++;
                break;
            }
            if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max))
                return perr(p, ERR_INVALID_REPEAT_SIZE, t, after);
            if ((rc = repeat(p, RE_OP_REPEAT, min, max, t, &after, last_repeat)))
                return rc;
            rep = t;
            t = after;
            break;
        }
        case '\\':
            if ((rc = parse_backslash(p, &t)))
                return rc;
            break;
        }
        last_repeat = rep;
    }
    if ((rc = concat(p)))
        return rc;
    if (swap_vertical_bar(p))
        p->nstack--;
    if ((rc = alternate(p)))
        return rc;
    if (p->nstack != 1)
        return perr(p, ERR_MISSING_PAREN, 0, p->len);
    *out = p->stack[0];
    return 0;
}

int ks__re_parse(const char *s, size_t len, struct re_parse *out)
{
    struct parser p = {.s = s, .len = len};
    int rc = parse(&p, &out->root);

    out->all = p.all;
    out->code = p.code;
    out->epos = p.epos;
    out->eend = p.eend;
    free(p.stack);
    free(p.tmp.r);
    free(p.tmp2.r);
    return rc;
}

void ks__re_parse_free(struct re_parse *pr)
{
    free_nodes(pr->all);
    pr->all = NULL;
    pr->root = NULL;
}
