/*
 * queue.c - the scheduling queue of include/ksched/queue.h: activeQ (queue/activeq.c),
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
 * `where` says which place holds it. Every transition happens under `lock`, except the
 * pop, which is lock-free: the popper wins the activeQ entry's claim word, then marks the
 * pod in flight. A locked operation that finds a pod in activeQ first tries to remove its
 * entry (ks_activeq_remove); if the popper won, the pod is in flight. The struct is freed
 * when its last reference goes: the queue holds one while the pod is queued or in
 * flight, and each activeQ entry holds one until the entry is reclaimed, because the
 * entry's key copy points at the pod. That is also why an update never changes a
 * struct's pod: it makes a new struct.
 *
 * Invariants (ks_queue_check): a pod is in exactly one of activeQ, backoffQ, the
 * unschedulable list or in flight; the counters equal the sizes; backoffQ is a heap on
 * (backoff expiry, QueueSort) with correct indices; gated pods are unschedulable.
 */
#include "ksched/queue.h"
#include "ksched/lock.h"

#include "ksched/api.h"
#include "ksched/intern.h"
#include "ksched/nominator.h"
#include "ksched/rcu.h"
#include "ksched/spin.h"
#include "ksched/status_types.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct qpod {
    struct ks_queued_pod pub;
    struct ks_queue *q;
    _Atomic uint32_t refs; /* the queue's own (while queued or in flight) + one per activeQ entry */
    _Atomic uint8_t where; /* enum ks_queue_where: written under lock, or by the popper (-> in flight) */
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

struct ks_queue {
    struct ks_queue_opts opts;
    struct ks_activeq *active;
    _Atomic uint64_t cycle;   /* pods popped (schedulingCycle) */
    _Atomic uint32_t nactive; /* decremented by the popper */
    _Atomic uint32_t ninflight;

    pthread_mutex_t lock; /* everything below */
    uint64_t move_request_cycle;
    bool has_move_request;
    struct qpod **heap; /* backoffQ */
    uint32_t nheap, capheap;
    struct qpod *uhead, *utail; /* unschedulable pods, in arrival order */
    uint32_t nunsched, ngated;
    struct qpod **table; /* lookup by namespace/name */
    uint32_t ntable, captable;

    /* nprofiles x 64: queued pods (not in flight) whose unschedulable_plugins hold each slot */
    _Atomic uint32_t *rejections;
};

static inline struct qpod *qpod_of(const struct ks_queued_pod *p)
{
    return (struct qpod *)((char *)p - offsetof(struct qpod, pub));
}

int64_t ks_queue_now(const struct ks_queue *q)
{
    return q->opts.clock.now ? q->opts.clock.now(q->opts.clock.ctx) : ks__mono_ns();
}

static enum ks_queue_where where_of(const struct qpod *qp)
{
    /* acquire: pairs with the popper's release store, so its writes to pub are visible */
    return (enum ks_queue_where)atomic_load_explicit(&qp->where, memory_order_acquire);
}

static void set_where(struct qpod *qp, enum ks_queue_where w)
{
    /* release: a reader that sees the new place also sees the fields written before */
    atomic_store_explicit(&qp->where, (uint8_t)w, memory_order_release);
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

static struct qpod *qpod_new(struct ks_queue *q, const struct ks_pod *pod, int64_t now)
{
    struct qpod *qp = calloc(1, sizeof(*qp));
    if (!qp)
        return NULL;
    qp->pub.pod = pod;
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

/* ---- lookup table (under lock) --------------------------------------------------------------- */

static uint64_t key_hash(const struct ks_pod *pod)
{
    if (!pod->meta.name)
        return (uint64_t)(uintptr_t)pod * 0x9E3779B97F4A7C15ull;
    uint64_t h = 1469598103934665603ull ^ pod->meta.namespace_id;
    for (const char *s = pod->meta.name; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool same_key(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a == b)
        return true;
    if (!a->meta.name || !b->meta.name)
        return false;
    return a->meta.namespace_id == b->meta.namespace_id && strcmp(a->meta.name, b->meta.name) == 0;
}

static struct qpod *table_find(const struct ks_queue *q, const struct ks_pod *pod)
{
    if (!q->captable)
        return NULL;
    for (struct qpod *qp = q->table[key_hash(pod) & (q->captable - 1)]; qp; qp = qp->hnext) {
        if (same_key(qp->pub.pod, pod))
            return qp;
    }
    return NULL;
}

static int table_insert(struct ks_queue *q, struct qpod *qp)
{
    if (q->ntable + 1 > q->captable) {
        uint32_t cap = q->captable ? q->captable * 2 : 256;
        struct qpod **t = calloc(cap, sizeof(*t));
        if (!t)
            return -ENOMEM;
        for (uint32_t i = 0; i < q->captable; i++) {
            for (struct qpod *x = q->table[i], *next; x; x = next) {
                next = x->hnext;
                uint64_t b = key_hash(x->pub.pod) & (cap - 1);
                x->hnext = t[b];
                t[b] = x;
            }
        }
        free(q->table);
        q->table = t;
        q->captable = cap;
    }
    uint64_t b = key_hash(qp->pub.pod) & (q->captable - 1);
    qp->hnext = q->table[b];
    q->table[b] = qp;
    qp->in_table = true;
    q->ntable++;
    return 0;
}

static void table_remove(struct ks_queue *q, struct qpod *qp)
{
    if (!qp->in_table)
        return;
    struct qpod **pp = &q->table[key_hash(qp->pub.pod) & (q->captable - 1)];
    while (*pp != qp)
        pp = &(*pp)->hnext;
    *pp = qp->hnext;
    qp->hnext = NULL;
    qp->in_table = false;
    q->ntable--;
}

/* ---- backoff ------------------------------------------------------------------------------------ */

/* calculateBackoffDuration: initial x 2^(attempts-1), capped; none before the first attempt. */
static int64_t backoff_duration(const struct ks_queue *q, uint32_t attempts)
{
    int64_t d = q->opts.initial_backoff_ns, max = q->opts.max_backoff_ns;
    if (attempts == 0 || d <= 0)
        return 0;
    for (uint32_t i = 1; i < attempts; i++) {
        if (d > max - d) /* subtraction: no overflow */
            return max;
        d += d;
    }
    return d > max ? max : d;
}

static int64_t backoff_expiry(const struct ks_queue *q, const struct qpod *qp)
{
    return qp->pub.timestamp_ns + backoff_duration(q, qp->pub.attempts);
}

static bool heap_before(const struct ks_queue *q, const struct qpod *a, const struct qpod *b)
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
    while (i > 0 && heap_before(q, qp, q->heap[(i - 1) / 2])) {
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
        if (l < q->nheap && heap_before(q, q->heap[l], best)) {
            m = l;
            best = q->heap[l];
        }
        if (r < q->nheap && heap_before(q, q->heap[r], best))
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
    set_where(qp, KS_WHERE_NONE);
}

/* ---- activeQ ------------------------------------------------------------------------------------- */

static int active_push(struct ks_queue *q, struct qpod *qp)
{
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_NONE, "a pod entering activeQ is elsewhere");
    if (qp->pub.initial_attempt_ns == KS_TIME_NONE)
        qp->pub.initial_attempt_ns = ks_queue_now(q);
    /* relaxed: the entry's reference is taken before the entry exists */
    atomic_fetch_add_explicit(&qp->refs, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_ACTIVE);
    /* relaxed: a count; the popper decrements it after the push published the entry */
    atomic_fetch_add_explicit(&q->nactive, 1, memory_order_relaxed);
    int rc = ks_activeq_push_mp(q->active, &qp->pub, &qp->handle);
    if (rc < 0) {
        atomic_fetch_sub_explicit(&q->nactive, 1, memory_order_relaxed);
        set_where(qp, KS_WHERE_NONE);
        atomic_fetch_sub_explicit(&qp->refs, 1, memory_order_relaxed);
    }
    return rc;
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

/* moveToActiveQ for a pod that is in no place: activeQ, or unschedulable when gated. */
static int to_active(struct ks_queue *q, struct qpod *qp)
{
    if (!pre_enqueue(q, qp)) {
        unsched_add(q, qp);
        return 0;
    }
    return active_push(q, qp);
}

/* requeuePodWithQueueingStrategy for a pod that is in no place. */
static int requeue(struct ks_queue *q, struct qpod *qp, enum ks_requeue strategy)
{
    if (strategy == KS_REQUEUE_SKIP) {
        unsched_add(q, qp);
        return 0;
    }
    if (backoff_expiry(q, qp) > ks_queue_now(q))
        return backoff_push(q, qp);
    return to_active(q, qp);
}

/* A place for a pod whose move failed for lack of memory: the unschedulable list never fails. */
static void requeue_or_park(struct ks_queue *q, struct qpod *qp, enum ks_requeue strategy)
{
    if (requeue(q, qp, strategy) < 0)
        unsched_add(q, qp);
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
    ks_mutex_init_adaptive(&q->lock);
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
    for (uint32_t i = 0; i < q->captable; i++) {
        for (struct qpod *qp = q->table[i], *next; qp; qp = next) {
            next = qp->hnext;
            if (where_of(qp) == KS_WHERE_ACTIVE)
                ks_activeq_remove(q->active, &qp->handle);
            qpod_unref(qp);
        }
    }
    ks_activeq_destroy(q->active);
    free(q->table);
    free(q->heap);
    free(q->rejections);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

int ks_queue_add(struct ks_queue *q, const struct ks_pod *pod, int64_t now_ns)
{
    int rc;
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    if (table_find(q, pod)) {
        ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
        return -EEXIST;
    }
    struct qpod *qp = qpod_new(q, pod, now_ns);
    if (!qp || (rc = table_insert(q, qp)) < 0) {
        ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
        free(qp);
        return -ENOMEM;
    }
    if ((rc = to_active(q, qp)) < 0) {
        table_remove(q, qp);
        ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
        free(qp); /* nothing taken over */
        return rc;
    }
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
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

/* Make @qp's successor carrying @pod (an update): same bookkeeping, new struct. NULL on ENOMEM. */
static struct qpod *new_version(struct ks_queue *q, struct qpod *qp, const struct ks_pod *pod)
{
    struct qpod *nq = malloc(sizeof(*nq));
    if (!nq)
        return NULL;
    *nq = (struct qpod){
        .pub = qp->pub,
        .q = q,
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

/* Swap @old (in no place) for @nq in the lookup table; the caller drops @old's reference. */
static void replace(struct ks_queue *q, struct qpod *old, struct qpod *nq)
{
    bool listed = old->in_table;
    table_remove(q, old);
    if (listed && table_insert(q, nq) < 0)
        nq->in_table = false; /* cannot happen: the table just shrank by one */
}

int ks_queue_add_unschedulable(struct ks_queue *q, struct ks_queued_pod *p, uint64_t cycle, unsigned events)
{
    struct qpod *qp = qpod_of(p);
    const struct ks_pod *dropped = NULL;
    int rc = 0;

    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
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
            replace(q, qp, nq);
            qpod_unref(qp);
            qp = nq;
        } else {
            rc = -ENOMEM; /* the version it had comes back */
        }
    }
    qp->pub.timestamp_ns = ks_queue_now(q);
    qp->wait_events = events;
    count_rejections(q, qp, qp->pub.unschedulable_plugins, 1);
    if (events == 0 || updated || (q->has_move_request && q->move_request_cycle >= cycle)) {
        /* an error, or something happened while it was being scheduled: retry after backoff */
        requeue_or_park(q, qp, KS_REQUEUE_AFTER_BACKOFF);
    } else {
        unsched_add(q, qp);
    }
out:
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
    if (dropped) {
        /* the nominator's lock ranks before the queue's (ksched/lock.h): taken after it */
        ks_nominator_remove(q->opts.nominator, dropped);
        ks_pod_put(dropped);
    }
    return rc;
}

void ks_queue_done(struct ks_queue *q, struct ks_queued_pod *p)
{
    struct qpod *qp = qpod_of(p);
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    QDEBUG_ASSERT(where_of(qp) == KS_WHERE_IN_FLIGHT, "a pod finished was not in flight");
    atomic_fetch_sub_explicit(&q->ninflight, 1, memory_order_relaxed);
    set_where(qp, KS_WHERE_NONE);
    table_remove(q, qp);
    qpod_unref(qp);
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
}

/* isEventOfInterest over every profile. Under lock. */
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

/* movePodsToActiveOrBackoffQueue over the unschedulable list. Under lock. */
static void move_locked(struct ks_queue *q, const struct ks_cluster_event *ev, unsigned kinds,
                        const void *old_obj, const void *new_obj, bool timeout)
{
    int64_t now = timeout ? ks_queue_now(q) : 0;
    for (struct qpod *qp = q->uhead, *next; qp; qp = next) {
        next = qp->unext;
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
        requeue_or_park(q, qp, s);
    }
    q->move_request_cycle = atomic_load_explicit(&q->cycle, memory_order_relaxed);
    q->has_move_request = true;
}

void ks_queue_move_event(struct ks_queue *q, const struct ks_cluster_event *ev, const void *old_obj,
                         const void *new_obj)
{
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    if (interested(q, ev))
        move_locked(q, ev, ks_event_kind(ev), old_obj, new_obj, false);
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
}

void ks_queue_move(struct ks_queue *q, unsigned events)
{
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    move_locked(q, NULL, events, NULL, NULL, false);
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
}

int ks_queue_update(struct ks_queue *q, const struct ks_pod *old_pod, const struct ks_pod *new_pod)
{
    int rc = 0;
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    struct qpod *qp = old_pod ? table_find(q, old_pod) : NULL;
    if (!qp)
        qp = table_find(q, new_pod);
    if (!qp) {
        /* not queued: it enters the active queue (Update of an unknown pod) */
        ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
        rc = ks_queue_add(q, new_pod, ks_queue_now(q));
        if (rc == -EEXIST) { /* added meanwhile by another thread: update that one */
            rc = ks_queue_update(q, old_pod, new_pod);
        } else if (rc < 0) {
            ks_pod_put(new_pod);
        }
        return rc;
    }
    enum ks_queue_where w = where_of(qp);
    if (w == KS_WHERE_ACTIVE && !active_remove(q, qp))
        w = KS_WHERE_IN_FLIGHT; /* the popper won */
    if (w == KS_WHERE_IN_FLIGHT) {
        ks_pod_put(qp->pending);
        qp->pending = new_pod;
        goto out;
    }
    struct qpod *nq = new_version(q, qp, new_pod);
    if (!nq) {
        /* out of memory: the old version stays where it was (or waits as unschedulable) */
        if (w == KS_WHERE_ACTIVE && active_push(q, qp) < 0)
            unsched_add(q, qp);
        ks_pod_put(new_pod);
        rc = -ENOMEM;
        goto out;
    }
    if (w == KS_WHERE_ACTIVE) {
        /* updated in place: a new entry with the new key (activeQ.update re-sorts) */
        replace(q, qp, nq);
        if (active_push(q, nq) < 0)
            unsched_add(q, nq);
        goto replaced;
    }
    if (w == KS_WHERE_BACKOFF) {
        backoff_remove(q, qp);
        replace(q, qp, nq);
        if (backoff_push(q, nq) < 0)
            unsched_add(q, nq);
        goto replaced;
    }
    /* unschedulable: does the update itself help (QueueingHint for Pod/Update)? */
    unsched_remove(q, qp);
    replace(q, qp, nq);
    const struct ks_event_map *m = map_of(q, nq);
    struct ks_cluster_event evs[KS_ACTION_COUNT];
    uint32_t n = old_pod ? ks_pod_update_events(old_pod, new_pod, KS_ER_UNSCHEDULED_POD, evs) : 0;
    enum ks_requeue s = m ? KS_REQUEUE_SKIP : KS_REQUEUE_AFTER_BACKOFF;
    for (uint32_t i = 0; i < n && m && s == KS_REQUEUE_SKIP; i++) {
        if (nq->gated && !ks_event_map_registers(m, nq->gating_plugin, &evs[i]))
            continue;
        s = ks_event_map_worth(m, nq->pub.unschedulable_plugins, new_pod, &evs[i], old_pod, new_pod);
    }
    requeue_or_park(q, nq, s);
replaced:
    /* last: the old version may be @old_pod's only owner, and the hints above read it */
    qpod_unref(qp);
out:
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
    return rc;
}

bool ks_queue_delete(struct ks_queue *q, const struct ks_pod *pod)
{
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    struct qpod *qp = table_find(q, pod);
    if (!qp) {
        ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
        return false;
    }
    enum ks_queue_where w = where_of(qp);
    if (w == KS_WHERE_ACTIVE && !active_remove(q, qp))
        w = KS_WHERE_IN_FLIGHT;
    table_remove(q, qp);
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
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
    return true;
}

void ks_queue_flush_backoff(struct ks_queue *q)
{
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    int64_t now = ks_queue_now(q);
    while (q->nheap && backoff_expiry(q, q->heap[0]) <= now) {
        struct qpod *qp = q->heap[0];
        backoff_remove(q, qp);
        if (to_active(q, qp) < 0) {
            /* out of memory: try again at the next flush */
            backoff_push(q, qp);
            break;
        }
    }
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
}

void ks_queue_flush_unschedulable(struct ks_queue *q)
{
    static const struct ks_cluster_event timeout = {KS_ER_WILDCARD, KS_ACT_ALL};
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    int64_t now = ks_queue_now(q);
    bool any = false;
    for (struct qpod *qp = q->uhead; qp && !any; qp = qp->unext)
        any = !qp->gated && now - qp->pub.timestamp_ns > q->opts.max_unschedulable_ns;
    if (any) /* EventUnschedulableTimeout, only when some pod is due (a move request then) */
        move_locked(q, &timeout, KS_EVENT_ALL, NULL, NULL, true);
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
}

bool ks_queue_backoff_bounds(struct ks_queue *q, int64_t *first_ns, int64_t *last_ns)
{
    int64_t first = INT64_MAX, last = INT64_MIN;
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    if (q->nheap)
        first = backoff_expiry(q, q->heap[0]);
    for (uint32_t i = 0; i < q->nheap; i++) {
        int64_t e = backoff_expiry(q, q->heap[i]);
        if (e > last)
            last = e;
    }
    bool any = q->nheap > 0;
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
    *first_ns = first;
    *last_ns = last;
    return any;
}

bool ks_queue_pod_info(struct ks_queue *q, const struct ks_pod *pod, struct ks_queue_pod_info *info)
{
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    struct qpod *qp = table_find(q, pod);
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
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
    return qp != NULL;
}

void ks_queue_count(struct ks_queue *q, struct ks_queue_counts *c)
{
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    c->active = atomic_load_explicit(&q->nactive, memory_order_relaxed);
    c->backoff = q->nheap;
    c->unschedulable = q->nunsched;
    c->gated = q->ngated;
    c->in_flight = atomic_load_explicit(&q->ninflight, memory_order_relaxed);
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
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

/* ---- invariant checker ------------------------------------------------------------------------------ */

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
    if (where_of(qp) != KS_WHERE_ACTIVE || table_find(c->q, p->pod) != qp) {
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

int ks_queue_check(struct ks_queue *q, char *msg, uint32_t len)
{
    char dummy[8];
    if (!msg || !len) {
        msg = dummy;
        len = sizeof(dummy);
    }
    msg[0] = '\0';
    ks_mutex_lock(&q->lock, KS_LOCK_QUEUE);
    int rc = -1;
    uint32_t count[KS_WHERE_IN_FLIGHT + 1] = {0}, listed = 0, gated = 0;

    for (uint32_t i = 0; i < q->captable; i++) {
        for (struct qpod *qp = q->table[i]; qp; qp = qp->hnext) {
            enum ks_queue_where w = where_of(qp);
            listed++;
            if (w == KS_WHERE_NONE) {
                snprintf(msg, len, "a queued pod is in no place");
                goto out;
            }
            count[w]++;
            if (qp->gated && w != KS_WHERE_UNSCHEDULABLE) {
                snprintf(msg, len, "a gated pod is not among the unschedulable");
                goto out;
            }
            if (w == KS_WHERE_BACKOFF && (qp->heap_index >= q->nheap || q->heap[qp->heap_index] != qp)) {
                snprintf(msg, len, "a backoff pod is not at its heap index");
                goto out;
            }
        }
    }
    if (listed != q->ntable) {
        snprintf(msg, len, "lookup table holds %u pods, counted %u", q->ntable, listed);
        goto out;
    }
    for (uint32_t i = 0; i < q->nheap; i++) {
        struct qpod *qp = q->heap[i];
        if (qp->heap_index != i || where_of(qp) != KS_WHERE_BACKOFF || table_find(q, qp->pub.pod) != qp) {
            snprintf(msg, len, "backoffQ slot %u holds a pod recorded elsewhere", i);
            goto out;
        }
        if (i > 0 && heap_before(q, qp, q->heap[(i - 1) / 2])) {
            snprintf(msg, len, "backoffQ heap order broken at %u", i);
            goto out;
        }
    }
    uint32_t n = 0;
    for (struct qpod *qp = q->uhead; qp; qp = qp->unext) {
        if (where_of(qp) != KS_WHERE_UNSCHEDULABLE || table_find(q, qp->pub.pod) != qp ||
            (qp->unext ? qp->unext->uprev != qp : q->utail != qp)) {
            snprintf(msg, len, "unschedulable list holds a pod recorded elsewhere");
            goto out;
        }
        gated += qp->gated;
        n++;
    }
    if (n != q->nunsched || n != count[KS_WHERE_UNSCHEDULABLE] || gated != q->ngated) {
        snprintf(msg, len, "unschedulable: list %u, counter %u, table %u, gated %u/%u", n, q->nunsched,
                 count[KS_WHERE_UNSCHEDULABLE], gated, q->ngated);
        goto out;
    }
    if (q->nheap != count[KS_WHERE_BACKOFF]) {
        snprintf(msg, len, "backoffQ: heap %u, table %u", q->nheap, count[KS_WHERE_BACKOFF]);
        goto out;
    }
    struct check_ctx c = {.q = q, .msg = msg, .len = len};
    ks_activeq_walk(q->active, check_entry, &c);
    if (c.bad)
        goto out;
    uint32_t nactive = atomic_load_explicit(&q->nactive, memory_order_relaxed);
    if (c.seen != count[KS_WHERE_ACTIVE] || c.seen != nactive) {
        snprintf(msg, len, "activeQ: %u entries, table %u, counter %u", c.seen, count[KS_WHERE_ACTIVE],
                 nactive);
        goto out;
    }
    /* in-flight pods deleted meanwhile are no longer in the table */
    if (count[KS_WHERE_IN_FLIGHT] > atomic_load_explicit(&q->ninflight, memory_order_relaxed)) {
        snprintf(msg, len, "in flight: table %u, counter %u", count[KS_WHERE_IN_FLIGHT],
                 atomic_load_explicit(&q->ninflight, memory_order_relaxed));
        goto out;
    }
    rc = 0;
out:
    ks_mutex_unlock(&q->lock, KS_LOCK_QUEUE);
    return rc;
}
