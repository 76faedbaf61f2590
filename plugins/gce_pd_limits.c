/*
 * gce_pd_limits.c - the GCEPDLimits plugin: the in-tree GCE persistent disk attach limit
 * filter (PreFilter, Filter). A default of the v1beta2 and v1beta3 profiles; upstream removed
 * the in-tree limit plugins afterwards and kubescheduler.config.k8s.io/v1 rejects the name.
 *
 * Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/non_csi.go (gcePDVolumeFilter) as
 * of its last release: unique inline gcePersistentDisk pdNames plus unbound claims of classes
 * provisioned by kubernetes.io/gce-pd, against KUBE_MAX_PD_VOLS or 16 (node allocatable
 * attachable-volumes-gce-pd replaces it); "node(s) exceed max volume count" when exceeded;
 * nodes with a CSINode defer to NodeVolumeLimits. See ebs_limits.c for the shared semantics
 * (implemented in plugins/helpers/helper_volumes.c). No args.
 */
#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    (void)err;
    return ks_noncsi_init(KS_NONCSI_GCE_PD, in, self);
}

const struct ks_plugin ks_plugin_gce_pd_limits = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "GCEPDLimits",
    .init = init,
    .destroy = ks_noncsi_destroy,
    .pre_filter = ks_noncsi_pre_filter,
    .filter = ks_noncsi_filter,
    .sign = ks_sign_no_volumes,
    .events_to_register = ks_noncsi_events_to_register,
};
