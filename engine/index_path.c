/*
 * index_path.c - scheduling cycles answered by the signature index (ksched/internal/index.h).
 *
 * After PreFilter, a pod whose every plugin signs it (ks_fw_sign) belongs to the class of
 * (profile, signature, PreFilter skips). The class's position tree holds, per node of the
 * snapshot, what the Filter and Score phases would find for any pod of the class:
 * feasible or not, and the weighted total of the plugins without NormalizeScore. A
 * position is poisoned when that is not enough to stand for the phases: a Filter Error, a
 * Score Error or a score out of range (the per-node path reports them), or a raw score of
 * a plugin with NormalizeScore that is not 0. With every such raw score 0 over the
 * window, each NormalizeScore gives one value to every feasible node of the window
 * (plugin_types.h, sign), which moves no node's rank, so the best total and its ties are
 * the per-node path's.
 *
 * The cycle then reads, from nextStartNodeIndex, the window the Filter phase would
 * evaluate (the first numFeasibleNodesToFind feasible positions, and every position up to
 * the last of them: processedNodes), and draws the host among the window's best totals
 * with the same one draw, in the same window order, as select_host.c. The decisions and
 * the random stream are therefore the per-node path's; what differs is the work: the
 * tree is brought up to date by evaluating only the positions whose record changed since
 * the class was last used (all of them when the node order changed), and the window and
 * the draw are O(log nodes).
 *
 * A spread-scored class (ksched/sign.h: PodTopologySpread's ScheduleAnyway constraints,
 * whose counts differ between pods of one class) leaves that plugin's Score out of the
 * tree's totals and out of the evaluation; the cycle adds it over the window and draws the
 * host through index_spread.c, which splits the class's positions by the constraints'
 * key the first time (index_parts.h). Nodes that score would treat apart are poisoned.
 *
 * When no position of the tree is feasible (and none is poisoned), the cycle is answered
 * too: every node would be evaluated and rejected, so the diagnosis is the tree's statuses,
 * kept per position as a few distinct groups with their counts (index.h); the FitError's
 * histogram and DefaultPreemption read the groups (framework_types.h, the grouped form),
 * and the next start stays where it was, as after a pass over every node.
 *
 * Metrics (framework_metrics.h): the plugins' evaluations are the node calls the index
 * made; an answered cycle observes the Filter point from the end of PreScore to its window
 * and the Score point over the draw, so every attempt counts one of each as on the per-node
 * path (a cycle that falls back observes them there instead); a cycle no node fits
 * observes the Filter point alone, and runs PreScore only when the tree had to be brought
 * up to date (its Score calls read PreScore's state).
 *
 * Pods nominated to a node count there as RunFilterPluginsWithNominatedPods counts them:
 * a position whose node has nominated pods of at least the class's priority (part of the
 * class's key) is filtered first with them (a derived record, the cycle state with their
 * AddPod), and its entry is that pass's status when it fails. The nominator's changes reach
 * the index as changed positions (ks__index_follow), so a class re-evaluates the nodes whose
 * nominations changed as it does those whose record changed.
 *
 * Such a cycle's DefaultPreemption reads the class's candidate tree (preempt_tree.h), kept
 * against the same change log: ks__index_preempt_tree hands it, with the positions changed
 * since it was last read, to the evaluator (engine/preemption_indexed.c).
 *
 * The cycle falls back to the per-node phases, before anything is decided, for: --explain
 * and attempt observers (they want every node's status and score), a pod with a nominated
 * node (its node is tried first, and its own nomination counts nowhere), a class
 * seen for the first time (a tree costs a whole evaluation: it is built for the second
 * pod), a window holding a poisoned position, no feasible position in a class with more
 * distinct statuses than groups (a class whose windows keep failing rests for a while,
 * ks_index_worth_tree), and a PreScore that does not succeed.
 */
#include "framework_metrics.h"
#include "framework_plan.h"
#include "index_spread.h"
#include "scheduler_internal.h"
#include "select_host.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/index.h"
#include "ksched/internal/nominator.h"
#include "ksched/sign.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Nodes evaluated per batched Filter / Score call; bounds the stack the evaluation uses. */
enum { EVAL_BLOCK = 32, REBUILD_BLOCK_MIN = 256, REBUILD_BLOCK_MAX = 2048 };

int ks__index_path_init(struct ks_scheduler *s)
{
    s->index_arena = (struct ks_arena)KS_ARENA_INIT;
    ks_cycle_state_init(&s->index_cs);
    if (!(s->sign_buf = malloc(KS_SIGN_BUF)))
        return -ENOMEM;
    return ks_index_create(&s->index);
}

void ks__index_path_fini(struct ks_scheduler *s)
{
    ks_index_destroy(s->index);
    free(s->sign_buf);
    ks_arena_destroy(&s->index_arena);
    ks_cycle_state_destroy(&s->index_cs);
    s->index = NULL;
    s->sign_buf = NULL;
}

void ks__index_follow(struct ks_scheduler *s, const struct ks_snapshot *snap)
{
    uint32_t nodes[256];
    int64_t got;
    ks_index_observe(s->index, snap);
    do {
        got = ks_nominator_changed(s->nominator, &s->nominations_seen, nodes, 256);
        if (got < 0)
            ks_index_touch_all(s->index);
        for (int64_t i = 0; i < got; i++) {
            uint32_t pos = ks_snapshot_position(snap, nodes[i]);
            if (pos != UINT32_MAX)
                ks_index_touch(s->index, pos);
        }
    } while (got == 256);
}

/* What one class's entries are evaluated with: one pod of the class and its cycle state. */
struct eval_job {
    struct ks_scheduler *s;
    struct ks_framework *fw;
    const struct ks_fw_plan *filter, *score;
    const struct ks_cycle_state *cs;
    const struct ks_pod *pod;
    const struct ks_snapshot *snap;
    struct ks_index_class *c;
    const struct ks_pts_score_state
        *spread;                 /* a spread-scored class's PreScore state (index_spread.h), or NULL */
    struct ks_status *rebuilt;   /* a rebuild's statuses per position, grouped after the workers' join */
    struct ks_fw_tally *tallies; /* per worker, for the Filter calls; NULL without metrics */
    atomic_uint scored;          /* nodes each Score call of the plan evaluated */
};

struct entry {
    bool feasible, poison;
    int32_t total;
    struct ks_status st; /* the Filter status of a position that is neither feasible nor poisoned */
};

/* The entries of @n (<= EVAL_BLOCK) nodes. Workers or the scheduling thread; no allocation. */
static void eval_nodes(struct eval_job *j, const struct ks_node_snap *const *nodes, uint32_t n,
                       struct entry *out, uint32_t worker)
{
    uint8_t ok[EVAL_BLOCK];
    struct ks_status st[EVAL_BLOCK];
    const struct ks_node_snap *passed[EVAL_BLOCK];
    uint32_t at[EVAL_BLOCK], m = 0;

    memset(ok, 1, n);
    ks__fw_plan_filter_nodes_tally(j->filter, j->cs, j->pod, nodes, n, ok, st,
                                   j->tallies ? &j->tallies[worker] : NULL);
    for (uint32_t i = 0; i < n; i++) {
        out[i] = (struct entry){.feasible = ok[i], .poison = !ok[i] && st[i].code == KS_ERROR};
        if (!ok[i])
            out[i].st = st[i];
        if (ok[i]) {
            passed[m] = nodes[i];
            at[m++] = i;
        }
    }
    if (!m || !j->score->n)
        return;
    int64_t cols[KS_MAX_PROFILE_PLUGINS * EVAL_BLOCK], totals[EVAL_BLOCK];
    bool out_of_range = false;
    int rc = ks__fw_plan_score_nodes(j->score, j->cs, j->pod, passed, m, cols, m, totals, &out_of_range);
    /* relaxed: read after the join */
    atomic_fetch_add_explicit(&j->scored, m, memory_order_relaxed);
    for (uint32_t k = 0; k < m; k++) {
        struct entry *e = &out[at[k]];
        bool bad = rc != KS_SUCCESS || out_of_range || totals[k] < 0 || totals[k] > INT32_MAX;
        for (uint32_t c = 0; c < j->score->n && !bad; c++)
            bad = j->score->normalized[c] && cols[(size_t)c * m + k] != 0;
        bad = bad || (j->spread && ks__index_spread_poisons(j->spread, passed[k]));
        e->poison = bad;
        e->total = bad ? 0 : (int32_t)totals[k];
    }
}

enum { NOMINATED_MAX = 64 }; /* pods nominated to one node that a position's evaluation reads */

/*
 * RunFilterPluginsWithNominatedPods' first pass for @node: Filter as if the pods nominated
 * there with at least the class's priority ran there (a record derived with them, the
 * cycle state with their AddPod). KS_SUCCESS when none is nominated there or the pod
 * passes; else the code with @st. -ENOMEM (as a code, with @st) when out of memory, or
 * when more pods are nominated there than a position can weigh. Scheduling thread.
 */
static int nominated_pass(struct eval_job *j, const struct ks_node_snap *node, struct ks_status *st)
{
    struct ks_scheduler *s = j->s;
    const struct ks_pod *pods[NOMINATED_MAX];
    uint32_t total = ks_nominator_pods(s->nominator, node->name, pods, NOMINATED_MAX), nadd = 0;
    uint32_t held = total < NOMINATED_MAX ? total : NOMINATED_MAX;
    int rc = KS_SUCCESS;
    if (total > NOMINATED_MAX) {
        rc = ks_status_set(st, KS_ERROR, "too many pods nominated to node %s", ks_intern_str(node->name));
        goto out;
    }
    /* addGENominatedPods: the pods of at least the class's priority (none of them is the pod) */
    for (uint32_t i = 0; i < held; i++) {
        if (pods[i]->priority >= j->pod->priority)
            pods[nadd++] = pods[i];
        else
            ks_pod_put(pods[i]);
    }
    held = nadd;
    if (!nadd)
        goto out;
    ks_arena_reset(&s->index_arena);
    const struct ks_node_snap *with = ks_node_snap_derive(node, pods, nadd, NULL, 0, &s->index_arena);
    if (!with || ks_cycle_state_clone(j->fw, j->cs, &s->index_cs) < 0) {
        rc = ks_status_set(st, KS_ERROR, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < nadd && rc == KS_SUCCESS; i++)
        rc = ks_fw_run_add_pod(j->fw, &s->index_cs, j->pod, pods[i], with, st);
    if (rc == KS_SUCCESS)
        rc = ks__fw_run_filter_tally(j->fw, &s->index_cs, j->pod, with, st,
                                     j->tallies ? &j->tallies[0] : NULL);
out:
    for (uint32_t i = 0; i < held; i++)
        ks_pod_put(pods[i]);
    return rc;
}

/*
 * Evaluate the entries [begin, end) of @positions (NULL: positions begin..end themselves)
 * in blocks; a rebuild only puts leaves and keeps the statuses for later (ks_index_tree_build
 * and group_rebuilt follow: the groups are one thread's), a refresh sets them with their
 * ancestors and groups them. Workers (a rebuild's blocks) or the scheduling thread.
 */
static void eval_range(struct eval_job *j, const uint32_t *positions, uint32_t begin, uint32_t end,
                       uint32_t worker, bool rebuild)
{
    const struct ks_node_snap *nodes[EVAL_BLOCK];
    uint32_t pos[EVAL_BLOCK];
    struct entry e[EVAL_BLOCK];
    for (uint32_t at = begin; at < end; at += EVAL_BLOCK) {
        uint32_t n = end - at < EVAL_BLOCK ? end - at : EVAL_BLOCK;
        for (uint32_t i = 0; i < n; i++) {
            pos[i] = positions ? positions[at + i] : at + i;
            nodes[i] = ks_snapshot_node(j->snap, pos[i]);
        }
        eval_nodes(j, nodes, n, e, worker);
        for (uint32_t i = 0; !rebuild && ks_nominator_count(j->s->nominator) && i < n; i++) {
            /* a node with pods nominated to it: the pass with them decides first */
            struct ks_status st = {.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
            int rc = nominated_pass(j, nodes[i], &st);
            if (rc != KS_SUCCESS)
                e[i] = (struct entry){.poison = rc == KS_ERROR, .st = st};
        }
        for (uint32_t i = 0; i < n; i++) {
            bool grouped = !e[i].feasible && !e[i].poison;
            if (rebuild) {
                ks_index_tree_put(&j->c->tree, pos[i], e[i].feasible, e[i].total, e[i].poison);
                j->rebuilt[pos[i]] = grouped ? e[i].st : (struct ks_status){.code = KS_SUCCESS};
            } else {
                ks_index_tree_set(&j->c->tree, pos[i], e[i].feasible, e[i].total, e[i].poison);
                if (ks_index_parts_follows(&j->c->parts, pos[i], nodes[i]))
                    ks_index_parts_set(&j->c->parts, pos[i], e[i].feasible, e[i].total, e[i].poison);
                ks_index_status(j->c, pos[i], grouped ? &e[i].st : NULL);
            }
        }
    }
}

/* After a rebuild's join: the statuses it kept into @c's groups. Scheduling thread. */
static void group_rebuilt(struct ks_index_class *c, const struct ks_status *st, uint32_t n)
{
    for (uint32_t p = 0; p < n; p++) {
        if (st[p].code != KS_SUCCESS)
            ks_index_status(c, p, &st[p]);
    }
}

static void rebuild_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    eval_range(ctx, NULL, begin, end, worker, true);
}

/*
 * After a rebuild, which filtered every node as it is: the nodes with pods nominated to
 * them again, on the scheduling thread, with those pods weighed. false when out of memory.
 */
static bool renominate(struct ks_scheduler *s, struct eval_job *j)
{
    struct ks_nominated_scratch *nom = &s->scratch.nom;
    ks__nominations_release(nom);
    if (ks__nominations_list(s, nom) < 0)
        return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < nom->npods; i++) {
        /* grouped by node: one entry per node */
        if (i && nom->pod_nodes[i] == nom->pod_nodes[i - 1])
            continue;
        uint32_t pos = ks_snapshot_position(j->snap, nom->pod_nodes[i]);
        if (pos != UINT32_MAX)
            nom->pod_nodes[k++] = pos; /* the listing's nodes are not read again */
    }
    eval_range(j, nom->pod_nodes, 0, k, 0, false);
    ks__nominations_release(nom);
    return true;
}

/* Bring @c's tree up to @snap. false when it could not be (out of memory: the class loses its tree). */
static bool sync_class(struct ks_scheduler *s, struct ks_index_class *c, struct eval_job *j)
{
    const uint32_t *positions;
    int64_t k = ks_index_pending(s->index, c, j->snap->nnodes, &positions);
    if (k < 0)
        return false;
    if (k == KS_INDEX_REBUILD) {
        uint32_t n = j->snap->nnodes;
        if (ks__scratch_reserve(&s->scratch, n, 0) < 0)
            return false;
        j->rebuilt = s->scratch.status;
        ks_workers_run(s->workers, n, ks__block_size(s->workers, n, REBUILD_BLOCK_MIN, REBUILD_BLOCK_MAX),
                       rebuild_block, j);
        ks_index_tree_build(&c->tree);
        group_rebuilt(c, j->rebuilt, n);
        if (ks_nominator_count(s->nominator) && !renominate(s, j))
            return false;
    } else {
        eval_range(j, positions, 0, (uint32_t)k, 0, false); /* the scheduling thread is worker 0 */
    }
    ks_index_synced(s->index, c);
    return true;
}

/* The cycle's class, or NULL when the index does not serve it (yet); its signature in @sig. */
static struct ks_index_class *class_of(struct ks_scheduler *s, const struct ks_framework *fw,
                                       const struct ks_cycle_state *cs, const struct ks_pod *pod,
                                       struct ks_sign *sig)
{
    *sig = (struct ks_sign){.buf = s->sign_buf, .cap = KS_SIGN_BUF};
    if (ks_fw_sign(fw, cs, pod, sig) != KS_SUCCESS)
        return NULL;
    ks_sign_u64(sig, cs->skip_filter);
    /* which nominated pods a node's Filter weighs: those of at least the pod's priority */
    ks_sign_u64(sig, (uint32_t)pod->priority);
    if (sig->overflow)
        return NULL;
    struct ks_index_class *c = ks_index_lookup(s->index, fw, sig->buf, sig->len);
    return c && ks_index_worth_tree(c) ? c : NULL;
}

/*
 * A spread-scored cycle's PreScore state (index_spread.h) and the plugin's score weight;
 * NULL when the pod is not spread-scored or the plugin's Score is skipped. After PreScore.
 */
static const struct ks_pts_score_state *spread_state(const struct ks_framework *fw,
                                                     const struct ks_cycle_state *cs,
                                                     const struct ks_sign *sig, int64_t *weight)
{
    if (!sig->spread || (cs->skip_score & (1ull << sig->spread_slot)))
        return NULL;
    const struct ks_pts_cycle *pc = cs->slot[sig->spread_slot];
    const struct ks_fw_calls *norm = &fw->list[KS_FWL_NORMALIZE];
    for (uint32_t i = 0; pc && i < norm->n; i++) {
        if (norm->v[i].slot == sig->spread_slot) {
            *weight = norm->v[i].weight;
            return pc->score;
        }
    }
    return NULL;
}

/* @p without the call of plugin @slot (a spread-scored plugin's Score, added per cycle). */
static void plan_drop(struct ks_fw_plan *p, uint16_t slot)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        if (p->v[i].slot == slot)
            continue;
        p->col[k] = p->col[i];
        p->v[k] = p->v[i];
        p->weight[k] = p->weight[i];
        p->normalized[k] = p->normalized[i];
        k++;
    }
    p->n = k;
}

/*
 * Metrics for a cycle the index answered without running the Filter workers: the plugins'
 * node calls the sync made, and the Score calls it made.
 */
static bool sync_counted(struct ks_scheduler *s, struct ks_framework *fw, struct ks_index_class *c,
                         struct eval_job *job, const struct ks_fw_plan *score)
{
    atomic_init(&job->scored, 0);
    for (uint32_t w = 0; job->tallies && w < s->scratch.ntallies; w++)
        ks__fw_tally_reset(&job->tallies[w], fw->list[KS_FWL_FILTER].n, job->cs->record_plugin_metrics);
    bool synced = sync_class(s, c, job);
    if (job->tallies)
        ks__fw_tally_merge(fw, KS_FWL_FILTER, job->tallies, s->scratch.ntallies);
    for (uint32_t k = 0; k < score->n; k++)
        ks__fw_evaluated(fw, KS_FWL_SCORE, score->col[k],
                         atomic_load_explicit(&job->scored, memory_order_relaxed));
    if (!synced)
        ks_index_drop(s->index, c);
    return synced;
}

/*
 * The grouped diagnosis of a cycle no node fits (framework_types.h): every position,
 * from @start, with its group's status. Valid while @c's tree is not changed.
 */
static void unfit_diagnosis(const struct ks_index_class *c, const struct ks_snapshot *snap, uint32_t start,
                            struct ks_diagnosis *d)
{
    d->nall = snap->nnodes;
    d->nfailed = snap->nnodes;
    d->nodes = NULL;
    d->statuses = (struct ks_status *)c->groups.status;
    d->ngroups = c->groups.n;
    d->group_count = c->groups.count;
    d->group_of = c->groups.of;
    d->start = start;
    d->snap = snap;
    d->unschedulable_plugins = ks_index_unschedulable_plugins(c);
}

enum ks_index_answer ks__index_cycle(struct ks_scheduler *s, struct ks_framework *fw,
                                     struct ks_cycle_state *cs, const struct ks_pod *pod,
                                     const struct ks_snapshot *snap, const struct ks_node_snap **host,
                                     struct ks_diagnosis *d)
{
    ks_rcu_assert_reading(); /* node records of the snapshot it reads */
    s->unfit_class = NULL;
    /* a pod nominated to a node: its node is tried first, and the others weigh it nowhere */
    if (s->opts.on_attempt || s->opts.explain || pod->nominated_node_name != KS_ID_EMPTY ||
        (ks_nominator_count(s->nominator) && ks_nominator_node(s->nominator, pod) != KS_ID_EMPTY))
        return KS_INDEX_NO_ANSWER;
    struct ks_sign sig;
    struct ks_index_class *c = class_of(s, fw, cs, pod, &sig);
    if (!c)
        return KS_INDEX_NO_ANSWER;
    int64_t spread_weight = 0;
    uint32_t n = snap->nnodes;
    int64_t t0 = ks__fw_point_start(fw);
    struct ks_fw_plan filter, score;
    struct eval_job job = {.s = s,
                           .fw = fw,
                           .filter = &filter,
                           .score = &score,
                           .cs = cs,
                           .pod = pod,
                           .snap = snap,
                           .c = c,
                           .tallies = fw->metrics ? s->scratch.tallies : NULL};
    /*
     * PreScore runs before the sync (the Score calls read its state) unless the tree is
     * current, and then only for a cycle that has a host: one no node fits runs none, as
     * on the per-node path.
     */
    bool current = ks_index_current(s->index, c, n), pre_scored = false;
    struct ks_status st = {0};
    if (!current) {
        if (ks_framework_nscore(fw) && ks_fw_run_pre_score(fw, cs, pod, NULL, 0, &st) != KS_SUCCESS)
            return KS_INDEX_NO_ANSWER;
        pre_scored = true;
        t0 = ks__fw_point_start(fw);
        ks__fw_plan_filter(fw, cs, &filter);
        ks__fw_plan_score(fw, cs, &score);
        if (sig.spread) {
            plan_drop(&score, sig.spread_slot);
            job.spread = spread_state(fw, cs, &sig, &spread_weight);
        }
        if (!sync_counted(s, fw, c, &job, &score))
            return KS_INDEX_NO_ANSWER;
    }

    uint32_t limit = ks_framework_has_score(fw) ? ks_num_feasible_nodes_to_find(ks__percentage(s, fw), n) : 1;
    struct ks_index_window w;
    uint32_t start = s->next_start % n;
    ks_index_tree_window(&c->tree, start, limit, &w);
    if (!w.nfeasible && !w.npoison && !c->groups.full) {
        /* every node evaluated, none fits: processed is n, the next start stays */
        ks_index_outcome(c, true);
        ks__fw_point_end(fw, KS_FWL_FILTER, KS_SUCCESS, t0);
        unfit_diagnosis(c, snap, start, d);
        s->unfit_class = c;
        atomic_fetch_add_explicit(&s->indexed_unfit_cycles, 1, memory_order_relaxed);
        return KS_INDEX_UNFIT;
    }
    if (!w.nfeasible || w.npoison) {
        ks_index_outcome(c, false);
        return KS_INDEX_NO_ANSWER;
    }
    if (!pre_scored) {
        if (ks_framework_nscore(fw) && ks_fw_run_pre_score(fw, cs, pod, NULL, 0, &st) != KS_SUCCESS)
            return KS_INDEX_NO_ANSWER;
        t0 = ks__fw_point_start(fw);
    }
    const struct ks_pts_score_state *spread = spread_state(fw, cs, &sig, &spread_weight);
    int64_t t_pick = ks__fw_point_start(fw);
    uint32_t pos;
    if (spread) {
        if (!ks__index_spread_host(s->index, c, snap, spread, spread_weight, sig.spread_key, &w, &s->rng,
                                   &pos)) {
            ks_index_outcome(c, false);
            return KS_INDEX_NO_ANSWER;
        }
    } else {
        pos = ks_index_tree_tie(&c->tree, &w, w.ties > 1 ? ks__draw(&s->rng, w.ties) : 0);
    }
    ks_index_outcome(c, true);
    ks__fw_point_span(fw, KS_FWL_FILTER, KS_SUCCESS, t0, t_pick);
    ks__fw_point_end(fw, KS_FWL_SCORE, KS_SUCCESS, t_pick);
    s->next_start = (s->next_start + w.processed) % n;
    *host = ks_snapshot_node(snap, pos);
    atomic_fetch_add_explicit(&s->indexed_cycles, 1, memory_order_relaxed);
    return KS_INDEX_HOST;
}

struct ks_preempt_tree *ks__index_preempt_tree(void *ctx, const struct ks_diagnosis *d,
                                               const uint32_t **changed, int64_t *nchanged)
{
    struct ks_scheduler *s = ctx;
    struct ks_index_class *c = s->unfit_class;
    /* a grouped diagnosis of this cycle is the unfit answer's, whose class is still current */
    if (!c || !d->group_count || d->group_of != c->groups.of || !ks_index_current(s->index, c, d->nall))
        return NULL;
    int64_t k = ks_index_preempt_pending(s->index, c, d->nall, changed);
    if (k < 0)
        return NULL;
    *nchanged = k;
    return &c->preempt;
}

void ks__index_preempt_answered(void *ctx)
{
    struct ks_scheduler *s = ctx;
    atomic_fetch_add_explicit(&s->indexed_preemptions, 1, memory_order_relaxed);
}
