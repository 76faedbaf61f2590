/*
 * nominator.h - pods nominated to nodes by preemption (upstream's nominator in
 * backend/queue/nominator.go): a preemptor waits for its victims to leave, and until it
 * binds, the node's Filter accounts for it when higher- or equal-priority pods are
 * scheduled (RunFilterPluginsWithNominatedPods), and preemption weighs it.
 *
 * Each nomination holds a reference to its pod (ksched/api.h). Lookups by pod and by node
 * cost O(1) expected (plus the answer). Context: any thread; one mutex guards the table. Callers on the
 * per-node path check ks_nominator_count() first, which is a relaxed load, so an empty nominator costs
 * nothing.
 */
#ifndef KSCHED_NOMINATOR_H
#define KSCHED_NOMINATOR_H

#include <stdint.h>

#include "ksched/api_types.h"

struct ks_nominator;

int ks_nominator_create(struct ks_nominator **out);

/* ks_nominator_destroy - drop every nomination. Accepts NULL. */
void ks_nominator_destroy(struct ks_nominator *n);

/* ks_nominator_add - nominate @pod (namespace/name) to @node, replacing an earlier nomination. 0 or -ENOMEM.
 */
int ks_nominator_add(struct ks_nominator *n, const struct ks_pod *pod, uint32_t node);

/* ks_nominator_remove - forget @pod's nomination, if any (DeleteNominatedPodIfExists). */
void ks_nominator_remove(struct ks_nominator *n, const struct ks_pod *pod);

/* ks_nominator_node - the node @pod is nominated to, KS_ID_EMPTY when none. */
uint32_t ks_nominator_node(struct ks_nominator *n, const struct ks_pod *pod);

/*
 * ks_nominator_pods - the pods nominated to @node, in nomination order: up to @max of
 * them into @out, each with a reference the caller drops (ks_pod_put). Returns how many
 * are nominated there (which may exceed @max).
 */
uint32_t ks_nominator_pods(struct ks_nominator *n, uint32_t node, const struct ks_pod **out, uint32_t max);

/*
 * ks_nominator_list - every nomination in nomination order: up to @max pods into @pods
 * (each with a reference the caller drops) and their nodes into @nodes. Returns how many
 * there are (which may exceed @max).
 */
uint32_t ks_nominator_list(struct ks_nominator *n, const struct ks_pod **pods, uint32_t *nodes, uint32_t max);

/*
 * ks_nominator_node_version - a value that changes whenever the pods nominated to @node
 * change and repeats no earlier value while any is nominated there; 0 when none is. Two
 * equal readings mean the same nominations, in the same order.
 */
uint64_t ks_nominator_node_version(struct ks_nominator *n, uint32_t node);

/* ks_nominator_node_versions - the versions of @k nodes at once (one lock): out[i] of nodes[i]. */
void ks_nominator_node_versions(struct ks_nominator *n, const uint32_t *nodes, uint32_t k, uint64_t *out);

/*
 * ks_nominator_changed - the nodes whose nominations changed since *@cursor (0 for the
 * nominator's creation), one entry per change, oldest first: up to @max into @out, *@cursor
 * moved past them (call again while it returns @max). -1 when changes since *@cursor were
 * dropped (too many): every node may have changed; *@cursor is then current.
 */
int64_t ks_nominator_changed(struct ks_nominator *n, uint64_t *cursor, uint32_t *out, uint32_t max);

/* ks_nominator_count - nominated pods in all (a relaxed read, for the fast path). */
uint32_t ks_nominator_count(const struct ks_nominator *n);

#endif
