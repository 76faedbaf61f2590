/*
 * plugin_batch.h - the batched Filter and Score ops (struct ks_plugin's filter_nodes and
 * score_nodes) defined from a plugin's per-node function.
 *
 * A per-node op behind a function pointer costs an indirect call per node and plugin, and
 * the plugin reloads its pod-wide values (requests, tolerations, the cycle state) for every
 * node. The batched op runs the same per-node function in a loop inside the plugin, where
 * the compiler inlines it and keeps those values in registers, so a block of nodes costs
 * one call per plugin. Results are exactly the per-node op's: each node still gets the
 * function's own statuses and scores.
 *
 * Usage, in the plugin's file:
 *
 *   static inline KS_ALWAYS_INLINE int filter_node(void *self, const struct ks_cycle_state *cs,
 *       const struct ks_pod *pod, const struct ks_node_snap *node, struct ks_status *st) { ... }
 *   KS_FILTER_OPS(filter, filter_nodes, filter_node)
 *   ... .filter = filter, .filter_nodes = filter_nodes ...
 *
 * and likewise KS_SCORE_OPS(score, score_nodes, score_node).
 *
 * Context: what filter / score allow (worker threads, allocation-free).
 */
#ifndef KSCHED_PLUGIN_BATCH_H
#define KSCHED_PLUGIN_BATCH_H

#include "ksched/plugin_types.h"
#include "ksched/status_types.h"

#define KS_ALWAYS_INLINE __attribute__((always_inline))

/* KS_FILTER_OPS - define `static int FILTER(...)` and `static uint32_t MANY(...)` from ONE. */
#define KS_FILTER_OPS(FILTER, MANY, ONE)                                                                     \
    static int FILTER(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,                 \
                      const struct ks_node_snap *node, struct ks_status *st)                                 \
    {                                                                                                        \
        return ONE(self, cs, pod, node, st);                                                                 \
    }                                                                                                        \
    static uint32_t MANY(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,              \
                         const struct ks_node_snap *const *nodes, uint32_t n, uint8_t *ok,                   \
                         struct ks_status *st)                                                               \
    {                                                                                                        \
        uint32_t failed = 0;                                                                                 \
        for (uint32_t i = 0; i < n; i++) {                                                                   \
            struct ks_status t;                                                                              \
            if (!ok[i])                                                                                      \
                continue;                                                                                    \
            t.nreasons = 0;                                                                                  \
            int code = ONE(self, cs, pod, nodes[i], &t);                                                     \
            if (__builtin_expect(code != KS_SUCCESS, 0)) {                                                   \
                t.code = (enum ks_code)code;                                                                 \
                t.plugin = KS_NO_PLUGIN;                                                                     \
                st[i] = t;                                                                                   \
                ok[i] = 0;                                                                                   \
                failed++;                                                                                    \
            }                                                                                                \
        }                                                                                                    \
        return failed;                                                                                       \
    }

/* KS_SCORE_OPS - define `static int SCORE(...)` and `static int MANY(...)` from ONE. */
#define KS_SCORE_OPS(SCORE, MANY, ONE)                                                                       \
    static int SCORE(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,                  \
                     const struct ks_node_snap *node, int64_t *out, struct ks_status *st)                    \
    {                                                                                                        \
        return ONE(self, cs, pod, node, out, st);                                                            \
    }                                                                                                        \
    static int MANY(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,                   \
                    const struct ks_node_snap *const *nodes, uint32_t n, int64_t *out)                       \
    {                                                                                                        \
        for (uint32_t i = 0; i < n; i++) {                                                                   \
            struct ks_status t;                                                                              \
            int64_t v = 0;                                                                                   \
            t.nreasons = 0;                                                                                  \
            if (__builtin_expect(ONE(self, cs, pod, nodes[i], &v, &t) != KS_SUCCESS, 0))                     \
                return KS_ERROR;                                                                             \
            out[i] = v;                                                                                      \
        }                                                                                                    \
        return KS_SUCCESS;                                                                                   \
    }

#endif
