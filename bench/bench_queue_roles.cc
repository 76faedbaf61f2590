// bench_queue_roles.cc - the whole scheduling queue (include/ksched/internal/queue.h, public API only)
// with its threads in the roles they have in the scheduler, from 1, 2 and 4 threads at once.
// Thread 0 is the scheduling thread: the one consumer, popping without blocking
// (ks_queue_pop(q, false), yielding when activeQ is empty). The other threads write.
//
//   BM_Queue_Roles    the producers (informer, binder-failure paths) against the consumer:
//                     thread 0 pops pods and finishes them (ks_queue_done); every other
//                     thread adds pods (ks_queue_add, timestamped ks_queue_now). A finished
//                     pod goes back to the producers through a ring (bench_ring.h) and comes
//                     back as a new arrival: another pod of the same slot, its priority class
//                     drawn again, so adds and pops are as many and the queue holds 10,000
//                     pods less what is in the ring (at most 1,024) and in flight. With one
//                     thread it pops, finishes and adds in turn. items_per_second counts
//                     adds and pops.
//   BM_Queue_Requeue  the event and flusher threads against the give-back path: thread 0
//                     pops every pod and gives it back as failed with an error
//                     (ks_queue_add_unschedulable with no events); the queue has no backoff,
//                     so the pod goes straight back to activeQ and the queue holds its 10,000
//                     pods. Every other thread calls ks_queue_move(KS_EVENT_ALL) then
//                     ks_queue_flush_backoff, in a loop, never more than 64 rounds ahead of
//                     or behind the pops, so the writers contend with the consumer for the
//                     whole run. With one thread it pops, gives back, moves and flushes in
//                     turn. items_per_second counts pops and moves; pops_per_second the pops.
//
// Pods are named (namespace "default", a name per pod), so the queue identifies them as it
// does in production. Priorities come from four classes, most pods in the lowest, as in
// bench_queue.cc; QueueSort orders by priority, then by queue timestamp. The benchmark keeps
// its own reference to every pod and gives the queue another one on each add, so the queue
// drops its reference whenever it likes. It ends with no pod in flight and destroys the queue.
extern "C" {
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/queue.h"
}

#include "bench_queue_classes.h"
#include "bench_rcu.h"
#include "bench_ring.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace
{

constexpr uint32_t kHeld = 10000;
constexpr uint64_t kWindow = 64; // BM_Queue_Requeue: how far writers and consumer may drift

using ksbench::draw_class;
using ksbench::kClassCount;
using ksbench::priority_less;

// A pod and the slot it belongs to, in one calloc'd block with the pod first, so the pod's
// last ks_pod_put (which frees the pod's address) frees the whole block.
struct SlotPod {
    ks_pod pod;
    uint32_t slot;
};
static_assert(offsetof(SlotPod, pod) == 0, "the pod's address is the block's");

// The pods of one run: per slot either one pod of every class (versions of an arrival) or
// one pod of a drawn class. The set holds one reference to each pod and drops it when
// destroyed, after the queue: a pod the queue still references lives until the queue drops it.
class PodSet
{
    std::vector<ks_pod *> pods_;
    int per_slot_;

    static ks_pod *make(uint32_t slot, int cls, uint32_t ns)
    {
        auto *sp = static_cast<SlotPod *>(calloc(1, sizeof(SlotPod)));
        if (!sp)
            std::abort();
        sp->slot = slot;
        ks_pod *p = &sp->pod;
        char name[40];
        snprintf(name, sizeof(name), "pod-%u-%d", slot, cls);
        p->meta.name = ks_arena_strdup(&p->arena, name);
        if (!p->meta.name)
            std::abort();
        p->meta.uid = p->meta.name;
        p->meta.namespace_id = ns;
        p->meta.creation_time = p->meta.deletion_time = KS_TIME_NONE;
        p->scheduler_name = ks_wk.default_scheduler;
        p->node_name = p->nominated_node_name = KS_ID_EMPTY;
        p->start_time = KS_TIME_NONE;
        p->has_priority = true;
        p->priority = ksbench::kClassPriority[cls];
        p->refs = 1; // the set's
        return p;
    }

  public:
    PodSet(uint32_t slots, bool every_class) : per_slot_(every_class ? kClassCount : 1)
    {
        if (ks_api_init() < 0)
            std::abort();
        uint32_t ns = ks_intern("default");
        uint64_t rng = 0x9E3779B97F4A7C15ull;
        pods_.reserve(static_cast<size_t>(slots) * per_slot_);
        for (uint32_t s = 0; s < slots; s++) {
            for (int c = 0; c < per_slot_; c++)
                pods_.push_back(make(s, every_class ? c : draw_class(&rng), ns));
        }
    }
    ~PodSet()
    {
        for (ks_pod *p : pods_)
            ks_pod_put(p);
    }
    PodSet(const PodSet &) = delete;
    PodSet &operator=(const PodSet &) = delete;

    // the pod of @slot in class @cls (0 when the set has one pod per slot)
    const ks_pod *at(uint32_t slot, int cls = 0) const
    {
        return pods_[static_cast<size_t>(slot) * per_slot_ + cls];
    }
    static uint32_t slot_of(const ks_pod *p)
    {
        return reinterpret_cast<const SlotPod *>(p)->slot;
    }
};

// Adds @pod with a reference of its own, timestamped now.
void add(ks_queue *q, const ks_pod *pod)
{
    if (ks_queue_add(q, ks_pod_get(pod), ks_queue_now(q)) < 0)
        std::abort(); // -EEXIST would mean a slot queued twice
}

ks_queued_pod *pop(ks_queue *q)
{
    ks_queued_pod *p;
    while (!(p = ks_queue_pop(q, false)))
        std::this_thread::yield();
    return p;
}

// ---- producers against the consumer ------------------------------------------------------------

struct RolesRun {
    ks_queue *queue = nullptr;
    PodSet *pods = nullptr;
    ksbench::Ring<const ks_pod> *ring = nullptr;
};

RolesRun roles;

// A finished pod's slot comes back as a new arrival: its pod of a class drawn again.
void arrive(const ks_pod *finished, uint64_t *rng)
{
    add(roles.queue, roles.pods->at(PodSet::slot_of(finished), draw_class(rng)));
}

// The consumer pops one pod per producer each iteration and each producer adds one, so adds
// and pops are as many: the consumer waits for room in the ring, a producer for a pod.
void BM_Queue_Roles(benchmark::State &state)
{
    ksbench::rcu_thread(); // every thread that calls into the queue is an RCU reader
    const int t = state.thread_index(), n = state.threads();
    if (t == 0) {
        roles.pods = new PodSet(kHeld, true);
        roles.ring = new ksbench::Ring<const ks_pod>;
        if (ks_queue_create(priority_less, nullptr, &roles.queue) < 0)
            std::abort();
        uint64_t rng = 0x2545F4914F6CDD1Dull;
        for (uint32_t s = 0; s < kHeld; s++)
            add(roles.queue, roles.pods->at(s, draw_class(&rng)));
    }
    uint64_t rng = 0x2545F4914F6CDD1Dull * static_cast<uint64_t>(t + 2);
    for (auto _ : state) {
        if (n == 1) {
            ks_queued_pod *p = pop(roles.queue);
            const ks_pod *pod = p->pod; // read before done: the entry is the queue's to free
            ks_queue_done(roles.queue, p);
            arrive(pod, &rng);
        } else if (t == 0) {
            for (int k = 1; k < n; k++) {
                ks_queued_pod *p = pop(roles.queue);
                const ks_pod *pod = p->pod;
                ks_queue_done(roles.queue, p);
                while (!roles.ring->put(pod))
                    std::this_thread::yield();
            }
        } else {
            const ks_pod *pod;
            while (!(pod = roles.ring->get()))
                std::this_thread::yield();
            arrive(pod, &rng);
        }
    }
    state.SetItemsProcessed(state.iterations() * (n == 1 ? 2 : t == 0 ? n - 1 : 1));
    if (t == 0) { // every thread has left the loop: nothing in flight
        ks_queue_destroy(roles.queue);
        delete roles.ring;
        delete roles.pods;
        roles = RolesRun{};
    }
}
BENCHMARK(BM_Queue_Roles)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// ---- event and flusher threads against the give-back path ------------------------------------------

struct RequeueRun {
    ks_queue *queue = nullptr;
    PodSet *pods = nullptr;
    std::atomic<uint64_t> pops{0};  // consumer iterations done
    std::atomic<uint64_t> moves{0}; // writer iterations done, all writers together
};

RequeueRun requeue;

void give_back(ks_queue *q)
{
    ks_queued_pod *p = pop(q);
    if (ks_queue_add_unschedulable(q, p, ks_queue_cycle(q), 0) < 0)
        std::abort();
}

void move_and_flush(ks_queue *q)
{
    ks_queue_move(q, KS_EVENT_ALL);
    ks_queue_flush_backoff(q);
}

// Lockstep within kWindow: writer round i waits for pop i - kWindow, and the consumer's pop
// i for every writer's round i - kWindow, so neither side runs on alone while the other waits.
// Relaxed loads and adds: the counters only pace the threads, they publish no data.
void BM_Queue_Requeue(benchmark::State &state)
{
    ksbench::rcu_thread(); // every thread that calls into the queue is an RCU reader
    const int t = state.thread_index(), n = state.threads();
    if (t == 0) {
        requeue.pods = new PodSet(kHeld, false);
        ks_queue_opts o{};
        o.less = priority_less;
        o.initial_backoff_ns = 0; // an error goes straight back to activeQ
        if (ks_queue_create_opts(&o, &requeue.queue) < 0)
            std::abort();
        for (uint32_t s = 0; s < kHeld; s++)
            add(requeue.queue, requeue.pods->at(s));
        requeue.pops.store(0, std::memory_order_relaxed);
        requeue.moves.store(0, std::memory_order_relaxed);
    }
    const uint64_t writers = static_cast<uint64_t>(n - 1);
    uint64_t i = 0;
    for (auto _ : state) {
        if (n == 1) {
            give_back(requeue.queue);
            move_and_flush(requeue.queue);
        } else if (t == 0) {
            while (i >= kWindow && requeue.moves.load(std::memory_order_relaxed) < writers * (i - kWindow))
                std::this_thread::yield();
            give_back(requeue.queue);
            requeue.pops.fetch_add(1, std::memory_order_relaxed);
        } else {
            while (i >= kWindow && requeue.pops.load(std::memory_order_relaxed) < i - kWindow)
                std::this_thread::yield();
            move_and_flush(requeue.queue);
            requeue.moves.fetch_add(1, std::memory_order_relaxed);
        }
        i++;
    }
    int64_t pops = t == 0 ? static_cast<int64_t>(state.iterations()) : 0;
    state.SetItemsProcessed(state.iterations() * (n == 1 ? 2 : 1));
    state.counters["pops_per_second"] =
        benchmark::Counter(static_cast<double>(pops), benchmark::Counter::kIsRate);
    if (t == 0) { // every pod was given back: nothing in flight
        ks_queue_destroy(requeue.queue);
        delete requeue.pods;
        requeue.queue = nullptr;
        requeue.pods = nullptr;
    }
}
BENCHMARK(BM_Queue_Requeue)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

} // namespace
