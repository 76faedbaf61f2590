/*
 * preemption.c - the framework's preemption evaluator, which PostFilter plugins call
 * (include/ksched/internal/preemption.h).
 *
 * Mirrors pkg/scheduler/framework/preemption/preemption.go (DryRunPreemption,
 * SelectCandidate, pickOneNodeForPreemption, prepareCandidate, getLowerPriorityNominatedPods),
 * DefaultPreemption's SelectVictimsOnNode and filterPodsWithPDBViolation
 * (plugins/defaultpreemption/default_preemption.go), framework/runtime's
 * RunFilterPluginsWithNominatedPods and util/utils.go's pod ordering.
 *
 * Where upstream checks candidate nodes in parallel and stops the workers once enough
 * candidates were found, the dry run here visits the nodes one after another from the
 * offset: the result is the one upstream computes with parallelism 1 (its tests pin that
 * setting to get a deterministic answer), and a run is reproducible from the cycle's seed.
 *
 * Invariants: node records given to and derived by a dry run belong to the snapshot of
 * the RCU read section the caller holds; derived records, cloned cycle states and node
 * scratch memory never outlive the dry run; candidates and failure statuses live in the
 * result's arena. Nominated pods are held by a reference while a node is tried.
 */
#include "ksched/internal/preemption.h"
#include "ksched/base/rcu.h"
#include "preemption_internal.h"
#include "scheduler_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/nominator.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pod order ----------------------------------------------------------------------------------- */

int64_t ks_preempt_pod_start_time(const struct ks_pod *pod, int64_t now_ns)
{
    return pod->start_time != KS_TIME_NONE ? pod->start_time : now_ns;
}

bool ks_preempt_more_important(const struct ks_pod *a, const struct ks_pod *b, int64_t now_ns)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return ks_preempt_pod_start_time(a, now_ns) < ks_preempt_pod_start_time(b, now_ns);
}

void ks_preempt_sort(const struct ks_pod **pods, uint32_t n, int64_t now_ns)
{
    /* insertion sort: stable, and the lists are a node's pods */
    for (uint32_t i = 1; i < n; i++) {
        for (uint32_t j = i; j > 0 && ks_preempt_more_important(pods[j], pods[j - 1], now_ns); j--) {
            const struct ks_pod *t = pods[j];
            pods[j] = pods[j - 1];
            pods[j - 1] = t;
        }
    }
}

int64_t ks_preempt_earliest_start(const struct ks_pod *const *pods, uint32_t n, int64_t now_ns)
{
    if (n == 0)
        return INT64_MIN;
    int64_t earliest = ks_preempt_pod_start_time(pods[0], now_ns);
    int32_t top = pods[0]->priority;
    for (uint32_t i = 1; i < n; i++) {
        int64_t start = ks_preempt_pod_start_time(pods[i], now_ns);
        if (pods[i]->priority == top) {
            if (start < earliest)
                earliest = start;
        } else if (pods[i]->priority > top) {
            top = pods[i]->priority;
            earliest = start;
        }
    }
    return earliest;
}

bool ks_preempt_now_matters(const struct ks_node_snap *node, int32_t priority)
{
    bool with = false, without = false;
    for (uint32_t i = 0; i < node->npods; i++) {
        if (node->pods[i]->priority >= priority)
            continue;
        if (node->pods[i]->start_time != KS_TIME_NONE)
            with = true;
        else
            without = true;
    }
    return with && without;
}

/* ---- filter with nominated pods ----------------------------------------------------------------- */

static int out_of_memory(struct ks_status *st)
{
    return ks_status_set(st, KS_ERROR, "out of memory");
}

int ks_preempt_trial_filter(const struct ks_preemptor *p, struct ks_preempt_trial *t,
                            const struct ks_node_snap *node, struct ks_status *st)
{
    int rc;

    if (t->nnominated > 0) {
        /* first pass: as if the pods nominated here with at least our priority were running */
        if (ks_cycle_state_clone(p->fw, t->state, t->scratch_state) < 0)
            return out_of_memory(st);
        const struct ks_node_snap *with =
            ks_node_snap_derive(node, t->nominated, t->nnominated, NULL, 0, t->arena);
        if (!with)
            return out_of_memory(st);
        for (uint32_t i = 0; i < t->nnominated; i++) {
            if ((rc = ks_fw_run_add_pod(p->fw, t->scratch_state, p->pod, t->nominated[i], with, st)) !=
                KS_SUCCESS)
                return rc;
        }
        if ((rc = ks_fw_run_filter(p->fw, t->scratch_state, p->pod, with, st)) != KS_SUCCESS)
            return rc;
    }
    /* second pass (or the only one): without them, as some filters need them absent */
    return ks_fw_run_filter(p->fw, t->state, p->pod, node, st);
}

/* ---- dry run ---------------------------------------------------------------------------------------- */

/*
 * The pods nominated to @node, each with a reference, into *all (@arena); the ones the
 * preemptor must leave room for (priority >= its own, itself excluded) first, *nge of them.
 * Returns how many references the caller drops, or -1 when out of memory.
 */
static int64_t nominated_to(const struct ks_preemptor *p, uint32_t node, struct ks_arena *arena,
                            const struct ks_pod ***all, uint32_t *nge)
{
    *all = NULL;
    *nge = 0;
    if (!p->nominator || ks_nominator_count(p->nominator) == 0)
        return 0;
    uint32_t want = ks_nominator_pods(p->nominator, node, NULL, 0);
    if (want == 0)
        return 0;
    const struct ks_pod **pods = ks_arena_calloc(arena, want, sizeof(*pods));
    if (!pods)
        return -1;
    uint32_t got = ks_nominator_pods(p->nominator, node, pods, want);
    if (got > want)
        got = want;
    /* move the pods that count to the front, keeping nomination order among them */
    uint32_t k = 0;
    for (uint32_t i = 0; i < got; i++) {
        if (pods[i]->priority >= p->pod->priority && !ks_pod_same_name(pods[i], p->pod)) {
            const struct ks_pod *t = pods[i];
            memmove(&pods[k + 1], &pods[k], (size_t)(i - k) * sizeof(*pods));
            pods[k++] = t;
        }
    }
    *all = pods;
    *nge = k;
    return got;
}

void ks__preempt_scratch_init(struct ks_preempt_scratch *sc)
{
    ks_cycle_state_init(&sc->state);
    ks_cycle_state_init(&sc->scratch_state);
    sc->arena = (struct ks_arena)KS_ARENA_INIT;
}

void ks__preempt_scratch_destroy(struct ks_preempt_scratch *sc)
{
    ks_cycle_state_destroy(&sc->scratch_state);
    ks_cycle_state_destroy(&sc->state);
    ks_arena_destroy(&sc->arena);
}

int ks__preempt_trial(const struct ks_preemptor *p, const struct ks_node_snap *node,
                      ks_select_victims_fn select, void *ctx, struct ks_preempt_scratch *sc,
                      struct ks_arena *keep, struct ks_preempt_candidate *c, struct ks_status *st)
{
    const struct ks_pod **nominated;
    uint32_t nge;
    int code;

    ks_arena_reset(&sc->arena);
    int64_t held = nominated_to(p, node->name, &sc->arena, &nominated, &nge);
    if (held < 0 || ks_cycle_state_clone(p->fw, p->cs, &sc->state) < 0) {
        code = out_of_memory(st);
    } else {
        struct ks_preempt_trial t = {
            .node = node,
            .state = &sc->state,
            .scratch_state = &sc->scratch_state,
            .arena = &sc->arena,
            .nnominated = nge,
            .nominated = nominated,
        };
        code = select(ctx, p, &t, keep, c, st);
    }
    for (int64_t k = 0; k < held; k++)
        ks_pod_put(nominated[k]);
    return code;
}

int ks_preempt_dry_run(const struct ks_preemptor *p, const struct ks_node_snap *const *potential, uint32_t n,
                       uint32_t offset, uint32_t num_candidates, ks_select_victims_fn select, void *ctx,
                       struct ks_preempt_dry_run *out)
{
    ks_rcu_assert_reading(); /* node records of the snapshot it reads */
    struct ks_preempt_scratch sc;
    size_t cap = num_candidates ? num_candidates : 1, nodes = n ? n : 1;
    /* not zeroed (sized by the nodes, at most 2^32 each): an entry is written before it is counted */
    struct ks_preempt_candidate *clean = ks_arena_alloc(&out->arena, cap * sizeof(*clean));
    struct ks_preempt_candidate *violating = ks_arena_alloc(&out->arena, cap * sizeof(*violating));
    uint32_t nclean = 0, nviolating = 0;
    int rc = 0;

    out->failed = ks_arena_alloc(&out->arena, nodes * sizeof(*out->failed));
    out->failed_status = ks_arena_alloc(&out->arena, nodes * sizeof(*out->failed_status));
    if (!clean || !violating || !out->failed || !out->failed_status)
        return -ENOMEM;
    ks__preempt_scratch_init(&sc);

    /* the memo's nomination versions, read a block of nodes ahead (one lock per block) */
    enum { VERSION_BLOCK = 64 };
    uint64_t versions[VERSION_BLOCK] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_node_snap *node = potential[(offset + i) % n];
        struct ks_preempt_candidate c = {0};
        struct ks_status st = {.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
        if (p->memo && p->nominator && i % VERSION_BLOCK == 0) {
            uint32_t names[VERSION_BLOCK], k = n - i < VERSION_BLOCK ? n - i : VERSION_BLOCK;
            for (uint32_t b = 0; b < k; b++)
                names[b] = potential[(offset + i + b) % n]->name;
            ks_nominator_node_versions(p->nominator, names, k, versions);
        }
        uint64_t nominations = versions[i % VERSION_BLOCK];
        int code = p->memo ? ks_preempt_memo_get(p->memo, node, nominations, &c, &st) : -ENOENT;
        if (code == -ENOENT) {
            code = ks__preempt_trial(p, node, select, ctx, &sc, &out->arena, &c, &st);
            if (p->memo)
                ks_preempt_memo_put(p->memo, p, node, nominations, code, &c, &st);
        }

        if (code == KS_SUCCESS && c.nvictims > 0) {
            c.node = node;
            if (c.npdb_violations == 0) {
                if (nclean < num_candidates)
                    clean[nclean++] = c;
            } else if (nviolating < num_candidates) {
                violating[nviolating++] = c;
            }
            if (nclean > 0 && nclean + nviolating >= num_candidates)
                break;
            continue;
        }
        if (code == KS_SUCCESS)
            ks_status_set(&st, KS_ERROR, "expected at least one victim pod on node \"%s\"",
                          ks_intern_str(node->name));
        out->failed[out->nfailed] = node;
        out->failed_status[out->nfailed++] = st;
    }

    out->candidates = ks_arena_calloc(&out->arena, (size_t)nclean + nviolating + 1, sizeof(*out->candidates));
    if (!out->candidates) {
        rc = -ENOMEM;
    } else {
        memcpy(out->candidates, clean, nclean * sizeof(*clean));
        memcpy(out->candidates + nclean, violating, nviolating * sizeof(*violating));
        out->ncandidates = nclean + nviolating;
    }
    ks__preempt_scratch_destroy(&sc);
    return rc;
}

void ks_preempt_dry_run_free(struct ks_preempt_dry_run *r)
{
    if (!r)
        return;
    ks_arena_destroy(&r->arena);
    memset(r, 0, sizeof(*r));
}

/* Status.Message(): the reasons joined by ", ". */
static void status_message(const struct ks_status *st, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint16_t i = 0; i < st->nreasons && i < KS_STATUS_MAX_REASONS && off < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", ks_intern_str(st->reasons[i]));
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

/* Is failure @i an error whose message an earlier error already had? */
static bool repeated_error(const struct ks_preempt_dry_run *r, uint32_t i)
{
    const struct ks_status *b = &r->failed_status[i];
    for (uint32_t j = 0; j < i; j++) {
        const struct ks_status *a = &r->failed_status[j];
        if (a->code == KS_ERROR && a->nreasons == b->nreasons &&
            memcmp(a->reasons, b->reasons, b->nreasons * sizeof(b->reasons[0])) == 0)
            return true;
    }
    return false;
}

bool ks_preempt_dry_run_error(const struct ks_preempt_dry_run *r, char *buf, size_t len)
{
    uint32_t ndistinct = 0, k = 0;
    size_t off = 0;

    for (uint32_t i = 0; i < r->nfailed; i++)
        ndistinct += r->failed_status[i].code == KS_ERROR && !repeated_error(r, i);
    if (len == 0 || ndistinct == 0)
        return ndistinct > 0;
    /* utilerrors.NewAggregate: one message as is, several distinct ones as "[a, b]" */
    buf[0] = '\0';
    if (ndistinct > 1)
        off += (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < r->nfailed && off < len; i++) {
        if (r->failed_status[i].code != KS_ERROR || repeated_error(r, i))
            continue;
        if (k++ > 0)
            off += (size_t)snprintf(buf + off, len - off, ", ");
        if (off >= len)
            break;
        status_message(&r->failed_status[i], buf + off, len - off);
        off += strlen(buf + off);
    }
    if (ndistinct > 1 && off < len)
        snprintf(buf + off, len - off, "]");
    return true;
}

/* ---- SelectVictimsOnNode ------------------------------------------------------------------------- */

bool ks_preempt_pdb_take(const struct ks_preemptor *p, const struct ks_pod *pod, int32_t *allowed)
{
    bool violating = false;
    if (pod->meta.labels.n == 0)
        return false; /* a pod without labels matches no PDB */
    for (uint32_t k = 0; k < p->npdbs; k++) {
        const struct ks_pod_disruption_budget *pdb = p->pdbs[k];
        if (pdb->meta.namespace_id != pod->meta.namespace_id)
            continue;
        /* a nil or empty selector matches nothing here */
        if (!pdb->selector || pdb->selector->nreqs == 0 ||
            !ks_label_selector_matches(pdb->selector, &pod->meta.labels))
            continue;
        bool disrupted = false;
        for (uint32_t d = 0; d < pdb->ndisrupted && !disrupted; d++)
            disrupted = strcmp(pdb->disrupted_pods[d], pod->meta.name) == 0;
        if (disrupted)
            continue; /* its eviction was already processed */
        if (--allowed[k] < 0)
            violating = true;
    }
    return violating;
}

/*
 * filterPodsWithPDBViolation over @pods (most important first): violating[i] is set when
 * evicting pods[i] after the ones before it would take a PDB that selects it below zero
 * allowed disruptions.
 */
static int pdb_violations(const struct ks_preemptor *p, const struct ks_pod *const *pods, uint32_t n,
                          bool *violating, struct ks_arena *arena)
{
    int32_t *allowed = ks_arena_calloc(arena, p->npdbs ? p->npdbs : 1, sizeof(*allowed));
    if (!allowed)
        return -ENOMEM;
    for (uint32_t k = 0; k < p->npdbs; k++)
        allowed[k] = p->pdbs[k]->disruptions_allowed;
    for (uint32_t i = 0; i < n; i++)
        violating[i] = ks_preempt_pdb_take(p, pods[i], allowed);
    return 0;
}

bool ks_preempt_pod_terminating(const struct ks_pod *p)
{
    if (p->meta.deletion_time == KS_TIME_NONE)
        return false;
    for (uint32_t i = 0; i < p->nconditions; i++) {
        const struct ks_pod_condition *c = &p->conditions[i];
        if (c->type && strcmp(c->type, "DisruptionTarget") == 0)
            return c->status && strcmp(c->status, "True") == 0 && c->reason &&
                   strcmp(c->reason, "PreemptionByScheduler") == 0;
    }
    return false;
}

int ks_preempt_select_victims(void *ctx, const struct ks_preemptor *p, struct ks_preempt_trial *t,
                              struct ks_arena *keep, struct ks_preempt_candidate *out, struct ks_status *st)
{
    (void)ctx;
    const struct ks_node_snap *base = t->node;
    size_t cap = (size_t)base->npods + 1;
    const struct ks_pod **potential = ks_arena_calloc(t->arena, cap, sizeof(*potential));
    const struct ks_pod **order = ks_arena_calloc(t->arena, cap, sizeof(*order));
    const struct ks_pod **removed = ks_arena_calloc(t->arena, cap, sizeof(*removed));
    const struct ks_pod **next_removed = ks_arena_calloc(t->arena, cap, sizeof(*next_removed));
    const struct ks_pod **victims = ks_arena_calloc(t->arena, cap, sizeof(*victims));
    bool *violating = ks_arena_calloc(t->arena, cap, sizeof(*violating));
    uint32_t np = 0, nvictims = 0;
    int64_t nviolations = 0;
    int rc;

    if (!potential || !order || !removed || !next_removed || !victims || !violating)
        return out_of_memory(st);
    /* every pod of lower priority may go (isPreemptionAllowed; IsEligiblePod allows all) */
    for (uint32_t i = 0; i < base->npods; i++) {
        if (base->pods[i]->priority < p->pod->priority)
            potential[np++] = base->pods[i];
    }
    if (np == 0) /* the node's state did not change: no need to filter it again */
        return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, KS_PREEMPT_NO_VICTIMS);
    const struct ks_node_snap *cur = ks_node_snap_derive(base, NULL, 0, potential, np, t->arena);
    if (!cur)
        return out_of_memory(st);
    for (uint32_t i = 0; i < np; i++) {
        if ((rc = ks_fw_run_remove_pod(p->fw, t->state, p->pod, potential[i], cur, st)) != KS_SUCCESS)
            return rc;
    }
    /* not even without every lower-priority pod: this node cannot help */
    if ((rc = ks_preempt_trial_filter(p, t, cur, st)) != KS_SUCCESS)
        return rc;

    ks_preempt_sort(potential, np, p->now_ns);
    if (pdb_violations(p, potential, np, violating, t->arena) < 0)
        return out_of_memory(st);
    /* reprieve PDB-violating pods first, then the others, each group most important first */
    uint32_t nv = 0, k = 0;
    for (uint32_t i = 0; i < np; i++)
        nv += violating[i];
    bool *order_violates = ks_arena_calloc(t->arena, cap, sizeof(*order_violates));
    if (!order_violates)
        return out_of_memory(st);
    for (uint32_t pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < np; i++) {
            if (violating[i] == (pass == 0)) {
                order_violates[k] = violating[i];
                order[k++] = potential[i];
            }
        }
    }
    memcpy(removed, potential, np * sizeof(*removed));
    uint32_t nremoved = np;
    for (uint32_t i = 0; i < np; i++) {
        const struct ks_pod *pod = order[i];
        uint32_t m = 0;
        for (uint32_t j = 0; j < nremoved; j++) {
            if (removed[j] != pod)
                next_removed[m++] = removed[j];
        }
        const struct ks_node_snap *next = ks_node_snap_derive(base, NULL, 0, next_removed, m, t->arena);
        if (!next)
            return out_of_memory(st);
        if ((rc = ks_fw_run_add_pod(p->fw, t->state, p->pod, pod, next, st)) != KS_SUCCESS)
            return rc;
        struct ks_status fit = {.code = KS_SUCCESS, .plugin = KS_NO_PLUGIN};
        if (ks_preempt_trial_filter(p, t, next, &fit) == KS_SUCCESS) {
            const struct ks_pod **swap = removed;
            removed = next_removed;
            next_removed = swap;
            nremoved = m;
            cur = next;
            continue;
        }
        if ((rc = ks_fw_run_remove_pod(p->fw, t->state, p->pod, pod, cur, st)) != KS_SUCCESS)
            return rc;
        victims[nvictims++] = pod;
        nviolations += order_violates[i];
    }
    /* the two groups were reprieved apart: put the victims back in order of importance */
    if (nv != 0 && nv != np)
        ks_preempt_sort(victims, nvictims, p->now_ns);

    out->victims = ks_arena_calloc(keep, nvictims ? nvictims : 1, sizeof(*out->victims));
    if (!out->victims)
        return out_of_memory(st);
    memcpy(out->victims, victims, nvictims * sizeof(*victims));
    out->nvictims = nvictims;
    out->npdb_violations = nviolations;
    return KS_SUCCESS;
}

/* ---- choosing the node ------------------------------------------------------------------------ */

int64_t ks__preempt_priority_sum(const struct ks_preempt_candidate *c)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < c->nvictims; i++)
        sum += (int64_t)c->victims[i]->priority + (int64_t)INT32_MAX + 1;
    return sum;
}

/* One of pickOneNodeForPreemption's score functions: higher is better. */
static int64_t score(const struct ks_preempt_candidate *c, int f, int64_t now_ns)
{
    switch (f) {
    case 0:
        return -c->npdb_violations;
    case 1:
        return c->nvictims ? -(int64_t)c->victims[0]->priority : INT64_MIN;
    case 2:
        return -ks__preempt_priority_sum(c);
    case 3:
        return -(int64_t)c->nvictims;
    default:
        return ks_preempt_earliest_start(c->victims, c->nvictims, now_ns);
    }
}

const struct ks_preempt_candidate *ks_preempt_select(const struct ks_preempt_candidate *c, uint32_t n,
                                                     int64_t now_ns)
{
    if (n == 0)
        return NULL;
    if (n == 1)
        return &c[0];
    uint32_t *left = malloc(n * sizeof(*left));
    if (!left)
        return &c[0];
    uint32_t nleft = n;
    for (uint32_t i = 0; i < n; i++)
        left[i] = i;
    for (int f = 0; f < 5 && nleft > 1; f++) {
        int64_t best = INT64_MIN;
        uint32_t kept = 0;
        for (uint32_t i = 0; i < nleft; i++) {
            int64_t s = score(&c[left[i]], f, now_ns);
            if (s > best) {
                best = s;
                kept = 0;
            }
            if (s == best)
                left[kept++] = left[i];
        }
        nleft = kept;
    }
    const struct ks_preempt_candidate *chosen = &c[left[0]];
    free(left);
    return chosen;
}

/* ---- acting on the choice ----------------------------------------------------------------------- */

int ks_preempt_prepare(const struct ks_preemptor *p, const struct ks_preempt_candidate *c,
                       struct ks_status *st)
{
    const struct ks_pod **sent = p->preempting ? calloc(c->nvictims ? c->nvictims : 1, sizeof(*sent)) : NULL;
    uint32_t nsent = 0;
    if (p->preempting && !sent)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < c->nvictims; i++) {
        const struct ks_pod *v = c->victims[i];
        if (v->meta.deletion_time != KS_TIME_NONE)
            continue; /* graceful deletion already started */
        /* a victim waiting on Permit is rejected rather than deleted */
        if (p->fw && p->plugin && ks_fw_reject(p->fw, v, p->plugin, "preempted") == 0)
            continue;
        if (sent) {
            sent[nsent++] = v;
            continue;
        }
        if (!p->evictor || !p->evictor->evict)
            continue;
        int rc = p->evictor->evict(p->evictor->ctx, v, p->pod, c->node->name);
        if (rc < 0)
            return ks_status_set(st, KS_ERROR, "preempting pod %s/%s: %s",
                                 ks_intern_str(v->meta.namespace_id), v->meta.name, strerror(-rc));
    }
    /* prepareCandidateAsync: the calls go off the cycle (none when every victim was spared them) */
    if (nsent)
        ks_preempting_start(p->preempting, p->evictor, p->pod, c->node->name, sent, nsent);
    free(sent);

    /* lower-priority pods nominated here may no longer fit: drop their nominations */
    if (!p->nominator || ks_nominator_count(p->nominator) == 0)
        return KS_SUCCESS;
    uint32_t want = ks_nominator_pods(p->nominator, c->node->name, NULL, 0);
    const struct ks_pod **pods = want ? calloc(want, sizeof(*pods)) : NULL;
    if (!pods)
        return KS_SUCCESS; /* not critical, as upstream */
    uint32_t got = ks_nominator_pods(p->nominator, c->node->name, pods, want);
    if (got > want)
        got = want;
    for (uint32_t i = 0; i < got; i++) {
        if (pods[i]->priority < p->pod->priority)
            ks_nominator_remove(p->nominator, pods[i]);
        ks_pod_put(pods[i]);
    }
    free(pods);
    return KS_SUCCESS;
}

char *ks_preempt_no_victims_message(uint32_t npotential, uint32_t nall)
{
    uint32_t count = npotential;
    struct ks_status none = {
        .code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE, .plugin = KS_NO_PLUGIN, .nreasons = 1};
    struct ks_diagnosis d = {
        .nall = nall,
        .nfailed = npotential,
        .statuses = &none,
        .absent = {.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE, .plugin = KS_NO_PLUGIN, .nreasons = 1},
        .pre_filter_msg = KS_ID_EMPTY,
        .post_filter_msg = KS_ID_EMPTY,
        .ngroups = 1,
        .group_count = &count,
    };
    none.reasons[0] = ks_intern(KS_PREEMPT_NO_VICTIMS);
    d.absent.reasons[0] = ks_intern(KS_PREEMPT_NOT_HELPFUL);
    if (none.reasons[0] == KS_ID_NONE || d.absent.reasons[0] == KS_ID_NONE)
        return NULL;
    return ks__fit_error_message(&d);
}

char *ks_preempt_fit_message(const struct ks_preempt_dry_run *r, uint32_t nall)
{
    struct ks_diagnosis d = {
        .nall = nall,
        .nfailed = r ? r->nfailed : 0,
        .nodes = r ? r->failed : NULL,
        .statuses = r ? r->failed_status : NULL,
        .absent = {.code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE, .plugin = KS_NO_PLUGIN, .nreasons = 1},
        .pre_filter_msg = KS_ID_EMPTY,
        .post_filter_msg = KS_ID_EMPTY,
    };
    d.absent.reasons[0] = ks_intern(KS_PREEMPT_NOT_HELPFUL);
    if (d.absent.reasons[0] == KS_ID_NONE)
        return NULL;
    return ks__fit_error_message(&d);
}
