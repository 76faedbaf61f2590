/*
 * test_cel_dra.c - CEL as Dynamic Resource Allocation device selectors use it: a
 * "kubernetes.DRADevice" object backed by host objects (driver, attributes by domain and id,
 * capacity by domain and id, allowMultipleAllocations), the declared size bounds of
 * k8s.io/dynamic-resource-allocation/cel/compile.go, and the test table of its compile_test.go
 * (the cases without list-type attributes): compile errors, match results, evaluation errors
 * and the estimated worst-case cost (MaxCost).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/internal/cel.h"

/* ---- a device as host objects
 * ------------------------------------------------------------------------------- */

struct attr {
    const char *domain, *id;
    struct ks_cel_value value;
};

struct device {
    const char *driver;
    const struct attr *attrs; /* attributes (value any) or capacity (value QUANTITY) */
    uint32_t nattrs;
    const struct attr *caps;
    uint32_t ncaps;
    bool multi;
};

/* One domain of a device's attributes or capacity: the inner map's object. */
struct domain_view {
    const struct attr *v;
    uint32_t n;
    const char *domain;
    size_t dlen;
};

static struct ks_cel_value str(const char *s)
{
    struct ks_cel_value v = {.kind = KS_CEL_STRING};
    v.v.str.p = s;
    v.v.str.len = strlen(s);
    return v;
}

static bool key_is(const struct ks_cel_value *k, const char *s, size_t n)
{
    return k->kind == KS_CEL_STRING && k->v.str.len == n && !memcmp(k->v.str.p, s, n);
}

static int inner_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                        struct ks_cel_scratch *s)
{
    const struct domain_view *d = obj;
    (void)s;
    for (uint32_t i = 0; i < d->n; i++)
        if (strlen(d->v[i].domain) == d->dlen && !memcmp(d->v[i].domain, d->domain, d->dlen) &&
            key_is(key, d->v[i].id, strlen(d->v[i].id))) {
            *out = d->v[i].value;
            return 0;
        }
    return 1;
}

static uint32_t inner_size(const void *obj)
{
    const struct domain_view *d = obj;
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->n; i++)
        n += strlen(d->v[i].domain) == d->dlen && !memcmp(d->v[i].domain, d->domain, d->dlen);
    return n;
}

static int inner_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                       struct ks_cel_scratch *s)
{
    const struct domain_view *d = obj;
    (void)s;
    for (uint32_t k = 0; k < d->n; k++) {
        if (strlen(d->v[k].domain) != d->dlen || memcmp(d->v[k].domain, d->domain, d->dlen))
            continue;
        if (i-- == 0) {
            if (key)
                *key = str(d->v[k].id);
            if (value)
                *value = d->v[k].value;
            return 0;
        }
    }
    return -ERANGE;
}

static const struct ks_cel_host_ops inner_ops = {
    .lookup = inner_lookup, .size = inner_size, .entry = inner_entry};

/* The outer map: domain -> inner map; an unknown domain reads as an empty map, as DRA's mapper does. */
struct outer {
    const struct attr *v;
    uint32_t n;
};

static struct ks_cel_value inner_value(const struct outer *o, const char *domain, size_t len,
                                       struct ks_cel_scratch *s)
{
    struct domain_view *d = ks_cel_scratch_alloc(s, sizeof(*d));
    cr_assert_not_null(d);
    d->v = o->v;
    d->n = o->n;
    d->domain = domain;
    d->dlen = len;
    struct ks_cel_value v = {.kind = KS_CEL_MAP};
    v.v.host.ops = &inner_ops;
    v.v.host.obj = d;
    return v;
}

static int outer_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                        struct ks_cel_scratch *s)
{
    if (key->kind != KS_CEL_STRING)
        return 1;
    *out = inner_value(obj, key->v.str.p, key->v.str.len, s);
    return 0;
}

/* The i-th distinct domain. */
static const char *nth_domain(const struct outer *o, uint32_t i)
{
    for (uint32_t k = 0; k < o->n; k++) {
        bool seen = false;
        for (uint32_t j = 0; j < k; j++)
            seen |= !strcmp(o->v[j].domain, o->v[k].domain);
        if (!seen && i-- == 0)
            return o->v[k].domain;
    }
    return NULL;
}

static uint32_t outer_size(const void *obj)
{
    uint32_t n = 0;
    while (nth_domain(obj, n))
        n++;
    return n;
}

static int outer_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                       struct ks_cel_scratch *s)
{
    const char *d = nth_domain(obj, i);
    if (!d)
        return -ERANGE;
    if (key)
        *key = str(d);
    if (value) {
        if (!s)
            return -EINVAL;
        *value = inner_value(obj, d, strlen(d), s);
    }
    return 0;
}

static const struct ks_cel_host_ops outer_ops = {
    .lookup = outer_lookup, .size = outer_size, .entry = outer_entry};

struct device_obj {
    const struct device *d;
    struct outer attrs, caps;
};

static int device_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                         struct ks_cel_scratch *s)
{
    const struct device_obj *o = obj;
    (void)s;
    if (key_is(key, "driver", 6)) {
        *out = str(o->d->driver);
    } else if (key_is(key, "attributes", 10) || key_is(key, "capacity", 8)) {
        *out = (struct ks_cel_value){.kind = KS_CEL_MAP};
        out->v.host.ops = &outer_ops;
        out->v.host.obj = key->v.str.len == 10 ? &o->attrs : &o->caps;
    } else if (key_is(key, "allowMultipleAllocations", 24)) {
        *out = (struct ks_cel_value){.kind = KS_CEL_BOOL};
        out->v.b = o->d->multi;
    } else {
        return 1;
    }
    return 0;
}

static const struct ks_cel_host_ops device_ops = {.lookup = device_lookup};

/* ---- the DRA environment (compile.go newCompiler)
 * -------------------------------------------------------------- */

#define MAX_ATTR_VALUE_LEN 64 /* resourceapi.DeviceAttributeMaxValueLength */
#define MAX_DOMAIN_LEN     63 /* DeviceMaxDomainLength */
#define MAX_ID_LEN         32 /* DeviceMaxIDLength */
#define MAX_DRIVER_LEN     63 /* DriverNameMaxLength */
#define MAX_ATTRS          32 /* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define DRA_COST_LIMIT     1000000

static struct ks_cel_env *dra_env(void)
{
    struct ks_cel_env *env;
    cr_assert_eq(ks_cel_env_create(KS_CEL_LIB_KUBERNETES | KS_CEL_LIB_BINDINGS, &env), 0);
    const struct ks_cel_type *attr = ks_cel_type_bounded(env, KS_CEL_DYN, MAX_ATTR_VALUE_LEN);
    const struct ks_cel_type *domain = ks_cel_type_bounded(env, KS_CEL_STRING, MAX_DOMAIN_LEN);
    const struct ks_cel_type *id = ks_cel_type_bounded(env, KS_CEL_STRING, MAX_ID_LEN);
    const struct ks_cel_type *driver = ks_cel_type_bounded(env, KS_CEL_STRING, MAX_DRIVER_LEN);
    const struct ks_cel_type *inner_attr = ks_cel_type_map_bounded(env, id, attr, MAX_ATTRS);
    const struct ks_cel_type *outer_attr = ks_cel_type_map_bounded(env, domain, inner_attr, MAX_ATTRS);
    const struct ks_cel_type *inner_cap =
        ks_cel_type_map_bounded(env, id, ks_cel_type_kind(env, KS_CEL_QUANTITY), MAX_ATTRS);
    const struct ks_cel_type *outer_cap = ks_cel_type_map_bounded(env, domain, inner_cap, MAX_ATTRS);
    struct ks_cel_field_decl fields[] = {
        {"driver", driver},
        {"attributes", outer_attr},
        {"capacity", outer_cap},
        {"allowMultipleAllocations", ks_cel_type_kind(env, KS_CEL_BOOL)},
    };
    const struct ks_cel_type *dev = ks_cel_type_object(env, "kubernetes.DRADevice", fields, 4);
    cr_assert_not_null(dev);
    cr_assert_eq(ks_cel_env_declare(env, "device", dev), 0);
    return env;
}

static struct ks_cel_value q(const char *s)
{
    struct ks_cel_value v = {.kind = KS_CEL_QUANTITY};
    cr_assert_eq(ks_quantity_parse(s, &v.v.q), 0);
    return v;
}

static struct ks_cel_value boolv(bool b)
{
    struct ks_cel_value v = {.kind = KS_CEL_BOOL};
    v.v.b = b;
    return v;
}

static struct ks_cel_value intv(int64_t i)
{
    struct ks_cel_value v = {.kind = KS_CEL_INT};
    v.v.i = i;
    return v;
}

static struct ks_cel_value semverv(uint64_t ma, uint64_t mi, uint64_t pa)
{
    struct ks_cel_value v = {.kind = KS_CEL_SEMVER};
    v.v.semver.major = ma;
    v.v.semver.minor = mi;
    v.v.semver.patch = pa;
    return v;
}

struct dra_case {
    const char *name;
    const char *expr;
    const char *compile_error; /* substring */
    const char *match_error;   /* substring */
    bool match;
    uint64_t max_cost;
    const struct attr *attrs;
    uint32_t nattrs;
    const struct attr *caps;
    uint32_t ncaps;
    bool multi;
};

static void run(const struct dra_case *c)
{
    struct ks_cel_env *env = dra_env();
    struct ks_cel_program *p = NULL;
    char *msg = NULL;
    int rc = ks_cel_compile(env, c->expr, strlen(c->expr), &p, &msg);
    if (c->compile_error) {
        cr_expect_neq(rc, 0, "%s: compiled, wanted error %s", c->name, c->compile_error);
        if (rc)
            cr_expect(strstr(msg, c->compile_error) != NULL, "%s: compile error %s, want %s", c->name, msg,
                      c->compile_error);
        free(msg);
        ks_cel_env_destroy(env);
        return;
    }
    cr_assert_eq(rc, 0, "%s: %s", c->name, msg ? msg : "");
    cr_expect_eq(ks_cel_program_max_cost(p), c->max_cost, "%s: max cost %" PRIu64 ", want %" PRIu64, c->name,
                 ks_cel_program_max_cost(p), c->max_cost);
    struct device d = {.driver = "dra.example.com",
                       .attrs = c->attrs,
                       .nattrs = c->nattrs,
                       .caps = c->caps,
                       .ncaps = c->ncaps,
                       .multi = c->multi};
    struct device_obj o = {.d = &d, .attrs = {c->attrs, c->nattrs}, .caps = {c->caps, c->ncaps}};
    struct ks_cel_binding b = {.name = "device", .value = {.kind = KS_CEL_OBJECT}};
    b.value.v.host.ops = &device_ops;
    b.value.v.host.obj = &o;
    struct ks_cel_scratch *s;
    cr_assert_eq(ks_cel_scratch_create(&s), 0);
    struct ks_cel_value r;
    uint64_t cost;
    char err[256];
    rc = ks_cel_eval(p, &b, 1, s, DRA_COST_LIMIT, &r, &cost, err, sizeof(err));
    cr_expect(cost <= ks_cel_program_max_cost(p), "%s: cost %" PRIu64 " over the estimate", c->name, cost);
    if (c->match_error) {
        cr_expect_neq(rc, 0, "%s: evaluated, wanted error %s", c->name, c->match_error);
        if (rc)
            cr_expect(strstr(err, c->match_error) != NULL, "%s: error %s, want %s", c->name, err,
                      c->match_error);
    } else {
        cr_expect_eq(rc, 0, "%s: %s", c->name, err);
        if (!rc) {
            cr_expect_eq(r.kind, KS_CEL_BOOL, "%s: result kind %d", c->name, r.kind);
            cr_expect_eq(r.v.b, c->match, "%s: match %d, want %d", c->name, r.v.b, c->match);
        }
    }
    ks_cel_scratch_destroy(s);
    ks_cel_program_destroy(p);
    ks_cel_env_destroy(env);
}

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const struct attr name_true[] = {{"dra.example.com", "name", {.kind = KS_CEL_BOOL, .v.b = true}}};
static const struct attr something_true[] = {
    {"dra.example.com", "something", {.kind = KS_CEL_BOOL, .v.b = true}}};
static const struct attr other_name_true[] = {
    {"other.example.com", "name", {.kind = KS_CEL_BOOL, .v.b = true}}};

Test(cel_dra, compile_test_table)
{
    struct attr name_int[] = {{"dra.example.com", "name", intv(1)}};
    struct attr name_fish[] = {{"dra.example.com", "name", str("fish")}};
    struct attr name_version[] = {{"dra.example.com", "name", semverv(1, 0, 0)}};
    struct attr services[] = {{"dra.example.com", "services", str("some_example_value")}};
    struct attr asym[] = {{"dra.example.com", "services", str("asymetric")}};
    struct attr cap_name[] = {{"dra.example.com", "name", q("1Mi")}};
    struct attr cap_mem[] = {{"dra.example.com", "memory", q("1Mi")}};
    struct attr all_attrs[] = {{"dra.example.com", "bool", boolv(true)},
                               {"dra.example.com", "int", intv(1)},
                               {"dra.example.com", "string", str("fish")},
                               {"dra.example.com", "version", semverv(1, 0, 0)}};
    struct attr all_caps[] = {{"dra.example.com", "quantity", q("1Mi")}};
    struct attr abc[] = {{"dra.example.com", "a", boolv(true)},
                         {"dra.example.com", "b", boolv(true)},
                         {"dra.example.com", "c", boolv(true)}};
    const struct dra_case cases[] = {
        {.name = "true", .expr = "true", .match = true},
        {.name = "false", .expr = "false", .match = false},
        {.name = "syntax-error", .expr = "?!", .compile_error = "Syntax error"},
        {.name = "runtime-error-lookup-identifier",
         .expr = "device.attributes[\"no-such-domain\"].noSuchAttr.isGreaterThan(quantity(\"0\"))",
         .match_error = "no such key: noSuchAttr",
         .max_cost = 6},
        {.name = "runtime-error-lookup-map",
         .expr = "device.attributes[\"no-such-domain\"][\"noSuchAttr\"].isGreaterThan(quantity(\"0\"))",
         .match_error = "no such key: noSuchAttr",
         .max_cost = 6},
        {.name = "domain-check-negative", .expr = "\"no-such-domain\" in device.attributes", .max_cost = 3},
        {.name = "domain-check-positive",
         .expr = "\"dra.example.com\" in device.attributes",
         .attrs = something_true,
         .nattrs = 1,
         .match = true,
         .max_cost = 3},
        {.name = "real-driver-name",
         .expr = "device.driver == \"dra.example.com\"",
         .match = true,
         .max_cost = 4},
        {.name = "driver-name-qualifier",
         .expr = "device.attributes[\"dra.example.com\"].name",
         .attrs = name_true,
         .nattrs = 1,
         .match = true,
         .max_cost = 4},
        {.name = "driver-name-qualifier-map-lookup",
         .expr = "device.attributes[\"dra.example.com\"][\"name\"]",
         .attrs = name_true,
         .nattrs = 1,
         .match = true,
         .max_cost = 4},
        {.name = "bind",
         .expr = "cel.bind(dra, device.attributes[\"dra.example.com\"], dra.name)",
         .attrs = name_true,
         .nattrs = 1,
         .match = true,
         .max_cost = 15},
        {.name = "qualified-attribute-name",
         .expr = "device.attributes[\"other.example.com\"].name",
         .attrs = other_name_true,
         .nattrs = 1,
         .match = true,
         .max_cost = 4},
        {.name = "int",
         .expr = "device.attributes[\"dra.example.com\"].name > 0",
         .attrs = name_int,
         .nattrs = 1,
         .match = true,
         .max_cost = 5},
        {.name = "string",
         .expr = "device.attributes[\"dra.example.com\"].name == \"fish\"",
         .attrs = name_fish,
         .nattrs = 1,
         .match = true,
         .max_cost = 5},
        {.name = "macro-exists-on-int",
         .expr = "device.attributes[\"dra.example.com\"].name.exists(x, x > 0)",
         .attrs = name_int,
         .nattrs = 1,
         .match_error = "got 'types.Int', expected iterable type",
         .max_cost = 5 + (3 + 3) * 64},
        {.name = "macro-exists-on-string",
         .expr = "device.attributes[\"dra.example.com\"].name.exists(x, x == \"fish\")",
         .attrs = name_fish,
         .nattrs = 1,
         .match_error = "got 'types.String', expected iterable type",
         .max_cost = 5 + (3 + 3) * 64},
        {.name = "version",
         .expr = "device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"0.0.1\"))",
         .attrs = name_version,
         .nattrs = 1,
         .match = true,
         .max_cost = 6},
        {.name = "version_v",
         .expr = "device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"v0.0.1\", true)) && "
                 "isSemver(\"v1.0.0\", true)",
         .attrs = name_version,
         .nattrs = 1,
         .match = true,
         .max_cost = 7},
        {.name = "quantity",
         .expr = "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
         .caps = cap_name,
         .ncaps = 1,
         .match = true,
         .max_cost = 6},
        {.name = "check-positive",
         .expr = "\"name\" in device.capacity[\"dra.example.com\"] && "
                 "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
         .caps = cap_name,
         .ncaps = 1,
         .match = true,
         .max_cost = 10},
        {.name = "check-negative",
         .expr = "!(\"name\" in device.capacity[\"dra.example.com\"]) || "
                 "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
         .match = true,
         .max_cost = 11},
        {.name = "all",
         .expr = "\ndevice.capacity[\"dra.example.com\"].quantity.isGreaterThan(quantity(\"1Ki\")) &&\n"
                 "device.attributes[\"dra.example.com\"].bool &&\n"
                 "device.attributes[\"dra.example.com\"].int > 0 &&\n"
                 "device.attributes[\"dra.example.com\"].string == \"fish\" &&\n"
                 "device.attributes[\"dra.example.com\"].version.isGreaterThan(semver(\"0.0.1\")) &&\n"
                 "device.capacity[\"dra.example.com\"][\"quantity\"].isGreaterThan(quantity(\"1Ki\")) &&\n"
                 "device.attributes[\"dra.example.com\"][\"bool\"] &&\n"
                 "device.attributes[\"dra.example.com\"][\"int\"] > 0 &&\n"
                 "device.attributes[\"dra.example.com\"][\"string\"] == \"fish\" &&\n"
                 "device.attributes[\"dra.example.com\"][\"version\"].isGreaterThan(semver(\"0.0.1\"))\n",
         .attrs = all_attrs,
         .nattrs = N(all_attrs),
         .caps = all_caps,
         .ncaps = 1,
         .match = true,
         .max_cost = 52},
        {.name = "many",
         .expr = "device.attributes[\"dra.example.com\"].a && device.attributes[\"dra.example.com\"].b && "
                 "device.attributes[\"dra.example.com\"].c",
         .attrs = abc,
         .nattrs = N(abc),
         .match = true,
         .max_cost = 12},
        {.name = "check_attribute_domains",
         .expr = "device.attributes.exists_one(x, x == \"dra.example.com\")",
         .attrs = services,
         .nattrs = 1,
         .match = true,
         .max_cost = 164},
        {.name = "check_attribute_ids",
         .expr = "device.attributes[\"dra.example.com\"].exists_one(x, x == \"services\")",
         .attrs = services,
         .nattrs = 1,
         .match = true,
         .max_cost = 133},
        {.name = "split_attribute",
         .expr = "device.attributes[\"dra.example.com\"].services.split(\"example\").size() >= 2",
         .attrs = services,
         .nattrs = 1,
         .match = true,
         .max_cost = 19},
        {.name = "regexp_attribute",
         .expr = "device.attributes[\"dra.example.com\"].services.matches(\"[^a]?sym\")",
         .attrs = asym,
         .nattrs = 1,
         .match = true,
         .max_cost = 18},
        {.name = "check_capacity_domains",
         .expr = "device.capacity.exists_one(x, x == \"dra.example.com\")",
         .caps = cap_mem,
         .ncaps = 1,
         .match = true,
         .max_cost = 164},
        {.name = "check_capacity_ids",
         .expr = "device.capacity[\"dra.example.com\"].exists_one(x, x == \"memory\")",
         .caps = cap_mem,
         .ncaps = 1,
         .match = true,
         .max_cost = 133},
        {.name = "expensive",
         .expr =
             "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, "
             "6, "
             "7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, "
             "10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, "
             "int('1'.find('[0-9]*')) < 100)))))))",
         .match_error = "actual cost limit exceeded",
         .max_cost = 85555551},
        {.name = "allow_multiple_allocations",
         .expr = "device.allowMultipleAllocations == true",
         .multi = true,
         .match = true,
         .max_cost = 3},
        {.name = "allow_multiple_allocations_default",
         .expr = "device.allowMultipleAllocations == false",
         .match = true,
         .max_cost = 3},
    };
    for (size_t i = 0; i < N(cases); i++)
        run(&cases[i]);
}

Test(cel_dra, selector_with_quantity_and_model)
{
    struct attr attrs[] = {{"dra.example.com", "model", str("a100")}};
    struct attr caps[] = {{"dra.example.com", "memory", q("80Gi")}};
    const struct dra_case c = {
        .name = "selector",
        .expr = "device.driver == \"dra.example.com\" && device.attributes[\"dra.example.com\"].model == "
                "\"a100\" && "
                "device.capacity[\"dra.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0",
        .attrs = attrs,
        .nattrs = 1,
        .caps = caps,
        .ncaps = 1,
        .match = true,
        .max_cost = 16,
    };
    run(&c);
    struct attr caps_small[] = {{"dra.example.com", "memory", q("16Gi")}};
    struct dra_case small = c;
    small.name = "selector-small";
    small.caps = caps_small;
    small.match = false;
    run(&small);
}

Test(cel_dra, type_error_is_not_bool)
{
    struct ks_cel_env *env = dra_env();
    struct ks_cel_program *p;
    char *msg;
    cr_assert_eq(ks_cel_compile(env, "1", 1, &p, &msg), 0);
    cr_expect_eq(ks_cel_type_kind_of(ks_cel_program_type(p)), KS_CEL_INT);
    ks_cel_program_destroy(p);
    const char *bad = "device.foo == 1";
    cr_assert_eq(ks_cel_compile(env, bad, strlen(bad), &p, &msg), -EINVAL);
    cr_expect_str_eq(msg, "ERROR: <input>:1:7: undefined field 'foo'\n | device.foo == 1\n | ......^");
    free(msg);
    ks_cel_env_destroy(env);
}

Test(cel_dra, evaluation_is_repeatable_with_one_scratch)
{
    struct ks_cel_env *env = dra_env();
    const char *e = "device.driver == \"dra.example.com\" && device.attributes[\"dra.example.com\"].name";
    struct ks_cel_program *p;
    char *msg;
    cr_assert_eq(ks_cel_compile(env, e, strlen(e), &p, &msg), 0);
    struct device d = {.driver = "dra.example.com", .attrs = name_true, .nattrs = 1};
    struct device_obj o = {.d = &d, .attrs = {name_true, 1}};
    struct ks_cel_binding b = {.name = "device", .value = {.kind = KS_CEL_OBJECT}};
    b.value.v.host.ops = &device_ops;
    b.value.v.host.obj = &o;
    struct ks_cel_scratch *s;
    cr_assert_eq(ks_cel_scratch_create(&s), 0);
    for (int i = 0; i < 1000; i++) {
        struct ks_cel_value r;
        uint64_t cost;
        char err[128];
        cr_assert_eq(ks_cel_eval(p, &b, 1, s, 0, &r, &cost, err, sizeof(err)), 0, "%s", err);
        cr_assert(r.kind == KS_CEL_BOOL && r.v.b);
        cr_assert_eq(cost, 8);
    }
    ks_cel_scratch_destroy(s);
    ks_cel_program_destroy(p);
    ks_cel_env_destroy(env);
}
