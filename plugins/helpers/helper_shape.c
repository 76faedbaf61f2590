/*
 * helper_shape.c - piecewise-linear utilization-to-score functions.
 *
 * Mirrors pkg/scheduler/framework/plugins/helper/shape_score.go
 * (BuildBrokenLinearFunction), used by the RequestedToCapacityRatio strategy of
 * NodeResourcesFit and by VolumeBinding's capacity scoring. Between two points the value is
 * interpolated with integer arithmetic, truncating toward zero as Go's int64 division.
 *
 * Context: any thread; allocation-free.
 */
#include "ksched/plugin_helpers.h"

int64_t ks_broken_linear(const struct ks_fn_point *shape, uint32_t n, int64_t p)
{
    if (n == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (p > shape[i].utilization)
            continue;
        if (i == 0)
            return shape[0].score;
        const struct ks_fn_point *a = &shape[i - 1], *b = &shape[i];
        return a->score + (b->score - a->score) * (p - a->utilization) / (b->utilization - a->utilization);
    }
    return shape[n - 1].score;
}
