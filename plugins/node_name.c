/*
 * node_name.c - the NodeName plugin: a pod that names a node in spec.nodeName fits only that
 * node (Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodename/node_name.go: an empty nodeName fits
 * every node; otherwise the names must be equal, else UnschedulableAndUnresolvable with
 * "node(s) didn't match the requested node name". Both names are interned, so the check is
 * one integer compare. The signature is spec.nodeName. It takes no args; the instance holds
 * the interned message.
 */
#include <errno.h>
#include <stdlib.h>

#include "ksched/base/intern.h"
#include "ksched/framework_types.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

struct node_name {
    uint32_t reason; /* ErrReason */
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct node_name *p = malloc(sizeof(*p));

    (void)in;
    (void)err;
    if (!p)
        return -ENOMEM;
    p->reason = ks_intern("node(s) didn't match the requested node name");
    if (p->reason == KS_ID_NONE) {
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
    const struct node_name *p = self;

    (void)cs;
    if (pod->node_name == KS_ID_EMPTY || pod->node_name == node->name)
        return KS_SUCCESS;
    st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    st->nreasons = 1;
    st->reasons[0] = p->reason;
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* sign - the Filter reads spec.nodeName. Scheduling thread; allocation-free. */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    (void)self;
    (void)cs;
    ks_sign_u32(sig, pod->node_name);
    return KS_SUCCESS;
}

/* ---- events ---------------------------------------------------------------------------------- */

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_NODE, KS_ACT_ADD}, NULL},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_node_name = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeName",
    .init = init,
    .destroy = destroy,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .sign = sign,
    .events_to_register = events_to_register,
};
