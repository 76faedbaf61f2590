// bench_queue_classes.h - the pods of the queue micro-benchmarks (bench_queue.cc,
// bench_queue_roles.cc): four priority classes, most pods in the lowest, as clusters use
// PriorityClasses, and the QueueSort they are popped in (priority, then queue timestamp:
// FIFO within a class).
#ifndef KSCHED_BENCH_QUEUE_CLASSES_H
#define KSCHED_BENCH_QUEUE_CLASSES_H

extern "C" {
#include "ksched/api.h"
#include "ksched/internal/queue.h"
#include "select_host.h" // ks__xorshift
}

#include <cstdint>

namespace ksbench
{

constexpr int kClassCount = 4;
constexpr int32_t kClassPriority[kClassCount] = {0, 1000, 2000, 1000000};

// A class drawn from *@rng: 70% of pods in class 0, then 20%, 8% and 2%.
inline int draw_class(uint64_t *rng)
{
    uint64_t r = ks__xorshift(rng) % 100;
    return r < 70 ? 0 : r < 90 ? 1 : r < 98 ? 2 : 3;
}

// PrioritySort's order: higher priority first, then the earlier queue timestamp.
inline bool priority_less(const void *, const ks_queued_pod *a, const ks_queued_pod *b)
{
    if (a->pod->priority != b->pod->priority)
        return a->pod->priority > b->pod->priority;
    return a->timestamp_ns < b->timestamp_ns;
}

} // namespace ksbench

#endif
