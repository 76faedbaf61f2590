/*
 * snapshot.c - building, publishing and reclaiming snapshot versions.
 *
 * Mirrors UpdateSnapshot of pkg/scheduler/backend/cache/cache.go and the Snapshot of
 * snapshot.go, made copy-on-write so that readers never lock:
 *
 *   - A version is a struct snap_version: the public struct ks_snapshot followed by its
 *     own array of chunk pointers (the only part copied whole every version: nnodes/256
 *     pointers). Chunks (256 record pointers), records, the find table, the affinity
 *     lists and the in-use PVC list are shared with the previous version while unchanged.
 *   - Only the node_infos on the dirty list get new records (one allocation each), and
 *     only the chunks holding them are copied. When the node set or the zone order
 *     changed, the order is relisted from the node tree, every chunk is recomposed and
 *     reused where its 256 pointers did not change (so appending nodes to one zone only
 *     copies the tail), and the find table and affinity lists are rebuilt; that is O(N)
 *     pointer work, as upstream's updateAllLists.
 *   - The affinity lists otherwise change only when a node's "has such pods" flips: the
 *     old list is merged with the sorted flips.
 *   - A version whose order did not change lists the positions whose records it replaced
 *     (after its chunk pointers, in the same allocation), so that whoever follows every
 *     version can revisit only those; a version with a new order names itself as the
 *     order's generation instead.
 *   - Every version takes a new generation from the cache's counter (the one node changes
 *     advance), and every chunk it creates carries that generation; a chunk carried over
 *     keeps its own. So a chunk index with an unchanged chunk generation holds unchanged
 *     records, which lets per-node count caches skip whole chunks (cache_types.h).
 *
 * Reclamation: whatever a new version no longer references (replaced records, chunks,
 * tables) could still be reached through the version it replaces, and through no later
 * one; so it is attached to that version's garbage list together with the objects the
 * cache dropped since (removed pods and nodes, records of nodes that left the tree), and
 * freed by that version's RCU callback (ks_rcu_call) after a grace period (chunks go back to the
 * cache's chunk pool for later versions instead). Everything a reader can reach from a
 * version it loaded therefore stays valid until its read section ends.
 *
 * Context: ks__snapshot_refresh() under the cache lock, one caller at a time (the
 * scheduling thread); ks__snapshot_retire() after the lock is released (the cache lock is
 * a leaf of include/ksched/base/lock.h's order). ks_snapshot_find() on the read path.
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FIND_EMPTY UINT64_MAX

/* ---- garbage -------------------------------------------------------------------------------- */

int ks__gc_reserve(struct ks_cache *c, uint32_t more)
{
    struct ks_snapshot_garbage *g = c->pending;
    uint64_t need = (uint64_t)(g ? g->n : 0) + more;
    if (g && need <= g->cap)
        return 0;
    if (need > UINT32_MAX / 2)
        return -ENOMEM;
    uint32_t cap = g && g->cap ? g->cap : 8;
    while (cap < need)
        cap *= 2;
    struct ks_snapshot_garbage *ng = realloc(g, sizeof(*g) + (size_t)cap * sizeof(struct gc_item));
    if (!ng)
        return -ENOMEM;
    if (!g)
        ng->n = 0;
    ng->cap = cap;
    c->pending = ng;
    return 0;
}

void ks__gc_push(struct ks_cache *c, void *p, enum gc_kind kind)
{
    if (!p)
        return;
    c->pending->items[c->pending->n++] = (struct gc_item){p, kind};
}

/* Any thread (an RCU callback): @ch joins the pool's pushed stack. */
static void pool_push(struct chunk_pool *pool, struct ks_snap_chunk *ch)
{
    struct ks_snap_chunk *head = atomic_load_explicit(&pool->pushed, memory_order_relaxed);
    do
        ch->generation = (uint64_t)(uintptr_t)head;
    /* release: the link is written before the chunk is seen on the stack */
    while (!atomic_compare_exchange_weak_explicit(&pool->pushed, &head, ch, memory_order_release,
                                                  memory_order_relaxed));
}

/* Under the cache lock: a pooled chunk, or NULL. */
static struct ks_snap_chunk *pool_take(struct chunk_pool *pool)
{
    if (!pool->taken) /* acquire: pairs with pool_push's release */
        pool->taken = atomic_exchange_explicit(&pool->pushed, NULL, memory_order_acquire);
    struct ks_snap_chunk *ch = pool->taken;
    if (ch)
        pool->taken = (struct ks_snap_chunk *)(uintptr_t)ch->generation;
    return ch;
}

/* Free every pooled chunk. No callback may be pending (after ks_rcu_barrier). */
static void pool_free(struct chunk_pool *pool)
{
    struct ks_snap_chunk *lists[2] = {pool->taken, atomic_exchange(&pool->pushed, NULL)};
    for (int i = 0; i < 2; i++) {
        for (struct ks_snap_chunk *ch = lists[i], *next; ch; ch = next) {
            next = (struct ks_snap_chunk *)(uintptr_t)ch->generation;
            free(ch);
        }
    }
    pool->taken = NULL;
}

static void gc_items_free(struct chunk_pool *pool, const struct gc_item *items, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        switch (items[i].kind) {
        case KS_GC_CHUNK:
            pool_push(pool, items[i].p);
            break;
        case KS_GC_FREE:
            free(items[i].p);
            break;
        case KS_GC_POD:
            ks_pod_put(items[i].p);
            break;
        case KS_GC_NODE:
            ks_node_destroy(items[i].p);
            break;
        }
    }
}

static void gc_free(struct chunk_pool *pool, struct ks_snapshot_garbage *g)
{
    if (!g)
        return;
    gc_items_free(pool, g->items, g->n);
    free(g);
}

/* RCU callback: no reader can reach @h's version or anything only it referenced. */
static void version_reclaim(struct ks_rcu_head *h)
{
    struct snap_version *v = caa_container_of(h, struct snap_version, pub.rcu);
    gc_items_free(v->pool, v->gc_inline, v->ngc_inline);
    gc_free(v->pool, v->pub.garbage);
    free(v);
}

/* Hand the pending garbage to @old (retiring now): inline when it fits, else the list itself. */
static void gc_hand_over(struct ks_cache *c, struct snap_version *old)
{
    struct ks_snapshot_garbage *g = c->pending;
    if (!g || !g->n)
        return;
    if (g->n <= KS_GC_INLINE) {
        memcpy(old->gc_inline, g->items, (size_t)g->n * sizeof(*g->items));
        old->ngc_inline = g->n;
        g->n = 0; /* the buffer stays with the cache */
        return;
    }
    old->pub.garbage = g; /* readers never look at this field */
    c->pending = NULL;
}

void ks__snapshot_retire(struct snap_version *v)
{
    if (v)
        ks_rcu_call(&v->pub.rcu, version_reclaim);
}

int ks__snapshot_init(struct ks_cache *c)
{
    struct snap_version *v = calloc(1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    v->pub.chunks = v->chunks;
    v->pub.priorities_known = true;
    v->pub.min_pod_priority = INT32_MAX;
    v->pool = &c->chunk_pool;
    c->current = v;
    ks_rcu_publish(c->published, &v->pub);
    return 0;
}

/* ---- lookup ------------------------------------------------------------------------------------- */

uint32_t ks_snapshot_position(const struct ks_snapshot *s, uint32_t name)
{
    if (!s->nnodes)
        return UINT32_MAX;
    for (uint32_t i = ks_id_hash(name) & s->find_mask;; i = (i + 1) & s->find_mask) {
        uint64_t slot = s->find_table[i];
        if (slot == FIND_EMPTY)
            return UINT32_MAX;
        if ((uint32_t)(slot >> 32) == name)
            return (uint32_t)slot;
    }
}

const struct ks_node_snap *ks_snapshot_find(const struct ks_snapshot *s, uint32_t name)
{
    uint32_t pos = ks_snapshot_position(s, name);
    return pos == UINT32_MAX ? NULL : ks_snapshot_node(s, pos);
}

static uint64_t *find_table_build(struct node_info *const *order, uint32_t n, uint32_t *mask_out)
{
    uint32_t size = 8;
    while (size < (uint64_t)n * 2)
        size *= 2;
    uint64_t *t = malloc((size_t)size * sizeof(*t));
    if (!t)
        return NULL;
    memset(t, 0xff, (size_t)size * sizeof(*t)); /* FIND_EMPTY */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t name = order[i]->name, j = ks_id_hash(name) & (size - 1);
        while (t[j] != FIND_EMPTY)
            j = (j + 1) & (size - 1);
        t[j] = (uint64_t)name << 32 | i;
    }
    *mask_out = size - 1;
    return t;
}

/* ---- refresh ------------------------------------------------------------------------------------ */

static inline const struct ks_node_snap *rec_of(const struct node_info *ni)
{
    return ni->new_rec ? ni->new_rec : ni->rec;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether the record @ni will have in the new version lists (anti-)affinity pods. */
static inline bool has_affinity(const struct node_info *ni, bool anti)
{
    if (ni->new_rec)
        return (anti ? ni->new_rec->nanti_affinity_pods : ni->new_rec->naffinity_pods) > 0;
    return anti ? ni->pub_anti : ni->pub_aff; /* no need to touch the (cold) record */
}

/* An affinity list from scratch: indices in @order whose record has (anti-)affinity pods. */
static int list_scan(struct node_info *const *order, uint32_t n, bool anti, uint32_t **out, uint32_t *nout)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        k += has_affinity(order[i], anti);
    *nout = k;
    *out = NULL;
    if (!k)
        return 0;
    uint32_t *list = malloc((size_t)k * sizeof(*list));
    if (!list)
        return -ENOMEM;
    k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (has_affinity(order[i], anti))
            list[k++] = i;
    }
    *out = list;
    return 0;
}

/*
 * The affinity list @old (sorted indices) with the flips in @flips applied: each flip is
 * index << 1 | added. Flips are sorted here; @old is shared, never changed.
 */
static int list_merge(const uint32_t *old, uint32_t nold, uint32_t *flips, uint32_t nflips, uint32_t **out,
                      uint32_t *nout)
{
    qsort(flips, nflips, sizeof(*flips), cmp_u32);
    uint32_t adds = 0;
    for (uint32_t i = 0; i < nflips; i++)
        adds += flips[i] & 1;
    uint32_t n = nold + adds - (nflips - adds);
    *nout = n;
    *out = NULL;
    if (!n)
        return 0;
    uint32_t *list = malloc((size_t)n * sizeof(*list));
    if (!list)
        return -ENOMEM;
    uint32_t i = 0, f = 0, k = 0;
    while (i < nold || f < nflips) {
        uint32_t fi = f < nflips ? flips[f] >> 1 : UINT32_MAX;
        if (i < nold && old[i] < fi) {
            list[k++] = old[i++];
        } else if (i < nold && old[i] == fi) {
            i++; /* removed */
            f++;
        } else {
            list[k++] = fi; /* added */
            f++;
        }
    }
    *out = list;
    return 0;
}

/* Gather the flips of one list among the dirty nodes (the order did not change). */
static uint32_t gather_flips(struct ks_cache *c, bool anti)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->ndirty; i++) {
        const struct node_info *ni = c->dirty[i];
        if (!ni || !ni->new_rec)
            continue;
        bool was = anti ? ni->pub_anti : ni->pub_aff;
        bool is = (anti ? ni->new_rec->nanti_affinity_pods : ni->new_rec->naffinity_pods) > 0;
        if (was != is)
            c->flips[n++] = ni->snap_idx << 1 | (is ? 1u : 0u);
    }
    return n;
}

/* A new chunk of version @v: it takes the version's generation (cache_types.h). */
static struct ks_snap_chunk *chunk_alloc(struct ks_cache *c, const struct snap_version *v)
{
    struct ks_snap_chunk *nc = pool_take(&c->chunk_pool);
    if (!nc)
        nc = malloc(sizeof(*nc));
    if (nc)
        nc->generation = v->pub.generation;
    return nc;
}

/* Undo a failed build: the new records, chunks and tables, and the version itself. */
static void build_abort(struct ks_cache *c, struct snap_version *v, const struct ks_snapshot *os,
                        uint32_t nchunks)
{
    for (uint32_t i = 0; i < c->ndirty; i++) {
        struct node_info *ni = c->dirty[i];
        if (ni && ni->new_rec) {
            free((void *)ni->new_rec);
            ni->new_rec = NULL;
        }
    }
    if (!v)
        return;
    for (uint32_t ci = 0; ci < nchunks; ci++) {
        if (v->chunks[ci] && (ci >= os->nchunks || v->chunks[ci] != os->chunks[ci]))
            free(v->chunks[ci]);
    }
    if (v->pub.find_table != os->find_table)
        free((void *)v->pub.find_table);
    if (v->pub.affinity_nodes != os->affinity_nodes)
        free((void *)v->pub.affinity_nodes);
    if (v->pub.anti_affinity_nodes != os->anti_affinity_nodes)
        free((void *)v->pub.anti_affinity_nodes);
    if (v->pub.pvcs_in_use != os->pvcs_in_use)
        free((void *)v->pub.pvcs_in_use);
    free(v);
}

/* Build the chunks of @v when the order changed: reuse each old chunk whose pointers match. */
static int chunks_recompose(struct ks_cache *c, struct snap_version *v, const struct ks_snapshot *os,
                            uint32_t n)
{
    memset(v->chunks, 0, (size_t)v->pub.nchunks * sizeof(v->chunks[0])); /* for build_abort() */
    for (uint32_t ci = 0; ci < v->pub.nchunks; ci++) {
        uint32_t base = ci << KS_SNAP_CHUNK_SHIFT;
        uint32_t cnt = n - base < KS_SNAP_CHUNK ? n - base : KS_SNAP_CHUNK;
        struct ks_snap_chunk *oc = ci < os->nchunks ? os->chunks[ci] : NULL;
        bool same = oc != NULL;
        for (uint32_t j = 0; same && j < KS_SNAP_CHUNK; j++)
            same = oc->nodes[j] == (j < cnt ? rec_of(c->order[base + j]) : NULL);
        if (same) {
            v->chunks[ci] = oc;
            continue;
        }
        struct ks_snap_chunk *nc = chunk_alloc(c, v);
        if (!nc)
            return -ENOMEM;
        for (uint32_t j = 0; j < KS_SNAP_CHUNK; j++)
            nc->nodes[j] = j < cnt ? rec_of(c->order[base + j]) : NULL;
        v->chunks[ci] = nc;
    }
    return 0;
}

/* Copy-on-write the chunks holding the dirty nodes (the order did not change). */
static int chunks_patch(struct ks_cache *c, struct snap_version *v, const struct ks_snapshot *os)
{
    if (os->nchunks)
        memcpy(v->chunks, os->chunks, (size_t)os->nchunks * sizeof(*v->chunks));
    for (uint32_t i = 0; i < c->ndirty; i++) {
        const struct node_info *ni = c->dirty[i];
        if (!ni || !ni->new_rec)
            continue;
        uint32_t ci = ni->snap_idx >> KS_SNAP_CHUNK_SHIFT;
        if (v->chunks[ci] == os->chunks[ci]) {
            struct ks_snap_chunk *nc = chunk_alloc(c, v);
            if (!nc)
                return -ENOMEM;
            memcpy(nc->nodes, os->chunks[ci]->nodes, sizeof(nc->nodes));
            v->chunks[ci] = nc;
        }
        v->chunks[ci]->nodes[ni->snap_idx & (KS_SNAP_CHUNK - 1)] = ni->new_rec;
    }
    return 0;
}

static int lists_update(struct ks_cache *c, struct snap_version *v, uint32_t n)
{
    struct ks_snapshot *s = &v->pub;
    if (c->order_dirty) {
        if (list_scan(c->order, n, false, (uint32_t **)&s->affinity_nodes, &s->naffinity_nodes) ||
            list_scan(c->order, n, true, (uint32_t **)&s->anti_affinity_nodes, &s->nanti_affinity_nodes))
            return -ENOMEM;
        return 0;
    }
    for (int anti = 0; anti < 2; anti++) {
        uint32_t nflips = gather_flips(c, anti);
        const uint32_t **list = anti ? &s->anti_affinity_nodes : &s->affinity_nodes;
        uint32_t *nlist = anti ? &s->nanti_affinity_nodes : &s->naffinity_nodes;
        if (!nflips)
            continue;
        if (list_merge(*list, *nlist, c->flips, nflips, (uint32_t **)list, nlist))
            return -ENOMEM;
    }
    return 0;
}

/* Step 4 of a refresh: @v's chunks, find table, affinity lists and PVCs in use (@n nodes). */
static int version_fill(struct ks_cache *c, struct snap_version *v, const struct ks_snapshot *os, uint32_t n)
{
    if (c->order_dirty) {
        if (chunks_recompose(c, v, os, n))
            return -ENOMEM;
        v->pub.find_table = NULL;
        if (n && !(v->pub.find_table = find_table_build(c->order, n, &v->pub.find_mask)))
            return -ENOMEM;
    } else if (chunks_patch(c, v, os)) {
        return -ENOMEM;
    } else {
        uint32_t *changed = (uint32_t *)(void *)&v->chunks[v->pub.nchunks];
        for (uint32_t i = 0; i < c->ndirty; i++) {
            const struct node_info *ni = c->dirty[i];
            if (ni && ni->new_rec)
                changed[v->pub.nchanged++] = ni->snap_idx;
        }
        v->pub.changed = changed;
    }
    if (lists_update(c, v, n))
        return -ENOMEM;
    if (c->pvcs_dirty) {
        uint32_t *ids = NULL;
        if (c->npvcs && !(ids = malloc((size_t)c->npvcs * sizeof(*ids))))
            return -ENOMEM;
        for (uint32_t i = 0; i < c->npvcs; i++)
            ids[i] = c->pvcs[i].id;
        v->pub.pvcs_in_use = ids;
        v->pub.npvcs_in_use = c->npvcs;
    }
    return 0;
}

/*
 * Step 5 of a refresh, which cannot fail: the new records and positions take effect, what
 * @v no longer references goes to @old's garbage, and @v is published.
 */
static void version_commit(struct ks_cache *c, struct snap_version *v, struct snap_version *old)
{
    const struct ks_snapshot *os = &old->pub;
    if (c->order_dirty) {
        for (uint32_t i = 0; i < v->pub.nnodes; i++)
            c->order[i]->snap_idx = i;
    }
    for (uint32_t i = 0; i < c->ndirty; i++) {
        struct node_info *ni = c->dirty[i];
        if (!ni || !ni->new_rec)
            continue;
        ks__gc_push(c, (void *)ni->rec, KS_GC_FREE);
        ni->rec = ni->new_rec;
        ni->new_rec = NULL;
        ni->pub_aff = ni->rec->naffinity_pods > 0;
        ni->pub_anti = ni->rec->nanti_affinity_pods > 0;
    }
    for (uint32_t ci = 0; ci < os->nchunks; ci++) {
        if (ci >= v->pub.nchunks || v->chunks[ci] != os->chunks[ci])
            ks__gc_push(c, os->chunks[ci], KS_GC_CHUNK);
    }
    if (v->pub.find_table != os->find_table)
        ks__gc_push(c, (void *)os->find_table, KS_GC_FREE);
    if (v->pub.affinity_nodes != os->affinity_nodes)
        ks__gc_push(c, (void *)os->affinity_nodes, KS_GC_FREE);
    if (v->pub.anti_affinity_nodes != os->anti_affinity_nodes)
        ks__gc_push(c, (void *)os->anti_affinity_nodes, KS_GC_FREE);
    if (v->pub.pvcs_in_use != os->pvcs_in_use)
        ks__gc_push(c, (void *)os->pvcs_in_use, KS_GC_FREE);
    gc_hand_over(c, old);
    c->order_dirty = false;
    c->pvcs_dirty = false;
    c->current = v;
    /* release: the version and everything it reaches are fully written before readers see it */
    ks_rcu_publish(c->published, &v->pub);
}

int ks__snapshot_refresh(struct ks_cache *c, struct snap_version **retired)
{
    ks_mutex_assert_held(&c->lock);
    struct snap_version *old = c->current, *v = NULL;
    const struct ks_snapshot *os = &old->pub;
    uint32_t built = 0, nchunks = 0;
    *retired = NULL;

    /* 1. the records of the changed nodes that are in the tree */
    for (uint32_t i = 0; i < c->ndirty; i++) {
        struct node_info *ni = c->dirty[i];
        if (!ni || !ni->node)
            continue;
        ni->new_rec = ks__ni_build_record(ni);
        if (!ni->new_rec)
            goto fail;
        built++;
    }
    if (!built && !c->order_dirty && !c->pvcs_dirty)
        goto clean; /* only nodes outside the snapshot changed */

    /* 2. room for everything this version drops, so the commit cannot fail */
    if (ks__gc_reserve(c, built + os->nchunks + 4) || KS_RESERVE(c->flips, c->cap_flips, c->ndirty))
        goto fail;

    /* 3. the order, and a version with the right number of chunk pointers */
    uint32_t n = os->nnodes;
    if (c->order_dirty) {
        n = c->tree.nnodes;
        if (KS_RESERVE(c->order, c->cap_order, n) ||
            KS_RESERVE(c->order_scratch, c->cap_order_scratch, c->tree.nzones))
            goto fail;
        ks__tree_list(&c->tree, c->order, c->order_scratch);
    }
    nchunks = (n + KS_SNAP_CHUNK - 1) >> KS_SNAP_CHUNK_SHIFT;
    /* not zeroed: the chunk pointers are all written below (copied or composed), then the changed positions
     */
    uint32_t nchanged = c->order_dirty ? 0 : built;
    v = malloc(sizeof(*v) + (size_t)nchunks * sizeof(v->chunks[0]) + (size_t)nchanged * sizeof(uint32_t));
    if (!v)
        goto fail;
    v->ngc_inline = 0;
    v->pool = &c->chunk_pool;
    v->pub = (struct ks_snapshot){
        /* a fresh generation per version: its new chunks take it (cache_types.h) */
        .generation = ++c->generation,
        .prev_generation = os->generation,
        .order_generation = c->order_dirty ? c->generation : os->order_generation,
        .nnodes = n,
        .nchunks = nchunks,
        .chunks = v->chunks,
        .naffinity_nodes = os->naffinity_nodes,
        .nanti_affinity_nodes = os->nanti_affinity_nodes,
        .affinity_nodes = os->affinity_nodes,
        .anti_affinity_nodes = os->anti_affinity_nodes,
        .find_mask = os->find_mask,
        .npvcs_in_use = os->npvcs_in_use,
        .find_table = os->find_table,
        .pvcs_in_use = os->pvcs_in_use,
        .priorities_known = true,
        .min_pod_priority = ks__cache_min_priority(c),
    };

    /* 4. chunks, the find table, the affinity lists, the PVCs in use */
    if (version_fill(c, v, os, n))
        goto fail;

    /* 5. commit: nothing below fails */
    version_commit(c, v, old);
    *retired = old;
clean:
    for (uint32_t i = 0; i < c->ndirty; i++) {
        if (c->dirty[i])
            c->dirty[i]->dirty_idx = KS__NO_INDEX;
    }
    c->ndirty = 0;
    return (int)built;
fail:
    build_abort(c, v, os, nchunks);
    return -ENOMEM;
}

void ks__snapshot_destroy(struct ks_cache *c)
{
    struct snap_version *v = c->current;
    if (!v)
        return;
    /* records are freed through their node_infos (cache.c); chunks and tables here */
    for (uint32_t ci = 0; ci < v->pub.nchunks; ci++)
        free(v->chunks[ci]);
    free((void *)v->pub.find_table);
    free((void *)v->pub.affinity_nodes);
    free((void *)v->pub.anti_affinity_nodes);
    free((void *)v->pub.pvcs_in_use);
    gc_items_free(&c->chunk_pool, v->gc_inline, v->ngc_inline);
    gc_free(&c->chunk_pool, v->pub.garbage);
    free(v);
    c->current = NULL;
    c->published = NULL;
    gc_free(&c->chunk_pool, c->pending);
    c->pending = NULL;
    pool_free(&c->chunk_pool);
}
