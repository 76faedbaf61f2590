/*
 * cycle_state.c - per-cycle plugin data (struct ks_cycle_state).
 *
 * Mirrors pkg/scheduler/framework/cycle_state.go: one slot per plugin of the profile
 * instead of a map keyed by strings, the skip sets of PreFilter and PreScore as bit masks
 * of plugin slots, and an arena that holds the plugins' data and is reset (keeping its
 * memory) between cycles. Clone copies each plugin's data through its state_clone op, as
 * upstream clones each StateData, for the dry runs of preemption.
 *
 * Context: a cycle state belongs to one cycle; the thread that runs that cycle's
 * PreFilter owns it (see framework_types.h).
 */
#include <errno.h>
#include <string.h>

#include "framework_internal.h"

void ks_cycle_state_init(struct ks_cycle_state *cs)
{
    memset(cs, 0, sizeof(*cs));
}

void ks_cycle_state_reset(struct ks_cycle_state *cs)
{
    memset(cs->slot, 0, sizeof(cs->slot));
    cs->skip_filter = 0;
    cs->skip_score = 0;
    cs->seed = 0;
    cs->record_plugin_metrics = false;
    cs->pre_bind_start_ns = cs->pre_bind_plugin_ns = 0;
    cs->bind_wait = NULL;
    cs->pre_bind_waiting = 0;
    cs->nlisting = 0;
    cs->listing = NULL;
    ks_arena_reset(&cs->arena);
}

void ks_cycle_state_destroy(struct ks_cycle_state *cs)
{
    if (!cs)
        return;
    ks_arena_destroy(&cs->arena);
    memset(cs->slot, 0, sizeof(cs->slot));
}

int ks_cycle_state_clone(struct ks_framework *fw, const struct ks_cycle_state *src,
                         struct ks_cycle_state *dst)
{
    ks_cycle_state_reset(dst);
    dst->skip_filter = src->skip_filter;
    dst->skip_score = src->skip_score;
    dst->seed = src->seed;
    dst->record_plugin_metrics = src->record_plugin_metrics;
    dst->nlisting = src->nlisting;
    dst->listing = src->listing;
    for (uint32_t i = 0; i < fw->nplugins; i++) {
        const struct ks_fw_plugin *p = &fw->plugins[i];
        if (!src->slot[i] || !p->plugin->state_clone) {
            dst->slot[i] = src->slot[i];
            continue;
        }
        void *copy = NULL;
        int rc = p->plugin->state_clone(p->self, src->slot[i], &dst->arena, &copy);
        if (rc < 0)
            return rc;
        dst->slot[i] = copy;
    }
    return 0;
}
