/*
 * plugin_helpers_sign.h - the pieces of pods that several in-tree plugins append to a
 * signature (ksched/sign.h) in their sign op (plugin_types.h).
 *
 * Every function appends the fields its plugins' Filter and Score read, each one on its
 * own (never a struct's bytes, whose padding is undefined), with counts in front of
 * variable-length lists, so that two different values never append the same bytes.
 * Interned ids are appended as they are: they are stable for the process's life.
 *
 * Context: the scheduling thread, inside the cycle's RCU read section (the sign op's
 * context); pure, allocation-free and lock-free.
 */
#ifndef KSCHED_PLUGIN_HELPERS_SIGN_H
#define KSCHED_PLUGIN_HELPERS_SIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/plugin_helpers.h"
#include "ksched/sign.h"

struct ks_cycle_state;

/* ks_sign_labels - a sorted label set (a nodeSelector): its size, then each key and value. */
void ks_sign_labels(struct ks_sign *sig, const struct ks_labels *labels);

/* ks_sign_requirements - @n requirements: key, operator, values (count first), Gt/Lt number. */
void ks_sign_requirements(struct ks_sign *sig, const struct ks_requirement *reqs, uint32_t n);

/* ks_sign_node_selector_term - a NodeSelectorTerm: its label expressions, then its field expressions. */
void ks_sign_node_selector_term(struct ks_sign *sig, const struct ks_node_selector_term *term);

/*
 * ks_sign_node_selector - a NodeSelector that may be absent: NULL (no requirement) and a
 * selector without terms (matches no node) sign differently.
 */
void ks_sign_node_selector(struct ks_sign *sig, const struct ks_node_selector *sel);

/*
 * ks_sign_tolerations - @n tolerations in order: what v1.Toleration.ToleratesTaint reads
 * (key, operator, value, effect); tolerationSeconds is read by no Filter or Score.
 */
void ks_sign_tolerations(struct ks_sign *sig, const struct ks_toleration *tols, uint32_t n);

/*
 * ks_sign_res_requests - the pod's request of each of the @n scored resources @res, as
 * ks_res_pod_request() gives it with @use_requested (the vector a resource Score reads).
 */
void ks_sign_res_requests(struct ks_sign *sig, const struct ks_res_spec *res, uint32_t n, bool use_requested,
                          const struct ks_pod *pod);

/*
 * ks_sign_no_volumes - the sign op of the volume plugins (VolumeBinding, VolumeRestrictions,
 * VolumeZone, NodeVolumeLimits and the in-tree *Limits): KS_SKIP when @pod has a volume
 * other than KS_VOLUME_OTHER (a claim, an ephemeral claim, a GCE PD, EBS, RBD or iSCSI disk:
 * what they read goes through PVCs, PVs, StorageClasses, CSINodes or other pods), else
 * KS_SUCCESS with nothing appended: each of them then skips at PreFilter (and VolumeBinding
 * at PreScore), so its Filter and Score never run for the pod.
 */
int ks_sign_no_volumes(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                       struct ks_sign *sig);

#endif
