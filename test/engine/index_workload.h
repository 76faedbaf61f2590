/*
 * index_workload.h - a seeded generator of clusters and operation streams for the
 * signature index (index/): the same seed always gives the same workload, byte for byte.
 *
 * A workload is the manifests of the initial nodes, the objects the scheduler reads
 * (ReplicaSets, a StatefulSet, a ReplicationController and a Service, so that default
 * topology spreading selects some pods), and a list of operations: add a batch of
 * pending pods, run N scheduling cycles, add / update / delete a node, delete a pod,
 * move the clock. Each operation that creates objects carries their YAML, so every run
 * decodes objects of its own.
 *
 * The pods come in classes: templates shared by many pods (what the index serves) in
 * fixed roles, so that every seed covers cpu / memory / ephemeral storage / extended
 * resources, taints of every effect with and without tolerations, nodeSelectors,
 * required and preferred node affinity (In, NotIn, Gt, Exists), images present on some
 * nodes, host ports, a high priority that preempts, pods the index cannot serve
 * (required pod anti-affinity, DoNotSchedule topology spread constraints), and the
 * spread-scored pods it serves with the spread score added per cycle: default spreading
 * through the workload (of several) that owns each pod or a Service, and ScheduleAnyway
 * constraints of their own over the hostname and the zone, or the zone alone; plus
 * one-off pods drawn feature by feature. Nodes come in three shapes and carry zones
 * (four, and some nodes none), pools, disks, generations, images, GPUs and taints; the
 * operations add and delete nodes, change labels (a zone moves, goes and comes back),
 * taints, images and allocatable, cordon and uncordon, and delete bound and pending pods.
 *
 * Header only (static inline): any test, stress driver or benchmark includes it.
 * Nothing here touches the scheduler; the caller applies the operations.
 */
#ifndef KSCHED_TEST_INDEX_WORKLOAD_H
#define KSCHED_TEST_INDEX_WORKLOAD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growable text buffer ---- */

struct iw_buf {
    char *p;
    size_t len, cap;
};

/* iw_printf - append formatted text to @b (aborts when out of memory: test code). */
__attribute__((format(printf, 2, 3))) static inline void iw_printf(struct iw_buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            abort();
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            abort();
        b->p = p;
        b->cap = cap;
    }
}

/* iw_take - the buffer's text (owned by the caller; "" when empty), and the buffer emptied. */
static inline char *iw_take(struct iw_buf *b)
{
    char *p = b->p ? b->p : strdup("");
    if (!p)
        abort();
    *b = (struct iw_buf){0};
    return p;
}

/* ---- the seeded generator (xorshift64) ---- */

static inline uint64_t iw_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* iw_below - uniform in [0, @n). */
static inline uint32_t iw_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(((iw_next(s) >> 32) * (uint64_t)n) >> 32);
}

/* iw_chance - true with probability @pct percent. */
static inline bool iw_chance(uint64_t *s, uint32_t pct)
{
    return iw_below(s, 100) < pct;
}

/* ---- the workload ---- */

enum iw_op_kind {
    IW_ADD_PODS,    /* yaml: pods first .. first + count - 1, pending */
    IW_SCHEDULE,    /* count: scheduling cycles (fewer when the queue runs dry) */
    IW_NODE_ADD,    /* node: a new node index; yaml: its manifest */
    IW_NODE_UPDATE, /* node: a live node; yaml: its new version; what: the change */
    IW_NODE_DELETE, /* node: a live node */
    IW_POD_DELETE,  /* pod: a pod added before (bound, pending or preempted by now) */
    IW_TICK,        /* count: milliseconds the clock moves; then backoffQ is flushed */
    IW_DRAIN,       /* schedule until nothing is left to do: the end of the stream */
};

struct iw_op {
    enum iw_op_kind kind;
    uint32_t count, first, node, pod;
    const char *what; /* IW_NODE_UPDATE: "labels", "taints", "cordon", ... (static) */
    char *yaml;       /* owned; NULL when the op creates no object */
};

struct iw_params {
    uint64_t seed;
    uint32_t nodes; /* initial nodes */
    uint32_t pods;  /* pods over the whole stream */
};

struct iw_workload {
    uint64_t seed;
    char *base_yaml;  /* the objects the scheduler reads (opts.objects) */
    char *nodes_yaml; /* the initial nodes, node-0 .. node-(nodes - 1) */
    uint32_t nnodes;  /* initial nodes */
    uint32_t nnode_ids;
    uint32_t npods;
    uint32_t nops, cap_ops;
    struct iw_op *ops;
    /* per pod: its template (0 .. IW_TEMPLATES - 1), or IW_TEMPLATES for a one-off pod */
    uint8_t *pod_class;
    char (*pod_names)[32]; /* per pod: its name */
    const char **pod_ns;   /* per pod: its namespace (static) */
};

/* Template roles: every seed has one template of each (with seeded parameters). */
enum iw_role {
    IW_T_PLAIN,       /* cpu and memory only */
    IW_T_SELECTOR,    /* nodeSelector pool, ephemeral storage */
    IW_T_GPU,         /* extended resource, tolerates the GPU and spot taints, nodeSelector */
    IW_T_ZONES,       /* required affinity zone In (2 of 3), pool In, disk Exists */
    IW_T_PREFERRED,   /* preferred node affinity (NormalizeScore differs by node) */
    IW_T_HOSTPORT,    /* a host port */
    IW_T_TOLERANT,    /* tolerates PreferNoSchedule and NoExecute taints (Exists) */
    IW_T_BIG,         /* big requests, generation Gt, pool NotIn */
    IW_T_ALL_TAINTS,  /* tolerates everything (operator Exists, no key) */
    IW_T_OWNED,       /* owned by one of iw_owners (per pod): default spreading selects it */
    IW_T_ANTI,        /* required pod anti-affinity on the hostname (unsignable) */
    IW_T_SPREAD,      /* a DoNotSchedule topology spread constraint on the zone (unsignable) */
    IW_T_PREEMPTOR,   /* priority 1000, big: preempts when the cluster is full */
    IW_T_ATTRACTED,   /* plain, but IW_T_ANTI pods prefer its zones: its scores depend on where they run */
    IW_T_ANYWAY,      /* ScheduleAnyway on the hostname and the zone (skews, selector per pod), zone Exists */
    IW_T_ANYWAY_ZONE, /* ScheduleAnyway on the zone alone, zone In three of the four */
    IW_TEMPLATES
};

/* Percent of the pods from each template; one-off pods are the other 20%. */
static const uint8_t iw_template_weight[IW_TEMPLATES] = {14, 7, 2, 7, 4, 3, 8, 5, 4, 9, 3, 3, 1, 2, 5, 3};

/*
 * The workloads of base_yaml that own IW_T_OWNED pods (one drawn per pod by weight, so
 * pods of one class differ in their counts): each selects its own app label. The pods of
 * the one with tier also carry tier: front, which the Service "front" selects along with
 * the IW_T_TOLERANT pods, so their default selectors count each other's pods.
 */
struct iw_owner {
    const char *api_version, *kind, *name; /* the pods' app label is the name too */
    uint8_t weight;                        /* percent of the IW_T_OWNED pods */
    bool tier;
};

static const struct iw_owner iw_owners[] = {
    {"apps/v1", "ReplicaSet", "web", 35, false}, {"apps/v1", "ReplicaSet", "shop", 25, true},
    {"apps/v1", "ReplicaSet", "api", 15, false}, {"apps/v1", "ReplicaSet", "auth", 5, false},
    {"apps/v1", "StatefulSet", "db", 12, false}, {"v1", "ReplicationController", "legacy", 8, false},
};
#define IW_OWNERS (sizeof(iw_owners) / sizeof(iw_owners[0]))

#define IW_IMAGES 6
#define IW_URGENT 12 /* pods of priority 2000 at the end of the stream */

static const char *const iw_image_names[IW_IMAGES] = {
    "registry.example/app-0:1.0", "registry.example/app-1:1.0", "registry.example/app-2:2.1",
    "registry.example/db:14",     "registry.example/cache:7",   "registry.example/ml:3.2",
};
static const int64_t iw_image_mb[IW_IMAGES] = {120, 300, 650, 900, 60, 800};

/* ---- the node model ---- */

enum {
    IW_TAINT_GPU = 1u << 0,   /* dedicated=gpu:NoSchedule */
    IW_TAINT_SPOT = 1u << 1,  /* spot=true:PreferNoSchedule */
    IW_TAINT_MAINT = 1u << 2, /* maintenance=soon:NoExecute */
    IW_TAINT_TEAM = 1u << 3,  /* team=ml:NoSchedule */
    IW_TAINT_FLAKY = 1u << 4, /* flaky:PreferNoSchedule (no value) */
};

#define IW_ZONES      4              /* zone-0 .. zone-3 (zone-3 is the small one) */
#define IW_ZONE_NONE  IW_ZONES       /* no zone label: the counts read the value "" */
#define IW_ZONE_EMPTY (IW_ZONES + 1) /* the zone label's value is "": the same domain */

struct iw_node {
    bool live, cordoned, gpu;
    uint8_t shape; /* 0: 2 cpu 4Gi, 1: 4 cpu 8Gi, 2: 8 cpu 16Gi */
    uint8_t zone;  /* 0 .. IW_ZONES - 1, IW_ZONE_NONE or IW_ZONE_EMPTY */
    uint8_t pool, disk, generation;
    uint8_t taints; /* IW_TAINT_* */
    uint8_t images; /* bit i: iw_image_names[i] */
    bool few_pods;  /* pods: 12 instead of 110 */
};

static const char *const iw_pools[3] = {"a", "b", "c"};
static const char *const iw_disks[2] = {"ssd", "hdd"};

static inline void iw_node_yaml(struct iw_buf *b, uint32_t id, const struct iw_node *n)
{
    static const char *const cpu[3] = {"2", "4", "8"};
    static const char *const mem[3] = {"4Gi", "8Gi", "16Gi"};
    static const char *const eph[3] = {"20Gi", "50Gi", "100Gi"};
    iw_printf(b,
              "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%u\n  labels:\n"
              "    kubernetes.io/hostname: node-%u\n",
              id, id);
    if (n->zone == IW_ZONE_EMPTY)
        iw_printf(b, "    topology.kubernetes.io/zone: \"\"\n");
    else if (n->zone != IW_ZONE_NONE)
        iw_printf(b, "    topology.kubernetes.io/zone: zone-%u\n", n->zone);
    iw_printf(b, "    pool: %s\n    disk: %s\n    generation: \"%u\"\n", iw_pools[n->pool], iw_disks[n->disk],
              n->generation);
    if (n->gpu)
        iw_printf(b, "    accelerator: gpu\n");
    iw_printf(b, "spec:\n");
    if (n->cordoned)
        iw_printf(b, "  unschedulable: true\n");
    if (n->taints) {
        iw_printf(b, "  taints:\n");
        if (n->taints & IW_TAINT_GPU)
            iw_printf(b, "  - {key: dedicated, value: gpu, effect: NoSchedule}\n");
        if (n->taints & IW_TAINT_SPOT)
            iw_printf(b, "  - {key: spot, value: \"true\", effect: PreferNoSchedule}\n");
        if (n->taints & IW_TAINT_MAINT)
            iw_printf(b, "  - {key: maintenance, value: soon, effect: NoExecute}\n");
        if (n->taints & IW_TAINT_TEAM)
            iw_printf(b, "  - {key: team, value: ml, effect: NoSchedule}\n");
        if (n->taints & IW_TAINT_FLAKY)
            iw_printf(b, "  - {key: flaky, effect: PreferNoSchedule}\n");
    }
    iw_printf(b, "status:\n  allocatable: {cpu: \"%s\", memory: %s, ephemeral-storage: %s, pods: \"%u\"%s}\n",
              cpu[n->shape], mem[n->shape], eph[n->shape], n->few_pods ? 12u : 110u,
              n->gpu ? ", example.com/gpu: \"4\"" : "");
    if (n->images) {
        iw_printf(b, "  images:\n");
        for (uint32_t i = 0; i < IW_IMAGES; i++) {
            if (n->images & (1u << i))
                iw_printf(b, "  - names: [%s]\n    sizeBytes: %lld\n", iw_image_names[i],
                          (long long)iw_image_mb[i] * 1000 * 1000);
        }
    }
}

static inline void iw_node_random(uint64_t *rng, struct iw_node *n)
{
    uint32_t shape = iw_below(rng, 10);
    *n = (struct iw_node){.live = true};
    n->shape = shape < 2 ? 0 : shape < 6 ? 1 : 2;
    uint32_t zone = iw_below(rng, 100);
    n->zone = (uint8_t)(zone < 2    ? IW_ZONE_NONE
                        : zone < 3  ? IW_ZONE_EMPTY
                        : zone < 12 ? 3
                                    : iw_below(rng, 3));
    n->pool = (uint8_t)(iw_chance(rng, 55) ? 0 : iw_chance(rng, 65) ? 1 : 2);
    n->disk = (uint8_t)iw_below(rng, 2);
    n->generation = (uint8_t)(1 + iw_below(rng, 5));
    n->gpu = iw_chance(rng, 7);
    if (n->gpu)
        n->taints |= iw_chance(rng, 85) ? IW_TAINT_GPU : 0;
    /* PreferNoSchedule taints are pool c's (the spot capacity) */
    if (n->pool == 2 && iw_chance(rng, 25))
        n->taints |= IW_TAINT_SPOT;
    if (n->pool == 2 && iw_chance(rng, 5))
        n->taints |= IW_TAINT_FLAKY;
    if (iw_chance(rng, 2))
        n->taints |= IW_TAINT_MAINT;
    if (iw_chance(rng, 3))
        n->taints |= IW_TAINT_TEAM;
    n->cordoned = iw_chance(rng, 2);
    n->few_pods = iw_chance(rng, 4);
    for (uint32_t i = 0; i < IW_IMAGES; i++) {
        if (iw_chance(rng, 30))
            n->images |= (uint8_t)(1u << i);
    }
}

/* ---- pods ---- */

/* One topology spread constraint of a pod's spec, counting the pods labelled app=@app. */
static inline void iw_spread_constraint(struct iw_buf *b, int skew, const char *key, const char *when,
                                        const char *app)
{
    iw_printf(b,
              "  - maxSkew: %d\n    topologyKey: %s\n    whenUnsatisfiable: %s\n"
              "    labelSelector: {matchLabels: {app: %s}}\n",
              skew, key, when, app);
}

/* ScheduleAnyway topology spread constraints of a pod's own */
enum iw_anyway {
    IW_ANYWAY_NONE,
    IW_ANYWAY_HOST_ZONE, /* on kubernetes.io/hostname and topology.kubernetes.io/zone */
    IW_ANYWAY_ZONE,      /* on topology.kubernetes.io/zone alone */
};

struct iw_pod_spec {
    const char *ns;
    char app[24];                 /* label app */
    bool tier;                    /* label tier: front (the Service selects it) */
    const struct iw_owner *owner; /* its controller, NULL: none */
    int32_t priority;
    const char *cpu, *mem, *eph; /* eph NULL: none */
    uint32_t gpus;
    int32_t image; /* -1: none */
    int32_t host_port;
    char selector[64];   /* nodeSelector body ("pool: a"), "": none */
    uint32_t tolerate;   /* IW_TAINT_* tolerated */
    bool tolerate_all;   /* operator Exists, no key */
    char required[160];  /* the required term's matchExpressions (a flow list), "": none */
    char preferred[160]; /* the preferred term's matchExpressions, "": none */
    int32_t preferred_weight;
    bool anti, spread;
    char affine_to[24]; /* a preferred pod affinity term (zone) to pods of this app, "": none */
    enum iw_anyway anyway;
    int32_t skew_host, skew_zone; /* the ScheduleAnyway constraints' maxSkew */
    char spread_app[24];          /* the app label they count */
};

static inline void iw_pod_yaml(struct iw_buf *b, const char *name, const struct iw_pod_spec *p)
{
    iw_printf(
        b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app: %s%s}\n",
        name, p->ns, p->app, p->tier ? ", tier: front" : "");
    if (p->owner)
        iw_printf(
            b,
            "  ownerReferences:\n  - {apiVersion: %s, kind: %s, name: %s, uid: %s-uid, controller: true}\n",
            p->owner->api_version, p->owner->kind, p->owner->name, p->owner->name);
    iw_printf(b, "spec:\n");
    if (p->priority)
        iw_printf(b, "  priority: %d\n", p->priority);
    if (p->selector[0])
        iw_printf(b, "  nodeSelector: {%s}\n", p->selector);
    if (p->tolerate || p->tolerate_all) {
        iw_printf(b, "  tolerations:\n");
        if (p->tolerate_all)
            iw_printf(b, "  - {operator: Exists}\n");
        if (p->tolerate & IW_TAINT_GPU)
            iw_printf(b, "  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}\n");
        if (p->tolerate & IW_TAINT_SPOT)
            iw_printf(b, "  - {key: spot, operator: Exists, effect: PreferNoSchedule}\n");
        if (p->tolerate & IW_TAINT_MAINT)
            iw_printf(
                b, "  - {key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 300}\n");
        if (p->tolerate & IW_TAINT_TEAM)
            iw_printf(b, "  - {key: team, value: ml}\n");
        if (p->tolerate & IW_TAINT_FLAKY)
            iw_printf(b, "  - {key: flaky, operator: Exists}\n");
    }
    if (p->required[0] || p->preferred[0] || p->anti || p->affine_to[0]) {
        iw_printf(b, "  affinity:\n");
        if (p->required[0] || p->preferred[0])
            iw_printf(b, "    nodeAffinity:\n");
        if (p->required[0])
            iw_printf(b,
                      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
                      "        - matchExpressions: %s\n",
                      p->required);
        if (p->preferred[0])
            iw_printf(b,
                      "      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: %d\n"
                      "        preference:\n          matchExpressions: %s\n",
                      p->preferred_weight, p->preferred);
        if (p->anti)
            iw_printf(b,
                      "    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                      "      - labelSelector: {matchLabels: {app: %s}}\n"
                      "        topologyKey: kubernetes.io/hostname\n",
                      p->app);
        if (p->affine_to[0])
            iw_printf(b,
                      "    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
                      "      - weight: 30\n        podAffinityTerm:\n"
                      "          labelSelector: {matchLabels: {app: %s}}\n"
                      "          topologyKey: topology.kubernetes.io/zone\n",
                      p->affine_to);
    }
    if (p->spread || p->anyway)
        iw_printf(b, "  topologySpreadConstraints:\n");
    if (p->spread)
        iw_spread_constraint(b, 2, "topology.kubernetes.io/zone", "DoNotSchedule", p->app);
    if (p->anyway == IW_ANYWAY_HOST_ZONE)
        iw_spread_constraint(b, p->skew_host, "kubernetes.io/hostname", "ScheduleAnyway", p->spread_app);
    if (p->anyway)
        iw_spread_constraint(b, p->skew_zone, "topology.kubernetes.io/zone", "ScheduleAnyway", p->spread_app);
    iw_printf(b, "  containers:\n  - name: c\n");
    if (p->image >= 0)
        iw_printf(b, "    image: %s\n", iw_image_names[p->image]);
    iw_printf(b, "    resources:\n      requests: {cpu: %s, memory: %s", p->cpu, p->mem);
    if (p->eph)
        iw_printf(b, ", ephemeral-storage: %s", p->eph);
    if (p->gpus)
        iw_printf(b, ", example.com/gpu: \"%u\"}\n      limits: {example.com/gpu: \"%u\"", p->gpus, p->gpus);
    iw_printf(b, "}\n");
    if (p->host_port)
        iw_printf(b, "    ports:\n    - {containerPort: 80, hostPort: %d}\n", p->host_port);
}

static const char *const iw_cpus[] = {"100m", "200m", "250m", "300m", "400m", "500m", "750m"};
static const char *const iw_mems[] = {"64Mi", "128Mi", "256Mi", "512Mi", "768Mi", "1Gi", "1536Mi"};
#define IW_NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define IW_SET(field, ...) snprintf((field), sizeof(field), __VA_ARGS__)

/* The template of @role, its parameters drawn from @rng. */
static inline void iw_template(uint64_t *rng, enum iw_role role, struct iw_pod_spec *t)
{
    static const char *const zone_pairs[3] = {"[zone-0, zone-1]", "[zone-1, zone-2]", "[zone-0, zone-2]"};
    static const char *const zone_triples[3] = {"[zone-0, zone-1, zone-3]", "[zone-1, zone-2, zone-3]",
                                                "[zone-0, zone-1, zone-2]"};
    *t = (struct iw_pod_spec){.ns = "default", .image = -1};
    IW_SET(t->app, "t%d", (int)role);
    t->cpu = iw_cpus[iw_below(rng, IW_NELEM(iw_cpus))];
    t->mem = iw_mems[iw_below(rng, IW_NELEM(iw_mems))];
    if (iw_chance(rng, 50))
        t->image = (int32_t)iw_below(rng, IW_IMAGES);
    switch (role) {
    case IW_T_PLAIN:
        t->tolerate = IW_TAINT_SPOT | IW_TAINT_FLAKY;
        break;
    case IW_T_SELECTOR:
        IW_SET(t->selector, "pool: %s", iw_chance(rng, 50) ? "a" : "b");
        t->eph = iw_chance(rng, 50) ? "1Gi" : "4Gi";
        t->ns = "batch";
        break;
    case IW_T_GPU:
        t->gpus = 1 + iw_below(rng, 2);
        t->tolerate = IW_TAINT_GPU | IW_TAINT_SPOT;
        IW_SET(t->selector, "accelerator: gpu");
        t->image = 5;
        break;
    case IW_T_ZONES:
        IW_SET(t->required,
               "[{key: topology.kubernetes.io/zone, operator: In, values: %s}, {key: pool, operator: In, "
               "values: [a, b]}, {key: disk, operator: Exists}]",
               zone_pairs[iw_below(rng, 3)]);
        break;
    case IW_T_PREFERRED:
        IW_SET(t->preferred, "[{key: disk, operator: In, values: [%s]}]", iw_disks[iw_below(rng, 2)]);
        t->preferred_weight = 1 + (int32_t)iw_below(rng, 100);
        break;
    case IW_T_HOSTPORT:
        t->host_port = 8080 + (int32_t)iw_below(rng, 4);
        IW_SET(t->selector, "pool: b");
        break;
    case IW_T_TOLERANT:
        /* the Service selects it: default spreading (its taints spare the index's totals) */
        t->tolerate = IW_TAINT_SPOT | IW_TAINT_MAINT | IW_TAINT_FLAKY;
        t->eph = "2Gi";
        t->tier = true;
        break;
    case IW_T_BIG:
        t->cpu = iw_chance(rng, 50) ? "1500m" : "2";
        t->mem = iw_chance(rng, 50) ? "4Gi" : "6Gi";
        IW_SET(
            t->required,
            "[{key: generation, operator: Gt, values: [\"%u\"]}, {key: pool, operator: NotIn, values: [%s]}]",
            1 + iw_below(rng, 2), iw_pools[iw_below(rng, 3)]);
        break;
    case IW_T_ALL_TAINTS:
        t->tolerate_all = true;
        break;
    case IW_T_OWNED:
        /* the owner (and so the app label) is drawn per pod; PreferNoSchedule taints would
         * keep the class off the index (TaintToleration's normalized score) */
        t->owner = &iw_owners[0];
        t->tolerate = IW_TAINT_SPOT | IW_TAINT_FLAKY;
        IW_SET(t->app, "web");
        break;
    case IW_T_ANTI:
        /* its preferred term also scores other pods (IW_T_ATTRACTED) by where these run */
        t->anti = true;
        IW_SET(t->affine_to, "t%d", (int)IW_T_ATTRACTED);
        break;
    case IW_T_SPREAD:
        t->spread = true;
        IW_SET(t->preferred, "[{key: generation, operator: Lt, values: [\"%u\"]}]", 3 + iw_below(rng, 2));
        t->preferred_weight = 50;
        break;
    case IW_T_PREEMPTOR:
        t->priority = 1000;
        t->cpu = "3";
        t->mem = "4Gi";
        break;
    case IW_T_ATTRACTED:
        break;
    case IW_T_ANYWAY:
        /* zone Exists: feasible nodes lacking the label would have the index decline the
         * window (constraints of its own: nodes must carry every key) */
        t->anyway = IW_ANYWAY_HOST_ZONE;
        t->skew_host = 1;
        t->skew_zone = 1;
        memcpy(t->spread_app, t->app, sizeof(t->spread_app)); /* the pods count their own template */
        t->tolerate = IW_TAINT_SPOT | IW_TAINT_FLAKY;
        IW_SET(t->required, "[{key: topology.kubernetes.io/zone, operator: Exists}]");
        break;
    case IW_T_ANYWAY_ZONE:
        t->anyway = IW_ANYWAY_ZONE;
        t->skew_zone = 1;
        memcpy(t->spread_app, t->app, sizeof(t->spread_app)); /* the pods count their own template */
        t->tolerate = IW_TAINT_SPOT | IW_TAINT_FLAKY;
        IW_SET(t->required, "[{key: topology.kubernetes.io/zone, operator: In, values: %s}]",
               zone_triples[iw_below(rng, 3)]);
        break;
    case IW_TEMPLATES:
        break;
    }
}

/* A one-off pod (named solo-@id): each feature drawn on its own. */
static inline void iw_one_off(uint64_t *rng, uint32_t id, uint32_t nnode_ids, struct iw_pod_spec *p)
{
    static const char *const cpus[] = {"50m", "150m", "400m", "600m", "1200m", "2500m"};
    static const char *const mems[] = {"32Mi", "200Mi", "300Mi", "900Mi", "2Gi", "3Gi"};
    static const char *const selectors[] = {"pool: a", "pool: c", "disk: ssd", "accelerator: gpu"};
    *p = (struct iw_pod_spec){.ns = iw_chance(rng, 70) ? "default" : "batch", .image = -1};
    IW_SET(p->app, "solo-%u", id);
    p->cpu = cpus[iw_below(rng, IW_NELEM(cpus))];
    p->mem = mems[iw_below(rng, IW_NELEM(mems))];
    if (iw_chance(rng, 20))
        p->eph = iw_chance(rng, 50) ? "500Mi" : "10Gi";
    if (iw_chance(rng, 40))
        p->image = (int32_t)iw_below(rng, IW_IMAGES);
    if (iw_chance(rng, 5)) {
        p->gpus = 1;
        p->tolerate |= IW_TAINT_GPU;
    }
    uint32_t pick = iw_below(rng, 100);
    if (pick < 12)
        IW_SET(p->selector, "%s", selectors[iw_below(rng, IW_NELEM(selectors))]);
    else if (pick < 17) /* pinned to one node: maybe deleted by now, maybe not added yet */
        IW_SET(p->selector, "kubernetes.io/hostname: node-%u", iw_below(rng, nnode_ids + 10));
    else if (pick < 27)
        IW_SET(p->required, "[{key: generation, operator: %s, values: [\"%u\"]}]",
               iw_chance(rng, 50) ? "Gt" : "Lt", 1 + iw_below(rng, 4));
    if (iw_chance(rng, 15)) {
        IW_SET(p->preferred, "[{key: topology.kubernetes.io/zone, operator: In, values: [zone-%u]}]",
               iw_below(rng, 3));
        p->preferred_weight = 1 + (int32_t)iw_below(rng, 100);
    }
    for (uint32_t bit = IW_TAINT_SPOT; bit <= IW_TAINT_FLAKY; bit <<= 1) {
        if (iw_chance(rng, 12))
            p->tolerate |= bit;
    }
    if (iw_chance(rng, 3))
        p->tolerate_all = true;
    if (iw_chance(rng, 4))
        p->host_port = 9000 + (int32_t)iw_below(rng, 3);
    if (iw_chance(rng, 3))
        p->priority = 500;
    if (iw_chance(rng, 6)) {
        /* counting the spread templates' pods; nodes lacking the zone stay feasible */
        p->anyway = iw_chance(rng, 50) ? IW_ANYWAY_HOST_ZONE : IW_ANYWAY_ZONE;
        p->skew_host = 1 + (int32_t)iw_below(rng, 2);
        p->skew_zone = 1 + (int32_t)iw_below(rng, 3);
        IW_SET(p->spread_app, "t%d", (int)(iw_chance(rng, 50) ? IW_T_ANYWAY : IW_T_ANYWAY_ZONE));
    }
}

/*
 * The pod of template @r drawn from it: an IW_T_OWNED pod's owner (and app label), an
 * IW_T_ANYWAY pod's skews and the app its constraints count. The signature holds neither,
 * so such pods share their template's class and differ in the counts alone.
 */
static inline void iw_template_pod(uint64_t *rng, enum iw_role r, struct iw_pod_spec *p)
{
    if (r == IW_T_OWNED) {
        uint32_t pick = iw_below(rng, 100), acc = 0, k;
        for (k = 0; k + 1 < IW_OWNERS; k++) {
            acc += iw_owners[k].weight;
            if (pick < acc)
                break;
        }
        p->owner = &iw_owners[k];
        p->tier = iw_owners[k].tier;
        IW_SET(p->app, "%s", iw_owners[k].name);
    } else if (r == IW_T_ANYWAY) {
        p->skew_host = iw_chance(rng, 75) ? 1 : 2;
        p->skew_zone = iw_chance(rng, 75) ? 1 : 3;
        if (iw_chance(rng, 20)) /* another template's pods: Service-selected and tier-labelled */
            IW_SET(p->spread_app, "t%d", (int)IW_T_TOLERANT);
    }
}

/* ---- the stream ---- */

static inline struct iw_op *iw_push(struct iw_workload *w, enum iw_op_kind kind)
{
    if (w->nops == w->cap_ops) {
        w->cap_ops = w->cap_ops ? w->cap_ops * 2 : 256;
        w->ops = realloc(w->ops, w->cap_ops * sizeof(*w->ops));
        if (!w->ops)
            abort();
    }
    struct iw_op *op = &w->ops[w->nops++];
    *op = (struct iw_op){.kind = kind};
    return op;
}

/* A random live node, cordoned or not as @cordoned says (-1: either), or UINT32_MAX when none. */
static inline uint32_t iw_live_node(uint64_t *rng, const struct iw_node *nodes, uint32_t n, int cordoned)
{
    for (uint32_t tries = 0; tries < 64; tries++) {
        uint32_t i = iw_below(rng, n);
        if (nodes[i].live && (cordoned < 0 || nodes[i].cordoned == cordoned))
            return i;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (nodes[i].live && (cordoned < 0 || nodes[i].cordoned == cordoned))
            return i;
    }
    return UINT32_MAX;
}

/* The cluster changes in turn (each with seeded parameters), so every kind comes in a short stream. */
enum iw_change {
    IW_C_NODE_ADD,
    IW_C_POD_DELETE,
    IW_C_NODE_DELETE,
    IW_C_LABELS,
    IW_C_TAINTS,
    IW_C_CORDON,
    IW_C_UNCORDON,
    IW_C_IMAGES,
    IW_C_ALLOCATABLE,
    IW_C_ZONE_OFF,  /* a node's zone label goes (or the node changes zones) */
    IW_C_ZONE_BACK, /* a node without one gets a zone label (back) */
};
static const uint8_t iw_change_turns[] = {
    IW_C_NODE_ADD,    IW_C_POD_DELETE, IW_C_LABELS,      IW_C_TAINTS,     IW_C_CORDON,
    IW_C_ZONE_OFF,    IW_C_POD_DELETE, IW_C_NODE_DELETE, IW_C_IMAGES,     IW_C_UNCORDON,
    IW_C_ALLOCATABLE, IW_C_TAINTS,     IW_C_ZONE_BACK,   IW_C_POD_DELETE, IW_C_LABELS,
};

/* A random live node without a zone (no label, or ""), or UINT32_MAX when none. */
static inline uint32_t iw_zoneless_node(uint64_t *rng, const struct iw_node *nodes, uint32_t n)
{
    uint32_t count = 0, at;
    for (uint32_t i = 0; i < n; i++)
        count += nodes[i].live && nodes[i].zone >= IW_ZONE_NONE;
    if (!count)
        return UINT32_MAX;
    at = iw_below(rng, count);
    for (uint32_t i = 0; i < n; i++) {
        if (nodes[i].live && nodes[i].zone >= IW_ZONE_NONE && at-- == 0)
            return i;
    }
    return UINT32_MAX;
}

/* Change @turn of the stream: a node comes, goes or changes, or a pod is deleted. */
static inline void iw_cluster_change(uint64_t *rng, uint32_t turn, struct iw_workload *w,
                                     struct iw_node *nodes, uint32_t *nnodes, uint32_t cap_nodes,
                                     bool *deleted, uint32_t added_pods)
{
    struct iw_buf b = {0};
    enum iw_change change = (enum iw_change)iw_change_turns[turn % IW_NELEM(iw_change_turns)];
    if (change == IW_C_NODE_ADD) {
        if (*nnodes == cap_nodes)
            return;
        uint32_t id = (*nnodes)++;
        iw_node_random(rng, &nodes[id]);
        iw_node_yaml(&b, id, &nodes[id]);
        struct iw_op *op = iw_push(w, IW_NODE_ADD);
        op->node = id;
        op->yaml = iw_take(&b);
        return;
    }
    if (change == IW_C_POD_DELETE) {
        /* any pod added so far: bound, pending, or preempted by now */
        uint32_t pod = iw_below(rng, added_pods);
        for (uint32_t tries = 0; deleted[pod] && tries < 16; tries++)
            pod = iw_below(rng, added_pods);
        if (deleted[pod])
            return;
        deleted[pod] = true;
        iw_push(w, IW_POD_DELETE)->pod = pod;
        return;
    }
    uint32_t id = change == IW_C_ZONE_BACK ? iw_zoneless_node(rng, nodes, *nnodes) : UINT32_MAX;
    if (id == UINT32_MAX)
        id = iw_live_node(rng, nodes, *nnodes, change == IW_C_CORDON ? 0 : change == IW_C_UNCORDON ? 1 : -1);
    if (id == UINT32_MAX)
        return;
    struct iw_node *n = &nodes[id];
    const char *what = "";
    switch (change) {
    case IW_C_NODE_ADD:
    case IW_C_POD_DELETE:
        break;
    case IW_C_NODE_DELETE:
        n->live = false;
        iw_push(w, IW_NODE_DELETE)->node = id;
        return;
    case IW_C_LABELS:
        what = "labels";
        switch (iw_below(rng, 4)) {
        case 0:
            n->pool = (uint8_t)((n->pool + 1 + iw_below(rng, 2)) % 3);
            break;
        case 1:
            n->disk ^= 1;
            break;
        case 2:
            n->generation = (uint8_t)(1 + iw_below(rng, 5));
            break;
        default: /* the node moves in the snapshot's zone-interleaved order */
            n->zone = (uint8_t)((n->zone + 1 + iw_below(rng, 2)) % 3);
            break;
        }
        break;
    case IW_C_ZONE_OFF:
    case IW_C_ZONE_BACK:
        /* the node moves in the zone-interleaved order, its pods to another domain's counts */
        if (n->zone >= IW_ZONE_NONE) {
            what = "labels +zone";
            n->zone = (uint8_t)iw_below(rng, IW_ZONES);
        } else if (change == IW_C_ZONE_OFF && iw_chance(rng, 70)) {
            what = "labels -zone"; /* the label goes, or its value does */
            n->zone = iw_chance(rng, 25) ? IW_ZONE_EMPTY : IW_ZONE_NONE;
        } else {
            what = "labels zone";
            n->zone = (uint8_t)((n->zone + 1 + iw_below(rng, IW_ZONES - 1)) % IW_ZONES);
        }
        break;
    case IW_C_TAINTS: {
        /* PreferNoSchedule taints stay in pool c (until a node changes pools) */
        static const uint8_t bits[] = {IW_TAINT_MAINT, IW_TAINT_TEAM, IW_TAINT_GPU, IW_TAINT_SPOT,
                                       IW_TAINT_FLAKY};
        what = "taints";
        n->taints ^= bits[iw_below(rng, n->pool == 2 ? 5 : 3)];
        break;
    }
    case IW_C_CORDON:
    case IW_C_UNCORDON:
        what = n->cordoned ? "uncordon" : "cordon";
        n->cordoned = !n->cordoned;
        break;
    case IW_C_IMAGES:
        what = "images";
        n->images ^= (uint8_t)(1u << iw_below(rng, IW_IMAGES));
        break;
    case IW_C_ALLOCATABLE:
        what = "allocatable";
        n->shape = (uint8_t)((n->shape + 1 + iw_below(rng, 2)) % 3);
        break;
    }
    iw_node_yaml(&b, id, n);
    struct iw_op *op = iw_push(w, IW_NODE_UPDATE);
    op->node = id;
    op->what = what;
    op->yaml = iw_take(&b);
}

/*
 * iw_generate - the workload of @p: the initial nodes, then batches of pods, each followed
 * by some scheduling cycles (a little fewer or more than the batch, so pods are pending when
 * the cluster changes) and a few cluster changes, the clock moved now and then; at the end
 * IW_DRAIN. Free with iw_free().
 */
static inline void iw_generate(const struct iw_params *p, struct iw_workload *w)
{
    uint64_t rng = p->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    for (int i = 0; i < 4; i++)
        iw_next(&rng);
    uint32_t cap_nodes = p->nodes + p->nodes / 4 + 16;
    struct iw_node *nodes = calloc(cap_nodes, sizeof(*nodes));
    bool *deleted = calloc(p->pods ? p->pods : 1, sizeof(*deleted));
    struct iw_buf b = {0};

    *w = (struct iw_workload){.seed = p->seed, .nnodes = p->nodes, .npods = p->pods};
    w->pod_class = calloc(p->pods ? p->pods : 1, 1);
    w->pod_names = calloc(p->pods ? p->pods : 1, sizeof(*w->pod_names));
    w->pod_ns = calloc(p->pods ? p->pods : 1, sizeof(*w->pod_ns));
    if (!nodes || !deleted || !w->pod_class || !w->pod_names || !w->pod_ns)
        abort();

    for (uint32_t k = 0; k < IW_OWNERS; k++) {
        const struct iw_owner *o = &iw_owners[k];
        iw_printf(&b,
                  "---\napiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: default, uid: %s-uid}\n",
                  o->api_version, o->kind, o->name, o->name);
        if (strcmp(o->kind, "ReplicationController") == 0)
            iw_printf(&b, "spec:\n  selector: {app: %s}\n", o->name);
        else
            iw_printf(&b, "spec:\n  selector: {matchLabels: {app: %s}}\n", o->name);
    }
    iw_printf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: front, namespace: default}\n"
                  "spec:\n  selector: {tier: front}\n  ports:\n  - {port: 80}\n");
    w->base_yaml = iw_take(&b);

    for (uint32_t i = 0; i < p->nodes; i++)
        iw_node_random(&rng, &nodes[i]);
    /* some node lacks the zone label and some has it empty, however few the nodes */
    bool none = false, empty = false;
    for (uint32_t i = 0; i < p->nodes; i++) {
        none |= nodes[i].zone == IW_ZONE_NONE;
        empty |= nodes[i].zone == IW_ZONE_EMPTY;
    }
    if (!none && p->nodes > 2)
        nodes[p->nodes / 3].zone = IW_ZONE_NONE;
    if (!empty && p->nodes > 2)
        nodes[p->nodes / 2].zone = IW_ZONE_EMPTY;
    for (uint32_t i = 0; i < p->nodes; i++)
        iw_node_yaml(&b, i, &nodes[i]);
    uint32_t nnodes = p->nodes;
    w->nodes_yaml = iw_take(&b);

    struct iw_pod_spec templates[IW_TEMPLATES];
    for (int r = 0; r < IW_TEMPLATES; r++)
        iw_template(&rng, (enum iw_role)r, &templates[r]);

    /* the last IW_URGENT pods come at once when the cluster is full: they preempt */
    uint32_t turn = 0, added = 0, per_template[IW_TEMPLATES] = {0},
             main_pods = p->pods > IW_URGENT ? p->pods - IW_URGENT : 0;
    bool ticked = false;
    while (added < main_pods) {
        uint32_t batch = 40 + iw_below(&rng, 160);
        if (batch > main_pods - added)
            batch = main_pods - added;
        struct iw_op *op = iw_push(w, IW_ADD_PODS);
        op->first = added;
        op->count = batch;
        for (uint32_t i = 0; i < batch; i++) {
            uint32_t id = added + i, pick = iw_below(&rng, 100), r, acc = 0;
            for (r = 0; r < IW_TEMPLATES; r++) {
                acc += iw_template_weight[r];
                if (pick < acc)
                    break;
            }
            struct iw_pod_spec spec;
            if (r < IW_TEMPLATES) {
                spec = templates[r];
                snprintf(w->pod_names[id], sizeof(w->pod_names[id]), "%s-%u", spec.app, per_template[r]++);
                iw_template_pod(&rng, (enum iw_role)r, &spec);
            } else {
                iw_one_off(&rng, id, nnodes, &spec);
                snprintf(w->pod_names[id], sizeof(w->pod_names[id]), "%s", spec.app);
            }
            w->pod_class[id] = (uint8_t)r;
            w->pod_ns[id] = spec.ns;
            iw_pod_yaml(&b, w->pod_names[id], &spec);
        }
        op->yaml = iw_take(&b);
        added += batch;

        iw_push(w, IW_SCHEDULE)->count = batch * (60 + iw_below(&rng, 70)) / 100;
        uint32_t changes = 1 + iw_below(&rng, 6);
        for (uint32_t c = 0; c < changes; c++)
            iw_cluster_change(&rng, turn++, w, nodes, &nnodes, cap_nodes, deleted, added);
        /* at least one tick before the second half of the stream */
        if (iw_chance(&rng, 40) || (!ticked && added * 2 >= main_pods)) {
            iw_push(w, IW_TICK)->count = iw_chance(&rng, 70) ? 1500 : 11000;
            ticked = true;
        }
    }
    if (added < p->pods) {
        struct iw_op *op = iw_push(w, IW_ADD_PODS);
        op->first = added;
        op->count = p->pods - added;
        for (uint32_t id = added; id < p->pods; id++) {
            struct iw_pod_spec spec = {
                .ns = "default", .image = -1, .priority = 2000, .cpu = "3", .mem = "4Gi"};
            IW_SET(spec.app, "urgent");
            snprintf(w->pod_names[id], sizeof(w->pod_names[id]), "urgent-%u", id - added);
            w->pod_class[id] = IW_TEMPLATES;
            w->pod_ns[id] = spec.ns;
            iw_pod_yaml(&b, w->pod_names[id], &spec);
        }
        op->yaml = iw_take(&b);
    }
    iw_push(w, IW_DRAIN);
    w->nnode_ids = nnodes;
    free(nodes);
    free(deleted);
}

static inline void iw_free(struct iw_workload *w)
{
    for (uint32_t i = 0; i < w->nops; i++)
        free(w->ops[i].yaml);
    free(w->ops);
    free(w->base_yaml);
    free(w->nodes_yaml);
    free(w->pod_class);
    free(w->pod_names);
    free(w->pod_ns);
    *w = (struct iw_workload){0};
}

#endif
