/*
 * helper_node_affinity.c - parsing checks and matching of node selector terms with the
 * semantics of component-helpers' nodeaffinity package (see
 * ksched/plugin_helpers_node_affinity.h).
 *
 * Mirrors k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go and
 * the label checks of apimachinery's labels.NewRequirement (validateLabelKey,
 * validateLabelValue). Upstream aggregates every error of a term list; so does
 * ks_preferred_terms_error (errors.NewAggregate's format: one message alone, several in
 * brackets joined by ", ").
 *
 * Context: any thread; allocation-free.
 */
#include "ksched/plugin_helpers_node_affinity.h"

#include <stdio.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/intern.h"

#define NAME_CHAR_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define NAME_ERR_MSG                                                                                         \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " \
    "character"
/* RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") */
#define NAME_REGEX_ERR                                                                                       \
    NAME_ERR_MSG                                                                                             \
    " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" NAME_CHAR_FMT "')"
#define DNS1123_SUBDOMAIN_ERR                                                                                \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "    \
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "   \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_VALUE_ERR                                                                                      \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "     \
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "       \
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over @n bytes (so at least one character). */
static bool name_chars_ok(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    }
    return true;
}

/* IsDNS1123Subdomain's regex: dot-separated lower-case labels, alphanumeric at both ends. */
static bool dns1123_subdomain_chars_ok(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return false;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return false;
        start = i + 1;
    }
    return true;
}

/* Append "; "-joined @msg to @why (upstream joins a value's reasons so). */
static void reason(char *why, size_t len, const char *msg)
{
    size_t used = strlen(why);
    if (used < len)
        snprintf(why + used, len - used, "%s%s", used ? "; " : "", msg);
}

bool ks_qualified_name_ok(const char *s, char *why, size_t len)
{
    const char *slash = strchr(s, '/'), *name = s;

    why[0] = '\0';
    if (slash && strchr(slash + 1, '/')) {
        reason(why, len,
               "a qualified name " NAME_REGEX_ERR " with an optional DNS subdomain prefix and '/' (e.g. "
               "'example.com/MyName')");
        return false;
    }
    if (slash) {
        size_t plen = (size_t)(slash - s);
        if (plen == 0) {
            reason(why, len, "prefix part must be non-empty");
        } else {
            if (plen > 253)
                reason(why, len, "prefix part must be no more than 253 characters");
            if (!dns1123_subdomain_chars_ok(s, plen))
                reason(why, len, "prefix part " DNS1123_SUBDOMAIN_ERR);
        }
        name = slash + 1;
    }
    size_t n = strlen(name);
    if (n == 0)
        reason(why, len, "name part must be non-empty");
    else if (n > 63)
        reason(why, len, "name part must be no more than 63 characters");
    if (!name_chars_ok(name, n))
        reason(why, len, "name part " NAME_REGEX_ERR);
    return why[0] == '\0';
}

bool ks_label_value_ok(const char *v, char *why, size_t len)
{
    size_t n = strlen(v);

    why[0] = '\0';
    if (n > 63)
        reason(why, len, "must be no more than 63 characters");
    if (n && !name_chars_ok(v, n))
        reason(why, len, LABEL_VALUE_ERR);
    return why[0] == '\0';
}

/* Append ", "-separated @msg to @buf. */
static void append(char *buf, size_t len, uint32_t *nerr, const char *msg)
{
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, "%s%s", *nerr ? ", " : "", msg);
    ++*nerr;
}

uint32_t ks_node_selector_term_errors(const struct ks_node_selector_term *t, const char *path, char *buf,
                                      size_t len, uint32_t *nerr)
{
    char why[512], msg[1024];
    uint32_t before = *nerr;

    for (uint32_t i = 0; i < t->nexprs; i++) {
        const struct ks_requirement *r = &t->exprs[i];
        const char *key = ks_intern_str(r->key);
        if (!ks_qualified_name_ok(key, why, sizeof(why))) {
            snprintf(msg, sizeof(msg), "%s.matchExpressions[%u].key: Invalid value: \"%s\": %s", path, i, key,
                     why);
            append(buf, len, nerr, msg);
        }
        for (uint32_t v = 0; v < r->nvalues; v++) {
            const char *value = ks_intern_str(r->values[v]);
            if (ks_label_value_ok(value, why, sizeof(why)))
                continue;
            snprintf(msg, sizeof(msg), "%s.matchExpressions[%u].values[%u][%s]: Invalid value: \"%s\": %s",
                     path, i, v, key, value, why);
            append(buf, len, nerr, msg);
        }
    }
    return *nerr - before;
}

bool ks_node_selector_term_valid(const struct ks_node_selector_term *t)
{
    char why[512];

    for (uint32_t i = 0; i < t->nexprs; i++) {
        const struct ks_requirement *r = &t->exprs[i];
        if (!ks_qualified_name_ok(ks_intern_str(r->key), why, sizeof(why)))
            return false;
        for (uint32_t v = 0; v < r->nvalues; v++) {
            if (!ks_label_value_ok(ks_intern_str(r->values[v]), why, sizeof(why)))
                return false;
        }
    }
    return true;
}

bool ks_preferred_terms_error(const struct ks_preferred_term *terms, uint32_t n, char *buf, size_t len)
{
    char inner[2048] = "", path[32];
    uint32_t nerr = 0;

    for (uint32_t i = 0; i < n; i++) {
        const struct ks_node_selector_term *t = &terms[i].term;
        if (terms[i].weight == 0 || (t->nexprs == 0 && t->nfields == 0))
            continue;
        snprintf(path, sizeof(path), "[%u]", i);
        ks_node_selector_term_errors(t, path, inner, sizeof(inner), &nerr);
    }
    if (nerr == 0)
        return false;
    snprintf(buf, len, nerr == 1 ? "%s" : "[%s]", inner);
    return true;
}

bool ks_node_selector_matches_parsed(const struct ks_node_selector *sel, const bool *valid,
                                     const struct ks_labels *labels, uint32_t node_name)
{
    if (!sel)
        return false;
    for (uint32_t i = 0; i < sel->nterms; i++) {
        const struct ks_node_selector_term *t = &sel->terms[i];
        if (!(valid ? valid[i] : ks_node_selector_term_valid(t)))
            continue;
        if (ks_node_selector_term_matches(t, labels, node_name))
            return true;
    }
    return false;
}

bool ks_labels_superset(const struct ks_labels *set, const struct ks_labels *labels)
{
    for (uint32_t i = 0; i < set->n; i++) {
        uint32_t value;
        if (!ks_labels_get(labels, set->items[i].key, &value) || value != set->items[i].value)
            return false;
    }
    return true;
}
