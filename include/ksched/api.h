/*
 * api.h - functions over the Kubernetes objects of api_types.h.
 *
 * Matching helpers with kube-scheduler's exact semantics (label selectors, node selector
 * terms, tolerations, effective pod requests) and the destructors of loaded objects.
 * Context: every function here is pure over immutable objects, allocation-free unless it
 * says otherwise, and safe from any thread (hot-path callers included).
 */
#ifndef KSCHED_API_H
#define KSCHED_API_H

#include <stdbool.h>
#include <stddef.h>

#include "ksched/api_types.h"

/* Well-known resource names, interned by ks_api_init(). */
struct ks_wellknown {
    uint32_t cpu, memory, ephemeral_storage, pods;
    uint32_t metadata_name;     /* "metadata.name", the only node selector field */
    uint32_t default_scheduler; /* "default-scheduler" */
    uint32_t hostname_label;    /* "kubernetes.io/hostname" */
    uint32_t zone_label;        /* "topology.kubernetes.io/zone" */
    uint32_t region_label;      /* "topology.kubernetes.io/region" */
};
extern struct ks_wellknown ks_wk;

/* ks_api_init - intern the well-known names; idempotent, call once at start-up. Returns 0 or -ENOMEM. */
int ks_api_init(void);

/* ---- names of enum values (X-macro tables) ---- */
const char *ks_selector_op_name(enum ks_selector_op op);
const char *ks_taint_effect_name(enum ks_taint_effect e);
const char *ks_pod_phase_name(enum ks_pod_phase p);

/* ---- labels ---- */

/* ks_labels_get - the value id of @key in @labels; false when absent. Binary search. */
bool ks_labels_get(const struct ks_labels *labels, uint32_t key, uint32_t *value);

/* ks_labels_equal - the same keys with the same values (both sorted by key). */
bool ks_labels_equal(const struct ks_labels *a, const struct ks_labels *b);

/*
 * ks_label_selector_matches - @sel matches @labels, as labels.Selector.Matches().
 * A NULL @sel (nil selector) matches nothing; an empty one matches everything.
 */
bool ks_label_selector_matches(const struct ks_label_selector *sel, const struct ks_labels *labels);

/*
 * ks_node_selector_term_matches - one term (ANDed expressions and fields) against a
 * node's labels and interned name. A term with no expressions and no fields matches
 * nothing, as upstream.
 */
bool ks_node_selector_term_matches(const struct ks_node_selector_term *term, const struct ks_labels *labels,
                                   uint32_t node_name);

/* ks_node_selector_matches - any term matches (a selector with no terms matches nothing). */
bool ks_node_selector_matches(const struct ks_node_selector *sel, const struct ks_labels *labels,
                              uint32_t node_name);

/* ---- taints and tolerations ---- */

/* ks_node_taints_equal - @a and @b have the same taints (key, value, effect) in the same order. */
bool ks_node_taints_equal(const struct ks_node *a, const struct ks_node *b);

/* ks_toleration_tolerates - @tol tolerates @taint, as v1.Toleration.ToleratesTaint(). */
bool ks_toleration_tolerates(const struct ks_toleration *tol, const struct ks_taint *taint);

/*
 * ks_find_untolerated_taint - the first taint of @taints whose effect passes @effect_filter
 * (NULL: all) that no toleration tolerates, or NULL, as v1helper.FindMatchingUntoleratedTaint.
 */
const struct ks_taint *ks_find_untolerated_taint(const struct ks_taint *taints, uint32_t ntaints,
                                                 const struct ks_toleration *tols, uint32_t ntols,
                                                 bool (*effect_filter)(enum ks_taint_effect));

/* ---- resources ---- */

/*
 * ks_is_extended_resource_name - v1helper.IsExtendedResourceName: a domain-prefixed name
 * outside kubernetes.io whose quota form ("requests.NAME") is a qualified name.
 */
bool ks_is_extended_resource_name(const char *s);

/* ks_resource_list_get - the scaled value of @name in @list, 0 when absent. */
int64_t ks_resource_list_get(const struct ks_resource_list *list, uint32_t name);

/*
 * ks_pod_finish - derive the pod's cached fields after decoding: effective requests
 * (containers summed, init containers and sidecars as upstream PodRequests, plus
 * overhead) and the non-zero cpu/memory requests used for scoring (100m / 200Mi for a
 * container that requests none). Allocates the scalar list in the pod's arena.
 * Returns 0 or -ENOMEM.
 */
int ks_pod_finish(struct ks_pod *pod);

/* ks_node_finish - derive node->alloc from node->allocatable. Returns 0 or -ENOMEM. */
int ks_node_finish(struct ks_node *node);

/*
 * Pods are shared between the loader, the queue, the cache and published snapshots:
 * each holder owns one reference. ks_pod_get adds one and returns @pod; ks_pod_put drops
 * one and destroys the pod with the last. Atomic: any thread. Accept NULL.
 */
struct ks_pod *ks_pod_get(const struct ks_pod *pod);
void ks_pod_put(const struct ks_pod *pod);

/*
 * ks_pod_same_name - whether @a and @b are objects of one pod by namespace/name (a pod
 * without a name is only itself); ks_pod_name_hash - a hash of that key.
 */
bool ks_pod_same_name(const struct ks_pod *a, const struct ks_pod *b);
uint64_t ks_pod_name_hash(const struct ks_pod *pod);

/*
 * Host ports (util.GetHostPorts, HostPortInfo.CheckConflict). A pod's host ports are the
 * container ports with a hostPort of its restartable init containers, then of its
 * containers; an empty hostIP is @any_ip (the interned "0.0.0.0").
 *   ks_pod_host_ports - them into @out, or only counted when @out is NULL; their count.
 *   ks_host_ports_next - them one at a time: @it starts zeroed with pod and any_ip set;
 *     false after the last. Allocation-free.
 *   ks_host_port_conflict - whether @a and @b collide: the same port and protocol, and the
 *     same address or either of them @any_ip.
 */
struct ks_host_port_iter {
    const struct ks_pod *pod;
    uint32_t any_ip;
    uint32_t part, container, port; /* where the next one is looked for */
};
uint32_t ks_pod_host_ports(const struct ks_pod *pod, uint32_t any_ip, struct ks_host_port *out);
bool ks_host_ports_next(struct ks_host_port_iter *it, struct ks_host_port *out);
bool ks_host_port_conflict(const struct ks_host_port *a, const struct ks_host_port *b, uint32_t any_ip);

/*
 * ks_pod_identity - the uid that stands for @pod where objects refer to it by uid (owner
 * references, a claim's reservedFor): its own, or "namespace/name" for a manifest pod
 * without one. Any thread.
 */
void ks_pod_identity(const struct ks_pod *pod, char *buf, size_t len);

/* ---- destructors (each accepts NULL) ---- */
void ks_pod_destroy(struct ks_pod *pod); /* ignores references: for the pod's only owner */
void ks_node_destroy(struct ks_node *node);
void ks_pv_destroy(struct ks_persistent_volume *pv);
void ks_pvc_destroy(struct ks_persistent_volume_claim *pvc);
void ks_storage_class_destroy(struct ks_storage_class *sc);
void ks_csi_node_destroy(struct ks_csi_node *cn);
void ks_pdb_destroy(struct ks_pod_disruption_budget *pdb);
void ks_namespace_destroy(struct ks_namespace *ns);
void ks_priority_class_destroy(struct ks_priority_class *pc);
void ks_service_destroy(struct ks_service *svc);
void ks_replication_controller_destroy(struct ks_replication_controller *rc);
void ks_replica_set_destroy(struct ks_replica_set *rs);
void ks_stateful_set_destroy(struct ks_stateful_set *ss);
struct ks_device_class;
struct ks_resource_slice;
struct ks_resource_claim;
struct ks_resource_claim_template;
void ks_device_class_destroy(struct ks_device_class *c);
void ks_resource_slice_destroy(struct ks_resource_slice *s);
void ks_resource_claim_destroy(struct ks_resource_claim *c);
void ks_resource_claim_template_destroy(struct ks_resource_claim_template *t);
struct ks_pod_group;
struct ks_workload;
void ks_pod_group_destroy(struct ks_pod_group *pg);
void ks_workload_destroy(struct ks_workload *w);

#endif
