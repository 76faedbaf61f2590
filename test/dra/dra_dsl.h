/*
 * dra_dsl.h - a small case language for the structured allocator's tests: the objects of
 * one allocation (features, classes, slices, claims, devices already allocated, the node)
 * and what ks_dra_allocate() must answer, one directive per line, parsed into the real
 * dra_types.h structs (no loader involved).
 *
 *   features admin prioritized partitionable taints binding consumable   (default: none)
 *   node <name> <region>                  labels region=<region>, planet=earth (default node-1 region-1)
 *   class <name> [driver=<d>] [multi=true|false] [config=<attr>] [sel `<cel>`]...
 *   slice <name> <node|all|perdevice|sel:k=v,..|fields:<node>> <pool>[:<count>[:<gen>]] <driver>
 *     device <name> [i:|b:|s:|v:<attr>=<value>] [c:<cap>=<qty>] [range:<cap>=<qty>]
 *            [vv:<cap>=<qty>:<default>[:<v>,<v>]] [consume:<set>[:<counter>=<qty>,...]] [fromCounters: the
 * capacities become the counters so far] [taint:<key>=<value>:<effect>] [node:<n>|allnodes|nodesel:k=v,..]
 * [binding:<c>,../<c>,..] [bindsToNode] [multi] counterset <name> [<counter>=<qty>]... claim <name>
 * [ns=<namespace>] [uid=<uid>] request <name> <class> <count|all|mode:<text>|none> [admin] [admin=false] [sel
 * `<cel>`] [sel-empty] [tol:<Exists|Equal>:<key>:<value>:<effect>] [cap=<qty>] firstAvailable <name> sub
 * <name> <class> <count|all> [sel `<cel>`] [tol:...] [cap=<qty>] match|distinct <qualified attr>
 * [req=<a>,<b>]      constraint-empty config <driver> <attr> [req=<a>,<b>] allocated <driver>/<pool>/<device>
 *   allocatedShare <driver>/<pool>/<device> [<cap>=<qty>,...]
 *   error <substring of the message>       unsuitable [<message>]
 *   expect                                  (the next claim's allocation)
 *     result <request> <driver>/<pool>/<device> [admin] [share] [consumed=<cap>:<qty>,..] [tol=<n>]
 *            [binding=<c>,../<c>,..]
 *     selector none|node:<name>|<k>=<v>,..|field:<k>=<v>,..
 *     cfg class|claim <driver> <attr> [req=<a>,<b>]
 *   steps <n>                               allocateOne invocations
 *   devices <n> [<start>]                   in a slice: device-<start>.. without attributes
 *   results <request> <driver>/<pool> <n> <start>   in an expect: their plain results
 * A class name "-" is the empty name. Selector shorthands on request and sub lines (the
 * domain is driver-a's): mem>=<qty>, cap0>=<qty>, attr==<name>:<value>, attr:<name>.
 * Without expectations a case with claims expects "unsuitable" (no result, no message).
 *
 * Results of a claim match as a multiset (upstream's ConsistOf); configs in order.
 * Context: test code; everything lives in the case's arena.
 */
#ifndef KSCHED_TEST_DRA_DSL_H
#define KSCHED_TEST_DRA_DSL_H

#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/dra.h"
#include "ksched/quantity.h"

enum { DSL_MAX = 80, DSL_DEV = 80, DSL_ATTR = 32, DSL_TOK = 64 };

enum dsl_want { DSL_WANT_ALLOC, DSL_WANT_UNSUITABLE, DSL_WANT_ERROR };

struct dsl_result {
    const char *request;
    uint32_t driver, pool, device;
    bool admin, share;
    uint32_t nconsumed;
    struct ks_named_quantity consumed[8];
    int ntol; /* -1: not checked */
    const char *binding;
};

struct dsl_cfg {
    bool from_class;
    const char *driver, *params;
    uint32_t nreq;
    const char *req[8];
};

struct dsl_expect {
    uint32_t nres;
    struct dsl_result res[40];
    const char *selector; /* NULL: none */
    uint32_t ncfg;
    struct dsl_cfg cfg[8];
};

struct dsl {
    const char *name;
    struct ks_arena a;
    struct ks_dra_features f;
    struct ks_node node;
    uint32_t nclasses, nslices, nclaims, nalloc;
    struct ks_device_class *classes[DSL_MAX];
    struct ks_resource_slice *slices[DSL_MAX];
    struct ks_resource_claim *claims[DSL_MAX];
    struct ks_allocation alloc[DSL_MAX];
    struct ks_device_request *cur_first; /* the firstAvailable request being filled */
    enum dsl_want want;
    const char *want_msg;
    uint32_t nexpect;
    struct dsl_expect *expect;
    int64_t steps;
};

/* ---- tokens -------------------------------------------------------------------------------------------- */

static inline uint32_t dsl_tokens(struct dsl *d, char *line, char **tok)
{
    uint32_t n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        cr_assert(n < DSL_TOK, "%s: too many tokens", d->name);
        if (*p == '`') {
            char *e = strchr(p + 1, '`');
            cr_assert(e, "%s: unterminated ` in: %s", d->name, line);
            *e = '\0';
            tok[n++] = p + 1;
            p = e + 1;
            continue;
        }
        tok[n++] = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

static inline char *dsl_str(struct dsl *d, const char *s)
{
    return ks_arena_strdup(&d->a, s);
}

static inline struct ks_quantity dsl_qty(struct dsl *d, const char *s)
{
    struct ks_quantity q;
    cr_assert(ks_quantity_parse(s, &q) == 0, "%s: bad quantity %s", d->name, s);
    return q;
}

static inline bool dsl_prefix(const char *s, const char *pre, const char **rest)
{
    size_t n = strlen(pre);
    if (strncmp(s, pre, n) != 0)
        return false;
    *rest = s + n;
    return true;
}

/* "a,b,c" into @out (strings in the arena). */
static inline uint32_t dsl_list(struct dsl *d, const char *s, const char **out, uint32_t max)
{
    uint32_t n = 0;
    char *copy = dsl_str(d, s), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        cr_assert(n < max, "%s: list too long: %s", d->name, s);
        out[n++] = t;
    }
    return n;
}

static inline void dsl_id3(struct dsl *d, const char *s, uint32_t *driver, uint32_t *pool, uint32_t *device)
{
    const char *parts[3];
    char *copy = dsl_str(d, s), *save = NULL;
    uint32_t n = 0;
    for (char *t = strtok_r(copy, "/", &save); t && n < 3; t = strtok_r(NULL, "/", &save))
        parts[n++] = t;
    cr_assert(n == 3, "%s: want driver/pool/device, got %s", d->name, s);
    *driver = ks_intern(parts[0]);
    *pool = ks_intern(parts[1]);
    *device = ks_intern(parts[2]);
}

/* A node selector with one term: "k=v1,v2" requirements (In). */
static inline struct ks_node_selector *dsl_node_selector(struct dsl *d, const char *kv, bool field)
{
    struct ks_node_selector *sel = ks_arena_calloc(&d->a, 1, sizeof(*sel));
    struct ks_node_selector_term *t = ks_arena_calloc(&d->a, 1, sizeof(*t));
    struct ks_requirement *r = ks_arena_calloc(&d->a, 1, sizeof(*r));
    const char *eq = strchr(kv, '=');
    cr_assert(eq, "%s: want k=v, got %s", d->name, kv);
    r->key = ks_intern_n(kv, (size_t)(eq - kv));
    r->op = KS_OP_IN;
    const char *vals[16];
    r->nvalues = dsl_list(d, eq + 1, vals, 16);
    r->values = ks_arena_calloc(&d->a, r->nvalues, sizeof(*r->values));
    for (uint32_t i = 0; i < r->nvalues; i++)
        r->values[i] = ks_intern(vals[i]);
    for (uint32_t i = 1; i < r->nvalues; i++) { /* sorted ids, as the decoder keeps them */
        for (uint32_t j = i; j > 0 && r->values[j - 1] > r->values[j]; j--) {
            uint32_t x = r->values[j];
            r->values[j] = r->values[j - 1];
            r->values[j - 1] = x;
        }
    }
    sel->nterms = 1;
    sel->terms = t;
    if (field) {
        t->nfields = 1;
        t->fields = r;
    } else {
        t->nexprs = 1;
        t->exprs = r;
    }
    return sel;
}

static inline enum ks_device_taint_effect dsl_effect(struct dsl *d, const char *s, bool *has)
{
    *has = true;
    if (!*s) {
        *has = false;
        return KS_DEVICE_TAINT_NONE;
    }
    if (strcmp(s, "NoSchedule") == 0)
        return KS_DEVICE_TAINT_NO_SCHEDULE;
    if (strcmp(s, "NoExecute") == 0)
        return KS_DEVICE_TAINT_NO_EXECUTE;
    if (strcmp(s, "None") == 0)
        return KS_DEVICE_TAINT_NONE;
    (void)d;
    return KS_DEVICE_TAINT_OTHER;
}

/* ---- objects ------------------------------------------------------------------------------------------- */

static inline void dsl_class(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(n >= 2 && d->nclasses < DSL_MAX, "%s: class", d->name);
    struct ks_device_class *c = ks_arena_calloc(&d->a, 1, sizeof(*c));
    c->meta.name = dsl_str(d, tok[1]);
    c->name = ks_intern(tok[1]);
    c->selectors = ks_arena_calloc(&d->a, 8, sizeof(*c->selectors));
    c->config = ks_arena_calloc(&d->a, 4, sizeof(*c->config));
    const char *driver = NULL, *multi = NULL, *config = NULL, *v;
    for (uint32_t i = 2; i < n; i++) {
        if (dsl_prefix(tok[i], "driver=", &v))
            driver = v;
        else if (dsl_prefix(tok[i], "multi=", &v))
            multi = v;
        else if (dsl_prefix(tok[i], "config=", &v))
            config = v;
        else if (strcmp(tok[i], "sel") == 0 && i + 1 < n)
            c->selectors[c->nselectors++] = dsl_str(d, tok[++i]);
        else
            cr_assert_fail("%s: class token %s", d->name, tok[i]);
    }
    if (driver) {
        char buf[512];
        if (multi)
            snprintf(buf, sizeof(buf), "device.driver == \"%s\" && device.allowMultipleAllocations == %s",
                     driver, multi);
        else
            snprintf(buf, sizeof(buf), "device.driver == \"%s\"", driver);
        memmove(c->selectors + 1, c->selectors, c->nselectors * sizeof(*c->selectors));
        c->selectors[0] = dsl_str(d, buf);
        c->nselectors++;
    }
    if (config) {
        char buf[256];
        snprintf(buf, sizeof(buf), "{\"%s\":\"%sValue\"}", config, config);
        c->config[0].driver = dsl_str(d, driver ? driver : "");
        c->config[0].parameters = dsl_str(d, buf);
        c->nconfig = 1;
    }
    d->classes[d->nclasses++] = c;
}

static inline void dsl_slice(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(n == 5 && d->nslices < DSL_MAX, "%s: slice <name> <selection> <pool> <driver>", d->name);
    struct ks_resource_slice *s = ks_arena_calloc(&d->a, 1, sizeof(*s));
    s->meta.name = dsl_str(d, tok[1]);
    s->node_name = KS_ID_NONE;
    const char *v;
    if (strcmp(tok[2], "all") == 0)
        s->all_nodes = true;
    else if (strcmp(tok[2], "perdevice") == 0)
        s->per_device_node_selection = true;
    else if (dsl_prefix(tok[2], "sel:", &v))
        s->node_selector = dsl_node_selector(d, v, false);
    else if (dsl_prefix(tok[2], "fields:", &v)) {
        char buf[256];
        snprintf(buf, sizeof(buf), "metadata.name=%s", v);
        s->node_selector = dsl_node_selector(d, buf, true);
    } else
        s->node_name = ks_intern(tok[2]);
    const char *parts[3] = {"", "", ""};
    uint32_t np = 0;
    char *copy = dsl_str(d, tok[3]), *save = NULL;
    for (char *t = strtok_r(copy, ":", &save); t && np < 3; t = strtok_r(NULL, ":", &save))
        parts[np++] = t;
    s->pool = ks_intern(parts[0]);
    s->slice_count = np > 1 ? strtoll(parts[1], NULL, 10) : 1;
    s->generation = np > 2 ? strtoll(parts[2], NULL, 10) : 1;
    s->driver = ks_intern(tok[4]);
    s->devices = ks_arena_calloc(&d->a, DSL_DEV, sizeof(*s->devices));
    s->counter_sets = ks_arena_calloc(&d->a, 8, sizeof(*s->counter_sets));
    d->slices[d->nslices++] = s;
}

static inline void dsl_counterset(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(d->nslices > 0 && n >= 2, "%s: counterset outside a slice", d->name);
    struct ks_resource_slice *s = d->slices[d->nslices - 1];
    struct ks_counter_set *cs = &s->counter_sets[s->ncounter_sets++];
    cs->name = ks_intern(tok[1]);
    cs->counters = ks_arena_calloc(&d->a, 16, sizeof(*cs->counters));
    for (uint32_t i = 2; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        cr_assert(eq, "%s: counter %s", d->name, tok[i]);
        *eq = '\0';
        cs->counters[cs->ncounters].name = ks_intern(tok[i]);
        cs->counters[cs->ncounters++].value = dsl_qty(d, eq + 1);
    }
}

static inline void dsl_capacity(struct dsl *d, struct ks_device *dev, const char *name, const char *qty,
                                struct ks_capacity_policy *policy)
{
    uint32_t id = ks_intern(name), i = 0;
    while (i < dev->ncapacity && dev->capacity[i].name != id)
        i++;
    if (i == dev->ncapacity)
        dev->ncapacity++;
    struct ks_device_capacity *c = &dev->capacity[i];
    c->name = id;
    c->value = dsl_qty(d, qty);
    c->policy = policy;
}

static inline void dsl_device(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(d->nslices > 0 && n >= 2, "%s: device outside a slice", d->name);
    struct ks_resource_slice *s = d->slices[d->nslices - 1];
    cr_assert(s->ndevices < DSL_DEV, "%s: too many devices", d->name);
    struct ks_device *dev = &s->devices[s->ndevices++];
    dev->name = ks_intern(tok[1]);
    dev->node_name = KS_ID_NONE;
    dev->attributes = ks_arena_calloc(&d->a, DSL_ATTR, sizeof(*dev->attributes));
    dev->capacity = ks_arena_calloc(&d->a, DSL_ATTR, sizeof(*dev->capacity));
    dev->consumes = ks_arena_calloc(&d->a, 8, sizeof(*dev->consumes));
    dev->taints = ks_arena_calloc(&d->a, 8, sizeof(*dev->taints));
    for (uint32_t i = 2; i < n; i++) {
        const char *v;
        char *t = tok[i];
        if (t[0] && t[1] == ':' && strchr("ibsv", t[0])) {
            char *eq = strchr(t, '=');
            cr_assert(eq, "%s: attribute %s", d->name, t);
            *eq = '\0';
            struct ks_device_attribute *a = &dev->attributes[dev->nattributes++];
            a->name = ks_intern(t + 2);
            const char *val = eq + 1;
            switch (t[0]) {
            case 'i':
                a->kind = KS_ATTR_INT;
                a->i = strtoll(val, NULL, 10);
                break;
            case 'b':
                a->kind = KS_ATTR_BOOL;
                a->b = strcmp(val, "true") == 0;
                break;
            case 's':
                a->kind = KS_ATTR_STRING;
                a->s = dsl_str(d, val);
                break;
            default:
                a->kind = KS_ATTR_VERSION;
                a->s = dsl_str(d, val);
                break;
            }
        } else if (dsl_prefix(t, "c:", &v) || dsl_prefix(t, "range:", &v) || dsl_prefix(t, "vv:", &v)) {
            char *copy = dsl_str(d, v), *eq = strchr(copy, '=');
            cr_assert(eq, "%s: capacity %s", d->name, t);
            *eq = '\0';
            struct ks_capacity_policy *p = NULL;
            char *qty = eq + 1;
            if (t[0] == 'r') {
                p = ks_arena_calloc(&d->a, 1, sizeof(*p));
                p->has_default = p->has_range = p->has_min = p->has_max = p->has_step = true;
                p->def = p->min = p->step = dsl_qty(d, "2");
                p->max = dsl_qty(d, "4");
            } else if (t[0] == 'v') {
                char *c1 = strchr(qty, ':');
                cr_assert(c1, "%s: vv:<cap>=<qty>:<default>[:<v>,..]", d->name);
                *c1++ = '\0';
                char *c2 = strchr(c1, ':');
                if (c2)
                    *c2++ = '\0';
                p = ks_arena_calloc(&d->a, 1, sizeof(*p));
                p->has_default = true;
                p->def = dsl_qty(d, c1);
                const char *more[8];
                uint32_t nm = c2 ? dsl_list(d, c2, more, 8) : 0;
                p->valid_values = ks_arena_calloc(&d->a, nm + 1, sizeof(*p->valid_values));
                p->valid_values[p->nvalid_values++] = p->def;
                for (uint32_t k = 0; k < nm; k++)
                    p->valid_values[p->nvalid_values++] = dsl_qty(d, more[k]);
            }
            dsl_capacity(d, dev, copy, qty, p);
        } else if (dsl_prefix(t, "consume:", &v)) {
            struct ks_counter_consumption *cc = &dev->consumes[dev->nconsumes++];
            char *copy = dsl_str(d, v), *colon = strchr(copy, ':');
            if (colon)
                *colon = '\0';
            cc->counter_set = ks_intern(copy);
            cc->counters = ks_arena_calloc(&d->a, 8, sizeof(*cc->counters));
            const char *items[8];
            uint32_t ni = colon ? dsl_list(d, colon + 1, items, 8) : 0;
            for (uint32_t k = 0; k < ni; k++) {
                char *it = dsl_str(d, items[k]), *eq = strchr(it, '=');
                cr_assert(eq, "%s: counter %s", d->name, items[k]);
                *eq = '\0';
                cc->counters[cc->ncounters].name = ks_intern(it);
                cc->counters[cc->ncounters++].value = dsl_qty(d, eq + 1);
            }
        } else if (strcmp(t, "fromCounters") == 0) {
            /* withDeviceCounterConsumption with capacity from counters: the capacities are the counters */
            dev->ncapacity = 0;
            for (uint32_t a = 0; a < dev->nconsumes; a++) {
                for (uint32_t b = 0; b < dev->consumes[a].ncounters; b++) {
                    struct ks_device_capacity *c = &dev->capacity[dev->ncapacity++];
                    c->name = dev->consumes[a].counters[b].name;
                    c->value = dev->consumes[a].counters[b].value;
                    c->policy = NULL;
                }
            }
        } else if (dsl_prefix(t, "taint:", &v)) {
            char *copy = dsl_str(d, v), *eq = strchr(copy, '='), *colon = strrchr(copy, ':');
            cr_assert(eq && colon && colon > eq, "%s: taint:<key>=<value>:<effect>", d->name);
            *eq = '\0';
            *colon = '\0';
            struct ks_device_taint *tt = &dev->taints[dev->ntaints++];
            bool has;
            tt->key = ks_intern(copy);
            tt->value = ks_intern(eq + 1);
            tt->effect = dsl_effect(d, colon + 1, &has);
            tt->effect_text = dsl_str(d, colon + 1);
        } else if (dsl_prefix(t, "node:", &v)) {
            dev->node_name = ks_intern(v);
        } else if (strcmp(t, "allnodes") == 0) {
            dev->all_nodes = true;
        } else if (dsl_prefix(t, "nodesel:", &v)) {
            dev->node_selector = dsl_node_selector(d, v, false);
        } else if (dsl_prefix(t, "binding:", &v)) {
            char *copy = dsl_str(d, v), *slash = strchr(copy, '/');
            if (slash)
                *slash = '\0';
            dev->binding_conditions = ks_arena_calloc(&d->a, 8, sizeof(char *));
            dev->binding_failure_conditions = ks_arena_calloc(&d->a, 8, sizeof(char *));
            dev->nbinding_conditions = dsl_list(d, copy, dev->binding_conditions, 8);
            dev->nbinding_failure_conditions =
                slash ? dsl_list(d, slash + 1, dev->binding_failure_conditions, 8) : 0;
        } else if (strcmp(t, "bindsToNode") == 0) {
            dev->binds_to_node = true;
        } else if (strcmp(t, "multi") == 0) {
            dev->has_allow_multiple = dev->allow_multiple = true;
        } else {
            cr_assert_fail("%s: device token %s", d->name, t);
        }
    }
}

/* devices <n> [<start>]: device-<start> .. device-<start+n-1>, plain (sliceWithMultipleDevices). */
static inline void dsl_devices(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(n >= 2, "%s: devices <n> [<start>]", d->name);
    int count = atoi(tok[1]), start = n > 2 ? atoi(tok[2]) : 0;
    for (int i = start; i < start + count; i++) {
        char name[32];
        char *t[2] = {"device", name};
        snprintf(name, sizeof(name), "device-%d", i);
        dsl_device(d, t, 2);
    }
}

static inline void dsl_claim(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(n >= 2 && d->nclaims < DSL_MAX, "%s: claim", d->name);
    struct ks_resource_claim *c = ks_arena_calloc(&d->a, 1, sizeof(*c));
    c->meta.name = dsl_str(d, tok[1]);
    c->meta.namespace_id = KS_ID_EMPTY;
    c->spec.requests = ks_arena_calloc(&d->a, 16, sizeof(*c->spec.requests));
    c->spec.constraints = ks_arena_calloc(&d->a, 8, sizeof(*c->spec.constraints));
    c->spec.config = ks_arena_calloc(&d->a, 8, sizeof(*c->spec.config));
    const char *v;
    for (uint32_t i = 2; i < n; i++) {
        if (dsl_prefix(tok[i], "ns=", &v))
            c->meta.namespace_id = ks_intern(v);
        else if (dsl_prefix(tok[i], "uid=", &v))
            c->meta.uid = dsl_str(d, v);
        else
            cr_assert_fail("%s: claim token %s", d->name, tok[i]);
    }
    d->claims[d->nclaims++] = c;
    d->cur_first = NULL;
}

/*
 * Selector shorthands (driver-a's domain): mem>=<qty>, cap0>=<qty> (capacity-0),
 * attr==<name>:<value> (a string attribute equals), attr:<name> (a bool attribute).
 */
static inline bool dsl_shorthand(struct dsl *d, const char *t, const char **out)
{
    char buf[512];
    const char *v;
    if (dsl_prefix(t, "mem>=", &v))
        snprintf(buf, sizeof(buf), "device.capacity[\"driver-a\"].memory.compareTo(quantity(\"%s\")) >= 0",
                 v);
    else if (dsl_prefix(t, "cap0>=", &v))
        snprintf(buf, sizeof(buf),
                 "device.capacity[\"driver-a\"][\"capacity-0\"].compareTo(quantity(\"%s\")) >= 0", v);
    else if (dsl_prefix(t, "attr==", &v)) {
        const char *colon = strchr(v, ':');
        cr_assert(colon, "%s: attr==<name>:<value>", d->name);
        snprintf(buf, sizeof(buf), "device.attributes[\"driver-a\"].%.*s == \"%s\"", (int)(colon - v), v,
                 colon + 1);
    } else if (dsl_prefix(t, "attr:", &v))
        snprintf(buf, sizeof(buf), "device.attributes[\"driver-a\"].%s", v);
    else
        return false;
    *out = dsl_str(d, buf);
    return true;
}

/* request and sub lines: <name> <class> <count> options, into @s. */
static inline void dsl_spec(struct dsl *d, char **tok, uint32_t n, struct ks_device_request_spec *s)
{
    cr_assert(n >= 4, "%s: %s <name> <class> <count>", d->name, tok[0]);
    s->name = dsl_str(d, tok[1]);
    s->device_class_name = dsl_str(d, strcmp(tok[2], "-") == 0 ? "" : tok[2]);
    const char *v;
    if (strcmp(tok[3], "all") == 0) {
        s->mode = KS_ALLOC_ALL;
        s->mode_text = "All";
    } else if (dsl_prefix(tok[3], "mode:", &v)) {
        s->mode = KS_ALLOC_OTHER;
        s->mode_text = dsl_str(d, v);
    } else {
        s->mode = KS_ALLOC_EXACT_COUNT;
        s->mode_text = "ExactCount";
        s->count = strtoll(tok[3], NULL, 10);
    }
    s->selectors = ks_arena_calloc(&d->a, 8, sizeof(*s->selectors));
    s->tolerations = ks_arena_calloc(&d->a, 8, sizeof(*s->tolerations));
    s->capacity_requests = ks_arena_calloc(&d->a, 4, sizeof(*s->capacity_requests));
    for (uint32_t i = 4; i < n; i++) {
        if (strcmp(tok[i], "admin") == 0) {
            s->has_admin_access = s->admin_access = true;
        } else if (strcmp(tok[i], "admin=false") == 0) {
            s->has_admin_access = true;
        } else if (strcmp(tok[i], "sel") == 0 && i + 1 < n) {
            s->selectors[s->nselectors++] = dsl_str(d, tok[++i]);
        } else if (strcmp(tok[i], "sel-empty") == 0) {
            s->selectors[s->nselectors++] = NULL;
        } else if (dsl_shorthand(d, tok[i], &v)) {
            s->selectors[s->nselectors++] = v;
        } else if (dsl_prefix(tok[i], "tol:", &v)) {
            char *f[4] = {0};
            char *copy = dsl_str(d, v);
            uint32_t nf = 0;
            f[nf++] = copy;
            for (char *p = copy; *p && nf < 4; p++) {
                if (*p == ':') {
                    *p = '\0';
                    f[nf++] = p + 1;
                }
            }
            cr_assert(nf == 4, "%s: tol:<op>:<key>:<value>:<effect>", d->name);
            struct ks_device_toleration *t = &s->tolerations[s->ntolerations++];
            t->exists = strcmp(f[0], "Exists") == 0;
            t->key = ks_intern(f[1]);
            t->value = ks_intern(f[2]);
            t->effect = dsl_effect(d, f[3], &t->has_effect);
            t->toleration_seconds = -1;
        } else if (dsl_prefix(tok[i], "cap=", &v)) {
            s->has_capacity = true;
            s->capacity_requests[0].name = ks_intern("capacity-0");
            s->capacity_requests[0].value = dsl_qty(d, v);
            s->ncapacity_requests = 1;
        } else {
            cr_assert_fail("%s: request token %s", d->name, tok[i]);
        }
    }
}

static inline struct ks_resource_claim *dsl_cur_claim(struct dsl *d)
{
    cr_assert(d->nclaims > 0, "%s: no claim yet", d->name);
    return d->claims[d->nclaims - 1];
}

static inline void dsl_request(struct dsl *d, char **tok, uint32_t n)
{
    struct ks_resource_claim *c = dsl_cur_claim(d);
    struct ks_device_request *r = &c->spec.requests[c->spec.nrequests++];
    if (n >= 4 && strcmp(tok[3], "none") == 0) {
        r->name = dsl_str(d, tok[1]);
        d->cur_first = NULL;
        return;
    }
    r->exact = true;
    dsl_spec(d, tok, n, &r->spec);
    r->name = r->spec.name;
    d->cur_first = NULL;
}

static inline void dsl_first(struct dsl *d, char **tok, uint32_t n)
{
    struct ks_resource_claim *c = dsl_cur_claim(d);
    cr_assert(n == 2, "%s: firstAvailable <name>", d->name);
    struct ks_device_request *r = &c->spec.requests[c->spec.nrequests++];
    r->name = dsl_str(d, tok[1]);
    r->subrequests = ks_arena_calloc(&d->a, 8, sizeof(*r->subrequests));
    d->cur_first = r;
}

static inline void dsl_sub(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(d->cur_first, "%s: sub outside firstAvailable", d->name);
    dsl_spec(d, tok, n, &d->cur_first->subrequests[d->cur_first->nsubrequests++]);
}

static inline void dsl_constraint(struct dsl *d, char **tok, uint32_t n)
{
    struct ks_resource_claim *c = dsl_cur_claim(d);
    struct ks_device_constraint *k = &c->spec.constraints[c->spec.nconstraints++];
    k->match_attribute = k->distinct_attribute = KS_ID_NONE;
    if (strcmp(tok[0], "constraint-empty") == 0)
        return;
    cr_assert(n >= 2, "%s: %s <attribute>", d->name, tok[0]);
    if (strcmp(tok[0], "match") == 0)
        k->match_attribute = ks_intern(tok[1]);
    else
        k->distinct_attribute = ks_intern(tok[1]);
    const char *v;
    if (n >= 3 && dsl_prefix(tok[2], "req=", &v)) {
        k->requests = ks_arena_calloc(&d->a, 8, sizeof(char *));
        k->nrequests = dsl_list(d, v, k->requests, 8);
    }
}

static inline void dsl_claim_config(struct dsl *d, char **tok, uint32_t n)
{
    struct ks_resource_claim *c = dsl_cur_claim(d);
    cr_assert(n >= 3, "%s: config <driver> <attr>", d->name);
    struct ks_claim_config *cc = &c->spec.config[c->spec.nconfig++];
    char buf[256];
    snprintf(buf, sizeof(buf), "{\"%s\":\"%sValue\"}", tok[2], tok[2]);
    cc->opaque.driver = dsl_str(d, tok[1]);
    cc->opaque.parameters = dsl_str(d, buf);
    const char *v;
    if (n >= 4 && dsl_prefix(tok[3], "req=", &v)) {
        cc->requests = ks_arena_calloc(&d->a, 8, sizeof(char *));
        cc->nrequests = dsl_list(d, v, cc->requests, 8);
    }
}

static inline void dsl_allocated(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(n >= 2 && d->nalloc < DSL_MAX, "%s: allocated", d->name);
    struct ks_allocation *a = &d->alloc[d->nalloc++];
    a->nresults = 1;
    a->results = ks_arena_calloc(&d->a, 1, sizeof(*a->results));
    struct ks_device_result *r = a->results;
    r->request = "req";
    dsl_id3(d, tok[1], &r->driver, &r->pool, &r->device);
    if (strcmp(tok[0], "allocatedShare") != 0)
        return;
    r->share_id = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";
    if (n < 3)
        return;
    const char *items[8];
    uint32_t ni = dsl_list(d, tok[2], items, 8);
    r->consumed = ks_arena_calloc(&d->a, ni + 1, sizeof(*r->consumed));
    for (uint32_t k = 0; k < ni; k++) {
        char *it = dsl_str(d, items[k]), *eq = strchr(it, '=');
        cr_assert(eq, "%s: <cap>=<qty>", d->name);
        *eq = '\0';
        r->consumed[k].name = ks_intern(it);
        r->consumed[k].value = dsl_qty(d, eq + 1);
    }
    r->nconsumed = ni;
}

static inline struct dsl_expect *dsl_cur_expect(struct dsl *d)
{
    cr_assert(d->nexpect > 0, "%s: no expect yet", d->name);
    return &d->expect[d->nexpect - 1];
}

static inline void dsl_result(struct dsl *d, char **tok, uint32_t n)
{
    struct dsl_expect *e = dsl_cur_expect(d);
    cr_assert(n >= 3 && e->nres < 40, "%s: result <request> <driver>/<pool>/<device>", d->name);
    struct dsl_result *r = &e->res[e->nres++];
    memset(r, 0, sizeof(*r));
    r->request = dsl_str(d, tok[1]);
    r->ntol = 0;
    dsl_id3(d, tok[2], &r->driver, &r->pool, &r->device);
    const char *v;
    for (uint32_t i = 3; i < n; i++) {
        if (strcmp(tok[i], "admin") == 0) {
            r->admin = true;
        } else if (strcmp(tok[i], "share") == 0) {
            r->share = true;
        } else if (dsl_prefix(tok[i], "consumed=", &v)) {
            const char *items[8];
            uint32_t ni = dsl_list(d, v, items, 8);
            for (uint32_t k = 0; k < ni; k++) {
                char *it = dsl_str(d, items[k]), *colon = strchr(it, ':');
                cr_assert(colon, "%s: consumed=<cap>:<qty>", d->name);
                *colon = '\0';
                r->consumed[r->nconsumed].name = ks_intern(it);
                r->consumed[r->nconsumed++].value = dsl_qty(d, colon + 1);
            }
        } else if (dsl_prefix(tok[i], "tol=", &v)) {
            r->ntol = atoi(v);
        } else if (dsl_prefix(tok[i], "binding=", &v)) {
            r->binding = dsl_str(d, v);
        } else {
            cr_assert_fail("%s: result token %s", d->name, tok[i]);
        }
    }
}

/* results <request> <driver>/<pool> <n> <start>: plain results for device-<start> .. */
static inline void dsl_results(struct dsl *d, char **tok, uint32_t n)
{
    cr_assert(n == 5, "%s: results <request> <driver>/<pool> <n> <start>", d->name);
    int count = atoi(tok[3]), start = atoi(tok[4]);
    for (int i = start; i < start + count; i++) {
        char id[256];
        char *t[3] = {"result", tok[1], id};
        snprintf(id, sizeof(id), "%s/device-%d", tok[2], i);
        dsl_result(d, t, 3);
    }
}

static inline void dsl_cfg(struct dsl *d, char **tok, uint32_t n)
{
    struct dsl_expect *e = dsl_cur_expect(d);
    cr_assert(n >= 4 && e->ncfg < 8, "%s: cfg class|claim <driver> <attr>", d->name);
    struct dsl_cfg *c = &e->cfg[e->ncfg++];
    char buf[256];
    c->from_class = strcmp(tok[1], "class") == 0;
    c->driver = dsl_str(d, tok[2]);
    snprintf(buf, sizeof(buf), "{\"%s\":\"%sValue\"}", tok[3], tok[3]);
    c->params = dsl_str(d, buf);
    const char *v;
    c->nreq = 0;
    if (n >= 5 && dsl_prefix(tok[4], "req=", &v))
        c->nreq = dsl_list(d, v, c->req, 8);
}

/* The rest of the line after the first word. */
static inline const char *dsl_rest(char *line)
{
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static inline void dsl_parse(struct dsl *d, const char *name, const char *text)
{
    memset(d, 0, sizeof(*d));
    d->name = name;
    d->want = DSL_WANT_ALLOC;
    d->steps = -1;
    d->expect = ks_arena_calloc(&d->a, DSL_MAX, sizeof(*d->expect));
    d->node.meta.name = "node-1";
    d->node.name_id = ks_intern("node-1");
    d->node.meta.labels = ks_fake_labels(&d->a, "region=region-1,planet=earth");
    char *copy = dsl_str(d, text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *raw = dsl_str(d, line);
        char *tok[DSL_TOK];
        uint32_t n = dsl_tokens(d, line, tok);
        if (n == 0 || tok[0][0] == '#')
            continue;
        const char *k = tok[0];
        if (strcmp(k, "features") == 0) {
            for (uint32_t i = 1; i < n; i++) {
                if (strcmp(tok[i], "admin") == 0)
                    d->f.admin_access = true;
                else if (strcmp(tok[i], "prioritized") == 0)
                    d->f.prioritized_list = true;
                else if (strcmp(tok[i], "partitionable") == 0)
                    d->f.partitionable_devices = true;
                else if (strcmp(tok[i], "taints") == 0)
                    d->f.device_taints = true;
                else if (strcmp(tok[i], "binding") == 0)
                    d->f.device_binding_conditions = true;
                else if (strcmp(tok[i], "consumable") == 0)
                    d->f.consumable_capacity = true;
                else if (strcmp(tok[i], "all") == 0)
                    d->f = ks_dra_features_default();
                else
                    cr_assert_fail("%s: feature %s", d->name, tok[i]);
            }
        } else if (strcmp(k, "node") == 0) {
            cr_assert(n == 3, "%s: node <name> <region>", d->name);
            char buf[256];
            snprintf(buf, sizeof(buf), "region=%s,planet=earth", tok[2]);
            d->node.meta.name = dsl_str(d, tok[1]);
            d->node.name_id = ks_intern(tok[1]);
            d->node.meta.labels = ks_fake_labels(&d->a, buf);
        } else if (strcmp(k, "class") == 0) {
            dsl_class(d, tok, n);
        } else if (strcmp(k, "slice") == 0) {
            dsl_slice(d, tok, n);
        } else if (strcmp(k, "device") == 0) {
            dsl_device(d, tok, n);
        } else if (strcmp(k, "devices") == 0) {
            dsl_devices(d, tok, n);
        } else if (strcmp(k, "counterset") == 0) {
            dsl_counterset(d, tok, n);
        } else if (strcmp(k, "claim") == 0) {
            dsl_claim(d, tok, n);
        } else if (strcmp(k, "request") == 0) {
            dsl_request(d, tok, n);
        } else if (strcmp(k, "firstAvailable") == 0) {
            dsl_first(d, tok, n);
        } else if (strcmp(k, "sub") == 0) {
            dsl_sub(d, tok, n);
        } else if (strcmp(k, "match") == 0 || strcmp(k, "distinct") == 0 ||
                   strcmp(k, "constraint-empty") == 0) {
            dsl_constraint(d, tok, n);
        } else if (strcmp(k, "config") == 0) {
            dsl_claim_config(d, tok, n);
        } else if (strcmp(k, "allocated") == 0 || strcmp(k, "allocatedShare") == 0) {
            dsl_allocated(d, tok, n);
        } else if (strcmp(k, "error") == 0) {
            d->want = DSL_WANT_ERROR;
            d->want_msg = dsl_str(d, dsl_rest(raw));
        } else if (strcmp(k, "unsuitable") == 0) {
            d->want = DSL_WANT_UNSUITABLE;
            d->want_msg = dsl_str(d, dsl_rest(raw));
        } else if (strcmp(k, "expect") == 0) {
            cr_assert(d->nexpect < DSL_MAX, "%s: too many expects", d->name);
            d->nexpect++;
        } else if (strcmp(k, "result") == 0) {
            dsl_result(d, tok, n);
        } else if (strcmp(k, "results") == 0) {
            dsl_results(d, tok, n);
        } else if (strcmp(k, "selector") == 0) {
            dsl_cur_expect(d)->selector = dsl_str(d, dsl_rest(raw));
        } else if (strcmp(k, "cfg") == 0) {
            dsl_cfg(d, tok, n);
        } else if (strcmp(k, "steps") == 0) {
            d->steps = strtoll(tok[1], NULL, 10);
        } else {
            cr_assert_fail("%s: unknown directive %s", d->name, k);
        }
    }
}

/* ---- checking ------------------------------------------------------------------------------------------ */

static inline bool dsl_same_list(const char *want, const char *const *got, uint32_t ngot, struct dsl *d)
{
    const char *w[8];
    uint32_t nw = want && *want ? dsl_list(d, want, w, 8) : 0;
    if (nw != ngot)
        return false;
    for (uint32_t i = 0; i < nw; i++) {
        if (strcmp(w[i], got[i]) != 0)
            return false;
    }
    return true;
}

static inline bool dsl_result_matches(struct dsl *d, const struct dsl_result *w,
                                      const struct ks_device_result *g)
{
    if (strcmp(w->request, g->request) != 0 || w->driver != g->driver || w->pool != g->pool ||
        w->device != g->device)
        return false;
    if (w->admin != (g->has_admin_access && g->admin_access))
        return false;
    if (w->share != (g->share_id != NULL))
        return false;
    if (w->nconsumed != g->nconsumed)
        return false;
    for (uint32_t i = 0; i < w->nconsumed; i++) {
        bool found = false;
        for (uint32_t j = 0; j < g->nconsumed && !found; j++)
            found = g->consumed[j].name == w->consumed[i].name &&
                    ks_quantity_cmp(&g->consumed[j].value, &w->consumed[i].value) == 0;
        if (!found)
            return false;
    }
    if (w->ntol >= 0 && (uint32_t)w->ntol != g->ntolerations)
        return false;
    const char *b = w->binding ? w->binding : "";
    char cond[256] = "", fail[256] = "";
    const char *slash = strchr(b, '/');
    snprintf(cond, sizeof(cond), "%.*s", (int)(slash ? (size_t)(slash - b) : strlen(b)), b);
    snprintf(fail, sizeof(fail), "%s", slash ? slash + 1 : "");
    return dsl_same_list(cond, g->binding_conditions, g->nbinding_conditions, d) &&
           dsl_same_list(fail, g->binding_failure_conditions, g->nbinding_failure_conditions, d);
}

static inline void dsl_print_result(char *buf, size_t len, const struct ks_device_result *g)
{
    size_t at =
        (size_t)snprintf(buf, len, "%s %s/%s/%s%s%s", g->request, ks_intern_str(g->driver),
                         ks_intern_str(g->pool), ks_intern_str(g->device),
                         g->has_admin_access && g->admin_access ? " admin" : "", g->share_id ? " share" : "");
    for (uint32_t i = 0; i < g->nconsumed && at < len; i++) {
        char q[KS_QUANTITY_STR_MAX];
        ks_quantity_format(&g->consumed[i].value, q, sizeof(q));
        at += (size_t)snprintf(buf + at, len - at, "%s%s:%s",
                               i ? "," : " consumed=", ks_intern_str(g->consumed[i].name), q);
    }
    if (at < len && g->ntolerations)
        at += (size_t)snprintf(buf + at, len - at, " tol=%u", g->ntolerations);
    for (uint32_t i = 0; i < g->nbinding_conditions && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : " binding=", g->binding_conditions[i]);
}

/* The selector as "k=v1,v2 field:k=v" words, sorted, for comparison. */
static inline void dsl_selector_words(const struct ks_node_selector *sel, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!sel) {
        snprintf(buf, len, "none");
        return;
    }
    char words[64][256];
    uint32_t n = 0;
    for (uint32_t t = 0; t < sel->nterms; t++) {
        const struct ks_node_selector_term *term = &sel->terms[t];
        for (int f = 0; f < 2; f++) {
            uint32_t nr = f ? term->nfields : term->nexprs;
            const struct ks_requirement *rs = f ? term->fields : term->exprs;
            for (uint32_t i = 0; i < nr && n < 64; i++) {
                /* values sorted by text */
                const char *vals[16];
                uint32_t nv = rs[i].nvalues < 16 ? rs[i].nvalues : 16;
                for (uint32_t k = 0; k < nv; k++)
                    vals[k] = ks_intern_str(rs[i].values[k]);
                for (uint32_t a = 1; a < nv; a++)
                    for (uint32_t b = a; b > 0 && strcmp(vals[b - 1], vals[b]) > 0; b--) {
                        const char *x = vals[b];
                        vals[b] = vals[b - 1];
                        vals[b - 1] = x;
                    }
                size_t at =
                    (size_t)snprintf(words[n], 256, "%s%s=", f ? "field:" : "", ks_intern_str(rs[i].key));
                for (uint32_t k = 0; k < nv && at < 256; k++)
                    at += (size_t)snprintf(words[n] + at, 256 - at, "%s%s", k ? "," : "", vals[k]);
                n++;
            }
        }
    }
    for (uint32_t a = 1; a < n; a++)
        for (uint32_t b = a; b > 0 && strcmp(words[b - 1], words[b]) > 0; b--) {
            char x[256];
            memcpy(x, words[b], 256);
            memcpy(words[b], words[b - 1], 256);
            memcpy(words[b - 1], x, 256);
        }
    size_t at = 0;
    for (uint32_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " " : "", words[i]);
}

static inline void dsl_want_selector_words(struct dsl *d, const char *want, char *buf, size_t len)
{
    const char *v;
    if (!want || strcmp(want, "none") == 0) {
        snprintf(buf, len, "none");
        return;
    }
    if (dsl_prefix(want, "node:", &v)) {
        snprintf(buf, len, "field:metadata.name=%s", v);
        return;
    }
    /* sort the given words */
    char *copy = dsl_str(d, want), *save = NULL;
    const char *w[32];
    uint32_t n = 0;
    for (char *t = strtok_r(copy, " ", &save); t && n < 32; t = strtok_r(NULL, " ", &save))
        w[n++] = t;
    for (uint32_t a = 1; a < n; a++)
        for (uint32_t b = a; b > 0 && strcmp(w[b - 1], w[b]) > 0; b--) {
            const char *x = w[b];
            w[b] = w[b - 1];
            w[b - 1] = x;
        }
    size_t at = 0;
    for (uint32_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " " : "", w[i]);
}

static inline void dsl_check_claim(struct dsl *d, uint32_t ci, const struct ks_allocation *got)
{
    const struct dsl_expect *e = &d->expect[ci];
    char gbuf[4096] = "";
    size_t at = 0;
    for (uint32_t i = 0; i < got->nresults && at < sizeof(gbuf); i++) {
        char one[512];
        dsl_print_result(one, sizeof(one), &got->results[i]);
        at += (size_t)snprintf(gbuf + at, sizeof(gbuf) - at, "\n    %s", one);
    }
    cr_expect(got->nresults == e->nres, "%s: claim #%u: %u results, want %u; got:%s", d->name, ci,
              got->nresults, e->nres, gbuf);
    bool used[64] = {0};
    for (uint32_t i = 0; i < e->nres; i++) {
        bool found = false;
        for (uint32_t j = 0; j < got->nresults && !found; j++) {
            if (!used[j] && dsl_result_matches(d, &e->res[i], &got->results[j]))
                found = used[j] = true;
        }
        cr_expect(found, "%s: claim #%u: no result %s %s/%s/%s as expected; got:%s", d->name, ci,
                  e->res[i].request, ks_intern_str(e->res[i].driver), ks_intern_str(e->res[i].pool),
                  ks_intern_str(e->res[i].device), gbuf);
    }
    char gs[2048], ws[2048];
    dsl_selector_words(got->node_selector, gs, sizeof(gs));
    dsl_want_selector_words(d, e->selector, ws, sizeof(ws));
    cr_expect(strcmp(gs, ws) == 0, "%s: claim #%u: node selector \"%s\", want \"%s\"", d->name, ci, gs, ws);
    cr_expect(got->nconfig == e->ncfg, "%s: claim #%u: %u configs, want %u", d->name, ci, got->nconfig,
              e->ncfg);
    for (uint32_t i = 0; i < e->ncfg && i < got->nconfig; i++) {
        const struct ks_allocation_config *g = &got->config[i];
        const struct dsl_cfg *w = &e->cfg[i];
        bool same = g->from_class == w->from_class && strcmp(g->opaque.driver, w->driver) == 0 &&
                    strcmp(g->opaque.parameters, w->params) == 0 && g->nrequests == w->nreq;
        for (uint32_t k = 0; same && k < w->nreq; k++)
            same = strcmp(g->requests[k], w->req[k]) == 0;
        char reqs[256] = "";
        size_t ra = 0;
        for (uint32_t k = 0; k < g->nrequests && ra < sizeof(reqs); k++)
            ra += (size_t)snprintf(reqs + ra, sizeof(reqs) - ra, "%s%s", k ? "," : "", g->requests[k]);
        cr_expect(same, "%s: claim #%u: config #%u is %s %s %s [%s]", d->name, ci, i,
                  g->from_class ? "class" : "claim", g->opaque.driver, g->opaque.parameters, reqs);
    }
}

/* Run the case: catalog, allocated state, allocate (prepared and not), check. */
/* dsl_catalog - the case's classes and slices as a catalog under its features. */
static inline struct ks_dra_catalog *dsl_catalog(const struct dsl *d)
{
    struct ks_dra_catalog *cat = NULL;
    cr_assert(ks_dra_catalog_build((const struct ks_device_class *const *)d->classes, d->nclasses,
                                   (const struct ks_resource_slice *const *)d->slices, d->nslices, &d->f,
                                   &cat) == 0);
    return cat;
}

/* dsl_state - an allocated state holding the case's allocated devices. */
static inline struct ks_dra_allocated *dsl_state(const struct dsl *d)
{
    struct ks_dra_allocated *a = NULL;
    cr_assert(ks_dra_allocated_create(&a) == 0);
    for (uint32_t i = 0; i < d->nalloc; i++)
        cr_assert(ks_dra_allocated_add(a, &d->alloc[i]) == 0);
    return a;
}

static inline void dsl_run(const char *name, const char *text)
{
    cr_assert(ks_api_init() == 0);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, name, text);
    struct ks_dra_catalog *cat = dsl_catalog(d);
    struct ks_dra_allocated *alloc = dsl_state(d);
    struct ks_dra_scratch *s = NULL;
    struct ks_dra_claims *prep = NULL;
    cr_assert(ks_dra_scratch_create(&s) == 0);
    struct ks_allocation *res = ks_arena_calloc(&d->a, d->nclaims + 1, sizeof(*res));
    char err[2048];
    int rc = ks_dra_allocate(cat, alloc, &d->node, (const struct ks_resource_claim *const *)d->claims,
                             d->nclaims, s, res, err, sizeof(err));
    uint64_t steps = ks_dra_scratch_steps(s);
    switch (d->want) {
    case DSL_WANT_ERROR:
        cr_expect(rc == KS_DRA_ERROR, "%s: outcome %d, want an error containing \"%s\" (message \"%s\")",
                  name, rc, d->want_msg, err);
        cr_expect(strstr(err, d->want_msg) != NULL, "%s: error \"%s\" does not contain \"%s\"", name, err,
                  d->want_msg);
        break;
    case DSL_WANT_UNSUITABLE:
        cr_expect(rc == KS_DRA_UNSUITABLE, "%s: outcome %d (%s), want unsuitable", name, rc, err);
        cr_expect(strcmp(err, d->want_msg) == 0, "%s: message \"%s\", want \"%s\"", name, err, d->want_msg);
        break;
    case DSL_WANT_ALLOC:
        if (d->nclaims == 0) {
            cr_expect(rc == KS_DRA_ALLOCATED, "%s: outcome %d (%s) without claims, want allocated", name, rc,
                      err);
            break;
        }
        if (d->nexpect == 0) {
            cr_expect(rc == KS_DRA_UNSUITABLE && err[0] == '\0', "%s: outcome %d (%s), want unsuitable", name,
                      rc, err);
            break;
        }
        cr_expect(rc == KS_DRA_ALLOCATED, "%s: outcome %d (%s), want allocated", name, rc, err);
        if (rc != KS_DRA_ALLOCATED)
            break;
        cr_expect(d->nexpect == d->nclaims, "%s: %u expects for %u claims", name, d->nexpect, d->nclaims);
        for (uint32_t i = 0; i < d->nclaims && i < d->nexpect; i++)
            dsl_check_claim(d, i, &res[i]);
        break;
    }
    if (d->steps >= 0)
        cr_expect(steps == (uint64_t)d->steps, "%s: %" PRIu64 " search steps, want %" PRId64, name, steps,
                  d->steps);

    /* the prepared form answers the same, twice */
    cr_assert(ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)d->claims, d->nclaims,
                                    &prep) == 0);
    for (int round = 0; round < 2; round++) {
        struct ks_allocation *res2 = ks_arena_calloc(&d->a, d->nclaims + 1, sizeof(*res2));
        char err2[2048];
        int rc2 = ks_dra_allocate_prepared(alloc, &d->node, prep, s, res2, err2, sizeof(err2));
        cr_expect(rc2 == rc && strcmp(err, err2) == 0, "%s: prepared round %d: %d \"%s\", first %d \"%s\"",
                  name, round, rc2, err2, rc, err);
        cr_expect(ks_dra_scratch_steps(s) == steps, "%s: prepared round %d took other steps", name, round);
        if (rc2 == KS_DRA_ALLOCATED && rc == KS_DRA_ALLOCATED && d->want == DSL_WANT_ALLOC &&
            d->nexpect == d->nclaims) {
            for (uint32_t i = 0; i < d->nclaims; i++)
                dsl_check_claim(d, i, &res2[i]);
        }
    }
    ks_dra_claims_destroy(prep);
    ks_dra_scratch_destroy(s);
    ks_dra_allocated_destroy(alloc);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}

/* One Test per case: DRA_CASE(name, "directives"). */
#define DRA_CASE(id, text)                                                                                   \
    Test(dra_alloc, id)                                                                                      \
    {                                                                                                        \
        dsl_run(#id, text);                                                                                  \
    }

#endif
