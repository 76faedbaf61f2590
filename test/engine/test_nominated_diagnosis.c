/*
 * test_nominated_diagnosis.c - the diagnosis of a pod with a nominated node
 * (engine/find_nodes.c), held to upstream's findNodesThatFitPod: the nominated node is
 * filtered alone first; if it is rejected its status stays in the diagnosis (NodeToStatus)
 * whatever the PreFilter result does with it, the nodes that result leaves out get the
 * absent status ("node(s) didn't satisfy plugin(s) [X]") only when they have no status of
 * their own, and FitError.Error() and PostFilter read that one status per node.
 *
 * Whole runs through the scheduler (in process, seeded): clusters of the default profile
 * for the exact messages, including preemption's, and a matrix over the fake plugins
 * (test/fakes/) checked against a model of upstream's bookkeeping.
 */
#include <criterion/criterion.h>

#include "fakes/fake_plugins.h"
#include "fakes/load_text.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void setup(void)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

TestSuite(nominated_diagnosis, .init = setup, .fini = teardown);

/* ---- a run and what its first attempt saw ------------------------------------------------------- */

#define MAX_NODES 8

struct entry {
    char node[32];
    enum ks_code code;
    char reason[160];
};

struct capture {
    bool attempted;
    uint32_t nall, nfailed, nfeasible;
    struct entry failed[MAX_NODES];
    char feasible[MAX_NODES][32];
    enum ks_code absent_code;
    char absent_reason[160];
    bool pre_filter_rejected;
    pthread_mutex_t lock; /* message and bound: SCHEDULED comes from a binder thread */
    char message[1024];
    char bound[32];
};

static void on_attempt(void *ctx, const struct ks_attempt *a)
{
    struct capture *c = ctx;
    const struct ks_diagnosis *d = a->diag;
    if (c->attempted)
        return;
    c->attempted = true;
    c->nall = d->nall;
    c->nfailed = d->nfailed;
    cr_assert_leq(d->nfailed, MAX_NODES);
    for (uint32_t i = 0; i < d->nfailed; i++) {
        struct entry *e = &c->failed[i];
        snprintf(e->node, sizeof(e->node), "%s", ks_intern_str(d->nodes[i]->name));
        e->code = d->statuses[i].code;
        snprintf(e->reason, sizeof(e->reason), "%s",
                 d->statuses[i].nreasons ? ks_intern_str(d->statuses[i].reasons[0]) : "");
    }
    c->nfeasible = a->nfeasible;
    for (uint32_t i = 0; i < a->nfeasible; i++)
        snprintf(c->feasible[i], sizeof(c->feasible[i]), "%s", ks_intern_str(a->feasible[i]->name));
    c->absent_code = d->absent.code;
    snprintf(c->absent_reason, sizeof(c->absent_reason), "%s",
             d->absent.nreasons ? ks_intern_str(d->absent.reasons[0]) : "");
    c->pre_filter_rejected = d->pre_filter_msg != KS_ID_EMPTY;
}

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct capture *c = ctx;
    pthread_mutex_lock(&c->lock);
    if (ev->kind == KS_SCHED_UNSCHEDULABLE && !c->message[0] && ev->message)
        snprintf(c->message, sizeof(c->message), "%s", ev->message);
    if (ev->kind == KS_SCHED_SCHEDULED && !c->bound[0])
        snprintf(c->bound, sizeof(c->bound), "%s", ks_intern_str(ev->node));
    pthread_mutex_unlock(&c->lock);
}

/* Load @yaml, put nodes and bound pods in the cache, schedule the pending pods until idle. */
static void run(const char *yaml, const struct ks_config *cfg, struct capture *c)
{
    struct ks_objects *objs;
    struct ks_error err = {0};
    struct ks_cache *cache;
    struct ks_scheduler *s;

    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    cr_assert_eq(ks_test_load_text(yaml, KS_VALIDATE_STRICT, &objs, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_cache_create(&cache), 0);
    struct ks_scheduler_opts opts = {.config = cfg,
                                     .objects = objs,
                                     .seeded = true,
                                     .seed = 1,
                                     .on_event = on_event,
                                     .on_attempt = on_attempt,
                                     .ctx = c};
    cr_assert_eq(ks_scheduler_create(&opts, cache, &s, &err), 0, "%s", err.msg);
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(cache, ks_objects_nodes(objs)[i]), 0);
    objs->of[KS_KIND_NODE].n = 0;
    struct ks_pod **pods = ks_objects_pods(objs);
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++) {
        if (pods[i]->node_name != KS_ID_EMPTY)
            cr_assert_eq(ks_cache_add_pod(cache, ks_pod_get(pods[i]), pods[i]->node_name), 0);
    }
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++) {
        if (pods[i]->node_name == KS_ID_EMPTY)
            cr_assert_eq(ks_scheduler_add_pod(s, pods[i]), 0);
    }
    ks_scheduler_run_until_idle(s);
    ks_scheduler_destroy(s);
    ks_cache_destroy(cache);
    ks_objects_destroy(objs);
    pthread_mutex_destroy(&c->lock);
}

/* run() under the default configuration. */
static void run_default(const char *yaml, struct capture *c)
{
    struct ks_config *cfg;
    cr_assert_eq(ks_config_load_default(&cfg), 0);
    run(yaml, cfg, c);
    ks_config_destroy(cfg);
}

static const struct entry *entry_of(const struct capture *c, const char *node)
{
    const struct entry *hit = NULL;
    for (uint32_t i = 0; i < c->nfailed; i++) {
        if (strcmp(c->failed[i].node, node) == 0) {
            cr_assert_null(hit, "node %s has two statuses in the diagnosis", node);
            hit = &c->failed[i];
        }
    }
    return hit;
}

static void expect_entry(const struct capture *c, const char *node, enum ks_code code, const char *reason)
{
    const struct entry *e = entry_of(c, node);
    cr_assert_not_null(e, "node %s has no status of its own", node);
    cr_expect_eq(e->code, code, "node %s: code %s, want %s", node, ks_code_name(e->code), ks_code_name(code));
    cr_expect_str_eq(e->reason, reason, "node %s", node);
}

/* ---- the default profile ------------------------------------------------------------------------ */

#define NODE(name, cpu, extra)                                                                               \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {kubernetes.io/hostname: " name     \
    "}}\n" extra "status: {allocatable: {cpu: '" cpu "', memory: 8Gi, pods: '110'}}\n"

#define BOUND_POD(name, node, priority, cpu)                                                                 \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name                                                 \
    ", namespace: default}\nspec:\n  nodeName: " node "\n  priority: " priority                              \
    "\n  containers: [{name: c, resources: {requests: {cpu: '" cpu "'}}}]\n"                                 \
    "status: {phase: Running, startTime: '2024-01-01T00:00:00Z'}\n"

/* node1 (nominated) taints the pod away, node2 is full, node3 is outside matchFields */
static const char tainted_nominated[] =
    NODE("node1", "4", "spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n")
        NODE("node2", "2", "") NODE("node3", "4", "") BOUND_POD(
            "busy", "node2", "0",
            "1") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pinned, namespace: default}\nspec:\n"
                 "  containers: [{name: c, resources: {requests: {cpu: '2'}}}]\n"
                 "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "        nodeSelectorTerms:\n        - matchFields: [{key: metadata.name, operator: In, "
                 "values: [node2]}]\n"
                 "status: {phase: Pending, nominatedNodeName: node1}\n";

Test(nominated_diagnosis, nominated_node_left_out_by_prefilter_keeps_its_filter_status)
{
    struct capture c;
    run_default(tainted_nominated, &c);

    cr_assert(c.attempted);
    cr_expect_eq(c.nfailed, 2, "node1 (first pass) and node2 (the narrowed pass): got %u", c.nfailed);
    expect_entry(&c, "node1", KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                 "node(s) had untolerated taint {dedicated: gpu}");
    expect_entry(&c, "node2", KS_UNSCHEDULABLE, "Insufficient cpu");
    cr_expect_null(entry_of(&c, "node3"));
    cr_expect_eq(c.absent_code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE);
    cr_expect_str_eq(c.absent_reason, "node(s) didn't satisfy plugin(s) [NodeAffinity]");
    /* FitError.Error(): one node per reason; PostFilter: DynamicResources has no claim to deallocate, only
     * node2 is Unschedulable, and it has no victim */
    cr_expect_str_eq(c.message,
                     "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) "
                     "[NodeAffinity], 1 node(s) had untolerated taint {dedicated: gpu}. no new claims to "
                     "deallocate, preemption: "
                     "0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 "
                     "Preemption is not helpful for scheduling.");
}

/*
 * A bound local PV pins the pod to node2 (VolumeBinding's PreFilter result). The nominated
 * node1 is only short of cpu: Unschedulable, so PostFilter's NodesForStatusCode takes it
 * as a candidate even though the pass over the nodes left it out, and its dry run (low
 * evicted) ends at VolumeBinding's Filter.
 */
static const char volume_pinned[] =
    "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local}\n"
    "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n"
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-local}\nspec:\n"
    "  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: local\n"
    "  claimRef: {namespace: default, name: data}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n"
    "      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node2]}]\n"
    "status: {phase: Bound}\n"
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: default\n"
    "  annotations: {pv.kubernetes.io/bind-completed: 'yes'}\nspec:\n  storageClassName: local\n"
    "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  volumeName: pv-local\n"
    "status: {phase: Bound}\n" NODE("node1", "2", "") NODE("node2", "2", "") NODE("node3", "4", "")
        BOUND_POD("low", "node1", "0", "1500m")
            BOUND_POD("peer", "node2", "100",
                      "1500m") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: "
                               "default}\nspec:\n  priority: 100\n"
                               "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
                               "  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]\n"
                               "status: {phase: Pending, nominatedNodeName: node1}\n";

Test(nominated_diagnosis, preemption_reads_the_kept_status_of_the_nominated_node)
{
    struct capture c;
    run_default(volume_pinned, &c);

    cr_assert(c.attempted);
    cr_expect_eq(c.nfailed, 2, "got %u", c.nfailed);
    expect_entry(&c, "node1", KS_UNSCHEDULABLE, "Insufficient cpu");
    expect_entry(&c, "node2", KS_UNSCHEDULABLE, "Insufficient cpu");
    cr_expect_str_eq(c.absent_reason, "node(s) didn't satisfy plugin(s) [VolumeBinding]");
    cr_expect_str_eq(c.message,
                     "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [VolumeBinding], 2 "
                     "Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 1 "
                     "No preemption victims "
                     "found for incoming pod, 1 Preemption is not helpful for scheduling, 1 node(s) "
                     "didn't match PersistentVolume's node affinity.");
    cr_expect_str_eq(c.bound, "", "nothing fits, nobody is evicted");
}

/* ---- the matrix over fake plugins ----------------------------------------------------------------- */

/*
 * Five nodes n0..n4. FakeA and FakeB may narrow at PreFilter; FakeC rejects only the
 * nominated node, FakeD every node (in that order); FakeE scores, so every node in the
 * set is evaluated. The model of upstream's bookkeeping: a PreFilter that leaves no node
 * rejects the pod (no node has a status of its own); else a nominated node that passes
 * is taken alone; else the nominated node has its own status (FakeC's or FakeD's), each
 * other node in the set is feasible or has FakeD's, and every other node has the absent
 * status of the narrowing plugins.
 */
#define NNODES 5

struct narrowing {
    const char *a, *b; /* space-separated node names, NULL: that plugin does not narrow */
    const char *plugins;
};

static const struct narrowing narrowings[] = {
    {NULL, NULL, NULL},
    {"n1 n2", NULL, "[FakeA]"},
    {"n0 n1 n2", "n1 n2 n3", "[FakeA FakeB]"},
    {NULL, "n3 ghost", "[FakeB]"},
    {"ghost", NULL, "[FakeA]"},
    {"n0", "n1", "[FakeA FakeB]"}, /* nothing left: PreFilter rejects */
};

static uint32_t names_of(const char *list, uint32_t *out)
{
    char buf[64], *save = NULL;
    uint32_t n = 0;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        out[n++] = ks_intern(t);
    return n;
}

static bool listed(const char *list, const char *node)
{
    char buf[64], *save = NULL;
    if (!list)
        return true;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (strcmp(t, node) == 0)
            return true;
    }
    return false;
}

static void fake_narrow(int i, const char *list)
{
    ks_fake(i)->narrow = list != NULL;
    if (list)
        ks_fake(i)->nnames = names_of(list, ks_fake(i)->names);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FitError.Error() of the model: "<n> <reason>" sorted as strings, joined with ", ". */
static void model_message(char *out, size_t len, const char *const *reasons, uint32_t n)
{
    char parts[MAX_NODES][200], *sorted[MAX_NODES];
    uint32_t np = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t count = 0;
        bool seen = false;
        for (uint32_t j = 0; j < n; j++) {
            count += strcmp(reasons[i], reasons[j]) == 0;
            seen |= j < i && strcmp(reasons[i], reasons[j]) == 0;
        }
        if (!seen) {
            snprintf(parts[np], sizeof(parts[np]), "%u %s", count, reasons[i]);
            sorted[np] = parts[np];
            np++;
        }
    }
    qsort(sorted, np, sizeof(*sorted), cmp_str);
    size_t off = (size_t)snprintf(out, len, "0/%d nodes are available:", NNODES);
    for (uint32_t i = 0; i < np; i++)
        off += (size_t)snprintf(out + off, len - off, "%s%s", i ? ", " : " ", sorted[i]);
    snprintf(out + off, len - off, ".");
}

static void check_case(const struct narrowing *nw, const char *nominated, bool c_rejects, bool d_rejects)
{
    static const char *const nodes[NNODES] = {"n0", "n1", "n2", "n3", "n4"};
    char yaml[4096], label[160];
    size_t off = 0;
    for (int i = 0; i < NNODES; i++)
        off += (size_t)snprintf(yaml + off, sizeof(yaml) - off,
                                "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"
                                "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n",
                                nodes[i]);
    snprintf(yaml + off, sizeof(yaml) - off,
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
             "spec: {schedulerName: fake-scheduler, containers: [{name: c}]}\n"
             "status: {phase: Pending, nominatedNodeName: %s}\n",
             nominated);
    snprintf(label, sizeof(label), "narrowing %s/%s, nominated %s, FakeC %s, FakeD %s", nw->a ? nw->a : "-",
             nw->b ? nw->b : "-", nominated, c_rejects ? "rejects it" : "passes",
             d_rejects ? "rejects all" : "passes");

    ks_fake_reset();
    fake_narrow(0, nw->a);
    fake_narrow(1, nw->b);
    ks_fake(2)->code[KS_FAKE_FILTER] = c_rejects ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : KS_SUCCESS;
    ks_fake(2)->msg = "FakeC rejects the nominated node";
    ks_fake(2)->only_node = ks_intern(nominated);
    ks_fake(3)->code[KS_FAKE_FILTER] = d_rejects ? KS_UNSCHEDULABLE : KS_SUCCESS;
    ks_fake(3)->msg = "FakeD rejects every node";
    ks_fake(4)->score = 1;
    struct ks_config *cfg = ks_fake_config(KS_FAKE_POINT2("preFilter", "FakeA", "FakeB") KS_FAKE_POINT2(
        "filter", "FakeC", "FakeD") KS_FAKE_POINT1("score", "FakeE"));
    struct capture c;
    run(yaml, cfg, &c);
    ks_config_destroy(cfg);
    cr_assert(c.attempted, "%s: no attempt reported", label);
    cr_expect_eq(c.nall, NNODES, "%s", label);

    /* the model */
    bool narrowed = nw->a || nw->b;
    bool rejected_at_prefilter = true, nominated_exists = false;
    for (int i = 0; i < NNODES; i++) {
        rejected_at_prefilter &= !(listed(nw->a, nodes[i]) && listed(nw->b, nodes[i]));
        nominated_exists |= strcmp(nodes[i], nominated) == 0;
    }
    rejected_at_prefilter &= narrowed && !(listed(nw->a, "ghost") && listed(nw->b, "ghost"));
    if (rejected_at_prefilter) {
        cr_expect(c.pre_filter_rejected, "%s: PreFilter rejects", label);
        cr_expect_eq(c.nfailed, 0, "%s: the nominated node is never filtered", label);
        cr_expect_eq(c.nfeasible, 0, "%s", label);
        return;
    }
    cr_expect(!c.pre_filter_rejected, "%s", label);
    if (nominated_exists && !c_rejects && !d_rejects) {
        cr_expect_eq(c.nfeasible, 1, "%s: the nominated node alone", label);
        cr_expect_str_eq(c.feasible[0], nominated, "%s", label);
        cr_expect_eq(c.nfailed, 0, "%s", label);
        cr_expect_str_eq(c.bound, nominated, "%s", label);
        return;
    }
    const char *reasons[NNODES];
    uint32_t nreasons = 0, want_failed = 0, want_feasible = 0;
    for (int i = 0; i < NNODES; i++) {
        const char *node = nodes[i];
        bool in_set = listed(nw->a, node) && listed(nw->b, node);
        bool is_nominated = strcmp(node, nominated) == 0;
        bool feasible = false;
        for (uint32_t k = 0; k < c.nfeasible; k++)
            feasible |= strcmp(c.feasible[k], node) == 0;
        const struct entry *e = entry_of(&c, node);
        if (is_nominated || (in_set && d_rejects)) {
            const char *want =
                is_nominated && c_rejects ? "FakeC rejects the nominated node" : "FakeD rejects every node";
            cr_expect_not_null(e, "%s: %s has no status of its own", label, node);
            if (e)
                cr_expect_str_eq(e->reason, want, "%s: %s", label, node);
            cr_expect(!feasible, "%s: %s both feasible and failed", label, node);
            reasons[nreasons++] = want;
            want_failed++;
        } else if (in_set) {
            cr_expect(feasible, "%s: %s should be feasible", label, node);
            cr_expect_null(e, "%s: feasible %s has a status", label, node);
            want_feasible++;
        } else {
            cr_expect_null(e, "%s: %s, left out by PreFilter, has a status of its own", label, node);
            cr_expect(!feasible, "%s: %s left out yet feasible", label, node);
            reasons[nreasons++] = c.absent_reason;
        }
    }
    cr_expect_eq(c.nfailed, want_failed, "%s: %u statuses, want %u", label, c.nfailed, want_failed);
    cr_expect_eq(c.nfeasible, want_feasible, "%s: %u feasible, want %u", label, c.nfeasible, want_feasible);
    if (narrowed) {
        char want[80];
        snprintf(want, sizeof(want), "node(s) didn't satisfy plugin(s) %s", nw->plugins);
        cr_expect_eq(c.absent_code, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", label);
        cr_expect_str_eq(c.absent_reason, want, "%s", label);
    } else {
        cr_expect_eq(c.absent_code, KS_SUCCESS, "%s: no absent status without a narrowing", label);
    }
    if (want_feasible) {
        cr_expect_str_eq(c.message, "", "%s", label);
        cr_expect_neq(c.bound[0], '\0', "%s: bound", label);
    } else {
        char want[1024];
        model_message(want, sizeof(want), reasons, nreasons);
        cr_expect_str_eq(c.message, want, "%s", label);
    }
}

Test(nominated_diagnosis, one_status_per_node_across_narrowings_and_nominations)
{
    static const char *const nominations[] = {"n0", "n1", "n3", "ghost"};
    for (size_t i = 0; i < sizeof(narrowings) / sizeof(narrowings[0]); i++) {
        for (size_t j = 0; j < sizeof(nominations) / sizeof(nominations[0]); j++) {
            for (int k = 0; k < 4; k++)
                check_case(&narrowings[i], nominations[j], k & 1, k & 2);
        }
    }
}
