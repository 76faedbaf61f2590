/*
 * preemption_group.c - workload-aware preemption (KEP-5710): the evaluator a
 * PodGroupPostFilter plugin calls for a PodGroup (include/ksched/internal/preemption.h).
 *
 * Mirrors pkg/scheduler/framework/preemption's PodGroupEvaluator (selectVictimsOnDomain over
 * the "cluster" domain), its victim units (getCrossNodesVictims, NewPodVictim, NewVictim) and
 * MoreImportantVictim / FilterVictimsWithPDBViolation of util.go, without CompositePodGroups.
 *
 * Where upstream removes the victims from a mutable copy of its snapshot, the cache hides
 * them (ks_cache_hide_pod): the group's algorithm and the refits then run on snapshots
 * published without them, and every hidden pod is back before the function returns. The
 * refit of a reprieved unit runs each member's PreFilter again on the cluster with the unit
 * back, where upstream updates the cycle states it kept with PreFilterExtensions: the same
 * state, computed whole.
 *
 * Invariants: every pod reference taken here (units' pods) is dropped before return; the
 * scheduling thread is the only one that hides and unhides.
 */
#include "ksched/internal/preemption.h"

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/features.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/pod_groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A victim unit: a pod, or every scheduled pod of a PodGroup whose disruptionMode is All. */
struct unit {
    uint32_t first, n; /* its pods: pods[first .. first + n) */
    int32_t priority;
    bool group;     /* of a PodGroup: more important than a lone pod of the same priority */
    bool violating; /* evicting it would violate a PodDisruptionBudget */
    bool victim;
    int64_t earliest; /* the earliest start time of its pods */
};

struct victims {
    struct ks_cache *cache;
    uint32_t npods, cap_pods, cap_nodes;
    const struct ks_pod **pods; /* each with a reference */
    uint32_t *nodes;            /* parallel to pods: the node each is on */
    uint32_t nunits, cap_units;
    struct unit *units;
    uint32_t *order; /* the units, in the order they are tried for a reprieve */
    uint32_t nseen, cap_seen;
    uint64_t *seen; /* (namespace, group) of the disruptionMode All groups met, sorted */
    int64_t now_ns;
};

static void victims_free(struct victims *v)
{
    for (uint32_t i = 0; i < v->npods; i++)
        ks_pod_put(v->pods[i]);
    free(v->pods);
    free(v->nodes);
    free(v->units);
    free(v->order);
    free(v->seen);
}

static uint64_t group_id(uint32_t ns, uint32_t name)
{
    return (uint64_t)ns << 32 | name;
}

/* Mark @id seen; false when it was already. -ENOMEM as a negative. */
static int see(struct victims *v, uint64_t id)
{
    uint32_t lo = 0, hi = v->nseen;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v->seen[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < v->nseen && v->seen[lo] == id)
        return 0;
    if (KS_RESERVE(v->seen, v->cap_seen, (uint64_t)v->nseen + 1) < 0)
        return -ENOMEM;
    memmove(&v->seen[lo + 1], &v->seen[lo], (size_t)(v->nseen - lo) * sizeof(*v->seen));
    v->seen[lo] = id;
    v->nseen++;
    return 1;
}

/* A unit of the @n pods @pods (references handed over) with @priority; @node: where a lone pod is
 * (KS_ID_NONE: look up). */
static int add_unit(struct victims *v, const struct ks_pod **pods, uint32_t n, int32_t priority, bool group,
                    uint32_t node)
{
    if (KS_RESERVE(v->pods, v->cap_pods, (uint64_t)v->npods + n) < 0 ||
        KS_RESERVE(v->nodes, v->cap_nodes, (uint64_t)v->npods + n) < 0 ||
        KS_RESERVE(v->units, v->cap_units, (uint64_t)v->nunits + 1) < 0) {
        for (uint32_t i = 0; i < n; i++)
            ks_pod_put(pods[i]);
        return -ENOMEM;
    }
    struct unit *u = &v->units[v->nunits++];
    *u =
        (struct unit){.first = v->npods, .n = n, .priority = priority, .group = group, .earliest = INT64_MAX};
    for (uint32_t i = 0; i < n; i++) {
        int64_t t = ks_preempt_pod_start_time(pods[i], v->now_ns);
        if (t < u->earliest)
            u->earliest = t;
        v->nodes[v->npods] = node != KS_ID_NONE ? node : ks_cache_pod_node(v->cache, pods[i]);
        v->pods[v->npods++] = pods[i];
    }
    return 0;
}

/* The scheduled pods (assumed or bound) of group @ns/@name, each with a reference, into *@out. */
static int64_t scheduled_members(struct ks_pod_groups *groups, struct ks_cache *cache, uint32_t ns,
                                 uint32_t name, const struct ks_pod ***out)
{
    uint32_t cap = 0, n;
    const struct ks_pod **pods = NULL;
    for (;;) {
        n = ks_pod_groups_members(groups, ns, name, pods, cap);
        if (n <= cap)
            break;
        for (uint32_t i = 0; i < cap; i++)
            ks_pod_put(pods[i]);
        if (KS_RESERVE(pods, cap, n) < 0) {
            free(pods);
            return -ENOMEM;
        }
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ks_cache_pod_node(cache, pods[i]) != KS_ID_NONE)
            pods[k++] = pods[i];
        else
            ks_pod_put(pods[i]);
    }
    *out = pods;
    return k;
}

/*
 * The units of lower priority than @g (getCrossNodesVictims), from the pods of @snap's nodes in
 * node order. A pod of a PodGroup that exists counts with the group's priority; a pod naming a
 * group is of group rank whether or not the group exists (NewPodVictim).
 */
static int collect(const struct ks_preemptor *p, const struct ks_pod_group_preemptor *g,
                   const struct ks_snapshot *snap, struct victims *v)
{
    const struct ks_framework_deps *deps = ks_framework_deps(p->fw);
    bool workloads = ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD) && deps->groups;
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *node = ks_snapshot_node(snap, i);
        for (uint32_t j = 0; j < node->npods; j++) {
            const struct ks_pod *pod = node->pods[j];
            uint32_t key = workloads ? ks_pod_group_key(pod) : KS_ID_NONE;
            struct ks_pod_group_state gs = {0};
            bool exists = key != KS_ID_NONE &&
                          ks_pod_groups_state(deps->groups, pod->meta.namespace_id, key, &gs) && gs.exists;
            int32_t priority = exists ? (gs.spec.has_priority ? gs.spec.priority : 0) : pod->priority;
            if (exists && gs.spec.disrupt_all) {
                int fresh = see(v, group_id(pod->meta.namespace_id, key));
                if (fresh < 0)
                    return -ENOMEM;
                if (!fresh || priority >= g->priority)
                    continue;
                const struct ks_pod **pods = NULL, *one = NULL;
                int64_t n = scheduled_members(deps->groups, deps->cache, pod->meta.namespace_id, key, &pods);
                if (n < 0)
                    return -ENOMEM;
                int rc = n > 0 ? add_unit(v, pods, (uint32_t)n, priority, true, KS_ID_NONE)
                               : (one = ks_pod_get(pod), add_unit(v, &one, 1, priority, true, node->name));
                free(pods);
                if (rc < 0)
                    return rc;
                continue;
            }
            if (priority >= g->priority)
                continue;
            const struct ks_pod *one = ks_pod_get(pod);
            if (add_unit(v, &one, 1, priority, key != KS_ID_NONE, node->name) < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

static const char *uid_of(const struct ks_pod *p)
{
    return p->meta.uid ? p->meta.uid : "";
}

/* MoreImportantVictim, with the pods' names after the uid so that the order is total. */
static int unit_cmp(const struct victims *v, const struct unit *a, const struct unit *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->group != b->group)
        return a->group ? -1 : 1;
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    if (a->earliest != b->earliest)
        return a->earliest < b->earliest ? -1 : 1;
    const struct ks_pod *pa = v->pods[a->first], *pb = v->pods[b->first];
    int c = strcmp(uid_of(pa), uid_of(pb));
    if (c)
        return c;
    if (pa->meta.namespace_id != pb->meta.namespace_id)
        return strcmp(ks_intern_str(pa->meta.namespace_id), ks_intern_str(pb->meta.namespace_id));
    return strcmp(pa->meta.name, pb->meta.name);
}

/* Sort the unit indices most important first (a merge sort: stable, O(n log n)). */
static void sort_units(const struct victims *v, uint32_t *idx, uint32_t *tmp, uint32_t n)
{
    if (n < 2)
        return;
    uint32_t h = n / 2;
    sort_units(v, idx, tmp, h);
    sort_units(v, idx + h, tmp, n - h);
    uint32_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = unit_cmp(v, &v->units[idx[j]], &v->units[idx[i]]) < 0 ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof(*idx));
}

/*
 * v->order: the units most important first, those that violate a PDB before the others
 * (FilterVictimsWithPDBViolation over the sorted units, each pod costing its budgets).
 */
static int order_units(const struct ks_preemptor *p, struct victims *v)
{
    uint32_t n = v->nunits;
    uint32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    int32_t *allowed = calloc(p->npdbs ? p->npdbs : 1, sizeof(*allowed));
    if (!(v->order = malloc((n ? n : 1) * sizeof(*v->order))) || !tmp || !allowed) {
        free(tmp);
        free(allowed);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        v->order[i] = i;
    sort_units(v, v->order, tmp, n);
    for (uint32_t k = 0; k < p->npdbs; k++)
        allowed[k] = p->pdbs[k]->disruptions_allowed;
    uint32_t nv = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct unit *u = &v->units[v->order[i]];
        for (uint32_t j = 0; j < u->n; j++)
            u->violating |= ks_preempt_pdb_take(p, v->pods[u->first + j], allowed);
        nv += u->violating;
    }
    /* violating ones first, each part in order */
    uint32_t a = 0, b = nv;
    for (uint32_t i = 0; i < n; i++)
        tmp[v->units[v->order[i]].violating ? a++ : b++] = v->order[i];
    memcpy(v->order, tmp, n * sizeof(*tmp));
    free(tmp);
    free(allowed);
    return 0;
}

/* Hide (@hide) or put back the pods of @u; a pod the cache no longer holds is skipped. */
static int show_unit(const struct ks_preemptor *p, const struct victims *v, const struct unit *u, bool hide)
{
    struct ks_cache *cache = ks_framework_deps(p->fw)->cache;
    for (uint32_t j = 0; j < u->n; j++) {
        const struct ks_pod *pod = v->pods[u->first + j];
        int rc = hide ? ks_cache_hide_pod(cache, pod) : ks_cache_unhide_pod(cache, pod);
        if (rc == -ENOMEM)
            return rc;
    }
    return 0;
}

/*
 * preemptorEligibleToPreemptOthers: NULL when the group may preempt; else the message, with
 * *@ongoing set when an earlier preemption for it is still under way.
 */
static const char *not_eligible(const struct ks_preemptor *p, const struct ks_pod_group_preemptor *g,
                                const struct ks_snapshot *snap, bool *ongoing)
{
    *ongoing = false;
    for (uint32_t i = 0; i < g->nmembers; i++) {
        if (g->members[i]->preemption_policy == KS_PREEMPT_NEVER)
            return "not eligible due to preemptionPolicy=Never.";
    }
    for (uint32_t i = 0; i < g->nmembers; i++) {
        const struct ks_pod *m = g->members[i];
        uint32_t nominated = p->nominator ? ks_nominator_node(p->nominator, m) : KS_ID_EMPTY;
        if (nominated == KS_ID_EMPTY)
            nominated = m->nominated_node_name;
        const struct ks_node_snap *node = nominated != KS_ID_EMPTY ? ks_snapshot_find(snap, nominated) : NULL;
        for (uint32_t j = 0; node && j < node->npods; j++) {
            const struct ks_pod *x = node->pods[j];
            if (x->priority < g->priority && ks_preempt_pod_terminating(x)) {
                *ongoing = true;
                return "ongoing preemption on nominated nodes";
            }
        }
    }
    return NULL;
}

/* Each member keeps the node it is nominated to (buildCurrentNominatingInfos). */
static void current_nominations(const struct ks_preemptor *p, struct ks_pod_group_preemptor *g)
{
    for (uint32_t i = 0; i < g->nmembers; i++) {
        uint32_t node = p->nominator ? ks_nominator_node(p->nominator, g->members[i]) : KS_ID_EMPTY;
        g->nominated[i] = node != KS_ID_EMPTY ? node : g->members[i]->nominated_node_name;
    }
}

/* Evict the victims, most important first (actuatePodGroupPreemption). */
static int evict(const struct ks_preemptor *p, const struct victims *v, struct ks_status *st)
{
    struct ks_cache *cache = ks_framework_deps(p->fw)->cache;
    for (uint32_t i = 0; i < v->nunits; i++) {
        const struct unit *u = &v->units[v->order[i]];
        for (uint32_t j = 0; u->victim && j < u->n; j++) {
            const struct ks_pod *pod = v->pods[u->first + j];
            if (pod->meta.deletion_time != KS_TIME_NONE)
                continue; /* graceful deletion already started */
            if (p->plugin && ks_fw_reject(p->fw, pod, p->plugin, "preempted") == 0)
                continue; /* waiting on Permit: rejected instead */
            if (!p->evictor || !p->evictor->evict)
                continue;
            uint32_t node = ks_cache_pod_node(cache, pod);
            int rc = p->evictor->evict(p->evictor->ctx, pod, p->pod, node != KS_ID_NONE ? node : KS_ID_EMPTY);
            if (rc < 0)
                return ks_status_set(st, KS_ERROR, "preempting pod %s/%s: %s",
                                     ks_intern_str(pod->meta.namespace_id), pod->meta.name, strerror(-rc));
        }
    }
    return KS_SUCCESS;
}

/* @only: @nodes with the members on none of @u's nodes left out (KS_ID_NONE); false when none is left. */
static bool touched(const struct victims *v, const struct unit *u, const uint32_t *nodes, uint32_t n,
                    uint32_t *only)
{
    bool any = false;
    for (uint32_t i = 0; i < n; i++) {
        only[i] = KS_ID_NONE;
        for (uint32_t j = 0; nodes[i] != KS_ID_NONE && j < u->n; j++) {
            if (v->nodes[u->first + j] == nodes[i]) {
                only[i] = nodes[i];
                any = true;
                break;
            }
        }
    }
    return any;
}

/*
 * The units in order, each back in the cluster and kept when the members still fit. When
 * every member's Filter reads its node alone (g->node_local), only the members on the unit's
 * nodes are refitted (upstream's node-local first phase, whose answer the full replay cannot
 * change for such members), and a unit on none of their nodes is kept at once.
 */
static int reprieve(const struct ks_preemptor *p, struct ks_pod_group_preemptor *g, struct victims *v,
                    const uint32_t *nodes, struct ks_status *st)
{
    uint32_t *only = malloc((g->nmembers ? g->nmembers : 1) * sizeof(*only));
    if (!only)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < v->nunits; i++) {
        struct unit *u = &v->units[v->order[i]];
        if (show_unit(p, v, u, false) < 0) {
            free(only);
            return ks_status_set(st, KS_ERROR, "out of memory");
        }
        /* members whose Filter reads only their node: those on the unit's nodes decide */
        int rc = KS_SUCCESS;
        if (!g->node_local)
            rc = g->refit(g->ctx, nodes, st);
        else if (touched(v, u, nodes, g->nmembers, only))
            rc = g->refit(g->ctx, only, st);
        if (rc == KS_SUCCESS)
            continue;
        if (rc != KS_UNSCHEDULABLE && rc != KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            free(only);
            return rc;
        }
        u->victim = true;
        g->nvictims += u->n;
        if (show_unit(p, v, u, true) < 0) {
            free(only);
            return ks_status_set(st, KS_ERROR, "out of memory");
        }
    }
    free(only);
    return KS_SUCCESS;
}

static int select_and_evict(const struct ks_preemptor *p, struct ks_pod_group_preemptor *g, struct victims *v,
                            uint32_t *nodes, struct ks_status *st)
{
    struct ks_cache *cache = ks_framework_deps(p->fw)->cache;
    for (uint32_t i = 0; i < v->nunits; i++) {
        if (show_unit(p, v, &v->units[i], true) < 0)
            return ks_status_set(st, KS_ERROR, "out of memory");
    }
    int rc = g->schedule(g->ctx, nodes, st);
    if (rc != KS_SUCCESS)
        return rc;
    if (order_units(p, v) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    if ((rc = reprieve(p, g, v, nodes, st)) != KS_SUCCESS)
        return rc;
    ks_cache_unhide_all(cache);
    if ((rc = evict(p, v, st)) != KS_SUCCESS)
        return rc;
    for (uint32_t i = 0; i < g->nmembers; i++)
        g->nominated[i] = nodes[i] != KS_ID_NONE ? nodes[i] : KS_ID_EMPTY;
    return ks_status_set(st, KS_SUCCESS, "found a placement for podgroup, preempting %u victims",
                         g->nvictims);
}

int ks_preempt_pod_group(const struct ks_preemptor *p, struct ks_pod_group_preemptor *g, struct ks_status *st)
{
    const struct ks_framework_deps *deps = ks_framework_deps(p->fw);
    struct victims v = {.now_ns = p->now_ns, .cache = deps->cache};
    uint32_t *nodes = calloc(g->nmembers ? g->nmembers : 1, sizeof(*nodes));
    bool ongoing;
    int rc;

    g->nvictims = 0;
    for (uint32_t i = 0; i < g->nmembers; i++)
        g->nominated[i] = KS_ID_EMPTY;
    if (!nodes || !deps->cache)
        return free(nodes), ks_status_set(st, KS_ERROR, nodes ? "no cluster to preempt in" : "out of memory");
    if (ks_cache_refresh(deps->cache) < 0) {
        free(nodes);
        return ks_status_set(st, KS_ERROR, "out of memory refreshing the snapshot");
    }
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(deps->cache);
    const char *why = not_eligible(p, g, snap, &ongoing);
    rc = why ? 0 : collect(p, g, snap, &v);
    ks_rcu_read_unlock();

    if (why && ongoing) {
        current_nominations(p, g);
        rc = ks_status_set(st, KS_SUCCESS, "%s", why);
    } else if (why) {
        rc = ks_status_set(st, KS_UNSCHEDULABLE, "%s", why);
    } else if (rc < 0) {
        rc = ks_status_set(st, KS_ERROR, "out of memory");
    } else if (v.nunits == 0) {
        rc = ks_status_set(st, KS_UNSCHEDULABLE, "No preemption victims found for incoming preemptor");
    } else {
        rc = select_and_evict(p, g, &v, nodes, st);
        ks_cache_unhide_all(deps->cache);
        /* publish the cluster as it is again (a failed refresh leaves it to the next cycle's) */
        (void)ks_cache_refresh(deps->cache);
        if (rc != KS_SUCCESS)
            g->nvictims = 0;
    }
    victims_free(&v);
    free(nodes);
    return rc;
}
