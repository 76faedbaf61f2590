/*
 * pools.c - the resource pools a node sees: GatherPools and buildPool of the incubating
 * allocator, over catalog slice indices instead of slice objects.
 *
 * Input: the slices relevant for the node, in upstream's slicesForNode order (the node's
 * own slices, then the relevant ones without a node name, each in input order). Per pool
 * (driver, pool name) only the newest generation among them counts. A pool with as many of
 * them as its resourceSliceCount is complete. Otherwise all slices of the pool are
 * consulted: a newer generation anywhere makes the pool obsolete (dropped); too few slices
 * of this generation anywhere make it incomplete (kept, flagged, no devices); enough make
 * it complete with the other slices as "not targeting the node" (their counter sets count,
 * their devices are checked and consume counters, but are never allocated here).
 *
 * buildPool sorts the node's slices by name; with partitionable devices, slices with shared
 * counters are counter sets, the others device slices. A pool is invalid when a device name
 * repeats among its device slices, a counter set name repeats, or a device consumes a
 * counter set or counter the pool does not have (the reason is kept, never shown: upstream
 * only reports "invalid resource pools were encountered"). Pools are ordered by driver and
 * pool name, those whose devices have binding conditions last.
 *
 * The output (struct dra_poolset) flattens the devices of the valid complete pools in
 * pool/slice/device order, each with its counter consumption resolved to slots of its
 * pool. Memory: @mem (the catalog's at build, a scratch's at run time) and @t (reused).
 * Mirrors structured/internal/incubating/pools_incubating.go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include "dra_internal.h"

int ks__dra_node_matches(const struct ks_node *node, uint32_t node_name, bool all_nodes,
                         const struct ks_node_selector *sel, bool sel_bad)
{
    if (node_name != KS_ID_NONE && node_name != KS_ID_EMPTY)
        return node && node->name_id == node_name;
    if (all_nodes)
        return 1;
    if (sel) {
        if (sel_bad)
            return -EINVAL;
        return node && ks_node_selector_matches(sel, &node->meta.labels, node->name_id);
    }
    return 0;
}

void ks__dra_gather_tmp_free(struct dra_gather_tmp *t)
{
    free(t->pool_stamp);
    free(t->pool_gen);
    free(t->pool_count);
    free(t->touched);
    free(t->hash_keys);
    free(t->hash_stamp);
    free(t->list);
    memset(t, 0, sizeof(*t));
}

static int tmp_reserve(struct dra_gather_tmp *t, uint32_t npools, uint32_t nlist)
{
    if (t->cap_pools < npools) {
        uint32_t *ps = realloc(t->pool_stamp, npools * sizeof(*ps));
        if (ps)
            t->pool_stamp = ps;
        int64_t *pg = realloc(t->pool_gen, npools * sizeof(*pg));
        if (pg)
            t->pool_gen = pg;
        uint32_t *pc = realloc(t->pool_count, npools * sizeof(*pc));
        if (pc)
            t->pool_count = pc;
        uint32_t *tc = realloc(t->touched, npools * sizeof(*tc));
        if (tc)
            t->touched = tc;
        if (!ps || !pg || !pc || !tc)
            return -ENOMEM;
        memset(t->pool_stamp + t->cap_pools, 0, (npools - t->cap_pools) * sizeof(*ps));
        t->cap_pools = npools;
    }
    if (t->cap_list < nlist) {
        uint32_t *l = realloc(t->list, nlist * sizeof(*l));
        if (!l)
            return -ENOMEM;
        t->list = l;
        t->cap_list = nlist;
    }
    return 0;
}

/* The next stamp; all stamps start over when the counter wraps. */
static uint32_t next_stamp(struct dra_gather_tmp *t)
{
    if (++t->stamp == 0) {
        if (t->pool_stamp)
            memset(t->pool_stamp, 0, t->cap_pools * sizeof(*t->pool_stamp));
        if (t->hash_stamp)
            memset(t->hash_stamp, 0, t->cap_hash * sizeof(*t->hash_stamp));
        t->stamp = 1;
    }
    return t->stamp;
}

/* A stamped set of uint32 keys (device names) of at least @n entries, emptied. */
static int set_begin(struct dra_gather_tmp *t, uint32_t n)
{
    uint32_t size = 16;
    while (size < 2 * n)
        size *= 2;
    if (t->cap_hash < size) {
        uint32_t *k = realloc(t->hash_keys, size * sizeof(*k));
        if (k)
            t->hash_keys = k;
        uint32_t *s = realloc(t->hash_stamp, size * sizeof(*s));
        if (s)
            t->hash_stamp = s;
        if (!k || !s)
            return -ENOMEM;
        memset(t->hash_stamp, 0, size * sizeof(*s));
        t->cap_hash = size;
    }
    next_stamp(t);
    return 0;
}

/* Insert @key; false when it was there already. */
static bool set_insert(struct dra_gather_tmp *t, uint32_t key)
{
    uint32_t mask = t->cap_hash - 1, i = ks_id_hash(key) & mask;
    while (t->hash_stamp[i] == t->stamp) {
        if (t->hash_keys[i] == key)
            return false;
        i = (i + 1) & mask;
    }
    t->hash_stamp[i] = t->stamp;
    t->hash_keys[i] = key;
    return true;
}

static bool is_counter_slice(const struct ks_dra_catalog *cat, uint32_t s)
{
    return cat->features.partitionable_devices && cat->slices[s].obj->ncounter_sets > 0;
}

/* A counter set of the pool being built. */
struct cset {
    uint32_t name;
    const struct ks_counter_set *set;
    uint32_t first_slot;
};

static int find_slot(const struct cset *sets, uint32_t nsets, uint32_t set_name, uint32_t counter,
                     uint32_t *slot, const char **why_set, uint32_t *why_counter)
{
    for (uint32_t i = 0; i < nsets; i++) {
        if (sets[i].name != set_name)
            continue;
        for (uint32_t j = 0; j < sets[i].set->ncounters; j++) {
            if (sets[i].set->counters[j].name == counter) {
                *slot = sets[i].first_slot + j;
                return 0;
            }
        }
        *why_counter = counter;
        *why_set = ks_intern_str(set_name);
        return -1;
    }
    *why_set = NULL;
    return -1;
}

/* Resolve the consumption of @dev into @mem: 0, -1 with @reason set (pool invalid), -ENOMEM. */
static int resolve(struct dra_bump *mem, const struct ks_device *dev, const struct cset *sets, uint32_t nsets,
                   uint32_t *ncons, const struct dra_consume **cons, const char **reason)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < dev->nconsumes; i++)
        n += dev->consumes[i].ncounters;
    *ncons = 0;
    *cons = NULL;
    if (dev->nconsumes == 0)
        return 0;
    struct dra_consume *c = ks__dra_bump_alloc(mem, (n ? n : 1) * sizeof(*c));
    if (!c)
        return -ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < dev->nconsumes; i++) {
        const struct ks_counter_consumption *cc = &dev->consumes[i];
        bool known = false;
        for (uint32_t s = 0; s < nsets; s++)
            known |= sets[s].name == cc->counter_set;
        if (!known) {
            *reason = ks__dra_bump_printf(mem, "counter set %s not found", ks_intern_str(cc->counter_set));
            return *reason ? -1 : -ENOMEM;
        }
        for (uint32_t j = 0; j < cc->ncounters; j++) {
            const char *why_set = NULL;
            uint32_t why_counter = 0;
            if (find_slot(sets, nsets, cc->counter_set, cc->counters[j].name, &c[k].slot, &why_set,
                          &why_counter)) {
                *reason = ks__dra_bump_printf(mem, "counter %s not found in counter set %s",
                                              ks_intern_str(why_counter), why_set);
                return *reason ? -1 : -ENOMEM;
            }
            c[k].q = cc->counters[j].value;
            k++;
        }
    }
    *ncons = k;
    *cons = c;
    return 0;
}

/* Stable insertion sort of slice indices by name rank (Go's sort of small slices is one). */
static void sort_by_name(const struct ks_dra_catalog *cat, uint32_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = v[i], j = i;
        while (j > 0 && cat->slices[v[j - 1]].name_rank > cat->slices[x].name_rank) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static int invalid(struct dra_pool *p, const char *reason)
{
    p->invalid = true;
    p->invalid_reason = reason;
    p->nslices = 0;
    p->slices = NULL;
    return reason ? 0 : -ENOMEM;
}

/*
 * buildPool: @rel (@nrel slices of the pool at its generation relevant for the node, sorted
 * here), @all (every slice of the pool at that generation, or NULL when @rel is complete).
 * Devices go to @devs from @*ndev on.
 */
static int build_pool(const struct ks_dra_catalog *cat, struct dra_gather_tmp *t, struct dra_bump *mem,
                      uint32_t *rel, uint32_t nrel, const uint32_t *all, uint32_t nall, struct dra_pool *p,
                      struct dra_poolset *out)
{
    sort_by_name(cat, rel, nrel);
    uint32_t *devsl = ks__dra_bump_alloc(mem, (nrel ? nrel : 1) * sizeof(*devsl));
    uint32_t *cntsl = ks__dra_bump_alloc(mem, (nrel + nall + 1) * sizeof(*cntsl));
    uint32_t *other = ks__dra_bump_alloc(mem, (nall + 1) * sizeof(*other));
    if (!devsl || !cntsl || !other)
        return -ENOMEM;
    uint32_t ndevsl = 0, ncntsl = 0, nother = 0;
    for (uint32_t i = 0; i < nrel; i++) {
        if (is_counter_slice(cat, rel[i]))
            cntsl[ncntsl++] = rel[i];
        else
            devsl[ndevsl++] = rel[i];
    }
    if (all && nrel < nall) {
        for (uint32_t i = 0; i < nall; i++) {
            bool converted = false;
            for (uint32_t j = 0; j < nrel && !converted; j++)
                converted = cat->slices[rel[j]].name_class == cat->slices[all[i]].name_class;
            if (converted)
                continue;
            if (is_counter_slice(cat, all[i]))
                cntsl[ncntsl++] = all[i];
            else
                other[nother++] = all[i];
        }
    }

    /* validateDeviceNames over the device slices targeting the node */
    uint32_t ndev = 0;
    for (uint32_t i = 0; i < ndevsl; i++)
        ndev += cat->slices[devsl[i]].obj->ndevices;
    if (set_begin(t, ndev))
        return -ENOMEM;
    for (uint32_t i = 0; i < ndevsl; i++) {
        const struct ks_resource_slice *s = cat->slices[devsl[i]].obj;
        for (uint32_t d = 0; d < s->ndevices; d++) {
            if (!set_insert(t, s->devices[d].name))
                return invalid(p, ks__dra_bump_printf(mem, "duplicate device name %s",
                                                      ks_intern_str(s->devices[d].name)));
        }
    }

    /* counter sets (partitionable devices only) */
    uint32_t nsets = 0, nslots = 0;
    struct cset *sets = NULL;
    if (cat->features.partitionable_devices) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < ncntsl; i++)
            n += cat->slices[cntsl[i]].obj->ncounter_sets;
        sets = ks__dra_bump_alloc(mem, (n ? n : 1) * sizeof(*sets));
        if (!sets)
            return -ENOMEM;
        for (uint32_t i = 0; i < ncntsl; i++) {
            const struct ks_resource_slice *s = cat->slices[cntsl[i]].obj;
            for (uint32_t k = 0; k < s->ncounter_sets; k++) {
                for (uint32_t j = 0; j < nsets; j++) {
                    if (sets[j].name == s->counter_sets[k].name)
                        return invalid(p, ks__dra_bump_printf(mem, "duplicate counter set name %s",
                                                              ks_intern_str(s->counter_sets[k].name)));
                }
                sets[nsets].name = s->counter_sets[k].name;
                sets[nsets].set = &s->counter_sets[k];
                sets[nsets].first_slot = nslots;
                nslots += s->counter_sets[k].ncounters;
                nsets++;
            }
        }
    }
    struct ks_quantity *slot_value = ks__dra_bump_alloc(mem, (nslots ? nslots : 1) * sizeof(*slot_value));
    if (!slot_value)
        return -ENOMEM;
    for (uint32_t i = 0; i < nsets; i++) {
        for (uint32_t j = 0; j < sets[i].set->ncounters; j++)
            slot_value[sets[i].first_slot + j] = sets[i].set->counters[j].value;
    }

    /* the devices targeting the node, flat, with their consumption (validated) */
    uint32_t first = out->ndev;
    bool binding = false;
    for (uint32_t i = 0; i < ndevsl; i++) {
        uint32_t si = devsl[i];
        const struct ks_resource_slice *s = cat->slices[si].obj;
        for (uint32_t d = 0; d < s->ndevices; d++) {
            struct dra_pdev *pd = &out->devs[out->ndev++];
            const struct ks_device *dev = &s->devices[d];
            pd->gidx = cat->slices[si].first_dev + d;
            pd->pool = out->npools;
            pd->ncons = 0;
            pd->cons = NULL;
            binding |= dev->nbinding_conditions > 0;
            if (dev->ncapacity > out->max_cap)
                out->max_cap = dev->ncapacity;
            if (!cat->features.partitionable_devices)
                continue;
            const char *reason = NULL;
            int rc = resolve(mem, dev, sets, nsets, &pd->ncons, &pd->cons, &reason);
            if (rc == -1) {
                out->ndev = first;
                return invalid(p, reason);
            }
            if (rc)
                return rc;
        }
    }
    struct dra_other *oth = NULL;
    uint32_t noth = 0;
    if (cat->features.partitionable_devices) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < nother; i++)
            n += cat->slices[other[i]].obj->ndevices;
        oth = ks__dra_bump_alloc(mem, (n ? n : 1) * sizeof(*oth));
        if (!oth)
            return -ENOMEM;
        for (uint32_t i = 0; i < nother; i++) {
            const struct ks_resource_slice *s = cat->slices[other[i]].obj;
            for (uint32_t d = 0; d < s->ndevices; d++) {
                const char *reason = NULL;
                struct dra_other *o = &oth[noth];
                int rc = resolve(mem, &s->devices[d], sets, nsets, &o->ncons, &o->cons, &reason);
                if (rc == -1) {
                    out->ndev = first;
                    return invalid(p, reason);
                }
                if (rc)
                    return rc;
                if (o->ncons) {
                    o->gidx = cat->slices[other[i]].first_dev + d;
                    noth++;
                }
            }
        }
    }
    p->nslices = ndevsl;
    p->slices = devsl;
    p->dev_first = first;
    p->ndev = out->ndev - first;
    p->binding = binding;
    p->nslots = nslots;
    p->slot_value = slot_value;
    p->nother = noth;
    p->other = oth;
    if (nslots > out->max_slots)
        out->max_slots = nslots;
    return 0;
}

int ks__dra_gather(const struct ks_dra_catalog *cat, const uint32_t *rel, uint32_t nrel,
                   struct dra_gather_tmp *t, struct dra_bump *mem, struct dra_poolset *out)
{
    memset(out, 0, sizeof(*out));
    out->node = KS_ID_NONE;
    if (tmp_reserve(t, cat->npools ? cat->npools : 1, cat->nslices ? cat->nslices : 1))
        return -ENOMEM;

    /* addSlice: the newest generation of each pool among the relevant slices */
    uint32_t ntouched = 0, ndev_max = 0;
    uint32_t stamp = next_stamp(t);
    for (uint32_t i = 0; i < nrel; i++) {
        const struct dra_slice *s = &cat->slices[rel[i]];
        uint32_t p = s->pool;
        if (t->pool_stamp[p] != stamp) {
            t->pool_stamp[p] = stamp;
            t->pool_gen[p] = s->obj->generation;
            t->pool_count[p] = 0;
            t->touched[ntouched++] = p;
        } else if (s->obj->generation > t->pool_gen[p]) {
            t->pool_gen[p] = s->obj->generation;
        }
    }
    for (uint32_t i = 0; i < nrel; i++) {
        const struct dra_slice *s = &cat->slices[rel[i]];
        if (s->obj->generation == t->pool_gen[s->pool])
            t->pool_count[s->pool]++;
    }
    for (uint32_t k = 0; k < ntouched; k++) {
        const struct dra_pool_id *pid = &cat->pools[t->touched[k]];
        for (uint32_t i = 0; i < pid->nslices; i++)
            ndev_max += cat->slices[pid->slices[i]].obj->ndevices;
    }
    out->pools = ks__dra_bump_zalloc(mem, ntouched ? ntouched : 1, sizeof(*out->pools));
    out->devs = ks__dra_bump_alloc(mem, (ndev_max ? ndev_max : 1) * sizeof(*out->devs));
    if (!out->pools || !out->devs)
        return -ENOMEM;

    for (uint32_t k = 0; k < ntouched; k++) {
        uint32_t pidx = t->touched[k];
        const struct dra_pool_id *pid = &cat->pools[pidx];
        int64_t gen = t->pool_gen[pidx];
        /* the relevant slices of the pool at that generation, in slicesForNode order */
        uint32_t *mine = ks__dra_bump_alloc(mem, t->pool_count[pidx] * sizeof(*mine) + sizeof(*mine));
        if (!mine)
            return -ENOMEM;
        uint32_t nmine = 0;
        for (uint32_t i = 0; i < nrel; i++) {
            const struct dra_slice *s = &cat->slices[rel[i]];
            if (s->pool == pidx && s->obj->generation == gen)
                mine[nmine++] = rel[i];
        }
        int64_t want = cat->slices[mine[0]].obj->slice_count;
        struct dra_pool *p = &out->pools[out->npools];
        memset(p, 0, sizeof(*p));
        p->id = pidx;
        int rc;
        if ((int64_t)nmine == want) {
            rc = build_pool(cat, t, mem, mine, nmine, NULL, 0, p, out);
        } else {
            /* checkSlicesInPool */
            bool obsolete = false;
            uint32_t nall = 0;
            for (uint32_t i = 0; i < pid->nslices; i++) {
                int64_t g = cat->slices[pid->slices[i]].obj->generation;
                if (g > gen) {
                    obsolete = true;
                    break;
                }
                if (g == gen)
                    t->list[nall++] = pid->slices[i];
            }
            if (obsolete)
                continue;
            if ((int64_t)nall != want) {
                p->incomplete = true;
                out->npools++;
                continue;
            }
            uint32_t *all = ks__dra_bump_alloc(mem, nall * sizeof(*all));
            if (!all)
                return -ENOMEM;
            memcpy(all, t->list, nall * sizeof(*all));
            rc = build_pool(cat, t, mem, mine, nmine, all, nall, p, out);
        }
        if (rc)
            return rc;
        out->npools++;
    }

    /* sortPoolsByID, pools with binding conditions after the others */
    struct dra_pool *sorted = ks__dra_bump_alloc(mem, (out->npools ? out->npools : 1) * sizeof(*sorted));
    if (!sorted)
        return -ENOMEM;
    uint32_t n = 0;
    for (int group = 0; group < 2; group++) {
        uint32_t start = n;
        for (uint32_t i = 0; i < out->npools; i++) {
            if (out->pools[i].binding != (group == 1))
                continue;
            struct dra_pool x = out->pools[i];
            uint32_t j = n;
            while (j > start && cat->pools[sorted[j - 1].id].rank > cat->pools[x.id].rank) {
                sorted[j] = sorted[j - 1];
                j--;
            }
            sorted[j] = x;
            n++;
        }
    }
    /* re-flatten the devices in the final pool order */
    struct dra_pdev *devs = ks__dra_bump_alloc(mem, (out->ndev ? out->ndev : 1) * sizeof(*devs));
    if (!devs)
        return -ENOMEM;
    uint32_t nd = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct dra_pool *p = &sorted[i];
        uint32_t f = p->dev_first;
        p->dev_first = nd;
        for (uint32_t j = 0; j < p->ndev; j++) {
            devs[nd] = out->devs[f + j];
            devs[nd].pool = i;
            nd++;
        }
    }
    out->pools = sorted;
    out->devs = devs;
    out->ndev = nd;
    return 0;
}
