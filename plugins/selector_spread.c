/*
 * selector_spread.c - the SelectorSpread plugin: spreads pods of the same Service, ReplicaSet or
 * StatefulSet across nodes and zones; a v1beta2/v1beta3 plugin, invalid in v1 and removed upstream
 * in 1.27 (PreScore, Score, NormalizeScore).
 *
 * Mirrors pkg/scheduler/framework/plugins/selectorspread/selector_spread.go (Kubernetes
 * 1.22-1.26). It takes no args.
 *  - A pod with topologySpreadConstraints of its own is left to PodTopologySpread: every
 *    node scores 0 and NormalizeScore leaves the scores alone (skipSelectorSpread).
 *  - PreScore keeps helper.DefaultSelector(pod) (plugins/helpers/helper_spread.c) in the cycle
 *    state; it never skips.
 *  - Score counts the node's pods of the pod's namespace, not terminating, that the
 *    selector matches (0 for an empty selector).
 *  - NormalizeScore, over the scored nodes: with maxNode the largest count, a node scores
 *    100 * (maxNode - count) / maxNode (100 when maxNode is 0); when some scored node has a
 *    zone (GetZoneKey: region and zone labels), a node with a zone blends that with its
 *    zone's score 100 * (maxZone - zoneCount) / maxZone, weighting the zone 2/3; floats
 *    truncated to integers as upstream.
 *  - Signature: a pod that some workload selects is unsignable; for any other pod the
 *    scores are constant.
 * The PreScore state lives in the cycle's arena and is not changed afterwards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_helpers_spread.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

struct selector_spread {
    uint16_t slot;
    const struct ks_objects *objects;
    struct ks_cache *cache;
    struct ks_spread_tracker tracked; /* the selectors the cache counts, as the last cycles used them */
    struct ks_spread_owners *owners;  /* the workloads and Services the default selector reads, indexed */
};

/* A zone (region, zone ids) and its summed count. */
struct zone_count {
    uint32_t region, zone;
    int64_t count;
};

/* preScoreState, plus NormalizeScore's scratch for the @n scored nodes. */
struct ss_state {
    const struct ks_label_selector *selector;
    uint32_t sel_id; /* the records' counts of it (ks_spread_node_count), or KS_ID_NONE */
    uint32_t n;
    struct zone_count *zones; /* [n] zones in order of first appearance */
    uint32_t *zone_of;        /* [n] index in zones of each node, UINT32_MAX: no zone */
    uint32_t mask;            /* slots - 1 */
    uint32_t *slots;          /* open addressing over zones: index or UINT32_MAX */
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct selector_spread *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p || ks_api_init() < 0 || ks_spread_owners_create(&p->owners) < 0) {
        free(p);
        return -ENOMEM;
    }
    p->slot = in->slot;
    if (in->framework) {
        p->objects = ks_framework_deps(in->framework)->objects;
        p->cache = ks_framework_deps(in->framework)->cache;
    }
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    struct selector_spread *p = self;
    if (!p)
        return;
    ks_spread_tracker_destroy(&p->tracked);
    ks_spread_owners_destroy(p->owners);
    free(p);
}

/* skipSelectorSpread: the pod's own spread constraints take over. */
static bool skip(const struct ks_pod *pod)
{
    return pod->nspread != 0;
}

/* pre_score - the pod's default selector into the cycle state. Scheduling thread. */
static int pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st)
{
    struct selector_spread *p = self;
    (void)nodes;
    if (skip(pod))
        return KS_SUCCESS;
    struct ss_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    uint32_t cap = 8;
    while (cap < 2 * (uint64_t)n)
        cap *= 2;
    if (!s || !(s->zones = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->zones))) ||
        !(s->zone_of = ks_arena_calloc(&cs->arena, n ? n : 1, sizeof(*s->zone_of))) ||
        !(s->slots = ks_arena_calloc(&cs->arena, cap, sizeof(*s->slots))) ||
        ks_spread_default_selector(p->objects, ks_spread_owners_sync(p->owners, p->objects), pod, &cs->arena,
                                   &s->selector) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->n = n;
    s->mask = cap - 1;
    s->sel_id = ks_spread_counted_id(&p->tracked, p->cache, p->cache ? ks_cache_snapshot(p->cache) : NULL,
                                     pod->meta.namespace_id, s->selector, NULL);
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

__attribute__((noinline, cold)) static int no_state(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "reading \"PreScoreSelectorSpread\" from cycleState: not found");
}

/* score_node - countMatchingPods. Worker threads; allocation-free. */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    const struct selector_spread *p = self;
    const struct ss_state *s = cs->slot[p->slot];

    *out = 0;
    if (skip(pod))
        return KS_SUCCESS;
    if (__builtin_expect(!s, 0))
        return no_state(st);
    *out = ks_spread_node_count(node, s->selector, pod->meta.namespace_id, s->sel_id);
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/*
 * sign - a pod that some workload selects is unsignable (its counts come from other pods).
 * For any other pod every node scores 0 and normalizes to 100 (or stays 0 when the pod's
 * own constraints skip the plugin), which the signature records. Scheduling thread;
 * allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct selector_spread *p = self;

    (void)cs;
    if (skip(pod)) {
        ks_sign_u32(sig, 1);
        return KS_SUCCESS;
    }
    if (ks_spread_default_selects(p->objects, ks_spread_owners_current(p->owners, p->objects), pod))
        return KS_SKIP;
    ks_sign_u32(sig, 0);
    return KS_SUCCESS;
}

/* normalize_score - Scheduling thread; the zone table is the PreScore state's scratch. */
static int normalize_score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                           struct ks_status *st)
{
    static const double zone_weighting = 2.0 / 3.0;
    const double max_score = KS_MAX_NODE_SCORE;
    const struct selector_spread *p = self;
    const struct ss_state *s = cs->slot[p->slot];
    int64_t max_node = 0, max_zone = 0;
    uint32_t nzones = 0;

    if (skip(pod))
        return KS_SUCCESS;
    if (!s || s->n < n)
        return no_state(st);
    struct zone_count *zones = s->zones;
    uint32_t *zone_of = s->zone_of;
    memset(s->slots, 0xff, ((size_t)s->mask + 1) * sizeof(*s->slots));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t region, zone;
        if (scores[i] > max_node)
            max_node = scores[i];
        zone_of[i] = UINT32_MAX;
        if (!nodes[i]->node || !ks_spread_zone_key(nodes[i]->node, &region, &zone))
            continue;
        /* countsByZone[zoneID] += score */
        uint64_t key = (uint64_t)region << 32 | zone;
        uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & s->mask;
        while (s->slots[h] != UINT32_MAX &&
               (zones[s->slots[h]].region != region || zones[s->slots[h]].zone != zone))
            h = (h + 1) & s->mask;
        if (s->slots[h] == UINT32_MAX) {
            s->slots[h] = nzones;
            zones[nzones++] = (struct zone_count){region, zone, 0};
        }
        zones[s->slots[h]].count += scores[i];
        zone_of[i] = s->slots[h];
    }
    for (uint32_t z = 0; z < nzones; z++) {
        if (zones[z].count > max_zone)
            max_zone = zones[z].count;
    }
    for (uint32_t i = 0; i < n; i++) {
        double f = max_score;
        if (max_node > 0)
            f = max_score * ((double)(max_node - scores[i]) / (double)max_node);
        if (nzones && zone_of[i] != UINT32_MAX) {
            double zone_score = max_score;
            if (max_zone > 0)
                zone_score = max_score * ((double)(max_zone - zones[zone_of[i]].count) / (double)max_zone);
            f = (f * (1.0 - zone_weighting)) + (zone_weighting * zone_score);
        }
        scores[i] = (int64_t)f;
    }
    return KS_SUCCESS;
}

const struct ks_plugin ks_plugin_selector_spread = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "SelectorSpread",
    .init = init,
    .destroy = destroy,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .normalize_score = normalize_score,
    .sign = sign,
};
