/*
 * verdict.c - the allocator's verdicts kept per poolset: whether a set of claims can be
 * allocated over a node's precomputed poolset, remembered for the claim sets of the same
 * shape while the devices of the poolset's pools hold what they held.
 *
 * Why it is exact. Over a precomputed poolset (one the catalog built, not gathered for one
 * node) whose devices do not select nodes themselves, ks_dra_allocate_prepared()'s outcome
 * is a function of the catalog, the claims' specs and what the allocated state holds of
 * the devices of the poolset's pools (the devices a search tries, and those sharing their
 * counters): the node object is not read, and the claims' metadata only reaches error
 * texts and results, which are never remembered. So:
 *   - the shape of a claim set is its specs (requests, subrequests, constraints; not the
 *     configs, which only results carry) written as a canonical byte string, numbered once
 *     per catalog in an insert-only lock-free table: two sets of one shape are equal spec
 *     for spec;
 *   - a bound allocated state (allocated.c) counts every change to a device per catalog pool
 *     (pool_version); the sum over a poolset's pools only grows, so an unchanged sum means
 *     an unchanged state for that poolset;
 *   - a remembered verdict is one 64-bit word per (poolset, shape slot) in the bound state:
 *     the shape id, the sum and the outcome (allocated, or unsuitable with no message or
 *     "invalid resource pools were encountered", which the poolset alone decides). Threads
 *     filtering different nodes of one poolset race on the word; each store is a whole,
 *     correct verdict.
 * Errors and calls that build results are never answered from here.
 *
 * Context: any thread; lock-free; the shape table allocates once per new shape.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dra_internal.h"

/* A shape: its canonical key and its number. */
struct dra_shape {
    uint64_t hash;
    uint32_t id;
    size_t len;
    unsigned char key[];
};

/* ---- the canonical key -------------------------------------------------------------------------- */

struct key {
    unsigned char *b;
    size_t n, cap;
    bool oom;
};

static void put(struct key *k, const void *p, size_t n)
{
    if (k->oom)
        return;
    if (k->n + n > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->n + n)
            cap *= 2;
        unsigned char *b = realloc(k->b, cap);
        if (!b) {
            k->oom = true;
            return;
        }
        k->b = b;
        k->cap = cap;
    }
    memcpy(k->b + k->n, p, n);
    k->n += n;
}

static void put_u64(struct key *k, uint64_t v)
{
    put(k, &v, sizeof(v));
}

/* A string with its length; NULL differs from "". */
static void put_str(struct key *k, const char *s)
{
    size_t n = s ? strlen(s) : SIZE_MAX;
    put_u64(k, n);
    if (s)
        put(k, s, n);
}

static void put_quantity(struct key *k, const struct ks_quantity *q)
{
    put_u64(k, q->coef_lo);
    put_u64(k, q->coef_hi);
    put_u64(k, (uint64_t)q->exp);
    put_u64(k, (uint64_t)(int64_t)q->sign << 16 | (uint64_t)q->fmt << 8 | q->huge);
}

static void put_spec(struct key *k, const struct ks_device_request_spec *sp)
{
    put_str(k, sp->name);
    put_str(k, sp->device_class_name);
    put_u64(k, sp->nselectors);
    for (uint32_t i = 0; i < sp->nselectors; i++)
        put_str(k, sp->selectors[i]);
    put_u64(k, sp->mode);
    put_str(k, sp->mode_text);
    put_u64(k, (uint64_t)sp->count);
    put_u64(k, (uint64_t)sp->has_admin_access << 1 | sp->admin_access);
    put_u64(k, sp->ntolerations);
    for (uint32_t i = 0; i < sp->ntolerations; i++) {
        const struct ks_device_toleration *t = &sp->tolerations[i];
        put_u64(k, (uint64_t)t->key << 32 | t->value);
        put_u64(k, (uint64_t)t->effect << 2 | (uint64_t)t->exists << 1 | t->has_effect);
        put_u64(k, (uint64_t)t->toleration_seconds);
    }
    put_u64(k, (uint64_t)sp->has_capacity << 32 | sp->ncapacity_requests);
    for (uint32_t i = 0; i < sp->ncapacity_requests; i++) {
        put_u64(k, sp->capacity_requests[i].name);
        put_quantity(k, &sp->capacity_requests[i].value);
    }
}

static void put_claim(struct key *k, const struct ks_device_claim *dc)
{
    put_u64(k, dc->nrequests);
    for (uint32_t r = 0; r < dc->nrequests; r++) {
        const struct ks_device_request *req = &dc->requests[r];
        put_str(k, req->name);
        put_u64(k, req->exact);
        if (req->exact)
            put_spec(k, &req->spec);
        put_u64(k, req->nsubrequests);
        for (uint32_t s = 0; s < req->nsubrequests; s++)
            put_spec(k, &req->subrequests[s]);
    }
    put_u64(k, dc->nconstraints);
    for (uint32_t c = 0; c < dc->nconstraints; c++) {
        const struct ks_device_constraint *con = &dc->constraints[c];
        put_u64(k, (uint64_t)con->match_attribute << 32 | con->distinct_attribute);
        put_u64(k, con->nrequests);
        for (uint32_t i = 0; i < con->nrequests; i++)
            put_str(k, con->requests[i]);
    }
}

/* ---- the shape table ------------------------------------------------------------------------------ */

int ks__dra_shapes_init(struct dra_shape_table *t)
{
    t->mask = 1023;
    t->slots = calloc(t->mask + 1, sizeof(*t->slots));
    return t->slots ? 0 : -ENOMEM;
}

void ks__dra_shapes_free(struct dra_shape_table *t)
{
    if (!t->slots)
        return;
    for (uint32_t i = 0; i <= t->mask; i++)
        free(atomic_load_explicit(&t->slots[i], memory_order_relaxed));
    free(t->slots);
    t->slots = NULL;
}

static bool same(const struct dra_shape *s, uint64_t h, const struct key *k)
{
    return s->hash == h && s->len == k->n && memcmp(s->key, k->b, k->n) == 0;
}

/* The id of @k's shape, numbered when new; 0 when the table is full. */
static uint32_t shape_id(const struct ks_dra_catalog *cat, const struct key *k)
{
    struct dra_shape_table *t = (struct dra_shape_table *)&cat->shapes;
    uint64_t h = ks__dra_expr_hash((const char *)k->b, k->n);
    uint32_t i = (uint32_t)h & t->mask;
    struct dra_shape *mine = NULL;
    for (uint32_t probes = 0; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
        /* acquire: a shape seen here was written completely before it was published */
        struct dra_shape *s = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (s && same(s, h, k)) {
            free(mine);
            return s->id;
        }
        if (s)
            continue;
        if (!mine) {
            uint32_t id = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed) + 1;
            if (id > DRA_SHAPE_MAX || !(mine = malloc(sizeof(*mine) + k->n)))
                return 0;
            mine->hash = h;
            mine->id = id;
            mine->len = k->n;
            memcpy(mine->key, k->b, k->n);
        }
        /* release on success: publishes the key; acquire on failure: reads the winner's */
        if (atomic_compare_exchange_strong_explicit(&t->slots[i], &s, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
            return mine->id;
        if (same(s, h, k)) {
            free(mine);
            return s->id;
        }
    }
    free(mine);
    return 0;
}

int ks__dra_claims_shape(const struct ks_dra_catalog *cat, const struct ks_resource_claim *const *claims,
                         uint32_t nclaims, uint32_t *shape)
{
    struct key k = {0};
    put_u64(&k, nclaims);
    for (uint32_t i = 0; i < nclaims; i++)
        put_claim(&k, &claims[i]->spec);
    *shape = k.oom ? 0 : shape_id(cat, &k);
    free(k.b);
    return k.oom ? -ENOMEM : 0;
}

/* ---- remembered verdicts -------------------------------------------------------------------------- */

enum { VERSION_BITS = 42, VERDICT_SHIFT = 42, SHAPE_SHIFT = 44 };

static uint64_t word(uint32_t shape, uint64_t version, uint64_t verdict)
{
    return (uint64_t)shape << SHAPE_SHIFT | verdict << VERDICT_SHIFT |
           (version & ((UINT64_C(1) << VERSION_BITS) - 1));
}

_Atomic uint64_t *ks__dra_verdict_slot(const struct ks_dra_allocated *a, const struct ks_dra_claims *p,
                                       const struct dra_poolset *ps, uint64_t *key)
{
    uint64_t version;
    if (!p->shape || !ps->memo_ok)
        return NULL;
    _Atomic uint64_t *slots = ks__dra_allocated_memo(a, p->cat, ps, &version);
    if (!slots)
        return NULL;
    *key = word(p->shape, version, 0);
    return &slots[p->shape % DRA_VERDICT_SLOTS];
}

int ks__dra_verdict_get(_Atomic uint64_t *slot, uint64_t key)
{
    uint64_t w = atomic_load_explicit(slot, memory_order_relaxed);
    uint64_t verdict = w >> VERDICT_SHIFT & 3;
    if (!verdict || (w & ~(UINT64_C(3) << VERDICT_SHIFT)) != key)
        return -1;
    return verdict == 1 ? KS_DRA_ALLOCATED : KS_DRA_UNSUITABLE;
}

void ks__dra_verdict_put(_Atomic uint64_t *slot, uint64_t key, int outcome)
{
    uint64_t verdict = outcome == KS_DRA_ALLOCATED ? 1 : 2;
    atomic_store_explicit(slot, key | verdict << VERDICT_SHIFT, memory_order_relaxed);
}
