/*
 * test_regex.c - the regex engine behind CEL's matches/find/findAll (cel/cel_regex*.c):
 * every construct of Go's RE2 syntax, leftmost-first priority, UTF-8 (and invalid bytes as
 * U+FFFD), case folding, anchors when a search starts past 0, empty matches, Go's error
 * texts word for word, the limits, scratch reuse and concurrent searches.
 *
 * The expected matches are Go's: the findTests table of Go's src/regexp/find_test.go in
 * this file's own format, and the construct tables, whose expectations were produced by
 * running each case through Go's regexp.FindAllIndex. A row's matches are written
 * "start-end start-end ..." as FindAllIndex returns them ("" for none); find_all() below
 * walks the text as Go's allMatches does, so every row also checks searches from past 0.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../../cel/cel_regex.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string literal as pointer and length (texts may hold NUL bytes). */
#define S(lit) lit, sizeof(lit) - 1

struct find_case {
    const char *pat;
    size_t plen;
    const char *text;
    size_t tlen;
    const char *want; /* FindAllIndex: "0-1 2-3", "" for no match */
};

struct err_case {
    const char *pat;
    size_t plen;
    const char *want;
};

static struct ks_re *compile_ok(const char *pat, size_t len)
{
    struct ks_re *re = NULL;
    char err[512];
    int rc = ks_re_compile(pat, len, &re, err, sizeof(err));

    cr_assert(eq(int, rc, 0), "compile %s: %s", pat, err);
    return re;
}

static size_t rune_len(const char *s, size_t n)
{
    static const char dot[] = "(?s).";
    struct ks_re *re = compile_ok(S(dot));
    struct ks_re_scratch *sc;
    size_t a = 0, b = 0;

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    cr_assert(ks_re_find(re, s, n, 0, &a, &b, sc));
    ks_re_scratch_destroy(sc);
    ks_re_destroy(re);
    return b - a;
}

/* Every match, as Go's Regexp.allMatches finds them, into @out: "0-1 2-3". */
static void find_all(const struct ks_re *re, const char *s, size_t len, struct ks_re_scratch *sc, char *out,
                     size_t cap)
{
    size_t pos = 0, n = 0;
    long prev_end = -1;

    out[0] = '\0';
    while (pos <= len) {
        size_t start, end;
        bool accept = true;

        if (!ks_re_find(re, s, len, pos, &start, &end, sc))
            break;
        if (end == pos) {
            /* An empty match right after the previous match does not count. */
            if ((long)start == prev_end)
                accept = false;
            pos += pos < len ? rune_len(s + pos, len - pos) : 1;
        } else {
            pos = end;
        }
        prev_end = (long)end;
        if (accept)
            n += (size_t)snprintf(out + n, cap - n, "%s%zu-%zu", n ? " " : "", start, end);
        cr_assert(lt(sz, n, cap));
    }
}

static void check_table(const struct find_case *t, size_t n)
{
    struct ks_re_scratch *sc;
    char got[4096];

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    for (size_t i = 0; i < n; i++) {
        struct ks_re *re = compile_ok(t[i].pat, t[i].plen);
        find_all(re, t[i].text, t[i].tlen, sc, got, sizeof(got));
        cr_expect(eq(str, got, (char *)t[i].want), "pattern `%s` on \"%s\"", t[i].pat, t[i].text);
        ks_re_destroy(re);
    }
    ks_re_scratch_destroy(sc);
}

/* One search from @from: "s-e", or "" when there is no match. */
static const char *find_from(const char *pat, const char *text, size_t from)
{
    static char buf[64];
    struct ks_re *re = compile_ok(pat, strlen(pat));
    struct ks_re_scratch *sc;
    size_t s, e;

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    buf[0] = '\0';
    if (ks_re_find(re, text, strlen(text), from, &s, &e, sc))
        snprintf(buf, sizeof(buf), "%zu-%zu", s, e);
    ks_re_scratch_destroy(sc);
    ks_re_destroy(re);
    return buf;
}

static bool matches(const char *pat, const char *text)
{
    return find_from(pat, text, 0)[0] != '\0';
}

static void expect_error(const char *pat, size_t len, const char *want)
{
    struct ks_re *re = (struct ks_re *)1;
    char err[512];
    int rc = ks_re_compile(pat, len, &re, err, sizeof(err));

    cr_expect(eq(int, rc, -EINVAL), "pattern `%s` compiled", pat);
    cr_expect(eq(ptr, re, NULL));
    cr_expect(eq(str, err, (char *)want), "pattern `%s`", pat);
}

/* ---- Go's src/regexp/find_test.go findTests (whole-match indices) ---------------------------------- */

static const struct find_case go_find_tests[] = {
    {S(""), S(""), "0-0"},
    {S("^abcdefg"), S("abcdefg"), "0-7"},
    {S("a+"), S("baaab"), "1-4"},
    {S("abcd.."), S("abcdef"), "0-6"},
    {S("a"), S("a"), "0-1"},
    {S("x"), S("y"), ""},
    {S("b"), S("abc"), "1-2"},
    {S("."), S("a"), "0-1"},
    {S(".*"), S("abcdef"), "0-6"},
    {S("^"), S("abcde"), "0-0"},
    {S("$"), S("abcde"), "5-5"},
    {S("^abcd$"), S("abcd"), "0-4"},
    {S("^bcd'"), S("abcdef"), ""},
    {S("^abcd$"), S("abcde"), ""},
    {S("a+"), S("baaab"), "1-4"},
    {S("a*"), S("baaab"), "0-0 1-4 5-5"},
    {S("[a-z]+"), S("abcd"), "0-4"},
    {S("[^a-z]+"), S("ab1234cd"), "2-6"},
    {S("[a\\-\\]z]+"), S("az]-bcz"), "0-4 6-7"},
    {S("[^\\n]+"), S("abcd\n"), "0-4"},
    {S("[日本語]+"), S("日本語日本語"), "0-18"},
    {S("日本語+"), S("日本語"), "0-9"},
    {S("日本語+"), S("日本語語語語"), "0-18"},
    {S("()"), S(""), "0-0"},
    {S("(a)"), S("a"), "0-1"},
    {S("(.)(.)"), S("日a"), "0-4"},
    {S("(.*)"), S(""), "0-0"},
    {S("(.*)"), S("abcd"), "0-4"},
    {S("(..)(..)"), S("abcd"), "0-4"},
    {S("(([^xyz]*)(d))"), S("abcd"), "0-4"},
    {S("((a|b|c)*(d))"), S("abcd"), "0-4"},
    {S("(((a|b|c)*)(d))"), S("abcd"), "0-4"},
    {S("\\a\\f\\n\\r\\t\\v"), S("\007\014\n\015\t\013"), "0-6"},
    {S("[\\a\\f\\n\\r\\t\\v]+"), S("\007\014\n\015\t\013"), "0-6"},
    {S("a*(|(b))c*"), S("aacc"), "0-4"},
    {S("(.*).*"), S("ab"), "0-2"},
    {S("[.]"), S("."), "0-1"},
    {S("/$"), S("/abc/"), "4-5"},
    {S("/$"), S("/abc"), ""},
    {S("."), S("abc"), "0-1 1-2 2-3"},
    {S("(.)"), S("abc"), "0-1 1-2 2-3"},
    {S(".(.)"), S("abcd"), "0-2 2-4"},
    {S("ab*"), S("abbaab"), "0-3 3-4 4-6"},
    {S("a(b*)"), S("abbaab"), "0-3 3-4 4-6"},
    {S("ab$"), S("cab"), "1-3"},
    {S("axxb$"), S("axxcb"), ""},
    {S("data"), S("daXY data"), "5-9"},
    {S("da(.)a$"), S("daXY data"), "5-9"},
    {S("zx+"), S("zzx"), "1-3"},
    {S("ab$"), S("abcab"), "3-5"},
    {S("(aa)*$"), S("a"), "1-1"},
    {S("(?:.|(?:.a))"), S(""), ""},
    {S("(?:A(?:A|a))"), S("Aa"), "0-2"},
    {S("(?:A|(?:A|a))"), S("a"), "0-1"},
    {S("(a){0}"), S(""), "0-0"},
    {S("(?-s)(?:(?:^).)"), S("\n"), ""},
    {S("(?s)(?:(?:^).)"), S("\n"), "0-1"},
    {S("(?:(?:^).)"), S("\n"), ""},
    {S("\\b"), S("x"), "0-0 1-1"},
    {S("\\b"), S("xx"), "0-0 2-2"},
    {S("\\b"), S("x y"), "0-0 1-1 2-2 3-3"},
    {S("\\b"), S("xx yy"), "0-0 2-2 3-3 5-5"},
    {S("\\B"), S("x"), ""},
    {S("\\B"), S("xx"), "1-1"},
    {S("\\B"), S("x y"), ""},
    {S("\\B"), S("xx yy"), "1-1 4-4"},
    {S("(|a)*"), S("aa"), "0-0 1-1 2-2"},
    {S("[^\\S\\s]"), S("abcd"), ""},
    {S("[^\\S[:space:]]"), S("abcd"), ""},
    {S("[^\\D\\d]"), S("abcd"), ""},
    {S("[^\\D[:digit:]]"), S("abcd"), ""},
    {S("(?i)\\W"), S("x"), ""},
    {S("(?i)\\W"), S("k"), ""},
    {S("(?i)\\W"), S("s"), ""},
    {S("\\!\\\"\\#\\$\\%\\&\\'\\(\\)\\*\\+\\,\\-\\.\\/\\:\\;\\<\\=\\>\\?\\@\\[\\\\\\]\\^\\_\\{\\|\\}\\~"),
     S("!\"#$%&'()*+,-./:;<=>?@[\\]^_{|}~"), "0-31"},
    {S("[\\!\\\"\\#\\$\\%\\&\\'\\(\\)\\*\\+\\,\\-\\.\\/\\:\\;\\<\\=\\>\\?\\@\\[\\\\\\]\\^\\_\\{\\|\\}\\~]+"),
     S("!\"#$%&'()*+,-./:;<=>?@[\\]^_{|}~"), "0-31"},
    {S("\\`"), S("`"), "0-1"},
    {S("[\\`]+"), S("`"), "0-1"},
    {S("\uFFFD"), S("\377"), "0-1"},
    {S("\uFFFD"), S("hello\377world"), "5-6"},
    {S(".*"), S("hello\377world"), "0-11"},
    {S("\\x{fffd}"), S("\302\000"), "0-1"},
    {S("[\uFFFD]"), S("\377"), "0-1"},
    {S("[\\x{fffd}]"), S("\302\000"), "0-1"},
    {S("."), S("qwertyuiopasdfghjklzxcvbnm1234567890"),
     "0-1 1-2 2-3 3-4 4-5 5-6 6-7 7-8 8-9 9-10 10-11 11-12 12-13 13-14 14-15 15-16 16-17 17-18 18-19 19-20 "
     "20-21 21-22 22-23 23-24 24-25 25-26 26-27 27-28 28-29 29-30 30-31 31-32 32-33 33-34 34-35 35-36"},
};

Test(cel_regex, go_find_tests)
{
    check_table(go_find_tests, sizeof(go_find_tests) / sizeof(go_find_tests[0]));
}

/* ---- every construct, checked against Go's FindAllIndex ---------------------------------------------- */

static const struct find_case constructs[] = {
    /* literals, dot and escapes */
    {S("abc"), S("xabcabc"), "1-4 4-7"},
    {S("a.c"), S("abc a\nc"), "0-3"},
    {S("(?s)a.c"), S("a\nc"), "0-3"},
    {S("\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\"), S(".*+?()[]{}|^$\\"), "0-14"},
    {S("\\a\\f\\t\\n\\r\\v"), S("\007\014\t\n\015\013"), "0-6"},
    {S("\\0\\07\\101\\1011"), S("\000\007AA1"), "0-5"},
    {S("\\x41\\x{42}\\x{263a}\\x{10FFFF}"), S("AB☺\U0010FFFF"), "0-9"},
    {S("\\_\\ \\<\\>\\'"), S("_ <>'"), "0-5"},
    {S("a{,2}"), S("a{,2}"), "0-5"},
    {S("a{"), S("a{"), "0-2"},
    {S("{"), S("{"), "0-1"},
    {S("}"), S("}"), "0-1"},
    {S("x{2,1"), S("x{2,1"), "0-5"},
    {S("\\Q.*+\\E+"), S(".*++"), "0-4"},
    {S("\\Qab"), S("ab"), "0-2"},
    {S("\\Q\\E"), S("x"), "0-0 1-1"},
    {S("日本"), S("本日本"), "3-9"},
    /* character classes */
    {S("[abc]+"), S("xcabx"), "1-4"},
    {S("[a-c]+"), S("xcabd"), "1-4"},
    {S("[^abc]+"), S("abxyc"), "2-4"},
    {S("[]a]+"), S("a]b"), "0-2"},
    {S("[^]a]+"), S("a]bc"), "2-4"},
    {S("[a-]+"), S("a-b"), "0-2"},
    {S("[-a]+"), S("-ab"), "0-2"},
    {S("[\\]]"), S("]"), "0-1"},
    {S("[\\d\\s]+"), S("1 2\t3x"), "0-5"},
    {S("[^\\d]+"), S("12ab3"), "2-4"},
    {S("[\\w.]+"), S("a.b c"), "0-3 4-5"},
    {S("[[:alpha:]]+"), S("12ab34"), "2-4"},
    {S("[[:^alpha:]]+"), S("ab12cd"), "2-4"},
    {S("[[:digit:][:upper:]]+"), S("aB1Cd"), "1-4"},
    {S("[[:space:]]+"), S("a \t\n\013\014\015b"), "1-7"},
    {S("[[:punct:]]+"), S("a!-/:@[`{~b"), "1-10"},
    {S("[[:word:]]+"), S("-a_1-"), "1-4"},
    {S("[[:xdigit:]]+"), S("xDeadBeefg"), "1-9"},
    {S("[[:cntrl:]]"), S("a\177"), "1-2"},
    {S("[[:blank:]]+"), S("a \tb"), "1-3"},
    {S("[[:graph:]]+"), S(" a~ "), "1-3"},
    {S("[[:print:]]+"), S("\001 a~\177"), "1-4"},
    {S("[[:lower:]]+"), S("ABcdE"), "2-4"},
    {S("[[:ascii:]]+"), S("é ab é"), "2-6"},
    {S("[[:alnum:]]+"), S("-a1Z-"), "1-4"},
    {S("[α-ε]+"), S("aβγζ"), "1-5"},
    {S("[^a]"), S("\n"), "0-1"},
    {S("[^\\n]"), S("\n"), ""},
    {S("[\\x00-\\x{10FFFF}]"), S("\U0010FFFF"), "0-4"},
    {S("[^\\x00-\\x{10FFFF}]"), S("abc"), ""},
    {S("[a-a]"), S("a"), "0-1"},
    {S("[\\141-\\143]+"), S("abcd"), "0-3"},
    /* Perl classes */
    {S("\\d+"), S("ab123c"), "2-5"},
    {S("\\D+"), S("12ab3"), "2-4"},
    {S("\\s+"), S("a \t\n\014\015b"), "1-6"},
    {S("\\s"), S("\013"), ""},
    {S("\\S+"), S(" ab "), "1-3"},
    {S("\\w+"), S("-a_9Z-"), "1-5"},
    {S("\\W+"), S("a-+b"), "1-3"},
    {S("\\d"), S("٣"), ""},
    {S("\\w"), S("é"), ""},
    /* Unicode classes */
    {S("\\pL+"), S("12abc日本語3"), "2-14"},
    {S("\\p{L}+"), S("1ab"), "1-3"},
    {S("\\PL+"), S("ab12!c"), "2-5"},
    {S("\\p{^L}+"), S("ab12c"), "2-4"},
    {S("\\P{^L}+"), S("12ab"), "2-4"},
    {S("\\p{Lu}+"), S("abCDe"), "2-4"},
    {S("\\p{Ll}+"), S("ABcdE"), "2-4"},
    {S("\\p{Lt}"), S("ǅ"), "0-2"},
    {S("\\p{Lm}"), S("aʰ"), "1-3"},
    {S("\\p{Lo}"), S("aא"), "1-3"},
    {S("\\pN+"), S("x١٢3Ⅻ½"), "1-11"},
    {S("\\p{Nd}+"), S("x١٢3Ⅻ"), "1-6"},
    {S("\\p{Nl}"), S("xⅫ"), "1-4"},
    {S("\\p{No}"), S("x½"), "1-3"},
    {S("\\pP+"), S("a!?,;b"), "1-5"},
    {S("\\p{Pd}"), S("a-"), "1-2"},
    {S("\\p{Ps}\\p{Pe}"), S("()"), "0-2"},
    {S("\\pS+"), S("a+$^b"), "1-4"},
    {S("\\p{Sm}"), S("a+"), "1-2"},
    {S("\\p{Sc}"), S("a$"), "1-2"},
    {S("\\pZ+"), S("a \u00A0\u3000b"), "1-7"},
    {S("\\p{Zs}"), S("\u2003"), "0-3"},
    {S("\\p{Zl}"), S("\u2028"), "0-3"},
    {S("\\pM"), S("e\u0301"), "1-3"},
    {S("\\p{Mn}"), S("e\u0301"), "1-3"},
    {S("\\pC"), S("a\001"), "1-2"},
    {S("\\p{Cc}"), S("a\177"), "1-2"},
    {S("\\p{Cf}"), S("a\u200B"), "1-4"},
    {S("\\p{Co}"), S("a\uE000"), "1-4"},
    {S("\\p{Greek}+"), S("abcαβγ"), "3-9"},
    {S("\\p{Latin}+"), S("αabé"), "2-6"},
    {S("\\p{Han}+"), S("a漢字b"), "1-7"},
    {S("\\p{Cyrillic}+"), S("aжуkb"), "1-5"},
    {S("\\p{Common}+"), S("a1!b"), "1-3"},
    {S("\\p{Any}+"), S("a\377b\n"), "0-4"},
    {S("[\\p{Greek}\\d]+"), S("aα1β2b"), "1-7"},
    {S("[^\\P{Lu}]+"), S("abCDe"), "2-4"},
    {S("[\\PL]+"), S("ab12c"), "2-4"},
    /* anchors */
    {S("^a"), S("aa"), "0-1"},
    {S("a$"), S("aa"), "1-2"},
    {S("^$"), S(""), "0-0"},
    {S("^$"), S("a"), ""},
    {S("(?m)^a"), S("a\na"), "0-1 2-3"},
    {S("(?m)a$"), S("a\na"), "0-1 2-3"},
    {S("(?m)^$"), S("a\n\nb"), "2-2"},
    {S("(?m)^"), S("a\nb\n"), "0-0 2-2 4-4"},
    {S("(?m)$"), S("a\nb\n"), "1-1 3-3 4-4"},
    {S("\\Aa"), S("a\na"), "0-1"},
    {S("a\\z"), S("a\na"), "2-3"},
    {S("(?m)\\Aa"), S("a\na"), "0-1"},
    {S("(?m)a\\z"), S("a\na"), "2-3"},
    {S("$a"), S("a"), ""},
    {S("a^"), S("a"), ""},
    {S("\\bfoo\\b"), S("foo foobar barfoo foo"), "0-3 18-21"},
    {S("\\Bo\\B"), S("foo boot"), "1-2 5-6 6-7"},
    {S("\\b"), S("é"), ""},
    {S("\\B"), S("é"), "0-0 2-2"},
    {S("\\b\\w+\\b"), S("中文 ab"), "7-9"},
    {S("^"), S(""), "0-0"},
    {S("$"), S(""), "0-0"},
    {S("^*a"), S("a"), "0-1"},
    {S("(?:^)*a"), S("ba"), "1-2"},
    {S("$*"), S("a"), "0-0 1-1"},
    {S("\\b+"), S("a b"), "0-0 1-1 2-2 3-3"},
    /* groups and flags */
    {S("(a)(b)"), S("ab"), "0-2"},
    {S("(?:ab)+"), S("ababa"), "0-4"},
    {S("(?P<x>a)(?P<y>b)"), S("ab"), "0-2"},
    {S("(?i)abc"), S("xAbC"), "1-4"},
    {S("(?i:a)b"), S("Ab AB"), "0-2"},
    {S("a(?i)b"), S("aB AB"), "0-2"},
    {S("(?i)a(?-i)b"), S("Ab AB"), "0-2"},
    {S("(?i)a(?-i:b)c"), S("aBc AbC"), "4-7"},
    {S("(?s).+"), S("a\nb"), "0-3"},
    {S("(?s-s).+"), S("a\nb"), "0-1 2-3"},
    {S("(?m)^b"), S("a\nb"), "2-3"},
    {S("(?U)a+"), S("aaa"), "0-1 1-2 2-3"},
    {S("(?U)a+?"), S("aaa"), "0-3"},
    {S("(?U)a*b"), S("aab"), "0-3"},
    {S("(?Ui)A+?"), S("aaa"), "0-3"},
    {S("(a(?i)b)c"), S("aBc aBC"), "0-3"},
    {S("(?i)(a)B"), S("Ab"), "0-2"},
    {S("(?)a"), S("a"), "0-1"},
    {S("(?:)"), S("a"), "0-0 1-1"},
    {S("()+"), S("a"), "0-0 1-1"},
    /* alternation is leftmost-first, not leftmost-longest */
    {S("a|ab"), S("ab"), "0-1"},
    {S("ab|a"), S("ab"), "0-2"},
    {S("(a|ab)(c|bcd)"), S("abcd"), "0-4"},
    {S("a*|b"), S("bbb"), "0-0 1-1 2-2 3-3"},
    {S("b|a*"), S("bbb"), "0-1 1-2 2-3"},
    {S("x*|a"), S("a"), "0-0 1-1"},
    {S("(a|ab)c"), S("abc"), "0-3"},
    {S("(?:a|b|c)+"), S("cabd"), "0-3"},
    {S("|a"), S("a"), "0-0 1-1"},
    {S("a|"), S("a"), "0-1"},
    {S("(|a)+"), S("aa"), "0-0 1-1 2-2"},
    {S("(?:|a)*b"), S("aab"), "0-3"},
    {S("foo|foobar"), S("foobar"), "0-3"},
    {S("foobar|foo"), S("foobar"), "0-6"},
    {S("(?:a|aa)*b"), S("aaab"), "0-4"},
    {S("samwise|sam"), S("samwise"), "0-7"},
    /* repetition, greedy and lazy */
    {S("a*"), S("baaab"), "0-0 1-4 5-5"},
    {S("a+"), S("baaab"), "1-4"},
    {S("a?"), S("ba"), "0-0 1-2"},
    {S("a*?"), S("aaa"), "0-0 1-1 2-2 3-3"},
    {S("a+?"), S("aaa"), "0-1 1-2 2-3"},
    {S("a?\?"), S("aa"), "0-0 1-1 2-2"},
    {S("a?\?b"), S("ab"), "0-2"},
    {S("a{2}"), S("aaaaa"), "0-2 2-4"},
    {S("a{2,}"), S("aaaaa"), "0-5"},
    {S("a{2,3}"), S("aaaaa"), "0-3 3-5"},
    {S("a{2,3}?"), S("aaaaa"), "0-2 2-4"},
    {S("a{2,}?"), S("aaaaa"), "0-2 2-4"},
    {S("a{0}"), S("aaa"), "0-0 1-1 2-2 3-3"},
    {S("a{0,}"), S("aa"), "0-2"},
    {S("a{1,}"), S("aa"), "0-2"},
    {S("a{0,1}"), S("aa"), "0-1 1-2"},
    {S("a{1}"), S("aa"), "0-1 1-2"},
    {S("a{1,1}"), S("aa"), "0-1 1-2"},
    {S("(ab){2}"), S("abababa"), "0-4"},
    {S("(?:a{2}){2}"), S("aaaaa"), "0-4"},
    {S("<.*>"), S("<a><b>"), "0-6"},
    {S("<.*?>"), S("<a><b>"), "0-3 3-6"},
    {S("(a*)*"), S("b"), "0-0 1-1"},
    {S("(a*)+"), S("b"), "0-0 1-1"},
    {S("(a|b)*?c"), S("abc"), "0-3"},
    {S("(?:a?)*?b"), S("aab"), "0-3"},
    {S("(?:(?:a|)*)*"), S("aa"), "0-2"},
    {S("(?:a*)*"), S("aaa"), "0-3"},
    {S("(?:a+)+b"), S("aab"), "0-3"},
    {S("(a+|b+)*c"), S("aabbc"), "0-5"},
    {S("x{0,1000}"), S("xxx"), "0-3"},
    {S("(?:x{0,2}){2}"), S("xxxxx"), "0-4 4-5"},
    {S("(a){0}b"), S("ab"), "1-2"},
    /* case folding */
    {S("(?i)k"), S("KKk"), "0-3 3-4 4-5"},
    {S("(?i)K"), S("K"), "0-3"},
    {S("(?i)s+"), S("sSſ"), "0-4"},
    {S("(?i)ſ"), S("S"), "0-1"},
    {S("(?i)[k-m]+"), S("KkLlK"), "0-7"},
    {S("(?i)ß"), S("ẞ"), "0-3"},
    {S("(?i)σ+"), S("ΣσςΣ"), "0-8"},
    {S("(?i)ǅ+"), S("ǄǅǆǄ"), "0-8"},
    {S("(?i)é"), S("É"), "0-2"},
    {S("(?i)ÿ"), S("Ÿ"), "0-2"},
    {S("(?i)µ"), S("Μμ"), "0-2 2-4"},
    {S("(?i)[^k]"), S("Kkx"), "4-5"},
    {S("(?i)\\p{Lu}+"), S("aBc"), "0-3"},
    {S("(?i)[^\\p{Lu}]+"), S("aBc1"), "3-4"},
    {S("(?i)\\w+"), S("ſK"), "0-5"},
    {S("(?i)[[:upper:]]+"), S("abcXYZ"), "0-6"},
    {S("(?i)\\x{212A}"), S("k"), "0-1"},
    {S("(?i)Straße"), S("STRASSE STRAẞE"), "8-16"},
    {S("(?i)ǰ"), S("J\u030C"), ""},
    {S("(?i)[a-z]+"), S("ſKX"), "0-6"},
    /* UTF-8, and invalid input bytes as U+FFFD */
    {S("."), S("日"), "0-3"},
    {S("..."), S("日本語"), "0-9"},
    {S("[日本語]+"), S("x日本語y"), "1-10"},
    {S("."), S("\377"), "0-1"},
    {S("."), S("\342\202"), "0-1 1-2"},
    {S(".."), S("\342\202"), "0-2"},
    {S("."), S("\355\240\200"), "0-1 1-2 2-3"},
    {S("."), S("\300\200"), "0-1 1-2"},
    {S("."), S("\364\220\200\200"), "0-1 1-2 2-3 3-4"},
    {S("\uFFFD"), S("a\377b"), "1-2"},
    {S("[^a]+"), S("\377\376"), "0-2"},
    {S("a.c"), S("a\377c"), "0-3"},
    {S("a.c"), S("a\342\202c"), ""},
    {S("a..c"), S("a\342\202c"), "0-4"},
    {S("\\x{10FFFF}"), S("\U0010FFFF"), "0-4"},
    {S("."), S("\360\237\230"), "0-1 1-2 2-3"},
    {S("\\xff"), S("ÿ"), "0-2"},
    {S("\\xff"), S("\377"), ""},
    {S("é+"), S("éé"), "0-4"},
    {S("x*"), S("☺"), "0-0 3-3"},
};

Test(cel_regex, constructs_match_as_go)
{
    check_table(constructs, sizeof(constructs) / sizeof(constructs[0]));
}

/* ---- errors: Go's regexp.Compile texts --------------------------------------------------------------- */

static const struct err_case go_errors[] = {
    {S("(abc"), "error parsing regexp: missing closing ): `(abc`"},
    {S("("), "error parsing regexp: missing closing ): `(`"},
    {S("(a|b"), "error parsing regexp: missing closing ): `(a|b`"},
    {S("((a)"), "error parsing regexp: missing closing ): `((a)`"},
    {S("a)"), "error parsing regexp: unexpected ): `a)`"},
    {S(")"), "error parsing regexp: unexpected ): `)`"},
    {S("(a))"), "error parsing regexp: unexpected ): `(a))`"},
    {S("a|b)"), "error parsing regexp: unexpected ): `a|b)`"},
    {S("(a|b))"), "error parsing regexp: unexpected ): `(a|b))`"},
    {S("*"), "error parsing regexp: missing argument to repetition operator: `*`"},
    {S("+"), "error parsing regexp: missing argument to repetition operator: `+`"},
    {S("?"), "error parsing regexp: missing argument to repetition operator: `?`"},
    {S("*?"), "error parsing regexp: missing argument to repetition operator: `*?`"},
    {S("{2}"), "error parsing regexp: missing argument to repetition operator: `{2}`"},
    {S("a|*"), "error parsing regexp: missing argument to repetition operator: `*`"},
    {S("(*)"), "error parsing regexp: missing argument to repetition operator: `*`"},
    {S("(?:+)"), "error parsing regexp: missing argument to repetition operator: `+`"},
    {S("a**"), "error parsing regexp: invalid nested repetition operator: `**`"},
    {S("a*+"), "error parsing regexp: invalid nested repetition operator: `*+`"},
    {S("a?\?+"), "error parsing regexp: invalid nested repetition operator: `?\?+`"},
    {S("a*?*"), "error parsing regexp: invalid nested repetition operator: `*?*`"},
    {S("a*?\?"), "error parsing regexp: invalid nested repetition operator: `*?\?`"},
    {S("a{2}{3}"), "error parsing regexp: invalid nested repetition operator: `{2}{3}`"},
    {S("a{2}*"), "error parsing regexp: invalid nested repetition operator: `{2}*`"},
    {S("a{2}?*"), "error parsing regexp: invalid nested repetition operator: `{2}?*`"},
    {S("(?i)*"), "error parsing regexp: missing argument to repetition operator: `*`"},
    {S("x{1001}"), "error parsing regexp: invalid repeat count: `{1001}`"},
    {S("x{1000,1001}"), "error parsing regexp: invalid repeat count: `{1000,1001}`"},
    {S("x{2,1}"), "error parsing regexp: invalid repeat count: `{2,1}`"},
    {S("x{9876543210}"), "error parsing regexp: invalid repeat count: `{9876543210}`"},
    {S("x{1,9876543210}"), "error parsing regexp: invalid repeat count: `{1,9876543210}`"},
    {S("a{100000,}"), "error parsing regexp: invalid repeat count: `{100000,}`"},
    {S("(a{1000}){2}"), "error parsing regexp: invalid repeat count: `{2}`"},
    {S("(?:a{500}){3}"), "error parsing regexp: invalid repeat count: `{3}`"},
    {S("(?:[a-z]{4}){0,251}"), "error parsing regexp: invalid repeat count: `{0,251}`"},
    {S("((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})"),
     "error parsing regexp: invalid repeat count: `{2}`"},
    {S("\\z\\y"), "error parsing regexp: invalid escape sequence: `\\y`"},
    {S("\\8"), "error parsing regexp: invalid escape sequence: `\\8`"},
    {S("\\1"), "error parsing regexp: invalid escape sequence: `\\1`"},
    {S("\\x"), "error parsing regexp: invalid escape sequence: `\\x`"},
    {S("\\x{"), "error parsing regexp: invalid escape sequence: `\\x{`"},
    {S("\\x{zz}"), "error parsing regexp: invalid escape sequence: `\\x{z`"},
    {S("\\xZ1"), "error parsing regexp: invalid escape sequence: `\\xZ1`"},
    {S("\\xA"), "error parsing regexp: invalid escape sequence: `\\xA`"},
    {S("\\x{110000}"), "error parsing regexp: invalid escape sequence: `\\x{110000`"},
    {S("\\x{}"), "error parsing regexp: invalid escape sequence: `\\x{}`"},
    {S("\\C"), "error parsing regexp: invalid escape sequence: `\\C`"},
    {S("\\"), "error parsing regexp: trailing backslash at end of expression: ``"},
    {S("a\\"), "error parsing regexp: trailing backslash at end of expression: ``"},
    {S("\\é"), "error parsing regexp: invalid escape sequence: `\\é`"},
    {S("\\Q\\E*"), "error parsing regexp: missing argument to repetition operator: `*`"},
    {S("\\p"), "error parsing regexp: invalid character class range: `\\p`"},
    {S("\\pX"), "error parsing regexp: invalid character class range: `\\pX`"},
    {S("\\p{Foo}"), "error parsing regexp: invalid character class range: `\\p{Foo}`"},
    {S("\\p{"), "error parsing regexp: invalid character class range: `\\p{`"},
    {S("\\p{L"), "error parsing regexp: invalid character class range: `\\p{L`"},
    {S("\\P{Foo}"), "error parsing regexp: invalid character class range: `\\P{Foo}`"},
    {S("[a-z"), "error parsing regexp: missing closing ]: `[a-z`"},
    {S("[]"), "error parsing regexp: missing closing ]: `[]`"},
    {S("[^]"), "error parsing regexp: missing closing ]: `[^]`"},
    {S("[a"), "error parsing regexp: missing closing ]: `[a`"},
    {S("[a-"), "error parsing regexp: missing closing ]: `[a-`"},
    {S("[z-a]"), "error parsing regexp: invalid character class range: `z-a`"},
    {S("[a-Z]"), "error parsing regexp: invalid character class range: `a-Z`"},
    {S("(?i)[a-Z]"), "error parsing regexp: invalid character class range: `a-Z`"},
    {S("[a-\\d]"), "error parsing regexp: invalid escape sequence: `\\d`"},
    {S("[[:foo:]]"), "error parsing regexp: invalid character class range: `[:foo:]`"},
    {S("[[:^foo:]]"), "error parsing regexp: invalid character class range: `[:^foo:]`"},
    {S("[\\p{Foo}]"), "error parsing regexp: invalid character class range: `\\p{Foo}`"},
    {S("[\\Q]"), "error parsing regexp: invalid escape sequence: `\\Q`"},
    {S("[\\z]"), "error parsing regexp: invalid escape sequence: `\\z`"},
    {S("(?x)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"},
    {S("(?"), "error parsing regexp: invalid or unsupported Perl syntax: `(?`"},
    {S("(?i"), "error parsing regexp: invalid or unsupported Perl syntax: `(?i`"},
    {S("(?-)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?-)`"},
    {S("(?i-)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?i-)`"},
    {S("(?--i)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?--`"},
    {S("(?P=n)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?P`"},
    {S("(?P>n)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?P`"},
    {S("(?<"), "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"},
    {S("(?P<"), "error parsing regexp: invalid or unsupported Perl syntax: `(?P`"},
    {S("(?!a)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"},
    {S("(?=a)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
    {S("(?#c)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?#`"},
    {S("(?P<name>a"), "error parsing regexp: missing closing ): `(?P<name>a`"},
    {S("(?P<name>"), "error parsing regexp: missing closing ): `(?P<name>`"},
    {S("(?P<name"), "error parsing regexp: invalid named capture: `(?P<name`"},
    {S("(?P<x y>a)"), "error parsing regexp: invalid named capture: `(?P<x y>`"},
    {S("(?P<>a)"), "error parsing regexp: invalid named capture: `(?P<>`"},
    {S("(?P<é>a)"), "error parsing regexp: invalid named capture: `(?P<é>`"},
    {S("\377"), "error parsing regexp: invalid UTF-8: `\377`"},
    {S("a\377b"), "error parsing regexp: invalid UTF-8: `\377b`"},
    {S("[\377]"), "error parsing regexp: invalid UTF-8: `\377]`"},
    {S("[\\\377]"), "error parsing regexp: invalid UTF-8: `\377]`"},
    {S("\\\377"), "error parsing regexp: invalid UTF-8: `\377`"},
    {S("(?P<a\377>x)"), "error parsing regexp: invalid UTF-8: `\377`"},
    {S("(?P<a\377"), "error parsing regexp: invalid UTF-8: `\377`"},
    {S("\\p{\377}"), "error parsing regexp: invalid UTF-8: `\377`"},
    {S("\\p\377"), "error parsing regexp: invalid UTF-8: `\377`"},
    {S("(?i\377)"), "error parsing regexp: invalid UTF-8: `\377)`"},
    {S("\\Qa\377b\\Ec"), "error parsing regexp: invalid UTF-8: `\377b`"},
};

Test(cel_regex, errors_are_gos_texts)
{
    for (size_t i = 0; i < sizeof(go_errors) / sizeof(go_errors[0]); i++)
        expect_error(go_errors[i].pat, go_errors[i].plen, go_errors[i].want);
}

Test(cel_regex, error_examples_of_the_api)
{
    expect_error(S("(abc"), "error parsing regexp: missing closing ): `(abc`");
    expect_error(S("a**"), "error parsing regexp: invalid nested repetition operator: `**`");
    expect_error(S("*"), "error parsing regexp: missing argument to repetition operator: `*`");
    /* \z is the end of the text; in a class it is no escape at all. */
    expect_error(S("[\\z]"), "error parsing regexp: invalid escape sequence: `\\z`");
}

Test(cel_regex, go_1_25_syntax)
{
    /* (?<name>...) as well as (?P<name>...). */
    cr_expect(eq(str, (char *)find_from("(?<year>\\d{4})-(?P<m>\\d\\d)", "on 2024-05-01", 0), "3-10"));
    expect_error(S("(?<=a)b"), "error parsing regexp: invalid named capture: `(?<=a)b`");
    expect_error(S("(?<name"), "error parsing regexp: invalid named capture: `(?<name`");
    expect_error(S("(?<>a)"), "error parsing regexp: invalid named capture: `(?<>`");
    expect_error(S("(?<x y>a)"), "error parsing regexp: invalid named capture: `(?<x y>`");
    /* Unicode class names: case, spaces, '_' and '-' ignored; aliases; LC, Cn, Any, Assigned, ASCII. */
    cr_expect(eq(str, (char *)find_from("\\pl+", "12ab3", 0), "2-4"));
    cr_expect(eq(str, (char *)find_from("\\p{greek}+", "aαβ", 0), "1-5"));
    cr_expect(eq(str, (char *)find_from("\\p{Letter}+", "1ab", 0), "1-3"));
    cr_expect(eq(str, (char *)find_from("\\p{Uppercase_Letter}+", "aBCd", 0), "1-3"));
    cr_expect(eq(str, (char *)find_from("\\p{upper case-let ter}+", "aBCd", 0), "1-3"));
    cr_expect(eq(str, (char *)find_from("\\p{__upper case-let ter}+", "aBCd", 0), "1-3"));
    cr_expect(eq(str, (char *)find_from("\\p{Canadian_Aboriginal}", "xᐁ", 0), "1-4"));
    cr_expect(eq(str, (char *)find_from("\\p{digit}+", "a١2", 0), "1-4"));
    cr_expect(eq(str, (char *)find_from("\\p{LC}+", "1aBǅʰ", 0), "1-5"));
    cr_expect(eq(str, (char *)find_from("\\p{Cased_Letter}+", "1aB", 0), "1-3"));
    cr_expect(eq(str, (char *)find_from("\\p{Cn}", "a\xcd\xb8", 0), "1-3")); /* U+0378 is unassigned */
    cr_expect(eq(str, (char *)find_from("\\pC", "a\xcd\xb8", 0), "1-3"));    /* C includes Cn */
    cr_expect(eq(str, (char *)find_from("\\p{^Assigned}", "a\xcd\xb8", 0), "1-3"));
    cr_expect(eq(str, (char *)find_from("\\p{Assigned}+", "ab\xcd\xb8", 0), "0-2"));
    cr_expect(eq(str, (char *)find_from("\\p{ASCII}+", "éab", 0), "2-4"));
    cr_expect(eq(str, (char *)find_from("(?i)\\p{ascii}+", "ſ\xe2\x84\xaaé", 0), "0-5"));
    cr_expect(eq(str, (char *)find_from("\\p{Any}+", "a\nb", 0), "0-3"));
    cr_expect(eq(str, (char *)find_from("\\p{^Any}", "a\nb", 0), ""));
    expect_error(S("\\p{Grek}"), "error parsing regexp: invalid character class range: `\\p{Grek}`");
    expect_error(S("\\p{L&}"), "error parsing regexp: invalid character class range: `\\p{L&}`");
    /* A case-folded literal and a plain one stay apart in alternations (fixed in Go by
     * golang.org/issue/59007; Go 1.19 matched "k" here). */
    cr_expect(eq(str, (char *)find_from("(?i:k)x|K", "k K", 0), "2-3"));
    cr_expect(eq(str, (char *)find_from("K|(?i:k)x", "kx", 0), "0-2"));
}

/* ---- searches that start past 0 ---------------------------------------------------------------------- */

Test(cel_regex, anchors_keep_the_text_context_past_from)
{
    cr_expect(eq(str, (char *)find_from("^a", "aa", 1), ""));
    cr_expect(eq(str, (char *)find_from("\\Aa", "aa", 1), ""));
    cr_expect(eq(str, (char *)find_from("^", "ab", 1), ""));
    cr_expect(eq(str, (char *)find_from("(?m)^a", "b\na", 1), "2-3"));
    cr_expect(eq(str, (char *)find_from("(?m)^a", "ba", 1), ""));
    cr_expect(eq(str, (char *)find_from("a$", "aba", 1), "2-3"));
    cr_expect(eq(str, (char *)find_from("$", "ab", 1), "2-2"));
    cr_expect(eq(str, (char *)find_from("\\z", "ab", 2), "2-2"));
    cr_expect(eq(str, (char *)find_from("\\bb", "ab", 1), ""));
    cr_expect(eq(str, (char *)find_from("\\Bb", "ab", 1), "1-2"));
    cr_expect(eq(str, (char *)find_from("\\bb", "a b", 2), "2-3"));
    cr_expect(eq(str, (char *)find_from("\\b", "ab", 1), "2-2"));
    cr_expect(eq(str, (char *)find_from("\\b", "é", 1), ""));
    cr_expect(eq(str, (char *)find_from("a", "aaa", 3), ""));
    cr_expect(eq(str, (char *)find_from("a*", "aaa", 3), "3-3"));
    cr_expect(eq(str, (char *)find_from("", "abc", 3), "3-3"));
    cr_expect(eq(str, (char *)find_from("", "abc", 4), "")); /* from > len */
    cr_expect(eq(str, (char *)find_from("b+", "abbab", 2), "2-3"));
    cr_expect(eq(str, (char *)find_from("foo", "foo foo", 1), "4-7"));
    /* From inside a UTF-8 sequence: its continuation bytes read as U+FFFD each. */
    cr_expect(eq(str, (char *)find_from(".", "é", 1), "1-2"));
    cr_expect(eq(str, (char *)find_from("\\x{FFFD}", "aé", 2), "2-3"));
}

Test(cel_regex, empty_matches)
{
    cr_expect(eq(str, (char *)find_from("a*", "baaab", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("a*", "baaab", 1), "1-4"));
    cr_expect(eq(str, (char *)find_from("a*?", "aaa", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("", "", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("()", "x", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("(?:)|a", "a", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("a|(?:)", "a", 0), "0-1"));
    cr_expect(eq(str, (char *)find_from("x{0}", "x", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("(|a)*", "aa", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("(|a)+", "aa", 0), "0-0"));
    cr_expect(eq(str, (char *)find_from("(a|)*", "aa", 0), "0-2"));
}

Test(cel_regex, leftmost_first_not_longest)
{
    /* Go's regexp (and RE2, Perl) prefer the first alternative; POSIX would take the longest. */
    cr_expect(eq(str, (char *)find_from("a|ab", "ab", 0), "0-1"));
    cr_expect(eq(str, (char *)find_from("ab|a", "ab", 0), "0-2"));
    cr_expect(eq(str, (char *)find_from("(a|ab)(c|bcd)", "abcd", 0), "0-4"));
    cr_expect(eq(str, (char *)find_from("(a+?)(b|bc)", "aabc", 0), "0-3"));
    cr_expect(eq(str, (char *)find_from("a*?b|a", "aab", 0), "0-3"));
    /* Leftmost wins over first: the match at 1 beats a better alternative further right. */
    cr_expect(eq(str, (char *)find_from("bc|abcd", "xabcd", 0), "1-5"));
}

Test(cel_regex, matches_like_cel)
{
    /* CEL's matches() is an unanchored search. */
    cr_expect(matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "my-service-1"));
    cr_expect(not(matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "My-service")));
    cr_expect(matches("ell", "hello"));
    cr_expect(matches("(?i)HELLO", "hello"));
    cr_expect(not(matches("^ell", "hello")));
    cr_expect(matches("^\\d+(\\.\\d+)?$", "10.5"));
    cr_expect(matches("^(Guaranteed|Burstable|BestEffort)$", "Burstable"));
    cr_expect(matches("^[A-Za-z0-9][-A-Za-z0-9_.]*$", "kubernetes.io_zone-1"));
}

Test(cel_regex, nul_bytes_are_characters)
{
    struct ks_re *re = compile_ok(S("a\0b"));
    struct ks_re_scratch *sc;
    size_t s, e;

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    cr_expect(ks_re_find(re, S("xa\0b"), 0, &s, &e, sc));
    cr_expect(eq(sz, s, 1));
    cr_expect(eq(sz, e, 4));
    cr_expect(not(ks_re_find(re, S("xab"), 0, &s, &e, sc)));
    ks_re_destroy(re);
    re = compile_ok(S("[^\\x00]+"));
    cr_expect(ks_re_find(re, S("\0ab\0"), 0, &s, &e, sc));
    cr_expect(eq(sz, s, 1));
    cr_expect(eq(sz, e, 3));
    ks_re_destroy(re);
    ks_re_scratch_destroy(sc);
}

/* ---- limits ----------------------------------------------------------------------------------------- */

static char *repeat_str(const char *unit, size_t n, const char *tail_unit, size_t tail_n)
{
    size_t a = strlen(unit), b = tail_unit ? strlen(tail_unit) : 0;
    char *s = malloc(a * n + b * tail_n + 1), *p = s;

    cr_assert(not(eq(ptr, s, NULL)));
    for (size_t i = 0; i < n; i++, p += a)
        memcpy(p, unit, a);
    for (size_t i = 0; i < tail_n; i++, p += b)
        memcpy(p, tail_unit, b);
    *p = '\0';
    return s;
}

/* The error text must be "error parsing regexp: @code: `" followed by the whole pattern. */
static void expect_whole_pattern_error(const char *pat, const char *code)
{
    size_t len = strlen(pat), cap = len + 128;
    char *err = malloc(cap), *want = malloc(cap);
    struct ks_re *re;

    snprintf(want, cap, "error parsing regexp: %s: `%s`", code, pat);
    cr_expect(eq(int, ks_re_compile(pat, len, &re, err, cap), -EINVAL));
    cr_expect(eq(str, err, want));
    free(err);
    free(want);
}

Test(cel_regex, nesting_limit)
{
    char *ok = repeat_str("(", 999, ")", 999), *deep = repeat_str("(", 1000, ")", 1000);
    char *ok2 = repeat_str("(?:", 999, ")*", 999), *deep2 = repeat_str("(?:", 1000, ")*", 1000);
    struct ks_re *re;
    char err[128];

    cr_expect(eq(int, ks_re_compile(ok, strlen(ok), &re, err, sizeof(err)), 0));
    ks_re_destroy(re);
    cr_expect(eq(int, ks_re_compile(ok2, strlen(ok2), &re, err, sizeof(err)), 0));
    ks_re_destroy(re);
    expect_whole_pattern_error(deep, "expression nests too deeply");
    expect_whole_pattern_error(deep2, "expression nests too deeply");
    free(ok);
    free(deep);
    free(ok2);
    free(deep2);
}

Test(cel_regex, size_limits)
{
    char *wide = repeat_str("(xx?){1000}", 1000, NULL, 0), *runes = repeat_str("\\pL", 27000, NULL, 0);
    char *many_alts = repeat_str("(", 1, "|", 12345 + 1);
    struct ks_re *re;
    char err[128];

    expect_whole_pattern_error(wide, "expression too large");
    expect_whole_pattern_error(runes, "expression too large");
    many_alts[strlen(many_alts) - 1] = ')';
    cr_expect(eq(int, ks_re_compile(many_alts, strlen(many_alts), &re, err, sizeof(err)), 0));
    ks_re_destroy(re);
    /* Counts: 1000 is the largest, also as the product of nested counts. */
    cr_expect(eq(int, ks_re_compile(S("(?:[a-z]{4}){0,250}"), &re, err, sizeof(err)), 0));
    ks_re_destroy(re);
    cr_expect(eq(
        int, ks_re_compile(S("((((((((((x{1}){2}){2}){2}){2}){2}){2}){2}){2}){2})"), &re, err, sizeof(err)),
        0));
    ks_re_destroy(re);
    cr_expect(eq(int, ks_re_compile(S("x{1000}"), &re, err, sizeof(err)), 0));
    ks_re_destroy(re);
    free(wide);
    free(runes);
    free(many_alts);
}

Test(cel_regex, long_repetition_matches)
{
    char *text = repeat_str("ab", 1000, "c", 1);
    struct ks_re *re = compile_ok(S("^(?:ab){1000}c$"));
    struct ks_re_scratch *sc;
    size_t s, e;

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    cr_expect(ks_re_find(re, text, strlen(text), 0, &s, &e, sc));
    cr_expect(eq(sz, e, 2001));
    cr_expect(not(ks_re_find(re, text + 2, strlen(text) - 2, 0, &s, &e, sc)));
    ks_re_destroy(re);
    ks_re_scratch_destroy(sc);
    free(text);
}

/* Patterns that make a backtracker exponential run in one pass here (no wall time asserted). */
Test(cel_regex, pathological_patterns_finish)
{
    static const char *const pats[] = {"(x+x+)+y", "(?:x*)*y", "(x|x)*y", "(?:x?){30}x{30}", "(?:(?:x*)*)*y"};
    size_t n = 50000;
    char *text = repeat_str("x", n, NULL, 0);
    struct ks_re_scratch *sc;

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
        struct ks_re *re = compile_ok(pats[i], strlen(pats[i]));
        size_t s = 0, e = 0;
        bool m = ks_re_find(re, text, n, 0, &s, &e, sc);
        if (i == 3) {
            cr_expect(m);
            cr_expect(eq(sz, e - s, 60));
        } else {
            cr_expect(not(m), "%s", pats[i]);
        }
        ks_re_destroy(re);
    }
    ks_re_scratch_destroy(sc);
    free(text);
}

/* ---- API contract --------------------------------------------------------------------------------- */

Test(cel_regex, error_buffer_is_truncated_and_terminated)
{
    struct ks_re *re = (struct ks_re *)1;
    char err[16];

    memset(err, 'x', sizeof(err));
    cr_expect(eq(int, ks_re_compile(S("(abc"), &re, err, sizeof(err)), -EINVAL));
    cr_expect(eq(str, err, "error parsing r"));
    cr_expect(eq(ptr, re, NULL));
    cr_expect(eq(int, ks_re_compile(S("(abc"), &re, NULL, 0), -EINVAL));
    cr_expect(eq(int, ks_re_compile(S("abc"), &re, err, sizeof(err)), 0));
    cr_expect(eq(str, err, ""));
    ks_re_destroy(re);
    ks_re_destroy(NULL);
    ks_re_scratch_destroy(NULL);
}

Test(cel_regex, one_scratch_serves_many_regexes)
{
    struct ks_re_scratch *sc;
    struct ks_re *small = compile_ok(S("b")), *big = compile_ok(S("(?:a|b|c){50}z"));
    char *text = repeat_str("abc", 20, "z", 1);
    size_t s, e;

    cr_assert(eq(int, ks_re_scratch_create(&sc), 0));
    for (int round = 0; round < 3; round++) {
        cr_expect(ks_re_find(small, S("aab"), 0, &s, &e, sc));
        cr_expect(eq(sz, s, 2));
        cr_expect(ks_re_find(big, text, strlen(text), 0, &s, &e, sc));
        cr_expect(eq(sz, s, 10));
        cr_expect(eq(sz, e, 61));
    }
    ks_re_destroy(small);
    ks_re_destroy(big);
    ks_re_scratch_destroy(sc);
    free(text);
}

struct worker {
    const struct ks_re *re;
    int hits;
};

static void *search_worker(void *arg)
{
    struct worker *w = arg;
    struct ks_re_scratch *sc;
    static const char text[] = "key=value; other=thing; last=one";

    if (ks_re_scratch_create(&sc))
        return NULL;
    for (int i = 0; i < 2000; i++) {
        size_t pos = 0, s, e;
        while (ks_re_find(w->re, text, sizeof(text) - 1, pos, &s, &e, sc)) {
            w->hits++;
            pos = e;
        }
    }
    ks_re_scratch_destroy(sc);
    return NULL;
}

Test(cel_regex, threads_share_a_compiled_regex)
{
    struct ks_re *re = compile_ok(S("\\w+=\\w+"));
    struct worker w[4];
    pthread_t t[4];

    for (int i = 0; i < 4; i++) {
        w[i].re = re;
        w[i].hits = 0;
        cr_assert(eq(int, pthread_create(&t[i], NULL, search_worker, &w[i]), 0));
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_expect(eq(int, w[i].hits, 3 * 2000));
    }
    ks_re_destroy(re);
}
