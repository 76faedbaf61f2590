/*
 * allocated.c - the devices that allocated claims hold (struct ks_dra_allocated): upstream's
 * AllocatedState (AllocatedDevices, AllocatedSharedDeviceIDs, AggregatedCapacity) kept
 * incrementally instead of gathered from every claim at each scheduling attempt.
 *
 * One entry per device (interned driver, pool, device), in an open-addressing table keyed
 * by the three ids. An entry counts the results that name the device: without a share id
 * (dedicated), with one (a share of a device that allows multiple allocations), and with
 * consumedCapacity, whose amounts it sums per capacity name. Results with admin access are
 * not counted, as upstream's foreachAllocatedDevice skips them. Counting instead of a set
 * makes add and remove exact inverses whatever the order: a device is in AllocatedDevices
 * while its dedicated count is positive, in AggregatedCapacity while its capacity count is,
 * which is what gathering the state from the current claims gives. Whether shares count as
 * shares (DRAConsumableCapacity on) or as dedicated devices (off, as the plugin's gathering
 * does then) is decided by the allocator, which knows the features.
 *
 * Entries are never deleted, only emptied; a rehash drops empty ones. Context: one writer
 * (the plugin, between scheduling cycles); ks_dra_allocate() readers must not run while it
 * writes. Mirrors k8s.io/dynamic-resource-allocation/structured/schedulerapi (AllocatedState,
 * ConsumedCapacityCollection) and the DynamicResources plugin's foreachAllocatedDevice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/intern.h"
#include "ksched/quantity.h"

#include "dra_internal.h"

struct ks_dra_allocated {
    uint32_t mask; /* table size - 1 */
    uint32_t used; /* slots taken */
    struct dra_alloc_entry *tab;
};

static uint32_t key_hash(uint32_t d, uint32_t p, uint32_t v)
{
    return ks_id_hash(d ^ ks_id_hash(p ^ ks_id_hash(v)));
}

int ks_dra_allocated_create(struct ks_dra_allocated **out)
{
    struct ks_dra_allocated *a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    a->mask = 63;
    a->tab = malloc(64 * sizeof(*a->tab));
    if (!a->tab) {
        free(a);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < 64; i++)
        a->tab[i].driver = KS_ID_NONE;
    *out = a;
    return 0;
}

void ks_dra_allocated_destroy(struct ks_dra_allocated *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i <= a->mask; i++) {
        if (a->tab[i].driver != KS_ID_NONE)
            free(a->tab[i].cap);
    }
    free(a->tab);
    free(a);
}

static bool entry_empty(const struct dra_alloc_entry *e)
{
    return e->dedicated == 0 && e->shared == 0 && e->capacity == 0;
}

static struct dra_alloc_entry *slot_of(const struct ks_dra_allocated *a, uint32_t d, uint32_t p, uint32_t v)
{
    uint32_t i = key_hash(d, p, v) & a->mask;
    for (;;) {
        struct dra_alloc_entry *e = &a->tab[i];
        if (e->driver == KS_ID_NONE || (e->driver == d && e->pool == p && e->device == v))
            return e;
        i = (i + 1) & a->mask;
    }
}

const struct dra_alloc_entry *ks__dra_allocated_find(const struct ks_dra_allocated *a, uint32_t driver,
                                                     uint32_t pool, uint32_t device)
{
    if (!a)
        return NULL;
    const struct dra_alloc_entry *e = slot_of(a, driver, pool, device);
    return e->driver == KS_ID_NONE || entry_empty(e) ? NULL : e;
}

/* Rebuild the table with room for @need more entries, dropping empty ones. */
static int grow(struct ks_dra_allocated *a, uint32_t need)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i <= a->mask; i++)
        live += a->tab[i].driver != KS_ID_NONE && !entry_empty(&a->tab[i]);
    uint32_t size = 64;
    while (size < 2 * (live + need))
        size *= 2;
    struct dra_alloc_entry *tab = malloc((size_t)size * sizeof(*tab));
    if (!tab)
        return -ENOMEM;
    for (uint32_t i = 0; i < size; i++)
        tab[i].driver = KS_ID_NONE;
    struct dra_alloc_entry *old = a->tab;
    uint32_t old_mask = a->mask;
    a->tab = tab;
    a->mask = size - 1;
    a->used = 0;
    for (uint32_t i = 0; i <= old_mask; i++) {
        struct dra_alloc_entry *e = &old[i];
        if (e->driver == KS_ID_NONE)
            continue;
        if (entry_empty(e)) {
            free(e->cap);
            continue;
        }
        *slot_of(a, e->driver, e->pool, e->device) = *e;
        a->used++;
    }
    free(old);
    return 0;
}

static bool counted(const struct ks_device_result *r)
{
    return !(r->has_admin_access && r->admin_access);
}

int ks_dra_allocated_add(struct ks_dra_allocated *a, const struct ks_allocation *alloc)
{
    /* First make room for everything, so that a failure changes nothing counted. */
    if (2 * (a->used + alloc->nresults) > a->mask + 1 && grow(a, alloc->nresults))
        return -ENOMEM;
    for (uint32_t i = 0; i < alloc->nresults; i++) {
        const struct ks_device_result *r = &alloc->results[i];
        if (!counted(r))
            continue;
        struct dra_alloc_entry *e = slot_of(a, r->driver, r->pool, r->device);
        if (e->driver == KS_ID_NONE) {
            memset(e, 0, sizeof(*e));
            e->driver = r->driver;
            e->pool = r->pool;
            e->device = r->device;
            a->used++;
        }
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
        struct dra_alloc_entry *e = slot_of(a, r->driver, r->pool, r->device);
        if (!r->share_id) {
            e->dedicated++;
            continue;
        }
        e->shared++;
        if (!r->consumed)
            continue;
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
    return 0;
}

void ks_dra_allocated_remove(struct ks_dra_allocated *a, const struct ks_allocation *alloc)
{
    for (uint32_t i = 0; i < alloc->nresults; i++) {
        const struct ks_device_result *r = &alloc->results[i];
        if (!counted(r))
            continue;
        struct dra_alloc_entry *e = slot_of(a, r->driver, r->pool, r->device);
        if (e->driver == KS_ID_NONE)
            continue;
        if (!r->share_id) {
            if (e->dedicated)
                e->dedicated--;
            continue;
        }
        if (e->shared)
            e->shared--;
        if (!r->consumed || e->capacity == 0)
            continue;
        if (--e->capacity == 0) {
            e->ncap = 0;
            continue;
        }
        for (uint32_t j = 0; j < r->nconsumed; j++) {
            for (uint32_t k = 0; k < e->ncap; k++) {
                if (e->cap[k].name == r->consumed[j].name)
                    ks_quantity_sub(&e->cap[k].value, &r->consumed[j].value);
            }
        }
    }
}
