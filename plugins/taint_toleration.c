/*
 * taint_toleration.c - the TaintToleration plugin: filters nodes with NoSchedule/NoExecute taints
 * the pod does not tolerate and scores nodes by their untolerated PreferNoSchedule taints (Filter,
 * PreScore, Score, NormalizeScore).
 *
 * Mirrors pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go:
 *  - Filter: the first NoSchedule or NoExecute taint (in node order) that no toleration
 *    tolerates rejects the node as UnschedulableAndUnresolvable with
 *    "node(s) had untolerated taint {<key>: <value>}". The message of every taint is
 *    interned by the cache when it builds the node record (ks_node_snap.taint_reasons), so
 *    the rejection copies one id.
 *  - PreScore keeps the pod's tolerations whose effect is PreferNoSchedule or empty (all
 *    effects); it never skips (upstream returns nil for every pod).
 *  - Score counts the node's PreferNoSchedule taints those tolerations do not tolerate.
 *  - NormalizeScore is helper.DefaultNormalizeScore(MaxNodeScore, reverse): the node with
 *    the most untolerated PreferNoSchedule taints gets 0, nodes with none get 100.
 *  - The signature is the pod's tolerations.
 * It takes no args. The PreScore state lives in the cycle's arena and is not changed
 * afterwards (no state_clone needed).
 */
#include <errno.h>
#include <stdlib.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_hints.h"
#include "ksched/plugin_helpers_sign.h"
#include "ksched/registry.h"

struct taint_toleration {
    uint16_t slot;
};

/* preScoreState: the tolerations that can tolerate PreferNoSchedule taints. */
struct tt_state {
    uint32_t n;
    struct ks_toleration tols[];
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct taint_toleration *p = malloc(sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    free(self);
}

/* helper.DoNotScheduleTaintsFilterFunc */
static bool do_not_schedule(enum ks_taint_effect e)
{
    return e == KS_EFFECT_NO_SCHEDULE || e == KS_EFFECT_NO_EXECUTE;
}

/* A node record without interned taint messages (never built by the cache): format it. */
__attribute__((noinline, cold)) static int reject_formatted(const struct ks_taint *t, struct ks_status *st)
{
    return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {%s: %s}",
                         ks_intern_str(t->key), ks_intern_str(t->value));
}

/* filter_node - Context: worker threads; reads the pod and the node record only; allocation-free. */
static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
                                               const struct ks_pod *pod, const struct ks_node_snap *node,
                                               struct ks_status *st)
{
    (void)self;
    (void)cs;
    /* the record's taint summary spares untainted nodes a read of the node object */
    if ((node->taints & (KS_SNAP_TAINTS_KNOWN | KS_SNAP_TAINTS_HARD)) == KS_SNAP_TAINTS_KNOWN)
        return KS_SUCCESS;
    const struct ks_node *n = node->node;
    if (!n || n->ntaints == 0)
        return KS_SUCCESS;
    const struct ks_taint *t = ks_find_untolerated_taint(n->taints, n->ntaints, pod->tolerations,
                                                         pod->ntolerations, do_not_schedule);
    if (!t)
        return KS_SUCCESS;
    if (__builtin_expect(!node->taint_reasons, 0))
        return reject_formatted(t, st);
    st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    st->nreasons = 1;
    st->reasons[0] = node->taint_reasons[t - n->taints];
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

KS_FILTER_OPS(filter, filter_nodes, filter_node)

/* pre_score - getAllTolerationPreferNoSchedule into the cycle state. Scheduling thread. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t nnodes, struct ks_status *st)
{
    const struct taint_toleration *p = self;
    uint32_t n = 0;

    (void)nodes;
    (void)nnodes;
    for (uint32_t i = 0; i < pod->ntolerations; i++) {
        enum ks_taint_effect e = pod->tolerations[i].effect;
        n += e == KS_EFFECT_NONE || e == KS_EFFECT_PREFER_NO_SCHEDULE;
    }
    struct tt_state *s = ks_arena_alloc(&cs->arena, sizeof(*s) + (size_t)n * sizeof(s->tols[0]));
    if (!s)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < pod->ntolerations; i++) {
        enum ks_taint_effect e = pod->tolerations[i].effect;
        if (e == KS_EFFECT_NONE || e == KS_EFFECT_PREFER_NO_SCHEDULE)
            s->tols[s->n++] = pod->tolerations[i];
    }
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

__attribute__((noinline, cold)) static int no_state(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR,
                         "failed to read \"PreScoreTaintToleration\" from cycleState: not found");
}

/* score_node - countIntolerableTaintsPreferNoSchedule. Worker threads; allocation-free. */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    const struct taint_toleration *p = self;
    const struct tt_state *s = cs->slot[p->slot];
    int64_t count = 0;

    (void)pod;
    if (__builtin_expect(!s, 0))
        return no_state(st);
    *out = 0;
    if ((node->taints & (KS_SNAP_TAINTS_KNOWN | KS_SNAP_TAINTS_PREFER)) == KS_SNAP_TAINTS_KNOWN)
        return KS_SUCCESS; /* no PreferNoSchedule taint: nothing to count, no node object to read */
    const struct ks_node *n = node->node;
    for (uint32_t i = 0; n && i < n->ntaints; i++) {
        const struct ks_taint *t = &n->taints[i];
        if (t->effect != KS_EFFECT_PREFER_NO_SCHEDULE)
            continue;
        uint32_t k = 0;
        while (k < s->n && !ks_toleration_tolerates(&s->tols[k], t))
            k++;
        count += k == s->n;
    }
    *out = count;
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/*
 * sign - Filter reads every toleration, Score those PreScore keeps from them (PreScore
 * never skips and reads no node). Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    (void)self;
    (void)cs;
    ks_sign_tolerations(sig, pod->tolerations, pod->ntolerations);
    return KS_SUCCESS;
}

/* ---- events and QueueingHints ---------------------------------------------------------------- */

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

/* EventsToRegister with QueueingHints, as upstream's. */
static const struct ks_event_registration events[] = {
    {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_TAINT}, hint_taint_node},
    {{KS_ER_POD, KS_ACT_UPDATE_POD_TOLERATION}, ks_hint_same_pod},
};
KS_DEFINE_EVENTS_TO_REGISTER(events)

const struct ks_plugin ks_plugin_taint_toleration = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "TaintToleration",
    .init = init,
    .destroy = destroy,
    .filter = filter,
    .filter_nodes = filter_nodes,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .normalize_score = ks_normalize_score_reverse,
    .sign = sign,
    .events_to_register = events_to_register,
};
