/*
 * decode_dra.c - what the resource.k8s.io/v1 decoders share: field errors in the API
 * server's words, name checks, CEL selector lists, opaque configurations, device
 * tolerations, quantity maps and binding conditions; and the DeviceClass.
 *
 * Validation follows pkg/apis/resource/validation/validation.go with v1.37's default
 * feature gates; the first error it would list is the one reported. The CEL expressions
 * are checked for length here; whether they compile is checked where the device
 * environment lives (dra/), by the command that loads them.
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

/* ---- field errors ------------------------------------------------------------------------------ */

static void push(struct ks_decoder *d, const char *at)
{
    if (at)
        ks_dec_push(d, at);
}

int ks__dra_required(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *detail)
{
    push(d, at);
    if (detail && detail[0])
        return ks_dec_fail(d, n, 0, "Required value: %s", detail);
    return ks_dec_fail(d, n, 0, "Required value");
}

int ks__dra_too_many(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, uint32_t count,
                     uint32_t max)
{
    push(d, at);
    return ks_dec_fail(d, n, 0, "Too many: %u: must have at most %u item%s", count, max, max == 1 ? "" : "s");
}

int ks__dra_too_long(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, size_t max)
{
    push(d, at);
    return ks_dec_fail(d, n, 0, "Too long: may not be more than %zu byte%s", max, max == 1 ? "" : "s");
}

int ks__dra_duplicate(struct ks_decoder *d, const struct ks_yaml_node *n, const char *value)
{
    char q[256];

    ks_go_quote(q, sizeof(q), value, strlen(value));
    return ks_dec_fail(d, n, 0, "Duplicate value: %s", q);
}

int ks__dra_invalid_int(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, int64_t value,
                        const char *detail)
{
    push(d, at);
    return ks_dec_fail(d, n, 0, "Invalid value: %lld: %s", (long long)value, detail);
}

int ks__dra_unsupported(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *value,
                        const char *supported)
{
    char q[256];

    push(d, at);
    ks_go_quote(q, sizeof(q), value, strlen(value));
    return ks_dec_fail(d, n, 0, "Unsupported value: %s: supported values: %s", q, supported);
}

int ks__dra_seq_max(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t max,
                    const struct ks_yaml_node **out)
{
    int rc;

    *out = NULL;
    if ((rc = ks_dec_seq(d, n, key, out)))
        return rc;
    if (*out && (*out)->n > max)
        return ks__dra_too_many(d, *out, key, (*out)->n, max);
    return 0;
}

/* ---- names ------------------------------------------------------------------------------------- */

int ks__dra_check_label(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *name)
{
    const char *why = ks_name_dns1123_label(name, strlen(name));
    return why ? ks_dec_invalid(d, n, at, name, why) : 0;
}

int ks__dra_check_subdomain(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at,
                            const char *name)
{
    const char *why = ks_name_dns1123_subdomain(name, strlen(name));
    return why ? ks_dec_invalid(d, n, at, name, why) : 0;
}

int ks__dra_check_driver(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *name)
{
    size_t len = strlen(name);
    char lower[KS_DRA_POOL_NAME_MAX + 2];

    if (len == 0)
        return ks__dra_required(d, n, at, NULL);
    if (len > KS_DRA_DRIVER_NAME_MAX)
        return ks__dra_too_long(d, n, at, KS_DRA_DRIVER_NAME_MAX);
    for (size_t i = 0; i <= len; i++)
        lower[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] - 'A' + 'a') : name[i];
    const char *why = ks_name_dns1123_subdomain(lower, len);
    return why ? ks_dec_invalid(d, n, at, name, why) : 0;
}

int ks__dra_check_pool(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *name)
{
    size_t len = strlen(name), start = 0;

    if (len == 0)
        return ks__dra_required(d, n, at, NULL);
    if (len > KS_DRA_POOL_NAME_MAX)
        return ks__dra_too_long(d, n, at, KS_DRA_POOL_NAME_MAX);
    for (size_t i = 0; i <= len; i++) {
        if (i == len || name[i] == '/') {
            const char *why = ks_name_dns1123_subdomain(name + start, i - start);
            if (why) {
                char part[KS_DRA_POOL_NAME_MAX + 1];
                snprintf(part, sizeof(part), "%.*s", (int)(i - start), name + start);
                return ks_dec_invalid(d, n, at, part, why);
            }
            start = i + 1;
        }
    }
    return 0;
}

/* validateCIdentifier */
static int check_c_identifier(struct ks_decoder *d, const struct ks_yaml_node *n, const char *id, size_t len)
{
    char buf[256];

    if (len > KS_DRA_ID_MAX)
        return ks__dra_too_long(d, n, NULL, KS_DRA_ID_MAX);
    const char *why = ks_name_c_identifier(id, len);
    if (!why)
        return 0;
    snprintf(buf, sizeof(buf), "%.*s", (int)len, id);
    return ks_dec_invalid(d, n, NULL, buf, why);
}

int ks__dra_check_qualified(struct ks_decoder *d, const struct ks_yaml_node *n, const char *name, bool full)
{
    const char *slash = strchr(name, '/');
    int rc;

    if (slash && strchr(slash + 1, '/'))
        return ks_dec_invalid(d, n, NULL, name, "must not contain more than one slash");
    if (!slash) {
        if ((rc = check_c_identifier(d, n, name, strlen(name))))
            return rc;
        if (full)
            return ks_dec_invalid(d, n, NULL, name,
                                  "a fully qualified name must be a domain and a name separated by a slash");
        return 0;
    }
    if (slash == name)
        return ks_dec_invalid(d, n, NULL, "", "the domain must not be empty");
    char domain[KS_DRA_POOL_NAME_MAX + 2];
    snprintf(domain, sizeof(domain), "%.*s", (int)(slash - name), name);
    if ((rc = ks__dra_check_driver(d, n, NULL, domain)))
        return rc;
    if (!slash[1])
        return ks_dec_invalid(d, n, NULL, "", "the name must not be empty");
    return check_c_identifier(d, n, slash + 1, strlen(slash + 1));
}

int ks__dra_check_meta_name(struct ks_decoder *d, const struct ks_yaml_node *doc,
                            const struct ks_object_meta *m)
{
    const struct ks_yaml_node *meta = ks_yaml_get(doc, "metadata");
    const struct ks_yaml_node *n = meta ? ks_yaml_get(meta, "name") : NULL;
    size_t saved = ks_dec_push(d, "metadata");
    int rc = ks__dra_check_subdomain(d, n ? n : doc, "name", m->name);

    if (rc == 0)
        ks_dec_pop(d, saved);
    return rc;
}

/* ---- selectors, configurations ------------------------------------------------------------------ */

int ks__dra_selectors(struct ks_decoder *d, const struct ks_yaml_node *n, uint32_t *count, const char ***out,
                      int **lines)
{
    const struct ks_yaml_node *seq;
    int rc;

    if ((rc = ks__dra_seq_max(d, n, "selectors", KS_DRA_SELECTORS_MAX, &seq)) || !seq)
        return rc;
    const char **exprs = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*exprs));
    int *at = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*at));
    if (!exprs || !at)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "selectors");
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *item = seq->items[i], *cel = NULL;
        size_t s2 = ks_dec_push_index(d, i);
        if (item->kind != KS_YAML_MAP)
            return ks_dec_fail(d, item, 0, "expected a map, found %s", ks_yaml_kind_name(item));
        if ((rc = ks_dec_map(d, item, "cel", &cel)))
            return rc;
        if (!cel)
            return ks__dra_required(d, item, "cel", NULL);
        ks_dec_push(d, "cel");
        if ((rc = ks_dec_string(d, cel, "expression", &exprs[i])))
            return rc;
        const struct ks_yaml_node *e = ks_yaml_get(cel, "expression");
        if (!exprs[i])
            exprs[i] = "";
        if (strlen(exprs[i]) > KS_DRA_CEL_EXPRESSION_MAX)
            return ks__dra_too_long(d, e, "expression", KS_DRA_CEL_EXPRESSION_MAX);
        at[i] = e ? e->line : cel->line;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    *count = seq->n;
    *out = exprs;
    *lines = at;
    return 0;
}

/* The JSON text of node @n into the arena (the parameters of an opaque configuration). */
static int json_text(struct ks_decoder *d, const struct ks_yaml_node *n, const char **out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;

    if (!f)
        return ks_dec_nomem(d);
    rc = ks_yaml_write_json(f, n);
    if (fclose(f) != 0 || rc < 0) {
        free(buf);
        return rc == -EINVAL ? ks_dec_fail(d, n, 0, "json: unsupported value") : ks_dec_nomem(d);
    }
    *out = ks_arena_strndup(d->arena, buf, len);
    free(buf);
    return *out ? 0 : ks_dec_nomem(d);
}

int ks__dra_opaque(struct ks_decoder *d, const struct ks_yaml_node *n, struct ks_opaque_config *out)
{
    const struct ks_yaml_node *o = NULL, *p;
    int rc;

    if ((rc = ks_dec_map(d, n, "opaque", &o)))
        return rc;
    if (!o)
        return ks__dra_required(d, n, "opaque", NULL);
    size_t saved = ks_dec_push(d, "opaque");
    out->driver = "";
    if ((rc = ks_dec_string(d, o, "driver", &out->driver)) ||
        (rc = ks__dra_check_driver(d, ks_yaml_get(o, "driver") ? ks_yaml_get(o, "driver") : o, "driver",
                                   out->driver)))
        return rc;
    p = ks_yaml_get(o, "parameters");
    if (!p || ks_yaml_is_null(p))
        return ks__dra_required(d, o, "parameters", NULL);
    if ((rc = json_text(d, p, &out->parameters)))
        return rc;
    if (strlen(out->parameters) > KS_DRA_OPAQUE_PARAMETERS_MAX)
        return ks__dra_too_long(d, p, "parameters", KS_DRA_OPAQUE_PARAMETERS_MAX);
    if (p->kind != KS_YAML_MAP)
        return ks_dec_invalid(d, p, "parameters", "<value omitted>", "must be a valid JSON object");
    ks_dec_pop(d, saved);
    return 0;
}

/* ---- tolerations, quantities, binding conditions ------------------------------------------------- */

static const char *const effect_names[] = {"None", "NoSchedule", "NoExecute", NULL};
#define EFFECTS_SUPPORTED "\"NoExecute\", \"NoSchedule\", \"None\""

int ks__dra_toleration(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_device_toleration *t = elem;
    const char *key = "", *op = "Equal", *value = "", *effect = "";
    char why[512];
    int rc;

    (void)ctx;
    t->toleration_seconds = -1;
    if ((rc = ks_dec_string(d, n, "key", &key)) || (rc = ks_dec_string(d, n, "operator", &op)) ||
        (rc = ks_dec_string(d, n, "value", &value)) || (rc = ks_dec_string(d, n, "effect", &effect)) ||
        (rc = ks_dec_int64(d, n, "tolerationSeconds", &t->toleration_seconds)))
        return rc;
    if (key[0] && !ks_qualified_name_ok(key, why, sizeof(why)))
        return ks_dec_invalid(d, ks_yaml_get(n, "key"), "key", key, why);
    if (!op[0])
        op = "Equal"; /* the API server defaults it */
    if (strcmp(op, "Exists") == 0) {
        if (value[0])
            return ks_dec_invalid(d, ks_yaml_get(n, "value"), "value", value,
                                  "must be empty for operator `Exists`");
        t->exists = true;
    } else if (strcmp(op, "Equal") == 0) {
        if (!ks_label_value_ok(value, why, sizeof(why)))
            return ks_dec_invalid(d, ks_yaml_get(n, "value"), "value", value, why);
    } else {
        return ks__dra_unsupported(d, ks_yaml_get(n, "operator"), "operator", op, "\"Equal\", \"Exists\"");
    }
    if (effect[0]) {
        int e;
        for (e = 0; effect_names[e] && strcmp(effect_names[e], effect) != 0; e++)
            ;
        if (!effect_names[e])
            return ks__dra_unsupported(d, ks_yaml_get(n, "effect"), "effect", effect, EFFECTS_SUPPORTED);
        t->has_effect = true;
        t->effect = (enum ks_device_taint_effect)e;
    }
    t->key = ks_intern(key);
    t->value = ks_intern(value);
    return t->key == KS_ID_NONE || t->value == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

int ks__dra_quantity(struct ks_decoder *d, const struct ks_yaml_node *n, struct ks_quantity *q)
{
    if (!n || ks_yaml_is_null(n) || n->kind != KS_YAML_SCALAR || ks_dec_quantity(n, q) < 0)
        return ks_dec_fail(d, n, 0,
                           "quantities must match the regular expression "
                           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    return 0;
}

static int quantity_pair(struct ks_decoder *d, const struct ks_yaml_node *key,
                         const struct ks_yaml_node *value, void *elem, void *ctx)
{
    struct ks_named_quantity *q = elem;
    int rc;

    (void)ctx;
    if ((rc = ks__dra_check_qualified(d, key, key->str, false)))
        return rc;
    ks_dec_push_map_key(d, key->str);
    if ((rc = ks__dra_quantity(d, value, &q->value)))
        return rc;
    q->name = ks_intern_n(key->str, key->len);
    return q->name == KS_ID_NONE ? ks_dec_nomem(d) : 0;
}

int ks__dra_quantity_map(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t *count,
                         struct ks_named_quantity **out)
{
    return ks_dec_pairs(d, n, key, sizeof(**out), count, (void **)out, quantity_pair, NULL);
}

/* One list of condition names: at most 4, each a qualified name, no duplicates. */
static int conditions(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t *count,
                      const char ***out)
{
    const struct ks_yaml_node *seq;
    char why[512];
    int rc;

    if ((rc = ks__dra_seq_max(d, n, key, KS_DRA_BINDING_CONDITIONS_MAX, &seq)) ||
        (rc = ks_dec_string_list(d, n, key, count, out)))
        return rc;
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < *count; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if (!ks_qualified_name_ok((*out)[i], why, sizeof(why)))
            return ks_dec_invalid(d, seq->items[i], NULL, (*out)[i], why);
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp((*out)[j], (*out)[i]) == 0)
                return ks__dra_duplicate(d, seq->items[i], (*out)[i]);
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

int ks__dra_binding_conditions(struct ks_decoder *d, const struct ks_yaml_node *n, uint32_t *nok,
                               const char ***ok, uint32_t *nfail, const char ***fail)
{
    int rc;

    if ((rc = conditions(d, n, "bindingConditions", nok, ok)) ||
        (rc = conditions(d, n, "bindingFailureConditions", nfail, fail)))
        return rc;
    for (uint32_t i = 0; i < *nfail; i++) {
        for (uint32_t j = 0; j < *nok; j++) {
            if (strcmp((*fail)[i], (*ok)[j]) == 0) {
                ks_dec_push(d, "bindingFailureConditions");
                ks_dec_push_index(d, i);
                return ks_dec_invalid(d, ks_yaml_get(n, "bindingFailureConditions"), NULL, (*fail)[i],
                                      "bindingFailureConditions must not overlap with bindingConditions");
            }
        }
    }
    if (*nok == 0 && *nfail > 0) {
        ks_dec_push(d, "bindingConditions");
        return ks_dec_fail(d, n, 0,
                           "Invalid value: null: bindingConditions are required to use "
                           "bindingFailureConditions");
    }
    if (*nfail == 0 && *nok > 0) {
        ks_dec_push(d, "bindingFailureConditions");
        return ks_dec_fail(d, n, 0,
                           "Invalid value: null: bindingFailureConditions are required to use "
                           "bindingConditions");
    }
    return 0;
}

/* ---- DeviceClass --------------------------------------------------------------------------------- */

static int class_config(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    (void)ctx;
    return ks__dra_opaque(d, n, elem);
}

static int class_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_device_class *c)
{
    const struct ks_yaml_node *spec = NULL, *seq;
    int rc;

    if ((rc = ks_dec_meta(d, doc, false, &c->meta)) || (rc = ks__dra_check_meta_name(d, doc, &c->meta)) ||
        (rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    c->name = ks_intern(c->meta.name);
    if (c->name == KS_ID_NONE)
        return ks_dec_nomem(d);
    if (!spec)
        return 0;
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = ks__dra_selectors(d, spec, &c->nselectors, &c->selectors, &c->selector_lines)) ||
        (rc = ks__dra_seq_max(d, spec, "config", KS_DRA_CONFIG_MAX, &seq)) ||
        (rc = ks_dec_list(d, spec, "config", sizeof(*c->config), &c->nconfig, (void **)&c->config,
                          class_config, NULL)) ||
        (rc = ks_dec_string(d, spec, "extendedResourceName", &c->extended_resource_name)))
        return rc;
    if (c->extended_resource_name && !ks_is_extended_resource_name(c->extended_resource_name))
        return ks_dec_invalid(d, ks_yaml_get(spec, "extendedResourceName"), "extendedResourceName",
                              c->extended_resource_name, "must be a valid extended resource name");
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_DECODER(ks_decode_device_class, struct ks_device_class, ks_device_class_destroy, class_body)
