/*
 * cel_regex_impl.h - what the files of the regex engine share, and nothing outside them
 * includes: UTF-8 decoding, rune sets, the parse tree that cel_regex_parse.c builds and
 * cel_regex.c compiles, and the Unicode data of cel_regex_unicode.c.
 *
 * Threads: the parse tree belongs to the one ks_re_compile() call that builds it; the
 * Unicode tables are constant and any thread may read them.
 */
#ifndef KSCHED_CEL_REGEX_IMPL_H
#define KSCHED_CEL_REGEX_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RE_MAX_RUNE   0x10FFFF
#define RE_RUNE_ERROR 0xFFFD
#define RE_RUNE_SELF  0x80

/* Go's limit on the estimated program size, in instructions (regexp/syntax maxSize). */
#define RE_MAX_SIZE  ((128 << 20) / 40)
#define RE_ERR_LARGE "expression too large"

/* ---- UTF-8 ------------------------------------------------------------------------------------------ */

/*
 * The rune at @s[0..@n) and its length in *@w, as Go's utf8.DecodeRune: an invalid or
 * truncated sequence, a surrogate or an overlong form reads as RE_RUNE_ERROR of length 1, and
 * nothing (n == 0) as RE_RUNE_ERROR of length 0.
 */
static inline int32_t re_utf8_decode(const uint8_t *s, size_t n, size_t *w)
{
    uint8_t b0, lo = 0x80, hi = 0xBF;

    if (n == 0) {
        *w = 0;
        return RE_RUNE_ERROR;
    }
    b0 = s[0];
    *w = 1;
    if (b0 < RE_RUNE_SELF)
        return b0;
    if (b0 < 0xC2 || b0 > 0xF4 || n < 2)
        return RE_RUNE_ERROR;
    if (b0 < 0xE0) {
        if ((s[1] & 0xC0) != 0x80)
            return RE_RUNE_ERROR;
        *w = 2;
        return (int32_t)(b0 & 0x1F) << 6 | (s[1] & 0x3F);
    }
    if (b0 == 0xE0)
        lo = 0xA0;
    else if (b0 == 0xED)
        hi = 0x9F;
    else if (b0 == 0xF0)
        lo = 0x90;
    else if (b0 == 0xF4)
        hi = 0x8F;
    if (s[1] < lo || s[1] > hi || n < 3 || (s[2] & 0xC0) != 0x80)
        return RE_RUNE_ERROR;
    if (b0 < 0xF0) {
        *w = 3;
        return (int32_t)(b0 & 0x0F) << 12 | (int32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    }
    if (n < 4 || (s[3] & 0xC0) != 0x80)
        return RE_RUNE_ERROR;
    *w = 4;
    return (int32_t)(b0 & 0x07) << 18 | (int32_t)(s[1] & 0x3F) << 12 | (int32_t)(s[2] & 0x3F) << 6 |
           (s[3] & 0x3F);
}

/* ---- rune sets --------------------------------------------------------------------------------------- */

/* A set of runes as [lo, hi] pairs: r[2i] = lo, r[2i+1] = hi. */
struct re_runes {
    uint32_t *r;
    size_t n; /* pairs */
    size_t cap;
};

/* ks__re_runes_add - append the range [@lo, @hi]: 0 or -ENOMEM. */
int ks__re_runes_add(struct re_runes *c, uint32_t lo, uint32_t hi);

/* ks__re_runes_clean - sort the ranges and merge the overlapping and adjacent ones. */
void ks__re_runes_clean(struct re_runes *c);

/* ---- the parse tree -------------------------------------------------------------------------------- */

enum re_op {
    RE_OP_NO_MATCH = 1,
    RE_OP_EMPTY_MATCH,
    RE_OP_LITERAL,
    RE_OP_CHAR_CLASS,
    RE_OP_ANY_CHAR_NOT_NL,
    RE_OP_ANY_CHAR,
    RE_OP_BEGIN_LINE,
    RE_OP_END_LINE,
    RE_OP_BEGIN_TEXT,
    RE_OP_END_TEXT,
    RE_OP_WORD_BOUNDARY,
    RE_OP_NO_WORD_BOUNDARY,
    RE_OP_CAPTURE,
    RE_OP_STAR,
    RE_OP_PLUS,
    RE_OP_QUEST,
    RE_OP_REPEAT,
    RE_OP_CONCAT,
    RE_OP_ALTERNATE,
    RE_OP_PSEUDO = 128, /* parse-stack markers from here on */
    RE_OP_LEFT_PAREN,
    RE_OP_VERTICAL_BAR,
};

/* Parse flags (Go's syntax.Flags, the ones Perl mode can change). */
enum {
    RE_F_FOLD_CASE = 1 << 0,
    RE_F_DOT_NL = 1 << 1,
    RE_F_ONE_LINE = 1 << 2,
    RE_F_NON_GREEDY = 1 << 3,
    RE_F_ALL = (1 << 4) - 1,
};

/* A node of the parse tree (Go's syntax.Regexp); RE_OP_PSEUDO and above only on the parse stack. */
struct re_node {
    uint8_t op;        /* enum re_op */
    uint8_t flags;     /* RE_F_* in force where the node was parsed */
    int min, max;      /* RE_OP_REPEAT: max -1 means no bound */
    int cap;           /* RE_OP_LEFT_PAREN, RE_OP_CAPTURE: group number, 0 for (?: */
    uint32_t rune;     /* RE_OP_LITERAL */
    struct re_runes c; /* RE_OP_CHAR_CLASS: clean (sorted, disjoint, not adjacent) */
    struct re_node **sub;
    size_t nsub, capsub;
    int height;          /* of the subtree, for the nesting limit */
    int64_t size;        /* estimated program size, for the size limit (Go's calcSize) */
    uint32_t cls;        /* compiling: 1 + its class in the program, 0 before the first copy */
    struct re_node *all; /* every node of the parse, for freeing */
};

/* The outcome of ks__re_parse(): the tree, or the error Go would report. */
struct re_parse {
    struct re_node *root;
    struct re_node *all; /* every node, for ks__re_parse_free() */
    const char *code;    /* the error code's text, "missing closing )" */
    size_t epos, eend;   /* the quoted part of the pattern */
};

/*
 * ks__re_parse - parse the @len bytes at @s as Go's syntax.Parse(s, syntax.Perl) does.
 * Returns 0 with out->root; -EINVAL with out->code and the quote [epos, eend) of @s;
 * -ENOMEM. Either way the caller frees with ks__re_parse_free().
 */
int ks__re_parse(const char *s, size_t len, struct re_parse *out);
void ks__re_parse_free(struct re_parse *pr);

/* ---- Unicode data (cel_regex_unicode.c)
 * -------------------------------------------------------------------- */

/* Receives one range of code points [lo, hi]; returns 0 or a negative errno that stops the walk. */
typedef int (*ks__re_range_fn)(void *ctx, uint32_t lo, uint32_t hi);

/*
 * ks__re_unicode_class - the class that `\p{@name}` names (@len bytes, the braces and any
 * leading `^` already removed), looked up as Go 1.25's regexp/syntax does: the name is
 * canonicalised (case ignored but for the first letter, spaces, `_` and `-` dropped) and
 * tried as Any, Assigned, ASCII, LC, a general category, a script, then a category alias.
 *
 * Calls @add for each range of the class, in no particular order and possibly overlapping.
 * Sets *@negate when the caller must complement the ranges (Assigned is "not Cn").
 * Returns 1 when the name is known, 0 when it is not (nothing added), or @add's error.
 */
int ks__re_unicode_class(const char *name, size_t len, ks__re_range_fn add, void *ctx, bool *negate);

/*
 * ks__re_simple_fold - the next code point after @r in its simple case folding orbit, or the
 * smallest one after the largest; @r itself when nothing folds to it (Go's unicode.SimpleFold).
 */
uint32_t ks__re_simple_fold(uint32_t r);

/*
 * Every code point whose orbit holds more than itself, ascending, each with
 * ks__re_simple_fold() of it: [i][0] is the code point, [i][1] the next in its orbit.
 */
extern const uint32_t ks__re_fold_next[][2];
extern const size_t ks__re_fold_count;

#endif
