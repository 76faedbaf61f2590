/*
 * features.h - kube-scheduler's feature gates (--feature-gates): those of the 1.22 release
 * that shape its configuration, and current upstream's workload-aware scheduling gates.
 *
 * Mirrors k8s.io/component-base/featuregate (the "Name=bool,..." flag syntax and its
 * errors) and the scheduler-relevant entries of pkg/features/kube_features.go of 1.22,
 * with their 1.22 defaults, plus SchedulerAsyncPreemption (on in v1.37), GenericWorkload (beta, off by
 * default in v1.37: the PodGroup and Workload APIs, pods' spec.schedulingGroup, gang scheduling) and
 * TopologyAwareWorkloadScheduling (alpha, off: topology constraints of pod groups) and
 * WorkloadAwarePreemption (alpha, off: preemption for pod groups). Like upstream's
 * DefaultFeatureGate the set is process-wide: a command sets it from its --feature-gates flag before it loads
 * the configuration, and the configuration defaulting consults it.
 *
 * Which gates ksched honours: DefaultPodTopologySpread (beta, on): off, the v1beta2 and
 * v1beta3 default plugins add SelectorSpread (PreScore, and Score with weight 1) and
 * v1beta2's PodTopologySpreadArgs default to defaultingType List (config/config_defaults.c,
 * plugins/pod_topology_spread.c). GenericWorkload (beta, off): on, PodGroup and Workload
 * objects are read, a pod's schedulingGroup joins it to its group, the v1 default profile
 * adds GangScheduling, and the members of a group are scheduled together in the PodGroup
 * cycle (engine/schedule_podgroup.c); off, as v1.37 runs by default, the loader skips those
 * objects with a note and every pod is scheduled on its own. TopologyAwareWorkloadScheduling
 * (alpha, off): on, a PodGroup may carry a topology constraint, and such a group is placed
 * whole within one domain (engine/schedule_placement.c). WorkloadAwarePreemption (alpha,
 * off): on, a PodGroup that cannot be placed runs the profile's PodGroupPostFilter
 * (DefaultPreemption: engine/preemption_group.c), which evicts lower-priority pods or whole
 * groups across the cluster to make room for it (engine/podgroup_post_filter.c).
 * SchedulerAsyncPreemption (on by default in v1.37, KEP-4832): on, `ksched serve` sends a
 * preemption's API calls (each victim's DisruptionTarget condition, then its deletion) off
 * the scheduling cycle and DefaultPreemption's PreEnqueue holds the preemptor back until
 * they are done; off, the calls are made before the cycle ends (in-process runs evict at
 * once either way). Every other listed gate is
 * locked to its default in ksched: naming it with that value is accepted, asking for the
 * other value is an error (as upstream's locked GA gates are). A name not listed is an
 * error, as it is for kube-scheduler.
 *
 * Context: ks_features_set() and ks_features_reset() at start-up (or in tests) before any
 * thread reads a gate; ks_feature_enabled() from any thread afterwards.
 */
#ifndef KSCHED_FEATURES_H
#define KSCHED_FEATURES_H

#include <stdbool.h>

#include "ksched/base/error.h"

/* X(enum, name, default (1.22's; v1.37's for the workload gates), ksched implements both values) */
#define KS_FEATURE_MAP(X)                                                                                    \
    X(KS_FEATURE_DEFAULT_POD_TOPOLOGY_SPREAD, "DefaultPodTopologySpread", true, true)                        \
    X(KS_FEATURE_NON_PREEMPTING_PRIORITY, "NonPreemptingPriority", true, false)                              \
    X(KS_FEATURE_POD_AFFINITY_NAMESPACE_SELECTOR, "PodAffinityNamespaceSelector", true, false)               \
    X(KS_FEATURE_POD_OVERHEAD, "PodOverhead", true, false)                                                   \
    X(KS_FEATURE_PREFER_NOMINATED_NODE, "PreferNominatedNode", true, false)                                  \
    X(KS_FEATURE_READ_WRITE_ONCE_POD, "ReadWriteOncePod", false, false)                                      \
    X(KS_FEATURE_VOLUME_CAPACITY_PRIORITY, "VolumeCapacityPriority", false, false)                           \
    X(KS_FEATURE_GENERIC_WORKLOAD, "GenericWorkload", false, true)                                           \
    X(KS_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, "TopologyAwareWorkloadScheduling", false, true)         \
    X(KS_FEATURE_WORKLOAD_AWARE_PREEMPTION, "WorkloadAwarePreemption", false, true)                          \
    X(KS_FEATURE_SCHEDULER_ASYNC_PREEMPTION, "SchedulerAsyncPreemption", true, true)

enum ks_feature {
#define KS__FEATURE_ENUM(e, name, def, settable) e,
    KS_FEATURE_MAP(KS__FEATURE_ENUM)
#undef KS__FEATURE_ENUM
        KS_FEATURE_COUNT
};

/* ks_feature_enabled - the gate's current value (its default unless set). */
bool ks_feature_enabled(enum ks_feature f);

/* ks_feature_name - "DefaultPodTopologySpread", ... */
const char *ks_feature_name(enum ks_feature f);

/*
 * ks_features_set - apply a --feature-gates value: "Name=bool" pairs separated by commas
 * (spaces around names and values ignored; bools as Go's strconv.ParseBool: 1, t, T,
 * TRUE, true, True, 0, f, F, FALSE, false, False). All or nothing: on error no gate
 * changes. Returns 0, or -EINVAL with @err set (field "--feature-gates"): "missing bool
 * value for Name", "invalid value of Name=x, err: strconv.ParseBool: parsing \"x\":
 * invalid syntax", "unrecognized feature gate: Name", or for a locked gate "cannot set
 * feature gate Name to false, feature is locked to true in ksched".
 */
int ks_features_set(const char *spec, struct ks_error *err);

/*
 * ks__features_force - set gate @f to @on even when ksched locks it: tests of the parts of a
 * feature that land before the gate is unlocked. Same context as ks_features_set().
 */
void ks__features_force(enum ks_feature f, bool on);

/* ks_features_reset - every gate back to its default (tests). */
void ks_features_reset(void);

#endif
