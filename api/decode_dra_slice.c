/*
 * decode_dra_slice.c - ResourceSlice (resource.k8s.io/v1): a driver's pool slice, its node
 * selection, its devices (attributes, capacity with request policies, counter consumption,
 * taints, binding conditions) and its shared counter sets.
 *
 * Validation follows validateResourceSliceSpec and validateDevice in their order. The
 * list-valued attributes (ints, bools, strings, versions) belong to the alpha gate
 * DRAListTypeAttributes, off by default: the API server drops them, and so does this
 * decoder.
 */
#include "decode_dra_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/json_write.h"
#include "ksched/name_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attributes and capacity ------------------------------------------------------------------- */

/* semver.org 2.0.0, as validation.go's semverRe. */
static bool numeric_id(const char *s, size_t n)
{
    if (n == 0 || (n > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
    }
    return true;
}

static bool ident_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

/* dot-separated identifiers; @pre: each numeric-only one has no leading zero. */
static bool identifiers(const char *s, size_t n, bool pre)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!ident_char(s[i]))
                return false;
            continue;
        }
        size_t len = i - start;
        if (len == 0)
            return false;
        bool digits = true;
        for (size_t j = start; j < i; j++)
            digits = digits && s[j] >= '0' && s[j] <= '9';
        if (pre && digits && !numeric_id(s + start, len))
            return false;
        start = i + 1;
    }
    return true;
}

static bool semver_ok(const char *s)
{
    const char *p = s;
    for (int part = 0; part < 3; part++) {
        size_t n = strspn(p, "0123456789");
        if (!numeric_id(p, n))
            return false;
        p += n;
        if (part < 2) {
            if (*p != '.')
                return false;
            p++;
        }
    }
    const char *plus = strchr(p, '+');
    size_t pre_len = plus ? (size_t)(plus - p) : strlen(p);
    if (pre_len > 0 && (p[0] != '-' || !identifiers(p + 1, pre_len - 1, true)))
        return false;
    return !plus || identifiers(plus + 1, strlen(plus + 1), false);
}

static int attribute(struct ks_decoder *d, const struct ks_yaml_node *key, const struct ks_yaml_node *value,
                     void *elem, void *ctx)
{
    struct ks_device_attribute *a = elem;
    int nvalues = 0, rc;

    (void)ctx;
    if ((rc = ks__dra_check_qualified(d, key, key->str, false)))
        return rc;
    ks_dec_push_map_key(d, key->str);
    if (ks_yaml_is_null(value) || value->kind != KS_YAML_MAP)
        return ks_dec_fail(d, value, 0, "expected a map, found %s", ks_yaml_kind_name(value));
    static const char *const fields[] = {"int", "bool", "string", "version"};
    for (int k = 0; k < 4; k++) {
        const struct ks_yaml_node *v = ks_yaml_get(value, fields[k]);
        if (!v || ks_yaml_is_null(v))
            continue;
        nvalues++;
        a->kind = (enum ks_device_attr_kind)k;
    }
    if (nvalues != 1)
        return ks_dec_fail(d, value, 0, "Invalid value: %s: exactly one value must be specified",
                           nvalues ? "<multiple values>" : "\"\"");
    switch (a->kind) {
    case KS_ATTR_INT:
        rc = ks_dec_int64(d, value, "int", &a->i);
        break;
    case KS_ATTR_BOOL:
        rc = ks_dec_bool(d, value, "bool", &a->b);
        break;
    case KS_ATTR_STRING:
        if ((rc = ks_dec_string(d, value, "string", &a->s)) == 0 && strlen(a->s) > KS_DRA_ATTRIBUTE_VALUE_MAX)
            rc = ks__dra_too_long(d, ks_yaml_get(value, "string"), "string", KS_DRA_ATTRIBUTE_VALUE_MAX);
        break;
    case KS_ATTR_VERSION:
        if ((rc = ks_dec_string(d, value, "version", &a->s)))
            break;
        if (!semver_ok(a->s))
            rc = ks_dec_invalid(d, ks_yaml_get(value, "version"), "version", a->s,
                                "must be a string compatible with semver.org spec 2.0.0");
        else if (strlen(a->s) > KS_DRA_ATTRIBUTE_VALUE_MAX)
            rc = ks__dra_too_long(d, ks_yaml_get(value, "version"), "version", KS_DRA_ATTRIBUTE_VALUE_MAX);
        break;
    }
    if (rc)
        return rc;
    a->name = ks_intern_n(key->str, key->len);
    return a->name == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

/* A quantity field @key of map @n into *@q (*@has when given). */
static int quantity_field(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, bool *has,
                          struct ks_quantity *q)
{
    const struct ks_yaml_node *v = ks_yaml_get(n, key);
    int rc;

    if (!v || ks_yaml_is_null(v))
        return 0;
    size_t saved = ks_dec_push(d, key);
    if ((rc = ks__dra_quantity(d, v, q)))
        return rc;
    ks_dec_pop(d, saved);
    *has = true;
    return 0;
}

/* A quantity as Quantity.String() gives it, for messages. */
static const char *qtext(const struct ks_quantity *q, char *buf)
{
    if (ks_quantity_format(q, buf, KS_QUANTITY_STR_MAX) < 0)
        snprintf(buf, KS_QUANTITY_STR_MAX, "<huge>");
    return buf;
}

static int invalid_q(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at,
                     const struct ks_quantity *q, const char *fmt, const struct ks_quantity *other)
{
    char a[KS_QUANTITY_STR_MAX], b[KS_QUANTITY_STR_MAX], detail[256];

    snprintf(detail, sizeof(detail), fmt, other ? qtext(other, b) : "");
    return ks_dec_invalid(d, n, at, qtext(q, a), detail);
}

/* validateRequestPolicyRange's step check: (value - min) is a multiple of step, on integer values. */
static bool on_step(const struct ks_quantity *value, const struct ks_quantity *min,
                    const struct ks_quantity *step)
{
    int64_t s = ks_quantity_value(step), m = ks_quantity_value(min), v = ks_quantity_value(value);
    return s == 0 || (v - m) % s == 0;
}

/* validateRequestPolicy of a multi-allocatable device's capacity with value @max. */
static int request_policy(struct ks_decoder *d, const struct ks_yaml_node *n, const struct ks_quantity *max,
                          struct ks_capacity_policy *p)
{
    const struct ks_yaml_node *vv = NULL, *range = NULL;
    int rc;

    if ((rc = quantity_field(d, n, "default", &p->has_default, &p->def)) ||
        (rc = ks_dec_seq(d, n, "validValues", &vv)) || (rc = ks_dec_map(d, n, "validRange", &range)))
        return rc;
    if (vv && vv->n > 0 && range)
        return ks_dec_fail(d, n, 0,
                           "Forbidden: exactly one policy can be specified, cannot specify "
                           "\"validValues\" and \"validRange\" at the same time");
    if (vv && vv->n > 0) {
        if (!p->has_default)
            return ks__dra_required(d, n, "default", "required when validValues is defined");
        p->nvalid_values = vv->n;
        p->valid_values = ks_arena_calloc(d->arena, vv->n, sizeof(*p->valid_values));
        if (!p->valid_values)
            return ks_dec_nomem(d);
        size_t saved = ks_dec_push(d, "validValues");
        for (uint32_t i = 0; i < vv->n; i++) {
            size_t s2 = ks_dec_push_index(d, i);
            if ((rc = ks__dra_quantity(d, vv->items[i], &p->valid_values[i])))
                return rc;
            if (i > 0 && ks_quantity_cmp(&p->valid_values[i - 1], &p->valid_values[i]) > 0)
                return invalid_q(d, vv->items[i], NULL, &p->valid_values[i],
                                 "values must be sorted in ascending order%s", NULL);
            ks_dec_pop(d, s2);
        }
        if (vv->n > KS_DRA_DISCRETE_OPTIONS_MAX)
            return ks__dra_too_many(d, vv, NULL, vv->n, KS_DRA_DISCRETE_OPTIONS_MAX);
        bool found = false;
        for (uint32_t i = 0; i < vv->n; i++) {
            if (ks_quantity_cmp(&p->valid_values[i], max) > 0) {
                ks_dec_push_index(d, i);
                return invalid_q(d, vv->items[i], NULL, &p->valid_values[i],
                                 "option is larger than capacity value: %s", max);
            }
            for (uint32_t j = 0; j < i; j++) {
                if (ks_quantity_value(&p->valid_values[j]) == ks_quantity_value(&p->valid_values[i])) {
                    char t[KS_QUANTITY_STR_MAX];
                    ks_dec_push_index(d, i);
                    return ks__dra_duplicate(d, vv->items[i], qtext(&p->valid_values[i], t));
                }
            }
            found = found || ks_quantity_cmp(&p->valid_values[i], &p->def) == 0;
        }
        if (!found)
            return invalid_q(d, vv, NULL, &p->def,
                             "default value is not valid according to the requestPolicy%s", NULL);
        ks_dec_pop(d, saved);
        return 0;
    }
    if (!range)
        return 0;
    if (!p->has_default)
        return ks__dra_required(d, n, "default", "required when validRange is defined");
    p->has_range = true;
    size_t saved = ks_dec_push(d, "validRange");
    if ((rc = quantity_field(d, range, "min", &p->has_min, &p->min)) ||
        (rc = quantity_field(d, range, "max", &p->has_max, &p->max)) ||
        (rc = quantity_field(d, range, "step", &p->has_step, &p->step)))
        return rc;
    if (!p->has_min)
        return ks__dra_required(d, range, "min", "required when validRange is defined");
    if (ks_quantity_cmp(&p->min, max) > 0)
        return invalid_q(d, range, "min", &p->min, "min is larger than capacity value: %s", max);
    if (ks_quantity_cmp(&p->def, &p->min) < 0)
        return invalid_q(d, range, "default", &p->def, "default is less than min: %s", &p->min);
    if (p->has_max) {
        if (ks_quantity_cmp(&p->min, &p->max) > 0)
            return invalid_q(d, range, "max", &p->min, "min is larger than max: %s", &p->max);
        if (ks_quantity_cmp(&p->max, max) > 0)
            return invalid_q(d, range, "max", &p->max, "max is larger than capacity value: %s", max);
        if (ks_quantity_cmp(&p->def, &p->max) > 0)
            return invalid_q(d, range, "default", &p->def, "default is more than max: %s", &p->max);
    }
    if (p->has_step) {
        struct ks_quantity one_step = p->min;
        char t[KS_QUANTITY_STR_MAX], detail[256];
        if (ks_quantity_sign(&p->step) <= 0)
            return invalid_q(d, range, "step", &p->step, "must be greater than zero%s", NULL);
        if (ks_quantity_add(&one_step, &p->step) == 0 && ks_quantity_cmp(&one_step, max) > 0) {
            snprintf(detail, sizeof(detail), "one step %s is larger than capacity value: %%s",
                     qtext(&one_step, t));
            return invalid_q(d, range, "step", &p->step, detail, max);
        }
        const struct ks_quantity *checks[2] = {&p->def, p->has_max ? &p->max : NULL};
        for (int k = 0; k < 2; k++) {
            if (!checks[k] || on_step(checks[k], &p->min, &p->step))
                continue;
            char st[KS_QUANTITY_STR_MAX], mn[KS_QUANTITY_STR_MAX];
            snprintf(detail, sizeof(detail), "value is not a multiple of a given step (%s) from (%s)%%s",
                     qtext(&p->step, st), qtext(&p->min, mn));
            return invalid_q(d, range, "step", checks[k], detail, NULL);
        }
    }
    ks_dec_pop(d, saved);
    return 0;
}

struct capacity_ctx {
    bool multi; /* the device allows multiple allocations */
};

static int capacity(struct ks_decoder *d, const struct ks_yaml_node *key, const struct ks_yaml_node *value,
                    void *elem, void *ctx)
{
    const struct capacity_ctx *cx = ctx;
    struct ks_device_capacity *c = elem;
    const struct ks_yaml_node *pol = NULL;
    bool has = false;
    int rc;

    if ((rc = ks__dra_check_qualified(d, key, key->str, false)))
        return rc;
    ks_dec_push_map_key(d, key->str);
    if (ks_yaml_is_null(value) || value->kind != KS_YAML_MAP)
        return ks_dec_fail(d, value, 0, "expected a map, found %s", ks_yaml_kind_name(value));
    if ((rc = quantity_field(d, value, "value", &has, &c->value)) ||
        (rc = ks_dec_map(d, value, "requestPolicy", &pol)))
        return rc;
    if (pol) {
        if (!cx->multi) {
            ks_dec_push(d, "requestPolicy");
            return ks_dec_fail(d, pol, 0, "Forbidden: allowMultipleAllocations must be true");
        }
        c->policy = ks_arena_alloc(d->arena, sizeof(*c->policy));
        if (!c->policy)
            return ks_dec_nomem(d);
        size_t saved = ks_dec_push(d, "requestPolicy");
        if ((rc = request_policy(d, pol, &c->value, c->policy)))
            return rc;
        ks_dec_pop(d, saved);
    }
    c->name = ks_intern_n(key->str, key->len);
    return c->name == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

/* ---- counters, taints ------------------------------------------------------------------------ */

static int counter(struct ks_decoder *d, const struct ks_yaml_node *key, const struct ks_yaml_node *value,
                   void *elem, void *ctx)
{
    struct ks_named_quantity *q = elem;
    bool has = false;
    int rc;

    (void)ctx;
    if ((rc = ks__dra_check_label(d, key, NULL, key->str)))
        return rc;
    ks_dec_push_map_key(d, key->str);
    if (ks_yaml_is_null(value) || value->kind != KS_YAML_MAP)
        return ks_dec_fail(d, value, 0, "expected a map, found %s", ks_yaml_kind_name(value));
    if ((rc = quantity_field(d, value, "value", &has, &q->value)))
        return rc;
    q->name = ks_intern_n(key->str, key->len);
    return q->name == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

/* A counter set name and its counters (of sharedCounters or consumesCounters). */
static int counters(struct ks_decoder *d, const struct ks_yaml_node *n, const char *name_key, uint32_t *name,
                    uint32_t *count, struct ks_named_quantity **out)
{
    const char *s = "";
    int rc;

    if ((rc = ks_dec_string(d, n, name_key, &s)))
        return rc;
    if (!s[0])
        return ks__dra_required(d, n, name_key, NULL);
    if ((rc = ks__dra_check_label(d, ks_yaml_get(n, name_key), name_key, s)))
        return rc;
    const struct ks_yaml_node *c = ks_yaml_get(n, "counters");
    if (!c || ks_yaml_is_null(c) || (c->kind == KS_YAML_MAP && c->n == 0))
        return ks__dra_required(d, n, "counters", NULL);
    if (c->kind == KS_YAML_MAP && c->n > KS_DRA_COUNTERS_PER_SET_MAX)
        return ks__dra_too_many(d, c, "counters", c->n, KS_DRA_COUNTERS_PER_SET_MAX);
    if ((rc = ks_dec_pairs(d, n, "counters", sizeof(**out), count, (void **)out, counter, NULL)))
        return rc;
    *name = ks_intern(s);
    return *name == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

static int consumption(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_counter_consumption *c = elem;

    (void)ctx;
    return counters(d, n, "counterSet", &c->counter_set, &c->ncounters, &c->counters);
}

static int counter_set(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_counter_set *c = elem;

    (void)ctx;
    return counters(d, n, "name", &c->name, &c->ncounters, &c->counters);
}

static const char *const taint_effects[] = {"None", "NoSchedule", "NoExecute", NULL};

static int taint(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_taint *t = elem;
    const char *key = "", *value = "", *effect = "";
    char why[512];
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, n, "key", &key)) || (rc = ks_dec_string(d, n, "value", &value)) ||
        (rc = ks_dec_string(d, n, "effect", &effect)))
        return rc;
    if (!key[0])
        return ks_dec_invalid(d, n, "key", "", "name part must be non-empty");
    if (!ks_qualified_name_ok(key, why, sizeof(why)))
        return ks_dec_invalid(d, ks_yaml_get(n, "key"), "key", key, why);
    if (value[0] && !ks_label_value_ok(value, why, sizeof(why)))
        return ks_dec_invalid(d, ks_yaml_get(n, "value"), "value", value, why);
    if (!effect[0])
        return ks__dra_required(d, n, "effect", NULL);
    int e;
    for (e = 0; taint_effects[e] && strcmp(taint_effects[e], effect) != 0; e++)
        ;
    if (!taint_effects[e])
        return ks__dra_unsupported(d, ks_yaml_get(n, "effect"), "effect", effect,
                                   "\"NoExecute\", \"NoSchedule\", \"None\"");
    t->effect = (enum ks_device_taint_effect)e;
    t->effect_text = effect;
    t->key = ks_intern(key);
    t->value = ks_intern(value);
    return t->key == KS_ID_NONE || t->value == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

/* ---- node selection ---------------------------------------------------------------------------- */

struct node_selection {
    uint32_t *node_name;
    struct ks_node_selector **selector;
    bool *all_nodes;
};

/* The nodeName / nodeSelector / allNodes of a slice or a device: which were set, into @set. */
static int node_fields(struct ks_decoder *d, const struct ks_yaml_node *n, const struct node_selection *out,
                       bool device, char *set, size_t setlen)
{
    const struct ks_yaml_node *nn = ks_yaml_get(n, "nodeName"), *an = ks_yaml_get(n, "allNodes");
    const char *name = NULL;
    bool all = false;
    int rc;

    set[0] = '\0';
    *out->node_name = KS_ID_NONE;
    if ((rc = ks_dec_string(d, n, "nodeName", &name)))
        return rc;
    if (name) {
        if (!name[0])
            return ks_dec_invalid(d, nn, "nodeName", "",
                                  device ? "must not be empty"
                                         : "must be either unset or set to a non-empty string");
        snprintf(set + strlen(set), setlen - strlen(set), "%s`nodeName`", set[0] ? ", " : "");
        if ((rc = ks__dra_check_subdomain(d, nn, "nodeName", name)))
            return rc;
        *out->node_name = ks_intern(name);
        if (*out->node_name == KS_ID_NONE)
            return ks_dec_nomem(d);
    }
    if ((rc = ks_dec_node_selector(d, n, "nodeSelector", out->selector)))
        return rc;
    if (*out->selector) {
        snprintf(set + strlen(set), setlen - strlen(set), "%s`nodeSelector`", set[0] ? ", " : "");
        if (!device && (*out->selector)->nterms != 1) {
            const struct ks_yaml_node *sel = ks_yaml_get(n, "nodeSelector");
            ks_dec_push(d, "nodeSelector");
            ks_dec_push(d, "nodeSelectorTerms");
            return ks_dec_fail(d, sel, 0,
                               "Invalid value: %u term%s: must have exactly one node selector term",
                               (*out->selector)->nterms, (*out->selector)->nterms == 1 ? "" : "s");
        }
    }
    if (an && !ks_yaml_is_null(an)) {
        if ((rc = ks_dec_bool(d, n, "allNodes", &all)))
            return rc;
        if (!all) {
            ks_dec_push(d, "allNodes");
            return ks_dec_fail(d, an, 0, "Invalid value: false: must be either unset or set to true");
        }
        snprintf(set + strlen(set), setlen - strlen(set), "%s`allNodes`", set[0] ? ", " : "");
        *out->all_nodes = true;
    }
    return 0;
}

/* ---- devices ----------------------------------------------------------------------------------- */

struct device_ctx {
    bool per_device; /* the slice sets perDeviceNodeSelection */
};

static int device(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    const struct device_ctx *cx = ctx;
    struct ks_device *dev = elem;
    const struct ks_yaml_node *attrs = ks_yaml_get(n, "attributes"), *caps = ks_yaml_get(n, "capacity"), *seq;
    const struct ks_yaml_node *multi = ks_yaml_get(n, "allowMultipleAllocations");
    const char *name = "";
    char set[96];
    int rc;

    if ((rc = ks_dec_string(d, n, "name", &name)) ||
        (rc = ks__dra_check_label(d, ks_yaml_get(n, "name") ? ks_yaml_get(n, "name") : n, "name", name)))
        return rc;
    dev->name = ks_intern(name);
    if (dev->name == KS_ID_NONE)
        return ks_dec_nomem(d);
    uint32_t nattr = attrs && attrs->kind == KS_YAML_MAP ? attrs->n : 0;
    uint32_t ncap = caps && caps->kind == KS_YAML_MAP ? caps->n : 0;
    if (nattr + ncap > KS_DRA_ATTRS_AND_CAPACITIES_MAX)
        return ks_dec_fail(
            d, n, 0, "Invalid value: %u: the total number of attributes and capacities must not exceed %d",
            nattr + ncap, KS_DRA_ATTRS_AND_CAPACITIES_MAX);
    if (multi && !ks_yaml_is_null(multi)) {
        dev->has_allow_multiple = true;
        if ((rc = ks_dec_bool(d, n, "allowMultipleAllocations", &dev->allow_multiple)))
            return rc;
    }
    struct capacity_ctx cc = {dev->allow_multiple};
    if ((rc = ks_dec_pairs(d, n, "attributes", sizeof(*dev->attributes), &dev->nattributes,
                           (void **)&dev->attributes, attribute, NULL)) ||
        (rc = ks_dec_pairs(d, n, "capacity", sizeof(*dev->capacity), &dev->ncapacity, (void **)&dev->capacity,
                           capacity, &cc)) ||
        (rc = ks__dra_seq_max(d, n, "taints", KS_DRA_TAINTS_MAX, &seq)) ||
        (rc = ks_dec_list(d, n, "taints", sizeof(*dev->taints), &dev->ntaints, (void **)&dev->taints, taint,
                          NULL)) ||
        (rc = ks__dra_seq_max(d, n, "consumesCounters", KS_DRA_CONSUMPTIONS_MAX, &seq)) ||
        (rc = ks_dec_list(d, n, "consumesCounters", sizeof(*dev->consumes), &dev->nconsumes,
                          (void **)&dev->consumes, consumption, NULL)))
        return rc;
    for (uint32_t i = 1; i < dev->nconsumes; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (dev->consumes[i].counter_set == dev->consumes[j].counter_set) {
                ks_dec_push(d, "consumesCounters");
                ks_dec_push_index(d, i);
                return ks__dra_duplicate(d, seq->items[i], ks_intern_str(dev->consumes[i].counter_set));
            }
        }
    }
    struct node_selection sel = {&dev->node_name, &dev->node_selector, &dev->all_nodes};
    if ((rc = node_fields(d, n, &sel, true, set, sizeof(set))))
        return rc;
    static const char per_device_msg[] =
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
        "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
    if (cx->per_device) {
        if (!set[0])
            return ks__dra_required(d, n, NULL, per_device_msg);
        if (strchr(set, ','))
            return ks_dec_fail(d, n, 0, "Invalid value: \"{%s}\": %s", set, per_device_msg);
    } else if (set[0]) {
        return ks_dec_fail(d, n, 0,
                           "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be "
                           "set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec");
    }
    if ((rc = ks__dra_binding_conditions(d, n, &dev->nbinding_conditions, &dev->binding_conditions,
                                         &dev->nbinding_failure_conditions,
                                         &dev->binding_failure_conditions)) ||
        (rc = ks_dec_bool(d, n, "bindsToNode", &dev->binds_to_node)))
        return rc;
    return 0;
}

/* Whether a device of @devs has taints or consumes counters (the lower device limit applies). */
static bool advanced(const struct ks_yaml_node *devs)
{
    for (uint32_t i = 0; i < devs->n; i++) {
        const struct ks_yaml_node *dn = devs->items[i];
        if (dn->kind != KS_YAML_MAP)
            continue;
        const struct ks_yaml_node *t = ks_yaml_get(dn, "taints"), *c = ks_yaml_get(dn, "consumesCounters");
        if ((t && t->kind == KS_YAML_SEQ && t->n) || (c && c->kind == KS_YAML_SEQ && c->n))
            return true;
    }
    return false;
}

/* ---- the slice --------------------------------------------------------------------------------- */

static int pool(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_resource_slice *s)
{
    const struct ks_yaml_node *p = NULL;
    const char *name = "";
    int rc;

    if ((rc = ks_dec_map(d, spec, "pool", &p)))
        return rc;
    if (!p)
        return ks__dra_required(d, spec, "pool.name", NULL);
    size_t saved = ks_dec_push(d, "pool");
    if ((rc = ks_dec_string(d, p, "name", &name)) ||
        (rc = ks__dra_check_pool(d, ks_yaml_get(p, "name") ? ks_yaml_get(p, "name") : p, "name", name)) ||
        (rc = ks_dec_int64(d, p, "generation", &s->generation)) ||
        (rc = ks_dec_int64(d, p, "resourceSliceCount", &s->slice_count)))
        return rc;
    if (s->slice_count <= 0)
        return ks__dra_invalid_int(
            d, ks_yaml_get(p, "resourceSliceCount") ? ks_yaml_get(p, "resourceSliceCount") : p,
            "resourceSliceCount", s->slice_count, "must be greater than zero");
    if (s->generation < 0)
        return ks__dra_invalid_int(d, ks_yaml_get(p, "generation"), "generation", s->generation,
                                   "must be greater than or equal to zero");
    ks_dec_pop(d, saved);
    s->pool = ks_intern(name);
    return s->pool == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

static int slice_spec(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_resource_slice *s)
{
    const struct ks_yaml_node *per = ks_yaml_get(spec, "perDeviceNodeSelection"), *devs, *sets;
    const char *driver = "";
    char set[128];
    int rc;

    if ((rc = ks_dec_string(d, spec, "driver", &driver)) ||
        (rc = ks__dra_check_driver(d, ks_yaml_get(spec, "driver") ? ks_yaml_get(spec, "driver") : spec,
                                   "driver", driver)) ||
        (rc = pool(d, spec, s)))
        return rc;
    s->driver = ks_intern(driver);
    if (s->driver == KS_ID_NONE)
        return ks_dec_nomem(d);
    struct node_selection sel = {&s->node_name, &s->node_selector, &s->all_nodes};
    if ((rc = node_fields(d, spec, &sel, false, set, sizeof(set))))
        return rc;
    if (per && !ks_yaml_is_null(per)) {
        if ((rc = ks_dec_bool(d, spec, "perDeviceNodeSelection", &s->per_device_node_selection)))
            return rc;
        if (!s->per_device_node_selection) {
            ks_dec_push(d, "perDeviceNodeSelection");
            return ks_dec_fail(d, per, 0, "Invalid value: false: must be either unset or set to true");
        }
        snprintf(set + strlen(set), sizeof(set) - strlen(set), "%s`perDeviceNodeSelection`",
                 set[0] ? ", " : "");
    }
    static const char one_of[] =
        "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    if (!set[0])
        return ks__dra_required(d, spec, NULL, one_of);
    if (strchr(set, ','))
        return ks_dec_fail(d, spec, 0, "Invalid value: \"{%s}\": %s, but multiple fields are set", set,
                           one_of);
    if ((rc = ks_dec_seq(d, spec, "devices", &devs)) || (rc = ks_dec_seq(d, spec, "sharedCounters", &sets)))
        return rc;
    devs = ks_yaml_get(spec, "devices");
    sets = ks_yaml_get(spec, "sharedCounters");
    if (devs && !ks_yaml_is_null(devs) && sets && !ks_yaml_is_null(sets))
        return ks_dec_fail(d, spec, 0,
                           "Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed");
    if (devs && devs->kind == KS_YAML_SEQ) {
        uint32_t max = advanced(devs) ? KS_DRA_SLICE_DEVICES_ADVANCED : KS_DRA_SLICE_DEVICES_MAX;
        if (devs->n > max)
            return ks__dra_too_many(d, devs, "devices", devs->n, max);
    }
    struct device_ctx dc = {s->per_device_node_selection};
    if ((rc = ks_dec_list(d, spec, "devices", sizeof(*s->devices), &s->ndevices, (void **)&s->devices, device,
                          &dc)))
        return rc;
    for (uint32_t i = 1; i < s->ndevices; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (s->devices[i].name == s->devices[j].name) {
                ks_dec_push(d, "devices");
                ks_dec_push_index(d, i);
                return ks__dra_duplicate(d, devs->items[i], ks_intern_str(s->devices[i].name));
            }
        }
    }
    if ((rc = ks__dra_seq_max(d, spec, "sharedCounters", KS_DRA_COUNTER_SETS_MAX, &sets)) ||
        (rc = ks_dec_list(d, spec, "sharedCounters", sizeof(*s->counter_sets), &s->ncounter_sets,
                          (void **)&s->counter_sets, counter_set, NULL)))
        return rc;
    for (uint32_t i = 1; i < s->ncounter_sets; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (s->counter_sets[i].name == s->counter_sets[j].name) {
                ks_dec_push(d, "sharedCounters");
                ks_dec_push_index(d, i);
                return ks__dra_duplicate(d, sets->items[i], ks_intern_str(s->counter_sets[i].name));
            }
        }
    }
    return 0;
}

static int slice_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_resource_slice *s)
{
    const struct ks_yaml_node *spec = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, false, &s->meta)) || (rc = ks__dra_check_meta_name(d, doc, &s->meta)) ||
        (rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    if (!spec)
        return ks__dra_required(d, doc, "spec.driver", NULL);
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = slice_spec(d, spec, s)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_DECODER(ks_decode_resource_slice, struct ks_resource_slice, ks_resource_slice_destroy, slice_body)
