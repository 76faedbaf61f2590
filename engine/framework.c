/*
 * framework.c - building a scheduling framework from a resolved profile, tearing it
 * down, introspection and QueueSort.
 *
 * Mirrors NewFramework in pkg/scheduler/framework/runtime/framework.go. Upstream builds
 * one instance per plugin the profile needs, then one slice per extension point holding
 * the plugins that implement it. Here the configuration loader has already merged the
 * profile with the defaults and expanded MultiPoint (ks_profile_point()), so building is:
 *
 *   1. slots: every distinct plugin of the profile's resolved points, in point order
 *      then configuration order, gets the next index of the plugin table (its
 *      cycle-state slot), at most KS_MAX_PROFILE_PLUGINS;
 *   2. instances: each plugin's init op with its args from the profile; on failure the
 *      instances made so far are destroyed in reverse order;
 *   3. call lists: per extension point an array of (instance, op, slot, weight) in
 *      configuration order, leaving out plugins whose op at that point is NULL;
 *   4. with deps->metrics, the series the Run functions record into (framework_metrics.c).
 *
 * Invariant: after ks_framework_create() returns, nothing here changes until
 * ks_framework_destroy(), so any thread reads the lists without synchronisation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework_internal.h"
#include "framework_metrics.h"
#include "ksched/base/intern.h"
#include "ksched/internal/config.h"

static int slot_of(const struct ks_framework *fw, const struct ks_plugin *plugin)
{
    for (uint32_t i = 0; i < fw->nplugins; i++) {
        if (fw->plugins[i].plugin == plugin)
            return (int)i;
    }
    return -1;
}

static int collect_plugins(struct ks_framework *fw, const struct ks_profile *prof, struct ks_error *err)
{
    for (int p = 0; p < KS_EXT_RUN_COUNT; p++) {
        const struct ks_resolved_point *rp = ks_profile_point(prof, (enum ks_ext_point)p);
        for (uint32_t i = 0; i < rp->n; i++) {
            const struct ks_plugin *plugin = rp->items[i].plugin;
            if (slot_of(fw, plugin) >= 0)
                continue;
            if (fw->nplugins == KS_MAX_PROFILE_PLUGINS)
                return ks_error_set(err, NULL, 0, NULL, "profile \"%s\" has more than %d plugins",
                                    prof->scheduler_name, KS_MAX_PROFILE_PLUGINS);
            fw->plugins[fw->nplugins++].plugin = plugin;
        }
    }
    return 0;
}

static void destroy_instances(struct ks_framework *fw, uint32_t n)
{
    while (n-- > 0) {
        const struct ks_fw_plugin *p = &fw->plugins[n];
        if (p->plugin->destroy)
            p->plugin->destroy(p->self);
    }
}

static int init_instances(struct ks_framework *fw, const struct ks_profile *prof, struct ks_error *err)
{
    for (uint32_t i = 0; i < fw->nplugins; i++) {
        struct ks_fw_plugin *p = &fw->plugins[i];
        struct ks_plugin_init in = {
            .args = ks_profile_args(prof, p->plugin->name),
            .slot = (uint16_t)i,
            .framework = fw,
        };
        struct ks_error perr = {0};
        if (!p->plugin->init)
            continue;
        int rc = p->plugin->init(&in, &p->self, &perr);
        if (rc < 0) {
            destroy_instances(fw, i);
            ks_error_set(err, NULL, 0, NULL, "initializing plugin \"%s\": %s", p->plugin->name,
                         perr.set ? perr.msg : strerror(-rc));
            return rc;
        }
    }
    return 0;
}

static void push(struct ks_framework *fw, enum ks_fw_list l, uint32_t slot, union ks_fw_op op, int32_t weight)
{
    struct ks_fw_call *c = &fw->list[l].v[fw->list[l].n++];

    c->self = fw->plugins[slot].self;
    c->op = op;
    c->bit = UINT64_C(1) << slot;
    c->slot = (uint16_t)slot;
    c->weight = weight;
    c->plugin = fw->plugins[slot].plugin;
    if (l == KS_FWL_PRE_FILTER || l == KS_FWL_FILTER || l == KS_FWL_PRE_SCORE || l == KS_FWL_SCORE)
        fw->signed_slots |= c->bit;
}

/* The op of @pl at @p, filed into the lists that run it. */
static void add_calls(struct ks_framework *fw, enum ks_ext_point p, uint32_t slot, int32_t weight)
{
    const struct ks_plugin *pl = fw->plugins[slot].plugin;

    switch (p) {
    case KS_EXT_QUEUE_SORT:
        if (pl->less && !fw->queue_sort.op.less) {
            fw->queue_sort = (struct ks_fw_call){.self = fw->plugins[slot].self,
                                                 .op.less = pl->less,
                                                 .bit = UINT64_C(1) << slot,
                                                 .slot = (uint16_t)slot,
                                                 .plugin = pl};
        }
        break;
    case KS_EXT_PRE_FILTER:
        if (!pl->pre_filter)
            break;
        push(fw, KS_FWL_PRE_FILTER, slot, (union ks_fw_op){.pre_filter = pl->pre_filter}, 0);
        if (pl->add_pod)
            push(fw, KS_FWL_ADD_POD, slot, (union ks_fw_op){.pod_ext = pl->add_pod}, 0);
        if (pl->remove_pod)
            push(fw, KS_FWL_REMOVE_POD, slot, (union ks_fw_op){.pod_ext = pl->remove_pod}, 0);
        break;
    case KS_EXT_FILTER:
        if (pl->filter)
            push(fw, KS_FWL_FILTER, slot, (union ks_fw_op){.filter = pl->filter}, 0);
        break;
    case KS_EXT_POST_FILTER:
        if (pl->post_filter)
            push(fw, KS_FWL_POST_FILTER, slot, (union ks_fw_op){.post_filter = pl->post_filter}, 0);
        if (pl->pod_group_post_filter)
            push(fw, KS_FWL_POD_GROUP_POST_FILTER, slot,
                 (union ks_fw_op){.pg_post_filter = pl->pod_group_post_filter}, 0);
        break;
    case KS_EXT_PRE_SCORE:
        if (pl->pre_score)
            push(fw, KS_FWL_PRE_SCORE, slot, (union ks_fw_op){.pre_score = pl->pre_score}, 0);
        break;
    case KS_EXT_SCORE:
        if (!pl->score)
            break;
        /* a weight of zero is not permitted: the configuration's default of 1 applies */
        weight = weight > 0 ? weight : 1;
        push(fw, KS_FWL_SCORE, slot, (union ks_fw_op){.score = pl->score}, weight);
        push(fw, KS_FWL_NORMALIZE, slot, (union ks_fw_op){.normalize = pl->normalize_score}, weight);
        break;
    case KS_EXT_RESERVE:
        if (pl->reserve)
            push(fw, KS_FWL_RESERVE, slot, (union ks_fw_op){.node_op = pl->reserve}, 0);
        if (pl->unreserve)
            push(fw, KS_FWL_UNRESERVE, slot, (union ks_fw_op){.node_void = pl->unreserve}, 0);
        break;
    case KS_EXT_PERMIT:
        if (pl->permit)
            push(fw, KS_FWL_PERMIT, slot, (union ks_fw_op){.permit = pl->permit}, 0);
        break;
    case KS_EXT_PRE_BIND:
        if (pl->pre_bind)
            push(fw, KS_FWL_PRE_BIND, slot, (union ks_fw_op){.node_op = pl->pre_bind}, 0);
        break;
    case KS_EXT_BIND:
        if (pl->bind)
            push(fw, KS_FWL_BIND, slot, (union ks_fw_op){.node_op = pl->bind}, 0);
        break;
    case KS_EXT_POST_BIND:
        if (pl->post_bind)
            push(fw, KS_FWL_POST_BIND, slot, (union ks_fw_op){.node_void = pl->post_bind}, 0);
        break;
    default: /* PreEnqueue runs in the queue; MultiPoint is expanded by the loader */
        break;
    }
}

/* Which resolved point feeds each call list: a list holds at most that point's plugins. */
static const enum ks_ext_point list_feed[KS_FWL_COUNT] = {
    [KS_FWL_FILTER] = KS_EXT_FILTER,
    [KS_FWL_SCORE] = KS_EXT_SCORE,
    [KS_FWL_PRE_FILTER] = KS_EXT_PRE_FILTER,
    [KS_FWL_ADD_POD] = KS_EXT_PRE_FILTER,
    [KS_FWL_REMOVE_POD] = KS_EXT_PRE_FILTER,
    [KS_FWL_POST_FILTER] = KS_EXT_POST_FILTER,
    [KS_FWL_POD_GROUP_POST_FILTER] = KS_EXT_POST_FILTER,
    [KS_FWL_PRE_SCORE] = KS_EXT_PRE_SCORE,
    [KS_FWL_NORMALIZE] = KS_EXT_SCORE,
    [KS_FWL_RESERVE] = KS_EXT_RESERVE,
    [KS_FWL_UNRESERVE] = KS_EXT_RESERVE,
    [KS_FWL_PERMIT] = KS_EXT_PERMIT,
    [KS_FWL_PRE_BIND] = KS_EXT_PRE_BIND,
    [KS_FWL_BIND] = KS_EXT_BIND,
    [KS_FWL_POST_BIND] = KS_EXT_POST_BIND,
};

static int build_lists(struct ks_framework *fw, const struct ks_profile *prof)
{
    size_t total = 0, off = 0;

    for (int l = 0; l < KS_FWL_COUNT; l++)
        total += ks_profile_point(prof, list_feed[l])->n;
    fw->calls = calloc(total ? total : 1, sizeof(*fw->calls));
    if (!fw->calls)
        return -ENOMEM;
    for (int l = 0; l < KS_FWL_COUNT; l++) {
        fw->list[l].v = fw->calls + off;
        off += ks_profile_point(prof, list_feed[l])->n;
    }
    for (int p = 0; p < KS_EXT_RUN_COUNT; p++) {
        const struct ks_resolved_point *rp = ks_profile_point(prof, (enum ks_ext_point)p);
        for (uint32_t i = 0; i < rp->n; i++)
            add_calls(fw, (enum ks_ext_point)p, (uint32_t)slot_of(fw, rp->items[i].plugin),
                      rp->items[i].weight);
    }
    return 0;
}

int ks_framework_create(const struct ks_profile *prof, const struct ks_framework_deps *deps,
                        struct ks_framework **out, struct ks_error *err)
{
    struct ks_framework *fw = calloc(1, sizeof(*fw));
    int rc;

    *out = NULL;
    if (!fw)
        return -ENOMEM;
    fw->prof = prof;
    if (deps)
        fw->deps = *deps;
    if ((rc = ks__fw_permit_init(fw)))
        goto err_permit;
    if ((rc = collect_plugins(fw, prof, err)))
        goto err_plugins;
    if ((rc = init_instances(fw, prof, err)))
        goto err_plugins;
    if ((rc = build_lists(fw, prof)))
        goto err_lists;
    if (fw->deps.metrics && (rc = ks__fw_metrics_create(fw, fw->deps.metrics)))
        goto err_lists;
    *out = fw;
    return 0;

err_lists:
    destroy_instances(fw, fw->nplugins);
err_plugins:
    ks__fw_permit_fini(fw);
err_permit:
    free(fw->calls);
    free(fw);
    return rc;
}

void ks_framework_destroy(struct ks_framework *fw)
{
    if (!fw)
        return;
    ks__fw_permit_fini(fw);
    destroy_instances(fw, fw->nplugins);
    ks__fw_metrics_destroy(fw->metrics);
    free(fw->norm_buf);
    free(fw->calls);
    free(fw);
}

const struct ks_profile *ks_framework_profile(const struct ks_framework *fw)
{
    return fw->prof;
}

uint32_t ks_framework_nplugins(const struct ks_framework *fw)
{
    return fw->nplugins;
}

const char *ks_framework_plugin_name(const struct ks_framework *fw, uint32_t slot)
{
    return slot < fw->nplugins ? fw->plugins[slot].plugin->name : NULL;
}

bool ks_framework_explain_status(const struct ks_framework *fw, const struct ks_cycle_state *cs,
                                 const struct ks_pod *pod, const struct ks_node_snap *node,
                                 const struct ks_status *st, char *buf, size_t len)
{
    size_t at = 0;
    if (!len)
        return false;
    buf[0] = '\0';
    if (st->nreasons == 0)
        at = (size_t)snprintf(buf, len, "%s", ks_code_name(st->code));
    for (uint32_t r = 0; r < st->nreasons && at < len; r++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", r ? ", " : "", ks_intern_str(st->reasons[r]));
    if (at + 2 >= len || st->plugin >= fw->nplugins || !fw->plugins[st->plugin].plugin->explain_filter || !cs)
        return false;
    const struct ks_fw_plugin *p = &fw->plugins[st->plugin];
    if (p->plugin->explain_filter(p->self, cs, pod, node, st, buf + at + 2, len - at - 2) != 1) {
        buf[at] = '\0';
        return false;
    }
    buf[at] = ':';
    buf[at + 1] = ' ';
    return true;
}

const struct ks_framework_deps *ks_framework_deps(const struct ks_framework *fw)
{
    return &fw->deps;
}

uint32_t ks_framework_nscore(const struct ks_framework *fw)
{
    return fw->list[KS_FWL_SCORE].n;
}

uint32_t ks_framework_score_slot(const struct ks_framework *fw, uint32_t i)
{
    return fw->list[KS_FWL_SCORE].v[i].slot;
}

int32_t ks_framework_score_weight(const struct ks_framework *fw, uint32_t i)
{
    return fw->list[KS_FWL_SCORE].v[i].weight;
}

bool ks_framework_filters_with(const struct ks_framework *fw, const char *name)
{
    for (uint32_t i = 0; i < fw->list[KS_FWL_FILTER].n; i++) {
        if (strcmp(fw->list[KS_FWL_FILTER].v[i].plugin->name, name) == 0)
            return true;
    }
    return false;
}

bool ks_framework_has_filter(const struct ks_framework *fw)
{
    return fw->list[KS_FWL_FILTER].n > 0;
}

bool ks_framework_has_score(const struct ks_framework *fw)
{
    return fw->list[KS_FWL_SCORE].n > 0;
}

/*
 * Upstream panics when a profile has no QueueSort plugin; the loader guarantees one, but
 * its Less op may be missing, and then no pod goes before another (the queue keeps its
 * own order).
 */
bool ks_fw_less(const struct ks_framework *fw, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    if (!fw->queue_sort.op.less)
        return false;
    return fw->queue_sort.op.less(fw->queue_sort.self, a, b);
}
