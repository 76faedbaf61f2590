/*
 * status_types.h - plugin result codes and statuses (framework/interface.go Code, Status).
 *
 * A plugin op returns an enum ks_code and, for anything but Success, fills the caller's
 * struct ks_status with up to KS_STATUS_MAX_REASONS reasons. Reasons are interned string
 * ids: a plugin interns its messages outside the per-node loop (at init, in PreFilter, or
 * when the cache builds a node's record), so reporting a failure on the hot path copies a
 * few integers and allocates nothing.
 */
#ifndef KSCHED_STATUS_TYPES_H
#define KSCHED_STATUS_TYPES_H

#include <stdint.h>

#define KS_CODE_MAP(X)                                                                                       \
    X(SUCCESS, "Success")                                                                                    \
    X(ERROR, "Error")                                                                                        \
    X(UNSCHEDULABLE, "Unschedulable")                                                                        \
    X(UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable")                                        \
    X(WAIT, "Wait")                                                                                          \
    X(SKIP, "Skip")                                                                                          \
    X(PENDING, "Pending")

enum ks_code {
#define KS_X(id, text) KS_##id,
    KS_CODE_MAP(KS_X)
#undef KS_X
        KS_CODE_COUNT
};

#define KS_STATUS_MAX_REASONS 8 /* pods, cpu, memory, ephemeral-storage and four extended resources */
#define KS_NO_PLUGIN          UINT16_MAX

struct ks_status {
    enum ks_code code;
    uint16_t plugin; /* index of the plugin that returned it in its profile (KS_NO_PLUGIN: none) */
    uint16_t nreasons;
    uint32_t reasons[KS_STATUS_MAX_REASONS]; /* interned messages */
};

#endif
