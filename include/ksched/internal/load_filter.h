/*
 * load_filter.h - what the manifest loader (api/loader.c) lets through besides the kinds it
 * decodes: it skips the other kinds Kubernetes serves and custom resources, refuses names
 * that are no kind at all, and checks the fields of the objects it decodes against the API
 * schema under kubectl's --validate modes. Internal to the loader: one filter per load, on
 * the loading thread.
 */
#ifndef KSCHED_LOAD_FILTER_H
#define KSCHED_LOAD_FILTER_H

#include <stdint.h>

#include "ksched/base/error.h"
#include "ksched/field_check.h"

struct ks_objects;
struct ks_yaml_node;

struct ks_skipped_kind {
    char *label; /* "Deployment", or "Certificate.cert-manager.io" for a custom resource */
    uint64_t n;
};

struct ks_load_filter {
    enum ks_validation validation;
    struct ks_objects *objs; /* takes the warnings */
    struct ks_error *err;
    struct ks_skipped_kind *skipped; /* in the order first met */
    uint32_t nskipped, capskipped;
    uint64_t nskipped_objs;
};

/*
 * ks__load_filter_kind - an object of @kind at @api_version that the loader does not decode:
 * 0 when it is skipped (a kind the built-in API serves at that version, or any kind of a
 * group it does not serve: a custom resource), counted for the summary; -EINVAL with the
 * error set at the kind's line for a kind the group does not have, or at the apiVersion's
 * line for a built-in kind at a version that does not serve it; -ENOMEM. Field paths in
 * errors start with @prefix.
 */
int ks__load_filter_kind(struct ks_load_filter *f, const char *file, const struct ks_yaml_node *doc,
                         const char *prefix, const char *kind, const char *api_version);

/*
 * ks__load_filter_fields - check @doc's fields against the schema of @kind (a decoded kind,
 * or "List" for a list's own fields). KS_VALIDATE_WARN: each problem becomes a warning of
 * f->objs, 0; KS_VALIDATE_STRICT: the first is an error, -EINVAL; KS_VALIDATE_IGNORE: 0 at
 * once. -ENOMEM with the error set when a warning cannot be kept.
 */
int ks__load_filter_fields(struct ks_load_filter *f, const char *file, const struct ks_yaml_node *doc,
                           const char *prefix, const char *kind);

/*
 * ks__load_filter_summary - one line summing up the skipped objects by kind, or NULL when
 * none was skipped (or on -ENOMEM: *rc). The caller frees the line.
 */
char *ks__load_filter_summary(const struct ks_load_filter *f, int *rc);

/* ks__load_filter_release - free what the filter holds (not the warnings it gave f->objs). */
void ks__load_filter_release(struct ks_load_filter *f);

#endif
