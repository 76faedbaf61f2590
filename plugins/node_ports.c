/*
 * node_ports.c - the NodePorts plugin: filters out nodes where a host port the pod asks for is
 * already in use (PreFilter, Filter).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodeports/node_ports.go (current upstream):
 *  - PreFilter collects the pod's host ports as util.GetHostPorts does: the ports with a
 *    hostPort > 0 of the restartable init containers (sidecars, restartPolicy: Always),
 *    then of the containers; an empty hostIP reads as 0.0.0.0 and the protocol defaults to
 *    TCP (HostPortInfo's sanitize). A pod without host ports is Skip.
 *  - Filter rejects a node as Unschedulable "node(s) didn't have free ports for the
 *    requested pod ports" when any wanted port conflicts with the node's used ports as
 *    HostPortInfo.CheckConflict decides: same protocol and port, and the same IP, or
 *    either side bound to 0.0.0.0. Without PreFilter state it is an Error
 *    "reading \"PreFilterNodePorts\" from cycleState: not found", as upstream.
 * The node record's ports (struct ks_node_snap.ports) are a set sorted by (port,
 * protocol, ip), so each wanted port is one binary search plus a scan of the entries with
 * the same port and protocol. The signature is the PreFilter's list of ports. It takes no
 * args. The PreFilter state lives in the cycle's arena and is never changed by add_pod /
 * remove_pod (no state_clone).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

struct node_ports {
    uint16_t slot;
    uint32_t any_ip;    /* interned "0.0.0.0" (DefaultBindAllHostIP) */
    uint32_t msg_ports; /* ErrReason */
    uint32_t msg_state; /* the missing-state error */
};

/* preFilterState: the pod's host ports, sanitized. */
struct np_state {
    uint32_t n;
    struct ks_host_port ports[];
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct node_ports *p = malloc(sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    p->any_ip = ks_intern("0.0.0.0");
    p->msg_ports = ks_intern("node(s) didn't have free ports for the requested pod ports");
    p->msg_state = ks_intern("reading \"PreFilterNodePorts\" from cycleState: not found");
    if (p->any_ip == KS_ID_NONE || p->msg_ports == KS_ID_NONE || p->msg_state == KS_ID_NONE) {
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

/* pre_filter - util.GetHostPorts into the cycle state; Skip without host ports. Scheduling thread. */
static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    const struct node_ports *p = self;
    uint32_t n = ks_pod_host_ports(pod, p->any_ip, NULL);

    (void)res;
    if (n == 0)
        return KS_SKIP;
    struct np_state *s = ks_arena_alloc(&cs->arena, sizeof(*s) + (size_t)n * sizeof(s->ports[0]));
    if (!s)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->n = ks_pod_host_ports(pod, p->any_ip, s->ports);
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* HostPortInfo.CheckConflict of @want against the node's sorted used ports. */
static bool conflicts(const struct ks_host_port *used, uint32_t n, const struct ks_host_port *want,
                      uint32_t any_ip)
{
    uint32_t lo = 0, hi = n;

    /* the first entry not below (port, protocol) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (used[mid].port < want->port ||
            (used[mid].port == want->port && used[mid].protocol < want->protocol))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t i = lo; i < n && used[i].port == want->port && used[i].protocol == want->protocol; i++) {
        if (ks_host_port_conflict(&used[i], want, any_ip))
            return true;
    }
    return false;
}

/* filter_node - fitsPorts. Worker threads; reads the cycle state and the node record; allocation-free. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    const struct node_ports *p = self;
    const struct np_state *s = cs->slot[p->slot];

    (void)pod;
    if (__builtin_expect(!s, 0)) {
        st->code = KS_ERROR;
        st->nreasons = 1;
        st->reasons[0] = p->msg_state;
        return KS_ERROR;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        if (conflicts(node->ports, node->nports, &s->ports[i], p->any_ip)) {
            st->code = KS_UNSCHEDULABLE;
            st->nreasons = 1;
            st->reasons[0] = p->msg_ports;
            return KS_UNSCHEDULABLE;
        }
    }
    return KS_SUCCESS;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/*
 * sign - the host ports PreFilter collected, which are all the Filter reads (none when it
 * skipped). Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct node_ports *p = self;
    const struct np_state *s = cs->slot[p->slot];

    (void)pod;
    ks_sign_u32(sig, s ? s->n : 0);
    for (uint32_t i = 0; s && i < s->n; i++) {
        ks_sign_u32(sig, s->ports[i].ip);
        ks_sign_u32(sig, (uint32_t)s->ports[i].port << 8 | s->ports[i].protocol);
    }
    return KS_SUCCESS;
}

/* ---- events and QueueingHints ---------------------------------------------------------------- */

/* The interned "0.0.0.0" the hint compares host IPs with, set before any hint runs. */
static uint32_t any_ip;
static pthread_once_t any_ip_once = PTHREAD_ONCE_INIT;

static void intern_any_ip(void)
{
    any_ip = ks_intern("0.0.0.0");
}

/* Does a host port of @a conflict with one of @b (HostPortInfo.CheckConflict)? */
static bool ports_conflict(const struct ks_pod *a, const struct ks_pod *b)
{
    struct ks_host_port_iter ia = {.pod = a, .any_ip = any_ip};
    struct ks_host_port x, y;
    while (ks_host_ports_next(&ia, &x)) {
        struct ks_host_port_iter ib = {.pod = b, .any_ip = any_ip};
        while (ks_host_ports_next(&ib, &y)) {
            if (ks_host_port_conflict(&x, &y, any_ip))
                return true;
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
    if (!ks_pod_assigned_or_nominated(deleted))
        return KS_QUEUE_SKIP;
    return ports_conflict(pod, deleted) ? KS_QUEUE : KS_QUEUE_SKIP;
}

/* events_to_register - EventsToRegister with QueueingHints, as upstream's. Start-up. */
static uint32_t events_to_register(void *self, struct ks_event_registration *out, uint32_t max)
{
    static const struct ks_event_registration events[] = {
        {{KS_ER_POD, KS_ACT_DELETE}, hint_ports_pod_deleted},
        {{KS_ER_NODE, KS_ACT_ADD}, NULL},
    };
    (void)self;
    pthread_once(&any_ip_once, intern_any_ip);
    return ks_events_copy(out, max, events, sizeof(events) / sizeof(events[0]));
}

const struct ks_plugin ks_plugin_node_ports = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodePorts",
    .init = init,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .sign = sign,
    .events_to_register = events_to_register,
};
