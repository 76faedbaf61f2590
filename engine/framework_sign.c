/*
 * framework_sign.c - a pod's signature over its profile (ksched/sign.h): every plugin
 * the profile runs at PreFilter, Filter, PreScore or Score appends what it reads, after
 * its slot, in slot order. One plugin without a sign op, or one that declines, leaves the
 * pod unsignable; so do two plugins that each mark the pod spread-scored.
 */
#include "framework_internal.h"

#include "ksched/sign.h"

int ks_fw_sign(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
               struct ks_sign *sig)
{
    uint64_t slots = fw->signed_slots;
    sig->len = 0;
    sig->overflow = false;
    sig->spread = false;
    for (uint32_t slot = 0; slot < fw->nplugins; slot++) {
        if (!(slots & (1ull << slot)))
            continue;
        const struct ks_fw_plugin *p = &fw->plugins[slot];
        if (!p->plugin->sign)
            return KS_SKIP;
        ks_sign_u32(sig, slot);
        bool before = sig->spread;
        uint32_t key = sig->spread_key;
        sig->spread = false;
        if (p->plugin->sign(p->self, cs, pod, sig) != KS_SUCCESS)
            return KS_SKIP;
        if (sig->spread && before)
            return KS_SKIP; /* a second spread-scored plugin: the index adds one */
        if (sig->spread) {
            sig->spread_slot = (uint16_t)slot;
        } else {
            sig->spread = before;
            sig->spread_key = key;
        }
    }
    return sig->overflow ? KS_SKIP : KS_SUCCESS;
}
