// bench_queue.cc - the active queue against the lock it replaces: a 50/50 mix of push and
// pop on a queue that holds 10,000 pods, from 1, 2 and 4 threads at once.
//
//   BM_ActiveQ_LockFree   the Lindén-Jonsson skiplist (queue/activeq.c)
//   BM_ActiveQ_MutexHeap  a binary heap under one mutex (the interim queue's design)
//
// The threads play the roles they have in the scheduler: one consumer (the scheduling
// loop, ks_activeq_pop_sc) and the rest producers (the informer, binder-failure and flusher
// threads adding pods with ks_activeq_push_mp): 1 consumer and 1 or 3 producers. A popped
// pod goes back to the producers through a ring and comes back as a new arrival (a fresh
// queue timestamp, a priority drawn again), so pushes and pops are as many and the queue
// holds 10,000 pods (less what is in the ring, at most 1,024). With one thread it pops and
// pushes in turn. Priorities come from four classes, most pods in the lowest, as clusters
// use PriorityClasses; within a class the queue is FIFO, so arrivals mostly go behind the
// pods already waiting while pops take the front.
//
// items_per_second counts pushes and pops, all threads together, over wall-clock time; the
// mutex heap runs the same roles, ring included.
// BM_ActiveQ_LockFreeMC / BM_ActiveQ_MutexHeapMC are the mixed case, the paper's own
// setting: every thread pops (pop_mc) and pushes in turn.
extern "C" {
#include "ksched/internal/queue.h"
}

#include "bench_queue_classes.h"
#include "bench_rcu.h"
#include "bench_ring.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace
{

constexpr int kHeld = 10000;

using ksbench::draw_class;
using ksbench::priority_less;

// The pods (immutable, as the queue requires: a pod never changes while it is queued),
// kHeld per class, and the queue entries that point at them.
struct Pods {
    std::vector<ks_pod> pods;
    std::vector<ks_queued_pod> qps;
    explicit Pods(size_t n) : pods(ksbench::kClassCount * n), qps(n)
    {
        for (size_t i = 0; i < pods.size(); i++) {
            pods[i] = ks_pod{};
            pods[i].priority = ksbench::kClassPriority[i / n];
        }
        uint64_t s = 0x9E3779B97F4A7C15ull;
        for (size_t i = 0; i < n; i++) {
            qps[i] = ks_queued_pod{};
            qps[i].pod = pick(&s);
            qps[i].timestamp_ns = static_cast<int64_t>(i);
        }
    }
    const ks_pod *pick(uint64_t *s)
    {
        size_t n = qps.size(), c = static_cast<size_t>(draw_class(s));
        return &pods[c * n + ks__xorshift(s) % n];
    }
};

// Queue timestamps: a per-thread clock (no shared counter to skew the comparison), the
// thread index in the low bits so keys stay distinct.
thread_local int64_t thread_clock;

// The popped entry comes back as a new arrival: another pod of a class drawn again, a later timestamp.
void as_new_arrival(Pods *pods, ks_queued_pod *qp, int thread, uint64_t *rng)
{
    thread_clock += 8;
    qp->timestamp_ns = (int64_t{1} << 40) + thread_clock + thread;
    qp->pod = pods->pick(rng);
}

// Popped pods on their way back to the producers (bench_ring.h), the same for both queues.
using Ring = ksbench::Ring<ks_queued_pod>;

// One run's shared state.
template <typename Q> struct Shared {
    Q *queue = nullptr;
    Pods *pods = nullptr;
    Ring *ring = nullptr;
};

// The loop of one thread. One thread pops and pushes in turn. Otherwise thread 0 is the
// consumer and pops one pod per producer each iteration, and each producer pushes one, so
// pops and pushes are as many: the consumer waits for room in the ring, a producer for a pod.
template <typename Q, typename Ops> void run(benchmark::State &state, Shared<Q> &sh, Ops ops)
{
    const int t = state.thread_index(), n = state.threads();
    uint64_t rng = 0x2545F4914F6CDD1Dull * static_cast<uint64_t>(t + 1);
    for (auto _ : state) {
        if (n == 1) {
            ks_queued_pod *qp = ops.pop(sh.queue);
            as_new_arrival(sh.pods, qp, t, &rng);
            ops.push(sh.queue, qp);
        } else if (t == 0) {
            for (int k = 1; k < n; k++) {
                ks_queued_pod *qp;
                while (!(qp = ops.pop(sh.queue)))
                    std::this_thread::yield();
                while (!sh.ring->put(qp))
                    std::this_thread::yield();
            }
        } else {
            ks_queued_pod *qp;
            while (!(qp = sh.ring->get()))
                std::this_thread::yield();
            as_new_arrival(sh.pods, qp, t, &rng);
            ops.push(sh.queue, qp);
        }
    }
    state.SetItemsProcessed(state.iterations() * (n == 1 ? 2 : t == 0 ? n - 1 : 1));
}

// ---- lock-free ---------------------------------------------------------------------------------

struct LockFreeOps {
    // the one consumer pops with pop_sc
    static ks_queued_pod *pop(ks_activeq *q)
    {
        return ks_activeq_pop_sc(q, false);
    }
    // every thread pops (the mixed case) with pop_mc
    static ks_queued_pod *pop_any(ks_activeq *q)
    {
        return ks_activeq_pop_mc(q);
    }
    static void push(ks_activeq *q, ks_queued_pod *qp)
    {
        if (ks_activeq_push_mp(q, qp, nullptr) < 0)
            std::abort();
    }
};

Shared<ks_activeq> lf;

void BM_ActiveQ_LockFree(benchmark::State &state)
{
    ksbench::rcu_thread(); // every thread that touches the active queue is an RCU reader
    if (state.thread_index() == 0) {
        lf.pods = new Pods(kHeld);
        lf.ring = new Ring;
        if (ks_activeq_create(priority_less, nullptr, nullptr, nullptr, &lf.queue) < 0)
            std::abort();
        for (auto &qp : lf.pods->qps)
            LockFreeOps::push(lf.queue, &qp);
    }
    run(state, lf, LockFreeOps{});
    if (state.thread_index() == 0) {
        ks_activeq_destroy(lf.queue);
        delete lf.ring;
        delete lf.pods;
    }
}
BENCHMARK(BM_ActiveQ_LockFree)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// ---- mutex + binary heap -----------------------------------------------------------------------

struct HeapQueue {
    std::mutex lock;
    std::vector<ks_queued_pod *> heap;
    static bool after(ks_queued_pod *a, ks_queued_pod *b)
    {
        return priority_less(nullptr, b, a);
    }
};

struct HeapOps {
    static ks_queued_pod *pop_any(HeapQueue *q)
    {
        return pop(q);
    }
    static ks_queued_pod *pop(HeapQueue *q)
    {
        std::lock_guard<std::mutex> g(q->lock);
        if (q->heap.empty())
            return nullptr;
        std::pop_heap(q->heap.begin(), q->heap.end(), HeapQueue::after);
        ks_queued_pod *qp = q->heap.back();
        q->heap.pop_back();
        return qp;
    }
    static void push(HeapQueue *q, ks_queued_pod *qp)
    {
        std::lock_guard<std::mutex> g(q->lock);
        q->heap.push_back(qp);
        std::push_heap(q->heap.begin(), q->heap.end(), HeapQueue::after);
    }
};

Shared<HeapQueue> mh;

void BM_ActiveQ_MutexHeap(benchmark::State &state)
{
    if (state.thread_index() == 0) {
        mh.pods = new Pods(kHeld);
        mh.ring = new Ring;
        mh.queue = new HeapQueue;
        mh.queue->heap.reserve(kHeld + 64);
        for (auto &qp : mh.pods->qps)
            HeapOps::push(mh.queue, &qp);
    }
    run(state, mh, HeapOps{});
    if (state.thread_index() == 0) {
        delete mh.queue;
        delete mh.ring;
        delete mh.pods;
    }
}
BENCHMARK(BM_ActiveQ_MutexHeap)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// ---- every thread pops and pushes (the paper's benchmark) --------------------------------------------

template <typename Q, typename Ops> void run_symmetric(benchmark::State &state, Shared<Q> &sh, Ops ops)
{
    uint64_t rng = 0x2545F4914F6CDD1Dull * static_cast<uint64_t>(state.thread_index() + 1);
    for (auto _ : state) {
        ks_queued_pod *qp = ops.pop_any(sh.queue);
        if (!qp)
            std::abort(); // 10,000 held, at most 4 in flight
        as_new_arrival(sh.pods, qp, state.thread_index(), &rng);
        ops.push(sh.queue, qp);
    }
    state.SetItemsProcessed(state.iterations() * 2);
}

Shared<ks_activeq> lf_mc;

void BM_ActiveQ_LockFreeMC(benchmark::State &state)
{
    ksbench::rcu_thread(); // every thread that touches the active queue is an RCU reader
    if (state.thread_index() == 0) {
        lf_mc.pods = new Pods(kHeld);
        if (ks_activeq_create(priority_less, nullptr, nullptr, nullptr, &lf_mc.queue) < 0)
            std::abort();
        for (auto &qp : lf_mc.pods->qps)
            LockFreeOps::push(lf_mc.queue, &qp);
    }
    run_symmetric(state, lf_mc, LockFreeOps{});
    if (state.thread_index() == 0) {
        ks_activeq_destroy(lf_mc.queue);
        delete lf_mc.pods;
    }
}
BENCHMARK(BM_ActiveQ_LockFreeMC)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

Shared<HeapQueue> mh_mc;

void BM_ActiveQ_MutexHeapMC(benchmark::State &state)
{
    if (state.thread_index() == 0) {
        mh_mc.pods = new Pods(kHeld);
        mh_mc.queue = new HeapQueue;
        mh_mc.queue->heap.reserve(kHeld + 64);
        for (auto &qp : mh_mc.pods->qps)
            HeapOps::push(mh_mc.queue, &qp);
    }
    run_symmetric(state, mh_mc, HeapOps{});
    if (state.thread_index() == 0) {
        delete mh_mc.queue;
        delete mh_mc.pods;
    }
}
BENCHMARK(BM_ActiveQ_MutexHeapMC)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

} // namespace
