/*
 * loader.h - Kubernetes manifests (multi-document YAML, `kind: List`) into objects.
 *
 * Loading is all or nothing: every file is parsed and every object decoded and checked
 * (kinds, duplicates, references between objects) before anything is handed out; the
 * first failure is one struct ks_error naming file, line and field, and no object
 * survives it.
 */
#ifndef KSCHED_LOADER_H
#define KSCHED_LOADER_H

#include <stdatomic.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/error.h"
#include "ksched/dra_types.h"
#include "ksched/field_check.h"
#include "ksched/workload_types.h"

struct ks_yaml_node;

/* kind, apiVersions accepted (space separated), decoder/destructor suffix */
#define KS_KIND_MAP(X)                                                                                       \
    X(NODE, "Node", "v1", struct ks_node, node)                                                              \
    X(POD, "Pod", "v1", struct ks_pod, pod)                                                                  \
    X(PV, "PersistentVolume", "v1", struct ks_persistent_volume, pv)                                         \
    X(PVC, "PersistentVolumeClaim", "v1", struct ks_persistent_volume_claim, pvc)                            \
    X(STORAGE_CLASS, "StorageClass", "storage.k8s.io/v1 storage.k8s.io/v1beta1", struct ks_storage_class,    \
      storage_class)                                                                                         \
    X(CSI_NODE, "CSINode", "storage.k8s.io/v1 storage.k8s.io/v1beta1", struct ks_csi_node, csi_node)         \
    X(PDB, "PodDisruptionBudget", "policy/v1 policy/v1beta1", struct ks_pod_disruption_budget, pdb)          \
    X(NAMESPACE, "Namespace", "v1", struct ks_namespace, namespace)                                          \
    X(PRIORITY_CLASS, "PriorityClass", "scheduling.k8s.io/v1 scheduling.k8s.io/v1beta1",                     \
      struct ks_priority_class, priority_class)                                                              \
    X(SERVICE, "Service", "v1", struct ks_service, service)                                                  \
    X(REPLICATION_CONTROLLER, "ReplicationController", "v1", struct ks_replication_controller,               \
      replication_controller)                                                                                \
    X(REPLICA_SET, "ReplicaSet", "apps/v1", struct ks_replica_set, replica_set)                              \
    X(STATEFUL_SET, "StatefulSet", "apps/v1", struct ks_stateful_set, stateful_set)                          \
    X(DEVICE_CLASS, "DeviceClass", "resource.k8s.io/v1", struct ks_device_class, device_class)               \
    X(RESOURCE_SLICE, "ResourceSlice", "resource.k8s.io/v1", struct ks_resource_slice, resource_slice)       \
    X(RESOURCE_CLAIM, "ResourceClaim", "resource.k8s.io/v1", struct ks_resource_claim, resource_claim)       \
    X(RESOURCE_CLAIM_TEMPLATE, "ResourceClaimTemplate", "resource.k8s.io/v1",                                \
      struct ks_resource_claim_template, resource_claim_template)                                            \
    X(POD_GROUP, "PodGroup", "scheduling.k8s.io/v1beta1", struct ks_pod_group, pod_group)                    \
    X(WORKLOAD, "Workload", "scheduling.k8s.io/v1beta1", struct ks_workload, workload)

enum ks_kind {
#define KS_X(id, kind, versions, type, suffix) KS_KIND_##id,
    KS_KIND_MAP(KS_X)
#undef KS_X
        KS_KIND_COUNT
};

struct ks_objvec {
    uint32_t n, cap;
    void **items;
};

/*
 * Objects by kind, in input order. Owned: ks_objects_destroy() frees every object.
 *
 * gen[kind] counts the changes made to of[kind] after the set was handed to a scheduler:
 * whoever changes a vector (ksched serve's intake, serve/serve_intake.c, applying informer
 * events on the scheduling thread from the scheduler's on_cycle hook) bumps the kind's
 * counter in the same step, on the same thread. Plugins that index a kind compare the
 * counter with the one their index was built at, on the scheduling thread (PreFilter), and
 * rebuild when it moved; no other thread may read or write it. The loader sets 0 and
 * nothing else changes it, so `ksched schedule` and bench never rebuild.
 */
struct ks_objects {
    struct ks_objvec of[KS_KIND_COUNT];
    uint64_t gen[KS_KIND_COUNT];
    /*
     * queued[kind] counts the changes of a kind announced before they reach of[kind] (ksched
     * serve's intake bumps it, through ks_objects_note_queued(), when it queues a change and
     * before it offers the change's event to the queue). Unlike gen, any thread may read it
     * (atomically): a plugin whose index was built at an older count knows, from any thread,
     * that its index may lack what an event is about. The loader sets 0.
     */
    _Atomic uint64_t queued[KS_KIND_COUNT];
    /* what the load noticed about the input that is not an error, one line each without a
     * prefix or newline, for the user (ksched schedule prints them on standard error): owned */
    uint32_t nnotes;
    char **notes;
    /* unknown and duplicate fields found under KS_VALIDATE_WARN, in input order, each
     * "FILE:LINE: FIELD: MESSAGE": nwarnings counts them all, the first KS_LOAD_MAX_WARNINGS
     * are kept (owned) */
    uint32_t nwarnings;
    char **warnings;
};

#define KS_LOAD_MAX_WARNINGS 20

/* Typed views of one kind's objects. */
#define ks_objects_nodes(o)       ((struct ks_node **)(o)->of[KS_KIND_NODE].items)
#define ks_objects_pods(o)        ((struct ks_pod **)(o)->of[KS_KIND_POD].items)
#define ks_objects_count(o, kind) ((o)->of[KS_KIND_##kind].n)

/* ks_kind_name - "Node", "Pod", ... */
const char *ks_kind_name(enum ks_kind kind);

/*
 * ks_objects_load - load @n files into a new object set ("-": standard input, named STDIN in
 * errors, as ks_yaml_parse_file).
 * Resolves each pending pod's priority from its PriorityClass when spec.priority is absent
 * (system-cluster-critical and system-node-critical are built in; an unknown class is an
 * error, as the Priority admission plugin rejects such a pod). A pending pod's claim the
 * input lacks is no error: the pod is the scheduler's to reject (VolumeBinding). A bound
 * pod may name objects the input lacks (claims, a PriorityClass: its priority is then 0):
 * they are summed up in one line of (*out)->notes. Succeeded and Failed pods are not checked.
 * A List's objects are decoded as they are parsed (ks_yaml_parse_each), so a dump never
 * stands in memory whole. Returns 0 and *out, or -EINVAL with @err set / -ENOMEM; on
 * failure *out is NULL and nothing is leaked.
 */
int ks_objects_load(const char *const *paths, int n, struct ks_objects **out, struct ks_error *err);

/*
 * ks_objects_load_validate - ks_objects_load() under a --validate mode (ks_objects_load()
 * is KS_VALIDATE_WARN). Every decoded object's fields, and a list's own, are checked
 * against the Kubernetes API schema (include/ksched/field_check.h): unknown and duplicate
 * fields (a duplicate's later value wins) are (*out)->warnings, or with KS_VALIDATE_STRICT
 * the first is the load's error. Objects of other kinds are skipped when the Kubernetes
 * API serves their kind at their apiVersion, or their group is not a built-in one (custom
 * resources), and summed up in one line of (*out)->notes; any other kind, or a built-in
 * kind at an apiVersion that does not serve it, is an error.
 */
int ks_objects_load_validate(const char *const *paths, int n, enum ks_validation validation,
                             struct ks_objects **out, struct ks_error *err);

/*
 * ks_object_check_fn - a check of each decoded object that needs more than the loader
 * knows (the CEL compilation of DRA device selectors, ksched/internal/dra_check.h): 0, or a negative
 * errno with @err set (its field named after @prefix, "" or "items[N]." inside a List).
 * ks_objects_load_checked - ks_objects_load_validate() that runs @check, with @ctx, on
 * every object it decodes, after the object's own decoding and before it joins the set.
 */
typedef int (*ks_object_check_fn)(void *ctx, const char *file, const char *prefix, enum ks_kind kind,
                                  const void *obj, struct ks_error *err);
int ks_objects_load_checked(const char *const *paths, int n, enum ks_validation validation,
                            ks_object_check_fn check, void *ctx, struct ks_objects **out,
                            struct ks_error *err);

/*
 * ks_objects_load_buffer - ks_objects_load() of one file's text: the @len bytes at @buf,
 * named @file in errors (which name its line and field as for a file). Same contract.
 */
int ks_objects_load_buffer(const char *file, const char *buf, size_t len, struct ks_objects **out,
                           struct ks_error *err);

/*
 * ks_object_decode - one object document @doc (a map naming its apiVersion and kind) of any
 * kind in KS_KIND_MAP, decoded as the loader decodes each document, without the checks
 * across objects (an API object from a server, a watch event's object). Returns 0 with
 * *kind and *out (free with ks_object_destroy()), or -EINVAL with @err set (file, line,
 * field) / -ENOMEM; on failure *out is NULL. Any thread; allocates.
 */
int ks_object_decode(const char *file, const struct ks_yaml_node *doc, enum ks_kind *kind, void **out,
                     struct ks_error *err);

/*
 * ks_object_decode_as - @doc decoded as an object of @kind whatever it names (the items of
 * an API server's list carry no apiVersion or kind). Same contract as ks_object_decode().
 */
int ks_object_decode_as(const char *file, const struct ks_yaml_node *doc, enum ks_kind kind, void **out,
                        struct ks_error *err);

/* ks_object_destroy - free an object of @kind from ks_object_decode() (a pod: drop its reference). NULL ok.
 */
void ks_object_destroy(enum ks_kind kind, void *obj);

/* ks_objects_note_queued - count a change of @kind announced for @objs (see queued). Any thread. */
void ks_objects_note_queued(struct ks_objects *objs, enum ks_kind kind);

/* ks_objects_queued - the count of announced changes of @kind (see queued). Any thread. */
uint64_t ks_objects_queued(const struct ks_objects *objs, enum ks_kind kind);

/*
 * ks_objects_push - append @obj (of @kind, owned by the set from now on) to @objs, as
 * something acting for the cluster made it (a controller's object). No index or duplicate
 * check. 0, -ENOMEM (the caller keeps @obj). Load time, before a scheduler reads the set.
 */
int ks_objects_push(struct ks_objects *objs, enum ks_kind kind, void *obj);

/* ks_objects_destroy - free the set and every object in it (pods: drop its reference). Accepts NULL. */
void ks_objects_destroy(struct ks_objects *objs);

#endif
