/*
 * yaml_json.c - a YAML node as the JSON value kubectl sends for it.
 *
 * kubectl, and every Kubernetes component that reads YAML, converts it to JSON with
 * sigs.k8s.io/yaml: go-yaml v2 decodes the YAML 1.1 way (resolve.go), then encoding/json
 * writes the result. So an unquoted scalar is typed by its text: null ("", ~, null, Null,
 * NULL), a boolean (y, yes, true, on and their n/no/false/off opposites, in three cases),
 * an integer (decimal, 0x hex, 0o or leading-0 octal, 0b binary, a sign, underscores
 * ignored; past int64 an unsigned one), a float (the YAML-style decimal forms, .inf,
 * .nan), or else a string; a quoted or block scalar is a string. A number is then written
 * as Go's JSON encoder writes it: integers in decimal, floats in their shortest form,
 * 'e' notation below 1e-6 and from 1e21 ("1e+21"), no exponent zero padding below one.
 * Map keys that are integers or booleans become their decimal or "true"/"false" text.
 *
 * The JSON tree of ksched/internal/json_tree.h shares the node type: its numbers are plain
 * scalars whose text Go wrote, which these rules type as the same numbers.
 */
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum word { WORD_NONE, WORD_NULL, WORD_TRUE, WORD_FALSE, WORD_NAN, WORD_INF, WORD_MINUS_INF };

struct word_entry {
    char text[6];
    enum word w;
};

/* The entry of @s among @words (all @len bytes long), WORD_NONE when absent. */
static enum word find_word(const char *s, size_t len, const struct word_entry *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (memcmp(words[i].text, s, len) == 0)
            return words[i].w;
    }
    return WORD_NONE;
}

#define FIND(words) find_word(s, len, words, sizeof(words) / sizeof(words[0]))

/* go-yaml v2's resolve table: the words that are not strings, by length. */
static enum word word_of(const char *s, size_t len)
{
    static const struct word_entry one[] = {
        {"~", WORD_NULL}, {"y", WORD_TRUE}, {"Y", WORD_TRUE}, {"n", WORD_FALSE}, {"N", WORD_FALSE}};
    static const struct word_entry two[] = {{"on", WORD_TRUE},  {"On", WORD_TRUE},  {"ON", WORD_TRUE},
                                            {"no", WORD_FALSE}, {"No", WORD_FALSE}, {"NO", WORD_FALSE}};
    static const struct word_entry three[] = {{"yes", WORD_TRUE},  {"Yes", WORD_TRUE},  {"YES", WORD_TRUE},
                                              {"off", WORD_FALSE}, {"Off", WORD_FALSE}, {"OFF", WORD_FALSE}};
    static const struct word_entry four[] = {{"true", WORD_TRUE}, {"True", WORD_TRUE}, {"TRUE", WORD_TRUE},
                                             {"null", WORD_NULL}, {"Null", WORD_NULL}, {"NULL", WORD_NULL},
                                             {".nan", WORD_NAN},  {".NaN", WORD_NAN},  {".NAN", WORD_NAN},
                                             {".inf", WORD_INF},  {".Inf", WORD_INF},  {".INF", WORD_INF}};
    static const struct word_entry five[] = {
        {"false", WORD_FALSE},     {"False", WORD_FALSE},     {"FALSE", WORD_FALSE},
        {"+.inf", WORD_INF},       {"+.Inf", WORD_INF},       {"+.INF", WORD_INF},
        {"-.inf", WORD_MINUS_INF}, {"-.Inf", WORD_MINUS_INF}, {"-.INF", WORD_MINUS_INF}};
    switch (len) {
    case 0:
        return WORD_NULL;
    case 1:
        return FIND(one);
    case 2:
        return FIND(two);
    case 3:
        return FIND(three);
    case 4:
        return FIND(four);
    case 5:
        return FIND(five);
    default:
        return WORD_NONE;
    }
}

#undef FIND

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

/*
 * Go's strconv.ParseUint(s, 0, 64) / ParseInt(s, 0, 64) on text without underscores: an
 * optional sign (@sign_ok), then 0x / 0o / 0b / a leading 0 (octal), or decimal digits.
 * 0 and *mag, *neg; -1 when the syntax is wrong or the magnitude passes UINT64_MAX.
 */
static int parse_go_int(const char *s, bool sign_ok, uint64_t *mag, bool *neg)
{
    unsigned base = 10;
    *neg = false;
    if (sign_ok && (*s == '+' || *s == '-'))
        *neg = *s++ == '-';
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    else if (s[0] == '0' && s[1])
        base = 8, s += 1;
    if (!*s)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d = (unsigned)digit_value(*s);
        if (d >= base || v > (UINT64_MAX - d) / base)
            return -1;
        v = v * base + d;
    }
    *mag = v;
    return 0;
}

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    } else {
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9')
                s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* strconv.ParseFloat of a decimal text: false when it does not parse or is out of range. */
static bool parse_float(const char *s, double *out)
{
    char *end;
    errno = 0;
    double f = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || isinf(f) || isnan(f))
        return false;
    *out = f;
    return true;
}

/* The plain scalar @s (no underscores yet) as an integer or float, as resolve.go's digit/sign branch. */
static enum ks_json_type number(const char *s, size_t len, struct ks_json_number *num)
{
    char buf[128];
    size_t n = 0;
    if (len >= sizeof(buf))
        return KS_JSON_STRING; /* no number of that length parses to a finite value as an integer */
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '_')
            buf[n++] = s[i];
    }
    buf[n] = '\0';
    uint64_t mag;
    bool neg;
    if (parse_go_int(buf, true, &mag, &neg) == 0 &&
        (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
        num->form = KS_JSON_INT;
        num->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        return KS_JSON_NUMBER;
    }
    if (parse_go_int(buf, false, &mag, &neg) == 0) {
        num->form = KS_JSON_UINT;
        num->u = mag;
        return KS_JSON_NUMBER;
    }
    if (yaml_style_float(buf) && parse_float(buf, &num->f)) {
        num->form = KS_JSON_FLOAT;
        return KS_JSON_NUMBER;
    }
    return KS_JSON_STRING;
}

enum ks_json_type ks_yaml_json_type(const struct ks_yaml_node *n, bool *truth, struct ks_json_number *num)
{
    if (!n)
        return KS_JSON_NULL;
    if (n->kind == KS_YAML_MAP)
        return KS_JSON_OBJECT;
    if (n->kind == KS_YAML_SEQ)
        return KS_JSON_ARRAY;
    if (ks_yaml_surely_string(n)) /* resolve.go's hint: by its first byte */
        return KS_JSON_STRING;
    const char *s = n->str;
    switch (word_of(s, n->len)) {
    case WORD_NULL:
        return KS_JSON_NULL;
    case WORD_TRUE:
    case WORD_FALSE:
        if (truth)
            *truth = word_of(s, n->len) == WORD_TRUE;
        return KS_JSON_BOOL;
    case WORD_NAN:
    case WORD_INF:
    case WORD_MINUS_INF:
        num->form = KS_JSON_FLOAT;
        num->f = s[1] == 'n' || s[1] == 'N' ? NAN : s[0] == '-' ? -INFINITY : INFINITY;
        return KS_JSON_NUMBER;
    case WORD_NONE:
        break;
    }
    if (s[0] == '.') {
        /* strconv.ParseFloat: a decimal form only (".5", ".5e3") */
        num->form = KS_JSON_FLOAT;
        return yaml_style_float(s) && parse_float(s, &num->f) ? KS_JSON_NUMBER : KS_JSON_STRING;
    }
    if (s[0] == '+' || s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
        return number(s, n->len, num);
    return KS_JSON_STRING;
}

/*
 * The shortest decimal digits that read back as @f (> 0, finite) and the exponent of the
 * first one: f = 0.D1 D2 ... x 10^(*point) with *point the position of the decimal point.
 */
static void shortest(double f, char *digits, int *ndigits, int *point)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    /* buf: d[.ddd]e[+-]XX */
    int n = 0;
    const char *c = buf;
    for (; *c && *c != 'e'; c++) {
        if (*c >= '0' && *c <= '9')
            digits[n++] = *c;
    }
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *ndigits = n;
    *point = atoi(c + 1) + 1;
}

int ks_json_number_text(const struct ks_json_number *num, char *buf, size_t len)
{
    if (num->form == KS_JSON_INT)
        return snprintf(buf, len, "%" PRId64, num->i) < (int)len ? 0 : -ENOSPC;
    if (num->form == KS_JSON_UINT)
        return snprintf(buf, len, "%" PRIu64, num->u) < (int)len ? 0 : -ENOSPC;
    double f = num->f;
    if (isnan(f) || isinf(f))
        return -EDOM;
    char digits[24], out[64];
    int nd, point, at = 0;
    if (signbit(f))
        out[at++] = '-';
    if (f == 0) {
        out[at++] = '0';
        out[at] = '\0';
    } else {
        double a = fabs(f);
        shortest(a, digits, &nd, &point);
        if (a < 1e-6 || a >= 1e21) {
            /* 'e': d[.ddd]e±XX, then encoding/json trims "e-0X" to "e-X" */
            int exp = point - 1;
            at += snprintf(out + at, sizeof(out) - (size_t)at, "%c%s%s", digits[0], nd > 1 ? "." : "",
                           digits + 1);
            if (exp < 0 && exp > -10)
                snprintf(out + at, sizeof(out) - (size_t)at, "e-%d", -exp);
            else
                snprintf(out + at, sizeof(out) - (size_t)at, "e%c%02d", exp < 0 ? '-' : '+',
                         exp < 0 ? -exp : exp);
        } else if (point <= 0) {
            at += snprintf(out + at, sizeof(out) - (size_t)at, "0.");
            for (int i = 0; i < -point; i++)
                out[at++] = '0';
            snprintf(out + at, sizeof(out) - (size_t)at, "%s", digits);
        } else {
            for (int i = 0; i < point; i++)
                out[at++] = i < nd ? digits[i] : '0';
            out[at] = '\0';
            if (nd > point)
                snprintf(out + at, sizeof(out) - (size_t)at, ".%s", digits + point);
        }
    }
    return snprintf(buf, len, "%s", out) < (int)len ? 0 : -ENOSPC;
}

const char *ks_yaml_json_key(const struct ks_yaml_node *key, char *buf, size_t len)
{
    struct ks_json_number num;
    bool truth;
    if (key->kind != KS_YAML_SCALAR)
        return key->str;
    switch (ks_yaml_json_type(key, &truth, &num)) {
    case KS_JSON_BOOL:
        return truth ? "true" : "false";
    case KS_JSON_NUMBER:
        if (num.form != KS_JSON_FLOAT && ks_json_number_text(&num, buf, len) == 0)
            return buf;
        return key->str;
    default:
        return key->str;
    }
}

bool ks_json_number_int(const struct ks_json_number *num, int64_t *out)
{
    switch (num->form) {
    case KS_JSON_INT:
        *out = num->i;
        return true;
    case KS_JSON_UINT:
        return false;
    case KS_JSON_FLOAT:
        /* Go writes an integral float below 1e21 without fraction or exponent ("1000"); past
         * int64 (below 1e21) its text is an integer ParseInt refuses */
        if (num->f != num->f || fabs(num->f) >= 9223372036854775808.0 || num->f != (double)(int64_t)num->f)
            return false;
        *out = (int64_t)num->f;
        return true;
    }
    return false;
}
