/*
 * plugin_helpers_hints.h - what the in-tree plugins' EventsToRegister and QueueingHints
 * share (each plugin's own registrations and hints are in its file, beside its Filter).
 *
 * Mirrors the shared parts of the isSchedulableAfter* functions of
 * pkg/scheduler/framework/plugins/: a pod update that is the rejected pod itself, a claim the
 * pod uses, a deleted scheduled pod that held volumes a limit counts.
 *
 * Context: ks_events_copy at start-up; the hints and predicates under the queue's locks, from
 * any thread; pure and allocation-free.
 */
#ifndef KSCHED_PLUGIN_HELPERS_HINTS_H
#define KSCHED_PLUGIN_HELPERS_HINTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/intern.h"
#include "ksched/queue_types.h"

/*
 * ks_events_copy - an events_to_register op's answer from a static table: the first @max of
 * the @n registrations @regs into @out; @n.
 */
uint32_t ks_events_copy(struct ks_event_registration *out, uint32_t max,
                        const struct ks_event_registration *regs, uint32_t n);

/*
 * KS_DEFINE_EVENTS_TO_REGISTER(table) - a plugin's events_to_register op (plugin_types.h)
 * answering the static array @table.
 */
#define KS_DEFINE_EVENTS_TO_REGISTER(table)                                                                  \
    static uint32_t events_to_register(void *self, struct ks_event_registration *out, uint32_t max)          \
    {                                                                                                        \
        (void)self;                                                                                          \
        return ks_events_copy(out, max, table, sizeof(table) / sizeof(table[0]));                            \
    }

/* ks_hint_pod_is - @a and @b are objects of one pod: by uid when both have one, else by namespace/name. */
bool ks_hint_pod_is(const struct ks_pod *a, const struct ks_pod *b);

/* ks_pod_assigned - @p is bound to a node. */
static inline bool ks_pod_assigned(const struct ks_pod *p)
{
    return p->node_name != KS_ID_EMPTY;
}

/* ks_pod_assigned_or_nominated - @p is bound to a node, or nominated to one. */
static inline bool ks_pod_assigned_or_nominated(const struct ks_pod *p)
{
    return p->node_name != KS_ID_EMPTY || p->nominated_node_name != KS_ID_EMPTY;
}

/* ks_pod_uses_claim - @pod uses the claim @name of namespace @ns (a PVC volume, or a generic ephemeral
 * volume's). */
bool ks_pod_uses_claim(const struct ks_pod *pod, uint32_t ns, const char *name);

/*
 * Hints (ks_queueing_hint_fn; @self unused):
 *   ks_hint_same_pod - the updated pod is the rejected pod itself (SchedulingGates,
 *     TaintToleration's toleration update).
 *   ks_hint_claim_of_pod - the claim added or changed is one the pod uses (the volume plugins).
 *   ks_hint_limits_pod_deleted - a deleted scheduled pod held volumes that count against a
 *     limit (NodeVolumeLimits and the in-tree limit plugins).
 */
enum ks_queueing_hint ks_hint_same_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                       const void *new_obj);
enum ks_queueing_hint ks_hint_claim_of_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                           const void *new_obj);
enum ks_queueing_hint ks_hint_limits_pod_deleted(void *self, const struct ks_pod *pod, const void *old_obj,
                                                 const void *new_obj);

#endif
