/*
 * dra.h - Dynamic Resource Allocation's structured allocator: which devices of which
 * ResourceSlices satisfy a node's pending ResourceClaims. The module lives in dra/; the
 * DynamicResources plugin (plugins/dynamic_resources.c) calls it through this header only.
 *
 * Semantics are current upstream's (k8s.io/dynamic-resource-allocation/structured, the
 * "incubating" allocator that Kubernetes v1.37 runs with its default feature gates): pools
 * gathered per node with their generations, incomplete and invalid pools, the exhaustive
 * depth-first search over claims, requests, firstAvailable subrequests and devices in
 * pool/slice/device order, matchAttribute and distinctAttribute constraints, admin access,
 * shared counters (partitionable devices), consumable capacity, device taints and
 * tolerations, binding conditions; the same first solution, the same error texts.
 *
 * Three kinds of object:
 * - a catalog: DeviceClasses and ResourceSlices with their CEL selectors compiled once
 *   (struct ks_dra_catalog). Immutable once built, but for two caches any thread may fill
 *   without a lock: the claim selectors compiled so far (an insert-only table published
 *   with release/acquire) and each selector's memo of its result per device (pure results,
 *   relaxed atomics). Any thread may read it. Rebuild it when an object or a feature
 *   changes.
 * - an allocated state: the devices, shares and capacity that allocated claims (written and
 *   in flight) hold (struct ks_dra_allocated). One writer; readers must not run while it
 *   changes (the plugin changes it between scheduling cycles only).
 * - a scratch: one allocation's working memory (struct ks_dra_scratch), one per thread,
 *   reused: the steady state allocates nothing.
 * and, between them, a pod's claims prepared once (struct ks_dra_claims): classes resolved,
 * selectors compiled, node-independent errors formatted, so that the per-node call compares
 * no strings and compiles nothing.
 *
 * The plugin's flow: build the catalog when a DeviceClass or ResourceSlice changes; keep
 * the allocated state with ks_dra_allocated_add/_remove as claims are allocated (written
 * or assumed) and freed; in PreFilter prepare the pod's unallocated claims
 * (ks_dra_claims_prepare); in Filter call ks_dra_allocate_prepared per node from each
 * worker with the worker's scratch; in Reserve, add the chosen node's results to the
 * allocated state.
 *
 * Errors come in upstream's words: KS_DRA_ERROR's message is what Allocate returns (the
 * plugin reports it as the claims' error, for every node); KS_DRA_UNSUITABLE with a
 * non-empty message is upstream's ErrFailedAllocationOnNode ("invalid resource pools were
 * encountered"), unsuitable for this node only.
 */
#ifndef KSCHED_DRA_H
#define KSCHED_DRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/dra_types.h"

/*
 * The DRA feature gates the allocator reads. ks_dra_features_default(): all on, the set that
 * makes v1.37 pick the incubating allocator (DRADeviceBindingConditions and
 * DRAConsumableCapacity are beyond the stable allocator).
 */
struct ks_dra_features {
    bool admin_access;              /* DRAAdminAccess */
    bool prioritized_list;          /* DRAPrioritizedList (firstAvailable) */
    bool partitionable_devices;     /* DRAPartitionableDevices (shared counters, per-device nodes) */
    bool device_taints;             /* DRADeviceTaints */
    bool device_binding_conditions; /* DRADeviceBindingConditions */
    bool consumable_capacity;       /* DRAConsumableCapacity */
};

struct ks_dra_features ks_dra_features_default(void);

/* ---- catalog ------------------------------------------------------------------------------- */

struct ks_dra_catalog;

/*
 * ks_dra_catalog_build - a catalog of @nclasses DeviceClasses and @nslices ResourceSlices
 * (the objects are borrowed: they must outlive the catalog) under @features (NULL: the
 * defaults). Every class selector is compiled here, each distinct expression once (one that
 * does not compile is kept with its error, reported when a claim uses it, as upstream), and
 * the pools of every node that slices name are gathered. 0 or -ENOMEM. Slow path (an
 * object changed); any thread; allocates.
 */
int ks_dra_catalog_build(const struct ks_device_class *const *classes, uint32_t nclasses,
                         const struct ks_resource_slice *const *slices, uint32_t nslices,
                         const struct ks_dra_features *features, struct ks_dra_catalog **out);

/* ks_dra_catalog_destroy - accepts NULL. */
void ks_dra_catalog_destroy(struct ks_dra_catalog *c);

/* ks_dra_catalog_class - the DeviceClass named @name (interned), or NULL. Any thread. */
const struct ks_device_class *ks_dra_catalog_class(const struct ks_dra_catalog *c, uint32_t name);

/* ---- allocated state ------------------------------------------------------------------------ */

struct ks_dra_allocated;

/* ks_dra_allocated_create - an empty allocated state. 0 or -ENOMEM. */
int ks_dra_allocated_create(struct ks_dra_allocated **out);
/* ks_dra_allocated_destroy - accepts NULL. */
void ks_dra_allocated_destroy(struct ks_dra_allocated *a);

/*
 * ks_dra_allocated_add, _remove - count @alloc's devices (and shares and consumed capacity)
 * as in use, or no longer. Devices allocated with admin access are not counted, as
 * upstream. A result with a share id counts as a share (and its consumedCapacity, when
 * present, as capacity in use), or as a dedicated device when the catalog's
 * DRAConsumableCapacity is off. Every add is undone by one remove of the same allocation,
 * in any order. 0 or -ENOMEM (add, then nothing is counted). The allocation is only read;
 * it need not outlive the call. One writer; no ks_dra_allocate() may run meanwhile.
 */
int ks_dra_allocated_add(struct ks_dra_allocated *a, const struct ks_allocation *alloc);
void ks_dra_allocated_remove(struct ks_dra_allocated *a, const struct ks_allocation *alloc);

/*
 * ks_dra_allocated_bind - keep, besides the counts, what each device of @cat holds, kept
 * current by every add and remove, so that allocating over @cat reads one array per device
 * instead of probing the counts by device id (the answers are the same). @cat must outlive
 * the binding: bind the next catalog (or NULL: none) before destroying it. 0 or -ENOMEM
 * (then the previous binding stays). One writer, as add and remove.
 */
int ks_dra_allocated_bind(struct ks_dra_allocated *a, const struct ks_dra_catalog *cat);

/* ---- allocation ------------------------------------------------------------------------------- */

struct ks_dra_scratch;

/* ks_dra_scratch_create - an empty scratch (it grows on use). 0 or -ENOMEM. */
int ks_dra_scratch_create(struct ks_dra_scratch **out);
/* ks_dra_scratch_destroy - accepts NULL. */
void ks_dra_scratch_destroy(struct ks_dra_scratch *s);

/*
 * ks_dra_scratch_steps - how many search steps (upstream's allocateOne invocations) the
 * last call with @s took: a measure of the search's work, as upstream's Stats.
 */
uint64_t ks_dra_scratch_steps(const struct ks_dra_scratch *s);

struct ks_dra_claims;

/*
 * ks_dra_claims_prepare - the @nclaims claims (none allocated yet) prepared for
 * ks_dra_allocate_prepared() on @cat: their classes found, their selectors compiled (new
 * expressions join the catalog's table, lock-free), their node-independent errors
 * formatted. The claims and @cat must outlive the result. 0 or -ENOMEM. Any thread, once
 * per pod (PreFilter); allocates. The result is immutable: threads may share it.
 */
int ks_dra_claims_prepare(const struct ks_dra_catalog *cat, const struct ks_resource_claim *const *claims,
                          uint32_t nclaims, struct ks_dra_claims **out);
/* ks_dra_claims_destroy - accepts NULL. */
void ks_dra_claims_destroy(struct ks_dra_claims *p);

enum ks_dra_outcome {
    KS_DRA_ALLOCATED,  /* every claim has a result */
    KS_DRA_UNSUITABLE, /* no solution on this node (not an error) */
    KS_DRA_ERROR,      /* the claims cannot be allocated anywhere: message in @err */
};

/*
 * ks_dra_allocate_prepared - allocate the prepared @claims together for @node, as
 * Allocator.Allocate. KS_DRA_ALLOCATED with results[i] set for claim i (arrays and strings
 * in @s or borrowed from the objects, valid until the next call with @s; @results NULL:
 * the same answer, nothing built, and with a state bound to the claims' catalog possibly
 * the verdict an earlier call remembered for claims of the same specs, dra/verdict.c);
 * KS_DRA_UNSUITABLE (no solution on this node; @err empty, or "invalid resource pools were
 * encountered"); KS_DRA_ERROR with upstream's error text in @err (a class that does not
 * exist, a CEL compile or runtime error, an incomplete pool asked for all devices, ...);
 * -ENOMEM. @alloc may be NULL (nothing allocated); @err gets at most @errlen bytes, NUL
 * included. Reads the catalog, @claims and @alloc, changes nothing but @s (and the
 * selectors' memo). Any thread, one @s per thread; no lock; allocates only when @s grows.
 */
int ks_dra_allocate_prepared(const struct ks_dra_allocated *alloc, const struct ks_node *node,
                             const struct ks_dra_claims *claims, struct ks_dra_scratch *s,
                             struct ks_allocation *results, char *err, size_t errlen);

/*
 * ks_dra_explain - why the prepared @claims cannot be allocated on @node, in words (for
 * --explain; Filter's message stays upstream's): the first request, in the search's order,
 * with fewer usable devices on the node than it asks for, the devices counted by why they
 * cannot serve it; or that every request has enough on its own but not all together. 1 with
 * the text in @buf (at most @len bytes, NUL included); 0 when the claims can be allocated
 * there or the allocation fails with an error (its text says why). Same context as
 * ks_dra_allocate_prepared(); slow path.
 */
int ks_dra_explain(const struct ks_dra_allocated *alloc, const struct ks_node *node,
                   const struct ks_dra_claims *claims, struct ks_dra_scratch *s, char *buf, size_t len);

/*
 * ks_dra_allocate - ks_dra_claims_prepare() into @s, then ks_dra_allocate_prepared(): the
 * same answers, for callers that allocate a set of claims once (tests, tools). Preparing
 * compares strings and may compile selectors on every call: the plugin's per-node path
 * uses the prepared form. Same context as ks_dra_allocate_prepared().
 */
int ks_dra_allocate(const struct ks_dra_catalog *cat, const struct ks_dra_allocated *alloc,
                    const struct ks_node *node, const struct ks_resource_claim *const *claims,
                    uint32_t nclaims, struct ks_dra_scratch *s, struct ks_allocation *results, char *err,
                    size_t errlen);

#endif
