/*
 * helper_normalize.c - the default NormalizeScore shared by score plugins, and the two
 * NormalizeScore ops that are nothing but it (TaintToleration reversed, NodeAffinity).
 *
 * Mirrors pkg/scheduler/framework/plugins/helper/normalize_score.go
 * (DefaultNormalizeScore): scores are scaled against the largest one with integer
 * arithmetic, so 1000, 10, 20, 30 become 100, 1, 2, 3, and reversed become 0, 99, 98, 97.
 *
 * Context: any thread; allocation-free.
 */
#include "ksched/plugin_helpers.h"

#include "ksched/framework_types.h"

void ks_default_normalize_score(int64_t max_priority, bool reverse, int64_t *scores, uint32_t n)
{
    int64_t max = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (scores[i] > max)
            max = scores[i];
    }
    if (max == 0) {
        if (reverse) {
            for (uint32_t i = 0; i < n; i++)
                scores[i] = max_priority;
        }
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        int64_t s = max_priority * scores[i] / max;
        scores[i] = reverse ? max_priority - s : s;
    }
}

static int normalize_op(bool reverse, int64_t *scores, uint32_t n)
{
    ks_default_normalize_score(KS_MAX_NODE_SCORE, reverse, scores, n);
    return KS_SUCCESS;
}

int ks_normalize_score_default(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                               const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                               struct ks_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)nodes;
    (void)st;
    return normalize_op(false, scores, n);
}

int ks_normalize_score_reverse(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                               const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                               struct ks_status *st)
{
    (void)self;
    (void)cs;
    (void)pod;
    (void)nodes;
    (void)st;
    return normalize_op(true, scores, n);
}
