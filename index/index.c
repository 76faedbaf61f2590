/*
 * index.c - the signature index's classes and change log (include/ksched/internal/index.h).
 *
 * Classes live in one array of KS_INDEX_CLASSES slots taken in turn (creation order), and
 * in a chained hash table keyed by (owner, key bytes); a new class past KS_INDEX_CLASSES
 * takes the oldest one's slot. The change log
 * is a ring of positions with a running sequence: a class remembers the sequence its tree
 * reflects, and the log's last LOG_SIZE entries are what it can catch up from. Trees count
 * against KS_INDEX_TREE_BUDGET; making room gives up the least recently used trees.
 */
#include "ksched/internal/index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    KS_INDEX_CLASSES = 1024, /* classes known at once (the creation ring) */
    BUCKETS = 2048,          /* hash chains: twice the classes */
    LOG_SIZE = 4096,         /* change-log entries a class can catch up from */
    TREE_SIGHTINGS = 2,      /* lookups before a class gets a tree */
};

struct ks_index {
    uint64_t clock;                 /* lookups so far: the classes' LRU clock */
    uint64_t epoch;                 /* trees of another epoch are rebuilt */
    uint64_t seen_generation;       /* the last snapshot version observed */
    uint64_t seen_order_generation; /* its order_generation */
    uint64_t log_head;              /* sequence of the next log entry */
    uint32_t log[LOG_SIZE];         /* log[seq % LOG_SIZE]: a position changed */

    uint32_t nclasses;
    uint32_t ring_next;          /* the slot the next class takes (the oldest class's when all are taken) */
    struct ks_index_class *ring; /* KS_INDEX_CLASSES slots in creation order; owner NULL: free */
    struct ks_index_class *bucket[BUCKETS];

    /* classes holding a tree, and the bytes of those trees */
    uint32_t nbuilt, cap_built;
    struct ks_index_class **built;
    size_t tree_bytes;

    /* ks_index_pending's scratch: the positions to revisit, deduplicated by stamp */
    uint32_t cap_positions;
    uint32_t *positions;
    uint32_t *stamp; /* per position (cap_positions): the pending call that listed it last */
    uint32_t stamp_now;
};

int ks_index_create(struct ks_index **out)
{
    struct ks_index *ix = calloc(1, sizeof(*ix));
    if (!ix || !(ix->ring = calloc(KS_INDEX_CLASSES, sizeof(*ix->ring)))) {
        free(ix);
        return -ENOMEM;
    }
    ix->epoch = 1;
    *out = ix;
    return 0;
}

static size_t tree_bytes(const struct ks_index_tree *t)
{
    return t->t ? 2 * (size_t)t->leaves * sizeof(*t->t) + (size_t)t->n * sizeof(uint16_t) : 0;
}

/* What @c's trees take together. */
static size_t class_bytes(const struct ks_index_class *c)
{
    return tree_bytes(&c->tree) + ks_preempt_tree_bytes(&c->preempt) + ks_index_parts_bytes(&c->parts);
}

/* No position in a group, no group in use. */
static void groups_clear(struct ks_index_groups *g, uint32_t n)
{
    memset(g->of, 0xff, (size_t)n * sizeof(*g->of)); /* KS_INDEX_NO_GROUP */
    memset(g->count, 0, sizeof(g->count));
    g->n = 0;
    g->full = false;
}

static bool same_status(const struct ks_status *a, const struct ks_status *b)
{
    return a->code == b->code && a->plugin == b->plugin && a->nreasons == b->nreasons &&
           memcmp(a->reasons, b->reasons, a->nreasons * sizeof(a->reasons[0])) == 0;
}

void ks_index_status(struct ks_index_class *c, uint32_t pos, const struct ks_status *st)
{
    struct ks_index_groups *g = &c->groups;
    uint16_t now = KS_INDEX_NO_GROUP;
    if (st) {
        for (now = 0; now < g->n && !same_status(&g->status[now], st); now++)
            ;
        if (now == g->n && g->n == KS_INDEX_GROUPS) {
            g->full = true;
            now = KS_INDEX_NO_GROUP;
        } else if (now == g->n) {
            g->status[g->n++] = *st;
        }
    }
    uint16_t was = g->of[pos];
    if (was != KS_INDEX_NO_GROUP)
        g->count[was]--;
    if (now != KS_INDEX_NO_GROUP)
        g->count[now]++;
    g->of[pos] = now;
}

uint64_t ks_index_unschedulable_plugins(const struct ks_index_class *c)
{
    uint64_t mask = 0;
    for (uint32_t i = 0; i < c->groups.n; i++) {
        uint16_t plugin = c->groups.status[i].plugin;
        if (c->groups.count[i] && plugin != KS_NO_PLUGIN && plugin < 64)
            mask |= 1ull << plugin;
    }
    return mask;
}

/* Give up @c's tree (the class stays). */
static void tree_free(struct ks_index *ix, struct ks_index_class *c)
{
    if (!c->tree.t)
        return;
    for (uint32_t i = 0; i < ix->nbuilt; i++) {
        if (ix->built[i] == c) {
            ix->built[i] = ix->built[--ix->nbuilt];
            break;
        }
    }
    ix->tree_bytes -= class_bytes(c);
    ks_index_tree_destroy(&c->tree);
    ks_preempt_tree_destroy(&c->preempt);
    ks_index_parts_destroy(&c->parts);
    free(c->groups.of);
    c->groups.of = NULL;
    c->epoch = 0;
}

void ks_index_drop(struct ks_index *ix, struct ks_index_class *c)
{
    tree_free(ix, c);
}

void ks_index_destroy(struct ks_index *ix)
{
    if (!ix)
        return;
    for (uint32_t i = 0; i < KS_INDEX_CLASSES; i++) {
        ks_index_tree_destroy(&ix->ring[i].tree);
        ks_preempt_tree_destroy(&ix->ring[i].preempt);
        ks_index_parts_destroy(&ix->ring[i].parts);
        free(ix->ring[i].groups.of);
    }
    free(ix->ring);
    free(ix->built);
    free(ix->positions);
    free(ix->stamp);
    free(ix);
}

void ks_index_observe(struct ks_index *ix, const struct ks_snapshot *snap)
{
    if (snap->generation == ix->seen_generation)
        return;
    if (snap->prev_generation == ix->seen_generation && snap->order_generation == ix->seen_order_generation) {
        for (uint32_t i = 0; i < snap->nchanged; i++)
            ix->log[ix->log_head++ % LOG_SIZE] = snap->changed[i];
    } else {
        ix->epoch++; /* a version missed, or a new order: positions may name other nodes */
    }
    ix->seen_generation = snap->generation;
    ix->seen_order_generation = snap->order_generation;
}

void ks_index_touch(struct ks_index *ix, uint32_t pos)
{
    ix->log[ix->log_head++ % LOG_SIZE] = pos;
}

void ks_index_touch_all(struct ks_index *ix)
{
    ix->epoch++;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* The owner's address and the key, eight bytes at a time. */
static uint64_t hash_of(const void *owner, const uint8_t *key, uint32_t len)
{
    uint64_t h = mix(0x243f6a8885a308d3ull ^ len, (uint64_t)(uintptr_t)owner);
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, key + i, 8);
        h = mix(h, v);
    }
    if (i < len) {
        uint64_t v = 0;
        memcpy(&v, key + i, len - i);
        h = mix(h, v);
    }
    return mix(h, 0);
}

static void unlink_class(struct ks_index *ix, struct ks_index_class *c)
{
    struct ks_index_class **p = &ix->bucket[c->hash % BUCKETS];
    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
}

struct ks_index_class *ks_index_lookup(struct ks_index *ix, const void *owner, const void *key, uint32_t len)
{
    uint64_t h = hash_of(owner, key, len);
    ix->clock++;
    for (struct ks_index_class *c = ix->bucket[h % BUCKETS]; c; c = c->next) {
        if (c->hash == h && c->owner == owner && c->keylen == len && memcmp(c->key, key, len) == 0) {
            c->used = ix->clock;
            if (c->sightings < UINT32_MAX)
                c->sightings++;
            return c;
        }
    }
    if (len > KS_INDEX_KEY_MAX)
        return NULL;
    struct ks_index_class *c = &ix->ring[ix->ring_next];
    if (c->owner) { /* every slot taken: the oldest class goes */
        tree_free(ix, c);
        unlink_class(ix, c);
        ix->nclasses--;
    }
    *c = (struct ks_index_class){.hash = h, .owner = owner, .keylen = len, .used = ix->clock, .sightings = 1};
    memcpy(c->key, key, len);
    ix->ring_next = (ix->ring_next + 1) % KS_INDEX_CLASSES;
    ix->nclasses++;
    c->next = ix->bucket[h % BUCKETS];
    ix->bucket[h % BUCKETS] = c;
    return c;
}

bool ks_index_worth_tree(struct ks_index_class *c)
{
    if (c->resting) {
        c->resting--;
        return false;
    }
    return c->sightings >= TREE_SIGHTINGS;
}

void ks_index_outcome(struct ks_index_class *c, bool answered)
{
    c->misses = answered ? 0 : c->misses + 1;
    if (c->misses >= KS_INDEX_MISSES) {
        c->misses = 0;
        c->resting = KS_INDEX_REST;
    }
}

/* Room for @bytes more of trees: give up least recently used trees (never @keep's). */
static void make_room(struct ks_index *ix, size_t bytes, const struct ks_index_class *keep)
{
    while (ix->nbuilt && ix->tree_bytes + bytes > KS_INDEX_TREE_BUDGET) {
        struct ks_index_class *lru = NULL;
        for (uint32_t i = 0; i < ix->nbuilt; i++) {
            if (ix->built[i] != keep && (!lru || ix->built[i]->used < lru->used))
                lru = ix->built[i];
        }
        if (!lru)
            return;
        tree_free(ix, lru);
    }
}

/* A fresh tree of @n positions for @c (none feasible). */
static int tree_new(struct ks_index *ix, struct ks_index_class *c, uint32_t n)
{
    tree_free(ix, c);
    struct ks_index_tree t;
    uint16_t *of = malloc((n ? n : 1) * sizeof(*of));
    if (!of || ks_index_tree_init(&t, n) < 0) {
        free(of);
        return -ENOMEM;
    }
    make_room(ix, tree_bytes(&t), c);
    if (ix->nbuilt == ix->cap_built) {
        uint32_t cap = ix->cap_built ? 2 * ix->cap_built : 16;
        struct ks_index_class **v = realloc(ix->built, cap * sizeof(*v));
        if (!v) {
            ks_index_tree_destroy(&t);
            free(of);
            return -ENOMEM;
        }
        ix->built = v;
        ix->cap_built = cap;
    }
    ix->built[ix->nbuilt++] = c;
    ix->tree_bytes += tree_bytes(&t);
    c->tree = t;
    c->groups.of = of;
    return 0;
}

static int positions_reserve(struct ks_index *ix, uint32_t n)
{
    if (n <= ix->cap_positions)
        return 0;
    uint32_t *p = malloc((size_t)n * sizeof(*p)), *s = calloc(n, sizeof(*s));
    if (!p || !s) {
        free(p);
        free(s);
        return -ENOMEM;
    }
    free(ix->positions);
    free(ix->stamp);
    ix->positions = p;
    ix->stamp = s;
    ix->cap_positions = n;
    ix->stamp_now = 0;
    return 0;
}

/* The positions logged since @seq, each once, into ix->positions; their count, or -ENOMEM. */
static int64_t logged_since(struct ks_index *ix, uint64_t seq, uint32_t n)
{
    if (positions_reserve(ix, n) < 0)
        return -ENOMEM;
    if (++ix->stamp_now == 0) { /* wrapped: no stamp may look current */
        memset(ix->stamp, 0, (size_t)ix->cap_positions * sizeof(*ix->stamp));
        ix->stamp_now = 1;
    }
    uint32_t k = 0;
    for (; seq != ix->log_head; seq++) {
        uint32_t p = ix->log[seq % LOG_SIZE];
        if (p < n && ix->stamp[p] != ix->stamp_now) {
            ix->stamp[p] = ix->stamp_now;
            ix->positions[k++] = p;
        }
    }
    return k;
}

/* Whether a tree last synced at (@epoch, @seq) cannot catch up from the log. */
static bool lost_track(const struct ks_index *ix, uint64_t epoch, uint64_t seq)
{
    return epoch != ix->epoch || ix->log_head - seq > LOG_SIZE;
}

int64_t ks_index_pending(struct ks_index *ix, struct ks_index_class *c, uint32_t n,
                         const uint32_t **positions)
{
    /* past a quarter of the positions, evaluating all of them in parallel costs less */
    if (!c->tree.t || c->tree.n != n || lost_track(ix, c->epoch, c->seq) || ix->log_head - c->seq > n / 4) {
        if (c->tree.t && c->tree.n == n)
            ks_index_tree_clear(&c->tree);
        else if (tree_new(ix, c, n) < 0)
            return -ENOMEM;
        groups_clear(&c->groups, n);
        c->parts.built = false;
        return KS_INDEX_REBUILD;
    }
    int64_t k = logged_since(ix, c->seq, n);
    *positions = ix->positions;
    return k;
}

int64_t ks_index_preempt_pending(struct ks_index *ix, struct ks_index_class *c, uint32_t n,
                                 const uint32_t **positions)
{
    int64_t k = KS_INDEX_REBUILD;
    if (!c->preempt.t || c->preempt.n != n) {
        struct ks_preempt_tree t;
        if (ks_preempt_tree_init(&t, n) < 0)
            return -ENOMEM;
        ix->tree_bytes -= ks_preempt_tree_bytes(&c->preempt);
        ks_preempt_tree_destroy(&c->preempt);
        make_room(ix, ks_preempt_tree_bytes(&t), c);
        c->preempt = t;
        ix->tree_bytes += ks_preempt_tree_bytes(&t);
    } else if (!lost_track(ix, c->preempt_epoch, c->preempt_seq)) {
        k = logged_since(ix, c->preempt_seq, n);
        *positions = ix->positions;
        if (k < 0)
            return k;
    }
    c->preempt_epoch = ix->epoch;
    c->preempt_seq = ix->log_head;
    return k;
}

int ks_index_split(struct ks_index *ix, struct ks_index_class *c, uint32_t key,
                   const struct ks_snapshot *snap)
{
    size_t before = ks_index_parts_bytes(&c->parts);
    if (!c->parts.tree.t)
        make_room(ix, 2 * tree_bytes(&c->tree), c);
    int rc = ks_index_parts_build(&c->parts, key, snap, &c->tree);
    ix->tree_bytes = ix->tree_bytes - before + ks_index_parts_bytes(&c->parts);
    return rc;
}

bool ks_index_current(const struct ks_index *ix, const struct ks_index_class *c, uint32_t n)
{
    return c->tree.t && c->epoch == ix->epoch && c->tree.n == n && c->seq == ix->log_head;
}

void ks_index_synced(struct ks_index *ix, struct ks_index_class *c)
{
    c->seq = ix->log_head;
    c->epoch = ix->epoch;
}

void ks_index_counts(const struct ks_index *ix, uint32_t *classes, uint32_t *trees)
{
    if (classes)
        *classes = ix->nclasses;
    if (trees)
        *trees = ix->nbuilt;
}
