// bench_rcu.cc - the per-thread RCU registration guard of the micro-benchmarks (see
// bench_rcu.h). A thread_local object records whether its thread registered; its
// destructor, run when the thread exits (for the main thread, at process exit),
// unregisters it.
#include "bench_rcu.h"

extern "C" {
#include "ksched/base/rcu.h"
}

namespace ksbench
{
namespace
{

struct Reader {
    bool registered = false;
    ~Reader()
    {
        if (registered)
            ks_rcu_unregister_thread();
    }
};

thread_local Reader reader;

} // namespace

void rcu_thread()
{
    if (!reader.registered) {
        ks_rcu_register_thread();
        reader.registered = true;
    }
}

} // namespace ksbench
