/*
 * selector_check.c - the load-time validation of device selectors (see ksched/internal/dra_check.h).
 *
 * Mirrors validateSelectorSlice / validateCELExpression of pkg/apis/resource/validation/
 * validation.go with the DRA compiler of k8s.io/dynamic-resource-allocation/cel (compile.go:
 * "compilation failed: <issues>", "must evaluate to bool or the unknown type, not <type>",
 * and the cost check against CELSelectorExpressionMaxCost). One device environment serves
 * every check of the process; it is made on first use.
 */
#include "ksched/internal/dra_check.h"

#include "dra_internal.h"

#include "ksched/dra_types.h"
#include "ksched/internal/decode.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CEL_SELECTOR_MAX_COST 1000000 /* resourceapi.CELSelectorExpressionMaxCost */

/* One expression at @path (after @prefix), line @line: 0, or -EINVAL with @err set. */
static int check_one(const char *file, const char *prefix, const char *path, int line, const char *expr,
                     struct ks_error *err)
{
    struct dra_selector *s = NULL;
    char field[320], quoted[KS_ERROR_MSG_MAX / 2];
    int rc = 0;

    snprintf(field, sizeof(field), "%s%s", prefix ? prefix : "", path);
    const struct dra_cel *env = ks__dra_cel_shared();
    if (!env || ks__dra_selector_new(env, expr, strlen(expr), 0, 0, &s) < 0) {
        ks_error_set(err, file, line, field, "out of memory");
        return -ENOMEM;
    }
    if (s->error) {
        ks_go_quote(quoted, sizeof(quoted), expr, strlen(expr));
        rc = ks_error_set(err, file, line, field, "Invalid value: %s: %s", quoted, s->error);
    } else if (ks_cel_program_max_cost(s->prog) > CEL_SELECTOR_MAX_COST) {
        rc = ks_error_set(err, file, line, field, "Forbidden: too complex, exceeds cost limit");
    }
    ks__dra_selector_destroy(s);
    return rc;
}

/* The selectors of one request spec at @base ("spec.devices.requests[0].exactly"). */
static int check_spec(const char *file, const char *prefix, const char *base,
                      const struct ks_device_request_spec *r, struct ks_error *err)
{
    char path[256];
    int rc;

    for (uint32_t i = 0; i < r->nselectors; i++) {
        snprintf(path, sizeof(path), "%s.selectors[%u].cel.expression", base, i);
        if ((rc = check_one(file, prefix, path, r->selector_lines ? r->selector_lines[i] : 0, r->selectors[i],
                            err)))
            return rc;
    }
    return 0;
}

static int check_claim(const char *file, const char *prefix, const char *spec,
                       const struct ks_device_claim *c, struct ks_error *err)
{
    char base[256];
    int rc;

    for (uint32_t i = 0; i < c->nrequests; i++) {
        const struct ks_device_request *r = &c->requests[i];
        if (r->exact) {
            snprintf(base, sizeof(base), "%s.devices.requests[%u].exactly", spec, i);
            if ((rc = check_spec(file, prefix, base, &r->spec, err)))
                return rc;
            continue;
        }
        for (uint32_t j = 0; j < r->nsubrequests; j++) {
            snprintf(base, sizeof(base), "%s.devices.requests[%u].firstAvailable[%u]", spec, i, j);
            if ((rc = check_spec(file, prefix, base, &r->subrequests[j], err)))
                return rc;
        }
    }
    return 0;
}

int ks_dra_check_object(void *ctx, const char *file, const char *prefix, enum ks_kind kind, const void *obj,
                        struct ks_error *err)
{
    char path[64];
    int rc;

    (void)ctx;
    switch (kind) {
    case KS_KIND_DEVICE_CLASS: {
        const struct ks_device_class *c = obj;
        for (uint32_t i = 0; i < c->nselectors; i++) {
            snprintf(path, sizeof(path), "spec.selectors[%u].cel.expression", i);
            if ((rc = check_one(file, prefix, path, c->selector_lines ? c->selector_lines[i] : 0,
                                c->selectors[i], err)))
                return rc;
        }
        return 0;
    }
    case KS_KIND_RESOURCE_CLAIM:
        return check_claim(file, prefix, "spec", &((const struct ks_resource_claim *)obj)->spec, err);
    case KS_KIND_RESOURCE_CLAIM_TEMPLATE:
        return check_claim(file, prefix, "spec.spec", &((const struct ks_resource_claim_template *)obj)->spec,
                           err);
    default:
        return 0;
    }
}
