/*
 * decode_node.c - v1 Node manifests into struct ks_node.
 *
 * A node without status.allocatable is valid and has zero capacity, as upstream. Taints
 * need a key and one of the three effects (pkg/apis/core/validation validateNodeTaints).
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"

#include <errno.h>
#include <stdlib.h>

static const char *const effect_names[] = {
#define KS_X(name, text) text,
    KS_TAINT_EFFECT_MAP(KS_X)
#undef KS_X
        NULL,
};

static int taint(struct ks_decoder *d, const struct ks_yaml_node *tn, void *elem, void *ctx)
{
    struct ks_taint *t = elem;
    int effect = KS_EFFECT_NONE, rc;

    (void)ctx;
    if ((rc = ks_dec_id(d, tn, "key", &t->key)) || (rc = ks_dec_id(d, tn, "value", &t->value)) ||
        (rc = ks_dec_enum(d, tn, "effect", effect_names, &effect)))
        return rc;
    t->effect = (enum ks_taint_effect)effect;
    if (t->key == KS_ID_EMPTY)
        return ks_dec_required(d, tn, "key");
    if (t->effect == KS_EFFECT_NONE)
        return ks_dec_required(d, tn, "effect");
    return 0;
}

static int image(struct ks_decoder *d, const struct ks_yaml_node *in, void *elem, void *ctx)
{
    struct ks_container_image *img = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_id_list(d, in, "names", &img->nnames, &img->names)) ||
        (rc = ks_dec_int64(d, in, "sizeBytes", &img->size_bytes)))
        return rc;
    return 0;
}

static int condition(struct ks_decoder *d, const struct ks_yaml_node *cn, void *elem, void *ctx)
{
    struct ks_node_condition *c = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, cn, "type", &c->type)) || (rc = ks_dec_string(d, cn, "status", &c->status)))
        return rc;
    return 0;
}

static int node_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_node *node)
{
    const struct ks_yaml_node *spec = NULL, *status = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, false, &node->meta)))
        return rc;
    if ((node->name_id = ks_intern(node->meta.name)) == KS_ID_NONE)
        return ks_dec_nomem(d);
    if ((rc = ks_dec_map(d, doc, "spec", &spec)) || (rc = ks_dec_map(d, doc, "status", &status)))
        return rc;
    if (spec) {
        size_t saved = ks_dec_push(d, "spec");
        if ((rc = ks_dec_bool(d, spec, "unschedulable", &node->unschedulable)) ||
            (rc = ks_dec_list(d, spec, "taints", sizeof(*node->taints), &node->ntaints,
                              (void **)&node->taints, taint, NULL)))
            return rc;
        ks_dec_pop(d, saved);
    }
    if (status) {
        size_t saved = ks_dec_push(d, "status");
        if ((rc = ks_dec_resources(d, status, "capacity", &node->capacity)) ||
            (rc = ks_dec_resources(d, status, "allocatable", &node->allocatable)) ||
            (rc = ks_dec_list(d, status, "images", sizeof(*node->images), &node->nimages,
                              (void **)&node->images, image, NULL)) ||
            (rc = ks_dec_list(d, status, "conditions", sizeof(*node->conditions), &node->nconditions,
                              (void **)&node->conditions, condition, NULL)))
            return rc;
        ks_dec_pop(d, saved);
    }
    return ks_node_finish(node) < 0 ? ks_dec_nomem(d) : 0;
}

KS_DEFINE_DECODER(ks_decode_node, struct ks_node, ks_node_destroy, node_body)
