/*
 * framework_sign.c - a pod's signature over its profile (ksched/sign.h): every plugin
 * the profile runs at PreFilter, Filter, PreScore or Score appends what it reads, after
 * its slot, in slot order. One plugin without a sign op, or one that declines, leaves the
 * pod unsignable.
 */
#include "framework_internal.h"

#include "ksched/sign.h"

int ks_fw_sign(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
               struct ks_sign *sig)
{
    uint64_t slots = fw->signed_slots;
    sig->len = 0;
    sig->overflow = false;
    for (uint32_t slot = 0; slot < fw->nplugins; slot++) {
        if (!(slots & (1ull << slot)))
            continue;
        const struct ks_fw_plugin *p = &fw->plugins[slot];
        if (!p->plugin->sign)
            return KS_SKIP;
        ks_sign_u32(sig, slot);
        if (p->plugin->sign(p->self, cs, pod, sig) != KS_SUCCESS)
            return KS_SKIP;
    }
    return sig->overflow ? KS_SKIP : KS_SUCCESS;
}
