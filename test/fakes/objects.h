/*
 * objects.h - build Kubernetes objects for tests from short C strings.
 *
 * Every builder interns what it is given, keeps arrays sorted the way api_types.h
 * requires, allocates in the owning object's arena (or the arena passed in), and aborts
 * the test process on malformed input or out of memory, so call sites need no checks.
 * ks_api_init() is called by the pod and node constructors; call it yourself before
 * using the arena-only builders.
 *
 * Small languages used below:
 *   labels     "k=v,k2=v2"               ("" or NULL: no labels; "k=" gives k the empty value)
 *   resources  "cpu=500m,memory=1Gi,example.com/gpu=2"  quantities as Kubernetes writes
 *              them; cpu is stored in millicores, everything else in units, rounded up
 *   selector   labels.Parse syntax: "a in (x,y), b notin (z), c, !d, e=v, f!=v, g>3, h<7"
 *              ("" : empty selector, matches everything; NULL: nil selector)
 *   taints     "key=value:NoSchedule,key2:NoExecute"
 *
 * Context: test code only; single-threaded use per object.
 */
#ifndef KSCHED_TEST_FAKES_OBJECTS_H
#define KSCHED_TEST_FAKES_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api.h"

/* ---- pieces, allocated in @a ---- */

/* ks_fake_labels - a sorted label set from "k=v,..."; duplicate keys abort. */
struct ks_labels ks_fake_labels(struct ks_arena *a, const char *spec);

/* ks_fake_quantity - @q ("500m", "1Gi", "2") scaled for resource @name (millicores for cpu). */
int64_t ks_fake_quantity(uint32_t name, const char *q);

/* ks_fake_resource_list - a sorted resource list from "name=quantity,...". */
struct ks_resource_list ks_fake_resource_list(struct ks_arena *a, const char *spec);

/* ks_fake_requirements - parse a selector string into @out (allocated in @a); returns the count. */
uint32_t ks_fake_requirements(struct ks_arena *a, const char *spec, struct ks_requirement **out);

/* ks_fake_selector - a label selector from selector syntax; NULL @spec gives a NULL (nil) selector. */
struct ks_label_selector *ks_fake_selector(struct ks_arena *a, const char *spec);

/* One node selector term as strings: label expressions and field expressions (either may be NULL). */
struct ks_fake_term {
    const char *exprs;
    const char *fields; /* e.g. "metadata.name in (node-1)" */
};

/* ks_fake_term - one v1.NodeSelectorTerm. */
struct ks_node_selector_term ks_fake_term(struct ks_arena *a, const char *exprs, const char *fields);

/* ks_fake_node_selector - a v1.NodeSelector with @n terms (0 terms is allowed). */
struct ks_node_selector *ks_fake_node_selector(struct ks_arena *a, size_t n,
                                               const struct ks_fake_term *terms);

/* KS_FAKE_NODE_SELECTOR(a, {"foo in (bar)", NULL}, {NULL, "metadata.name=n1"}) */
#define KS_FAKE_NODE_SELECTOR(a, ...)                                                                        \
    ks_fake_node_selector((a), sizeof((struct ks_fake_term[]){__VA_ARGS__}) / sizeof(struct ks_fake_term),   \
                          (struct ks_fake_term[]){__VA_ARGS__})

/* ks_fake_taint - one taint from "key=value:Effect" or "key:Effect". */
struct ks_taint ks_fake_taint(const char *spec);

/*
 * ks_fake_toleration - a toleration from its YAML strings: @op "" or "Equal" or "Exists",
 * @effect "" (all effects) or an effect name; no tolerationSeconds.
 */
struct ks_toleration ks_fake_toleration(const char *key, const char *op, const char *value,
                                        const char *effect);

/* ---- pods (free with ks_pod_destroy()) ---- */

/* ks_fake_pod - a pending, unbound pod with API defaults and no containers. */
struct ks_pod *ks_fake_pod(const char *namespace_name, const char *name);

/* ks_fake_pod_labels - replace the pod's labels. */
void ks_fake_pod_labels(struct ks_pod *pod, const char *labels);

/*
 * ks_fake_container / ks_fake_init_container - append a container with @requests (resource
 * syntax, NULL for none). The pointer returned is valid until the next append to the same
 * array. @sidecar makes the init container restartable (restartPolicy: Always).
 */
struct ks_container *ks_fake_container(struct ks_pod *pod, const char *requests);
struct ks_container *ks_fake_init_container(struct ks_pod *pod, const char *requests, bool sidecar);

/* ks_fake_pod_overhead - set spec.overhead. */
void ks_fake_pod_overhead(struct ks_pod *pod, const char *resources);

/* ks_fake_pod_toleration - append one toleration (see ks_fake_toleration()). */
void ks_fake_pod_toleration(struct ks_pod *pod, struct ks_toleration tol);

/* ks_fake_pod_done - ks_pod_finish(), aborting on failure; returns @pod. */
struct ks_pod *ks_fake_pod_done(struct ks_pod *pod);

/* ---- nodes (free with ks_node_destroy()) ---- */

/* ks_fake_node - a schedulable node with @labels and no allocatable resources. */
struct ks_node *ks_fake_node(const char *name, const char *labels);

/* ks_fake_node_allocatable - set capacity and allocatable, then ks_node_finish(). */
void ks_fake_node_allocatable(struct ks_node *node, const char *resources);

/* ks_fake_node_taints - replace the node's taints (taint syntax). */
void ks_fake_node_taints(struct ks_node *node, const char *spec);

#endif
