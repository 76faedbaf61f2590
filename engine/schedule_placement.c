/*
 * schedule_placement.c - topology-aware workload scheduling (KEP-5732; upstream's
 * podGroupSchedulingPlacementAlgorithm, v1.37, TopologyAwareWorkloadScheduling on): a pod
 * group whose PodGroup has a topology constraint is placed whole within one domain of the
 * constraint's key.
 *
 * The domain is forced when some of the group's pods are already assumed or bound: the one
 * their nodes share ("cannot determine domain for already scheduled pods: ..." when a node
 * lacks the label or they span two). Otherwise every value of the key is a candidate
 * placement (workload/placement.c; upstream iterates a Go map). Each placement is judged
 * alone against the same snapshot, tie-break stream and start node: the default algorithm
 * runs with every node listing limited to the placement's nodes (s->placement), and its
 * reservations are undone. The choice: the highest total of NodeResourcesFit's placement
 * score (MostAllocated over the domain with the group's proposed pods, the profile's weights)
 * and PodGroupPodsCount's (the group's pods in it against the most any placement holds,
 * weight 1); ties go to the larger of a draw per placement. None feasible: the group fails
 * with "0/N placements are available, reported placement status: pod group is
 * unschedulable", each member with what the reported placement gave it.
 *
 * Which placements are evaluated (the decisions are those of evaluating all, which
 * ks__placements_exhaustive does for the tests): those whose capacity cannot hold what minCount
 * needs are passed over; the others in order of their score were every member placed, then of
 * their draw, until the first that holds every member - none after it can win, and it wins,
 * keeping its reservations for the binding, unless one evaluated before it scores more (when
 * a scored scalar resource is asked by only some members that bound does not hold, and all
 * are evaluated). Otherwise the chosen placement's assignments are made again for real, each
 * member on its own node (its cycle state rebuilt), the members that fitted nowhere again
 * within the domain, in the same order, for their FitError.
 *
 * A placement's nodes are also the cycle's listing (cs->listing): PodTopologySpread and
 * InterPodAffinity count only their pods, as upstream's limited listing shows them. A group
 * that cannot be placed is not preempted for (upstream's PodGroupPostFilter declines
 * topology constraints).
 */
#include "podgroup_internal.h"

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct placement_result {
    bool room;      /* its capacity can hold what minCount needs (else it is passed over) */
    bool evaluated; /* its members were scheduled within it */
    bool ok;        /* evaluated, and PlacementFeasible reached Success */
    uint32_t count; /* PodGroupPodsCount's raw count: scheduled + proposed */
    int64_t fit;    /* NodeResourcesFit's placement score */
    uint64_t draw;  /* the tie-break */
    int64_t *add;   /* the proposed pods' requests of each scored resource (sc->adds) */
    char why[256];  /* evaluated and infeasible: PlacementFeasible's reason */
};

/* The domain of the group's scheduled pods (@sched nodes): 0 and *@value (KS_ID_NONE: no pod), or -1 with
 * @err. */
static int required_domain(const struct ks_snapshot *snap, uint32_t key, const uint32_t *sched,
                           uint32_t nsched, uint32_t *value, char *err, size_t len)
{
    *value = KS_ID_NONE;
    for (uint32_t i = 0; i < nsched; i++) {
        const struct ks_node_snap *node = ks_snapshot_find(snap, sched[i]);
        uint32_t v;
        if (!node || !node->node || !ks_labels_get(&node->node->meta.labels, key, &v)) {
            snprintf(
                err, len,
                "cannot determine domain for already scheduled pods: no topology domain found for a pod on "
                "node %s",
                ks_intern_str(sched[i]));
            return -1;
        }
        if (*value != KS_ID_NONE && v != *value) {
            snprintf(
                err, len,
                "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: "
                "%s, %s",
                ks_intern_str(*value), ks_intern_str(v));
            return -1;
        }
        *value = v;
    }
    return 0;
}

/* Limit the cycles to placement @d of @ps (d == UINT32_MAX: no limit). */
static void limit_to(struct ks_scheduler *s, const struct ks_placement_set *ps, uint32_t d)
{
    if (d == UINT32_MAX) {
        s->placement = s->listing = (struct ks_placement_view){0};
        return;
    }
    s->placement.n = ps->first[d + 1] - ps->first[d];
    s->placement.names = &ps->names[ps->first[d]];
    s->listing = s->placement;
}

bool ks__placements_exhaustive;

/* A placement's tie-break: from the cycle's stream and the domain alone (splitmix64). */
static uint64_t draw(uint64_t base, uint32_t value)
{
    uint64_t z = base ^ ((uint64_t)value * UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The index of the best feasible placement, UINT32_MAX when none is. */
static uint32_t best_placement(const struct placement_result *r, uint32_t n, int64_t pods_weight)
{
    uint32_t max_count = 0, best = UINT32_MAX;
    int64_t best_total = -1;
    for (uint32_t d = 0; d < n; d++) {
        if (r[d].ok && r[d].count > max_count)
            max_count = r[d].count;
    }
    for (uint32_t d = 0; d < n; d++) {
        if (!r[d].ok)
            continue;
        int64_t total = r[d].fit + pods_weight * ks_placement_pods_score(r[d].count, max_count);
        if (total > best_total || (total == best_total && r[d].draw > r[best].draw)) {
            best_total = total;
            best = d;
        }
    }
    return best;
}

/* The order of evaluation: the higher all-placed score first, then the larger tie-break. */
static int by_rank(const void *a, const void *b, void *ctx)
{
    const struct placement_result *r = ctx;
    const struct placement_result *x = &r[*(const uint32_t *)a], *y = &r[*(const uint32_t *)b];
    if (x->fit != y->fit)
        return x->fit > y->fit ? -1 : 1;
    return x->draw > y->draw ? -1 : x->draw < y->draw;
}

/*
 * Whether a placement's score is at most its score were every member placed (what the early
 * stop of evaluate() relies on): true unless a scored scalar resource is requested by some
 * members and not others - then which members a placement takes decides whether that resource
 * counts at all, and every placement is evaluated.
 */
static bool scores_bounded(const struct ks_placement_weights *w, const struct member *mv, uint32_t n)
{
    for (uint32_t r = 0; r < w->nres; r++) {
        if (w->res[r].kind != KS_RES_SCALAR)
            continue;
        uint32_t asking = 0;
        for (uint32_t i = 0; i < n; i++)
            asking += ks_res_pod_request(&w->res[r], false, mv[i].qp->pod) != 0;
        if (asking != 0 && asking != n)
            return false;
    }
    return true;
}

/*
 * Per placement, before any is evaluated: whether its capacity can hold the members minCount
 * needs (sc->results[d].ok false: skipped), and its placement score were every member placed
 * (sc->results[d].fit); sc->order holds the placements by that score, best first.
 */
static void rank(struct ks_scheduler *s, struct ks_framework *fw, struct ks_group_scratch *sc,
                 struct member *mv, uint32_t n, const struct ks_pod_group_state *gs, uint32_t scheduled,
                 const struct ks_snapshot *snap)
{
    const struct ks_placement_set *ps = &sc->placements;
    const uint32_t nres = sc->weights.nres;
    int64_t min_cpu = INT64_MAX, min_mem = INT64_MAX, *all = &sc->adds[(size_t)ps->n * nres];
    memset(all, 0, nres * sizeof(*all));
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_pod *p = mv[i].qp->pod;
        min_cpu = p->requests.milli_cpu < min_cpu ? p->requests.milli_cpu : min_cpu;
        min_mem = p->requests.memory < min_mem ? p->requests.memory : min_mem;
        ks_placement_add(&sc->weights, p, all);
    }
    sc->bounded = scores_bounded(&sc->weights, mv, n);
    int64_t min = gs->spec.policy == KS_POD_GROUP_GANG ? gs->spec.min_count : 1;
    uint64_t needed = min > (int64_t)scheduled ? (uint64_t)(min - (int64_t)scheduled) : 0;
    /* an upper bound of what an evaluation can place, as NodeResourcesFit's Filter rejects the rest */
    bool bounded = ks_framework_filters_with(fw, "NodeResourcesFit");
    for (uint32_t d = 0; d < ps->n; d++) {
        uint64_t bound;
        int64_t fit;
        ks_placement_measure(snap, &sc->weights, &ps->pos[ps->first[d]], ps->first[d + 1] - ps->first[d],
                             min_cpu, min_mem, all, &bound, &fit);
        sc->results[d] = (struct placement_result){.room = !bounded || bound >= needed,
                                                   .fit = sc->weights.fit * fit,
                                                   .draw = draw(s->rng, ps->value[d]),
                                                   .add = &sc->adds[(size_t)d * nres]};
        memset(sc->results[d].add, 0, nres * sizeof(*sc->results[d].add));
        sc->order[d] = d;
    }
    bool some = false;
    for (uint32_t d = 0; d < ps->n && !some; d++)
        some = sc->results[d].room;
    qsort_r(sc->order, ps->n, sizeof(*sc->order), by_rank, sc->results);
    if (!some && ps->n)
        sc->results[sc->order[0]].room = true; /* evaluated all the same: its results are the report */
    sc->report = UINT32_MAX;
    for (uint32_t k = 0; k < ps->n && sc->report == UINT32_MAX; k++)
        sc->report = sc->results[sc->order[k]].room ? sc->order[k] : UINT32_MAX;
}

/*
 * Evaluate the placements in sc->order: each the default algorithm limited to its nodes,
 * reverted at once. Those whose capacity cannot reach minCount are passed over (the
 * evaluation could only fail). Once a feasible placement holds every member, none after it in
 * the order can beat it (a placement's score is at most its all-placed score, PodGroupPodsCount
 * is at its maximum, and an equal total goes to the larger tie-break, which sorted it first):
 * evaluation stops at the first such one, which wins unless one evaluated before it (placing
 * fewer members in a fuller domain) scores more; a winner found so keeps its reservations
 * (sc->kept). The first placement in order
 * not passed over (sc->report) is the report when none is feasible; its members' results are
 * kept in sc->first_messages. -1 on an error (@st).
 */
/* NodeResourcesFit's placement score of evaluated placement @d, its pods reverted. -1 on an error. */
static int score_partial(struct ks_scheduler *s, const struct ks_placement_set *ps, uint32_t d,
                         struct placement_result *r, struct ks_status *st)
{
    if (ks_cache_refresh(s->cache) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory refreshing the snapshot"), -1;
    ks_rcu_read_lock();
    r->fit = s->group_scratch->weights.fit *
             ks_placement_fit_score(ks_cache_snapshot(s->cache), &s->group_scratch->weights,
                                    &ps->names[ps->first[d]], ps->first[d + 1] - ps->first[d], r->add);
    ks_rcu_read_unlock();
    return 0;
}

/* Whether full placement @d (every member placed) beats every placement evaluated before it. */
static bool full_wins(const struct ks_group_scratch *sc, uint32_t k, uint32_t d, uint32_t max_count)
{
    const struct placement_result *f = &sc->results[d];
    int64_t w = sc->weights.pods;
    int64_t total = f->fit + w * ks_placement_pods_score(f->count, max_count);
    for (uint32_t j = 0; j < k; j++) {
        const struct placement_result *r = &sc->results[sc->order[j]];
        if (!r->ok)
            continue;
        int64_t t = r->fit + w * ks_placement_pods_score(r->count, max_count);
        if (t > total || (t == total && r->draw > f->draw))
            return false;
    }
    return true;
}

static int evaluate(struct ks_scheduler *s, struct ks_framework *fw, struct ks_group_scratch *sc,
                    struct member *mv, uint32_t n, const struct ks_pod_group_state *gs, uint32_t scheduled,
                    uint64_t cycle, struct ks_status *st)
{
    const struct ks_placement_set *ps = &sc->placements;
    /* every placement starts from the same tie-break stream and start node: judged alike, and skipping one
     * changes nothing */
    uint64_t base_rng = s->rng;
    uint32_t base_start = s->next_start;
    bool stop = false;
    char msg[256];
    sc->kept = UINT32_MAX;
    for (uint32_t k = 0; k < ps->n && !stop; k++) {
        uint32_t d = sc->order[k];
        struct placement_result *r = &sc->results[d];
        if (!r->room && !ks__placements_exhaustive)
            continue;
        bool any;
        s->rng = base_rng;
        s->next_start = base_start;
        limit_to(s, ps, d);
        int v = ks__pg_place_members(s, fw, mv, n, &gs->spec, scheduled, cycle, &any, msg, sizeof(msg), st);
        limit_to(s, ps, UINT32_MAX);
        r->evaluated = true;
        r->ok = v == KS_GANG_FEASIBLE;
        snprintf(r->why, sizeof(r->why), "%s", r->ok ? "" : msg);
        r->count = scheduled;
        for (uint32_t i = 0; i < n; i++) {
            struct ks_bind_job *job = mv[i].job;
            sc->assign[(size_t)d * n + i] = job ? job->node : KS_ID_NONE;
            if (job) {
                r->count++;
                ks_placement_add(&sc->weights, mv[i].qp->pod, r->add);
            }
        }
        /* the first full placement ends the search: it wins, or one evaluated before it does */
        bool full = r->ok && r->count == scheduled + n;
        stop = full && sc->bounded && !ks__placements_exhaustive;
        if (stop && full_wins(sc, k, d, scheduled + n)) {
            sc->kept = d; /* its reservations stay for the binding */
            break;
        }
        ks__pg_revert(s, fw, mv, n);
        for (uint32_t i = 0; i < n; i++) {
            if (d == sc->report)
                sc->first_messages[i] = mv[i].message;
            else
                free(mv[i].message);
            mv[i].message = NULL;
        }
        if (v < 0 || (r->ok && !full && score_partial(s, ps, d, r, st) < 0))
            return -1;
    }
    s->rng = base_rng;
    s->next_start = base_start;
    ks__rand(s);
    return 0;
}

static int apply_members(struct ks_scheduler *s, struct ks_framework *fw, struct ks_group_scratch *sc,
                         struct member *mv, uint32_t n, uint32_t d, uint64_t cycle, bool *any,
                         struct ks_status *st);

/* Make placement @d's assignments for real, in order. KS_SUCCESS, or an error in @st (all reverted). */
static int apply(struct ks_scheduler *s, struct ks_framework *fw, struct ks_group_scratch *sc,
                 struct member *mv, uint32_t n, uint32_t d, uint64_t cycle, bool *any, struct ks_status *st)
{
    /* one node each: neither the tie-breaks nor the start node matter, and the next cycles see them unmoved
     */
    uint64_t rng = s->rng;
    uint32_t start = s->next_start;
    int rc = apply_members(s, fw, sc, mv, n, d, cycle, any, st);
    s->rng = rng;
    s->next_start = start;
    return rc;
}

static int apply_members(struct ks_scheduler *s, struct ks_framework *fw, struct ks_group_scratch *sc,
                         struct member *mv, uint32_t n, uint32_t d, uint64_t cycle, bool *any,
                         struct ks_status *st)
{
    *any = false;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = sc->assign[(size_t)d * n + i];
        free(mv[i].message);
        mv[i].message = NULL;
        limit_to(s, &sc->placements, d); /* the placement's listing, as when it was evaluated */
        if (node != KS_ID_NONE) {
            s->placement.n = 1;
            s->placement.names = &sc->assign[(size_t)d * n + i];
        }
        int rc = ks__pg_place_one(s, fw, &mv[i], cycle, st);
        limit_to(s, &sc->placements, UINT32_MAX);
        if (node != KS_ID_NONE && (rc != KS_SUCCESS || mv[i].job->node != node)) {
            if (rc == KS_SUCCESS || rc == KS_UNSCHEDULABLE)
                ks_status_set(st, KS_ERROR, "pod %s no longer fits node %s of the chosen placement",
                              mv[i].qp->pod->meta.name, ks_intern_str(node));
            ks__pg_revert(s, fw, mv, n);
            return KS_ERROR;
        }
        if (rc != KS_SUCCESS && rc != KS_UNSCHEDULABLE) {
            ks__pg_revert(s, fw, mv, n);
            return rc;
        }
        *any |= rc == KS_SUCCESS;
    }
    return KS_SUCCESS;
}
/*
 * The placement scores' weights (upstream's PlacementScore plugins, default-wired from the
 * profile): NodeResourcesFit's Score weight and its scoringStrategy.resources weights of cpu and
 * memory when it scores, PodGroupPodsCount's 1.
 */
static int placement_weights(const struct ks_framework *fw, struct ks_group_scratch *sc)
{
    if (sc->weights_fw == fw)
        return 0; /* a profile's weights never change: read once */
    int64_t fit = 0;
    for (uint32_t i = 0; i < ks_framework_nscore(fw); i++) {
        if (strcmp(ks_framework_plugin_name(fw, ks_framework_score_slot(fw, i)), "NodeResourcesFit") == 0)
            fit = ks_framework_score_weight(fw, i);
    }
    const struct ks_noderesourcesfit_args *args =
        ks_profile_args(ks_framework_profile(fw), "NodeResourcesFit");
    ks_placement_weights_free(&sc->weights);
    sc->weights_fw = NULL;
    int rc = ks_placement_weights_init(&sc->weights, fit, args ? args->resources : NULL,
                                       args ? args->nresources : 0);
    if (rc == 0)
        sc->weights_fw = fw;
    return rc;
}

/* The placements, for opts.on_group (none when out of memory). */
static void describe(struct ks_group_scratch *sc, uint32_t chosen)
{
    const struct ks_placement_set *ps = &sc->placements;
    struct ks_group_attempt *g = &sc->report_to;
    if (KS_RESERVE(sc->report_placements, sc->cap_report, ps->n + 1) < 0)
        return;
    for (uint32_t d = 0; d < ps->n; d++) {
        const struct placement_result *r = &sc->results[d];
        sc->report_placements[d] = (struct ks_group_placement){
            .domain = ps->value[d],
            .nnodes = ps->first[d + 1] - ps->first[d],
            .room = r->room,
            .evaluated = r->evaluated,
            .feasible = r->ok,
            .placed = r->evaluated ? r->count : 0,
            .fit_score = r->ok ? r->fit : -1,
            .why = r->evaluated && !r->ok ? r->why : NULL,
        };
    }
    g->nplacements = ps->n;
    g->placements = sc->report_placements;
    g->chosen = chosen;
}

void ks__pg_schedule_placements(struct ks_scheduler *s, struct ks_framework *fw, struct member *mv,
                                uint32_t n, const struct ks_pod_group_state *gs, uint32_t scheduled,
                                uint64_t cycle)
{
    struct ks_group_scratch *sc = s->group_scratch;
    struct ks_status st = {0};
    char buf[1024];

    sc->report_to.topology_key = gs->spec.topology_key;
    if (placement_weights(fw, sc) < 0) {
        ks__pg_fail_all(s, fw, mv, n, cycle, KS_ERROR, "out of memory", false);
        return;
    }
    if (ks_cache_refresh(s->cache) < 0) {
        ks__pg_fail_all(s, fw, mv, n, cycle, KS_ERROR, "out of memory refreshing the snapshot", false);
        return;
    }
    ks_rcu_read_lock();
    const struct ks_snapshot *snap = ks_cache_snapshot(s->cache);
    uint32_t required;
    int rc = required_domain(snap, gs->spec.topology_key, sc->sched_nodes, sc->nsched, &required, buf,
                             sizeof(buf));
    if (rc == 0 && ks_placements_build(snap, gs->spec.topology_key, required, &sc->placements) < 0)
        rc = -ENOMEM;
    const struct ks_placement_set *ps = &sc->placements;
    if (rc == 0 && (KS_RESERVE(sc->assign, sc->cap_assign, (size_t)ps->n * n + 1) < 0 ||
                    KS_RESERVE(sc->results, sc->cap_results, ps->n + 1) < 0 ||
                    KS_RESERVE(sc->adds, sc->cap_adds, ((size_t)ps->n + 1) * sc->weights.nres) < 0 ||
                    KS_RESERVE(sc->order, sc->cap_order, ps->n + 1) < 0 ||
                    KS_RESERVE(sc->first_messages, sc->cap_first, n) < 0))
        rc = -ENOMEM;
    /* ranked on the snapshot the placements were read from: their node positions are its */
    if (rc == 0)
        rank(s, fw, sc, mv, n, gs, scheduled, snap);
    ks_rcu_read_unlock();
    if (rc < 0) {
        ks__pg_fail_all(s, fw, mv, n, cycle, KS_ERROR, rc == -ENOMEM ? "out of memory" : buf, false);
        return;
    }
    if (ps->n == 0) {
        ks__pg_unschedulable(s, fw, mv, n, gs, scheduled, cycle, "no feasible placements found");
        return;
    }
    memset(sc->first_messages, 0, n * sizeof(*sc->first_messages));
    int erc = evaluate(s, fw, sc, mv, n, gs, scheduled, cycle, &st);
    uint32_t best = erc < 0                  ? UINT32_MAX
                    : sc->kept != UINT32_MAX ? sc->kept
                                             : best_placement(sc->results, ps->n, sc->weights.pods);
    describe(sc, best);
    for (uint32_t i = 0; i < n; i++) {
        if (best == UINT32_MAX && erc == 0)
            mv[i].message = sc->first_messages[i];
        else
            free(sc->first_messages[i]);
    }
    if (erc < 0) {
        ks__pg_fail_error(s, fw, mv, n, cycle, &st);
        return;
    }
    if (best == UINT32_MAX) {
        snprintf(
            buf, sizeof(buf),
            "pod group is unschedulable, 0/%u placements are available, reported placement status: pod group "
            "is unschedulable",
            ps->n);
        ks__pg_unschedulable(s, fw, mv, n, gs, scheduled, cycle, buf);
        return;
    }
    bool any = sc->kept != UINT32_MAX;
    if (!any && apply(s, fw, sc, mv, n, best, cycle, &any, &st) != KS_SUCCESS) {
        ks__pg_fail_error(s, fw, mv, n, cycle, &st);
        return;
    }
    if (!any) {
        ks__pg_revert(s, fw, mv, n);
        ks__pg_unschedulable(s, fw, mv, n, gs, scheduled, cycle, "pod group is unschedulable");
        return;
    }
    ks__pg_commit(s, fw, mv, n, cycle);
}
