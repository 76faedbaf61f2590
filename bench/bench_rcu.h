// bench_rcu.h - RCU reader registration for the micro-benchmarks. Every benchmark thread
// that touches the cache, the snapshot or the active queue is a liburcu reader, and
// liburcu aborts when a thread registers twice. Google Benchmark runs thread 0 of every
// benchmark on the main thread and starts fresh threads for the others, so registration
// has one owner per thread: this guard.
#ifndef KSCHED_BENCH_RCU_H
#define KSCHED_BENCH_RCU_H

namespace ksbench
{

// Registers the calling thread as an RCU reader unless it already is; the thread stays
// registered until it exits (then it is unregistered). Idempotent, so every benchmark
// body calls it first, whatever ran before it on the thread. Must not be called inside
// a read section. Benchmarks never call ks_rcu_register_thread() or
// ks_rcu_unregister_thread() themselves.
void rcu_thread();

} // namespace ksbench

#endif
