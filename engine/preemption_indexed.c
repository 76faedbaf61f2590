/*
 * preemption_indexed.c - DefaultPreemption's dry run and pickOneNodeForPreemption read from
 * the signature index's candidate tree (include/ksched/internal/preempt_tree.h), for a preemptor whose
 * cycle the index found unfit (include/ksched/internal/preemption.h, ks_preempt_indexed).
 *
 * The dry run tries the potential nodes (Filter status Unschedulable) in the snapshot's order
 * from the diagnosis's start, beginning at the offset-th, until it holds numCandidates
 * candidates; the choice is the best of them by pickOneNodeForPreemption, the first tried
 * among equals. In tree terms: the window from the offset-th potential position after
 * d->start until numCandidates candidates, and its best candidate. A position's verdict is
 * a function of what the index's class tree is (the preemptor's class, the node's record and
 * the pods nominated to it), so the candidate tree keeps each verdict until the index logs
 * its position as changed, and computes verdicts only for unknown positions inside the
 * window, in window order - the ones the dry run would have tried.
 *
 * The answer is the tree's only when it is exact; otherwise the caller runs the dry run:
 * a window holding a volatile position (an error, victims ordered by "now"), a window
 * without a candidate (the FitError wants every failure's status), or a candidate whose
 * victims started at or after "now" (a victim without a start time counts as started
 * "now", which the tree takes to be the latest start).
 *
 * Context: PostFilter, scheduling thread, inside the RCU read section of the cycle's snapshot.
 */
#include "ksched/base/rcu.h"
#include "ksched/internal/index.h"
#include "ksched/internal/preemption.h"
#include "preemption_internal.h"

#include <errno.h>

/* The tree's leaf for a verdict on @node: @code with @c (victims most important first). */
static enum ks_preempt_leaf leaf_of(const struct ks_preemptor *p, const struct ks_node_snap *node, int code,
                                    const struct ks_preempt_candidate *c, struct ks_preempt_rank *rank)
{
    if (code == KS_ERROR || (code == KS_SUCCESS && (c->nvictims == 0 || c->npdb_violations != 0)))
        return KS_PT_VOLATILE;
    if (code != KS_SUCCESS)
        return KS_PT_FAILED;
    if (ks_preempt_now_matters(node, p->pod->priority))
        return KS_PT_VOLATILE;
    *rank = (struct ks_preempt_rank){
        .top_priority = c->victims[0]->priority,
        .nvictims = c->nvictims,
        .priority_sum = ks__preempt_priority_sum(c),
        /* all victims have a start time, or none has */
        .start = c->victims[0]->start_time == KS_TIME_NONE
                     ? KS_PREEMPT_START_NOW
                     : ks_preempt_earliest_start(c->victims, c->nvictims, 0),
    };
    return KS_PT_CANDIDATE;
}

/* Position @pos's kind before its verdict is known: whether the dry run tries it at all. */
static enum ks_preempt_leaf kind_of(const struct ks_diagnosis *d, uint32_t pos)
{
    uint16_t g = d->group_of[pos];
    return g != KS_INDEX_NO_GROUP && d->statuses[g].code == KS_UNSCHEDULABLE ? KS_PT_UNKNOWN
                                                                             : KS_PT_NOT_POTENTIAL;
}

/* Bring @t to the diagnosis's version: the @k positions in @changed (or all) start over. */
static void catch_up(struct ks_preempt_tree *t, const struct ks_diagnosis *d, const uint32_t *changed,
                     int64_t k)
{
    if (k == KS_INDEX_REBUILD) {
        for (uint32_t pos = 0; pos < t->n; pos++)
            ks_preempt_tree_put(t, pos, kind_of(d, pos), NULL);
        ks_preempt_tree_build(t);
    } else if (k > t->n / 8) {
        for (int64_t i = 0; i < k; i++)
            ks_preempt_tree_put(t, changed[i], kind_of(d, changed[i]), NULL);
        ks_preempt_tree_build(t);
    } else {
        for (int64_t i = 0; i < k; i++)
            ks_preempt_tree_set(t, changed[i], kind_of(d, changed[i]), NULL);
    }
}

int ks_preempt_indexed(const struct ks_preemptor *p, const struct ks_diagnosis *d, uint32_t npotential,
                       uint32_t offset, uint32_t num_candidates, ks_select_victims_fn select, void *ctx,
                       struct ks_preempt_dry_run *out)
{
    ks_rcu_assert_reading(); /* node records of the snapshot it reads */
    const struct ks_preempt_index *ix = p->index;
    const uint32_t *changed = NULL;
    int64_t k = 0;
    struct ks_preempt_tree *t = ix && ix->tree && d->group_count ? ix->tree(ix->ctx, d, &changed, &k) : NULL;
    if (!t)
        return -ENOENT;
    catch_up(t, d, changed, k);
    if (npotential == 0 || ks_preempt_tree_potential(t) != npotential || num_candidates == 0)
        return -ENOENT;

    /* the window, its unknown positions tried in window order until none is left in it */
    struct ks_preempt_scratch sc;
    struct ks_preempt_window w;
    uint32_t start = ks_preempt_tree_nth_potential(t, d->start, offset);
    int rc = 0;
    ks__preempt_scratch_init(&sc);
    for (;;) {
        ks_preempt_tree_window(t, start, num_candidates, &w);
        if (!w.nunknown)
            break;
        uint32_t pos = ks_preempt_tree_first_unknown(t, &w);
        const struct ks_node_snap *node = ks_snapshot_node(d->snap, pos);
        struct ks_preempt_candidate c = {0};
        struct ks_status st = {.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
        struct ks_preempt_rank rank = {0};
        /* an error (out of memory too) makes the position volatile: the dry run reports it */
        int code = ks__preempt_trial(p, node, select, ctx, &sc, &sc.arena, &c, &st);
        ks_preempt_tree_set(t, pos, leaf_of(p, node, code, &c, &rank), &rank);
    }
    if (w.nvolatile || !w.ncandidates || w.latest_start >= p->now_ns)
        rc = -ENOENT;

    /* the choice: its victims again (the tree keeps ranks, not pods) */
    if (rc == 0) {
        const struct ks_node_snap *node = ks_snapshot_node(d->snap, w.best_pos);
        struct ks_preempt_candidate c = {0};
        struct ks_status st = {.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
        int code = ks__preempt_trial(p, node, select, ctx, &sc, &out->arena, &c, &st);
        out->candidates = ks_arena_calloc(&out->arena, 1, sizeof(*out->candidates));
        if (code != KS_SUCCESS || !c.nvictims) {
            rc = -ENOENT; /* not the verdict the tree holds: let the dry run answer */
        } else if (!out->candidates) {
            rc = -ENOMEM;
        } else {
            c.node = node;
            out->candidates[0] = c;
            out->ncandidates = 1;
            if (ix->answered)
                ix->answered(ix->ctx);
        }
    }
    ks__preempt_scratch_destroy(&sc);
    return rc;
}
