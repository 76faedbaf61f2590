/*
 * cinder_limits.c - the CinderLimits plugin: the in-tree OpenStack Cinder attach limit
 * filter (PreFilter, Filter). Never a default plugin; valid in v1beta2 and v1beta3
 * configurations, rejected by kubescheduler.config.k8s.io/v1 (upstream removed it).
 *
 * Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/non_csi.go (cinderVolumeFilter) as
 * of its last release: unbound claims of classes provisioned by kubernetes.io/cinder against
 * KUBE_MAX_PD_VOLS or 256 (node allocatable attachable-volumes-cinder replaces it);
 * "node(s) exceed max volume count" when exceeded; nodes with a CSINode defer to
 * NodeVolumeLimits. Inline cinder volumes and in-tree PV sources are not part of ksched's
 * object model. See ebs_limits.c for the shared semantics (plugins/helpers/helper_volumes.c). No args.
 */
#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    (void)err;
    return ks_noncsi_init(KS_NONCSI_CINDER, in, self);
}

const struct ks_plugin ks_plugin_cinder_limits = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "CinderLimits",
    .init = init,
    .destroy = ks_noncsi_destroy,
    .pre_filter = ks_noncsi_pre_filter,
    .filter = ks_noncsi_filter,
    .sign = ks_sign_no_volumes,
    .events_to_register = ks_noncsi_events_to_register,
};
