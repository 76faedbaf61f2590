/*
 * plugin_helpers_dra.h - the DynamicResources plugin's view of the cluster's ResourceClaims,
 * DeviceClasses and ResourceSlices: upstream's SharedDRAManager (the claim tracker with its
 * assume cache and in-flight allocations, the device class and slice listers) for ksched.
 *
 * A tracker (plugins/helpers/helper_dra_claims.c) keeps, per ResourceClaim of the cluster,
 * the claim as the scheduler must see it: the API object, or what this scheduler wrote and
 * the object has not caught up with yet (the assume cache's latest object), and the
 * allocation Reserve made while its binding cycle runs (an in-flight allocation). From those
 * it keeps the devices in use (struct ks_dra_allocated) and the allocator's catalog.
 *
 * Threads. The scheduling thread syncs the tracker (ks_dra_tracker_sync) before it reads the
 * catalog or the devices in use, and changes them itself (Reserve, deallocation); Filter
 * workers read them during the cycle without a lock. Binder threads record what they did
 * (ks_dra_tracker_written, _unreserved), which the next sync applies. Claim lookups
 * (PreEnqueue and QueueingHints on any thread, the scheduling thread) take the tracker's
 * lock (KS_LOCK_DYNAMIC_RESOURCES, inside the queue's locks), never hold it while calling
 * out, and copy what they return.
 */
#ifndef KSCHED_PLUGIN_HELPERS_DRA_H
#define KSCHED_PLUGIN_HELPERS_DRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/arena.h"
#include "ksched/dra.h"
#include "ksched/dra_types.h"
#include "ksched/loader.h"

struct ks_dra_tracker;

/*
 * ks_dra_tracker_create - a tracker of the claims, classes and slices of @objs (NULL: none)
 * under @features, synced once. @in_process: no API server, so what PreBind and Unreserve
 * record is the claims' state for good. 0, -ENOMEM. Start-up; allocates.
 */
int ks_dra_tracker_create(const struct ks_objects *objs, const struct ks_dra_features *features,
                          bool in_process, struct ks_dra_tracker **out);
void ks_dra_tracker_destroy(struct ks_dra_tracker *t);

/*
 * ks_dra_tracker_behind - whether changes of ResourceClaims were announced for the objects
 * (ks_objects_note_queued) that the tracker has not taken in yet, so that a lookup may miss
 * a claim that exists or see one that is gone. Any thread; lock-free.
 */
bool ks_dra_tracker_behind(const struct ks_dra_tracker *t);

/*
 * ks_dra_tracker_sync - apply the objects' changes (their gen moved) and what binder threads
 * recorded. 0, -ENOMEM. Scheduling thread, between Filter passes; allocates.
 */
int ks_dra_tracker_sync(struct ks_dra_tracker *t);

/* The catalog and the devices in use, as of the last sync and the scheduling thread's changes. */
const struct ks_dra_catalog *ks_dra_tracker_catalog(const struct ks_dra_tracker *t);
const struct ks_dra_allocated *ks_dra_tracker_allocated(const struct ks_dra_tracker *t);

/*
 * A claim as the scheduler sees it, copied out under the lock. @obj stays valid for the
 * scheduling cycle that looked it up (the scheduling thread replaces objects between
 * cycles); @allocation and @node_selector live as long as the tracker keeps that allocation
 * (until the scheduling thread changes it: the cycle that looked it up may read them).
 */
struct ks_dra_claim {
    const struct ks_resource_claim *obj;
    uint32_t key;                           /* interned "namespace/name" */
    const struct ks_allocation *allocation; /* status.allocation as the scheduler sees it, NULL: none */
    uint32_t nreserved;                     /* status.reservedFor entries */
    bool reserved_for_pod;                  /* one of them is the pod asked about */
    bool only_reserved_for_pod;             /* it is the only one */
    bool in_flight;                         /* an allocation of Reserve is being written */
};

/* Why a pod's claims cannot be looked up (upstream's foreachPodResourceClaim errors). */
enum ks_dra_lookup {
    KS_DRA_FOUND,
    KS_DRA_NOT_CREATED, /* pod "ns/name": ResourceClaim not created yet */
    KS_DRA_NOT_FOUND,   /* could not find ResourceClaim "ns/name" */
    KS_DRA_DELETING,    /* resourceclaim "name" is being deleted */
    KS_DRA_NOT_OWNER,   /* ResourceClaim ns/name was not created for pod ns/name (pod is not owner) */
};

/*
 * ks_dra_tracker_pod_claims - look the claims of @pod up in spec.resourceClaims order
 * (claims no claim was generated for are left out): KS_DRA_FOUND with *@n claims in @out
 * (room for pod->nclaims; NULL: only counted), or the first failure with upstream's message
 * in @msg (NULL: none). A claim named as @fresh is (namespace and name) is checked as
 * @fresh, not as the tracker has it, and sets *@uses_fresh instead of joining @out: the
 * QueueingHint of a claim event sees the claim the event delivered. Any thread; takes the
 * lock; no allocation.
 */
enum ks_dra_lookup ks_dra_tracker_pod_claims(struct ks_dra_tracker *t, const struct ks_pod *pod,
                                             const struct ks_resource_claim *fresh, struct ks_dra_claim *out,
                                             uint32_t *n, bool *uses_fresh, char *msg, size_t len);

/*
 * ks_dra_tracker_reserve - Reserve's in-flight allocation of claim @key: @alloc is copied and
 * its devices count as in use until ks_dra_tracker_written() or _unreserved() for the same
 * claim is synced. 0, -ENOMEM, -EEXIST (already in flight). Scheduling thread.
 */
int ks_dra_tracker_reserve(struct ks_dra_tracker *t, uint32_t key, const struct ks_allocation *alloc);

/*
 * ks_dra_tracker_written - PreBind wrote claim @key: its allocation (@alloc, or NULL when it
 * was allocated already) and a reservation for pod @pod_uid (resource "pods", @pod_name),
 * as the server now has them at resourceVersion @rv (NULL: in process, no server). The
 * in-flight allocation, if any, ends. ks_dra_tracker_unwritten() records a failed write:
 * the in-flight allocation ends, nothing is assumed. Binder threads; the next sync applies
 * them. 0 or -ENOMEM.
 */
int ks_dra_tracker_written(struct ks_dra_tracker *t, uint32_t key, const struct ks_allocation *alloc,
                           const char *pod_uid, const char *pod_name, const char *rv);
int ks_dra_tracker_unwritten(struct ks_dra_tracker *t, uint32_t key);

/*
 * ks_dra_tracker_unreserved - Unreserve for pod @pod_uid: the in-flight allocation of claim
 * @key ends (if any) and, in process, the reservation for the pod is removed (through a
 * server the plugin patches it and the informer follows). Any thread; synced later. 0 or
 * -ENOMEM.
 */
int ks_dra_tracker_unreserved(struct ks_dra_tracker *t, uint32_t key, const char *pod_uid);

/*
 * ks_dra_tracker_deallocate - PostFilter's deallocation of claim @key: no allocation, no
 * reservations, no device status, as the scheduler now sees it (at resourceVersion @rv from
 * the server's answer; NULL: in process). Scheduling thread. 0, -ENOENT, -ENOMEM.
 */
int ks_dra_tracker_deallocate(struct ks_dra_tracker *t, uint32_t key, const char *rv);

/*
 * ks_dra_allocation_copy - a deep copy of @src into @arena (strings and arrays included).
 * NULL when out of memory. Any thread.
 */
struct ks_allocation *ks_dra_allocation_copy(struct ks_arena *arena, const struct ks_allocation *src);

#endif
