/*
 * selector_counts.c - the label selectors whose matching pods the cache counts per node.
 *
 * PodTopologySpread reads, for each scored node, how many pods of the incoming pod's
 * namespace a constraint's selector matches (countPodsMatchSelector), and its PreFilter and
 * PreScore sum the same counts per topology domain. Counted per cycle, that is a walk over
 * every pod of every node the cycle looks at. The cache keeps the counts instead: a selector
 * is tracked from its first ks_cache_selector_track() on (cache.c); every pod entry lists
 * the tracked selectors its pod matches, found when the entry is attached
 * (ks__sel_match_pod, below); the node_info keeps per selector the count of its visible
 * pods (node_info.c), and the node's record carries them (ks_node_snap.sel_counts).
 *
 * Matching a pod does not try every selector: each is filed under one of its requirements
 * (an In with one value: the value; else an Exists: the key alone), so a pod looks up its
 * own labels and tries only the selectors filed under them, plus the few with neither.
 *
 * Context: under the cache lock.
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xd6e8feb86659fd93ull;
    return h ^ (h >> 32);
}

uint64_t ks__sel_hash(uint32_t ns, const struct ks_label_selector *sel)
{
    uint64_t h = mix(0xcbf29ce484222325ull, ns);
    h = mix(h, sel->nreqs);
    for (uint32_t i = 0; i < sel->nreqs; i++) {
        const struct ks_requirement *q = &sel->reqs[i];
        h = mix(mix(mix(h, q->key), (uint64_t)q->op), q->nvalues);
        for (uint32_t k = 0; k < q->nvalues; k++)
            h = mix(h, q->values[k]);
        h = mix(h, (uint64_t)q->number);
    }
    return h;
}

static bool sel_equal(const struct ks_label_selector *a, const struct ks_label_selector *b)
{
    if (a->nreqs != b->nreqs)
        return false;
    for (uint32_t i = 0; i < a->nreqs; i++) {
        const struct ks_requirement *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->key != y->key || x->op != y->op || x->nvalues != y->nvalues || x->number != y->number ||
            (x->nvalues && memcmp(x->values, y->values, x->nvalues * sizeof(*x->values))))
            return false;
    }
    return true;
}

static uint64_t key_hash(uint32_t ns, uint32_t key, uint32_t value)
{
    return mix(mix(mix(0x84222325cbf29ce4ull, ns), key), value);
}

struct tracked_sel *ks__sel_find(const struct sel_registry *r, uint32_t ns,
                                 const struct ks_label_selector *sel, uint64_t hash)
{
    if (!r->hbuckets)
        return NULL;
    for (struct tracked_sel *t = r->hbuckets[hash & r->hmask]; t; t = t->hnext) {
        if (t->hash == hash && t->ns == ns && sel_equal(&t->sel, sel))
            return t;
    }
    return NULL;
}

/* The requirement @t is filed under: an In with one value, else an Exists; none leaves key KS_ID_NONE. */
static void file_under(struct tracked_sel *t)
{
    t->key = t->value = KS_ID_NONE;
    for (uint32_t i = 0; i < t->sel.nreqs; i++) {
        const struct ks_requirement *q = &t->sel.reqs[i];
        if (q->op == KS_OP_IN && q->nvalues == 1) {
            t->key = q->key;
            t->value = q->values[0];
            return;
        }
    }
    for (uint32_t i = 0; i < t->sel.nreqs; i++) {
        if (t->sel.reqs[i].op == KS_OP_EXISTS) {
            t->key = t->sel.reqs[i].key;
            return;
        }
    }
}

struct tracked_sel *ks__sel_new(uint32_t ns, const struct ks_label_selector *sel, uint64_t hash)
{
    size_t nvalues = 0;
    for (uint32_t i = 0; i < sel->nreqs; i++)
        nvalues += sel->reqs[i].nvalues;
    size_t size =
        sizeof(struct tracked_sel) + sel->nreqs * sizeof(struct ks_requirement) + nvalues * sizeof(uint32_t);
    struct tracked_sel *t = calloc(1, size);
    if (!t)
        return NULL;
    struct ks_requirement *reqs = (struct ks_requirement *)(t + 1);
    uint32_t *values = (uint32_t *)(reqs + sel->nreqs);
    for (uint32_t i = 0; i < sel->nreqs; i++) {
        reqs[i] = sel->reqs[i];
        reqs[i].values = values;
        if (sel->reqs[i].nvalues)
            memcpy(values, sel->reqs[i].values, sel->reqs[i].nvalues * sizeof(*values));
        values += sel->reqs[i].nvalues;
    }
    t->sel = (struct ks_label_selector){sel->nreqs, reqs};
    t->ns = ns;
    t->hash = hash;
    t->bytes = size;
    file_under(t);
    return t;
}

/* Rehash chains of @old (mask @omask) into @nb (mask @nmask) through the link at @link_offset. */
static void rehash(struct tracked_sel **old, uint32_t omask, struct tracked_sel **nb, uint32_t nmask,
                   size_t link_offset, uint64_t (*hash_of)(const struct tracked_sel *))
{
    for (uint32_t i = 0; old && i <= omask; i++) {
        for (struct tracked_sel *t = old[i], *next; t; t = next) {
            struct tracked_sel **link = (struct tracked_sel **)((char *)t + link_offset);
            next = *link;
            struct tracked_sel **head = &nb[hash_of(t) & nmask];
            *link = *head;
            *head = t;
        }
    }
}

static uint64_t content_hash_of(const struct tracked_sel *t)
{
    return t->hash;
}

static uint64_t key_hash_of(const struct tracked_sel *t)
{
    return key_hash(t->ns, t->key, t->value);
}

/* Grow @buckets (mask *@mask) to hold @n chains at load 1; 0 or -ENOMEM (unchanged). */
static int table_grow(struct tracked_sel ***buckets, uint32_t *mask, uint32_t n, size_t link_offset,
                      uint64_t (*hash_of)(const struct tracked_sel *), size_t *bytes)
{
    if (*buckets && n <= *mask + 1)
        return 0;
    uint32_t cap = *buckets ? (*mask + 1) * 2 : 64;
    while (cap < n)
        cap *= 2;
    struct tracked_sel **nb = calloc(cap, sizeof(*nb));
    if (!nb)
        return -ENOMEM;
    rehash(*buckets, *mask, nb, cap - 1, link_offset, hash_of);
    if (*buckets)
        *bytes -= (size_t)(*mask + 1) * sizeof(*nb);
    *bytes += (size_t)cap * sizeof(*nb);
    free(*buckets);
    *buckets = nb;
    *mask = cap - 1;
    return 0;
}

int ks__sel_reserve(struct sel_registry *r)
{
    uint32_t need = r->n + 1;
    size_t before = (size_t)r->cap * sizeof(*r->by_id);
    if (KS_RESERVE(r->by_id, r->cap, need))
        return -ENOMEM;
    r->bytes += (size_t)r->cap * sizeof(*r->by_id) - before;
    if (table_grow(&r->hbuckets, &r->hmask, need, offsetof(struct tracked_sel, hnext), content_hash_of,
                   &r->bytes) ||
        table_grow(&r->kbuckets, &r->kmask, need, offsetof(struct tracked_sel, knext), key_hash_of,
                   &r->bytes))
        return -ENOMEM;
    return 0;
}

void ks__sel_insert(struct sel_registry *r, struct tracked_sel *t)
{
    t->id = r->n;
    r->by_id[r->n++] = t;
    r->bytes += t->bytes;
    struct tracked_sel **h = &r->hbuckets[t->hash & r->hmask];
    t->hnext = *h;
    *h = t;
    if (t->key == KS_ID_NONE) {
        t->knext = r->scan;
        r->scan = t;
        return;
    }
    struct tracked_sel **k = &r->kbuckets[key_hash(t->ns, t->key, t->value) & r->kmask];
    t->knext = *k;
    *k = t;
}

bool ks__sel_matches(const struct tracked_sel *t, const struct ks_pod *pod)
{
    /* terminating pods do not count (countPodsMatchSelector) */
    return pod->meta.namespace_id == t->ns && pod->meta.deletion_time == KS_TIME_NONE &&
           ks_label_selector_matches(&t->sel, &pod->meta.labels);
}

int ks__pod_entry_sel_reserve(struct pod_entry *e, uint32_t more)
{
    uint32_t need = e->nsel + more;
    if (need <= e->cap_sel)
        return 0;
    if (need <= 2 && !e->sel) {
        e->sel = e->sel_inline;
        e->cap_sel = 2;
        return 0;
    }
    uint32_t cap = e->cap_sel ? e->cap_sel * 2 : 4;
    while (cap < need)
        cap *= 2;
    uint32_t *v = malloc(cap * sizeof(*v));
    if (!v)
        return -ENOMEM;
    if (e->nsel)
        memcpy(v, e->sel, e->nsel * sizeof(*v));
    if (e->sel != e->sel_inline)
        free(e->sel);
    e->sel = v;
    e->cap_sel = cap;
    return 0;
}

/* Append @t's id to @e's list: a selector is filed under one requirement, so a pod finds it once. */
static int entry_add(struct pod_entry *e, const struct tracked_sel *t)
{
    if (ks__pod_entry_sel_reserve(e, 1) < 0)
        return -ENOMEM;
    e->sel[e->nsel++] = t->id;
    return 0;
}

/* Try the selectors of chain @t (filed under key @key, value @value) on @e's pod. */
static int match_chain(const struct tracked_sel *t, uint32_t ns, uint32_t key, uint32_t value,
                       struct pod_entry *e)
{
    for (; t; t = t->knext) {
        if (t->ns == ns && t->key == key && t->value == value && ks__sel_matches(t, e->pod) &&
            entry_add(e, t) < 0)
            return -ENOMEM;
    }
    return 0;
}

int ks__sel_match_pod(const struct sel_registry *r, struct pod_entry *e)
{
    const struct ks_pod *pod = e->pod;
    if (r->n == 0 || pod->meta.deletion_time != KS_TIME_NONE)
        return 0;
    uint32_t ns = pod->meta.namespace_id;
    const struct ks_labels *labels = &pod->meta.labels;
    for (uint32_t i = 0; i < labels->n; i++) {
        uint32_t key = labels->items[i].key, value = labels->items[i].value;
        if (match_chain(r->kbuckets[key_hash(ns, key, value) & r->kmask], ns, key, value, e) < 0 ||
            match_chain(r->kbuckets[key_hash(ns, key, KS_ID_NONE) & r->kmask], ns, key, KS_ID_NONE, e) < 0)
            goto nomem;
    }
    for (const struct tracked_sel *t = r->scan; t; t = t->knext) {
        if (ks__sel_matches(t, pod) && entry_add(e, t) < 0)
            goto nomem;
    }
    return 0;
nomem:
    e->nsel = 0;
    return -ENOMEM;
}

void ks__pod_entry_free(struct pod_entry *e)
{
    if (!e)
        return;
    if (e->sel != e->sel_inline)
        free(e->sel);
    free(e);
}

void ks__sel_registry_destroy(struct sel_registry *r)
{
    for (uint32_t i = 0; i < r->n; i++)
        free(r->by_id[i]);
    free(r->by_id);
    free(r->hbuckets);
    free(r->kbuckets);
    memset(r, 0, sizeof(*r));
}
