/*
 * stress_soak.c - the churn soak (bench/harness/soak_run.c, the code behind `ksched soak`) as a
 * plain driver, so that it also runs under ThreadSanitizer: generator, scheduling thread,
 * binder threads with injected failures and delays, flusher, workers and call_rcu all
 * at once, with the invariant checks every few thousand events.
 *
 * Sizes are small (the sanitizers slow everything down): 120 nodes, 20% failed bindings,
 * 2% node deletions per pod, a check every 1,000 events. The run lasts
 * KSCHED_SOAK_SECONDS (default 30 under TSan, 8 otherwise: the release and ASan builds
 * also run the full `ksched soak` ctest entry). Exit status 1 on any violation.
 */
#include "soak.h"

#include "ksched/api.h"
#include "ksched/base/rcu.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
#ifdef KS_TSAN
    double seconds = 30;
#else
    double seconds = 8;
#endif
    const char *env = getenv("KSCHED_SOAK_SECONDS");
    if (env && atof(env) > 0)
        seconds = atof(env);
    struct ks_soak_opts o = {
        .nodes = 120,
        .pods = UINT64_MAX,
        .seconds = seconds,
        .seed = 7,
        .bind_failure_rate = 0.2,
        .node_delete_rate = 0.02,
        .check_every = 1000,
        .parallelism = 2,
        .binders = 3,
        .progress = getenv("KSCHED_SOAK_VERBOSE") ? stderr : NULL,
    };
    struct ks_soak_result *r = calloc(1, sizeof(*r));
    struct ks_error err = {0};

    ks_api_init();
    ks_rcu_register_thread();
    int rc = r ? ks_soak_run(&o, r, &err) : -1;
    ks_rcu_unregister_thread();
    if (rc < 0) {
        fprintf(stderr, "stress_soak: setup failed: %s\n", err.msg);
        return 1;
    }
    printf("stress_soak: %.1f s, %" PRIu64 " bound, %" PRIu64 " created, %" PRIu64
           " injected bind failures, %" PRIu64 " nodes deleted, %" PRIu64 " preemption victims, %" PRIu64
           " checks, %" PRIu64 " violations\n",
           r->wall_seconds, r->pods_bound, r->pods_created, r->bind_failures_injected, r->nodes_deleted,
           r->preemption_victims, r->checks, r->report.nviolations);
    for (uint32_t i = 0; i < r->report.nkept; i++)
        printf("  violation: %s\n", r->report.kept[i]);
    /* the run must have exercised the paths it claims to: binds, failures, node churn, checks */
    int bad = r->report.nviolations != 0 || r->pods_bound == 0 || r->bind_failures_injected == 0 ||
              r->nodes_deleted == 0 || r->checks < 2;
    free(r);
    return bad;
}
