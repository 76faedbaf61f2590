/*
 * framework_metrics.c - a framework's metric series and the worker tallies of the
 * parallel passes (engine/framework_metrics.h).
 *
 * Mirrors what framework/runtime/framework.go records: the extension_point label of each
 * call list is upstream's name for it (metrics.PreFilter, metrics.PreFilterExtensionAddPod,
 * metrics.ScoreExtensionNormalize, ...), the status label the name of the code
 * (Code.String()), and the evaluation counters exist from the framework's creation for
 * the PreFilter, Filter, PreScore and Score calls, as setInstrumentedPlugins makes them.
 *
 * Every series is made here, at creation, for every status a call could return, so that
 * recording never allocates; the duration families hide the series nothing was observed
 * into yet (ks_metrics_family_hide_unused), so a scrape lists the ones upstream would.
 */
#include "framework_metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's extension_point label of each call list. */
static const char *const point_names[KS_FWL_COUNT] = {
    [KS_FWL_FILTER] = "Filter",
    [KS_FWL_SCORE] = "Score",
    [KS_FWL_PRE_FILTER] = "PreFilter",
    [KS_FWL_ADD_POD] = "PreFilterExtensionAddPod",
    [KS_FWL_REMOVE_POD] = "PreFilterExtensionRemovePod",
    [KS_FWL_POST_FILTER] = "PostFilter",
    [KS_FWL_PRE_SCORE] = "PreScore",
    [KS_FWL_NORMALIZE] = "ScoreExtensionNormalize",
    [KS_FWL_RESERVE] = "Reserve",
    [KS_FWL_UNRESERVE] = "Unreserve",
    [KS_FWL_PERMIT] = "Permit",
    [KS_FWL_PRE_BIND] = "PreBind",
    [KS_FWL_BIND] = "Bind",
    [KS_FWL_POST_BIND] = "PostBind",
};

/* The lists that are an extension point of their own (the others run inside one). */
static bool has_point(enum ks_fw_list l)
{
    return l != KS_FWL_ADD_POD && l != KS_FWL_REMOVE_POD && l != KS_FWL_NORMALIZE;
}

/* The lists whose plugins upstream counts in plugin_evaluation_total. */
static bool has_evals(enum ks_fw_list l)
{
    return l == KS_FWL_PRE_FILTER || l == KS_FWL_FILTER || l == KS_FWL_PRE_SCORE || l == KS_FWL_SCORE;
}

int ks__fw_metrics_create(struct ks_framework *fw, struct ks_sched_metrics *sm)
{
    struct ks_fw_metrics *m = calloc(1, sizeof(*m));
    const char *profile = fw->prof->scheduler_name;

    if (!m)
        return -ENOMEM;
    m->algorithm = sm->algorithm;
    m->permit_wait = sm->permit_wait;
    for (int l = 0; l < KS_FWL_COUNT; l++) {
        const struct ks_fw_calls *calls = &fw->list[l];
        if (!point_names[l])
            continue; /* PodGroupPostFilter: upstream times it nowhere */
        for (int c = 0; has_point(l) && c < KS_CODE_COUNT; c++) {
            const char *labels[] = {point_names[l], ks_code_name(c), profile};
            if (!(m->point[l][c] = ks_metric_series(sm->point, labels)))
                goto err;
        }
        if (!calls->n)
            continue;
        if (!(m->plugin[l] = calloc((size_t)calls->n * KS_CODE_COUNT, sizeof(*m->plugin[l]))))
            goto err;
        if (has_evals(l) && !(m->evals[l] = calloc(calls->n, sizeof(*m->evals[l]))))
            goto err;
        for (uint32_t i = 0; i < calls->n; i++) {
            const char *plugin = calls->v[i].plugin->name;
            for (int c = 0; c < KS_CODE_COUNT; c++) {
                const char *labels[] = {plugin, point_names[l], ks_code_name(c)};
                if (!(m->plugin[l][i * KS_CODE_COUNT + c] = ks_metric_series(sm->plugin, labels)))
                    goto err;
            }
            const char *labels[] = {plugin, point_names[l], profile};
            if (m->evals[l] && !(m->evals[l][i] = ks_metric_series(sm->evals, labels)))
                goto err;
        }
    }
    fw->metrics = m;
    return 0;
err:
    ks__fw_metrics_destroy(m);
    return -ENOMEM;
}

void ks__fw_metrics_destroy(struct ks_fw_metrics *m)
{
    if (!m)
        return;
    for (int l = 0; l < KS_FWL_COUNT; l++) {
        free(m->plugin[l]);
        free(m->evals[l]);
    }
    free(m);
}

void ks__fw_tally_reset(struct ks_fw_tally *t, uint32_t n, bool timed)
{
    t->timed = timed;
    memset(t->evals, 0, n * sizeof(t->evals[0]));
    if (timed) {
        memset(t->ns, 0, n * sizeof(t->ns[0]));
        memset(t->calls, 0, n * sizeof(t->calls[0]));
    }
}

void ks__fw_tally_merge(const struct ks_framework *fw, enum ks_fw_list l, const struct ks_fw_tally *t,
                        uint32_t nt)
{
    const struct ks_fw_metrics *m = fw->metrics;
    const uint32_t n = fw->list[l].n;
    const bool timed = nt && t[0].timed;

    for (uint32_t i = 0; i < n; i++) {
        uint64_t e = 0, ns = 0, calls[KS_CODE_COUNT] = {0}, total = 0;
        for (uint32_t w = 0; w < nt; w++) {
            e += t[w].evals[i];
            if (!timed)
                continue;
            ns += t[w].ns[i];
            for (int c = 0; c < KS_CODE_COUNT; c++)
                calls[c] += t[w].calls[i][c];
        }
        if (e && m->evals[l])
            ks_metric_count_sw(m->evals[l][i], e);
        for (int c = 0; timed && c < KS_CODE_COUNT; c++)
            total += calls[c];
        if (!total)
            continue;
        double mean = ks__metrics_secs((int64_t)ns) / (double)total;
        for (int c = 0; c < KS_CODE_COUNT; c++) {
            if (calls[c])
                ks_metric_observe_n(m->plugin[l][i * KS_CODE_COUNT + c], mean, calls[c]);
        }
    }
}
