/*
 * dra_api.h - what the DynamicResources plugin needs from an API server to publish its
 * allocations as kube-scheduler does: bindClaim (PreBind), the reservation patch of
 * Unreserve and the deallocation of PostFilter (pkg/scheduler/framework/plugins/
 * dynamicresources/dynamicresources.go).
 *
 * `ksched serve` implements it (serve/serve_dra.c) and hands it to the scheduler
 * (ks_scheduler_opts.dra_api, then ks_framework_deps.dra_api); without one (`ksched
 * schedule`, bench, soak) the plugin records its writes in process. The plugin owns the
 * semantics (when to write, what an error means for the pod); the implementation owns the
 * requests, the JSON, the conflict retries and the texts of the errors it returns, which are
 * upstream's (client-go's Status messages wrapped as bindClaim wraps them).
 *
 * Threads: bind_claim and unreserve are called on binder threads, deallocate on the
 * scheduling thread; each blocks for its round trips and may run concurrently with the others.
 */
#ifndef KSCHED_DRA_API_H
#define KSCHED_DRA_API_H

#include <stddef.h>

#include "ksched/dra_extended.h"
#include "ksched/dra_types.h"

/* The claim an op is about, as the scheduler last saw it. */
struct ks_dra_api_claim {
    const char *namespace_;
    const char *name;
    const char *uid;
    const char *resource_version; /* the version the scheduler's view comes from */
};

struct ks_dra_api {
    /*
     * bind_claim - bindClaim's RetryOnConflict loop (retry.DefaultRetry: at most 5 attempts).
     * Starting from the claim at @c->resource_version: when @alloc is not NULL, add the
     * finalizer "resource.kubernetes.io/delete-protection" if the claim lacks it (an update
     * of the claim), then write status.allocation = @alloc; in both cases append {resource:
     * pods, name: @pod_name, uid: @pod_uid} to status.reservedFor (an update of the status
     * subresource). Every update carries the resourceVersion it starts from, so a claim
     * changed meanwhile answers 409 Conflict: the claim is then read again and the attempt
     * repeated on it, failing with "claim ns/name got deleted in the meantime" (a
     * deletionTimestamp) or, when @alloc is not NULL, "claim ns/name got allocated elsewhere
     * in the meantime". Returns 0 with the claim's final resourceVersion in @rv_out (@rvlen
     * bytes), or -1 with upstream's error text in @msg: "add finalizer to claim ns/name:
     * <server's message>", "add allocation and reservation to claim ns/name: ...", "add
     * reservation to claim ns/name: ...", "get updated claim ns/name after conflict: ...".
     */
    int (*bind_claim)(const struct ks_dra_api *api, const struct ks_dra_api_claim *c,
                      const struct ks_allocation *alloc, const char *pod_name, const char *pod_uid,
                      char *rv_out, size_t rvlen, char *msg, size_t len);
    /*
     * unreserve - Unreserve's strategic merge patch of the status subresource:
     * {"metadata":{"uid":<claim uid>},"status":{"reservedFor":[{"$patch":"delete","uid":<pod uid>}]}}.
     * 0, or -1 with the error in @msg (the plugin only logs it, as upstream).
     */
    int (*unreserve)(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, const char *pod_uid,
                     char *msg, size_t len);
    /*
     * deallocate - PostFilter's UpdateStatus of the claim at @c->resource_version with
     * status.allocation, status.reservedFor and status.devices cleared. 0 with the new
     * resourceVersion in @rv_out, or -1 with the server's error in @msg.
     */
    int (*deallocate)(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, char *rv_out,
                      size_t rvlen, char *msg, size_t len);
    /*
     * The special claim for a pod's extended resources backed by devices
     * (extendeddynamicresources.go; ksched/dra_extended.h).
     *
     * create_claim - createExtendedResourceClaimInAPI: POST @claim (its namespace, owner
     * reference, annotation and requests; no status) under metadata.generateName
     * "<pod name>-extended-resources-". 0 with the name, uid and resourceVersion the server
     * gave it, or -1 with "create claim for extended resources ns/: <server's message>".
     *
     * delete_claim - deleteClaim: remove the finalizer resource.kubernetes.io/delete-protection
     * by an update of the claim (RetryOnConflict; "get resourceclaim ns/name: ...", "update
     * resourceclaim ns/name: ..."), then DELETE it; NotFound counts as deleted. 0 or -1.
     *
     * patch_pod_extended - patchPodExtendedResourceClaimStatus: the strategic merge patch of
     * pod @pod_name's status subresource setting status.extendedResourceClaimStatus to the
     * @n request mappings @maps and claim @claim_name (schedutil.PatchPodStatus, retried on
     * the errors it retries). 0, or -1 with "update pod ns/name ExtendedResourceClaimStatus: ...".
     */
    int (*create_claim)(const struct ks_dra_api *api, const struct ks_resource_claim *claim,
                        const char *pod_name, char *name_out, size_t namelen, char *uid_out, size_t uidlen,
                        char *rv_out, size_t rvlen, char *msg, size_t len);
    int (*delete_claim)(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, char *msg,
                        size_t len);
    int (*patch_pod_extended)(const struct ks_dra_api *api, const char *namespace_, const char *pod_name,
                              const char *claim_name, const struct ks_dra_ext_mapping *maps, uint32_t n,
                              char *msg, size_t len);
    void *impl; /* the implementation's */
};

#endif
