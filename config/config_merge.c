/*
 * config_merge.c - merging a profile's plugins with the defaults, and resolving the
 * plugins each extension point runs.
 *
 * Merging mirrors mergePlugins/mergePluginSet of pkg/scheduler/apis/config/v1/
 * default_plugins.go (v1beta3 identical; v1beta2 keeps no disabled list): the file's
 * disabled names (and "*") drop defaults, a default the file enables again is replaced in
 * place by the file's entry (its last occurrence), and the file's other enabled plugins
 * follow in order.
 *
 * Resolution mirrors what NewFramework does in pkg/scheduler/framework/runtime/
 * framework.go: every explicitly listed plugin must exist, implement the point and appear
 * once (updatePluginList); MultiPoint plugins expand into every point they implement
 * unless that point disables them or "*" (expandMultiPointPlugins), with the point's own
 * listing of a MultiPoint plugin taking precedence and moving first; a profile needs
 * exactly one queue sort and at least one bind plugin; score weights come from the first
 * listing in score then multiPoint, 0 meaning 1, and their sum must not overflow
 * (getScoreWeights). ksched additionally rejects negative weights.
 */
#include "config_internal.h"

#include "ksched/registry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order NewFramework walks the points in (getExtensionPoints), which decides the first error. */
static const enum ks_ext_point framework_order[KS_EXT_RUN_COUNT] = {
    KS_EXT_PRE_FILTER, KS_EXT_FILTER, KS_EXT_POST_FILTER, KS_EXT_RESERVE,
    KS_EXT_PRE_SCORE,  KS_EXT_SCORE,  KS_EXT_PRE_BIND,    KS_EXT_BIND,
    KS_EXT_POST_BIND,  KS_EXT_PERMIT, KS_EXT_PRE_ENQUEUE, KS_EXT_QUEUE_SORT,
};

#define KS_MAX_NODE_SCORE 100

static bool set_has(const struct ks_plugin_ref *refs, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(refs[i].name, name) == 0)
            return true;
    }
    return false;
}

int ks__config_merge_set(struct ks_arena *a, const struct ks_plugin_set *def,
                         const struct ks_plugin_set *cust, bool keep_disabled, struct ks_plugin_set *out)
{
    uint32_t nd = cust->ndisabled + def->ndisabled, ne = 0;
    struct ks_plugin_ref *disabled = ks_arena_calloc(a, nd ? nd : 1, sizeof(*disabled));
    struct ks_plugin_ref *enabled = ks_arena_calloc(a, def->nenabled + cust->nenabled + 1, sizeof(*enabled));
    bool *replaced = ks_arena_calloc(a, cust->nenabled + 1, sizeof(*replaced));

    if (!disabled || !enabled || !replaced)
        return -ENOMEM;
    /* the file's disabled names, then the defaults' own (MultiPoint may carry some) */
    for (uint32_t i = 0; i < cust->ndisabled; i++)
        disabled[i] = cust->disabled[i];
    for (uint32_t i = 0; i < def->ndisabled; i++)
        disabled[cust->ndisabled + i] = def->disabled[i];
    if (!set_has(disabled, nd, "*")) {
        for (uint32_t i = 0; i < def->nenabled; i++) {
            const struct ks_plugin_ref *d = &def->enabled[i];
            if (set_has(disabled, nd, d->name))
                continue;
            /* re-enabled by the file: its (last) entry takes the default's place */
            int32_t last = -1;
            for (uint32_t k = 0; k < cust->nenabled; k++) {
                if (strcmp(cust->enabled[k].name, d->name) == 0)
                    last = (int32_t)k;
            }
            if (last >= 0)
                replaced[last] = true;
            enabled[ne++] = last >= 0 ? cust->enabled[last] : *d;
        }
    }
    for (uint32_t k = 0; k < cust->nenabled; k++) {
        if (!replaced[k])
            enabled[ne++] = cust->enabled[k];
    }
    out->enabled = enabled;
    out->nenabled = ne;
    out->disabled = disabled;
    out->ndisabled = keep_disabled ? nd : 0;
    return 0;
}

int ks__config_merge(struct ks__cfg_load *l, uint32_t pi)
{
    struct ks_config *cfg = l->cfg;
    struct ks_profile *prof = &cfg->profiles[pi];
    const struct ks__profile_src *src = &l->src[pi];
    struct ks_plugins defaults;
    int rc = ks__config_default_plugins(cfg->version, &cfg->arena, &defaults);

    if (rc)
        return rc;
    if (!src->plugins) {
        prof->plugins = defaults;
        return 0;
    }
    for (int p = 0; p < KS_EXT_COUNT; p++) {
        rc = ks__config_merge_set(&cfg->arena, &defaults.point[p], &src->custom.point[p],
                                  cfg->version != KS_CONFIG_V1BETA2, &prof->plugins.point[p]);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- resolution --------------------------------------------------------------------------------- */

/* Path and line of entry @i of point @p's merged enabled list. */
static int ref_where(const struct ks__cfg_load *l, uint32_t pi, enum ks_ext_point p, uint32_t i, char *path,
                     size_t len)
{
    const struct ks_plugin_ref *r = &l->cfg->profiles[pi].plugins.point[p].enabled[i];
    snprintf(path, len, "profiles[%u].plugins.%s.enabled[%d]", pi, ks_ext_point_name(p),
             r->index >= 0 ? r->index : (int)i);
    if (r->line)
        return r->line;
    return ks__cfg_line(l, l->src[pi].plugins ? l->src[pi].plugins : l->src[pi].node);
}

static int check_explicit(struct ks__cfg_load *l, uint32_t pi, enum ks_ext_point p)
{
    const struct ks_plugin_set *set = &l->cfg->profiles[pi].plugins.point[p];
    char path[KS_ERROR_FIELD_MAX];

    for (uint32_t i = 0; i < set->nenabled; i++) {
        const struct ks_plugin_ref *r = &set->enabled[i];
        if (!r->plugin) {
            int line = ref_where(l, pi, p, i, path, sizeof(path));
            return ks__cfg_fail(l, line, path, "%s \"%s\" does not exist", ks_ext_point_iface(p), r->name);
        }
        if (!(ks_registry_points(r->plugin) & (1u << p))) {
            int line = ref_where(l, pi, p, i, path, sizeof(path));
            return ks__cfg_fail(l, line, path, "plugin \"%s\" does not extend %s plugin", r->name,
                                ks_ext_point_iface(p));
        }
        if (set_has(set->enabled, i, r->name)) {
            int line = ref_where(l, pi, p, i, path, sizeof(path));
            return ks__cfg_fail(l, line, path, "plugin \"%s\" already registered as \"%s\"", r->name,
                                ks_ext_point_iface(p));
        }
    }
    return 0;
}

static const struct ks_plugin_ref *first_ref(const struct ks_profile *prof, const char *name)
{
    const struct ks_plugin_set *sets[] = {&prof->plugins.point[KS_EXT_SCORE],
                                          &prof->plugins.point[KS_EXT_MULTI_POINT]};
    for (int s = 0; s < 2; s++) {
        for (uint32_t i = 0; i < sets[s]->nenabled; i++) {
            if (strcmp(sets[s]->enabled[i].name, name) == 0)
                return &sets[s]->enabled[i];
        }
    }
    return NULL;
}

/* getScoreWeights over score then multiPoint: the first listing of each score plugin decides. */
static int check_weights(struct ks__cfg_load *l, uint32_t pi)
{
    const struct ks_profile *prof = &l->cfg->profiles[pi];
    const enum ks_ext_point order[] = {KS_EXT_SCORE, KS_EXT_MULTI_POINT};
    char path[KS_ERROR_FIELD_MAX];
    int64_t total = 0;

    for (int s = 0; s < 2; s++) {
        const struct ks_plugin_set *set = &prof->plugins.point[order[s]];
        for (uint32_t i = 0; i < set->nenabled; i++) {
            const struct ks_plugin_ref *r = &set->enabled[i];
            if (!r->plugin || !(ks_registry_points(r->plugin) & KS_EXT_BIT(SCORE)) ||
                first_ref(prof, r->name) != r)
                continue;
            int64_t w = r->has_weight && r->weight != 0 ? r->weight : 1;
            if (w < 0 || w * KS_MAX_NODE_SCORE > INT64_MAX - total) {
                int line = ref_where(l, pi, order[s], i, path, sizeof(path));
                size_t len = strlen(path);
                snprintf(path + len, sizeof(path) - len, ".weight");
                if (w < 0)
                    return ks__cfg_fail(l, r->weight_line ? r->weight_line : line, path,
                                        "Invalid value: %d: score plugin weights must not be negative",
                                        r->weight);
                return ks__cfg_fail(l, r->weight_line ? r->weight_line : line, path,
                                    "total score of Score plugins could overflow");
            }
            total += w * KS_MAX_NODE_SCORE;
        }
    }
    return 0;
}

/* Expand MultiPoint into point @p after its explicit list, as expandMultiPointPlugins orders them. */
static int resolve_point(struct ks__cfg_load *l, uint32_t pi, enum ks_ext_point p)
{
    struct ks_config *cfg = l->cfg;
    struct ks_profile *prof = &cfg->profiles[pi];
    const struct ks_plugin_set *set = &prof->plugins.point[p];
    const struct ks_plugin_set *mp = &prof->plugins.point[KS_EXT_MULTI_POINT];
    uint32_t cap = set->nenabled + mp->nenabled + 1, n = 0, nsel = 0;
    const struct ks_plugin_ref **order = ks_arena_calloc(&cfg->arena, cap, sizeof(*order));
    const struct ks_plugin_ref **sel = ks_arena_calloc(&cfg->arena, cap, sizeof(*sel));
    bool *override = ks_arena_calloc(&cfg->arena, cap, sizeof(*override));
    struct ks_resolved_plugin *items = ks_arena_calloc(&cfg->arena, cap, sizeof(*items));
    char path[KS_ERROR_FIELD_MAX];

    if (!order || !sel || !override || !items)
        return -ENOMEM;
    if (mp->nenabled && !set_has(set->disabled, set->ndisabled, "*")) {
        for (uint32_t k = 0; k < mp->nenabled; k++) {
            const struct ks_plugin_ref *r = &mp->enabled[k];
            if (!r->plugin) {
                int line = ref_where(l, pi, KS_EXT_MULTI_POINT, k, path, sizeof(path));
                return ks__cfg_fail(l, line, path, "%s \"%s\" does not exist", ks_ext_point_iface(p),
                                    r->name);
            }
            if (!(ks_registry_points(r->plugin) & (1u << p)) ||
                set_has(set->disabled, set->ndisabled, r->name))
                continue;
            bool explicit = false;
            for (uint32_t i = 0; i < set->nenabled; i++) {
                if (strcmp(set->enabled[i].name, r->name) == 0)
                    override[i] = explicit = true;
            }
            if (explicit)
                continue;
            for (uint32_t s = 0; s < nsel; s++) {
                if (strcmp(sel[s]->name, r->name) == 0) {
                    int line = ref_where(l, pi, KS_EXT_MULTI_POINT, k, path, sizeof(path));
                    return ks__cfg_fail(l, line, path, "plugin \"%s\" already registered as \"%s\"", r->name,
                                        ks_ext_point_iface(p));
                }
            }
            sel[nsel++] = r;
        }
    }
    /* overridden explicit entries first, then MultiPoint's, then the rest of the explicit list */
    for (uint32_t i = 0; i < set->nenabled; i++) {
        if (override[i])
            order[n++] = &set->enabled[i];
    }
    for (uint32_t s = 0; s < nsel; s++)
        order[n++] = sel[s];
    for (uint32_t i = 0; i < set->nenabled; i++) {
        if (!override[i])
            order[n++] = &set->enabled[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        items[i].plugin = order[i]->plugin;
        items[i].args = ks_profile_args(prof, order[i]->name);
        if (p == KS_EXT_SCORE) {
            const struct ks_plugin_ref *w = first_ref(prof, order[i]->name);
            items[i].weight = w && w->has_weight && w->weight != 0 ? w->weight : 1;
        }
    }
    prof->resolved[p].items = items;
    prof->resolved[p].n = n;
    return 0;
}

static int point_line(const struct ks__cfg_load *l, uint32_t pi, enum ks_ext_point p)
{
    const struct ks__profile_src *src = &l->src[pi];
    const struct ks_yaml_node *n = src->plugins ? ks_yaml_get(src->plugins, ks_ext_point_name(p)) : NULL;
    if (!n)
        n = src->plugins ? src->plugins : src->node;
    return ks__cfg_line(l, n);
}

int ks__config_resolve(struct ks__cfg_load *l, uint32_t pi)
{
    struct ks_profile *prof = &l->cfg->profiles[pi];
    char path[KS_ERROR_FIELD_MAX];
    int rc;

    for (int i = 0; i < KS_EXT_RUN_COUNT; i++) {
        if ((rc = check_explicit(l, pi, framework_order[i])))
            return rc;
    }
    for (int i = 0; i < KS_EXT_RUN_COUNT; i++) {
        if ((rc = resolve_point(l, pi, framework_order[i])))
            return rc;
    }
    if (prof->resolved[KS_EXT_QUEUE_SORT].n != 1) {
        snprintf(path, sizeof(path), "profiles[%u].plugins.queueSort", pi);
        return ks__cfg_fail(
            l, point_line(l, pi, KS_EXT_QUEUE_SORT), path,
            "only one queue sort plugin required for profile with scheduler name \"%s\", but got %u",
            prof->scheduler_name, prof->resolved[KS_EXT_QUEUE_SORT].n);
    }
    if (prof->resolved[KS_EXT_BIND].n == 0) {
        snprintf(path, sizeof(path), "profiles[%u].plugins.bind", pi);
        return ks__cfg_fail(l, point_line(l, pi, KS_EXT_BIND), path,
                            "at least one bind plugin is needed for profile with scheduler name \"%s\"",
                            prof->scheduler_name);
    }
    return check_weights(l, pi);
}
