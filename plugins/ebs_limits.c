/*
 * ebs_limits.c - the EBSLimits plugin: the in-tree AWS EBS attach limit filter (PreFilter,
 * Filter). A default of the v1beta2 and v1beta3 profiles; upstream removed the in-tree limit
 * plugins afterwards and kubescheduler.config.k8s.io/v1 rejects the name.
 *
 * Mirrors pkg/scheduler/framework/plugins/nodevolumelimits/non_csi.go as of its last
 * release (1.30), with every CSI migration gate at its default (on):
 *  - PreFilter skips pods without awsElasticBlockStore, persistentVolumeClaim or ephemeral
 *    volumes.
 *  - Filter counts the node's unique EBS volumes: inline awsElasticBlockStore volume ids,
 *    and claims that are unbound (or bound to a missing PV) whose spec.storageClassName
 *    names a class provisioned by kubernetes.io/aws-ebs (counted as "<ns>/<claim>"). The
 *    new pod's volumes already on the node are not counted twice. More than the limit is
 *    Unschedulable "node(s) exceed max volume count".
 *  - Limit: KUBE_MAX_PD_VOLS when set to a positive integer, else 25 for Nitro instance
 *    types (node.kubernetes.io/instance-type or the beta label matching "^[cmr]5.*|t3|z1d"),
 *    else 39; a node allocatable attachable-volumes-aws-ebs replaces it.
 *  - A node with a CSINode object has the plugin migrated to CSI (isCSIMigrationOn returns
 *    true for AWS EBS whenever the CSINode exists): the filter passes and NodeVolumeLimits
 *    counts the volumes instead.
 * PersistentVolumes with in-tree sources are not part of ksched's object model, so a bound
 * claim never counts here. The node's claims come from the cache's per-node pvc_refs, so an
 * existing pod's ephemeral claim it does not own is counted instead of failing the node with
 * an Error. The shared implementation is in plugins/helpers/helper_volumes.c. A pod with any
 * volume this plugin reads is unsignable (ks_sign_no_volumes). No args.
 */
#include "ksched/plugin_helpers_sign.h"
#include "ksched/plugin_helpers_volumes.h"
#include "ksched/registry.h"

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    (void)err;
    return ks_noncsi_init(KS_NONCSI_EBS, in, self);
}

const struct ks_plugin ks_plugin_ebs_limits = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "EBSLimits",
    .init = init,
    .destroy = ks_noncsi_destroy,
    .pre_filter = ks_noncsi_pre_filter,
    .filter = ks_noncsi_filter,
    .sign = ks_sign_no_volumes,
    .events_to_register = ks_noncsi_events_to_register,
};
