/*
 * find_nodes.c - PreFilter and the parallel Filter phase (findNodesThatFitPod).
 *
 * Nodes are evaluated from the rotating start index; workers claim blocks in increasing
 * order and stop claiming once numFeasibleNodesToFind nodes passed. Because the evaluated
 * positions always form a prefix, the result is taken in position order — the first
 * numFeasibleNodesToFind feasible nodes and the failures before the last of them — which
 * is what upstream computes when its filter goroutines happen to finish in order, and
 * makes a run reproducible whatever the thread timing.
 *
 * Metrics (framework_metrics.h): the Filter point runs from the end of PreFilter to the
 * result (nominated pods and the nominated node included), as upstream's
 * findNodesThatPassFilters; each worker counts its plugins' node calls into its own tally,
 * added to the counters once the pass is over.
 */
#include "scheduler_internal.h"

#include "framework_metrics.h"
#include "framework_plan.h"

#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Block sizes for ks__block_size() (about four blocks per thread within these bounds);
 * the result does not depend on them (see above). FILTER_PREFETCH: how many nodes ahead
 * the loop asks for the next records; FILTER_SLOT_PREFETCH: how far ahead for the chunks'
 * pointer arrays that lead to them (see filter_block).
 */
enum {
    FILTER_BLOCK_MIN = 64,
    FILTER_BLOCK_MAX = 256,
    FILTER_PREFETCH = 8,
    FILTER_SLOT_PREFETCH = 64,
    FILTER_RECORD_BYTES = 64
};

enum { MIN_FEASIBLE_NODES = 100, MIN_FEASIBLE_PERCENTAGE = 5 };

uint32_t ks_num_feasible_nodes_to_find(int32_t percentage, uint32_t nall)
{
    if (nall < MIN_FEASIBLE_NODES)
        return nall;
    if (percentage <= 0) {
        int64_t adaptive = 50 - (int64_t)nall / 125;
        percentage = adaptive < MIN_FEASIBLE_PERCENTAGE ? MIN_FEASIBLE_PERCENTAGE : (int32_t)adaptive;
    }
    uint64_t n = (uint64_t)nall * (uint32_t)percentage / 100;
    if (n < MIN_FEASIBLE_NODES)
        return MIN_FEASIBLE_NODES;
    return n > nall ? nall : (uint32_t)n;
}

struct filter_job {
    struct ks_workers *workers;
    const struct ks_framework *fw;
    const struct ks_cycle_state *cs;
    const struct ks_pod *pod;
    const struct ks_snapshot *snap;
    const struct ks_node_snap *const *order; /* NULL: the snapshot's nodes */
    uint32_t n, start, limit;
    const struct ks_nominated_scratch *nom; /* nodes with nominated pods this cycle (nom->n 0: none) */
    const struct ks_fw_plan *plan;          /* the Filter calls this pod does not skip */
    struct ks_fw_tally *tallies;            /* per worker, NULL without metrics */
    atomic_uint found;
    struct ks_status *status;
    uint8_t *ok;
    const struct ks_node_snap **evaluated; /* per position: the node filtered there */
    uint32_t block, nblocks;
    atomic_uint *block_state; /* per block: 0, or 1 + the nodes that passed once it is done */
    _Atomic uint64_t prefix;  /* the done blocks before the first one not done << 32 | what passed in them */
};

/* The position of the @i-th node evaluated (from the rotating start). */
static inline uint32_t position(const struct filter_job *j, uint32_t i)
{
    return j->start + i < j->n ? j->start + i : j->start + i - j->n;
}

/* Where the record pointer of the @i-th node evaluated is kept (a chunk's slot, or order[]). */
static inline const struct ks_node_snap *const *slot(const struct filter_job *j, uint32_t i)
{
    uint32_t idx = position(j, i);
    if (j->order)
        return &j->order[idx];
    return &j->snap->chunks[idx >> KS_SNAP_CHUNK_SHIFT]->nodes[idx & (KS_SNAP_CHUNK - 1)];
}

/*
 * The records are separate allocations reached through the chunks' pointer arrays, so
 * the hardware prefetcher cannot run ahead of the walk: at 50,000 nodes each cycle reads
 * 2,500 records and 20 KB of pointers that twenty cycles of other nodes have pushed out of
 * L2. The loop asks for the pointers FILTER_SLOT_PREFETCH nodes ahead (one line of eight
 * per eight nodes) and for the record FILTER_PREFETCH nodes ahead (its first line: what
 * the default filters and scores read), so the misses overlap the gathering of the block
 * and the plugins find the records on their way in.
 */
static inline void prefetch_record(const struct ks_node_snap *n)
{
    ks__prefetch_record(n, FILTER_RECORD_BYTES);
}

/*
 * Stopping inside a block. Blocks are claimed in order; so that a cycle evaluates few
 * nodes past the numFeasibleNodesToFind-th feasible one (neither the rest of the block
 * holding it nor a block another thread claimed after it), each block records what passed
 * in it when it is done, and the done blocks before the first one not done form a prefix
 * whose count is kept in j->prefix. A block may stop (at a sub-block boundary, or before
 * it starts) when the prefix before it already holds enough feasible nodes, or when it is
 * the first block after the prefix and the prefix with what this block passed so far does:
 * either way the limit-th feasible node lies before the stop, every position before it was
 * evaluated, and the result loop (ks__find_nodes) never reads past it.
 */
enum { FILTER_SUB_BLOCK = 64 };

static bool enough(struct filter_job *j, uint32_t blk, uint32_t passed)
{
    uint64_t p = atomic_load_explicit(&j->prefix, memory_order_acquire);
    uint32_t pblocks = (uint32_t)(p >> 32), pfound = (uint32_t)p;
    return (pblocks <= blk && pfound >= j->limit) || (pblocks == blk && pfound + passed >= j->limit);
}

/* Mark block @blk done with @passed nodes passed, and move the prefix over every done block. */
static void block_done(struct filter_job *j, uint32_t blk, uint32_t passed)
{
    /* seq_cst: two threads marking neighbouring blocks must not both miss the other's mark */
    atomic_store_explicit(&j->block_state[blk], passed + 1, memory_order_seq_cst);
    uint64_t p = atomic_load_explicit(&j->prefix, memory_order_seq_cst);
    for (;;) {
        uint32_t b = (uint32_t)(p >> 32);
        if (b >= j->nblocks)
            return;
        unsigned v = atomic_load_explicit(&j->block_state[b], memory_order_seq_cst);
        if (!v)
            return;
        uint64_t q = ((uint64_t)(b + 1) << 32) | (uint32_t)((uint32_t)p + (v - 1));
        if (atomic_compare_exchange_weak_explicit(&j->prefix, &p, q, memory_order_seq_cst,
                                                  memory_order_seq_cst))
            p = q;
    }
}

static void filter_block(void *ctx, uint32_t begin, uint32_t end, uint32_t worker)
{
    struct filter_job *j = ctx;
    uint32_t passed = 0, blk = begin / j->block;
    struct ks_fw_tally *t = j->tallies ? &j->tallies[worker] : NULL;
    if (!j->nom->n && enough(j, blk, 0)) {
        block_done(j, blk, 0);
        return;
    }
    /* the block's first pointers (a line holds eight), then its first records */
    for (uint32_t i = begin; i < begin + FILTER_SLOT_PREFETCH && i < end; i += 8)
        __builtin_prefetch(slot(j, i));
    for (uint32_t i = begin; i < begin + FILTER_PREFETCH && i < end; i++)
        prefetch_record(*slot(j, i));
    for (uint32_t i = begin; i < end; i++) {
        if (((i - begin) & 7) == 0 && i + FILTER_SLOT_PREFETCH < end)
            __builtin_prefetch(slot(j, i + FILTER_SLOT_PREFETCH));
        if (i + FILTER_PREFETCH < end)
            prefetch_record(*slot(j, i + FILTER_PREFETCH));
        j->evaluated[i] = *slot(j, i);
        j->ok[i] = 1;
    }
    if (!j->nom->n) {
        /* plugin by plugin over each sub-block (framework_plan.h), stopping once enough passed */
        for (uint32_t sb = begin; sb < end; sb += FILTER_SUB_BLOCK) {
            uint32_t len = end - sb < FILTER_SUB_BLOCK ? end - sb : FILTER_SUB_BLOCK;
            passed += ks__fw_plan_filter_nodes_tally(j->plan, j->cs, j->pod, &j->evaluated[sb], len,
                                                     &j->ok[sb], &j->status[sb], t);
            if (sb + len < end && enough(j, blk, passed))
                break;
        }
    } else {
        for (uint32_t i = begin; i < end; i++) {
            int rc = ks__filter_node(j->fw, j->nom, j->cs, j->pod, j->evaluated[i], &j->status[i], t);
            j->ok[i] = rc == KS_SUCCESS;
            passed += j->ok[i];
        }
    }
    block_done(j, blk, passed);
    /* relaxed: the count only decides when to stop claiming; results are read after the join */
    if (passed && atomic_fetch_add_explicit(&j->found, passed, memory_order_relaxed) + passed >= j->limit)
        ks_workers_stop(j->workers);
}

int ks__scratch_reserve(struct ks_cycle_scratch *sc, uint32_t nodes, uint32_t scores)
{
    if (nodes > sc->cap_nodes) {
        uint32_t cap = nodes < 1024 ? 1024 : nodes;
        void *a = realloc(sc->status, cap * sizeof(*sc->status));
        if (a)
            sc->status = a;
        void *b = realloc(sc->ok, cap * sizeof(*sc->ok));
        if (b)
            sc->ok = b;
        void *c = realloc(sc->order, cap * sizeof(*sc->order));
        if (c)
            sc->order = c;
        void *d = realloc(sc->feasible, cap * sizeof(*sc->feasible));
        if (d)
            sc->feasible = d;
        void *e = realloc(sc->failed, cap * sizeof(*sc->failed));
        if (e)
            sc->failed = e;
        void *f = realloc(sc->failed_status, cap * sizeof(*sc->failed_status));
        if (f)
            sc->failed_status = f;
        void *g = realloc(sc->evaluated, cap * sizeof(*sc->evaluated));
        if (g)
            sc->evaluated = g;
        void *h = realloc(sc->block_state, cap * sizeof(*sc->block_state));
        if (h)
            sc->block_state = h;
        if (!a || !b || !c || !d || !e || !f || !g || !h)
            return -ENOMEM;
        sc->cap_nodes = cap;
    }
    if (scores > sc->cap_scores) {
        uint32_t cap = scores < 4096 ? 4096 : scores;
        void *a = realloc(sc->scores, cap * sizeof(*sc->scores));
        if (a)
            sc->scores = a;
        void *b = realloc(sc->totals, cap * sizeof(*sc->totals));
        if (b)
            sc->totals = b;
        void *c = realloc(sc->rows, cap * sizeof(*sc->rows));
        if (c)
            sc->rows = c;
        if (!a || !b || !c)
            return -ENOMEM;
        sc->cap_scores = cap;
    }
    return 0;
}

void ks__scratch_free(struct ks_cycle_scratch *sc)
{
    free(sc->status);
    free(sc->ok);
    free(sc->order);
    free(sc->feasible);
    free(sc->failed);
    free(sc->failed_status);
    free(sc->evaluated);
    free(sc->block_state);
    free(sc->scores);
    free(sc->rows);
    free(sc->totals);
    memset(sc, 0, sizeof(*sc));
}

static int cmp_names(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Every plugin that narrowed or rejected, as upstream's "[A B]" list of plugin names. */
static uint32_t plugins_message(const struct ks_framework *fw, uint64_t mask, const char *prefix)
{
    char msg[KS_ERROR_MSG_MAX];
    size_t len = (size_t)snprintf(msg, sizeof(msg), "%s[", prefix);
    const char *names[KS_MAX_PROFILE_PLUGINS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < KS_MAX_PROFILE_PLUGINS; i++) {
        if (mask & (1ull << i))
            names[n++] = ks_framework_plugin_name(fw, i);
    }
    /* sets.List sorts names */
    for (uint32_t i = 1; i < n; i++) {
        for (uint32_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    }
    for (uint32_t i = 0; i < n && len < sizeof(msg); i++)
        len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s", i ? " " : "", names[i]);
    if (len < sizeof(msg))
        snprintf(msg + len, sizeof(msg) - len, "]");
    return ks_intern(msg);
}

int32_t ks__percentage(const struct ks_scheduler *s, const struct ks_framework *fw)
{
    const struct ks_profile *prof = ks_framework_profile(fw);
    if (s->opts.explain)
        return 100;
    return prof->has_percentage ? prof->percentage_of_nodes_to_score
                                : s->opts.config->percentage_of_nodes_to_score;
}

static int filter_phase(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                        const struct ks_pod *pod, const struct ks_snapshot *snap,
                        const struct ks_pre_filter_result *prev, struct ks_find_result *out,
                        struct ks_status *st);

int ks__find_nodes(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                   const struct ks_pod *pod, const struct ks_snapshot *snap, struct ks_find_result *out,
                   struct ks_status *st)
{
    ks_rcu_assert_reading(); /* node records of the snapshot it reads */
    struct ks_cycle_scratch *sc = &s->scratch;
    struct ks_pre_filter_result pre = {.all = true};
    struct ks_diagnosis *d = &out->diag;
    /* a placement of the PodGroup cycle: its nodes are the only ones listed */
    uint32_t nall = s->placement.n ? s->placement.n : snap->nnodes;

    memset(out, 0, sizeof(*out));
    out->snap = snap;
    d->nall = nall;
    d->pre_filter_msg = KS_ID_EMPTY;
    d->post_filter_msg = KS_ID_EMPTY;
    d->absent.code = KS_SUCCESS;
    d->absent.plugin = KS_NO_PLUGIN;
    if (ks__scratch_reserve(sc, nall, 0) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    d->nodes = sc->failed;
    d->statuses = sc->failed_status;
    out->feasible = sc->feasible;

    int rc = ks_fw_run_pre_filter(fw, cs, pod, &pre, st);
    if (rc != KS_SUCCESS) {
        if (rc != KS_UNSCHEDULABLE && rc != KS_UNSCHEDULABLE_AND_UNRESOLVABLE)
            return rc;
        /* every node gets the PreFilter status; the message is the PreFilter's */
        d->absent = *st;
        d->pre_filter_msg = st->nreasons ? st->reasons[0] : KS_ID_EMPTY;
        if (st->plugin != KS_NO_PLUGIN)
            d->unschedulable_plugins |= 1ull << st->plugin;
        return KS_SUCCESS;
    }
    if (s->index && pre.all && !s->placement.n) {
        switch (ks__index_cycle(s, fw, cs, pod, snap, &sc->feasible[0], d)) {
        case KS_INDEX_HOST:
            out->nfeasible = 1;
            out->indexed = true;
            return KS_SUCCESS;
        case KS_INDEX_UNFIT:
            out->indexed = true;
            return KS_SUCCESS;
        case KS_INDEX_NO_ANSWER:
            break;
        }
    }
    if (!ks_framework_has_filter(fw))
        return filter_phase(s, fw, cs, pod, snap, &pre, out, st);
    int64_t t0 = ks__fw_point_start(fw);
    return ks__fw_point_end(fw, KS_FWL_FILTER, filter_phase(s, fw, cs, pod, snap, &pre, out, st), t0);
}

static bool pre_filter_keeps(const struct ks_pre_filter_result *pre, uint32_t name)
{
    for (uint32_t i = 0; i < pre->n; i++) {
        if (pre->names[i] == name)
            return true;
    }
    return false;
}

/* ks__find_nodes() after a PreFilter that let the pod through: Filter, from the nominated node on. */
/*
 * A nominated node (set by an earlier preemption) is likely the only one that fits: try it
 * alone first (evaluateNominatedNode). KS_SUCCESS with out->nfeasible 1 when it passes. If it
 * is rejected, its status is the diagnosis's first entry and stays there whether or not the
 * PreFilter result keeps the node for the pass after (upstream's NodeToStatus keeps it; the
 * nodes left out only get the absent status); evaluated again there, it keeps that one entry,
 * with the new status, and *@nominated says which node it is. An Error on it is not recorded.
 */
static int try_nominated(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                         const struct ks_pod *pod, const struct ks_snapshot *snap, struct ks_find_result *out,
                         const struct ks_node_snap **nominated, struct ks_status *st)
{
    struct ks_cycle_scratch *sc = &s->scratch;
    struct ks_diagnosis *d = &out->diag;
    const struct ks_placement_view *pl = &s->placement;
    uint32_t name = ks_nominator_count(s->nominator) ? ks_nominator_node(s->nominator, pod) : KS_ID_EMPTY;
    if (name == KS_ID_EMPTY)
        name = pod->nominated_node_name; /* status.nominatedNodeName from the API */
    *nominated = NULL;
    if (name == KS_ID_EMPTY || (pl->n && !ks_sorted_ids_have(pl->names, pl->n, name)))
        return KS_SUCCESS;
    const struct ks_node_snap *node = ks_snapshot_find(snap, name);
    if (!node)
        return KS_SUCCESS;
    struct ks_status nst = {0};
    /* the pods nominated to that node alone count for it (RunFilterPluginsWithNominatedPods) */
    int rc = ks__nominated_prepare(s, fw, cs, pod, snap, name, st);
    if (rc != KS_SUCCESS)
        return rc;
    rc = ks__filter_node(fw, &sc->nom, cs, pod, node, &nst, NULL);
    if (rc == KS_SUCCESS) {
        sc->feasible[0] = node;
        out->nfeasible = 1;
    } else if (rc == KS_UNSCHEDULABLE || rc == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
        d->nodes[0] = node;
        d->statuses[0] = nst;
        d->nfailed = 1;
        if (nst.plugin != KS_NO_PLUGIN)
            d->unschedulable_plugins |= 1ull << nst.plugin;
        *nominated = node;
    }
    return KS_SUCCESS;
}

/*
 * The nodes to evaluate when the PodGroup cycle's placement or the PreFilter result @pre
 * narrows them: *@order is sc->order holding *@n nodes, or stays NULL (and *@n untouched) for
 * every node of the snapshot in its order. KS_SUCCESS, or KS_ERROR when out of memory. The placement's nodes
 * are sorted by name, those of the PreFilter result among them; a PreFilter result alone gives its nodes
 * sorted by name, and the nodes it leaves out the absent status (upstream's SetAbsentNodesStatus).
 */
static int narrowed_order(struct ks_scheduler *s, struct ks_framework *fw, const struct ks_snapshot *snap,
                          const struct ks_pre_filter_result *pre, struct ks_diagnosis *d,
                          const struct ks_node_snap *const **order, uint32_t *n, struct ks_status *st)
{
    struct ks_cycle_scratch *sc = &s->scratch;
    const struct ks_placement_view *pl = &s->placement;
    if (pl->n) {
        *n = 0;
        for (uint32_t i = 0; i < pl->n; i++) {
            const struct ks_node_snap *node = ks_snapshot_find(snap, pl->names[i]);
            if (node && (pre->all || pre_filter_keeps(pre, pl->names[i])))
                sc->order[(*n)++] = node;
        }
        *order = sc->order;
    }
    if (pre->all)
        return KS_SUCCESS;
    uint32_t *names = malloc((pre->n ? pre->n : 1) * sizeof(*names));
    if (!names)
        return ks_status_set(st, KS_ERROR, "out of memory");
    memcpy(names, pre->names, pre->n * sizeof(*names));
    qsort(names, pre->n, sizeof(*names), cmp_names);
    if (!pl->n) {
        *n = 0;
        for (uint32_t i = 0; i < pre->n; i++) {
            const struct ks_node_snap *node = ks_snapshot_find(snap, names[i]);
            if (node && (i == 0 || names[i] != names[i - 1]))
                sc->order[(*n)++] = node;
        }
    }
    free(names);
    d->absent.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    d->absent.nreasons = 1;
    d->absent.reasons[0] = plugins_message(fw, pre->narrowed_by, "node(s) didn't satisfy plugin(s) ");
    d->unschedulable_plugins |= pre->narrowed_by;
    *order = sc->order;
    return KS_SUCCESS;
}

/*
 * Filter the @n nodes of @order (the snapshot's when NULL) from @start in parallel until
 * @limit pass; the feasible ones into out, the rejected ones into the diagnosis (the
 * nominated node's entry kept first). The nodes processed (upstream's processedNodes), or
 * -1 with *@st the first Error and *@erred_at its position.
 */
static int64_t filter_parallel(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                               const struct ks_pod *pod, const struct ks_snapshot *snap,
                               const struct ks_node_snap *const *order, uint32_t n, uint32_t start,
                               uint32_t limit, const struct ks_node_snap *nominated,
                               struct ks_find_result *out, uint32_t *erred_at, struct ks_status *st)
{
    struct ks_cycle_scratch *sc = &s->scratch;
    struct ks_diagnosis *d = &out->diag;
    struct ks_fw_plan plan;
    ks__fw_plan_filter(fw, cs, &plan);
    struct filter_job job = {
        .workers = s->workers,
        .fw = fw,
        .cs = cs,
        .pod = pod,
        .snap = snap,
        .order = order,
        .n = n,
        .start = start,
        .limit = limit,
        .nom = &sc->nom,
        .plan = &plan,
        .status = sc->status,
        .ok = sc->ok,
        .evaluated = sc->evaluated,
        .tallies = fw->metrics ? sc->tallies : NULL,
    };
    for (uint32_t w = 0; job.tallies && w < sc->ntallies; w++)
        ks__fw_tally_reset(&sc->tallies[w], fw->list[KS_FWL_FILTER].n, cs->record_plugin_metrics);
    job.block = ks__block_size(s->workers, limit, FILTER_BLOCK_MIN, FILTER_BLOCK_MAX);
    job.nblocks = (n + job.block - 1) / job.block;
    job.block_state = sc->block_state;
    memset(sc->block_state, 0, job.nblocks * sizeof(*sc->block_state));
    atomic_init(&job.prefix, 0);
    uint32_t end = ks_workers_run(s->workers, n, job.block, filter_block, &job);
    if (job.tallies)
        ks__fw_tally_merge(fw, KS_FWL_FILTER, sc->tallies, sc->ntallies);
    for (uint32_t i = 0; i < end; i++) {
        if (sc->ok[i]) {
            sc->feasible[out->nfeasible++] = sc->evaluated[i];
            if (out->nfeasible == limit)
                break;
            continue;
        }
        if (sc->status[i].code == KS_ERROR) {
            *st = sc->status[i];
            *erred_at = i;
            return -1;
        }
        uint32_t k = sc->evaluated[i] == nominated ? 0 : d->nfailed++;
        d->nodes[k] = sc->evaluated[i];
        d->statuses[k] = sc->status[i];
        if (sc->status[i].plugin != KS_NO_PLUGIN)
            d->unschedulable_plugins |= 1ull << sc->status[i].plugin;
    }
    /* as upstream's processedNodes: the feasible nodes and those with a status */
    return out->nfeasible + d->nfailed;
}

static int filter_phase(struct ks_scheduler *s, struct ks_framework *fw, struct ks_cycle_state *cs,
                        const struct ks_pod *pod, const struct ks_snapshot *snap,
                        const struct ks_pre_filter_result *pre, struct ks_find_result *out,
                        struct ks_status *st)
{
    struct ks_cycle_scratch *sc = &s->scratch;
    struct ks_diagnosis *d = &out->diag;
    uint32_t nall = s->placement.n ? s->placement.n : snap->nnodes;
    const struct ks_node_snap *nominated;
    int rc;

    if ((rc = try_nominated(s, fw, cs, pod, snap, out, &nominated, st)) != KS_SUCCESS || out->nfeasible)
        return rc;
    /* pods nominated to nodes by preemption count on those nodes */
    if ((rc = ks__nominated_prepare(s, fw, cs, pod, snap, KS_ID_NONE, st)) != KS_SUCCESS)
        return rc;
    uint32_t n = nall;
    const struct ks_node_snap *const *order = NULL;
    if ((rc = narrowed_order(s, fw, snap, pre, d, &order, &n, st)) != KS_SUCCESS)
        return rc;
    if (n == 0) {
        s->next_start = (s->next_start + d->nfailed) % nall;
        return KS_SUCCESS;
    }

    uint32_t limit = ks_num_feasible_nodes_to_find(ks__percentage(s, fw), n);
    if (!ks_framework_has_score(fw))
        limit = 1; /* nothing to compare: the first feasible node wins, as upstream */
    uint32_t start = s->next_start % n;
    int64_t processed;

    if (!ks_framework_has_filter(fw)) {
        for (uint32_t i = 0; i < limit; i++) {
            uint32_t idx = (start + i) % n;
            sc->feasible[i] = order ? order[idx] : ks_snapshot_node(snap, idx);
        }
        out->nfeasible = limit;
        processed = limit;
    } else {
        uint32_t erred_at;
        processed =
            filter_parallel(s, fw, cs, pod, snap, order, n, start, limit, nominated, out, &erred_at, st);
        if (processed < 0) {
            s->next_start = (s->next_start + erred_at + 1) % nall;
            return KS_ERROR;
        }
    }
    s->next_start = (uint32_t)((s->next_start + (uint64_t)processed) % nall);
    return KS_SUCCESS;
}
