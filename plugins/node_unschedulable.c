/*
 * node_unschedulable.c - the NodeUnschedulable plugin: filters out cordoned nodes
 * (node.spec.unschedulable) unless the pod tolerates the unschedulable taint (Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go: a pod
 * whose tolerations tolerate {key: node.kubernetes.io/unschedulable, effect: NoSchedule}
 * may land on an unschedulable node; any other pod gets UnschedulableAndUnresolvable with
 * "node(s) were unschedulable". A record without a node object gets
 * "node(s) had unknown conditions". It takes no args; the instance holds the taint and the
 * interned messages, so Filter compares integers only (and walks the pod's tolerations only
 * for cordoned nodes). The signature is whether the pod tolerates that taint.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework_types.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

struct node_unschedulable {
    struct ks_taint taint;  /* v1.TaintNodeUnschedulable with effect NoSchedule */
    uint32_t unschedulable; /* ErrReasonUnschedulable */
    uint32_t unknown;       /* ErrReasonUnknownCondition */
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct node_unschedulable *p = malloc(sizeof(*p));

    (void)in;
    (void)err;
    if (!p)
        return -ENOMEM;
    p->taint = (struct ks_taint){
        .key = ks_intern("node.kubernetes.io/unschedulable"),
        .value = KS_ID_EMPTY,
        .effect = KS_EFFECT_NO_SCHEDULE,
    };
    p->unschedulable = ks_intern("node(s) were unschedulable");
    p->unknown = ks_intern("node(s) had unknown conditions");
    if (p->taint.key == KS_ID_NONE || p->unschedulable == KS_ID_NONE || p->unknown == KS_ID_NONE) {
        free(p);
        return -ENOMEM;
    }
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    free(self);
}

/* filter_node - Context: worker threads; reads the pod and the node record only. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct node_unschedulable *p = self;

    (void)cs;
    /* the flag answers for the node object without reading its pointer (the record's second line) */
    if (!(node->flags & KS_SNAP_HAS_NODE) && !node->node)
        return ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->unknown);
    if (!(node->flags & KS_SNAP_UNSCHEDULABLE))
        return KS_SUCCESS;
    for (uint32_t i = 0; i < pod->ntolerations; i++) {
        if (ks_toleration_tolerates(&pod->tolerations[i], &p->taint))
            return KS_SUCCESS;
    }
    return ks_status_reject(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, p->unschedulable);
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/*
 * sign - all the Filter reads of the pod is whether some toleration tolerates the
 * unschedulable taint. Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct node_unschedulable *p = self;
    uint32_t tolerates = 0;

    (void)cs;
    for (uint32_t i = 0; i < pod->ntolerations && !tolerates; i++)
        tolerates = ks_toleration_tolerates(&pod->tolerations[i], &p->taint);
    ks_sign_u32(sig, tolerates);
    return KS_SUCCESS;
}

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* The interned taint key hint_tolerates_unschedulable looks for, set before any hint runs. */
static uint32_t unschedulable_taint;
static pthread_once_t taint_once = PTHREAD_ONCE_INIT;

static void intern_taint(void)
{
    unschedulable_taint = ks_intern("node.kubernetes.io/unschedulable");
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
        .key = unschedulable_taint, .value = KS_ID_EMPTY, .effect = KS_EFFECT_NO_SCHEDULE};
    (void)self;
    (void)old_obj;
    if (!n || !ks_hint_pod_is(n, pod))
        return KS_QUEUE_SKIP;
    for (uint32_t i = 0; i < n->ntolerations; i++) {
        if (ks_toleration_tolerates(&n->tolerations[i], &taint))
            return KS_QUEUE;
    }
    return KS_QUEUE_SKIP;
}

/* events_to_register - EventsToRegister with QueueingHints, as upstream's. Start-up. */
static uint32_t events_to_register(void *self, struct ks_event_registration *out, uint32_t max)
{
    static const struct ks_event_registration events[] = {
        {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT}, hint_node_unschedulable},
        {{KS_ER_POD, KS_ACT_UPDATE_POD_TOLERATION}, hint_tolerates_unschedulable},
    };
    (void)self;
    pthread_once(&taint_once, intern_taint);
    return ks_events_copy(out, max, events, sizeof(events) / sizeof(events[0]));
}

const struct ks_plugin ks_plugin_node_unschedulable = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeUnschedulable",
    .init = init,
    .destroy = destroy,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .sign = sign,
    .events_to_register = events_to_register,
};
