/*
 * queue_types.h - a pod as the scheduling queue holds it (upstream's QueuedPodInfo).
 */
#ifndef KSCHED_QUEUE_TYPES_H
#define KSCHED_QUEUE_TYPES_H

#include <stdint.h>

#include "ksched/api_types.h"

struct ks_queued_pod {
    const struct ks_pod *pod;
    int64_t timestamp_ns;           /* when the pod was last added to the queue (QueueSort ties) */
    int64_t initial_attempt_ns;     /* first time it entered the queue, KS_TIME_NONE before */
    uint32_t attempts;              /* scheduling attempts so far */
    uint32_t unschedulable_plugins; /* bit per plugin index of the profile that rejected it */
};

#endif
