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
#include "ksched/base/arena.h"
#include "ksched/dra.h"
#include "ksched/dra_extended.h"
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
 * The special claim for a pod's extended resources (ksched/dra_extended.h).
 *
 * ks_dra_tracker_extended_claim - the claim that is @pod's special claim
 * (findExtendedResourceClaim over every claim the scheduler sees), into @out; false when
 * there is none. Any thread; takes the lock; special claims are indexed by their
 * controlling pod's uid, so it costs the pod's own claims, not the cluster's.
 *
 * ks_dra_tracker_reserve_new - Reserve's in-flight allocation @alloc of the special claim
 * @claim (in memory, not created yet) of pod @pod_uid: an entry of its own under a key no
 * claim name can have, returned in *@key, its devices in use until _created() or _deleted()
 * for it is synced. 0, -ENOMEM, -EEXIST. Scheduling thread.
 *
 * ks_dra_tracker_created - PreBind created entry @key's claim as @claim (its name and uid
 * as created), allocated @alloc and reserved for @pod_uid at @rv (NULL: in process): the
 * entry moves to the claim's name and holds a copy of it until an object of the claim
 * arrives. Binder threads; the next sync applies it. 0 or -ENOMEM.
 *
 * ks_dra_tracker_deleted - the scheduler deleted claim @key (Unreserve of a special claim
 * it made, PostFilter of one left from an earlier cycle): lookups no longer find it and its
 * devices are free. Any thread; synced later. 0 or -ENOMEM.
 */
bool ks_dra_tracker_extended_claim(struct ks_dra_tracker *t, const struct ks_pod *pod,
                                   struct ks_dra_claim *out);
int ks_dra_tracker_reserve_new(struct ks_dra_tracker *t, const struct ks_resource_claim *claim,
                               const char *pod_uid, const struct ks_allocation *alloc, uint32_t *key);
int ks_dra_tracker_created(struct ks_dra_tracker *t, uint32_t key, const struct ks_resource_claim *claim,
                           const struct ks_allocation *alloc, const char *pod_uid, const char *rv);
int ks_dra_tracker_deleted(struct ks_dra_tracker *t, uint32_t key);

/*
 * A pod's extended resources backed by devices, as DynamicResources' PreFilter finds them:
 * the requested resources a DeviceClass backs (at most KS_DRA_EXT_MAX), the other requested
 * resources with such a name (a node must offer each), the pod's special claim left from an
 * earlier cycle, and per set of backed resources a node may lack (a mask over res[]) the
 * special claim asking for those and the pod's claims to allocate with it, prepared. The
 * plugin owns one (zeroed to start) and refills it per pod; Filter workers read it.
 */
#define KS_DRA_EXT_MAX 6
struct ks_dra_ext {
    uint32_t nres;
    struct ks_dra_ext_resource res[KS_DRA_EXT_MAX];
    uint32_t nother;
    const uint32_t *other;
    bool stale;                /* found is the special claim of an earlier cycle (with requests) */
    struct ks_dra_claim found; /* valid when stale */
    struct ks_resource_claim *claim[1u << KS_DRA_EXT_MAX]; /* [mask], NULL for 0 */
    struct ks_dra_claims *variant[1u << KS_DRA_EXT_MAX];   /* the pod's claims + claim[mask] */
    struct ks_arena arena;
};

/*
 * ks_dra_ext_prepare - PreFilter's part (preFilterExtendedResources): fill @x for @pod with
 * the @nuser claims to allocate @user, after ks_dra_tracker_sync(). 1 when the pod has
 * resources a class backs, 0 when not (nothing to do), -ENOMEM, -E2BIG (more than
 * KS_DRA_EXT_MAX of them). Scheduling thread; the objects are the scheduling thread's.
 */
int ks_dra_ext_prepare(struct ks_dra_ext *x, struct ks_dra_tracker *t, const struct ks_objects *objs,
                       const struct ks_pod *pod, const struct ks_resource_claim *const *user, uint32_t nuser);
/*
 * ks_dra_ext_node_mask - filterExtendedResources: the set of backed resources @node's
 * allocatable lists with 0 or not at all (the special claim's variant there), or -1 when
 * the node lacks a resource no class backs ("cannot fit resource"). Any thread.
 */
int ks_dra_ext_node_mask(const struct ks_dra_ext *x, const struct ks_node *node);
void ks_dra_ext_release(struct ks_dra_ext *x); /* empties @x, keeping its arena's memory */
void ks_dra_ext_destroy(struct ks_dra_ext *x);

/*
 * ks_dra_allocation_copy - a deep copy of @src into @arena (strings and arrays included).
 * NULL when out of memory. Any thread.
 */
struct ks_allocation *ks_dra_allocation_copy(struct ks_arena *arena, const struct ks_allocation *src);

#endif
