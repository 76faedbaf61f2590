/*
 * plugin_events.c - which cluster events may help a pod each plugin rejected, and the
 * QueueingHints that look closer: the event maps of include/ksched/queue.h.
 *
 * Mirrors EnqueueExtensions.EventsToRegister and the isSchedulableAfter* hint functions
 * of the in-tree plugins (pkg/scheduler/framework/plugins/), with SchedulerQueueingHints
 * enabled as in current upstream (where a plugin registers fewer node updates with hints
 * than without), plus framework.MatchClusterEvents, PodSchedulingPropertiesChange and
 * NodeSchedulingPropertiesChange (framework/events.go, types.go) and the queue's
 * isPodWorthRequeuing (backend/queue/scheduling_queue.go).
 *
 * The in-tree plugins' registrations live in one table here, keyed by plugin name, so the
 * plugin files need not know about the queue; out-of-tree plugins declare theirs with
 * the events_to_register op. A plugin that can reject a pod and declares nothing is
 * registered for every event, as upstream's defaultEnqueueExtension.
 *
 * Hints read only the objects they are given. Where upstream consults informers this
 * one cannot see (namespace labels, PVs behind a claim), the hint answers Queue: a
 * spurious retry costs one scheduling attempt, a missed one strands a pod.
 *
 * Context: maps are built at start-up and read-only afterwards; hints and PreEnqueue run
 * under the queue's locks, from several threads at once, and neither block nor allocate.
 */
#include "ksched/queue.h"

#include "ksched/api.h"
#include "ksched/intern.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_types.h"
#include "ksched/status_types.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reg {
    struct ks_cluster_event event;
    ks_queueing_hint_fn hint;
    void *self;
    uint16_t slot;
};

struct pre {
    int (*fn)(void *self, const struct ks_pod *pod, struct ks_status *st);
    void *self;
    uint16_t slot;
};

struct ks_event_map {
    uint32_t nregs, npre;
    struct reg *regs;
    struct pre *pre;
};

/* Interned names the hints compare against (set once, before any map exists). */
static uint32_t id_unschedulable_taint, id_any_ip;
static pthread_once_t ids_once = PTHREAD_ONCE_INIT;

static void intern_ids(void)
{
    id_unschedulable_taint = ks_intern("node.kubernetes.io/unschedulable");
    id_any_ip = ks_intern("0.0.0.0");
}

/* ---- matching -------------------------------------------------------------------------------------- */

static bool is_wildcard(const struct ks_cluster_event *e)
{
    return e->resource == KS_ER_WILDCARD && e->actions == KS_ACT_ALL;
}

bool ks_event_match(const struct ks_cluster_event *registered, const struct ks_cluster_event *ev)
{
    if (is_wildcard(registered))
        return true;
    enum ks_event_resource r = registered->resource;
    bool resource =
        r == KS_ER_WILDCARD || r == ev->resource ||
        (r == KS_ER_POD && (ev->resource == KS_ER_ASSIGNED_POD || ev->resource == KS_ER_UNSCHEDULED_POD));
    /* the incoming event must be the same or more specific than the registered one */
    return resource && (registered->actions & ev->actions) && ev->actions <= registered->actions;
}

bool ks_event_map_interested(const struct ks_event_map *m, const struct ks_cluster_event *ev)
{
    if (is_wildcard(ev))
        return true;
    for (uint32_t i = 0; i < m->nregs; i++) {
        if (ks_event_match(&m->regs[i].event, ev))
            return true;
    }
    return false;
}

bool ks_event_map_registers(const struct ks_event_map *m, uint16_t slot, const struct ks_cluster_event *ev)
{
    for (uint32_t i = 0; i < m->nregs; i++) {
        if (m->regs[i].slot == slot && ks_event_match(&m->regs[i].event, ev))
            return true;
    }
    return false;
}

enum ks_requeue ks_event_map_worth(const struct ks_event_map *m, uint64_t rejectors, const struct ks_pod *pod,
                                   const struct ks_cluster_event *ev, const void *old_obj,
                                   const void *new_obj)
{
    if (!rejectors || is_wildcard(ev))
        return KS_REQUEUE_AFTER_BACKOFF;
    for (uint32_t i = 0; i < m->nregs; i++) {
        const struct reg *r = &m->regs[i];
        if (r->slot >= 64 || !(rejectors & (UINT64_C(1) << r->slot)) || !ks_event_match(&r->event, ev))
            continue;
        if (!r->hint || r->hint(r->self, pod, old_obj, new_obj) == KS_QUEUE)
            return KS_REQUEUE_AFTER_BACKOFF;
    }
    return KS_REQUEUE_SKIP;
}

/* The coarse kinds an event registration can produce. */
static unsigned registration_kinds(const struct ks_cluster_event *e)
{
    unsigned k = 0;
    switch (e->resource) {
    case KS_ER_WILDCARD:
        return KS_EVENT_ALL;
    case KS_ER_NODE:
        if (e->actions & KS_ACT_ADD)
            k |= KS_EVENT_NODE_ADD;
        if (e->actions & KS_ACT_DELETE)
            k |= KS_EVENT_NODE_DELETE;
        if (e->actions & KS_ACT_UPDATE)
            k |= KS_EVENT_NODE_UPDATE;
        return k;
    case KS_ER_POD:
    case KS_ER_ASSIGNED_POD:
    case KS_ER_UNSCHEDULED_POD:
        if (e->actions & KS_ACT_ADD)
            k |= KS_EVENT_ASSIGNED_POD_ADD;
        if (e->actions & KS_ACT_DELETE)
            k |= KS_EVENT_ASSIGNED_POD_DELETE;
        if (e->actions & KS_ACT_UPDATE)
            k |= KS_EVENT_ASSIGNED_POD_UPDATE | KS_EVENT_UNSCHEDULED_POD_UPDATE;
        return k;
    default: {
        struct ks_cluster_event probe = {e->resource, KS_ACT_ADD};
        return ks_event_kind(&probe);
    }
    }
}

unsigned ks_event_map_kinds(const struct ks_event_map *m, uint64_t rejectors)
{
    if (!rejectors)
        return KS_EVENT_ALL;
    unsigned k = 0;
    for (uint32_t i = 0; i < m->nregs; i++) {
        const struct reg *r = &m->regs[i];
        if (r->slot < 64 && (rejectors & (UINT64_C(1) << r->slot)))
            k |= registration_kinds(&r->event);
    }
    return k;
}

uint16_t ks_event_map_pre_enqueue(const struct ks_event_map *m, const struct ks_pod *pod,
                                  struct ks_status *st)
{
    for (uint32_t i = 0; i < m->npre; i++) {
        st->code = KS_SUCCESS;
        st->plugin = KS_NO_PLUGIN;
        st->nreasons = 0;
        int rc = m->pre[i].fn(m->pre[i].self, pod, st);
        if (rc != KS_SUCCESS) {
            st->code = (enum ks_code)rc;
            st->plugin = m->pre[i].slot;
            return m->pre[i].slot;
        }
    }
    return KS_NO_PLUGIN;
}

static const char *const resource_names[] = {
#define KS_X(id, text) text,
    KS_EVENT_RESOURCE_MAP(KS_X)
#undef KS_X
};

static const char *const action_names[] = {
#define KS_X(id, text) text,
    KS_EVENT_ACTION_MAP(KS_X)
#undef KS_X
};

const char *ks_event_name(const struct ks_cluster_event *ev, char *buf, uint32_t len)
{
    size_t n =
        (size_t)snprintf(buf, len, "%s/", ev->resource < KS_ER_COUNT ? resource_names[ev->resource] : "?");
    if (ev->actions == KS_ACT_ALL) {
        snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "*");
        return buf;
    }
    bool first = true;
    for (uint32_t i = 0; i < KS_ACTION_COUNT && n < len; i++) {
        if (ev->actions & (1u << i)) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s", first ? "" : "|", action_names[i]);
            first = false;
        }
    }
    return buf;
}

/* ---- what changed in an update ------------------------------------------------------------------ */

static bool labels_equal(const struct ks_labels *a, const struct ks_labels *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->items[i].key != b->items[i].key || a->items[i].value != b->items[i].value)
            return false;
    }
    return true;
}

/* Any resource the old pod requests that the new one requests less of (extractPodScaleDown). */
static bool scaled_down(const struct ks_pod *old_pod, const struct ks_pod *new_pod)
{
    const struct ks_resources *o = &old_pod->requests, *n = &new_pod->requests;
    if (o->milli_cpu > n->milli_cpu || o->memory > n->memory || o->ephemeral_storage > n->ephemeral_storage)
        return true;
    for (uint32_t i = 0; i < o->nscalar; i++) {
        bool found;
        int64_t v = ks_resource_items_find(n->scalar, n->nscalar, o->scalar[i].name, &found);
        if (!found || o->scalar[i].value > v)
            return true;
    }
    return false;
}

/* resourceclaim.PodStatusEqual over status.resourceClaimStatuses: the same names and claims, in order. */
static bool claim_statuses_equal(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a->nclaim_statuses != b->nclaim_statuses)
        return false;
    for (uint32_t i = 0; i < a->nclaim_statuses; i++) {
        const struct ks_pod_claim_status *x = &a->claim_statuses[i], *y = &b->claim_statuses[i];
        if (strcmp(x->name, y->name) != 0 || !x->claim_name != !y->claim_name ||
            (x->claim_name && strcmp(x->claim_name, y->claim_name) != 0))
            return false;
    }
    return true;
}

uint32_t ks_pod_update_events(const struct ks_pod *old_pod, const struct ks_pod *new_pod,
                              enum ks_event_resource resource, struct ks_cluster_event *out)
{
    uint32_t n = 0;
    if (!labels_equal(&old_pod->meta.labels, &new_pod->meta.labels))
        out[n++] = (struct ks_cluster_event){resource, KS_ACT_UPDATE_POD_LABEL};
    if (scaled_down(old_pod, new_pod))
        out[n++] = (struct ks_cluster_event){resource, KS_ACT_UPDATE_POD_SCALE_DOWN};
    if (new_pod->ngates == 0 && old_pod->ngates != 0)
        out[n++] = (struct ks_cluster_event){resource, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED};
    /* tolerations can only be added, so a different count is a change */
    if (new_pod->ntolerations != old_pod->ntolerations)
        out[n++] = (struct ks_cluster_event){resource, KS_ACT_UPDATE_POD_TOLERATION};
    /* extractPodGeneratedResourceClaimChange: the resourceclaim controller recorded a claim */
    if (!claim_statuses_equal(old_pod, new_pod))
        out[n++] = (struct ks_cluster_event){resource, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM};
    if (n == 0)
        out[n++] = (struct ks_cluster_event){resource, KS_ACT_UPDATE};
    return n;
}

static bool resource_lists_equal(const struct ks_resource_list *a, const struct ks_resource_list *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->items[i].name != b->items[i].name || a->items[i].value != b->items[i].value)
            return false;
    }
    return true;
}

static bool taints_equal(const struct ks_node *a, const struct ks_node *b)
{
    if (a->ntaints != b->ntaints)
        return false;
    for (uint32_t i = 0; i < a->ntaints; i++) {
        const struct ks_taint *x = &a->taints[i], *y = &b->taints[i];
        if (x->key != y->key || x->value != y->value || x->effect != y->effect)
            return false;
    }
    return true;
}

static const char *condition_status(const struct ks_node *n, const char *type)
{
    for (uint32_t i = n->nconditions; i-- > 0;) { /* the last entry of a type wins, as a map */
        if (n->conditions[i].type && strcmp(n->conditions[i].type, type) == 0)
            return n->conditions[i].status ? n->conditions[i].status : "";
    }
    return NULL;
}

static bool conditions_equal(const struct ks_node *a, const struct ks_node *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const struct ks_node *x = pass ? b : a, *y = pass ? a : b;
        for (uint32_t i = 0; i < x->nconditions; i++) {
            const char *t = x->conditions[i].type ? x->conditions[i].type : "";
            const char *sx = condition_status(x, t), *sy = condition_status(y, t);
            if (!sy || strcmp(sx, sy) != 0)
                return false;
        }
    }
    return true;
}

static bool annotations_equal(const struct ks_annotations *a, const struct ks_annotations *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        bool found = false;
        for (uint32_t j = 0; j < b->n && !found; j++)
            found = strcmp(a->items[i].key, b->items[j].key) == 0 &&
                    strcmp(a->items[i].value, b->items[j].value) == 0;
        if (!found)
            return false;
    }
    return true;
}

uint32_t ks_node_update_actions(const struct ks_node *old_node, const struct ks_node *new_node)
{
    uint32_t a = 0;
    /* a node that became schedulable reads as a taint change (NodeSpecUnschedulableChange) */
    if (old_node->unschedulable != new_node->unschedulable && !new_node->unschedulable)
        a |= KS_ACT_UPDATE_NODE_TAINT;
    if (!resource_lists_equal(&old_node->allocatable, &new_node->allocatable))
        a |= KS_ACT_UPDATE_NODE_ALLOCATABLE;
    if (!labels_equal(&old_node->meta.labels, &new_node->meta.labels))
        a |= KS_ACT_UPDATE_NODE_LABEL;
    if (!taints_equal(old_node, new_node))
        a |= KS_ACT_UPDATE_NODE_TAINT;
    if (!conditions_equal(old_node, new_node))
        a |= KS_ACT_UPDATE_NODE_CONDITION;
    if (!annotations_equal(&old_node->meta.annotations, &new_node->meta.annotations))
        a |= KS_ACT_UPDATE_NODE_ANNOTATION;
    return a;
}

/* ---- QueueingHints of the in-tree plugins ------------------------------------------------------------ */

static bool same_pod(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a == b)
        return true;
    if (a->meta.uid && b->meta.uid)
        return strcmp(a->meta.uid, b->meta.uid) == 0;
    return a->meta.name && b->meta.name && a->meta.namespace_id == b->meta.namespace_id &&
           strcmp(a->meta.name, b->meta.name) == 0;
}

static bool assigned(const struct ks_pod *p)
{
    return p->node_name != KS_ID_EMPTY;
}

static bool assigned_or_nominated(const struct ks_pod *p)
{
    return p->node_name != KS_ID_EMPTY || p->nominated_node_name != KS_ID_EMPTY;
}

/* The updated pod is the rejected pod itself (SchedulingGates, TaintToleration's toleration hint). */
static enum ks_queueing_hint hint_same_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                           const void *new_obj)
{
    (void)self;
    (void)old_obj;
    return new_obj && same_pod(new_obj, pod) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* NodeUnschedulable: added schedulable, or turned schedulable. */
static enum ks_queueing_hint hint_node_unschedulable(void *self, const struct ks_pod *pod,
                                                     const void *old_obj, const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    (void)pod;
    if (!n)
        return KS_QUEUE;
    return (o && o->unschedulable && !n->unschedulable) || (!o && !n->unschedulable) ? KS_QUEUE
                                                                                     : KS_QUEUE_SKIP;
}

/* NodeUnschedulable: the pod itself now tolerates the unschedulable taint. */
static enum ks_queueing_hint hint_tolerates_unschedulable(void *self, const struct ks_pod *pod,
                                                          const void *old_obj, const void *new_obj)
{
    const struct ks_pod *n = new_obj;
    struct ks_taint taint = {
        .key = id_unschedulable_taint, .value = KS_ID_EMPTY, .effect = KS_EFFECT_NO_SCHEDULE};
    (void)self;
    (void)old_obj;
    if (!n || !same_pod(n, pod))
        return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < n->ntolerations; i++) {
        if (ks_toleration_tolerates(&n->tolerations[i], &taint))
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

static bool do_not_schedule(enum ks_taint_effect e)
{
    return e == KS_EFFECT_NO_SCHEDULE || e == KS_EFFECT_NO_EXECUTE;
}

static bool untolerated(const struct ks_node *n, const struct ks_pod *pod)
{
    return ks_find_untolerated_taint(n->taints, n->ntaints, pod->tolerations, pod->ntolerations,
                                     do_not_schedule) != NULL;
}

/* TaintToleration: a node whose NoSchedule/NoExecute taints the pod did not tolerate now has none it does
 * not. */
static enum ks_queueing_hint hint_taint_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                             const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (!n)
        return KS_QUEUE;
    bool was = o ? untolerated(o, pod) : true;
    return was && !untolerated(n, pod) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* The pod's nodeSelector and required node affinity (nodeaffinity.GetRequiredNodeAffinity). */
static bool required_affinity_matches(const struct ks_pod *pod, const struct ks_node *n)
{
    for (uint32_t i = 0; i < pod->node_selector.n; i++) {
        uint32_t v;
        if (!ks_labels_get(&n->meta.labels, pod->node_selector.items[i].key, &v) ||
            v != pod->node_selector.items[i].value)
            return false;
    }
    const struct ks_node_affinity *na = pod->affinity.node_affinity;
    if (na && na->required)
        return ks_node_selector_matches(na->required, &n->meta.labels, n->name_id);
    return true;
}

/* NodeAffinity: the node (newly) matches the pod's required affinity. */
static enum ks_queueing_hint hint_node_affinity(void *self, const struct ks_pod *pod, const void *old_obj,
                                                const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (!n)
        return KS_QUEUE;
    if (!required_affinity_matches(pod, n))
        return KS_QUEUE_SKIP;
    return !o || !required_affinity_matches(pod, o) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* Does a host port of @a conflict with one of @b (HostPortInfo.CheckConflict)? */
static bool ports_conflict(const struct ks_pod *a, const struct ks_pod *b)
{
    for (int ai = 0; ai < 2; ai++) {
        const struct ks_container *ac = ai ? a->init_containers : a->containers;
        uint32_t an = ai ? a->ninit_containers : a->ncontainers;
        for (uint32_t i = 0; i < an; i++) {
            if (ai && !ac[i].restart_always)
                continue;
            for (uint32_t p = 0; p < ac[i].nports; p++) {
                const struct ks_container_port *x = &ac[i].ports[p];
                if (x->host_port <= 0)
                    continue;
                for (int bi = 0; bi < 2; bi++) {
                    const struct ks_container *bc = bi ? b->init_containers : b->containers;
                    uint32_t bn = bi ? b->ninit_containers : b->ncontainers;
                    for (uint32_t j = 0; j < bn; j++) {
                        if (bi && !bc[j].restart_always)
                            continue;
                        for (uint32_t k = 0; k < bc[j].nports; k++) {
                            const struct ks_container_port *y = &bc[j].ports[k];
                            uint32_t xi = x->host_ip == KS_ID_EMPTY ? id_any_ip : x->host_ip;
                            uint32_t yi = y->host_ip == KS_ID_EMPTY ? id_any_ip : y->host_ip;
                            if (y->host_port == x->host_port && y->protocol == x->protocol &&
                                (xi == yi || xi == id_any_ip || yi == id_any_ip))
                                return true;
                        }
                    }
                }
            }
        }
    }
    return false;
}

/* NodePorts: a deleted scheduled pod held a port the pod wants. */
static enum ks_queueing_hint hint_ports_pod_deleted(void *self, const struct ks_pod *pod, const void *old_obj,
                                                    const void *new_obj)
{
    const struct ks_pod *deleted = old_obj;
    (void)self;
    (void)new_obj;
    if (!deleted)
        return KS_QUEUE;
    if (!assigned_or_nominated(deleted))
        return KS_QUEUE_SKIP;
    return ports_conflict(pod, deleted) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* Whether @modified requests less than @original of something @target requests
 * (isSchedulableAfterPodScaleDown). */
static bool frees_requested(const struct ks_pod *target, const struct ks_pod *original,
                            const struct ks_pod *modified)
{
    const struct ks_resources *t = &target->requests, *o = &original->requests, *m = &modified->requests;
    if ((t->milli_cpu && o->milli_cpu > m->milli_cpu) || (t->memory && o->memory > m->memory) ||
        (t->ephemeral_storage && o->ephemeral_storage > m->ephemeral_storage))
        return true;
    for (uint32_t i = 0; i < t->nscalar; i++) {
        if (!t->scalar[i].value)
            continue;
        int64_t ov = ks_resource_items_find(o->scalar, o->nscalar, t->scalar[i].name, NULL);
        int64_t mv = ks_resource_items_find(m->scalar, m->nscalar, t->scalar[i].name, NULL);
        if (ov > mv)
            return true;
    }
    return false;
}

/* NodeResourcesFit: a scheduled pod deleted, or one that asks for less of what the pod needs. */
static enum ks_queueing_hint hint_fit_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                          const void *new_obj)
{
    const struct ks_pod *o = old_obj, *m = new_obj;
    (void)self;
    if (!m) {
        if (!o)
            return KS_QUEUE;
        return assigned_or_nominated(o) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    if (same_pod(m, pod))
        return KS_QUEUE;
    if (!assigned(m) || !o)
        return KS_QUEUE_SKIP;
    return frees_requested(pod, o, m) ? KS_QUEUE : KS_QUEUE_SKIP;
}

static bool requests_nothing(const struct ks_resources *r)
{
    return !r->milli_cpu && !r->memory && !r->ephemeral_storage && !r->nscalar;
}

/* isFit on an empty node: would the pod fit the node's allocatable at all? */
static bool fits_empty(const struct ks_pod *pod, const struct ks_node *n)
{
    const struct ks_resources *r = &pod->requests, *a = &n->alloc;
    if (a->allowed_pods < 1)
        return false;
    if (requests_nothing(r))
        return true;
    if (r->milli_cpu > a->milli_cpu || r->memory > a->memory || r->ephemeral_storage > a->ephemeral_storage)
        return false;
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (r->scalar[i].value > ks_resource_items_find(a->scalar, a->nscalar, r->scalar[i].name, NULL))
            return false;
    }
    return true;
}

/* haveAnyRequestedResourcesIncreased */
static bool requested_increased(const struct ks_pod *pod, const struct ks_node *o, const struct ks_node *n)
{
    const struct ks_resources *r = &pod->requests, *a = &o->alloc, *b = &n->alloc;
    if (b->allowed_pods > a->allowed_pods)
        return true;
    if (requests_nothing(r))
        return false;
    if ((r->milli_cpu > 0 && b->milli_cpu > a->milli_cpu) || (r->memory > 0 && b->memory > a->memory) ||
        (r->ephemeral_storage > 0 && b->ephemeral_storage > a->ephemeral_storage))
        return true;
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (!r->scalar[i].value)
            continue;
        if (ks_resource_items_find(b->scalar, b->nscalar, r->scalar[i].name, NULL) >
            ks_resource_items_find(a->scalar, a->nscalar, r->scalar[i].name, NULL))
            return true;
    }
    return false;
}

/* NodeResourcesFit: a node added that could hold the pod, or one whose allocatable of what it asks grew. */
static enum ks_queueing_hint hint_fit_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                           const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (!n)
        return KS_QUEUE;
    if (!fits_empty(pod, n))
        return KS_QUEUE_SKIP;
    if (!o)
        return KS_QUEUE;
    return requested_increased(pod, o, n) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* Does @pod use the claim @name in its namespace (a PVC volume, or a generic ephemeral volume's claim)? */
static bool uses_claim(const struct ks_pod *pod, uint32_t ns, const char *name)
{
    if (!name || ns != pod->meta.namespace_id)
        return false;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if ((v->kind == KS_VOLUME_PVC || v->kind == KS_VOLUME_EPHEMERAL) && v->source &&
            strcmp(v->source, name) == 0)
            return true;
    }
    return false;
}

/* Volume plugins: the claim added or changed is one the pod uses. */
static enum ks_queueing_hint hint_pvc_of_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                             const void *new_obj)
{
    const struct ks_persistent_volume_claim *c = new_obj ? new_obj : old_obj;
    (void)self;
    if (!c)
        return KS_QUEUE;
    return uses_claim(pod, c->meta.namespace_id, c->meta.name) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* VolumeRestrictions: a deleted pod in the namespace that shared a claim or a conflicting disk with the pod.
 */
static enum ks_queueing_hint hint_volume_pod_deleted(void *self, const struct ks_pod *pod,
                                                     const void *old_obj, const void *new_obj)
{
    const struct ks_pod *deleted = old_obj;
    (void)self;
    (void)new_obj;
    if (!deleted)
        return KS_QUEUE;
    for (uint32_t i = 0; i < deleted->nvolumes; i++) {
        const struct ks_volume *v = &deleted->volumes[i];
        if (v->kind == KS_VOLUME_OTHER)
            continue;
        if (v->kind == KS_VOLUME_PVC || v->kind == KS_VOLUME_EPHEMERAL) {
            if (uses_claim(pod, deleted->meta.namespace_id, v->source))
                return KS_QUEUE;
            continue;
        }
        for (uint32_t j = 0; j < pod->nvolumes; j++) {
            const struct ks_volume *w = &pod->volumes[j];
            if (w->kind == v->kind && w->source && v->source && strcmp(w->source, v->source) == 0)
                return KS_QUEUE;
        }
    }
    return KS_QUEUE_SKIP;
}

/* Volume limits: a deleted scheduled pod that held volumes that count against a limit. */
static enum ks_queueing_hint hint_limits_pod_deleted(void *self, const struct ks_pod *pod,
                                                     const void *old_obj, const void *new_obj)
{
    const struct ks_pod *deleted = old_obj;
    (void)self;
    (void)pod;
    (void)new_obj;
    if (!deleted)
        return KS_QUEUE;
    if (!assigned_or_nominated(deleted))
        return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < deleted->nvolumes; i++) {
        if (deleted->volumes[i].kind != KS_VOLUME_OTHER)
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* One required (anti-)affinity term of @owner against @other (AffinityTerm.Matches without namespace labels).
 */
static bool term_matches(const struct ks_pod *owner, const struct ks_pod_affinity_term *t,
                         const struct ks_pod *other)
{
    static const struct ks_labels no_labels;
    bool ns;
    if (t->nnamespaces == 0 && !t->namespace_selector) {
        ns = other->meta.namespace_id == owner->meta.namespace_id;
    } else {
        ns = false;
        for (uint32_t i = 0; i < t->nnamespaces && !ns; i++)
            ns = t->namespaces[i] == other->meta.namespace_id;
        if (!ns && t->namespace_selector)
            ns = ks_label_selector_matches(t->namespace_selector, &no_labels);
    }
    return ns && ks_label_selector_matches(t->selector, &other->meta.labels);
}

/* podMatchesAllAffinityTerms: false without terms. */
static bool matches_all(const struct ks_pod *owner, const struct ks_pod_affinity *a,
                        const struct ks_pod *other)
{
    if (!a || a->nrequired == 0)
        return false;
    for (uint32_t i = 0; i < a->nrequired; i++) {
        if (!term_matches(owner, &a->required[i], other))
            return false;
    }
    return true;
}

/* InterPodAffinity: a scheduled pod that (now) satisfies the affinity, or no longer the anti-affinity. */
static enum ks_queueing_hint hint_affinity_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                               const void *new_obj)
{
    const struct ks_pod *o = old_obj, *m = new_obj;
    const struct ks_pod_affinity *aff = pod->affinity.pod_affinity, *anti = pod->affinity.pod_anti_affinity;
    (void)self;
    if ((m && !assigned(m)) || (o && !assigned(o)))
        return KS_QUEUE_SKIP;
    if (m && o) {
        if (!matches_all(pod, aff, o) && matches_all(pod, aff, m))
            return KS_QUEUE;
        if (matches_all(pod, anti, o) && !matches_all(pod, anti, m))
            return KS_QUEUE;
        return KS_QUEUE_SKIP;
    }
    if (m)
        return matches_all(pod, aff, m) ? KS_QUEUE : KS_QUEUE_SKIP;
    if (o)
        return matches_all(pod, anti, o) ? KS_QUEUE : KS_QUEUE_SKIP;
    return KS_QUEUE;
}

static bool has_topology_key(const struct ks_pod_affinity *a, const struct ks_node *n)
{
    uint32_t v;
    for (uint32_t i = 0; a && i < a->nrequired; i++) {
        if (ks_labels_get(&n->meta.labels, a->required[i].topology_key, &v))
            return true;
    }
    return false;
}

/* InterPodAffinity: a node that carries a topology key of the pod's terms. */
static enum ks_queueing_hint hint_affinity_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                                const void *new_obj)
{
    const struct ks_node *n = new_obj;
    (void)self;
    (void)old_obj;
    if (!n)
        return KS_QUEUE;
    return has_topology_key(pod->affinity.pod_affinity, n) ||
                   has_topology_key(pod->affinity.pod_anti_affinity, n)
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

/* The pod's hard spreading constraints; none means the plugin's defaults, which the hints treat as "may
 * help". */
static uint32_t hard_constraints(const struct ks_pod *pod)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < pod->nspread; i++)
        n += pod->spread[i].when_unsatisfiable == KS_DO_NOT_SCHEDULE;
    return n;
}

static bool spread_selector_matches(const struct ks_pod *pod, const struct ks_labels *labels)
{
    for (uint32_t i = 0; i < pod->nspread; i++) {
        const struct ks_spread_constraint *c = &pod->spread[i];
        if (c->when_unsatisfiable == KS_DO_NOT_SCHEDULE && ks_label_selector_matches(c->selector, labels))
            return true;
    }
    return false;
}

/* PodTopologySpread: a scheduled pod in the namespace that matches (or stops matching) a constraint. */
static enum ks_queueing_hint hint_spread_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                             const void *new_obj)
{
    const struct ks_pod *o = old_obj, *m = new_obj;
    (void)self;
#define INVOLVED(x) (same_pod((x), pod) || (assigned(x) && (x)->meta.namespace_id == pod->meta.namespace_id))
    if ((m && !INVOLVED(m)) || (o && !INVOLVED(o)))
        return KS_QUEUE_SKIP;
#undef INVOLVED
    if (hard_constraints(pod) == 0)
        return KS_QUEUE;
    if (m && o) {
        if (same_pod(m, pod) && m->ntolerations != o->ntolerations) {
            for (uint32_t i = 0; i < pod->nspread; i++) {
                if (pod->spread[i].when_unsatisfiable == KS_DO_NOT_SCHEDULE &&
                    pod->spread[i].node_taints_policy == KS_POLICY_HONOR)
                    return KS_QUEUE;
            }
        }
        if (labels_equal(&m->meta.labels, &o->meta.labels))
            return KS_QUEUE_SKIP;
        for (uint32_t i = 0; i < pod->nspread; i++) {
            const struct ks_spread_constraint *c = &pod->spread[i];
            if (c->when_unsatisfiable == KS_DO_NOT_SCHEDULE &&
                ks_label_selector_matches(c->selector, &o->meta.labels) !=
                    ks_label_selector_matches(c->selector, &m->meta.labels))
                return KS_QUEUE;
        }
        return KS_QUEUE_SKIP;
    }
    const struct ks_pod *x = m ? m : o;
    if (!x)
        return KS_QUEUE;
    return spread_selector_matches(pod, &x->meta.labels) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* nodeLabelsMatchSpreadConstraints: the node has every hard constraint's topology key. */
static bool node_has_spread_keys(const struct ks_pod *pod, const struct ks_node *n)
{
    uint32_t v;
    for (uint32_t i = 0; i < pod->nspread; i++) {
        const struct ks_spread_constraint *c = &pod->spread[i];
        if (c->when_unsatisfiable == KS_DO_NOT_SCHEDULE &&
            !ks_labels_get(&n->meta.labels, c->topology_key, &v))
            return false;
    }
    return true;
}

static bool spread_keys_changed(const struct ks_pod *pod, const struct ks_node *o, const struct ks_node *n)
{
    for (uint32_t i = 0; i < pod->nspread; i++) {
        const struct ks_spread_constraint *c = &pod->spread[i];
        if (c->when_unsatisfiable != KS_DO_NOT_SCHEDULE)
            continue;
        uint32_t a = KS_ID_NONE, b = KS_ID_NONE;
        ks_labels_get(&o->meta.labels, c->topology_key, &a);
        ks_labels_get(&n->meta.labels, c->topology_key, &b);
        if (a != b)
            return true;
    }
    return false;
}

/* PodTopologySpread: nodes entering or leaving the topology, or changing domain or taints. */
static enum ks_queueing_hint hint_spread_node(void *self, const struct ks_pod *pod, const void *old_obj,
                                              const void *new_obj)
{
    const struct ks_node *o = old_obj, *n = new_obj;
    (void)self;
    if (hard_constraints(pod) == 0)
        return KS_QUEUE;
    bool was = o && node_has_spread_keys(pod, o), is = n && node_has_spread_keys(pod, n);
    if (o && n) {
        if (was != is)
            return KS_QUEUE;
        return is && (spread_keys_changed(pod, o, n) || !taints_equal(o, n)) ? KS_QUEUE : KS_QUEUE_SKIP;
    }
    return (n ? is : was) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* ---- the in-tree table -------------------------------------------------------------------------------- */

#define EV(res, act)                                                                                         \
    {                                                                                                        \
        KS_ER_##res, (act)                                                                                   \
    }
#define POD_ACT(a) KS_ACT_##a

struct intree {
    const char *name;
    uint32_t n;
    struct ks_event_registration regs[8];
};

/*
 * Plugins that never reject a pod (queue sort, score-only, bind, PostFilter) register
 * nothing. The rest register what their upstream EventsToRegister does with
 * QueueingHints enabled.
 */
static const struct intree intree_events[] = {
    {"PrioritySort", 0, {{EV(WILDCARD, 0), NULL}}},
    {"NodeResourcesBalancedAllocation", 0, {{EV(WILDCARD, 0), NULL}}},
    {"ImageLocality", 0, {{EV(WILDCARD, 0), NULL}}},
    {"SelectorSpread", 0, {{EV(WILDCARD, 0), NULL}}},
    {"DefaultBinder", 0, {{EV(WILDCARD, 0), NULL}}},
    {"SchedulingGates", 1, {{EV(POD, KS_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED), hint_same_pod}}},
    {"NodeUnschedulable",
     2,
     {{EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT), hint_node_unschedulable},
      {EV(POD, KS_ACT_UPDATE_POD_TOLERATION), hint_tolerates_unschedulable}}},
    {"NodeName", 1, {{EV(NODE, KS_ACT_ADD), NULL}}},
    {"TaintToleration",
     2,
     {{EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT), hint_taint_node},
      {EV(POD, KS_ACT_UPDATE_POD_TOLERATION), hint_same_pod}}},
    {"NodeAffinity", 1, {{EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL), hint_node_affinity}}},
    {"NodePorts", 2, {{EV(POD, KS_ACT_DELETE), hint_ports_pod_deleted}, {EV(NODE, KS_ACT_ADD), NULL}}},
    {"NodeResourcesFit",
     2,
     {{EV(POD, KS_ACT_DELETE | KS_ACT_UPDATE_POD_SCALE_DOWN), hint_fit_pod},
      {EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_ALLOCATABLE), hint_fit_node}}},
    {"VolumeRestrictions",
     3,
     {{EV(POD, KS_ACT_DELETE), hint_volume_pod_deleted},
      {EV(NODE, KS_ACT_ADD), NULL},
      {EV(PVC, KS_ACT_ADD | KS_ACT_UPDATE), hint_pvc_of_pod}}},
    {"NodeVolumeLimits",
     5,
     {{EV(CSI_NODE, KS_ACT_ADD | KS_ACT_UPDATE), NULL},
      {EV(POD, KS_ACT_DELETE), hint_limits_pod_deleted},
      {EV(PVC, KS_ACT_ADD), hint_pvc_of_pod},
      {EV(VOLUME_ATTACHMENT, KS_ACT_DELETE), NULL},
      {EV(NODE, KS_ACT_ADD), NULL}}},
    {"EBSLimits",
     4,
     {{EV(NODE, KS_ACT_ADD), NULL},
      {EV(POD, KS_ACT_DELETE), hint_limits_pod_deleted},
      {EV(PVC, KS_ACT_ADD), hint_pvc_of_pod},
      {EV(PV, KS_ACT_ADD), NULL}}},
    {"GCEPDLimits",
     4,
     {{EV(NODE, KS_ACT_ADD), NULL},
      {EV(POD, KS_ACT_DELETE), hint_limits_pod_deleted},
      {EV(PVC, KS_ACT_ADD), hint_pvc_of_pod},
      {EV(PV, KS_ACT_ADD), NULL}}},
    {"AzureDiskLimits",
     4,
     {{EV(NODE, KS_ACT_ADD), NULL},
      {EV(POD, KS_ACT_DELETE), hint_limits_pod_deleted},
      {EV(PVC, KS_ACT_ADD), hint_pvc_of_pod},
      {EV(PV, KS_ACT_ADD), NULL}}},
    {"CinderLimits",
     4,
     {{EV(NODE, KS_ACT_ADD), NULL},
      {EV(POD, KS_ACT_DELETE), hint_limits_pod_deleted},
      {EV(PVC, KS_ACT_ADD), hint_pvc_of_pod},
      {EV(PV, KS_ACT_ADD), NULL}}},
    {"VolumeBinding",
     7,
     {{EV(STORAGE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE), NULL},
      {EV(PVC, KS_ACT_ADD | KS_ACT_UPDATE), hint_pvc_of_pod},
      {EV(PV, KS_ACT_ADD | KS_ACT_UPDATE), NULL},
      {EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT), NULL},
      {EV(CSI_NODE, KS_ACT_ADD | KS_ACT_UPDATE), NULL},
      {EV(CSI_DRIVER, KS_ACT_ADD | KS_ACT_UPDATE), NULL},
      {EV(CSI_STORAGE_CAPACITY, KS_ACT_ADD | KS_ACT_UPDATE), NULL}}},
    {"VolumeZone",
     4,
     {{EV(STORAGE_CLASS, KS_ACT_ADD), NULL},
      {EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT), NULL},
      {EV(PVC, KS_ACT_ADD | KS_ACT_UPDATE), hint_pvc_of_pod},
      {EV(PV, KS_ACT_ADD | KS_ACT_UPDATE), NULL}}},
    {"PodTopologySpread",
     2,
     {{EV(POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_UPDATE_POD_TOLERATION | KS_ACT_DELETE),
       hint_spread_pod},
      {EV(NODE, KS_ACT_ADD | KS_ACT_DELETE | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT),
       hint_spread_node}}},
    {"InterPodAffinity",
     2,
     {{EV(POD, KS_ACT_ADD | KS_ACT_UPDATE_POD_LABEL | KS_ACT_DELETE), hint_affinity_pod},
      {EV(NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_TAINT), hint_affinity_node}}},
};

/* UnrollWildCardResource: what a plugin that declares nothing is registered for. */
static const struct ks_event_registration everything[] = {
    {EV(POD, KS_ACT_ALL), NULL},
    {EV(NODE, KS_ACT_ALL), NULL},
    {EV(PV, KS_ACT_ALL), NULL},
    {EV(PVC, KS_ACT_ALL), NULL},
    {EV(CSI_NODE, KS_ACT_ALL), NULL},
    {EV(CSI_DRIVER, KS_ACT_ALL), NULL},
    {EV(CSI_STORAGE_CAPACITY, KS_ACT_ALL), NULL},
    {EV(STORAGE_CLASS, KS_ACT_ALL), NULL},
    {EV(RESOURCE_CLAIM, KS_ACT_ALL), NULL},
    {EV(DEVICE_CLASS, KS_ACT_ALL), NULL},
};

static const struct intree *find_intree(const char *name)
{
    for (size_t i = 0; i < sizeof(intree_events) / sizeof(intree_events[0]); i++) {
        if (strcmp(intree_events[i].name, name) == 0)
            return &intree_events[i];
    }
    return NULL;
}

/* A plugin with any op at a point that can reject a pod. */
static bool can_reject(const struct ks_plugin *p)
{
    return p->pre_filter || p->filter || p->reserve || p->permit || p->pre_enqueue;
}

static int add_regs(struct ks_event_map *m, uint32_t *cap, uint16_t slot, void *self,
                    const struct ks_event_registration *regs, uint32_t n)
{
    if (m->nregs + n > *cap) {
        uint32_t c = (m->nregs + n) * 2;
        struct reg *r = realloc(m->regs, c * sizeof(*r));
        if (!r)
            return -ENOMEM;
        m->regs = r;
        *cap = c;
    }
    for (uint32_t i = 0; i < n; i++)
        m->regs[m->nregs++] =
            (struct reg){.event = regs[i].event, .hint = regs[i].hint, .self = self, .slot = slot};
    return 0;
}

int ks_event_map_create(const struct ks_event_map_plugin *plugins, uint32_t n, struct ks_event_map **out)
{
    struct ks_event_map *m = calloc(1, sizeof(*m));
    uint32_t cap = 0;
    int rc = -ENOMEM;

    *out = NULL;
    pthread_once(&ids_once, intern_ids);
    if (!m || (n && !(m->pre = calloc(n, sizeof(*m->pre)))))
        goto err;
    for (uint32_t slot = 0; slot < n; slot++) {
        const struct ks_plugin *p = plugins[slot].plugin;
        void *self = plugins[slot].self;
        if (!p)
            continue;
        if (plugins[slot].pre_enqueue && p->pre_enqueue)
            m->pre[m->npre++] = (struct pre){.fn = p->pre_enqueue, .self = self, .slot = (uint16_t)slot};
        const struct intree *t = p->name ? find_intree(p->name) : NULL;
        if (t) {
            rc = add_regs(m, &cap, (uint16_t)slot, self, t->regs, t->n);
        } else if (p->events_to_register) {
            struct ks_event_registration buf[16], *regs = buf;
            uint32_t k = p->events_to_register(self, buf, 16);
            if (k > 16) {
                if (!(regs = calloc(k, sizeof(*regs))))
                    goto err;
                k = p->events_to_register(self, regs, k);
            }
            rc = add_regs(m, &cap, (uint16_t)slot, self, regs, k);
            if (regs != buf)
                free(regs);
        } else if (can_reject(p)) {
            rc = add_regs(m, &cap, (uint16_t)slot, self, everything,
                          sizeof(everything) / sizeof(everything[0]));
        } else {
            rc = 0;
        }
        if (rc < 0)
            goto err;
    }
    *out = m;
    return 0;
err:
    ks_event_map_destroy(m);
    return -ENOMEM;
}

void ks_event_map_destroy(struct ks_event_map *m)
{
    if (!m)
        return;
    free(m->regs);
    free(m->pre);
    free(m);
}
