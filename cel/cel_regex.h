/*
 * cel_regex.h - regular expressions with Go's regexp semantics (RE2 syntax), linear time.
 *
 * The engine behind CEL's `matches` and the Kubernetes regex library's `find`/`findAll`,
 * which behave as Go's regexp package: a pattern compiles as regexp.Compile compiles it
 * (Perl flags, leftmost-first matching, the same errors word for word) and a search finds
 * what Regexp.FindIndex finds. Private to cel/.
 *
 * Syntax (Go's regexp/syntax, as of Go 1.25):
 *   - literals, `.`, `[...]` with ranges and negation, POSIX classes `[[:alpha:]]` and
 *     `[[:^alpha:]]`, Perl classes `\d \s \w \D \S \W` (ASCII), Unicode classes `\pL`,
 *     `\p{Greek}`, `\PL`, `\p{^L}`: every general category (one- and two-letter names, LC,
 *     Cn; C includes Cn), their long aliases (`\p{Letter}`, `\p{Uppercase_Letter}`,
 *     `\p{digit}`), every script of Unicode 15.0.0, and Any, Assigned, ASCII; names match
 *     ignoring case, spaces, `_` and `-`, as Go 1.25 does;
 *   - escapes `\a \f \t \n \r \v`, octal `\123`, `\x7F`, `\x{10FFFF}`, `\Q...\E`, any
 *     escaped ASCII punctuation; anchors `^ $ \A \z \b \B` (ASCII word characters);
 *   - groups `( )`, `(?: )`, `(?P<name> )`, `(?<name> )`; flags `(?imsU)`, `(?i-s)`,
 *     `(?i:...)`; alternation; repetition `* + ? {n} {n,} {n,m}` and their lazy forms, each
 *     count at most 1000 and nested counts multiplying to at most 1000;
 *   - (?i) uses Unicode simple case folding (CaseFolding.txt statuses C and S: k, K and the
 *     Kelvin sign; s, S and the long s; the Greek and Cyrillic alphabets; ...), as Go does.
 * Input is UTF-8; a byte that does not start a valid sequence reads as U+FFFD, one per byte.
 * Not supported, as in Go: backreferences, lookaround, `\C`, possessive repetition.
 *
 * Threads and memory: a compiled struct ks_re is immutable, so any number of threads may
 * search with it at once, each with its own struct ks_re_scratch. A scratch keeps its memory
 * from one search to the next and grows to the largest program it has run; once grown, a
 * search allocates nothing. Time is O(len(pattern) * len(input)) at worst (a Pike VM).
 */
#ifndef KSCHED_CEL_REGEX_H
#define KSCHED_CEL_REGEX_H

#include <stdbool.h>
#include <stddef.h>

struct ks_re;
struct ks_re_scratch;

/*
 * ks_re_compile - compile the @len bytes at @pattern (need not be NUL-terminated; a NUL byte
 * is an ordinary character) as regexp.Compile would.
 *
 * Returns 0 and a new regex in *@out; -EINVAL with Go's error text in @err (truncated to
 * @errlen, always NUL-terminated when @errlen > 0), e.g. "error parsing regexp: missing
 * closing ): `(abc`" or "error parsing regexp: invalid escape sequence: `\z`"; or -ENOMEM.
 * *@out is NULL on failure. Any thread; allocates.
 */
int ks_re_compile(const char *pattern, size_t len, struct ks_re **out, char *err, size_t errlen);

/* ks_re_destroy - free a regex; NULL is a no-op. No search may be using it. */
void ks_re_destroy(struct ks_re *re);

/*
 * ks_re_scratch_create - a new, empty scratch for ks_re_find(): 0, or -ENOMEM with *@out
 * NULL. A scratch serves one search at a time and any regex.
 */
int ks_re_scratch_create(struct ks_re_scratch **out);

/* ks_re_scratch_destroy - free a scratch; NULL is a no-op. */
void ks_re_scratch_destroy(struct ks_re_scratch *s);

/*
 * ks_re_find - the leftmost-first match in @s[0..@len) that starts at or after byte @from,
 * as Go's FindIndex (and FindAll's later searches) find it: true with the match in
 * [*@start, *@end), false when there is none or @from > @len.
 *
 * The text keeps its context: `^` and `\A` match only at 0, `$` and `\z` only at @len,
 * and `\b`, `\B`, `(?m)^` look at the byte before @from. @start and @end are written only on
 * a match. Allocates only when @scratch must grow for a larger program than it has run; if
 * that allocation fails the search reports no match.
 */
bool ks_re_find(const struct ks_re *re, const char *s, size_t len, size_t from, size_t *start, size_t *end,
                struct ks_re_scratch *scratch);

#endif
