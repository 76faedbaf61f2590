/*
 * queue_types.h - a pod as the scheduling queue holds it (upstream's QueuedPodInfo), the
 * cluster events that move unschedulable pods (framework.ClusterEvent), QueueingHints,
 * and the clock the queue reads.
 *
 * Mirrors pkg/scheduler/framework/types.go (QueuedPodInfo, ClusterEvent, ActionType),
 * pkg/scheduler/framework/events.go and the QueueingHint of framework/interface.go.
 * Types only: plugins include this to declare their events (struct ks_plugin's
 * events_to_register op) and QueueSort comparisons read struct ks_queued_pod.
 */
#ifndef KSCHED_QUEUE_TYPES_H
#define KSCHED_QUEUE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"

/*
 * A queued pod. The queue allocates it (inside a private wrapper) and owns it until the
 * scheduler is done with it; QueueSort reads it. Fields below are written by the queue,
 * except unschedulable_plugins, group_size and backoff_base, which the scheduling loop sets
 * on a failed attempt.
 * A struct's pod never changes: an update of the pod replaces the whole struct.
 */
struct ks_queued_pod {
    const struct ks_pod *pod;
    int64_t timestamp_ns;           /* when the pod was last added to the queue (QueueSort ties) */
    int64_t initial_attempt_ns;     /* when it first entered the active queue, KS_TIME_NONE before */
    uint32_t attempts;              /* scheduling attempts so far (counted at pop) */
    uint16_t profile;               /* index of the profile serving the pod (KS_NO_PROFILE: none) */
    uint64_t unschedulable_plugins; /* slots (in its profile) of the plugins that rejected it */
    uint32_t group_size;   /* its pod group's members in its last attempt (0: a pod alone): backoff */
    uint32_t backoff_base; /* attempts its backoff does not count: those up to its group's last success */
};

#define KS_NO_PROFILE UINT16_MAX

/* ---- cluster events --------------------------------------------------------------------- */

/*
 * The object kinds an event can concern (fwk.EventResource). AssignedPod and
 * UnscheduledPod are what the queue sends for pods; a plugin registers Pod, which
 * matches both. Wildcard with every action is the event that moves every pod
 * (UnschedulableTimeout, ForceActivate).
 */
#define KS_EVENT_RESOURCE_MAP(X)                                                                             \
    X(POD, "Pod")                                                                                            \
    X(ASSIGNED_POD, "AssignedPod")                                                                           \
    X(UNSCHEDULED_POD, "UnschedulablePod")                                                                   \
    X(NODE, "Node")                                                                                          \
    X(PV, "PersistentVolume")                                                                                \
    X(PVC, "PersistentVolumeClaim")                                                                          \
    X(CSI_NODE, "CSINode")                                                                                   \
    X(CSI_DRIVER, "CSIDriver")                                                                               \
    X(CSI_STORAGE_CAPACITY, "CSIStorageCapacity")                                                            \
    X(STORAGE_CLASS, "StorageClass")                                                                         \
    X(VOLUME_ATTACHMENT, "VolumeAttachment")                                                                 \
    X(RESOURCE_CLAIM, "ResourceClaim")                                                                       \
    X(RESOURCE_SLICE, "ResourceSlice")                                                                       \
    X(DEVICE_CLASS, "DeviceClass")                                                                           \
    X(POD_GROUP, "PodGroup")                                                                                 \
    X(WILDCARD, "*")

enum ks_event_resource {
#define KS_X(id, text) KS_ER_##id,
    KS_EVENT_RESOURCE_MAP(KS_X)
#undef KS_X
        KS_ER_COUNT
};

/* Actions (fwk.ActionType), one bit each, in upstream's order: the order matters for matching. */
#define KS_EVENT_ACTION_MAP(X)                                                                               \
    X(ADD, "Add")                                                                                            \
    X(DELETE, "Delete")                                                                                      \
    X(UPDATE_NODE_ALLOCATABLE, "UpdateNodeAllocatable")                                                      \
    X(UPDATE_NODE_LABEL, "UpdateNodeLabel")                                                                  \
    X(UPDATE_NODE_TAINT, "UpdateNodeTaint")                                                                  \
    X(UPDATE_NODE_CONDITION, "UpdateNodeCondition")                                                          \
    X(UPDATE_NODE_ANNOTATION, "UpdateNodeAnnotation")                                                        \
    X(UPDATE_POD_LABEL, "UpdatePodLabel")                                                                    \
    X(UPDATE_POD_SCALE_DOWN, "UpdatePodScaleDown")                                                           \
    X(UPDATE_POD_TOLERATION, "UpdatePodToleration")                                                          \
    X(UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "UpdatePodSchedulingGatesEliminated")                          \
    X(UPDATE_POD_GENERATED_RESOURCE_CLAIM, "UpdatePodGeneratedResourceClaim")                                \
    X(UPDATE_OTHER, "Update")

enum ks_event_action_index {
#define KS_X(id, text) KS_ACTION_INDEX_##id,
    KS_EVENT_ACTION_MAP(KS_X)
#undef KS_X
        KS_ACTION_COUNT
};

enum ks_event_action {
#define KS_X(id, text) KS_ACT_##id = 1u << KS_ACTION_INDEX_##id,
    KS_EVENT_ACTION_MAP(KS_X)
#undef KS_X
};

#define KS_ACT_ALL    ((1u << KS_ACTION_COUNT) - 1)
#define KS_ACT_UPDATE (KS_ACT_ALL & ~(KS_ACT_ADD | KS_ACT_DELETE)) /* every kind of update */

/* A cluster event: which kind of object, and what happened to it (a set of actions). */
struct ks_cluster_event {
    enum ks_event_resource resource;
    uint32_t actions;
};

/* QueueingHint: may the event make the pod schedulable? */
enum ks_queueing_hint {
    KS_QUEUE_SKIP,
    KS_QUEUE,
};

/*
 * ks_queueing_hint_fn - whether the event that changed @old_obj into @new_obj (either
 * NULL for an add or a delete; objects of the event's resource: struct ks_node, struct
 * ks_pod, struct ks_persistent_volume_claim, ...) may make @pod, which the plugin
 * rejected, schedulable. @self is the plugin's instance. Context: any thread, under the
 * queue's lock of backoffQ and the unschedulable pods: pure, no blocking, no allocation,
 * no queue calls.
 */
typedef enum ks_queueing_hint (*ks_queueing_hint_fn)(void *self, const struct ks_pod *pod,
                                                     const void *old_obj, const void *new_obj);

/* One registration of EnqueueExtensions.EventsToRegister: an event and its hint (NULL: always Queue). */
struct ks_event_registration {
    struct ks_cluster_event event;
    ks_queueing_hint_fn hint;
};

/* ---- time ------------------------------------------------------------------------------------ */

/* Where the queue reads the time (monotonic nanoseconds); tests inject a manual clock. */
struct ks_clock {
    int64_t (*now)(void *ctx); /* NULL: CLOCK_MONOTONIC */
    void *ctx;
};

#endif
