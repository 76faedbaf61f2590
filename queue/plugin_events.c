/*
 * plugin_events.c - which cluster events may help a pod each plugin rejected, and the
 * QueueingHints that look closer: the event maps of include/ksched/internal/queue.h.
 *
 * Mirrors framework.MatchClusterEvents, PodSchedulingPropertiesChange and
 * NodeSchedulingPropertiesChange (framework/events.go, types.go), the queue's
 * isPodWorthRequeuing (backend/queue/scheduling_queue.go) and the registration of every
 * profile plugin's EnqueueExtensions, with SchedulerQueueingHints enabled as in current
 * upstream.
 *
 * Every plugin, in-tree or out-of-tree, declares its registrations and hints with its
 * events_to_register op (the in-tree ones beside their Filter, sharing
 * include/ksched/plugin_helpers_hints.h). A plugin that can reject a pod and declares
 * nothing is registered for every event, as upstream's defaultEnqueueExtension.
 *
 * Hints read only the objects they are given. Where upstream consults informers this
 * one cannot see (namespace labels, PVs behind a claim), the hint answers Queue: a
 * spurious retry costs one scheduling attempt, a missed one strands a pod.
 *
 * Context: maps are built at start-up and read-only afterwards; hints and PreEnqueue run
 * under the queue's locks, from several threads at once, and neither block nor allocate.
 */
#include "ksched/internal/queue.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_types.h"
#include "ksched/status_types.h"

#include <errno.h>
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
    if (!ks_labels_equal(&old_pod->meta.labels, &new_pod->meta.labels))
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
    if (!ks_labels_equal(&old_node->meta.labels, &new_node->meta.labels))
        a |= KS_ACT_UPDATE_NODE_LABEL;
    if (!ks_node_taints_equal(old_node, new_node))
        a |= KS_ACT_UPDATE_NODE_TAINT;
    if (!conditions_equal(old_node, new_node))
        a |= KS_ACT_UPDATE_NODE_CONDITION;
    if (!annotations_equal(&old_node->meta.annotations, &new_node->meta.annotations))
        a |= KS_ACT_UPDATE_NODE_ANNOTATION;
    return a;
}

/* ---- the maps ----------------------------------------------------------------------------------------- */

/* UnrollWildCardResource: what a plugin that declares nothing is registered for. */
static const struct ks_event_registration everything[] = {
    {{KS_ER_POD, KS_ACT_ALL}, NULL},
    {{KS_ER_NODE, KS_ACT_ALL}, NULL},
    {{KS_ER_PV, KS_ACT_ALL}, NULL},
    {{KS_ER_PVC, KS_ACT_ALL}, NULL},
    {{KS_ER_CSI_NODE, KS_ACT_ALL}, NULL},
    {{KS_ER_CSI_DRIVER, KS_ACT_ALL}, NULL},
    {{KS_ER_CSI_STORAGE_CAPACITY, KS_ACT_ALL}, NULL},
    {{KS_ER_STORAGE_CLASS, KS_ACT_ALL}, NULL},
    {{KS_ER_RESOURCE_CLAIM, KS_ACT_ALL}, NULL},
    {{KS_ER_DEVICE_CLASS, KS_ACT_ALL}, NULL},
};

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
    if (!m || (n && !(m->pre = calloc(n, sizeof(*m->pre)))))
        goto err;
    for (uint32_t slot = 0; slot < n; slot++) {
        const struct ks_plugin *p = plugins[slot].plugin;
        void *self = plugins[slot].self;
        if (!p)
            continue;
        if (plugins[slot].pre_enqueue && p->pre_enqueue)
            m->pre[m->npre++] = (struct pre){.fn = p->pre_enqueue, .self = self, .slot = (uint16_t)slot};
        if (p->events_to_register) {
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
