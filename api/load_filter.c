/*
 * load_filter.c - the kinds the loader skips or refuses, and field validation of the ones
 * it decodes (see include/ksched/internal/load_filter.h).
 *
 * Kinds: a cluster dump (`kubectl get all -A -o yaml`) holds Deployments, ConfigMaps,
 * Events and custom resources beside the objects that matter to scheduling; they are real
 * objects, so a what-if skips them and says so once. A name that is no kind of its group
 * (a typo, `kind: Pdo`), or a built-in kind at a version that does not serve it
 * (`apiVersion: v1, kind: Deployment`), is what kubectl rejects with "no matches for kind":
 * an error. Which kinds exist comes from the API schema (include/ksched/internal/api_schema.h).
 *
 * Fields: as the API server's fieldValidation (kubectl --validate), unknown and duplicate
 * fields are warnings under "warn" (kept in the object set, at most KS_LOAD_MAX_WARNINGS of
 * them, all counted), the first one is an error under "strict", and "ignore" checks nothing.
 */
#include "ksched/internal/load_filter.h"

#include "ksched/internal/api_schema.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_skipped(struct ks_load_filter *f, const char *kind, const char *group, size_t glen)
{
    size_t klen = strlen(kind), len = klen + (glen ? glen + 1 : 0);
    for (uint32_t i = 0; i < f->nskipped; i++) {
        const char *l = f->skipped[i].label;
        if (strncmp(l, kind, klen) == 0 &&
            (glen ? l[klen] == '.' && strncmp(l + klen + 1, group, glen) == 0 && l[len] == '\0'
                  : l[klen] == '\0')) {
            f->skipped[i].n++;
            f->nskipped_objs++;
            return 0;
        }
    }
    if (f->nskipped == f->capskipped) {
        uint32_t cap = f->capskipped ? f->capskipped * 2 : 16;
        struct ks_skipped_kind *s = realloc(f->skipped, cap * sizeof(*s));
        if (!s)
            return -ENOMEM;
        f->skipped = s;
        f->capskipped = cap;
    }
    char *label = malloc(len + 1);
    if (!label)
        return -ENOMEM;
    snprintf(label, len + 1, "%s%s%.*s", kind, glen ? "." : "", (int)glen, group);
    f->skipped[f->nskipped++] = (struct ks_skipped_kind){label, 1};
    f->nskipped_objs++;
    return 0;
}

int ks__load_filter_kind(struct ks_load_filter *f, const char *file, const struct ks_yaml_node *doc,
                         const char *prefix, const char *kind, const char *api_version)
{
    char want[256];
    int rc = 0;

    switch (ks_api_kind_classify(api_version, kind, want, sizeof(want))) {
    case KS_API_KIND_SERVED:
        rc = count_skipped(f, kind, "", 0);
        break;
    case KS_API_KIND_CUSTOM: {
        const char *slash = strchr(api_version, '/');
        rc = count_skipped(f, kind, api_version, slash ? (size_t)(slash - api_version) : 0);
        break;
    }
    case KS_API_KIND_WRONG_VERSION:
        return ks_error_set(f->err, file, ks_yaml_get(doc, "apiVersion")->line, NULL,
                            "%sapiVersion: unsupported apiVersion \"%s\" for kind %s (want %s)", prefix,
                            api_version, kind, want);
    case KS_API_KIND_UNKNOWN:
        return ks_error_set(
            f->err, file, ks_yaml_get(doc, "kind")->line, NULL,
            "%skind: unsupported kind \"%s\" (apiVersion %s): no such kind in the Kubernetes %s API", prefix,
            kind, api_version, ks_api_schema_version);
    }
    if (rc == -ENOMEM)
        ks_error_set(f->err, file, doc->line, NULL, "out of memory");
    return rc;
}

struct issue_ctx {
    struct ks_load_filter *f;
    const char *file;
};

static int on_issue(void *ctx, int line, const char *path, const char *msg)
{
    struct issue_ctx *c = ctx;
    struct ks_objects *objs = c->f->objs;

    if (c->f->validation == KS_VALIDATE_STRICT)
        return ks_error_set(c->f->err, c->file, line, path, "%s", msg);
    uint32_t kept = objs->nwarnings < KS_LOAD_MAX_WARNINGS ? objs->nwarnings : KS_LOAD_MAX_WARNINGS;
    objs->nwarnings++;
    if (kept == KS_LOAD_MAX_WARNINGS)
        return 0;
    struct ks_error w = {0};
    char text[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
    ks_error_set(&w, c->file, line, path, "%s", msg);
    ks_error_format(&w, text, sizeof(text));
    char **v = realloc(objs->warnings, (kept + 1) * sizeof(*v));
    if (v)
        objs->warnings = v;
    if (!v || !(v[kept] = strdup(text))) {
        objs->nwarnings--;
        ks_error_set(c->f->err, c->file, line, NULL, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

int ks__load_filter_fields(struct ks_load_filter *f, const char *file, const struct ks_yaml_node *doc,
                           const char *prefix, const char *kind)
{
    if (f->validation == KS_VALIDATE_IGNORE)
        return 0;
    struct issue_ctx c = {f, file};
    return ks_field_check(doc, ks_api_schema_root(kind), prefix, on_issue, &c);
}

char *ks__load_filter_summary(const struct ks_load_filter *f, int *rc)
{
    *rc = 0;
    if (!f->nskipped_objs)
        return NULL;
    size_t cap = 128, len;
    for (uint32_t i = 0; i < f->nskipped; i++)
        cap += strlen(f->skipped[i].label) + 32;
    char *line = malloc(cap);
    if (!line) {
        *rc = -ENOMEM;
        return NULL;
    }
    int one = f->nskipped_objs == 1;
    len = (size_t)snprintf(line, cap, "skipped %llu object%s of %s that do%s not affect scheduling:",
                           (unsigned long long)f->nskipped_objs, one ? "" : "s", one ? "a kind" : "kinds",
                           one ? "es" : "");
    for (uint32_t i = 0; i < f->nskipped && len < cap; i++)
        len += (size_t)snprintf(line + len, cap - len, "%s %s (%llu)", i ? "," : "", f->skipped[i].label,
                                (unsigned long long)f->skipped[i].n);
    return line;
}

void ks__load_filter_release(struct ks_load_filter *f)
{
    for (uint32_t i = 0; i < f->nskipped; i++)
        free(f->skipped[i].label);
    free(f->skipped);
    f->skipped = NULL;
    f->nskipped = f->capskipped = 0;
}
