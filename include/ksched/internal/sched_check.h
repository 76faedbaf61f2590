/*
 * sched_check.h - invariant checks over a running scheduler: where every pod is, that
 * nothing is lost or held twice, that the cache and its snapshot agree, that nominations
 * belong to waiting pods. Used by `ksched soak` (bench/harness/soak_run.c), its TSan driver and
 * unit tests.
 *
 * A violation is reported as one line naming the invariant, the pod or node, and what
 * was expected against what was found; a struct ks_check_report counts every violation
 * and keeps the first few lines.
 *
 * Context: the checks read the queue, the cache and the nominator through their locks,
 * but they compare facts that only hold together at a quiescent point: the caller must
 * have stopped every thread that delivers events or runs scheduling cycles, and called
 * ks_sched_quiesce() so that no binding is in flight. The caller must be registered with
 * RCU and outside any read section.
 */
#ifndef KSCHED_SCHED_CHECK_H
#define KSCHED_SCHED_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"

struct ks_scheduler;

#define KS_CHECK_KEEP    8   /* violation lines a report keeps */
#define KS_CHECK_MSG_LEN 320 /* bytes per line */

struct ks_check_report {
    uint64_t nviolations;
    uint32_t nkept;
    char kept[KS_CHECK_KEEP][KS_CHECK_MSG_LEN];
};

/* ks_check_fail - count one violation and keep its line while there is room. Any thread (one per report). */
void ks_check_fail(struct ks_check_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Where a pod can be: one bit per place (a pod in two places sets two). */
enum ks_pod_place {
    KS_PLACE_BOUND = 1u << 0,         /* in the cache, confirmed */
    KS_PLACE_ASSUMED = 1u << 1,       /* in the cache, assumed (binding not finished) */
    KS_PLACE_ACTIVE = 1u << 2,        /* activeQ */
    KS_PLACE_BACKOFF = 1u << 3,       /* backoffQ */
    KS_PLACE_UNSCHEDULABLE = 1u << 4, /* among the unschedulable pods, not gated */
    KS_PLACE_GATED = 1u << 5,         /* among the unschedulable pods, held by PreEnqueue */
    KS_PLACE_IN_FLIGHT = 1u << 6,     /* popped: in a scheduling or binding cycle */
};

#define KS_PLACE_QUEUED                                                                                      \
    (KS_PLACE_ACTIVE | KS_PLACE_BACKOFF | KS_PLACE_UNSCHEDULABLE | KS_PLACE_GATED | KS_PLACE_IN_FLIGHT)

struct ks_pod_where {
    unsigned places;    /* enum ks_pod_place bits; 0: the scheduler does not know the pod */
    uint32_t node;      /* BOUND / ASSUMED: the node (interned), else KS_ID_NONE */
    uint32_t nominated; /* the nominator's node for it, KS_ID_EMPTY when none */
};

/* ks_sched_pod_where - every place the pod of @pod's namespace/name is in. */
void ks_sched_pod_where(struct ks_scheduler *s, const struct ks_pod *pod, struct ks_pod_where *out);

/* ks_pod_place_names - "bound+activeQ" for @places into @buf ("nowhere" for 0). */
const char *ks_pod_place_names(unsigned places, char *buf, uint32_t len);

/*
 * ks_sched_quiesce - wait until no binding is in flight. The caller has stopped the
 * scheduling thread (between cycles) and every event source.
 */
void ks_sched_quiesce(struct ks_scheduler *s);

/*
 * ks_sched_check_pod - one pod the caller knows. @expect 0 (the caller deleted it, or it
 * was preempted): it must be nowhere and nominated nowhere. Otherwise it must be in
 * exactly one place, and that place one of @expect (KS_PLACE_* bits: KS_PLACE_QUEUED for
 * a pod the caller knows pending, KS_PLACE_BOUND for one it knows bound); bound, on
 * @expect_node unless that is KS_ID_NONE; and a pod bound or assumed must not be
 * nominated. Violations go to @r. Quiescent point.
 */
void ks_sched_check_pod(struct ks_scheduler *s, const struct ks_pod *pod, unsigned expect,
                        uint32_t expect_node, struct ks_check_report *r);

/* Options of ks_sched_check. */
#define KS_SCHED_CHECK_FIT 0x1u /* also: no node's requested resources exceed its allocatable */

/*
 * ks_sched_check - the scheduler-wide invariants at a quiescent point: no binding in
 * flight and no pod in flight or assumed (a binding that failed was forgotten and its pod
 * requeued); the queue's own invariants (ks_queue_check); the cache's (ks_cache_check:
 * per-node aggregates equal the sums over their pods, the pod index, the assumed list),
 * the snapshot refreshed and equal to the cache node for node; every nomination belongs
 * to a pod waiting in the queue; and, when @live_pods is not UINT64_MAX, the queue and
 * the cache together hold exactly @live_pods pods (so with ks_sched_check_pod on every
 * live pod, nothing extra is held). Violations go to @r; returns how many were added.
 */
uint64_t ks_sched_check(struct ks_scheduler *s, unsigned flags, uint64_t live_pods,
                        struct ks_check_report *r);

#endif
