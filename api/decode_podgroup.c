/*
 * decode_podgroup.c - PodGroup and Workload (scheduling.k8s.io/v1beta1) with the API server's
 * validation of a create: ValidatePodGroupName / ValidateWorkload (metadata, names) and the
 * declarative rules of pkg/apis/scheduling/v1beta1 (zz_generated.validations.go), in the
 * order the API server reports them (metadata first, then each field in its type's order,
 * a union before its members), under v1.37's gates with GenericWorkload on:
 * schedulingConstraints needs TopologyAwareWorkloadScheduling, resourceClaims
 * DRAWorkloadResourceClaims, preemptionPolicy PodGroupPreemptionPolicy, the composite
 * fields CompositePodGroup; a field whose gate is off is "Forbidden".
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/features.h"
#include "ksched/name_check.h"
#include "ksched/workload_types.h"

#include <stdio.h>
#include <string.h>

/* field.Forbidden(path, ""): "Forbidden". */
static int forbidden(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key)
{
    const struct ks_yaml_node *n = ks_yaml_get(map, key);
    if (ks_yaml_is_null(n))
        return 0;
    ks_dec_push(d, key);
    return ks_dec_fail(d, n, 0, "Forbidden");
}

/* A union of @a and @b (each an object member): "must specify one of" / "exactly one of". */
static int union_of(struct ks_decoder *d, const struct ks_yaml_node *map, const char *a, const char *b,
                    int *which)
{
    bool has_a = !ks_yaml_is_null(ks_yaml_get(map, a)), has_b = !ks_yaml_is_null(ks_yaml_get(map, b));
    char detail[96], value[64];

    *which = has_a ? 0 : 1;
    if (has_a != has_b)
        return 0;
    if (!has_a) {
        snprintf(detail, sizeof(detail), "must specify one of: `%s`, `%s`", a, b);
        return ks_dec_invalid(d, map, NULL, "", detail);
    }
    snprintf(value, sizeof(value), "{%s, %s}", a, b);
    snprintf(detail, sizeof(detail), "must specify exactly one of: `%s`, `%s`", a, b);
    return ks_dec_invalid(d, map, NULL, value, detail);
}

/* A name field in a DNS format: RequiredValue (when @required) then the format's message. */
static int name_field(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, bool required,
                      bool label, const char **out)
{
    int rc;

    if ((rc = ks_dec_string(d, map, key, out)))
        return rc;
    if (!*out || !**out)
        return required ? ks_dec_required(d, map, key) : 0;
    const char *why =
        label ? ks_name_dns1123_label(*out, strlen(*out)) : ks_name_dns1123_subdomain(*out, strlen(*out));
    return why ? ks_dec_invalid(d, ks_yaml_get(map, key), key, *out, why) : 0;
}

/* An integer field's bound: field.Invalid with the number unquoted. */
static int int_bound(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int32_t v,
                     const char *detail)
{
    ks_dec_push(d, key);
    return ks_dec_fail(d, ks_yaml_get(map, key), 0, "Invalid value: %d: %s", v, detail);
}

/* schedulingPolicy: the union, then gang.minCount (RequiredValue, Minimum 1). */
static int policy(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod_group_spec *out)
{
    const struct ks_yaml_node *p = NULL, *gang = NULL;
    int which, rc;
    size_t saved = ks_dec_push(d, "schedulingPolicy");

    if ((rc = ks_dec_map(d, spec, "schedulingPolicy", &p)))
        return rc;
    /* absent: errors name the line of the spec that lacks it */
    const struct ks_yaml_node empty = {.kind = KS_YAML_MAP, .line = spec->line};
    if ((rc = union_of(d, p ? p : &empty, "basic", "gang", &which)))
        return rc;
    out->policy = which ? KS_POD_GROUP_GANG : KS_POD_GROUP_BASIC;
    out->min_count = 1;
    if (out->policy == KS_POD_GROUP_GANG) {
        size_t g = ks_dec_push(d, "gang");
        out->min_count = 0; /* RequiredValue: a missing minCount is its zero value */
        if ((rc = ks_dec_map(d, p, "gang", &gang)) ||
            (rc = ks_dec_int32(d, gang, "minCount", &out->min_count)))
            return rc;
        if (out->min_count == 0)
            return ks_dec_required(d, gang, "minCount");
        if (out->min_count < 1)
            return int_bound(d, gang, "minCount", out->min_count, "must be greater than or equal to 1");
        ks_dec_pop(d, g);
    }
    ks_dec_pop(d, saved);
    return 0;
}

/* schedulingConstraints.topology: at most one constraint, its key a label key. */
static int constraints(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod_group_spec *out)
{
    const struct ks_yaml_node *c = NULL, *topo = NULL;
    int rc;

    out->topology_key = KS_ID_NONE;
    if (!ks_feature_enabled(KS_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING))
        return forbidden(d, spec, "schedulingConstraints");
    size_t saved = ks_dec_push(d, "schedulingConstraints");
    if ((rc = ks_dec_map(d, spec, "schedulingConstraints", &c)) ||
        (c && (rc = ks_dec_seq(d, c, "topology", &topo))))
        return rc;
    if (topo && topo->n > 1) {
        ks_dec_push(d, "topology");
        return ks_dec_fail(d, topo, 0, "Too many: %u: must have at most 1 item", topo->n);
    }
    if (topo && topo->n == 1) {
        const struct ks_yaml_node *item = topo->items[0];
        const char *key = NULL;
        char why[512];
        ks_dec_push(d, "topology");
        ks_dec_push_index(d, 0);
        if (item->kind != KS_YAML_MAP)
            return ks_dec_fail(d, item, 0, "expected a map, found %s", ks_yaml_kind_name(item));
        if ((rc = ks_dec_string(d, item, "key", &key)))
            return rc;
        if (!key || !*key)
            return ks_dec_required(d, item, "key");
        if (!ks_qualified_name_ok(key, why, sizeof(why)))
            return ks_dec_invalid(d, ks_yaml_get(item, "key"), "key", key, why);
        if ((out->topology_key = ks_intern(key)) == KS_ID_NONE)
            return ks_dec_nomem(d);
    }
    ks_dec_pop(d, saved);
    return 0;
}

/* disruptionMode: a union of single {} and all {}; single when absent. */
static int disruption(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod_group_spec *out)
{
    const struct ks_yaml_node *m = NULL;
    int which, rc;

    if ((rc = ks_dec_map(d, spec, "disruptionMode", &m)) || !m)
        return rc;
    size_t saved = ks_dec_push(d, "disruptionMode");
    if ((rc = union_of(d, m, "single", "all", &which)))
        return rc;
    out->disrupt_all = which == 1;
    ks_dec_pop(d, saved);
    return 0;
}

/* The fields a PodGroupSpec shares with a PodGroupTemplate, from schedulingPolicy on. */
static int group_spec(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod_group_spec *out)
{
    int rc;

    if ((rc = policy(d, spec, out)) || (rc = constraints(d, spec, out)) ||
        (rc = forbidden(d, spec, "resourceClaims")) || (rc = disruption(d, spec, out)) ||
        (rc = name_field(d, spec, "priorityClassName", false, false, &out->priority_class_name)))
        return rc;
    if (!ks_yaml_is_null(ks_yaml_get(spec, "priority"))) {
        if ((rc = ks_dec_int32(d, spec, "priority", &out->priority)))
            return rc;
        out->has_priority = true;
        if (out->priority > KS_PRIORITY_MAX)
            return int_bound(d, spec, "priority", out->priority, "must be less than or equal to 1000000000");
    }
    return forbidden(d, spec, "preemptionPolicy");
}

/* status.conditions[]: what the scheduler reads of its own condition. */
static int condition(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_pod_group_condition *c = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, n, "type", &c->type)) || (rc = ks_dec_string(d, n, "status", &c->status)) ||
        (rc = ks_dec_string(d, n, "reason", &c->reason)) ||
        (rc = ks_dec_string(d, n, "message", &c->message)))
        return rc;
    return ks_dec_int64(d, n, "observedGeneration", &c->observed_generation);
}

static int pod_group_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_pod_group *pg)
{
    const struct ks_yaml_node empty = {.kind = KS_YAML_MAP,
                                       .line = doc->line}; /* an absent spec, at the document */
    const struct ks_yaml_node *spec = NULL, *ref = NULL, *status = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &pg->meta)))
        return rc;
    size_t m = ks_dec_push(d, "metadata");
    if ((rc = ks_dec_int64(d, ks_yaml_get(doc, "metadata"), "generation", &pg->generation)))
        return rc;
    ks_dec_pop(d, m);
    const char *why = ks_name_dns1123_subdomain(pg->meta.name, strlen(pg->meta.name));
    if (why)
        return ks_dec_invalid(d, ks_yaml_get(ks_yaml_get(doc, "metadata"), "name"), "metadata.name",
                              pg->meta.name, why);
    if ((rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    if (!spec)
        spec = &empty;
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = forbidden(d, spec, "parentCompositePodGroupName")) ||
        (rc = ks_dec_map(d, spec, "workloadRef", &ref)))
        return rc;
    if (ref) {
        size_t r = ks_dec_push(d, "workloadRef");
        if ((rc = name_field(d, ref, "workloadName", true, false, &pg->workload_name)) ||
            (rc = name_field(d, ref, "templateName", true, true, &pg->template_name)))
            return rc;
        ks_dec_pop(d, r);
    }
    if ((rc = group_spec(d, spec, &pg->spec)))
        return rc;
    ks_dec_pop(d, saved);
    if ((rc = ks_dec_map(d, doc, "status", &status)) || !status)
        return rc;
    saved = ks_dec_push(d, "status");
    if ((rc = ks_dec_list(d, status, "conditions", sizeof(*pg->conditions), &pg->nconditions,
                          (void **)&pg->conditions, condition, NULL)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

/* spec.podGroupTemplates[i]: name (RequiredValue, DNS label), then the group fields. */
static int pod_group_template(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_pod_group_template *t = elem;
    int rc;

    (void)ctx;
    if ((rc = name_field(d, n, "name", true, true, &t->name)))
        return rc;
    return group_spec(d, n, &t->spec);
}

static int workload_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_workload *w)
{
    const struct ks_yaml_node empty = {.kind = KS_YAML_MAP,
                                       .line = doc->line}; /* an absent spec, at the document */
    const struct ks_yaml_node *spec = NULL, *ref = NULL, *templates = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &w->meta)))
        return rc;
    const char *why = ks_name_dns1123_subdomain(w->meta.name, strlen(w->meta.name));
    if (why)
        return ks_dec_invalid(d, ks_yaml_get(ks_yaml_get(doc, "metadata"), "name"), "metadata.name",
                              w->meta.name, why);
    if ((rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    if (!spec)
        spec = &empty;
    size_t saved = ks_dec_push(d, "spec");
    const struct ks_yaml_node *composite = NULL;
    if ((rc = ks_dec_seq(d, spec, "podGroupTemplates", &templates)) ||
        (rc = ks_dec_seq(d, spec, "compositePodGroupTemplates", &composite)))
        return rc;
    /* the union of the two lists (a member is set when it has items) */
    bool has_plain = templates && templates->n, has_composite = composite && composite->n;
    if (!has_plain && !has_composite)
        return ks_dec_invalid(d, spec, NULL, "",
                              "must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`");
    if (has_plain && has_composite)
        return ks_dec_invalid(
            d, spec, NULL, "{podGroupTemplates, compositePodGroupTemplates}",
            "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`");
    if ((rc = ks_dec_map(d, spec, "controllerRef", &ref)))
        return rc;
    if (ref) {
        size_t r = ks_dec_push(d, "controllerRef");
        w->has_controller = true;
        if ((rc = ks_dec_string(d, ref, "apiGroup", &w->controller_api_group)) ||
            (rc = ks_dec_string(d, ref, "kind", &w->controller_kind)) ||
            (rc = ks_dec_string(d, ref, "name", &w->controller_name)))
            return rc;
        if (!w->controller_kind || !*w->controller_kind)
            return ks_dec_required(d, ref, "kind");
        if (!w->controller_name || !*w->controller_name)
            return ks_dec_required(d, ref, "name");
        ks_dec_pop(d, r);
    }
    if (has_composite)
        return forbidden(d, spec, "compositePodGroupTemplates");
    if (templates->n > KS_WORKLOAD_MAX_TEMPLATES) {
        ks_dec_push(d, "podGroupTemplates");
        return ks_dec_fail(d, templates, 0, "Too many: %u: must have at most %d items", templates->n,
                           KS_WORKLOAD_MAX_TEMPLATES);
    }
    if ((rc = ks_dec_list(d, spec, "podGroupTemplates", sizeof(*w->templates), &w->ntemplates,
                          (void **)&w->templates, pod_group_template, NULL)))
        return rc;
    for (uint32_t i = 0; i < w->ntemplates; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(w->templates[i].name, w->templates[j].name) == 0) {
                ks_dec_push(d, "podGroupTemplates");
                ks_dec_push_index(d, i);
                ks_dec_push(d, "name");
                return ks_dec_fail(d, templates->items[i], 0, "Duplicate value: \"%s\"",
                                   w->templates[i].name);
            }
        }
    }
    /* ValidateWorkload: every template of the workload carries the same priority settings */
    for (uint32_t i = 1; i < w->ntemplates; i++) {
        const struct ks_pod_group_spec *a = &w->templates[0].spec, *b = &w->templates[i].spec;
        bool same_class = (!a->priority_class_name && !b->priority_class_name) ||
                          (a->priority_class_name && b->priority_class_name &&
                           strcmp(a->priority_class_name, b->priority_class_name) == 0);
        if (!same_class || a->has_priority != b->has_priority ||
            (a->has_priority && a->priority != b->priority))
            return ks_dec_fail(d, spec, 0, "Invalid value: null: detected multiple priority configurations");
    }
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_DECODER(ks_decode_pod_group, struct ks_pod_group, ks_pod_group_destroy, pod_group_body)
KS_DEFINE_DECODER(ks_decode_workload, struct ks_workload, ks_workload_destroy, workload_body)
