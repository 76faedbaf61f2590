/*
 * queue_internal.h - the scheduling queue's own types, shared by queue/queue.c (the
 * places and the moves between them), queue/queue_table.c (the lookup by namespace/name)
 * and queue/queue_check.c (the invariant checker). Not for use outside queue/. The
 * locking rules are queue.c's (its header comment).
 */
#ifndef KSCHED_QUEUE_INTERNAL_H
#define KSCHED_QUEUE_INTERNAL_H

#include "ksched/base/lock.h"
#include "ksched/internal/queue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The place of a pod whose activeQ entry is being inserted (after the public places). */
#define WHERE_PUSHING (KS_WHERE_IN_FLIGHT + 1)

/*
 * A queued pod. Fields under its stripe's lock: hnext, in_table, deleted, pending. Under
 * `slow` while it is in backoffQ or unschedulable: heap_index, uprev, unext, and what the
 * moves read and write (gated..., wait_events). Otherwise its owner's: the stripe holder
 * that put it in no place, or the popper while it is in flight.
 */
struct qpod {
    struct ks_queued_pod pub;
    struct ks_queue *q;
    uint64_t hash;         /* key_hash(pub.pod) */
    _Atomic uint32_t refs; /* the queue's own (while queued or in flight) + one per activeQ entry */
    _Atomic uint8_t where; /* enum ks_queue_where or WHERE_PUSHING */
    bool gated;            /* PreEnqueue rejected it (it is unschedulable) */
    bool deleted;          /* deleted while in flight: dropped when it comes back */
    bool in_table;
    uint16_t gating_plugin; /* slot, KS_NO_PLUGIN */
    uint32_t gated_message;
    unsigned wait_events;            /* coarse kinds it waits for while unschedulable */
    uint64_t pop_cycle;              /* the cycle of its last pop (popper) */
    uint32_t heap_index;             /* in backoffQ */
    struct ks_activeq_handle handle; /* its activeQ entry */
    struct qpod *uprev, *unext;      /* unschedulable list */
    struct qpod *hnext;              /* lookup chain */
    const struct ks_pod *pending;    /* a newer version that arrived while in flight (a reference) */
};

/* The lookup table's stripes: the top STRIPE_BITS bits of a key's hash pick its stripe. */
#define STRIPE_BITS 6
#define STRIPES     (1u << STRIPE_BITS)

struct stripe {
    struct ks_mutex lock; /* KS_LOCK_QUEUE_POD: the table below and its pods (struct qpod) */
    struct qpod **table;  /* chains by hash; NULL until the first pod */
    uint32_t n, cap;
} __attribute__((aligned(64)));

/* The coarse event kinds (ksched/internal/queue.h KS_EVENT_*), one bit each. */
#define KS_QUEUE_EVENT_KINDS 9
_Static_assert(KS_EVENT_ALL == (1u << KS_QUEUE_EVENT_KINDS) - 1, "a kind bit without a waiting count");

struct ks_queue {
    struct ks_queue_opts opts;
    struct ks_activeq *active;
    _Atomic uint64_t cycle;   /* pods popped (schedulingCycle) */
    _Atomic uint32_t nactive; /* decremented by the popper */
    _Atomic uint32_t ninflight;

    struct ks_mutex slow; /* KS_LOCK_QUEUE: everything down to the rejections */
    uint64_t move_request_cycle;
    bool has_move_request;
    struct qpod **heap; /* backoffQ */
    uint32_t nheap, capheap;
    struct qpod *uhead, *utail; /* unschedulable pods, in arrival order */
    uint32_t nunsched, ngated;
    uint32_t nwaiting[KS_QUEUE_EVENT_KINDS]; /* unschedulable pods whose wait_events hold each kind bit */

    /* nprofiles x 64: queued pods (not in flight) whose unschedulable_plugins hold each slot */
    _Atomic uint32_t *rejections;

    struct stripe stripes[STRIPES];
};

static inline struct qpod *qpod_of(const struct ks_queued_pod *p)
{
    return (struct qpod *)((char *)p - offsetof(struct qpod, pub));
}

static inline enum ks_queue_where where_of(const struct qpod *qp)
{
    /* acquire: pairs with the popper's release store, so its writes to pub are visible */
    return (enum ks_queue_where)atomic_load_explicit(&qp->where, memory_order_acquire);
}

static inline void set_where(struct qpod *qp, enum ks_queue_where w)
{
    /* release: a reader that sees the new place also sees the fields written before */
    atomic_store_explicit(&qp->where, (uint8_t)w, memory_order_release);
}

static inline void slow_lock(struct ks_queue *q)
{
    ks_mutex_lock(&q->slow);
}

static inline void slow_unlock(struct ks_queue *q)
{
    ks_mutex_unlock(&q->slow);
}

static inline void stripe_lock(struct stripe *s)
{
    ks_mutex_lock(&s->lock);
}

static inline void stripe_unlock(struct stripe *s)
{
    ks_mutex_unlock(&s->lock);
}

#ifdef KS_QUEUE_DEBUG
#define QDEBUG_ASSERT(cond, what)                                                                            \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "ksched queue invariant violated: %s (%s:%d)\n", what, __FILE__, __LINE__);      \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)
#else
#define QDEBUG_ASSERT(cond, what) ((void)0)
#endif

/* The stripe of a key's hash. */
static inline struct stripe *stripe_at(struct ks_queue *q, uint64_t hash)
{
    return &q->stripes[hash >> (64 - STRIPE_BITS)];
}

/*
 * ks__queue_key_hash - the hash of @pod's namespace/name. Pods without a name (tests) are
 * keyed by address, all in stripe 0, so that a version and its successor share a stripe.
 */
uint64_t ks__queue_key_hash(const struct ks_pod *pod);

/* ks__queue_table_find - the pod of @pod's key in stripe @s (its lock held), or NULL. */
struct qpod *ks__queue_table_find(const struct stripe *s, uint64_t hash, const struct ks_pod *pod);

/* ks__queue_table_insert - list @qp (its hash set) in stripe @s (its lock held). 0 or -ENOMEM. */
int ks__queue_table_insert(struct stripe *s, struct qpod *qp);

/* ks__queue_table_remove - unlist @qp from stripe @s (its lock held), if listed. */
void ks__queue_table_remove(struct stripe *s, struct qpod *qp);

/* ks__queue_heap_before - backoffQ's order: @a's backoff ends first, or at once and @a sorts first. */
bool ks__queue_heap_before(const struct ks_queue *q, const struct qpod *a, const struct qpod *b);

#endif
