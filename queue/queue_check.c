/*
 * queue_check.c - ks_queue_check, the scheduling queue's invariant checker: every queued
 * pod is in exactly one place, and each place (activeQ, backoffQ, the unschedulable list,
 * the lookup stripes, the counters) agrees with the others.
 */
#include "queue_internal.h"

#include "ksched/internal/queue.h"

#include <stdio.h>

/*
 * The checker holds one stripe's lock at a time (with `slow` inside it), so it sees the
 * whole queue consistently only when nothing runs at once: ks_queue_check's contract.
 */

/* @qp's stripe's lookup finds @qp; the caller holds that stripe's lock. */
static bool listed_at(struct ks_queue *q, const struct qpod *qp)
{
    return ks__queue_table_find(stripe_at(q, qp->hash), qp->hash, qp->pub.pod) == qp;
}

struct check_ctx {
    struct ks_queue *q;
    char *msg;
    uint32_t len;
    uint32_t seen;
    const struct ks_queued_pod *prev;
    bool bad;
};

static bool check_entry(void *ctx, const struct ks_queued_pod *p)
{
    struct check_ctx *c = ctx;
    struct qpod *qp = qpod_of(p);
    struct stripe *s = stripe_at(c->q, qp->hash);
    stripe_lock(s);
    bool listed = listed_at(c->q, qp);
    stripe_unlock(s);
    if (where_of(qp) != KS_WHERE_ACTIVE || !listed) {
        snprintf(c->msg, c->len, "activeQ entry for a pod recorded elsewhere (where %d)", (int)where_of(qp));
        c->bad = true;
        return false;
    }
    if (c->prev && c->q->opts.less && c->q->opts.less(c->q->opts.less_ctx, p, c->prev)) {
        snprintf(c->msg, c->len, "activeQ out of QueueSort order");
        c->bad = true;
        return false;
    }
    c->prev = p;
    c->seen++;
    return true;
}

/* Stripe @s's pods (its lock and `slow` held): each in one place, counted in @count. */
static int check_stripe(struct ks_queue *q, struct stripe *s, uint32_t count[], char *msg, uint32_t len)
{
    uint32_t listed = 0;
    for (uint32_t i = 0; i < s->cap; i++) {
        for (struct qpod *qp = s->table[i]; qp; qp = qp->hnext) {
            enum ks_queue_where w = where_of(qp);
            listed++;
            if (w == KS_WHERE_NONE || w > KS_WHERE_IN_FLIGHT) {
                snprintf(msg, len, "a queued pod is in no place (%d)", (int)w);
                return -1;
            }
            if (stripe_at(q, qp->hash) != s || qp->hash != ks__queue_key_hash(qp->pub.pod)) {
                snprintf(msg, len, "a pod is listed under another key's stripe");
                return -1;
            }
            count[w]++;
            if (qp->gated && w != KS_WHERE_UNSCHEDULABLE) {
                snprintf(msg, len, "a gated pod is not among the unschedulable");
                return -1;
            }
            /* in its slow place where that place says; with the counts (check_slow), one to one */
            if (w == KS_WHERE_BACKOFF && (qp->heap_index >= q->nheap || q->heap[qp->heap_index] != qp)) {
                snprintf(msg, len, "a backoff pod is not at its heap index");
                return -1;
            }
            if (w == KS_WHERE_UNSCHEDULABLE && (qp->uprev ? qp->uprev->unext != qp : q->uhead != qp)) {
                snprintf(msg, len, "an unschedulable pod is not linked into the list");
                return -1;
            }
        }
    }
    if (listed != s->n) {
        snprintf(msg, len, "a lookup stripe holds %u pods, counted %u", s->n, listed);
        return -1;
    }
    return 0;
}

/* backoffQ and the unschedulable list (`slow` held) against the places counted in @count. */
static int check_slow(struct ks_queue *q, const uint32_t count[], char *msg, uint32_t len)
{
    for (uint32_t i = 0; i < q->nheap; i++) {
        struct qpod *qp = q->heap[i];
        if (qp->heap_index != i || where_of(qp) != KS_WHERE_BACKOFF) {
            snprintf(msg, len, "backoffQ slot %u holds a pod recorded elsewhere", i);
            return -1;
        }
        if (i > 0 && ks__queue_heap_before(q, qp, q->heap[(i - 1) / 2])) {
            snprintf(msg, len, "backoffQ heap order broken at %u", i);
            return -1;
        }
    }
    uint32_t n = 0, gated = 0, waiting[KS_QUEUE_EVENT_KINDS] = {0};
    for (struct qpod *qp = q->uhead; qp; qp = qp->unext) {
        for (unsigned k = 0; k < KS_QUEUE_EVENT_KINDS; k++)
            waiting[k] += (qp->wait_events >> k) & 1u;
        if (where_of(qp) != KS_WHERE_UNSCHEDULABLE || (qp->unext ? qp->unext->uprev != qp : q->utail != qp)) {
            snprintf(msg, len, "unschedulable list holds a pod recorded elsewhere");
            return -1;
        }
        gated += qp->gated;
        n++;
    }
    if (n != q->nunsched || n != count[KS_WHERE_UNSCHEDULABLE] || gated != q->ngated) {
        snprintf(msg, len, "unschedulable: list %u, counter %u, table %u, gated %u/%u", n, q->nunsched,
                 count[KS_WHERE_UNSCHEDULABLE], gated, q->ngated);
        return -1;
    }
    for (unsigned k = 0; k < KS_QUEUE_EVENT_KINDS; k++) {
        if (waiting[k] != q->nwaiting[k]) {
            snprintf(msg, len, "unschedulable pods waiting for kind %u: %u listed, %u counted", k, waiting[k],
                     q->nwaiting[k]);
            return -1;
        }
    }
    if (q->nheap != count[KS_WHERE_BACKOFF]) {
        snprintf(msg, len, "backoffQ: heap %u, table %u", q->nheap, count[KS_WHERE_BACKOFF]);
        return -1;
    }
    return 0;
}

int ks_queue_check(struct ks_queue *q, char *msg, uint32_t len)
{
    char dummy[8];
    if (!msg || !len) {
        msg = dummy;
        len = sizeof(dummy);
    }
    msg[0] = '\0';
    uint32_t count[KS_WHERE_IN_FLIGHT + 1] = {0};
    for (uint32_t k = 0; k < STRIPES; k++) {
        struct stripe *s = &q->stripes[k];
        stripe_lock(s);
        slow_lock(q);
        int rc = check_stripe(q, s, count, msg, len);
        slow_unlock(q);
        stripe_unlock(s);
        if (rc < 0)
            return rc;
    }
    slow_lock(q);
    int rc = check_slow(q, count, msg, len);
    slow_unlock(q);
    if (rc < 0)
        return rc;
    struct check_ctx c = {.q = q, .msg = msg, .len = len};
    ks_activeq_walk(q->active, check_entry, &c);
    if (c.bad)
        return -1;
    uint32_t nactive = atomic_load_explicit(&q->nactive, memory_order_relaxed);
    if (c.seen != count[KS_WHERE_ACTIVE] || c.seen != nactive) {
        snprintf(msg, len, "activeQ: %u entries, table %u, counter %u", c.seen, count[KS_WHERE_ACTIVE],
                 nactive);
        return -1;
    }
    /* in-flight pods deleted meanwhile are no longer in the table */
    uint32_t ninflight = atomic_load_explicit(&q->ninflight, memory_order_relaxed);
    if (count[KS_WHERE_IN_FLIGHT] > ninflight) {
        snprintf(msg, len, "in flight: table %u, counter %u", count[KS_WHERE_IN_FLIGHT], ninflight);
        return -1;
    }
    return 0;
}
