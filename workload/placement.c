/*
 * placement.c - placements of topology-aware workload scheduling and their scores
 * (ksched/internal/placement.h): TopologyPlacementGenerator, NodeResourcesFit's ScorePlacement and
 * PodGroupPodsCount of current upstream (v1.37).
 */
#include "ksched/internal/placement.h"

#include "ksched/api.h"
#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_helpers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ks_placement_set_free(struct ks_placement_set *ps)
{
    free(ps->all_value);
    free(ps->all_first);
    free(ps->all_names);
    free(ps->all_pos);
    free(ps->seen);
    free(ps->seen_value);
    memset(ps, 0, sizeof(*ps));
}

struct labelled {
    uint32_t value, name, pos;
};

static int by_ids(const void *a, const void *b)
{
    const struct labelled *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* A domain of the sorted pairs: [first, end) of one value. */
struct span {
    uint32_t value, first, end;
};

static int by_value_text(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return strcmp(ks_intern_str(x->value), ks_intern_str(y->value));
}

/* The value of @key on @node, KS_ID_NONE when it has none. */
static uint32_t value_of(const struct ks_node_snap *node, uint32_t key)
{
    uint32_t value;
    return node->node && ks_labels_get(&node->node->meta.labels, key, &value) ? value : KS_ID_NONE;
}

/* Whether the kept domains still hold for @snap's nodes (records that changed are read again). */
static bool kept(struct ks_placement_set *ps, const struct ks_snapshot *snap, uint32_t key)
{
    if (!ps->nseen || ps->key != key || ps->order_generation != snap->order_generation ||
        ps->nseen != snap->nnodes)
        return false;
    for (uint32_t i = 0; i < snap->nnodes; i++) {
        const struct ks_node_snap *node = ks_snapshot_node(snap, i);
        if (node->generation == ps->seen[i])
            continue;
        if (value_of(node, key) != ps->seen_value[i])
            return false;
        ps->seen[i] = node->generation;
    }
    return true;
}

/* The domains of every value of @key, read again. */
static int rebuild(struct ks_placement_set *ps, const struct ks_snapshot *snap, uint32_t key)
{
    uint32_t nn = snap->nnodes, m = 0, nd = 0;
    struct labelled *l = malloc((nn ? nn : 1) * sizeof(*l));
    struct span *d = malloc((nn ? nn : 1) * sizeof(*d));
    int rc = -ENOMEM;
    if (!l || !d || KS_RESERVE(ps->seen, ps->cap_seen, nn + 1) < 0 ||
        KS_RESERVE(ps->seen_value, ps->cap_seen_value, nn + 1) < 0)
        goto out;
    for (uint32_t i = 0; i < nn; i++) {
        const struct ks_node_snap *node = ks_snapshot_node(snap, i);
        uint32_t value = value_of(node, key);
        ps->seen[i] = node->generation;
        ps->seen_value[i] = value;
        if (value != KS_ID_NONE)
            l[m++] = (struct labelled){value, node->name, i};
    }
    /* grouped by the value's id (integers), then the domains ordered by the value's text */
    qsort(l, m, sizeof(*l), by_ids);
    for (uint32_t i = 0; i < m; i++) {
        if (i == 0 || l[i].value != l[i - 1].value)
            d[nd++] = (struct span){l[i].value, i, i};
        d[nd - 1].end = i + 1;
    }
    qsort(d, nd, sizeof(*d), by_value_text);
    if (KS_RESERVE(ps->all_names, ps->cap_names, m + 1) < 0 ||
        KS_RESERVE(ps->all_pos, ps->cap_pos, m + 1) < 0 ||
        KS_RESERVE(ps->all_value, ps->cap_value, nd + 1) < 0 ||
        KS_RESERVE(ps->all_first, ps->cap_first, nd + 2) < 0)
        goto out;
    uint32_t k = 0;
    for (uint32_t i = 0; i < nd; i++) {
        ps->all_value[i] = d[i].value;
        ps->all_first[i] = k;
        for (uint32_t j = d[i].first; j < d[i].end; j++, k++) {
            ps->all_names[k] = l[j].name;
            ps->all_pos[k] = l[j].pos;
        }
    }
    ps->all_first[nd] = k;
    ps->all_n = nd;
    ps->key = key;
    ps->order_generation = snap->order_generation;
    ps->nseen = nn;
    rc = 0;
out:
    free(l);
    free(d);
    return rc;
}

int ks_placements_build(const struct ks_snapshot *snap, uint32_t key, uint32_t required,
                        struct ks_placement_set *ps)
{
    if (!kept(ps, snap, key)) {
        ps->nseen = 0; /* nothing kept until the rebuild is whole */
        int rc = rebuild(ps, snap, key);
        if (rc < 0)
            return rc;
    }
    ps->value = ps->all_value;
    ps->first = ps->all_first;
    ps->names = ps->all_names;
    ps->pos = ps->all_pos;
    ps->n = ps->all_n;
    if (required == KS_ID_NONE)
        return 0;
    ps->n = 0;
    for (uint32_t d = 0; d < ps->all_n; d++) {
        if (ps->all_value[d] != required)
            continue;
        ps->value = &ps->all_value[d];
        ps->one_first[0] = 0;
        ps->one_first[1] = ps->all_first[d + 1] - ps->all_first[d];
        ps->first = ps->one_first;
        ps->names = &ps->all_names[ps->all_first[d]];
        ps->pos = &ps->all_pos[ps->all_first[d]];
        ps->n = 1;
        break;
    }
    return 0;
}

/* mostRequestedScore: what is requested of @capacity, 0-100 (0 without capacity). */
static int64_t most_requested(int64_t requested, int64_t capacity)
{
    if (capacity <= 0)
        return 0;
    if (requested > capacity)
        requested = capacity;
    return requested * 100 / capacity;
}

int ks_placement_weights_init(struct ks_placement_weights *w, int64_t fit, const struct ks_resource_spec *res,
                              uint32_t nres)
{
    bool dflt = nres == 0;
    uint32_t n = dflt ? 2 : nres;
    *w = (struct ks_placement_weights){.fit = fit, .pods = 1};
    if (!(w->res = calloc(n, sizeof(*w->res))) || !(w->sum = calloc(2 * (size_t)n, sizeof(*w->sum)))) {
        ks_placement_weights_free(w);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t name = dflt ? (i == 0 ? ks_wk.cpu : ks_wk.memory) : res[i].name;
        w->res[i] = (struct ks_res_spec){name, ks_res_kind_of(name), dflt ? 1 : res[i].weight};
    }
    w->nres = n;
    return 0;
}

void ks_placement_weights_free(struct ks_placement_weights *w)
{
    free(w->res);
    free(w->sum);
    w->res = NULL;
    w->sum = NULL;
    w->nres = 0;
}

void ks_placement_add(const struct ks_placement_weights *w, const struct ks_pod *pod, int64_t *add)
{
    for (uint32_t i = 0; i < w->nres; i++)
        add[i] += ks_res_pod_request(&w->res[i], false, pod);
}

/*
 * scorePlacement's sums over a domain: per resource what its nodes offer and what they and the
 * group's proposed pods (@add) ask (non-zero requests for cpu and memory). A scalar resource the
 * proposed pods do not ask for is left out, and so is a node's share of a resource it does not
 * offer.
 */
static void fit_begin(const struct ks_placement_weights *w, const int64_t *add)
{
    for (uint32_t i = 0; i < w->nres; i++) {
        w->sum[2 * i] = 0;
        w->sum[2 * i + 1] = add[i];
    }
}

static void fit_add(const struct ks_placement_weights *w, const int64_t *add, const struct ks_node_snap *node)
{
    for (uint32_t i = 0; i < w->nres; i++) {
        const struct ks_res_spec *r = &w->res[i];
        int64_t alloc, requested;
        /* cpu and memory inline: this runs for every node of every placement */
        if (r->kind == KS_RES_CPU) {
            alloc = node->alloc_milli_cpu;
            requested = node->nonzero_milli_cpu;
        } else if (r->kind == KS_RES_MEMORY) {
            alloc = node->alloc_memory;
            requested = node->nonzero_memory;
        } else if (r->kind == KS_RES_SCALAR && add[i] == 0) {
            continue;
        } else {
            /* a scalar is read only when asked for: ask with the proposed pods' request, then take it off */
            int64_t ask = r->kind == KS_RES_SCALAR ? add[i] : 0;
            alloc = ks_res_alloc_req(r, false, node, ask, &requested);
            requested -= ask;
        }
        if (alloc == 0)
            continue;
        w->sum[2 * i] += alloc;
        w->sum[2 * i + 1] += requested;
    }
}

/* MostAllocated over the domain: the weighted average of each offered resource's share asked for. */
static int64_t fit_of(const struct ks_placement_weights *w)
{
    int64_t score = 0, weights = 0;
    for (uint32_t i = 0; i < w->nres; i++) {
        if (w->sum[2 * i] == 0)
            continue;
        score += most_requested(w->sum[2 * i + 1], w->sum[2 * i]) * w->res[i].weight;
        weights += w->res[i].weight;
    }
    return weights ? score / weights : 0;
}

int64_t ks_placement_fit_score(const struct ks_snapshot *snap, const struct ks_placement_weights *w,
                               const uint32_t *names, uint32_t n, const int64_t *add)
{
    fit_begin(w, add);
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_node_snap *node = ks_snapshot_find(snap, names[i]);
        if (node)
            fit_add(w, add, node);
    }
    return fit_of(w);
}

void ks_placement_measure(const struct ks_snapshot *snap, const struct ks_placement_weights *w,
                          const uint32_t *pos, uint32_t n, int64_t min_cpu, int64_t min_mem,
                          const int64_t *add, uint64_t *bound, int64_t *fit)
{
    uint64_t total = 0;
    fit_begin(w, add);
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_node_snap *node = ks_snapshot_node(snap, pos[i]);
        int64_t slots = (int64_t)node->alloc_pods - node->npods;
        if (min_cpu > 0 && (node->alloc_milli_cpu - node->req_milli_cpu) / min_cpu < slots)
            slots = (node->alloc_milli_cpu - node->req_milli_cpu) / min_cpu;
        if (min_mem > 0 && (node->alloc_memory - node->req_memory) / min_mem < slots)
            slots = (node->alloc_memory - node->req_memory) / min_mem;
        total += slots > 0 ? (uint64_t)slots : 0;
        fit_add(w, add, node);
    }
    *bound = total;
    *fit = fit_of(w);
}

int64_t ks_placement_pods_score(uint32_t count, uint32_t max_count)
{
    return max_count ? (int64_t)count * 100 / max_count : 0;
}
