/*
 * summary.c - `ksched schedule --summary` (see summary.h).
 *
 * While the run goes, the scheduler's events update one record per pending pod (its node,
 * or its last FailedScheduling message) and the preemptions of its workload; each attempt
 * that fits nowhere leaves, per node, why that node could not take the pod, in three
 * classes: capacity (NodeResourcesFit), fixed node properties (NodeUnschedulable,
 * NodeName, TaintToleration, NodeAffinity: an emptier node would fail them the same), and
 * anything else (ports, spreading, affinity, volumes: what depends on where other pods
 * are). When the run is over, the cache's final snapshot gives each node's free room.
 *
 * The suggestions are arithmetic on that room, stated as such (what fits), not a second
 * run: they are made only for workloads whose pods read nothing of other pods (no host
 * ports, required spreading or pod (anti-)affinity, no volumes) and whose last failure was
 * capacity on every node that its fixed properties did not rule out.
 *   - more nodes: for every shape (allocatable) of node that the pods could use, how many
 *     pods one empty node of it holds; the fewest nodes of one shape that hold the pods left;
 *   - a smaller request: for each resource the pods request, the largest request at which
 *     the free room of the usable nodes (the workload's own placed pods taken out) holds
 *     every pod of the workload, other requests unchanged; cpu in millicores, memory and
 *     storage rounded down to whole Mi.
 */
#include "summary.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/json_write.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum node_class { NODE_USABLE, NODE_CAPACITY, NODE_FIXED };

/* Reasons a table lists per workload, the most frequent first; the rest are counted. */
#define KS_SUMMARY_TABLE_REASONS 5

struct pod_rec {
    const struct ks_pod *pod;
    uint32_t workload;
    uint32_t node;    /* interned node name when scheduled, else KS_ID_EMPTY */
    uint32_t message; /* interned last FailedScheduling message, KS_ID_EMPTY when none */
    bool scheduled;
};

struct victim {
    uint32_t pod;  /* interned "namespace/name" */
    uint32_t node; /* interned node name */
};

struct workload {
    char *name;          /* "ReplicaSet/web", or "Pod/web-*" for a template */
    uint32_t ns;         /* interned namespace */
    uint32_t npods;      /* its pods */
    bool by_capacity;    /* its pods read nothing of other pods (see above) */
    uint8_t *node_class; /* per node, at its last unschedulable attempt; NULL: none */
    bool other_failure;  /* that attempt failed somewhere for a reason of neither class */
    uint32_t nvictims, capvictims;
    struct victim *victims;
};

struct ks_summary {
    FILE *out;
    bool table;
    /* pending pods: records, and a table from pod pointer to record */
    uint32_t npods;
    struct pod_rec *pods;
    uint32_t pod_slots; /* power of two */
    uint32_t *pod_index;
    /* workloads, and a table from key to workload */
    uint32_t nworkloads, capworkloads;
    struct workload *workloads;
    uint32_t key_slots;
    char **keys;
    uint32_t *key_workload;
    /* nodes in input order: interned name, zone and instance type; a table from name */
    uint32_t nnodes;
    uint32_t *node_name, *node_zone, *node_type;
    uint32_t node_slots;
    uint32_t *node_index;
};

/* ---- tables ---------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint32_t slots_for(uint32_t n)
{
    uint32_t s = 16;
    while (s < 2 * n)
        s *= 2;
    return s;
}

static uint32_t pod_find(const struct ks_summary *s, const struct ks_pod *pod)
{
    for (uint32_t h = (uint32_t)mix((uintptr_t)pod) & (s->pod_slots - 1);; h = (h + 1) & (s->pod_slots - 1)) {
        uint32_t i = s->pod_index[h];
        if (i == UINT32_MAX || s->pods[i].pod == pod)
            return i;
    }
}

static uint32_t node_find(const struct ks_summary *s, uint32_t name)
{
    for (uint32_t h = (uint32_t)mix(name) & (s->node_slots - 1);; h = (h + 1) & (s->node_slots - 1)) {
        uint32_t i = s->node_index[h];
        if (i == UINT32_MAX || s->node_name[i] == name)
            return i;
    }
}

static uint64_t hash_str(const char *k)
{
    uint64_t h = 1469598103934665603ull;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h;
}

/* The slot of @key: the workload's, or the empty one where it goes. */
static uint32_t key_slot(const struct ks_summary *s, const char *key)
{
    for (uint32_t h = (uint32_t)hash_str(key) & (s->key_slots - 1);; h = (h + 1) & (s->key_slots - 1)) {
        if (!s->keys[h] || strcmp(s->keys[h], key) == 0)
            return h;
    }
}

/* ---- workloads ------------------------------------------------------------------------------- */

static const struct ks_owner_ref *controller_of(const struct ks_object_meta *m)
{
    for (uint32_t i = 0; i < m->nowners; i++) {
        if (m->owners[i].controller)
            return &m->owners[i];
    }
    return m->nowners ? &m->owners[0] : NULL;
}

/* The ReplicaSet @name of namespace @ns in @objs, or NULL. */
static const struct ks_replica_set *replica_set(const struct ks_objects *objs, uint32_t ns, const char *name)
{
    struct ks_replica_set **rs = (struct ks_replica_set **)objs->of[KS_KIND_REPLICA_SET].items;
    for (uint32_t i = 0; i < ks_objects_count(objs, REPLICA_SET); i++) {
        if (rs[i]->meta.namespace_id == ns && strcmp(rs[i]->meta.name, name) == 0)
            return rs[i];
    }
    return NULL;
}

/*
 * The key of @pod's workload into *@key (malloc'd), and its name for an owner (*@name,
 * malloc'd; NULL for a template, named when the run ends).
 */
static int workload_key(const struct ks_objects *objs, const struct ks_pod *pod, char **key, char **name)
{
    size_t len;
    const struct ks_object_meta *m = &pod->meta;
    const struct ks_owner_ref *owner = controller_of(m);
    FILE *k = open_memstream(key, &len);
    *name = NULL;
    if (!k)
        return -ENOMEM;
    fprintf(k, "%s\n", ks_intern_str(m->namespace_id));
    if (owner) {
        const char *kind = owner->kind ? owner->kind : "", *oname = owner->name ? owner->name : "";
        const struct ks_replica_set *rs =
            strcmp(kind, "ReplicaSet") == 0 ? replica_set(objs, m->namespace_id, oname) : NULL;
        const struct ks_owner_ref *up = rs ? controller_of(&rs->meta) : NULL;
        if (up && up->kind && up->name)
            kind = up->kind, oname = up->name;
        fprintf(k, "owner %s/%s", kind, oname);
        if ((*name = malloc(strlen(kind) + strlen(oname) + 2)))
            sprintf(*name, "%s/%s", kind, oname);
    } else {
        /* one template: labels, requests, priority, scheduler and node selector */
        fprintf(k, "template %s %" PRId32 " cpu=%" PRId64 " mem=%" PRId64 " eph=%" PRId64,
                ks_intern_str(pod->scheduler_name), pod->priority, pod->requests.milli_cpu,
                pod->requests.memory, pod->requests.ephemeral_storage);
        for (uint32_t i = 0; i < pod->requests.nscalar; i++)
            fprintf(k, " %s=%" PRId64, ks_intern_str(pod->requests.scalar[i].name),
                    pod->requests.scalar[i].value);
        for (uint32_t i = 0; i < m->labels.n; i++)
            fprintf(k, " l:%s=%s", ks_intern_str(m->labels.items[i].key),
                    ks_intern_str(m->labels.items[i].value));
        for (uint32_t i = 0; i < pod->node_selector.n; i++)
            fprintf(k, " s:%s=%s", ks_intern_str(pod->node_selector.items[i].key),
                    ks_intern_str(pod->node_selector.items[i].value));
    }
    if (fclose(k) != 0 || (owner && !*name)) {
        free(*key);
        free(*name);
        *key = *name = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* Whether @pod's Filter outcome on a node depends on that node alone (see the head comment). */
static bool reads_no_other_pods(const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < pod->nspread; i++) {
        if (pod->spread[i].when_unsatisfiable == KS_DO_NOT_SCHEDULE)
            return false;
    }
    if ((pod->affinity.pod_affinity && pod->affinity.pod_affinity->nrequired) ||
        (pod->affinity.pod_anti_affinity && pod->affinity.pod_anti_affinity->nrequired) || pod->nvolumes ||
        pod->host_network)
        return false;
    for (uint32_t c = 0; c < pod->ncontainers; c++) {
        for (uint32_t p = 0; p < pod->containers[c].nports; p++) {
            if (pod->containers[c].ports[p].host_port)
                return false;
        }
    }
    return true;
}

static int add_pod(struct ks_summary *s, const struct ks_objects *objs, const struct ks_pod *pod)
{
    char *key, *name;
    int rc = workload_key(objs, pod, &key, &name);
    if (rc < 0)
        return rc;
    uint32_t slot = key_slot(s, key);
    if (!s->keys[slot]) {
        if (s->nworkloads == s->capworkloads) {
            uint32_t cap = s->capworkloads ? s->capworkloads * 2 : 16;
            struct workload *w = realloc(s->workloads, cap * sizeof(*w));
            if (!w) {
                free(key);
                free(name);
                return -ENOMEM;
            }
            s->workloads = w;
            s->capworkloads = cap;
        }
        s->workloads[s->nworkloads] = (struct workload){
            .name = name, .ns = pod->meta.namespace_id, .by_capacity = reads_no_other_pods(pod)};
        s->keys[slot] = key;
        s->key_workload[slot] = s->nworkloads++;
    } else {
        free(key);
        free(name);
    }
    uint32_t w = s->key_workload[slot];
    s->workloads[w].npods++;
    s->pods[s->npods] =
        (struct pod_rec){.pod = pod, .workload = w, .node = KS_ID_EMPTY, .message = KS_ID_EMPTY};
    uint32_t h = (uint32_t)mix((uintptr_t)pod) & (s->pod_slots - 1);
    while (s->pod_index[h] != UINT32_MAX)
        h = (h + 1) & (s->pod_slots - 1);
    s->pod_index[h] = s->npods++;
    return 0;
}

static bool pending(const struct ks_pod *pod)
{
    return pod->node_name == KS_ID_EMPTY && pod->phase != KS_PHASE_SUCCEEDED && pod->phase != KS_PHASE_FAILED;
}

int ks_summary_create(const struct ks_objects *objs, bool table, FILE *out, struct ks_summary **res)
{
    struct ks_summary *s = calloc(1, sizeof(*s));
    struct ks_pod **pods = ks_objects_pods(objs);
    struct ks_node **nodes = ks_objects_nodes(objs);
    uint32_t npending = 0, n = ks_objects_count(objs, NODE);
    int rc = -ENOMEM;

    *res = NULL;
    if (!s)
        return -ENOMEM;
    s->out = out;
    s->table = table;
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        npending += pending(pods[i]);
    s->pod_slots = s->key_slots = slots_for(npending);
    s->node_slots = slots_for(n);
    if (!(s->pods = calloc(npending ? npending : 1, sizeof(*s->pods))) ||
        !(s->pod_index = malloc(s->pod_slots * sizeof(*s->pod_index))) ||
        !(s->keys = calloc(s->key_slots, sizeof(*s->keys))) ||
        !(s->key_workload = calloc(s->key_slots, sizeof(*s->key_workload))) ||
        !(s->node_name = calloc(n ? n : 1, sizeof(uint32_t))) ||
        !(s->node_zone = calloc(n ? n : 1, sizeof(uint32_t))) ||
        !(s->node_type = calloc(n ? n : 1, sizeof(uint32_t))) ||
        !(s->node_index = malloc(s->node_slots * sizeof(*s->node_index))))
        goto err;
    memset(s->pod_index, 0xff, s->pod_slots * sizeof(*s->pod_index));
    memset(s->node_index, 0xff, s->node_slots * sizeof(*s->node_index));
    uint32_t zone = ks_intern("topology.kubernetes.io/zone"),
             legacy = ks_intern("failure-domain.beta.kubernetes.io/zone");
    uint32_t type = ks_intern("node.kubernetes.io/instance-type");
    for (uint32_t i = 0; i < n; i++) {
        s->node_name[i] = nodes[i]->name_id;
        s->node_zone[i] = s->node_type[i] = KS_ID_NONE;
        for (uint32_t l = 0; l < nodes[i]->meta.labels.n; l++) {
            const struct ks_label *lb = &nodes[i]->meta.labels.items[l];
            if (lb->key == zone || (lb->key == legacy && s->node_zone[i] == KS_ID_NONE))
                s->node_zone[i] = lb->value;
            else if (lb->key == type)
                s->node_type[i] = lb->value;
        }
        uint32_t h = (uint32_t)mix(s->node_name[i]) & (s->node_slots - 1);
        while (s->node_index[h] != UINT32_MAX)
            h = (h + 1) & (s->node_slots - 1);
        s->node_index[h] = i;
    }
    s->nnodes = n;
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++) {
        if (pending(pods[i]) && (rc = add_pod(s, objs, pods[i])) < 0)
            goto err;
    }
    *res = s;
    return 0;
err:
    ks_summary_destroy(s);
    return rc;
}

void ks_summary_destroy(struct ks_summary *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nworkloads; i++) {
        free(s->workloads[i].name);
        free(s->workloads[i].node_class);
        free(s->workloads[i].victims);
    }
    for (uint32_t i = 0; s->keys && i < s->key_slots; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->key_workload);
    free(s->workloads);
    free(s->pods);
    free(s->pod_index);
    free(s->node_name);
    free(s->node_zone);
    free(s->node_type);
    free(s->node_index);
    free(s);
}

/* ---- the run's reports ------------------------------------------------------------------------ */

static uint32_t pod_key(const struct ks_pod *pod)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ks_intern_str(pod->meta.namespace_id), pod->meta.name);
    return ks_intern(key);
}

void ks_summary_on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct ks_summary *s = ctx;
    const struct ks_pod *pod = ev->kind == KS_SCHED_PREEMPTED ? ev->by : ev->pod;
    uint32_t i = pod ? pod_find(s, pod) : UINT32_MAX;
    if (i == UINT32_MAX)
        return;
    struct pod_rec *r = &s->pods[i];
    switch (ev->kind) {
    case KS_SCHED_SCHEDULED:
        r->scheduled = true;
        r->node = ev->node;
        break;
    case KS_SCHED_UNSCHEDULABLE:
    case KS_SCHED_ERROR:
        r->scheduled = false;
        r->message = ks_intern(ev->message ? ev->message : "");
        break;
    case KS_SCHED_PREEMPTED: {
        struct workload *w = &s->workloads[r->workload];
        if (w->nvictims == w->capvictims) {
            uint32_t cap = w->capvictims ? w->capvictims * 2 : 4;
            struct victim *v = realloc(w->victims, cap * sizeof(*v));
            if (!v)
                return; /* the summary lacks it; the run goes on */
            w->victims = v;
            w->capvictims = cap;
        }
        w->victims[w->nvictims++] = (struct victim){pod_key(ev->pod), ev->node};
        break;
    }
    case KS_SCHED_NOMINATED:
        break;
    }
}

static enum node_class class_of(const struct ks_framework *fw, const struct ks_status *st, bool *other)
{
    const char *plugin = st->plugin != KS_NO_PLUGIN ? ks_framework_plugin_name(fw, st->plugin) : "";
    static const char *const fixed[] = {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"};
    if (strcmp(plugin, "NodeResourcesFit") == 0)
        return NODE_CAPACITY;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (strcmp(plugin, fixed[i]) == 0)
            return NODE_FIXED;
    }
    *other = true;
    return NODE_FIXED;
}

void ks_summary_on_unschedulable(void *ctx, const struct ks_attempt *a)
{
    struct ks_summary *s = ctx;
    uint32_t i = pod_find(s, a->pod);
    if (i == UINT32_MAX)
        return;
    struct workload *w = &s->workloads[s->pods[i].workload];
    if (!w->by_capacity)
        return;
    if (!w->node_class && !(w->node_class = malloc(s->nnodes ? s->nnodes : 1))) {
        w->by_capacity = false; /* out of memory: no suggestion rather than a wrong one */
        return;
    }
    const struct ks_diagnosis *d = a->diag;
    w->other_failure = false;
    uint8_t absent =
        d->absent.code != KS_SUCCESS ? class_of(a->fw, &d->absent, &w->other_failure) : NODE_FIXED;
    memset(w->node_class, absent, s->nnodes);
    for (uint32_t k = 0; k < d->nfailed; k++) {
        const struct ks_node_snap *node;
        const struct ks_status *st = ks_diagnosis_at(d, k, &node);
        uint32_t n = node_find(s, node->name);
        if (n != UINT32_MAX)
            w->node_class[n] = (uint8_t)class_of(a->fw, st, &w->other_failure);
    }
}

/* ---- suggestions ----------------------------------------------------------------------------- */

/* A node's room: allocatable, and what is free of it (for the pods of one workload). */
struct room {
    int64_t cpu, mem, eph, pods;
    const struct ks_node_snap *snap;
};

static int64_t scalar_of(const struct ks_resource_item *items, uint32_t n, uint32_t name)
{
    for (uint32_t i = 0; i < n; i++) {
        if (items[i].name == name)
            return items[i].value;
    }
    return 0;
}

/* How many pods requesting @req fit in @free (scalars from @alloc_scalar less @used_scalar). */
static int64_t pods_fitting(const struct ks_resources *req, int64_t cpu, int64_t mem, int64_t eph,
                            int64_t pods, const struct ks_node_snap *n, bool empty)
{
    int64_t k = pods;
    if (req->milli_cpu > 0 && cpu / req->milli_cpu < k)
        k = cpu / req->milli_cpu;
    if (req->memory > 0 && mem / req->memory < k)
        k = mem / req->memory;
    if (req->ephemeral_storage > 0 && eph / req->ephemeral_storage < k)
        k = eph / req->ephemeral_storage;
    for (uint32_t i = 0; i < req->nscalar; i++) {
        const struct ks_resource_item *r = &req->scalar[i];
        if (r->value <= 0)
            continue;
        int64_t alloc = n->node ? scalar_of(n->node->alloc.scalar, n->node->alloc.nscalar, r->name) : 0;
        int64_t used = empty ? 0 : scalar_of(n->req_scalar, n->nreq_scalar, r->name);
        if ((alloc - used) / r->value < k)
            k = (alloc - used) / r->value;
    }
    return k < 0 ? 0 : k;
}

/* "4 cpu, 16Gi memory, 110 pods": a node's allocatable for the suggestion's text. */
static void describe_shape(const struct ks_node_snap *n, char *buf, size_t len)
{
    int64_t gi = n->alloc_memory >> 30;
    if (n->alloc_milli_cpu % 1000 == 0)
        snprintf(buf, len, "%" PRId64 " cpu, ", n->alloc_milli_cpu / 1000);
    else
        snprintf(buf, len, "%" PRId64 "m cpu, ", n->alloc_milli_cpu);
    size_t at = strlen(buf);
    if (gi << 30 == n->alloc_memory)
        snprintf(buf + at, len - at, "%" PRId64 "Gi memory, %" PRId32 " pods", gi, n->alloc_pods);
    else
        snprintf(buf + at, len - at, "%" PRId64 "Mi memory, %" PRId32 " pods", n->alloc_memory >> 20,
                 n->alloc_pods);
}

static bool same_shape(const struct ks_node_snap *a, const struct ks_node_snap *b)
{
    if (a->alloc_milli_cpu != b->alloc_milli_cpu || a->alloc_memory != b->alloc_memory ||
        a->alloc_ephemeral != b->alloc_ephemeral || a->alloc_pods != b->alloc_pods)
        return false;
    const struct ks_resources *x = a->node ? &a->node->alloc : NULL, *y = b->node ? &b->node->alloc : NULL;
    uint32_t nx = x ? x->nscalar : 0, ny = y ? y->nscalar : 0;
    if (nx != ny)
        return false;
    for (uint32_t i = 0; i < nx; i++) {
        if (x->scalar[i].name != y->scalar[i].name || x->scalar[i].value != y->scalar[i].value)
            return false;
    }
    return true;
}

struct suggestion {
    char text[256];
    char kind[16];             /* "nodes" or "request" */
    char detail[64];           /* the node a new one would be like, or the resource */
    int64_t count;             /* nodes */
    char at_most[32], now[32]; /* the request: the one that fits, the pods' own */
};

static int cmp_shape(const void *a, const void *b, void *ctx)
{
    const struct room *room = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const struct ks_node_snap *p = room[x].snap, *q = room[y].snap;
    if (!p || !q || same_shape(p, q))
        return (p != NULL) - (q != NULL) ?: (x > y) - (x < y);
#define KS_CMP(f)                                                                                            \
    if (p->f != q->f)                                                                                        \
        return p->f < q->f ? -1 : 1;
    KS_CMP(alloc_milli_cpu)
    KS_CMP(alloc_memory)
    KS_CMP(alloc_ephemeral)
    KS_CMP(alloc_pods)
#undef KS_CMP
    /* the scalars differ: by their count, then item by item */
    const struct ks_resources *u = &p->node->alloc, *v = &q->node->alloc;
    if (u->nscalar != v->nscalar)
        return u->nscalar < v->nscalar ? -1 : 1;
    for (uint32_t i = 0; i < u->nscalar; i++) {
        if (u->scalar[i].name != v->scalar[i].name)
            return u->scalar[i].name < v->scalar[i].name ? -1 : 1;
        if (u->scalar[i].value != v->scalar[i].value)
            return u->scalar[i].value < v->scalar[i].value ? -1 : 1;
    }
    return 0;
}

/* Each node's shape (its allocatable) as a number: *@shape[i]; returns how many shapes. */
static uint32_t shapes_of(const struct ks_summary *s, const struct room *room, uint32_t *shape,
                          uint32_t *order)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nnodes; i++)
        order[i] = i;
    qsort_r(order, s->nnodes, sizeof(*order), cmp_shape, (void *)room);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct ks_node_snap *a = room[order[i]].snap, *b = i ? room[order[i - 1]].snap : NULL;
        if (i == 0 || !a || !b || !same_shape(a, b))
            n++;
        shape[order[i]] = n - 1;
    }
    return n;
}

/*
 * More nodes: the fewest nodes of one shape the workload can use that hold the @left pods;
 * each shape is described by its first usable node in input order. @first: scratch, one per shape.
 */
static bool more_nodes(const struct ks_summary *s, const struct workload *w, const struct ks_pod *rep,
                       const struct room *room, const uint32_t *shape, uint32_t nshapes, uint32_t *first,
                       uint32_t left, struct suggestion *out)
{
    int64_t best = INT64_MAX;
    uint32_t best_node = UINT32_MAX;
    for (uint32_t i = 0; i < nshapes; i++)
        first[i] = UINT32_MAX;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (w->node_class[i] != NODE_FIXED && room[i].snap && first[shape[i]] == UINT32_MAX)
            first[shape[i]] = i;
    }
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (w->node_class[i] == NODE_FIXED || !room[i].snap || first[shape[i]] != i)
            continue;
        const struct ks_node_snap *n = room[i].snap;
        int64_t k = pods_fitting(&rep->requests, n->alloc_milli_cpu, n->alloc_memory, n->alloc_ephemeral,
                                 n->alloc_pods, n, true);
        if (k <= 0)
            continue;
        int64_t need = (left + k - 1) / k;
        if (need < best) {
            best = need;
            best_node = i;
        }
    }
    if (best_node == UINT32_MAX)
        return false;
    char shape_text[96];
    describe_shape(room[best_node].snap, shape_text, sizeof(shape_text));
    const char *type = s->node_type[best_node] != KS_ID_NONE ? ks_intern_str(s->node_type[best_node]) : NULL;
    snprintf(out->text, sizeof(out->text),
             "%" PRId64 " more %s%snode%s like %s (%s) would fit the %u pod%s left", best, type ? type : "",
             type ? " " : "", best == 1 ? "" : "s", ks_intern_str(s->node_name[best_node]), shape_text, left,
             left == 1 ? "" : "s");
    snprintf(out->kind, sizeof(out->kind), "nodes");
    snprintf(out->detail, sizeof(out->detail), "%s", ks_intern_str(s->node_name[best_node]));
    out->count = best;
    return true;
}

/* Pods of the workload the free room holds with request @v of resource @which (0 cpu, 1 memory, 2 eph). */
static int64_t fit_all(const struct ks_summary *s, const struct workload *w, const struct ks_pod *rep,
                       const struct room *room, int which, int64_t v)
{
    struct ks_resources req = rep->requests;
    if (which == 0)
        req.milli_cpu = v;
    else if (which == 1)
        req.memory = v;
    else
        req.ephemeral_storage = v;
    int64_t total = 0;
    for (uint32_t i = 0; i < s->nnodes && total < w->npods; i++) {
        if (w->node_class[i] != NODE_FIXED && room[i].snap)
            total +=
                pods_fitting(&req, room[i].cpu, room[i].mem, room[i].eph, room[i].pods, room[i].snap, false);
    }
    return total;
}

static void format_amount(int which, int64_t v, char *buf, size_t len)
{
    if (which == 0)
        snprintf(buf, len, v % 1000 == 0 ? "%" PRId64 : "%" PRId64 "m", v % 1000 == 0 ? v / 1000 : v);
    else if (v % (INT64_C(1) << 30) == 0)
        snprintf(buf, len, "%" PRId64 "Gi", v >> 30);
    else if (v % (INT64_C(1) << 20) == 0)
        snprintf(buf, len, "%" PRId64 "Mi", v >> 20);
    else
        snprintf(buf, len, "%" PRId64, v);
}

/* A smaller request of resource @which at which the free room holds every pod of the workload. */
static bool smaller_request(const struct ks_summary *s, const struct workload *w, const struct ks_pod *rep,
                            const struct room *room, int which, struct suggestion *out)
{
    static const char *const names[] = {"cpu", "memory", "ephemeral-storage"};
    int64_t now = which == 0   ? rep->requests.milli_cpu
                  : which == 1 ? rep->requests.memory
                               : rep->requests.ephemeral_storage;
    if (now <= 1 || fit_all(s, w, rep, room, which, 1) < w->npods)
        return false;
    /* in steps of 1m of cpu, of 1Mi of memory and storage (1 byte below 1Mi) */
    int64_t unit = which == 0 || now <= (INT64_C(1) << 20) ? 1 : INT64_C(1) << 20;
    int64_t lo = 1, hi = (now - 1) / unit; /* lo units fit; find the most that do */
    if (unit > 1 && fit_all(s, w, rep, room, which, unit) < w->npods)
        return false;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (fit_all(s, w, rep, room, which, mid * unit) >= w->npods)
            lo = mid;
        else
            hi = mid - 1;
    }
    lo *= unit;
    if (lo >= now)
        return false;
    char at[32], cur[32];
    format_amount(which, lo, at, sizeof(at));
    format_amount(which, now, cur, sizeof(cur));
    snprintf(out->text, sizeof(out->text),
             "a %s request of at most %s (now %s) would fit all %u in the room left", names[which], at, cur,
             w->npods);
    snprintf(out->kind, sizeof(out->kind), "request");
    snprintf(out->detail, sizeof(out->detail), "%s", names[which]);
    snprintf(out->at_most, sizeof(out->at_most), "%s", at);
    snprintf(out->now, sizeof(out->now), "%s", cur);
    return true;
}

/* ---- output ---------------------------------------------------------------------------------- */

struct count {
    uint32_t id, n;
};

static int cmp_count_id(const void *a, const void *b)
{
    const struct count *x = a, *y = b;
    return strcmp(ks_intern_str(x->id), ks_intern_str(y->id));
}

static int cmp_count_n(const void *a, const void *b)
{
    const struct count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return cmp_count_id(a, b);
}

static int cmp_count_num(const void *a, const void *b)
{
    const struct count *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Count the ids (KS_ID_NONE skipped) into @c, sorted by id's text: returns the distinct count. */
static uint32_t tally(const uint32_t *ids, uint32_t n, struct count *c)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ids[i] != KS_ID_NONE)
            c[m++] = (struct count){ids[i], 1};
    }
    qsort(c, m, sizeof(*c), cmp_count_num);
    uint32_t d = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (d && c[d - 1].id == c[i].id)
            c[d - 1].n++;
        else
            c[d++] = c[i];
    }
    qsort(c, d, sizeof(*c), cmp_count_id);
    return d;
}

/* The name of a template's workload: "Pod/" and its pods' common name prefix, "*" when several. */
static char *template_name(const struct ks_summary *s, const struct workload *w, const uint32_t *pods)
{
    const char *first = s->pods[pods[0]].pod->meta.name;
    size_t common = strlen(first);
    for (uint32_t i = 1; i < w->npods; i++) {
        const char *name = s->pods[pods[i]].pod->meta.name;
        size_t k = 0;
        while (k < common && name[k] == first[k])
            k++;
        common = k;
    }
    char *out = malloc(common + 8);
    if (out)
        sprintf(out, "Pod/%.*s%s", (int)common, first, w->npods > 1 ? "*" : "");
    return out;
}

struct report {
    const struct workload *w;
    const char *name;
    uint32_t scheduled;
    uint32_t nnodes, nzones, nreasons;
    struct count *nodes, *zones, *reasons;
    uint32_t nsuggestions;
    struct suggestion suggestions[4];
};

static void write_json(FILE *out, const struct report *r)
{
    const struct workload *w = r->w;
    fputs("{\"workload\":", out);
    ks_json_write_cstr(out, r->name);
    fputs(",\"namespace\":", out);
    ks_json_write_cstr(out, ks_intern_str(w->ns));
    fprintf(out, ",\"pods\":%u,\"scheduled\":%u,\"unschedulable\":%u,\"nodes\":{", w->npods, r->scheduled,
            w->npods - r->scheduled);
    for (uint32_t i = 0; i < r->nnodes; i++) {
        fputs(i ? "," : "", out);
        ks_json_write_cstr(out, ks_intern_str(r->nodes[i].id));
        fprintf(out, ":%u", r->nodes[i].n);
    }
    fputs("},\"zones\":{", out);
    for (uint32_t i = 0; i < r->nzones; i++) {
        fputs(i ? "," : "", out);
        ks_json_write_cstr(out, ks_intern_str(r->zones[i].id));
        fprintf(out, ":%u", r->zones[i].n);
    }
    fputs("},\"reasons\":[", out);
    for (uint32_t i = 0; i < r->nreasons; i++) {
        fprintf(out, "%s{\"pods\":%u,\"message\":", i ? "," : "", r->reasons[i].n);
        ks_json_write_cstr(out, ks_intern_str(r->reasons[i].id));
        fputc('}', out);
    }
    fputs("],\"preempted\":[", out);
    for (uint32_t i = 0; i < w->nvictims; i++) {
        fputs(i ? ",{\"pod\":" : "{\"pod\":", out);
        ks_json_write_cstr(out, ks_intern_str(w->victims[i].pod));
        fputs(",\"node\":", out);
        ks_json_write_cstr(out, ks_intern_str(w->victims[i].node));
        fputc('}', out);
    }
    fputs("],\"wouldFit\":[", out);
    for (uint32_t i = 0; i < r->nsuggestions; i++) {
        const struct suggestion *g = &r->suggestions[i];
        fprintf(out, "%s{\"kind\":\"%s\",", i ? "," : "", g->kind);
        if (strcmp(g->kind, "nodes") == 0) {
            fprintf(out, "\"nodes\":%" PRId64 ",\"like\":", g->count);
            ks_json_write_cstr(out, g->detail);
        } else {
            fputs("\"resource\":", out);
            ks_json_write_cstr(out, g->detail);
            fputs(",\"atMost\":", out);
            ks_json_write_cstr(out, g->at_most);
            fputs(",\"now\":", out);
            ks_json_write_cstr(out, g->now);
        }
        fputs(",\"text\":", out);
        ks_json_write_cstr(out, g->text);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

static void write_table_head(FILE *out, int width)
{
    fprintf(out, "%-*s  %-12s %6s %10s %8s %6s  %s\n", width, "WORKLOAD", "NAMESPACE", "PODS", "SCHEDULED",
            "PENDING", "NODES", "ZONES");
}

static void write_table_row(FILE *out, int width, const struct report *r)
{
    const struct workload *w = r->w;
    fprintf(out, "%-*s  %-12s %6u %10u %8u %6u  ", width, r->name, ks_intern_str(w->ns), w->npods,
            r->scheduled, w->npods - r->scheduled, r->nnodes);
    for (uint32_t i = 0; i < r->nzones; i++)
        fprintf(out, "%s%s=%u", i ? " " : "", ks_intern_str(r->zones[i].id), r->zones[i].n);
    fputs(r->nzones ? "\n" : "-\n", out);
    uint32_t shown = r->nreasons <= KS_SUMMARY_TABLE_REASONS + 1 ? r->nreasons : KS_SUMMARY_TABLE_REASONS,
             rest = 0;
    for (uint32_t i = 0; i < r->nreasons; i++) {
        if (i < shown)
            fprintf(out, "  %u not placed: %s\n", r->reasons[i].n, ks_intern_str(r->reasons[i].id));
        else
            rest += r->reasons[i].n;
    }
    if (rest)
        fprintf(out, "  %u not placed for %u other reasons (-o json lists them)\n", rest,
                r->nreasons - shown);
    if (w->nvictims) {
        fprintf(out, "  preempts %u pod%s:", w->nvictims, w->nvictims == 1 ? "" : "s");
        for (uint32_t i = 0; i < w->nvictims && i < 5; i++)
            fprintf(out, "%s %s (%s)", i ? "," : "", ks_intern_str(w->victims[i].pod),
                    ks_intern_str(w->victims[i].node));
        fputs(w->nvictims > 5 ? ", ...\n" : "\n", out);
    }
    for (uint32_t i = 0; i < r->nsuggestions; i++)
        fprintf(out, "  would fit: %s\n", r->suggestions[i].text);
}

/* The room of each node in the final snapshot for workload @w: free, with its own @pods taken out. */
static void room_of(const struct ks_summary *s, const struct workload *w, const uint32_t *pods,
                    const struct ks_snapshot *snap, struct room *room)
{
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct ks_node_snap *n = ks_snapshot_find(snap, s->node_name[i]);
        room[i] = (struct room){0};
        if (!n)
            continue;
        room[i] = (struct room){n->alloc_milli_cpu - n->req_milli_cpu, n->alloc_memory - n->req_memory,
                                n->alloc_ephemeral - n->req_ephemeral, (int64_t)n->alloc_pods - n->npods, n};
    }
    for (uint32_t p = 0; p < w->npods; p++) {
        const struct pod_rec *r = &s->pods[pods[p]];
        uint32_t n = r->scheduled ? node_find(s, r->node) : UINT32_MAX;
        if (n == UINT32_MAX || !room[n].snap)
            continue;
        room[n].cpu += r->pod->requests.milli_cpu;
        room[n].mem += r->pod->requests.memory;
        room[n].eph += r->pod->requests.ephemeral_storage;
        room[n].pods++;
    }
}

/* The pod records grouped by workload, input order kept within each: *@start[w] is w's first. */
static int group(const struct ks_summary *s, uint32_t **order, uint32_t **start)
{
    uint32_t *o = malloc((s->npods ? s->npods : 1) * sizeof(*o));
    uint32_t *st = calloc(s->nworkloads + 1, sizeof(*st));
    if (!o || !st) {
        free(o);
        free(st);
        return -ENOMEM;
    }
    for (uint32_t w = 0; w < s->nworkloads; w++)
        st[w + 1] = st[w] + s->workloads[w].npods;
    for (uint32_t p = 0; p < s->npods; p++)
        o[st[s->pods[p].workload]++] = p;
    for (uint32_t w = s->nworkloads; w > 0; w--)
        st[w] = st[w - 1];
    st[0] = 0;
    *order = o;
    *start = st;
    return 0;
}

int ks_summary_finish(struct ks_summary *s, struct ks_cache *cache)
{
    uint32_t *nodes = malloc((s->npods ? s->npods : 1) * sizeof(*nodes));
    uint32_t *zones = malloc((s->npods ? s->npods : 1) * sizeof(*zones));
    uint32_t *reasons = malloc((s->npods ? s->npods : 1) * sizeof(*reasons));
    struct count *counts = malloc(3 * (s->npods ? s->npods : 1) * sizeof(*counts));
    struct room *room = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*room));
    uint32_t *shape = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*shape));
    uint32_t *scratch = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*scratch));
    struct report *reports = calloc(s->nworkloads ? s->nworkloads : 1, sizeof(*reports));
    char **names = calloc(s->nworkloads ? s->nworkloads : 1, sizeof(*names));
    uint32_t *order = NULL, *start = NULL;
    int rc = -ENOMEM, width = 8;

    if (!nodes || !zones || !reasons || !counts || !room || !shape || !scratch || !reports || !names ||
        group(s, &order, &start) < 0 || ks_cache_refresh(cache) < 0)
        goto out;
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(cache);
    for (uint32_t i = 0; i < s->nnodes; i++)
        room[i] = (struct room){.snap = ks_snapshot_find(snap, s->node_name[i])};
    uint32_t nshapes = shapes_of(s, room, shape, scratch);
    /* a pod no cycle took: the scheduler reported nothing of it */
    uint32_t never =
        ks_intern("not attempted: held by a scheduling gate, being deleted, or no profile serves "
                  "its schedulerName");
    struct count *c = counts;
    for (uint32_t wi = 0; wi < s->nworkloads; wi++) {
        struct workload *w = &s->workloads[wi];
        struct report *r = &reports[wi];
        const uint32_t *pods = order + start[wi];
        uint32_t np = 0, nr = 0;
        r->w = w;
        if (!(r->name = w->name) && !(r->name = names[wi] = template_name(s, w, pods))) {
            ks_rcu_read_unlock();
            goto out;
        }
        for (uint32_t p = 0; p < w->npods; p++) {
            const struct pod_rec *pr = &s->pods[pods[p]];
            if (pr->scheduled) {
                uint32_t n = node_find(s, pr->node);
                nodes[np] = pr->node;
                zones[np++] = n != UINT32_MAX ? s->node_zone[n] : KS_ID_NONE;
            } else {
                reasons[nr++] = pr->message != KS_ID_EMPTY ? pr->message : never;
            }
        }
        r->scheduled = np;
        r->nodes = c;
        r->nnodes = tally(nodes, np, c);
        c += r->nnodes;
        r->zones = c;
        r->nzones = tally(zones, np, c);
        c += r->nzones;
        r->reasons = c;
        r->nreasons = tally(reasons, nr, c);
        qsort(r->reasons, r->nreasons, sizeof(*r->reasons), cmp_count_n);
        c += r->nreasons;
        if (nr && w->by_capacity && w->node_class && !w->other_failure) {
            const struct ks_pod *rep = s->pods[pods[0]].pod;
            room_of(s, w, pods, snap, room);
            if (more_nodes(s, w, rep, room, shape, nshapes, scratch, nr, &r->suggestions[r->nsuggestions]))
                r->nsuggestions++;
            for (int which = 0; which < 3; which++) {
                if (smaller_request(s, w, rep, room, which, &r->suggestions[r->nsuggestions]))
                    r->nsuggestions++;
            }
        }
        if ((int)strlen(r->name) > width)
            width = (int)strlen(r->name);
    }
    ks_rcu_read_unlock();
    if (s->table && s->nworkloads)
        write_table_head(s->out, width);
    for (uint32_t wi = 0; wi < s->nworkloads; wi++) {
        if (s->table)
            write_table_row(s->out, width, &reports[wi]);
        else
            write_json(s->out, &reports[wi]);
    }
    rc = fflush(s->out) == 0 && !ferror(s->out) ? 0 : -EIO;
out:
    for (uint32_t i = 0; names && i < s->nworkloads; i++)
        free(names[i]);
    free(names);
    free(reports);
    free(room);
    free(shape);
    free(scratch);
    free(counts);
    free(reasons);
    free(zones);
    free(nodes);
    free(order);
    free(start);
    return rc;
}
