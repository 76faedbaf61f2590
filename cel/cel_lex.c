/*
 * cel_lex.c - the CEL lexer: the lexer rules of cel-spec's grammar (cel-go parser/gen/CEL.g4).
 *
 * Longest match, as ANTLR's lexer: "1.5" is a float, "1." an int then a dot, "0x" an int then
 * an identifier. A position where no rule matches is reported like ANTLR's lexer does: the
 * text from the token's start through the character that failed ("token recognition error at:
 * '| '"), after which lexing resumes past the failing character. Strings are only validated
 * here (escapes must be well formed); cel_parse.c unescapes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cel_lex.h"

struct lexer {
    const char *s;
    size_t n;
    size_t i;    /* byte position */
    uint32_t cp; /* code point position of i */
};

/* Advance one code point. */
static void adv(struct lexer *l)
{
    if (l->i >= l->n)
        return;
    size_t len = 1;
    if ((unsigned char)l->s[l->i] >= 0x80)
        ks__cel_utf8_decode(l->s + l->i, l->n - l->i, &len);
    l->i += len;
    l->cp++;
}

static int at(const struct lexer *l, size_t k)
{
    return l->i + k < l->n ? (unsigned char)l->s[l->i + k] : -1;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static bool is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static bool is_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * Scan an escape sequence at l->i (a backslash). Returns true and advances past it, or false
 * with l->i at the character that cannot continue it.
 */
static bool scan_escape(struct lexer *l)
{
    adv(l); /* the backslash */
    int c = at(l, 0);
    switch (c) {
    case 'a':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
    case '"':
    case '\'':
    case '\\':
    case '?':
    case '`':
        adv(l);
        return true;
    case 'x':
    case 'X':
        adv(l);
        for (int k = 0; k < 2; k++) {
            if (!is_hex(at(l, 0)))
                return false;
            adv(l);
        }
        return true;
    case 'u':
    case 'U': {
        int need = c == 'u' ? 4 : 8;
        adv(l);
        for (int k = 0; k < need; k++) {
            if (!is_hex(at(l, 0)))
                return false;
            adv(l);
        }
        return true;
    }
    case '0':
    case '1':
    case '2':
    case '3':
        adv(l);
        for (int k = 0; k < 2; k++) {
            int d = at(l, 0);
            if (d < '0' || d > '7')
                return false;
            adv(l);
        }
        return true;
    default:
        return false;
    }
}

/*
 * Scan a quoted string whose opening quote is at l->i. @raw: no escapes. Returns true at the
 * end of the literal, false with l->i at the failing character (or the end of input).
 */
static bool scan_string(struct lexer *l, bool raw)
{
    int q = at(l, 0);
    bool triple = at(l, 1) == q && at(l, 2) == q;
    if (triple) {
        adv(l);
        adv(l);
        adv(l);
        for (;;) {
            int c = at(l, 0);
            if (c < 0)
                return false;
            if (c == q && at(l, 1) == q && at(l, 2) == q) {
                adv(l);
                adv(l);
                adv(l);
                return true;
            }
            if (c == '\\' && !raw) {
                if (!scan_escape(l))
                    return false;
                continue;
            }
            adv(l);
        }
    }
    adv(l);
    for (;;) {
        int c = at(l, 0);
        if (c < 0 || c == '\n' || c == '\r')
            return false;
        if (c == q) {
            adv(l);
            return true;
        }
        if (c == '\\' && !raw) {
            if (!scan_escape(l))
                return false;
            continue;
        }
        adv(l);
    }
}

static uint8_t keyword(const char *p, size_t n)
{
    if (n == 4 && !memcmp(p, "true", 4))
        return TK_TRUE;
    if (n == 5 && !memcmp(p, "false", 5))
        return TK_FALSE;
    if (n == 4 && !memcmp(p, "null", 4))
        return TK_NULL;
    if (n == 2 && !memcmp(p, "in", 2))
        return TK_IN;
    return TK_IDENT;
}

/* Scan a number at l->i (a digit, or a '.' followed by a digit). */
static uint8_t scan_number(struct lexer *l)
{
    if (at(l, 0) == '0' && at(l, 1) == 'x' && is_hex(at(l, 2))) {
        adv(l);
        adv(l);
        while (is_hex(at(l, 0)))
            adv(l);
        if (at(l, 0) == 'u' || at(l, 0) == 'U') {
            adv(l);
            return TK_UINT;
        }
        return TK_INT;
    }
    bool is_float = false;
    if (at(l, 0) != '.') {
        while (is_digit(at(l, 0)))
            adv(l);
        if (at(l, 0) == '.' && is_digit(at(l, 1))) {
            adv(l);
            while (is_digit(at(l, 0)))
                adv(l);
            is_float = true;
        }
    } else {
        adv(l);
        while (is_digit(at(l, 0)))
            adv(l);
        is_float = true;
    }
    int e = at(l, 0);
    if (e == 'e' || e == 'E') {
        size_t k = 1;
        if (at(l, 1) == '+' || at(l, 1) == '-')
            k = 2;
        if (is_digit(at(l, k))) {
            while (k--)
                adv(l);
            while (is_digit(at(l, 0)))
                adv(l);
            is_float = true;
        }
    }
    if (is_float)
        return TK_FLOAT;
    if (at(l, 0) == 'u' || at(l, 0) == 'U') {
        adv(l);
        return TK_UINT;
    }
    return TK_INT;
}

/* Report a recognition failure from @start_i/@start_cp through the character at l->i. */
static void recognition_error(struct lexer *l, const struct cel_source *src, struct cel_issues *is,
                              size_t start_i, uint32_t start_cp)
{
    size_t end = l->i;
    if (end < l->n) {
        size_t len = 1;
        if ((unsigned char)l->s[end] >= 0x80)
            ks__cel_utf8_decode(l->s + end, l->n - end, &len);
        end += len;
    }
    ks__cel_issue(is, src, start_cp, "Syntax error: token recognition error at: '%.*s'", (int)(end - start_i),
                  l->s + start_i);
    adv(l); /* resume past the failing character */
}

struct cel_token *ks__cel_lex(struct cel_arena *a, const struct cel_source *src, struct cel_issues *is,
                              uint32_t *ntok)
{
    struct lexer l = {.s = src->text, .n = src->len};
    uint32_t cap = 64, n = 0;
    struct cel_token *v = malloc(cap * sizeof(*v));
    if (!v)
        return NULL;
    for (;;) {
        int c = at(&l, 0);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
            adv(&l);
            continue;
        }
        if (c == '/' && at(&l, 1) == '/') {
            while (l.i < l.n && l.s[l.i] != '\n')
                adv(&l);
            continue;
        }
        if (n + 1 >= cap) {
            cap *= 2;
            struct cel_token *nv = realloc(v, cap * sizeof(*v));
            if (!nv) {
                free(v);
                return NULL;
            }
            v = nv;
        }
        struct cel_token *t = &v[n];
        t->start = (uint32_t)l.i;
        t->cp = l.cp;
        size_t si = l.i;
        uint32_t scp = l.cp;
        if (c < 0) {
            t->kind = TK_EOF;
            t->end = t->start;
            n++;
            break;
        }
        uint8_t k = 0;
        int c1 = at(&l, 1);
        switch (c) {
        case '=':
            if (c1 == '=') {
                adv(&l);
                adv(&l);
                k = TK_EQ;
            } else {
                adv(&l);
                recognition_error(&l, src, is, si, scp);
                continue;
            }
            break;
        case '!':
            adv(&l);
            k = TK_NOT;
            if (c1 == '=') {
                adv(&l);
                k = TK_NE;
            }
            break;
        case '<':
            adv(&l);
            k = TK_LT;
            if (c1 == '=') {
                adv(&l);
                k = TK_LE;
            }
            break;
        case '>':
            adv(&l);
            k = TK_GT;
            if (c1 == '=') {
                adv(&l);
                k = TK_GE;
            }
            break;
        case '&':
        case '|':
            adv(&l);
            if (c1 != c) {
                recognition_error(&l, src, is, si, scp);
                continue;
            }
            adv(&l);
            k = c == '&' ? TK_AND : TK_OR;
            break;
        case '[':
            adv(&l);
            k = TK_LBRACKET;
            break;
        case ']':
            adv(&l);
            k = TK_RBRACKET;
            break;
        case '{':
            adv(&l);
            k = TK_LBRACE;
            break;
        case '}':
            adv(&l);
            k = TK_RBRACE;
            break;
        case '(':
            adv(&l);
            k = TK_LPAREN;
            break;
        case ')':
            adv(&l);
            k = TK_RPAREN;
            break;
        case ',':
            adv(&l);
            k = TK_COMMA;
            break;
        case '-':
            adv(&l);
            k = TK_MINUS;
            break;
        case '?':
            adv(&l);
            k = TK_QUESTION;
            break;
        case ':':
            adv(&l);
            k = TK_COLON;
            break;
        case '+':
            adv(&l);
            k = TK_PLUS;
            break;
        case '*':
            adv(&l);
            k = TK_STAR;
            break;
        case '/':
            adv(&l);
            k = TK_SLASH;
            break;
        case '%':
            adv(&l);
            k = TK_PERCENT;
            break;
        case '.':
            if (is_digit(c1)) {
                k = scan_number(&l);
            } else {
                adv(&l);
                k = TK_DOT;
            }
            break;
        case '"':
        case '\'':
            if (!scan_string(&l, false)) {
                recognition_error(&l, src, is, si, scp);
                continue;
            }
            k = TK_STRING;
            break;
        case '`':
            adv(&l);
            {
                size_t body = 0;
                for (;;) {
                    int d = at(&l, 0);
                    if (is_letter(d) || is_digit(d) || d == '_' || d == '.' || d == '-' || d == '/' ||
                        d == ' ') {
                        adv(&l);
                        body++;
                        continue;
                    }
                    break;
                }
                if (body == 0 || at(&l, 0) != '`') {
                    recognition_error(&l, src, is, si, scp);
                    continue;
                }
                adv(&l);
                k = TK_ESC_IDENT;
            }
            break;
        default:
            if (is_digit(c)) {
                k = scan_number(&l);
                break;
            }
            if (is_letter(c) || c == '_') {
                /* raw, bytes and raw bytes prefixes */
                bool bytes = false, raw = false;
                size_t p = 0;
                if (c == 'b' || c == 'B') {
                    bytes = true;
                    p = 1;
                    if (c1 == 'r' || c1 == 'R') {
                        raw = true;
                        p = 2;
                    }
                } else if (c == 'r' || c == 'R') {
                    raw = true;
                    p = 1;
                }
                int q = at(&l, p);
                if ((bytes || raw) && (q == '"' || q == '\'')) {
                    for (size_t j = 0; j < p; j++)
                        adv(&l);
                    if (!scan_string(&l, raw)) {
                        recognition_error(&l, src, is, si, scp);
                        continue;
                    }
                    k = bytes ? TK_BYTES : TK_STRING;
                    break;
                }
                while (is_letter(at(&l, 0)) || is_digit(at(&l, 0)) || at(&l, 0) == '_')
                    adv(&l);
                k = keyword(l.s + si, l.i - si);
                break;
            }
            recognition_error(&l, src, is, si, scp);
            continue;
        }
        t->kind = k;
        t->end = (uint32_t)l.i;
        n++;
    }
    (void)a;
    *ntok = n;
    return v;
}

const char *ks__cel_tok_display(enum cel_tok k)
{
    switch (k) {
    case TK_EOF:
        return "<EOF>";
    case TK_EQ:
        return "==";
    case TK_NE:
        return "!=";
    case TK_LT:
        return "<";
    case TK_LE:
        return "<=";
    case TK_GE:
        return ">=";
    case TK_GT:
        return ">";
    case TK_AND:
        return "&&";
    case TK_OR:
        return "||";
    case TK_LBRACKET:
        return "[";
    case TK_RBRACKET:
        return "]";
    case TK_LBRACE:
        return "{";
    case TK_RBRACE:
        return "}";
    case TK_LPAREN:
        return "(";
    case TK_RPAREN:
        return ")";
    case TK_DOT:
        return ".";
    case TK_COMMA:
        return ",";
    case TK_MINUS:
        return "-";
    case TK_NOT:
        return "!";
    case TK_QUESTION:
        return "?";
    case TK_COLON:
        return ":";
    case TK_PLUS:
        return "+";
    case TK_STAR:
        return "*";
    case TK_SLASH:
        return "/";
    case TK_PERCENT:
        return "%";
    default:
        return NULL;
    }
}
