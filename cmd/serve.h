/*
 * serve.h - the parts of `ksched serve` (cmd/serve_*.c), each usable and testable alone.
 *
 *   serve_intake.c   informer events -> the scheduler, the cache and the live objects
 *                    (kube-scheduler's eventhandlers.go)
 *   serve_writer.c   decisions -> the API server: Bindings, pod status patches, Events,
 *                    victim deletions (schedule_one.go, default_binder.go, util.PatchPodStatus,
 *                    client-go tools/events)
 *   serve_metrics.c  the scheduler's Prometheus metrics (pkg/scheduler/metrics)
 *   serve_http.c     /healthz, /readyz, /metrics
 *   serve_cmd.c      flags, start-up, leader election, the scheduling thread, shutdown
 *
 * Threads: the informer thread (kube.h) only queues events; the intake thread applies
 * them (the scheduler's one event-intake thread, registered with RCU); the scheduling
 * thread runs cycles; binder threads POST Bindings; the writer thread sends every other
 * write; the HTTP thread answers probes and scrapes; the lease thread renews.
 */
#ifndef KSCHED_CMD_SERVE_H
#define KSCHED_CMD_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ksched/cache.h"
#include "ksched/config_types.h"
#include "ksched/framework.h"
#include "ksched/kube.h"
#include "ksched/loader.h"
#include "ksched/metrics.h"
#include "ksched/scheduler.h"

/* ---- a string-keyed hash map (serve_map.c) ---------------------------------------------- */

/* Keys are copied; values are the caller's. Not thread-safe: each user locks as it needs. */
struct ks_smap {
    struct ks_smap_entry **buckets;
    uint32_t nbuckets, n;
};

void *ks_smap_get(const struct ks_smap *m, const char *key);
/* ks_smap_put - set @key to @value; *old (may be NULL) gets the value it replaced or NULL. 0 or -ENOMEM. */
int ks_smap_put(struct ks_smap *m, const char *key, void *value, void **old);
/* ks_smap_del - remove @key; returns its value or NULL. */
void *ks_smap_del(struct ks_smap *m, const char *key);
/* ks_smap_each - call @fn on every entry (not changing the map). */
void ks_smap_each(const struct ks_smap *m, void (*fn)(void *ctx, const char *key, void *value), void *ctx);
/* ks_smap_clear - remove everything, calling @fn (may be NULL) on each value. */
void ks_smap_clear(struct ks_smap *m, void (*fn)(void *value));

/* ---- intake (serve_intake.c) ------------------------------------------------------------ */

struct ks_intake;
struct ks_serve_metrics;

/* Counters of what the intake did (tests, logs). */
struct ks_intake_stats {
    uint64_t events, skipped; /* applied; ignored as inconsistent (a delete of an unknown object...) */
    uint32_t nodes, pods;     /* held now */
    uint32_t queued_objects;  /* object changes waiting for the scheduling thread */
};

/*
 * ks_intake_create - an empty intake. Until ks_intake_go_live() it only records objects
 * (nodes, pods, and every other kind into @objects); afterwards it feeds the scheduler.
 * @objects (empty, caller-owned, outliving the intake and the scheduler) is the set the
 * scheduler's plugins read. 0 or -ENOMEM.
 */
int ks_intake_create(struct ks_objects *objects, struct ks_intake **out);

/*
 * ks_intake_destroy - drop every pod reference, free nodes never handed to a cache and
 * every object replaced or deleted while live (plugins may have indexed them: they are
 * kept until here). The scheduler and the cache must be gone. Accepts NULL.
 */
void ks_intake_destroy(struct ks_intake *in);

/*
 * ks_intake_apply - one informer event (the object's ownership passes, as from the
 * informer). Context: the intake thread (registered with RCU once live), one at a time.
 */
void ks_intake_apply(struct ks_intake *in, const struct ks_watch_event *ev);

/*
 * ks_intake_go_live - hand the recorded nodes to @cache's owner @s and the pods to @s (bound
 * ones to the cache, pending ones to the queue), then apply every later event to them.
 * Context: the intake thread, registered with RCU. 0 or a negative errno.
 */
int ks_intake_go_live(struct ks_intake *in, struct ks_scheduler *s, struct ks_cache *cache);

/*
 * ks_intake_apply_objects - apply the queued changes of the objects plugins read. Context:
 * the scheduling thread between cycles (no worker and no plugin is reading them).
 */
void ks_intake_apply_objects(struct ks_intake *in);

void ks_intake_stats(struct ks_intake *in, struct ks_intake_stats *out);

/* ks_intake_set_metrics - count the pods the intake queues (scheduler_queue_incoming_pods_total). */
void ks_intake_set_metrics(struct ks_intake *in, struct ks_serve_metrics *m);

/* ks_intake_discard - free the object of an event that will not be applied (shutting down). */
void ks_intake_discard(const struct ks_watch_event *ev);

/* ks_intake_find_pod - the pod held for namespace/name (a new reference), NULL when none (tests). */
struct ks_pod *ks_intake_find_pod(struct ks_intake *in, const char *namespace_, const char *name);

/* ---- writer (serve_writer.c) ------------------------------------------------------------ */

struct ks_writer;

/* Where writes go: ks_kube_request's contract (tests pass a fake). */
struct ks_serve_transport {
    int (*request)(void *ctx, const char *method, const char *path, const char *content_type,
                   const char *body, size_t len, struct ks_kube_response *resp);
    void *ctx;
};

struct ks_writer_opts {
    struct ks_serve_transport transport;
    /* Events only (kube-scheduler records them through a client of their own, so they do not
     * share the write rate limit with bindings); NULL request: @transport */
    struct ks_serve_transport events;
    const char *reporting_instance; /* "<schedulerName>-<hostname>" is built per profile from this hostname */
    uint32_t max_queued;            /* writes waiting; beyond it Events are dropped (0: 100000) */
};

/* Counters (tests, logs). */
struct ks_writer_stats {
    uint64_t sent, failed, dropped, skipped;
};

/* ks_writer_create - start the writer thread. 0 or -errno. */
int ks_writer_create(const struct ks_writer_opts *opts, struct ks_writer **out);

/*
 * ks_writer_destroy - send what is queued (giving up on what is left after @drain_ms), stop
 * the thread and free. Accepts NULL.
 */
void ks_writer_destroy(struct ks_writer *w, int64_t drain_ms);

/* ks_writer_flush - wait until nothing is queued or in progress (tests). */
void ks_writer_flush(struct ks_writer *w);

void ks_writer_stats(struct ks_writer *w, struct ks_writer_stats *out);

/* The binder backend: POST the Binding on the calling binder thread. */
struct ks_binder_backend ks_writer_binder(struct ks_writer *w);

/* The evictor: queue the victim's DELETE and its Preempted Event. Scheduling thread. */
struct ks_evictor ks_writer_evictor(struct ks_writer *w);

/*
 * ks_writer_on_sched_event - turn a scheduler outcome into writes (Scheduled: an Event, and
 * a status patch clearing a nomination to another node; Unschedulable/Error: the
 * PodScheduled=False status patch - with status.nominatedNodeName when the same cycle
 * nominated a node - and a FailedScheduling Event; Nominated: remembered for that patch).
 * Context: the scheduler's on_event (scheduling or binder threads, serialised by it).
 */
void ks_writer_on_sched_event(struct ks_writer *w, const struct ks_sched_event *ev);

/* Queue one request (the writer frees @body). 0 or -ENOMEM / -ENOSPC (queue full). Any thread. */
int ks_writer_enqueue(struct ks_writer *w, const char *method, const char *path, const char *content_type,
                      char *body, size_t len, bool droppable);

/*
 * Request bodies (malloc'ed, NUL-terminated; NULL on ENOMEM), exposed for the tests:
 * the v1 Binding; the strategic merge patch of pods/status that sets PodScheduled=False
 * with @reason and @message (and status.nominatedNodeName when @nominated is not NULL)
 * against the conditions @pod has - NULL with *unchanged set when the patch would change
 * nothing (@last_message: what we sent last time, NULL when unknown); the patch that only
 * sets or clears (@nominated NULL) status.nominatedNodeName; and an events.k8s.io/v1 Event.
 */
char *ks_serve_binding_body(const struct ks_pod *pod, const char *node, size_t *len);
char *ks_serve_condition_patch(const struct ks_pod *pod, const char *reason, const char *message,
                               const char *nominated, const char *last_message, int64_t now_ns,
                               bool *unchanged, size_t *len);
char *ks_serve_nominated_patch(const char *nominated, size_t *len);

struct ks_serve_event {
    const struct ks_pod *regarding;
    const struct ks_pod *related; /* NULL: none */
    const char *type;             /* "Normal", "Warning" */
    const char *reason, *action, *note;
    const char *reporting_controller, *reporting_instance;
    int64_t now_ns;
};
char *ks_serve_event_body(const struct ks_serve_event *ev, size_t *len);

/* ---- metrics (serve_metrics.c) ---------------------------------------------------------- */

struct ks_serve_metrics;

/* ks_serve_metrics_create - register the scheduler's families in @reg for the profiles of @cfg. */
int ks_serve_metrics_create(struct ks_metrics *reg, const struct ks_config *cfg,
                            struct ks_serve_metrics **out);
void ks_serve_metrics_destroy(struct ks_serve_metrics *m);

/* ks_serve_metrics_attach - read the pending-pods gauges from @s's queue at each scrape (NULL: stop). */
void ks_serve_metrics_attach(struct ks_serve_metrics *m, struct ks_scheduler *s);

/* A cycle begins for @qp (scheduling thread): remembers when, for the attempt's duration. */
void ks_serve_metrics_cycle(struct ks_serve_metrics *m, const struct ks_queued_pod *qp, int64_t now_ns);

/* An outcome (the scheduler's on_event): attempts, durations, preemption. */
void ks_serve_metrics_event(struct ks_serve_metrics *m, const struct ks_sched_event *ev, int64_t now_ns);

/* A pod entered the queue (scheduler_queue_incoming_pods_total{queue="active",event}). */
void ks_serve_metrics_incoming(struct ks_serve_metrics *m, const char *event);

/* A victim was evicted (counted into the next Nominated's scheduler_preemption_victims). */
void ks_serve_metrics_victim(struct ks_serve_metrics *m);

/* ---- HTTP (serve_http.c) ---------------------------------------------------------------- */

struct ks_http;

/* What a GET of a path answers: 200 with the body written to @out, or another status. */
typedef int (*ks_http_handler_fn)(void *ctx, const char *path, FILE *out, const char **content_type);

/*
 * ks_http_start - listen on @addr ("host:port", "[v6]:port"; port 0 picks one) and answer
 * GETs on a thread of its own with @handler. *bound_port gets the port. 0, or -errno with a
 * message on standard error.
 */
int ks_http_start(const char *addr, ks_http_handler_fn handler, void *ctx, struct ks_http **out,
                  int *bound_port);
void ks_http_stop(struct ks_http *h); /* accepts NULL */

/* ---- flags (serve_flags.c) -------------------------------------------------------------- */

struct ks_serve_args {
    const char *kubeconfig;   /* NULL: clientConnection.kubeconfig, else in-cluster */
    const char *config;       /* NULL: kube-scheduler's defaults */
    const char *metrics_addr; /* "" disables; default 127.0.0.1:10259 */
    const char *identity;     /* NULL: hostname_uuid */
    bool seeded;
    uint64_t seed;
    uint32_t binders; /* binder threads (each POSTs one Binding at a time); 0: the scheduler's default */
    /* leader election: -1 / 0 / NULL: from the configuration (leaderElection) */
    int leader_elect;
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    const char *lock_namespace, *lock_name;
};

/* ks_serve_parse_duration - "15s", "1m30s", "200ms", "2h" (Go's time.ParseDuration, non-negative). 0 or
 * -EINVAL. */
int ks_serve_parse_duration(const char *s, int64_t *ns);

/* ks_serve_parse_args - argv (argv[0] is "serve") into @a. 0; 1 when an argument is -h or --help (the
 * caller prints ks_serve_usage); or -EINVAL with one message on standard error. */
int ks_serve_parse_args(int argc, char **argv, struct ks_serve_args *a);

/* ks_serve_usage - the usage text. */
void ks_serve_usage(FILE *out);

#endif
