/*
 * soak_run.c - the churn soak (bench/harness/soak.h): a generator that plays the API server and
 * the informers against the real scheduler, and checks that nothing is lost.
 *
 * Threads: the caller is the event-intake thread (the generator); one scheduling thread
 * runs ks_scheduler_schedule_one() in a loop; the scheduler's binder threads bind through
 * the fault-injecting backend below; its flusher thread moves backoffQ and the
 * unschedulable pods (opts.flusher). The scheduling thread polls (a non-blocking pop,
 * then a 1 ms wait) rather than blocking in the pop: a blocked pop can only be woken by a
 * push or by closing the queue for good, and the checks must be able to stop it between
 * two cycles.
 *
 * The API server's view of every pod (pending, bound to a node, deleted) lives in the
 * backend under one lock, so a binding and a deletion are ordered as the API server
 * orders them: binding a deleted pod fails with NotFound, and deleting a pod the API
 * has bound is delivered as the informer would - an update to the bound pod, then its
 * deletion. A pod the backend binds twice is a violation.
 *
 * The generator's own record (`struct spod`) follows the scheduler's events: Scheduled
 * moves a pod to bound, Preempted deletes the victim (the evictor's deletion). Pods are
 * named p<serial> (serials never reuse), nodes n<serial>.
 *
 * Checks (ksched/internal/sched_check.h) run every opts.check_every generator events and at the
 * end: the generator stops, the scheduling thread parks between cycles, bindings drain,
 * pending events are applied, and then every live pod must be in exactly one place that
 * matches the record, every pod deleted since the last check nowhere, the cache and
 * snapshot consistent and no node overcommitted, nominations held only by queued pods.
 */
#include "soak.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/queue.h"
#include "ksched/internal/scheduler.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the pod mix ------------------------------------------------------------------------------- */

#define NGROUPS   8 /* app label values: a0..a7 */
#define NZONES    10
#define NVARIANTS 3 /* per template: gated, rev a, rev b */
#define GATE_NAME "soak.example.com/hold"

enum { V_GATED, V_REV_A, V_REV_B };

struct pod_kind {
    const char *name;
    unsigned weight; /* per mille of created pods */
    const char *requests;
    const char *spec; /* extra spec fields; %1$d: group, %2$d: zone index */
    const char *ports;
    int32_t priority; /* -1: drawn (75% 0, 20% 100, 5% 1000) */
};

/* Every extra spec string takes the group twice and the zone once, in that order (printf args). */
static const struct pod_kind kinds[] = {
    {"small", 250, "cpu: 100m, memory: 128Mi", "", "", -1},
    {"medium", 190, "cpu: 500m, memory: 1Gi", "", "", -1},
    {"large", 60, "cpu: \"2\", memory: 4Gi", "", "", -1},
    {"node-affinity", 80, "cpu: 250m, memory: 512Mi",
     "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
     "        nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: [gold]}]}]\n"
     "      preferredDuringSchedulingIgnoredDuringExecution:\n"
     "      - {weight: 10, preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, "
     "values: [zone-%3$d]}]}}\n",
     "", -1},
    {"anti-affinity", 25, "cpu: 200m, memory: 256Mi",
     "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
     "      - {labelSelector: {matchLabels: {app: a%1$d}}, topologyKey: kubernetes.io/hostname}\n",
     "", -1},
    {"pod-affinity", 25, "cpu: 300m, memory: 512Mi",
     "  affinity:\n    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
     "      - weight: 50\n        podAffinityTerm: {labelSelector: {matchLabels: {app: a%2$d}}, topologyKey: "
     "topology.kubernetes.io/zone}\n",
     "", -1},
    {"spread-zone", 25, "cpu: 200m, memory: 256Mi",
     "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
     "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: a%1$d}}}\n",
     "", -1},
    {"spread-host", 25, "cpu: 150m, memory: 256Mi",
     "  topologySpreadConstraints:\n  - {maxSkew: 2, topologyKey: kubernetes.io/hostname, "
     "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: a%1$d}}}\n",
     "", -1},
    {"host-port", 40, "cpu: 100m, memory: 128Mi", "", "    ports: [{containerPort: 80, hostPort: %d}]\n", -1},
    {"tolerates", 50, "cpu: 400m, memory: 1Gi",
     "  tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]\n", "", -1},
    {"gpu", 40, "cpu: \"1\", memory: 2Gi, example.com/gpu: \"1\"", "", "", -1},
    {"best-effort", 170, NULL, "", "", -1},
    {"huge", 20, "cpu: \"6\", memory: 8Gi", "", "", 1000},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static uint32_t tmpl_index(uint32_t kind, uint32_t group, uint32_t variant)
{
    return (kind * NGROUPS + group) * NVARIANTS + variant;
}

/* Append one v1 Pod template document to @buf. */
static int tmpl_doc(char *buf, size_t len, uint32_t kind, uint32_t group, uint32_t variant)
{
    const struct pod_kind *k = &kinds[kind];
    char spec[1024], ports[128], res[160];
    snprintf(spec, sizeof(spec), k->spec, (int)group, (int)((group + 1) % NGROUPS), (int)(group % NZONES));
    snprintf(ports, sizeof(ports), k->ports, 8000 + (int)group);
    if (k->requests)
        snprintf(res, sizeof(res), "    resources: {requests: {%s}, limits: {%s}}\n", k->requests,
                 strstr(k->requests, "gpu") ? "example.com/gpu: \"1\"" : "");
    else
        res[0] = '\0';
    return snprintf(buf, len,
                    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  namespace: soak\n"
                    "  labels: {app: a%u, kind: %s, rev: %s}\nspec:\n%s"
                    "  containers:\n  - name: c\n    image: registry.example/app:%u\n%s%s%s",
                    group, k->name, variant == V_REV_B ? "b" : "a",
                    variant == V_GATED ? "  schedulingGates: [{name: " GATE_NAME "}]\n" : "", group, res,
                    ports, spec);
}

/* ---- nodes ------------------------------------------------------------------------------------------ */

struct node_cfg {
    uint8_t zone;
    bool gold;          /* label tier=gold (node-affinity pods need it) */
    bool tainted;       /* dedicated=infra:NoSchedule */
    bool unschedulable; /* spec.unschedulable */
    bool gpu;           /* example.com/gpu: 2 */
    uint8_t cpu;        /* allocatable cores: 8, raised (never lowered) by updates */
};

/* ---- state --------------------------------------------------------------------------------------- */

enum { SP_PENDING, SP_BOUND, SP_DELETED };
enum { API_PENDING, API_BOUND, API_DELETED };

struct spod {
    struct ks_pod *obj; /* our reference to the latest version; NULL once deleted and checked */
    uint32_t node;      /* bound: the node (interned) */
    uint32_t idx;       /* index in pending[] or bound[] */
    uint32_t nidx;      /* bound: index in its node's list */
    uint32_t slot;      /* bound: its node's slot */
    uint16_t kind, group;
    int32_t priority;
    int32_t milli_cpu;
    uint8_t state;
    uint8_t gated;
    uint8_t rev;
};

struct snode {
    struct ks_node *obj; /* the object the cache holds */
    uint32_t name;
    uint32_t serial;
    struct node_cfg cfg;
    uint32_t n, cap;
    uint64_t *pods; /* serials bound here */
};

struct sevent {
    uint8_t kind; /* KS_SCHED_SCHEDULED or KS_SCHED_PREEMPTED */
    uint64_t serial;
    uint32_t node;
};

struct vec64 {
    uint64_t n, cap;
    uint64_t *v;
};

struct soak {
    struct ks_soak_opts o;
    struct ks_soak_result *res;
    struct ks_error *err;
    uint64_t rng;
    int64_t start_ns;

    struct ks_config *cfg;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    struct ks_yaml_stream *tmpls;
    uint32_t ns_soak;

    /* the generator's record (intake thread) */
    struct spod *pods;
    uint64_t npods, cap_pods;
    struct vec64 pending, bound, deleted; /* serials; deleted: since the last check (references kept) */
    struct snode *nodes;
    uint32_t nnodes;
    uint32_t next_node_serial;
    uint32_t *slot_of; /* node serial -> slot, UINT32_MAX once deleted */
    uint32_t cap_slot_of;
    int64_t bound_milli_cpu, cluster_milli_cpu;
    uint32_t backlog;
    uint32_t max_pods; /* allocatable pods per node */

    /* the API server's view (binder threads and intake), under api_lock */
    struct ks_mutex api_lock;
    uint8_t *api_state;
    uint8_t *api_attempts;
    uint32_t *api_node;
    uint64_t cap_api;
    struct ks_check_report api_report; /* double bindings */
    uint64_t bind_calls, bind_failures, bind_delayed, bind_not_found;

    /* scheduler events (binder and scheduling threads), under ev_lock */
    struct ks_mutex ev_lock;
    struct sevent *ev;
    uint32_t nev, cap_ev;
    struct sevent *ev_spare;
    uint32_t cap_spare;
    _Atomic uint64_t nominated, unschedulable, errors;

    /* the scheduling thread */
    pthread_t sched_thread;
    bool sched_started;
    struct ks_mutex ctl_lock;
    pthread_cond_t ctl_cv;
    bool pause_req, paused, quit;
    _Atomic uint64_t cycles;
};

static uint64_t rnd(struct soak *k)
{
    /* xorshift64* */
    k->rng ^= k->rng >> 12;
    k->rng ^= k->rng << 25;
    k->rng ^= k->rng >> 27;
    return k->rng * 0x2545f4914f6cdd1dull;
}

static double rnd01(struct soak *k)
{
    return (double)(rnd(k) >> 11) / 9007199254740992.0;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static int vec_push(struct vec64 *v, uint64_t x)
{
    if (v->n == v->cap) {
        uint64_t cap = v->cap ? v->cap * 2 : 1024;
        uint64_t *nv = realloc(v->v, cap * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}

static uint64_t serial_of(const struct ks_pod *pod)
{
    return pod->meta.name && pod->meta.name[0] == 'p' ? strtoull(pod->meta.name + 1, NULL, 10) : UINT64_MAX;
}

/* ---- the fault-injecting binder backend (binder threads) ------------------------------------------- */

static int soak_bind(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    struct soak *k = ctx;
    uint64_t serial = serial_of(pod);
    if (serial == UINT64_MAX) {
        ks_status_set(st, KS_ERROR, "soak: binding an unknown pod");
        return -EINVAL;
    }
    ks_mutex_lock(&k->api_lock);
    uint8_t attempt = k->api_attempts[serial]++;
    k->bind_calls++;
    ks_mutex_unlock(&k->api_lock);

    /* the decision depends on the seed, the pod and its attempt, not on thread timing */
    uint64_t h = mix(k->o.seed * 0x9e3779b97f4a7c15ull ^ serial * 0x100000001b3ull ^ attempt);
    bool fail = (double)(h >> 11) / 9007199254740992.0 < k->o.bind_failure_rate;
    bool delay = (h & 0xf) < 4; /* a quarter of the calls answer late (the API server is slow) */
    if (delay)
        usleep(100 + (unsigned)((h >> 8) % 1900));

    int rc = 0;
    ks_mutex_lock(&k->api_lock);
    if (k->api_state[serial] == API_DELETED) {
        k->bind_not_found++;
        rc = -ENOENT;
    } else if (fail) {
        k->bind_failures++;
        k->bind_delayed += delay;
        rc = -EIO;
    } else {
        if (k->api_state[serial] == API_BOUND)
            ks_check_fail(&k->api_report, "pod %s: bound twice (to node %s, then to node %s)", pod->meta.name,
                          ks_intern_str(k->api_node[serial]), ks_intern_str(node));
        k->api_state[serial] = API_BOUND;
        k->api_node[serial] = node;
    }
    ks_mutex_unlock(&k->api_lock);
    if (rc == -ENOENT)
        ks_status_set(st, KS_ERROR, "pods \"%s\" not found", pod->meta.name);
    else if (rc)
        ks_status_set(st, KS_ERROR, "injected binding failure%s", delay ? " (after a delay)" : "");
    return rc;
}

/* ---- scheduler events (binder and scheduling threads) ----------------------------------------------- */

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct soak *k = ctx;
    switch (ev->kind) {
    case KS_SCHED_SCHEDULED:
    case KS_SCHED_PREEMPTED:
        ks_mutex_lock(&k->ev_lock);
        if (k->nev == k->cap_ev) {
            uint32_t cap = k->cap_ev ? k->cap_ev * 2 : 4096;
            struct sevent *v = realloc(k->ev, cap * sizeof(*v));
            if (!v) {
                ks_mutex_unlock(&k->ev_lock);
                abort(); /* losing an event would read as a lost pod */
            }
            k->ev = v;
            k->cap_ev = cap;
        }
        k->ev[k->nev++] = (struct sevent){(uint8_t)ev->kind, serial_of(ev->pod), ev->node};
        ks_mutex_unlock(&k->ev_lock);
        break;
    case KS_SCHED_NOMINATED:
        atomic_fetch_add_explicit(&k->nominated, 1, memory_order_relaxed);
        break;
    case KS_SCHED_UNSCHEDULABLE:
        atomic_fetch_add_explicit(&k->unschedulable, 1, memory_order_relaxed);
        break;
    case KS_SCHED_ERROR:
        atomic_fetch_add_explicit(&k->errors, 1, memory_order_relaxed);
        break;
    }
}

/* ---- the scheduling thread -------------------------------------------------------------------------- */

static void *sched_main(void *arg)
{
    struct soak *k = arg;
    ks_rcu_register_thread();
    ks_mutex_lock(&k->ctl_lock);
    for (;;) {
        while (k->pause_req && !k->quit) {
            k->paused = true;
            pthread_cond_broadcast(&k->ctl_cv);
            ks_cond_wait(&k->ctl_cv, &k->ctl_lock);
        }
        k->paused = false;
        if (k->quit)
            break;
        ks_mutex_unlock(&k->ctl_lock);
        int got = ks_scheduler_schedule_one(k->s, false);
        ks_mutex_lock(&k->ctl_lock);
        if (got) {
            atomic_fetch_add_explicit(&k->cycles, 1, memory_order_relaxed);
        } else if (!k->pause_req && !k->quit) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += 1000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            ks_cond_timedwait(&k->ctl_cv, &k->ctl_lock, &until);
        }
    }
    ks_mutex_unlock(&k->ctl_lock);
    ks_rcu_unregister_thread();
    return NULL;
}

static void sched_pause(struct soak *k)
{
    ks_mutex_lock(&k->ctl_lock);
    k->pause_req = true;
    pthread_cond_broadcast(&k->ctl_cv);
    while (!k->paused)
        ks_cond_wait(&k->ctl_cv, &k->ctl_lock);
    ks_mutex_unlock(&k->ctl_lock);
}

static void sched_resume(struct soak *k)
{
    ks_mutex_lock(&k->ctl_lock);
    k->pause_req = false;
    pthread_cond_broadcast(&k->ctl_cv);
    ks_mutex_unlock(&k->ctl_lock);
}

static void sched_stop(struct soak *k)
{
    if (!k->sched_started)
        return;
    ks_mutex_lock(&k->ctl_lock);
    k->quit = true;
    pthread_cond_broadcast(&k->ctl_cv);
    ks_mutex_unlock(&k->ctl_lock);
    pthread_join(k->sched_thread, NULL);
    k->sched_started = false;
}

/* ---- objects ------------------------------------------------------------------------------------------ */

static int grow_pods(struct soak *k)
{
    if (k->npods < k->cap_pods)
        return 0;
    uint64_t cap = k->cap_pods ? k->cap_pods * 2 : 65536;
    struct spod *p = realloc(k->pods, cap * sizeof(*p));
    if (!p)
        return -ENOMEM;
    k->pods = p;
    k->cap_pods = cap;
    ks_mutex_lock(&k->api_lock);
    uint8_t *st = realloc(k->api_state, cap);
    if (st)
        k->api_state = st;
    uint8_t *at = st ? realloc(k->api_attempts, cap) : NULL;
    if (at)
        k->api_attempts = at;
    uint32_t *nd = at ? realloc(k->api_node, cap * sizeof(*nd)) : NULL;
    if (nd)
        k->api_node = nd;
    ks_mutex_unlock(&k->api_lock);
    return nd ? 0 : -ENOMEM;
}

/* A pod object for @serial from its template (kind, group, variant), bound to @node or pending. */
static struct ks_pod *make_pod(struct soak *k, uint64_t serial, const struct spod *p, uint32_t variant,
                               uint32_t node)
{
    const struct ks_yaml_node *doc = k->tmpls->docs[tmpl_index(p->kind, p->group, variant)];
    struct ks_pod *pod;
    char name[32];
    if (ks_decode_pod("soak-templates", doc, &pod, k->err) < 0)
        return NULL;
    snprintf(name, sizeof(name), "p%" PRIu64, serial);
    if (!(pod->meta.name = ks_arena_strdup(&pod->arena, name))) {
        ks_pod_destroy(pod);
        return NULL;
    }
    pod->has_priority = true;
    pod->priority = p->priority;
    pod->node_name = node;
    return pod;
}

static uint32_t variant_of(const struct spod *p)
{
    return p->gated ? V_GATED : p->rev ? V_REV_B : V_REV_A;
}

static int node_yaml(char *buf, size_t len, uint32_t serial, const struct node_cfg *c, uint32_t max_pods)
{
    char alloc[160];
    snprintf(alloc, sizeof(alloc), "{cpu: \"%u\", memory: 32Gi, ephemeral-storage: 100Gi, pods: \"%u\"%s}",
             c->cpu, max_pods, c->gpu ? ", example.com/gpu: \"2\"" : "");
    return snprintf(
        buf, len,
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n%u\n  labels: {kubernetes.io/hostname: n%u, "
        "topology.kubernetes.io/zone: zone-%u%s}\nspec:\n  unschedulable: %s\n%s"
        "status:\n  capacity: %s\n  allocatable: %s\n"
        "  conditions: [{type: Ready, status: \"True\"}]\n",
        serial, serial, c->zone, c->gold ? ", tier: gold" : "", c->unschedulable ? "true" : "false",
        c->tainted ? "  taints: [{key: dedicated, value: infra, effect: NoSchedule}]\n" : "", alloc, alloc);
}

static struct ks_node *make_node(struct soak *k, uint32_t serial, const struct node_cfg *c)
{
    char buf[1024];
    struct ks_yaml_stream *ys;
    struct ks_node *node = NULL;
    int len = node_yaml(buf, sizeof(buf), serial, c, k->max_pods);
    if (ks_yaml_parse("soak-node", buf, (size_t)len, &ys, k->err) < 0)
        return NULL;
    if (ys->ndocs != 1 || ks_decode_node("soak-node", ys->docs[0], &node, k->err) < 0)
        node = NULL;
    ks_yaml_stream_destroy(ys);
    return node;
}

static void random_cfg(struct soak *k, struct node_cfg *c, uint32_t serial)
{
    *c = (struct node_cfg){
        .zone = (uint8_t)(serial % NZONES),
        .gold = rnd01(k) < 0.3,
        .tainted = rnd01(k) < 0.05,
        .gpu = rnd01(k) < 0.1,
        .cpu = 8,
    };
}

/* ---- the generator's operations (intake thread) ------------------------------------------------------ */

static void vec_remove_at(struct soak *k, struct vec64 *v, uint32_t i)
{
    uint64_t last = v->v[--v->n];
    if (i < v->n) {
        v->v[i] = last;
        k->pods[last].idx = i;
    }
}

static int add_node_in_slot(struct soak *k, uint32_t slot)
{
    struct snode *sn = &k->nodes[slot];
    uint32_t serial = k->next_node_serial++;
    if (serial >= k->cap_slot_of) {
        uint32_t cap = k->cap_slot_of ? k->cap_slot_of * 2 : 1024;
        while (cap <= serial)
            cap *= 2;
        uint32_t *v = realloc(k->slot_of, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        k->slot_of = v;
        k->cap_slot_of = cap;
    }
    random_cfg(k, &sn->cfg, serial);
    struct ks_node *node = make_node(k, serial, &sn->cfg);
    if (!node)
        return -EINVAL;
    int rc = ks_scheduler_node_event(k->s, NULL, node);
    if (rc < 0) {
        ks_node_destroy(node);
        return rc;
    }
    sn->obj = node;
    sn->name = node->name_id;
    sn->serial = serial;
    sn->n = 0;
    k->slot_of[serial] = slot;
    k->cluster_milli_cpu += (int64_t)sn->cfg.cpu * 1000;
    k->res->nodes_added++;
    return 0;
}

static uint32_t slot_of_name(struct soak *k, uint32_t name)
{
    const char *s = ks_intern_str(name);
    if (!s || s[0] != 'n')
        return UINT32_MAX;
    uint64_t serial = strtoull(s + 1, NULL, 10);
    return serial < k->next_node_serial ? k->slot_of[serial] : UINT32_MAX;
}

/* Record @serial as bound to @name (from a Scheduled event); 1 when its node is gone. */
static int record_bound(struct soak *k, uint64_t serial, uint32_t name)
{
    struct spod *p = &k->pods[serial];
    uint32_t slot = slot_of_name(k, name);
    vec_remove_at(k, &k->pending, p->idx);
    p->state = SP_BOUND;
    p->node = name;
    p->slot = slot;
    p->idx = (uint32_t)k->bound.n;
    if (vec_push(&k->bound, serial) < 0)
        return -ENOMEM;
    k->bound_milli_cpu += p->milli_cpu;
    if (slot == UINT32_MAX)
        return 1;
    struct snode *sn = &k->nodes[slot];
    if (sn->n == sn->cap) {
        uint32_t cap = sn->cap ? sn->cap * 2 : 16;
        uint64_t *v = realloc(sn->pods, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        sn->pods = v;
        sn->cap = cap;
    }
    p->nidx = sn->n;
    sn->pods[sn->n++] = serial;
    return 0;
}

/* Forget @serial from the record's live sets; it joins the deleted pods checked next time. */
static int record_deleted(struct soak *k, uint64_t serial)
{
    struct spod *p = &k->pods[serial];
    if (p->state == SP_PENDING) {
        vec_remove_at(k, &k->pending, p->idx);
    } else if (p->state == SP_BOUND) {
        vec_remove_at(k, &k->bound, p->idx);
        k->bound_milli_cpu -= p->milli_cpu;
        if (p->slot != UINT32_MAX) {
            struct snode *sn = &k->nodes[p->slot];
            uint64_t last = sn->pods[--sn->n];
            if (p->nidx < sn->n) {
                sn->pods[p->nidx] = last;
                k->pods[last].nidx = p->nidx;
            }
        }
    }
    p->state = SP_DELETED;
    ks_mutex_lock(&k->api_lock);
    k->api_state[serial] = API_DELETED;
    ks_mutex_unlock(&k->api_lock);
    return vec_push(&k->deleted, serial);
}

/* The API server deletes a bound pod; the informer delivers the deletion. */
static int delete_bound(struct soak *k, uint64_t serial)
{
    struct spod *p = &k->pods[serial];
    /* -ENOENT: the evictor removed it first (its Preempted event is not applied yet) */
    int rc = ks_scheduler_delete_pod(k->s, p->obj);
    if (rc < 0 && rc != -ENOENT)
        return rc;
    return record_deleted(k, serial);
}

/*
 * The API server deletes a pod the record holds pending. If the backend bound it
 * meanwhile (its Scheduled event not applied yet), the informer has seen the binding
 * first: an update to the bound pod, then the deletion.
 */
static int delete_pending(struct soak *k, uint64_t serial)
{
    struct spod *p = &k->pods[serial];
    ks_mutex_lock(&k->api_lock);
    uint8_t api = k->api_state[serial];
    uint32_t node = k->api_node[serial];
    k->api_state[serial] = API_DELETED; /* from here on, binding it fails with NotFound */
    ks_mutex_unlock(&k->api_lock);
    if (api == API_BOUND) {
        struct ks_pod *bound = make_pod(k, serial, p, variant_of(p), node);
        if (!bound)
            return -ENOMEM;
        int rc = ks_scheduler_update_pod(k->s, p->obj, bound);
        ks_pod_put(p->obj);
        p->obj = bound;
        if (rc < 0 && rc != -EEXIST)
            return rc;
    }
    int rc = ks_scheduler_delete_pod(k->s, p->obj);
    if (rc < 0 && rc != -ENOENT)
        return rc;
    return record_deleted(k, serial);
}

/* Apply the scheduler's Scheduled and Preempted events. */
static int drain_events(struct soak *k)
{
    ks_mutex_lock(&k->ev_lock);
    struct sevent *ev = k->ev;
    uint32_t n = k->nev, cap = k->cap_ev;
    k->ev = k->ev_spare; /* the callbacks fill the other buffer while this one is applied */
    k->cap_ev = k->cap_spare;
    k->nev = 0;
    k->ev_spare = ev;
    k->cap_spare = cap;
    ks_mutex_unlock(&k->ev_lock);
    int rc = 0;
    for (uint32_t i = 0; i < n && rc >= 0; i++) {
        uint64_t serial = ev[i].serial;
        if (serial >= k->npods)
            continue;
        struct spod *p = &k->pods[serial];
        if (ev[i].kind == KS_SCHED_SCHEDULED) {
            k->res->pods_bound++;
            if (p->state != SP_PENDING)
                continue; /* deleted meanwhile: the binding raced the deletion */
            rc = record_bound(k, serial, ev[i].node);
            if (rc == 1) {
                /* bound to a node deleted meanwhile: the pod garbage collector deletes it */
                k->res->pods_gc++;
                rc = delete_bound(k, serial);
            }
        } else {
            k->res->preemption_victims++;
            if (p->state == SP_DELETED)
                continue;
            /* the evictor removed it from the cache; the API deletion follows */
            rc = p->state == SP_BOUND ? delete_bound(k, serial) : delete_pending(k, serial);
        }
    }
    return rc < 0 ? rc : 0;
}

static uint32_t pick_kind(struct soak *k)
{
    unsigned x = (unsigned)(rnd(k) % 1000), acc = 0;
    for (uint32_t i = 0; i < NKINDS; i++) {
        acc += kinds[i].weight;
        if (x < acc)
            return i;
    }
    return 0;
}

static int create_pod(struct soak *k)
{
    int rc = grow_pods(k);
    if (rc < 0)
        return rc;
    uint64_t serial = k->npods;
    struct spod *p = &k->pods[serial];
    *p = (struct spod){.kind = (uint16_t)pick_kind(k), .group = (uint16_t)(rnd(k) % NGROUPS)};
    double pr = rnd01(k);
    p->priority = kinds[p->kind].priority >= 0 ? kinds[p->kind].priority
                  : pr < 0.05                  ? 1000
                  : pr < 0.25                  ? 100
                                               : 0;
    p->gated = rnd01(k) < 0.03;
    p->state = SP_PENDING;
    p->node = KS_ID_NONE;
    p->slot = UINT32_MAX;
    ks_mutex_lock(&k->api_lock);
    k->api_state[serial] = API_PENDING;
    k->api_attempts[serial] = 0;
    k->api_node[serial] = KS_ID_NONE;
    ks_mutex_unlock(&k->api_lock);
    if (!(p->obj = make_pod(k, serial, p, variant_of(p), KS_ID_EMPTY)))
        return k->err->set ? -EINVAL : -ENOMEM;
    p->milli_cpu = (int32_t)p->obj->requests.milli_cpu;
    k->npods++;
    p->idx = (uint32_t)k->pending.n;
    if ((rc = vec_push(&k->pending, serial)) < 0)
        return rc;
    if ((rc = ks_scheduler_add_pod(k->s, p->obj)) != 0)
        return rc < 0 ? rc : -EINVAL;
    k->res->pods_created++;
    return 0;
}

/* A pending pod changes: its gate is removed, or a label flips (a new object each time). */
static int update_pending(struct soak *k, uint64_t serial)
{
    struct spod *p = &k->pods[serial];
    ks_mutex_lock(&k->api_lock);
    bool still_pending = k->api_state[serial] == API_PENDING;
    ks_mutex_unlock(&k->api_lock);
    if (!still_pending)
        return 0; /* bound meanwhile: its next update is a bound pod's */
    bool ungate = p->gated;
    struct spod next = *p;
    next.gated = 0;
    next.rev = ungate ? p->rev : !p->rev;
    struct ks_pod *pod = make_pod(k, serial, &next, variant_of(&next), KS_ID_EMPTY);
    if (!pod)
        return -ENOMEM;
    int rc = ks_scheduler_update_pod(k->s, p->obj, pod);
    ks_pod_put(p->obj);
    p->obj = pod;
    p->gated = next.gated;
    p->rev = next.rev;
    if (rc < 0)
        return rc;
    if (ungate)
        k->res->pods_ungated++;
    else
        k->res->pods_updated++;
    return 0;
}

/* A bound pod's label flips: the informer's update of an assigned pod. */
static int update_bound(struct soak *k, uint64_t serial)
{
    struct spod *p = &k->pods[serial];
    /* the old object as the informer saw it, with its node: every field up to the reference count */
    struct ks_pod old;
    memset(&old, 0, sizeof(old));
    memcpy(&old, p->obj, offsetof(struct ks_pod, refs));
    old.node_name = p->node;
    p->rev = !p->rev;
    struct ks_pod *pod = make_pod(k, serial, p, variant_of(p), p->node);
    if (!pod)
        return -ENOMEM;
    int rc = ks_scheduler_update_pod(k->s, &old, pod);
    if (rc == -ENOENT) {
        ks_pod_put(pod); /* preempted meanwhile: its Preempted event is not applied yet */
        p->rev = !p->rev;
        return 0;
    }
    ks_pod_put(p->obj);
    p->obj = pod;
    if (rc < 0)
        return rc;
    k->res->bound_updates++;
    return 0;
}

static int update_node(struct soak *k, uint32_t slot)
{
    struct snode *sn = &k->nodes[slot];
    struct node_cfg c = sn->cfg;
    switch (rnd(k) % 5) {
    case 0:
        c.gold = !c.gold;
        break;
    case 1:
        c.tainted = !c.tainted;
        break;
    case 2:
        c.unschedulable = !c.unschedulable;
        break;
    case 3:
        if (c.cpu < 16)
            c.cpu += 2; /* never lowered: a shrunk node may legitimately be overcommitted */
        break;
    default:
        c.zone = (uint8_t)((c.zone + 1) % NZONES);
        break;
    }
    struct ks_node *node = make_node(k, sn->serial, &c);
    if (!node)
        return -EINVAL;
    int rc = ks_scheduler_node_event(k->s, sn->obj, node);
    if (rc < 0) {
        ks_node_destroy(node);
        return rc;
    }
    k->cluster_milli_cpu += ((int64_t)c.cpu - sn->cfg.cpu) * 1000;
    sn->obj = node;
    sn->cfg = c;
    k->res->nodes_updated++;
    return 0;
}

/* A node goes away; the pod garbage collector deletes its pods; a new node replaces it. */
static int delete_node(struct soak *k, uint32_t slot)
{
    struct snode *sn = &k->nodes[slot];
    int rc = ks_scheduler_node_event(k->s, sn->obj, NULL);
    if (rc < 0)
        return rc;
    k->cluster_milli_cpu -= (int64_t)sn->cfg.cpu * 1000;
    k->slot_of[sn->serial] = UINT32_MAX;
    sn->obj = NULL;
    k->res->nodes_deleted++;
    while (sn->n) {
        uint64_t serial = sn->pods[sn->n - 1];
        k->res->pods_gc++;
        if ((rc = delete_bound(k, serial)) < 0)
            return rc;
    }
    return add_node_in_slot(k, slot);
}

/* ---- checks ------------------------------------------------------------------------------------------ */

static void merge_report(struct ks_check_report *dst, const struct ks_check_report *src)
{
    for (uint32_t i = 0; i < src->nkept; i++)
        ks_check_fail(dst, "%s", src->kept[i]);
    dst->nviolations += src->nviolations - src->nkept;
}

static int check_now(struct soak *k)
{
    struct ks_check_report *r = &k->res->report;
    uint64_t before = r->nviolations;
    sched_pause(k);
    ks_sched_quiesce(k->s);
    int rc = drain_events(k);
    if (rc < 0)
        goto out;
    uint64_t live = k->pending.n + k->bound.n;
    ks_sched_check(k->s, KS_SCHED_CHECK_FIT, live, r);
    for (uint64_t i = 0; i < k->pending.n; i++)
        ks_sched_check_pod(k->s, k->pods[k->pending.v[i]].obj, KS_PLACE_QUEUED, KS_ID_NONE, r);
    for (uint64_t i = 0; i < k->bound.n; i++) {
        const struct spod *p = &k->pods[k->bound.v[i]];
        ks_sched_check_pod(k->s, p->obj, KS_PLACE_BOUND, p->node, r);
    }
    for (uint64_t i = 0; i < k->deleted.n; i++) {
        struct spod *p = &k->pods[k->deleted.v[i]];
        ks_sched_check_pod(k->s, p->obj, 0, KS_ID_NONE, r);
        ks_pod_put(p->obj);
        p->obj = NULL;
    }
    k->deleted.n = 0;
    ks_mutex_lock(&k->api_lock);
    merge_report(r, &k->api_report);
    memset(&k->api_report, 0, sizeof(k->api_report));
    ks_mutex_unlock(&k->api_lock);
    k->res->checks++;
    if (live > k->res->peak_live_pods)
        k->res->peak_live_pods = live;
    if (k->o.progress) {
        struct ks_queue_counts qc;
        ks_queue_count(ks_scheduler_queue(k->s), &qc);
        fprintf(k->o.progress,
                "soak: %.1fs check %" PRIu64 ": %" PRIu64 " bound so far, %" PRIu64 " live (%" PRIu64
                " on nodes, %" PRIu64 " pending: %u active, %u backoff, %u unschedulable, %u gated), "
                "cluster cpu %.0f%% requested, %" PRIu64 " new violations\n",
                (double)(ks__mono_ns() - k->start_ns) / 1e9, k->res->checks, k->res->pods_bound, live,
                k->bound.n, k->pending.n, qc.active, qc.backoff, qc.unschedulable - qc.gated, qc.gated,
                100.0 * (double)k->bound_milli_cpu /
                    (double)(k->cluster_milli_cpu ? k->cluster_milli_cpu : 1),
                r->nviolations - before);
        fflush(k->o.progress);
    }
out:
    sched_resume(k);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------------------ */

static int build_templates(struct soak *k)
{
    size_t cap = 4096 * NKINDS * NGROUPS * NVARIANTS, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    for (uint32_t kind = 0; kind < NKINDS; kind++) {
        for (uint32_t g = 0; g < NGROUPS; g++) {
            for (uint32_t v = 0; v < NVARIANTS; v++)
                len += (size_t)tmpl_doc(buf + len, cap - len, kind, g, v);
        }
    }
    int rc = ks_yaml_parse("soak-templates", buf, len, &k->tmpls, k->err);
    free(buf);
    if (rc == 0 && k->tmpls->ndocs != NKINDS * NGROUPS * NVARIANTS)
        rc = ks_error_set(k->err, "soak-templates", 0, NULL, "expected %zu templates, parsed %u",
                          NKINDS * NGROUPS * NVARIANTS, k->tmpls->ndocs);
    return rc;
}

static bool done(struct soak *k)
{
    if (k->res->pods_bound >= k->o.pods)
        return true;
    if ((double)(ks__mono_ns() - k->start_ns) / 1e9 >= k->o.seconds) {
        k->res->timed_out = true;
        return true;
    }
    return false;
}

/* One generator step: returns 1 when it did something, 0 when it had to wait. */
static int step(struct soak *k)
{
    int rc = drain_events(k);
    if (rc < 0)
        return rc;
    double x = rnd01(k);
    /* rarer operations first, each a fixed share of the steps */
    if (x < 0.004)
        return update_node(k, (uint32_t)(rnd(k) % k->nnodes)) < 0 ? -EINVAL : 1;
    if (x < 0.02 && k->bound.n) {
        rc = update_bound(k, k->bound.v[rnd(k) % k->bound.n]);
        return rc < 0 ? rc : 1;
    }
    if (x < 0.05 && k->pending.n) {
        rc = update_pending(k, k->pending.v[rnd(k) % k->pending.n]);
        return rc < 0 ? rc : 1;
    }
    if (x < 0.07 && k->pending.n) {
        k->res->pods_deleted_pending++;
        rc = delete_pending(k, k->pending.v[rnd(k) % k->pending.n]);
        return rc < 0 ? rc : 1;
    }
    /* make room: keep the bound pods' cpu requests, and their number, near 90% of the cluster's */
    if (k->bound.n && ((double)k->bound_milli_cpu > 0.9 * (double)k->cluster_milli_cpu ||
                       (double)k->bound.n > 0.9 * (double)k->nnodes * k->max_pods ||
                       (k->o.max_bound && k->bound.n > k->o.max_bound))) {
        k->res->pods_deleted_bound++;
        rc = delete_bound(k, k->bound.v[rnd(k) % k->bound.n]);
        return rc < 0 ? rc : 1;
    }
    if (k->pending.n < k->backlog) {
        if ((rc = create_pod(k)) < 0)
            return rc;
        if (rnd01(k) < k->o.node_delete_rate && (rc = delete_node(k, (uint32_t)(rnd(k) % k->nnodes))) < 0)
            return rc;
        return 1;
    }
    return 0;
}

static void fill_result(struct soak *k)
{
    struct ks_soak_result *r = k->res;
    ks_mutex_lock(&k->api_lock);
    r->bind_calls = k->bind_calls;
    r->bind_failures_injected = k->bind_failures;
    r->bind_failures_delayed = k->bind_delayed;
    r->bind_not_found = k->bind_not_found;
    ks_mutex_unlock(&k->api_lock);
    r->nominations = atomic_load(&k->nominated);
    r->unschedulable_attempts = atomic_load(&k->unschedulable);
    r->error_attempts = atomic_load(&k->errors);
    r->cycles = atomic_load(&k->cycles);
    r->indexed_cycles = ks_scheduler_indexed_cycles(k->s);
    r->wall_seconds = (double)(ks__mono_ns() - k->start_ns) / 1e9;
}

static int validate(const struct ks_soak_opts *o, struct ks_error *err)
{
    if (o->nodes < 1 || o->nodes > 1000000)
        return ks_error_set(err, NULL, 0, "--nodes", "must be between 1 and 1000000, got %u", o->nodes);
    if (o->pods < 1)
        return ks_error_set(err, NULL, 0, "--pods", "must be at least 1");
    if (!(o->seconds > 0))
        return ks_error_set(err, NULL, 0, "--seconds", "must be positive");
    if (!(o->bind_failure_rate >= 0 && o->bind_failure_rate < 1))
        return ks_error_set(err, NULL, 0, "--bind-failure-rate", "must be in [0, 1), got %g",
                            o->bind_failure_rate);
    if (!(o->node_delete_rate >= 0 && o->node_delete_rate <= 1))
        return ks_error_set(err, NULL, 0, "--node-delete-rate", "must be in [0, 1], got %g",
                            o->node_delete_rate);
    return 0;
}

static void teardown(struct soak *k)
{
    sched_stop(k);
    ks_scheduler_destroy(k->s);
    ks_cache_destroy(k->cache);
    for (uint64_t i = 0; i < k->npods; i++) {
        if (k->pods[i].obj)
            ks_pod_put(k->pods[i].obj);
    }
    for (uint32_t i = 0; i < k->nnodes; i++)
        free(k->nodes[i].pods);
    free(k->nodes);
    free(k->slot_of);
    free(k->pods);
    free(k->pending.v);
    free(k->bound.v);
    free(k->deleted.v);
    free(k->api_state);
    free(k->api_attempts);
    free(k->api_node);
    free(k->ev);
    free(k->ev_spare);
    ks_yaml_stream_destroy(k->tmpls);
    ks_config_destroy(k->cfg);
    pthread_cond_destroy(&k->ctl_cv);
    ks_mutex_destroy(&k->ctl_lock);
    ks_mutex_destroy(&k->ev_lock);
    ks_mutex_destroy(&k->api_lock);
}

int ks_soak_run(const struct ks_soak_opts *opts, struct ks_soak_result *res, struct ks_error *err)
{
    struct soak *k = calloc(1, sizeof(*k));
    int rc;
    memset(res, 0, sizeof(*res));
    if (!k)
        return -ENOMEM;
    if ((rc = validate(opts, err)) < 0) {
        free(k);
        return rc;
    }
    k->o = *opts;
    k->res = res;
    k->err = err;
    k->rng = mix(opts->seed + 1) | 1;
    k->max_pods = opts->max_pods_per_node ? opts->max_pods_per_node : 40;
    k->backlog = opts->nodes / 5 < 50 ? 50 : opts->nodes / 5 > 1000 ? 1000 : opts->nodes / 5;
    ks_mutex_init(&k->api_lock, KS_LOCK_SOAK_API);
    ks_mutex_init(&k->ev_lock, KS_LOCK_SOAK_EVENTS);
    ks_mutex_init(&k->ctl_lock, KS_LOCK_SOAK_CONTROL);
    pthread_cond_init(&k->ctl_cv, NULL);

    if ((rc = ks_config_load_default(&k->cfg)) < 0 || (rc = ks_cache_create(&k->cache)) < 0 ||
        (rc = build_templates(k)) < 0)
        goto out;
    struct ks_scheduler_opts so = {
        .config = k->cfg,
        .parallelism = opts->parallelism,
        .binders = opts->binders,
        .seed = opts->seed,
        .seeded = true,
        .no_index = opts->no_index,
        .on_event = on_event,
        .ctx = k,
        .flusher = true,
        .binder = {.bind = soak_bind, .ctx = k},
    };
    if ((rc = ks_scheduler_create(&so, k->cache, &k->s, err)) < 0)
        goto out;
    if (!(k->nodes = calloc(opts->nodes, sizeof(*k->nodes)))) {
        rc = -ENOMEM;
        goto out;
    }
    k->nnodes = opts->nodes;
    for (uint32_t i = 0; i < k->nnodes; i++) {
        if ((rc = add_node_in_slot(k, i)) < 0)
            goto out;
    }
    if ((rc = pthread_create(&k->sched_thread, NULL, sched_main, k)) != 0) {
        rc = -rc;
        goto out;
    }
    k->sched_started = true;
    k->start_ns = ks__mono_ns();
    uint64_t next_check = opts->check_every ? opts->check_every : UINT64_MAX;
    while (!done(k)) {
        int got = step(k);
        if (got < 0) {
            rc = got;
            goto out;
        }
        if (got) {
            res->events++;
        } else {
            usleep(200); /* the backlog is full and the cluster has room: let the scheduler work */
        }
        if (res->events >= next_check) {
            if ((rc = check_now(k)) < 0)
                goto out;
            next_check = res->events + opts->check_every;
        }
    }
    rc = check_now(k);
    fill_result(k);
out:
    if (rc < 0 && !err->set)
        ks_error_set(err, NULL, 0, NULL, "soak failed: %s", strerror(-rc));
    teardown(k);
    free(k);
    return rc;
}
