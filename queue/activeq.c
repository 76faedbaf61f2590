/*
 * activeq.c - activeQ, the lock-free concurrent priority queue of include/ksched/internal/queue.h.
 *
 * The algorithm is J. Lindén and B. Jonsson, "A Skiplist-Based Concurrent Priority Queue
 * with Minimal Memory Contention", OPODIS 2013 (LNCS 8304, 206-220; Uppsala University
 * tech report 2013-025). A skiplist ordered by the QueueSort comparison; deletion is in two
 * steps:
 *   - logical: DeleteMin walks level 0 and sets the low bit of a next[0] pointer with one
 *     fetch-and-or; a set bit means "the node this points to is deleted". Deleted nodes
 *     therefore always form a prefix of the list, and a deleter writes one word no
 *     inserter competes for (inserters only CAS unmarked pointers), which is where the low
 *     contention comes from;
 *   - physical: once the prefix is long enough, one CAS swings head.next[0] past it, the
 *     head's upper levels are advanced past deleted nodes (Restructure), and the unlinked
 *     nodes are retired as one batch.
 * Insert is the classic lock-free skiplist insert (Fraser; Herlihy and Shavit), except that
 * it never links a node after a deleted one at level 0 and stops building a node's tower
 * once the node or its successor is deleted. A node carries an `inserting` flag while its
 * tower is built; a restructure keeps everything from the first such node on, so no
 * reachable pointer can lead to reclaimed memory.
 *
 * Guarantees (the paper's, proven there): Insert and DeleteMin are linearizable - Insert
 * at the CAS that links level 0, DeleteMin at the fetch-and-or that marks its node - and
 * lock-free: some operation always completes in a finite number of steps; no thread ever
 * waits for another, and neither push nor pop takes a lock. Among equal keys the order is
 * unspecified (a node goes before the equal nodes present when it is inserted), as in
 * upstream's binary heap.
 *
 * Departures from the paper, none of which changes the linearization points:
 *   - entries are snapshots: the comparison reads a copy of the struct ks_queued_pod taken
 *     at push, so a key never changes while its node is linked; the live struct is reached
 *     through `qp` by whoever wins the node's `claim` word;
 *   - removal of a given entry (a pod deleted or updated while queued): CAS claim LIVE ->
 *     DEAD through a handle; the popper's CAS LIVE -> TAKEN then fails and it moves on;
 *   - DeleteMin starts from the last node this thread deleted (a per-thread cursor), not
 *     from the head: everything before a deleted node is deleted, so the walk is O(1)
 *     instead of O(prefix). A cursor is used only while the queue's generation is the one
 *     it was taken in; a restructure bumps the generation before it retires anything, so
 *     a cursor never leads to a retired node outside the read section that checked it.
 *     Restructuring is attempted every RESTRUCTURE_EVERY pops of a thread, from the hint
 *     (the newest deleted node a restructure saw), by one consumer at a time: a consumer
 *     that finds another restructuring skips its turn (the paper lets them race; a race
 *     could publish a generation twice and leave a cursor on a retired node);
 *   - sleeping when empty: the consumer announces itself in `waiting` and sleeps on a futex
 *     word; a producer that links a node and sees `waiting` bumps the word and wakes it.
 *
 * Memory: nodes keep what the traversals read (the key, the claim word, the tower) in
 * their first cache line and the bookkeeping in front of it. Nodes are recycled through a
 * pool per size instead of freed (see the node pools): push allocates only while the
 * queue holds more entries than it ever did. Reclamation is RCU
 * (liburcu memb, ksched/base/rcu.h): every traversal runs inside a read section, retired
 * batches are handed to ks_rcu_call, and after the grace period `release` tells the owner
 * that the entry's struct is no longer referenced. Every pointer a reader follows is
 * loaded with acquire, so the ThreadSanitizer build sees each node initialised before it
 * is reachable, and rcu.h's grace-period annotations order every read before the reuse.
 */
#include "ksched/base/futex.h"
#include "ksched/internal/queue.h"

#include "ksched/base/rcu.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Levels: 2^20 entries before the top level fills (p = 1/2). */
#define AQ_MAX_LEVEL 20
/* Pops a thread makes between two attempts to unlink the deleted prefix (~ the paper's BoundOffset). */
#define AQ_RESTRUCTURE_EVERY 128u
/* Nodes up to this height (94% of them) are short: the others are allocated AQ_MAX_LEVEL high. */
#define AQ_SHORT_HEIGHT 4
/* The hint packs the queue's generation above the 48 bits of a user-space pointer. */
#define GEN_SHIFT 48

#define MARK ((uintptr_t)1)

enum { AQ_LIVE, AQ_TAKEN, AQ_DEAD };

/* The hot part: one cache line for the key, the flags and the first two levels. */
struct aq_node {
    struct ks_queued_pod key; /* immutable copy the comparison reads */
    _Atomic uint32_t claim;   /* AQ_LIVE -> AQ_TAKEN (popped) or AQ_DEAD (removed) */
    _Atomic bool inserting;   /* the tower is still being linked */
    uint8_t size;             /* enum aq_size: the tower it was allocated with */
    uint16_t height;
    _Atomic uintptr_t next[]; /* next[0] low bit: the successor is deleted */
};

/* Node sizes: a tower of AQ_SHORT_HEIGHT levels, or of AQ_MAX_LEVEL. Each has its pool. */
enum aq_size { AQ_SHORT, AQ_TALL, AQ_SIZES };

/* The cold part, in front of the hot one: read by the winner of `claim`, the reclaimer and the pool. */
struct aq_cold {
    struct ks_queued_pod *qp; /* the live entry */
    struct ks_activeq_handle *handle;
    struct ks_activeq *aq;
    struct aq_node *retired_next; /* next node of its size in the same retired batch, or in the pool */
    /* the batch's carrier only: its chain of nodes of each size, first and last */
    struct aq_node *batch_first[AQ_SIZES];
    struct aq_node *batch_last[AQ_SIZES];
    struct ks_rcu_head rcu;
};

#define COLD_SIZE ((sizeof(struct aq_cold) + 63) / 64 * 64)

static inline struct aq_cold *cold(const struct aq_node *n)
{
    return (struct aq_cold *)((char *)n - COLD_SIZE);
}

static inline struct aq_node *node_of_rcu(struct ks_rcu_head *h)
{
    return (struct aq_node *)((char *)caa_container_of(h, struct aq_cold, rcu) + COLD_SIZE);
}

struct ks_activeq {
    /* read-only after creation */
    struct aq_node *head;
    struct aq_node *tail;
    ks_queue_less_fn less;
    const void *less_ctx;
    ks_activeq_release_fn release;
    void *release_ctx;
    uint64_t id;                /* tells this queue's per-thread cursors from another's */
    uint32_t restructure_every; /* AQ_RESTRUCTURE_EVERY, or a test's (ks__activeq_set_restructure_every) */

    /* restructures: the generation, and the newest deleted node the last one kept, packed */
    alignas(64) _Atomic uintptr_t hint;
    _Atomic bool restructuring; /* a consumer is unlinking the deleted prefix: the others skip it */

    /* sleeping consumers */
    alignas(64) _Atomic uint32_t seq; /* futex word: bumped by a producer that saw `waiting` */
    _Atomic uint32_t waiting;         /* a consumer is about to sleep */
    _Atomic bool closed;
};

static inline struct aq_node *ref(uintptr_t p)
{
    return (struct aq_node *)(p & ~MARK);
}

static inline bool marked(uintptr_t p)
{
    return p & MARK;
}

static inline struct aq_node *hint_node(uintptr_t h)
{
    return (struct aq_node *)(h & (((uintptr_t)1 << GEN_SHIFT) - 1));
}

static inline uintptr_t hint_gen(uintptr_t h)
{
    return h >> GEN_SHIFT;
}

/* @a comes strictly before @b in pop order. The tail follows everything. */
static inline bool before(const struct ks_activeq *aq, const struct aq_node *a, const struct aq_node *b)
{
    if (b == aq->tail)
        return a != aq->tail;
    if (a == aq->tail)
        return false;
    return aq->less(aq->less_ctx, &a->key, &b->key);
}

/* A geometric height (p = 1/2) from a per-thread xorshift generator. */
static uint32_t random_height(void)
{
    static _Thread_local uint64_t s;
    if (!s)
        s = ((uint64_t)(uintptr_t)&s ^ (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull) | 1;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    uint32_t h = 1 + (uint32_t)__builtin_ctzll(~s | (1ull << 62));
    return h > AQ_MAX_LEVEL ? AQ_MAX_LEVEL : h;
}

/* ---- the node pools ----------------------------------------------------------------------------- */

/*
 * Push would allocate and reclamation free a node per entry, on different threads: the
 * nodes are recycled instead, through one pool per size, so once the queue has held its
 * largest number of entries neither path calls the allocator. Reclaimed nodes are pushed
 * onto a pool's global stack a batch at a time (a CAS: safe for any number of pushers); an
 * allocating thread takes the whole stack at once (an exchange, so there is no ABA) into
 * its own cache, which goes back to the stack when the thread exits. Pooled nodes live as
 * long as the process.
 */
static _Atomic(struct aq_node *) pool[AQ_SIZES];
static _Thread_local struct aq_node *pool_cache[AQ_SIZES];
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_give(enum aq_size size, struct aq_node *first, struct aq_node *last)
{
    /* relaxed load: the CAS below orders it */
    struct aq_node *top = atomic_load_explicit(&pool[size], memory_order_relaxed);
    do
        cold(last)->retired_next = top;
    /* release: the chain's links (and everything written to the nodes) come with it */
    while (!atomic_compare_exchange_weak_explicit(&pool[size], &top, first, memory_order_release,
                                                  memory_order_relaxed));
}

/* pthread key destructor: the exiting thread's caches go back to the pools (its TLS is still there). */
static void pool_thread_exit(void *arg)
{
    struct aq_node **cache = arg;
    for (int size = 0; size < AQ_SIZES; size++) {
        struct aq_node *first = cache[size], *last = first;
        while (last && cold(last)->retired_next)
            last = cold(last)->retired_next;
        if (first)
            pool_give((enum aq_size)size, first, last);
        cache[size] = NULL;
    }
}

static void pool_init(void)
{
    pthread_key_create(&pool_key, pool_thread_exit);
}

static struct aq_node *pool_take(enum aq_size size)
{
    static _Thread_local bool keyed;
    struct aq_node *n = pool_cache[size];
    if (!n) {
        /* acquire: pairs with the release in pool_give(); the nodes are this thread's now */
        n = atomic_exchange_explicit(&pool[size], NULL, memory_order_acquire);
        if (!n)
            return NULL;
        if (!keyed) {
            pthread_once(&pool_once, pool_init);
            pthread_setspecific(pool_key, pool_cache);
            keyed = true;
        }
    }
    struct aq_node *next = pool_cache[size] = cold(n)->retired_next;
    /* pooled nodes are cold: fetch the next one's lines now, for the next push */
    if (next) {
        __builtin_prefetch(cold(next), 1);
        __builtin_prefetch(next, 1);
    }
    return n;
}

/* A node @height levels high: from its size's pool, or allocated when the pool is empty. */
static struct aq_node *node_new(struct ks_activeq *aq, uint32_t height)
{
    enum aq_size size = height <= AQ_SHORT_HEIGHT ? AQ_SHORT : AQ_TALL;
    struct aq_node *n = pool_take(size);
    if (!n) {
        size_t bytes =
            COLD_SIZE + sizeof(*n) + (size == AQ_SHORT ? AQ_SHORT_HEIGHT : AQ_MAX_LEVEL) * sizeof(n->next[0]);
        char *block = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!block)
            return NULL;
        n = (struct aq_node *)(block + COLD_SIZE);
    }
    *cold(n) = (struct aq_cold){.aq = aq};
    n->size = (uint8_t)size;
    n->height = (uint16_t)height;
    atomic_init(&n->claim, AQ_LIVE);
    atomic_init(&n->inserting, false);
    for (uint32_t i = 0; i < height; i++)
        atomic_init(&n->next[i], 0);
    return n;
}

/* @n back to its pool (a node no reader can reach). */
static void node_put(struct aq_node *n)
{
    pool_give((enum aq_size)n->size, n, n);
}

/* The entry is gone for good: tell the owner. */
static void release_node(struct aq_node *n)
{
    const struct aq_cold *c = cold(n);
    if (c->qp && c->aq->release)
        c->aq->release(c->aq->release_ctx, c->qp);
}

/* ---- creation --------------------------------------------------------------------------------- */

int ks_activeq_create(ks_queue_less_fn less, const void *less_ctx, ks_activeq_release_fn release,
                      void *release_ctx, struct ks_activeq **out)
{
    static _Atomic uint64_t ids = 1;
    struct ks_activeq *aq = aligned_alloc(64, (sizeof(*aq) + 63) / 64 * 64);
    *out = NULL;
    if (!aq)
        return -ENOMEM;
    *aq = (struct ks_activeq){
        .less = less, .less_ctx = less_ctx, .release = release, .release_ctx = release_ctx};
    /* relaxed: a unique number, ordered by the publication of the queue itself */
    aq->id = atomic_fetch_add_explicit(&ids, 1, memory_order_relaxed);
    atomic_init(&aq->hint, 0);
    atomic_init(&aq->seq, 0);
    atomic_init(&aq->waiting, 0);
    atomic_init(&aq->closed, false);
    atomic_init(&aq->restructuring, false);
    aq->restructure_every = AQ_RESTRUCTURE_EVERY;
    aq->head = node_new(aq, AQ_MAX_LEVEL);
    aq->tail = node_new(aq, AQ_MAX_LEVEL);
    if (!aq->head || !aq->tail) {
        if (aq->head)
            node_put(aq->head);
        if (aq->tail)
            node_put(aq->tail);
        free(aq);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < AQ_MAX_LEVEL; i++)
        atomic_init(&aq->head->next[i], (uintptr_t)aq->tail);
    *out = aq;
    return 0;
}

void ks_activeq_destroy(struct ks_activeq *aq)
{
    if (!aq)
        return;
    ks_rcu_barrier(); /* retired batches call aq->release */
    struct aq_node *n = ref(atomic_load_explicit(&aq->head->next[0], memory_order_acquire));
    while (n != aq->tail) {
        struct aq_node *next = ref(atomic_load_explicit(&n->next[0], memory_order_acquire));
        release_node(n);
        node_put(n);
        n = next;
    }
    node_put(aq->head);
    node_put(aq->tail);
    free(aq);
}

/* ---- insert -------------------------------------------------------------------------------- */

/*
 * LocatePreds: for every level, the last node before @nn (preds) and the first node not
 * before it (succs), passing deleted nodes whatever their keys. Returns the last deleted
 * node seen at level 0 (NULL: none). Inside a read section.
 */
static struct aq_node *locate(const struct ks_activeq *aq, const struct aq_node *nn, struct aq_node **preds,
                              struct aq_node **succs)
{
    struct aq_node *pred = aq->head, *del = NULL;
    /* the node the level above stopped at, known not before nn (keys never change) */
    const struct aq_node *not_before = aq->tail;
    for (int i = AQ_MAX_LEVEL - 1; i >= 0; i--) {
        /* acquire: a node is fully initialised before the CAS (release) that links it */
        uintptr_t raw = atomic_load_explicit(&pred->next[i], memory_order_acquire);
        struct aq_node *cur;
        for (;;) {
            cur = ref(raw);
            if (cur == aq->tail)
                break;
            /* fetch the next node while the comparison waits for cur's pod (relaxed: a hint) */
            __builtin_prefetch(ref(atomic_load_explicit(&cur->next[i], memory_order_relaxed)));
            if (i == 0 && marked(raw)) {
                del = cur; /* pred's pointer is marked: cur itself is deleted */
            } else if (!marked(atomic_load_explicit(&cur->next[0], memory_order_acquire)) &&
                       (cur == not_before || !before(aq, cur, nn))) {
                break; /* cur is live (or the last deleted node) and not before nn */
            }
            pred = cur;
            raw = atomic_load_explicit(&pred->next[i], memory_order_acquire);
        }
        not_before = cur;
        preds[i] = pred;
        succs[i] = cur;
    }
    return del;
}

/* Wake a consumer that announced it is about to sleep. */
static void wake(struct ks_activeq *aq)
{
    /*
     * seq_cst: with the seq_cst link CAS before it, and the consumer's seq_cst store of
     * `waiting` followed by its seq_cst load of the list, one of the two sees the other.
     */
    if (atomic_load_explicit(&aq->waiting, memory_order_seq_cst)) {
        /* release: the consumer re-reads the list after futex_wait returns */
        atomic_fetch_add_explicit(&aq->seq, 1, memory_order_release);
        ks__futex_wake(&aq->seq, INT_MAX);
    }
}

int ks_activeq_push_mp(struct ks_activeq *aq, struct ks_queued_pod *qp, struct ks_activeq_handle *handle)
{
    uint32_t height = random_height();
    struct aq_node *nn = node_new(aq, height);
    struct aq_node *preds[AQ_MAX_LEVEL], *succs[AQ_MAX_LEVEL];

    if (!nn)
        return -ENOMEM;
    nn->key = *qp;
    cold(nn)->qp = qp;
    cold(nn)->handle = handle;
    atomic_store_explicit(&nn->inserting, true, memory_order_relaxed); /* published by the link */
    if (handle)
        __atomic_store_n(&handle->entry, nn, __ATOMIC_RELEASE); /* release: remove() reads the node */

    ks_rcu_read_lock();
    struct aq_node *del;
    for (;;) {
        del = locate(aq, nn, preds, succs);
        atomic_store_explicit(&nn->next[0], (uintptr_t)succs[0], memory_order_relaxed);
        uintptr_t expect = (uintptr_t)succs[0]; /* unmarked: never link after a deleted node */
        /*
         * seq_cst (a release would do for publication): this is Insert's linearization
         * point, and it must be ordered before wake()'s load of `waiting`.
         */
        if (atomic_compare_exchange_strong_explicit(&preds[0]->next[0], &expect, (uintptr_t)nn,
                                                    memory_order_seq_cst, memory_order_relaxed))
            break;
    }
    for (uint32_t i = 1; i < height; i++) {
        for (;;) {
            atomic_store_explicit(&nn->next[i], (uintptr_t)succs[i], memory_order_relaxed);
            /* acquire loads: deletion marks; a deleted node must not gain new incoming links */
            if (marked(atomic_load_explicit(&nn->next[0], memory_order_acquire)) ||
                (succs[i] != aq->tail &&
                 marked(atomic_load_explicit(&succs[i]->next[0], memory_order_acquire))) ||
                succs[i] == del)
                goto built;
            uintptr_t expect = (uintptr_t)succs[i];
            /* release: nn->next[i] is visible to whoever follows the new link */
            if (atomic_compare_exchange_strong_explicit(&preds[i]->next[i], &expect, (uintptr_t)nn,
                                                        memory_order_release, memory_order_relaxed))
                break;
            del = locate(aq, nn, preds, succs);
            if (succs[0] != nn)
                goto built; /* deleted meanwhile, or passed by an equal key: stop the tower */
        }
    }
built:
    /* release: a restructure that reads false may unlink this node and everything before it */
    atomic_store_explicit(&nn->inserting, false, memory_order_release);
    ks_rcu_read_unlock();
    wake(aq);
    return 0;
}

/* ---- delete ---------------------------------------------------------------------------------- */

/* Win the deleted node @n's entry for the caller; false when it had been removed. */
static bool claim(struct aq_node *n)
{
    uint32_t live = AQ_LIVE;
    /* acq_rel: exactly one of popper and remover wins; the winner then owns the entry */
    if (!atomic_compare_exchange_strong_explicit(&n->claim, &live, AQ_TAKEN, memory_order_acq_rel,
                                                 memory_order_acquire))
        return false;
    struct aq_cold *c = cold(n);
    if (c->handle)
        __atomic_store_n(&c->handle->entry, NULL, __ATOMIC_RELAXED);
    return true;
}

/*
 * A grace period after retire(): every node of the batch is unreachable for every reader.
 * Without a release callback the nodes go back to their pools as the chains retire()
 * built, without touching them again.
 */
static void reclaim_batch(struct ks_rcu_head *h)
{
    const struct aq_cold *carrier = cold(node_of_rcu(h));
    struct aq_node *first[AQ_SIZES], *last[AQ_SIZES];
    const struct ks_activeq *aq = carrier->aq;

    /* nothing of the carrier is read below: it is one of the nodes pooled */
    for (int size = 0; size < AQ_SIZES; size++) {
        first[size] = carrier->batch_first[size];
        last[size] = carrier->batch_last[size];
    }
    for (int size = 0; size < AQ_SIZES; size++) {
        for (struct aq_node *n = first[size]; aq->release && n;
             n = n == last[size] ? NULL : cold(n)->retired_next)
            release_node(n);
        if (first[size])
            pool_give((enum aq_size)size, first[size], last[size]);
    }
}

/*
 * Retire the unlinked nodes from @first up to @stop (exclusive) as one batch carried by
 * @first: the nodes of each size chained in order through retired_next, so the reclaimer
 * pools each chain without walking it.
 */
static void retire(struct aq_node *first, struct aq_node *stop)
{
    struct aq_node *head[AQ_SIZES] = {NULL}, *tail[AQ_SIZES] = {NULL};
    if (first == stop)
        return;
    for (struct aq_node *n = first; n != stop;) {
        /* acquire: the next pointers of deleted nodes are final (marked) */
        struct aq_node *next = ref(atomic_load_explicit(&n->next[0], memory_order_acquire));
        cold(n)->retired_next = NULL;
        if (tail[n->size])
            cold(tail[n->size])->retired_next = n;
        else
            head[n->size] = n;
        tail[n->size] = n;
        n = next;
    }
    struct aq_cold *c = cold(first);
    for (int size = 0; size < AQ_SIZES; size++) {
        c->batch_first[size] = head[size];
        c->batch_last[size] = tail[size];
    }
    ks_rcu_call(&c->rcu, reclaim_batch);
}

/*
 * Restructure: advance the head's upper levels past deleted nodes, after head.next[0]
 * was swung past the deleted prefix to @newhead (deleted: head.next[0] is marked). Past
 * @newhead too: a search stops at it when its key is not before the one searched for,
 * and an insert builds no tower in front of a deleted node, so left at the front of the
 * upper levels it would keep every insert that sorts before it at level 0 (a linear walk)
 * until the next restructure. Inside a read section.
 */
static void restructure(struct ks_activeq *aq, const struct aq_node *newhead)
{
    struct aq_node *pred = aq->head;
    for (int i = AQ_MAX_LEVEL - 1; i > 0;) {
        /* acquire loads throughout: we follow these pointers */
        uintptr_t h = atomic_load_explicit(&aq->head->next[i], memory_order_acquire);
        struct aq_node *hn = ref(h);
        if (hn == aq->tail ||
            (hn != newhead && !marked(atomic_load_explicit(&hn->next[0], memory_order_acquire)))) {
            i--;
            continue;
        }
        struct aq_node *cur = ref(atomic_load_explicit(&pred->next[i], memory_order_acquire));
        while (cur != aq->tail &&
               (cur == newhead || marked(atomic_load_explicit(&cur->next[0], memory_order_acquire)))) {
            pred = cur;
            cur = ref(atomic_load_explicit(&pred->next[i], memory_order_acquire));
        }
        /* release: what cur leads to was initialised before it was linked, and stays so */
        if (atomic_compare_exchange_strong_explicit(&aq->head->next[i], &h, (uintptr_t)cur,
                                                    memory_order_release, memory_order_relaxed))
            i--;
    }
}

/* Unlink the deleted prefix up to @upto: restructure_prefix's work, its flag held. */
static void unlink_prefix(struct ks_activeq *aq, struct aq_node *upto)
{
    /* acquire: we follow it */
    uintptr_t obshead = atomic_load_explicit(&aq->head->next[0], memory_order_acquire);
    struct aq_node *first = ref(obshead), *newhead = upto;
    /* relaxed: the flag's acquire ordered the last restructure's store before this load */
    uintptr_t gen = hint_gen(atomic_load_explicit(&aq->hint, memory_order_relaxed));

    if (!marked(obshead))
        return; /* nothing deleted */
    for (struct aq_node *x = first; x != newhead;) {
        /* acquire: we follow it */
        uintptr_t nxt = atomic_load_explicit(&x->next[0], memory_order_acquire);
        /*
         * Every node before @upto has a deleted successor. One that does not is the last
         * deleted node or a live one: @upto is not ahead (another consumer unlinked past it).
         */
        if (!marked(nxt))
            return;
        /* acquire: pairs with the release that clears it at the end of push */
        if (atomic_load_explicit(&x->inserting, memory_order_acquire)) {
            newhead = x;
            break;
        }
        x = ref(nxt);
    }
    if (newhead == first)
        return;
    /* acq_rel: against the poppers' marks on head.next[0]; fails only if the observed head changed */
    if (!atomic_compare_exchange_strong_explicit(&aq->head->next[0], &obshead, (uintptr_t)newhead | MARK,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return;
    /*
     * A new generation before anything is retired: no cursor of the old one is followed
     * again outside the read section that checked it. release: the new head comes with it.
     */
    atomic_store_explicit(&aq->hint, (uintptr_t)newhead | ((gen + 1) << GEN_SHIFT), memory_order_release);
    restructure(aq, newhead);
    retire(first, newhead);
}

/*
 * Unlink the deleted prefix, from the head up to @upto (a node this thread deleted) or up
 * to the first node still building its tower, whose pointers may still be linked to. Any
 * consumer, one at a time: one that finds another at it skips its turn, as the other
 * unlinks the same prefix. Serialised, the generations only grow: a consumer whose cursor
 * node a restructure retires always finds a newer generation than its cursor's. Inside a
 * read section.
 */
static void restructure_prefix(struct ks_activeq *aq, struct aq_node *upto)
{
    /* acquire: the previous restructure's writes (head, hint, upper levels) come with it */
    if (atomic_exchange_explicit(&aq->restructuring, true, memory_order_acquire))
        return;
    unlink_prefix(aq, upto);
    /* release: what this restructure wrote comes with the flag to the next one */
    atomic_store_explicit(&aq->restructuring, false, memory_order_release);
}

/* This thread's place in one queue: the last node it deleted there, in generation `gen`. */
struct aq_cursor {
    uint64_t queue;
    uintptr_t gen;
    struct aq_node *node;
    uint32_t pops; /* since its last restructure attempt */
};
static _Thread_local struct aq_cursor cursor;

/* DeleteMin from this thread's cursor; lock-free for any number of consumers. */
static struct ks_queued_pod *pop(struct ks_activeq *aq)
{
    struct ks_queued_pod *qp = NULL;

    ks_rcu_read_lock();
    /* acquire: pairs with the release in restructure_prefix() (the generation, the new head) */
    uintptr_t h = atomic_load_explicit(&aq->hint, memory_order_acquire);
    struct aq_node *x;
    if (cursor.node && cursor.queue == aq->id && cursor.gen == hint_gen(h)) {
        x = cursor.node; /* not retired: that would have taken a new generation */
    } else {
        x = hint_node(h) ? hint_node(h) : aq->head;
        cursor = (struct aq_cursor){.queue = aq->id, .gen = hint_gen(h), .node = NULL};
    }
    for (;;) {
        /* seq_cst: the re-check before sleeping must see a node linked by a producer that missed `waiting` */
        uintptr_t nxt = atomic_load_explicit(&x->next[0], memory_order_seq_cst);
        struct aq_node *n = ref(nxt);
        if (n == aq->tail)
            break; /* empty; a pointer that led past the tail never turns back to it */
        if (!marked(nxt)) {
            /* acq_rel: DeleteMin's linearization point when the bit was clear; acquire reads n */
            nxt = atomic_fetch_or_explicit(&x->next[0], MARK, memory_order_acq_rel);
            n = ref(nxt);
            if (!marked(nxt)) {
                cursor.node = n;
                if (claim(n)) {
                    qp = cold(n)->qp;
                    /* the next pop claims n's successor: fetch its lines meanwhile (relaxed: a hint) */
                    struct aq_node *succ = ref(atomic_load_explicit(&n->next[0], memory_order_relaxed));
                    __builtin_prefetch(succ, 1);
                    __builtin_prefetch(cold(succ), 0);
                    break;
                }
            }
        }
        x = n;
    }
    /*
     * Every restructure_every pops, and when the queue ran dry after some: a deleted prefix
     * left linked is walked by every push until it is unlinked.
     */
    if (cursor.node && (qp ? ++cursor.pops >= aq->restructure_every : cursor.pops > 0)) {
        cursor.pops = 0;
        restructure_prefix(aq, cursor.node);
    }
    ks_rcu_read_unlock();
    return qp;
}

struct ks_queued_pod *ks_activeq_pop_sc(struct ks_activeq *aq, bool block)
{
    for (;;) {
        struct ks_queued_pod *qp = pop(aq);
        if (qp || !block)
            return qp;
        /* acquire: pairs with the release increment in wake() and close */
        uint32_t seq = atomic_load_explicit(&aq->seq, memory_order_acquire);
        if (atomic_load_explicit(&aq->closed, memory_order_acquire))
            return NULL;
        /* seq_cst: announce before the re-check; see wake() */
        atomic_store_explicit(&aq->waiting, 1, memory_order_seq_cst);
        qp = pop(aq);
        if (!qp && !atomic_load_explicit(&aq->closed, memory_order_acquire))
            ks__futex_wait(&aq->seq, seq);
        atomic_store_explicit(&aq->waiting, 0, memory_order_relaxed);
        if (qp)
            return qp;
    }
}

struct ks_queued_pod *ks_activeq_pop_mc(struct ks_activeq *aq)
{
    return pop(aq);
}

void ks__activeq_set_restructure_every(struct ks_activeq *aq, uint32_t pops)
{
    aq->restructure_every = pops ? pops : 1;
}

uint32_t ks__activeq_linked(struct ks_activeq *aq, uint32_t level)
{
    uint32_t n = 0;
    if (level >= AQ_MAX_LEVEL)
        return 0;
    ks_rcu_read_lock();
    /* acquire: we follow these pointers */
    for (struct aq_node *x = ref(atomic_load_explicit(&aq->head->next[level], memory_order_acquire));
         x != aq->tail; x = ref(atomic_load_explicit(&x->next[level], memory_order_acquire)))
        n++;
    ks_rcu_read_unlock();
    return n;
}

bool ks_activeq_remove(struct ks_activeq *aq, struct ks_activeq_handle *handle)
{
    bool removed = false;
    (void)aq;
    /* the read section keeps the node alive between loading the handle and the CAS */
    ks_rcu_read_lock();
    /* acquire: pairs with the release store at push */
    struct aq_node *n = __atomic_load_n(&handle->entry, __ATOMIC_ACQUIRE);
    uint32_t live = AQ_LIVE;
    /* acq_rel: against the popper's claim; exactly one wins */
    if (n && atomic_compare_exchange_strong_explicit(&n->claim, &live, AQ_DEAD, memory_order_acq_rel,
                                                     memory_order_acquire)) {
        __atomic_store_n(&handle->entry, NULL, __ATOMIC_RELAXED);
        removed = true;
    }
    ks_rcu_read_unlock();
    return removed;
}

void ks_activeq_close(struct ks_activeq *aq)
{
    /* release: a woken consumer that reads `closed` also sees everything before it */
    atomic_store_explicit(&aq->closed, true, memory_order_release);
    atomic_fetch_add_explicit(&aq->seq, 1, memory_order_release);
    ks__futex_wake(&aq->seq, INT_MAX);
}

uint32_t ks_activeq_walk(struct ks_activeq *aq, bool (*fn)(void *ctx, const struct ks_queued_pod *qp),
                         void *ctx)
{
    uint32_t n = 0;
    ks_rcu_read_lock();
    uintptr_t raw = atomic_load_explicit(&aq->head->next[0], memory_order_acquire);
    while (ref(raw) != aq->tail) {
        struct aq_node *x = ref(raw);
        /* acquire: pairs with the claim CAS */
        if (!marked(raw) && atomic_load_explicit(&x->claim, memory_order_acquire) == AQ_LIVE) {
            n++;
            if (fn && !fn(ctx, cold(x)->qp))
                break;
        }
        raw = atomic_load_explicit(&x->next[0], memory_order_acquire);
    }
    ks_rcu_read_unlock();
    return n;
}

static bool stop_at_first(void *ctx, const struct ks_queued_pod *qp)
{
    (void)ctx;
    (void)qp;
    return false;
}

bool ks_activeq_empty(struct ks_activeq *aq)
{
    return ks_activeq_walk(aq, stop_at_first, NULL) == 0;
}
