/*
 * node_tree.c - nodes grouped by zone, listed round-robin across zones.
 *
 * Mirrors pkg/scheduler/backend/cache/node_tree.go: zones keep the order in which they
 * first appeared, nodes keep their insertion order within a zone, removal preserves the
 * order of the rest (a zone left empty is dropped from the zone list), and list() takes
 * the i-th node of every zone in turn. The zone key is upstream's GetZoneKey as a pair of
 * interned label values (region, zone): (EMPTY, EMPTY) is the "" zone; distinct pairs are
 * distinct keys because GetZoneKey joins them with a NUL-bearing separator.
 *
 * A small open-addressing map finds a zone by key so that adding a node is O(1) even
 * with many zones; it is rebuilt in place when a zone is removed (indices shift).
 *
 * Context: under the cache lock. ks__tree_add() either succeeds or changes nothing; the
 * caller never adds a node that is already in the tree.
 */
#include "cache_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t zone_hash(uint32_t region, uint32_t zone)
{
    uint64_t h = ((uint64_t)region << 32 | zone) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

/* Index of zone (region, zone), or KS__NO_INDEX. */
static uint32_t zone_find(const struct node_tree *t, uint32_t region, uint32_t zone)
{
    if (!t->map)
        return KS__NO_INDEX;
    for (uint32_t i = zone_hash(region, zone) & t->map_mask;; i = (i + 1) & t->map_mask) {
        uint32_t v = t->map[i];
        if (v == 0)
            return KS__NO_INDEX;
        const struct tree_zone *z = &t->zones[v - 1];
        if (z->region == region && z->zone == zone)
            return v - 1;
    }
}

static void map_insert(uint32_t *map, uint32_t mask, const struct tree_zone *z, uint32_t index)
{
    uint32_t i = zone_hash(z->region, z->zone) & mask;
    while (map[i])
        i = (i + 1) & mask;
    map[i] = index + 1;
}

static void map_rebuild(struct node_tree *t)
{
    memset(t->map, 0, (size_t)(t->map_mask + 1) * sizeof(*t->map));
    for (uint32_t i = 0; i < t->nzones; i++)
        map_insert(t->map, t->map_mask, &t->zones[i], i);
}

int ks__tree_add(struct node_tree *t, struct node_info *ni, uint32_t region, uint32_t zone)
{
    uint32_t zi = zone_find(t, region, zone);
    if (zi != KS__NO_INDEX) {
        struct tree_zone *z = &t->zones[zi];
        /*
         * Upstream scans the zone to skip a node already present; here the cache never adds
         * a node that is in the tree (add refuses a known node, a zone change adds to another
         * zone), so the scan, O(zone) per add, is left out.
         */
        if (KS_RESERVE(z->nodes, z->cap, (uint64_t)z->n + 1))
            return -ENOMEM;
        z->nodes[z->n++] = ni;
        t->nnodes++;
        return 0;
    }

    /* a new zone: every allocation before the first change */
    struct node_info **nodes = malloc(4 * sizeof(*nodes));
    if (!nodes)
        return -ENOMEM;
    if (KS_RESERVE(t->zones, t->cap_zones, (uint64_t)t->nzones + 1)) {
        free(nodes);
        return -ENOMEM;
    }
    if (!t->map || (uint64_t)(t->nzones + 1) * 2 > (uint64_t)t->map_mask + 1) {
        uint32_t size = t->map ? (t->map_mask + 1) * 2 : 16;
        uint32_t *map = calloc(size, sizeof(*map));
        if (!map) {
            free(nodes);
            return -ENOMEM;
        }
        free(t->map);
        t->map = map;
        t->map_mask = size - 1;
        map_rebuild(t);
    }
    struct tree_zone *z = &t->zones[t->nzones];
    *z = (struct tree_zone){.region = region, .zone = zone, .n = 1, .cap = 4, .nodes = nodes};
    nodes[0] = ni;
    map_insert(t->map, t->map_mask, z, t->nzones);
    t->nzones++;
    t->nnodes++;
    return 0;
}

void ks__tree_remove(struct node_tree *t, struct node_info *ni, uint32_t region, uint32_t zone)
{
    uint32_t zi = zone_find(t, region, zone);
    if (zi == KS__NO_INDEX)
        return;
    struct tree_zone *z = &t->zones[zi];
    for (uint32_t i = 0; i < z->n; i++) {
        if (z->nodes[i] != ni)
            continue;
        memmove(&z->nodes[i], &z->nodes[i + 1], (size_t)(z->n - i - 1) * sizeof(*z->nodes));
        z->n--;
        t->nnodes--;
        if (z->n == 0) {
            free(z->nodes);
            memmove(&t->zones[zi], &t->zones[zi + 1], (size_t)(t->nzones - zi - 1) * sizeof(*t->zones));
            t->nzones--;
            map_rebuild(t);
        }
        return;
    }
}

void ks__tree_list(const struct node_tree *t, struct node_info **out, uint32_t *active)
{
    /*
     * Round r emits node r of every zone that still has one, zones in order. Exhausted
     * zones leave the active list, so the whole listing is O(nodes + zones).
     */
    uint32_t nactive = 0, k = 0;
    for (uint32_t i = 0; i < t->nzones; i++) {
        if (t->zones[i].n)
            active[nactive++] = i;
    }
    for (uint32_t r = 0; nactive; r++) {
        uint32_t keep = 0;
        for (uint32_t a = 0; a < nactive; a++) {
            const struct tree_zone *z = &t->zones[active[a]];
            out[k++] = z->nodes[r];
            if (r + 1 < z->n)
                active[keep++] = active[a];
        }
        nactive = keep;
    }
}

void ks__tree_destroy(struct node_tree *t)
{
    for (uint32_t i = 0; i < t->nzones; i++)
        free(t->zones[i].nodes);
    free(t->zones);
    free(t->map);
    memset(t, 0, sizeof(*t));
}
