/*
 * example_plugin.c - NodeLabelPreference, an example out-of-tree plugin built as a
 * shared object and loaded with ks_registry_load().
 *
 * Filter: a node labelled example.com/avoid=true is rejected (UnschedulableAndUnresolvable:
 * evicting pods would not change a label). Score: the node's example.com/preference label
 * read as an integer (absent, negative or not a number: 0). NormalizeScore: scores scaled
 * so the best node gets 100, as upstream's DefaultNormalizeScore.
 *
 * It shows what an out-of-tree plugin needs: one const ops table with abi_version set,
 * the exported ks_plugin_entry(), messages interned once in init so Filter allocates
 * nothing, and ksched's own helpers (ks_intern(), ks_labels_get()) reached through the
 * executable's exported symbols. Its Filter also has the optional batched form
 * (filter_nodes, made by KS_FILTER_OPS from the per-node function: ksched/plugin_batch.h);
 * its Score has not, and the framework calls it per node.
 *
 * Context: as every plugin (see ksched/plugin_types.h): init/destroy at start-up, Filter
 * and Score on worker threads (read-only, no allocation), NormalizeScore on the
 * scheduling thread.
 */
#include <errno.h>
#include <stdlib.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/cache_types.h"
#include "ksched/framework.h"
#include "ksched/plugin_batch.h"
#include "ksched/plugin_types.h"

struct nlp {
    uint32_t avoid_key;  /* "example.com/avoid" */
    uint32_t true_value; /* "true" */
    uint32_t pref_key;   /* "example.com/preference" */
    uint32_t avoid_reason;
};

static int nlp_init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct nlp *p = calloc(1, sizeof(*p));

    (void)in;
    (void)err;
    if (!p)
        return -ENOMEM;
    p->avoid_key = ks_intern("example.com/avoid");
    p->true_value = ks_intern("true");
    p->pref_key = ks_intern("example.com/preference");
    p->avoid_reason = ks_intern("node(s) had label example.com/avoid=true");
    if (p->avoid_key == KS_ID_NONE || p->true_value == KS_ID_NONE || p->pref_key == KS_ID_NONE ||
        p->avoid_reason == KS_ID_NONE) {
        free(p);
        return -ENOMEM;
    }
    *self = p;
    return 0;
}

static void nlp_destroy(void *self)
{
    free(self);
}

static const struct ks_labels *labels_of(const struct ks_node_snap *node)
{
    return node->node ? &node->node->meta.labels : NULL;
}

static inline KS_ALWAYS_INLINE int nlp_filter_node(void *self, const struct ks_cycle_state *cs,
                                                   const struct ks_pod *pod, const struct ks_node_snap *node,
                                                   struct ks_status *st)
{
    const struct nlp *p = self;
    const struct ks_labels *labels = labels_of(node);
    uint32_t v;

    (void)cs;
    (void)pod;
    if (labels && ks_labels_get(labels, p->avoid_key, &v) && v == p->true_value) {
        st->nreasons = 1;
        st->reasons[0] = p->avoid_reason;
        return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    }
    return KS_SUCCESS;
}

/* nlp_filter (per node) and nlp_filter_nodes (a block of nodes, the same function inlined) */
KS_FILTER_OPS(nlp_filter, nlp_filter_nodes, nlp_filter_node)

static int nlp_score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, int64_t *score, struct ks_status *st)
{
    const struct nlp *p = self;
    const struct ks_labels *labels = labels_of(node);
    uint32_t v;

    (void)cs;
    (void)pod;
    (void)st;
    *score = 0;
    if (labels && ks_labels_get(labels, p->pref_key, &v)) {
        char *end;
        long long n = strtoll(ks_intern_str(v), &end, 10);
        if (*end == '\0' && n > 0)
            *score = n;
    }
    return KS_SUCCESS;
}

static int nlp_normalize(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                         const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                         struct ks_status *st)
{
    int64_t max = 0;

    (void)self;
    (void)cs;
    (void)pod;
    (void)nodes;
    (void)st;
    for (uint32_t i = 0; i < n; i++)
        max = scores[i] > max ? scores[i] : max;
    for (uint32_t i = 0; i < n; i++)
        scores[i] = max ? scores[i] * KS_MAX_NODE_SCORE / max : 0;
    return KS_SUCCESS;
}

static const struct ks_plugin node_label_preference = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "NodeLabelPreference",
    .init = nlp_init,
    .destroy = nlp_destroy,
    .filter = nlp_filter,
    .filter_nodes = nlp_filter_nodes,
    .score = nlp_score,
    .normalize_score = nlp_normalize,
};

__attribute__((visibility("default"))) const struct ks_plugin *ks_plugin_entry(void)
{
    return &node_label_preference;
}
