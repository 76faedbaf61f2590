/*
 * default_preemption.c - the DefaultPreemption plugin: when no node fits a pod, find
 * lower-priority victims whose eviction makes room and nominate that node (PostFilter).
 *
 * Mirrors pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go with the
 * evaluator of framework/preemption (engine/preemption.c):
 *   - PodEligibleToPreemptOthers: preemptionPolicy Never, or a lower-priority pod on the
 *     pod's nominated node terminating because of an earlier preemption (deletionTimestamp
 *     and a DisruptionTarget condition with reason PreemptionByScheduler), unless that node
 *     is UnschedulableAndUnresolvable for the pod now;
 *   - candidate nodes: those whose Filter status is Unschedulable (NodesForStatusCode), tried
 *     from a random offset drawn from the cycle's seed until max(nodes * percentage / 100,
 *     absolute) candidates (capped at the node count) were found;
 *   - SelectVictimsOnNode (ks_preempt_select_victims): remove every pod of lower priority,
 *     check that the pod fits (Filter with the pods nominated there), then reprieve the
 *     removed pods most important first, PDB-violating ones before the others, keeping
 *     each one that still leaves room;
 *   - the node is chosen and prepared by the evaluator; messages are upstream's, prefixed
 *     with "preemption: ".
 * For a pod of a class the signature index found unfit, the dry run and the choice come
 * from the index's candidate tree when it can give them exactly (ks_preempt_indexed:
 * O(log nodes) plus the verdicts of nodes changed since), else from the dry run with the
 * memo of verdicts; neither without PDBs in the cluster, for a nominated preemptor, or
 * with --no-index.
 * Args (DefaultPreemptionArgs): defaults of SetDefaults_DefaultPreemptionArgs (10% and
 * 100 candidate nodes) and the checks of ValidateDefaultPreemptionArgs.
 *
 * Context: PostFilter runs on the scheduling thread inside the RCU read section of the
 * cycle's snapshot; it allocates (dry runs copy node records and cycle states) and, for
 * the chosen node, evicts the victims through the framework's evictor.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config_decode.h"
#include "ksched/internal/features.h"
#include "ksched/internal/nominator.h"
#include "ksched/internal/preemption.h"
#include "ksched/loader.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_check(struct ks_decoder *d, const struct ks_yaml_node *node,
                      const struct ks_defaultpreemption_args *a)
{
    const struct ks_yaml_node *pct = ks_yaml_get(node, "minCandidateNodesPercentage");
    const struct ks_yaml_node *abs = ks_yaml_get(node, "minCandidateNodesAbsolute");
    int line = node ? node->line : 0;

    if (a->min_candidate_nodes_percentage < 0 || a->min_candidate_nodes_percentage > 100)
        return ks_cfg_fail_at(d, pct, line, "minCandidateNodesPercentage",
                              "Invalid value: %d: not in valid range [0, 100]",
                              a->min_candidate_nodes_percentage);
    if (a->min_candidate_nodes_absolute < 0)
        return ks_cfg_fail_at(d, abs, line, "minCandidateNodesAbsolute",
                              "Invalid value: %d: not in valid range [0, inf)",
                              a->min_candidate_nodes_absolute);
    if (a->min_candidate_nodes_percentage == 0 && a->min_candidate_nodes_absolute == 0)
        return ks_cfg_fail_at(
            d, pct, line, "minCandidateNodesPercentage",
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute");
    return 0;
}

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_defaultpreemption_args *a)
{
    static const char *const fields[] = {"minCandidateNodesPercentage", "minCandidateNodesAbsolute", NULL};
    enum ks_config_version version;
    int rc;

    a->min_candidate_nodes_percentage = 10;
    a->min_candidate_nodes_absolute = 100;
    if ((rc = ks_cfg_args_begin(d, node, "DefaultPreemptionArgs", api_version, fields, &version)) ||
        (rc = ks_dec_int32(d, node, "minCandidateNodesPercentage", &a->min_candidate_nodes_percentage)) ||
        (rc = ks_dec_int32(d, node, "minCandidateNodesAbsolute", &a->min_candidate_nodes_absolute)))
        return rc;
    return args_check(d, node, a);
}

KS_DEFINE_PLAIN_ARGS_OPS(struct ks_defaultpreemption_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_defaultpreemption_args *a = args;
    ks_yaml_key_int(o, "minCandidateNodesPercentage", a->min_candidate_nodes_percentage);
    ks_yaml_key_int(o, "minCandidateNodesAbsolute", a->min_candidate_nodes_absolute);
}

/* ---- instance ------------------------------------------------------------------------------------ */

#define WAITING "waiting for the preemption for this pod to be finished"

struct preemption {
    struct ks_framework *fw;
    struct ks_preempt_memo *memo;     /* dry-run verdicts of the last preemptor key */
    struct ks_preempting *preempting; /* with SchedulerAsyncPreemption: preemptions under way */
    int32_t percentage;               /* minCandidateNodesPercentage */
    int32_t absolute;                 /* minCandidateNodesAbsolute */
};

/* init - New. Start-up, one thread. */
static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    const struct ks_defaultpreemption_args *a = in->args;
    struct preemption *pl = calloc(1, sizeof(*pl));

    (void)err;
    if (!pl)
        return -ENOMEM;
    pl->fw = in->framework;
    const struct ks_framework_deps *deps = pl->fw ? ks_framework_deps(pl->fw) : NULL;
    if (ks_preempt_memo_create(&pl->memo) < 0 ||
        (ks_feature_enabled(KS_FEATURE_SCHEDULER_ASYNC_PREEMPTION) &&
         ks_preempting_create(deps ? &deps->activator : NULL, &pl->preempting) < 0)) {
        ks_preempt_memo_destroy(pl->memo);
        free(pl);
        return -ENOMEM;
    }
    pl->percentage = a ? a->min_candidate_nodes_percentage : 10;
    pl->absolute = a ? a->min_candidate_nodes_absolute : 100;
    if (ks_intern(KS_PREEMPT_NO_VICTIMS) == KS_ID_NONE || ks_intern(KS_PREEMPT_NOT_HELPFUL) == KS_ID_NONE ||
        ks_intern(WAITING) == KS_ID_NONE) {
        ks_preempt_memo_destroy(pl->memo);
        ks_preempting_close(pl->preempting);
        free(pl);
        return -ENOMEM;
    }
    *self = pl;
    return 0;
}

static void destroy(void *self)
{
    struct preemption *pl = self;
    if (pl) {
        ks_preempt_memo_destroy(pl->memo);
        ks_preempting_close(pl->preempting);
    }
    free(pl);
}

/* ---- asynchronous preemption -------------------------------------------------------------------- */

/*
 * pre_enqueue - PreEnqueue: a pod whose preemption's API calls are under way stays out of
 * activeQ. Any thread, under the queue's locks (takes the tracker's, a leaf below them).
 */
static int pre_enqueue(void *self, const struct ks_pod *pod, struct ks_status *st)
{
    struct preemption *pl = self;
    if (!pl->preempting || !ks_preempting_has(pl->preempting, pod))
        return KS_SUCCESS;
    return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING);
}

/* isPodSchedulableAfterPodDeletion: the plugin never decides a requeue; the pod's other rejectors do. */
static enum ks_queueing_hint hint_skip(void *self, const struct ks_pod *pod, const void *old_obj,
                                       const void *new_obj)
{
    (void)self, (void)pod, (void)old_obj, (void)new_obj;
    return KS_QUEUE_SKIP;
}

/*
 * events_to_register - with asynchronous preemption, pod deletions (so that a pod held back
 * by PreEnqueue is looked at again when a victim goes); without, nothing (PreEnqueue never
 * holds a pod back). Start-up.
 */
static uint32_t events_to_register(void *self, struct ks_event_registration *out, uint32_t max)
{
    struct preemption *pl = self;
    if (!pl->preempting)
        return 0;
    if (max)
        out[0] = (struct ks_event_registration){{KS_ER_POD, KS_ACT_DELETE}, hint_skip};
    return 1;
}

/* ---- eligibility ------------------------------------------------------------------------------- */

/* The code of @name's status in @d; a node without an entry has the absent status (default: U&U). */
static enum ks_code status_code(const struct ks_diagnosis *d, uint32_t name)
{
    for (uint32_t i = 0; i < d->nfailed; i++) {
        const struct ks_node_snap *node;
        const struct ks_status *st = ks_diagnosis_at(d, i, &node);
        if (node->name == name)
            return st->code;
    }
    return d->absent.code == KS_SUCCESS ? KS_UNSCHEDULABLE_AND_UNRESOLVABLE : d->absent.code;
}

/* PodEligibleToPreemptOthers: NULL when @pod may preempt, else why not. */
static const char *not_eligible(const struct ks_framework_deps *deps, const struct ks_snapshot *snap,
                                const struct ks_pod *pod, const struct ks_diagnosis *diag)
{
    if (pod->preemption_policy == KS_PREEMPT_NEVER)
        return "not eligible due to preemptionPolicy=Never.";
    uint32_t nominated = deps->nominator ? ks_nominator_node(deps->nominator, pod) : KS_ID_EMPTY;
    if (nominated == KS_ID_EMPTY)
        nominated = pod->nominated_node_name; /* status.nominatedNodeName from the input */
    if (nominated == KS_ID_EMPTY)
        return NULL;
    /* the filters now rule the nominated node out: preempting elsewhere may help */
    if (status_code(diag, nominated) == KS_UNSCHEDULABLE_AND_UNRESOLVABLE)
        return NULL;
    const struct ks_node_snap *node = ks_snapshot_find(snap, nominated);
    for (uint32_t i = 0; node && i < node->npods; i++) {
        const struct ks_pod *p = node->pods[i];
        if (p->priority < pod->priority && ks_preempt_pod_terminating(p))
            return "not eligible due to a terminating pod on the nominated node.";
    }
    return NULL;
}

/* ---- candidate nodes ----------------------------------------------------------------------------- */

struct name_code {
    uint32_t name;
    enum ks_code code;
};

static int cmp_name_code(const void *a, const void *b)
{
    uint32_t x = ((const struct name_code *)a)->name, y = ((const struct name_code *)b)->name;
    return x < y ? -1 : x > y;
}

/*
 * NodesForStatusCode(Unschedulable): when absent nodes are Unschedulable, every node of the
 * snapshot whose status is; otherwise the listed nodes that are. Into @out (room for every
 * node). Returns the count, or -1 when out of memory.
 */
static int64_t potential_nodes(const struct ks_diagnosis *d, const struct ks_snapshot *snap,
                               const struct ks_node_snap **out)
{
    uint32_t n = 0;
    if (d->group_count) {
        /* grouped: every node of the snapshot from d->start on, each with its object */
        for (uint32_t k = 0, pos = d->start; k < d->nall; k++, pos = pos + 1 == d->nall ? 0 : pos + 1) {
            if (d->statuses[d->group_of[pos]].code == KS_UNSCHEDULABLE)
                out[n++] = ks_snapshot_node(snap, pos);
        }
        return n;
    }
    if (d->absent.code != KS_UNSCHEDULABLE) {
        for (uint32_t i = 0; i < d->nfailed; i++) {
            const struct ks_node_snap *node;
            const struct ks_status *st = ks_diagnosis_at(d, i, &node);
            if (st->code == KS_UNSCHEDULABLE && (node->flags & KS_SNAP_HAS_NODE))
                out[n++] = node;
        }
        return n;
    }
    struct name_code *listed = malloc((d->nfailed ? d->nfailed : 1) * sizeof(*listed));
    if (!listed)
        return -1;
    for (uint32_t i = 0; i < d->nfailed; i++) {
        const struct ks_node_snap *node;
        enum ks_code code = ks_diagnosis_at(d, i, &node)->code;
        listed[i] = (struct name_code){node->name, code};
    }
    qsort(listed, d->nfailed, sizeof(*listed), cmp_name_code);
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *node = ks_snapshot_node(snap, i);
        struct name_code key = {.name = node->name};
        const struct name_code *hit = bsearch(&key, listed, d->nfailed, sizeof(*listed), cmp_name_code);
        if ((hit ? hit->code : d->absent.code) == KS_UNSCHEDULABLE && (node->flags & KS_SNAP_HAS_NODE))
            out[n++] = node;
    }
    free(listed);
    return n;
}

/*
 * How many nodes potential_nodes() lists, for a grouped diagnosis (every node of the
 * snapshot has an entry, and every node of a snapshot the cache built has its object).
 */
static uint32_t potential_count(const struct ks_diagnosis *d)
{
    uint32_t n = 0;
    for (uint32_t g = 0; g < d->ngroups; g++)
        n += d->statuses[g].code == KS_UNSCHEDULABLE ? d->group_count[g] : 0;
    return n;
}

/* calculateNumCandidates */
static uint32_t num_candidates(const struct preemption *pl, uint32_t nodes)
{
    int64_t n = (int64_t)nodes * pl->percentage / 100;
    if (n < pl->absolute)
        n = pl->absolute;
    return n > nodes ? nodes : (uint32_t)n;
}

/* The dry run's random offset (upstream: rand.Int31n), drawn from the cycle's seed. */
static uint32_t random_offset(uint64_t seed, uint32_t n)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return n ? (uint32_t)(z % n) : 0;
}

/* ---- PostFilter -------------------------------------------------------------------------------- */

/* Fill @st with @code and "preemption: " + @msg as one interned reason. */
static int fail(struct ks_status *st, enum ks_code code, const char *msg)
{
    size_t len = strlen(msg) + sizeof("preemption: ");
    char *buf = malloc(len);
    uint32_t id = KS_ID_NONE;
    if (buf) {
        snprintf(buf, len, "preemption: %s", msg);
        id = ks_intern(buf);
        free(buf);
    }
    st->code = code;
    st->plugin = KS_NO_PLUGIN;
    st->nreasons = 0;
    if (id != KS_ID_NONE)
        st->reasons[st->nreasons++] = id;
    return code;
}

/* No candidate, and @msg (NULL: out of memory) the FitError of the dry run: nomination cleared. */
static int no_candidate_message(const struct ks_framework_deps *deps, const struct ks_pod *pod, char *msg,
                                struct ks_status *st)
{
    if (!msg)
        return fail(st, KS_ERROR, "out of memory");
    /* upstream returns an empty nominated node, which clears the pod's nomination */
    if (deps->nominator)
        ks_nominator_remove(deps->nominator, pod);
    fail(st, KS_UNSCHEDULABLE, msg);
    free(msg);
    return KS_UNSCHEDULABLE;
}

/* No candidate among @npotential nodes none of which has a pod of lower priority. */
static int no_candidate(const struct ks_framework_deps *deps, const struct ks_pod *pod, uint32_t npotential,
                        uint32_t nall, struct ks_status *st)
{
    return no_candidate_message(deps, pod, ks_preempt_no_victims_message(npotential, nall), st);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What the evaluator works with: this plugin's framework, its nominator, evictor and PDBs, now. */
static struct ks_preemptor preemptor(const struct preemption *pl, const struct ks_framework_deps *deps,
                                     struct ks_cycle_state *cs, const struct ks_pod *pod)
{
    const struct ks_objects *objs = deps->objects;
    return (struct ks_preemptor){
        .fw = pl->fw,
        .cs = cs,
        .pod = pod,
        .nominator = deps->nominator,
        .evictor = &deps->evictor,
        .plugin = ks_plugin_default_preemption.name,
        .npdbs = objs ? ks_objects_count(objs, PDB) : 0,
        .pdbs = objs ? (const struct ks_pod_disruption_budget *const *)objs->of[KS_KIND_PDB].items : NULL,
        .now_ns = now_ns(),
    };
}

/* post_filter - PostFilter (Evaluator.Preempt). Scheduling thread, inside the snapshot's RCU read section. */
static int post_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                       struct ks_status *st)
{
    struct preemption *pl = self;
    const struct ks_framework_deps *deps = pl->fw ? ks_framework_deps(pl->fw) : NULL;

    res->nominated_node = KS_ID_EMPTY;
    if (!deps || !deps->cache)
        return fail(st, KS_ERROR, "no cluster snapshot to preempt in");
    const struct ks_snapshot *snap = ks_cache_snapshot(deps->cache);

    /* 1) is the pod eligible to preempt others? */
    const char *why = not_eligible(deps, snap, pod, diag);
    if (why)
        return fail(st, KS_UNSCHEDULABLE, why);

    /* 2) candidates from dry runs on the nodes where removing pods may help */
    if (snap->nnodes == 0)
        return fail(st, KS_ERROR, "no nodes available");
    /*
     * No pod anywhere of lower priority: the dry run would fail every potential node with
     * "No preemption victims found" before filtering it, so only their count is needed.
     */
    bool no_victims = snap->priorities_known && snap->min_pod_priority >= pod->priority;
    if (no_victims && diag->group_count && diag->snap == snap)
        return no_candidate(deps, pod, potential_count(diag), snap->nnodes, st);
    struct ks_preemptor p = preemptor(pl, deps, cs, pod);
    if (deps->evictor.evict_async)
        p.preempting = pl->preempting;
    /* the index and the memo serve pods the plugins cannot tell apart, without PDBs, not nominated themselves
     */
    bool nominated = deps->nominator && ks_nominator_count(deps->nominator) &&
                     ks_nominator_node(deps->nominator, pod) != KS_ID_EMPTY;
    bool reuse = !deps->no_memo && !p.npdbs && !nominated;
    struct ks_preempt_dry_run dry = {0};
    int rc = -ENOENT;
    if (reuse && !no_victims && diag->group_count && diag->snap == snap) {
        p.index = &deps->preempt_index;
        uint32_t n = potential_count(diag);
        rc = n ? ks_preempt_indexed(&p, diag, n, random_offset(cs->seed, n), num_candidates(pl, n),
                                    ks_preempt_select_victims, NULL, &dry)
               : -ENOENT;
        if (rc == -ENOENT)
            ks_preempt_dry_run_free(&dry);
    }
    if (rc == -ENOENT) {
        const struct ks_node_snap **potential = malloc(snap->nnodes * sizeof(*potential));
        int64_t np = potential ? potential_nodes(diag, snap, potential) : -1;
        if (np < 0) {
            free(potential);
            return fail(st, KS_ERROR, "out of memory");
        }
        if (np == 0 || no_victims) {
            free(potential);
            return no_candidate(deps, pod, (uint32_t)np, snap->nnodes, st);
        }
        if (reuse && ks_preempt_memo_begin(pl->memo, pl->fw, cs, pod, snap->nnodes))
            p.memo = pl->memo;
        uint32_t n = (uint32_t)np;
        rc = ks_preempt_dry_run(&p, potential, n, random_offset(cs->seed, n), num_candidates(pl, n),
                                ks_preempt_select_victims, NULL, &dry);
        free(potential);
    }
    if (rc < 0) {
        ks_preempt_dry_run_free(&dry);
        return fail(st, KS_ERROR, "out of memory");
    }
    if (dry.ncandidates == 0) {
        char err[KS_ERROR_MSG_MAX * 2];
        rc = ks_preempt_dry_run_error(&dry, err, sizeof(err))
                 ? fail(st, KS_ERROR, err)
                 : no_candidate_message(deps, pod, ks_preempt_fit_message(&dry, snap->nnodes), st);
        ks_preempt_dry_run_free(&dry);
        return rc;
    }

    /* 3) the best candidate, 4) evict its victims and nominate its node */
    const struct ks_preempt_candidate *best = ks_preempt_select(dry.candidates, dry.ncandidates, p.now_ns);
    if ((rc = ks_preempt_prepare(&p, best, st)) != KS_SUCCESS) {
        char msg[KS_ERROR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", st->nreasons ? ks_intern_str(st->reasons[0]) : "");
        ks_preempt_dry_run_free(&dry);
        return fail(st, (enum ks_code)rc, msg);
    }
    res->nominated_node = best->node->name;
    ks_preempt_dry_run_free(&dry);
    return KS_SUCCESS;
}

/* ---- PodGroupPostFilter ------------------------------------------------------------------------ */

/* @st's message, if any, with "pod group preemption: " before it; @code kept. */
static int pod_group_message(struct ks_status *st, int code)
{
    char msg[KS_ERROR_MSG_MAX];
    if (!st->nreasons)
        return code;
    snprintf(msg, sizeof(msg), "%s", ks_intern_str(st->reasons[0]));
    return ks_status_set(st, (enum ks_code)code, "pod group preemption: %s", msg);
}

/* pod_group_post_filter - PodGroupPostFilter: workload-aware preemption over the whole cluster. */
static int pod_group_post_filter(void *self, struct ks_pod_group_preemptor *g, struct ks_status *st)
{
    struct preemption *pl = self;
    const struct ks_framework_deps *deps = pl->fw ? ks_framework_deps(pl->fw) : NULL;
    if (!deps || !deps->cache || g->nmembers == 0)
        return ks_status_set(st, KS_ERROR, "pod group preemption: no cluster to preempt in");
    if (g->spec->topology_key != KS_ID_NONE)
        return ks_status_set(st, KS_UNSCHEDULABLE,
                             "pod group preemption: not supported with topology constraints");
    struct ks_preemptor p = preemptor(pl, deps, NULL, g->members[0]);
    return pod_group_message(st, ks_preempt_pod_group(&p, g, st));
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_default_preemption = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DefaultPreemption",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
    .init = init,
    .destroy = destroy,
    .post_filter = post_filter,
    .pod_group_post_filter = pod_group_post_filter,
    .pre_enqueue = pre_enqueue,
    .events_to_register = events_to_register,
};
