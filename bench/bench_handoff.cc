// bench_handoff.cc - what it costs the scheduling thread to hand work to another thread.
//
//   BM_Handoff_BinderFifo   a pod's binding job handed to a polling binder, as engine/binder.c
//                           does it: the job comes from the free list and goes on the FIFO
//                           under one adaptive mutex; the binder, polling a relaxed length
//                           hint, only tries the lock (spin.h's step between polls), takes the
//                           job, puts it back on the free list and drops the in-flight count,
//                           each under the lock. range(0): nanoseconds the producer works
//                           between jobs (0: back to back; 20,000: a 5,000-node scheduling
//                           cycle). push_ns: the producer's time in get + push, per job (not
//                           counting waits for a free job when the binder is behind).
//
// The worker pool's hand-off, polling and asleep, is BM_Workers_Run and BM_Handoff_WorkersWake
// (bench_engine.cc). The machine has two cores: the binder and the producer each get one,
// as in the scheduler, where the binders share theirs with the worker pool.
extern "C" {
#include "ksched/base/spin.h"
}

#include <benchmark/benchmark.h>

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace
{

struct Job {
    Job *next;
    uint64_t pod;
};

// binder.c's state for the hand-off: FIFO, free list and in-flight count under one lock.
struct BinderFifo {
    pthread_mutex_t lock;
    Job *head = nullptr, *tail = nullptr, *free_jobs = nullptr;
    uint32_t len = 0, in_flight = 0;
    bool quit = false;
    std::atomic<uint32_t> queued{0}; // len, for the polling binder (relaxed hint)
    std::atomic<uint64_t> bound{0};

    BinderFifo()
    {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
        pthread_mutex_init(&lock, &attr);
        pthread_mutexattr_destroy(&attr);
    }
    ~BinderFifo()
    {
        pthread_mutex_destroy(&lock);
    }

    // ks__job_get: a recycled job, nullptr when all are in flight
    Job *get()
    {
        pthread_mutex_lock(&lock);
        Job *job = free_jobs;
        if (job)
            free_jobs = job->next;
        pthread_mutex_unlock(&lock);
        return job;
    }

    // ks__bind_async without the wake-up decision: the binder polls
    void push(Job *job)
    {
        pthread_mutex_lock(&lock);
        job->next = nullptr;
        if (tail)
            tail->next = job;
        else
            head = job;
        tail = job;
        queued.store(++len, std::memory_order_relaxed);
        in_flight++;
        pthread_mutex_unlock(&lock);
    }

    // binder_main's poll_for_job, then the job's end: job_put and in_flight--
    void binder()
    {
        for (;;) {
            ks_spin sp{};
            Job *job = nullptr;
            for (;;) {
                if (queued.load(std::memory_order_relaxed) && pthread_mutex_trylock(&lock) == 0) {
                    if ((job = head) != nullptr) {
                        if (!(head = job->next))
                            tail = nullptr;
                        queued.store(--len, std::memory_order_relaxed);
                    }
                    bool stop = quit;
                    pthread_mutex_unlock(&lock);
                    if (job || stop)
                        break;
                }
                ks__spin_step(&sp, INT64_MAX / 2);
            }
            if (!job)
                return;
            benchmark::DoNotOptimize(job->pod);
            bound.fetch_add(1, std::memory_order_relaxed);
            pthread_mutex_lock(&lock);
            job->next = free_jobs;
            free_jobs = job;
            in_flight--;
            pthread_mutex_unlock(&lock);
        }
    }
};

void work_ns(int64_t ns)
{
    if (ns <= 0)
        return;
    const int64_t end = ks__mono_ns() + ns;
    while (ks__mono_ns() < end)
        ;
}

} // namespace

static void BM_Handoff_BinderFifo(benchmark::State &state)
{
    const int64_t gap = state.range(0);
    BinderFifo f;
    std::vector<Job> jobs(1024);
    for (auto &j : jobs) {
        j.next = f.free_jobs;
        f.free_jobs = &j;
    }
    std::thread binder([&f] { f.binder(); });
    uint64_t pod = 0;
    int64_t push_ns = 0;
    for (auto _ : state) {
        work_ns(gap);
        int64_t t0;
        Job *job;
        for (;;) {
            t0 = ks__mono_ns();
            if ((job = f.get()))
                break;
            ks__cpu_relax(); // all 1,024 jobs in flight: the binder is behind (not counted in push_ns)
        }
        job->pod = ++pod;
        f.push(job);
        push_ns += ks__mono_ns() - t0;
    }
    while (f.bound.load(std::memory_order_relaxed) < pod)
        ks__cpu_relax();
    pthread_mutex_lock(&f.lock);
    f.quit = true;
    f.queued.store(1, std::memory_order_relaxed); // make the binder try the lock and see quit
    pthread_mutex_unlock(&f.lock);
    binder.join();
    state.SetItemsProcessed(state.iterations());
    state.counters["push_ns"] = benchmark::Counter(static_cast<double>(push_ns) / state.iterations());
}
BENCHMARK(BM_Handoff_BinderFifo)->Arg(0)->Arg(2000)->Arg(20000)->UseRealTime();
