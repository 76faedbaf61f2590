/*
 * cel_cost.c - CEL cost: the runtime cost of a call (cel-go interpreter/runtimecost.go
 * costCall, with Kubernetes' library.CostEstimator.CallCost taking precedence for the
 * functions it prices) and the static worst-case estimate of a program.
 *
 * Runtime: a call costs 1 unless its overload is priced by the size of its arguments:
 * string traversals cost ceil(size * 0.1), "x in list" the list's size, string and bytes
 * comparisons and == / != the smaller size, concatenation the sum, contains the product of
 * the traversals, matches (and Kubernetes' find/findAll) ceil((1 + size) * 0.1) times
 * ceil(size(regex) * 0.25). Sizes are code points for strings, bytes for bytes, elements
 * for lists and maps, 1 otherwise (actualSize). Kubernetes' traversalCost (isSorted, sum,
 * min, max, indexOf, lastIndexOf) walks the value: a string costs len(bytes) * 0.1 truncated.
 */
#include <math.h>
#include <stdint.h>

#include "cel_internal.h"

static uint64_t ceil01(uint64_t size, double f)
{
    return (uint64_t)ceil((double)size * f);
}

static uint64_t traversal(const struct ks_cel_value *v)
{
    switch (v->kind) {
    case KS_CEL_STRING:
    case KS_CEL_BYTES:
        return (uint64_t)((double)v->v.str.len * 0.1);
    case KS_CEL_LIST:
    case KS_CEL_MAP: {
        uint64_t cost = 0;
        uint32_t n = ks__cel_agg_size(v);
        bool is_map = v->kind == KS_CEL_MAP;
        for (uint32_t i = 0; i < n; i++) {
            struct ks_cel_value k, x;
            if (v->v.host.ops->entry(v->v.host.obj, i, &k, &x, NULL))
                break;
            cost += is_map ? traversal(&k) + traversal(&x) : traversal(&x);
        }
        return cost;
    }
    default:
        return 1;
    }
}

uint64_t ks__cel_call_cost(int kind, const struct ks_cel_value *a, uint32_t n, const struct ks_cel_value *res)
{
    switch (kind) {
    case CEL_COST_ZERO:
        return 0;
    case CEL_COST_STR0:
        return n >= 1 ? ceil01(ks__cel_actual_size(&a[0]), 0.1) : 1;
    case CEL_COST_STR0_X2:
        return n >= 1 ? ceil01(ks__cel_actual_size(&a[0]), 2 * 0.1) : 1;
    case CEL_COST_IN_LIST:
        return n >= 2 ? ks__cel_actual_size(&a[1]) : 1;
    case CEL_COST_MIN_SIZE: {
        uint64_t l = ks__cel_actual_size(&a[0]), r = ks__cel_actual_size(&a[1]);
        return ceil01(l < r ? l : r, 0.1);
    }
    case CEL_COST_SUM_SIZE:
        return ceil01(ks__cel_actual_size(&a[0]) + ks__cel_actual_size(&a[1]), 0.1);
    case CEL_COST_MATCHES:
        return (uint64_t)ceil((1.0 + (double)ks__cel_actual_size(&a[0])) * 0.1) *
               ceil01(ks__cel_actual_size(&a[1]), 0.25);
    case CEL_COST_CONTAINS:
        return ceil01(ks__cel_actual_size(&a[0]), 0.1) * ceil01(ks__cel_actual_size(&a[1]), 0.1);
    case CEL_COST_TRAVERSE0:
        return n >= 1 ? traversal(&a[0]) : 0;
    case CEL_COST_SETS1:
        return 1 + (uint64_t)((double)(ks__cel_actual_size(&a[0]) * ks__cel_actual_size(&a[1])) * 1);
    case CEL_COST_SETS2:
        return 1 + (uint64_t)((double)(ks__cel_actual_size(&a[0]) * ks__cel_actual_size(&a[1])) * 2);
    case CEL_COST_RESULT_X2:
        return ceil01(ks__cel_actual_size(res), 2 * 0.1);
    default:
        return 1;
    }
}
