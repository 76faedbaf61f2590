/*
 * stress_activeq_queue.c - the whole scheduling queue under ThreadSanitizer: two producer
 * threads add, update and delete pods, the consumer pops them without a lock and gives
 * them back as bound, unschedulable or failed, and an event thread moves the clock,
 * delivers cluster events and runs both flushes, all at once.
 *
 * The producers also read each pod's place (ks_queue_pod_info) after adding it, as the
 * scheduler does for a pod with a nominated node, while the consumer may be popping it.
 * A churner sends new versions of pods added earlier, wherever they are by then: in
 * backoffQ or among the unschedulable while the event thread moves them, in activeQ,
 * in flight, or bound (then the update adds the pod again, as an informer would).
 *
 * Checked: a pod (namespace/name) is never handed out twice at the same time (never in two
 * places); every pod ends bound or deleted, none is lost; a place read back names the pod;
 * at the quiescent end the queue is empty and its invariant checker (ks_queue_check) passes.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/queue.h"
#include "ksched/registry.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KS_TSAN
enum { PODS = 10000 };
#else
enum { PODS = 100000 };
#endif
enum { PRODUCERS = 2 };

static struct ks_queue *q;
static _Atomic int64_t clock_ns = 1000000;
static atomic_uchar in_flight[PODS]; /* handed out by pop and not given back yet */
static atomic_uchar finished[PODS];  /* bound or deleted */
static atomic_int producers_left = PRODUCERS;
static atomic_long progress[PRODUCERS]; /* pods each producer is done with */
static atomic_ulong churned;
static atomic_bool quiet; /* producers and events are over: drain */
static atomic_uint failures;

static void fail(const char *what, long i)
{
    if (atomic_fetch_add(&failures, 1) < 10)
        fprintf(stderr, "stress_activeq_queue: %s (pod %ld)\n", what, i);
}

static int64_t now(void *ctx)
{
    (void)ctx;
    return atomic_load_explicit(&clock_ns, memory_order_relaxed);
}

static bool less(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    (void)ctx;
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

static long index_of(const struct ks_pod *p)
{
    return strtol(p->meta.name + 1, NULL, 10);
}

/* A pod version with two references: one for the queue, one for its producer. */
static struct ks_pod *pod_version(long i, int32_t priority)
{
    struct ks_pod *p = calloc(1, sizeof(*p));
    char name[32];
    snprintf(name, sizeof(name), "p%ld", i);
    p->meta.name = ks_arena_strdup(&p->arena, name);
    p->meta.uid = p->meta.name;
    p->meta.namespace_id = ks_intern("default");
    p->meta.creation_time = p->meta.deletion_time = KS_TIME_NONE;
    p->scheduler_name = ks_wk.default_scheduler;
    p->node_name = p->nominated_node_name = KS_ID_EMPTY;
    p->priority = priority;
    p->refs = 2;
    return p;
}

struct producer {
    int id;
    uint64_t rng;
};

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void *produce(void *arg)
{
    struct producer *pr = arg;
    ks_rcu_register_thread();
    for (long i = pr->id; i < PODS; i += PRODUCERS) {
        struct ks_pod *cur = pod_version(i, (int32_t)(next_rand(&pr->rng) % 4));
        if (ks_queue_add(q, cur, now(NULL)) < 0)
            fail("add failed", i);
        struct ks_queue_pod_info info;
        if (ks_queue_pod_info(q, cur, &info) && (!info.pod.pod || index_of(info.pod.pod) != i))
            fail("pod_info names another pod", i);
        /* some pods get newer versions, some are deleted, wherever they are by then */
        uint64_t r = next_rand(&pr->rng) % 10;
        for (uint64_t k = 0; k < (r < 3 ? r : 0); k++) {
            struct ks_pod *next = pod_version(i, (int32_t)(next_rand(&pr->rng) % 4));
            if (ks_queue_update(q, cur, next) < 0)
                fail("update failed", i);
            ks_pod_put(cur); /* the producer's reference moves to the new version */
            cur = next;
        }
        if (i % 10 == 9 && ks_queue_delete(q, cur))
            atomic_store(&finished[i], 1);
        ks_pod_put(cur);
        atomic_fetch_add(&progress[pr->id], 1);
        if (i % 64 == 0)
            sched_yield();
    }
    atomic_fetch_sub(&producers_left, 1);
    ks_rcu_unregister_thread();
    return NULL;
}

/*
 * New versions of pods the producers are done with, until they are all done. Never of the
 * pods they delete: a new version of a pod deleted while in flight would be a second pod
 * of that name handed out while the first is still held.
 */
static void *churn(void *arg)
{
    uint64_t rng = 0xC0FFEE123ull;
    (void)arg;
    ks_rcu_register_thread();
    while (atomic_load(&producers_left) > 0) {
        int p = (int)(next_rand(&rng) % PRODUCERS);
        long done = atomic_load(&progress[p]);
        long i = p + PRODUCERS * (done ? (long)(next_rand(&rng) % (uint64_t)done) : 0);
        if (!done || i % 10 == 9) {
            sched_yield();
            continue;
        }
        struct ks_pod *v = pod_version(i, (int32_t)(next_rand(&rng) % 4));
        if (ks_queue_update(q, NULL, v) < 0)
            fail("churn update failed", i);
        ks_pod_put(v);
        atomic_fetch_add(&churned, 1);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* Cluster events, clock and flushes, until the producers are done. */
static void *events(void *arg)
{
    (void)arg;
    static const struct ks_cluster_event node_add = {KS_ER_NODE, KS_ACT_ADD};
    static const struct ks_cluster_event pod_delete = {KS_ER_ASSIGNED_POD, KS_ACT_DELETE};
    ks_rcu_register_thread();
    for (unsigned k = 0; atomic_load(&producers_left) > 0; k++) {
        atomic_fetch_add(&clock_ns, 700);
        ks_queue_move_event(q, k % 2 ? &node_add : &pod_delete, NULL, NULL);
        ks_queue_flush_backoff(q);
        if (k % 16 == 0)
            ks_queue_flush_unschedulable(q);
        sched_yield();
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* Give back or finish a pod the consumer held. */
static void resolve(struct ks_queued_pod *qp, uint64_t cycle, uint64_t *rng)
{
    long i = index_of(qp->pod);
    uint64_t r = next_rand(rng) % 10;
    atomic_store(&in_flight[i], 0);
    /* once quiet, everything binds so the run ends */
    if (r < 5 || atomic_load(&quiet) || qp->attempts > 6) {
        atomic_store(&finished[i], 1);
        ks_queue_done(q, qp);
        return;
    }
    qp->unschedulable_plugins = r < 8 ? UINT64_C(1) << (r % 3) : 0;
    unsigned events = r < 8 ? KS_EVENT_NODE_ADD | KS_EVENT_ASSIGNED_POD_DELETE : 0;
    if (ks_queue_add_unschedulable(q, qp, cycle, events) < 0)
        fail("requeue failed", i);
}

/*
 * The consumer, like the scheduling loop with its binders: up to HELD pods at a time
 * between pop and give-back, so a pod handed out while another struct of it is still
 * held shows as a duplicate.
 */
enum { HELD = 8 };

static void *consume(void *arg)
{
    struct ks_queued_pod *held[HELD];
    uint64_t cycles[HELD];
    uint32_t nheld = 0;
    uint64_t rng = 0x1234567;
    (void)arg;
    ks_rcu_register_thread();
    for (;;) {
        struct ks_queued_pod *qp = ks_queue_pop(q, false);
        if (!qp) {
            if (nheld) { /* give the oldest back */
                resolve(held[0], cycles[0], &rng);
                memmove(held, held + 1, --nheld * sizeof(*held));
                memmove(cycles, cycles + 1, nheld * sizeof(*cycles));
                continue;
            }
            if (!atomic_load(&quiet)) {
                sched_yield();
                continue;
            }
            /* the rest of the world is quiet: let every waiting pod come back */
            atomic_fetch_add(&clock_ns, 1000000000);
            ks_queue_move(q, KS_EVENT_ALL);
            ks_queue_flush_backoff(q);
            ks_queue_flush_unschedulable(q);
            struct ks_queue_counts c;
            ks_queue_count(q, &c);
            if (c.active + c.backoff + c.unschedulable + c.in_flight == 0)
                break;
            continue;
        }
        long i = index_of(qp->pod);
        if (atomic_exchange(&in_flight[i], 1))
            fail("a pod handed out while another struct of it is held", i);
        if (nheld == HELD) {
            resolve(held[0], cycles[0], &rng);
            memmove(held, held + 1, --nheld * sizeof(*held));
            memmove(cycles, cycles + 1, nheld * sizeof(*cycles));
        }
        held[nheld] = qp;
        cycles[nheld++] = ks_queue_cycle(q);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

int main(void)
{
    if (ks_api_init() < 0)
        return 1;
    ks_rcu_register_thread();
    static const char *const names[] = {"PrioritySort", "NodeResourcesFit", "NodeAffinity",
                                        "TaintToleration"};
    struct ks_event_map_plugin plugins[4];
    for (int i = 0; i < 4; i++)
        plugins[i] = (struct ks_event_map_plugin){.plugin = ks_registry_find(names[i])};
    struct ks_event_map *map;
    if (ks_event_map_create(plugins, 4, &map) < 0)
        return 1;
    const struct ks_event_map *maps[1] = {map};
    uint32_t sched_names[1] = {ks_wk.default_scheduler};
    struct ks_queue_opts o = {
        .less = less,
        .initial_backoff_ns = 1000,
        .max_backoff_ns = 10000,
        .max_unschedulable_ns = 50000,
        .clock = {.now = now},
        .nprofiles = 1,
        .maps = maps,
        .scheduler_names = sched_names,
    };
    if (ks_queue_create_opts(&o, &q) < 0)
        return 1;

    pthread_t prod[PRODUCERS], ev, cons, churner;
    struct producer args[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        args[i] = (struct producer){.id = i, .rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)};
        pthread_create(&prod[i], NULL, produce, &args[i]);
    }
    pthread_create(&ev, NULL, events, NULL);
    pthread_create(&cons, NULL, consume, NULL);
    pthread_create(&churner, NULL, churn, NULL);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(prod[i], NULL);
    pthread_join(ev, NULL);
    pthread_join(churner, NULL);
    atomic_store(&quiet, true);
    pthread_join(cons, NULL);

    char msg[256];
    if (ks_queue_check(q, msg, sizeof(msg)) < 0)
        fail(msg, -1);
    long lost = 0;
    for (long i = 0; i < PODS; i++)
        lost += !atomic_load(&finished[i]);
    if (lost)
        fail("pods lost", lost);
    printf("stress_activeq_queue: %d pods, %lu churned versions, %llu scheduling cycles, %ld lost, %u "
           "failures\n",
           PODS, atomic_load(&churned), (unsigned long long)ks_queue_cycle(q), lost, atomic_load(&failures));
    ks_queue_destroy(q);
    ks_event_map_destroy(map);
    ks_rcu_unregister_thread();
    return atomic_load(&failures) ? 1 : 0;
}
