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
 *   (struct ks_dra_catalog). Immutable once built; any thread may read it.
 * - an allocated state: the devices, shares and capacity that allocated claims (written and
 *   in flight) hold (struct ks_dra_allocated). One writer; readers must not run while it
 *   changes (the plugin changes it between scheduling cycles only).
 * - a scratch: one allocation's working memory (struct ks_dra_scratch), one per thread,
 *   reused: the steady state allocates nothing.
 */
#ifndef KSCHED_DRA_H
#define KSCHED_DRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/dra_types.h"

/* The DRA feature gates the allocator reads; ks_dra_features_default() is v1.37's. */
struct ks_dra_features {
    bool admin_access;           /* DRAAdminAccess */
    bool prioritized_list;       /* DRAPrioritizedList (firstAvailable) */
    bool partitionable_devices;  /* DRAPartitionableDevices (shared counters, per-device nodes) */
    bool device_taints;          /* DRADeviceTaints */
    bool device_binding_conditions; /* DRADeviceBindingConditions */
    bool consumable_capacity;    /* DRAConsumableCapacity */
};

struct ks_dra_features ks_dra_features_default(void);

/* ---- catalog ------------------------------------------------------------------------------- */

struct ks_dra_catalog;

/*
 * ks_dra_catalog_build - a catalog of @nclasses DeviceClasses and @nslices ResourceSlices
 * (the objects are borrowed: they must outlive the catalog). Every CEL selector is compiled
 * here (a selector that does not compile is kept with its error, reported when a claim uses
 * it, as upstream). 0 or -ENOMEM. Slow path (an object changed); any thread.
 */
int ks_dra_catalog_build(const struct ks_device_class *const *classes, uint32_t nclasses,
                         const struct ks_resource_slice *const *slices, uint32_t nslices,
                         const struct ks_dra_features *features, struct ks_dra_catalog **out);

/* ks_dra_catalog_destroy - accepts NULL. */
void ks_dra_catalog_destroy(struct ks_dra_catalog *c);

/* ks_dra_catalog_class - the DeviceClass named @name (interned), or NULL. */
const struct ks_device_class *ks_dra_catalog_class(const struct ks_dra_catalog *c, uint32_t name);

/* ---- allocated state ------------------------------------------------------------------------ */

struct ks_dra_allocated;

int ks_dra_allocated_create(struct ks_dra_allocated **out);
void ks_dra_allocated_destroy(struct ks_dra_allocated *a);

/*
 * ks_dra_allocated_add, _remove - count @alloc's devices (and shares and consumed capacity)
 * as in use, or no longer. Devices allocated with admin access are not counted, as
 * upstream. Every add is undone by one remove of the same allocation. 0 or -ENOMEM (add).
 */
int ks_dra_allocated_add(struct ks_dra_allocated *a, const struct ks_allocation *alloc);
void ks_dra_allocated_remove(struct ks_dra_allocated *a, const struct ks_allocation *alloc);

/* ---- allocation ------------------------------------------------------------------------------- */

struct ks_dra_scratch;

int ks_dra_scratch_create(struct ks_dra_scratch **out);
void ks_dra_scratch_destroy(struct ks_dra_scratch *s);

enum ks_dra_outcome {
    KS_DRA_ALLOCATED,   /* every claim has a result */
    KS_DRA_UNSUITABLE,  /* no solution on this node (not an error) */
    KS_DRA_ERROR,       /* the claims cannot be allocated anywhere: message in @err */
};

/*
 * ks_dra_allocate - allocate the @nclaims claims (none allocated yet) together for @node,
 * as Allocator.Allocate. KS_DRA_ALLOCATED with results[i] set for claims[i] (arrays and
 * strings in @s, valid until the next call with @s); KS_DRA_UNSUITABLE; KS_DRA_ERROR with
 * upstream's error text in @err (a class that does not exist, a CEL runtime error, an
 * incomplete pool asked for all devices, ...); -ENOMEM. Reads @cat and @alloc, changes
 * nothing but @s. Any thread, one @s per thread; no lock; allocates only when @s grows.
 */
int ks_dra_allocate(const struct ks_dra_catalog *cat, const struct ks_dra_allocated *alloc,
                    const struct ks_node *node, const struct ks_resource_claim *const *claims, uint32_t nclaims,
                    struct ks_dra_scratch *s, struct ks_allocation *results, char *err, size_t errlen);

#endif
