/*
 * sign.h - a pod's scheduling signature: the bytes that decide its Filter statuses and
 * Score results, as each plugin of its profile reads them (KEP-5598's signature plugins).
 *
 * Two pods of one profile whose signatures are equal byte for byte get, on every node of
 * one snapshot, the same Filter status and the same raw scores from every plugin that
 * signed them; the signature index (index/) relies on nothing else to share one pod's
 * per-node results with the pods of its class. Each plugin's sign op (plugin_types.h)
 * appends what it reads: the framework brackets every plugin's bytes with its slot, so
 * plugins need not separate their fields from other plugins' - only their own fields from
 * each other (length-prefix variable-length data: ks_sign_str, ks_sign_bytes after a
 * ks_sign_u32 count).
 *
 * Interned ids (ksched/base/intern.h) are stable for the process's life, so a plugin may sign
 * an interned string by its id.
 *
 * Context: the scheduling thread, inside the cycle's RCU read section; no allocation (the
 * buffer is the caller's; a signature that does not fit sets overflow and is not used).
 */
#ifndef KSCHED_SIGN_H
#define KSCHED_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ks_sign {
    uint8_t *buf;
    uint32_t len, cap;
    bool overflow; /* something did not fit: the pod is treated as unsignable */
    /* ks_sign_spread_scored: the plugin whose Score the index adds per cycle, and its domains' label */
    bool spread;
    uint16_t spread_slot; /* set by the framework */
    uint32_t spread_key;
};

/*
 * ks_sign_spread_scored - the signing plugin's Score is PodTopologySpread's ScheduleAnyway
 * scoring and reads other pods: the index leaves it out of the class's totals and adds
 * it per cycle (engine/index_spread.c). The plugin promises, besides what the sign op
 * promises of its Filter (it is skipped for the pod): its constraints' keys are the
 * hostname label and at most one other, @key (KS_ID_NONE: none); its cycle-state slot holds
 * a struct ks_pts_cycle (plugin_helpers_spread.h) whose score state, after PreScore, gives
 * the constraints, the domain counts and the nodes with counted pods; and the bytes it
 * signed say which constraints and keys it has and whether nodes lacking a key are
 * ignored. One plugin of a profile at most.
 */
static inline void ks_sign_spread_scored(struct ks_sign *s, uint32_t key)
{
    s->spread = true;
    s->spread_key = key;
}

/* ks_sign_bytes - append @n bytes from @p. */
static inline void ks_sign_bytes(struct ks_sign *s, const void *p, size_t n)
{
    if (s->overflow || n > (size_t)(s->cap - s->len)) {
        s->overflow = true;
        return;
    }
    if (n)
        memcpy(s->buf + s->len, p, n);
    s->len += (uint32_t)n;
}

static inline void ks_sign_u32(struct ks_sign *s, uint32_t v)
{
    ks_sign_bytes(s, &v, sizeof(v));
}

static inline void ks_sign_u64(struct ks_sign *s, uint64_t v)
{
    ks_sign_bytes(s, &v, sizeof(v));
}

static inline void ks_sign_i64(struct ks_sign *s, int64_t v)
{
    ks_sign_bytes(s, &v, sizeof(v));
}

/* ks_sign_str - @str with its length (NULL and "" differ). */
static inline void ks_sign_str(struct ks_sign *s, const char *str)
{
    if (!str) {
        ks_sign_u32(s, UINT32_MAX);
        return;
    }
    size_t n = strlen(str);
    ks_sign_u32(s, (uint32_t)n);
    ks_sign_bytes(s, str, n);
}

#endif
