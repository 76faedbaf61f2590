/*
 * device_cel.c - device selectors: the CEL environment DRA compiles them in, their
 * compilation and their evaluation on a device, through the CEL module's public API
 * (ksched/internal/cel.h) only.
 *
 * The environment is Kubernetes' stored-expression environment (the scheduler compiles
 * selectors as stored expressions, which take every versioned option whatever the feature
 * gates) plus cel-go's ext.Bindings, with one variable `device` of object type
 * kubernetes.DRADevice: driver (string), allowMultipleAllocations (bool), attributes (map
 * from domain to map from id to dyn: int, bool, string or semver values) and capacity (map
 * from domain to map from id to quantity). Attribute values are dyn because the newest
 * declaration, the one stored expressions see, types them so.
 *
 * Compilation keeps upstream's CompilationResult errors: "compilation failed: <issues>"
 * and "must evaluate to bool or the unknown type, not <type>". Evaluation binds `device`
 * to the device's view (device_view.c) as a host object, so nothing is copied, counts
 * cel-go's runtime cost against resourceapi.CELSelectorExpressionMaxCost (1,000,000), and
 * returns upstream's errors: the runtime error through cel.EnhanceRuntimeError (a "no such
 * key:" error gets its hint appended) and "CEL result of type <t> could not be converted to
 * bool: <why>".
 *
 * The `includes` member function that the environment declares for list attributes
 * (DRAListTypeAttributes, not part of v1.37's default allocator) is not declared here.
 *
 * Context: ks__dra_cel_shared once per process, on first use; ks__dra_selector_new from any thread (the
 * environment is only read); ks__dra_selector_eval from any thread with its own CEL
 * scratch. Mirrors k8s.io/dynamic-resource-allocation/cel (compile.go: newCompiler,
 * CompileCELExpression, DeviceMatches; errors.go: EnhanceRuntimeError).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra_internal.h"

/* resourceapi.CELSelectorExpressionMaxCost */
#define DRA_CEL_MAX_COST 1000000u

struct dra_cel {
    struct ks_cel_env *env;
    struct dra_cel_types types;
};

bool ks__dra_cel_available(void)
{
    return true;
}

int ks__dra_cel_scratch_create(struct ks_cel_scratch **out)
{
    return ks_cel_scratch_create(out);
}

void ks__dra_cel_scratch_destroy(struct ks_cel_scratch *s)
{
    ks_cel_scratch_destroy(s);
}

const struct dra_cel_types *ks__dra_cel_types(const struct dra_cel *c)
{
    return &c->types;
}

static int cel_create(struct dra_cel **out)
{
    struct dra_cel *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (ks_cel_env_create(KS_CEL_LIB_KUBERNETES | KS_CEL_LIB_BINDINGS, &c->env))
        goto err_env;
    struct ks_cel_env *e = c->env;
    const struct ks_cel_type *str = ks_cel_type_kind(e, KS_CEL_STRING);
    const struct ks_cel_type *boolean = ks_cel_type_kind(e, KS_CEL_BOOL);
    const struct ks_cel_type *dyn = ks_cel_type_kind(e, KS_CEL_DYN);
    const struct ks_cel_type *qty = ks_cel_type_kind(e, KS_CEL_QUANTITY);
    if (!str || !boolean || !dyn || !qty)
        goto err_types;
    c->types.attr_inner = ks_cel_type_map(e, str, dyn);
    c->types.cap_inner = ks_cel_type_map(e, str, qty);
    if (!c->types.attr_inner || !c->types.cap_inner)
        goto err_types;
    c->types.attr_outer = ks_cel_type_map(e, str, c->types.attr_inner);
    c->types.cap_outer = ks_cel_type_map(e, str, c->types.cap_inner);
    if (!c->types.attr_outer || !c->types.cap_outer)
        goto err_types;
    const struct ks_cel_field_decl fields[] = {
        {"allowMultipleAllocations", boolean},
        {"attributes", c->types.attr_outer},
        {"capacity", c->types.cap_outer},
        {"driver", str},
    };
    c->types.device = ks_cel_type_object(e, "kubernetes.DRADevice", fields, 4);
    if (!c->types.device || ks_cel_env_declare(e, "device", c->types.device))
        goto err_types;
    *out = c;
    return 0;

err_types:
    ks_cel_env_destroy(c->env);
err_env:
    free(c);
    return -ENOMEM;
}

static struct dra_cel *shared;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_create(void)
{
    if (cel_create(&shared) < 0)
        shared = NULL;
}

const struct dra_cel *ks__dra_cel_shared(void)
{
    pthread_once(&shared_once, shared_create);
    return shared;
}

int ks__dra_selector_new(const struct dra_cel *c, const char *expr, size_t len, uint64_t hash,
                         uint32_t ndevices, struct dra_selector **out)
{
    struct dra_selector *s = calloc(1, sizeof(*s) + len + 1);
    if (!s)
        return -ENOMEM;
    char *copy = (char *)(s + 1);
    memcpy(copy, expr, len);
    copy[len] = '\0';
    s->cel = c;
    s->expr = copy;
    s->len = len;
    s->hash = hash;
    s->nmemo = ndevices;
    s->memo = calloc(ndevices ? ndevices : 1, sizeof(*s->memo));
    if (!s->memo)
        goto err_memo;
    char *msg = NULL;
    int rc = ks_cel_compile(c->env, copy, len, &s->prog, &msg);
    if (rc == -EINVAL) {
        size_t n = strlen("compilation failed: ") + (msg ? strlen(msg) : 0) + 1;
        s->error = malloc(n);
        if (!s->error) {
            free(msg);
            goto err_compile;
        }
        snprintf(s->error, n, "compilation failed: %s", msg ? msg : "");
        free(msg);
        s->prog = NULL;
    } else if (rc) {
        goto err_compile;
    } else {
        const struct ks_cel_type *t = ks_cel_program_type(s->prog);
        enum ks_cel_kind k = ks_cel_type_kind_of(t);
        if (k != KS_CEL_BOOL && k != KS_CEL_DYN) {
            char type[256];
            ks_cel_type_string(t, type, sizeof(type));
            const char *fmt = "must evaluate to bool or the unknown type, not %s";
            size_t n = strlen(fmt) + strlen(type) + 1;
            s->error = malloc(n);
            if (!s->error)
                goto err_compile;
            snprintf(s->error, n, fmt, type);
            ks_cel_program_destroy(s->prog);
            s->prog = NULL;
        }
    }
    *out = s;
    return 0;

err_compile:
    ks_cel_program_destroy(s->prog);
    free((void *)s->memo);
err_memo:
    free(s);
    return -ENOMEM;
}

void ks__dra_selector_destroy(struct dra_selector *s)
{
    if (!s)
        return;
    ks_cel_program_destroy(s->prog);
    free(s->error);
    free((void *)s->memo);
    free(s);
}

static const char no_such_key_hint[] =
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for "
    "optional fields";

int ks__dra_selector_eval(const struct dra_selector *s, const struct dra_cel_device *d,
                          struct ks_cel_scratch *cs, char *err, size_t errlen)
{
    if (d->error) {
        snprintf(err, errlen, "%s", d->error);
        return -EINVAL;
    }
    struct ks_cel_binding var = {.name = "device"};
    var.value.kind = KS_CEL_OBJECT;
    var.value.v.host.ops = &ks__dra_cel_device_ops;
    var.value.v.host.obj = d;
    var.value.v.host.type = s->cel->types.device;
    struct ks_cel_value res;
    int rc = ks_cel_eval(s->prog, &var, 1, cs, DRA_CEL_MAX_COST, &res, NULL, err, errlen);
    if (rc == -EINVAL) {
        if (strstr(err, "no such key:")) {
            size_t n = strlen(err);
            snprintf(err + n, errlen > n ? errlen - n : 0, "%s", no_such_key_hint);
        }
        return -EINVAL;
    }
    if (rc)
        return rc;
    if (res.kind == KS_CEL_BOOL)
        return res.v.b ? 1 : 0;
    const char *name = ks_cel_value_type_name(&res);
    switch (res.kind) {
    case KS_CEL_INT:
    case KS_CEL_UINT:
    case KS_CEL_DOUBLE:
        snprintf(
            err, errlen,
            "CEL result of type %s could not be converted to bool: unsupported type conversion from '%s' to "
            "bool",
            name, name);
        break;
    case KS_CEL_STRING:
        snprintf(err, errlen,
                 "CEL result of type %s could not be converted to bool: unsupported native conversion from "
                 "string to "
                 "'bool'",
                 name);
        break;
    default:
        snprintf(err, errlen,
                 "CEL result of type %s could not be converted to bool: type conversion error from '%s' to "
                 "'bool'",
                 name, name);
        break;
    }
    return -EINVAL;
}
