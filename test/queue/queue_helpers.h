/*
 * queue_helpers.h - shared setup for the queue tests: a manual clock, pods the queue can
 * own, event maps built from registry plugins, and an invariant check after every step.
 */
#ifndef KSCHED_TEST_QUEUE_HELPERS_H
#define KSCHED_TEST_QUEUE_HELPERS_H

#include <criterion/criterion.h>

#include "fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/queue.h"
#include "ksched/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC INT64_C(1000000000)

/* Register this thread with RCU once (registering twice aborts). */
static inline void qt_rcu(void)
{
    static _Thread_local bool done;
    if (!done) {
        ks_rcu_register_thread();
        done = true;
    }
}

/* A clock the test moves by hand. */
static int64_t qt_now = 1000 * SEC;

static inline int64_t qt_clock(void *ctx)
{
    (void)ctx;
    return qt_now;
}

/* QueueSort of PrioritySort, through the registry's plugin. */
static inline bool qt_less(const void *ctx, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    static const struct ks_plugin *sort;
    (void)ctx;
    if (!sort)
        sort = ks_registry_find("PrioritySort");
    return sort->less(NULL, a, b);
}

/* A pending pod with one reference (the one the queue takes over), @cpu requested. */
static inline struct ks_pod *qt_pod(const char *name, int32_t priority, const char *requests)
{
    struct ks_pod *p = ks_fake_pod("default", name);
    p->priority = priority;
    if (requests)
        ks_fake_container(p, requests);
    ks_fake_pod_done(p);
    p->refs = 1;
    return p;
}

/* Replace the pod's scheduling gates with the comma-separated @gates ("" : none). */
static inline void qt_gates(struct ks_pod *p, const char *gates)
{
    p->ngates = 0;
    p->scheduling_gates = NULL;
    if (!gates || !*gates)
        return;
    uint32_t n = 1;
    for (const char *c = gates; *c; c++)
        n += *c == ',';
    p->scheduling_gates = ks_arena_calloc(&p->arena, n, sizeof(*p->scheduling_gates));
    const char *start = gates;
    for (uint32_t i = 0; i < n; i++) {
        const char *end = strchr(start, ',');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        p->scheduling_gates[i] = ks_arena_strndup(&p->arena, start, len);
        start = end ? end + 1 : start + len;
    }
    p->ngates = n;
}

/* The in-tree plugins the event tests use, in slot order. */
enum {
    QT_PRIORITY_SORT,
    QT_SCHEDULING_GATES,
    QT_FIT,
    QT_NODE_AFFINITY,
    QT_TAINT,
    QT_UNSCHEDULABLE,
    QT_INTER_POD_AFFINITY,
    QT_SPREAD,
    QT_PORTS,
    QT_NPLUGINS
};

static const char *const qt_plugin_names[QT_NPLUGINS] = {
    "PrioritySort",      "SchedulingGates",  "NodeResourcesFit",  "NodeAffinity", "TaintToleration",
    "NodeUnschedulable", "InterPodAffinity", "PodTopologySpread", "NodePorts",
};

static inline struct ks_event_map *qt_map(void)
{
    struct ks_event_map_plugin plugins[QT_NPLUGINS];
    for (int i = 0; i < QT_NPLUGINS; i++) {
        plugins[i] = (struct ks_event_map_plugin){.plugin = ks_registry_find(qt_plugin_names[i])};
        cr_assert_not_null(plugins[i].plugin, "%s", qt_plugin_names[i]);
    }
    plugins[QT_SCHEDULING_GATES].pre_enqueue = true;
    struct ks_event_map *m;
    cr_assert_eq(ks_event_map_create(plugins, QT_NPLUGINS, &m), 0);
    return m;
}

/* A queue with the manual clock, 1 s / 10 s backoff, and optionally an event map (profile 0). */
static inline struct ks_queue *qt_queue(const struct ks_event_map *const *map)
{
    static uint32_t names[1];
    cr_assert_eq(ks_api_init(), 0);
    qt_rcu();
    names[0] = ks_wk.default_scheduler;
    struct ks_queue_opts o = {
        .less = qt_less,
        .initial_backoff_ns = 1 * SEC,
        .max_backoff_ns = 10 * SEC,
        .clock = {.now = qt_clock},
        .nprofiles = map ? 1 : 0,
        .maps = map,
        .scheduler_names = names,
    };
    struct ks_queue *q;
    cr_assert_eq(ks_queue_create_opts(&o, &q), 0);
    return q;
}

static inline void qt_check(struct ks_queue *q)
{
    char msg[256];
    cr_assert_eq(ks_queue_check(q, msg, sizeof(msg)), 0, "queue invariant: %s", msg);
}

static inline enum ks_queue_where qt_where(struct ks_queue *q, const struct ks_pod *p)
{
    struct ks_queue_pod_info info;
    return ks_queue_pod_info(q, p, &info) ? info.where : KS_WHERE_NONE;
}

static inline const char *qt_where_name(enum ks_queue_where w)
{
    static const char *const n[] = {"none", "active", "backoff", "unschedulable", "in flight"};
    return n[w];
}

#define qt_expect_where(q, p, w)                                                                             \
    cr_expect_eq(qt_where((q), (p)), (w), "%s is %s, want %s", (p)->meta.name,                               \
                 qt_where_name(qt_where((q), (p))), qt_where_name(w))

/* Pop the next pod, expecting @want (by name); returns the in-flight struct. */
static inline struct ks_queued_pod *qt_pop(struct ks_queue *q, const char *want)
{
    struct ks_queued_pod *qp = ks_queue_pop(q, false);
    cr_assert_not_null(qp, "pop: empty, want %s", want);
    cr_assert_str_eq(qp->pod->meta.name, want, "pop: got %s, want %s", qp->pod->meta.name, want);
    return qp;
}

/* Fail the in-flight @qp as rejected by the plugins in @rejectors (slots), waiting for @events. */
static inline void qt_reject(struct ks_queue *q, struct ks_queued_pod *qp, uint64_t rejectors,
                             unsigned events)
{
    qp->unschedulable_plugins = rejectors;
    cr_assert_eq(ks_queue_add_unschedulable(q, qp, ks_queue_cycle(q), events), 0);
}

#define BIT(slot) (UINT64_C(1) << (slot))

#endif
