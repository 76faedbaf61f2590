/*
 * volume_binding.c - the VolumeBinding plugin: filters nodes on whether the pod's
 * PersistentVolumeClaims can be bound or provisioned there, reserves and binds the
 * volumes (PreFilter, Filter, PreScore, Score, Reserve, PreBind).
 *
 * Mirrors pkg/scheduler/framework/plugins/volumebinding/volume_binding.go. Args
 * (VolumeBindingArgs): bindTimeoutSeconds defaults to 600 and must not be negative
 * (SetDefaults_VolumeBindingArgs, ValidateVolumeBindingArgs). The shape of the
 * capacity score needs a feature gate (StorageCapacityScoring in v1, VolumeCapacityPriority
 * before) that ksched keeps at its default, off, so a shape is rejected as upstream does
 * then, and no shape is defaulted. The extension-point ops join this table with the
 * framework runtime.
 */
#include "ksched/config_decode.h"
#include "ksched/plugin_args.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdlib.h>

/* ---- args ----------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_volumebinding_args *a)
{
    static const char *const fields[] = {"bindTimeoutSeconds", "shape", NULL};
    const struct ks_yaml_node *shape = NULL;
    enum ks_config_version version;
    uint32_t nshape = 0;
    struct ks_shape_point *points = NULL;
    int rc;

    a->bind_timeout_seconds = 600;
    if ((rc = ks_cfg_args_begin(d, node, "VolumeBindingArgs", api_version, fields, &version)) ||
        (rc = ks_dec_int64(d, node, "bindTimeoutSeconds", &a->bind_timeout_seconds)) ||
        (rc = ks_cfg_shape(d, node, "shape", &nshape, &points, &shape)))
        return rc;
    if (a->bind_timeout_seconds < 0)
        return ks_cfg_fail_at(
            d, ks_yaml_get(node, "bindTimeoutSeconds"), 0, "bindTimeoutSeconds",
            "Invalid value: %lld: invalid BindTimeoutSeconds, should not be a negative value",
            (long long)a->bind_timeout_seconds);
    if (shape)
        return ks_cfg_fail_at(
            d, shape, 0, "shape",
            "Invalid value: unexpected field `shape`, remove it or turn on the feature gate %s",
            version == KS_CONFIG_V1 ? "StorageCapacityScoring" : "VolumeCapacityPriority");
    return 0;
}

KS_DEFINE_ARGS_OPS(struct ks_volumebinding_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_volumebinding_args *a = args;
    ks_yaml_key_int(o, "bindTimeoutSeconds", a->bind_timeout_seconds);
    if (a->nshape)
        ks_cfg_print_shape(o, "shape", a->nshape, a->shape);
}

/* ---- plugin ----------------------------------------------------------------------------------- */

const struct ks_plugin ks_plugin_volume_binding = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "VolumeBinding",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
};
