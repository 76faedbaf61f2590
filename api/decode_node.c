/*
 * decode_node.c - v1 Node manifests into struct ks_node.
 *
 * A node without status.allocatable is valid and has zero capacity, as upstream. Taints
 * need a key and one of the three effects (pkg/apis/core/validation validateNodeTaints).
 */
#include "ksched/api.h"
#include "ksched/decode.h"
#include "ksched/intern.h"

#include <errno.h>
#include <stdlib.h>

static const char *const effect_names[] = {
#define KS_X(name, text) text,
    KS_TAINT_EFFECT_MAP(KS_X)
#undef KS_X
        NULL,
};

static int taints(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_node *node)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, spec, "taints", &seq);
    if (rc || !seq)
        return rc;
    node->ntaints = seq->n;
    if (!(node->taints = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*node->taints))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "taints");
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *tn = seq->items[i];
        struct ks_taint *t = &node->taints[i];
        int effect = KS_EFFECT_NONE;
        size_t s2 = ks_dec_push_index(d, i);
        if (tn->kind != KS_YAML_MAP)
            return ks_dec_fail(d, tn, 0, "expected a map, found %s", ks_yaml_kind_name(tn));
        if ((rc = ks_dec_id(d, tn, "key", &t->key)) || (rc = ks_dec_id(d, tn, "value", &t->value)) ||
            (rc = ks_dec_enum(d, tn, "effect", effect_names, &effect)))
            return rc;
        t->effect = (enum ks_taint_effect)effect;
        if (t->key == KS_ID_EMPTY) {
            ks_dec_push(d, "key");
            return ks_dec_fail(d, tn, 0, "Required value");
        }
        if (t->effect == KS_EFFECT_NONE) {
            ks_dec_push(d, "effect");
            return ks_dec_fail(d, tn, 0, "Required value");
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int images(struct ks_decoder *d, const struct ks_yaml_node *status, struct ks_node *node)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, status, "images", &seq);
    if (rc || !seq)
        return rc;
    node->nimages = seq->n;
    if (!(node->images = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*node->images))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "images");
    for (uint32_t i = 0; i < seq->n; i++) {
        struct ks_container_image *img = &node->images[i];
        size_t s2 = ks_dec_push_index(d, i);
        if (seq->items[i]->kind != KS_YAML_MAP)
            return ks_dec_fail(d, seq->items[i], 0, "expected a map, found %s", ks_yaml_kind_name(seq->items[i]));
        if ((rc = ks_dec_id_list(d, seq->items[i], "names", &img->nnames, &img->names)) ||
            (rc = ks_dec_int64(d, seq->items[i], "sizeBytes", &img->size_bytes)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int conditions(struct ks_decoder *d, const struct ks_yaml_node *status, struct ks_node *node)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, status, "conditions", &seq);
    if (rc || !seq)
        return rc;
    node->nconditions = seq->n;
    if (!(node->conditions = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*node->conditions))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "conditions");
    for (uint32_t i = 0; i < seq->n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if (seq->items[i]->kind != KS_YAML_MAP)
            return ks_dec_fail(d, seq->items[i], 0, "expected a map, found %s", ks_yaml_kind_name(seq->items[i]));
        if ((rc = ks_dec_string(d, seq->items[i], "type", &node->conditions[i].type)) ||
            (rc = ks_dec_string(d, seq->items[i], "status", &node->conditions[i].status)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
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
        if ((rc = ks_dec_bool(d, spec, "unschedulable", &node->unschedulable)) || (rc = taints(d, spec, node)))
            return rc;
        ks_dec_pop(d, saved);
    }
    if (status) {
        size_t saved = ks_dec_push(d, "status");
        if ((rc = ks_dec_resources(d, status, "capacity", &node->capacity)) ||
            (rc = ks_dec_resources(d, status, "allocatable", &node->allocatable)) ||
            (rc = images(d, status, node)) || (rc = conditions(d, status, node)))
            return rc;
        ks_dec_pop(d, saved);
    }
    return ks_node_finish(node) < 0 ? ks_dec_nomem(d) : 0;
}

KS_DEFINE_DECODER(ks_decode_node, struct ks_node, ks_node_destroy, node_body)
