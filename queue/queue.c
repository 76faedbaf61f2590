/*
 * queue.c - the scheduling queue of include/ksched/internal/queue.h: activeQ (queue/activeq.c),
 * backoffQ, the unschedulable pods, and the bookkeeping that keeps a pod in one place.
 *
 * Mirrors pkg/scheduler/backend/queue/scheduling_queue.go (PriorityQueue), with
 * backoff_queue.go and unschedulable_pods.go:
 *   - Add runs the PreEnqueue plugins and puts the pod in activeQ, or among the
 *     unschedulable pods when a plugin gates it (moveToActiveQ);
 *   - Pop takes the head of activeQ, counts the attempt and starts a scheduling cycle;
 *   - a failed pod comes back through AddUnschedulableIfNotPresent: with an error, or when
 *     a move request happened during or after its cycle (moveRequestCycle), it goes to
 *     backoffQ, else among the unschedulable pods, waiting for an event;
 *   - an event (MoveAllToActiveOrBackoffQueue) asks, for each unschedulable pod, the
 *     QueueingHints of the plugins that rejected it (ks_event_map_worth); a pod worth
 *     retrying goes to backoffQ, or straight to activeQ when its backoff is already over
 *     (requeuePodWithQueueingStrategy); every event some plugin registers is a move request;
 *   - flushBackoffQCompleted and flushUnschedulablePodsLeftover are the two flushes; the
 *     owner calls them every second and every 30 seconds.
 *
 * Places and ownership. Each queued pod is one struct qpod (the public struct
 * ks_queued_pod plus bookkeeping) reachable from the lookup table by namespace/name, and
 * `where` says which place holds it. There is no queue-wide lock; who may move a pod
 * depends on its place:
 *   - the lookup table (queue/queue_table.c) is split into STRIPES stripes by key hash,
 *     each with its own lock (KS_LOCK_QUEUE_POD); a pod's stripe lock serialises
 *     everything done to that pod by name: add, update, delete, giving it back
 *     (add_unschedulable, done), reading it;
 *   - backoffQ, the unschedulable list and the move-request record are behind `slow`
 *     (KS_LOCK_QUEUE), taken inside a stripe lock, never around one; the events and
 *     the flushers move pods out of them holding `slow` alone;
 *   - activeQ is lock-free: any of the above pushes; the pop takes no lock at all: the
 *     popper wins the entry's claim word, then marks the pod in flight.
 * So adding a pod takes its stripe lock and pushes; only gated pods also take `slow`.
 * A stripe holder that finds a pod in activeQ first tries to remove its entry
 * (ks_activeq_remove); if the popper won, the pod is in flight. One it finds in the slow
 * places, or on its way between two places, it settles under `slow` (settle()). A pod
 * that `slow` alone moves to activeQ reads PUSHING while its entry is being inserted,
 * until the pusher marks it ACTIVE (or the popper, faster, in flight): no stripe holder
 * removes an entry not yet in.
 * The struct is freed when its last reference goes: the queue holds one while the pod
 * is queued or in flight, and each activeQ entry holds one until the entry is reclaimed,
 * because the entry's key copy points at the pod. That is also why an update never
 * changes a struct's pod: it makes a new struct.
 *
 * Invariants (ks_queue_check, queue/queue_check.c): a pod is in exactly one of activeQ,
 * backoffQ, the unschedulable list or in flight; the counters equal the sizes; backoffQ is
 * a heap on (backoff expiry, QueueSort) with correct indices; gated pods are unschedulable.
 */
#include "queue_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/base/spin.h"
#include "ksched/internal/nominator.h"
#include "ksched/status_types.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t ks_queue_now(const struct ks_queue *q)
{
    return q->opts.clock.now ? q->opts.clock.now(q->opts.clock.ctx) : ks__mono_ns();
}

/* ---- references ---------------------------------------------------------------------------- */

/*
 * @bits of @qp's unschedulable_plugins start (@sign 1) or stop (-1) counting among the
 * queued pods' rejections: when a pod with them is queued or gated, and when it is popped
 * or deleted. Any thread (the popper holds no lock).
 */
static void count_rejections(struct ks_queue *q, const struct qpod *qp, uint64_t bits, int sign)
{
    if (!q->rejections || qp->pub.profile >= q->opts.nprofiles)
        return;
    _Atomic uint32_t *c = &q->rejections[(size_t)qp->pub.profile * 64];
    /* relaxed: counts read on their own by scrapes */
    for (; bits; bits &= bits - 1)
        atomic_fetch_add_explicit(&c[__builtin_ctzll(bits)], (uint32_t)sign, memory_order_relaxed);
}

static void qpod_unref(struct qpod *qp)
{
    /* acq_rel: every holder's use of the struct happens before the last one frees it */
    if (atomic_fetch_sub_explicit(&qp->refs, 1, memory_order_acq_rel) != 1)
        return;
    ks_pod_put(qp->pub.pod);
    ks_pod_put(qp->pending);
    free(qp);
}

/* activeQ's release callback: an entry for @p was reclaimed (any thread). */
static void entry_released(void *ctx, struct ks_queued_pod *p)
{
    (void)ctx;
    qpod_unref(qpod_of(p));
}

static struct qpod *qpod_new(struct ks_queue *q, const struct ks_pod *pod, uint64_t hash, int64_t now)
{
    struct qpod *qp = calloc(1, sizeof(*qp));
    if (!qp)
        return NULL;
    qp->pub.pod = pod;
    qp->hash = hash;
    qp->pub.timestamp_ns = now;
    qp->pub.initial_attempt_ns = KS_TIME_NONE;
    qp->pub.profile = KS_NO_PROFILE;
    for (uint32_t i = 0; i < q->opts.nprofiles; i++) {
        if (q->opts.scheduler_names && q->opts.scheduler_names[i] == pod->scheduler_name) {
            qp->pub.profile = (uint16_t)i;
            break;
        }
    }
    qp->q = q;
    atomic_init(&qp->refs, 1);
    atomic_init(&qp->where, KS_WHERE_NONE);
    qp->gating_plugin = KS_NO_PLUGIN;
    qp->gated_message = KS_ID_EMPTY;
    qp->heap_index = UINT32_MAX;
    return qp;
}

static const struct ks_event_map *map_of(const struct ks_queue *q, const struct qpod *qp)
{
    if (!q->opts.maps || qp->pub.profile >= q->opts.nprofiles)
        return NULL;
    return q->opts.maps[qp->pub.profile];
}

/* ---- backoff ------------------------------------------------------------------------------------ */

/*
 * calculateBackoffDuration: initial x 2^(attempts-1), capped at the maximum, none before the
 * first attempt - for the members of a pod group tried together (@group_size > 1), the maximum
 * times sqrt(group_size), as upstream backs off a group entity.
 */
static int64_t backoff_duration(const struct ks_queue *q, uint32_t attempts, uint32_t group_size)
{
    int64_t d = q->opts.initial_backoff_ns, max = q->opts.max_backoff_ns;
    if (attempts == 0 || d <= 0)
        return 0;
    if (group_size > 1)
        max = (int64_t)((double)max * sqrt((double)group_size));
    for (uint32_t i = 1; i < attempts; i++) {
        if (d > max - d) /* subtraction: no overflow */
            return max;
        d += d;
    }
    return d > max ? max : d;
}

static int64_t backoff_expiry(const struct ks_queue *q, const struct qpod *qp)
{
    /* the attempts since its group's last success (upstream resets the entity's counters then) */
    uint32_t attempts = qp->pub.attempts > qp->pub.backoff_base ? qp->pub.attempts - qp->pub.backoff_base : 0;
    return qp->pub.timestamp_ns + backoff_duration(q, attempts, qp->pub.group_size);
}

bool ks__queue_heap_before(const struct ks_queue *q, const struct qpod *a, const struct qpod *b)
{
    int64_t ea = backoff_expiry(q, a), eb = backoff_expiry(q, b);
    if (ea != eb)
        return ea < eb;
    return q->opts.less && q->opts.less(q->opts.less_ctx, &a->pub, &b->pub);
}

static void heap_set(struct ks_queue *q, uint32_t i, struct qpod *qp)
{
    q->heap[i] = qp;
    qp->heap_index = i;
}

static void heap_up(struct ks_queue *q, uint32_t i)
{
    struct qpod *qp = q->heap[i];
    while (i > 0 && ks__queue_heap_before(q, qp, q->heap[(i - 1) / 2])) {
        heap_set(q, i, q->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(q, i, qp);
}

static void heap_down(struct ks_queue *q, uint32_t i)
{
    struct qpod *qp = q->heap[i];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        const struct qpod *best = qp;
        if (l < q->nheap && ks__queue_heap_before(q, q->heap[l], best)) {
            m = l;
            best = q->heap[l];
        }
        if (r < q->nheap && ks__queue_heap_before(q, q->heap[r], best))
            m = r;
        if (m == i)
            break;
        heap_set(q, i, q->heap[m]);
        i = m;
    }
    heap_set(q, i, qp);
}

static int backoff_push(struct ks_queue *q, struct qpod *qp)
{
    if (q->nheap == q->capheap) {
        uint32_t cap = q->capheap ? q->capheap * 2 : 64;
        struct qpod **h = realloc(q->heap, cap * sizeof(*h));
        if (!h)
            return -ENOMEM;
        q->heap = h;
        q->capheap = cap;
    }
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_NONE, "a pod entering backoffQ is elsewhere");
    heap_set(q, q->nheap++, qp);
    heap_up(q, qp->heap_index);
    set_where(qp, KS_WHERE_BACKOFF);
    return 0;
}

static void backoff_remove(struct ks_queue *q, struct qpod *qp)
{
    uint32_t i = qp->heap_index;
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_BACKOFF && i < q->nheap && q->heap[i] == qp, "backoffQ index");
    struct qpod *last = q->heap[--q->nheap];
    if (i < q->nheap) {
        heap_set(q, i, last);
        heap_up(q, i);
        heap_down(q, last->heap_index);
    }
    qp->heap_index = UINT32_MAX;
    set_where(qp, KS_WHERE_NONE);
}

/* ---- unschedulable pods -------------------------------------------------------------------------- */

/* Count the kinds of @events for one more (@sign 1) or one less (-1) unschedulable pod. */
static void waiting_count(struct ks_queue *q, unsigned events, int sign)
{
    for (unsigned k = 0; k < KS_QUEUE_EVENT_KINDS; k++) {
        if (events & (1u << k))
            q->nwaiting[k] += (uint32_t)sign;
    }
}

/* Whether some unschedulable pod waits for a kind of @kinds. */
static bool someone_waits(const struct ks_queue *q, unsigned kinds)
{
    for (unsigned k = 0; k < KS_QUEUE_EVENT_KINDS; k++) {
        if ((kinds & (1u << k)) && q->nwaiting[k])
            return true;
    }
    return false;
}

static void unsched_add(struct ks_queue *q, struct qpod *qp)
{
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_NONE, "a pod becoming unschedulable is elsewhere");
    qp->unext = NULL;
    qp->uprev = q->utail;
    if (q->utail)
        q->utail->unext = qp;
    else
        q->uhead = qp;
    q->utail = qp;
    q->nunsched++;
    q->ngated += qp->gated;
    waiting_count(q, qp->wait_events, 1);
    set_where(qp, KS_WHERE_UNSCHEDULABLE);
}

static void unsched_remove(struct ks_queue *q, struct qpod *qp)
{
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_UNSCHEDULABLE, "unschedulable list");
    if (qp->uprev)
        qp->uprev->unext = qp->unext;
    else
        q->uhead = qp->unext;
    if (qp->unext)
        qp->unext->uprev = qp->uprev;
    else
        q->utail = qp->uprev;
    qp->uprev = qp->unext = NULL;
    q->nunsched--;
    q->ngated -= qp->gated;
    waiting_count(q, qp->wait_events, -1);
    set_where(qp, KS_WHERE_NONE);
}

/* ---- activeQ ------------------------------------------------------------------------------------- */

/* Who moves a pod: a holder of its stripe's lock (and maybe `slow`), or of `slow` alone. */
enum mover { BY_STRIPE, BY_SLOW };

/*
 * Push @qp, which is in no place, into activeQ. The caller holds the pod's stripe lock
 * (BY_STRIPE), or `slow` alone (BY_SLOW). A stripe holder is the only one that can look
 * at the pod meanwhile, and the pod outlives the call: whoever gives it back or forgets it
 * after a pop waits for the stripe. Pushed by `slow` alone, the pod reads PUSHING until its
 * entry is in, so that a stripe holder that finds it meanwhile waits for `slow` (settle)
 * rather than remove an entry not yet in; and the call holds a reference of its own.
 */
static int active_push(struct ks_queue *q, struct qpod *qp, enum mover by)
{
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_NONE, "a pod entering activeQ is elsewhere");
    if (qp->pub.initial_attempt_ns == KS_TIME_NONE)
        qp->pub.initial_attempt_ns = ks_queue_now(q);
    uint32_t refs = by == BY_SLOW ? 2 : 1;
    /* relaxed: the entry's reference (and the call's), taken before the entry exists */
    atomic_fetch_add_explicit(&qp->refs, refs, memory_order_relaxed);
    /* the popper's mark (in flight) comes after: the push publishes the entry */
    set_where(qp, by == BY_SLOW ? WHERE_PUSHING : KS_WHERE_ACTIVE);
    /* relaxed: a count; the popper decrements it after the push published the entry */
    atomic_fetch_add_explicit(&q->nactive, 1, memory_order_relaxed);
    int rc = ks_activeq_push_mp(q->active, &qp->pub, &qp->handle);
    if (rc < 0) {
        atomic_fetch_sub_explicit(&q->nactive, 1, memory_order_relaxed);
        set_where(qp, KS_WHERE_NONE);
        atomic_fetch_sub_explicit(&qp->refs, refs, memory_order_relaxed);
        return rc;
    }
    if (by == BY_SLOW) {
        /* release, as set_where; fails when the popper took the pod first (in flight, or since gone) */
        uint8_t pushing = WHERE_PUSHING;
        atomic_compare_exchange_strong_explicit(&qp->where, &pushing, KS_WHERE_ACTIVE, memory_order_release,
                                                memory_order_relaxed);
        qpod_unref(qp);
    }
    return 0;
}

/* Take @qp out of activeQ; false when the popper got it first (it is in flight). */
static bool active_remove(struct ks_queue *q, struct qpod *qp)
{
    if (!ks_activeq_remove(q->active, &qp->handle))
        return false;
    atomic_fetch_sub_explicit(&q->nactive, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_NONE);
    return true;
}

/* ---- moves ------------------------------------------------------------------------------------------ */

/* Run PreEnqueue; true when the pod may enter activeQ. */
static bool pre_enqueue(struct ks_queue *q, struct qpod *qp)
{
    const struct ks_event_map *m = map_of(q, qp);
    struct ks_status st = {.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
    uint16_t slot = m ? ks_event_map_pre_enqueue(m, qp->pub.pod, &st) : KS_NO_PLUGIN;
    qp->gated = slot != KS_NO_PLUGIN;
    qp->gating_plugin = slot;
    qp->gated_message = KS_ID_EMPTY;
    if (qp->gated) {
        count_rejections(q, qp, (UINT64_C(1) << slot) & ~qp->pub.unschedulable_plugins, 1);
        qp->pub.unschedulable_plugins |= UINT64_C(1) << slot;
        qp->gated_message = st.nreasons ? st.reasons[0] : KS_ID_EMPTY;
        qp->wait_events = KS_EVENT_ALL;
    }
    return !qp->gated;
}

/* moveToActiveQ for a pod that is in no place: activeQ, or unschedulable when gated. Under `slow`. */
static int to_active(struct ks_queue *q, struct qpod *qp, enum mover by)
{
    if (!pre_enqueue(q, qp)) {
        unsched_add(q, qp);
        return 0;
    }
    return active_push(q, qp, by);
}

/* requeuePodWithQueueingStrategy for a pod that is in no place. Under `slow`. */
static int requeue(struct ks_queue *q, struct qpod *qp, enum ks_requeue strategy, enum mover by)
{
    if (strategy == KS_REQUEUE_SKIP) {
        unsched_add(q, qp);
        return 0;
    }
    if (backoff_expiry(q, qp) > ks_queue_now(q))
        return backoff_push(q, qp);
    return to_active(q, qp, by);
}

/* requeue, or the unschedulable list (it never fails) when out of memory. Under `slow`. */
static void requeue_or_park(struct ks_queue *q, struct qpod *qp, enum ks_requeue strategy, enum mover by)
{
    if (requeue(q, qp, strategy, by) < 0)
        unsched_add(q, qp);
}

/* unsched_add for a stripe holder: takes `slow` unless *@slow says it holds it already (then it does). */
static void park(struct ks_queue *q, struct qpod *qp, bool *slow)
{
    if (!*slow)
        slow_lock(q);
    *slow = true;
    unsched_add(q, qp);
}

/*
 * Where @qp is, for the holder of its stripe's lock, settled: KS_WHERE_NONE when it was in
 * activeQ and this call took it out (the caller owns it now), KS_WHERE_IN_FLIGHT when the
 * popper has it, or KS_WHERE_BACKOFF / KS_WHERE_UNSCHEDULABLE with `slow` taken (*@slow
 * set): pods move into, out of and between the slow places only under `slow`.
 */
static enum ks_queue_where settle(struct ks_queue *q, struct qpod *qp, bool *slow)
{
    for (;;) {
        enum ks_queue_where w = where_of(qp);
        if (w == KS_WHERE_ACTIVE)
            return active_remove(q, qp) ? KS_WHERE_NONE : KS_WHERE_IN_FLIGHT;
        if (w == KS_WHERE_IN_FLIGHT)
            return w;
        /* in a slow place, or on its way out of one (a move or a flush holds `slow`) */
        slow_lock(q);
        w = where_of(qp);
        if (w == KS_WHERE_BACKOFF || w == KS_WHERE_UNSCHEDULABLE) {
            *slow = true;
            return w;
        }
        slow_unlock(q); /* it went to activeQ meanwhile */
    }
}

/* ---- public ------------------------------------------------------------------------------------ */

int ks_queue_create_opts(const struct ks_queue_opts *opts, struct ks_queue **out)
{
    struct ks_queue *q = calloc(1, sizeof(*q));
    *out = NULL;
    if (!q)
        return -ENOMEM;
    q->opts = *opts;
    if (q->opts.max_unschedulable_ns <= 0)
        q->opts.max_unschedulable_ns = KS_QUEUE_MAX_UNSCHEDULABLE_NS;
    if (q->opts.max_backoff_ns < q->opts.initial_backoff_ns)
        q->opts.max_backoff_ns = q->opts.initial_backoff_ns;
    atomic_init(&q->cycle, 0);
    atomic_init(&q->nactive, 0);
    atomic_init(&q->ninflight, 0);
    int rc = ks_activeq_create(opts->less, opts->less_ctx, entry_released, q, &q->active);
    if (rc < 0) {
        free(q);
        return rc;
    }
    if (opts->nprofiles && !(q->rejections = calloc((size_t)opts->nprofiles * 64, sizeof(*q->rejections)))) {
        ks_activeq_destroy(q->active);
        free(q);
        return -ENOMEM;
    }
    ks_mutex_init_adaptive(&q->slow, KS_LOCK_QUEUE);
    for (uint32_t i = 0; i < STRIPES; i++)
        ks_mutex_init_adaptive(&q->stripes[i].lock, KS_LOCK_QUEUE_POD);
    *out = q;
    return 0;
}

int ks_queue_create(ks_queue_less_fn less, const void *less_ctx, struct ks_queue **out)
{
    struct ks_queue_opts o = {.less = less, .less_ctx = less_ctx};
    return ks_queue_create_opts(&o, out);
}

void ks_queue_destroy(struct ks_queue *q)
{
    if (!q)
        return;
    /* every queued struct: drop the queue's reference; activeQ entries drop theirs */
    for (uint32_t k = 0; k < STRIPES; k++) {
        struct stripe *s = &q->stripes[k];
        for (uint32_t i = 0; i < s->cap; i++) {
            for (struct qpod *qp = s->table[i], *next; qp; qp = next) {
                next = qp->hnext;
                if (where_of(qp) == KS_WHERE_ACTIVE)
                    ks_activeq_remove(q->active, &qp->handle);
                qpod_unref(qp);
            }
        }
    }
    ks_activeq_destroy(q->active);
    for (uint32_t k = 0; k < STRIPES; k++) {
        free(q->stripes[k].table);
        ks_mutex_destroy(&q->stripes[k].lock);
    }
    free(q->heap);
    free(q->rejections);
    ks_mutex_destroy(&q->slow);
    free(q);
}

int ks_queue_add(struct ks_queue *q, const struct ks_pod *pod, int64_t now_ns)
{
    uint64_t hash = ks__queue_key_hash(pod);
    struct stripe *s = stripe_at(q, hash);
    stripe_lock(s);
    if (ks__queue_table_find(s, hash, pod)) {
        stripe_unlock(s);
        return -EEXIST;
    }
    struct qpod *qp = qpod_new(q, pod, hash, now_ns);
    if (!qp || ks__queue_table_insert(s, qp) < 0) {
        stripe_unlock(s);
        free(qp);
        return -ENOMEM;
    }
    /* moveToActiveQ: the stripe's lock is enough for activeQ; a gated pod needs `slow` */
    int rc = 0;
    if (pre_enqueue(q, qp)) {
        rc = active_push(q, qp, BY_STRIPE);
    } else {
        slow_lock(q);
        unsched_add(q, qp);
        slow_unlock(q);
    }
    if (rc < 0) {
        ks__queue_table_remove(s, qp);
        stripe_unlock(s);
        free(qp); /* nothing taken over */
        return rc;
    }
    stripe_unlock(s);
    return 0;
}

struct ks_queued_pod *ks_queue_pop(struct ks_queue *q, bool block)
{
    struct ks_queued_pod *p = ks_activeq_pop_sc(q->active, block);
    if (!p)
        return NULL;
    struct qpod *qp = qpod_of(p);
    /* the claim made this thread the struct's owner until it gives the pod back */
    p->attempts++;
    count_rejections(q, qp, p->unschedulable_plugins, -1);
    p->unschedulable_plugins = 0;
    /* relaxed: the cycle counter is written by this thread only; readers want a recent value */
    qp->pop_cycle = atomic_fetch_add_explicit(&q->cycle, 1, memory_order_relaxed) + 1;
    atomic_fetch_sub_explicit(&q->nactive, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->ninflight, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_IN_FLIGHT); /* release: the writes above come with it */
    return p;
}

struct ks_queued_pod *ks_queue_take(struct ks_queue *q, const struct ks_pod *pod, bool *gated)
{
    uint64_t hash = ks__queue_key_hash(pod);
    struct stripe *s = stripe_at(q, hash);
    stripe_lock(s);
    struct qpod *qp = ks__queue_table_find(s, hash, pod);
    bool slow = false;
    enum ks_queue_where w = qp ? settle(q, qp, &slow) : KS_WHERE_IN_FLIGHT;
    *gated = w == KS_WHERE_UNSCHEDULABLE && qp->gated;
    if (w == KS_WHERE_IN_FLIGHT || *gated) {
        if (slow)
            slow_unlock(q);
        stripe_unlock(s);
        return NULL;
    }
    if (w == KS_WHERE_BACKOFF)
        backoff_remove(q, qp);
    else if (w == KS_WHERE_UNSCHEDULABLE)
        unsched_remove(q, qp);
    if (slow)
        slow_unlock(q);
    struct ks_queued_pod *p = &qp->pub;
    p->attempts++;
    count_rejections(q, qp, p->unschedulable_plugins, -1);
    p->unschedulable_plugins = 0;
    if (p->initial_attempt_ns == KS_TIME_NONE)
        p->initial_attempt_ns = ks_queue_now(q);
    qp->pop_cycle = atomic_load_explicit(&q->cycle, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->ninflight, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_IN_FLIGHT);
    stripe_unlock(s);
    return p;
}

uint64_t ks_queue_cycle(struct ks_queue *q)
{
    return atomic_load_explicit(&q->cycle, memory_order_relaxed);
}

unsigned ks_event_kind(const struct ks_cluster_event *ev)
{
    switch (ev->resource) {
    case KS_ER_NODE:
        if (ev->actions & KS_ACT_ADD)
            return KS_EVENT_NODE_ADD;
        return ev->actions & KS_ACT_DELETE ? KS_EVENT_NODE_DELETE : KS_EVENT_NODE_UPDATE;
    case KS_ER_POD:
    case KS_ER_ASSIGNED_POD:
        if (ev->actions & KS_ACT_ADD)
            return KS_EVENT_ASSIGNED_POD_ADD;
        return ev->actions & KS_ACT_DELETE ? KS_EVENT_ASSIGNED_POD_DELETE : KS_EVENT_ASSIGNED_POD_UPDATE;
    case KS_ER_UNSCHEDULED_POD:
        return KS_EVENT_UNSCHEDULED_POD_UPDATE;
    case KS_ER_PV:
    case KS_ER_PVC:
    case KS_ER_CSI_NODE:
    case KS_ER_CSI_DRIVER:
    case KS_ER_CSI_STORAGE_CAPACITY:
    case KS_ER_STORAGE_CLASS:
    case KS_ER_VOLUME_ATTACHMENT:
        return KS_EVENT_STORAGE;
    case KS_ER_WILDCARD:
        return KS_EVENT_ALL;
    default:
        return KS_EVENT_OTHER;
    }
}

/* Make @qp's successor carrying @pod (an update, same key): same bookkeeping, new struct. NULL on ENOMEM. */
static struct qpod *new_version(struct ks_queue *q, struct qpod *qp, const struct ks_pod *pod)
{
    struct qpod *nq = malloc(sizeof(*nq));
    if (!nq)
        return NULL;
    *nq = (struct qpod){
        .pub = qp->pub,
        .q = q,
        .hash = ks__queue_key_hash(pod),
        .gated = qp->gated,
        .gating_plugin = qp->gating_plugin,
        .gated_message = qp->gated_message,
        .wait_events = qp->wait_events,
        .pop_cycle = qp->pop_cycle,
        .heap_index = UINT32_MAX,
    };
    nq->pub.pod = pod;
    atomic_init(&nq->refs, 1);
    atomic_init(&nq->where, KS_WHERE_NONE);
    return nq;
}

/* Swap @old (in no place) for @nq in stripe @s's table; the caller drops @old's reference. */
static void replace(struct stripe *s, struct qpod *old, struct qpod *nq)
{
    bool listed = old->in_table;
    ks__queue_table_remove(s, old);
    if (listed && ks__queue_table_insert(s, nq) < 0)
        nq->in_table = false; /* cannot happen: the table just shrank by one */
}

int ks_queue_add_unschedulable(struct ks_queue *q, struct ks_queued_pod *p, uint64_t cycle, unsigned events)
{
    struct qpod *qp = qpod_of(p);
    struct stripe *s = stripe_at(q, qp->hash);
    const struct ks_pod *dropped = NULL;
    int rc = 0;

    stripe_lock(s);
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_IN_FLIGHT, "a pod given back was not in flight");
    atomic_fetch_sub_explicit(&q->ninflight, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_NONE);
    if (qp->deleted) {
        /* its cycle may have nominated it after the deletion: that nomination goes too (below) */
        if (q->opts.nominator)
            dropped = ks_pod_get(qp->pub.pod);
        qpod_unref(qp);
        goto out;
    }
    bool updated = qp->pending != NULL;
    if (updated) {
        /* the latest version comes back (handleSchedulingFailure re-reads the pod) */
        struct qpod *nq = new_version(q, qp, qp->pending);
        if (nq) {
            qp->pending = NULL; /* its reference moved to nq */
            replace(s, qp, nq);
            qpod_unref(qp);
            qp = nq;
        } else {
            rc = -ENOMEM; /* the version it had comes back */
        }
    }
    qp->pub.timestamp_ns = ks_queue_now(q);
    qp->wait_events = events;
    count_rejections(q, qp, qp->pub.unschedulable_plugins, 1);
    slow_lock(q);
    if (events == 0 || updated || (q->has_move_request && q->move_request_cycle >= cycle)) {
        /* an error, or something happened while it was being scheduled: retry after backoff */
        requeue_or_park(q, qp, KS_REQUEUE_AFTER_BACKOFF, BY_STRIPE);
    } else {
        unsched_add(q, qp);
    }
    slow_unlock(q);
out:
    stripe_unlock(s);
    if (dropped) {
        /* the nominator's lock ranks before the queue's (ksched/base/lock.h): taken after them */
        ks_nominator_remove(q->opts.nominator, dropped);
        ks_pod_put(dropped);
    }
    return rc;
}

void ks_queue_done(struct ks_queue *q, struct ks_queued_pod *p)
{
    struct qpod *qp = qpod_of(p);
    struct stripe *s = stripe_at(q, qp->hash);
    stripe_lock(s);
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_IN_FLIGHT, "a pod finished was not in flight");
    atomic_fetch_sub_explicit(&q->ninflight, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_NONE);
    ks__queue_table_remove(s, qp);
    qpod_unref(qp);
    stripe_unlock(s);
}

/* isEventOfInterest over every profile. */
static bool interested(const struct ks_queue *q, const struct ks_cluster_event *ev)
{
    if (ev->resource == KS_ER_WILDCARD || !q->opts.maps)
        return true;
    for (uint32_t i = 0; i < q->opts.nprofiles; i++) {
        if (q->opts.maps[i] && ks_event_map_interested(q->opts.maps[i], ev))
            return true;
    }
    return false;
}

/* movePodsToActiveOrBackoffQueue over the unschedulable list. Under `slow`. */
static void move_locked(struct ks_queue *q, const struct ks_cluster_event *ev, unsigned kinds,
                        const void *old_obj, const void *new_obj, bool timeout)
{
    int64_t now = timeout ? ks_queue_now(q) : 0;
    /* a pod PreEnqueue gates again goes back to the tail: the walk ends at the tail it began with */
    struct qpod *last = someone_waits(q, kinds) ? q->utail : NULL;
    for (struct qpod *qp = last ? q->uhead : NULL, *next; qp; qp = next) {
        next = qp == last ? NULL : qp->unext;
        if (!(qp->wait_events & kinds))
            continue;
        if (timeout && now - qp->pub.timestamp_ns <= q->opts.max_unschedulable_ns)
            continue;
        const struct ks_event_map *m = map_of(q, qp);
        if (qp->gated && (!m || !ev || !ks_event_map_registers(m, qp->gating_plugin, ev)))
            continue; /* only the gating plugin's events can let it through */
        enum ks_requeue s = KS_REQUEUE_AFTER_BACKOFF;
        if (m && ev)
            s = ks_event_map_worth(m, qp->pub.unschedulable_plugins, qp->pub.pod, ev, old_obj, new_obj);
        if (s == KS_REQUEUE_SKIP)
            continue;
        unsched_remove(q, qp);
        requeue_or_park(q, qp, s, BY_SLOW);
    }
    q->move_request_cycle = atomic_load_explicit(&q->cycle, memory_order_relaxed);
    q->has_move_request = true;
}

void ks_queue_move_event(struct ks_queue *q, const struct ks_cluster_event *ev, const void *old_obj,
                         const void *new_obj)
{
    if (!interested(q, ev))
        return;
    slow_lock(q);
    move_locked(q, ev, ks_event_kind(ev), old_obj, new_obj, false);
    slow_unlock(q);
}

void ks_queue_move(struct ks_queue *q, unsigned events)
{
    slow_lock(q);
    move_locked(q, NULL, events, NULL, NULL, false);
    slow_unlock(q);
}

void ks_queue_activate(struct ks_queue *q, const struct ks_pod *pod, bool gated_only)
{
    uint64_t hash = ks__queue_key_hash(pod);
    struct stripe *s = stripe_at(q, hash);
    bool slow = false;
    stripe_lock(s);
    struct qpod *qp = ks__queue_table_find(s, hash, pod);
    enum ks_queue_where w = qp ? settle(q, qp, &slow) : KS_WHERE_IN_FLIGHT;
    if (w == KS_WHERE_NONE) {
        /* it was in activeQ: back where it was */
        if (active_push(q, qp, BY_STRIPE) < 0)
            park(q, qp, &slow);
    } else if (gated_only && (w != KS_WHERE_UNSCHEDULABLE || !qp->gated)) {
        /* not held back by PreEnqueue: it stays */
    } else if (w == KS_WHERE_BACKOFF || w == KS_WHERE_UNSCHEDULABLE) {
        if (w == KS_WHERE_BACKOFF)
            backoff_remove(q, qp);
        else
            unsched_remove(q, qp);
        if (to_active(q, qp, BY_STRIPE) < 0)
            unsched_add(q, qp);
    }
    if (slow)
        slow_unlock(q);
    stripe_unlock(s);
}

int ks_queue_update(struct ks_queue *q, const struct ks_pod *old_pod, const struct ks_pod *new_pod)
{
    int rc = 0;
    uint64_t hash = ks__queue_key_hash(new_pod), old_hash = old_pod ? ks__queue_key_hash(old_pod) : hash;
    struct stripe *s = stripe_at(q, hash);
    stripe_lock(s);
    struct qpod *qp =
        old_pod && stripe_at(q, old_hash) == s ? ks__queue_table_find(s, old_hash, old_pod) : NULL;
    if (!qp)
        qp = ks__queue_table_find(s, hash, new_pod);
    if (!qp) {
        /* not queued: it enters the active queue (Update of an unknown pod) */
        stripe_unlock(s);
        rc = ks_queue_add(q, new_pod, ks_queue_now(q));
        if (rc == -EEXIST) { /* added meanwhile by another thread: update that one */
            rc = ks_queue_update(q, old_pod, new_pod);
        } else if (rc < 0) {
            ks_pod_put(new_pod);
        }
        return rc;
    }
    bool slow = false;
    enum ks_queue_where w = settle(q, qp, &slow);
    if (w == KS_WHERE_IN_FLIGHT) {
        ks_pod_put(qp->pending);
        qp->pending = new_pod;
        goto out;
    }
    struct qpod *nq = new_version(q, qp, new_pod);
    if (!nq) {
        /* out of memory: the old version stays where it was (or waits as unschedulable) */
        if (w == KS_WHERE_NONE && active_push(q, qp, BY_STRIPE) < 0)
            park(q, qp, &slow);
        ks_pod_put(new_pod);
        rc = -ENOMEM;
        goto out;
    }
    if (w == KS_WHERE_NONE) {
        /* it was in activeQ: a new entry with the new key (activeQ.update re-sorts) */
        replace(s, qp, nq);
        if (active_push(q, nq, BY_STRIPE) < 0)
            park(q, nq, &slow);
        goto replaced;
    }
    if (w == KS_WHERE_BACKOFF) {
        backoff_remove(q, qp);
        replace(s, qp, nq);
        if (backoff_push(q, nq) < 0)
            unsched_add(q, nq);
        goto replaced;
    }
    /* unschedulable: does the update itself help (QueueingHint for Pod/Update)? */
    unsched_remove(q, qp);
    replace(s, qp, nq);
    const struct ks_event_map *m = map_of(q, nq);
    struct ks_cluster_event evs[KS_ACTION_COUNT];
    uint32_t n = old_pod ? ks_pod_update_events(old_pod, new_pod, KS_ER_UNSCHEDULED_POD, evs) : 0;
    enum ks_requeue strategy = m ? KS_REQUEUE_SKIP : KS_REQUEUE_AFTER_BACKOFF;
    for (uint32_t i = 0; i < n && m && strategy == KS_REQUEUE_SKIP; i++) {
        if (nq->gated && !ks_event_map_registers(m, nq->gating_plugin, &evs[i]))
            continue;
        strategy = ks_event_map_worth(m, nq->pub.unschedulable_plugins, new_pod, &evs[i], old_pod, new_pod);
    }
    requeue_or_park(q, nq, strategy, BY_STRIPE);
replaced:
    /* last: the old version may be @old_pod's only owner, and the hints above read it */
    qpod_unref(qp);
out:
    if (slow)
        slow_unlock(q);
    stripe_unlock(s);
    return rc;
}

bool ks_queue_delete(struct ks_queue *q, const struct ks_pod *pod)
{
    uint64_t hash = ks__queue_key_hash(pod);
    struct stripe *s = stripe_at(q, hash);
    stripe_lock(s);
    struct qpod *qp = ks__queue_table_find(s, hash, pod);
    if (!qp) {
        stripe_unlock(s);
        return false;
    }
    bool slow = false;
    enum ks_queue_where w = settle(q, qp, &slow);
    ks__queue_table_remove(s, qp);
    if (w == KS_WHERE_IN_FLIGHT) {
        qp->deleted = true; /* the scheduler drops it when it comes back */
    } else {
        if (w == KS_WHERE_BACKOFF)
            backoff_remove(q, qp);
        else if (w == KS_WHERE_UNSCHEDULABLE)
            unsched_remove(q, qp);
        count_rejections(q, qp, qp->pub.unschedulable_plugins, -1);
        qpod_unref(qp);
    }
    if (slow)
        slow_unlock(q);
    stripe_unlock(s);
    return true;
}

void ks_queue_flush_backoff(struct ks_queue *q)
{
    slow_lock(q);
    int64_t now = ks_queue_now(q);
    while (q->nheap && backoff_expiry(q, q->heap[0]) <= now) {
        struct qpod *qp = q->heap[0];
        backoff_remove(q, qp);
        if (to_active(q, qp, BY_SLOW) < 0) {
            /* out of memory: try again at the next flush */
            backoff_push(q, qp);
            break;
        }
    }
    slow_unlock(q);
}

void ks_queue_flush_unschedulable(struct ks_queue *q)
{
    static const struct ks_cluster_event timeout = {KS_ER_WILDCARD, KS_ACT_ALL};
    slow_lock(q);
    int64_t now = ks_queue_now(q);
    bool any = false;
    for (struct qpod *qp = q->uhead; qp && !any; qp = qp->unext)
        any = !qp->gated && now - qp->pub.timestamp_ns > q->opts.max_unschedulable_ns;
    if (any) /* EventUnschedulableTimeout, only when some pod is due (a move request then) */
        move_locked(q, &timeout, KS_EVENT_ALL, NULL, NULL, true);
    slow_unlock(q);
}

bool ks_queue_backoff_bounds(struct ks_queue *q, int64_t *first_ns, int64_t *last_ns)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    slow_lock(q);
    if (q->nheap)
        first = backoff_expiry(q, q->heap[0]);
    for (uint32_t i = 0; i < q->nheap; i++) {
        int64_t e = backoff_expiry(q, q->heap[i]);
        if (e > last)
            last = e;
    }
    bool any = q->nheap > 0;
    slow_unlock(q);
    *first_ns = first;
    *last_ns = last;
    return any;
}

bool ks_queue_pod_info(struct ks_queue *q, const struct ks_pod *pod, struct ks_queue_pod_info *info)
{
    uint64_t hash = ks__queue_key_hash(pod);
    struct stripe *s = stripe_at(q, hash);
    stripe_lock(s);
    slow_lock(q); /* the moves write the gate fields under it */
    struct qpod *qp = ks__queue_table_find(s, hash, pod);
    if (qp) {
        enum ks_queue_where where = where_of(qp);
        /* in activeQ the popper may take the entry, and write it, at any moment (no lock) */
        bool owned = where != KS_WHERE_ACTIVE && where != KS_WHERE_IN_FLIGHT;
        *info = (struct ks_queue_pod_info){
            .where = where,
            .gated = qp->gated,
            .gating_plugin = qp->gating_plugin,
            .gated_message = qp->gated_message,
            .backoff_expiry_ns = owned ? backoff_expiry(q, qp) : 0,
            .pod = owned ? qp->pub : (struct ks_queued_pod){.pod = qp->pub.pod, .profile = qp->pub.profile},
        };
    }
    slow_unlock(q);
    stripe_unlock(s);
    return qp != NULL;
}

void ks_queue_count(struct ks_queue *q, struct ks_queue_counts *c)
{
    slow_lock(q);
    c->active = atomic_load_explicit(&q->nactive, memory_order_relaxed);
    c->backoff = q->nheap;
    c->unschedulable = q->nunsched;
    c->gated = q->ngated;
    c->in_flight = atomic_load_explicit(&q->ninflight, memory_order_relaxed);
    slow_unlock(q);
}

uint32_t ks_queue_active(struct ks_queue *q)
{
    /* relaxed: a count on its own */
    return atomic_load_explicit(&q->nactive, memory_order_relaxed);
}

void ks_queue_rejections(struct ks_queue *q, uint16_t profile, uint32_t out[64])
{
    const _Atomic uint32_t *c =
        q->rejections && profile < q->opts.nprofiles ? &q->rejections[(size_t)profile * 64] : NULL;
    for (uint32_t i = 0; i < 64; i++) /* relaxed: each count on its own, as a scrape reads it */
        out[i] = c ? atomic_load_explicit(&c[i], memory_order_relaxed) : 0;
}

void ks_queue_close(struct ks_queue *q)
{
    ks_activeq_close(q->active);
}
