/*
 * name_check.c - DNS-1123 labels and subdomains and C identifiers, with upstream's messages.
 *
 * Mirrors k8s.io/apimachinery/pkg/util/validation/validation.go (IsDNS1123Label,
 * IsDNS1123Subdomain, IsCIdentifier, IsQualifiedName, IsValidLabelValue and the RegexError
 * texts they build).
 */
#include "ksched/name_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define DNS1123_LABEL_MSG                                                                                    \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "  \
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "   \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_MSG                                                                                \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "    \
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "   \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define C_IDENTIFIER_MSG                                                                                     \
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "             \
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "           \
    "validation is '[A-Za-z_][A-Za-z0-9_]*')"

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over @len bytes */
static bool label_ok(const char *s, size_t len)
{
    if (len == 0 || !lower_alnum(s[0]) || !lower_alnum(s[len - 1]))
        return false;
    for (size_t i = 1; i + 1 < len; i++) {
        if (!lower_alnum(s[i]) && s[i] != '-')
            return false;
    }
    return true;
}

const char *ks_name_dns1123_label(const char *s, size_t len)
{
    if (len > 63)
        return "must be no more than 63 characters";
    return label_ok(s, len) ? NULL : DNS1123_LABEL_MSG;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* over @len bytes */
static bool subdomain_ok(const char *s, size_t len)
{
    size_t start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (!label_ok(s + start, i - start))
                return false;
            start = i + 1;
        }
    }
    return true;
}

const char *ks_name_dns1123_subdomain(const char *s, size_t len)
{
    if (len > 253)
        return "must be no more than 253 characters";
    return subdomain_ok(s, len) ? NULL : DNS1123_SUBDOMAIN_MSG;
}

const char *ks_name_c_identifier(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return C_IDENTIFIER_MSG;
    }
    return len ? NULL : C_IDENTIFIER_MSG;
}

/* ---- label keys and values (IsQualifiedName, IsValidLabelValue) ---------------------------- */

#define NAME_CHAR_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define NAME_ERR_MSG                                                                                         \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " \
    "character"
/* RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") */
#define NAME_REGEX_ERR                                                                                       \
    NAME_ERR_MSG                                                                                             \
    " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" NAME_CHAR_FMT "')"
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
            if (!subdomain_ok(s, plen))
                reason(why, len, "prefix part " DNS1123_SUBDOMAIN_MSG);
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
