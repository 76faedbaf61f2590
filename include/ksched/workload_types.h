/*
 * workload_types.h - the workload-aware scheduling objects of scheduling.k8s.io/v1beta1
 * (Kubernetes v1.37, GenericWorkload): PodGroup, the object kube-scheduler reads to schedule
 * a group of pods together, and Workload, the templates controllers make PodGroups from.
 * Only what scheduling and validation read is kept.
 */
#ifndef KSCHED_WORKLOAD_TYPES_H
#define KSCHED_WORKLOAD_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/arena.h"

#define KS_WORKLOAD_MAX_TEMPLATES 8          /* WorkloadMaxPodGroupTemplates */
#define KS_PRIORITY_MAX           1000000000 /* HighestUserDefinablePriority */

/* spec.schedulingPolicy: basic {} (pods scheduled independently) or gang {minCount}. */
enum ks_pod_group_policy {
    KS_POD_GROUP_BASIC,
    KS_POD_GROUP_GANG,
};

/* What a PodGroup and a PodGroupTemplate share. */
struct ks_pod_group_spec {
    enum ks_pod_group_policy policy;
    int32_t min_count;     /* gang: schedulingPolicy.gang.minCount; basic: 1 (PlacementFeasible's) */
    uint32_t topology_key; /* schedulingConstraints.topology[0].key, interned; KS_ID_NONE: none */
    bool disrupt_all;      /* disruptionMode all (the default is single) */
    const char *priority_class_name; /* NULL when absent */
    bool has_priority;
    int32_t priority;
    bool has_preemption_policy;
    enum ks_preemption_policy preemption_policy;
};

/* status.conditions[] of a PodGroup (metav1.Condition: what the scheduler reads and writes). */
struct ks_pod_group_condition {
    const char *type, *status, *reason, *message;
    int64_t observed_generation;
};

struct ks_pod_group {
    struct ks_object_meta meta;
    struct ks_pod_group_spec spec;
    const char *workload_name, *template_name; /* spec.workloadRef; NULL when absent */
    int64_t generation;                        /* metadata.generation (0 when absent) */
    uint32_t nconditions;
    struct ks_pod_group_condition *conditions;
    struct ks_arena arena;
};

/* spec.podGroupTemplates[] of a Workload. */
struct ks_pod_group_template {
    const char *name;
    struct ks_pod_group_spec spec;
};

struct ks_workload {
    struct ks_object_meta meta;
    bool has_controller; /* spec.controllerRef */
    const char *controller_api_group, *controller_kind, *controller_name;
    uint32_t ntemplates;
    struct ks_pod_group_template *templates;
    struct ks_arena arena;
};

#endif
