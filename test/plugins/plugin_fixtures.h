/*
 * plugin_fixtures.h - what the plugin tests build by hand: pods with several containers,
 * node records as the cache builds them (struct ks_node_snap), a cycle state, and
 * plugin instances made through their ops table.
 *
 * A record sums its pods the way upstream's NodeInfo.AddPod does (requested, non-zero
 * requested for cpu and memory, scalar requests merged by name, the pod count) and
 * interns one TaintToleration message per taint, as cache/node_info.c does.
 *
 * Context: test code, one thread. Failures abort through Criterion's asserts.
 */
#ifndef KSCHED_TEST_PLUGIN_FIXTURES_H
#define KSCHED_TEST_PLUGIN_FIXTURES_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakes/objects.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/plugin_types.h"

#define FX_MAX 64 /* pods per node, scalar names per node */

static inline void *fx_must(void *p)
{
    cr_assert(p != NULL, "out of memory");
    return p;
}

/*
 * fx_pod - a pending pod with one container per entry of @containers (resource syntax,
 * "" for a container without requests), NULL-terminated. Use FX_POD(...).
 */
static inline struct ks_pod *fx_pod_v(const char *const *containers)
{
    static unsigned seq;
    char name[32];
    snprintf(name, sizeof(name), "pod-%u", ++seq);
    struct ks_pod *p = ks_fake_pod("default", name);
    for (const char *const *c = containers; *c; c++)
        ks_fake_container(p, **c ? *c : NULL);
    return p;
}

#define FX_POD(...) fx_pod_v((const char *const[]){__VA_ARGS__, NULL})

/* fx_done - finish a pod built with FX_POD (requests derived); returns it. */
static inline struct ks_pod *fx_done(struct ks_pod *p)
{
    return ks_fake_pod_done(p);
}

/* fx_node - a node named @name with allocatable (and capacity) @alloc (resource syntax, NULL: none). */
static inline struct ks_node *fx_node(const char *name, const char *alloc)
{
    struct ks_node *n = ks_fake_node(name, "");
    if (alloc)
        ks_fake_node_allocatable(n, alloc);
    return n;
}

static inline int fx_cmp_item(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_resource_item *)a)->name, y = ((const struct ks_resource_item *)b)->name;
    return (x > y) - (x < y);
}

/* The record the cache would publish for @node with @pods (finished) on it. Free with fx_snap_free(). */
static inline struct ks_node_snap *fx_snap(const struct ks_node *node, struct ks_pod *const *pods,
                                           uint32_t npods)
{
    cr_assert(npods <= FX_MAX);
    struct ks_node_snap *s = fx_must(calloc(1, sizeof(*s)));
    struct ks_resource_item *scalar = fx_must(calloc(FX_MAX, sizeof(*scalar)));
    const struct ks_pod **list = fx_must(calloc(FX_MAX, sizeof(*list)));
    uint32_t *reasons = fx_must(calloc(node->ntaints ? node->ntaints : 1, sizeof(*reasons)));
    uint32_t nscalar = 0;

    s->node = node;
    s->name = node->name_id;
    s->flags = KS_SNAP_HAS_NODE | (node->unschedulable ? KS_SNAP_UNSCHEDULABLE : 0);
    s->alloc_milli_cpu = node->alloc.milli_cpu;
    s->alloc_memory = node->alloc.memory;
    s->alloc_ephemeral = node->alloc.ephemeral_storage;
    s->alloc_pods = (int32_t)node->alloc.allowed_pods;
    for (uint32_t i = 0; i < npods; i++) {
        const struct ks_pod *p = pods[i];
        s->req_milli_cpu += p->requests.milli_cpu;
        s->req_memory += p->requests.memory;
        s->req_ephemeral += p->requests.ephemeral_storage;
        s->nonzero_milli_cpu += p->nonzero_milli_cpu;
        s->nonzero_memory += p->nonzero_memory;
        for (uint32_t k = 0; k < p->requests.nscalar; k++) {
            const struct ks_resource_item *it = &p->requests.scalar[k];
            uint32_t j = 0;
            while (j < nscalar && scalar[j].name != it->name)
                j++;
            cr_assert(j < FX_MAX);
            scalar[j].name = it->name;
            scalar[j].value += it->value;
            nscalar += j == nscalar;
        }
        list[i] = p;
    }
    /* the cache keeps no zero entries */
    uint32_t kept = 0;
    for (uint32_t j = 0; j < nscalar; j++) {
        if (scalar[j].value != 0)
            scalar[kept++] = scalar[j];
    }
    qsort(scalar, kept, sizeof(*scalar), fx_cmp_item);
    s->req_scalar = scalar;
    s->nreq_scalar = kept;
    s->pods = list;
    s->npods = npods;
    for (uint32_t i = 0; i < node->ntaints; i++) {
        char msg[512];
        snprintf(msg, sizeof(msg), "node(s) had untolerated taint {%s: %s}",
                 ks_intern_str(node->taints[i].key), ks_intern_str(node->taints[i].value));
        reasons[i] = ks_intern(msg);
    }
    s->taint_reasons = reasons;
    return s;
}

static inline void fx_snap_free(struct ks_node_snap *s)
{
    if (!s)
        return;
    free((void *)s->req_scalar);
    free((void *)s->pods);
    free((void *)s->taint_reasons);
    free(s);
}

/* A cycle state for one pod; fx_cs_free() releases its arena. */
static inline void fx_cs_init(struct ks_cycle_state *cs)
{
    memset(cs, 0, sizeof(*cs));
}

static inline void fx_cs_free(struct ks_cycle_state *cs)
{
    ks_arena_destroy(&cs->arena);
    memset(cs, 0, sizeof(*cs));
}

/* fx_init - an instance of @p in slot 0 with @args (NULL: the plugin's defaults) and no framework. */
static inline void *fx_init(const struct ks_plugin *p, const void *args)
{
    struct ks_plugin_init in = {.args = args, .slot = 0, .framework = NULL};
    struct ks_error err = {0};
    void *self = NULL;
    if (p->init)
        cr_assert(p->init(&in, &self, &err) == 0, "init %s: %s", p->name, err.msg);
    return self;
}

/* The message of a status's reason @i. */
static inline const char *fx_reason(const struct ks_status *st, uint32_t i)
{
    return i < st->nreasons ? ks_intern_str(st->reasons[i]) : "(none)";
}

/* ---- score tables ------------------------------------------------------------------------- */

#define FX_MAX_CONTAINERS 3
#define FX_MAX_NODES      3
#define FX_MAX_EXISTING   4

/* A pod by its containers' requests ("" : a container without requests; none: no containers). */
struct fx_pod_spec {
    const char *c[FX_MAX_CONTAINERS];
    const char *sidecar; /* a restartable init container's requests, NULL for none */
};

/* One existing pod on node @node. */
struct fx_placed {
    int node;
    struct fx_pod_spec pod;
};

/* One row of upstream's score tables: the pod, the nodes, the pods already on them, the scores. */
struct fx_score_case {
    const char *name;
    struct fx_pod_spec pod;
    const char *nodes[FX_MAX_NODES]; /* allocatable of node1, node2, ...; NULL ends */
    uint32_t nexisting;
    struct fx_placed existing[FX_MAX_EXISTING];
    int64_t want[FX_MAX_NODES];
    int want_code; /* of PreScore (Skip) or Score (Error); KS_SUCCESS usually */
};

static inline struct ks_pod *fx_pod_of(const struct fx_pod_spec *spec)
{
    struct ks_pod *p = ks_fake_pod("default", "pod");
    for (int i = 0; i < FX_MAX_CONTAINERS && spec->c[i]; i++)
        ks_fake_container(p, *spec->c[i] ? spec->c[i] : NULL);
    if (spec->sidecar)
        ks_fake_init_container(p, *spec->sidecar ? spec->sidecar : NULL, true);
    return ks_fake_pod_done(p);
}

/*
 * fx_run_scores - build the case's cluster, run @p's PreScore (when @pre_score) and Score
 * on each node in order, and compare with the expected scores and code.
 */
static inline void fx_run_scores(const struct ks_plugin *p, const void *args, const struct fx_score_case *c,
                                 bool pre_score)
{
    void *self = fx_init(p, args);
    struct ks_pod *pod = fx_pod_of(&c->pod);
    struct ks_pod *existing[FX_MAX_EXISTING] = {0};
    struct ks_node *nodes[FX_MAX_NODES] = {0};
    struct ks_node_snap *snaps[FX_MAX_NODES] = {0};
    uint32_t n = 0;

    for (uint32_t i = 0; i < c->nexisting; i++)
        existing[i] = fx_pod_of(&c->existing[i].pod);
    for (; n < FX_MAX_NODES && c->nodes[n]; n++) {
        char name[16];
        struct ks_pod *on[FX_MAX_EXISTING];
        uint32_t non = 0;
        snprintf(name, sizeof(name), "node%u", n + 1);
        nodes[n] = fx_node(name, c->nodes[n]);
        for (uint32_t i = 0; i < c->nexisting; i++) {
            if (c->existing[i].node == (int)n)
                on[non++] = existing[i];
        }
        snaps[n] = fx_snap(nodes[n], on, non);
    }

    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);
    int code = KS_SUCCESS;
    if (pre_score && p->pre_score)
        code = p->pre_score(self, &cs, pod, (const struct ks_node_snap *const *)snaps, n, &st);
    if (code == KS_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            int64_t score = -1;
            code = p->score(self, &cs, pod, snaps[i], &score, &st);
            if (code != KS_SUCCESS)
                break;
            cr_expect(eq(i64, score, c->want[i]), "%s: node%u (PreScore %s)", c->name, i + 1,
                      pre_score ? "run" : "not run");
        }
    }
    cr_expect(eq(int, code, c->want_code), "%s: code (%s)", c->name, fx_reason(&st, 0));

    fx_cs_free(&cs);
    for (uint32_t i = 0; i < n; i++) {
        fx_snap_free(snaps[i]);
        ks_node_destroy(nodes[i]);
    }
    for (uint32_t i = 0; i < c->nexisting; i++)
        ks_pod_destroy(existing[i]);
    ks_pod_destroy(pod);
    if (p->destroy)
        p->destroy(self);
}

#endif
