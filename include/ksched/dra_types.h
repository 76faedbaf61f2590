/*
 * dra_types.h - the resource.k8s.io/v1 objects of Dynamic Resource Allocation: DeviceClass,
 * ResourceSlice, ResourceClaim, ResourceClaimTemplate.
 *
 * What the DynamicResources plugin and its structured allocator read (dra/), as
 * api_types.h keeps what the other plugins read: names compared in hot loops are interned
 * (ksched/base/intern.h), free text (CEL expressions, messages) stays a string, quantities keep
 * their exact value (struct ks_quantity). Opaque device configuration is kept as the JSON
 * text the object gave, so an allocation result can carry it back unchanged. Every array
 * and string lives in the object's arena.
 *
 * Mirrors k8s.io/api/resource/v1 (types.go).
 */
#ifndef KSCHED_DRA_TYPES_H
#define KSCHED_DRA_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/quantity.h"

/* ---- devices -------------------------------------------------------------------------------- */

enum ks_device_attr_kind {
    KS_ATTR_INT,
    KS_ATTR_BOOL,
    KS_ATTR_STRING,
    KS_ATTR_VERSION, /* a semantic version, kept as written (minimal form: compared as text) */
};

/* One attribute: its qualified name as written ("model", or "dra.example.com/model"), one value. */
struct ks_device_attribute {
    uint32_t name; /* interned */
    enum ks_device_attr_kind kind;
    int64_t i;
    bool b;
    const char *s; /* STRING, VERSION */
};

/* A capacity's requestPolicy (DRAConsumableCapacity). */
struct ks_capacity_policy {
    bool has_default;
    struct ks_quantity def;
    uint32_t nvalid_values;
    struct ks_quantity *valid_values; /* sorted ascending by the API */
    bool has_range, has_min, has_max, has_step;
    struct ks_quantity min, max, step;
};

struct ks_device_capacity {
    uint32_t name; /* interned qualified name */
    struct ks_quantity value;
    struct ks_capacity_policy *policy; /* NULL when absent */
};

/* A named quantity: a counter of a counter set, or a capacity request. */
struct ks_named_quantity {
    uint32_t name; /* interned */
    struct ks_quantity value;
};

/* sharedCounters[]: a counter set of a ResourceSlice. */
struct ks_counter_set {
    uint32_t name; /* interned */
    uint32_t ncounters;
    struct ks_named_quantity *counters;
};

/* consumesCounters[] of a device: what it takes from one counter set. */
struct ks_counter_consumption {
    uint32_t counter_set; /* interned */
    uint32_t ncounters;
    struct ks_named_quantity *counters;
};

enum ks_device_taint_effect {
    KS_DEVICE_TAINT_NONE,        /* "None": no effect on scheduling */
    KS_DEVICE_TAINT_NO_SCHEDULE, /* "NoSchedule" */
    KS_DEVICE_TAINT_NO_EXECUTE,  /* "NoExecute" */
    KS_DEVICE_TAINT_OTHER,       /* an effect this version does not know: ignored, as upstream */
};

struct ks_device_taint {
    uint32_t key, value; /* interned; value KS_ID_EMPTY when absent */
    enum ks_device_taint_effect effect;
    const char *effect_text;
};

/* A device toleration (of a request): as a pod toleration, with the device taint effects. */
struct ks_device_toleration {
    uint32_t key;                       /* KS_ID_EMPTY: any key (only with Exists) */
    bool exists;                        /* operator Exists (else Equal) */
    uint32_t value;                     /* interned */
    enum ks_device_taint_effect effect; /* KS_DEVICE_TAINT_NONE here: any effect (effect unset) */
    bool has_effect;
    int64_t toleration_seconds; /* -1 when absent */
};

struct ks_device {
    uint32_t name; /* interned */
    uint32_t nattributes;
    struct ks_device_attribute *attributes;
    uint32_t ncapacity;
    struct ks_device_capacity *capacity;
    uint32_t nconsumes;
    struct ks_counter_consumption *consumes;
    /* per-device node selection (the slice's perDeviceNodeSelection) */
    uint32_t node_name; /* interned; KS_ID_NONE when absent */
    struct ks_node_selector *node_selector;
    bool all_nodes;
    uint32_t ntaints;
    struct ks_device_taint *taints;
    bool binds_to_node;
    uint32_t nbinding_conditions, nbinding_failure_conditions;
    const char **binding_conditions, **binding_failure_conditions;
    bool has_allow_multiple; /* allowMultipleAllocations given */
    bool allow_multiple;     /* its value */
};

/* ---- DeviceClass ---------------------------------------------------------------------------- */

/* An opaque device configuration: a driver and its parameters as JSON text. */
struct ks_opaque_config {
    const char *driver;
    const char *parameters; /* the JSON text of the parameters object */
};

struct ks_device_class {
    struct ks_object_meta meta;
    uint32_t name; /* interned meta.name */
    uint32_t nselectors;
    const char **selectors; /* spec.selectors[].cel.expression */
    int *selector_lines;    /* the source line of each expression (0: not from a file) */
    uint32_t nconfig;
    struct ks_opaque_config *config;    /* spec.config[].opaque */
    const char *extended_resource_name; /* NULL when absent */
    struct ks_arena arena;
};

/* ---- ResourceSlice -------------------------------------------------------------------------- */

struct ks_resource_slice {
    struct ks_object_meta meta;
    uint32_t driver;     /* interned */
    uint32_t pool;       /* interned pool name */
    int64_t generation;  /* spec.pool.generation */
    int64_t slice_count; /* spec.pool.resourceSliceCount */
    uint32_t node_name;  /* interned; KS_ID_NONE when absent */
    struct ks_node_selector *node_selector;
    bool all_nodes;
    bool per_device_node_selection;
    uint32_t ndevices;
    struct ks_device *devices;
    uint32_t ncounter_sets;
    struct ks_counter_set *counter_sets; /* spec.sharedCounters */
    struct ks_arena arena;
};

/* ---- ResourceClaim -------------------------------------------------------------------------- */

enum ks_allocation_mode {
    KS_ALLOC_EXACT_COUNT,
    KS_ALLOC_ALL,
    KS_ALLOC_OTHER, /* a mode this version does not know: the allocator refuses it */
};

/* What ExactDeviceRequest and DeviceSubRequest share. */
struct ks_device_request_spec {
    const char *name;
    const char *device_class_name;
    uint32_t nselectors;
    const char **selectors; /* CEL expressions */
    int *selector_lines;    /* the source line of each expression (0: not from a file) */
    enum ks_allocation_mode mode;
    const char *mode_text;
    int64_t count;
    bool has_admin_access, admin_access; /* adminAccess (only an exact request has it) */
    uint32_t ntolerations;
    struct ks_device_toleration *tolerations;
    uint32_t ncapacity_requests; /* capacity.requests (DRAConsumableCapacity) */
    struct ks_named_quantity *capacity_requests;
    bool has_capacity;
};

struct ks_device_request {
    const char *name;
    bool exact;                         /* spec.devices.requests[].exactly is set */
    struct ks_device_request_spec spec; /* when exact */
    uint32_t nsubrequests;              /* firstAvailable */
    struct ks_device_request_spec *subrequests;
};

struct ks_device_constraint {
    uint32_t nrequests;
    const char **requests;       /* empty: every request */
    uint32_t match_attribute;    /* interned fully qualified name, KS_ID_NONE when absent */
    uint32_t distinct_attribute; /* KS_ID_NONE when absent */
};

/* spec.devices.config[] of a claim: the requests it names (empty: all) and its opaque config. */
struct ks_claim_config {
    uint32_t nrequests;
    const char **requests;
    struct ks_opaque_config opaque;
};

struct ks_device_claim {
    uint32_t nrequests;
    struct ks_device_request *requests;
    uint32_t nconstraints;
    struct ks_device_constraint *constraints;
    uint32_t nconfig;
    struct ks_claim_config *config;
};

/* One device of an allocation result. */
struct ks_device_result {
    const char *request;           /* "req" or "req/subreq" */
    uint32_t driver, pool, device; /* interned */
    bool has_admin_access, admin_access;
    uint32_t ntolerations;
    struct ks_device_toleration *tolerations;
    const char *share_id; /* NULL when absent */
    uint32_t nconsumed;
    struct ks_named_quantity *consumed; /* consumedCapacity */
    uint32_t nbinding_conditions, nbinding_failure_conditions;
    const char **binding_conditions, **binding_failure_conditions;
};

/* status.allocation.devices.config[]. */
struct ks_allocation_config {
    bool from_class; /* source FromClass (else FromClaim) */
    uint32_t nrequests;
    const char **requests;
    struct ks_opaque_config opaque;
};

struct ks_allocation {
    uint32_t nresults;
    struct ks_device_result *results;
    uint32_t nconfig;
    struct ks_allocation_config *config;
    struct ks_node_selector *node_selector; /* NULL: usable everywhere */
    int64_t allocation_time;                /* KS_TIME_NONE when absent */
};

/* status.reservedFor[]: a consumer of the claim. */
struct ks_claim_consumer {
    const char *api_group, *resource, *name, *uid;
};

/* status.devices[]: a device's status conditions (for binding conditions). */
struct ks_device_status {
    uint32_t driver, pool, device; /* interned */
    const char *share_id;
    uint32_t nconditions;
    struct ks_pod_condition *conditions; /* type, status, reason (message kept in reason's place: none) */
};

struct ks_resource_claim {
    struct ks_object_meta meta;
    struct ks_device_claim spec;
    struct ks_allocation *allocation; /* status.allocation, NULL when not allocated */
    uint32_t nreserved;
    struct ks_claim_consumer *reserved; /* status.reservedFor */
    uint32_t ndevice_status;
    struct ks_device_status *device_status;
    uint32_t nfinalizers;
    const char **finalizers;
    struct ks_arena arena;
};

/* ---- ResourceClaimTemplate ------------------------------------------------------------------ */

struct ks_resource_claim_template {
    struct ks_object_meta meta;
    struct ks_labels claim_labels; /* spec.metadata.labels of the claims it makes */
    struct ks_annotations claim_annotations;
    struct ks_device_claim spec; /* spec.spec.devices */
    struct ks_arena arena;
};

/* The upper bounds the API validates (resource.k8s.io/v1 constants). */
#define KS_DRA_ALLOCATION_RESULTS_MAX 32  /* AllocationResultsMaxSize */
#define KS_DRA_RESERVED_FOR_MAX       256 /* ResourceClaimReservedForMaxSize */

#endif
