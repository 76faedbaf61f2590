/*
 * sched_check.c - scheduler-wide invariant checks (ksched/internal/sched_check.h).
 *
 * A pod the scheduler knows is in exactly one place: confirmed in the cache, assumed in
 * the cache, or in one part of the queue (activeQ, backoffQ, unschedulable, gated, in
 * flight). At a quiescent point (no cycle running, no binding in flight) nothing may be
 * in flight or assumed, since a binding cycle ends by confirming the pod (bind) or by
 * forgetting it and requeuing it (failure). A nomination (preemption) is held only by a
 * pod still waiting in the queue: it is cleared when the pod is assumed, bound by
 * someone else, or deleted. Cache-internal facts are ks_cache_check's; the queue's own
 * are ks_queue_check's.
 *
 * Context: see the header. Reads the scheduler's internals (scheduler_internal.h).
 */
#include "scheduler_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/sched_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ks_check_fail(struct ks_check_report *r, const char *fmt, ...)
{
    if (r->nkept < KS_CHECK_KEEP) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->kept[r->nkept++], KS_CHECK_MSG_LEN, fmt, ap);
        va_end(ap);
    }
    r->nviolations++;
}

static const char *const place_names[] = {"bound",         "assumed", "activeQ",  "backoffQ",
                                          "unschedulable", "gated",   "in flight"};

const char *ks_pod_place_names(unsigned places, char *buf, uint32_t len)
{
    uint32_t off = 0;
    buf[0] = '\0';
    if (!places) {
        snprintf(buf, len, "nowhere");
        return buf;
    }
    for (uint32_t i = 0; i < sizeof(place_names) / sizeof(place_names[0]); i++) {
        if ((places & (1u << i)) && off < len) {
            int w = snprintf(buf + off, len - off, "%s%s", off ? "+" : "", place_names[i]);
            off += w > 0 ? (uint32_t)w : 0;
        }
    }
    return buf;
}

static const char *nm(uint32_t id)
{
    if (id == KS_ID_NONE)
        return "(none)";
    const char *s = ks_intern_str(id);
    return s ? s : "?";
}

static const char *pod_name(const struct ks_pod *pod)
{
    return pod->meta.name ? pod->meta.name : "(unnamed)";
}

void ks_sched_pod_where(struct ks_scheduler *s, const struct ks_pod *pod, struct ks_pod_where *out)
{
    struct ks_queue_pod_info info;
    out->places = 0;
    bool assumed;
    out->node = ks_cache_pod_binding(s->cache, pod, &assumed);
    if (out->node != KS_ID_NONE)
        out->places |= assumed ? KS_PLACE_ASSUMED : KS_PLACE_BOUND;
    if (ks_queue_pod_info(s->queue, pod, &info)) {
        switch (info.where) {
        case KS_WHERE_ACTIVE:
            out->places |= KS_PLACE_ACTIVE;
            break;
        case KS_WHERE_BACKOFF:
            out->places |= KS_PLACE_BACKOFF;
            break;
        case KS_WHERE_UNSCHEDULABLE:
            out->places |= info.gated ? KS_PLACE_GATED : KS_PLACE_UNSCHEDULABLE;
            break;
        case KS_WHERE_IN_FLIGHT:
            out->places |= KS_PLACE_IN_FLIGHT;
            break;
        case KS_WHERE_NONE:
            break;
        }
    }
    out->nominated = ks_nominator_node(s->nominator, pod);
}

void ks_sched_quiesce(struct ks_scheduler *s)
{
    ks__wait_bindings(s);
}

void ks_sched_check_pod(struct ks_scheduler *s, const struct ks_pod *pod, unsigned expect,
                        uint32_t expect_node, struct ks_check_report *r)
{
    struct ks_pod_where w;
    char buf[96], want[96];
    ks_sched_pod_where(s, pod, &w);
    const char *places = ks_pod_place_names(w.places, buf, sizeof(buf));
    if (!expect) {
        if (w.places)
            ks_check_fail(r, "pod %s: deleted, expected nowhere, found %s%s%s", pod_name(pod), places,
                          w.node != KS_ID_NONE ? " on node " : "", w.node != KS_ID_NONE ? nm(w.node) : "");
        if (w.nominated != KS_ID_EMPTY)
            ks_check_fail(r, "pod %s: deleted, expected no nomination, still nominated to node %s",
                          pod_name(pod), nm(w.nominated));
        return;
    }
    const char *wanted =
        expect == KS_PLACE_QUEUED ? "queued" : ks_pod_place_names(expect, want, sizeof(want));
    if (!w.places) {
        ks_check_fail(r, "pod %s: lost: expected %s, found nowhere", pod_name(pod), wanted);
        return;
    }
    if (__builtin_popcount(w.places) != 1) {
        ks_check_fail(r, "pod %s: expected in exactly one place, found %s", pod_name(pod), places);
        return;
    }
    if (!(w.places & expect)) {
        ks_check_fail(r, "pod %s: expected %s, found %s%s%s", pod_name(pod), wanted, places,
                      w.node != KS_ID_NONE ? " on node " : "", w.node != KS_ID_NONE ? nm(w.node) : "");
        return;
    }
    if ((w.places & (KS_PLACE_BOUND | KS_PLACE_ASSUMED)) && expect_node != KS_ID_NONE &&
        w.node != expect_node)
        ks_check_fail(r, "pod %s: expected bound to node %s, found %s on node %s", pod_name(pod),
                      nm(expect_node), places, nm(w.node));
    if ((w.places & (KS_PLACE_BOUND | KS_PLACE_ASSUMED)) && w.nominated != KS_ID_EMPTY)
        ks_check_fail(r, "pod %s: %s on node %s, expected no nomination, still nominated to node %s",
                      pod_name(pod), places, nm(w.node), nm(w.nominated));
}

/* Every nomination belongs to a pod waiting in the queue (not bound, not assumed, not deleted). */
static void check_nominations(struct ks_scheduler *s, struct ks_check_report *r)
{
    uint32_t n = ks_nominator_count(s->nominator);
    const struct ks_pod **pods = n ? calloc(n, sizeof(*pods)) : NULL;
    uint32_t *nodes = n ? calloc(n, sizeof(*nodes)) : NULL;
    if (n && (!pods || !nodes)) {
        ks_check_fail(r, "nomination check: out of memory");
        goto out;
    }
    uint32_t got = ks_nominator_list(s->nominator, pods, nodes, n);
    if (got > n)
        got = n; /* the list grew: no one may nominate at a quiescent point */
    for (uint32_t i = 0; i < got; i++) {
        struct ks_pod_where w;
        char buf[96];
        ks_sched_pod_where(s, pods[i], &w);
        if (!(w.places & KS_PLACE_QUEUED) || (w.places & ~KS_PLACE_QUEUED))
            ks_check_fail(r, "pod %s: nominated to node %s, expected waiting in the queue, found %s",
                          pod_name(pods[i]), nm(nodes[i]), ks_pod_place_names(w.places, buf, sizeof(buf)));
        ks_pod_put(pods[i]);
    }
out:
    free(pods);
    free(nodes);
}

uint64_t ks_sched_check(struct ks_scheduler *s, unsigned flags, uint64_t live_pods, struct ks_check_report *r)
{
    uint64_t before = r->nviolations;
    char msg[KS_CHECK_MSG_LEN];

    ks_mutex_lock(&s->bind_lock);
    uint32_t in_flight = s->in_flight;
    ks_mutex_unlock(&s->bind_lock);
    if (in_flight)
        ks_check_fail(r, "bindings: expected none in flight at a quiescent point, found %u", in_flight);

    struct ks_queue_counts qc;
    ks_queue_count(s->queue, &qc);
    if (qc.in_flight)
        ks_check_fail(r, "queue: expected no pod in flight at a quiescent point, found %u", qc.in_flight);
    if (ks_queue_check(s->queue, msg, sizeof(msg)) < 0)
        ks_check_fail(r, "queue invariant: %s", msg);

    /* the snapshot after a refresh must equal the cache node for node */
    if (ks_cache_refresh(s->cache) < 0)
        ks_check_fail(r, "cache: refresh failed (out of memory)");
    uint32_t assumed = 0;
    unsigned cflags = KS_CACHE_CHECK_SNAPSHOT | ((flags & KS_SCHED_CHECK_FIT) ? KS_CACHE_CHECK_FIT : 0);
    uint32_t bad = ks_cache_check(s->cache, cflags, &assumed, msg, sizeof(msg));
    if (bad)
        ks_check_fail(r, "%s%s", msg, bad > 1 ? " (and more cache violations)" : "");
    if (assumed)
        ks_check_fail(r,
                      "cache: %u pods assumed with no binding in flight (a failed binding was not forgotten)",
                      assumed);

    check_nominations(s, r);

    if (live_pods != UINT64_MAX) {
        uint32_t cache_pods = 0;
        ks_cache_counts(s->cache, NULL, &cache_pods);
        uint64_t queued = (uint64_t)qc.active + qc.backoff + qc.unschedulable + qc.in_flight;
        if (queued + cache_pods != live_pods)
            ks_check_fail(r,
                          "pods: expected %llu live pods held, found %llu (%u in the cache, %llu queued: "
                          "%u active, %u backoff, %u unschedulable, %u in flight)",
                          (unsigned long long)live_pods, (unsigned long long)(queued + cache_pods),
                          cache_pods, (unsigned long long)queued, qc.active, qc.backoff, qc.unschedulable,
                          qc.in_flight);
    }
    return r->nviolations - before;
}
