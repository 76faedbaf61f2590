/*
 * config_decode.c - decoding helpers for KubeSchedulerConfiguration and plugin args
 * (see include/ksched/internal/config_decode.h).
 *
 * Mirrors the parts of upstream that sit under the scheduler's config types: strict
 * decoding (unknown fields rejected, as the scheme's strict serializer does), nested args
 * decoding by apiVersion and kind (kube-scheduler config/v1 types.go, decodeNestedObjects),
 * metav1.Duration (Go time.ParseDuration / Duration.String), IsQualifiedName from
 * apimachinery's validation, and validateFunctionShape / ResourceSpec lists from
 * pkg/scheduler/apis/config/validation/validation_pluginargs.go.
 */
#include "ksched/internal/config_decode.h"

#include "ksched/base/intern.h"
#include "ksched/internal/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool listed(const char *const *fields, const char *key)
{
    for (int i = 0; fields && fields[i]; i++) {
        if (strcmp(fields[i], key) == 0)
            return true;
    }
    return false;
}

/* Strict decoding: every key must be known; @extra lists more allowed keys (may be NULL). */
static int strict(struct ks_decoder *d, const struct ks_yaml_node *map, const char *const *fields,
                  const char *const *extra)
{
    if (map->kind != KS_YAML_MAP)
        return ks_dec_fail(d, map, 0, "expected a map, found %s", ks_yaml_kind_name(map));
    for (uint32_t i = 0; i < map->n; i++) {
        const struct ks_yaml_node *key = map->pairs[i].key;
        if (key->kind != KS_YAML_SCALAR)
            return ks_dec_fail(d, key, 0, "expected a string key, found %s", ks_yaml_kind_name(key));
        if (!listed(fields, key->str) && !listed(extra, key->str))
            return ks_cfg_fail_at(d, key, 0, key->str, "unknown field \"%s\"", key->str);
    }
    return 0;
}

int ks_cfg_strict(struct ks_decoder *d, const struct ks_yaml_node *map, const char *const *fields)
{
    return strict(d, map, fields, NULL);
}

/* Extend the path by "name", "a.b", "[3]" or "[3].name"; returns the length to restore. */
static size_t push_field(struct ks_decoder *d, const char *field)
{
    size_t saved = d->plen;
    while (field && *field) {
        if (*field == '[') {
            char *end;
            unsigned long i = strtoul(field + 1, &end, 10);
            ks_dec_push_index(d, (uint32_t)i);
            field = *end == ']' ? end + 1 : end;
            if (*field == '.')
                field++;
        } else {
            const char *br = strchr(field, '[');
            if (!br) {
                ks_dec_push(d, field);
                break;
            }
            char part[KS_DECODE_PATH_MAX];
            snprintf(part, sizeof(part), "%.*s", (int)(br - field), field);
            ks_dec_push(d, part);
            field = br;
        }
    }
    return saved;
}

int ks_cfg_fail_at(struct ks_decoder *d, const struct ks_yaml_node *node, int line, const char *field,
                   const char *fmt, ...)
{
    char msg[KS_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t saved = push_field(d, field);
    int rc = ks_dec_fail(d, node, line, "%s", msg);
    ks_dec_pop(d, saved);
    return rc;
}

int ks_cfg_args_begin(struct ks_decoder *d, const struct ks_yaml_node *args, const char *kind,
                      const char *api_version, const char *const *fields, enum ks_config_version *version)
{
    static const char *const meta[] = {"apiVersion", "kind", NULL};
    const char *av = NULL, *k = NULL;
    int rc;

    if (ks_config_version_parse(api_version, version) < 0)
        *version = KS_CONFIG_V1;
    if (!args || ks_yaml_is_null(args))
        return 0;
    if ((rc = strict(d, args, fields, meta)) || (rc = ks_dec_string(d, args, "apiVersion", &av)) ||
        (rc = ks_dec_string(d, args, "kind", &k)))
        return rc;
    if (av && ks_config_version_parse(av, version) < 0) {
        return ks_cfg_fail_at(d, ks_yaml_get(args, "apiVersion"), 0, "apiVersion",
                              "Unsupported value: \"%s\": no kind \"%s\" is registered for this version", av,
                              kind);
    }
    if (k && strcmp(k, kind) != 0)
        return ks_cfg_fail_at(d, ks_yaml_get(args, "kind"), 0, "kind",
                              "Invalid value: \"%s\": must be \"%s\"", k, kind);
    return 0;
}

/* ks_dec_list that also returns the list node in *seq (NULL when absent), for error lines. */
static int list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t elem_size,
                uint32_t *n, void **items, const struct ks_yaml_node **seq, ks_dec_item_fn item)
{
    *seq = NULL;
    int rc = ks_dec_seq(d, map, key, seq);
    if (rc || !*seq)
        return rc;
    return ks_dec_list(d, map, key, elem_size, n, items, item, NULL);
}

static int resource_spec(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    static const char *const fields[] = {"name", "weight", NULL};
    struct ks_resource_spec *r = elem;
    int rc;

    (void)ctx;
    if ((rc = strict(d, n, fields, NULL)) || (rc = ks_dec_id(d, n, "name", &r->name)) ||
        (rc = ks_dec_int64(d, n, "weight", &r->weight)))
        return rc;
    return 0;
}

int ks_cfg_resources(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                     struct ks_resource_spec **out, const struct ks_yaml_node **seq)
{
    return list(d, map, key, sizeof(**out), n, (void **)out, seq, resource_spec);
}

int ks_cfg_default_resources(struct ks_arena *a, uint32_t *n, struct ks_resource_spec **out)
{
    struct ks_resource_spec *r = ks_arena_calloc(a, 2, sizeof(*r));
    if (!r)
        return -ENOMEM;
    r[0].name = ks_intern("cpu");
    r[1].name = ks_intern("memory");
    if (r[0].name == KS_ID_NONE || r[1].name == KS_ID_NONE)
        return -ENOMEM;
    r[0].weight = r[1].weight = 1;
    *n = 2;
    *out = r;
    return 0;
}

static int shape_point(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    static const char *const fields[] = {"utilization", "score", NULL};
    struct ks_shape_point *p = elem;
    int rc;

    (void)ctx;
    if ((rc = strict(d, n, fields, NULL)) || (rc = ks_dec_int32(d, n, "utilization", &p->utilization)) ||
        (rc = ks_dec_int32(d, n, "score", &p->score)))
        return rc;
    return 0;
}

int ks_cfg_shape(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                 struct ks_shape_point **out, const struct ks_yaml_node **seq)
{
    return list(d, map, key, sizeof(**out), n, (void **)out, seq, shape_point);
}

const struct ks_yaml_node *ks_cfg_item_field(const struct ks_yaml_node *seq, uint32_t i, const char *field)
{
    if (!seq || seq->kind != KS_YAML_SEQ || i >= seq->n)
        return NULL;
    return field ? ks_yaml_get(seq->items[i], field) : seq->items[i];
}

static const struct ks_yaml_node *item_or(const struct ks_yaml_node *seq, uint32_t i, const char *field)
{
    const struct ks_yaml_node *n = ks_cfg_item_field(seq, i, field);
    return n ? n : ks_cfg_item_field(seq, i, NULL);
}

int ks_cfg_check_shape(struct ks_decoder *d, const struct ks_yaml_node *seq, int line, uint32_t n,
                       const struct ks_shape_point *shape)
{
    char field[32];

    if (n == 0)
        return ks_cfg_fail_at(d, seq, line, NULL, "Required value: at least one point must be specified");
    for (uint32_t i = 1; i < n; i++) {
        if (shape[i - 1].utilization >= shape[i].utilization) {
            snprintf(field, sizeof(field), "[%u].utilization", i);
            return ks_cfg_fail_at(d, item_or(seq, i, "utilization"), line, field,
                                  "Invalid value: %d: values must be sorted in increasing order",
                                  shape[i].utilization);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (shape[i].utilization < 0 || shape[i].utilization > 100) {
            snprintf(field, sizeof(field), "[%u].utilization", i);
            return ks_cfg_fail_at(d, item_or(seq, i, "utilization"), line, field,
                                  "Invalid value: %d: not in valid range [0, 100]", shape[i].utilization);
        }
        if (shape[i].score < 0 || shape[i].score > KS_MAX_CUSTOM_PRIORITY_SCORE) {
            snprintf(field, sizeof(field), "[%u].score", i);
            return ks_cfg_fail_at(d, item_or(seq, i, "score"), line, field,
                                  "Invalid value: %d: not in valid range [0, %d]", shape[i].score,
                                  KS_MAX_CUSTOM_PRIORITY_SCORE);
        }
    }
    return 0;
}

/* ---- label names (IsQualifiedName) ------------------------------------------------------------ */

static bool name_part_ok(const char *s, size_t len)
{
    if (len == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    }
    return true;
}

static bool dns_subdomain_ok(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && c != '.')
            return false;
        /* every dot-separated label starts and ends with an alphanumeric */
        if (c == '-' || c == '.') {
            if (i == 0 || i == len - 1 || s[i - 1] == '.' || (c == '.' && s[i - 1] == '-'))
                return false;
        }
    }
    return true;
}

bool ks_cfg_qualified_name(const char *s, char *why, size_t len)
{
    const char *slash = strchr(s, '/');
    const char *name = s;

    if (slash) {
        if (strchr(slash + 1, '/')) {
            snprintf(why, len,
                     "a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                     "and must start and end with an alphanumeric character with an optional DNS "
                     "subdomain prefix and '/' (e.g. 'example.com/MyName')");
            return false;
        }
        if (slash == s) {
            snprintf(why, len, "prefix part must be non-empty");
            return false;
        }
        if (!dns_subdomain_ok(s, (size_t)(slash - s))) {
            snprintf(why, len,
                     "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                     "character (e.g. 'example.com')");
            return false;
        }
        name = slash + 1;
    }
    size_t nlen = strlen(name);
    if (nlen == 0) {
        snprintf(why, len, "name part must be non-empty");
        return false;
    }
    if (nlen > 63) {
        snprintf(why, len, "name part must be no more than 63 characters");
        return false;
    }
    if (!name_part_ok(name, nlen)) {
        snprintf(why, len,
                 "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
                 "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc')");
        return false;
    }
    return true;
}

/* ---- durations (metav1.Duration) ------------------------------------------------------------ */

static int64_t unit_ns(const char *u, size_t len)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {
        {"ns", 1},           {"us", 1000},      {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000},                                         /* U+03BC Greek mu */
        {"ms", 1000000},     {"s", 1000000000}, {"m", 60LL * 1000000000}, {"h", 3600LL * 1000000000},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strlen(units[i].name) == len && memcmp(units[i].name, u, len) == 0)
            return units[i].ns;
    }
    return 0;
}

/* Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+, or "0". */
static int parse_duration(const char *s, int64_t *out)
{
    const char *p = s;
    bool neg = false;
    long double total = 0;

    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (strcmp(p, "0") == 0) {
        *out = 0;
        return 0;
    }
    if (!*p)
        return -EINVAL;
    while (*p) {
        const char *start = p;
        long double v = 0, scale = 1;
        bool digits = false;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (*p++ - '0'), digits = true;
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') {
                scale /= 10;
                v += (*p++ - '0') * scale;
                digits = true;
            }
        }
        if (!digits || p == start)
            return -EINVAL;
        const char *u = p;
        while (*p && !(*p >= '0' && *p <= '9') && *p != '.')
            p++;
        int64_t ns = unit_ns(u, (size_t)(p - u));
        if (!ns)
            return -EINVAL;
        total += v * ns;
        if (total > (long double)INT64_MAX)
            return -ERANGE;
    }
    *out = (int64_t)(neg ? -total : total);
    return 0;
}

int ks_cfg_duration(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int64_t *ns)
{
    const char *s = NULL;
    int rc = ks_dec_string(d, map, key, &s);
    if (rc || !s)
        return rc;
    const struct ks_yaml_node *n = ks_yaml_get(map, key);
    if (n->plain && strspn(s, "+-0123456789.") == strlen(s))
        return ks_cfg_fail_at(d, n, 0, key, "expected a duration string such as \"15s\", found the number %s",
                              s);
    if (parse_duration(s, ns) < 0)
        return ks_cfg_fail_at(d, n, 0, key, "Invalid value: \"%s\": time: invalid duration \"%s\"", s, s);
    return 0;
}

/* Write the fraction v / 10^prec before *w (trailing zeros and a bare point omitted); returns v / 10^prec. */
static uint64_t put_frac(char *buf, int *w, uint64_t v, int prec)
{
    bool print = false;
    for (int i = 0; i < prec; i++) {
        int digit = (int)(v % 10);
        print = print || digit != 0;
        if (print)
            buf[--*w] = (char)('0' + digit);
        v /= 10;
    }
    if (print)
        buf[--*w] = '.';
    return v;
}

static void put_uint(char *buf, int *w, uint64_t v)
{
    do {
        buf[--*w] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
}

void ks_cfg_format_duration(int64_t ns, char *out, size_t len)
{
    char buf[40];
    int w = (int)sizeof(buf) - 1;
    bool neg = ns < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

    buf[w] = '\0';
    if (u < 1000000000ULL) {
        int prec;
        buf[--w] = 's';
        if (u == 0) {
            buf[--w] = '0';
            snprintf(out, len, "%s", buf + w);
            return;
        } else if (u < 1000) {
            prec = 0;
            buf[--w] = 'n';
        } else if (u < 1000000) {
            prec = 3;
            buf[--w] = '\xb5'; /* "µ" in UTF-8 */
            buf[--w] = '\xc2';
        } else {
            prec = 6;
            buf[--w] = 'm';
        }
        u = put_frac(buf, &w, u, prec);
        put_uint(buf, &w, u);
    } else {
        buf[--w] = 's';
        u = put_frac(buf, &w, u, 9);
        put_uint(buf, &w, u % 60);
        u /= 60;
        if (u > 0) {
            buf[--w] = 'm';
            put_uint(buf, &w, u % 60);
            u /= 60;
            if (u > 0) {
                buf[--w] = 'h';
                put_uint(buf, &w, u);
            }
        }
    }
    if (neg)
        buf[--w] = '-';
    snprintf(out, len, "%s", buf + w);
}

/* ---- output ------------------------------------------------------------------------------------ */

void ks_cfg_print_resources(struct ks_yaml_out *o, const char *key, uint32_t n,
                            const struct ks_resource_spec *r)
{
    ks_yaml_key_seq(o, key);
    for (uint32_t i = 0; i < n; i++) {
        ks_yaml_item_map(o);
        ks_yaml_key_str(o, "name", ks_intern_str(r[i].name));
        if (r[i].weight)
            ks_yaml_key_int(o, "weight", r[i].weight);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}

void ks_cfg_print_shape(struct ks_yaml_out *o, const char *key, uint32_t n, const struct ks_shape_point *s)
{
    ks_yaml_key_seq(o, key);
    for (uint32_t i = 0; i < n; i++) {
        ks_yaml_item_map(o);
        ks_yaml_key_int(o, "utilization", s[i].utilization);
        ks_yaml_key_int(o, "score", s[i].score);
        ks_yaml_end(o);
    }
    ks_yaml_end(o);
}
