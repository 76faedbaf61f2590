/*
 * test_index_identity.c - the signature index (index/) changes no decision.
 *
 * Each test generates a seeded workload (index_workload.h: a few hundred nodes, a few
 * thousand pods in shared templates and one-offs, cluster changes between batches) and
 * runs the same operation stream twice over a fresh cache and scheduler, seeded alike,
 * at parallelism 2: once with opts.no_index (every cycle filters and scores node by node)
 * and once with the index. Each run writes its outcome stream as text: a line per
 * operation with what it returned, each cycle's pod and attempt, every event of on_event
 * in order (kind, pod, node, message, preemptor), then each pod's node in the cache and
 * where it waits in the queue.
 * The two streams must be byte-identical; on a mismatch the first differing line is
 * printed with the seed and the operation it followed. The workloads hold spread-scored
 * classes (default spreading through several workloads and a Service, ScheduleAnyway
 * constraints of their own) over nodes with, without and with an empty zone label, so the
 * spread score the index adds per cycle is compared too.
 *
 * Determinism: decisions are serial, but bindings complete on binder threads, whose
 * Scheduled events and AssignedPod/Add cluster events (which record move requests and
 * move waiting pods) would otherwise interleave with the next cycles as the threads
 * happen to run. So every cycle is followed by ks__wait_bindings(): the run is then a
 * function of the stream and the seed, and the comparison can be of the whole event
 * order - a different host, tie-break, FitError message, retry or preemption shows as
 * a differing line. The queue's clock is the test's own: it moves 1 ms per cycle and by
 * the stream's ticks, and backoffQ is flushed only at ticks and in the final drain.
 */
#include <criterion/criterion.h>

#include "../../engine/scheduler_internal.h"
#include "index_workload.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS INT64_C(1000000)

/* One run of a workload: the scheduler, its cache, the objects it was given, and what it did. */
struct run {
    const struct iw_workload *w;
    struct ks_scheduler *s;
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_objects *base;
    struct ks_objects **sets; /* the pod batches: their pods stay valid to the end */
    uint32_t nsets;
    struct ks_node **node;     /* per node id: the object the cache holds, NULL when absent */
    const struct ks_pod **pod; /* per pod id, NULL until added */
    _Atomic int64_t now_ns;    /* the queue's clock */
    uint64_t cycles, indexed;  /* cycles run, and those whose host the index chose */
    uint64_t indexed_unfit;    /* cycles the index found no node fits */
    uint64_t indexed_preempt;  /* preemptions the index's candidate trees answered */
    uint32_t scheduled, unschedulable, preempted;
    struct iw_buf out; /* the outcome stream */
    /* with KS_INDEX_IDENTITY_DUMP: cycles and indexed cycles per pod name prefix (t0, solo, ...) */
    bool diag;
    const struct ks_pod *popped;
    uint32_t nclasses;
    struct {
        char name[16];
        uint32_t cycles, indexed;
    } classes[32];
};

static int64_t clock_now(void *ctx)
{
    struct run *r = ctx;
    return atomic_load_explicit(&r->now_ns, memory_order_relaxed);
}

static void advance(struct run *r, int64_t ns)
{
    atomic_fetch_add_explicit(&r->now_ns, ns, memory_order_relaxed);
}

static const char *pod_key(const struct ks_pod *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", ks_intern_str(p->meta.namespace_id), p->meta.name);
    return buf;
}

/* on_event: under the scheduler's event lock; the test waits for the binders before reading. */
static void record(void *ctx, const struct ks_sched_event *ev)
{
    struct run *r = ctx;
    char key[96], by[96];
    iw_printf(&r->out, "  %s %s", ks_sched_event_name(ev->kind), pod_key(ev->pod, key, sizeof(key)));
    switch (ev->kind) {
    case KS_SCHED_SCHEDULED:
        r->scheduled++;
        iw_printf(&r->out, " on %s\n", ks_intern_str(ev->node));
        break;
    case KS_SCHED_NOMINATED:
        iw_printf(&r->out, " to %s\n", ks_intern_str(ev->node));
        break;
    case KS_SCHED_PREEMPTED:
        r->preempted++;
        iw_printf(&r->out, " from %s by %s\n", ks_intern_str(ev->node), pod_key(ev->by, by, sizeof(by)));
        break;
    case KS_SCHED_UNSCHEDULABLE:
    case KS_SCHED_ERROR:
        r->unschedulable += ev->kind == KS_SCHED_UNSCHEDULABLE;
        iw_printf(&r->out, ": %s\n", ev->message ? ev->message : "(no message)");
        break;
    }
}

static struct ks_objects *load(const char *what, const char *yaml)
{
    struct ks_objects *o = NULL;
    struct ks_error err = {0};
    int rc = ks_objects_load_buffer(what, yaml, strlen(yaml), &o, &err);
    cr_assert_eq(rc, 0, "loading %s: %s", what, err.msg);
    return o;
}

/* The nodes of @yaml, which the caller takes over. */
static uint32_t load_nodes(const char *yaml, struct ks_node ***out)
{
    struct ks_objects *o = load("nodes", yaml);
    uint32_t n = ks_objects_count(o, NODE);
    struct ks_node **v = malloc((n ? n : 1) * sizeof(*v));
    cr_assert_not_null(v);
    memcpy(v, ks_objects_nodes(o), n * sizeof(*v));
    o->of[KS_KIND_NODE].n = 0; /* handed over */
    ks_objects_destroy(o);
    *out = v;
    return n;
}

/* on_cycle: the pod a cycle is about to schedule, and its attempt. */
static void note_cycle(void *ctx, const struct ks_queued_pod *qp)
{
    struct run *r = ctx;
    char key[96];
    r->popped = qp->pod;
    iw_printf(&r->out, "  pop %s #%u\n", pod_key(qp->pod, key, sizeof(key)), qp->attempts);
}

/* Count a cycle of r->popped, indexed or not, under its name's prefix. */
static void count_class(struct run *r, bool indexed)
{
    char name[16];
    snprintf(name, sizeof(name), "%s", r->popped->meta.name);
    char *dash = strrchr(name, '-');
    if (dash)
        *dash = 0;
    uint32_t i = 0;
    while (i < r->nclasses && strcmp(r->classes[i].name, name) != 0)
        i++;
    if (i == r->nclasses) {
        if (r->nclasses == 32)
            return;
        snprintf(r->classes[r->nclasses++].name, sizeof(r->classes[i].name), "%s", name);
    }
    r->classes[i].cycles++;
    r->classes[i].indexed += indexed;
}

/* One scheduling cycle and its binding; false when the active queue was empty. */
static bool cycle(struct run *r)
{
    uint64_t before = r->diag ? ks_scheduler_indexed_cycles(r->s) : 0;
    if (!ks_scheduler_schedule_one(r->s, false))
        return false;
    if (r->diag)
        count_class(r, ks_scheduler_indexed_cycles(r->s) > before);
    ks__wait_bindings(r->s);
    r->cycles++;
    advance(r, MS);
    return true;
}

static uint32_t cycles(struct run *r, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && cycle(r))
        n++;
    return n;
}

/* The end of the stream: retry what backoff holds until nothing moves, then what waits. */
static void drain(struct run *r)
{
    struct ks_queue *q = ks_scheduler_queue(r->s);
    for (int round = 0; round < 8; round++) {
        uint32_t n = cycles(r, UINT32_MAX);
        iw_printf(&r->out, "drain %d: %u cycles\n", round, n);
        advance(r, 11000 * MS); /* past podMaxBackoffSeconds */
        ks_queue_flush_backoff(q);
        if (!ks_queue_active(q))
            break;
    }
    advance(r, 6 * 60000 * MS); /* past podMaxInUnschedulablePodsDuration */
    ks_queue_flush_unschedulable(q);
    ks_queue_flush_backoff(q);
    iw_printf(&r->out, "retry the unschedulable: %u cycles\n", cycles(r, UINT32_MAX));
}

static void apply(struct run *r, uint32_t i, const struct iw_op *op)
{
    char key[96];
    int rc;
    iw_printf(&r->out, "op %u ", i);
    switch (op->kind) {
    case IW_ADD_PODS: {
        struct ks_objects *o = load("pods", op->yaml);
        cr_assert_eq(ks_objects_count(o, POD), op->count);
        r->sets[r->nsets++] = o;
        iw_printf(&r->out, "add pods %u..%u\n", op->first, op->first + op->count - 1);
        for (uint32_t k = 0; k < op->count; k++) {
            const struct ks_pod *pod = ks_objects_pods(o)[k];
            r->pod[op->first + k] = pod;
            advance(r, 1000); /* distinct queue timestamps */
            if ((rc = ks_scheduler_add_pod(r->s, pod)) != 0)
                iw_printf(&r->out, "  add %s: %d\n", pod_key(pod, key, sizeof(key)), rc);
        }
        break;
    }
    case IW_SCHEDULE:
        iw_printf(&r->out, "schedule %u\n", op->count);
        iw_printf(&r->out, "  ran %u cycles\n", cycles(r, op->count));
        break;
    case IW_NODE_ADD:
    case IW_NODE_UPDATE: {
        struct ks_node **v;
        cr_assert_eq(load_nodes(op->yaml, &v), 1);
        struct ks_node *old = op->kind == IW_NODE_ADD ? NULL : r->node[op->node];
        cr_assert(op->kind == IW_NODE_ADD || old, "op %u: node-%u is not there", i, op->node);
        rc = ks_scheduler_node_event(r->s, old, v[0]);
        iw_printf(&r->out, "%s node-%u%s%s: %d\n", old ? "update" : "add", op->node, old ? " " : "",
                  old ? op->what : "", rc);
        cr_assert_eq(rc, 0, "op %u: node event: %d", i, rc);
        r->node[op->node] = v[0];
        free(v);
        break;
    }
    case IW_NODE_DELETE:
        cr_assert_not_null(r->node[op->node], "op %u: node-%u is not there", i, op->node);
        rc = ks_scheduler_node_event(r->s, r->node[op->node], NULL);
        iw_printf(&r->out, "delete node-%u: %d\n", op->node, rc);
        cr_assert_eq(rc, 0);
        r->node[op->node] = NULL;
        break;
    case IW_POD_DELETE:
        cr_assert_not_null(r->pod[op->pod]);
        rc = ks_scheduler_delete_pod(r->s, r->pod[op->pod]);
        iw_printf(&r->out, "delete pod %s: %d\n", pod_key(r->pod[op->pod], key, sizeof(key)), rc);
        break;
    case IW_TICK:
        advance(r, op->count * MS);
        ks_queue_flush_backoff(ks_scheduler_queue(r->s));
        iw_printf(&r->out, "tick %u ms\n", op->count);
        break;
    case IW_DRAIN:
        iw_printf(&r->out, "drain\n");
        drain(r);
        break;
    }
}

/* Each pod's node (or none), and where a pending pod waits. */
static void final_state(struct run *r)
{
    static const char *const where[] = {"gone", "active", "backoff", "unschedulable", "in flight"};
    char key[96];
    iw_printf(&r->out, "final\n");
    for (uint32_t i = 0; i < r->w->npods; i++) {
        const struct ks_pod *pod = r->pod[i];
        uint32_t node = ks_cache_pod_node(r->cache, pod);
        struct ks_queue_pod_info info;
        bool queued = ks_queue_pod_info(ks_scheduler_queue(r->s), pod, &info);
        iw_printf(&r->out, "  %s %s %s\n", pod_key(pod, key, sizeof(key)),
                  node == KS_ID_NONE ? "-" : ks_intern_str(node), queued ? where[info.where] : "-");
    }
    char msg[256];
    cr_assert_geq(ks_cache_refresh(r->cache), 0);
    uint32_t bad = ks_cache_check(r->cache, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg));
    cr_expect_eq(bad, 0, "seed %llu: cache invariant: %s", (unsigned long long)r->w->seed, msg);
}

/* Run @w once; the caller frees r->out.p. */
static void run_workload(const struct iw_workload *w, bool no_index, struct run *r)
{
    struct ks_error err = {0};
    *r = (struct run){.w = w, .diag = getenv("KS_INDEX_IDENTITY_DUMP") != NULL};
    atomic_init(&r->now_ns, 1000 * MS);
    r->base = load("base", w->base_yaml);
    r->sets = calloc(w->nops, sizeof(*r->sets));
    r->node = calloc(w->nnode_ids, sizeof(*r->node));
    r->pod = calloc(w->npods, sizeof(*r->pod));
    cr_assert(r->sets && r->node && r->pod);
    cr_assert_eq(ks_config_load_default(&r->cfg), 0);
    cr_assert_eq(ks_cache_create(&r->cache), 0);
    struct ks_scheduler_opts opts = {
        .config = r->cfg,
        .objects = r->base,
        .parallelism = 2,
        .seeded = true,
        .seed = w->seed,
        .no_index = no_index,
        .on_event = record,
        .on_cycle = note_cycle,
        .ctx = r,
        .clock = {.now = clock_now, .ctx = r},
    };
    cr_assert_eq(ks_scheduler_create(&opts, r->cache, &r->s, &err), 0, "%s", err.msg);

    struct ks_node **v;
    uint32_t n = load_nodes(w->nodes_yaml, &v);
    cr_assert_eq(n, w->nnodes);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(ks_scheduler_node_event(r->s, NULL, v[i]), 0);
        r->node[i] = v[i];
    }
    free(v);
    for (uint32_t i = 0; i < w->nops; i++)
        apply(r, i, &w->ops[i]);
    final_state(r);
    r->indexed = ks_scheduler_indexed_cycles(r->s);
    r->indexed_unfit = ks_scheduler_indexed_unfit_cycles(r->s);
    r->indexed_preempt = ks_scheduler_indexed_preemptions(r->s);

    ks_scheduler_destroy(r->s);
    ks_cache_destroy(r->cache);
    for (uint32_t i = 0; i < r->nsets; i++)
        ks_objects_destroy(r->sets[i]);
    ks_objects_destroy(r->base);
    ks_config_destroy(r->cfg);
    free(r->sets);
    free(r->node);
    free(r->pod);
}

/* The line of @text at @p, without its newline, for printing. */
static int line_len(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? (int)(e - p) : (int)strlen(p);
}

/* Fail with the first line where @a (without the index) and @b (with it) differ. */
static void expect_identical(uint64_t seed, const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return;
    uint32_t line = 1;
    const char *la = a, *lb = b, *op = NULL;
    while (*la && *lb) {
        int n = line_len(la);
        if (n != line_len(lb) || memcmp(la, lb, (size_t)n) != 0)
            break;
        if (strncmp(la, "op ", 3) == 0)
            op = la;
        la += n + (la[n] == '\n');
        lb += n + (lb[n] == '\n');
        line++;
    }
    cr_assert_fail("seed %llu: the outcome streams differ at line %u (after \"%.*s\")\n"
                   "  without the index: %.*s\n  with the index:    %.*s",
                   (unsigned long long)seed, line, op ? line_len(op) : 0, op ? op : "", line_len(la), la,
                   line_len(lb), lb);
}

/* With KS_INDEX_IDENTITY_DUMP=DIR, both streams go to DIR/seed-N-{no-index,index}.txt (for diffing). */
static void dump(uint64_t seed, const char *which, const char *text)
{
    const char *dir = getenv("KS_INDEX_IDENTITY_DUMP");
    if (!dir)
        return;
    char path[512];
    snprintf(path, sizeof(path), "%s/seed-%llu-%s.txt", dir, (unsigned long long)seed, which);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void check_seed(const struct iw_params *p)
{
    struct iw_workload w;
    struct run off, on;
    uint64_t seed = p->seed;

    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    iw_generate(p, &w);
    run_workload(&w, true, &off);
    run_workload(&w, false, &on);
    dump(seed, "no-index", off.out.p);
    dump(seed, "index", on.out.p);
    if (getenv("KS_INDEX_IDENTITY_DUMP"))
        fprintf(stderr,
                "seed %llu: %llu cycles, %llu indexed, %llu indexed unfit, %llu indexed preemptions; %u "
                "scheduled, %u unschedulable, %u preempted\n",
                (unsigned long long)seed, (unsigned long long)on.cycles, (unsigned long long)on.indexed,
                (unsigned long long)on.indexed_unfit, (unsigned long long)on.indexed_preempt, on.scheduled,
                on.unschedulable, on.preempted);
    for (uint32_t i = 0; i < on.nclasses && on.diag; i++)
        fprintf(stderr, "  %-8s %5u cycles %5u indexed\n", on.classes[i].name, on.classes[i].cycles,
                on.classes[i].indexed);

    /* the workload does what it is for: most pods bound, some unschedulable, some preempted */
    cr_expect_gt(off.scheduled, p->pods / 2, "seed %llu: %u scheduled", (unsigned long long)seed,
                 off.scheduled);
    cr_expect_gt(off.unschedulable, 0, "seed %llu: no FitError in the stream", (unsigned long long)seed);
    cr_expect_gt(off.preempted, 0, "seed %llu: no preemption in the stream", (unsigned long long)seed);
    expect_identical(seed, off.out.p, on.out.p);
    /* no_index means no cycle from the index; with it, a good share (the template pods') are its */
    cr_expect_eq(off.indexed + off.indexed_unfit + off.indexed_preempt, 0,
                 "seed %llu: %llu cycles indexed with no_index", (unsigned long long)seed,
                 (unsigned long long)(off.indexed + off.indexed_unfit + off.indexed_preempt));
    /* FitErrors (and the preemptions after them) come from the index's statuses too */
    cr_expect_gt(on.indexed_unfit, 0, "seed %llu: the index answered no cycle without a feasible node",
                 (unsigned long long)seed);
    /* and the preemptions after them from its candidate trees */
    cr_expect_gt(on.indexed_preempt, 0, "seed %llu: the candidate trees answered no preemption",
                 (unsigned long long)seed);
    cr_expect(on.indexed > 0 && on.indexed * 4 >= on.cycles,
              "seed %llu: the index answered %llu of %llu cycles", (unsigned long long)seed,
              (unsigned long long)on.indexed, (unsigned long long)on.cycles);
    free(off.out.p);
    free(on.out.p);
    iw_free(&w);
}

/*
 * The workloads: numFeasibleNodesToFind is 144 of 300 nodes (the window is part of the
 * cluster), 100 of 150 (the minimum window), and under 100 nodes every node is evaluated.
 */
static const struct iw_params cases[] = {
    {.seed = 1, .nodes = 300, .pods = 3000},
    {.seed = 2, .nodes = 300, .pods = 3000},
    {.seed = 3, .nodes = 150, .pods = 1500},
    {.seed = 4, .nodes = 60, .pods = 600},
};

Test(index_identity, seed_1_300_nodes)
{
    check_seed(&cases[0]);
}

Test(index_identity, seed_2_300_nodes)
{
    check_seed(&cases[1]);
}

Test(index_identity, seed_3_150_nodes)
{
    check_seed(&cases[2]);
}

Test(index_identity, seed_4_60_nodes)
{
    check_seed(&cases[3]);
}

static bool any_yaml_has(const struct iw_workload *w, const char *needle)
{
    if (strstr(w->base_yaml, needle) || strstr(w->nodes_yaml, needle))
        return true;
    for (uint32_t i = 0; i < w->nops; i++) {
        if (w->ops[i].yaml && strstr(w->ops[i].yaml, needle))
            return true;
    }
    return false;
}

/* Every workload above holds what the identity tests are for (the generator's tuning cannot drop it). */
Test(index_identity, workloads_cover_the_feature_list)
{
    static const char *const needles[] = {
        "effect: NoSchedule",
        "effect: PreferNoSchedule",
        "effect: NoExecute",
        "unschedulable: true",
        "images:",
        "tolerations:",
        "operator: Exists}",
        "nodeSelector:",
        "requiredDuringScheduling",
        "preferredDuringScheduling",
        "operator: Gt",
        "operator: Lt",
        "operator: NotIn",
        "podAntiAffinity:",
        "podAffinity:",
        "topologySpreadConstraints:",
        "hostPort:",
        "ephemeral-storage:",
        "example.com/gpu",
        "image: ",
        "ownerReferences:",
        "priority: ",
        /* spread-scored pods: default spreading through several workloads and a Service */
        "kind: ReplicaSet, name: web,",
        "kind: ReplicaSet, name: shop,",
        "kind: ReplicaSet, name: api,",
        "kind: StatefulSet, name: db,",
        "kind: ReplicationController, name: legacy,",
        "kind: Service",
        "labels: {app: t6, tier: front}",
        "labels: {app: shop, tier: front}",
        /* and constraints of their own */
        "topologyKey: kubernetes.io/hostname\n    whenUnsatisfiable: ScheduleAnyway",
        "topologyKey: topology.kubernetes.io/zone\n    whenUnsatisfiable: ScheduleAnyway",
        "whenUnsatisfiable: DoNotSchedule",
        "zone: zone-3",
        "topology.kubernetes.io/zone: \"\"",
    };
    static const char *const updates[] = {"labels", "taints",      "cordon",       "uncordon",
                                          "images", "allocatable", "labels -zone", "labels +zone"};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct iw_workload w;
        iw_generate(&cases[c], &w);
        uint64_t seed = w.seed;
        for (size_t i = 0; i < sizeof(needles) / sizeof(needles[0]); i++)
            cr_expect(any_yaml_has(&w, needles[i]), "seed %llu: no \"%s\" in the workload",
                      (unsigned long long)seed, needles[i]);
        uint32_t kinds[IW_DRAIN + 1] = {0}, what[sizeof(updates) / sizeof(updates[0])] = {0};
        for (uint32_t i = 0; i < w.nops; i++) {
            kinds[w.ops[i].kind]++;
            for (size_t k = 0; w.ops[i].kind == IW_NODE_UPDATE && k < sizeof(updates) / sizeof(updates[0]);
                 k++)
                what[k] += strcmp(w.ops[i].what, updates[k]) == 0;
        }
        for (int k = IW_ADD_PODS; k <= IW_DRAIN; k++)
            cr_expect_gt(kinds[k], 0, "seed %llu: no operation of kind %d", (unsigned long long)seed, k);
        for (size_t k = 0; k < sizeof(updates) / sizeof(updates[0]); k++)
            cr_expect_gt(what[k], 0, "seed %llu: no node update of %s", (unsigned long long)seed, updates[k]);
        /* many pods share each common template, and some are one-offs */
        uint32_t per_class[IW_TEMPLATES + 1] = {0};
        for (uint32_t i = 0; i < w.npods; i++)
            per_class[w.pod_class[i]]++;
        cr_expect_gt(per_class[IW_T_PLAIN], w.npods / 10, "seed %llu", (unsigned long long)seed);
        cr_expect_gt(per_class[IW_TEMPLATES], w.npods / 10, "seed %llu", (unsigned long long)seed);
        for (int r = 0; r < IW_TEMPLATES; r++)
            cr_expect_gt(per_class[r], 0, "seed %llu: no pod of template %d", (unsigned long long)seed, r);
        /* some nodes lack the zone label from the start (their pods count under the value "") */
        uint32_t zoneless = 0;
        for (const char *p = w.nodes_yaml; (p = strstr(p, "kind: Node\n")) != NULL; p++) {
            const char *end = strstr(p + 1, "kind: Node\n");
            const char *zone = strstr(p, "topology.kubernetes.io/zone:");
            zoneless += !zone || (end && zone > end);
        }
        cr_expect_gt(zoneless, 0, "seed %llu: every node has a zone", (unsigned long long)seed);
        iw_free(&w);
    }
}
