// bench_ring.h - the hand-back ring of the queue micro-benchmarks: a bounded MPMC ring
// (Vyukov's) of pointers, through which the consumer thread hands popped entries back to
// the producer threads. Lock-free and allocation-free after construction, so it adds no
// lock of its own to what a benchmark measures.
#ifndef KSCHED_BENCH_RING_H
#define KSCHED_BENCH_RING_H

#include <atomic>
#include <cstdint>
#include <vector>

namespace ksbench
{

// Holds at most kSize pointers. put() and get() may be called from any number of threads
// at once; neither blocks: put() is false when the ring is full, get() nullptr when empty.
template <typename T> class Ring
{
    struct Cell {
        // pos: the cell is free for the put of position pos; pos + 1: it holds that put's item
        std::atomic<uint64_t> seq;
        T *item;
    };
    std::vector<Cell> cells_;
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) std::atomic<uint64_t> tail_{0};

  public:
    static constexpr uint64_t kSize = 1024;

    Ring() : cells_(kSize)
    {
        for (uint64_t i = 0; i < kSize; i++)
            cells_[i].seq.store(i, std::memory_order_relaxed);
    }

    bool put(T *item)
    {
        uint64_t pos = tail_.load(std::memory_order_relaxed);
        for (;;) {
            Cell &c = cells_[pos % kSize];
            // acquire: the get that freed this cell has read its item
            int64_t d =
                static_cast<int64_t>(c.seq.load(std::memory_order_acquire)) - static_cast<int64_t>(pos);
            if (d == 0 && tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                c.item = item;
                // release: the item is written before a get may read it
                c.seq.store(pos + 1, std::memory_order_release);
                return true;
            }
            if (d < 0)
                return false; // full: the cell still holds the item of the previous lap
            if (d > 0)
                pos = tail_.load(std::memory_order_relaxed); // another put took pos
        }
    }

    T *get()
    {
        uint64_t pos = head_.load(std::memory_order_relaxed);
        for (;;) {
            Cell &c = cells_[pos % kSize];
            // acquire: pairs with put's release, the item is visible
            int64_t d =
                static_cast<int64_t>(c.seq.load(std::memory_order_acquire)) - static_cast<int64_t>(pos + 1);
            if (d == 0 && head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                T *item = c.item;
                // release: the item is read before the next lap's put overwrites it
                c.seq.store(pos + kSize, std::memory_order_release);
                return item;
            }
            if (d < 0)
                return nullptr; // empty: no put has filled the cell yet
            if (d > 0)
                pos = head_.load(std::memory_order_relaxed); // another get took pos
        }
    }
};

} // namespace ksbench

#endif
