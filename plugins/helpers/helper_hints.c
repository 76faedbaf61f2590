/*
 * helper_hints.c - what the in-tree plugins' registrations and QueueingHints share
 * (include/ksched/plugin_helpers_hints.h).
 */
#include "ksched/plugin_helpers_hints.h"

#include <string.h>

uint32_t ks_events_copy(struct ks_event_registration *out, uint32_t max,
                        const struct ks_event_registration *regs, uint32_t n)
{
    for (uint32_t i = 0; i < n && i < max; i++)
        out[i] = regs[i];
    return n;
}

bool ks_hint_pod_is(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a == b)
        return true;
    if (a->meta.uid && b->meta.uid)
        return strcmp(a->meta.uid, b->meta.uid) == 0;
    return a->meta.name && b->meta.name && a->meta.namespace_id == b->meta.namespace_id &&
           strcmp(a->meta.name, b->meta.name) == 0;
}

bool ks_pod_uses_claim(const struct ks_pod *pod, uint32_t ns, const char *name)
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

enum ks_queueing_hint ks_hint_same_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                       const void *new_obj)
{
    (void)self;
    (void)old_obj;
    return new_obj && ks_hint_pod_is(new_obj, pod) ? KS_QUEUE : KS_QUEUE_SKIP;
}

enum ks_queueing_hint ks_hint_claim_of_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                           const void *new_obj)
{
    const struct ks_persistent_volume_claim *c = new_obj ? new_obj : old_obj;
    (void)self;
    if (!c)
        return KS_QUEUE;
    return ks_pod_uses_claim(pod, c->meta.namespace_id, c->meta.name) ? KS_QUEUE : KS_QUEUE_SKIP;
}

enum ks_queueing_hint ks_hint_limits_pod_deleted(void *self, const struct ks_pod *pod, const void *old_obj,
                                                 const void *new_obj)
{
    const struct ks_pod *deleted = old_obj;
    (void)self;
    (void)pod;
    (void)new_obj;
    if (!deleted)
        return KS_QUEUE;
    if (!ks_pod_assigned_or_nominated(deleted))
        return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < deleted->nvolumes; i++) {
        if (deleted->volumes[i].kind != KS_VOLUME_OTHER)
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}
