/*
 * prioritize.c - PreScore, the parallel Score phase, normalisation and selectHost.
 *
 * Workers score blocks of feasible nodes, plugin by plugin over the block for every score
 * plugin the pod does not skip (framework_plan.h), into one column per plugin; a plugin
 * without NormalizeScore is range-checked, weighted and summed into the nodes' totals while
 * the block is in L1. A failing Score makes the block's nodes be scored again one by one
 * to report the first failure in node order. NormalizeScore and its plugins' weights then run
 * per plugin on the scheduling thread (a score out of range sends the cycle through the
 * unplanned functions, which report it as upstream does), and the host is drawn uniformly
 * among the best totals (select_host.c) — the distribution upstream's randomised heap
 * (schedule_one.go, nodeScoreHeap) gives.
 *
 * Metrics (framework_metrics.h): the Score point covers the parallel pass, NormalizeScore
 * and the weights, as upstream's RunScorePlugins; each plugin that ran counts one
 * evaluation per feasible node; in a sampled cycle each worker times its plugins' columns
 * into its tally, added to the histograms after the pass.
 */
#include "framework_metrics.h"
#include "framework_plan.h"
#include "scheduler_internal.h"
#include "select_host.h"

#include "ksched/base/intern.h"

#include <stdatomic.h>
#include <string.h>

enum { SCORE_BLOCK_MIN = 64, SCORE_BLOCK_MAX = 128 };

struct score_job {
    const struct ks_framework *fw;
    const struct ks_cycle_state *cs;
    const struct ks_pod *pod;
    const struct ks_node_snap *const *nodes;
    const struct ks_fw_plan *plan; /* the Score calls this pod does not skip */
    struct ks_fw_tally *tallies;   /* per worker, in a sampled cycle with metrics; else NULL */
    uint32_t n;                    /* feasible nodes: the columns' length */
    int64_t *cols;                 /* one column per plan call (framework_plan.h) */
    int64_t *totals;
    atomic_bool out_of_range; /* a score without NormalizeScore left [0, 100]: redo unplanned */
    atomic_int failed;        /* 0, or 1 once a plugin returned an error (first one kept in st) */
    struct ks_status st;
};

/* The block's first failing Score call, per node in order as ks_fw_score_node() meets it. */
__attribute__((noinline, cold)) static void score_failed_block(struct score_job *j, uint32_t begin,
                                                               uint32_t end)
{
    int64_t row[KS_MAX_PROFILE_PLUGINS];
    for (uint32_t i = begin; i < end; i++) {
        struct ks_status st;
        if (ks_fw_score_node(j->fw, j->cs, j->pod, j->nodes[i], row, &st) != KS_SUCCESS) {
            int expected = 0;
            /* acq_rel: the winner's status write is visible to the reader after the join */
            if (atomic_compare_exchange_strong_explicit(&j->failed, &expected, 1, memory_order_acq_rel,
                                                        memory_order_relaxed))
                j->st = st;
            return;
        }
    }
}

static void score_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    struct score_job *j = ctx;
    bool oor = false;
    struct ks_fw_tally *t = j->tallies ? &j->tallies[worker] : NULL;
    if (ks__fw_plan_score_nodes_tally(j->plan, j->cs, j->pod, &j->nodes[begin], end - begin, j->cols + begin,
                                      j->n, &j->totals[begin], &oor, t) != KS_SUCCESS) {
        score_failed_block(j, begin, end);
        return;
    }
    /* relaxed: read after the join */
    if (oor)
        atomic_store_explicit(&j->out_of_range, true, memory_order_relaxed);
}

/*
 * A score out of range: score and normalise again through the unplanned functions, whose
 * checks run in upstream's order (every NormalizeScore first, then the range check in node
 * order), so the error is the one upstream reports. Score plugins are pure functions of
 * the pod, the node and the cycle state, so the scores are the same.
 */
static int score_unplanned(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_find_result *found, int64_t *scores, int64_t *totals,
                           struct ks_status *st)
{
    uint32_t n = found->nfeasible, nscore = ks_framework_nscore(fw);
    for (uint32_t i = 0; i < n; i++) {
        if (ks_fw_score_node(fw, cs, pod, found->feasible[i], &scores[(size_t)i * nscore], st) != KS_SUCCESS)
            return KS_ERROR;
    }
    return ks_fw_normalize_scores(fw, cs, pod, found->feasible, n, scores, totals, st);
}

uint64_t ks__rand(struct ks_scheduler *s)
{
    /* xorshift64*: enough for unbiased tie-breaks, and reproducible from a seed */
    return ks__xorshift(&s->rng);
}

/* The Score point: the parallel pass, NormalizeScore, the weights (sc->totals; sc->rows when observed). */
static int score(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                 const struct ks_pod *pod, const struct ks_find_result *found, struct ks_status *st)
{
    struct ks_cycle_scratch *sc = &s->scratch;
    uint32_t n = found->nfeasible, nscore = ks_framework_nscore(fw);
    bool timed = fw->metrics && cs->record_plugin_metrics;
    int rc;

    struct ks_fw_plan plan;
    ks__fw_plan_score(fw, cs, &plan);
    struct score_job job = {.fw = fw,
                            .cs = cs,
                            .pod = pod,
                            .nodes = found->feasible,
                            .plan = &plan,
                            .tallies = timed ? sc->tallies : NULL,
                            .n = n,
                            .cols = sc->scores,
                            .totals = sc->totals};
    for (uint32_t w = 0; timed && w < sc->ntallies; w++)
        ks__fw_tally_reset(&sc->tallies[w], nscore, true);
    ks_workers_run(s->workers, n, ks__block_size(s->workers, n, SCORE_BLOCK_MIN, SCORE_BLOCK_MAX),
                   score_block, &job);
    if (timed)
        ks__fw_tally_merge(fw, KS_FWL_SCORE, sc->tallies, sc->ntallies);
    for (uint32_t k = 0; k < plan.n; k++)
        ks__fw_evaluated(fw, KS_FWL_SCORE, plan.col[k], n);
    if (atomic_load_explicit(&job.failed, memory_order_acquire)) {
        *st = job.st;
        return KS_ERROR;
    }
    bool redo = atomic_load_explicit(&job.out_of_range, memory_order_relaxed);
    if (!redo && (rc = ks__fw_plan_normalize(fw, &plan, cs, pod, found->feasible, n, sc->scores, sc->totals,
                                             &redo, st)) != KS_SUCCESS)
        return rc;
    if (redo)
        return score_unplanned(fw, cs, pod, found, sc->rows, sc->totals, st);
    if (s->opts.on_attempt)
        ks__fw_plan_rows(&plan, nscore, sc->scores, n, sc->rows);
    return KS_SUCCESS;
}

int ks__prioritize(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                   const struct ks_pod *pod, const struct ks_find_result *found, uint32_t attempt,
                   const struct ks_node_snap **host, struct ks_status *st)
{
    struct ks_cycle_scratch *sc = &s->scratch;
    uint32_t n = found->nfeasible, nscore = ks_framework_nscore(fw);
    int rc;

    /* one feasible node needs no scores unless someone wants to see them */
    bool report = s->opts.on_attempt && !s->what_if;
    if (n == 1 && !report) {
        *host = found->feasible[0];
        return KS_SUCCESS;
    }
    if (ks__scratch_reserve(sc, 0, n * (nscore ? nscore : 1)) < 0 || ks__scratch_reserve(sc, 0, n) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    if (!nscore)
        memset(sc->totals, 0, n * sizeof(*sc->totals));
    const int64_t *rows = sc->rows; /* what an observer reads: feasible x nscore */
    if (nscore) {
        if ((rc = ks_fw_run_pre_score(fw, cs, pod, found->feasible, n, st)) != KS_SUCCESS)
            return rc;
        int64_t t0 = ks__fw_point_start(fw);
        if ((rc = ks__fw_point_end(fw, KS_FWL_SCORE, score(s, fw, cs, pod, found, st), t0)) != KS_SUCCESS)
            return rc;
    }
    if (report) {
        struct ks_attempt a = {
            .pod = pod,
            .attempt = attempt,
            .fw = fw,
            .cs = cs,
            .snap = found->snap,
            .diag = &found->diag,
            .nplacement = s->placement.n,
            .placement = s->placement.n ? s->placement.names : NULL,
            .nfeasible = n,
            .feasible = found->feasible,
            .nscore = nscore,
            .scores = rows,
            .totals = sc->totals,
        };
        s->opts.on_attempt(s->opts.ctx, &a);
    }
    *host = found->feasible[ks__select_host(sc->totals, n, &s->rng)];
    return KS_SUCCESS;
}
