/*
 * bench_report.c - what a `ksched bench` run tells (bench_run.h): --check's verdict on the
 * outcome (every pod as its op expects, no node overcommitted, gangs whole, DRA's allocations
 * consistent) and the report of the measured phase, for people and as one JSON line.
 *
 * Context: the command's main thread, after the run (the binder threads are idle; the event
 * callback's atomics are read relaxed).
 */
#include "bench.h"
#include "bench_run.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/json_write.h"
#include "ksched/internal/scheduler.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- checks (--check) -------------------------------------------------------------------------------- */

/*
 * The gangs of op @i (podGroupSizes): each bound whole or not at all (no fewer than minCount
 * members bound unless none is), a constrained one within one value of its topology key, and
 * with expectBoundGangs exactly that many bound. Returns the problems. In @snap's read section.
 */
static uint32_t check_gangs(struct bench_run *r, uint32_t i, const struct ks_snapshot *snap)
{
    const struct ks_bench_op *op = &r->w->ops[i];
    uint32_t ngroups = r->op_groups[i], bad = 0, whole = 0;
    uint32_t *bound = calloc(ngroups ? ngroups : 1, sizeof(*bound));
    uint32_t *domain = malloc((ngroups ? ngroups : 1) * sizeof(*domain));
    if (!bound || !domain) {
        free(bound);
        free(domain);
        fprintf(stderr, "ksched bench: check: out of memory\n");
        return 1;
    }
    for (uint32_t g = 0; g < ngroups; g++)
        domain[g] = KS_ID_NONE;
    for (uint32_t k = 0; k < r->op_count[i]; k++) {
        const struct bench_pod *bp = &r->pods[r->op_first[i] + k];
        unsigned o, g;
        if (!bp->pod->scheduling_group || sscanf(bp->pod->scheduling_group, "gang-%u-%u", &o, &g) != 2 ||
            g >= ngroups || atomic_load_explicit(&bp->state, memory_order_relaxed) != POD_BOUND)
            continue;
        bound[g]++;
        uint32_t key = op->ngroup_keys ? op->group_keys[g % op->ngroup_keys] : KS_ID_NONE, value = KS_ID_NONE;
        const struct ks_node_snap *n =
            ks_snapshot_find(snap, atomic_load_explicit(&bp->node, memory_order_relaxed));
        if (key == KS_ID_NONE || !n || !n->node)
            continue;
        ks_labels_get(&n->node->meta.labels, key, &value);
        if (domain[g] != KS_ID_NONE && value != domain[g] && bad++ < 10)
            fprintf(stderr, "ksched bench: check: %s:%d: gang %u spans %s and %s of %s\n", r->w->file,
                    op->line, g, ks_intern_str(domain[g]),
                    value == KS_ID_NONE ? "a node without it" : ks_intern_str(value), ks_intern_str(key));
        domain[g] = value;
    }
    for (uint32_t g = 0; g < ngroups; g++) {
        uint32_t min = g + 1 == ngroups ? r->op_group_last[i] : op->group_sizes[g % op->ngroup_sizes];
        whole += bound[g] >= min;
        if (bound[g] && bound[g] < min && bad++ < 10)
            fprintf(stderr, "ksched bench: check: %s:%d: gang %u bound %u of minCount %u\n", r->w->file,
                    op->line, g, bound[g], min);
    }
    if (op->expect_bound_gangs >= 0 && whole != (uint32_t)op->expect_bound_gangs) {
        bad++;
        fprintf(stderr, "ksched bench: check: %s:%d: %u of %u gangs bound, expected %" PRId64 "\n",
                r->w->file, op->line, whole, ngroups, op->expect_bound_gangs);
    }
    free(bound);
    free(domain);
    return bad;
}

static const char *const state_names[] = {"pending", "bound", "unschedulable", "preempted", "failed"};

/*
 * Every pod ended as its op expects, no node holds more than it can, and with DRA (the
 * record of what the scheduler wrote) no device was allocated to two claims at once and
 * every bound pod's claims are allocated on its node. Returns the number of problems.
 */
uint32_t ks__bench_check(struct bench_run *r)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < r->w->nops; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        uint32_t count[5] = {0};
        const struct bench_pod *example[5] = {0};
        for (uint32_t k = 0; k < r->op_count[i]; k++) {
            const struct bench_pod *bp = &r->pods[r->op_first[i] + k];
            uint8_t st = atomic_load_explicit(&bp->state, memory_order_relaxed);
            count[st]++;
            if (!example[st])
                example[st] = bp;
        }
        if (op->code == KS_BENCH_CHURN)
            continue; /* churn pods come and go; their outcome is not the benchmark's subject */
        bool ok = count[POD_ERROR] == 0 && count[POD_PENDING] == 0;
        if (op->expect == KS_BENCH_EXPECT_BOUND)
            ok = ok && count[POD_BOUND] == r->op_count[i];
        else if (op->expect == KS_BENCH_EXPECT_UNSCHEDULABLE)
            ok = ok && count[POD_UNSCHEDULABLE] == r->op_count[i];
        if (ok)
            continue;
        bad++;
        fprintf(stderr, "ksched bench: check: %s:%d: %u pods:", r->w->file, op->line, r->op_count[i]);
        for (int st = 0; st < 5; st++) {
            if (count[st])
                fprintf(stderr, " %u %s (e.g. %s/%s)", count[st], state_names[st],
                        ks_intern_str(example[st]->pod->meta.namespace_id), example[st]->pod->meta.name);
        }
        fprintf(stderr, "; expected all %s\n",
                op->expect == KS_BENCH_EXPECT_BOUND           ? "bound"
                : op->expect == KS_BENCH_EXPECT_UNSCHEDULABLE ? "unschedulable"
                                                              : "bound, unschedulable or preempted");
    }
    /* no node may be overcommitted, whichever plugins ran */
    ks_cache_refresh(r->cache);
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(r->cache);
    for (uint32_t i = 0; i < r->w->nops; i++)
        bad += r->op_groups[i] ? check_gangs(r, i, snap) : 0;
    uint64_t placed = 0;
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *n = ks_snapshot_node(snap, i);
        placed += n->npods;
        if (n->req_milli_cpu > n->alloc_milli_cpu || n->req_memory > n->alloc_memory ||
            (int64_t)n->npods > (int64_t)n->alloc_pods) {
            if (bad++ < 10)
                fprintf(stderr,
                        "ksched bench: check: node %s overcommitted: cpu %" PRId64 "/%" PRId64
                        "m, memory %" PRId64 "/%" PRId64 ", pods %u/%d\n",
                        ks_intern_str(n->name), n->req_milli_cpu, n->alloc_milli_cpu, n->req_memory,
                        n->alloc_memory, n->npods, n->alloc_pods);
        }
    }
    /* every pod the events call bound is on its node, unless it or that node was deleted (steadyState, churn)
     */
    uint64_t bound = 0;
    uint32_t claims_bad = 0;
    char msg[1024];
    for (uint32_t k = 0; k < r->npods; k++) {
        const struct bench_pod *bp = &r->pods[k];
        uint32_t node = atomic_load_explicit(&bp->node, memory_order_relaxed);
        if (atomic_load_explicit(&bp->state, memory_order_relaxed) != POD_BOUND || bp->deleted ||
            !ks_snapshot_find(snap, node))
            continue;
        bound++;
        if (r->record && bp->pod->nclaims &&
            ks_bench_dra_record_check_pod(r->record, r->objs, bp->pod, node, msg, sizeof(msg)) < 0 &&
            claims_bad++ < 10)
            fprintf(stderr, "ksched bench: check: %s\n", msg);
    }
    ks_rcu_read_unlock();
    bad += claims_bad;
    if (r->record) {
        uint64_t twice = ks_bench_dra_record_conflicts(r->record, msg, sizeof(msg));
        if (twice) {
            bad++;
            fprintf(stderr,
                    "ksched bench: check: %" PRIu64 " devices allocated to two claims at once, first: %s\n",
                    twice, msg);
        }
    }
    if (placed != bound) {
        bad++;
        fprintf(stderr,
                "ksched bench: check: %" PRIu64 " pods bound to existing nodes, %" PRIu64
                " in the snapshot\n",
                bound, placed);
    }
    return bad;
}

/* ---- output ----------------------------------------------------------------------------------------------
 */

void ks__bench_summarise(const struct bench_run *r, struct bench_result *o)
{
    uint32_t first = r->op_first[r->measured_op];
    memset(o, 0, sizeof(*o));
    for (uint32_t k = 0; k < r->op_count[r->measured_op]; k++) {
        uint8_t st = atomic_load_explicit(&r->pods[first + k].state, memory_order_relaxed);
        o->bound += st == POD_BOUND;
        o->unschedulable += st == POD_UNSCHEDULABLE;
        o->failed += st == POD_ERROR;
        o->rejections += atomic_load_explicit(&r->pods[first + k].events, memory_order_relaxed);
    }
    uint32_t measured_bound = atomic_load_explicit(&r->measured_bound, memory_order_relaxed);
    o->seconds = (double)(r->t_end - r->t0) / 1e9;
    o->pods_per_second = o->seconds > 0 ? measured_bound / o->seconds : 0;
    o->attempts_per_second = o->seconds > 0 ? (double)(r->cycles + r->untimed_cycles) / o->seconds : 0;
    double window = (double)(r->t_idle - r->t0) / 1e9;
    o->cpu_cores = window > 0 ? (double)r->cpu_ns / 1e9 / window : 0;
    o->p50 = ks_hist_quantile(&r->hist, 0.50);
    o->p90 = ks_hist_quantile(&r->hist, 0.90);
    o->p99 = ks_hist_quantile(&r->hist, 0.99);
    o->max = r->hist.max;
    o->peak_rss = ks_bench_peak_rss();
}

static void human_duration(char *buf, size_t len, uint64_t ns)
{
    if (ns < 10000)
        snprintf(buf, len, "%.2f µs", (double)ns / 1e3);
    else if (ns < 10000000)
        snprintf(buf, len, "%.0f µs", (double)ns / 1e3);
    else
        snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
}

void ks__bench_print_human(const struct bench_run *r, const struct bench_result *o)
{
    char p50[32], p90[32], p99[32], max[32];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    human_duration(p50, sizeof(p50), o->p50);
    human_duration(p90, sizeof(p90), o->p90);
    human_duration(p99, sizeof(p99), o->p99);
    human_duration(max, sizeof(max), o->max);
    printf("%s (size %s): %u nodes, %u measured pods\n", r->w->name, r->size->name, r->nodes_total,
           r->op_count[r->measured_op]);
    printf("  bound %u, unschedulable %u, failed %u in %.1f ms: %.0f pods/s", o->bound, o->unschedulable,
           o->failed, o->seconds * 1e3, o->pods_per_second);
    if (!o->bound)
        printf(" (%.0f attempts/s)", o->attempts_per_second); /* a backlog that fits nowhere */
    printf("\n");
    printf("  scheduling cycle: p50 %s, p90 %s, p99 %s, max %s over %" PRIu64 " cycles", p50, p90, p99, max,
           r->cycles);
    if (r->untimed_cycles)
        printf(" (+%" PRIu64 " untimed)", r->untimed_cycles);
    printf(", %" PRIu64 " indexed%s", r->indexed_cycles, r->a.no_index ? " (--no-index)" : "");
    if (r->indexed_unfit)
        printf(", %" PRIu64 " found unfit by the index", r->indexed_unfit);
    if (r->indexed_preempt)
        printf(", %" PRIu64 " preemptions from its candidate trees", r->indexed_preempt);
    if (o->rejections)
        printf(", %" PRIu64 " attempts rejected", o->rejections);
    printf("\n  memory: peak RSS %.1f MB, %.0f bytes per node\n", (double)o->peak_rss / 1e6,
           r->nodes_total ? (double)r->cluster_bytes / r->nodes_total : 0.0);
    printf("  cpu: %.2f cores busy (%.0f%% of %ld)\n", o->cpu_cores,
           cores > 0 ? 100 * o->cpu_cores / cores : 0.0, cores);
    if (r->churn_steps)
        printf("  churn: %u steps\n", r->churn_steps);
    if (r->steady.batches)
        printf("  steady state: %u batches of %u pods, each deleted with its claims once bound\n",
               r->steady.batches, r->steady.batch);
    if (r->objs && r->objs->of[KS_KIND_PVC].n)
        printf("  volumes: %u PersistentVolumeClaims, each bound to a PersistentVolume of its own\n",
               r->objs->of[KS_KIND_PVC].n);
    if (r->objs) {
        static const enum ks_kind kinds[] = {KS_KIND_REPLICA_SET, KS_KIND_STATEFUL_SET,
                                             KS_KIND_REPLICATION_CONTROLLER, KS_KIND_SERVICE};
        bool any = false;
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
            if (r->objs->of[kinds[k]].n)
                printf("%s%u %ss", any ? ", " : "  objects: ", r->objs->of[kinds[k]].n,
                       ks_kind_name(kinds[k]));
            any |= r->objs->of[kinds[k]].n > 0;
        }
        if (any)
            printf(" (createAny)\n");
    }
    if (r->objs && r->dra)
        printf("  dra: %u ResourceSlices, %u DeviceClasses, %u ResourceClaims in the end%s\n",
               r->objs->of[KS_KIND_RESOURCE_SLICE].n, r->objs->of[KS_KIND_DEVICE_CLASS].n,
               r->objs->of[KS_KIND_RESOURCE_CLAIM].n,
               r->record ? " (allocations recorded through a ks_dra_api for --check)" : "");
}

void ks__bench_print_json(const struct bench_run *r, const struct bench_result *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fputs("{\"workload\":", stdout);
    ks_json_write_cstr(stdout, r->w->name);
    fputs(",\"size\":", stdout);
    ks_json_write_cstr(stdout, r->size->name);
    printf(",\"nodes\":%u,\"pods\":%u,\"existing_pods\":%" PRId64
           ",\"bound\":%u,\"unschedulable\":%u,\"failed\":%u",
           r->nodes_total, r->op_count[r->measured_op],
           r->a.existing >= 0 ? r->a.existing : ks_bench_param(r->size, "initPods", 0), o->bound,
           o->unschedulable, o->failed);
    printf(",\"seconds\":%.6f,\"pods_per_second\":%.1f", o->seconds, o->pods_per_second);
    printf(",\"latency_us\":{\"p50\":%.2f,\"p90\":%.2f,\"p99\":%.2f,\"max\":%.2f}", o->p50 / 1e3,
           o->p90 / 1e3, o->p99 / 1e3, o->max / 1e3);
    printf(",\"attempts_per_second\":%.1f", o->attempts_per_second);
    printf(
        ",\"cycles\":%" PRIu64 ",\"untimed_cycles\":%" PRIu64 ",\"indexed_cycles\":%" PRIu64
        ",\"indexed_unfit_cycles\":%" PRIu64 ",\"indexed_preemptions\":%" PRIu64 ",\"rejections\":%" PRIu64,
        r->cycles, r->untimed_cycles, r->indexed_cycles, r->indexed_unfit, r->indexed_preempt, o->rejections);
    printf(",\"peak_rss_bytes\":%" PRIu64 ",\"bytes_per_node\":%.0f", o->peak_rss,
           r->nodes_total ? (double)r->cluster_bytes / r->nodes_total : 0.0);
    printf(",\"cpu_cores\":%.3f,\"cpu_utilisation\":%.3f,\"online_cores\":%ld", o->cpu_cores,
           cores > 0 ? o->cpu_cores / cores : 0.0, cores);
    if (r->a.seeded)
        printf(",\"seed\":%" PRIu64, r->a.seed);
    if (r->a.no_index)
        printf(",\"no_index\":true");
    printf("}\n");
}
