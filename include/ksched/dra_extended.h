/*
 * dra_extended.h - extended resources backed by devices (DRAExtendedResource, GA in current
 * upstream): a DeviceClass with spec.extendedResourceName, and every DeviceClass under its
 * implicit name "deviceclass.resource.kubernetes.io/<class>", makes that extended resource
 * allocatable from devices on a node whose allocatable does not offer it (lists it with 0
 * or not at all). The scheduler then allocates one claim per pod for such requests, the
 * special claim: owned by the pod, annotated resource.kubernetes.io/extended-resource-claim,
 * with one ExactCount request per container and resource.
 *
 * NodeResourcesFit leaves such a request to DynamicResources on such a node; DynamicResources
 * builds the node's variant of the special claim and allocates it with the pod's claims.
 * Mirrors pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go and
 * extended/ (the device class resolver) of current upstream.
 */
#ifndef KSCHED_DRA_EXTENDED_H
#define KSCHED_DRA_EXTENDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/arena.h"
#include "ksched/dra_types.h"

#define KS_DRA_DEVICE_CLASS_PREFIX       "deviceclass.resource.kubernetes.io/"
#define KS_DRA_EXTENDED_CLAIM_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
#define KS_DRA_SPECIAL_CLAIM_NAME        "<extended-resources>" /* the in-memory claim's name */

/*
 * ks_dra_extended_name - schedutil.IsDRAExtendedResourceName: an extended resource name
 * (ks_is_extended_resource_name) or one under KS_DRA_DEVICE_CLASS_PREFIX. Any thread.
 */
bool ks_dra_extended_name(const char *name);

/*
 * ks_dra_class_for_resource - the DeviceClass resolver: the class of @classes (n) that
 * provides extended resource @name, NULL when none. An explicit spec.extendedResourceName
 * wins over the implicit names; among classes naming the same resource the one created last
 * is picked, and of those created at the same time the one whose name sorts first (the
 * field's documented rule). Any thread; reads only.
 */
const struct ks_device_class *ks_dra_class_for_resource(const struct ks_device_class *const *classes,
                                                        uint32_t n, const char *name);

/* One extended resource the special claim asks devices for. */
struct ks_dra_ext_resource {
    uint32_t name;          /* interned resource name */
    const char *class_name; /* the DeviceClass that provides it */
};

/* status.extendedResourceClaimStatus.requestMappings[]: which request serves what. */
struct ks_dra_ext_mapping {
    const char *container;
    const char *resource;
    const char *request;
};

/*
 * ks_dra_extended_claim - the special claim of @pod for the @nres resources @res (upstream's
 * createRequestsAndMappings): per resource, in the order of the names, a request
 * "container-<i>-request-<j>" (i: the container's index among init containers then
 * containers; j: the resource's index in the container's requests sorted by name) of the
 * container's quantity for every long-lived container (a regular one or a sidecar) asking
 * for it, and for the init containers that run before them one request of what the
 * largest of them lacks after the long-lived requests that follow it; requests sorted by
 * name. The claim is named KS_DRA_SPECIAL_CLAIM_NAME in the pod's namespace, annotated,
 * controlled by the pod; no allocation. *@maps (may be NULL) gets the request mappings in
 * upstream's order. Everything lives in @a. 0 or -ENOMEM. Any thread.
 */
int ks_dra_extended_claim(struct ks_arena *a, const struct ks_pod *pod, const struct ks_dra_ext_resource *res,
                          uint32_t nres, struct ks_resource_claim **out, struct ks_dra_ext_mapping **maps,
                          uint32_t *nmaps);

/*
 * ks_dra_extended_claim_name - the name the API server's generateName gives a special claim
 * when no server does (`ksched schedule`, bench): at most 58 characters of
 * "<pod>-extended-resources-" (names.SimpleNameGenerator's cut) and five characters of its
 * alphabet, the @n-th of a permutation of all 27^5 of them, so that numbering the claims
 * 0, 1, ... never gives a name twice. Any thread.
 */
#define KS_DRA_NAME_BASE_MAX 58
void ks_dra_extended_claim_name(const char *pod_name, uint64_t n, char *out, size_t len);

/*
 * ks_dra_extended_claim_copy - a copy of special claim @src in @a: its metadata (no labels)
 * and its ExactCount requests (what ks_dra_extended_claim() makes), no status. 0 or
 * -ENOMEM. Any thread.
 */
int ks_dra_extended_claim_copy(struct ks_arena *a, const struct ks_resource_claim *src,
                               struct ks_resource_claim **out);

/*
 * ks_dra_extended_claim_controller - when @c is a special claim (the annotation set to
 * "true"), its controller reference with a uid; NULL otherwise. Any thread.
 */
const struct ks_owner_ref *ks_dra_extended_claim_controller(const struct ks_resource_claim *c);

/*
 * ks_dra_is_extended_claim - whether @c is the special claim of @pod (uid @pod_uid): the
 * annotation set to "true" and a controller reference to the pod's name and uid
 * (findExtendedResourceClaim). Any thread.
 */
bool ks_dra_is_extended_claim(const struct ks_resource_claim *c, const struct ks_pod *pod,
                              const char *pod_uid);

#endif
