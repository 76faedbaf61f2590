/*
 * allocated.c - the devices that allocated claims hold (struct ks_dra_allocated): upstream's
 * AllocatedState (AllocatedDevices, AllocatedSharedDeviceIDs, AggregatedCapacity) kept
 * incrementally instead of gathered from every claim at each scheduling attempt.
 *
 * One entry per device (interned driver, pool, device): a dense array of entries and an
 * open-addressing table of 16-byte slots (the three ids and the entry's index) that lookups
 * probe, so that a miss, the common answer, reads one or two cache lines. An entry counts the results that
 * name the device: without a share id (dedicated), with one (a share of a device that allows multiple
 * allocations), and with consumedCapacity, whose amounts it sums per capacity name. Results with admin access
 * are not counted, as upstream's foreachAllocatedDevice skips them. Counting instead of a set makes add and
 * remove exact inverses whatever the order: a device is in AllocatedDevices while its dedicated count is
 * positive, in AggregatedCapacity while its capacity count is, which is what gathering the state from the
 * current claims gives. Whether shares count as shares (DRAConsumableCapacity on) or as dedicated devices
 * (off, as the plugin's gathering does then) is decided by the allocator, which knows the features.
 *
 * Entries are never deleted, only emptied; a rehash drops empty ones. With no counted entry
 * at all, lookups return at once. A state bound to a catalog mirrors each entry into two
 * arrays indexed by the catalog's devices (the entry's index, its DRA_HELD_* bits), updated
 * with the entry, so that the allocator reads a node's devices from consecutive bytes; it
 * also counts every change to a device per catalog pool and holds the verdict words that
 * verdict.c remembers per precomputed poolset. Context: one writer
 * (the plugin, between scheduling cycles); ks_dra_allocate() readers must not run while it
 * writes. Mirrors k8s.io/dynamic-resource-allocation/structured/schedulerapi (AllocatedState,
 * ConsumedCapacityCollection) and the DynamicResources plugin's foreachAllocatedDevice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"
#include "ksched/quantity.h"

#include "dra_internal.h"

struct key {
    uint32_t driver, pool, device;
    uint32_t idx; /* index in entries; UINT32_MAX: an empty slot */
};

struct ks_dra_allocated {
    uint32_t mask;    /* keys' size - 1 */
    struct key *keys; /* open addressing, 16 bytes a slot: probes stay in few cache lines */
    uint32_t n, cap;  /* entries used and allocated */
    struct dra_alloc_entry *entries;
    uint32_t nonempty; /* entries with a positive count: none lets lookups return at once */

    /* The bound catalog (ks_dra_allocated_bind): per device, its entry and what it holds. */
    const struct ks_dra_catalog *cat;
    uint64_t cat_serial;
    uint32_t *by_gidx;      /* entry index, UINT32_MAX: none */
    uint8_t *held;          /* DRA_HELD_* */
    uint64_t *pool_version; /* per catalog pool: changes counted to its devices (only grows) */
    _Atomic uint64_t *memo; /* per precomputed poolset, DRA_VERDICT_SLOTS remembered verdicts */
};

static bool entry_empty(const struct dra_alloc_entry *e)
{
    return e->dedicated == 0 && e->shared == 0 && e->capacity == 0;
}

static uint8_t held_bits(const struct dra_alloc_entry *e)
{
    return (uint8_t)((e->dedicated ? DRA_HELD_DEDICATED : 0) | (e->shared ? DRA_HELD_SHARED : 0) |
                     (e->capacity ? DRA_HELD_CAPACITY : 0));
}

/* The bound catalog's devices with entry @idx's id take its index and bits. */
static void mirror(struct ks_dra_allocated *a, uint32_t idx)
{
    if (!a->cat)
        return;
    const struct dra_alloc_entry *e = &a->entries[idx];
    uint8_t bits = held_bits(e);
    for (uint32_t g = ks__dra_catalog_device(a->cat, e->driver, e->pool, e->device); g != UINT32_MAX;
         g = a->cat->dev_same[g]) {
        a->by_gidx[g] = idx;
        a->held[g] = bits;
        a->pool_version[a->cat->slices[a->cat->devs[g].slice_idx].pool]++;
    }
}

static void mirror_all(struct ks_dra_allocated *a)
{
    if (!a->cat)
        return;
    memset(a->by_gidx, 0xff, (size_t)a->cat->ndevices * sizeof(*a->by_gidx));
    memset(a->held, 0, a->cat->ndevices);
    for (uint32_t i = 0; i < a->n; i++)
        mirror(a, i);
}

static void unbind(struct ks_dra_allocated *a)
{
    free(a->by_gidx);
    free(a->held);
    free(a->pool_version);
    free(a->memo);
    a->by_gidx = NULL;
    a->held = NULL;
    a->pool_version = NULL;
    a->memo = NULL;
    a->cat = NULL;
    a->cat_serial = 0;
}

int ks_dra_allocated_bind(struct ks_dra_allocated *a, const struct ks_dra_catalog *cat)
{
    if (!cat) {
        unbind(a);
        return 0;
    }
    size_t n = cat->ndevices ? cat->ndevices : 1;
    uint32_t *by = malloc(n * sizeof(*by));
    uint8_t *held = malloc(n);
    uint64_t *pv = calloc(cat->npools ? cat->npools : 1, sizeof(*pv));
    _Atomic uint64_t *memo =
        calloc((size_t)(cat->npoolsets ? cat->npoolsets : 1) * DRA_VERDICT_SLOTS, sizeof(*memo));
    if (!by || !held || !pv || !memo) {
        free(by);
        free(held);
        free(pv);
        free(memo);
        return -ENOMEM;
    }
    unbind(a);
    a->by_gidx = by;
    a->held = held;
    a->pool_version = pv;
    a->memo = memo;
    a->cat = cat;
    a->cat_serial = cat->serial;
    mirror_all(a);
    return 0;
}

static bool bound_to(const struct ks_dra_allocated *a, const struct ks_dra_catalog *cat)
{
    return a->cat == cat && a->cat_serial == cat->serial;
}

static struct key *keys_new(uint32_t size)
{
    struct key *k = malloc((size_t)size * sizeof(*k));
    if (k) {
        for (uint32_t i = 0; i < size; i++)
            k[i].idx = UINT32_MAX;
    }
    return k;
}

int ks_dra_allocated_create(struct ks_dra_allocated **out)
{
    struct ks_dra_allocated *a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    a->mask = 63;
    a->keys = keys_new(64);
    if (!a->keys) {
        free(a);
        return -ENOMEM;
    }
    *out = a;
    return 0;
}

void ks_dra_allocated_destroy(struct ks_dra_allocated *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < a->n; i++)
        free(a->entries[i].cap);
    free(a->entries);
    free(a->keys);
    unbind(a);
    free(a);
}

/* The slot of the key, or the empty slot where it would go. */
static struct key *slot_of(const struct ks_dra_allocated *a, uint32_t d, uint32_t p, uint32_t v)
{
    uint32_t i = ks__dra_id_hash(d, p, v) & a->mask;
    for (;;) {
        struct key *k = &a->keys[i];
        if (k->idx == UINT32_MAX || (k->device == v && k->pool == p && k->driver == d))
            return k;
        i = (i + 1) & a->mask;
    }
}

const struct dra_alloc_entry *ks__dra_allocated_find(const struct ks_dra_allocated *a, uint32_t driver,
                                                     uint32_t pool, uint32_t device)
{
    if (!a || a->nonempty == 0)
        return NULL;
    const struct key *k = slot_of(a, driver, pool, device);
    if (k->idx == UINT32_MAX)
        return NULL;
    const struct dra_alloc_entry *e = &a->entries[k->idx];
    return entry_empty(e) ? NULL : e;
}

uint8_t ks__dra_allocated_held(const struct ks_dra_allocated *a, const struct ks_dra_catalog *cat,
                               uint32_t gidx)
{
    if (!a || a->nonempty == 0)
        return 0;
    if (bound_to(a, cat))
        return a->held[gidx];
    const struct dra_alloc_entry *e = ks__dra_allocated_entry(a, cat, gidx);
    return e ? held_bits(e) : 0;
}

_Atomic uint64_t *ks__dra_allocated_memo(const struct ks_dra_allocated *a, const struct ks_dra_catalog *cat,
                                         const struct dra_poolset *ps, uint64_t *version)
{
    if (!a || !bound_to(a, cat))
        return NULL;
    uint64_t v = 0;
    for (uint32_t p = 0; p < ps->npools; p++)
        v += a->pool_version[ps->pools[p].id];
    *version = v;
    return &a->memo[(size_t)ps->index * DRA_VERDICT_SLOTS];
}

const struct dra_alloc_entry *ks__dra_allocated_entry(const struct ks_dra_allocated *a,
                                                      const struct ks_dra_catalog *cat, uint32_t gidx)
{
    if (!a || a->nonempty == 0)
        return NULL;
    if (bound_to(a, cat)) {
        uint32_t i = a->by_gidx[gidx];
        return i == UINT32_MAX || entry_empty(&a->entries[i]) ? NULL : &a->entries[i];
    }
    const struct dra_dev *d = &cat->devs[gidx];
    return ks__dra_allocated_find(a, d->slice->driver, d->slice->pool, d->dev->name);
}

/* Rebuild with room for @need more entries, dropping empty ones. */
static int grow(struct ks_dra_allocated *a, uint32_t need)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < a->n; i++)
        live += !entry_empty(&a->entries[i]);
    /* entries double; slots keep the load at a quarter at most, short probes for the misses */
    uint32_t cap = 2 * (live + need) < 16 ? 16 : 2 * (live + need);
    uint32_t size = 64;
    while (size < 4 * cap)
        size *= 2;
    struct key *keys = keys_new(size);
    struct dra_alloc_entry *entries = malloc((size_t)(cap ? cap : 1) * sizeof(*entries));
    if (!keys || !entries) {
        free(keys);
        free(entries);
        return -ENOMEM;
    }
    struct key *old_keys = a->keys;
    struct dra_alloc_entry *old = a->entries;
    uint32_t old_n = a->n;
    a->keys = keys;
    a->mask = size - 1;
    a->entries = entries;
    a->cap = cap;
    a->n = 0;
    for (uint32_t i = 0; i < old_n; i++) {
        struct dra_alloc_entry *e = &old[i];
        if (entry_empty(e)) {
            free(e->cap);
            continue;
        }
        struct key *k = slot_of(a, e->driver, e->pool, e->device);
        k->driver = e->driver;
        k->pool = e->pool;
        k->device = e->device;
        k->idx = a->n;
        a->entries[a->n++] = *e;
    }
    free(old_keys);
    free(old);
    mirror_all(a);
    return 0;
}

/* The entry of a key, made (empty) when new; the room was made before. */
static struct dra_alloc_entry *entry_for(struct ks_dra_allocated *a, uint32_t d, uint32_t p, uint32_t v)
{
    struct key *k = slot_of(a, d, p, v);
    if (k->idx == UINT32_MAX) {
        k->driver = d;
        k->pool = p;
        k->device = v;
        k->idx = a->n;
        struct dra_alloc_entry *e = &a->entries[a->n++];
        memset(e, 0, sizeof(*e));
        e->driver = d;
        e->pool = p;
        e->device = v;
    }
    return &a->entries[k->idx];
}

static bool counted(const struct ks_device_result *r)
{
    return !(r->has_admin_access && r->admin_access);
}

/* One result counted in @e (whose room was made). */
static void count_result(struct ks_dra_allocated *a, struct dra_alloc_entry *e,
                         const struct ks_device_result *r)
{
    a->nonempty += entry_empty(e);
    if (!r->share_id) {
        e->dedicated++;
        return;
    }
    e->shared++;
    if (!r->consumed)
        return;
    e->capacity++;
    for (uint32_t j = 0; j < r->nconsumed; j++) {
        uint32_t k = 0;
        while (k < e->ncap && e->cap[k].name != r->consumed[j].name)
            k++;
        if (k == e->ncap) {
            e->cap[k].name = r->consumed[j].name;
            memset(&e->cap[k].value, 0, sizeof(e->cap[k].value));
            e->ncap++;
        }
        ks_quantity_add(&e->cap[k].value, &r->consumed[j].value);
    }
}

int ks_dra_allocated_add(struct ks_dra_allocated *a, const struct ks_allocation *alloc)
{
    /* First make room for everything, so that a failure changes nothing counted. */
    if (a->n + alloc->nresults > a->cap && grow(a, alloc->nresults))
        return -ENOMEM;
    for (uint32_t i = 0; i < alloc->nresults; i++) {
        const struct ks_device_result *r = &alloc->results[i];
        if (!counted(r))
            continue;
        struct dra_alloc_entry *e = entry_for(a, r->driver, r->pool, r->device);
        if (r->share_id && r->consumed && e->ncap + r->nconsumed > e->capcap) {
            uint32_t cap = e->capcap ? e->capcap : 4;
            while (cap < e->ncap + r->nconsumed)
                cap *= 2;
            struct ks_named_quantity *nc = realloc(e->cap, (size_t)cap * sizeof(*nc));
            if (!nc)
                return -ENOMEM;
            e->cap = nc;
            e->capcap = cap;
        }
    }
    for (uint32_t i = 0; i < alloc->nresults; i++) {
        const struct ks_device_result *r = &alloc->results[i];
        if (!counted(r))
            continue;
        uint32_t idx = slot_of(a, r->driver, r->pool, r->device)->idx;
        count_result(a, &a->entries[idx], r);
        mirror(a, idx);
    }
    return 0;
}

static void sub_capacity(struct dra_alloc_entry *e, const struct ks_device_result *r)
{
    for (uint32_t j = 0; j < r->nconsumed; j++) {
        for (uint32_t k = 0; k < e->ncap; k++) {
            if (e->cap[k].name == r->consumed[j].name)
                ks_quantity_sub(&e->cap[k].value, &r->consumed[j].value);
        }
    }
}

void ks_dra_allocated_remove(struct ks_dra_allocated *a, const struct ks_allocation *alloc)
{
    for (uint32_t i = 0; i < alloc->nresults; i++) {
        const struct ks_device_result *r = &alloc->results[i];
        if (!counted(r))
            continue;
        struct key *k = slot_of(a, r->driver, r->pool, r->device);
        if (k->idx == UINT32_MAX)
            continue;
        struct dra_alloc_entry *e = &a->entries[k->idx];
        bool was_empty = entry_empty(e);
        if (!r->share_id) {
            if (e->dedicated)
                e->dedicated--;
        } else {
            if (e->shared)
                e->shared--;
            if (r->consumed && e->capacity && --e->capacity == 0)
                e->ncap = 0;
            else if (r->consumed && e->capacity)
                sub_capacity(e, r);
        }
        a->nonempty -= !was_empty && entry_empty(e);
        mirror(a, k->idx);
    }
}
