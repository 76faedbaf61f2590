/*
 * framework_run.c - the Run functions of every extension point but Permit: how the
 * statuses of a point's plugins merge into one.
 *
 * Mirrors the Run*Plugins functions of pkg/scheduler/framework/runtime/framework.go
 * (current upstream):
 *
 *   PreFilter  in order; Skip puts the plugin in cs->skip_filter; UnschedulableAndUnresolvable
 *              ends the run; Unschedulable is remembered (the last one is returned) and the
 *              other plugins still run, so preemption finds their state; any other code
 *              ends with Error "running PreFilter plugin %q: <message>". Node-name results
 *              are intersected; an empty intersection ends with UnschedulableAndUnresolvable
 *              "node(s) didn't satisfy plugin(s) [A B] simultaneously" (one plugin: "node(s)
 *              didn't satisfy plugin A"). A plugin's node-name array (sorted ids) must
 *              live until the cycle ends: allocate it in cs->arena. The intersection is
 *              allocated there too, and res->narrowed_by names the plugins that narrowed
 *              (upstream's third result, the plugins to blame when no node is left).
 *   Filter     in order, skipping cs->skip_filter; the first failure ends the run; a code
 *              that is not a rejection becomes Error "running %q filter plugin: <message>".
 *   PostFilter in order until a Success (its result wins), an UnschedulableAndUnresolvable
 *              or an error; otherwise Unschedulable with every plugin's reasons, the first
 *              rejecting plugin recorded and the last nominated node kept.
 *   PreScore   Skip puts the plugin in cs->skip_score; other failures are errors.
 *   Score      per node, every plugin not skipped; NormalizeScore per plugin over its
 *              column, the [0, 100] range check, then the weights.
 *   Reserve    first failure ends the run (rejections keep their code); Unreserve runs
 *              every Reserve plugin in reverse order.
 *   PreBind    first failure ends the run. A plugin may return Wait when the binding cycle
 *              can park (cs->bind_wait): the run stops there and ks_fw_resume_pre_bind()
 *              continues it with the waiting plugin's outcome (no upstream counterpart:
 *              upstream blocks the binding goroutine inside the plugin instead).
 *   Bind       the first plugin that does not return Skip decides; when every plugin
 *              skips (or there is none) the result is Skip, which callers treat as failure.
 *
 * Every non-Success status leaves with st->plugin set to the slot of the plugin it came
 * from (upstream sets the plugin name on most of them; ksched sets it on all, which
 * changes no message). A Success leaves st cleared.
 *
 * Metrics (framework_metrics.h), when the framework has them: each public Run function of
 * an extension point records its duration with the code it returns; each plugin call of a
 * sampled cycle its own duration with the code the plugin returned; PreFilter and PreScore
 * calls that do not Skip, and Filter calls per node, count as evaluations. Filter and
 * Score record their point around the parallel pass (find_nodes.c, prioritize.c).
 *
 * Context: see framework.h. ks_fw_run_filter() and ks_fw_score_node() run on workers in
 * parallel: they read the call lists and the cycle state only and allocate nothing unless
 * a plugin returns an error (wrapping the message interns it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework_internal.h"
#include "framework_metrics.h"
#include "framework_plan.h"
#include "ksched/base/intern.h"

/* Unschedulable, UnschedulableAndUnresolvable or Pending: upstream's Status.IsRejected(). */
static inline bool is_rejected(int code)
{
    return code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || code == KS_PENDING;
}

static inline const char *call_name(const struct ks_fw_call *c)
{
    return c->plugin->name;
}

/* A plugin's non-Success status as it leaves a Run function unwrapped. */
static int keep(struct ks_status *st, const struct ks_fw_call *c, int code)
{
    st->code = (enum ks_code)code;
    st->plugin = c->slot;
    if (st->nreasons > KS_STATUS_MAX_REASONS)
        st->nreasons = KS_STATUS_MAX_REASONS;
    return code;
}

/* ---- PreFilter ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Intersect @in into @acc (sorted id sets); the result is allocated in @cs's arena. */
static int merge_result(struct ks_cycle_state *cs, struct ks_pre_filter_result *acc,
                        const struct ks_pre_filter_result *in)
{
    if (in->all)
        return 0;
    if (acc->all) {
        acc->all = false;
        acc->n = in->n;
        acc->names = in->names;
        return 0;
    }
    uint32_t cap = acc->n < in->n ? acc->n : in->n, n = 0;
    uint32_t *out = ks_arena_calloc(&cs->arena, cap ? cap : 1, sizeof(*out));
    if (!out)
        return -ENOMEM;
    for (uint32_t i = 0, j = 0; i < acc->n && j < in->n;) {
        if (acc->names[i] < in->names[j]) {
            i++;
        } else if (acc->names[i] > in->names[j]) {
            j++;
        } else {
            out[n++] = acc->names[i];
            i++;
            j++;
        }
    }
    acc->n = n;
    acc->names = out;
    return 0;
}

/* UnschedulableAndUnresolvable naming the plugins that narrowed the nodes, sorted by name. */
static int no_node_left(const struct ks_framework *fw, uint64_t narrowed, const struct ks_fw_call *last,
                        struct ks_status *st)
{
    const char *names[KS_MAX_PROFILE_PLUGINS];
    char list[KS_FW_MSG_MAX];
    uint32_t n = 0;
    size_t off = 0;

    for (uint32_t s = 0; s < fw->nplugins; s++) {
        if (narrowed & (UINT64_C(1) << s))
            names[n++] = fw->plugins[s].plugin->name;
    }
    qsort(names, n, sizeof(names[0]), cmp_str);
    list[0] = '\0';
    for (uint32_t i = 0; i < n && off < sizeof(list); i++) {
        int w = snprintf(list + off, sizeof(list) - off, "%s%s", i ? " " : "", names[i]);
        off += w > 0 ? (size_t)w : 0;
    }
    if (n == 1)
        ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin %s", list);
    else
        ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                      "node(s) didn't satisfy plugin(s) [%s] simultaneously", list);
    /* upstream reports the narrowing plugins as the unschedulable ones; the last is recorded */
    st->plugin = last->slot;
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static int run_pre_filter(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                          struct ks_pre_filter_result *res, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_PRE_FILTER];
    struct ks_status unsched;
    uint64_t skip = 0, narrowed = 0;
    bool rejected = false;
    int rc = KS_SUCCESS;

    *res = (struct ks_pre_filter_result){.all = true};
    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        struct ks_pre_filter_result r = {.all = true};
        struct ks_status s;

        ks__status_clear(&s);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.pre_filter(c->self, cs, pod, &r, &s);
        ks__fw_plugin_end(fw, KS_FWL_PRE_FILTER, i, code, t0);
        if (code == KS_SKIP) {
            skip |= c->bit;
            continue;
        }
        ks__fw_evaluated(fw, KS_FWL_PRE_FILTER, i, 1);
        if (code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            /* no preemption can help: the other PreFilter plugins need not run */
            rc = keep(&s, c, code);
            *st = s;
            goto out;
        }
        if (code == KS_UNSCHEDULABLE) {
            /* preemption may help later in this cycle: every PreFilter must still run */
            keep(&s, c, code);
            unsched = s;
            rejected = true;
            continue;
        }
        if (code != KS_SUCCESS) {
            *st = s;
            rc = ks__status_wrap(st, KS_ERROR, c->slot, "running PreFilter plugin \"%s\": ", call_name(c));
            goto out;
        }
        if (!r.all)
            narrowed |= c->bit;
        if (merge_result(cs, res, &r) < 0) {
            rc = ks_status_set(st, KS_ERROR, "running PreFilter plugin \"%s\": out of memory", call_name(c));
            st->plugin = c->slot;
            goto out;
        }
        if (!res->all && res->n == 0) {
            rc = no_node_left(fw, narrowed, c, st);
            goto out;
        }
    }
    if (rejected) {
        *st = unsched;
        rc = unsched.code;
    } else {
        ks__status_clear(st);
    }
out:
    res->narrowed_by = narrowed;
    cs->skip_filter = skip;
    return rc;
}

int ks_fw_run_pre_filter(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         struct ks_pre_filter_result *res, struct ks_status *st)
{
    int64_t t0 = ks__fw_point_start(fw);
    return ks__fw_point_end(fw, KS_FWL_PRE_FILTER, run_pre_filter(fw, cs, pod, res, st), t0);
}

/* ---- PreFilterExtensions -------------------------------------------------------------------- */

static int run_pod_ext(const struct ks_framework *fw, enum ks_fw_list list, struct ks_cycle_state *cs,
                       const struct ks_pod *pod, const struct ks_pod *other, const struct ks_node_snap *node,
                       struct ks_status *st, const char *what)
{
    const struct ks_fw_calls *l = &fw->list[list];
    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        if (cs->skip_filter & c->bit)
            continue;
        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.pod_ext(c->self, cs, pod, other, node, st);
        ks__fw_plugin_end(fw, list, i, code, t0);
        if (code != KS_SUCCESS)
            return ks__status_wrap(st, KS_ERROR, c->slot, "running %s on PreFilter plugin \"%s\": ", what,
                                   call_name(c));
    }
    ks__status_clear(st);
    return KS_SUCCESS;
}

int ks_fw_run_add_pod(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    return run_pod_ext(fw, KS_FWL_ADD_POD, cs, pod, other, node, st, "AddPod");
}

int ks_fw_run_remove_pod(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    return run_pod_ext(fw, KS_FWL_REMOVE_POD, cs, pod, other, node, st, "RemovePod");
}

/* ---- Filter (workers) ----------------------------------------------------------------------- */

__attribute__((noinline, cold)) static int filter_failed(const struct ks_fw_call *c, int code,
                                                         struct ks_status *st)
{
    if (is_rejected(code))
        return keep(st, c, code);
    /* Filter plugins may only reject; anything else is an error */
    return ks__status_wrap(st, KS_ERROR, c->slot, "running \"%s\" filter plugin: ", call_name(c));
}

/*
 * ks__fw_run_filter_tally() with metrics: each call counted (into @t, or without one
 * straight into the counters) and, in a sampled cycle, timed (likewise).
 */
__attribute__((noinline)) static int
run_filter_recorded(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                    const struct ks_node_snap *node, struct ks_status *st, struct ks_fw_tally *t)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_FILTER];
    const bool timed = cs->record_plugin_metrics;

    st->nreasons = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        if (cs->skip_filter & c->bit)
            continue;
        int64_t t0 = timed ? ks__mono_ns() : 0;
        int code = c->op.filter(c->self, cs, pod, node, st);
        if (t) {
            t->evals[i]++;
            if (timed) {
                t->ns[i] += (uint64_t)(ks__mono_ns() - t0);
                t->calls[i][ks__code_index(code)]++;
            }
        } else {
            ks_metric_count(fw->metrics->evals[KS_FWL_FILTER][i], 1);
            ks__fw_plugin_end(fw, KS_FWL_FILTER, i, code, t0);
        }
        if (code != KS_SUCCESS)
            return filter_failed(c, code, st);
    }
    st->code = KS_SUCCESS;
    st->plugin = KS_NO_PLUGIN;
    return KS_SUCCESS;
}

int ks_fw_run_filter(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, struct ks_status *st)
{
    return ks__fw_run_filter_tally(fw, cs, pod, node, st, NULL);
}

int ks__fw_run_filter_tally(const struct ks_framework *fw, const struct ks_cycle_state *cs,
                            const struct ks_pod *pod, const struct ks_node_snap *node, struct ks_status *st,
                            struct ks_fw_tally *t)
{
    if (__builtin_expect(fw->metrics != NULL, 0))
        return run_filter_recorded(fw, cs, pod, node, st, t);
    const struct ks_fw_call *c = fw->list[KS_FWL_FILTER].v;
    const struct ks_fw_call *end = c + fw->list[KS_FWL_FILTER].n;
    const uint64_t skip = cs->skip_filter;

    st->nreasons = 0;
    for (; c < end; c++) {
        if (skip & c->bit)
            continue;
        int code = c->op.filter(c->self, cs, pod, node, st);
        if (__builtin_expect(code != KS_SUCCESS, 0))
            return filter_failed(c, code, st);
    }
    st->code = KS_SUCCESS;
    st->plugin = KS_NO_PLUGIN;
    return KS_SUCCESS;
}

static void plan(const struct ks_fw_calls *l, uint64_t skip, struct ks_fw_plan *p)
{
    p->n = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (skip & l->v[i].bit)
            continue;
        p->col[p->n] = i;
        p->v[p->n++] = l->v[i];
    }
}

void ks__fw_plan_filter(const struct ks_framework *fw, const struct ks_cycle_state *cs, struct ks_fw_plan *p)
{
    plan(&fw->list[KS_FWL_FILTER], cs->skip_filter, p);
}

int ks__fw_plan_run_filter(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                           const struct ks_pod *pod, const struct ks_node_snap *node, struct ks_status *st)
{
    const struct ks_fw_call *c = p->v, *end = p->v + p->n;

    st->nreasons = 0;
    for (; c < end; c++) {
        int code = c->op.filter(c->self, cs, pod, node, st);
        if (__builtin_expect(code != KS_SUCCESS, 0))
            return filter_failed(c, code, st);
    }
    st->code = KS_SUCCESS;
    st->plugin = KS_NO_PLUGIN;
    return KS_SUCCESS;
}

/*
 * The first plugin of the Score pass is the one that meets the records' cache misses (on
 * a big cluster they leave L2 between a cycle's Filter and Score passes). It is called on
 * sub-blocks of PREFETCH_STEP nodes, and before each call the records of the sub-block
 * after the next are asked for: their first line (records are 64-byte aligned), which
 * holds what the default scores read (cache_types.h). Later plugins find them in L1.
 * (Filter needs none of this: the loop that gathers its block asks for every record just
 * before; find_nodes.c.)
 */
enum { PREFETCH_STEP = 4 };

static inline void prefetch_step(const struct ks_node_snap *const *nodes, uint32_t from, uint32_t n)
{
    uint32_t to = from + PREFETCH_STEP < n ? from + PREFETCH_STEP : n;
    for (uint32_t i = from; i < to; i++)
        __builtin_prefetch(nodes[i]);
}

/* A plugin without filter_nodes, called per node with the statuses it would get unbatched. */
static uint32_t filter_each(const struct ks_fw_call *c, const struct ks_cycle_state *cs,
                            const struct ks_pod *pod, const struct ks_node_snap *const *nodes, uint32_t n,
                            uint8_t *ok, struct ks_status *st)
{
    uint32_t failed = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct ks_status t;
        if (!ok[i])
            continue;
        t.nreasons = 0;
        int code = c->op.filter(c->self, cs, pod, nodes[i], &t);
        if (__builtin_expect(code != KS_SUCCESS, 0)) {
            filter_failed(c, code, &t);
            st[i] = t;
            ok[i] = 0;
            failed++;
        }
    }
    return failed;
}

/* Statuses a filter_nodes op left unstamped (plugin KS_NO_PLUGIN): stamp them as ks_fw_run_filter. */
__attribute__((noinline, cold)) static void stamp_failed(const struct ks_fw_call *c, uint32_t n,
                                                         const uint8_t *ok, struct ks_status *st)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!ok[i] && st[i].plugin == KS_NO_PLUGIN)
            filter_failed(c, st[i].code, &st[i]);
    }
}

/* The statuses of the @n nodes call @c failed (stamped with its slot), counted by code into @calls. */
static void count_failed(const struct ks_fw_call *c, uint32_t n, const uint8_t *ok,
                         const struct ks_status *st, uint32_t *calls)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!ok[i] && st[i].plugin == c->slot)
            calls[ks__code_index(st[i].code)]++;
    }
}

/*
 * A sampled cycle's plugin call @c (call @i of the list) over a block, which began at @t0:
 * its time and the codes of its @passed node calls, @failed of which failed, into @t.
 * Returns now, when the next call begins.
 */
__attribute__((noinline)) static int64_t filter_timed(struct ks_fw_tally *t, uint32_t i,
                                                      const struct ks_fw_call *c, uint32_t n,
                                                      const uint8_t *ok, const struct ks_status *st,
                                                      uint32_t passed, uint32_t failed, int64_t t0)
{
    int64_t t1 = ks__mono_ns();
    t->ns[i] += (uint64_t)(t1 - t0);
    t->calls[i][KS_SUCCESS] += passed - failed;
    if (failed)
        count_failed(c, n, ok, st, t->calls[i]);
    return t1;
}

uint32_t ks__fw_plan_filter_nodes(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                                  const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                                  uint32_t n, uint8_t *ok, struct ks_status *st)
{
    return ks__fw_plan_filter_nodes_tally(p, cs, pod, nodes, n, ok, st, NULL);
}

uint32_t ks__fw_plan_filter_nodes_tally(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                                        const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                                        uint32_t n, uint8_t *ok, struct ks_status *st, struct ks_fw_tally *t)
{
    const bool timed = t && t->timed;
    int64_t t0 = timed ? ks__mono_ns() : 0;
    uint32_t passed = n;
    for (uint32_t k = 0; k < p->n && passed; k++) {
        const struct ks_fw_call *c = &p->v[k];
        uint32_t failed;
        if (t)
            t->evals[p->col[k]] += passed;
        if (!c->plugin->filter_nodes)
            failed = filter_each(c, cs, pod, nodes, n, ok, st);
        else if ((failed = c->plugin->filter_nodes(c->self, cs, pod, nodes, n, ok, st)))
            stamp_failed(c, n, ok, st);
        if (__builtin_expect(timed, 0))
            t0 = filter_timed(t, p->col[k], c, n, ok, st, passed, failed, t0);
        passed -= failed;
    }
    return passed;
}

/* ---- PostFilter ----------------------------------------------------------------------------- */

/* The rejections of a point's plugins gathered: every reason, the first rejecting plugin. */
struct rejections {
    uint32_t reasons[KS_STATUS_MAX_REASONS];
    uint16_t n, rejector;
};

static void rejections_add(struct rejections *r, const struct ks_status *st, const struct ks_fw_call *c)
{
    for (uint16_t k = 0; k < st->nreasons && k < KS_STATUS_MAX_REASONS && r->n < KS_STATUS_MAX_REASONS; k++)
        r->reasons[r->n++] = st->reasons[k];
    if (r->rejector == KS_NO_PLUGIN)
        r->rejector = c->slot;
}

/* Unschedulable with the gathered reasons. */
static int rejections_status(const struct rejections *r, struct ks_status *st)
{
    st->code = KS_UNSCHEDULABLE;
    st->plugin = r->rejector;
    st->nreasons = r->n;
    memcpy(st->reasons, r->reasons, r->n * sizeof(r->reasons[0]));
    return KS_UNSCHEDULABLE;
}

static int run_post_filter(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                           struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_POST_FILTER];
    struct ks_post_filter_result result = {.nominated_node = KS_ID_EMPTY};
    struct rejections rej = {.rejector = KS_NO_PLUGIN};

    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        struct ks_post_filter_result r = {.nominated_node = KS_ID_EMPTY};

        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.post_filter(c->self, cs, pod, diag, &r, st);
        ks__fw_plugin_end(fw, KS_FWL_POST_FILTER, i, code, t0);
        if (code == KS_SUCCESS) {
            *res = r;
            ks__status_clear(st);
            return KS_SUCCESS;
        }
        if (code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            *res = r;
            return keep(st, c, code);
        }
        if (!is_rejected(code)) {
            res->nominated_node = KS_ID_EMPTY;
            return ks__status_wrap(st, KS_ERROR, c->slot, "%s", "");
        }
        if (r.nominated_node != KS_ID_EMPTY)
            result = r;
        rejections_add(&rej, st, c);
    }
    *res = result;
    return rejections_status(&rej, st);
}

int ks_fw_run_post_filter(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                          struct ks_status *st)
{
    int64_t t0 = ks__fw_point_start(fw);
    return ks__fw_point_end(fw, KS_FWL_POST_FILTER, run_post_filter(fw, cs, pod, diag, res, st), t0);
}

/* ---- PodGroupPostFilter ------------------------------------------------------------------------ */

int ks_fw_run_pod_group_post_filter(struct ks_framework *fw, struct ks_pod_group_preemptor *g,
                                    struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_POD_GROUP_POST_FILTER];
    struct rejections rej = {.rejector = KS_NO_PLUGIN};

    ks__status_clear(st);
    if (l->n == 0)
        return KS_SKIP;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        ks__status_clear(st);
        int code = c->op.pg_post_filter(c->self, g, st);
        if (code == KS_SUCCESS || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE)
            return keep(st, c, code);
        if (!is_rejected(code))
            return keep(st, c, KS_ERROR);
        rejections_add(&rej, st, c);
    }
    return rejections_status(&rej, st);
}

/* ---- PreScore, Score, NormalizeScore -------------------------------------------------------- */

static int run_pre_score(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_PRE_SCORE];
    uint64_t skip = 0;
    int rc = KS_SUCCESS;

    ks__status_clear(st);
    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];

        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.pre_score(c->self, cs, pod, nodes, n, st);
        ks__fw_plugin_end(fw, KS_FWL_PRE_SCORE, i, code, t0);
        if (code == KS_SKIP) {
            skip |= c->bit;
            continue;
        }
        ks__fw_evaluated(fw, KS_FWL_PRE_SCORE, i, 1);
        if (code != KS_SUCCESS) {
            rc = ks__status_wrap(st, KS_ERROR, c->slot, "running PreScore plugin \"%s\": ", call_name(c));
            break;
        }
    }
    if (rc == KS_SUCCESS)
        ks__status_clear(st);
    cs->skip_score = skip;
    return rc;
}

int ks_fw_run_pre_score(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                        const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st)
{
    int64_t t0 = ks__fw_point_start(fw);
    return ks__fw_point_end(fw, KS_FWL_PRE_SCORE, run_pre_score(fw, cs, pod, nodes, n, st), t0);
}

__attribute__((noinline, cold)) static int score_failed(const struct ks_fw_call *c, struct ks_status *st)
{
    return ks__status_wrap(st, KS_ERROR, c->slot,
                           "running Score plugins: plugin \"%s\" failed with: ", call_name(c));
}

int ks_fw_score_node(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, int64_t *scores, struct ks_status *st)
{
    const struct ks_fw_call *c = fw->list[KS_FWL_SCORE].v;
    const uint32_t n = fw->list[KS_FWL_SCORE].n;
    const uint64_t skip = cs->skip_score;

    st->nreasons = 0;
    for (uint32_t i = 0; i < n; i++, c++) {
        int64_t v = 0;
        if (skip & c->bit) {
            scores[i] = 0;
            continue;
        }
        int code = c->op.score(c->self, cs, pod, node, &v, st);
        if (__builtin_expect(code != KS_SUCCESS, 0))
            return score_failed(c, st);
        scores[i] = v;
    }
    st->code = KS_SUCCESS;
    st->plugin = KS_NO_PLUGIN;
    return KS_SUCCESS;
}

static inline bool out_of_range(int64_t v)
{
    return (uint64_t)(v - KS_MIN_NODE_SCORE) > (uint64_t)(KS_MAX_NODE_SCORE - KS_MIN_NODE_SCORE);
}

void ks__fw_plan_score(const struct ks_framework *fw, const struct ks_cycle_state *cs, struct ks_fw_plan *p)
{
    const struct ks_fw_calls *norm = &fw->list[KS_FWL_NORMALIZE];
    plan(&fw->list[KS_FWL_SCORE], cs->skip_score, p);
    for (uint32_t k = 0; k < p->n; k++) {
        /* the NormalizeScore list runs parallel to the Score list, weights included */
        p->weight[k] = norm->v[p->col[k]].weight;
        p->normalized[k] = norm->v[p->col[k]].op.normalize != NULL;
    }
    p->nskipped = 0;
    for (uint32_t i = 0; i < norm->n; i++) {
        if (cs->skip_score & norm->v[i].bit)
            p->skipped[p->nskipped++] = i;
    }
}

/* A plugin's scores for a block into @col: its score_nodes op, or score() per node. */
static int score_column(const struct ks_fw_call *c, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                        const struct ks_node_snap *const *nodes, uint32_t n, int64_t *col)
{
    if (c->plugin->score_nodes)
        return c->plugin->score_nodes(c->self, cs, pod, nodes, n, col);
    for (uint32_t i = 0; i < n; i++) {
        struct ks_status t;
        int64_t v = 0;
        t.nreasons = 0;
        if (__builtin_expect(c->op.score(c->self, cs, pod, nodes[i], &v, &t) != KS_SUCCESS, 0))
            return KS_ERROR;
        col[i] = v;
    }
    return KS_SUCCESS;
}

/* score_column() for the pass's first plugin: sub-blocks, the records ahead asked for (above). */
static int score_column_first(const struct ks_fw_call *c, const struct ks_cycle_state *cs,
                              const struct ks_pod *pod, const struct ks_node_snap *const *nodes, uint32_t n,
                              int64_t *col)
{
    prefetch_step(nodes, 0, n);
    prefetch_step(nodes, PREFETCH_STEP, n);
    for (uint32_t b = 0; b < n; b += PREFETCH_STEP) {
        uint32_t len = n - b < PREFETCH_STEP ? n - b : PREFETCH_STEP;
        prefetch_step(nodes, b + 2 * PREFETCH_STEP, n);
        if (score_column(c, cs, pod, nodes + b, len, col + b) != KS_SUCCESS)
            return KS_ERROR;
    }
    return KS_SUCCESS;
}

int ks__fw_plan_score_nodes(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                            const struct ks_pod *pod, const struct ks_node_snap *const *nodes, uint32_t n,
                            int64_t *cols, size_t stride, int64_t *totals, bool *oor)
{
    return ks__fw_plan_score_nodes_tally(p, cs, pod, nodes, n, cols, stride, totals, oor, NULL);
}

/* One plan call's column of a block, timed into @t when the cycle is sampled. */
static inline int score_call(const struct ks_fw_plan *p, uint32_t k, const struct ks_cycle_state *cs,
                             const struct ks_pod *pod, const struct ks_node_snap *const *nodes, uint32_t n,
                             int64_t *col, struct ks_fw_tally *t)
{
    if (__builtin_expect(!t || !t->timed, 1))
        return (k ? score_column : score_column_first)(&p->v[k], cs, pod, nodes, n, col);
    int64_t t0 = ks__mono_ns();
    int rc = (k ? score_column : score_column_first)(&p->v[k], cs, pod, nodes, n, col);
    t->ns[p->col[k]] += (uint64_t)(ks__mono_ns() - t0);
    t->calls[p->col[k]][rc == KS_SUCCESS ? KS_SUCCESS : KS_ERROR] += n;
    return rc;
}

int ks__fw_plan_score_nodes_tally(const struct ks_fw_plan *p, const struct ks_cycle_state *cs,
                                  const struct ks_pod *pod, const struct ks_node_snap *const *nodes,
                                  uint32_t n, int64_t *cols, size_t stride, int64_t *totals, bool *oor,
                                  struct ks_fw_tally *t)
{
    bool bad = false, first = true;

    for (uint32_t k = 0; k < p->n; k++) {
        int64_t *col = cols + (size_t)k * stride;
        if (score_call(p, k, cs, pod, nodes, n, col, t) != KS_SUCCESS)
            return KS_ERROR;
        if (p->normalized[k])
            continue;
        const int64_t w = p->weight[k];
        for (uint32_t i = 0; i < n; i++) {
            int64_t v = col[i];
            bad |= out_of_range(v);
            v *= w;
            col[i] = v;
            totals[i] = first ? v : totals[i] + v;
        }
        first = false;
    }
    if (first)
        memset(totals, 0, n * sizeof(*totals));
    if (__builtin_expect(bad, 0))
        *oor = true;
    return KS_SUCCESS;
}

void ks__fw_plan_rows(const struct ks_fw_plan *p, uint32_t nscore, const int64_t *cols, uint32_t n,
                      int64_t *rows)
{
    memset(rows, 0, (size_t)n * nscore * sizeof(*rows));
    for (uint32_t k = 0; k < p->n; k++) {
        const int64_t *col = cols + (size_t)k * n;
        for (uint32_t i = 0; i < n; i++)
            rows[(size_t)i * nscore + p->col[k]] = col[i];
    }
}

static int grow_norm_buf(struct ks_framework *fw, uint32_t n)
{
    if (n <= fw->norm_cap)
        return 0;
    int64_t *buf = realloc(fw->norm_buf, (size_t)n * sizeof(*buf));
    if (!buf)
        return -ENOMEM;
    fw->norm_buf = buf;
    fw->norm_cap = n;
    return 0;
}

/* A failing NormalizeScore, wrapped as upstream's runNormalizeScorePlugins reports it. */
__attribute__((noinline, cold)) static int normalize_failed(const struct ks_fw_call *c, struct ks_status *st)
{
    return ks__status_wrap(st, KS_ERROR, c->slot,
                           "running Normalize on Score plugins: plugin \"%s\" failed with: ", call_name(c));
}

/*
 * normalize_column - gather column @i of the n x @ns score matrix into fw->norm_buf and run
 * @c's NormalizeScore on it; the normalised column stays in fw->norm_buf. KS_SUCCESS or
 * KS_ERROR with @st set.
 */
static int normalize_column(struct ks_framework *fw, const struct ks_fw_call *c, uint32_t i, uint32_t ns,
                            const struct ks_cycle_state *cs, const struct ks_pod *pod,
                            const struct ks_node_snap *const *nodes, uint32_t n, const int64_t *scores,
                            struct ks_status *st)
{
    if (grow_norm_buf(fw, n) < 0) {
        ks_status_set(st, KS_ERROR, "running Normalize on Score plugins: out of memory");
        return KS_ERROR;
    }
    int64_t *col = fw->norm_buf;
    for (uint32_t j = 0; j < n; j++)
        col[j] = scores[(size_t)j * ns + i];
    ks__status_clear(st);
    int64_t t0 = ks__fw_plugin_start(fw, cs);
    int code = c->op.normalize(c->self, cs, pod, nodes, col, n, st);
    ks__fw_plugin_end(fw, KS_FWL_NORMALIZE, i, code, t0);
    if (code != KS_SUCCESS)
        return normalize_failed(c, st);
    return KS_SUCCESS;
}

/* Score @v of plugin @c is outside [0, KS_MAX_NODE_SCORE] after NormalizeScore. */
static int range_error(const struct ks_fw_call *c, int64_t v, struct ks_status *st)
{
    ks_status_set(st, KS_ERROR,
                  "applying score defaultWeights on Score plugins: plugin \"%s\" returns an invalid "
                  "score %lld, it should in the range of [%d, %d] after normalizing",
                  call_name(c), (long long)v, KS_MIN_NODE_SCORE, KS_MAX_NODE_SCORE);
    st->plugin = c->slot;
    return KS_ERROR;
}

int ks_fw_normalize_scores(struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_node_snap *const *nodes, uint32_t n, int64_t *scores,
                           int64_t *totals, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_NORMALIZE];
    const uint32_t ns = l->n;
    const uint64_t skip = cs->skip_score;
    uint32_t active[KS_MAX_PROFILE_PLUGINS], skipped[KS_MAX_PROFILE_PLUGINS], nactive = 0, nskipped = 0;

    ks__status_clear(st);
    for (uint32_t i = 0; i < ns; i++) {
        const struct ks_fw_call *c = &l->v[i];
        if (skip & c->bit) {
            skipped[nskipped++] = i;
            continue;
        }
        active[nactive++] = i;
        if (!c->op.normalize || n == 0)
            continue;
        if (normalize_column(fw, c, i, ns, cs, pod, nodes, n, scores, st) != KS_SUCCESS)
            return KS_ERROR;
        const int64_t *col = fw->norm_buf;
        for (uint32_t j = 0; j < n; j++)
            scores[(size_t)j * ns + i] = col[j];
    }
    /*
     * One pass over the rows, visiting only the plugins that ran (the skipped ones' cells
     * are cleared): range check (one unsigned comparison), weight, total.
     */
    int64_t weight[KS_MAX_PROFILE_PLUGINS];
    for (uint32_t k = 0; k < nactive; k++)
        weight[k] = l->v[active[k]].weight;
    for (uint32_t j = 0; j < n; j++) {
        int64_t *row = &scores[(size_t)j * ns];
        int64_t total = 0;
        for (uint32_t k = 0; k < nactive; k++) {
            int64_t v = row[active[k]];
            if (__builtin_expect(
                    (uint64_t)(v - KS_MIN_NODE_SCORE) > (uint64_t)(KS_MAX_NODE_SCORE - KS_MIN_NODE_SCORE), 0))
                return range_error(&l->v[active[k]], v, st);
            v *= weight[k];
            row[active[k]] = v;
            total += v;
        }
        for (uint32_t k = 0; k < nskipped; k++)
            row[skipped[k]] = 0;
        totals[j] = total;
    }
    ks__status_clear(st);
    return KS_SUCCESS;
}

int ks__fw_plan_normalize(struct ks_framework *fw, const struct ks_fw_plan *p,
                          const struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_node_snap *const *nodes, uint32_t n, int64_t *cols, int64_t *totals,
                          bool *redo, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_NORMALIZE];

    *redo = false;
    ks__status_clear(st);
    for (uint32_t k = 0; k < p->n && n; k++) {
        if (!p->normalized[k])
            continue;
        const struct ks_fw_call *c = &l->v[p->col[k]];
        int64_t *col = cols + (size_t)k * n;
        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.normalize(c->self, cs, pod, nodes, col, n, st);
        ks__fw_plugin_end(fw, KS_FWL_NORMALIZE, p->col[k], code, t0);
        if (code != KS_SUCCESS)
            return normalize_failed(c, st);
        bool bad = false;
        for (uint32_t j = 0; j < n; j++)
            bad |= out_of_range(col[j]);
        if (__builtin_expect(bad, 0)) {
            *redo = true;
            ks__status_clear(st);
            return KS_SUCCESS;
        }
        const int64_t w = p->weight[k];
        for (uint32_t j = 0; j < n; j++) {
            int64_t v = col[j] * w;
            col[j] = v;
            totals[j] += v;
        }
    }
    ks__status_clear(st);
    return KS_SUCCESS;
}

/* ---- Reserve, Unreserve --------------------------------------------------------------------- */

/* Reserve: the first failure ends the run; rejections keep their code. */
static int run_node_ops(const struct ks_framework *fw, enum ks_fw_list list, struct ks_cycle_state *cs,
                        const struct ks_pod *pod, uint32_t node, struct ks_status *st, const char *point)
{
    const struct ks_fw_calls *l = &fw->list[list];
    int64_t t0 = ks__fw_point_start(fw);
    int rc = KS_SUCCESS;

    for (uint32_t i = 0; i < l->n && rc == KS_SUCCESS; i++) {
        const struct ks_fw_call *c = &l->v[i];
        ks__status_clear(st);
        int64_t pt = ks__fw_plugin_start(fw, cs);
        int code = c->op.node_op(c->self, cs, pod, node, st);
        ks__fw_plugin_end(fw, list, i, code, pt);
        if (code == KS_SUCCESS)
            continue;
        if (is_rejected(code))
            rc = keep(st, c, code);
        else
            rc = ks__status_wrap(st, KS_ERROR, c->slot, "running %s plugin \"%s\": ", point, call_name(c));
    }
    if (rc == KS_SUCCESS)
        ks__status_clear(st);
    return ks__fw_point_end(fw, list, rc, t0);
}

int ks_fw_run_reserve(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      uint32_t node, struct ks_status *st)
{
    return run_node_ops(fw, KS_FWL_RESERVE, cs, pod, node, st, "Reserve");
}

/* Unreserve and PostBind: every plugin runs; the point's status is always Success. */
static void run_void_ops(struct ks_framework *fw, enum ks_fw_list list, struct ks_cycle_state *cs,
                         const struct ks_pod *pod, uint32_t node, bool reverse)
{
    const struct ks_fw_calls *l = &fw->list[list];
    int64_t t0 = ks__fw_point_start(fw);

    for (uint32_t k = 0; k < l->n; k++) {
        uint32_t i = reverse ? l->n - 1 - k : k;
        int64_t pt = ks__fw_plugin_start(fw, cs);
        l->v[i].op.node_void(l->v[i].self, cs, pod, node);
        ks__fw_plugin_end(fw, list, i, KS_SUCCESS, pt);
    }
    ks__fw_point_end(fw, list, KS_SUCCESS, t0);
}

void ks_fw_run_unreserve(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         uint32_t node)
{
    /* in the reverse of the order Reserve ran */
    run_void_ops(fw, KS_FWL_UNRESERVE, cs, pod, node, true);
}

/* ---- PreBind, Bind, PostBind (binder threads) ----------------------------------------------- */

/* A PreBind plugin's non-Success outcome @code (reasons in @st) as the run's result. */
static int pre_bind_failed(const struct ks_fw_call *c, int code, struct ks_status *st)
{
    if (is_rejected(code))
        return keep(st, c, code);
    return ks__status_wrap(st, KS_ERROR, c->slot, "running PreBind plugin \"%s\": ", call_name(c));
}

/*
 * PreBind from plugin @from on; a Wait with somewhere to park records the plugin and stops
 * (and, in a sampled cycle, when the plugin was called: its duration runs until the wait ends).
 */
static int pre_bind_from(struct ks_framework *fw, uint32_t from, struct ks_cycle_state *cs,
                         const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_PRE_BIND];
    for (uint32_t i = from; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.node_op(c->self, cs, pod, node, st);
        if (code == KS_WAIT && cs->bind_wait) {
            cs->pre_bind_waiting = i;
            cs->pre_bind_plugin_ns = t0;
            return keep(st, c, code);
        }
        ks__fw_plugin_end(fw, KS_FWL_PRE_BIND, i, code, t0);
        if (code == KS_SUCCESS)
            continue;
        return pre_bind_failed(c, code, st);
    }
    ks__status_clear(st);
    return KS_SUCCESS;
}

/* The PreBind point ends (unless it waits): its duration runs from the first plugin's call. */
static int pre_bind_end(struct ks_framework *fw, const struct ks_cycle_state *cs, int rc)
{
    return rc == KS_WAIT ? rc : ks__fw_point_end(fw, KS_FWL_PRE_BIND, rc, cs->pre_bind_start_ns);
}

int ks_fw_run_pre_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                       uint32_t node, struct ks_status *st)
{
    cs->pre_bind_start_ns = ks__fw_point_start(fw);
    return pre_bind_end(fw, cs, pre_bind_from(fw, 0, cs, pod, node, st));
}

int ks_fw_resume_pre_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                          uint32_t node, int code, const struct ks_status *result, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_PRE_BIND];
    uint32_t at = cs->pre_bind_waiting;

    if (at >= l->n)
        return ks_status_set(st, KS_ERROR, "PreBind resumed without a waiting plugin");
    ks__fw_plugin_end(fw, KS_FWL_PRE_BIND, at, code, cs->pre_bind_plugin_ns);
    if (code == KS_SUCCESS)
        return pre_bind_end(fw, cs, pre_bind_from(fw, at + 1, cs, pod, node, st));
    ks__status_clear(st);
    if (result) {
        st->nreasons = result->nreasons > KS_STATUS_MAX_REASONS ? KS_STATUS_MAX_REASONS : result->nreasons;
        memcpy(st->reasons, result->reasons, st->nreasons * sizeof(st->reasons[0]));
    }
    return pre_bind_end(fw, cs, pre_bind_failed(&l->v[at], code == KS_WAIT ? KS_ERROR : code, st));
}

static int run_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                    uint32_t node, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_BIND];

    ks__status_clear(st);
    st->code = KS_SKIP;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.node_op(c->self, cs, pod, node, st);
        ks__fw_plugin_end(fw, KS_FWL_BIND, i, code, t0);
        if (code == KS_SKIP) {
            keep(st, c, code);
            continue;
        }
        if (code == KS_SUCCESS) {
            ks__status_clear(st);
            return KS_SUCCESS;
        }
        if (is_rejected(code))
            return keep(st, c, code);
        return ks__status_wrap(st, KS_ERROR, c->slot, "running Bind plugin \"%s\": ", call_name(c));
    }
    /* no plugin bound the pod: the last Skip (or an empty Skip) is the result */
    return KS_SKIP;
}

int ks_fw_run_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                   uint32_t node, struct ks_status *st)
{
    int64_t t0 = ks__fw_point_start(fw);
    return ks__fw_point_end(fw, KS_FWL_BIND, run_bind(fw, cs, pod, node, st), t0);
}

void ks_fw_run_post_bind(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         uint32_t node)
{
    run_void_ops(fw, KS_FWL_POST_BIND, cs, pod, node, false);
}
