/*
 * helper_dra_claims.c - the DynamicResources plugin's claim tracker (see
 * ksched/plugin_helpers_dra.h).
 *
 * Mirrors the claim tracker of pkg/scheduler/framework/plugins/dynamicresources
 * (dra_manager.go: the assume cache of ResourceClaims, inFlightAllocations,
 * ListAllAllocatedDevices / GatherAllocatedState) and assumecache.AssumeCache's rule for an
 * assumed object: it stays until the informer delivers a version at least as new (by
 * resourceVersion). In process (`ksched schedule`, bench) nothing newer ever comes: what
 * PreBind wrote stays the claim's state.
 *
 * Invariants. Every entry's effective allocation (its overlay's, else its object's) is
 * counted once in `allocated`, through a copy the entry owns (`counted`), so that it can be
 * uncounted after the object it came from was freed; every in-flight allocation is counted
 * once more through its own copy. Entries are changed only by the scheduling thread, under
 * `lock`; binder threads append to `ops`, also under `lock`, and ks_dra_tracker_sync()
 * applies them in order. The catalog and `allocated` are read by Filter workers without the
 * lock: only the scheduling thread changes them, and never while workers run.
 */
#include "ksched/plugin_helpers_dra.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/dra_extended.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What this scheduler wrote of a claim and the object has not caught up with yet. */
struct overlay {
    struct ks_arena arena;
    const struct ks_allocation *allocation; /* NULL: not allocated */
    uint32_t nreserved;
    const char **reserved; /* pod uids */
    int64_t rv;            /* resourceVersion of the write; -1: written in process */
};

struct entry {
    uint32_t key;                          /* interned "ns/name" */
    const struct ks_resource_claim *obj;   /* NULL: deleted while an allocation is in flight */
    struct ks_arena own_arena;             /* holds obj when `own` */
    bool own;                              /* obj is the scheduler's: a special claim no object has yet */
    bool gone;                             /* deleted by the scheduler: no lookup finds it, nothing counts */
    uint32_t owner;                        /* a special claim's controlling pod uid, interned (owner index) */
    struct overlay *ov;                    /* NULL: the object as it is */
    struct ks_arena counted_arena;         /* holds `counted` */
    const struct ks_allocation *counted;   /* the effective allocation counted in `allocated`, NULL: none */
    struct ks_arena flight_arena;          /* holds `in_flight` */
    const struct ks_allocation *in_flight; /* Reserve's allocation being written, NULL: none */
    bool seen;                             /* marked by the object scan of a sync */
};

enum op_kind { OP_WRITTEN, OP_UNWRITTEN, OP_UNRESERVED, OP_CREATED, OP_DELETED };

struct op {
    struct op *next;
    enum op_kind kind;
    uint32_t key;
    struct ks_arena arena; /* holds the copies below and the op itself */
    const struct ks_allocation *allocation;
    const char *pod_uid;
    int64_t rv;
    const struct ks_resource_claim *claim; /* OP_CREATED: the claim as created */
};

struct ks_dra_tracker {
    const struct ks_objects *objs;
    bool in_process; /* no API server: what PreBind and Unreserve do is the claims' state */
    struct ks_dra_features features;
    uint64_t gen_claims, gen_classes, gen_slices; /* objs->gen at the last sync */
    _Atomic uint64_t seen_claims;                 /* gen_claims for other threads */
    bool synced;

    struct ks_dra_catalog *cat;
    struct ks_dra_allocated *allocated;

    struct ks_mutex lock; /* KS_LOCK_DYNAMIC_RESOURCES: entries, ops */
    struct entry **entries;
    uint32_t nentries, cap;
    uint32_t *slots; /* open addressing: entry index + 1, 0 empty */
    uint32_t nslots; /* power of two */
    struct op *ops, **ops_tail;

    /* special claims by their controlling pod's uid: (owner, claim key) pairs, owner 0 empty */
    uint32_t *owners;
    uint32_t owner_mask, nowners;
};

/* ---- allocation copies -------------------------------------------------------------------------- */

static const char **copy_strings(struct ks_arena *a, const char *const *s, uint32_t n, bool *ok)
{
    if (!n)
        return NULL;
    const char **out = ks_arena_calloc(a, n, sizeof(*out));
    if (!out) {
        *ok = false;
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        out[i] = ks_arena_strdup(a, s[i]);
        *ok = *ok && (out[i] || !s[i]);
    }
    return out;
}

static struct ks_node_selector *copy_selector(struct ks_arena *a, const struct ks_node_selector *src,
                                              bool *ok)
{
    struct ks_node_selector *sel;

    if (!src)
        return NULL;
    sel = ks_arena_alloc(a, sizeof(*sel));
    if (!sel || (src->nterms && !(sel->terms = ks_arena_calloc(a, src->nterms, sizeof(*sel->terms))))) {
        *ok = false;
        return NULL;
    }
    sel->nterms = src->nterms;
    for (uint32_t i = 0; i < src->nterms; i++) {
        const struct ks_node_selector_term *t = &src->terms[i];
        struct ks_node_selector_term *d = &sel->terms[i];
        struct {
            uint32_t n;
            const struct ks_requirement *from;
            struct ks_requirement **to;
        } lists[2] = {{t->nexprs, t->exprs, &d->exprs}, {t->nfields, t->fields, &d->fields}};
        d->nexprs = t->nexprs;
        d->nfields = t->nfields;
        for (int l = 0; l < 2; l++) {
            if (!lists[l].n)
                continue;
            struct ks_requirement *r = ks_arena_calloc(a, lists[l].n, sizeof(*r));
            if (!r) {
                *ok = false;
                return NULL;
            }
            memcpy(r, lists[l].from, lists[l].n * sizeof(*r));
            for (uint32_t k = 0; k < lists[l].n; k++) {
                if (!r[k].nvalues)
                    continue;
                uint32_t *v = ks_arena_calloc(a, r[k].nvalues, sizeof(*v));
                if (!v) {
                    *ok = false;
                    return NULL;
                }
                memcpy(v, r[k].values, r[k].nvalues * sizeof(*v));
                r[k].values = v;
            }
            *lists[l].to = r;
        }
    }
    return sel;
}

static void *copy_array(struct ks_arena *a, const void *src, uint32_t n, size_t size, bool *ok)
{
    if (!n)
        return NULL;
    void *d = ks_arena_calloc(a, n, size);
    if (!d) {
        *ok = false;
        return NULL;
    }
    memcpy(d, src, n * size);
    return d;
}

struct ks_allocation *ks_dra_allocation_copy(struct ks_arena *a, const struct ks_allocation *src)
{
    struct ks_allocation *d = ks_arena_alloc(a, sizeof(*d));
    bool ok = d != NULL;

    if (!ok)
        return NULL;
    *d = *src;
    struct ks_device_result *res = copy_array(a, src->results, src->nresults, sizeof(*res), &ok);
    for (uint32_t i = 0; ok && i < src->nresults; i++) {
        const struct ks_device_result *r = &src->results[i];
        res[i].request = ks_arena_strdup(a, r->request);
        res[i].share_id = ks_arena_strdup(a, r->share_id);
        res[i].tolerations = copy_array(a, r->tolerations, r->ntolerations, sizeof(*r->tolerations), &ok);
        res[i].consumed = copy_array(a, r->consumed, r->nconsumed, sizeof(*r->consumed), &ok);
        res[i].binding_conditions = copy_strings(a, r->binding_conditions, r->nbinding_conditions, &ok);
        res[i].binding_failure_conditions =
            copy_strings(a, r->binding_failure_conditions, r->nbinding_failure_conditions, &ok);
        ok = ok && res[i].request && (res[i].share_id || !r->share_id);
    }
    d->results = res;
    struct ks_allocation_config *cfg = copy_array(a, src->config, src->nconfig, sizeof(*cfg), &ok);
    for (uint32_t i = 0; ok && i < src->nconfig; i++) {
        const struct ks_allocation_config *c = &src->config[i];
        cfg[i].requests = copy_strings(a, c->requests, c->nrequests, &ok);
        cfg[i].opaque.driver = ks_arena_strdup(a, c->opaque.driver);
        cfg[i].opaque.parameters = ks_arena_strdup(a, c->opaque.parameters);
        ok = ok && (cfg[i].opaque.driver || !c->opaque.driver) &&
             (cfg[i].opaque.parameters || !c->opaque.parameters);
    }
    d->config = cfg;
    d->node_selector = copy_selector(a, src->node_selector, &ok);
    return ok ? d : NULL;
}

/* ---- the table ---------------------------------------------------------------------------------- */

static uint32_t *slot_of(const struct ks_dra_tracker *t, uint32_t key)
{
    uint32_t mask = t->nslots - 1;
    for (uint32_t h = ks_id_hash(key) & mask;; h = (h + 1) & mask) {
        uint32_t *s = &t->slots[h];
        if (!*s || t->entries[*s - 1]->key == key)
            return s;
    }
}

static struct entry *find(const struct ks_dra_tracker *t, uint32_t key)
{
    if (!t->nslots || key == KS_ID_NONE)
        return NULL;
    uint32_t s = *slot_of(t, key);
    return s ? t->entries[s - 1] : NULL;
}

static int rehash(struct ks_dra_tracker *t, uint32_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    for (uint32_t i = 0; i < t->nentries; i++)
        *slot_of(t, t->entries[i]->key) = i + 1;
    return 0;
}

static struct entry *insert(struct ks_dra_tracker *t, uint32_t key)
{
    if ((t->nentries + 1) * 2 > t->nslots && rehash(t, t->nslots ? t->nslots * 2 : 64) < 0)
        return NULL;
    if (t->nentries == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        struct entry **v = realloc(t->entries, cap * sizeof(*v));
        if (!v)
            return NULL;
        t->entries = v;
        t->cap = cap;
    }
    struct entry *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->key = key;
    t->entries[t->nentries++] = e;
    *slot_of(t, key) = t->nentries;
    return e;
}

static void free_overlay(struct overlay *ov)
{
    if (ov) {
        ks_arena_destroy(&ov->arena);
        free(ov);
    }
}

static void end_flight(struct ks_dra_tracker *t, struct entry *e)
{
    if (!e->in_flight)
        return;
    ks_dra_allocated_remove(t->allocated, e->in_flight);
    e->in_flight = NULL;
    ks_arena_destroy(&e->flight_arena);
}

/* Empty slot @hole of the probe table, moving later members of its chain back (no tombstones). */
static void unslot(struct ks_dra_tracker *t, uint32_t hole)
{
    uint32_t mask = t->nslots - 1;

    t->slots[hole] = 0;
    for (uint32_t j = (hole + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
        uint32_t home = ks_id_hash(t->entries[t->slots[j] - 1]->key) & mask;
        /* the member at j may move to the hole when its home is not within (hole, j] */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            t->slots[hole] = t->slots[j];
            t->slots[j] = 0;
            hole = j;
        }
    }
}

/* ---- special claims by owner ------------------------------------------------------------------------ */

/* The controlling pod uid (interned) of special claim @c, 0 when it is none (ks_dra_is_extended_claim). */
static uint32_t owner_of(const struct ks_resource_claim *c)
{
    if (!c || strcmp(c->meta.name, KS_DRA_SPECIAL_CLAIM_NAME) == 0)
        return 0;
    const struct ks_owner_ref *o = ks_dra_extended_claim_controller(c);
    uint32_t id = o ? ks_intern(o->uid) : KS_ID_NONE;
    return id == KS_ID_NONE ? 0 : id;
}

static uint32_t owner_home(const struct ks_dra_tracker *t, uint32_t owner)
{
    return ks_id_hash(owner) & t->owner_mask;
}

/* Remove pair (@owner, @key), moving later members of its chain back (no tombstones). */
static void owner_remove(struct ks_dra_tracker *t, uint32_t owner, uint32_t key)
{
    uint32_t m = t->owner_mask, h;

    if (!t->owners)
        return;
    for (h = owner_home(t, owner); t->owners[h * 2]; h = (h + 1) & m) {
        if (t->owners[h * 2] == owner && t->owners[h * 2 + 1] == key)
            break;
    }
    if (!t->owners[h * 2])
        return;
    t->owners[h * 2] = 0;
    t->nowners--;
    for (uint32_t j = (h + 1) & m; t->owners[j * 2]; j = (j + 1) & m) {
        uint32_t home = owner_home(t, t->owners[j * 2]);
        if (((j - home) & m) >= ((j - h) & m)) {
            t->owners[h * 2] = t->owners[j * 2];
            t->owners[h * 2 + 1] = t->owners[j * 2 + 1];
            t->owners[j * 2] = 0;
            h = j;
        }
    }
}

static int owner_add(struct ks_dra_tracker *t, uint32_t owner, uint32_t key)
{
    if ((t->nowners + 1) * 2 > (t->owners ? t->owner_mask + 1 : 0)) {
        uint32_t *old = t->owners, omask = t->owner_mask, cap = old ? (omask + 1) * 2 : 64;
        uint32_t *fresh = calloc((size_t)cap * 2, sizeof(*fresh));
        if (!fresh)
            return -ENOMEM;
        t->owners = fresh;
        t->owner_mask = cap - 1;
        for (uint32_t i = 0; old && i <= omask; i++) {
            if (!old[i * 2])
                continue;
            uint32_t h = owner_home(t, old[i * 2]);
            while (t->owners[h * 2])
                h = (h + 1) & t->owner_mask;
            t->owners[h * 2] = old[i * 2];
            t->owners[h * 2 + 1] = old[i * 2 + 1];
        }
        free(old);
    }
    uint32_t h = owner_home(t, owner);
    while (t->owners[h * 2])
        h = (h + 1) & t->owner_mask;
    t->owners[h * 2] = owner;
    t->owners[h * 2 + 1] = key;
    t->nowners++;
    return 0;
}

/* Index @e by the owner of its claim as it is now (none when gone or without an object). */
static int owner_update(struct ks_dra_tracker *t, struct entry *e)
{
    uint32_t now = e->gone ? 0 : owner_of(e->obj);

    if (now == e->owner)
        return 0;
    if (e->owner)
        owner_remove(t, e->owner, e->key);
    e->owner = 0;
    if (now && owner_add(t, now, e->key) < 0)
        return -ENOMEM;
    e->owner = now;
    return 0;
}

/* Remove entry @e (its allocations uncounted) from the table. */
static void drop(struct ks_dra_tracker *t, struct entry *e)
{
    uint32_t *s = slot_of(t, e->key), i = *s - 1;

    if (e->counted)
        ks_dra_allocated_remove(t->allocated, e->counted);
    if (e->owner)
        owner_remove(t, e->owner, e->key);
    end_flight(t, e);
    ks_arena_destroy(&e->counted_arena);
    ks_arena_destroy(&e->own_arena);
    free_overlay(e->ov);
    free(e);
    unslot(t, (uint32_t)(s - t->slots));
    if (i != --t->nentries) {
        /* the last entry moves into the freed index */
        t->entries[i] = t->entries[t->nentries];
        *slot_of(t, t->entries[i]->key) = i + 1;
    }
}

/* ---- effective state ----------------------------------------------------------------------------- */

static const struct ks_allocation *effective_allocation(const struct entry *e)
{
    if (e->gone)
        return NULL;
    if (e->ov)
        return e->ov->allocation;
    return e->obj ? e->obj->allocation : NULL;
}

/* Count @e's effective allocation instead of what was counted. 0 or -ENOMEM. */
static int recount(struct ks_dra_tracker *t, struct entry *e)
{
    const struct ks_allocation *now = effective_allocation(e);

    if (e->counted) {
        ks_dra_allocated_remove(t->allocated, e->counted);
        e->counted = NULL;
        ks_arena_reset(&e->counted_arena);
    }
    if (!now)
        return 0;
    struct ks_allocation *copy = ks_dra_allocation_copy(&e->counted_arena, now);
    if (!copy)
        return -ENOMEM;
    if (ks_dra_allocated_add(t->allocated, copy) < 0)
        return -ENOMEM;
    e->counted = copy;
    return 0;
}

static int64_t parse_rv(const char *rv)
{
    char *end;
    long long v;

    if (!rv || !*rv)
        return -1;
    v = strtoll(rv, &end, 10);
    return *end ? -1 : v;
}

/*
 * The object caught up with the overlay (assumecache: a version at least as new). The
 * scheduler's own copy of a claim it created is no object of the server: it never does.
 */
static bool caught_up(const struct entry *e)
{
    if (!e->ov || !e->obj || e->ov->rv < 0 || e->own)
        return false;
    int64_t rv = parse_rv(e->obj->meta.resource_version);
    return rv >= 0 && rv >= e->ov->rv;
}

/* ---- sync ----------------------------------------------------------------------------------------- */

static int sync_claims(struct ks_dra_tracker *t)
{
    const struct ks_objvec *v = t->objs ? &t->objs->of[KS_KIND_RESOURCE_CLAIM] : NULL;
    int rc = 0;

    for (uint32_t i = 0; i < t->nentries; i++)
        t->entries[i]->seen = false;
    for (uint32_t i = 0; v && i < v->n; i++) {
        const struct ks_resource_claim *c = v->items[i];
        uint32_t key = ks_intern_ns_name(c->meta.namespace_id, c->meta.name);
        if (key == KS_ID_NONE)
            return -ENOMEM;
        struct entry *e = find(t, key);
        if (!e && !(e = insert(t, key)))
            return -ENOMEM;
        e->seen = true;
        if (e->obj == c)
            continue;
        e->obj = c;
        if (e->own) {
            /* the special claim the scheduler created arrived: the object stands for it now */
            ks_arena_destroy(&e->own_arena);
            e->own = false;
        }
        if ((rc = owner_update(t, e)) < 0)
            return rc;
        if (e->ov && (e->ov->rv < 0 || caught_up(e))) {
            /* a new object supersedes what was written in process, and a caught-up one an assumption */
            free_overlay(e->ov);
            e->ov = NULL;
        }
        if ((rc = recount(t, e)) < 0)
            return rc;
    }
    for (uint32_t i = t->nentries; i-- > 0;) {
        struct entry *e = t->entries[i];
        if (e->seen || e->own)
            continue;
        if (e->in_flight) {
            /* deleted while written: keep the in-flight devices until the binding ends */
            e->obj = NULL;
            free_overlay(e->ov);
            e->ov = NULL;
            if ((rc = owner_update(t, e)) < 0 || (rc = recount(t, e)) < 0)
                return rc;
            continue;
        }
        drop(t, e);
    }
    return 0;
}

static int sync_catalog(struct ks_dra_tracker *t)
{
    const struct ks_objvec *cv = t->objs ? &t->objs->of[KS_KIND_DEVICE_CLASS] : NULL;
    const struct ks_objvec *sv = t->objs ? &t->objs->of[KS_KIND_RESOURCE_SLICE] : NULL;
    struct ks_dra_catalog *cat;
    int rc = ks_dra_catalog_build(
        (const struct ks_device_class *const *)(cv ? cv->items : NULL), cv ? cv->n : 0,
        (const struct ks_resource_slice *const *)(sv ? sv->items : NULL), sv ? sv->n : 0, &t->features, &cat);
    if (rc < 0)
        return rc;
    if ((rc = ks_dra_allocated_bind(t->allocated, cat)) < 0) {
        ks_dra_catalog_destroy(cat);
        return rc;
    }
    ks_dra_catalog_destroy(t->cat);
    t->cat = cat;
    return 0;
}

/* A new overlay for @e holding the effective reservations, @alloc as its allocation, at @rv. */
static struct overlay *new_overlay(const struct entry *e, const struct ks_allocation *alloc, int64_t rv,
                                   uint32_t extra)
{
    struct overlay *ov = calloc(1, sizeof(*ov));
    const char *const *uids = NULL;
    uint32_t n = 0;

    if (!ov)
        return NULL;
    ov->rv = rv;
    if (e->ov) {
        uids = e->ov->reserved;
        n = e->ov->nreserved;
    }
    ov->reserved = ks_arena_calloc(&ov->arena, n + extra + 1, sizeof(*ov->reserved));
    if (!ov->reserved || (alloc && !(ov->allocation = ks_dra_allocation_copy(&ov->arena, alloc))))
        goto fail;
    if (e->ov) {
        for (uint32_t i = 0; i < n; i++)
            ov->reserved[ov->nreserved++] = uids[i];
    } else if (e->obj) {
        for (uint32_t i = 0; i < e->obj->nreserved; i++)
            ov->reserved[ov->nreserved++] = e->obj->reserved[i].uid;
    }
    for (uint32_t i = 0; i < ov->nreserved; i++) {
        if (!(ov->reserved[i] = ks_arena_strdup(&ov->arena, ov->reserved[i])))
            goto fail;
    }
    return ov;
fail:
    free_overlay(ov);
    return NULL;
}

/*
 * OP_CREATED: the in-memory entry @o->key gives way to the created claim's entry, which
 * holds its own copy of the claim until an object of it arrives (or has: then it is
 * assumed like a write). Returns the entry to write on, NULL with *rc set otherwise.
 */
static struct entry *created(struct ks_dra_tracker *t, const struct op *o, int *rc)
{
    struct entry *e = find(t, o->key);
    uint32_t key = ks_intern_ns_name(o->claim->meta.namespace_id, o->claim->meta.name);

    *rc = 0;
    if (e)
        drop(t, e);
    if (key == KS_ID_NONE) {
        *rc = -ENOMEM;
        return NULL;
    }
    if ((e = find(t, key)) && !e->own)
        return e;
    if (!e && !(e = insert(t, key))) {
        *rc = -ENOMEM;
        return NULL;
    }
    struct ks_resource_claim *copy;
    ks_arena_reset(&e->own_arena);
    if ((*rc = ks_dra_extended_claim_copy(&e->own_arena, o->claim, &copy)) < 0)
        return NULL;
    e->obj = copy;
    e->own = true;
    if ((*rc = owner_update(t, e)) < 0)
        return NULL;
    return e;
}

static int apply(struct ks_dra_tracker *t, const struct op *o)
{
    struct entry *e = find(t, o->key);
    struct overlay *ov;
    int rc;

    if (o->kind == OP_CREATED && !(e = created(t, o, &rc)))
        return rc;
    if (!e)
        return 0; /* the claim is gone: nothing to assume */
    end_flight(t, e);
    switch (o->kind) {
    case OP_UNWRITTEN:
        return 0;
    case OP_DELETED:
        if (e->own) {
            drop(t, e);
            return 0;
        }
        e->gone = true;
        return owner_update(t, e) < 0 ? -ENOMEM : recount(t, e);
    case OP_CREATED:
    case OP_WRITTEN:
        if (!e->obj)
            return 0;
        ov = new_overlay(e, o->allocation ? o->allocation : effective_allocation(e), o->rv, 1);
        if (!ov)
            return -ENOMEM;
        if (!(ov->reserved[ov->nreserved] = ks_arena_strdup(&ov->arena, o->pod_uid))) {
            free_overlay(ov);
            return -ENOMEM;
        }
        ov->nreserved++;
        break;
    case OP_UNRESERVED:
        if (!e->obj || !t->in_process)
            return 0; /* through a server the informer delivers the patched claim */
        ov = new_overlay(e, effective_allocation(e), -1, 0);
        if (!ov)
            return -ENOMEM;
        for (uint32_t i = 0; i < ov->nreserved; i++) {
            if (strcmp(ov->reserved[i], o->pod_uid) == 0)
                ov->reserved[i--] = ov->reserved[--ov->nreserved];
        }
        break;
    default:
        return 0;
    }
    free_overlay(e->ov);
    e->ov = ov;
    if (caught_up(e)) {
        free_overlay(e->ov);
        e->ov = NULL;
    }
    return recount(t, e);
}

int ks_dra_tracker_sync(struct ks_dra_tracker *t)
{
    const struct ks_objects *o = t->objs;
    int rc = 0;

    if (!t->synced || (o && (o->gen[KS_KIND_DEVICE_CLASS] != t->gen_classes ||
                             o->gen[KS_KIND_RESOURCE_SLICE] != t->gen_slices))) {
        if ((rc = sync_catalog(t)) < 0)
            return rc;
        t->gen_classes = o ? o->gen[KS_KIND_DEVICE_CLASS] : 0;
        t->gen_slices = o ? o->gen[KS_KIND_RESOURCE_SLICE] : 0;
    }
    ks_mutex_lock(&t->lock);
    struct op *ops = t->ops;
    t->ops = NULL;
    t->ops_tail = &t->ops;
    if (!t->synced || (o && o->gen[KS_KIND_RESOURCE_CLAIM] != t->gen_claims)) {
        rc = sync_claims(t);
        t->gen_claims = o ? o->gen[KS_KIND_RESOURCE_CLAIM] : 0;
        atomic_store_explicit(&t->seen_claims, t->gen_claims, memory_order_release);
    }
    for (struct op *op = ops, *next; op; op = next) {
        next = op->next;
        if (rc == 0)
            rc = apply(t, op);
        struct ks_arena a = op->arena;
        ks_arena_destroy(&a);
    }
    t->synced = rc == 0;
    ks_mutex_unlock(&t->lock);
    return rc;
}

bool ks_dra_tracker_behind(const struct ks_dra_tracker *t)
{
    return t->objs && ks_objects_queued(t->objs, KS_KIND_RESOURCE_CLAIM) >
                          atomic_load_explicit(&t->seen_claims, memory_order_acquire);
}

/* ---- life --------------------------------------------------------------------------------------- */

int ks_dra_tracker_create(const struct ks_objects *objs, const struct ks_dra_features *features,
                          bool in_process, struct ks_dra_tracker **out)
{
    struct ks_dra_tracker *t = calloc(1, sizeof(*t));
    int rc = -ENOMEM;

    *out = NULL;
    if (!t)
        return -ENOMEM;
    t->objs = objs;
    t->in_process = in_process;
    t->features = features ? *features : ks_dra_features_default();
    t->ops_tail = &t->ops;
    ks_mutex_init(&t->lock, KS_LOCK_DYNAMIC_RESOURCES);
    if ((rc = ks_dra_allocated_create(&t->allocated)) < 0 || (rc = ks_dra_tracker_sync(t)) < 0) {
        ks_dra_tracker_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

void ks_dra_tracker_destroy(struct ks_dra_tracker *t)
{
    if (!t)
        return;
    for (struct op *op = t->ops, *next; op; op = next) {
        next = op->next;
        struct ks_arena a = op->arena;
        ks_arena_destroy(&a);
    }
    for (uint32_t i = 0; i < t->nentries; i++) {
        struct entry *e = t->entries[i];
        ks_arena_destroy(&e->counted_arena);
        ks_arena_destroy(&e->flight_arena);
        ks_arena_destroy(&e->own_arena);
        free_overlay(e->ov);
        free(e);
    }
    free(t->entries);
    free(t->slots);
    free(t->owners);
    ks_dra_allocated_destroy(t->allocated);
    ks_dra_catalog_destroy(t->cat);
    ks_mutex_destroy(&t->lock);
    free(t);
}

const struct ks_dra_catalog *ks_dra_tracker_catalog(const struct ks_dra_tracker *t)
{
    return t->cat;
}

const struct ks_dra_allocated *ks_dra_tracker_allocated(const struct ks_dra_tracker *t)
{
    return t->allocated;
}

/* ---- lookups ------------------------------------------------------------------------------------- */

static void view(const struct entry *e, const char *pod_uid, struct ks_dra_claim *out)
{
    const char *const *ov_uids = e->ov ? e->ov->reserved : NULL;
    uint32_t n = e->ov ? e->ov->nreserved : e->obj->nreserved;

    out->obj = e->obj;
    out->key = e->key;
    out->allocation = effective_allocation(e);
    out->nreserved = n;
    out->reserved_for_pod = false;
    for (uint32_t i = 0; i < n; i++) {
        const char *uid = ov_uids ? ov_uids[i] : e->obj->reserved[i].uid;
        if (pod_uid && strcmp(uid, pod_uid) == 0)
            out->reserved_for_pod = true;
    }
    out->only_reserved_for_pod = out->reserved_for_pod && n == 1;
    out->in_flight = e->in_flight != NULL;
}

/* metav1.IsControlledBy: the claim's controller reference names the pod (@pod_uid). */
static bool controlled_by(const struct ks_resource_claim *c, const struct ks_pod *pod, const char *pod_uid)
{
    if (c->meta.namespace_id != pod->meta.namespace_id)
        return false;
    for (uint32_t i = 0; i < c->meta.nowners; i++) {
        const struct ks_owner_ref *o = &c->meta.owners[i];
        if (o->controller)
            return o->uid && strcmp(o->uid, pod_uid) == 0;
    }
    return false;
}

enum ks_dra_lookup ks_dra_tracker_pod_claims(struct ks_dra_tracker *t, const struct ks_pod *pod,
                                             const struct ks_resource_claim *fresh, struct ks_dra_claim *out,
                                             uint32_t *n, bool *uses_fresh, char *msg, size_t len)
{
    const char *ns = ks_intern_str(pod->meta.namespace_id);
    char pod_uid[320];
    enum ks_dra_lookup r = KS_DRA_FOUND;

    *n = 0;
    if (uses_fresh)
        *uses_fresh = false;
    if (msg && len)
        msg[0] = '\0';
    ks_pod_identity(pod, pod_uid, sizeof(pod_uid));
    for (uint32_t i = 0; i < pod->nclaims && r == KS_DRA_FOUND; i++) {
        const struct ks_pod_claim *pc = &pod->claims[i];
        const char *name = pc->claim_name;
        bool check_owner = false;
        if (!name) {
            uint32_t s;
            for (s = 0; s < pod->nclaim_statuses && strcmp(pod->claim_statuses[s].name, pc->name) != 0; s++)
                ;
            if (s == pod->nclaim_statuses) {
                if (msg)
                    snprintf(msg, len, "pod \"%s/%s\": ResourceClaim not created yet", ns, pod->meta.name);
                return KS_DRA_NOT_CREATED;
            }
            if (!(name = pod->claim_statuses[s].claim_name))
                continue; /* no claim was needed */
            check_owner = true;
        }
        const struct ks_resource_claim *obj = NULL;
        struct entry *e = NULL;
        bool is_fresh = fresh && fresh->meta.namespace_id == pod->meta.namespace_id &&
                        strcmp(fresh->meta.name, name) == 0;
        uint32_t key = is_fresh ? KS_ID_NONE : ks_intern_find_ns_name(pod->meta.namespace_id, name);
        ks_mutex_lock(&t->lock);
        if (is_fresh) {
            obj = fresh;
        } else if ((e = find(t, key)) && e->obj && !e->gone) {
            obj = e->obj;
        }
        if (!obj) {
            if (msg)
                snprintf(msg, len, "could not find ResourceClaim \"%s/%s\"", ns, name);
            r = KS_DRA_NOT_FOUND;
        } else if (obj->meta.deletion_time != KS_TIME_NONE) {
            if (msg)
                snprintf(msg, len, "resourceclaim \"%s\" is being deleted", name);
            r = KS_DRA_DELETING;
        } else if (check_owner && !controlled_by(obj, pod, pod_uid)) {
            if (msg)
                snprintf(msg, len, "ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)", ns,
                         name, ns, pod->meta.name);
            r = KS_DRA_NOT_OWNER;
        } else if (is_fresh) {
            *uses_fresh = true;
        } else if (out) {
            view(e, pod_uid, &out[(*n)++]);
        } else {
            ++*n;
        }
        ks_mutex_unlock(&t->lock);
    }
    return r;
}

/* ---- changes ------------------------------------------------------------------------------------- */

int ks_dra_tracker_reserve(struct ks_dra_tracker *t, uint32_t key, const struct ks_allocation *alloc)
{
    int rc = -ENOENT;

    ks_mutex_lock(&t->lock);
    struct entry *e = find(t, key);
    if (e && e->in_flight) {
        rc = -EEXIST;
    } else if (e) {
        struct ks_allocation *copy = ks_dra_allocation_copy(&e->flight_arena, alloc);
        rc = copy && ks_dra_allocated_add(t->allocated, copy) == 0 ? 0 : -ENOMEM;
        if (rc == 0)
            e->in_flight = copy;
        else
            ks_arena_reset(&e->flight_arena);
    }
    ks_mutex_unlock(&t->lock);
    return rc;
}

static int record_claim(struct ks_dra_tracker *t, enum op_kind kind, uint32_t key,
                        const struct ks_allocation *alloc, const char *pod_uid, const char *rv,
                        const struct ks_resource_claim *claim)
{
    struct ks_arena a = KS_ARENA_INIT;
    struct op *op = ks_arena_alloc(&a, sizeof(*op));
    struct ks_resource_claim *copy = NULL;

    if (!op || (alloc && !(op->allocation = ks_dra_allocation_copy(&a, alloc))) ||
        (pod_uid && !(op->pod_uid = ks_arena_strdup(&a, pod_uid))) ||
        (claim && ks_dra_extended_claim_copy(&a, claim, &copy) < 0)) {
        ks_arena_destroy(&a);
        return -ENOMEM;
    }
    op->kind = kind;
    op->key = key;
    op->claim = copy;
    op->rv = rv ? parse_rv(rv) : -1;
    if (rv && op->rv < 0)
        op->rv = 0; /* an unreadable version: any delivered object supersedes the assumption */
    op->arena = a;
    ks_mutex_lock(&t->lock);
    *t->ops_tail = op;
    t->ops_tail = &op->next;
    ks_mutex_unlock(&t->lock);
    return 0;
}

static int record(struct ks_dra_tracker *t, enum op_kind kind, uint32_t key,
                  const struct ks_allocation *alloc, const char *pod_uid, const char *rv)
{
    return record_claim(t, kind, key, alloc, pod_uid, rv, NULL);
}

int ks_dra_tracker_written(struct ks_dra_tracker *t, uint32_t key, const struct ks_allocation *alloc,
                           const char *pod_uid, const char *pod_name, const char *rv)
{
    (void)pod_name;
    return record(t, OP_WRITTEN, key, alloc, pod_uid, rv);
}

int ks_dra_tracker_unwritten(struct ks_dra_tracker *t, uint32_t key)
{
    return record(t, OP_UNWRITTEN, key, NULL, NULL, NULL);
}

int ks_dra_tracker_unreserved(struct ks_dra_tracker *t, uint32_t key, const char *pod_uid)
{
    return record(t, OP_UNRESERVED, key, NULL, pod_uid, NULL);
}

int ks_dra_tracker_deallocate(struct ks_dra_tracker *t, uint32_t key, const char *rv)
{
    int rc = -ENOENT;

    ks_mutex_lock(&t->lock);
    struct entry *e = find(t, key);
    if (e && e->obj) {
        struct overlay *ov = calloc(1, sizeof(*ov));
        rc = -ENOMEM;
        if (ov) {
            ov->rv = rv ? (parse_rv(rv) < 0 ? 0 : parse_rv(rv)) : -1;
            free_overlay(e->ov);
            e->ov = ov;
            rc = recount(t, e);
        }
    }
    ks_mutex_unlock(&t->lock);
    return rc;
}

/* ---- the special claim for extended resources -------------------------------------------------- */

bool ks_dra_tracker_extended_claim(struct ks_dra_tracker *t, const struct ks_pod *pod,
                                   struct ks_dra_claim *out)
{
    char pod_uid[320];
    bool found = false;

    ks_pod_identity(pod, pod_uid, sizeof(pod_uid));
    uint32_t owner = ks_intern_find(pod_uid, strlen(pod_uid));
    if (owner == KS_ID_NONE || owner == 0)
        return false;
    ks_mutex_lock(&t->lock);
    for (uint32_t h = t->owners ? owner_home(t, owner) : 0; t->owners && t->owners[h * 2] && !found;
         h = (h + 1) & t->owner_mask) {
        const struct entry *e = t->owners[h * 2] == owner ? find(t, t->owners[h * 2 + 1]) : NULL;
        if (!e || !e->obj || e->gone || !ks_dra_is_extended_claim(e->obj, pod, pod_uid))
            continue;
        view(e, pod_uid, out);
        found = true;
    }
    ks_mutex_unlock(&t->lock);
    return found;
}

int ks_dra_tracker_reserve_new(struct ks_dra_tracker *t, const struct ks_resource_claim *claim,
                               const char *pod_uid, const struct ks_allocation *alloc, uint32_t *key)
{
    char name[400];
    int rc;

    snprintf(name, sizeof(name), "%s/%s:%s", ks_intern_str(claim->meta.namespace_id),
             KS_DRA_SPECIAL_CLAIM_NAME, pod_uid);
    if ((*key = ks_intern(name)) == KS_ID_NONE)
        return -ENOMEM;
    ks_mutex_lock(&t->lock);
    struct entry *e = find(t, *key);
    struct ks_resource_claim *copy;
    rc = -EEXIST;
    if (!e) {
        rc = -ENOMEM;
        if ((e = insert(t, *key)) && ks_dra_extended_claim_copy(&e->own_arena, claim, &copy) == 0) {
            e->obj = copy;
            e->own = true;
            rc = 0;
        } else if (e) {
            drop(t, e);
        }
    }
    ks_mutex_unlock(&t->lock);
    return rc < 0 ? rc : ks_dra_tracker_reserve(t, *key, alloc);
}

int ks_dra_tracker_created(struct ks_dra_tracker *t, uint32_t key, const struct ks_resource_claim *claim,
                           const struct ks_allocation *alloc, const char *pod_uid, const char *rv)
{
    return record_claim(t, OP_CREATED, key, alloc, pod_uid, rv, claim);
}

int ks_dra_tracker_deleted(struct ks_dra_tracker *t, uint32_t key)
{
    return record(t, OP_DELETED, key, NULL, NULL, NULL);
}
