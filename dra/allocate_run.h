/*
 * allocate_run.h - one ks_dra_allocate_prepared() call's state (struct run), shared by the
 * search (allocate.c), the results it builds (results.c) and the account of a failure
 * (explain.c); nothing outside dra/ includes it.
 */
#ifndef KSCHED_DRA_ALLOCATE_RUN_H
#define KSCHED_DRA_ALLOCATE_RUN_H

#include "dra_internal.h"

enum { R_FAIL = 0, R_DONE = 1, R_ERR = -1, R_MAX = -2, R_NOMEM = -3 };

/* requestData: per spec */
struct rd {
    int64_t ndev;  /* numDevices */
    uint32_t nall; /* allocationMode All: its devices */
    uint32_t *all;
    uint32_t selected; /* on a request's first spec: the subrequest picked */
};

/* internalDeviceResult */
struct res {
    const struct dra_spec *sp;
    uint32_t k;       /* flat device */
    bool multi;       /* the device allows multiple allocations (shareID set) */
    uint32_t ncons;   /* consumedCapacity entries (0: nil) */
    uint32_t cap_off; /* ... at cap_stack[cap_off] */
};

struct claim_run {
    struct res *res;
    uint32_t nres;
    struct dra_cstate *cst;
};

/* Per device of the poolset, for one call. */
struct devstate {
    uint8_t cap_exists; /* allocatingCapacity has the device */
    uint8_t node_ok;    /* per-device node selection: 0 unknown, 1 no, 2 yes */
};

struct run {
    const struct ks_dra_catalog *cat;
    const struct ks_dra_features *f;
    const struct ks_dra_claims *cl;
    const struct ks_dra_allocated *alloc;
    const struct ks_node *node;
    const struct dra_poolset *ps;
    struct ks_dra_scratch *s;
    char *err;
    size_t errlen;

    struct rd *rd;
    struct claim_run *cr;
    uint32_t words; /* claim bitset words per device */
    uint64_t *bits; /* allocatingDevices: per device, the claims allocating it */
    struct devstate *ds;
    struct ks_quantity *cap_sum; /* ndev x max_cap: allocatingCapacity */
    uint8_t *avail_done;
    uint32_t *slot_off;
    struct ks_quantity *avail, *consumed;
    struct ks_quantity *cap_stack;
    uint32_t cap_top;
    struct ks_node_selector *local_sel; /* matchFields metadata.name In [node], made once per call */
};

/* ks__dra_fail - upstream's error text of the call into R->err: R_ERR. */
int ks__dra_fail(struct run *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The catalog device of the poolset's device @k. */
static inline const struct dra_dev *dev_of(const struct run *R, uint32_t k)
{
    return &R->cat->devs[R->ps->devs[k].gidx];
}

/* ks__dra_run_init - a call's state for @claims on @node (the scratch reset). */
void ks__dra_run_init(struct run *R, const struct ks_dra_allocated *alloc, const struct ks_node *node,
                      const struct ks_dra_claims *claims, struct ks_dra_scratch *s, char *err, size_t errlen);
/* ks__dra_run_begin - the node's pools, the call's arrays, the claims validated: R_DONE, R_ERR, R_NOMEM. */
int ks__dra_run_begin(struct run *R);

/* Why a device cannot serve a request, in the order allocateOne's loop finds out. */
enum dra_unfit {
    DRA_FIT,
    DRA_UNFIT_IN_USE,        /* allocated, or allocated to another claim of the pod (not for admin access) */
    DRA_UNFIT_BINDING,       /* binding conditions while DRADeviceBindingConditions is off */
    DRA_UNFIT_CLASS,         /* the class's selectors do not match */
    DRA_UNFIT_SELECTOR,      /* the request's own selectors do not match */
    DRA_UNFIT_NODE,          /* the device's own node selection leaves the node out */
    DRA_UNFIT_CAPACITY,      /* not the capacity the request asks for */
    DRA_UNFIT_PARTITIONABLE, /* consumes counters while DRAPartitionableDevices is off */
    DRA_UNFIT_TAINT,         /* a NoSchedule or NoExecute taint the request does not tolerate */
    DRA_UNFIT_COUNT
};

/* ks__dra_unfit - why device @k cannot serve @sp on its own (DRA_FIT: it can), or R_ERR / R_NOMEM. */
int ks__dra_unfit(struct run *R, const struct dra_spec *sp, uint32_t k);

/* ks__dra_build_results - the AllocationResults of the solution found: R_DONE, R_ERR, R_NOMEM (results.c). */
int ks__dra_build_results(struct run *R, struct ks_allocation *results);
/* ks__dra_check_results - what ks__dra_build_results() would answer, nothing built: R_DONE or R_ERR. */
int ks__dra_check_results(struct run *R);

#endif
