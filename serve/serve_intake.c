/*
 * serve_intake.c - informer events into the scheduler (serve/serve.h), as kube-scheduler's
 * pkg/scheduler/eventhandlers.go wires its informers:
 *   - Node add/update/delete -> the cache (ks_scheduler_node_event), which takes the node
 *     over; `nodes` remembers the object the cache holds for each name, because the cache
 *     wants that very object as the old one.
 *   - Pods: bound (spec.nodeName set) -> the cache; pending and served by a profile -> the
 *     queue; pending -> bound (bound by us or by someone else) leaves the queue for the
 *     cache; deletes (also the ones a relist synthesises with no object) leave either.
 *     Terminal pods (Succeeded/Failed) count as deleted, as the informer's field selector
 *     makes them look to kube-scheduler. `pods` holds one reference to the latest version
 *     of every pod, which is the "old" object of the next update.
 *   - Every other kind -> the struct ks_objects plugins read, and ks_scheduler_object_event
 *     for the kinds plugins register events of (PersistentVolume, PersistentVolumeClaim,
 *     StorageClass, CSINode, ResourceClaim, ResourceSlice, DeviceClass: the queue's
 *     resources of upstream's informer event handlers); a pod's
 *     status.resourceClaimStatuses change reaches the queue as the pod's update
 *     (UpdatePodGeneratedResourceClaim, queue/plugin_events.c).
 *
 * Until ks_intake_go_live() nothing reaches a scheduler: kube-scheduler does not schedule
 * before WaitForCacheSync either, and creating the scheduler only then lets the plugins
 * that index objects when they are created (volume binding, limits, namespaces) index
 * the synced set.
 *
 * The objects plugins read: plugins read them from the scheduling thread and its workers
 * during a cycle, so the intake thread never changes the vectors once live. It queues the
 * change (`pending`, under `lock`), counts it announced (ks_objects_note_queued, so a
 * plugin whose index lacks it can tell from any thread; changes applied at once before going
 * live are counted too, so objects->queued[kind] - objects->gen[kind] is always the number
 * of changes of the kind still queued) and then offers the event to the
 * queue (the hints read the objects the intake holds); the scheduling thread applies the
 * queued changes before every cycle (ks_intake_apply_objects, called from the scheduler's
 * on_cycle hook), so a pod the event moved sees the change when it is scheduled. A
 * replaced or deleted object may still be referenced where a plugin keeps it beyond a
 * cycle, so it is kept in `retired` until the intake is destroyed (after the scheduler):
 * storage objects and Namespaces (the indexes helper_volumes.c and inter-pod affinity's
 * namespace index build at start-up), and the resource.k8s.io kinds (DynamicResources'
 * claim tracker holds claims between its syncs and reads them from any thread in
 * PreEnqueue and its hints - which read an event's old claim while the scheduling thread
 * may apply its replacement -, and its device catalog borrows classes and slices until it
 * is rebuilt). Other kinds are read only through the vectors, per cycle, and are freed when
 * the scheduling thread replaces them. Retired objects are never freed while serving: the
 * memory of every version of those kinds the informers delivered is kept.
 * Each applied change bumps objects->gen[kind] (loader.h): the storage plugins and the
 * namespace index compare it at PreFilter and rebuild their indexes, so a claim created
 * after start-up is found by the next cycle (upstream's listers are live). Retired objects
 * still stay until the intake is destroyed: a binder thread may hold a pointer from the
 * index of an earlier cycle.
 *
 * Priority admission: a pod without spec.priority gets its PriorityClass's value (or the
 * global default's), as the API server's Priority admission plugin would have set it; the
 * manifest loader does the same for `ksched schedule`.
 */
#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/internal/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kind -> its destructor, and the event resource the queue knows it by (WILDCARD: none). */
#define KS_X(id, kind, versions, type, suffix)                                                               \
    static void destroy_##suffix(void *obj)                                                                  \
    {                                                                                                        \
        ks_##suffix##_destroy(obj);                                                                          \
    }
KS_KIND_MAP(KS_X)
#undef KS_X

static void (*const destroy_fn[KS_KIND_COUNT])(void *) = {
#define KS_X(id, kind, versions, type, suffix) [KS_KIND_##id] = destroy_##suffix,
    KS_KIND_MAP(KS_X)
#undef KS_X
};

static enum ks_event_resource resource_of(enum ks_kind k)
{
    switch (k) {
    case KS_KIND_PV:
        return KS_ER_PV;
    case KS_KIND_PVC:
        return KS_ER_PVC;
    case KS_KIND_STORAGE_CLASS:
        return KS_ER_STORAGE_CLASS;
    case KS_KIND_CSI_NODE:
        return KS_ER_CSI_NODE;
    case KS_KIND_RESOURCE_CLAIM:
        return KS_ER_RESOURCE_CLAIM;
    case KS_KIND_RESOURCE_SLICE:
        return KS_ER_RESOURCE_SLICE;
    case KS_KIND_DEVICE_CLASS:
        return KS_ER_DEVICE_CLASS;
    case KS_KIND_POD_GROUP:
        return KS_ER_POD_GROUP;
    default:
        return KS_ER_WILDCARD; /* no plugin registers for it: nothing to move */
    }
}

struct pending_change {
    struct pending_change *next;
    enum ks_kind kind;
    void *obj; /* NULL: deleted */
    char key[];
};

struct ks_intake {
    struct ks_objects *objects;
    struct ks_scheduler *s;
    struct ks_cache *cache;
    struct ks_serve_metrics *metrics; /* may be NULL */
    struct ks_serve_volumes *volumes; /* may be NULL: told of PVs, PVCs and pod deletions */
    bool live;

    /* intake thread */
    struct ks_smap pods;                  /* "ns/name" -> struct ks_pod * (one reference) */
    struct ks_smap nodes;                 /* name -> struct ks_node * (owned until live, then the cache's) */
    struct ks_smap latest[KS_KIND_COUNT]; /* other kinds: "ns/name" -> the newest object */
    /* before going live: node and pod keys in arrival order (strdup'ed), so the cache and the
     * queue receive them in the order of the server's lists, as `ksched schedule` does a file's */
    struct ks_objvec order[2];
    uint64_t events, skipped;

    /* scheduling thread once live (the intake thread before) */
    struct ks_smap index[KS_KIND_COUNT]; /* "ns/name" -> position in objects->of[kind] + 1 */
    struct ks_objvec retired;

    struct ks_mutex lock; /* pending */
    struct pending_change *pending, **pending_tail;
    uint32_t npending;
};

int ks_intake_create(struct ks_objects *objects, struct ks_intake **out)
{
    struct ks_intake *in = calloc(1, sizeof(*in));
    if (!in)
        return -ENOMEM;
    in->objects = objects;
    in->pending_tail = &in->pending;
    ks_mutex_init(&in->lock, KS_LOCK_SERVE_INTAKE);
    *out = in;
    return 0;
}

static void put_pod(void *pod)
{
    ks_pod_put(pod);
}

static void destroy_node_value(void *node)
{
    ks_node_destroy(node);
}

void ks_intake_destroy(struct ks_intake *in)
{
    if (!in)
        return;
    for (int i = 0; i < 2; i++) {
        for (uint32_t j = 0; j < in->order[i].n; j++)
            free(in->order[i].items[j]);
        free(in->order[i].items);
    }
    ks_smap_clear(&in->pods, put_pod);
    /* once live the cache owned the nodes (and has freed them) */
    ks_smap_clear(&in->nodes, in->live ? NULL : destroy_node_value);
    while (in->pending) {
        struct pending_change *c = in->pending;
        in->pending = c->next;
        if (c->obj)
            destroy_fn[c->kind](c->obj);
        free(c);
    }
    for (uint32_t k = 0; k < KS_KIND_COUNT; k++) {
        ks_smap_clear(&in->latest[k], NULL);
        ks_smap_clear(&in->index[k], NULL);
    }
    for (uint32_t i = 0; i < in->retired.n; i++) {
        /* each retired object starts with its kind (see retire) */
        struct {
            enum ks_kind kind;
            void *obj;
        } *r = in->retired.items[i];
        destroy_fn[r->kind](r->obj);
        free(r);
    }
    free(in->retired.items);
    ks_mutex_destroy(&in->lock);
    free(in);
}

static int vec_push(struct ks_objvec *v, void *item)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 16;
        void **items = realloc(v->items, cap * sizeof(*items));
        if (!items)
            return -ENOMEM;
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = item;
    return 0;
}

/* Kinds whose objects plugins may hold beyond a cycle (see the file comment). */
static bool kept_beyond_a_cycle(enum ks_kind k)
{
    return k == KS_KIND_PV || k == KS_KIND_PVC || k == KS_KIND_STORAGE_CLASS || k == KS_KIND_CSI_NODE ||
           k == KS_KIND_NAMESPACE || k == KS_KIND_RESOURCE_CLAIM || k == KS_KIND_RESOURCE_SLICE ||
           k == KS_KIND_DEVICE_CLASS || k == KS_KIND_RESOURCE_CLAIM_TEMPLATE;
}

/* Free @obj, or keep it until the intake is destroyed when a plugin may still hold it. */
static void retire(struct ks_intake *in, enum ks_kind kind, void *obj)
{
    if (!kept_beyond_a_cycle(kind)) {
        destroy_fn[kind](obj);
        return;
    }
    struct {
        enum ks_kind kind;
        void *obj;
    } *r = malloc(sizeof(*r));
    if (r) {
        r->kind = kind;
        r->obj = obj;
        if (vec_push(&in->retired, r) == 0)
            return;
        free(r);
    }
    /* out of memory: leaking the object is safe, freeing it might not be */
    fprintf(stderr, "ksched serve: out of memory retiring a %s\n", ks_kind_name(kind));
}

static void object_key(const void *obj, char *buf, size_t len)
{
    const struct ks_object_meta *m = obj; /* every kind starts with its metadata */
    snprintf(buf, len, "%s/%s", m->namespace_id == KS_ID_EMPTY ? "" : ks_intern_str(m->namespace_id),
             m->name);
}

/* Apply one change to the vectors plugins read. Context: the thread that owns them. */
static void apply_change(struct ks_intake *in, enum ks_kind kind, const char *key, void *obj)
{
    struct ks_objvec *v = &in->objects->of[kind];
    uintptr_t pos = (uintptr_t)ks_smap_get(&in->index[kind], key);
    in->objects->gen[kind]++; /* plugins indexing @kind rebuild at their next PreFilter (loader.h) */
    if (pos) {
        void *old = v->items[pos - 1];
        if (obj) {
            v->items[pos - 1] = obj;
        } else {
            /* swap the last object into the hole */
            ks_smap_del(&in->index[kind], key);
            void *last = v->items[--v->n];
            if (pos - 1 < v->n) {
                char lk[600];
                v->items[pos - 1] = last;
                object_key(last, lk, sizeof(lk));
                ks_smap_put(&in->index[kind], lk, (void *)pos, NULL);
            }
        }
        retire(in, kind, old);
        return;
    }
    if (!obj)
        return;
    if (vec_push(v, obj) < 0 || ks_smap_put(&in->index[kind], key, (void *)(uintptr_t)v->n, NULL) < 0) {
        if (v->n && v->items[v->n - 1] == obj)
            v->n--;
        fprintf(stderr, "ksched serve: out of memory keeping a %s\n", ks_kind_name(kind));
        retire(in, kind, obj);
    }
}

void ks_intake_apply_objects(struct ks_intake *in)
{
    ks_mutex_lock(&in->lock);
    struct pending_change *list = in->pending;
    in->pending = NULL;
    in->pending_tail = &in->pending;
    in->npending = 0;
    ks_mutex_unlock(&in->lock);
    while (list) {
        struct pending_change *c = list;
        list = c->next;
        apply_change(in, c->kind, c->key, c->obj);
        free(c);
    }
}

/* Another kind: recorded at once before going live, queued for the scheduling thread after. */
static void object_event(struct ks_intake *in, const struct ks_watch_event *ev, const char *key)
{
    void *old = ks_smap_get(&in->latest[ev->kind], key);
    void *obj = ev->type == KS_WATCH_DELETED ? NULL : ev->obj;

    if (ev->type == KS_WATCH_DELETED && ev->obj) {
        /* the last state the informer saw: ours is the one plugins may hold */
        destroy_fn[ev->kind](ev->obj);
    }
    if (!obj && !old) {
        in->skipped++;
        return;
    }
    if (obj ? ks_smap_put(&in->latest[ev->kind], key, obj, NULL) < 0
            : !ks_smap_del(&in->latest[ev->kind], key)) {
        destroy_fn[ev->kind](obj);
        in->skipped++;
        return;
    }
    /* the object stays valid until the intake is destroyed (retire keeps PVs and PVCs) */
    if (in->volumes)
        ks_serve_volumes_object(in->volumes, ev->kind, key, obj);
    if (!in->live) {
        /* counted too, so that queued[kind] - gen[kind] is always the changes still queued */
        ks_objects_note_queued(in->objects, ev->kind);
        apply_change(in, ev->kind, key, obj);
        return;
    }
    size_t klen = strlen(key);
    struct pending_change *c = malloc(sizeof(*c) + klen + 1);
    if (!c) {
        /* cannot hand it over safely: keep the old view, never free what plugins may read */
        fprintf(stderr, "ksched serve: out of memory queueing a %s change\n", ks_kind_name(ev->kind));
        if (obj)
            ks_smap_put(&in->latest[ev->kind], key, old, NULL);
        return;
    }
    c->next = NULL;
    c->kind = ev->kind;
    c->obj = obj;
    memcpy(c->key, key, klen + 1);
    ks_mutex_lock(&in->lock);
    *in->pending_tail = c;
    in->pending_tail = &c->next;
    in->npending++;
    ks_mutex_unlock(&in->lock);
    /* announced before the event: a hint or PreEnqueue it wakes knows its index may lack it */
    ks_objects_note_queued(in->objects, ev->kind);
    enum ks_event_resource r = resource_of(ev->kind);
    /* the hints read @old and @obj now: neither is freed before the intake (retired, or pending) */
    if (r != KS_ER_WILDCARD)
        ks_scheduler_object_event(in->s, r, old, obj);
}

/* Note a new node (0) or pod (1) key in arrival order (before going live). */
static int remember(struct ks_intake *in, int which, const char *key)
{
    char *k = strdup(key);
    if (!k || vec_push(&in->order[which], k) < 0) {
        free(k);
        return -ENOMEM;
    }
    return 0;
}

static void node_event(struct ks_intake *in, const struct ks_watch_event *ev)
{
    struct ks_node *old = ks_smap_get(&in->nodes, ev->name);
    struct ks_node *node = ev->type == KS_WATCH_DELETED ? NULL : ev->obj;

    if (ev->type == KS_WATCH_DELETED && ev->obj)
        ks_node_destroy(ev->obj);
    if (!node) {
        if (!old) {
            in->skipped++;
            return;
        }
        ks_smap_del(&in->nodes, ev->name);
        if (!in->live)
            ks_node_destroy(old);
        else if (ks_scheduler_node_event(in->s, old, NULL) < 0)
            in->skipped++;
        return;
    }
    if (!in->live) {
        if (ks_smap_put(&in->nodes, ev->name, node, NULL) < 0 || (!old && remember(in, 0, ev->name) < 0)) {
            if (ks_smap_get(&in->nodes, ev->name) == node)
                ks_smap_put(&in->nodes, ev->name, old, NULL);
            ks_node_destroy(node);
            in->skipped++;
            return;
        }
        if (old)
            ks_node_destroy(old);
        return;
    }
    int rc = ks_scheduler_node_event(in->s, old, node);
    if (rc < 0) {
        fprintf(stderr, "ksched serve: node %s: %s\n", ev->name, strerror(-rc));
        ks_node_destroy(node); /* the cache did not take it */
        in->skipped++;
        return;
    }
    if (ks_smap_put(&in->nodes, ev->name, node, NULL) < 0)
        fprintf(stderr, "ksched serve: out of memory tracking node %s\n", ev->name);
}

static void find_global_default(void *ctx, const char *key, void *value)
{
    const struct ks_priority_class **pc = ctx, *c = value;
    (void)key;
    if (c->global_default && !*pc)
        *pc = c;
}

/* Priority admission for a pod the server sent without spec.priority (see the file comment). */
static void admit_priority(struct ks_intake *in, struct ks_pod *pod)
{
    if (pod->has_priority)
        return;
    const struct ks_priority_class *pc = NULL;
    char key[300];
    if (pod->priority_class_name && pod->priority_class_name[0]) {
        snprintf(key, sizeof(key), "/%s", pod->priority_class_name);
        pc = ks_smap_get(&in->latest[KS_KIND_PRIORITY_CLASS], key);
        if (!pc) {
            if (strcmp(pod->priority_class_name, "system-cluster-critical") == 0)
                pod->priority = 2000000000;
            else if (strcmp(pod->priority_class_name, "system-node-critical") == 0)
                pod->priority = 2000001000;
            return;
        }
    } else {
        ks_smap_each(&in->latest[KS_KIND_PRIORITY_CLASS], find_global_default, &pc);
    }
    if (pc) {
        pod->priority = pc->value;
        if (!pod->has_preemption_policy && pc->has_preemption_policy)
            pod->preemption_policy = pc->preemption_policy;
    }
}

static bool terminal(const struct ks_pod *pod)
{
    return pod->phase == KS_PHASE_SUCCEEDED || pod->phase == KS_PHASE_FAILED;
}

static void pod_delete(struct ks_intake *in, const char *key)
{
    struct ks_pod *old = ks_smap_del(&in->pods, key);
    if (!old) {
        in->skipped++;
        return;
    }
    /* -ENOENT: a pending pod no profile serves was never queued */
    if (in->live)
        ks_scheduler_delete_pod(in->s, old);
    if (in->volumes)
        ks_serve_volumes_pod_deleted(in->volumes, key);
    ks_pod_put(old);
}

static void pod_event(struct ks_intake *in, const struct ks_watch_event *ev, const char *key)
{
    struct ks_pod *pod = ev->obj;
    if (ev->type == KS_WATCH_DELETED || (pod && terminal(pod))) {
        if (pod)
            ks_pod_put(pod);
        pod_delete(in, key);
        return;
    }
    admit_priority(in, pod);
    struct ks_pod *old = ks_smap_get(&in->pods, key);
    if (ks_smap_put(&in->pods, key, pod, NULL) < 0 || (!in->live && !old && remember(in, 1, key) < 0)) {
        if (ks_smap_get(&in->pods, key) == pod)
            ks_smap_put(&in->pods, key, old, NULL);
        ks_pod_put(pod);
        in->skipped++;
        return;
    }
    if (in->live) {
        int rc;
        if (!old) {
            rc = ks_scheduler_add_pod(in->s, pod);
            if (rc == 0 && pod->node_name == KS_ID_EMPTY && in->metrics)
                ks_serve_metrics_incoming(in->metrics, "PodAdd");
        } else {
            rc = ks_scheduler_update_pod(in->s, old, pod);
            if (rc == -EEXIST && old->node_name == KS_ID_EMPTY) {
                /*
                 * We bound it: the binder put the queued object in the cache already (its
                 * AssignedPod/Add was delivered then). The server's version replaces it.
                 */
                if ((rc = ks_cache_update_pod(in->cache, ks_pod_get(pod), pod->node_name)) < 0)
                    ks_pod_put(pod);
            }
        }
        if (rc < 0 && rc != -EEXIST) {
            fprintf(stderr, "ksched serve: pod %s: %s\n", key, strerror(-rc));
            in->skipped++;
        }
    }
    if (old)
        ks_pod_put(old);
}

void ks_intake_apply(struct ks_intake *in, const struct ks_watch_event *ev)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ev->namespace_ ? ev->namespace_ : "", ev->name);
    in->events++;
    switch (ev->kind) {
    case KS_KIND_NODE:
        node_event(in, ev);
        break;
    case KS_KIND_POD:
        pod_event(in, ev, key);
        break;
    default:
        object_event(in, ev, key);
        break;
    }
}

struct go_live {
    struct ks_intake *in;
    int rc;
    bool bound;            /* this pass: bound pods (true) or pending ones */
    struct ks_objvec keys; /* nodes the cache refused (strdup'ed names) */
};

static void live_node(void *ctx, const char *key, void *value)
{
    struct go_live *g = ctx;
    if (!value)
        return; /* deleted before going live */
    int rc = ks_scheduler_node_event(g->in->s, NULL, value);
    if (rc < 0) {
        char *k = strdup(key);
        fprintf(stderr, "ksched serve: node %s: %s\n", key, strerror(-rc));
        if (!k || vec_push(&g->keys, k) < 0) {
            free(k);
            g->rc = -ENOMEM;
        }
    }
}

static void live_pod(void *ctx, const char *key, void *value)
{
    struct go_live *g = ctx;
    const struct ks_pod *pod = value;
    if (!pod || g->rc < 0 || (pod->node_name != KS_ID_EMPTY) != g->bound)
        return;
    int rc = ks_scheduler_add_pod(g->in->s, pod);
    if (rc == 0 && !g->bound && g->in->metrics)
        ks_serve_metrics_incoming(g->in->metrics, "PodAdd");
    if (rc < 0) {
        fprintf(stderr, "ksched serve: pod %s: %s\n", key, strerror(-rc));
        if (rc == -ENOMEM)
            g->rc = rc;
    }
}

/* @fn on each key of order[@which] still in @m, in arrival order (a key re-added after a delete
 * appears twice: only its first position counts). */
static void in_order(struct ks_intake *in, int which, struct ks_smap *m,
                     void (*fn)(void *ctx, const char *key, void *value), void *ctx)
{
    struct ks_smap seen = {0};
    for (uint32_t i = 0; i < in->order[which].n; i++) {
        const char *key = in->order[which].items[i];
        if (ks_smap_get(&seen, key))
            continue;
        ks_smap_put(&seen, key, (void *)1, NULL);
        fn(ctx, key, ks_smap_get(m, key));
    }
    ks_smap_clear(&seen, NULL);
}

int ks_intake_go_live(struct ks_intake *in, struct ks_scheduler *s, struct ks_cache *cache)
{
    struct go_live g = {.in = in};
    in->s = s;
    in->cache = cache;
    in_order(in, 0, &in->nodes, live_node, &g);
    for (uint32_t i = 0; i < g.keys.n; i++) {
        /* the cache did not take these: forget them */
        ks_node_destroy(ks_smap_del(&in->nodes, g.keys.items[i]));
        free(g.keys.items[i]);
    }
    free(g.keys.items);
    in->live = true;
    g.bound = true;
    in_order(in, 1, &in->pods, live_pod, &g);
    g.bound = false;
    in_order(in, 1, &in->pods, live_pod, &g);
    for (int i = 0; i < 2; i++) {
        for (uint32_t j = 0; j < in->order[i].n; j++)
            free(in->order[i].items[j]);
        free(in->order[i].items);
        memset(&in->order[i], 0, sizeof(in->order[i]));
    }
    return g.rc;
}

void ks_intake_set_metrics(struct ks_intake *in, struct ks_serve_metrics *m)
{
    in->metrics = m;
}

void ks_intake_set_volumes(struct ks_intake *in, struct ks_serve_volumes *v)
{
    in->volumes = v;
}

void ks_intake_stats(struct ks_intake *in, struct ks_intake_stats *out)
{
    out->events = in->events;
    out->skipped = in->skipped;
    out->nodes = in->nodes.n;
    out->pods = in->pods.n;
    ks_mutex_lock(&in->lock);
    out->queued_objects = in->npending;
    ks_mutex_unlock(&in->lock);
}

struct ks_pod *ks_intake_find_pod(struct ks_intake *in, const char *namespace_, const char *name)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", namespace_, name);
    const struct ks_pod *pod = ks_smap_get(&in->pods, key);
    return pod ? ks_pod_get(pod) : NULL;
}

void ks_intake_discard(const struct ks_watch_event *ev)
{
    if (!ev->obj)
        return;
    if (ev->kind == KS_KIND_POD)
        ks_pod_put(ev->obj);
    else
        destroy_fn[ev->kind](ev->obj);
}
