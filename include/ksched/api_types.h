/*
 * api_types.h - the Kubernetes v1 objects ksched schedules with.
 *
 * Only the fields some scheduler plugin, the queue or the cache reads are kept. Strings
 * that plugins compare are interned (uint32_t ids from ksched/base/intern.h, KS_ID_EMPTY for
 * "", KS_ID_NONE for an absent optional string); free-form strings (names used only in
 * messages, uids) are plain char pointers. Every array and string of an object lives in
 * the object's own arena, so each object is freed in one call (ks_pod_destroy() ...).
 *
 * Quantities are stored already scaled as kube-scheduler uses them: cpu in millicores
 * (MilliValue), everything else in base units rounded up (Value).
 *
 * Mirrors k8s.io/api/core/v1 (types.go), storage/v1, policy/v1, scheduling/v1.
 */
#ifndef KSCHED_API_TYPES_H
#define KSCHED_API_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/base/arena.h"

#define KS_TIME_NONE INT64_MIN /* an absent timestamp */

/* ---- labels, annotations, selectors ------------------------------------------------ */

struct ks_label {
    uint32_t key;
    uint32_t value;
};

/* A label set, sorted by key id with unique keys. */
struct ks_labels {
    uint32_t n;
    struct ks_label *items;
};

struct ks_kv {
    const char *key;
    const char *value;
};

/* Annotations: rarely read, kept as strings in document order. */
struct ks_annotations {
    uint32_t n;
    struct ks_kv *items;
};

/* Operators of label selectors (In..DoesNotExist) and node selectors (all six). */
#define KS_SELECTOR_OP_MAP(X)                                                                                \
    X(IN, "In")                                                                                              \
    X(NOT_IN, "NotIn")                                                                                       \
    X(EXISTS, "Exists")                                                                                      \
    X(DOES_NOT_EXIST, "DoesNotExist")                                                                        \
    X(GT, "Gt")                                                                                              \
    X(LT, "Lt")

enum ks_selector_op {
#define KS_X(name, text) KS_OP_##name,
    KS_SELECTOR_OP_MAP(KS_X)
#undef KS_X
};

struct ks_requirement {
    uint32_t key;
    enum ks_selector_op op;
    uint32_t nvalues;
    uint32_t *values; /* sorted interned ids (In, NotIn) */
    int64_t number;   /* the single integer value of Gt and Lt */
};

/*
 * A metav1.LabelSelector. A NULL pointer where a selector is optional means "nil"
 * (matches nothing in affinity terms and spreading, as LabelSelectorAsSelector(nil));
 * a selector with no requirements matches everything. matchLabels are folded into
 * In requirements with one value.
 */
struct ks_label_selector {
    uint32_t nreqs;
    struct ks_requirement *reqs;
};

/* A v1.NodeSelectorTerm: requirements on labels and on fields (metadata.name only). */
struct ks_node_selector_term {
    uint32_t nexprs;
    struct ks_requirement *exprs;
    uint32_t nfields;
    struct ks_requirement *fields; /* key is the interned "metadata.name" */
};

/* A v1.NodeSelector: terms are ORed; no terms matches nothing. */
struct ks_node_selector {
    uint32_t nterms;
    struct ks_node_selector_term *terms;
};

struct ks_preferred_term {
    int32_t weight;
    struct ks_node_selector_term term;
};

/* ---- resources ------------------------------------------------------------------------ */

/* One entry of a v1.ResourceList, scaled (cpu in millicores, others rounded-up units). */
struct ks_resource_item {
    uint32_t name; /* interned resource name */
    int64_t value;
};

/* A v1.ResourceList, sorted by name id with unique names. */
struct ks_resource_list {
    uint32_t n;
    struct ks_resource_item *items;
};

/*
 * Resources as kube-scheduler's framework.Resource: the well-known ones in fields, every
 * other (extended resources, hugepages-*, attachable-volumes-*) in a sorted scalar list.
 */
struct ks_resources {
    int64_t milli_cpu;
    int64_t memory;
    int64_t ephemeral_storage;
    int64_t allowed_pods;
    uint32_t nscalar;
    struct ks_resource_item *scalar;
};

/* ---- taints and tolerations --------------------------------------------------------------- */

#define KS_TAINT_EFFECT_MAP(X)                                                                               \
    X(NONE, "")                                                                                              \
    X(NO_SCHEDULE, "NoSchedule")                                                                             \
    X(PREFER_NO_SCHEDULE, "PreferNoSchedule")                                                                \
    X(NO_EXECUTE, "NoExecute")

enum ks_taint_effect {
#define KS_X(name, text) KS_EFFECT_##name,
    KS_TAINT_EFFECT_MAP(KS_X)
#undef KS_X
};

struct ks_taint {
    uint32_t key;
    uint32_t value;
    enum ks_taint_effect effect;
};

enum ks_toleration_op {
    KS_TOLERATION_EQUAL, /* the default when operator is empty */
    KS_TOLERATION_EXISTS,
};

struct ks_toleration {
    uint32_t key; /* KS_ID_EMPTY: any key (only with Exists) */
    enum ks_toleration_op op;
    uint32_t value;
    enum ks_taint_effect effect; /* KS_EFFECT_NONE: any effect */
    int64_t toleration_seconds;  /* -1 when absent */
};

/* ---- containers -------------------------------------------------------------------------- */

enum ks_protocol {
    KS_PROTO_TCP, /* the default */
    KS_PROTO_UDP,
    KS_PROTO_SCTP,
};

struct ks_container_port {
    int32_t container_port;
    int32_t host_port; /* 0 when not set */
    uint32_t host_ip;  /* interned; KS_ID_EMPTY when not set (means 0.0.0.0) */
    enum ks_protocol protocol;
};

/* resources.claims[] of a container: a pod claim it uses (and one request of it). */
struct ks_container_claim {
    const char *name;
    const char *request; /* NULL when absent */
};

struct ks_container {
    const char *name;
    uint32_t image; /* interned image name as written; KS_ID_EMPTY when not set */
    struct ks_resource_list requests;
    struct ks_resource_list limits;
    uint32_t nports;
    struct ks_container_port *ports;
    bool restart_always; /* an init container with restartPolicy: Always (a sidecar) */
    uint32_t nclaims;
    struct ks_container_claim *claims; /* resources.claims */
};

/* A host port of a pod or in use on a node: (hostIP, protocol, port) as upstream's HostPortInfo. */
struct ks_host_port {
    uint32_t ip; /* interned; "0.0.0.0" for an empty hostIP */
    uint16_t port;
    uint8_t protocol; /* enum ks_protocol */
};

/* ---- affinity and spreading -------------------------------------------------------------------- */

struct ks_pod_affinity_term {
    struct ks_label_selector *selector; /* NULL: nil, matches nothing */
    uint32_t nnamespaces;
    uint32_t *namespaces;                         /* interned */
    struct ks_label_selector *namespace_selector; /* NULL: nil */
    uint32_t topology_key;
    uint32_t nmatch_label_keys;
    uint32_t *match_label_keys;
    uint32_t nmismatch_label_keys;
    uint32_t *mismatch_label_keys;
};

struct ks_weighted_pod_affinity_term {
    int32_t weight;
    struct ks_pod_affinity_term term;
};

struct ks_pod_affinity {
    uint32_t nrequired;
    struct ks_pod_affinity_term *required;
    uint32_t npreferred;
    struct ks_weighted_pod_affinity_term *preferred;
};

struct ks_node_affinity {
    struct ks_node_selector *required; /* NULL when absent */
    uint32_t npreferred;
    struct ks_preferred_term *preferred;
};

struct ks_affinity {
    struct ks_node_affinity *node_affinity;    /* NULL when absent */
    struct ks_pod_affinity *pod_affinity;      /* NULL when absent */
    struct ks_pod_affinity *pod_anti_affinity; /* NULL when absent */
};

enum ks_unsatisfiable_action {
    KS_DO_NOT_SCHEDULE,
    KS_SCHEDULE_ANYWAY,
};

enum ks_inclusion_policy {
    KS_POLICY_UNSET, /* the plugin applies its default (Honor for affinity, Ignore for taints) */
    KS_POLICY_HONOR,
    KS_POLICY_IGNORE,
};

struct ks_spread_constraint {
    int32_t max_skew;
    uint32_t topology_key;
    enum ks_unsatisfiable_action when_unsatisfiable;
    struct ks_label_selector *selector; /* NULL: nil */
    int32_t min_domains;                /* 0 when absent (treated as 1) */
    enum ks_inclusion_policy node_affinity_policy;
    enum ks_inclusion_policy node_taints_policy;
    uint32_t nmatch_label_keys;
    uint32_t *match_label_keys;
};

/* ---- volumes --------------------------------------------------------------------------------- */

#define KS_VOLUME_KIND_MAP(X)                                                                                \
    X(OTHER, "other")                                                                                        \
    X(PVC, "persistentVolumeClaim")                                                                          \
    X(EPHEMERAL, "ephemeral")                                                                                \
    X(GCE_PD, "gcePersistentDisk")                                                                           \
    X(AWS_EBS, "awsElasticBlockStore")                                                                       \
    X(RBD, "rbd")                                                                                            \
    X(ISCSI, "iscsi")

enum ks_volume_kind {
#define KS_X(name, text) KS_VOLUME_##name,
    KS_VOLUME_KIND_MAP(KS_X)
#undef KS_X
};

struct ks_volume {
    const char *name;
    enum ks_volume_kind kind;
    /* PVC: the claim name; EPHEMERAL: "<pod>-<volume>"; GCE_PD: pdName; AWS_EBS: volumeID;
     * RBD: image; ISCSI: iqn */
    const char *source;
    bool read_only;
    const char *pool;   /* RBD pool */
    uint32_t nmonitors; /* RBD monitors */
    const char **monitors;
    const char *target; /* ISCSI targetPortal */
    int32_t lun;        /* ISCSI lun */
};

/* ---- metadata ---------------------------------------------------------------------------------- */

struct ks_owner_ref {
    const char *api_version;
    const char *kind;
    const char *name;
    const char *uid;
    bool controller;
};

struct ks_object_meta {
    const char *name;
    uint32_t namespace_id; /* interned; KS_ID_EMPTY for cluster-scoped objects */
    const char *uid;
    const char *resource_version;
    struct ks_labels labels;
    struct ks_annotations annotations;
    uint32_t nowners;
    struct ks_owner_ref *owners;
    int64_t creation_time; /* unix nanoseconds, KS_TIME_NONE */
    int64_t deletion_time; /* unix nanoseconds, KS_TIME_NONE */
    int line;              /* source line of metadata.name (loader), 0 otherwise */
};

/* ---- Pod ------------------------------------------------------------------------------------- */

#define KS_POD_PHASE_MAP(X)                                                                                  \
    X(PENDING, "Pending")                                                                                    \
    X(RUNNING, "Running")                                                                                    \
    X(SUCCEEDED, "Succeeded")                                                                                \
    X(FAILED, "Failed")                                                                                      \
    X(UNKNOWN, "Unknown")

enum ks_pod_phase {
#define KS_X(name, text) KS_PHASE_##name,
    KS_POD_PHASE_MAP(KS_X)
#undef KS_X
};

enum ks_preemption_policy {
    KS_PREEMPT_LOWER_PRIORITY, /* the default */
    KS_PREEMPT_NEVER,
};

struct ks_pod_condition {
    const char *type;
    const char *status;
    const char *reason;
};

/* spec.resourceClaims[]: a ResourceClaim the pod uses, named or made from a template. */
struct ks_pod_claim {
    const char *name;
    const char *claim_name;    /* resourceClaimName, NULL when absent */
    const char *template_name; /* resourceClaimTemplateName, NULL when absent */
};

/* status.resourceClaimStatuses[]: the claim made for a pod claim from a template. */
struct ks_pod_claim_status {
    const char *name;
    const char *claim_name; /* resourceClaimName; NULL: no claim was needed */
};

struct ks_pod {
    struct ks_object_meta meta;

    /* spec */
    uint32_t node_name;      /* interned; KS_ID_EMPTY when not bound */
    uint32_t scheduler_name; /* interned; "default-scheduler" when not set */
    bool has_priority;       /* spec.priority was set (else resolved from the class) */
    int32_t priority;
    const char *priority_class_name;
    enum ks_preemption_policy preemption_policy;
    bool has_preemption_policy;
    uint32_t ncontainers;
    struct ks_container *containers;
    uint32_t ninit_containers;
    struct ks_container *init_containers;
    struct ks_resource_list overhead;
    struct ks_labels node_selector; /* sorted key/value pairs */
    struct ks_affinity affinity;
    uint32_t ntolerations;
    struct ks_toleration *tolerations;
    uint32_t nspread;
    struct ks_spread_constraint *spread;
    uint32_t nvolumes;
    struct ks_volume *volumes;
    uint32_t ngates;
    const char **scheduling_gates;
    bool host_network;
    uint32_t nclaims;
    struct ks_pod_claim *claims;  /* spec.resourceClaims */
    const char *scheduling_group; /* spec.schedulingGroup.podGroupName (GenericWorkload); NULL: none */

    /* status */
    enum ks_pod_phase phase;
    uint32_t nominated_node_name; /* interned; KS_ID_EMPTY when not set */
    int64_t start_time;           /* unix nanoseconds, KS_TIME_NONE */
    uint32_t nconditions;
    struct ks_pod_condition *conditions;
    uint32_t nclaim_statuses;
    struct ks_pod_claim_status *claim_statuses; /* status.resourceClaimStatuses */

    /* derived at load by ks_pod_finish() */
    struct ks_resources requests; /* effective requests: containers, init containers, overhead */
    int64_t nonzero_milli_cpu;    /* requests with upstream's defaults for scoring */
    int64_t nonzero_memory;

    uint32_t refs;         /* references (ks_pod_get / ks_pod_put); 1 when decoded */
    struct ks_arena arena; /* owns everything above */
};

/* ---- Node ------------------------------------------------------------------------------------ */

struct ks_container_image {
    uint32_t nnames;
    uint32_t *names; /* interned, as reported by the kubelet */
    int64_t size_bytes;
};

struct ks_node_condition {
    const char *type;
    const char *status;
};

struct ks_node {
    struct ks_object_meta meta;
    uint32_t name_id; /* interned meta.name */

    /* spec */
    bool unschedulable;
    uint32_t ntaints;
    struct ks_taint *taints;

    /* status */
    struct ks_resource_list capacity;
    struct ks_resource_list allocatable; /* empty when absent: zero capacity, as upstream */
    struct ks_resources alloc;           /* allocatable as framework.Resource (ks_node_finish()) */
    uint32_t nimages;
    struct ks_container_image *images;
    uint32_t nconditions;
    struct ks_node_condition *conditions;

    struct ks_arena arena;
};

/* ---- storage --------------------------------------------------------------------------------- */

enum ks_access_mode {
    KS_ACCESS_RWO = 1 << 0,  /* ReadWriteOnce */
    KS_ACCESS_ROX = 1 << 1,  /* ReadOnlyMany */
    KS_ACCESS_RWX = 1 << 2,  /* ReadWriteMany */
    KS_ACCESS_RWOP = 1 << 3, /* ReadWriteOncePod */
};

struct ks_persistent_volume {
    struct ks_object_meta meta;
    int64_t capacity_storage;
    bool has_storage_class;
    const char *storage_class;              /* "" when not set */
    unsigned access_modes;                  /* enum ks_access_mode bits */
    struct ks_node_selector *node_affinity; /* spec.nodeAffinity.required, NULL when absent */
    const char *claim_namespace;            /* spec.claimRef, NULL when unbound */
    const char *claim_name;
    const char *claim_uid;  /* spec.claimRef.uid, NULL when absent */
    const char *csi_driver; /* spec.csi.driver, NULL when not CSI */
    const char *csi_volume_handle;
    const char *phase;
    const char *volume_mode;
    struct ks_arena arena;
};

struct ks_persistent_volume_claim {
    struct ks_object_meta meta;
    bool has_storage_class;    /* spec.storageClassName was given (even "") */
    const char *storage_class; /* "" when not set */
    const char *volume_name;   /* spec.volumeName, "" when not bound */
    unsigned access_modes;
    int64_t request_storage;
    const char *phase;
    const char *volume_mode;
    struct ks_label_selector *selector;
    struct ks_arena arena;
};

enum ks_binding_mode {
    KS_BINDING_IMMEDIATE, /* the default */
    KS_BINDING_WAIT_FOR_FIRST_CONSUMER,
};

struct ks_storage_class {
    struct ks_object_meta meta;
    const char *provisioner;
    enum ks_binding_mode binding_mode;
    uint32_t nallowed_topologies;
    struct ks_node_selector_term *allowed_topologies; /* topologySelectorTerms as In terms */
    struct ks_arena arena;
};

struct ks_csi_node_driver {
    const char *name;
    const char *node_id;
    bool has_count;
    int32_t allocatable_count;
    uint32_t ntopology_keys;
    uint32_t *topology_keys;
};

struct ks_csi_node {
    struct ks_object_meta meta;
    uint32_t ndrivers;
    struct ks_csi_node_driver *drivers;
    struct ks_arena arena;
};

/* ---- policy, namespaces, priority classes -------------------------------------------------------- */

/* An intOrString: an integer or a percentage. */
struct ks_int_or_percent {
    bool set;
    bool percent;
    int32_t value;
};

struct ks_pod_disruption_budget {
    struct ks_object_meta meta;
    struct ks_label_selector *selector; /* NULL: nil, selects nothing */
    struct ks_int_or_percent min_available;
    struct ks_int_or_percent max_unavailable;
    int32_t disruptions_allowed; /* status.disruptionsAllowed */
    uint32_t ndisrupted;
    const char **disrupted_pods; /* status.disruptedPods keys (pod names) */
    struct ks_arena arena;
};

struct ks_namespace {
    struct ks_object_meta meta; /* meta.labels are what namespaceSelector matches */
    struct ks_arena arena;
};

struct ks_priority_class {
    struct ks_object_meta meta;
    int32_t value;
    bool global_default;
    bool has_preemption_policy;
    enum ks_preemption_policy preemption_policy;
    struct ks_arena arena;
};

/* ---- workloads: what default spreading selects pods by ----------------------------------------- */

/*
 * A v1.Service: only its selector, which helper.DefaultSelector merges for the pods it
 * selects. A Service without spec.selector (nil) selects nothing; an empty one ({})
 * selects every pod of its namespace.
 */
struct ks_service {
    struct ks_object_meta meta;
    bool has_selector;         /* spec.selector was given (even {}) */
    struct ks_labels selector; /* spec.selector, sorted */
    struct ks_arena arena;
};

/* A v1.ReplicationController: spec.selector, defaulted to spec.template.metadata.labels. */
struct ks_replication_controller {
    struct ks_object_meta meta;
    struct ks_labels selector; /* never empty once loaded */
    struct ks_arena arena;
};

/* An apps/v1 ReplicaSet: spec.selector (required, not empty). */
struct ks_replica_set {
    struct ks_object_meta meta;
    struct ks_label_selector *selector; /* never NULL once loaded */
    struct ks_arena arena;
};

/* An apps/v1 StatefulSet: spec.selector (required, not empty). */
struct ks_stateful_set {
    struct ks_object_meta meta;
    struct ks_label_selector *selector; /* never NULL once loaded */
    struct ks_arena arena;
};

#endif
