/*
 * catalog.c - the DRA catalog: DeviceClasses and ResourceSlices prepared once for every
 * allocation that follows (struct ks_dra_catalog).
 *
 * What is computed here, once, instead of per (pod, node) as upstream does:
 * - every device gets a global index, its CEL view (device_view.c) and catalog-local ids
 *   of its string attribute values (constraints compare ids, never text);
 * - slices get their pool, their rank by name, whether their node selectors parse;
 * - pools (driver, pool name) get all their slices and their rank by driver and name;
 * - every class's selectors are compiled, each distinct expression once, into the
 *   selector table; claim selectors join the table later, lock-free (see below);
 * - for every node name that local slices name, the poolset GatherPools gives for that
 *   node when only its own slices and the allNodes slices are relevant; one more poolset
 *   for nodes without slices of their own. Slices with a node selector or per-device node
 *   selection depend on the node's labels: they are checked per call, and only a node for
 *   which one of them is relevant has its pools gathered again (into its scratch).
 *
 * The selector table. An open-addressing array of atomic pointers, keyed by the
 * expression's hash, insert-only. A reader loads a slot with acquire order; a writer
 * compiles first, then publishes with a compare-and-swap with release order (the loser of a
 * race frees its copy and uses the winner's), so a selector is complete before any thread
 * can see it. A full table leaves the new selector private to the caller. Every other part
 * of the catalog is immutable once built.
 *
 * Context: ks_dra_catalog_build on any thread (slow path; allocates); readers anywhere.
 * Mirrors structured/internal/incubating/allocator_incubating.go (NewAllocator's slice
 * split by node name) and cel/cache.go (one compilation per expression).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"
#include "ksched/plugin_helpers_node_affinity.h"

#include "dra_internal.h"

struct ks_dra_features ks_dra_features_default(void)
{
    struct ks_dra_features f = {
        .admin_access = true,
        .prioritized_list = true,
        .partitionable_devices = true,
        .device_taints = true,
        .device_binding_conditions = true,
        .consumable_capacity = true,
    };
    return f;
}

static bool has_name(uint32_t id)
{
    return id != KS_ID_NONE && id != KS_ID_EMPTY;
}

static bool selector_valid(const struct ks_node_selector *sel)
{
    if (!sel)
        return true;
    for (uint32_t i = 0; i < sel->nterms; i++) {
        if (!ks_node_selector_term_valid(&sel->terms[i]))
            return false;
    }
    return true;
}

/* ---- build-time string ids ------------------------------------------------------------------------- */

struct str_table {
    uint32_t mask, n;
    const char **keys;
    uint32_t *ids;
};

static uint32_t str_id(struct str_table *t, const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    uint32_t i = (uint32_t)ks__dra_expr_hash(s, len) & t->mask;
    while (t->keys[i]) {
        if (strcmp(t->keys[i], s) == 0)
            return t->ids[i];
        i = (i + 1) & t->mask;
    }
    t->keys[i] = s;
    t->ids[i] = ++t->n;
    return t->ids[i];
}

/* ---- sorting helpers ----------------------------------------------------------------------------------- */

static int cmp_slice_name(const void *a, const void *b, void *arg)
{
    const struct ks_resource_slice *const *slices = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const char *nx = slices[x]->meta.name ? slices[x]->meta.name : "";
    const char *ny = slices[y]->meta.name ? slices[y]->meta.name : "";
    int c = strcmp(nx, ny);
    return c ? c : (x > y) - (x < y);
}

static int cmp_pool(const void *a, const void *b, void *arg)
{
    const struct dra_pool_id *pools = arg;
    const struct dra_pool_id *x = &pools[*(const uint32_t *)a], *y = &pools[*(const uint32_t *)b];
    int c = strcmp(ks_intern_str(x->driver), ks_intern_str(y->driver));
    return c ? c : strcmp(ks_intern_str(x->pool), ks_intern_str(y->pool));
}

/* ---- the selector table ----------------------------------------------------------------------------- */

static int table_init(struct dra_sel_table *t, uint32_t want)
{
    uint32_t size = 256;
    while (size < 4 * want)
        size *= 2;
    t->slots = calloc(size, sizeof(*t->slots));
    if (!t->slots)
        return -ENOMEM;
    t->mask = size - 1;
    return 0;
}

int ks__dra_catalog_selector(const struct ks_dra_catalog *cat, const char *expr, struct dra_selector **out,
                             bool *private_out)
{
    size_t len = strlen(expr);
    uint64_t h = ks__dra_expr_hash(expr, len);
    const struct dra_sel_table *t = &cat->sels;
    uint32_t i = (uint32_t)h & t->mask, probes = 0;
    *private_out = false;
    for (;;) {
        /* acquire: a selector seen here was completely built before it was published */
        struct dra_selector *s = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!s)
            break;
        if (s->hash == h && s->len == len && memcmp(s->expr, expr, len) == 0) {
            *out = s;
            return 0;
        }
        i = (i + 1) & t->mask;
        if (++probes > t->mask)
            break;
    }
    struct dra_selector *mine;
    const struct dra_cel *cel = ks__dra_cel_shared();
    int rc = cel ? ks__dra_selector_new(cel, expr, len, h, cat->ndevices, &mine) : -ENOMEM;
    if (rc)
        return rc;
    for (; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
        struct dra_selector *seen = NULL;
        /* release on success: publishes the compiled selector; acquire on failure: reads the winner's */
        if (atomic_compare_exchange_strong_explicit(&t->slots[i], &seen, mine, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            *out = mine;
            return 0;
        }
        if (seen->hash == h && seen->len == len && memcmp(seen->expr, expr, len) == 0) {
            ks__dra_selector_destroy(mine);
            *out = seen;
            return 0;
        }
    }
    *private_out = true;
    *out = mine;
    return 0;
}

/* ---- classes ---------------------------------------------------------------------------------------- */

static const struct dra_class *class_by_id(const struct ks_dra_catalog *cat, uint32_t id)
{
    if (id == KS_ID_NONE || !cat->class_table)
        return NULL;
    uint32_t i = ks_id_hash(id) & cat->class_mask;
    while (cat->class_table[i] != UINT32_MAX) {
        const struct dra_class *c = &cat->classes[cat->class_table[i]];
        if (c->obj->name == id)
            return c;
        i = (i + 1) & cat->class_mask;
    }
    return NULL;
}

const struct ks_device_class *ks_dra_catalog_class(const struct ks_dra_catalog *c, uint32_t name)
{
    const struct dra_class *cls = class_by_id(c, name);
    return cls ? cls->obj : NULL;
}

const struct dra_class *ks__dra_catalog_class_by_name(const struct ks_dra_catalog *cat, const char *name)
{
    return class_by_id(cat, ks_intern_find(name, strlen(name)));
}

static int build_classes(struct ks_dra_catalog *c, const struct ks_device_class *const *classes, uint32_t n)
{
    uint32_t size = 16, nsel = 0;
    while (size < 2 * n)
        size *= 2;
    c->classes = ks__dra_bump_zalloc(&c->mem, n ? n : 1, sizeof(*c->classes));
    c->class_table = ks__dra_bump_alloc(&c->mem, size * sizeof(*c->class_table));
    if (!c->classes || !c->class_table)
        return -ENOMEM;
    memset(c->class_table, 0xff, size * sizeof(*c->class_table));
    c->class_mask = size - 1;
    for (uint32_t i = 0; i < n; i++)
        nsel += classes[i]->nselectors;
    if (table_init(&c->sels, nsel + 64))
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_device_class *obj = classes[i];
        if (class_by_id(c, obj->name))
            continue; /* the lister returns the first class of a name */
        struct dra_class *cls = &c->classes[c->nclasses];
        cls->obj = obj;
        cls->nsel = obj->nselectors;
        cls->sel = ks__dra_bump_zalloc(&c->mem, obj->nselectors ? obj->nselectors : 1, sizeof(*cls->sel));
        if (!cls->sel)
            return -ENOMEM;
        for (uint32_t k = 0; k < obj->nselectors; k++) {
            bool priv;
            if (!obj->selectors[k])
                continue;
            if (ks__dra_catalog_selector(c, obj->selectors[k], &cls->sel[k], &priv))
                return -ENOMEM;
            if (priv) { /* the table is sized for every class selector: cannot happen */
                ks__dra_selector_destroy(cls->sel[k]);
                return -ENOMEM;
            }
        }
        uint32_t j = ks_id_hash(obj->name) & c->class_mask;
        while (c->class_table[j] != UINT32_MAX)
            j = (j + 1) & c->class_mask;
        c->class_table[j] = c->nclasses++;
    }
    return 0;
}

/* ---- slices, devices, pools ------------------------------------------------------------------------- */

static int build_slices(struct ks_dra_catalog *c, const struct ks_resource_slice *const *slices, uint32_t n)
{
    int rc = -ENOMEM;
    c->nslices = n;
    c->slices = ks__dra_bump_zalloc(&c->mem, n ? n : 1, sizeof(*c->slices));
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    uint32_t *pool_of = malloc((n ? n : 1) * sizeof(*pool_of));
    if (!c->slices || !order || !pool_of)
        goto out;
    uint32_t ndev = 0;
    for (uint32_t i = 0; i < n; i++) {
        c->slices[i].obj = slices[i];
        c->slices[i].first_dev = ndev;
        c->slices[i].sel_bad = !selector_valid(slices[i]->node_selector);
        ndev += slices[i]->ndevices;
        order[i] = i;
    }
    c->ndevices = ndev;

    /* ranks by name (ties in input order) */
    qsort_r(order, n, sizeof(*order), cmp_slice_name, (void *)slices);
    uint32_t cls = 0;
    for (uint32_t r = 0; r < n; r++) {
        const char *name = slices[order[r]]->meta.name ? slices[order[r]]->meta.name : "";
        const char *prev =
            r ? (slices[order[r - 1]]->meta.name ? slices[order[r - 1]]->meta.name : "") : NULL;
        if (r && strcmp(prev, name) != 0)
            cls++;
        c->slices[order[r]].name_rank = r;
        c->slices[order[r]].name_class = cls;
    }

    /* pools: group by (driver, pool) */
    uint32_t size = 16;
    while (size < 2 * n)
        size *= 2;
    uint32_t *tab = malloc(size * sizeof(*tab));
    c->pools = ks__dra_bump_zalloc(&c->mem, n ? n : 1, sizeof(*c->pools));
    if (!tab || !c->pools) {
        free(tab);
        goto out;
    }
    memset(tab, 0xff, size * sizeof(*tab));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = slices[i]->driver, p = slices[i]->pool;
        uint32_t j = ks_id_hash(d ^ ks_id_hash(p)) & (size - 1);
        while (tab[j] != UINT32_MAX && !(c->pools[tab[j]].driver == d && c->pools[tab[j]].pool == p))
            j = (j + 1) & (size - 1);
        if (tab[j] == UINT32_MAX) {
            tab[j] = c->npools;
            c->pools[c->npools].driver = d;
            c->pools[c->npools].pool = p;
            c->npools++;
        }
        pool_of[i] = tab[j];
        c->slices[i].pool = tab[j];
        c->pools[tab[j]].nslices++;
    }
    free(tab);
    for (uint32_t p = 0; p < c->npools; p++) {
        c->pools[p].slices = ks__dra_bump_alloc(&c->mem, c->pools[p].nslices * sizeof(uint32_t));
        if (!c->pools[p].slices)
            goto out;
        c->pools[p].nslices = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct dra_pool_id *pid = &c->pools[pool_of[i]];
        pid->slices[pid->nslices++] = i;
    }
    for (uint32_t p = 0; p < c->npools; p++)
        order[p] = p;
    qsort_r(order, c->npools, sizeof(*order), cmp_pool, c->pools);
    for (uint32_t r = 0; r < c->npools; r++)
        c->pools[order[r]].rank = r;
    rc = 0;
out:
    free(order);
    free(pool_of);
    return rc;
}

static int build_devices(struct ks_dra_catalog *c)
{
    int rc = -ENOMEM;
    struct str_table st = {0};
    uint32_t nstr = 0;
    for (uint32_t i = 0; i < c->nslices; i++) {
        const struct ks_resource_slice *s = c->slices[i].obj;
        for (uint32_t d = 0; d < s->ndevices; d++)
            nstr += s->devices[d].nattributes;
    }
    uint32_t size = 16;
    while (size < 2 * nstr)
        size *= 2;
    st.mask = size - 1;
    st.keys = calloc(size, sizeof(*st.keys));
    st.ids = calloc(size, sizeof(*st.ids));
    c->devs = ks__dra_bump_zalloc(&c->mem, c->ndevices ? c->ndevices : 1, sizeof(*c->devs));
    if (!st.keys || !st.ids || !c->devs)
        goto out;
    const struct dra_cel *cel = c->ndevices ? ks__dra_cel_shared() : NULL;
    if (c->ndevices && !cel)
        goto out;
    const struct dra_cel_types *types = cel ? ks__dra_cel_types(cel) : NULL;
    for (uint32_t i = 0; i < c->nslices; i++) {
        const struct ks_resource_slice *s = c->slices[i].obj;
        const char *driver = ks_intern_str(s->driver);
        for (uint32_t d = 0; d < s->ndevices; d++) {
            const struct ks_device *dev = &s->devices[d];
            struct dra_dev *dd = &c->devs[c->slices[i].first_dev + d];
            dd->dev = dev;
            dd->slice = s;
            dd->slice_idx = i;
            dd->node_sel_bad = !selector_valid(dev->node_selector);
            uint32_t *ids =
                ks__dra_bump_zalloc(&c->mem, dev->nattributes ? dev->nattributes : 1, sizeof(*ids));
            if (!ids)
                goto out;
            for (uint32_t a = 0; a < dev->nattributes; a++) {
                const struct ks_device_attribute *at = &dev->attributes[a];
                if (at->kind == KS_ATTR_STRING || at->kind == KS_ATTR_VERSION)
                    ids[a] = str_id(&st, at->s);
            }
            dd->attr_str = ids;
            if (dev->ncapacity > c->max_cap)
                c->max_cap = dev->ncapacity;
            for (uint32_t k = 0; k < dev->ncapacity; k++)
                dd->cap_policy = dd->cap_policy || dev->capacity[k].policy;
            if (ks__dra_cel_device_build(&c->mem, dev, driver, types, &dd->cel))
                goto out;
        }
    }
    rc = 0;
out:
    free(st.keys);
    free(st.ids);
    return rc;
}

/* The table of devices by id: 2 slots per device at least, so misses stop early. */
static int build_device_table(struct ks_dra_catalog *c)
{
    uint32_t size = 16;
    while (size < 2 * c->ndevices)
        size *= 2;
    c->dev_mask = size - 1;
    c->dev_table = ks__dra_bump_alloc(&c->mem, (size_t)size * sizeof(*c->dev_table));
    c->dev_same = ks__dra_bump_alloc(&c->mem, (size_t)(c->ndevices ? c->ndevices : 1) * sizeof(*c->dev_same));
    if (!c->dev_table || !c->dev_same)
        return -ENOMEM;
    memset(c->dev_table, 0xff, (size_t)size * sizeof(*c->dev_table));
    /* backwards, so that each id's chain runs in gidx order */
    for (uint32_t g = c->ndevices; g-- > 0;) {
        const struct dra_dev *d = &c->devs[g];
        uint32_t j = ks__dra_id_hash(d->slice->driver, d->slice->pool, d->dev->name) & c->dev_mask;
        c->dev_same[g] = UINT32_MAX;
        for (;; j = (j + 1) & c->dev_mask) {
            uint32_t h = c->dev_table[j];
            if (h == UINT32_MAX)
                break;
            const struct dra_dev *o = &c->devs[h];
            if (o->slice->driver == d->slice->driver && o->slice->pool == d->slice->pool &&
                o->dev->name == d->dev->name) {
                c->dev_same[g] = h;
                break;
            }
        }
        c->dev_table[j] = g;
    }
    return 0;
}

uint32_t ks__dra_catalog_device(const struct ks_dra_catalog *cat, uint32_t driver, uint32_t pool,
                                uint32_t device)
{
    for (uint32_t j = ks__dra_id_hash(driver, pool, device) & cat->dev_mask;; j = (j + 1) & cat->dev_mask) {
        uint32_t g = cat->dev_table[j];
        if (g == UINT32_MAX)
            return g;
        const struct dra_dev *d = &cat->devs[g];
        if (d->slice->driver == driver && d->slice->pool == pool && d->dev->name == device)
            return g;
    }
}

/* ---- poolsets per node name ------------------------------------------------------------------------- */

/* Whether GatherPools looks at slice @s at all under the catalog's features. */
static bool slice_considered(const struct ks_dra_catalog *c, const struct ks_resource_slice *s)
{
    return c->features.partitionable_devices || (!s->per_device_node_selection && s->ncounter_sets == 0);
}

struct ks_node_selector *ks__dra_name_selector(const struct ks_dra_catalog *c, struct dra_bump *mem,
                                               uint32_t node)
{
    struct ks_node_selector *ns = ks__dra_bump_zalloc(mem, 1, sizeof(*ns));
    struct ks_node_selector_term *term = ks__dra_bump_zalloc(mem, 1, sizeof(*term));
    struct ks_requirement *field = ks__dra_bump_zalloc(mem, 1, sizeof(*field));
    uint32_t *v = ks__dra_bump_alloc(mem, sizeof(*v));
    if (!ns || !term || !field || !v)
        return NULL;
    *v = node;
    field->key = c->metadata_name;
    field->op = KS_OP_IN;
    field->nvalues = 1;
    field->values = v;
    term->nfields = 1;
    term->fields = field;
    ns->nterms = 1;
    ns->terms = term;
    return ns;
}

/* The node selector of a node's node-local results, made once. */
static int local_selector(struct ks_dra_catalog *c, uint32_t node, struct dra_poolset *ps)
{
    ps->node = node;
    ps->local_sel = ks__dra_name_selector(c, &c->mem, node);
    return ps->local_sel ? 0 : -ENOMEM;
}

/* A precomputed poolset gets its number; its verdicts may be remembered unless a device selects nodes. */
static void number_poolset(struct ks_dra_catalog *c, struct dra_poolset *ps)
{
    ps->index = c->npoolsets++;
    ps->memo_ok = true;
    for (uint32_t k = 0; k < ps->ndev && ps->memo_ok; k++)
        ps->memo_ok = !c->devs[ps->devs[k].gidx].slice->per_device_node_selection;
}

static int build_poolsets(struct ks_dra_catalog *c)
{
    int rc = -ENOMEM;
    struct dra_gather_tmp tmp = {0};
    uint32_t *rel = malloc((c->nslices ? c->nslices : 1) * sizeof(*rel));
    uint32_t *name_tab = NULL;
    struct dra_u32v *locals = NULL;
    struct dra_u32v names = {0};
    c->shared = ks__dra_bump_alloc(&c->mem, (c->nslices ? c->nslices : 1) * sizeof(*c->shared));
    c->shared_dynamic = ks__dra_bump_zalloc(&c->mem, c->nslices ? c->nslices : 1, sizeof(*c->shared_dynamic));
    if (!rel || !c->shared || !c->shared_dynamic)
        goto out;

    /* NewAllocator's split: node-local slices by node name, the others shared */
    uint32_t size = 16;
    while (size < 2 * c->nslices)
        size *= 2;
    name_tab = malloc(size * sizeof(*name_tab));
    locals = calloc(c->nslices ? c->nslices : 1, sizeof(*locals));
    if (!name_tab || !locals)
        goto out;
    memset(name_tab, 0xff, size * sizeof(*name_tab));
    for (uint32_t i = 0; i < c->nslices; i++) {
        const struct ks_resource_slice *s = c->slices[i].obj;
        if (!slice_considered(c, s))
            continue;
        if (has_name(s->node_name)) {
            uint32_t j = ks_id_hash(s->node_name) & (size - 1);
            while (name_tab[j] != UINT32_MAX && names.v[name_tab[j]] != s->node_name)
                j = (j + 1) & (size - 1);
            if (name_tab[j] == UINT32_MAX) {
                name_tab[j] = names.n;
                if (ks__dra_u32v_push(&names, s->node_name))
                    goto out;
            }
            if (ks__dra_u32v_push(&locals[name_tab[j]], i))
                goto out;
            continue;
        }
        if (!s->all_nodes && !s->node_selector && !s->per_device_node_selection)
            continue; /* nothing known set: some future extension, skipped */
        c->shared_dynamic[c->nshared] = !s->all_nodes;
        c->ndynamic += !s->all_nodes;
        c->shared[c->nshared++] = i;
    }

    /* the default poolset: the allNodes slices */
    uint32_t n = 0;
    for (uint32_t k = 0; k < c->nshared; k++) {
        if (!c->shared_dynamic[k])
            rel[n++] = c->shared[k];
    }
    c->default_set = ks__dra_bump_zalloc(&c->mem, 1, sizeof(*c->default_set));
    if (!c->default_set || ks__dra_gather(c, rel, n, &tmp, &c->mem, c->default_set))
        goto out;
    number_poolset(c, c->default_set);

    size = 16;
    while (size < 2 * names.n)
        size *= 2;
    c->node_mask = size - 1;
    c->node_keys = ks__dra_bump_alloc(&c->mem, size * sizeof(*c->node_keys));
    c->node_sets = ks__dra_bump_zalloc(&c->mem, size, sizeof(*c->node_sets));
    c->node_local_of = ks__dra_bump_zalloc(&c->mem, size, sizeof(*c->node_local_of));
    if (!c->node_keys || !c->node_sets || !c->node_local_of)
        goto out;
    memset(c->node_keys, 0xff, size * sizeof(*c->node_keys));
    for (uint32_t k = 0; k < names.n; k++) {
        n = 0;
        for (uint32_t i = 0; i < locals[k].n; i++)
            rel[n++] = locals[k].v[i];
        for (uint32_t i = 0; i < c->nshared; i++) {
            if (!c->shared_dynamic[i])
                rel[n++] = c->shared[i];
        }
        struct dra_poolset *ps = ks__dra_bump_zalloc(&c->mem, 1, sizeof(*ps));
        if (!ps || ks__dra_gather(c, rel, n, &tmp, &c->mem, ps) || local_selector(c, names.v[k], ps))
            goto out;
        number_poolset(c, ps);
        uint32_t j = ks_id_hash(names.v[k]) & c->node_mask;
        while (c->node_keys[j] != KS_ID_NONE)
            j = (j + 1) & c->node_mask;
        c->node_keys[j] = names.v[k];
        c->node_sets[j] = ps;
        c->node_local_of[j] = k;
    }
    /* kept for the calls that gather again (a dynamic shared slice is relevant) */
    c->nnode_names = names.n;
    c->node_names = names.v;
    c->node_local = locals;
    names.v = NULL;
    locals = NULL;
    rc = 0;
out:
    if (locals) {
        for (uint32_t k = 0; k < names.n; k++)
            free(locals[k].v);
        free(locals);
    }
    free(names.v);
    free(name_tab);
    free(rel);
    ks__dra_gather_tmp_free(&tmp);
    return rc;
}

const struct dra_poolset *ks__dra_catalog_poolset(const struct ks_dra_catalog *cat, uint32_t name_id,
                                                  const struct dra_u32v **local)
{
    uint32_t j = ks_id_hash(name_id) & cat->node_mask;
    while (cat->node_keys[j] != KS_ID_NONE) {
        if (cat->node_keys[j] == name_id) {
            *local = &cat->node_local[cat->node_local_of[j]];
            return cat->node_sets[j];
        }
        j = (j + 1) & cat->node_mask;
    }
    *local = NULL;
    return cat->default_set;
}

/* ---- build and destroy ------------------------------------------------------------------------------ */

int ks_dra_catalog_build(const struct ks_device_class *const *classes, uint32_t nclasses,
                         const struct ks_resource_slice *const *slices, uint32_t nslices,
                         const struct ks_dra_features *features, struct ks_dra_catalog **out)
{
    struct ks_dra_catalog *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->features = features ? *features : ks_dra_features_default();
    c->metadata_name = ks_intern("metadata.name");
    if (c->metadata_name == KS_ID_NONE)
        goto err_build;
    if (ks__dra_shapes_init(&c->shapes) || build_slices(c, slices, nslices) || build_devices(c) ||
        build_device_table(c) || build_classes(c, classes, nclasses) || build_poolsets(c))
        goto err_build;
    static _Atomic uint64_t serials;
    c->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
    *out = c;
    return 0;

err_build:
    ks_dra_catalog_destroy(c);
    return -ENOMEM;
}

void ks_dra_catalog_destroy(struct ks_dra_catalog *c)
{
    if (!c)
        return;
    if (c->sels.slots) {
        for (uint32_t i = 0; i <= c->sels.mask; i++)
            ks__dra_selector_destroy(atomic_load_explicit(&c->sels.slots[i], memory_order_relaxed));
        free(c->sels.slots);
    }
    ks__dra_shapes_free(&c->shapes);
    if (c->node_local) {
        for (uint32_t k = 0; k < c->nnode_names; k++)
            free(c->node_local[k].v);
        free(c->node_local);
    }
    free(c->node_names);
    ks__dra_bump_free(&c->mem);
    free(c);
}
