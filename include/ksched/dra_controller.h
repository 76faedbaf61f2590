/*
 * dra_controller.h - what kube-controller-manager's resourceclaim controller does for the
 * scheduler's input when no controller runs (`ksched schedule`, bench): the ResourceClaims
 * of pods that name a ResourceClaimTemplate.
 */
#ifndef KSCHED_DRA_CONTROLLER_H
#define KSCHED_DRA_CONTROLLER_H

#include <stdint.h>

#include "ksched/loader.h"

/*
 * ks_dra_make_template_claims - for every pending pod of @objs with a spec.resourceClaims
 * entry that names a ResourceClaimTemplate and has no status.resourceClaimStatuses entry,
 * create the claim as the controller does (pkg/controller/resourceclaim handleClaim): the
 * name <pod>-<claim>- (both shortened in proportion past 57 characters) plus five random
 * characters of the API server's name generator, drawn from @seed; the template's labels
 * and annotations with resource.kubernetes.io/pod-claim-name; the pod as controlling owner;
 * the template's spec (shared with the template, which the set keeps as long as the claim).
 * The claim joins @objs and the pod's status records it. A pod whose template is missing
 * keeps waiting for it, as it would for the controller. Returns the number of claims made,
 * or -ENOMEM (claims made so far stay). Load time, one thread.
 */
int ks_dra_make_template_claims(struct ks_objects *objs, uint64_t seed);

#endif
