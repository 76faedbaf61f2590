/*
 * pod_group_run.h - running the scheduler over a cluster written as text, for the PodGroup
 * tests (test_pod_group.c, test_pod_group_preemption.c): outcomes and group attempts recorded,
 * PodGroups and pods written by helpers.
 */
#ifndef KSCHED_TEST_ENGINE_POD_GROUP_RUN_H
#define KSCHED_TEST_ENGINE_POD_GROUP_RUN_H

#include <criterion/criterion.h>

#include "../fakes/load_text.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct outcome {
    char pod[32];
    enum ks_sched_event_kind kind;
    char node[16];
    char message[256];
};

struct run {
    struct ks_config *cfg;
    struct ks_objects *objs;
    struct ks_cache *cache;
    struct ks_scheduler *s;
    uint32_t n;
    struct outcome out[256];
    uint32_t ngroups;             /* on_group calls */
    struct ks_group_attempt last; /* the last one (placements not kept) */
    char last_outcomes[8];        /* per placement: f(easible), i(nfeasible), r (no room), n(ot needed) */
    char last_chosen[16];
};

static inline void on_group(void *ctx, const struct ks_group_attempt *g)
{
    struct run *r = ctx;
    r->ngroups++;
    r->last = *g;
    r->last.placements = NULL;
    r->last.message = NULL;
    memset(r->last_outcomes, 0, sizeof(r->last_outcomes));
    for (uint32_t i = 0; i < g->nplacements && i + 1 < sizeof(r->last_outcomes); i++) {
        const struct ks_group_placement *p = &g->placements[i];
        r->last_outcomes[i] = !p->room ? 'r' : !p->evaluated ? 'n' : p->feasible ? 'f' : 'i';
    }
    snprintf(r->last_chosen, sizeof(r->last_chosen), "%s",
             g->chosen < g->nplacements ? ks_intern_str(g->placements[g->chosen].domain) : "");
}

static inline void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct run *r = ctx;
    if (r->n == 256 ||
        (ev->kind != KS_SCHED_SCHEDULED && ev->kind != KS_SCHED_UNSCHEDULABLE && ev->kind != KS_SCHED_ERROR &&
         ev->kind != KS_SCHED_PREEMPTED && ev->kind != KS_SCHED_NOMINATED))
        return;
    struct outcome *o = &r->out[r->n++];
    snprintf(o->pod, sizeof(o->pod), "%s", ev->pod->meta.name);
    o->kind = ev->kind;
    snprintf(o->node, sizeof(o->node), "%s", ev->node != KS_ID_EMPTY ? ks_intern_str(ev->node) : "");
    snprintf(o->message, sizeof(o->message), "%s", ev->message ? ev->message : "");
}

/* A PodGroup: @min 0 is basic. */
static inline void group(FILE *f, const char *name, int min)
{
    fprintf(f,
            "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: %s, namespace: "
            "default}\n",
            name);
    if (min)
        fprintf(f, "spec:\n  schedulingPolicy:\n    gang: {minCount: %d}\n", min);
    else
        fprintf(f, "spec:\n  schedulingPolicy:\n    basic: {}\n");
}

/* @count pods "<prefix>-<i>" of @cpu cpus in group @grp (NULL: none) with @priority. */
static inline void pods(FILE *f, const char *prefix, int count, const char *grp, const char *cpu,
                        int priority)
{
    for (int i = 0; i < count; i++) {
        fprintf(f, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: default}\nspec:\n",
                prefix, i);
        if (grp)
            fprintf(f, "  schedulingGroup: {podGroupName: %s}\n", grp);
        if (priority)
            fprintf(f, "  priority: %d\n", priority);
        fprintf(f, "  containers: [{name: c, resources: {requests: {cpu: \"%s\"}}}]\n", cpu);
    }
}

/* The configuration start() gives the next run: NULL, the default one. */
static const char *next_config;
/* The next run never asks the signature index. */
static bool next_no_index;

static inline void start(struct run *r, const char *text)
{
    struct ks_error err = {0};
    memset(r, 0, sizeof(*r));
    if (next_config)
        cr_assert_eq(ks_config_load_yaml("config.yaml", next_config, strlen(next_config), &r->cfg, &err), 0,
                     "%s", err.msg);
    else
        cr_assert_eq(ks_config_load_default(&r->cfg), 0);
    cr_assert_eq(ks_test_load_text(text, KS_VALIDATE_STRICT, &r->objs, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_cache_create(&r->cache), 0);
    struct ks_scheduler_opts opts = {.config = r->cfg,
                                     .objects = r->objs,
                                     .seeded = true,
                                     .seed = 1,
                                     .deterministic = true,
                                     .no_index = next_no_index,
                                     .on_event = on_event,
                                     .on_group = on_group,
                                     .ctx = r};
    cr_assert_eq(ks_scheduler_create(&opts, r->cache, &r->s, &err), 0, "%s", err.msg);
    for (uint32_t i = 0; i < ks_objects_count(r->objs, NODE); i++)
        cr_assert_eq(ks_cache_add_node(r->cache, ks_objects_nodes(r->objs)[i]), 0);
    r->objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(r->objs, POD); i++)
        cr_assert_eq(ks_scheduler_add_pod(r->s, ks_objects_pods(r->objs)[i]), 0);
}

static inline void finish(struct run *r)
{
    ks_scheduler_destroy(r->s);
    ks_cache_destroy(r->cache);
    ks_objects_destroy(r->objs);
    ks_config_destroy(r->cfg);
}

/* @prefix, then what @build writes, as one malloc'd text. */
static inline char *build_text(const char *prefix, void (*build)(FILE *f))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    fputs(prefix, f);
    build(f);
    cr_assert_eq(fclose(f), 0);
    return text;
}

/* start() on build_text(@prefix, @build), then schedule until nothing is left to do. */
static inline void run_built(struct run *r, const char *prefix, void (*build)(FILE *f))
{
    char *text = build_text(prefix, build);
    start(r, text);
    free(text);
    ks_scheduler_run_until_idle(r->s);
}

/* The first outcome reported for @pod. */
static inline const struct outcome *of(const struct run *r, const char *pod)
{
    for (uint32_t i = 0; i < r->n; i++) {
        if (strcmp(r->out[i].pod, pod) == 0)
            return &r->out[i];
    }
    return NULL;
}

static inline uint32_t count(const struct run *r, enum ks_sched_event_kind kind)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n; i++)
        n += r->out[i].kind == kind;
    return n;
}

#endif
