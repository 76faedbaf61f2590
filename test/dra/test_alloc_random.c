/*
 * test_alloc_random.c - randomized properties of the structured allocator, seeded and
 * deterministic.
 *
 * Each seed writes a case in the language of dra_dsl.h (printed when a check fails, so the
 * case can be replayed as a DRA_CASE): random features, node-local, allNodes,
 * label-selected and per-device slices, partitionable pools with counters, devices with
 * attributes, capacities, taints and binding conditions, devices already allocated, and
 * claims with exact, All and firstAvailable requests, selectors, admin access, tolerations,
 * capacity requests, matchAttribute and distinctAttribute constraints. Every node is asked,
 * and every allocation must be sound:
 * - at most 32 results per claim; every result names a request of its claim, with the
 *   request's count of devices (ExactCount), admin access and tolerations;
 * - every device exists, is visible from the node, belongs to the class's driver and
 *   passes the request's selector, and is tolerated when tainted (DRADeviceTaints);
 * - no device goes to two results unless it allows multiple allocations or the results
 *   have admin access, nor to a result when another claim holds it;
 * - shared capacity and shared counters are never exceeded, counting the allocated state;
 * - matchAttribute and distinctAttribute hold;
 * and ks_dra_allocate answers the same twice, prepared or not, and with an allocated state
 * bound to the catalog (bound between its adds, one allocation removed and added again),
 * and asked for no results, twice (verdicts remembered).
 */
#include <stdarg.h>

#include "dra_dsl.h"

struct rng {
    uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)((r->s >> 11) % n);
}

static bool chance(struct rng *r, uint32_t percent)
{
    return rnd(r, 100) < percent;
}

struct text {
    char *p;
    size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0 && t->len + (size_t)n < t->cap, "case text too long");
    t->len += (size_t)n;
}

static const char *const models[] = {"x", "y", "z"};
static const char *const regions[] = {"r1", "r2", "r1"};
enum { NODES = 3 };

/* Devices of one slice. */
static void gen_devices(struct rng *r, struct text *t, bool counters, bool consumable, int *serial,
                        bool perdev)
{
    int n = 1 + (int)rnd(r, 4);
    for (int i = 0; i < n; i++) {
        int id = (*serial)++;
        if (id > 0 && chance(r, 3))
            id--; /* now and then a duplicate name: an invalid pool */
        add(t, "device d%d s:model=%s i:numa=%u v:ver=1.%u.0", id, models[rnd(r, 3)], rnd(r, 2), rnd(r, 3));
        bool multi = consumable && !counters && chance(r, 35);
        if (multi)
            add(t, " multi");
        if (!counters && chance(r, 35))
            add(t, chance(r, 50) ? " c:capacity-0=%u" : " range:capacity-0=%u", chance(r, 50) ? 2u : 4u);
        if (counters)
            add(t, " consume:cs:memory=%uGi", 1 + rnd(r, 4));
        if (chance(r, 15))
            add(t, " taint:t=v:%s", chance(r, 40) ? "NoSchedule" : chance(r, 50) ? "NoExecute" : "None");
        if (chance(r, 10))
            add(t, " binding:Ready/Failed");
        if (perdev) {
            uint32_t k = rnd(r, 4);
            if (k < NODES)
                add(t, " node:node-%u", k);
            else
                add(t, chance(r, 50) ? " allnodes" : " nodesel:region=r2");
        }
        add(t, "\n");
    }
}

static void gen_case(uint64_t seed, struct text *t)
{
    struct rng r = {seed * 0x9e3779b97f4a7c15ull + 0x1234567};
    for (int i = 0; i < 4; i++)
        rnd(&r, 2);
    bool all = chance(&r, 70);
    bool admin = all || chance(&r, 50), prio = all || chance(&r, 50), part = all || chance(&r, 50);
    bool taints = all || chance(&r, 50), binding = all || chance(&r, 50), consumable = all || chance(&r, 50);
    add(t, "features%s%s%s%s%s%s\n", admin ? " admin" : "", prio ? " prioritized" : "",
        part ? " partitionable" : "", taints ? " taints" : "", binding ? " binding" : "",
        consumable ? " consumable" : "");
    add(t, "class class-a driver=driver-a\nclass class-b driver=driver-b\nclass class-am driver=driver-a "
           "multi=true\n");
    int serial = 0;
    for (int n = 0; n < NODES; n++) {
        for (int dv = 0; dv < 2; dv++) {
            if (!chance(&r, 80))
                continue;
            const char *drv = dv ? "driver-b" : "driver-a";
            bool counters = part && chance(&r, 40);
            int nslices = 1 + (int)rnd(&r, 2);
            int count = nslices + (counters ? 1 : 0);
            if (chance(&r, 5))
                count++; /* an incomplete pool */
            for (int s = 0; s < nslices; s++) {
                add(&*t, "slice s-%d-%d-%d node-%d p-%d-%d:%d %s\n", n, dv, s, n, n, dv, count, drv);
                gen_devices(&r, t, counters, consumable, &serial, false);
            }
            if (counters)
                add(t, "slice s-%d-%d-c node-%d p-%d-%d:%d %s\ncounterset cs memory=%uGi\n", n, dv, n, n, dv,
                    count, drv, 4 + rnd(&r, 6));
        }
    }
    if (chance(&r, 50)) {
        add(t, "slice s-all all p-all driver-a\n");
        gen_devices(&r, t, false, consumable, &serial, false);
    }
    if (chance(&r, 40)) {
        add(t, "slice s-r1 sel:region=r1 p-r1 driver-b\n");
        gen_devices(&r, t, false, consumable, &serial, false);
    }
    if (chance(&r, 30)) {
        add(t, "slice s-pd perdevice p-pd driver-a\n");
        gen_devices(&r, t, false, consumable, &serial, true);
    }
    /* devices already allocated: by name (some miss, some hit several pools) */
    int nalloc = (int)rnd(&r, 4);
    for (int i = 0; i < nalloc; i++) {
        int n = (int)rnd(&r, NODES), dv = (int)rnd(&r, 2);
        if (chance(&r, 50))
            add(t, "allocated driver-%c/p-%d-%d/d%d\n", dv ? 'b' : 'a', n, dv,
                (int)rnd(&r, (uint32_t)serial + 1));
        else
            add(t, "allocatedShare driver-%c/p-%d-%d/d%d capacity-0=1\n", dv ? 'b' : 'a', n, dv,
                (int)rnd(&r, (uint32_t)serial + 1));
    }
    int nclaims = 1 + (int)rnd(&r, 2);
    for (int c = 0; c < nclaims; c++) {
        add(t, "claim c%d\n", c);
        uint32_t kind = rnd(&r, 100);
        bool distinct = kind < 15, match = kind >= 15 && kind < 35;
        if (distinct)
            add(t, "distinct driver-a/model\n");
        if (match)
            add(t, "match driver-a/numa\n");
        int nreq = 1 + (int)rnd(&r, 2);
        for (int q = 0; q < nreq; q++) {
            bool first = chance(&r, prio ? 25 : 3);
            int nspec = first ? 2 : 1;
            if (first)
                add(t, "firstAvailable r%d\n", q);
            for (int k = 0; k < nspec; k++) {
                bool a_only = distinct || match;
                const char *cls = a_only ? (chance(&r, 15) ? "class-am" : "class-a")
                                         : (chance(&r, 35)   ? "class-b"
                                            : chance(&r, 15) ? "class-am"
                                                             : "class-a");
                bool mode_all = !distinct && chance(&r, 10);
                char count[16];
                snprintf(count, sizeof(count), "%s",
                         mode_all                       ? "all"
                         : (distinct || chance(&r, 60)) ? "1"
                                                        : "2");
                if (first)
                    add(t, "sub s%d %s %s", k, cls, count);
                else
                    add(t, "request r%d %s %s", q, cls, count);
                if (strcmp(cls, "class-b") != 0 && chance(&r, 20))
                    add(t, " attr==model:%s", models[rnd(&r, 3)]);
                if (!first && admin && chance(&r, 10))
                    add(t, " admin");
                if (chance(&r, 30))
                    add(t, " tol:Exists:t::");
                if (consumable && chance(&r, 25))
                    add(t, " cap=1");
                add(t, "\n");
            }
        }
    }
}

/* ---- checks
 * -------------------------------------------------------------------------------------------------- */

static const struct ks_device *find_device(struct dsl *d, const struct ks_device_result *r,
                                           const struct ks_resource_slice **slice)
{
    for (uint32_t i = 0; i < d->nslices; i++) {
        const struct ks_resource_slice *s = d->slices[i];
        if (s->driver != r->driver || s->pool != r->pool)
            continue;
        for (uint32_t k = 0; k < s->ndevices; k++) {
            if (s->devices[k].name == r->device) {
                *slice = s;
                return &s->devices[k];
            }
        }
    }
    return NULL;
}

static const struct ks_device_attribute *attr(const struct ks_device *dev, const char *name)
{
    uint32_t id = ks_intern(name);
    for (uint32_t i = 0; i < dev->nattributes; i++) {
        if (dev->attributes[i].name == id)
            return &dev->attributes[i];
    }
    return NULL;
}

static bool visible(const struct ks_node *node, const struct ks_resource_slice *s,
                    const struct ks_device *dev)
{
    if (s->node_name != KS_ID_NONE)
        return s->node_name == node->name_id;
    if (s->all_nodes)
        return true;
    if (s->node_selector)
        return ks_node_selector_matches(s->node_selector, &node->meta.labels, node->name_id);
    if (dev->node_name != KS_ID_NONE)
        return dev->node_name == node->name_id;
    if (dev->all_nodes)
        return true;
    return dev->node_selector &&
           ks_node_selector_matches(dev->node_selector, &node->meta.labels, node->name_id);
}

/* The request or subrequest a result names. */
static const struct ks_device_request_spec *spec_of(const struct ks_resource_claim *c, const char *name)
{
    for (uint32_t i = 0; i < c->spec.nrequests; i++) {
        const struct ks_device_request *r = &c->spec.requests[i];
        if (r->exact && strcmp(r->name, name) == 0)
            return &r->spec;
        for (uint32_t k = 0; k < r->nsubrequests; k++) {
            char full[128];
            snprintf(full, sizeof(full), "%s/%s", r->name, r->subrequests[k].name);
            if (strcmp(full, name) == 0)
                return &r->subrequests[k];
        }
    }
    return NULL;
}

static bool is_taint_ok(const struct ks_device *dev, const struct ks_device_request_spec *sp)
{
    for (uint32_t i = 0; i < dev->ntaints; i++) {
        if (dev->taints[i].effect != KS_DEVICE_TAINT_NO_SCHEDULE &&
            dev->taints[i].effect != KS_DEVICE_TAINT_NO_EXECUTE)
            continue;
        bool ok = false;
        for (uint32_t k = 0; k < sp->ntolerations; k++)
            ok |= sp->tolerations[k].exists && sp->tolerations[k].key == dev->taints[i].key;
        if (!ok)
            return false;
    }
    return true;
}

static void dump(char *buf, size_t len, const struct ks_allocation *res, uint32_t n)
{
    size_t at = 0;
    for (uint32_t c = 0; c < n && at < len; c++) {
        at += (size_t)snprintf(buf + at, len - at, "claim %u:", c);
        for (uint32_t i = 0; i < res[c].nresults && at < len; i++) {
            char one[512];
            dsl_print_result(one, sizeof(one), &res[c].results[i]);
            at +=
                (size_t)snprintf(buf + at, len - at, " [%s%s%s]", one, res[c].results[i].share_id ? " " : "",
                                 res[c].results[i].share_id ? res[c].results[i].share_id : "");
        }
        if (at < len)
            at += (size_t)snprintf(buf + at, len - at, " cfg=%u sel=%s\n", res[c].nconfig,
                                   res[c].node_selector ? "yes" : "no");
    }
}

static void check(struct dsl *d, const char *text, const struct ks_node *node,
                  const struct ks_allocation *res)
{
    const struct ks_dra_features *f = &d->f;
    /* per device (by result identity): non-admin dedicated uses */
    for (uint32_t c = 0; c < d->nclaims; c++) {
        const struct ks_resource_claim *claim = d->claims[c];
        const struct ks_allocation *a = &res[c];
        cr_assert(a->nresults <= KS_DRA_ALLOCATION_RESULTS_MAX, "%s", text);
        for (uint32_t i = 0; i < a->nresults; i++) {
            const struct ks_device_result *r = &a->results[i];
            const struct ks_resource_slice *slice;
            const struct ks_device *dev = find_device(d, r, &slice);
            const struct ks_device_request_spec *sp = spec_of(claim, r->request);
            cr_assert(dev && sp, "%s\nunknown device or request in result %s", text, r->request);
            cr_assert(visible(node, slice, dev), "%s\n%s: device %s not visible from %s", text, r->request,
                      ks_intern_str(dev->name), node->meta.name);
            bool want_a = strcmp(sp->device_class_name, "class-b") != 0;
            cr_assert(slice->driver == ks_intern(want_a ? "driver-a" : "driver-b"), "%s\nwrong driver", text);
            if (strcmp(sp->device_class_name, "class-am") == 0)
                cr_assert(dev->has_allow_multiple && dev->allow_multiple,
                          "%s\nclass-am took a dedicated device", text);
            for (uint32_t k = 0; k < sp->nselectors; k++) {
                const char *eq = strstr(sp->selectors[k], "== \"");
                const struct ks_device_attribute *m = attr(dev, "model");
                cr_assert(eq && m && strncmp(eq + 4, m->s, strlen(m->s)) == 0, "%s\nselector %s fails on %s",
                          text, sp->selectors[k], ks_intern_str(dev->name));
            }
            if (f->device_taints)
                cr_assert(is_taint_ok(dev, sp), "%s\ntainted device %s", text, ks_intern_str(dev->name));
            if (!f->device_binding_conditions)
                cr_assert(dev->nbinding_conditions == 0, "%s\nbinding conditions with the feature off", text);
            if (!f->partitionable_devices)
                cr_assert(dev->nconsumes == 0, "%s\ncounters with the feature off", text);
            cr_assert((r->has_admin_access && r->admin_access) == (sp->has_admin_access && sp->admin_access),
                      "%s", text);
            cr_assert(r->ntolerations == sp->ntolerations, "%s", text);
            bool multi = f->consumable_capacity && dev->has_allow_multiple && dev->allow_multiple;
            cr_assert((r->share_id != NULL) == multi, "%s\nshare id", text);
            if (r->has_admin_access && r->admin_access)
                continue;
            /* exclusive use of dedicated devices */
            if (!multi) {
                for (uint32_t c2 = 0; c2 < d->nclaims; c2++) {
                    for (uint32_t j = 0; j < res[c2].nresults; j++) {
                        const struct ks_device_result *o = &res[c2].results[j];
                        if ((c2 == c && j == i) || o->driver != r->driver || o->pool != r->pool ||
                            o->device != r->device)
                            continue;
                        cr_assert(o->has_admin_access && o->admin_access && c2 != c,
                                  "%s\ndevice %s given twice", text, ks_intern_str(r->device));
                    }
                }
                for (uint32_t k = 0; k < d->nalloc; k++) {
                    const struct ks_device_result *o = &d->alloc[k].results[0];
                    bool held = !o->share_id || !f->consumable_capacity;
                    cr_assert(
                        !(held && o->driver == r->driver && o->pool == r->pool && o->device == r->device),
                        "%s\ndevice %s is allocated already", text, ks_intern_str(r->device));
                }
            }
        }
        /* counts per request */
        for (uint32_t q = 0; q < claim->spec.nrequests; q++) {
            const struct ks_device_request *rq = &claim->spec.requests[q];
            uint32_t nspec = rq->exact ? 1 : rq->nsubrequests, hits = 0;
            int64_t want = -1;
            for (uint32_t k = 0; k < nspec; k++) {
                const struct ks_device_request_spec *sp = rq->exact ? &rq->spec : &rq->subrequests[k];
                char full[128];
                snprintf(full, sizeof(full), "%s/%s", rq->name, sp->name);
                uint32_t n = 0;
                for (uint32_t i = 0; i < a->nresults; i++)
                    n += strcmp(a->results[i].request, rq->exact ? rq->name : full) == 0;
                if (n) {
                    hits++;
                    want = sp->mode == KS_ALLOC_ALL ? (int64_t)n : sp->count;
                    cr_assert(want == (int64_t)n, "%s\nrequest %s: %u results, count %" PRId64, text, full, n,
                              want);
                }
            }
            cr_assert(hits == 1, "%s\nrequest %s: %u of its subrequests have results", text, rq->name, hits);
        }
        /* constraints */
        for (uint32_t k = 0; k < claim->spec.nconstraints; k++) {
            const struct ks_device_constraint *con = &claim->spec.constraints[k];
            bool is_match = con->match_attribute != KS_ID_NONE;
            const char *name = is_match ? "numa" : "model";
            for (uint32_t i = 0; i < a->nresults; i++) {
                for (uint32_t j = i + 1; j < a->nresults; j++) {
                    const struct ks_resource_slice *s1, *s2;
                    const struct ks_device_attribute *x = attr(find_device(d, &a->results[i], &s1), name);
                    const struct ks_device_attribute *y = attr(find_device(d, &a->results[j], &s2), name);
                    cr_assert(x && y, "%s", text);
                    if (is_match)
                        cr_assert(x->i == y->i, "%s\nmatchAttribute numa broken", text);
                    else
                        cr_assert(strcmp(x->s, y->s) != 0, "%s\ndistinctAttribute model broken", text);
                }
            }
        }
    }
    /* shared capacity of multi-allocatable devices, counting the allocated shares */
    for (uint32_t si = 0; si < d->nslices; si++) {
        const struct ks_resource_slice *s = d->slices[si];
        for (uint32_t k = 0; k < s->ndevices; k++) {
            const struct ks_device *dev = &s->devices[k];
            if (!f->consumable_capacity || dev->ncapacity == 0)
                continue;
            struct ks_quantity sum = {0};
            bool any_new = false;
            for (uint32_t c = 0; c < d->nclaims; c++) {
                for (uint32_t i = 0; i < res[c].nresults; i++) {
                    const struct ks_device_result *r = &res[c].results[i];
                    if (r->driver == s->driver && r->pool == s->pool && r->device == dev->name &&
                        r->nconsumed) {
                        ks_quantity_add(&sum, &r->consumed[0].value);
                        any_new = true;
                    }
                }
            }
            if (!any_new)
                continue;
            for (uint32_t a = 0; a < d->nalloc; a++) {
                const struct ks_device_result *o = &d->alloc[a].results[0];
                if (o->share_id && o->nconsumed && o->driver == s->driver && o->pool == s->pool &&
                    o->device == dev->name)
                    ks_quantity_add(&sum, &o->consumed[0].value);
            }
            cr_assert(ks_quantity_cmp(&sum, &dev->capacity[0].value) <= 0, "%s\ncapacity of %s exceeded",
                      text, ks_intern_str(dev->name));
        }
    }
    /* counters: per pool with a counter set, if a new result consumes them */
    for (uint32_t si = 0; si < d->nslices; si++) {
        const struct ks_resource_slice *cs = d->slices[si];
        if (!f->partitionable_devices || cs->ncounter_sets == 0)
            continue;
        struct ks_quantity used = {0};
        bool any_new = false;
        for (uint32_t sj = 0; sj < d->nslices; sj++) {
            const struct ks_resource_slice *s = d->slices[sj];
            if (s->driver != cs->driver || s->pool != cs->pool)
                continue;
            for (uint32_t k = 0; k < s->ndevices; k++) {
                const struct ks_device *dev = &s->devices[k];
                if (!dev->nconsumes)
                    continue;
                for (uint32_t c = 0; c < d->nclaims; c++) {
                    for (uint32_t i = 0; i < res[c].nresults; i++) {
                        const struct ks_device_result *r = &res[c].results[i];
                        if (r->driver == s->driver && r->pool == s->pool && r->device == dev->name) {
                            ks_quantity_add(&used, &dev->consumes[0].counters[0].value);
                            any_new = true;
                        }
                    }
                }
                for (uint32_t a = 0; a < d->nalloc; a++) {
                    const struct ks_device_result *o = &d->alloc[a].results[0];
                    if (o->driver == s->driver && o->pool == s->pool && o->device == dev->name)
                        ks_quantity_add(&used, &dev->consumes[0].counters[0].value);
                }
            }
        }
        if (any_new)
            cr_assert(ks_quantity_cmp(&used, &cs->counter_sets[0].counters[0].value) <= 0,
                      "%s\ncounters of pool %s exceeded", text, ks_intern_str(cs->pool));
    }
}

static void run_seed(uint64_t seed, struct ks_dra_scratch *s, uint32_t *counts)
{
    static char buf[1 << 16];
    struct text t = {buf, 0, sizeof(buf)};
    gen_case(seed, &t);
    char name[64];
    snprintf(name, sizeof(name), "seed %" PRIu64, seed);
    struct dsl *d = calloc(1, sizeof(*d));
    dsl_parse(d, name, buf);
    struct ks_dra_catalog *cat = dsl_catalog(d);
    struct ks_dra_allocated *alloc = dsl_state(d);
    struct ks_dra_claims *prep;
    struct ks_dra_allocated *bound;
    cr_assert(ks_dra_allocated_create(&bound) == 0);
    for (uint32_t i = 0; i < d->nalloc; i++) {
        if (i == d->nalloc / 2)
            cr_assert(ks_dra_allocated_bind(bound, cat) == 0);
        cr_assert(ks_dra_allocated_add(bound, &d->alloc[i]) == 0);
    }
    if (d->nalloc) {
        cr_assert(ks_dra_allocated_bind(bound, cat) == 0);
        ks_dra_allocated_remove(bound, &d->alloc[0]);
        cr_assert(ks_dra_allocated_add(bound, &d->alloc[0]) == 0);
    }
    cr_assert(ks_dra_claims_prepare(cat, (const struct ks_resource_claim *const *)d->claims, d->nclaims,
                                    &prep) == 0);
    for (int n = 0; n <= NODES; n++) {
        struct ks_node node = {0};
        char nname[32], labels[64];
        snprintf(nname, sizeof(nname), "node-%d", n);
        snprintf(labels, sizeof(labels), "region=%s", n < NODES ? regions[n] : "r2");
        node.meta.name = nname;
        node.name_id = ks_intern(nname);
        node.meta.labels = ks_fake_labels(&d->a, labels);
        struct ks_allocation res[DSL_MAX], res2[DSL_MAX];
        char err[1024], err2[1024], dump1[8192], dump2[8192];
        int rc = ks_dra_allocate(cat, alloc, &node, (const struct ks_resource_claim *const *)d->claims,
                                 d->nclaims, s, res, err, sizeof(err));
        cr_assert(rc >= 0, "%s\n%s: rc %d", buf, nname, rc);
        counts[rc]++;
        if (rc == KS_DRA_ALLOCATED) {
            check(d, buf, &node, res);
            dump(dump1, sizeof(dump1), res, d->nclaims);
        }
        int rc2 = ks_dra_allocate_prepared(alloc, &node, prep, s, res2, err2, sizeof(err2));
        cr_assert(rc2 == rc && strcmp(err, err2) == 0, "%s\n%s: %d \"%s\" then %d \"%s\"", buf, nname, rc,
                  err, rc2, err2);
        if (rc == KS_DRA_ALLOCATED) {
            dump(dump2, sizeof(dump2), res2, d->nclaims);
            cr_assert(strcmp(dump1, dump2) == 0, "%s\n%s: different answers:\n%s\n%s", buf, nname, dump1,
                      dump2);
        }
        for (int again = 0; again < 2; again++) { /* the second may be the remembered verdict */
            rc2 = ks_dra_allocate_prepared(bound, &node, prep, s, NULL, err2, sizeof(err2));
            cr_assert(rc2 == rc && strcmp(err, err2) == 0,
                      "%s\n%s (no results, %d): %d \"%s\" then %d \"%s\"", buf, nname, again, rc, err, rc2,
                      err2);
        }
        rc2 = ks_dra_allocate_prepared(bound, &node, prep, s, res2, err2, sizeof(err2));
        cr_assert(rc2 == rc && strcmp(err, err2) == 0, "%s\n%s (bound): %d \"%s\" then %d \"%s\"", buf, nname,
                  rc, err, rc2, err2);
        if (rc == KS_DRA_ALLOCATED) {
            dump(dump2, sizeof(dump2), res2, d->nclaims);
            cr_assert(strcmp(dump1, dump2) == 0, "%s\n%s (bound): different answers:\n%s\n%s", buf, nname,
                      dump1, dump2);
        }
    }
    ks_dra_allocated_destroy(bound);
    ks_dra_claims_destroy(prep);
    ks_dra_allocated_destroy(alloc);
    ks_dra_catalog_destroy(cat);
    ks_arena_destroy(&d->a);
    free(d);
}

Test(dra_alloc, random_allocations_are_sound_and_deterministic, .timeout = 600)
{
    cr_assert(ks_api_init() == 0);
    struct ks_dra_scratch *s;
    cr_assert(ks_dra_scratch_create(&s) == 0);
    uint32_t counts[3] = {0};
    for (uint64_t seed = 1; seed <= 1000; seed++)
        run_seed(seed, s, counts);
    cr_log_info("outcomes: %u allocated, %u unsuitable, %u errors", counts[0], counts[1], counts[2]);
    /* the generator must exercise every outcome */
    cr_expect(counts[KS_DRA_ALLOCATED] > 1000, "%u allocated", counts[KS_DRA_ALLOCATED]);
    cr_expect(counts[KS_DRA_UNSUITABLE] > 1000, "%u unsuitable", counts[KS_DRA_UNSUITABLE]);
    cr_expect(counts[KS_DRA_ERROR] > 100, "%u errors", counts[KS_DRA_ERROR]);
    ks_dra_scratch_destroy(s);
}
