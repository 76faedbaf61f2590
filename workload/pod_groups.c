/*
 * pod_groups.c - the table of pod groups (ksched/internal/pod_groups.h): open addressing by
 * (namespace, name), each group with its spec copy and a growable array of pod references
 * in joining order.
 */
#include "ksched/internal/pod_groups.h"

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct group {
    uint32_t ns, name; /* name KS_ID_NONE: a free slot */
    bool exists;
    struct ks_pod_group_spec spec;
    uint32_t npods, cap;
    const struct ks_pod **pods;
};

struct ks_pod_groups {
    struct ks_mutex lock; /* KS_LOCK_POD_GROUPS */
    uint32_t n, cap;      /* used slots, slots (a power of two) */
    struct group *slots;
};

int ks_pod_groups_create(struct ks_pod_groups **out)
{
    struct ks_pod_groups *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    ks_mutex_init(&g->lock, KS_LOCK_POD_GROUPS);
    *out = g;
    return 0;
}

void ks_pod_groups_destroy(struct ks_pod_groups *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->cap; i++) {
        for (uint32_t j = 0; j < g->slots[i].npods; j++)
            ks_pod_put(g->slots[i].pods[j]);
        free(g->slots[i].pods);
    }
    free(g->slots);
    ks_mutex_destroy(&g->lock);
    free(g);
}

uint32_t ks_pod_group_key(const struct ks_pod *pod)
{
    return pod->scheduling_group ? ks_intern(pod->scheduling_group) : KS_ID_NONE;
}

static uint32_t slot_hash(uint32_t ns, uint32_t name)
{
    uint64_t h = ((uint64_t)ns << 32 | name) * UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(h >> 32);
}

/* The slot of @ns/@name, or the free slot where it would go (NULL: an empty table). */
static struct group *probe(const struct ks_pod_groups *g, uint32_t ns, uint32_t name)
{
    if (!g->cap)
        return NULL;
    for (uint32_t i = slot_hash(ns, name) & (g->cap - 1);; i = (i + 1) & (g->cap - 1)) {
        struct group *gr = &g->slots[i];
        if (gr->name == KS_ID_NONE || (gr->ns == ns && gr->name == name))
            return gr;
    }
}

static int grow(struct ks_pod_groups *g)
{
    uint32_t cap = g->cap ? g->cap * 2 : 16;
    struct group *slots = calloc(cap, sizeof(*slots)), *old = g->slots;
    if (!slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < cap; i++)
        slots[i].name = KS_ID_NONE;
    uint32_t oldcap = g->cap;
    g->slots = slots;
    g->cap = cap;
    for (uint32_t i = 0; i < oldcap; i++) {
        if (old[i].name != KS_ID_NONE)
            *probe(g, old[i].ns, old[i].name) = old[i];
    }
    free(old);
    return 0;
}

/* The group @ns/@name, made (empty) when absent; NULL when out of memory. */
static struct group *get(struct ks_pod_groups *g, uint32_t ns, uint32_t name)
{
    struct group *gr = probe(g, ns, name);
    if (gr && gr->name != KS_ID_NONE)
        return gr;
    if ((g->n + 1) * 4 > g->cap * 3) {
        if (grow(g) < 0)
            return NULL;
        gr = probe(g, ns, name);
    }
    memset(gr, 0, sizeof(*gr));
    gr->ns = ns;
    gr->name = name;
    g->n++;
    return gr;
}

/*
 * Drop @gr when nothing is left of it (no pod, no object): backward-shift deletion, so that
 * every group after it in its probe run stays reachable and a long-running scheduler keeps no
 * trace of groups that are gone.
 */
static void drop_if_empty(struct ks_pod_groups *g, struct group *gr)
{
    if (gr->npods || gr->exists)
        return;
    free(gr->pods);
    uint32_t mask = g->cap - 1, hole = (uint32_t)(gr - g->slots);
    for (uint32_t i = (hole + 1) & mask; g->slots[i].name != KS_ID_NONE; i = (i + 1) & mask) {
        uint32_t home = slot_hash(g->slots[i].ns, g->slots[i].name) & mask;
        /* the entry at i may move into the hole unless its home lies cyclically in (hole, i] */
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays)
            continue;
        g->slots[hole] = g->slots[i];
        hole = i;
    }
    memset(&g->slots[hole], 0, sizeof(g->slots[hole]));
    g->slots[hole].name = KS_ID_NONE;
    g->n--;
}

static int32_t find_pod(const struct group *gr, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < gr->npods; i++) {
        if (ks_pod_same_name(gr->pods[i], pod))
            return (int32_t)i;
    }
    return -1;
}

int ks_pod_groups_add_pod(struct ks_pod_groups *g, const struct ks_pod *pod)
{
    uint32_t name = ks_pod_group_key(pod);
    if (name == KS_ID_NONE)
        return 0;
    int rc = 0;
    ks_mutex_lock(&g->lock);
    struct group *gr = get(g, pod->meta.namespace_id, name);
    int32_t at = gr ? find_pod(gr, pod) : -1;
    if (!gr) {
        rc = -ENOMEM;
    } else if (at >= 0) {
        ks_pod_put(gr->pods[at]);
        gr->pods[at] = ks_pod_get(pod);
    } else {
        rc = KS_RESERVE(gr->pods, gr->cap, gr->npods + 1);
    }
    if (rc == 0 && at < 0)
        gr->pods[gr->npods++] = ks_pod_get(pod);
    ks_mutex_unlock(&g->lock);
    return rc;
}

void ks_pod_groups_delete_pod(struct ks_pod_groups *g, const struct ks_pod *pod)
{
    uint32_t name = ks_pod_group_key(pod);
    if (name == KS_ID_NONE)
        return;
    const struct ks_pod *gone = NULL;
    ks_mutex_lock(&g->lock);
    struct group *gr = probe(g, pod->meta.namespace_id, name);
    int32_t at = gr && gr->name != KS_ID_NONE ? find_pod(gr, pod) : -1;
    if (at >= 0) {
        gone = gr->pods[at];
        memmove(&gr->pods[at], &gr->pods[at + 1], (gr->npods - (uint32_t)at - 1) * sizeof(gr->pods[0]));
        gr->npods--;
        drop_if_empty(g, gr);
    }
    ks_mutex_unlock(&g->lock);
    if (gone)
        ks_pod_put(gone);
}

int ks_pod_groups_set_object(struct ks_pod_groups *g, const struct ks_pod_group *old,
                             const struct ks_pod_group *pg)
{
    const struct ks_pod_group *which = pg ? pg : old;
    if (!which || !which->meta.name)
        return 0;
    uint32_t name = ks_intern(which->meta.name);
    if (name == KS_ID_NONE)
        return -ENOMEM;
    int rc = 0;
    ks_mutex_lock(&g->lock);
    struct group *gr = pg ? get(g, which->meta.namespace_id, name) : probe(g, which->meta.namespace_id, name);
    if (!gr && pg) {
        rc = -ENOMEM;
    } else if (gr && gr->name != KS_ID_NONE) {
        gr->exists = pg != NULL;
        memset(&gr->spec, 0, sizeof(gr->spec));
        if (pg) {
            gr->spec = pg->spec;
            gr->spec.priority_class_name = NULL;
        }
        drop_if_empty(g, gr);
    }
    ks_mutex_unlock(&g->lock);
    return rc;
}

bool ks_pod_groups_state(struct ks_pod_groups *g, uint32_t ns, uint32_t name, struct ks_pod_group_state *out)
{
    memset(out, 0, sizeof(*out));
    ks_mutex_lock(&g->lock);
    const struct group *gr = probe(g, ns, name);
    bool found = gr && gr->name != KS_ID_NONE;
    if (found) {
        out->exists = gr->exists;
        out->spec = gr->spec;
        out->all_pods = gr->npods;
    }
    ks_mutex_unlock(&g->lock);
    return found;
}

uint32_t ks_pod_groups_members(struct ks_pod_groups *g, uint32_t ns, uint32_t name, const struct ks_pod **out,
                               uint32_t cap)
{
    ks_mutex_lock(&g->lock);
    const struct group *gr = probe(g, ns, name);
    uint32_t n = gr && gr->name != KS_ID_NONE ? gr->npods : 0;
    for (uint32_t i = 0; i < n && i < cap; i++)
        out[i] = ks_pod_get(gr->pods[i]);
    ks_mutex_unlock(&g->lock);
    return n;
}

uint32_t ks_pod_groups_count(struct ks_pod_groups *g)
{
    ks_mutex_lock(&g->lock);
    uint32_t n = g->n;
    ks_mutex_unlock(&g->lock);
    return n;
}
