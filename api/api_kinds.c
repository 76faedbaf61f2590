/*
 * api_kinds.c - lookups in the generated API tables (api/api_schema.c): what an
 * (apiVersion, kind) pair is to the built-in API, and the schema root of a decoded kind.
 *
 * A group counts as built-in when any kind of the spec names it (the groups the API server
 * serves itself); every other group is a custom resource's (a CRD, an aggregated API).
 * Binary searches over sorted constant tables: no allocation, any thread.
 */
#include "ksched/internal/api_schema.h"

#include <stdio.h>
#include <string.h>

static int group_known(const char *group, size_t len)
{
    uint32_t lo = 0, hi = ks_schema_ngroups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const char *g = ks_schema_groups[mid];
        int c = strncmp(g, group, len);
        if (c == 0 && g[len] != '\0')
            c = 1; /* g is longer: it sorts after */
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The first entry of @kind in ks_schema_gvks, or ks_schema_ngvks. */
static uint32_t first_gvk(const char *kind)
{
    uint32_t lo = 0, hi = ks_schema_ngvks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(ks_schema_gvks[mid].kind, kind) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ks_schema_ngvks && strcmp(ks_schema_gvks[lo].kind, kind) == 0 ? lo : ks_schema_ngvks;
}

enum ks_api_kind_class ks_api_kind_classify(const char *api_version, const char *kind, char *want, size_t len)
{
    const char *slash = strchr(api_version, '/');
    const char *group = slash ? api_version : "";
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    const char *version = slash ? slash + 1 : api_version;

    if (want && len)
        want[0] = '\0';
    if (!group_known(group, glen))
        return KS_API_KIND_CUSTOM;
    uint32_t i = first_gvk(kind);
    if (i == ks_schema_ngvks)
        return KS_API_KIND_UNKNOWN;
    size_t at = 0;
    for (; i < ks_schema_ngvks && strcmp(ks_schema_gvks[i].kind, kind) == 0; i++) {
        const struct ks_schema_gvk *g = &ks_schema_gvks[i];
        if (strlen(g->group) == glen && strncmp(g->group, group, glen) == 0 &&
            strcmp(g->version, version) == 0)
            return KS_API_KIND_SERVED;
        if (want && at < len)
            at += (size_t)snprintf(want + at, len - at, "%s%s%s%s", at ? " " : "", g->group,
                                   g->group[0] ? "/" : "", g->version);
    }
    return KS_API_KIND_WRONG_VERSION;
}

int64_t ks_api_schema_root(const char *kind)
{
    uint32_t lo = 0, hi = ks_schema_nroots;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ks_schema_roots[mid].kind, kind);
        if (c == 0)
            return ks_schema_roots[mid].node;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

const struct ks_schema_field *ks_schema_field_find(const struct ks_schema_node *s, const char *name,
                                                   size_t len)
{
    const struct ks_schema_field *lo = &ks_schema_fields[s->ref], *hi = lo + s->n;
    while (lo < hi) {
        const struct ks_schema_field *mid = lo + (hi - lo) / 2;
        int c = mid->len != len ? (mid->len < len ? -1 : 1) : memcmp(mid->name, name, len);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
