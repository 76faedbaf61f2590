/*
 * decode_dra_claim.c - ResourceClaim and ResourceClaimTemplate (resource.k8s.io/v1): the
 * device claim (requests exactly or firstAvailable, constraints, configuration) and the
 * claim's status (allocation, reservedFor, devices).
 *
 * The API server's defaults are applied (allocationMode ExactCount, count 1, toleration
 * operator Equal) and its validation (validateDeviceClaim, validateDeviceRequest, ...) is
 * kept in its order; the status is checked as far as the scheduler relies on it.
 */
#include "decode_dra_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- requests ---------------------------------------------------------------------------------- */

/* validateDeviceAllocationMode, after defaulting (an absent mode is ExactCount, count 0 is 1). */
static int allocation_mode(struct ks_decoder *d, const struct ks_yaml_node *n,
                           struct ks_device_request_spec *r)
{
    const char *mode = "";
    int rc;

    if ((rc = ks_dec_string(d, n, "allocationMode", &mode)) || (rc = ks_dec_int64(d, n, "count", &r->count)))
        return rc;
    if (!mode[0])
        mode = "ExactCount";
    r->mode_text = mode;
    if (strcmp(mode, "ExactCount") == 0) {
        r->mode = KS_ALLOC_EXACT_COUNT;
        if (r->count == 0)
            r->count = 1;
        if (r->count < 0)
            return ks__dra_invalid_int(d, ks_yaml_get(n, "count"), "count", r->count,
                                       "must be greater than zero");
    } else if (strcmp(mode, "All") == 0) {
        r->mode = KS_ALLOC_ALL;
        if (r->count != 0)
            return ks__dra_invalid_int(d, ks_yaml_get(n, "count"), "count", r->count,
                                       "must not be specified when allocationMode is 'All'");
    } else {
        return ks__dra_unsupported(d, ks_yaml_get(n, "allocationMode"), "allocationMode", mode,
                                   "\"All\", \"ExactCount\"");
    }
    return 0;
}

/* What ExactDeviceRequest and DeviceSubRequest share (validateExactDeviceRequest's order). */
static int request_spec(struct ks_decoder *d, const struct ks_yaml_node *n, struct ks_device_request_spec *r)
{
    const struct ks_yaml_node *seq, *cap = NULL;
    int rc;

    r->device_class_name = "";
    if ((rc = ks_dec_string(d, n, "deviceClassName", &r->device_class_name)))
        return rc;
    if (!r->device_class_name[0])
        return ks__dra_required(d, n, "deviceClassName", NULL);
    if ((rc = ks__dra_check_subdomain(d, ks_yaml_get(n, "deviceClassName"), "deviceClassName",
                                      r->device_class_name)) ||
        (rc = ks__dra_selectors(d, n, &r->nselectors, &r->selectors, &r->selector_lines)) ||
        (rc = allocation_mode(d, n, r)) ||
        (rc = ks__dra_seq_max(d, n, "tolerations", KS_DRA_TOLERATIONS_MAX, &seq)) ||
        (rc = ks_dec_list(d, n, "tolerations", sizeof(*r->tolerations), &r->ntolerations,
                          (void **)&r->tolerations, ks__dra_toleration, NULL)) ||
        (rc = ks_dec_map(d, n, "capacity", &cap)))
        return rc;
    if (cap) {
        size_t saved = ks_dec_push(d, "capacity");
        r->has_capacity = true;
        if ((rc = ks__dra_quantity_map(d, cap, "requests", &r->ncapacity_requests, &r->capacity_requests)))
            return rc;
        ks_dec_pop(d, saved);
    }
    return 0;
}

static int subrequest(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_request_spec *r = elem;
    int rc;

    (void)ctx;
    r->name = "";
    if ((rc = ks_dec_string(d, n, "name", &r->name)) ||
        (rc = ks__dra_check_label(d, ks_yaml_get(n, "name") ? ks_yaml_get(n, "name") : n, "name", r->name)))
        return rc;
    return request_spec(d, n, r);
}

/* Duplicate names of a list (validateSet's check after its items): at @field[i] (NULL: the path's list). */
static int unique_names(struct ks_decoder *d, const struct ks_yaml_node *seq, const char *field,
                        const char *const *names, size_t stride, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        const char *a = *(const char *const *)((const char *)names + i * stride);
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(a, *(const char *const *)((const char *)names + j * stride)) == 0) {
                if (field)
                    ks_dec_push(d, field);
                ks_dec_push_index(d, i);
                return ks__dra_duplicate(d, seq->items[i], a);
            }
        }
    }
    return 0;
}

static int request(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_request *r = elem;
    const struct ks_yaml_node *exactly = NULL, *first = NULL;
    int rc;

    (void)ctx;
    r->name = "";
    if ((rc = ks_dec_string(d, n, "name", &r->name)) ||
        (rc = ks__dra_check_label(d, ks_yaml_get(n, "name") ? ks_yaml_get(n, "name") : n, "name", r->name)) ||
        (rc = ks_dec_map(d, n, "exactly", &exactly)) || (rc = ks_dec_seq(d, n, "firstAvailable", &first)))
        return rc;
    bool has_first = first && first->n > 0;
    if (!exactly && !has_first)
        return ks__dra_required(d, n, NULL, "exactly one of `exactly` or `firstAvailable` is required");
    if (exactly && has_first)
        return ks_dec_fail(
            d, n, 0,
            "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but "
            "multiple fields are set");
    if (has_first) {
        if (first->n > KS_DRA_FIRST_AVAILABLE_MAX)
            return ks__dra_too_many(d, first, "firstAvailable", first->n, KS_DRA_FIRST_AVAILABLE_MAX);
        if ((rc = ks_dec_list(d, n, "firstAvailable", sizeof(*r->subrequests), &r->nsubrequests,
                              (void **)&r->subrequests, subrequest, NULL)))
            return rc;
        return unique_names(d, first, "firstAvailable", &r->subrequests[0].name, sizeof(*r->subrequests),
                            r->nsubrequests);
    }
    r->exact = true;
    r->spec.name = r->name;
    size_t saved = ks_dec_push(d, "exactly");
    if ((rc = request_spec(d, exactly, &r->spec)))
        return rc;
    const struct ks_yaml_node *admin = ks_yaml_get(exactly, "adminAccess");
    if (admin && !ks_yaml_is_null(admin)) {
        r->spec.has_admin_access = true;
        if ((rc = ks_dec_bool(d, exactly, "adminAccess", &r->spec.admin_access)))
            return rc;
    }
    ks_dec_pop(d, saved);
    return 0;
}

/* ---- constraints and configuration --------------------------------------------------------------- */

/* validateRequestNameRef: "req" or "req/sub" naming a request (and subrequest) of @c. */
static int request_ref(struct ks_decoder *d, const struct ks_yaml_node *n, const char *ref,
                       const struct ks_device_claim *c)
{
    static const char bad[] = "must be the name of a request in the claim or the name of a request and a "
                              "subrequest separated by '/'";
    const char *slash = strchr(ref, '/');
    char first[256];
    int rc;

    if (slash && strchr(slash + 1, '/'))
        return ks_dec_invalid(d, n, NULL, ref, bad);
    snprintf(first, sizeof(first), "%.*s", (int)(slash ? (size_t)(slash - ref) : strlen(ref)), ref);
    if ((rc = ks__dra_check_label(d, n, NULL, first)) ||
        (slash && (rc = ks__dra_check_label(d, n, NULL, slash + 1))))
        return rc;
    for (uint32_t i = 0; i < c->nrequests; i++) {
        const struct ks_device_request *r = &c->requests[i];
        if (strcmp(r->name, first) != 0)
            continue;
        if (!slash)
            return 0;
        for (uint32_t j = 0; j < r->nsubrequests; j++) {
            if (strcmp(r->subrequests[j].name, slash + 1) == 0)
                return 0;
        }
    }
    return ks_dec_invalid(d, n, NULL, ref, bad);
}

/* The requests field of a constraint or a config: a set of request references. */
static int request_refs(struct ks_decoder *d, const struct ks_yaml_node *n, const struct ks_device_claim *c,
                        uint32_t *count, const char ***out)
{
    const struct ks_yaml_node *seq;
    int rc;

    if ((rc = ks__dra_seq_max(d, n, "requests", KS_DRA_REQUESTS_MAX, &seq)) ||
        (rc = ks_dec_string_list(d, n, "requests", count, out)))
        return rc;
    size_t saved = ks_dec_push(d, "requests");
    for (uint32_t i = 0; i < *count; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = request_ref(d, seq->items[i], (*out)[i], c)))
            return rc;
        ks_dec_pop(d, s2);
    }
    if ((rc = unique_names(d, seq, NULL, *out, sizeof(**out), *count)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

/* A matchAttribute or distinctAttribute: a fully qualified name. */
static int attribute_ref(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t *out)
{
    const char *name = NULL;
    int rc;

    *out = KS_ID_NONE;
    if ((rc = ks_dec_string(d, n, key, &name)) || !name)
        return rc;
    size_t saved = ks_dec_push(d, key);
    if ((rc = ks__dra_check_qualified(d, ks_yaml_get(n, key), name, true)))
        return rc;
    ks_dec_pop(d, saved);
    *out = ks_intern(name);
    return *out == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

static int constraint(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_constraint *k = elem;
    int rc;

    if ((rc = request_refs(d, n, ctx, &k->nrequests, &k->requests)) ||
        (rc = attribute_ref(d, n, "matchAttribute", &k->match_attribute)))
        return rc;
    if (k->match_attribute != KS_ID_NONE)
        return 0;
    if ((rc = attribute_ref(d, n, "distinctAttribute", &k->distinct_attribute)))
        return rc;
    if (k->distinct_attribute == KS_ID_NONE)
        return ks__dra_required(d, n, NULL,
                                "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but "
                                "multiple fields are set");
    return 0;
}

static int claim_config(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_claim_config *c = elem;
    int rc;

    if ((rc = request_refs(d, n, ctx, &c->nrequests, &c->requests)))
        return rc;
    return ks__dra_opaque(d, n, &c->opaque);
}

int ks__dra_device_claim(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_device_claim *out)
{
    const struct ks_yaml_node *dev = NULL, *seq;
    int rc;

    if ((rc = ks_dec_map(d, spec, "devices", &dev)) || !dev)
        return rc;
    size_t saved = ks_dec_push(d, "devices");
    if ((rc = ks__dra_seq_max(d, dev, "requests", KS_DRA_REQUESTS_MAX, &seq)) ||
        (rc = ks_dec_list(d, dev, "requests", sizeof(*out->requests), &out->nrequests,
                          (void **)&out->requests, request, NULL)) ||
        (seq && (rc = unique_names(d, seq, "requests", &out->requests[0].name, sizeof(*out->requests),
                                   out->nrequests))) ||
        (rc = ks__dra_seq_max(d, dev, "constraints", KS_DRA_CONSTRAINTS_MAX, &seq)) ||
        (rc = ks_dec_list(d, dev, "constraints", sizeof(*out->constraints), &out->nconstraints,
                          (void **)&out->constraints, constraint, out)) ||
        (rc = ks__dra_seq_max(d, dev, "config", KS_DRA_CONFIG_MAX, &seq)) ||
        (rc = ks_dec_list(d, dev, "config", sizeof(*out->config), &out->nconfig, (void **)&out->config,
                          claim_config, out)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

/* ---- status ------------------------------------------------------------------------------------ */

static int intern_field(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t *out)
{
    *out = KS_ID_EMPTY;
    return ks_dec_id(d, n, key, out);
}

static int result(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_result *r = elem;
    const struct ks_yaml_node *admin = ks_yaml_get(n, "adminAccess");
    int rc;

    (void)ctx;
    r->request = "";
    if ((rc = ks_dec_string(d, n, "request", &r->request)) ||
        (rc = intern_field(d, n, "driver", &r->driver)) || (rc = intern_field(d, n, "pool", &r->pool)) ||
        (rc = intern_field(d, n, "device", &r->device)) ||
        (rc = ks_dec_bool(d, n, "adminAccess", &r->admin_access)) ||
        (rc = ks_dec_list(d, n, "tolerations", sizeof(*r->tolerations), &r->ntolerations,
                          (void **)&r->tolerations, ks__dra_toleration, NULL)) ||
        (rc = ks_dec_string(d, n, "shareID", &r->share_id)) ||
        (rc = ks__dra_quantity_map(d, n, "consumedCapacity", &r->nconsumed, &r->consumed)) ||
        (rc = ks__dra_binding_conditions(d, n, &r->nbinding_conditions, &r->binding_conditions,
                                         &r->nbinding_failure_conditions, &r->binding_failure_conditions)))
        return rc;
    r->has_admin_access = admin && !ks_yaml_is_null(admin);
    if (r->driver == KS_ID_EMPTY)
        return ks__dra_required(d, n, "driver", NULL);
    if (r->pool == KS_ID_EMPTY)
        return ks__dra_required(d, n, "pool", NULL);
    if (r->device == KS_ID_EMPTY)
        return ks__dra_required(d, n, "device", NULL);
    return 0;
}

static int allocation_config(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    static const char *const sources[] = {"FromClass", "FromClaim", NULL};
    struct ks_allocation_config *c = elem;
    int source = -1, rc;

    (void)ctx;
    if ((rc = ks_dec_enum(d, n, "source", sources, &source)))
        return rc;
    if (source < 0)
        return ks__dra_required(d, n, "source", NULL);
    c->from_class = source == 0;
    if ((rc = ks_dec_string_list(d, n, "requests", &c->nrequests, &c->requests)))
        return rc;
    return ks__dra_opaque(d, n, &c->opaque);
}

static int allocation(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_allocation *a = elem;
    const struct ks_yaml_node *dev = NULL, *seq;
    int rc;

    (void)ctx;
    a->allocation_time = KS_TIME_NONE;
    if ((rc = ks_dec_map(d, n, "devices", &dev)) ||
        (rc = ks_dec_node_selector(d, n, "nodeSelector", &a->node_selector)) ||
        (rc = ks_dec_time(d, n, "allocationTimestamp", &a->allocation_time)))
        return rc;
    if (!dev)
        return 0;
    size_t saved = ks_dec_push(d, "devices");
    if ((rc = ks__dra_seq_max(d, dev, "results", KS_DRA_ALLOCATION_RESULTS_MAX, &seq)) ||
        (rc = ks_dec_list(d, dev, "results", sizeof(*a->results), &a->nresults, (void **)&a->results, result,
                          NULL)) ||
        (rc = ks__dra_seq_max(d, dev, "config", 2 * KS_DRA_CONFIG_MAX, &seq)) ||
        (rc = ks_dec_list(d, dev, "config", sizeof(*a->config), &a->nconfig, (void **)&a->config,
                          allocation_config, NULL)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

static int consumer(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_claim_consumer *c = elem;
    int rc;

    (void)ctx;
    c->api_group = c->resource = c->name = c->uid = "";
    if ((rc = ks_dec_string(d, n, "apiGroup", &c->api_group)) ||
        (rc = ks_dec_string(d, n, "resource", &c->resource)) ||
        (rc = ks_dec_string(d, n, "name", &c->name)) || (rc = ks_dec_string(d, n, "uid", &c->uid)))
        return rc;
    if (!c->resource[0])
        return ks__dra_required(d, n, "resource", NULL);
    if (!c->name[0])
        return ks__dra_required(d, n, "name", NULL);
    if (!c->uid[0])
        return ks__dra_required(d, n, "uid", NULL);
    return 0;
}

static int device_condition(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_pod_condition *c = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, n, "type", &c->type)) || (rc = ks_dec_string(d, n, "status", &c->status)) ||
        (rc = ks_dec_string(d, n, "reason", &c->reason)))
        return rc;
    return 0;
}

static int device_status(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_status *s = elem;
    int rc;

    (void)ctx;
    if ((rc = intern_field(d, n, "driver", &s->driver)) || (rc = intern_field(d, n, "pool", &s->pool)) ||
        (rc = intern_field(d, n, "device", &s->device)) ||
        (rc = ks_dec_string(d, n, "shareID", &s->share_id)) ||
        (rc = ks_dec_list(d, n, "conditions", sizeof(*s->conditions), &s->nconditions,
                          (void **)&s->conditions, device_condition, NULL)))
        return rc;
    return 0;
}

/* status: "reservedFor may not be specified when allocation is not set", as the status update check. */
static int claim_status(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_resource_claim *c)
{
    const struct ks_yaml_node *s = NULL, *seq;
    int rc;

    if ((rc = ks_dec_map(d, doc, "status", &s)) || !s)
        return rc;
    size_t saved = ks_dec_push(d, "status");
    if ((rc = ks__dra_seq_max(d, s, "reservedFor", KS_DRA_RESERVED_FOR_MAX, &seq)) ||
        (rc = ks_dec_list(d, s, "reservedFor", sizeof(*c->reserved), &c->nreserved, (void **)&c->reserved,
                          consumer, NULL)))
        return rc;
    for (uint32_t i = 1; i < c->nreserved; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(c->reserved[i].uid, c->reserved[j].uid) == 0) {
                ks_dec_push(d, "reservedFor");
                ks_dec_push_index(d, i);
                return ks__dra_duplicate(d, seq->items[i], c->reserved[i].uid);
            }
        }
    }
    if ((rc = ks_dec_list(d, s, "devices", sizeof(*c->device_status), &c->ndevice_status,
                          (void **)&c->device_status, device_status, NULL)) ||
        (rc = ks_dec_object(d, s, "allocation", sizeof(*c->allocation), (void **)&c->allocation, allocation,
                            NULL)))
        return rc;
    if (c->nreserved && !c->allocation) {
        ks_dec_push(d, "reservedFor");
        return ks_dec_fail(d, seq, 0, "Forbidden: may not be specified when `allocated` is not set");
    }
    ks_dec_pop(d, saved);
    return 0;
}

/* ---- objects ----------------------------------------------------------------------------------- */

static int claim_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_resource_claim *c)
{
    const struct ks_yaml_node *spec = NULL, *meta;
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &c->meta)) || (rc = ks__dra_check_meta_name(d, doc, &c->meta)) ||
        (rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    meta = ks_yaml_get(doc, "metadata");
    if (meta && (rc = ks_dec_string_list(d, meta, "finalizers", &c->nfinalizers, &c->finalizers)))
        return rc;
    if (spec) {
        size_t saved = ks_dec_push(d, "spec");
        if ((rc = ks__dra_device_claim(d, spec, &c->spec)))
            return rc;
        ks_dec_pop(d, saved);
    }
    return claim_status(d, doc, c);
}

static int template_body(struct ks_decoder *d, const struct ks_yaml_node *doc,
                         struct ks_resource_claim_template *t)
{
    const struct ks_yaml_node *spec = NULL, *meta = NULL, *inner = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &t->meta)) || (rc = ks__dra_check_meta_name(d, doc, &t->meta)) ||
        (rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    if (!spec)
        return 0;
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = ks_dec_map(d, spec, "metadata", &meta)) || (rc = ks_dec_map(d, spec, "spec", &inner)))
        return rc;
    if (meta) {
        size_t s2 = ks_dec_push(d, "metadata");
        if ((rc = ks_dec_labels(d, meta, "labels", &t->claim_labels)) ||
            (rc = ks_dec_annotations(d, meta, "annotations", &t->claim_annotations)))
            return rc;
        ks_dec_pop(d, s2);
    }
    if (inner) {
        size_t s2 = ks_dec_push(d, "spec");
        if ((rc = ks__dra_device_claim(d, inner, &t->spec)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_DECODER(ks_decode_resource_claim, struct ks_resource_claim, ks_resource_claim_destroy, claim_body)
KS_DEFINE_DECODER(ks_decode_resource_claim_template, struct ks_resource_claim_template,
                  ks_resource_claim_template_destroy, template_body)
