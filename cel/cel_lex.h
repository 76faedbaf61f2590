/*
 * cel_lex.h - the CEL lexer's tokens (private to cel_lex.c and cel_parse.c).
 */
#ifndef KSCHED_CEL_LEX_H
#define KSCHED_CEL_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "cel_internal.h"

enum cel_tok {
    TK_EOF = 0,
    TK_IDENT,
    TK_ESC_IDENT,
    TK_INT,
    TK_UINT,
    TK_FLOAT,
    TK_STRING,
    TK_BYTES,
    TK_TRUE,
    TK_FALSE,
    TK_NULL,
    TK_IN,
    TK_EQ,
    TK_NE,
    TK_LT,
    TK_LE,
    TK_GE,
    TK_GT,
    TK_AND,
    TK_OR,
    TK_LBRACKET,
    TK_RBRACKET,
    TK_LBRACE,
    TK_RBRACE,
    TK_LPAREN,
    TK_RPAREN,
    TK_DOT,
    TK_COMMA,
    TK_MINUS,
    TK_NOT,
    TK_QUESTION,
    TK_COLON,
    TK_PLUS,
    TK_STAR,
    TK_SLASH,
    TK_PERCENT,
};

struct cel_token {
    uint8_t kind;   /* enum cel_tok */
    uint32_t start; /* byte offset */
    uint32_t end;
    uint32_t cp; /* code point offset of start */
};

/*
 * ks__cel_lex - all tokens of @src (hidden whitespace and comments dropped), TK_EOF last.
 * Unrecognised input is reported as ANTLR does ("Syntax error: token recognition error at:
 * '...'") and skipped. NULL when out of memory.
 */
struct cel_token *ks__cel_lex(struct cel_arena *a, const struct cel_source *src, struct cel_issues *is,
                              uint32_t *ntok);

/* The display text of a token for syntax errors ("<EOF>" at the end). */
const char *ks__cel_tok_display(enum cel_tok k);

#endif
