/*
 * allocate.c - ks_dra_allocate(): the incubating allocator's Allocate for one node over a
 * catalog, prepared claims and an allocated state, with per-call state in a scratch.
 *
 * Steps, as upstream: find the node's pools (the catalog's precomputed poolset, gathered
 * again into the scratch only when a slice with a node selector or per-device node
 * selection is relevant for the node); validate the claims in order (each request's
 * prepared error, allocationMode All's device list with its errors for pools being updated
 * or invalid, the 32-result limit, empty constraints); search depth-first for the first
 * solution (allocateOne); on success build each claim's AllocationResult (results, config,
 * node selector). Without a solution, an invalid pool among the node's pools makes the
 * answer "invalid resource pools were encountered" (upstream's ErrFailedAllocationOnNode:
 * unsuitable for this node only).
 *
 * The search (allocateOne) recurses over claims, their requests, the subrequests of a
 * firstAvailable request in order, and the devices of a request in the poolset's flat
 * order, each request trying device combinations in increasing order only (upstream's
 * startLocation). A device is tried when it is not in use (admin access: not in use by the
 * same claim), matches the class's and the request's selectors, and (consumable capacity)
 * has room for the request; allocateDevice then checks counters, taints and constraints,
 * and marks it. allocateDevice's undo is exact for what it marks, and reproduces upstream's
 * leaks where upstream has them: counters consumed before a taint, constraint or capacity
 * check fails are not given back, nor are the counters or the capacity entry of a device
 * that allows multiple allocations.
 *
 * Selector results come from each selector's memo (struct dra_selector): an entry holds
 * DRA_MEMO_TRUE, _FALSE or _ERROR for one (device, selector) once any thread evaluated it.
 * Loads and stores are relaxed atomics: the value is a pure function of immutable inputs
 * (the selector and the device's view, both complete before any thread can reach the
 * memo), so racing threads store the same byte and a reader that sees it needs nothing
 * else published with it; a reader that sees 0 evaluates again. An error is evaluated
 * again each time to get its text (errors end the call anyway).
 *
 * Counters are kept per (driver, pool). Upstream keys its counter caches by pool name
 * alone, so partitionable pools of two drivers with the same pool name share them there.
 *
 * The results of a solution are built by results.c; a verdict may be remembered or
 * answered from verdict.c (Filter asks for none).
 *
 * Context: any thread, one scratch per thread; reads the catalog, the prepared claims and
 * the allocated state (which must not change meanwhile); no lock; allocates only when the
 * scratch grows. Mirrors structured/internal/incubating/allocator_incubating.go.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"
#include "ksched/quantity.h"

#include "allocate_run.h"

int ks__dra_fail(struct run *R, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (R->errlen)
        vsnprintf(R->err, R->errlen, fmt, ap);
    va_end(ap);
    return R_ERR;
}

/* "driver/pool/device" */
static const char *dev_id_text(const struct dra_dev *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/%s", ks_intern_str(d->slice->driver), ks_intern_str(d->slice->pool),
             ks_intern_str(d->dev->name));
    return buf;
}

/* ---- the allocated state as the allocator reads it --------------------------------------------------- */

static const struct dra_alloc_entry *entry_of(struct run *R, uint32_t k)
{
    return ks__dra_allocated_entry(R->alloc, R->cat, R->ps->devs[k].gidx);
}

/* AllocatedDevices.Has: shares count as devices when consumable capacity is off. */
static bool allocated_dedicated(struct run *R, uint32_t k)
{
    uint8_t held = ks__dra_allocated_held(R->alloc, R->cat, R->ps->devs[k].gidx);
    return held & (R->f->consumable_capacity ? DRA_HELD_DEDICATED : DRA_HELD_DEDICATED | DRA_HELD_SHARED);
}

/* AggregatedCapacity has the device. */
static const struct dra_alloc_entry *allocated_capacity(struct run *R, uint32_t k)
{
    if (!R->f->consumable_capacity ||
        !(ks__dra_allocated_held(R->alloc, R->cat, R->ps->devs[k].gidx) & DRA_HELD_CAPACITY))
        return NULL;
    return entry_of(R, k);
}

/* IsDeviceAllocated */
static bool is_allocated(const struct run *R, uint32_t gidx)
{
    uint8_t held = ks__dra_allocated_held(R->alloc, R->cat, gidx);
    return held & (R->f->consumable_capacity ? DRA_HELD_DEDICATED | DRA_HELD_SHARED | DRA_HELD_CAPACITY
                                             : DRA_HELD_DEDICATED | DRA_HELD_SHARED);
}

static bool bit(const struct run *R, uint32_t k, uint32_t c)
{
    return (R->bits[(size_t)k * R->words + c / 64] >> (c % 64)) & 1;
}

static void set_bit(struct run *R, uint32_t k, uint32_t c, bool on)
{
    uint64_t *w = &R->bits[(size_t)k * R->words + c / 64];
    *w = on ? *w | (UINT64_C(1) << (c % 64)) : *w & ~(UINT64_C(1) << (c % 64));
}

static bool allocating_any(const struct run *R, uint32_t k)
{
    for (uint32_t i = 0; i < R->words; i++) {
        if (R->bits[(size_t)k * R->words + i])
            return true;
    }
    return false;
}

/* deviceInUse */
static bool in_use(struct run *R, uint32_t k)
{
    return allocated_dedicated(R, k) || allocating_any(R, k);
}

/* deviceCapacityInUse */
static bool capacity_in_use(struct run *R, uint32_t k)
{
    return allocated_capacity(R, k) || R->ds[k].cap_exists;
}

/* ---- selectors -------------------------------------------------------------------------------------- */

/* 1, 0, -EINVAL (runtime error text in R->s->msg), -ENOMEM. @sel has compiled. */
static int selector_match(struct run *R, const struct dra_selector *sel, uint32_t gidx)
{
    /* relaxed: see the file comment; a stale 0 only costs an evaluation */
    uint8_t m = atomic_load_explicit(&sel->memo[gidx], memory_order_relaxed);
    if (m == DRA_MEMO_TRUE)
        return 1;
    if (m == DRA_MEMO_FALSE)
        return 0;
    if (!R->s->cel && ks__dra_cel_scratch_create(&R->s->cel))
        return -ENOMEM;
    int rc = ks__dra_selector_eval(sel, &R->cat->devs[gidx].cel, R->s->cel, R->s->msg, sizeof(R->s->msg));
    if (rc == -ENOMEM)
        return rc;
    atomic_store_explicit(&sel->memo[gidx],
                          rc == 1   ? DRA_MEMO_TRUE
                          : rc == 0 ? DRA_MEMO_FALSE
                                    : DRA_MEMO_ERROR,
                          memory_order_relaxed);
    return rc;
}

/* The error of selector #@i of the class (@class_sel) or of the claim of @sp. */
static int selector_error(struct run *R, const struct dra_spec *sp, bool class_sel, uint32_t i,
                          const struct dra_selector *sel, uint32_t gidx)
{
    const char *who = class_sel ? "class" : "claim";
    const char *what = class_sel ? ks_intern_str(sp->cls->obj->name) : R->cl->claims[sp->claim].kobj;
    if (!sel)
        return ks__dra_fail(
            R, "%s %s: selector #%u: CEL compile error: compilation failed: selector has no CEL expression",
            who, what, i);
    if (!sel->prog)
        return ks__dra_fail(R, "%s %s: selector #%u: CEL compile error: %s", who, what, i, sel->error);
    char id[768];
    return ks__dra_fail(R, "%s %s: selector #%u on device %s: CEL runtime error: %s", who, what, i,
                        dev_id_text(&R->cat->devs[gidx], id, sizeof(id)), R->s->msg);
}

/* selectorsMatch for the class's (@class_sel) or the request's own selectors. R_DONE, R_FAIL, R_ERR, R_NOMEM.
 */
static int selectors_match(struct run *R, const struct dra_spec *sp, bool class_sel, uint32_t gidx)
{
    uint32_t n = class_sel ? sp->cls->nsel : sp->nsel;
    struct dra_selector *const *sels = class_sel ? sp->cls->sel : sp->sel;
    for (uint32_t i = 0; i < n; i++) {
        const struct dra_selector *sel = sels[i];
        if (!sel || !sel->prog)
            return selector_error(R, sp, class_sel, i, sel, gidx);
        int rc = selector_match(R, sel, gidx);
        if (rc == 1)
            continue;
        if (rc == 0)
            return R_FAIL;
        if (rc == -ENOMEM)
            return R_NOMEM;
        return selector_error(R, sp, class_sel, i, sel, gidx);
    }
    return R_DONE;
}

/* isSelectable: R_DONE, R_FAIL, R_ERR, R_NOMEM. */
static int is_selectable(struct run *R, const struct dra_spec *sp, uint32_t k)
{
    uint32_t gidx = R->ps->devs[k].gidx;
    const struct dra_dev *d = &R->cat->devs[gidx];
    if (!R->f->device_binding_conditions && d->dev->nbinding_conditions > 0)
        return R_FAIL;
    int rc = selectors_match(R, sp, true, gidx);
    if (rc != R_DONE)
        return rc;
    rc = selectors_match(R, sp, false, gidx);
    if (rc != R_DONE)
        return rc;
    if (d->slice->per_device_node_selection) {
        if (!R->ds[k].node_ok) {
            int m = ks__dra_node_matches(R->node, d->dev->node_name, d->dev->all_nodes, d->dev->node_selector,
                                         d->node_sel_bad);
            if (m < 0)
                return ks__dra_fail(R, "failed to parse node selector: invalid node selector term");
            R->ds[k].node_ok = m ? 2 : 1;
        }
        if (R->ds[k].node_ok == 1)
            return R_FAIL;
    }
    return R_DONE;
}

/* ---- consumable capacity ------------------------------------------------------------------------------ */

static const struct ks_quantity *requested(const struct dra_spec *sp, uint32_t name)
{
    if (!sp->has_capacity)
        return NULL;
    for (uint32_t i = 0; i < sp->ncapreq; i++) {
        if (sp->capreq[i].name == name)
            return &sp->capreq[i].value;
    }
    return NULL;
}

/* CmpRequestOverCapacity: 1 fits, 0 does not, -1 a requested capacity the device does not have. */
static int capacity_fits(struct run *R, const struct dra_spec *sp, uint32_t k)
{
    const struct ks_device *dev = dev_of(R, k)->dev;
    if (dev->ncapacity == 0 && (!sp->has_capacity || sp->ncapreq == 0))
        return 1;
    if (sp->has_capacity) {
        for (uint32_t i = 0; i < sp->ncapreq; i++) {
            bool found = false;
            for (uint32_t j = 0; j < dev->ncapacity && !found; j++)
                found = dev->capacity[j].name == sp->capreq[i].name;
            if (!found)
                return -1;
        }
    }
    const struct dra_alloc_entry *e = allocated_capacity(R, k);
    /* nothing requested, no policy, nothing consumed yet: each capacity consumes just itself */
    if (!e && !R->ds[k].cap_exists && !dev_of(R, k)->cap_policy && (!sp->has_capacity || sp->ncapreq == 0))
        return 1;
    for (uint32_t i = 0; i < dev->ncapacity; i++) {
        const struct ks_device_capacity *cap = &dev->capacity[i];
        struct ks_quantity sum;
        ks__dra_consumed_capacity(requested(sp, cap->name), cap, &sum);
        if (ks__dra_violates_policy(&sum, cap->policy))
            return 0;
        if (e) {
            for (uint32_t j = 0; j < e->ncap; j++) {
                if (e->cap[j].name == cap->name)
                    ks_quantity_add(&sum, &e->cap[j].value);
            }
        }
        if (R->ds[k].cap_exists)
            ks_quantity_add(&sum, &R->cap_sum[(size_t)k * R->ps->max_cap + i]);
        if (ks_quantity_cmp(&sum, &cap->value) > 0)
            return 0;
    }
    return 1;
}

/* isSelectable and, with consumable capacity, room for the request: R_DONE, R_FAIL, R_ERR, R_NOMEM. */
static int selectable_with_room(struct run *R, const struct dra_spec *sp, uint32_t k)
{
    int rc = is_selectable(R, sp, k);
    if (rc != R_DONE)
        return rc;
    return R->f->consumable_capacity && capacity_fits(R, sp, k) != 1 ? R_FAIL : R_DONE;
}

/* ---- counters --------------------------------------------------------------------------------------------
 */

static void consume(struct ks_quantity *slots, uint32_t n, const struct dra_consume *c, bool add)
{
    for (uint32_t i = 0; i < n; i++) {
        if (add)
            ks_quantity_add(&slots[c[i].slot], &c[i].q);
        else
            ks_quantity_sub(&slots[c[i].slot], &c[i].q);
    }
}

/* checkAvailableCounters: consumes the device's counters and returns true, or changes nothing. */
static bool check_counters(struct run *R, uint32_t k)
{
    const struct dra_pdev *pd = &R->ps->devs[k];
    const struct dra_pool *p = &R->ps->pools[pd->pool];
    struct ks_quantity *avail = R->avail + R->slot_off[pd->pool];
    struct ks_quantity *used = R->consumed + R->slot_off[pd->pool];
    if (!R->avail_done[pd->pool]) {
        memcpy(avail, p->slot_value, p->nslots * sizeof(*avail));
        for (uint32_t j = 0; j < p->ndev; j++) {
            const struct dra_pdev *o = &R->ps->devs[p->dev_first + j];
            if (o->ncons && is_allocated(R, o->gidx))
                consume(avail, o->ncons, o->cons, false);
        }
        for (uint32_t j = 0; j < p->nother; j++) {
            if (is_allocated(R, p->other[j].gidx))
                consume(avail, p->other[j].ncons, p->other[j].cons, false);
        }
        R->avail_done[pd->pool] = 1;
    }
    consume(used, pd->ncons, pd->cons, true);
    for (uint32_t s = 0; s < p->nslots; s++) {
        if (ks_quantity_cmp(&avail[s], &used[s]) < 0) {
            consume(used, pd->ncons, pd->cons, false);
            return false;
        }
    }
    return true;
}

/* ---- taints
 * ------------------------------------------------------------------------------------------------ */

static uint32_t norm(uint32_t id)
{
    return id == KS_ID_NONE ? KS_ID_EMPTY : id;
}

/* resourceclaim.ToleratesTaint */
static bool tolerates(const struct ks_device_toleration *t, const struct ks_device_taint *taint)
{
    if (t->has_effect && t->effect != taint->effect)
        return false;
    if (norm(t->key) != KS_ID_EMPTY && norm(t->key) != norm(taint->key))
        return false;
    return t->exists || norm(t->value) == norm(taint->value);
}

static bool taint_prevents(const struct ks_device *dev, const struct dra_spec *sp)
{
    for (uint32_t i = 0; i < dev->ntaints; i++) {
        const struct ks_device_taint *t = &dev->taints[i];
        if (t->effect != KS_DEVICE_TAINT_NO_SCHEDULE && t->effect != KS_DEVICE_TAINT_NO_EXECUTE)
            continue;
        bool ok = false;
        for (uint32_t j = 0; j < sp->spec->ntolerations && !ok; j++)
            ok = tolerates(&sp->spec->tolerations[j], t);
        if (!ok)
            return true;
    }
    return false;
}

/* ---- allocateDevice and its undo ---------------------------------------------------------------------- */

static uint32_t spec_in_claim(const struct run *R, const struct dra_spec *sp)
{
    return (uint32_t)(sp - R->cl->specs) - R->cl->claims[sp->claim].first_spec;
}

/*
 * R_DONE (a result appended), R_FAIL, R_ERR (@must only). @checked: the caller's loop has
 * just made allocateDevice's own in-use and capacity checks with the same state (allocateOne
 * makes them before it calls allocateDevice), so they are not made twice.
 */
static int allocate_device(struct run *R, const struct dra_spec *sp, uint32_t k, bool must, bool checked)
{
    const struct dra_dev *d = dev_of(R, k);
    const struct ks_device *dev = d->dev;
    uint32_t ci = sp->claim;
    const struct dra_claim *cl = &R->cl->claims[ci];
    struct claim_run *cr = &R->cr[ci];
    bool multi = R->f->consumable_capacity && dev->has_allow_multiple && dev->allow_multiple;

    if (!checked && !multi && sp->admin && bit(R, k, ci))
        return R_FAIL;
    if (!checked && !sp->admin && in_use(R, k))
        return R_FAIL;
    if (!R->f->partitionable_devices && dev->nconsumes > 0)
        return R_FAIL;
    bool skip_counters = multi && capacity_in_use(R, k);
    if (!skip_counters && dev->nconsumes > 0 && !check_counters(R, k))
        return R_FAIL;
    if (R->f->device_taints && taint_prevents(dev, sp))
        return R_FAIL;
    uint32_t sic = spec_in_claim(R, sp);
    for (uint32_t i = 0; i < cl->ncons; i++) {
        if (ks__dra_constraint_add(&cl->cons[i], &cr->cst[i], sp, sic, d))
            continue;
        if (must) {
            char id[768];
            return ks__dra_fail(
                R,
                "claim %s, request %s: cannot add device %s because a claim constraint would not be "
                "satisfied",
                cl->kobj, sp->name, dev_id_text(d, id, sizeof(id)));
        }
        for (uint32_t e = 0; e < i; e++)
            ks__dra_constraint_remove(&cl->cons[e], &cr->cst[e], sp, sic);
        return R_FAIL;
    }
    if (!multi)
        set_bit(R, k, ci, true);
    struct res *r = &cr->res[cr->nres];
    r->sp = sp;
    r->k = k;
    r->multi = false;
    r->ncons = 0;
    r->cap_off = R->cap_top;
    if (R->f->consumable_capacity) {
        if (!checked && capacity_fits(R, sp, k) != 1)
            return R_FAIL;
        if (multi) {
            struct ks_quantity *c = &R->cap_stack[R->cap_top];
            struct ks_quantity *sum = &R->cap_sum[(size_t)k * R->ps->max_cap];
            for (uint32_t i = 0; i < dev->ncapacity; i++) {
                ks__dra_consumed_capacity(requested(sp, dev->capacity[i].name), &dev->capacity[i], &c[i]);
                if (R->ds[k].cap_exists)
                    ks_quantity_add(&sum[i], &c[i]);
                else
                    sum[i] = c[i];
            }
            R->ds[k].cap_exists = 1;
            R->cap_top += dev->ncapacity;
            r->multi = true;
            r->ncons = dev->ncapacity;
        }
    }
    cr->nres++;
    return R_DONE;
}

/* The undo of the last allocate_device of claim @ci. */
static void deallocate_device(struct run *R, uint32_t ci)
{
    struct claim_run *cr = &R->cr[ci];
    const struct res *r = &cr->res[cr->nres - 1];
    const struct dra_claim *cl = &R->cl->claims[ci];
    const struct dra_pdev *pd = &R->ps->devs[r->k];
    const struct ks_device *dev = dev_of(R, r->k)->dev;
    uint32_t sic = spec_in_claim(R, r->sp);
    for (uint32_t i = 0; i < cl->ncons; i++)
        ks__dra_constraint_remove(&cl->cons[i], &cr->cst[i], r->sp, sic);
    set_bit(R, r->k, ci, false);
    if (r->multi) {
        if (r->ncons) {
            struct ks_quantity *sum = &R->cap_sum[(size_t)r->k * R->ps->max_cap];
            bool zero = true;
            for (uint32_t i = 0; i < r->ncons; i++) {
                ks_quantity_sub(&sum[i], &R->cap_stack[r->cap_off + i]);
                zero &= ks_quantity_sign(&sum[i]) == 0;
            }
            if (zero)
                R->ds[r->k].cap_exists = 0;
        }
        R->cap_top = r->cap_off;
    } else if (R->f->partitionable_devices && dev->nconsumes > 0) {
        consume(R->consumed + R->slot_off[pd->pool], pd->ncons, pd->cons, false);
    }
    cr->nres--;
}

/* ---- allocateOne
 * ------------------------------------------------------------------------------------------- */

static int allocate_one(struct run *R, uint32_t ci, uint32_t ri, uint32_t sub, int64_t di, bool in_sub,
                        uint32_t start)
{
    R->s->steps++;
    const struct ks_dra_claims *P = R->cl;
    if (ci >= P->nclaims)
        return R_DONE;
    const struct dra_claim *cl = &P->claims[ci];
    if (ri >= cl->nreq) {
        int rc = allocate_one(R, ci + 1, 0, 0, 0, false, 0);
        return rc == R_MAX ? R_FAIL : rc;
    }
    const struct dra_req *rq = &cl->reqs[ri];
    if (!in_sub && rq->has_sub) {
        bool all_exceeded = true;
        for (uint32_t s = 0; s < rq->nspec; s++) {
            int rc = allocate_one(R, ci, ri, s, di, true, 0);
            if (rc == R_MAX)
                continue;
            all_exceeded = false;
            if (rc < 0)
                return rc;
            if (rc == R_DONE) {
                R->rd[rq->first_spec].selected = s;
                return R_DONE;
            }
        }
        return all_exceeded ? R_MAX : R_FAIL;
    }
    uint32_t si = rq->first_spec + (rq->has_sub ? sub : 0);
    const struct dra_spec *sp = &P->specs[si];
    const struct rd *rd = &R->rd[si];
    if (sp->all && rd->nall == 0)
        return R_FAIL;
    if (di >= rd->ndev)
        return allocate_one(R, ci, ri + 1, 0, 0, false, 0);
    if ((int64_t)R->cr[ci].nres + rd->ndev - di > KS_DRA_ALLOCATION_RESULTS_MAX)
        return R_MAX;

    if (sp->all) {
        int rc = allocate_device(R, sp, rd->all[di], true, false);
        if (rc != R_DONE)
            return rc;
        rc = allocate_one(R, ci, ri, sub, di + 1, in_sub, 0);
        if (rc != R_DONE)
            deallocate_device(R, ci);
        return rc;
    }
    for (uint32_t k = start; k < R->ps->ndev; k++) {
        if (sp->admin && bit(R, k, ci))
            continue;
        if (!sp->admin && in_use(R, k))
            continue;
        int rc = selectable_with_room(R, sp, k);
        if (rc < 0)
            return rc;
        if (rc == R_FAIL)
            continue;
        rc = allocate_device(R, sp, k, false, true);
        if (rc < 0)
            return rc;
        if (rc == R_FAIL)
            continue;
        rc = allocate_one(R, ci, ri, sub, di + 1, in_sub, k + 1);
        if (rc == R_DONE)
            return R_DONE;
        deallocate_device(R, ci);
        if (rc < 0)
            return rc;
    }
    return R_FAIL;
}

/* ---- validation
 * --------------------------------------------------------------------------------------------- */

static int validate_spec(struct run *R, const struct dra_spec *sp, struct rd *rd)
{
    if (sp->static_error)
        return ks__dra_fail(R, "%s", sp->static_error);
    if (!sp->all) {
        rd->ndev = sp->count;
        return R_DONE;
    }
    const struct dra_poolset *ps = R->ps;
    const char *kobj = R->cl->claims[sp->claim].kobj;
    rd->all = ks__dra_bump_alloc(&R->s->mem, (ps->ndev ? ps->ndev : 1) * sizeof(*rd->all));
    if (!rd->all)
        return R_NOMEM;
    for (uint32_t p = 0; p < ps->npools; p++) {
        const struct dra_pool *pool = &ps->pools[p];
        const struct dra_pool_id *pid = &R->cat->pools[pool->id];
        if (pool->incomplete)
            return ks__dra_fail(
                R,
                "claim %s, request %s: asks for all devices, but resource pool %s/%s is currently being "
                "updated",
                kobj, sp->name, ks_intern_str(pid->driver), ks_intern_str(pid->pool));
        if (pool->invalid)
            return ks__dra_fail(
                R, "claim %s, request %s: asks for all devices, but resource pool %s/%s is currently invalid",
                kobj, sp->name, ks_intern_str(pid->driver), ks_intern_str(pid->pool));
        for (uint32_t j = 0; j < pool->ndev; j++) {
            uint32_t k = pool->dev_first + j;
            int rc = selectable_with_room(R, sp, k);
            if (rc < 0)
                return rc;
            if (rc == R_DONE)
                rd->all[rd->nall++] = k;
        }
    }
    rd->ndev = rd->nall;
    return R_DONE;
}

static int validate(struct run *R)
{
    const struct ks_dra_claims *P = R->cl;
    for (uint32_t ci = 0; ci < P->nclaims; ci++) {
        const struct dra_claim *cl = &P->claims[ci];
        int64_t min_total = 0;
        for (uint32_t ri = 0; ri < cl->nreq; ri++) {
            const struct dra_req *rq = &cl->reqs[ri];
            if (rq->pre_error)
                return ks__dra_fail(R, "%s", rq->pre_error);
            int64_t min = INT64_MAX;
            for (uint32_t j = 0; j < rq->nspec; j++) {
                uint32_t si = rq->first_spec + j;
                int rc = validate_spec(R, &P->specs[si], &R->rd[si]);
                if (rc != R_DONE)
                    return rc;
                if (R->rd[si].ndev < min)
                    min = R->rd[si].ndev;
            }
            if (rq->nspec)
                min_total += min;
        }
        if (min_total > KS_DRA_ALLOCATION_RESULTS_MAX)
            return ks__dra_fail(
                R, "claim %s: number of requested devices %" PRId64 " exceeds the claim limit of %d",
                cl->kobj, min_total, KS_DRA_ALLOCATION_RESULTS_MAX);
        if (cl->constraint_error)
            return ks__dra_fail(R, "%s", cl->constraint_error);
    }
    return R_DONE;
}

/* ---- per-call state
 * ------------------------------------------------------------------------------------------ */

/* The offset of @n bytes aligned to @align in a layout of *@size bytes. */
static size_t take(size_t *size, size_t n, size_t align)
{
    size_t at = (*size + align - 1) & ~(align - 1);
    *size = at + n;
    return at;
}

/* The call's state in two blocks from the scratch: one zeroed, one not. */
static int setup(struct run *R)
{
    const struct ks_dra_claims *P = R->cl;
    const struct dra_poolset *ps = R->ps;
    size_t ndev = ps->ndev, ncap = ps->max_cap, nres = (size_t)P->nclaims * KS_DRA_ALLOCATION_RESULTS_MAX;
    size_t ncons = 0, nkeys = 0, nslots = 0;
    R->words = P->nclaims > 64 ? (P->nclaims + 63) / 64 : 1;
    for (uint32_t ci = 0; ci < P->nclaims; ci++) {
        const struct dra_claim *cl = &P->claims[ci];
        ncons += cl->ncons;
        for (uint32_t i = 0; i < cl->ncons; i++)
            nkeys += cl->cons[i].kind == DRA_DISTINCT ? cl->nreq : 0;
    }
    for (uint32_t p = 0; p < ps->npools; p++)
        nslots += ps->pools[p].nslots;
    size_t z = 0, u = 0;
    size_t o_rd = take(&z, P->nspecs * sizeof(struct rd), 16);
    size_t o_cr = take(&z, P->nclaims * sizeof(struct claim_run), 16);
    size_t o_cst = take(&z, ncons * sizeof(struct dra_cstate), 16);
    size_t o_present = take(&z, nkeys * sizeof(bool), 16);
    size_t o_ds = take(&z, ndev * sizeof(struct devstate), 16);
    size_t o_bits = take(&z, ndev * R->words * sizeof(uint64_t), 16);
    size_t o_done = take(&z, ps->npools, 16);
    size_t o_consumed = take(&z, nslots * sizeof(struct ks_quantity), 16);
    size_t o_res = take(&u, nres * sizeof(struct res), 16);
    size_t o_vals = take(&u, nkeys * sizeof(const struct ks_device_attribute *), 16);
    size_t o_valstr = take(&u, nkeys * sizeof(uint32_t), 16);
    size_t o_slot = take(&u, ps->npools * sizeof(uint32_t), 16);
    size_t o_avail = take(&u, nslots * sizeof(struct ks_quantity), 16);
    size_t o_capsum = take(&u, ndev * ncap * sizeof(struct ks_quantity), 16);
    size_t o_stack = take(&u, nres * ncap * sizeof(struct ks_quantity), 16);
    char *zb = ks__dra_bump_alloc(&R->s->mem, z);
    char *ub = ks__dra_bump_alloc(&R->s->mem, u);
    if (!zb || !ub)
        return -ENOMEM;
    memset(zb, 0, z);
    R->rd = (struct rd *)(zb + o_rd);
    R->cr = (struct claim_run *)(zb + o_cr);
    R->ds = (struct devstate *)(zb + o_ds);
    R->bits = (uint64_t *)(zb + o_bits);
    R->avail_done = (uint8_t *)(zb + o_done);
    R->consumed = (struct ks_quantity *)(zb + o_consumed);
    R->slot_off = (uint32_t *)(ub + o_slot);
    R->avail = (struct ks_quantity *)(ub + o_avail);
    R->cap_sum = (struct ks_quantity *)(ub + o_capsum);
    R->cap_stack = (struct ks_quantity *)(ub + o_stack);
    struct dra_cstate *cst = (struct dra_cstate *)(zb + o_cst);
    bool *present = (bool *)(zb + o_present);
    const struct ks_device_attribute **vals = (const struct ks_device_attribute **)(ub + o_vals);
    uint32_t *valstr = (uint32_t *)(ub + o_valstr);
    struct res *res = (struct res *)(ub + o_res);
    for (uint32_t p = 0, at = 0; p < ps->npools; p++) {
        R->slot_off[p] = at;
        at += ps->pools[p].nslots;
    }
    for (uint32_t ci = 0; ci < P->nclaims; ci++) {
        const struct dra_claim *cl = &P->claims[ci];
        struct claim_run *cr = &R->cr[ci];
        cr->res = res + (size_t)ci * KS_DRA_ALLOCATION_RESULTS_MAX;
        cr->cst = cst;
        cst += cl->ncons;
        for (uint32_t i = 0; i < cl->ncons; i++) {
            if (cl->cons[i].kind != DRA_DISTINCT)
                continue;
            cr->cst[i].nkeys = cl->nreq;
            cr->cst[i].present = present;
            cr->cst[i].vals = vals;
            cr->cst[i].val_str = valstr;
            present += cl->nreq;
            vals += cl->nreq;
            valstr += cl->nreq;
        }
    }
    return 0;
}

/* ---- the node's pools ------------------------------------------------------------------------------------
 */

/* Relevance of a shared slice whose relevance depends on the node: 1, 0 or R_ERR. */
static int dynamic_relevant(struct run *R, uint32_t si)
{
    const struct dra_slice *s = &R->cat->slices[si];
    const struct ks_resource_slice *obj = s->obj;
    const char *name = obj->meta.name ? obj->meta.name : "";
    if (obj->node_selector) {
        int m = ks__dra_node_matches(R->node, KS_ID_NONE, false, obj->node_selector, s->sel_bad);
        if (m < 0)
            return ks__dra_fail(
                R,
                "gather pool information: failed to perform node selection for slice %s: failed to parse "
                "node selector: invalid node selector term",
                name);
        return m;
    }
    for (uint32_t d = 0; d < obj->ndevices; d++) {
        const struct ks_device *dev = &obj->devices[d];
        int m = ks__dra_node_matches(R->node, dev->node_name, dev->all_nodes, dev->node_selector,
                                     R->cat->devs[s->first_dev + d].node_sel_bad);
        if (m < 0)
            return ks__dra_fail(
                R,
                "gather pool information: failed to perform node selection for device %s in slice %s: "
                "failed to parse node selector: invalid node selector term",
                ks_intern_str(dev->name), name);
        if (m)
            return 1;
    }
    return 0;
}

static int node_pools(struct run *R)
{
    const struct ks_dra_catalog *cat = R->cat;
    const struct dra_u32v *local;
    R->ps = ks__dra_catalog_poolset(cat, R->node->name_id, &local);
    if (cat->ndynamic == 0)
        return R_DONE;
    uint32_t nlocal = local ? local->n : 0;
    uint32_t *rel = ks__dra_bump_alloc(&R->s->mem, (nlocal + cat->nshared + 1) * sizeof(*rel));
    if (!rel)
        return R_NOMEM;
    uint32_t n = 0;
    bool any = false;
    for (uint32_t i = 0; i < nlocal; i++)
        rel[n++] = local->v[i];
    for (uint32_t k = 0; k < cat->nshared; k++) {
        if (!cat->shared_dynamic[k]) {
            rel[n++] = cat->shared[k];
            continue;
        }
        int m = dynamic_relevant(R, cat->shared[k]);
        if (m < 0)
            return m;
        if (m) {
            any = true;
            rel[n++] = cat->shared[k];
        }
    }
    if (!any)
        return R_DONE;
    struct dra_poolset *ps = ks__dra_bump_alloc(&R->s->mem, sizeof(*ps));
    if (!ps || ks__dra_gather(cat, rel, n, &R->s->gather, &R->s->mem, ps))
        return R_NOMEM;
    R->ps = ps;
    return R_DONE;
}

/* No solution on the node: KS_DRA_UNSUITABLE, with upstream's message when a pool is invalid. */
static int unsuitable(struct run *R)
{
    for (uint32_t p = 0; p < R->ps->npools; p++) {
        if (R->ps->pools[p].invalid) {
            if (R->errlen)
                snprintf(R->err, R->errlen, "invalid resource pools were encountered");
            break;
        }
    }
    return KS_DRA_UNSUITABLE;
}

/* ---- what explain.c asks ------------------------------------------------------------------------------ */

void ks__dra_run_init(struct run *R, const struct ks_dra_allocated *alloc, const struct ks_node *node,
                      const struct ks_dra_claims *claims, struct ks_dra_scratch *s, char *err, size_t errlen)
{
    memset(R, 0, sizeof(*R));
    if (errlen)
        err[0] = '\0';
    ks__dra_bump_reset(&s->mem);
    s->steps = 0;
    R->cat = claims->cat;
    R->f = &claims->cat->features;
    R->cl = claims;
    R->alloc = alloc;
    R->node = node;
    R->s = s;
    R->err = err;
    R->errlen = errlen;
}

int ks__dra_run_begin(struct run *R)
{
    int rc = node_pools(R);
    if (rc != R_DONE)
        return rc;
    if (setup(R))
        return R_NOMEM;
    return validate(R);
}

int ks__dra_unfit(struct run *R, const struct dra_spec *sp, uint32_t k)
{
    const struct dra_dev *d = dev_of(R, k);
    if (!sp->admin && in_use(R, k))
        return DRA_UNFIT_IN_USE;
    if (!R->f->device_binding_conditions && d->dev->nbinding_conditions > 0)
        return DRA_UNFIT_BINDING;
    int rc = selectors_match(R, sp, true, R->ps->devs[k].gidx);
    if (rc != R_DONE)
        return rc == R_FAIL ? DRA_UNFIT_CLASS : rc;
    rc = selectors_match(R, sp, false, R->ps->devs[k].gidx);
    if (rc != R_DONE)
        return rc == R_FAIL ? DRA_UNFIT_SELECTOR : rc;
    rc = is_selectable(R, sp, k);
    if (rc != R_DONE)
        return rc == R_FAIL ? DRA_UNFIT_NODE : rc;
    if (R->f->consumable_capacity && capacity_fits(R, sp, k) != 1)
        return DRA_UNFIT_CAPACITY;
    if (!R->f->partitionable_devices && d->dev->nconsumes > 0)
        return DRA_UNFIT_PARTITIONABLE;
    if (R->f->device_taints && taint_prevents(d->dev, sp))
        return DRA_UNFIT_TAINT;
    return DRA_FIT;
}

/* ---- the entry points
 * ------------------------------------------------------------------------------------------ */

static int outcome(int rc)
{
    switch (rc) {
    case R_NOMEM:
        return -ENOMEM;
    case R_ERR:
        return KS_DRA_ERROR;
    default:
        return rc;
    }
}

int ks_dra_allocate_prepared(const struct ks_dra_allocated *alloc, const struct ks_node *node,
                             const struct ks_dra_claims *claims, struct ks_dra_scratch *s,
                             struct ks_allocation *results, char *err, size_t errlen)
{
    struct run R;
    ks__dra_run_init(&R, alloc, node, claims, s, err, errlen);
    int rc = node_pools(&R);
    if (rc != R_DONE)
        return outcome(rc);
    uint64_t key = 0;
    _Atomic uint64_t *memo = results ? NULL : ks__dra_verdict_slot(alloc, claims, R.ps, &key);
    int known = memo ? ks__dra_verdict_get(memo, key) : -1;
    if (known >= 0)
        return known == KS_DRA_UNSUITABLE ? unsuitable(&R) : known;
    if (setup(&R))
        return -ENOMEM;
    rc = validate(&R);
    if (rc != R_DONE)
        return outcome(rc);
    rc = allocate_one(&R, 0, 0, 0, 0, false, 0);
    if (rc == R_MAX)
        return outcome(ks__dra_fail(&R, "allocation max size exceeded"));
    if (rc < 0)
        return outcome(rc);
    if (rc != R_DONE) {
        if (memo)
            ks__dra_verdict_put(memo, key, KS_DRA_UNSUITABLE);
        return unsuitable(&R);
    }
    rc = results ? ks__dra_build_results(&R, results) : ks__dra_check_results(&R);
    if (rc != R_DONE)
        return outcome(rc);
    if (memo)
        ks__dra_verdict_put(memo, key, KS_DRA_ALLOCATED);
    return KS_DRA_ALLOCATED;
}

int ks_dra_allocate(const struct ks_dra_catalog *cat, const struct ks_dra_allocated *alloc,
                    const struct ks_node *node, const struct ks_resource_claim *const *claims,
                    uint32_t nclaims, struct ks_dra_scratch *s, struct ks_allocation *results, char *err,
                    size_t errlen)
{
    if (ks__dra_claims_prepare_into(cat, claims, nclaims, &s->claims))
        return -ENOMEM;
    return ks_dra_allocate_prepared(alloc, node, &s->claims, s, results, err, errlen);
}

int ks_dra_scratch_create(struct ks_dra_scratch **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

void ks_dra_scratch_destroy(struct ks_dra_scratch *s)
{
    if (!s)
        return;
    ks__dra_cel_scratch_destroy(s->cel);
    ks__dra_gather_tmp_free(&s->gather);
    ks__dra_claims_clear(&s->claims);
    free(s->claims.private_sels);
    ks__dra_bump_free(&s->claims.mem);
    ks__dra_bump_free(&s->mem);
    free(s);
}

uint64_t ks_dra_scratch_steps(const struct ks_dra_scratch *s)
{
    return s->steps;
}
