/*
 * decode_storage.c - PersistentVolume, PersistentVolumeClaim (v1), StorageClass and
 * CSINode (storage.k8s.io/v1): the fields VolumeBinding, VolumeZone, VolumeRestrictions
 * and NodeVolumeLimits read.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int access_modes(struct ks_decoder *d, const struct ks_yaml_node *spec, unsigned *out)
{
    static const char *const names[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"};
    const char **modes = NULL;
    uint32_t n = 0;
    int rc = ks_dec_string_list(d, spec, "accessModes", &n, &modes);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        unsigned bit = 0;
        for (unsigned j = 0; j < 4; j++) {
            if (strcmp(modes[i], names[j]) == 0)
                bit = 1u << j;
        }
        if (!bit) {
            size_t s = ks_dec_push(d, "accessModes");
            ks_dec_push_index(d, i);
            rc = ks_dec_fail(d, ks_yaml_get(spec, "accessModes"), 0, "unsupported access mode \"%s\"",
                             modes[i]);
            ks_dec_pop(d, s);
            return rc;
        }
        *out |= bit;
    }
    return 0;
}

/* storageClassName: "given" even when empty, since "" means "no class" rather than "default class" */
static int storage_class_name(struct ks_decoder *d, const struct ks_yaml_node *spec, bool *has,
                              const char **out)
{
    const struct ks_yaml_node *n = ks_yaml_get(spec, "storageClassName");
    *has = n && !ks_yaml_is_null(n);
    *out = "";
    return ks_dec_string(d, spec, "storageClassName", out);
}

/* A map field that must be present: @what names it in the error. */
static int need_map(struct ks_decoder *d, const struct ks_yaml_node *doc, const char *key,
                    const struct ks_yaml_node **out)
{
    int rc = ks_dec_map(d, doc, key, out);
    if (rc == 0 && !*out)
        rc = ks_dec_required(d, doc, key);
    return rc;
}

/* status.phase of a volume or a claim. */
static int status_phase(struct ks_decoder *d, const struct ks_yaml_node *doc, const char **phase)
{
    const struct ks_yaml_node *status = NULL;
    int rc = ks_dec_map(d, doc, "status", &status);
    if (rc || !status)
        return rc;
    size_t saved = ks_dec_push(d, "status");
    if ((rc = ks_dec_string(d, status, "phase", phase)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

static int pv_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_persistent_volume *pv)
{
    const struct ks_yaml_node *spec = NULL, *ref = NULL, *csi = NULL, *aff = NULL;
    struct ks_resource_list cap = {0};
    int rc;

    if ((rc = ks_dec_meta(d, doc, false, &pv->meta)) || (rc = need_map(d, doc, "spec", &spec)))
        return rc;
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = ks_dec_resources(d, spec, "capacity", &cap)) ||
        (rc = storage_class_name(d, spec, &pv->has_storage_class, &pv->storage_class)) ||
        (rc = access_modes(d, spec, &pv->access_modes)) || (rc = ks_dec_map(d, spec, "claimRef", &ref)) ||
        (rc = ks_dec_map(d, spec, "csi", &csi)) || (rc = ks_dec_map(d, spec, "nodeAffinity", &aff)) ||
        (rc = ks_dec_string(d, spec, "volumeMode", &pv->volume_mode)))
        return rc;
    pv->capacity_storage = ks_resource_list_get(&cap, ks_intern("storage"));
    if (ref) {
        size_t s = ks_dec_push(d, "claimRef");
        pv->claim_namespace = "default";
        if ((rc = ks_dec_string(d, ref, "namespace", &pv->claim_namespace)) ||
            (rc = ks_dec_string(d, ref, "name", &pv->claim_name)) ||
            (rc = ks_dec_string(d, ref, "uid", &pv->claim_uid)))
            return rc;
        ks_dec_pop(d, s);
    }
    if (csi) {
        size_t s = ks_dec_push(d, "csi");
        if ((rc = ks_dec_string(d, csi, "driver", &pv->csi_driver)) ||
            (rc = ks_dec_string(d, csi, "volumeHandle", &pv->csi_volume_handle)))
            return rc;
        ks_dec_pop(d, s);
    }
    if (aff) {
        size_t s = ks_dec_push(d, "nodeAffinity");
        if ((rc = ks_dec_node_selector(d, aff, "required", &pv->node_affinity)))
            return rc;
        ks_dec_pop(d, s);
    }
    ks_dec_pop(d, saved);
    return status_phase(d, doc, &pv->phase);
}

static int pvc_body(struct ks_decoder *d, const struct ks_yaml_node *doc,
                    struct ks_persistent_volume_claim *pvc)
{
    const struct ks_yaml_node *spec = NULL, *res = NULL;
    struct ks_resource_list req = {0};
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &pvc->meta)) || (rc = need_map(d, doc, "spec", &spec)))
        return rc;
    size_t saved = ks_dec_push(d, "spec");
    pvc->volume_name = "";
    if ((rc = storage_class_name(d, spec, &pvc->has_storage_class, &pvc->storage_class)) ||
        (rc = ks_dec_string(d, spec, "volumeName", &pvc->volume_name)) ||
        (rc = access_modes(d, spec, &pvc->access_modes)) || (rc = ks_dec_map(d, spec, "resources", &res)) ||
        (rc = ks_dec_label_selector(d, spec, "selector", &pvc->selector)) ||
        (rc = ks_dec_string(d, spec, "volumeMode", &pvc->volume_mode)))
        return rc;
    if (res) {
        size_t s = ks_dec_push(d, "resources");
        if ((rc = ks_dec_resources(d, res, "requests", &req)))
            return rc;
        ks_dec_pop(d, s);
        pvc->request_storage = ks_resource_list_get(&req, ks_intern("storage"));
    }
    ks_dec_pop(d, saved);
    return status_phase(d, doc, &pvc->phase);
}

/* One matchLabelExpressions item {key, values} as an In requirement. */
static int topology_requirement(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_requirement *r = elem;
    int rc;

    (void)ctx;
    r->op = KS_OP_IN;
    if ((rc = ks_dec_id(d, n, "key", &r->key)) ||
        (rc = ks_dec_id_set(d, n, "values", &r->nvalues, &r->values)))
        return rc;
    return 0;
}

/* allowedTopologies: [{matchLabelExpressions: [{key, values}]}] as terms of In requirements */
static int topology_term(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_node_selector_term *t = elem;

    (void)ctx;
    return ks_dec_list(d, n, "matchLabelExpressions", sizeof(*t->exprs), &t->nexprs, (void **)&t->exprs,
                       topology_requirement, NULL);
}

static int sc_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_storage_class *sc)
{
    static const char *const modes[] = {"Immediate", "WaitForFirstConsumer", NULL};
    int mode = KS_BINDING_IMMEDIATE, rc;

    if ((rc = ks_dec_meta(d, doc, false, &sc->meta)) ||
        (rc = ks_dec_string(d, doc, "provisioner", &sc->provisioner)) ||
        (rc = ks_dec_enum(d, doc, "volumeBindingMode", modes, &mode)) ||
        (rc = ks_dec_list(d, doc, "allowedTopologies", sizeof(*sc->allowed_topologies),
                          &sc->nallowed_topologies, (void **)&sc->allowed_topologies, topology_term, NULL)))
        return rc;
    if (!sc->provisioner)
        return ks_dec_required(d, doc, "provisioner");
    sc->binding_mode = (enum ks_binding_mode)mode;
    return 0;
}

static int csi_driver(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_csi_node_driver *drv = elem;
    const struct ks_yaml_node *alloc = NULL;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, n, "name", &drv->name)) ||
        (rc = ks_dec_string(d, n, "nodeID", &drv->node_id)) ||
        (rc = ks_dec_map(d, n, "allocatable", &alloc)) ||
        (rc = ks_dec_id_list(d, n, "topologyKeys", &drv->ntopology_keys, &drv->topology_keys)))
        return rc;
    if (!drv->name)
        return ks_dec_required(d, n, "name");
    if (alloc && ks_yaml_get(alloc, "count") && !ks_yaml_is_null(ks_yaml_get(alloc, "count"))) {
        size_t s = ks_dec_push(d, "allocatable");
        drv->has_count = true;
        if ((rc = ks_dec_int32(d, alloc, "count", &drv->allocatable_count)))
            return rc;
        ks_dec_pop(d, s);
    }
    return 0;
}

static int csi_node_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_csi_node *cn)
{
    const struct ks_yaml_node *spec = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, false, &cn->meta)) || (rc = need_map(d, doc, "spec", &spec)))
        return rc;
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = ks_dec_list(d, spec, "drivers", sizeof(*cn->drivers), &cn->ndrivers, (void **)&cn->drivers,
                          csi_driver, NULL)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

KS_DEFINE_DECODER(ks_decode_pv, struct ks_persistent_volume, ks_pv_destroy, pv_body)
KS_DEFINE_DECODER(ks_decode_pvc, struct ks_persistent_volume_claim, ks_pvc_destroy, pvc_body)
KS_DEFINE_DECODER(ks_decode_storage_class, struct ks_storage_class, ks_storage_class_destroy, sc_body)
KS_DEFINE_DECODER(ks_decode_csi_node, struct ks_csi_node, ks_csi_node_destroy, csi_node_body)
