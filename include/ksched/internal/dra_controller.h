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

/*
 * struct ks_dra_claim_maker - what the controller keeps between the pods it is given one by
 * one (ks_dra_make_pod_claims): the random stream of the generated names and uids, and the
 * "namespace/name" of every claim it knows of, so that no name is given twice. Made from the
 * claims of a set; a claim made later joins it, and one deleted later stays in it (its name
 * is not reused, as a name reused while an informer still holds the old claim could be
 * mistaken for it).
 */
struct ks_dra_claim_maker;

/*
 * ks_dra_claim_maker_create - a maker that knows the claims of @objs (NULL: none) and draws
 * from @seed's stream: given the pending pods of a set in the set's order, it names their
 * claims as ks_dra_make_template_claims(objs, @seed) does. 0 or -ENOMEM. One thread.
 */
int ks_dra_claim_maker_create(const struct ks_objects *objs, uint64_t seed, struct ks_dra_claim_maker **out);

/* ks_dra_claim_maker_destroy - accepts NULL. */
void ks_dra_claim_maker_destroy(struct ks_dra_claim_maker *m);

/*
 * ks_dra_make_pod_claims - what ks_dra_make_template_claims() does for one pod, @pod, in
 * time proportional to its claims and the set's templates (not to its pods or claims): each
 * spec.resourceClaims entry that names a ResourceClaimTemplate of @objs in the pod's namespace and has no
 * status.resourceClaimStatuses entry gets its claim, named and built as there, recorded in
 * the pod's status (the pod's arena grows). A bound or finished pod gets none. The claims are
 * handed to the caller in @out (room for pod->nclaims), not added to @objs: the caller adds
 * them (ks_objects_push() before a scheduler reads the set; later on the scheduling thread
 * with gen[KS_KIND_RESOURCE_CLAIM] moved, see loader.h) and owns them until then
 * (ks_resource_claim_destroy()). Returns the number of claims made, or -ENOMEM (then none is
 * handed over, but the statuses of those made stay on the pod). The pod must not be shared
 * yet (no scheduler holds it); @objs is only read. One thread, the maker's.
 */
int ks_dra_make_pod_claims(struct ks_dra_claim_maker *m, const struct ks_objects *objs, struct ks_pod *pod,
                           struct ks_resource_claim **out);

#endif
