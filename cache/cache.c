/*
 * cache.c - the scheduler cache: nodes, pods, assumed pods, image states.
 *
 * Mirrors pkg/scheduler/backend/cache/cache.go:
 *   - AssumePod accounts a pod on a node before binding; ForgetPod undoes it. Assumed pods
 *     never expire (upstream's scheduler creates its cache with durationToExpireAssumedPod
 *     0): the informer's bound pod confirms one, a failed binding forgets it.
 *   - AddPod of an assumed pod replaces the assumed object (remove, then add: the pod may
 *     land on another node than assumed) instead of counting it twice.
 *   - RemoveNode keeps a NodeInfo with its pods and no node (a "ghost", outside the node
 *     tree and the snapshot) until the pods are gone; a pod for an unknown node creates
 *     such a NodeInfo; the node's later arrival fills it in.
 *   - Image summaries count the nodes that report each image name.
 * Every change bumps the node_info's generation from one monotonic counter and puts it on
 * the dirty list that ks_cache_refresh() (snapshot.c) turns into new records.
 *
 * Pod identity is (namespace, name), not the UID. Ownership: every pod entry holds one
 * reference to its pod (ks_pod_get/ks_pod_put): add and update take over the caller's,
 * assume takes one of its own (the caller keeps its object and reference). Replaced and
 * removed nodes, and the references of entries that went away (removed, forgotten,
 * replaced), are released through the snapshot garbage lists, never directly: a
 * published version may still point at them. (Confirm drops the reference it is handed at
 * once: the confirmed entry keeps its own.) On any error nothing is taken over.
 *
 * Locking: one mutex, KS_LOCK_CACHE, a leaf in the lock order of include/ksched/base/lock.h:
 * anything that takes another lock (interning a PVC key or a taint message, ks_rcu_call)
 * happens before it is taken or after it is released. Every mutation reserves all the
 * memory it needs first, so an -ENOMEM leaves the cache as it was.
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- id-keyed chained tables (nodes by name, images by name) ---------------------------------- */

/* find/insert/remove for a chained table of @type (fields hnext and name). */
#define KS_ID_TABLE(pfx, type)                                                                               \
    static type *pfx##_find(type *const *buckets, uint32_t mask, uint32_t name)                              \
    {                                                                                                        \
        for (type *x = buckets[ks_id_hash(name) & mask]; x; x = x->hnext) {                                  \
            if (x->name == name)                                                                             \
                return x;                                                                                    \
        }                                                                                                    \
        return NULL;                                                                                         \
    }                                                                                                        \
    static void pfx##_insert(type ***buckets, uint32_t *mask, uint32_t *n, type *x)                          \
    {                                                                                                        \
        if (*n >= *mask + 1) {                                                                               \
            /* double; on ENOMEM keep the old buckets (longer chains) */                                     \
            uint32_t nb = (*mask + 1) * 2;                                                                   \
            type **b = calloc(nb, sizeof(*b));                                                               \
            if (b) {                                                                                         \
                for (uint32_t i = 0; i <= *mask; i++) {                                                      \
                    for (type *y = (*buckets)[i], *next; y; y = next) {                                      \
                        next = y->hnext;                                                                     \
                        y->hnext = b[ks_id_hash(y->name) & (nb - 1)];                                        \
                        b[ks_id_hash(y->name) & (nb - 1)] = y;                                               \
                    }                                                                                        \
                }                                                                                            \
                free(*buckets);                                                                              \
                *buckets = b;                                                                                \
                *mask = nb - 1;                                                                              \
            }                                                                                                \
        }                                                                                                    \
        type **head = &(*buckets)[ks_id_hash(x->name) & *mask];                                              \
        x->hnext = *head;                                                                                    \
        *head = x;                                                                                           \
        (*n)++;                                                                                              \
    }                                                                                                        \
    static void pfx##_remove(type **buckets, uint32_t mask, uint32_t *n, type *x)                            \
    {                                                                                                        \
        type **p = &buckets[ks_id_hash(x->name) & mask];                                                     \
        while (*p != x)                                                                                      \
            p = &(*p)->hnext;                                                                                \
        *p = x->hnext;                                                                                       \
        (*n)--;                                                                                              \
    }

KS_ID_TABLE(nt, struct node_info)
KS_ID_TABLE(it, struct image_state)

#define TABLE_INIT_BUCKETS 64

static struct node_info *node_find(struct ks_cache *c, uint32_t name)
{
    return nt_find(c->nbuckets, c->nmask, name);
}

/* ---- dirty list and generations ----------------------------------------------------------------- */

/* Room for @more touches, and one for each hidden entry (its unhide never allocates). */
static int reserve_dirty(struct ks_cache *c, uint32_t more)
{
    return KS_RESERVE(c->dirty, c->cap_dirty, (uint64_t)c->ndirty + more + c->nhidden);
}

/* A change to @ni: a new generation, and a place on the dirty list (capacity reserved). */
static void touch(struct ks_cache *c, struct node_info *ni)
{
    ks_mutex_assert_held(&c->lock);
    ni->generation = ++c->generation;
    if (ni->dirty_idx == KS__NO_INDEX) {
        ni->dirty_idx = c->ndirty;
        c->dirty[c->ndirty++] = ni;
    }
}

static struct node_info *ni_alloc(void)
{
    struct node_info *ni = calloc(1, sizeof(*ni));
    if (ni)
        ni->dirty_idx = ni->snap_idx = KS__NO_INDEX;
    return ni;
}

/* Drop a node_info that has neither a node nor pods (upstream removeNodeInfoFromList). */
static void ni_delete(struct ks_cache *c, struct node_info *ni)
{
    nt_remove(c->nbuckets, c->nmask, &c->nnode_infos, ni);
    if (ni->dirty_idx != KS__NO_INDEX)
        c->dirty[ni->dirty_idx] = NULL;
    ks__ni_free(ni);
}

/* ---- image states ---------------------------------------------------------------------------- */

/* Undo images_prepare(): free the summaries it allocated and did not link. */
static void images_unprepare(struct node_prep *p)
{
    for (uint32_t i = 0; i < p->nimages; i++) {
        if (p->images[i].st && !p->images[i].st->linked)
            free(p->images[i].st);
        p->images[i].st = NULL;
    }
}

/* Find or allocate (unlinked) the summary of every image of @p. 0, or -ENOMEM with nothing changed. */
static int images_prepare(struct ks_cache *c, struct node_prep *p)
{
    for (uint32_t i = 0; i < p->nimages; i++) {
        struct image_state *st = it_find(c->ibuckets, c->imask, p->images[i].name);
        if (!st && (st = calloc(1, sizeof(*st))))
            st->name = p->images[i].name;
        p->images[i].st = st;
        if (!st) {
            images_unprepare(p);
            return -ENOMEM;
        }
    }
    return 0;
}

/* The node of @p reports its images (addNodeImageStates); a summary at zero is (re)created. */
static void images_acquire(struct ks_cache *c, struct node_prep *p)
{
    for (uint32_t i = 0; i < p->nimages; i++) {
        struct image_state *st = p->images[i].st;
        if (!st->linked) {
            it_insert(&c->ibuckets, &c->imask, &c->nimage_states, st);
            st->linked = true;
        }
        if (st->num_nodes++ == 0)
            st->size_bytes = p->images[i].size_bytes;
    }
}

/* The node of @p no longer reports its images (removeNodeImageStates, first half). */
static void images_release(struct node_prep *p)
{
    for (uint32_t i = 0; i < p->nimages; i++)
        p->images[i].st->num_nodes--;
}

/* Free the summaries of @p that no node reports any more (second half). */
static void images_sweep(struct ks_cache *c, struct node_prep *p)
{
    for (uint32_t i = 0; i < p->nimages; i++) {
        struct image_state *st = p->images[i].st;
        if (st && st->linked && st->num_nodes == 0) {
            it_remove(c->ibuckets, c->imask, &c->nimage_states, st);
            free(st);
        }
        p->images[i].st = NULL;
    }
}

/* ---- create / destroy ------------------------------------------------------------------------- */

int ks_cache_create(struct ks_cache **out)
{
    *out = NULL;
    int rc = ks_api_init();
    if (rc)
        return rc;
    struct ks_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (ks_mutex_init_adaptive(&c->lock, KS_LOCK_CACHE)) {
        free(c);
        return -ENOMEM;
    }
    c->any_ip = ks_intern("0.0.0.0");
    c->beta_zone = ks_intern("failure-domain.beta.kubernetes.io/zone");
    c->beta_region = ks_intern("failure-domain.beta.kubernetes.io/region");
    c->nbuckets = calloc(TABLE_INIT_BUCKETS, sizeof(*c->nbuckets));
    c->ibuckets = calloc(TABLE_INIT_BUCKETS, sizeof(*c->ibuckets));
    c->nmask = c->imask = TABLE_INIT_BUCKETS - 1;
    if (c->any_ip == KS_ID_NONE || c->beta_zone == KS_ID_NONE || c->beta_region == KS_ID_NONE ||
        !c->nbuckets || !c->ibuckets || ks__pod_table_init(&c->pods) || ks__snapshot_init(c)) {
        ks_cache_destroy(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

void ks_cache_destroy(struct ks_cache *c)
{
    if (!c)
        return;
    /* retired versions free their own garbage; wait for them so nothing outlives us */
    ks_rcu_barrier();
    for (uint32_t i = 0; c->nbuckets && i <= c->nmask; i++) {
        for (struct node_info *ni = c->nbuckets[i], *next; ni; ni = next) {
            next = ni->hnext;
            free((void *)ni->rec);
            ks_node_destroy(ni->node);
            ks__ni_free(ni);
        }
    }
    for (uint32_t i = 0; c->pods.buckets && i <= c->pods.mask; i++) {
        for (struct pod_entry *e = c->pods.buckets[i], *next; e; e = next) {
            next = e->hnext;
            ks_pod_put(e->pod);
            ks__pod_entry_free(e);
        }
    }
    for (uint32_t i = 0; c->ibuckets && i <= c->imask; i++) {
        for (struct image_state *st = c->ibuckets[i], *next; st; st = next) {
            next = st->hnext;
            free(st);
        }
    }
    ks__snapshot_destroy(c);
    ks__tree_destroy(&c->tree);
    ks__pod_table_destroy(&c->pods);
    ks__sel_registry_destroy(&c->sels);
    ks__label_index_destroy(&c->labels);
    free(c->nbuckets);
    free(c->ibuckets);
    free(c->pvcs);
    free(c->dirty);
    free(c->order);
    free(c->order_scratch);
    free(c->flips);
    ks_mutex_destroy(&c->lock);
    free(c);
}

/* ---- nodes ------------------------------------------------------------------------------------ */

int ks_cache_add_node(struct ks_cache *c, struct ks_node *node)
{
    if (!node)
        return -EINVAL;
    struct node_prep *prep = ks__node_prep_make(node, c->beta_zone, c->beta_region);
    struct node_info *fresh = ni_alloc();
    int rc = -ENOMEM;
    if (!prep || !fresh)
        goto out;

    cache_lock(c);
    struct node_info *ni = node_find(c, node->name_id);
    if (ni && ni->node) {
        rc = -EEXIST;
        goto unlock;
    }
    struct node_info *target = ni ? ni : fresh;
    if (reserve_dirty(c, 1) || images_prepare(c, prep))
        goto unlock;
    if (ks__tree_add(&c->tree, target, prep->region, prep->zone)) {
        images_unprepare(prep);
        goto unlock;
    }
    if (!ni) {
        ni = fresh;
        fresh = NULL;
        ni->name = node->name_id;
        nt_insert(&c->nbuckets, &c->nmask, &c->nnode_infos, ni);
    }
    images_acquire(c, prep);
    ni->node = node;
    ni->prep = prep;
    prep = NULL;
    touch(c, ni);
    c->order_dirty = true;
    rc = 0;
unlock:
    cache_unlock(c);
out:
    ks__node_prep_free(prep);
    free(fresh);
    return rc;
}

int ks_cache_update_node(struct ks_cache *c, struct ks_node *node)
{
    if (!node)
        return -EINVAL;
    struct node_prep *prep = ks__node_prep_make(node, c->beta_zone, c->beta_region), *old_prep = NULL;
    int rc = -ENOMEM;
    if (!prep)
        return rc;

    cache_lock(c);
    struct node_info *ni = node_find(c, node->name_id);
    if (!ni || !ni->node) {
        rc = -ENOENT;
        goto unlock;
    }
    if (reserve_dirty(c, 1) || ks__gc_reserve(c, 1) || images_prepare(c, prep))
        goto unlock;
    old_prep = ni->prep;
    /* upstream nodeTree.updateNode: a zone change moves the node to the end of its new zone */
    if (old_prep->region != prep->region || old_prep->zone != prep->zone) {
        if (ks__tree_add(&c->tree, ni, prep->region, prep->zone)) {
            images_unprepare(prep);
            goto unlock;
        }
        ks__tree_remove(&c->tree, ni, old_prep->region, old_prep->zone);
        c->order_dirty = true;
    }
    images_release(old_prep);
    images_acquire(c, prep);
    images_sweep(c, old_prep);
    if (ni->node != node)
        ks__gc_push(c, ni->node, KS_GC_NODE);
    ni->node = node;
    ni->prep = prep;
    prep = NULL;
    touch(c, ni);
    rc = 0;
unlock:
    cache_unlock(c);
    ks__node_prep_free(prep);
    if (rc == 0)
        ks__node_prep_free(old_prep);
    return rc;
}

int ks_cache_remove_node(struct ks_cache *c, uint32_t name)
{
    struct node_prep *old_prep = NULL;
    int rc = 0;
    cache_lock(c);
    struct node_info *ni = node_find(c, name);
    if (!ni || !ni->node) {
        rc = -ENOENT;
        goto unlock;
    }
    if (reserve_dirty(c, 1) || ks__gc_reserve(c, 2)) {
        rc = -ENOMEM;
        goto unlock;
    }
    old_prep = ni->prep;
    ks__tree_remove(&c->tree, ni, old_prep->region, old_prep->zone);
    c->order_dirty = true;
    images_release(old_prep);
    images_sweep(c, old_prep);
    /* the published version still lists the node's record; it leaves with that version */
    ks__gc_push(c, (void *)ni->rec, KS_GC_FREE);
    ks__gc_push(c, ni->node, KS_GC_NODE);
    ni->rec = NULL;
    ni->node = NULL;
    ni->prep = NULL;
    touch(c, ni);
    if (ni->npods == 0)
        ni_delete(c, ni);
unlock:
    cache_unlock(c);
    ks__node_prep_free(old_prep);
    return rc;
}

/* ---- pods ------------------------------------------------------------------------------------- */

static struct pod_entry *pod_find(struct ks_cache *c, const struct ks_pod *pod)
{
    ks_mutex_assert_held(&c->lock);
    uint32_t ns = pod->meta.namespace_id;
    return ks__pod_table_find(&c->pods, ns, pod->meta.name, ks__pod_key_hash(ns, pod->meta.name));
}

/*
 * Reserve everything attaching @e to node @node and detaching one other entry needs.
 * Sets *@ni to the existing node_info, or to a new one in *@fresh (not yet in the table;
 * allocated here, under the lock, only for a node the cache has never heard of).
 */
static int attach_reserve(struct ks_cache *c, struct pod_entry *e, uint32_t node, struct node_info **fresh,
                          struct node_info **ni)
{
    struct node_info *target = node_find(c, node);
    if (!target) {
        if (!(*fresh = ni_alloc()))
            return -ENOMEM;
        target = *fresh;
    }
    if (ks__ni_reserve_pod(target, e) || reserve_dirty(c, 2) || ks__gc_reserve(c, 1) ||
        KS_RESERVE(c->pvcs, c->cap_pvcs, (uint64_t)c->npvcs + e->npvcs) ||
        ks__label_index_reserve(&c->labels, e))
        return -ENOMEM;
    *ni = target;
    return 0;
}

static void assumed_link(struct ks_cache *c, struct pod_entry *e)
{
    e->aprev = NULL;
    e->anext = c->assumed;
    if (c->assumed)
        c->assumed->aprev = e;
    c->assumed = e;
    c->nassumed++;
}

static void assumed_unlink(struct ks_cache *c, struct pod_entry *e)
{
    if (e->aprev)
        e->aprev->anext = e->anext;
    else
        c->assumed = e->anext;
    if (e->anext)
        e->anext->aprev = e->aprev;
    e->anext = e->aprev = NULL;
    c->nassumed--;
}

static void hidden_unlink(struct ks_cache *c, struct pod_entry *e)
{
    if (e->xprev)
        e->xprev->xnext = e->xnext;
    else
        c->hidden = e->xnext;
    if (e->xnext)
        e->xnext->xprev = e->xprev;
    e->xnext = e->xprev = NULL;
    c->nhidden--;
}

/* One more (@delta 1) or one less (-1) pod of @priority attached to a node_info. */
static void prio_count(struct ks_cache *c, int32_t priority, int delta)
{
    uint32_t lo = 0, hi = c->nprio;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->prio[mid].priority < priority)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool found = lo < c->nprio && c->prio[lo].priority == priority;
    if (delta > 0 && found) {
        c->prio[lo].n++;
    } else if (delta > 0 && (c->nprio == KS_CACHE_PRIORITIES || c->prio_overflow)) {
        /* no new slot while some pod has none: a priority never has both a slot and overflowed pods */
        c->prio_overflow++;
    } else if (delta > 0) {
        memmove(&c->prio[lo + 1], &c->prio[lo], (c->nprio - lo) * sizeof(c->prio[0]));
        c->prio[lo] = (struct prio_count){priority, 1};
        c->nprio++;
    } else if (found && --c->prio[lo].n == 0) {
        memmove(&c->prio[lo], &c->prio[lo + 1], (c->nprio - lo - 1) * sizeof(c->prio[0]));
        c->nprio--;
    } else if (!found) {
        c->prio_overflow--; /* it was one that found no room */
    }
}

int32_t ks__cache_min_priority(const struct ks_cache *c)
{
    ks_mutex_assert_held(&c->lock);
    if (c->prio_overflow)
        return INT32_MIN;
    return c->nprio ? c->prio[0].priority : INT32_MAX;
}

/* upstream addPod: account @e on @ni (reserved by attach_reserve) and index it. */
static void pod_attach(struct ks_cache *c, struct pod_entry *e, struct node_info *ni,
                       struct node_info **fresh)
{
    if (ni == *fresh) {
        ni->name = e->node;
        nt_insert(&c->nbuckets, &c->nmask, &c->nnode_infos, ni);
        *fresh = NULL;
    }
    ks__ni_add_pod(ni, e);
    prio_count(c, e->pod->priority, 1);
    touch(c, ni);
    for (uint32_t i = 0; i < e->npvcs; i++)
        c->pvcs_dirty |= ks__pvc_count_add(c->pvcs, &c->npvcs, e->pvcs[i]);
    ks__pod_table_insert(&c->pods, e);
    ks__label_index_add(&c->labels, e);
    if (e->assumed)
        assumed_link(c, e);
}

/*
 * upstream removePod: unaccount @e and drop it from the indexes; a ghost node_info left
 * without pods goes too, unless it is @keep (about to receive the replacement).
 * Needs one reserved dirty slot. The caller frees @e and releases its reference (pod_release).
 */
static void pod_detach(struct ks_cache *c, struct pod_entry *e, const struct node_info *keep)
{
    struct node_info *ni = e->ni;
    if (e->hidden)
        hidden_unlink(c, e); /* the entry goes: nothing to give back */
    ks__ni_remove_pod(ni, e);
    prio_count(c, e->pod->priority, -1);
    touch(c, ni);
    for (uint32_t i = 0; i < e->npvcs; i++)
        c->pvcs_dirty |= ks__pvc_count_remove(c->pvcs, &c->npvcs, e->pvcs[i]);
    ks__pod_table_remove(&c->pods, e);
    ks__label_index_remove(&c->labels, e);
    if (e->assumed)
        assumed_unlink(c, e);
    if (ni->npods == 0 && !ni->node && ni != keep)
        ni_delete(c, ni);
}

/* Drop the reference of an entry that went away, once no published version lists the pod. */
static void pod_release(struct ks_cache *c, struct pod_entry *e)
{
    ks__gc_push(c, (void *)e->pod, KS_GC_POD);
}

static bool valid_node_name(uint32_t node)
{
    return node != KS_ID_EMPTY && node != KS_ID_NONE;
}

enum pod_op {
    OP_ADD,
    OP_UPDATE,
    OP_ASSUME,
};

/* add, update and assume share one shape: make the entry, check the state, reserve, apply. */
static int pod_put(struct ks_cache *c, struct ks_pod *pod, uint32_t node, enum pod_op op)
{
    if (!pod || !valid_node_name(node))
        return -EINVAL;
    struct pod_entry *e = ks__pod_entry_make(pod, node, c->any_ip), *cur = NULL;
    struct node_info *fresh = NULL, *ni;
    if (!e)
        return -ENOMEM;

    cache_lock(c);
    cur = ks__pod_table_find(&c->pods, pod->meta.namespace_id, pod->meta.name, e->hash);
    int rc = 0;
    switch (op) {
    case OP_ADD:
        /* an assumed pod is confirmed (replaced); an added one is a duplicate */
        rc = cur && !cur->assumed ? -EEXIST : 0;
        break;
    case OP_UPDATE:
        /* upstream refuses to update an assumed pod: it must be added first */
        rc = !cur ? -ENOENT : cur->assumed ? -EINVAL : 0;
        break;
    case OP_ASSUME:
        rc = cur ? -EEXIST : 0;
        break;
    }
    if (rc == 0)
        rc = ks__sel_match_pod(&c->sels, e);
    if (rc == 0)
        rc = attach_reserve(c, e, node, &fresh, &ni);
    if (rc) {
        cur = NULL;
        goto unlock;
    }
    e->assumed = op == OP_ASSUME;
    if (e->assumed)
        ks_pod_get(pod); /* the entry's own; add and update take over the caller's */
    if (cur) {
        pod_detach(c, cur, ni);
        pod_release(c, cur);
    }
    pod_attach(c, e, ni, &fresh);
    e = NULL;
unlock:
    cache_unlock(c);
    ks__pod_entry_free(cur);
    ks__pod_entry_free(e);
    ks__ni_free(fresh);
    return rc;
}

int ks_cache_add_pod(struct ks_cache *c, struct ks_pod *pod, uint32_t node)
{
    return pod_put(c, pod, node, OP_ADD);
}

/*
 * The confirmed object is the assumed one, on the same node: no aggregate of the node
 * changes, so the entry is confirmed in place - no new record, no dirty node - and the
 * caller's reference, which the cache takes over, is dropped (the entry keeps its own).
 */
int ks_cache_confirm_pod(struct ks_cache *c, struct ks_pod *pod, uint32_t node)
{
    if (!pod || !valid_node_name(node))
        return -EINVAL;
    cache_lock(c);
    struct pod_entry *cur = pod_find(c, pod);
    bool ok = cur && cur->assumed && cur->pod == pod && cur->node == node;
    if (ok) {
        cur->assumed = false;
        assumed_unlink(c, cur);
    }
    cache_unlock(c);
    if (!ok)
        return -ENOENT;
    ks_pod_put(pod);
    return 0;
}

int ks_cache_update_pod(struct ks_cache *c, struct ks_pod *pod, uint32_t node)
{
    return pod_put(c, pod, node, OP_UPDATE);
}

int ks_cache_assume_pod(struct ks_cache *c, const struct ks_pod *pod, uint32_t node)
{
    /* the entry takes a reference of its own and never writes through the pointer */
    return pod_put(c, (struct ks_pod *)pod, node, OP_ASSUME);
}

int ks_cache_remove_pod(struct ks_cache *c, const struct ks_pod *pod)
{
    struct pod_entry *cur;
    int rc = 0;
    cache_lock(c);
    cur = pod_find(c, pod);
    if (!cur) {
        rc = -ENOENT;
    } else if (reserve_dirty(c, 1) || ks__gc_reserve(c, 1)) {
        rc = -ENOMEM;
        cur = NULL;
    } else {
        pod_detach(c, cur, NULL);
        pod_release(c, cur);
    }
    cache_unlock(c);
    ks__pod_entry_free(cur);
    return rc;
}

int ks_cache_forget_pod(struct ks_cache *c, const struct ks_pod *pod)
{
    struct pod_entry *cur;
    int rc = 0;
    cache_lock(c);
    cur = pod_find(c, pod);
    if (!cur) {
        rc = -ENOENT;
    } else if (!cur->assumed || (valid_node_name(pod->node_name) && pod->node_name != cur->node)) {
        rc = -EINVAL; /* only an assumed pod can be forgotten, from the node it was assumed on */
        cur = NULL;
    } else if (reserve_dirty(c, 1) || ks__gc_reserve(c, 1)) {
        rc = -ENOMEM;
        cur = NULL;
    } else {
        pod_detach(c, cur, NULL);
        pod_release(c, cur);
    }
    cache_unlock(c);
    ks__pod_entry_free(cur);
    return rc;
}

/* ---- hidden pods --------------------------------------------------------------------------------- */

int ks_cache_hide_pod(struct ks_cache *c, const struct ks_pod *pod)
{
    int rc = 0;
    cache_lock(c);
    struct pod_entry *e = pod_find(c, pod);
    if (!e) {
        rc = -ENOENT;
    } else if (e->hidden) {
        rc = -EALREADY;
    } else if (reserve_dirty(c, 2)) { /* this touch, and the one of its unhide */
        rc = -ENOMEM;
    } else {
        ks__ni_hide_pod(e->ni, e);
        touch(c, e->ni);
        e->xprev = NULL;
        e->xnext = c->hidden;
        if (c->hidden)
            c->hidden->xprev = e;
        c->hidden = e;
        c->nhidden++;
    }
    cache_unlock(c);
    return rc;
}

/* Under the lock: @e back into its node's aggregates. Allocates nothing (see reserve_dirty). */
static void unhide(struct ks_cache *c, struct pod_entry *e)
{
    ks_mutex_assert_held(&c->lock);
    hidden_unlink(c, e);
    ks__ni_unhide_pod(e->ni, e);
    touch(c, e->ni);
}

int ks_cache_unhide_pod(struct ks_cache *c, const struct ks_pod *pod)
{
    int rc = 0;
    cache_lock(c);
    struct pod_entry *e = pod_find(c, pod);
    if (!e || !e->hidden)
        rc = -ENOENT;
    else
        unhide(c, e);
    cache_unlock(c);
    return rc;
}

void ks_cache_unhide_all(struct ks_cache *c)
{
    cache_lock(c);
    while (c->hidden)
        unhide(c, c->hidden);
    cache_unlock(c);
}

bool ks_cache_is_assumed(struct ks_cache *c, const struct ks_pod *pod)
{
    cache_lock(c);
    struct pod_entry *e = pod_find(c, pod);
    bool assumed = e && e->assumed;
    cache_unlock(c);
    return assumed;
}

uint32_t ks_cache_pod_node(struct ks_cache *c, const struct ks_pod *pod)
{
    bool assumed;
    return ks_cache_pod_binding(c, pod, &assumed);
}

uint32_t ks_cache_pod_binding(struct ks_cache *c, const struct ks_pod *pod, bool *assumed)
{
    cache_lock(c);
    struct pod_entry *e = pod_find(c, pod);
    uint32_t node = e ? e->node : KS_ID_NONE;
    *assumed = e && e->assumed;
    cache_unlock(c);
    return node;
}

/* ---- tracked selectors (selector_counts.c) --------------------------------------------------------- */

/*
 * Track @t (not yet inserted): list it in the entries of the pods it matches and count
 * those pods on their nodes. Everything is reserved first, so it either all happens or
 * nothing does. 0 or -ENOMEM.
 */
static int track(struct ks_cache *c, struct tracked_sel *t)
{
    struct pod_entry **m = NULL;
    uint32_t n = 0, cap = 0;
    if (!c->labels.on && ks__label_index_build(&c->labels, &c->pods) < 0)
        return -ENOMEM;
    if (t->key != KS_ID_NONE && t->value != KS_ID_NONE) {
        /* filed under a label: only the pods that carry it can match */
        const struct label_list *l = ks__label_index_find(&c->labels, t->ns, t->key, t->value);
        for (uint32_t i = 0; l && i < l->n; i++) {
            if (!ks__sel_matches(t, l->pods[i]->pod))
                continue;
            if (KS_RESERVE(m, cap, (uint64_t)n + 1))
                goto nomem;
            m[n++] = l->pods[i];
        }
    } else {
        for (uint32_t i = 0; i <= c->pods.mask; i++) {
            for (struct pod_entry *e = c->pods.buckets[i]; e; e = e->hnext) {
                if (!ks__sel_matches(t, e->pod))
                    continue;
                if (KS_RESERVE(m, cap, (uint64_t)n + 1))
                    goto nomem;
                m[n++] = e;
            }
        }
    }
    if (ks__sel_reserve(&c->sels) || reserve_dirty(c, n))
        goto nomem;
    for (uint32_t i = 0; i < n; i++) {
        struct node_info *ni = m[i]->ni;
        if (ks__pod_entry_sel_reserve(m[i], 1) ||
            KS_RESERVE(ni->selc, ni->cap_selc, (uint64_t)ni->nselc + ni->hidden_sel + 1))
            goto nomem;
    }
    ks__sel_insert(&c->sels, t);
    bool touched = false;
    for (uint32_t i = 0; i < n; i++) {
        struct pod_entry *e = m[i];
        e->sel[e->nsel++] = t->id;
        if (e->hidden) {
            e->ni->hidden_sel++; /* counted when it is unhidden */
            continue;
        }
        ks__ni_sel_count(e->ni, t->id, 1);
        touch(c, e->ni);
        touched = true;
    }
    /*
     * The next version rebuilds every touched record; untouched ones hold no pod it
     * matches. The published records do too when nothing changed since they were (a pod
     * it matched may have left a node that is now dirty): then no snapshot lacks a count.
     */
    t->ready = touched || c->ndirty || c->order_dirty ? c->generation + 1 : 0;
    free(m);
    return 0;
nomem:
    free(m);
    return -ENOMEM;
}

int ks_cache_selector_track(struct ks_cache *c, uint32_t ns, const struct ks_label_selector *sel,
                            uint32_t *id, uint64_t *ready)
{
    if (!sel || sel->nreqs == 0)
        return -EINVAL;
    uint64_t hash = ks__sel_hash(ns, sel);
    int rc = 0;
    cache_lock(c);
    struct tracked_sel *t = ks__sel_find(&c->sels, ns, sel, hash);
    if (!t) {
        t = ks__sel_new(ns, sel, hash);
        if (!t || track(c, t) < 0) {
            free(t);
            t = NULL;
            rc = -ENOMEM;
        } else {
            rc = t->ready == 0; /* new, and no record holds a pod it matches */
        }
    }
    if (t) {
        *id = t->id;
        *ready = t->ready;
    }
    cache_unlock(c);
    return rc;
}

void ks_cache_selector_stats(struct ks_cache *c, uint32_t *nselectors, size_t *bytes)
{
    cache_lock(c);
    size_t b = c->sels.bytes + ks__label_index_bytes(&c->labels);
    for (uint32_t i = 0; c->nbuckets && i <= c->nmask; i++) {
        for (const struct node_info *ni = c->nbuckets[i]; ni; ni = ni->hnext)
            b += (size_t)ni->cap_selc * sizeof(*ni->selc);
    }
    for (uint32_t i = 0; i <= c->pods.mask; i++) {
        for (const struct pod_entry *e = c->pods.buckets[i]; e; e = e->hnext)
            b += sizeof(e->sel_inline) +
                 (e->sel != e->sel_inline ? (size_t)e->cap_sel * sizeof(*e->sel) : 0) +
                 (size_t)e->pod->meta.labels.n * sizeof(*e->label_pos);
    }
    *nselectors = c->sels.n;
    *bytes = b;
    cache_unlock(c);
}

void ks_cache_counts(struct ks_cache *c, uint32_t *nodes, uint32_t *pods)
{
    ks_cache_sizes(c, nodes, pods, NULL);
}

void ks_cache_sizes(struct ks_cache *c, uint32_t *nodes, uint32_t *pods, uint32_t *assumed)
{
    cache_lock(c);
    if (nodes)
        *nodes = c->nnode_infos;
    if (pods)
        *pods = c->pods.n;
    if (assumed)
        *assumed = c->nassumed;
    cache_unlock(c);
}

/* ---- snapshot ---------------------------------------------------------------------------------- */

int ks_cache_refresh(struct ks_cache *c)
{
    struct snap_version *retired;
    cache_lock(c);
    int rc = ks__snapshot_refresh(c, &retired);
    ks__label_index_sweep(&c->labels);
    cache_unlock(c);
    ks__snapshot_retire(retired); /* outside the lock: ks_rcu_call takes its own */
    return rc;
}

const struct ks_snapshot *ks_cache_snapshot(struct ks_cache *c)
{
    return ks_rcu_deref(c->published);
}
