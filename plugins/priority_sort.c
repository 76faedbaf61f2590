/*
 * priority_sort.c - the PrioritySort plugin: orders the scheduling queue by pod priority, then by
 * the time a pod entered the queue (QueueSort).
 *
 * Mirrors pkg/scheduler/framework/plugins/queuesort/priority_sort.go: a pod goes first when
 * its priority is higher, or equal with an earlier queue timestamp. The priority is the
 * one the loader resolved (spec.priority, else the PriorityClass value, else 0, as
 * corev1helpers.PodPriority sees it after admission). It takes no args and keeps no
 * state.
 */
#include "ksched/queue_types.h"
#include "ksched/registry.h"

/* less - Context: any thread, under the queue's rules; pure. */
static bool less(void *self, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    int32_t pa = a->pod->priority, pb = b->pod->priority;

    (void)self;
    return pa > pb || (pa == pb && a->timestamp_ns < b->timestamp_ns);
}

const struct ks_plugin ks_plugin_priority_sort = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "PrioritySort",
    .less = less,
};
