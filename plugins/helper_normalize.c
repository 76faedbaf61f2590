/*
 * helper_normalize.c - the default NormalizeScore shared by score plugins.
 *
 * Mirrors pkg/scheduler/framework/plugins/helper/normalize_score.go
 * (DefaultNormalizeScore): scores are scaled against the largest one with integer
 * arithmetic, so 1000, 10, 20, 30 become 100, 1, 2, 3, and reversed become 0, 99, 98, 97.
 *
 * Context: any thread; allocation-free.
 */
#include "ksched/plugin_helpers.h"

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
