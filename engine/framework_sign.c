/*
 * framework_sign.c - a pod's signature over its profile (ksched/sign.h): every plugin
 * the profile runs at PreFilter, Filter, PreScore or Score appends what it reads, after
 * its slot, in slot order. One plugin without a sign op, or one that declines, leaves the
 * pod unsignable.
 */
#include "framework_internal.h"

#include "ksched/sign.h"

static const enum ks_fw_list signed_lists[] = {KS_FWL_PRE_FILTER, KS_FWL_FILTER, KS_FWL_PRE_SCORE,
                                               KS_FWL_SCORE};

int ks_fw_sign(const struct ks_framework *fw, const struct ks_cycle_state *cs, const struct ks_pod *pod,
               struct ks_sign *sig)
{
    uint64_t slots = 0;
    for (uint32_t l = 0; l < sizeof(signed_lists) / sizeof(signed_lists[0]); l++) {
        const struct ks_fw_calls *calls = &fw->list[signed_lists[l]];
        for (uint32_t i = 0; i < calls->n; i++)
            slots |= calls->v[i].bit;
    }
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
