/*
 * features.c - the process-wide feature gates and the --feature-gates syntax; see
 * ksched/internal/features.h.
 *
 * Mirrors featureGate.Set and SetFromMap of k8s.io/component-base/featuregate: the value
 * is split at commas, each part at its first '=', names and values trimmed, values parsed
 * as strconv.ParseBool does; unknown names and locked gates set to the other value are
 * errors, with upstream's messages. The whole value is checked before any gate changes.
 */
#include "ksched/internal/features.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct feature_spec {
    const char *name;
    bool def;
    bool settable; /* ksched implements both values */
};

static const struct feature_spec specs[KS_FEATURE_COUNT] = {
#define KS__FEATURE_SPEC(e, n, d, s) [e] = {.name = n, .def = d, .settable = s},
    KS_FEATURE_MAP(KS__FEATURE_SPEC)
#undef KS__FEATURE_SPEC
};

static bool gates[KS_FEATURE_COUNT] = {
#define KS__FEATURE_DEFAULT(e, n, d, s) [e] = d,
    KS_FEATURE_MAP(KS__FEATURE_DEFAULT)
#undef KS__FEATURE_DEFAULT
};

bool ks_feature_enabled(enum ks_feature f)
{
    return f < KS_FEATURE_COUNT && gates[f];
}

const char *ks_feature_name(enum ks_feature f)
{
    return f < KS_FEATURE_COUNT ? specs[f].name : "";
}

void ks__features_force(enum ks_feature f, bool on)
{
    gates[f] = on;
}

void ks_features_reset(void)
{
    for (int f = 0; f < KS_FEATURE_COUNT; f++)
        gates[f] = specs[f].def;
}

/* strconv.ParseBool */
static int parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}

/* strings.TrimSpace in place: the trimmed string starts at the returned pointer. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static const char *const FLAG = "--feature-gates";

int ks_features_set(const char *spec, struct ks_error *err)
{
    bool next[KS_FEATURE_COUNT];
    char *copy = strdup(spec ? spec : "");
    int rc = 0;

    if (!copy)
        return -ENOMEM;
    memcpy(next, gates, sizeof(next));
    for (char *part = copy, *end; part && rc == 0; part = end) {
        end = strchr(part, ',');
        if (end)
            *end++ = '\0';
        if (!*part)
            continue;
        char *eq = strchr(part, '=');
        if (eq)
            *eq = '\0';
        char *name = trim(part);
        if (!eq) {
            rc = ks_error_set(err, NULL, 0, FLAG, "missing bool value for %s", name);
            break;
        }
        char *value = trim(eq + 1);
        bool on;
        if (parse_bool(value, &on) < 0) {
            rc =
                ks_error_set(err, NULL, 0, FLAG,
                             "invalid value of %s=%s, err: strconv.ParseBool: parsing \"%s\": invalid syntax",
                             name, value, value);
            break;
        }
        int f = 0;
        while (f < KS_FEATURE_COUNT && strcmp(specs[f].name, name) != 0)
            f++;
        if (f == KS_FEATURE_COUNT)
            rc = ks_error_set(err, NULL, 0, FLAG, "unrecognized feature gate: %s", name);
        else if (!specs[f].settable && on != specs[f].def)
            rc = ks_error_set(err, NULL, 0, FLAG,
                              "cannot set feature gate %s to %s, feature is locked to %s in ksched", name,
                              on ? "true" : "false", specs[f].def ? "true" : "false");
        else
            next[f] = on;
    }
    free(copy);
    if (rc == 0)
        memcpy(gates, next, sizeof(gates));
    return rc;
}
