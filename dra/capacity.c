/*
 * capacity.c - consumable capacity (DRAConsumableCapacity): what a request consumes of a
 * device's capacity and whether that breaks the capacity's requestPolicy.
 *
 * A request that names no amount consumes the policy's default, or all of the capacity
 * when there is no default. A named amount is rounded up: to validRange.min, then to the
 * next multiple of validRange.step above min (in integer units, as upstream's Value()
 * arithmetic), or to the first validValues entry not below it. The policy is broken by an
 * amount above validRange.max, off the step grid, or not among validValues, unless it equals
 * the default. Quantities are compared exactly (ks_quantity_cmp).
 *
 * Upstream compares an amount with the default by Go struct equality (the same value in
 * the same representation); ksched compares values, which differs only for a default that
 * breaks its own policy (API validation rejects those). A step of zero, which upstream
 * divides by, is treated as no step.
 *
 * Pure functions; any thread; no allocation. Mirrors structured/internal/incubating/
 * consumable_capacity.go.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ksched/quantity.h"

#include "dra_internal.h"

void ks__dra_quantity_int(int64_t v, struct ks_quantity *out)
{
    static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    char buf[48];
    int k = 0;
    int64_t m = v;
    while (m != 0 && k < 6 && m % 1024 == 0) {
        m /= 1024;
        k++;
    }
    snprintf(buf, sizeof(buf), "%" PRId64 "%s", m, suffix[k]);
    if (ks_quantity_parse(buf, out) != 0) {
        struct ks_quantity zero = {0};
        *out = zero;
    }
}

static void round_up_range(const struct ks_quantity *req, const struct ks_capacity_policy *p,
                           struct ks_quantity *out)
{
    if (ks_quantity_cmp(req, &p->min) < 0) {
        *out = p->min;
        return;
    }
    if (!p->has_step) {
        *out = *req;
        return;
    }
    int64_t r = ks_quantity_value(req);
    int64_t step = ks_quantity_value(&p->step);
    int64_t min = ks_quantity_value(&p->min);
    if (step == 0) {
        *out = *req;
        return;
    }
    int64_t added = r - min;
    int64_t n = added / step;
    if (added % step != 0)
        n++;
    ks__dra_quantity_int(min + step * n, out);
}

static void round_up_valid_values(const struct ks_quantity *req, const struct ks_capacity_policy *p,
                                  struct ks_quantity *out)
{
    for (uint32_t i = 0; i < p->nvalid_values; i++) {
        if (ks_quantity_cmp(req, &p->valid_values[i]) <= 0) {
            *out = p->valid_values[i];
            return;
        }
    }
    *out = *req;
}

void ks__dra_consumed_capacity(const struct ks_quantity *req, const struct ks_device_capacity *cap,
                               struct ks_quantity *out)
{
    const struct ks_capacity_policy *p = cap->policy;
    if (!req) {
        *out = p && p->has_default ? p->def : cap->value;
        return;
    }
    if (!p) {
        *out = *req;
        return;
    }
    if (p->has_range && p->has_min)
        round_up_range(req, p, out);
    else if (p->nvalid_values > 0)
        round_up_valid_values(req, p, out);
    else
        *out = *req;
}

static bool violates_range(const struct ks_quantity *val, const struct ks_capacity_policy *p)
{
    if (p->has_max && ks_quantity_cmp(val, &p->max) > 0)
        return true;
    if (p->has_step) {
        int64_t r = ks_quantity_value(val);
        int64_t step = ks_quantity_value(&p->step);
        int64_t min = p->has_min ? ks_quantity_value(&p->min) : 0;
        if (step != 0 && (r - min) % step != 0)
            return true;
    }
    return false;
}

bool ks__dra_violates_policy(const struct ks_quantity *val, const struct ks_capacity_policy *p)
{
    if (!p)
        return false;
    if (p->has_default && ks_quantity_cmp(val, &p->def) == 0)
        return false;
    if (p->has_range)
        return violates_range(val, p);
    if (p->nvalid_values > 0) {
        for (uint32_t i = 0; i < p->nvalid_values; i++) {
            if (ks_quantity_cmp(val, &p->valid_values[i]) == 0)
                return false;
        }
        return true;
    }
    return false;
}
