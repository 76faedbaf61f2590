/*
 * bench_run.c - what `ksched bench` runs once its flags are parsed (bench.h ks_bench_run;
 * the command, cmd/bench_cmd.c, parses them and lists every flag): `--list`, or one workload.
 *
 * Runs one workload (bench/workloads/NAME.yaml, see bench_workload.c) the way
 * scheduler_perf does, through the real pipeline: a generated cluster handed to the
 * scheduler as node events (the cache takes the nodes), the unmeasured pods scheduled to
 * completion, then the measured pods added to the queue and
 * scheduled by ks_scheduler_schedule_one() with parallel Filter/Score workers, RCU
 * snapshots and the asynchronous binder threads confirming each pod into the cache.
 *
 * Measured: from just before the first measured pod enters the queue until the last
 * measured pod is bound (its Scheduled event, sent by a binder thread after the cache took
 * the pod): pods/s; every scheduling cycle of the measured phase timed around
 * ks_scheduler_schedule_one() into a log-linear histogram (p50/p90/p99); CPU time of the
 * process over the window (getrusage: all threads, so 2.0 means two cores busy); peak RSS
 * of the whole run, and the resident bytes the cluster (nodes, cache, first snapshot)
 * added, per node. Cycles that ks_scheduler_run_until_idle() runs after the queue first
 * ran dry (pods a binding or an event sent back) count towards pods/s but are not timed
 * one by one: their number is reported as untimed_cycles. Of all the measured phase's
 * cycles, timed or not, those whose host the signature index chose are indexed_cycles
 * (ks_scheduler_indexed_cycles; 0 with --no-index), and those it found no node fits are
 * indexed_unfit_cycles, and the preemptions its candidate trees answered indexed_preemptions
 * (ks_scheduler_indexed_preemptions); attempts_per_second counts every cycle over the same time (what a
 * backlog that fits nowhere is measured by).
 *
 * Objects: every pod of every op is decoded before anything runs (so the event callback,
 * which binder threads call, reads a pod table that never changes), nodes are generated
 * when their op runs. Pods are never freed before the scheduler and the cache are gone.
 * The churn op creates and deletes its node and pod through the scheduler's events between
 * two timed cycles, every intervalPods cycles.
 *
 * Volumes: the claim and the volume of every pod of a createPods op with volume templates
 * (ks_bench_pod_volume) are in the object set before the scheduler starts.
 *
 * Objects: a workload with createAny, createResourceDriver or allocResourceClaims ops gets
 * an object set (opts.objects) that holds their objects (Services, ReplicaSets, StatefulSets,
 * ReplicationControllers, ResourceSlices, DeviceClasses, ResourceClaimTemplates,
 * ResourceClaims...), all made before the pods are decoded (createPods' owners name
 * createAny's objects: its pods are made as their controller makes them, bench_objects.c),
 * whatever their place among the ops (the nodes' names are known ahead: node i of the
 * createNodes ops is <prefix><i>); nothing reads them before the pods that need them.
 *
 * Dynamic Resource Allocation: the claims of pods that name a ResourceClaimTemplate are
 * made before the scheduler starts, as the
 * resourceclaim controller makes them (ks_dra_make_pod_claims), so they exist before their
 * pods reach the scheduler: DynamicResources' PreEnqueue looks a pod's claims up in its
 * claim tracker, which takes in the set's changes only at a PreFilter. A steadyState op
 * (upstream's: count pods at a time; once all are bound they are deleted, with their claims,
 * and the next count pods come) keeps that order while the scheduler runs: the claims of
 * batch n+1 join the set (on this thread, between cycles, with gen moved, loader.h) when
 * batch n is queued, so that batch n's first PreFilter takes them in before batch n+1 is
 * queued; a deleted batch's claims leave the set (gen moved) and are freed only after the
 * scheduler, as the tracker and binder threads may still hold them. Claim additions and
 * deletions are offered to the queue as the claim informer's events.
 *
 * Context: the main thread is the scheduling thread and the only event source; the event
 * callback runs on binder threads (and the scheduling thread) and touches only atomics.
 */
#include "bench_run.h"
#include "bench.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/dra_controller.h"
#include "ksched/internal/features.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/scheduler.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the pod table ------------------------------------------------------------------------------ */

static uint32_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    return (uint32_t)((x * 0x9e3779b97f4a7c15ull) >> 32);
}

static int index_build(struct bench_run *r)
{
    uint32_t cap = 16;
    while (cap < 2 * r->npods)
        cap *= 2;
    if (!(r->index = calloc(cap, sizeof(*r->index))))
        return -ENOMEM;
    r->index_mask = cap - 1;
    for (uint32_t i = 0; i < r->npods; i++) {
        uint32_t h = ptr_hash(r->pods[i].pod) & r->index_mask;
        while (r->index[h])
            h = (h + 1) & r->index_mask;
        r->index[h] = &r->pods[i];
    }
    return 0;
}

static struct bench_pod *index_find(const struct bench_run *r, const struct ks_pod *pod)
{
    for (uint32_t h = ptr_hash(pod) & r->index_mask; r->index[h]; h = (h + 1) & r->index_mask) {
        if (r->index[h]->pod == pod)
            return (struct bench_pod *)r->index[h];
    }
    return NULL;
}

/* Scheduler events (binder threads, and the scheduling thread for failures; serialised by the scheduler). */
static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct bench_run *r = ctx;
    struct bench_pod *bp = index_find(r, ev->pod);
    if (!bp)
        return;
    switch (ev->kind) {
    case KS_SCHED_SCHEDULED:
        atomic_store_explicit(&bp->node, ev->node, memory_order_relaxed);
        atomic_store_explicit(&bp->state, POD_BOUND, memory_order_relaxed);
        if (bp->op == r->measured_op && atomic_load_explicit(&r->measuring, memory_order_relaxed)) {
            atomic_store_explicit(&r->last_bound_ns, ks__mono_ns(), memory_order_relaxed);
            atomic_fetch_add_explicit(&r->measured_bound, 1, memory_order_relaxed);
        }
        break;
    case KS_SCHED_UNSCHEDULABLE:
        atomic_fetch_add_explicit(&bp->events, 1, memory_order_relaxed);
        atomic_store_explicit(&bp->state, POD_UNSCHEDULABLE, memory_order_relaxed);
        break;
    case KS_SCHED_PREEMPTED:
        atomic_store_explicit(&bp->state, POD_PREEMPTED, memory_order_relaxed);
        break;
    case KS_SCHED_ERROR:
        atomic_store_explicit(&bp->state, POD_ERROR, memory_order_relaxed);
        break;
    case KS_SCHED_NOMINATED:
        break;
    }
}

/* ---- progress ------------------------------------------------------------------------------------ */

static void progress(struct bench_run *r, const char *phase, uint64_t done, uint64_t total, int64_t t0)
{
    if (!r->tty || r->a.quiet)
        return;
    enum { WIDTH = 30 };
    uint32_t fill = total ? (uint32_t)(done * WIDTH / total) : 0;
    char bar[WIDTH + 1];
    for (uint32_t i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    double secs = (double)(ks__mono_ns() - t0) / 1e9;
    fprintf(stderr, "\r%-8s [%s] %" PRIu64 "/%" PRIu64 " %8.0f/s\033[K", phase, bar, done, total,
            secs > 0 ? (double)done / secs : 0.0);
    fflush(stderr);
}

static void progress_done(struct bench_run *r)
{
    if (r->tty && !r->a.quiet) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

/* ---- profiling -------------------------------------------------------------------------------------- */

/*
 * Under `perf record --control fifo:CTL,ACK -D -1` (perf/flamegraph.sh sets KSCHED_PERF_CTL and
 * KSCHED_PERF_ACK to the two fifos), record only the measured phase: write "enable" before the
 * first measured pod is queued and "disable" once the queue is idle, each acknowledged by perf.
 */
static void perf_ctl(const char *cmd)
{
    const char *ctl = getenv("KSCHED_PERF_CTL"), *ack = getenv("KSCHED_PERF_ACK");
    char buf[16];
    if (!ctl || !*ctl)
        return;
    int fd = open(ctl, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t w = write(fd, cmd, strlen(cmd));
    close(fd);
    if (w > 0 && ack && *ack && (fd = open(ack, O_RDONLY | O_CLOEXEC)) >= 0) {
        if (read(fd, buf, sizeof(buf)) < 0)
            buf[0] = '\0';
        close(fd);
    }
}

/* ---- ops ------------------------------------------------------------------------------------------- */

/* $@name of the size, or of the flags that override it (--nodes, --pods, --existing-pods); -1: none. */
static int64_t param_value(const struct bench_run *r, const char *name)
{
    if (strcmp(name, "initNodes") == 0)
        return r->a.nodes;
    if (strcmp(name, "measurePods") == 0 && r->a.pods >= 0)
        return r->a.pods;
    if (strcmp(name, "initPods") == 0 && r->a.existing >= 0)
        return r->a.existing;
    return ks_bench_param(r->size, name, -1);
}

/* The op's count (a steadyState createPods: its pods at a time), -1 when its $param is not defined. */
static int64_t op_batch(const struct bench_run *r, const struct ks_bench_op *op)
{
    return op->count_param ? param_value(r, op->count_param) : op->count;
}

/* The objects the op makes: its count, or a steadyState createPods' total. */
static int64_t op_count(const struct bench_run *r, const struct ks_bench_op *op)
{
    if (op->steady_state)
        return op->total_param ? param_value(r, op->total_param) : op->total;
    return op_batch(r, op);
}

static int undefined_param(const struct bench_run *r, const struct ks_bench_op *op, const char *param)
{
    fprintf(stderr, "ksched bench: %s:%d: size %s does not define $%s\n", r->w->file, op->line, r->size->name,
            param);
    return -EINVAL;
}

/* Churn steps the measured phase can reach: one every interval_pods cycles, with slack for retries. */
static uint32_t churn_creates(const struct bench_run *r, const struct ks_bench_op *op)
{
    uint64_t cycles = (uint64_t)r->nmeasured * 2 + 16;
    return (uint32_t)(cycles / op->interval_pods / 2 + 1);
}

static int fail_input(const struct ks_error *err)
{
    char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
    ks_error_format(err, msg, sizeof(msg));
    fprintf(stderr, "ksched bench: %s\n", msg);
    return -EINVAL;
}

/* Decode every pod of every op (and the churn pods) before anything runs. */
/* The next gang pod of op @opi joins the op's current gang (@filled of its pods so far), opening the next
 * when full. */
static int join_gang(struct bench_run *r, uint32_t opi, struct ks_pod *pod, uint32_t *filled)
{
    const struct ks_bench_op *op = &r->w->ops[opi];
    uint32_t g = r->op_groups[opi] - (*filled > 0);
    if (*filled == 0)
        r->op_groups[opi]++;
    r->op_group_ns[opi] = pod->meta.namespace_id;
    r->op_group_last[opi] = ++*filled;
    if (*filled == op->group_sizes[g % op->ngroup_sizes])
        *filled = 0;
    return ks_bench_join_group(pod, opi, g);
}

/* The $params of podGroupSizes, for the size that runs. */
static int resolve_group_sizes(struct bench_run *r)
{
    for (uint32_t i = 0; i < r->w->nops; i++) {
        struct ks_bench_op *op = &r->w->ops[i];
        for (uint32_t j = 0; j < op->ngroup_sizes; j++) {
            if (!op->group_size_params[j])
                continue;
            int64_t v = param_value(r, op->group_size_params[j]);
            if (v < 1 || v > 100000) {
                fprintf(stderr, "ksched bench: %s:%d: podGroupSizes: $%s must be a size from 1 to 100000\n",
                        r->w->file, op->line, op->group_size_params[j]);
                return -EINVAL;
            }
            op->group_sizes[j] = (uint32_t)v;
        }
    }
    return 0;
}

static int decode_pods(struct bench_run *r)
{
    const struct ks_bench_workload *w = r->w;
    uint64_t total = 0;
    struct ks_error err = {0};
    char name[256];

    if (!(r->op_first = calloc(w->nops, sizeof(*r->op_first))) ||
        !(r->op_count = calloc(w->nops, sizeof(*r->op_count))) ||
        !(r->op_groups = calloc(w->nops, sizeof(*r->op_groups))) ||
        !(r->op_group_ns = calloc(w->nops, sizeof(*r->op_group_ns))) ||
        !(r->op_group_last = calloc(w->nops, sizeof(*r->op_group_last))))
        return -ENOMEM;
    for (uint32_t i = 0; i < w->nops; i++) {
        const struct ks_bench_op *op = &w->ops[i];
        if (op->collect_metrics) {
            r->measured_op = i;
            int64_t n = op_count(r, op);
            r->nmeasured = n > 0 ? (uint32_t)n : 0;
        }
    }
    for (uint32_t i = 0; i < w->nops; i++) {
        const struct ks_bench_op *op = &w->ops[i];
        int64_t n = op->code == KS_BENCH_CREATE_PODS ? op_count(r, op)
                    : op->code == KS_BENCH_CHURN     ? (int64_t)churn_creates(r, op) * op->number
                                                     : 0;
        if (n < 0)
            return undefined_param(r, op,
                                   op->steady_state && op->total_param ? op->total_param : op->count_param);
        if (op->steady_state && op_batch(r, op) < 0)
            return undefined_param(r, op, op->count_param);
        if (op->steady_state && op_batch(r, op) < 1) {
            fprintf(stderr, "ksched bench: %s:%d: a steadyState createPods needs a count of at least 1\n",
                    w->file, op->line);
            return -EINVAL;
        }
        r->op_count[i] = (uint32_t)n;
        total += (uint64_t)n;
    }
    if (total > UINT32_MAX / 4 || !(r->pods = calloc(total ? total : 1, sizeof(*r->pods))))
        return -ENOMEM;
    int64_t t0 = ks__mono_ns();
    struct ks_arena scratch = {0}; /* an owned pod's tree, until it is decoded */
    int rc = 0;
    for (uint32_t i = 0; i < w->nops && rc == 0; i++) {
        const struct ks_bench_op *op = &w->ops[i];
        uint32_t filled = 0; /* pods in the op's current gang */
        r->op_first[i] = r->npods;
        if (op->owner_op >= 0 && r->op_count[i] > r->made[op->owner_op].pods) {
            const struct ks_bench_op *any = &w->ops[op->owner_op];
            rc = ks_error_set(&err, w->file, op->line, "owners",
                              "%u pods, but the %u objects of the createAny op at line %d take %" PRIu64
                              " (their replicas): give it more (%s%s)",
                              r->op_count[i], r->made[op->owner_op].n, any->line, r->made[op->owner_op].pods,
                              any->count_param ? "$" : "count", any->count_param ? any->count_param : "");
            break;
        }
        for (uint32_t k = 0; k < r->op_count[i] && rc == 0; k++) {
            struct bench_pod *bp = &r->pods[r->npods];
            /* createPods with podTemplates: pod k is of template k % n, queued in k's order */
            const struct ks_yaml_node *tmpl = ks_bench_op_pod_template(op, k);
            const char *prefix = ks_bench_template_prefix(tmpl, "pod-");
            if (op->code == KS_BENCH_CHURN)
                snprintf(name, sizeof(name), "%schurn-%u", prefix, k);
            else
                snprintf(name, sizeof(name), "%s%u-%u", prefix, i, k);
            if (op->owner_op >= 0) {
                /* named, labelled and owned as its owner's controller makes it */
                rc = ks_bench_owned_pod(op, w->file, &r->made[op->owner_op], k, &scratch, &bp->pod, &err);
                ks_arena_reset(&scratch);
            } else {
                rc = ks_bench_pod(tmpl, w->file, name, op->namespace, &bp->pod, &err);
            }
            if (rc == 0 && op->ngroup_sizes && bp->pod->scheduling_group)
                rc = join_gang(r, i, bp->pod, &filled);
            if (rc < 0)
                break;
            bp->op = i;
            r->npods++;
            if ((r->npods & 4095) == 0)
                progress(r, "decode", r->npods, total, t0);
        }
    }
    ks_arena_destroy(&scratch);
    progress_done(r);
    if (rc == -EINVAL)
        return fail_input(&err);
    return rc < 0 ? rc : index_build(r);
}

/*
 * Add @n generated (or templated) nodes through the scheduler's node events (the cache
 * takes them, the queue hears Node/Add); each one is also stored in @out when given. Node i
 * is named @prefix<i>, or <the template's generateName><i>.
 */
static int create_nodes(struct bench_run *r, const struct ks_bench_op *op, uint32_t n, const char *prefix,
                        struct ks_node **out)
{
    struct ks_error err = {0};
    char name[128];
    int64_t t0 = ks__mono_ns();
    if (op->node_template)
        prefix = ks_bench_template_prefix(op->node_template, prefix);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = r->next_node++;
        struct ks_node *node = NULL;
        snprintf(name, sizeof(name), "%s%u", prefix, id);
        if (op->node_template) {
            int rc = ks_bench_node_from(op->node_template, r->w->file, name, &node, &err);
            if (rc == -EINVAL)
                return fail_input(&err);
            if (rc < 0)
                return rc;
        } else if (!(node = ks_bench_node(name, id, op))) {
            return -ENOMEM;
        }
        int rc = ks_scheduler_node_event(r->s, NULL, node);
        if (rc < 0) {
            fprintf(stderr, "ksched bench: adding node %s: %s\n", node->meta.name, strerror(-rc));
            ks_node_destroy(node);
            return rc;
        }
        if (out)
            out[i] = node;
        if ((i & 4095) == 4095)
            progress(r, "nodes", i + 1, n, t0);
    }
    progress_done(r);
    r->nodes_total += n;
    return 0;
}

/* Pods @from .. @to of op @op join the queue. */
static int queue_range(struct bench_run *r, uint32_t op, uint32_t from, uint32_t to)
{
    for (uint32_t k = from; k < to; k++) {
        int rc = ks_scheduler_add_pod(r->s, r->pods[r->op_first[op] + k].pod);
        if (rc != 0) {
            fprintf(stderr, "ksched bench: %s\n",
                    rc > 0 ? "no profile serves the pods' schedulerName" : strerror(-rc));
            return rc > 0 ? -EINVAL : rc;
        }
    }
    return 0;
}

static int queue_pods(struct bench_run *r, uint32_t op)
{
    return queue_range(r, op, 0, r->op_count[op]);
}

/* The unmeasured pods of @op, scheduled to completion (skipWaitToCompletion: only queued). */
static int create_pods(struct bench_run *r, uint32_t op)
{
    int rc = queue_pods(r, op);
    if (rc < 0 || r->w->ops[op].skip_wait)
        return rc;
    int64_t t0 = ks__mono_ns();
    uint64_t n = 0;
    while (ks_scheduler_schedule_one(r->s, false)) {
        if ((++n & 1023) == 0)
            progress(r, "init", n, r->op_count[op], t0);
    }
    ks_scheduler_run_until_idle(r->s);
    progress_done(r);
    return 0;
}

/* State of the churn op (mode recreate): its objects exist, or not, and how many steps ran. */
struct churn {
    const struct ks_bench_op *op;
    uint32_t opi;
    uint32_t creates; /* create steps done (pods used: creates * number) */
    bool alive;
    struct ks_node **nodes; /* the op's nodes while alive (the cache owns them) */
};

/*
 * One churn step: create the op's nodes and pods, or delete the ones the previous step
 * created, through the scheduler's events as an informer would deliver them.
 */
static int churn_step(struct bench_run *r, struct churn *c)
{
    const struct ks_bench_op *op = c->op;
    uint32_t base = r->op_first[c->opi] + (c->creates - (c->alive ? 1 : 0)) * op->number;
    int rc;

    if (c->alive) {
        for (uint32_t i = 0; i < op->number; i++) {
            /* a pod in flight or already gone (its node deleted first) needs nothing more */
            ks_scheduler_delete_pod(r->s, r->pods[base + i].pod);
            if ((rc = ks_scheduler_node_event(r->s, c->nodes[i], NULL)) < 0)
                return rc;
        }
        c->alive = false;
    } else {
        if (c->creates >= churn_creates(r, op))
            return 0;
        rc = create_nodes(r, op, op->number, "churn-node-", c->nodes);
        r->nodes_total -= op->number; /* churn nodes are not part of the cluster's size */
        if (rc < 0)
            return rc;
        for (uint32_t i = 0; i < op->number; i++) {
            if ((rc = ks_scheduler_add_pod(r->s, r->pods[base + i].pod)) < 0)
                return rc;
        }
        c->creates++;
        c->alive = true;
    }
    r->churn_steps++;
    return 0;
}

/* The measured pods: queue them all, then time every scheduling cycle until the queue is idle. */
/* The scheduler's signature-index counters. */
struct index_counts {
    uint64_t hosts, unfit, preemptions;
};

static struct index_counts index_counts(const struct ks_scheduler *s)
{
    return (struct index_counts){ks_scheduler_indexed_cycles(s), ks_scheduler_indexed_unfit_cycles(s),
                                 ks_scheduler_indexed_preemptions(s)};
}

/* The measured phase's figures: the counters' growth since @before. */
static void index_counts_since(struct bench_run *r, const struct index_counts *before)
{
    struct index_counts now = index_counts(r->s);
    r->indexed_cycles = now.hosts - before->hosts;
    r->indexed_unfit = now.unfit - before->unfit;
    r->indexed_preempt = now.preemptions - before->preemptions;
}

static int measure(struct bench_run *r, uint32_t op, struct churn *churn)
{
    uint32_t total = r->op_count[op];
    perf_ctl("enable\n");
    struct index_counts index0 = index_counts(r->s);
    int64_t cpu0 = ks_bench_cpu_ns();
    r->t0 = ks__mono_ns();
    atomic_store_explicit(&r->measuring, true, memory_order_relaxed);
    int rc = queue_pods(r, op);
    if (rc < 0)
        return rc;
    int64_t next_report = r->t0;
    for (;;) {
        int64_t a = ks__mono_ns();
        int got = ks_scheduler_schedule_one(r->s, false);
        int64_t b = ks__mono_ns();
        if (!got)
            break;
        ks_hist_record(&r->hist, (uint64_t)(b - a));
        r->cycles++;
        if (churn && r->cycles % churn->op->interval_pods == 0 && (rc = churn_step(r, churn)) < 0)
            return rc;
        if ((r->cycles & 255) == 0 && b >= next_report) {
            progress(r, "measure", atomic_load_explicit(&r->measured_bound, memory_order_relaxed), total,
                     r->t0);
            next_report = b + 50 * 1000 * 1000;
        }
    }
    /* bindings still in flight, and whatever they or events sent back to the queue */
    r->untimed_cycles = ks_scheduler_run_until_idle(r->s);
    int64_t end = ks__mono_ns();
    index_counts_since(r, &index0);
    atomic_store_explicit(&r->measuring, false, memory_order_relaxed);
    r->cpu_ns = ks_bench_cpu_ns() - cpu0;
    int64_t last = atomic_load_explicit(&r->last_bound_ns, memory_order_relaxed);
    r->t_end = atomic_load_explicit(&r->measured_bound, memory_order_relaxed) && last > r->t0 ? last : end;
    r->t_idle = end;
    perf_ctl("disable\n");
    progress_done(r);
    return 0;
}

/* ---- steady state --------------------------------------------------------------------------------- */

/* The steadyState op's claims up to @upto join the set, as the claim informer delivers them. */
static int steady_push(struct bench_run *r, uint32_t upto)
{
    struct steady *st = &r->steady;
    uint32_t from = st->pushed;

    if (upto <= from)
        return 0;
    for (uint32_t i = from; i < upto; i++) {
        if (ks_objects_push(r->objs, KS_KIND_RESOURCE_CLAIM, st->claims[i]) < 0) {
            r->objs->gen[KS_KIND_RESOURCE_CLAIM]++;
            return -ENOMEM;
        }
        st->pushed = i + 1;
    }
    r->objs->gen[KS_KIND_RESOURCE_CLAIM]++; /* the claim tracker takes them in at its next PreFilter */
    for (uint32_t i = from; i < upto; i++)
        ks_scheduler_object_event(r->s, KS_ER_RESOURCE_CLAIM, NULL, st->claims[i]);
    return 0;
}

/* The steadyState op's claims before @upto leave the set (their pods were deleted). */
static void steady_remove(struct bench_run *r, uint32_t upto)
{
    struct steady *st = &r->steady;
    struct ks_objvec *v = &r->objs->of[KS_KIND_RESOURCE_CLAIM];
    uint32_t n = upto - st->removed;

    if (upto <= st->removed)
        return;
    /* the op's claims in the set are one block at the end of the vector, oldest first */
    memmove(&v->items[st->base], &v->items[st->base + n], (v->n - st->base - n) * sizeof(v->items[0]));
    v->n -= n;
    r->objs->gen[KS_KIND_RESOURCE_CLAIM]++;
    for (uint32_t i = st->removed; i < upto; i++) {
        ks_scheduler_object_event(r->s, KS_ER_RESOURCE_CLAIM, st->claims[i], NULL);
        if (r->record)
            ks_bench_dra_record_forget(r->record, st->claims[i]);
    }
    st->removed = upto;
}

/*
 * A steadyState createPods op: batch after batch of st->batch pods queued, scheduled until
 * idle, deleted with their claims. Measured (collectMetrics) as measure() measures: from
 * the first batch queued to the last pod bound, every cycle timed.
 */
static int run_steady(struct bench_run *r, uint32_t opi)
{
    struct steady *st = &r->steady;
    const struct ks_bench_op *op = &r->w->ops[opi];
    uint32_t total = r->op_count[opi], first = r->op_first[opi];
    bool measured = op->collect_metrics, claims = st->first != NULL; /* without DRA ops: pods only */
    struct index_counts index0 = index_counts(r->s);
    int64_t cpu0 = ks_bench_cpu_ns(), start = ks__mono_ns(), next_report = start;
    int rc;

    st->opi = opi;
    st->batch = (uint32_t)op_batch(r, op); /* decode_pods checked it */
    if (measured) {
        perf_ctl("enable\n");
        r->t0 = start;
        atomic_store_explicit(&r->measuring, true, memory_order_relaxed);
    }
    for (uint32_t b0 = 0; b0 < total; b0 += st->batch) {
        uint32_t b1 = b0 + st->batch < total ? b0 + st->batch : total;
        uint32_t b2 = b1 + st->batch < total ? b1 + st->batch : total;
        /* this batch's claims are in the set (and the tracker); the next batch's join it now */
        if ((rc = queue_range(r, opi, b0, b1)) < 0 || (claims && (rc = steady_push(r, st->first[b2])) < 0))
            return rc;
        for (;;) {
            int64_t a = ks__mono_ns();
            int got = ks_scheduler_schedule_one(r->s, false);
            int64_t b = ks__mono_ns();
            if (!got)
                break;
            if (measured) {
                ks_hist_record(&r->hist, (uint64_t)(b - a));
                r->cycles++;
            }
        }
        uint64_t untimed = ks_scheduler_run_until_idle(r->s);
        if (measured)
            r->untimed_cycles += untimed;
        /* all bound (or given up on): the batch goes, then its claims */
        for (uint32_t k = b0; k < b1; k++) {
            ks_scheduler_delete_pod(r->s, r->pods[first + k].pod);
            r->pods[first + k].deleted = true;
        }
        if (claims)
            steady_remove(r, st->first[b1]);
        st->batches++;
        int64_t now = ks__mono_ns();
        if (now >= next_report) {
            progress(r, measured ? "measure" : "steady", b1, total, start);
            next_report = now + 50 * 1000 * 1000;
        }
    }
    if (measured) {
        int64_t end = ks__mono_ns();
        index_counts_since(r, &index0);
        atomic_store_explicit(&r->measuring, false, memory_order_relaxed);
        r->cpu_ns = ks_bench_cpu_ns() - cpu0;
        int64_t last = atomic_load_explicit(&r->last_bound_ns, memory_order_relaxed);
        r->t_end =
            atomic_load_explicit(&r->measured_bound, memory_order_relaxed) && last > r->t0 ? last : end;
        r->t_idle = end;
        perf_ctl("disable\n");
    }
    progress_done(r);
    return 0;
}

/* ---- the object set: createAny's, Dynamic Resource Allocation's, volumes, PodGroups ------------------- */

static bool is_dra_kind(enum ks_kind kind)
{
    return kind == KS_KIND_DEVICE_CLASS || kind == KS_KIND_RESOURCE_SLICE || kind == KS_KIND_RESOURCE_CLAIM ||
           kind == KS_KIND_RESOURCE_CLAIM_TEMPLATE;
}

/* Whether @w has DRA ops: createResourceDriver, allocResourceClaims, a createAny of a DRA kind. */
static bool has_dra_ops(const struct ks_bench_workload *w)
{
    for (uint32_t i = 0; i < w->nops; i++) {
        enum ks_bench_opcode c = w->ops[i].code;
        if (c == KS_BENCH_CREATE_RESOURCE_DRIVER || c == KS_BENCH_ALLOC_RESOURCE_CLAIMS ||
            (c == KS_BENCH_CREATE_ANY && is_dra_kind(w->ops[i].object_kind)))
            return true;
    }
    return false;
}

/* Whether @w has ops that make objects before the pods: createAny and the DRA ones. */
static bool has_object_ops(const struct ks_bench_workload *w)
{
    for (uint32_t i = 0; i < w->nops; i++) {
        if (w->ops[i].code == KS_BENCH_CREATE_ANY)
            return true;
    }
    return has_dra_ops(w);
}

/* The names createNodes' nodes will have (create_nodes() counts with the same r->next_node). */
static int plan_nodes(struct bench_run *r)
{
    char name[128];
    uint32_t id = 0;

    for (uint32_t i = 0; i < r->w->nops; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        if (op->code != KS_BENCH_CREATE_NODES)
            continue;
        int64_t n = op->count_param ? param_value(r, op->count_param) : op->count;
        if (n < 0)
            return undefined_param(r, op, op->count_param);
        const char *prefix =
            op->node_template ? ks_bench_template_prefix(op->node_template, "node-") : "node-";
        char **names = realloc(r->planned, (r->nplanned + (size_t)n + 1) * sizeof(*names));
        uint32_t *ops = names ? realloc(r->planned_op, (r->nplanned + (size_t)n + 1) * sizeof(*ops)) : NULL;
        if (names)
            r->planned = names;
        if (!names || !ops)
            return -ENOMEM;
        r->planned_op = ops;
        for (int64_t k = 0; k < n; k++) {
            snprintf(name, sizeof(name), "%s%u", prefix, id++);
            if (!(r->planned[r->nplanned] = strdup(name)))
                return -ENOMEM;
            r->planned_op[r->nplanned++] = i;
        }
    }
    return 0;
}

/* The planned nodes of createNodes ops before op @opi, built apart from the cluster (allocResourceClaims). */
static int planned_nodes(struct bench_run *r, uint32_t opi, struct ks_node ***out, uint32_t *n)
{
    struct ks_error err = {0};
    struct ks_node **nodes = calloc(r->nplanned ? r->nplanned : 1, sizeof(*nodes));

    *n = 0;
    if (!nodes)
        return -ENOMEM;
    *out = nodes;
    for (uint32_t j = 0; j < r->nplanned && r->planned_op[j] < opi; j++) {
        const struct ks_bench_op *op = &r->w->ops[r->planned_op[j]];
        if (op->node_template) {
            int rc = ks_bench_node_from(op->node_template, r->w->file, r->planned[j], &nodes[j], &err);
            if (rc == -EINVAL)
                return fail_input(&err);
            if (rc < 0)
                return rc;
        } else if (!(nodes[j] = ks_bench_node(r->planned[j], j, op))) {
            return -ENOMEM;
        }
        ++*n;
    }
    return 0;
}

/* createResourceDriver, createAny and allocResourceClaims, in order. */
static int make_objects(struct bench_run *r)
{
    struct ks_error err = {0};
    char msg[640];
    int rc = 0;

    for (uint32_t i = 0; i < r->w->nops && rc >= 0; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        switch (op->code) {
        case KS_BENCH_CREATE_RESOURCE_DRIVER: {
            int64_t per_node = op->max_claims_param ? param_value(r, op->max_claims_param) : op->max_claims;
            uint32_t before = 0;
            if (per_node < 0)
                return undefined_param(r, op, op->max_claims_param);
            while (before < r->nplanned && r->planned_op[before] < i)
                before++;
            rc = ks_bench_driver_slices(op, r->w->file, per_node, (const char *const *)r->planned, before,
                                        r->objs, &err);
            break;
        }
        case KS_BENCH_CREATE_ANY: {
            /* the objects of one template are numbered across its ops */
            int64_t n = op_count(r, op), first = 0;
            if (n < 0)
                return undefined_param(r, op, op->count_param);
            for (uint32_t j = 0; j < i; j++) {
                if (r->w->ops[j].code == KS_BENCH_CREATE_ANY &&
                    r->w->ops[j].object_template == op->object_template)
                    first += op_count(r, &r->w->ops[j]);
            }
            rc = ks_bench_create_any(op, r->w->file, first, n, r->objs, &r->made[i], &err);
            break;
        }
        case KS_BENCH_ALLOC_RESOURCE_CLAIMS: {
            struct ks_node **nodes = NULL;
            uint32_t n = 0;
            if ((rc = planned_nodes(r, i, &nodes, &n)) == 0) {
                rc = ks_bench_alloc_claims(r->objs, op->namespace, nodes, n, r->a.seed, msg, sizeof(msg));
                if (rc == -EINVAL)
                    fprintf(stderr, "ksched bench: %s:%d: %s\n", r->w->file, op->line, msg);
            }
            for (uint32_t j = 0; nodes && j < r->nplanned; j++)
                ks_node_destroy(nodes[j]);
            free(nodes);
            break;
        }
        default:
            break;
        }
    }
    if (rc == -EINVAL && err.set)
        return fail_input(&err);
    return rc < 0 ? rc : 0;
}

/* The claims of every pod that names a ResourceClaimTemplate, made as the resourceclaim controller does. */
static int make_pod_claims(struct bench_run *r)
{
    struct ks_dra_claim_maker *m = NULL;
    struct steady *st = &r->steady;
    int rc = ks_dra_claim_maker_create(r->objs, r->a.seed, &m);

    for (uint32_t i = 0; rc == 0 && i < r->w->nops; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        if (op->code != KS_BENCH_CREATE_PODS && op->code != KS_BENCH_CHURN)
            continue;
        if (op->steady_state) {
            /* made now, joined to the set batch by batch (run_steady) */
            uint32_t n = r->op_count[i], cap = 0;
            st->opi = i;
            st->batch = (uint32_t)op_batch(r, op);
            if (!(st->first = calloc((size_t)n + 1, sizeof(*st->first))))
                rc = -ENOMEM;
            for (uint32_t k = 0; rc == 0 && k < n; k++) {
                struct ks_pod *pod = r->pods[r->op_first[i] + k].pod;
                st->first[k] = st->nclaims;
                if (st->nclaims + pod->nclaims > cap) {
                    cap = cap * 2 + pod->nclaims + 64;
                    struct ks_resource_claim **c = realloc(st->claims, cap * sizeof(*c));
                    if (!c) {
                        rc = -ENOMEM;
                        break;
                    }
                    st->claims = c;
                }
                int made = ks_dra_make_pod_claims(m, r->objs, pod, &st->claims[st->nclaims]);
                if (made < 0)
                    rc = made;
                else
                    st->nclaims += (uint32_t)made;
            }
            if (st->first)
                st->first[n] = st->nclaims;
            continue;
        }
        struct ks_resource_claim *made[64];
        for (uint32_t k = 0; rc == 0 && k < r->op_count[i]; k++) {
            struct ks_pod *pod = r->pods[r->op_first[i] + k].pod;
            if (pod->nclaims > sizeof(made) / sizeof(made[0])) {
                fprintf(stderr, "ksched bench: %s:%d: a pod with more than %zu claims\n", r->w->file,
                        op->line, sizeof(made) / sizeof(made[0]));
                rc = -EINVAL;
                break;
            }
            int n = ks_dra_make_pod_claims(m, r->objs, pod, made);
            for (int c = 0; c < n; c++) {
                if (rc == 0 && ks_objects_push(r->objs, KS_KIND_RESOURCE_CLAIM, made[c]) < 0)
                    rc = -ENOMEM;
                if (rc < 0)
                    ks_resource_claim_destroy(made[c]);
            }
            if (n < 0)
                rc = n;
        }
    }
    ks_dra_claim_maker_destroy(m);
    if (rc == 0 && st->first) {
        /* the first batch's claims are in the set before the scheduler starts */
        st->base = r->objs->of[KS_KIND_RESOURCE_CLAIM].n;
        uint32_t b = st->batch < r->op_count[st->opi] ? st->batch : r->op_count[st->opi];
        for (uint32_t i = 0; rc == 0 && i < st->first[b]; i++) {
            if ((rc = ks_objects_push(r->objs, KS_KIND_RESOURCE_CLAIM, st->claims[i])) == 0)
                st->pushed = i + 1;
        }
    }
    return rc;
}

/* The claims and volumes of the pods of createPods ops with volume templates. */
static int make_pod_volumes(struct bench_run *r)
{
    struct ks_error err = {0};
    for (uint32_t i = 0; i < r->w->nops; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        for (uint32_t k = 0; op->pv_template && k < r->op_count[i]; k++) {
            int rc =
                ks_bench_pod_volume(op, r->w->file, i, k, r->pods[r->op_first[i] + k].pod, r->objs, &err);
            if (rc == -EINVAL)
                return fail_input(&err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/*
 * The objects of createResourceDriver, createAny and allocResourceClaims, made before the
 * pods are decoded (createPods' owners name createAny's objects).
 */
static int prepare_op_objects(struct bench_run *r)
{
    int rc;

    if (!has_object_ops(r->w))
        return 0;
    if (!(r->objs = calloc(1, sizeof(*r->objs))) || !(r->made = calloc(r->w->nops, sizeof(*r->made))))
        return -ENOMEM;
    if ((rc = plan_nodes(r)) < 0 || (rc = make_objects(r)) < 0)
        return rc;
    return 0;
}

/* The rest of the object set (gangs' PodGroups, volumes, pods' claims), complete before the scheduler starts.
 */
static int prepare_objects(struct bench_run *r)
{
    bool groups = false, volumes = false;
    int rc;

    for (uint32_t i = 0; i < r->w->nops; i++) {
        groups |= r->op_groups[i] > 0;
        volumes |= r->w->ops[i].pv_template != NULL;
    }
    if (!r->objs && !groups && !volumes)
        return 0;
    if (!r->objs && !(r->objs = calloc(1, sizeof(*r->objs))))
        return -ENOMEM;
    if (volumes && (rc = make_pod_volumes(r)) < 0)
        return rc;
    for (uint32_t i = 0; i < r->w->nops; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        if (r->op_groups[i] && (rc = ks_bench_pod_groups(r->objs, i, r->op_group_ns[i], r->op_groups[i], op,
                                                         r->op_group_last[i])) < 0)
            return rc;
    }
    if (!has_dra_ops(r->w))
        return 0;
    if ((rc = make_pod_claims(r)) < 0)
        return rc;
    if (r->a.check && (rc = ks_bench_dra_record_create(r->objs, &r->record)) < 0)
        return rc;
    return 0;
}

static void destroy_objects(struct bench_run *r)
{
    struct steady *st = &r->steady;

    ks_objects_destroy(r->objs);
    for (uint32_t i = 0; i < st->nclaims; i++) {
        if (i < st->removed || i >= st->pushed)
            ks_resource_claim_destroy(st->claims[i]);
    }
    free(st->claims);
    free(st->first);
    ks_bench_dra_record_destroy(r->record);
    for (uint32_t i = 0; r->made && i < r->w->nops; i++)
        ks_bench_owners_release(&r->made[i]);
    free(r->made);
    for (uint32_t i = 0; i < r->nplanned; i++)
        free(r->planned[i]);
    free(r->planned);
    free(r->planned_op);
}

/* ---- the run ----------------------------------------------------------------------------------------- */

/* The size run without --nodes or --size: the first labelled "performance", else the first. */
static const struct ks_bench_size *default_size(const struct ks_bench_workload *w)
{
    for (uint32_t i = 0; i < w->nsizes; i++) {
        for (uint32_t l = 0; l < w->sizes[i].nlabels; l++) {
            if (strcmp(w->sizes[i].labels[l], "performance") == 0)
                return &w->sizes[i];
        }
    }
    return &w->sizes[0];
}

/* Run every op of the workload in order. */
static int run_ops(struct bench_run *r)
{
    struct churn churn = {0};
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < r->w->nops; i++) {
        const struct ks_bench_op *op = &r->w->ops[i];
        switch (op->code) {
        case KS_BENCH_CREATE_NODES: {
            int64_t n = op_count(r, op);
            if (n < 0) {
                fprintf(stderr, "ksched bench: %s:%d: size %s does not define $%s\n", r->w->file, op->line,
                        r->size->name, op->count_param);
                rc = -EINVAL;
                break;
            }
            uint64_t before = ks_bench_rss();
            if ((rc = create_nodes(r, op, (uint32_t)n, "node-", NULL)) < 0 ||
                (rc = ks_cache_refresh(r->cache)) < 0)
                break;
            rc = 0;
            uint64_t after = ks_bench_rss();
            r->cluster_bytes += after > before ? after - before : 0;
            break;
        }
        case KS_BENCH_CREATE_PODS:
            if (op->steady_state)
                rc = run_steady(r, i);
            else
                rc = op->collect_metrics ? measure(r, i, churn.op ? &churn : NULL) : create_pods(r, i);
            break;
        case KS_BENCH_CREATE_RESOURCE_DRIVER:
        case KS_BENCH_CREATE_ANY:
        case KS_BENCH_ALLOC_RESOURCE_CLAIMS:
            break; /* made before the pods were decoded (prepare_op_objects) */
        case KS_BENCH_CHURN:
            free(churn.nodes);
            churn = (struct churn){.op = op, .opi = i};
            if (!(churn.nodes = calloc(op->number, sizeof(*churn.nodes))))
                rc = -ENOMEM;
            break;
        }
    }
    free(churn.nodes);
    return rc;
}

/* `--list` with a workload: its sizes, one per line: name, initNodes, labels. */
static void print_sizes(const struct ks_bench_workload *w)
{
    for (uint32_t i = 0; i < w->nsizes; i++) {
        printf("%s %" PRId64, w->sizes[i].name, ks_bench_param(&w->sizes[i], "initNodes", 0));
        for (uint32_t l = 0; l < w->sizes[i].nlabels; l++)
            printf("%c%s", l ? ',' : ' ', w->sizes[i].labels[l]);
        printf("\n");
    }
}

/* The size to run: --size's, or the one --nodes (else the default size's node count) falls in. -1 if none. */
static int pick_size(struct bench_run *r)
{
    const struct ks_bench_workload *w = r->w;
    if (!r->a.size) {
        if (!r->a.have_nodes)
            r->a.nodes = (uint32_t)ks_bench_param(default_size(w), "initNodes", 0);
        r->size = ks_bench_size_for(w, r->a.nodes);
        return 0;
    }
    for (uint32_t i = 0; i < w->nsizes && !r->size; i++)
        r->size = strcmp(w->sizes[i].name, r->a.size) == 0 ? &w->sizes[i] : NULL;
    if (!r->size) {
        fprintf(stderr, "ksched bench: workload %s has no size \"%s\" (--list shows them)\n", w->name,
                r->a.size);
        return -1;
    }
    if (!r->a.have_nodes)
        r->a.nodes = (uint32_t)ks_bench_param(r->size, "initNodes", 0);
    return 0;
}

/* Everything @r owns: the scheduler, its metrics, the cache, the objects and pods, the op tables. */
static void run_release(struct bench_run *r)
{
    ks_scheduler_destroy(r->s);
    ks_sched_metrics_destroy(r->metrics);
    ks_metrics_destroy(r->reg);
    ks_cache_destroy(r->cache);
    destroy_objects(r);
    for (uint32_t i = 0; i < r->npods; i++)
        ks_pod_put(r->pods[i].pod);
    free(r->pods);
    free(r->index);
    free(r->op_first);
    free(r->op_count);
    free(r->op_groups);
    free(r->op_group_ns);
    free(r->op_group_last);
}

int ks_bench_run(const struct ks_bench_args *a, const char *argv0)
{
    struct bench_run r = {.a = *a, .measured_op = UINT32_MAX};
    struct ks_error err = {0};
    struct ks_bench_workload *w = NULL;
    struct ks_config *cfg = NULL;
    char *path = NULL;
    int status = 1, rc;

    if (r.a.list && !r.a.workload) {
        ks_bench_workload_list(stdout, argv0);
        return 0;
    }
    if (!(path = ks_bench_workload_find(r.a.workload, argv0)))
        goto out;
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "ksched bench: no workload \"%s\" (%s); `ksched bench --list` shows them\n",
                r.a.workload, path);
        status = 2;
        goto out;
    }
    rc = ks_bench_workload_load(path, &w, &err);
    if (rc == 0 && w->feature_gates)
        rc = ks_features_set(w->feature_gates, &err); /* the workload's, over --feature-gates */
    if (rc == 0)
        rc = r.a.config ? ks_config_load_file(r.a.config, &cfg, &err) : ks_config_load_default(&cfg);
    if (rc < 0) {
        if (err.set)
            fail_input(&err);
        else
            fprintf(stderr, "ksched bench: %s\n", strerror(-rc));
        status = rc == -ENOMEM ? 1 : 2;
        goto out;
    }
    r.w = w;
    r.dra = has_dra_ops(w);
    if (r.a.list) {
        print_sizes(w);
        status = 0;
        goto out;
    }
    if (pick_size(&r) < 0) {
        status = 2;
        goto out;
    }
    r.tty = isatty(STDERR_FILENO);

    struct ks_scheduler_opts opts = {
        .config = cfg,
        .parallelism = r.a.parallelism,
        .binders = r.a.binders,
        .seed = r.a.seed,
        .seeded = r.a.seeded,
        .no_index = r.a.no_index,
        .on_event = on_event,
        .ctx = &r,
    };
    if ((rc = ks_metrics_create(&r.reg)) < 0 || (rc = ks_sched_metrics_create(r.reg, &r.metrics)) < 0)
        rc = -ENOMEM;
    opts.metrics = r.metrics;
    if (rc == 0 && (rc = resolve_group_sizes(&r)) == 0 && (rc = prepare_op_objects(&r)) == 0 &&
        (rc = decode_pods(&r)) == 0 && (rc = prepare_objects(&r)) == 0) {
        opts.objects = r.objs;
        opts.dra_api = r.record ? ks_bench_dra_record_api(r.record) : NULL;
    }
    if (rc < 0 || (rc = ks_cache_create(&r.cache)) < 0 ||
        (rc = ks_scheduler_create(&opts, r.cache, &r.s, &err)) < 0) {
        if (err.set)
            fail_input(&err);
        else if (rc != -EINVAL)
            fprintf(stderr, "ksched bench: %s\n", strerror(-rc));
        status = rc == -EINVAL ? 2 : 1;
        goto out;
    }
    if ((rc = run_ops(&r)) < 0) {
        if (rc != -EINVAL)
            fprintf(stderr, "ksched bench: %s\n", strerror(-rc));
        status = rc == -EINVAL ? 2 : 1;
        goto out;
    }
    struct bench_result res;
    ks__bench_summarise(&r, &res);
    ks__bench_print_human(&r, &res);
    if (r.a.json)
        ks__bench_print_json(&r, &res);
    fflush(stdout);
    status = 0;
    if (r.a.check && ks__bench_check(&r) > 0)
        status = 1;
out:
    run_release(&r);
    ks_config_destroy(cfg);
    ks_bench_workload_destroy(w);
    free(path);
    return status;
}
