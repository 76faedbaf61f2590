/*
 * device_view.c - the `device` variable of a device selector as CEL host objects, built once
 * per device: what k8s.io/dynamic-resource-allocation/cel (compile.go, DeviceMatches)
 * builds as Go maps at every evaluation.
 *
 * The variable is an object of type kubernetes.DRADevice with the fields driver (string),
 * allowMultipleAllocations (bool, false when the device does not set it), attributes (a map
 * from domain to a map from id to the value: int, bool, string or semver) and capacity (a
 * map from domain to a map from id to a quantity). A qualified name "domain/id" is split at
 * its first '/'; a name without one belongs to the device's driver. Looking up a domain the
 * device has nothing of gives an empty map, never "no such key" (upstream's
 * newStringInterfaceMapWithDefault); looking up a missing id in a domain's map is absent.
 * A version attribute that is no semantic version makes every evaluation on the device fail
 * with "attribute <name>: parse semantic version: <blang/semver's error>", as DeviceMatches
 * fails before it evaluates anything.
 *
 * Invariants: a view is immutable once built and points into the device's own strings (the
 * slice outlives the catalog that holds the view); host lookups allocate nothing.
 * Mirrors cel/compile.go (DeviceMatches, parseQualifiedName, getAttributeValue) and
 * github.com/blang/semver/v4's Parse.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ksched/base/intern.h"

#include "dra_internal.h"

/* ---- semantic versions ------------------------------------------------------------------------------- */

static bool only_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
    }
    return true;
}

static bool only_alnum(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'))
            return false;
    }
    return true;
}

/* strconv.ParseUint(s, 10, 64) and its error text. */
static int parse_uint(const char *s, size_t n, uint64_t *out, char *err, size_t errlen)
{
    uint64_t v = 0;
    if (n == 0) {
        snprintf(err, errlen, "strconv.ParseUint: parsing \"\": invalid syntax");
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            snprintf(err, errlen, "strconv.ParseUint: parsing \"%.*s\": value out of range", (int)n, s);
            return -EINVAL;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int number_part(const char *s, size_t n, const char *what, const char *What, uint64_t *out, char *err,
                       size_t errlen)
{
    if (!only_digits(s, n)) {
        snprintf(err, errlen, "Invalid character(s) found in %s number \"%.*s\"", what, (int)n, s);
        return -EINVAL;
    }
    if (n > 1 && s[0] == '0') {
        snprintf(err, errlen, "%s number must not contain leading zeroes \"%.*s\"", What, (int)n, s);
        return -EINVAL;
    }
    return parse_uint(s, n, out, err, errlen);
}

int ks__dra_semver_parse(const char *s, uint64_t *major, uint64_t *minor, uint64_t *patch, const char **pre,
                         size_t *pre_len, char *err, size_t errlen)
{
    size_t n = strlen(s);
    if (n == 0) {
        snprintf(err, errlen, "Version string empty");
        return -EINVAL;
    }
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - s)) : NULL;
    if (!d2) {
        snprintf(err, errlen, "No Major.Minor.Patch elements found");
        return -EINVAL;
    }
    if (number_part(s, (size_t)(d1 - s), "major", "Major", major, err, errlen) ||
        number_part(d1 + 1, (size_t)(d2 - d1 - 1), "minor", "Minor", minor, err, errlen))
        return -EINVAL;
    const char *p = d2 + 1, *end = s + n;
    const char *plus = memchr(p, '+', (size_t)(end - p));
    const char *pend = plus ? plus : end;
    const char *dash = memchr(p, '-', (size_t)(pend - p));
    const char *num_end = dash ? dash : pend;
    if (number_part(p, (size_t)(num_end - p), "patch", "Patch", patch, err, errlen))
        return -EINVAL;
    *pre = NULL;
    *pre_len = 0;
    if (dash) {
        const char *q = dash + 1;
        for (;;) {
            const char *dot = memchr(q, '.', (size_t)(pend - q));
            const char *qe = dot ? dot : pend;
            size_t len = (size_t)(qe - q);
            if (len == 0) {
                snprintf(err, errlen, "Prerelease is empty");
                return -EINVAL;
            }
            if (only_digits(q, len)) {
                uint64_t v;
                if (len > 1 && q[0] == '0') {
                    snprintf(err, errlen,
                             "Numeric PreRelease version must not contain leading zeroes \"%.*s\"", (int)len,
                             q);
                    return -EINVAL;
                }
                if (parse_uint(q, len, &v, err, errlen))
                    return -EINVAL;
            } else if (!only_alnum(q, len)) {
                snprintf(err, errlen, "Invalid character(s) found in prerelease \"%.*s\"", (int)len, q);
                return -EINVAL;
            }
            if (!dot)
                break;
            q = dot + 1;
        }
        *pre = dash + 1;
        *pre_len = (size_t)(pend - dash - 1);
    }
    if (plus) {
        const char *q = plus + 1;
        for (;;) {
            const char *dot = memchr(q, '.', (size_t)(end - q));
            const char *qe = dot ? dot : end;
            size_t len = (size_t)(qe - q);
            if (len == 0) {
                snprintf(err, errlen, "Build meta data is empty");
                return -EINVAL;
            }
            if (!only_alnum(q, len)) {
                snprintf(err, errlen, "Invalid character(s) found in build meta data \"%.*s\"", (int)len, q);
                return -EINVAL;
            }
            if (!dot)
                break;
            q = dot + 1;
        }
    }
    return 0;
}

/* ---- building a view ---------------------------------------------------------------------------------- */

uint64_t ks__dra_expr_hash(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* parseQualifiedName: domain and id of @name, the driver's domain when it has no '/'. */
static void split_name(const char *name, const char *driver, const char **dom, size_t *dlen, const char **id,
                       size_t *idlen)
{
    const char *slash = strchr(name, '/');
    if (!slash) {
        *dom = driver;
        *dlen = strlen(driver);
        *id = name;
        *idlen = strlen(name);
    } else {
        *dom = name;
        *dlen = (size_t)(slash - name);
        *id = slash + 1;
        *idlen = strlen(slash + 1);
    }
}

/*
 * Group @n names into domains in order of first appearance: dom_of[i] gets the domain index
 * of name i; domains[] their names. Returns the number of domains.
 */
static uint32_t group_domains(const char *const *names, uint32_t n, const char *driver, const char **dname,
                              size_t *dlen, uint32_t *dom_of)
{
    uint32_t nd = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *d, *id;
        size_t dl, il;
        split_name(names[i], driver, &d, &dl, &id, &il);
        uint32_t k = 0;
        while (k < nd && !(dlen[k] == dl && memcmp(dname[k], d, dl) == 0))
            k++;
        if (k == nd) {
            dname[nd] = d;
            dlen[nd] = dl;
            nd++;
        }
        dom_of[i] = k;
    }
    return nd;
}

/* Lay out @n entries (values already in @vals) in domain order into @m. */
static int build_map(struct dra_bump *mem, const char *const *names, const struct ks_cel_value *vals,
                     uint32_t n, const char *driver, const struct ks_cel_type *type,
                     const struct ks_cel_type *inner, struct dra_cel_map *m)
{
    m->type = type;
    m->empty.type = inner;
    m->n = 0;
    m->domains = NULL;
    if (n == 0)
        return 0;
    const char **dname = ks__dra_bump_alloc(mem, n * sizeof(*dname));
    size_t *dlen = ks__dra_bump_alloc(mem, n * sizeof(*dlen));
    uint32_t *dom_of = ks__dra_bump_alloc(mem, n * sizeof(*dom_of));
    struct dra_cel_domain *doms = ks__dra_bump_zalloc(mem, n, sizeof(*doms));
    struct dra_cel_entry *ents = ks__dra_bump_zalloc(mem, n, sizeof(*ents));
    if (!dname || !dlen || !dom_of || !doms || !ents)
        return -ENOMEM;
    uint32_t nd = group_domains(names, n, driver, dname, dlen, dom_of);
    uint32_t at = 0;
    for (uint32_t k = 0; k < nd; k++) {
        doms[k].name = dname[k];
        doms[k].len = dlen[k];
        doms[k].entries = ents + at;
        doms[k].type = inner;
        for (uint32_t i = 0; i < n; i++) {
            if (dom_of[i] != k)
                continue;
            const char *d, *id;
            size_t dl, il;
            split_name(names[i], driver, &d, &dl, &id, &il);
            bool dup = false; /* a Go map keeps one value per id */
            for (uint32_t j = 0; j < doms[k].n; j++)
                dup |= doms[k].entries[j].len == il && memcmp(doms[k].entries[j].id, id, il) == 0;
            if (dup)
                continue;
            ents[at].id = id;
            ents[at].len = il;
            ents[at].value = vals[i];
            at++;
            doms[k].n++;
        }
    }
    m->n = nd;
    m->domains = doms;
    return 0;
}

int ks__dra_cel_device_build(struct dra_bump *mem, const struct ks_device *dev, const char *driver,
                             const struct dra_cel_types *types, struct dra_cel_device *out)
{
    static const struct dra_cel_types none;
    if (!types)
        types = &none;
    memset(out, 0, sizeof(*out));
    out->driver = driver;
    out->driver_len = strlen(driver);
    out->allow_multiple = dev->has_allow_multiple && dev->allow_multiple;

    uint32_t n = dev->nattributes > dev->ncapacity ? dev->nattributes : dev->ncapacity;
    const char **names = ks__dra_bump_alloc(mem, (n ? n : 1) * sizeof(*names));
    struct ks_cel_value *vals = ks__dra_bump_zalloc(mem, n ? n : 1, sizeof(*vals));
    if (!names || !vals)
        return -ENOMEM;
    for (uint32_t i = 0; i < dev->nattributes; i++) {
        const struct ks_device_attribute *a = &dev->attributes[i];
        names[i] = ks_intern_str(a->name);
        struct ks_cel_value *v = &vals[i];
        switch (a->kind) {
        case KS_ATTR_INT:
            v->kind = KS_CEL_INT;
            v->v.i = a->i;
            break;
        case KS_ATTR_BOOL:
            v->kind = KS_CEL_BOOL;
            v->v.b = a->b;
            break;
        case KS_ATTR_STRING:
            v->kind = KS_CEL_STRING;
            v->v.str.p = a->s ? a->s : "";
            v->v.str.len = a->s ? strlen(a->s) : 0;
            break;
        case KS_ATTR_VERSION: {
            char why[256];
            v->kind = KS_CEL_SEMVER;
            if (ks__dra_semver_parse(a->s ? a->s : "", &v->v.semver.major, &v->v.semver.minor,
                                     &v->v.semver.patch, &v->v.semver.pre, &v->v.semver.pre_len, why,
                                     sizeof(why)) &&
                !out->error) {
                out->error =
                    ks__dra_bump_printf(mem, "attribute %s: parse semantic version: %s", names[i], why);
                if (!out->error)
                    return -ENOMEM;
            }
            break;
        }
        }
    }
    if (build_map(mem, names, vals, dev->nattributes, driver, types->attr_outer, types->attr_inner,
                  &out->attributes))
        return -ENOMEM;
    for (uint32_t i = 0; i < dev->ncapacity; i++) {
        names[i] = ks_intern_str(dev->capacity[i].name);
        memset(&vals[i], 0, sizeof(vals[i]));
        vals[i].kind = KS_CEL_QUANTITY;
        vals[i].v.q = dev->capacity[i].value;
    }
    if (build_map(mem, names, vals, dev->ncapacity, driver, types->cap_outer, types->cap_inner,
                  &out->capacity))
        return -ENOMEM;
    return 0;
}

/* ---- host ops -------------------------------------------------------------------------------------------
 */

static bool key_is(const struct ks_cel_value *key, const char *s, size_t len)
{
    return key->kind == KS_CEL_STRING && key->v.str.len == len && memcmp(key->v.str.p, s, len) == 0;
}

static struct ks_cel_value str_value(const char *p, size_t len)
{
    struct ks_cel_value v = {.kind = KS_CEL_STRING};
    v.v.str.p = p;
    v.v.str.len = len;
    return v;
}

static struct ks_cel_value host_value(enum ks_cel_kind kind, const struct ks_cel_host_ops *ops,
                                      const void *obj, const struct ks_cel_type *type)
{
    struct ks_cel_value v = {.kind = kind};
    v.v.host.ops = ops;
    v.v.host.obj = obj;
    v.v.host.type = type;
    return v;
}

static const char *const field_names[] = {"allowMultipleAllocations", "attributes", "capacity", "driver"};

static int device_field(const struct dra_cel_device *d, uint32_t i, struct ks_cel_value *out)
{
    switch (i) {
    case 0:
        memset(out, 0, sizeof(*out));
        out->kind = KS_CEL_BOOL;
        out->v.b = d->allow_multiple;
        return 0;
    case 1:
        *out = host_value(KS_CEL_MAP, &ks__dra_cel_map_ops, &d->attributes, d->attributes.type);
        return 0;
    case 2:
        *out = host_value(KS_CEL_MAP, &ks__dra_cel_map_ops, &d->capacity, d->capacity.type);
        return 0;
    default:
        *out = str_value(d->driver, d->driver_len);
        return 0;
    }
}

static int device_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                         struct ks_cel_scratch *s)
{
    (void)s;
    for (uint32_t i = 0; i < 4; i++) {
        if (key_is(key, field_names[i], strlen(field_names[i])))
            return device_field(obj, i, out);
    }
    return 1;
}

static uint32_t device_size(const void *obj)
{
    (void)obj;
    return 4;
}

static int device_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                        struct ks_cel_scratch *s)
{
    (void)s;
    if (i >= 4)
        return 1;
    *key = str_value(field_names[i], strlen(field_names[i]));
    return device_field(obj, i, value);
}

static int map_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                      struct ks_cel_scratch *s)
{
    (void)s;
    const struct dra_cel_map *m = obj;
    for (uint32_t i = 0; i < m->n; i++) {
        if (key_is(key, m->domains[i].name, m->domains[i].len)) {
            *out = host_value(KS_CEL_MAP, &ks__dra_cel_domain_ops, &m->domains[i], m->domains[i].type);
            return 0;
        }
    }
    *out = host_value(KS_CEL_MAP, &ks__dra_cel_domain_ops, &m->empty, m->empty.type);
    return 0;
}

static uint32_t map_size(const void *obj)
{
    return ((const struct dra_cel_map *)obj)->n;
}

static int map_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                     struct ks_cel_scratch *s)
{
    (void)s;
    const struct dra_cel_map *m = obj;
    if (i >= m->n)
        return 1;
    *key = str_value(m->domains[i].name, m->domains[i].len);
    *value = host_value(KS_CEL_MAP, &ks__dra_cel_domain_ops, &m->domains[i], m->domains[i].type);
    return 0;
}

static int domain_lookup(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                         struct ks_cel_scratch *s)
{
    (void)s;
    const struct dra_cel_domain *d = obj;
    for (uint32_t i = 0; i < d->n; i++) {
        if (key_is(key, d->entries[i].id, d->entries[i].len)) {
            *out = d->entries[i].value;
            return 0;
        }
    }
    return 1;
}

static uint32_t domain_size(const void *obj)
{
    return ((const struct dra_cel_domain *)obj)->n;
}

static int domain_entry(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                        struct ks_cel_scratch *s)
{
    (void)s;
    const struct dra_cel_domain *d = obj;
    if (i >= d->n)
        return 1;
    *key = str_value(d->entries[i].id, d->entries[i].len);
    *value = d->entries[i].value;
    return 0;
}

const struct ks_cel_host_ops ks__dra_cel_device_ops = {device_lookup, device_size, device_entry};
const struct ks_cel_host_ops ks__dra_cel_map_ops = {map_lookup, map_size, map_entry};
const struct ks_cel_host_ops ks__dra_cel_domain_ops = {domain_lookup, domain_size, domain_entry};
