/*
 * pod_groups.h - the scheduler's view of pod groups (GenericWorkload): for each PodGroup
 * named by a pod or seen as an object, whether the object exists, the part of its spec
 * scheduling reads, and every pod of the group the scheduler knows (pending, assumed and
 * bound): upstream's PodGroupManager / PodGroupState.
 *
 * A group is keyed by the pod's namespace and its spec.schedulingGroup.podGroupName
 * (interned). Pods and objects reach it from the scheduler's event calls; GangScheduling's
 * PreEnqueue and the PodGroup cycle read it.
 *
 * Ownership: the table holds one reference (ks_pod_get) on each pod it lists and a copy of
 * each object's spec, never the objects themselves, so readers need no lifetime rule. A group
 * left with neither pods nor an object is dropped.
 * Context: any thread; one mutex (KS_LOCK_POD_GROUPS, a leaf: PreEnqueue takes it inside
 * the queue's locks). Nothing allocates but the add calls.
 */
#ifndef KSCHED_POD_GROUPS_H
#define KSCHED_POD_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/workload_types.h"

struct ks_pod;
struct ks_pod_groups;

/* What the cycle and PreEnqueue read of one group. */
struct ks_pod_group_state {
    bool exists;                   /* the PodGroup object was seen */
    struct ks_pod_group_spec spec; /* its spec (priority_class_name NULL); zero when !exists */
    uint32_t all_pods;             /* AllPodsCount: every pod of the group known */
};

int ks_pod_groups_create(struct ks_pod_groups **out);
void ks_pod_groups_destroy(struct ks_pod_groups *g); /* accepts NULL */

/* ks_pod_group_key - the interned podGroupName of @pod's group, KS_ID_NONE when it has none. */
uint32_t ks_pod_group_key(const struct ks_pod *pod);

/*
 * ks_pod_groups_add_pod - @pod (pending or bound) joined its group, or replaced the version
 * of the same namespace/name listed. A pod without a group is ignored. 0 or -ENOMEM.
 */
int ks_pod_groups_add_pod(struct ks_pod_groups *g, const struct ks_pod *pod);

/* ks_pod_groups_delete_pod - the pod of @pod's namespace/name left its group. */
void ks_pod_groups_delete_pod(struct ks_pod_groups *g, const struct ks_pod *pod);

/* ks_pod_groups_set_object - PodGroup @pg was added or updated (@pg) or deleted (@pg NULL, @old its last
 * version). 0 or -ENOMEM. */
int ks_pod_groups_set_object(struct ks_pod_groups *g, const struct ks_pod_group *old,
                             const struct ks_pod_group *pg);

/* ks_pod_groups_state - the state of group @name (interned) of namespace @ns; false when nothing names it. */
bool ks_pod_groups_state(struct ks_pod_groups *g, uint32_t ns, uint32_t name, struct ks_pod_group_state *out);

/*
 * ks_pod_groups_members - the pods of group @ns/@name, in the order they joined: up to @cap
 * of them in @out, each with a reference the caller drops (ks_pod_put). Returns how many
 * there are (more than @cap: call again with room for them).
 */
uint32_t ks_pod_groups_members(struct ks_pod_groups *g, uint32_t ns, uint32_t name, const struct ks_pod **out,
                               uint32_t cap);

/* ks_pod_groups_count - the groups held: a group with neither pods nor an object is dropped. */
uint32_t ks_pod_groups_count(struct ks_pod_groups *g);

#endif
