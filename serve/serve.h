/*
 * serve.h - the parts of `ksched serve` (serve/serve_*.c), each usable and testable alone.
 *
 *   serve_intake.c   informer events -> the scheduler, the cache and the live objects
 *                    (kube-scheduler's eventhandlers.go)
 *   serve_writer.c   decisions -> the API server: Bindings, pod status patches, Events,
 *                    victim deletions (schedule_one.go, default_binder.go, util.PatchPodStatus)
 *   serve_events.c   Events and their series (client-go tools/events)
 *   serve_metrics.c  the scheduler's Prometheus metrics (pkg/scheduler/metrics)
 *   serve_volumes.c  VolumeBinding's API updates and its waits for the PV controller
 *                    (binder.go BindPodVolumes; include/ksched/volume_api.h)
 *   serve_dra.c      DynamicResources' ResourceClaim writes (bindClaim, Unreserve, the
 *                    deallocation; include/ksched/internal/dra_api.h), serve_dra_json.c their JSON,
 *                    and the discovery of resource.k8s.io/v1
 *   serve_http.c     /healthz, /readyz, /metrics over HTTP or HTTPS (serve_http_request.c:
 *                    the request head; serve_tls.c: the serving certificate; serve_auth.c:
 *                    TokenReview/SubjectAccessReview delegation, serve_auth_cache.c its caches)
 *   serve_flags.c    the flags (the command, cmd/serve_cmd.c, parses them and calls ks_serve_run)
 *   serve_run.c      start-up, leader election, the scheduling thread, shutdown
 *
 * Threads: the informer thread (kube.h) only queues events; the intake thread applies
 * them (the scheduler's one event-intake thread, registered with RCU); the scheduling
 * thread runs cycles; binder threads POST Bindings; the writer thread sends every other
 * write (and ticks the Event series); the HTTP thread answers probes and scrapes (its workers wait on the
 * reviews that authenticate and authorize them); the lease thread renews.
 */
#ifndef KSCHED_SERVE_SERVE_H
#define KSCHED_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ksched/base/metrics.h"
#include "ksched/config_types.h"
#include "ksched/dra_extended.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/kube.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

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
/*
 * ks_smap_sweep - call @fn on every entry and remove those it returns true for; @fn may free
 * the value of an entry it removes, and must not otherwise change the map.
 */
void ks_smap_sweep(struct ks_smap *m, bool (*fn)(void *ctx, const char *key, void *value), void *ctx);
/* ks_smap_hash - the map's hash of @s (64-bit FNV-1a). */
uint64_t ks_smap_hash(const char *s);
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

struct ks_serve_volumes;

/*
 * ks_intake_set_volumes - tell @v every PV and PVC the intake takes in (the newest object,
 * or NULL when deleted) and every pod deletion, on the intake thread. Set before the
 * informers start.
 */
void ks_intake_set_volumes(struct ks_intake *in, struct ks_serve_volumes *v);

/* ks_intake_discard - free the object of an event that will not be applied (shutting down). */
void ks_intake_discard(const struct ks_watch_event *ev);

/* ks_intake_find_pod - the pod held for namespace/name (a new reference), NULL when none (tests). */
struct ks_pod *ks_intake_find_pod(struct ks_intake *in, const char *namespace_, const char *name);

/* ---- writer (serve_writer.c) ------------------------------------------------------------ */

/*
 * ks_serve_text_close - close @out, a stream of open_memstream(@buf, ...): *@buf, the text; NULL
 * when out of memory, and *@buf is then freed and NULL.
 */
char *ks_serve_text_close(FILE *out, char **buf);

/* ks_serve_format_time - metav1.Time (RFC 3339 in seconds) or, with @micro, metav1.MicroTime of @ns. */
void ks_serve_format_time(int64_t ns, bool micro, char *buf, size_t len);

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
    uint32_t event_lanes;           /* Events sent side by side (0: KS_WRITER_EVENT_LANES; at most 16) */
    /* Event series periods (serve_events.c); 0: client-go's 6 min and 30 min */
    int64_t series_finish_ns, series_refresh_ns;
};

enum { KS_WRITER_EVENT_LANES = 4 };

/* Counters (tests, logs). */
struct ks_writer_stats {
    uint64_t sent, failed, dropped, skipped;
    uint64_t series_counted; /* Events that only counted in a series (nothing sent) */
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

/*
 * The evictor: queue a preemption's calls (serve_preempt.c: each victim's DisruptionTarget
 * condition, its DELETE, its Preempted Event); evict_async reports when they are done.
 * Scheduling thread.
 */
struct ks_evictor ks_writer_evictor(struct ks_writer *w);

/*
 * A preemption's calls (serve_preempt.c), one job of the writer's lane 0:
 *   ks__preemption_calls_new - for @n victims of @preemptor on @node (references taken), and
 *     @done (NULL: none) to call with the outcome once they ran. NULL when out of memory.
 *   ks__preemption_calls_run - make them (the lane's thread), then report.
 *   ks__preemption_calls_free - free; calls never run are reported failed. Accepts NULL.
 * And what they use of the writer (serve_writer.c): one request on its transport with its
 * retries and counts (ks__writer_request), and a victim's Preempted Event.
 */
struct ks_preemption_calls;
struct ks_preemption_calls *ks__preemption_calls_new(const struct ks_pod *preemptor, uint32_t node,
                                                     const struct ks_pod *const *victims, uint32_t n,
                                                     void (*done)(void *ctx, bool ok), void *done_ctx);
void ks__preemption_calls_run(struct ks_writer *w, struct ks_preemption_calls *c);
void ks__preemption_calls_free(struct ks_preemption_calls *c);
int ks__writer_request(struct ks_writer *w, const char *method, const char *path, const char *content_type,
                       const char *body, size_t len, struct ks_kube_response *resp);
void ks__writer_preempted_event(struct ks_writer *w, const struct ks_pod *victim,
                                const struct ks_pod *preemptor, uint32_t node);

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

/*
 * ks_serve_disruption_patch - the strategic merge patch of pods/status that gives @victim the
 * DisruptionTarget condition preemption sets ("<@scheduler_name>: preempting to accommodate
 * a higher priority pod"); NULL with *@len untouched when @victim has it already (True,
 * PreemptionByScheduler) or out of memory.
 */
char *ks_serve_disruption_patch(const struct ks_pod *victim, const char *scheduler_name, int64_t now_ns,
                                size_t *len);

/* ---- PodGroup status (serve_podgroup.c) ------------------------------------------------- */

struct ks_pod_group;
struct ks_group_attempt;
struct ks_objects;

/*
 * ks_serve_pod_group_patch - the strategic merge patch of podgroups/status that sets
 * PodGroupInitiallyScheduled for the outcome @g against what @pg holds (malloc'ed); NULL when
 * it would change nothing (or a True condition would go False), or on ENOMEM.
 */
char *ks_serve_pod_group_patch(const struct ks_pod_group *pg, const struct ks_group_attempt *g,
                               int64_t now_ns, size_t *len);

/*
 * ks_serve_on_group - queue that patch for the PodGroup of @g among @objs, when there is one
 * and it changes something. Context: the scheduler's on_group (the scheduling thread, which
 * alone changes @objs).
 */
void ks_serve_on_group(struct ks_writer *w, const struct ks_objects *objs, const struct ks_group_attempt *g,
                       int64_t now_ns);

struct ks_serve_event {
    const struct ks_pod *regarding;
    const struct ks_pod *related; /* NULL: none */
    const char *type;             /* "Normal", "Warning" */
    const char *reason, *action, *note;
    const char *reporting_controller, *reporting_instance;
    int64_t now_ns;
};
char *ks_serve_event_body(const struct ks_serve_event *ev, size_t *len); /* serve_events.c */
/*
 * ks_serve_object_ref - a v1.ObjectReference on @out as reference.GetReference makes it: kind,
 * namespace, name, uid and resourceVersion (the last two omitted when empty), apiVersion "v1".
 * serve_events.c.
 */
void ks_serve_object_ref(FILE *out, const char *kind, const char *namespace_, const char *name,
                         const char *uid, const char *resource_version);

/* ---- Event series (serve_events.c) ------------------------------------------------------ */

/* client-go tools/events: finishTime and refreshTime */
#define KS_EVENT_SERIES_FINISH_NS  (INT64_C(6) * 60 * 1000000000)
#define KS_EVENT_SERIES_REFRESH_NS (INT64_C(30) * 60 * 1000000000)

struct ks_event_series;

/* One request for an Event (strings malloc'ed; free with ks_event_write_free). */
struct ks_event_write {
    const char *method; /* "POST" (a new Event) or "PATCH" (its series) */
    uint64_t shard;     /* the regarding object's: the writes of its Events keep their order by it */
    char *path;
    char *body;
    size_t len;
    /* PATCH only: the Event with its series, to POST to @create_path when the patch finds none (404) */
    char *create_path, *create_body;
    size_t create_len;
};
void ks_event_write_free(struct ks_event_write *w);

/* ks_event_series_create - an empty cache; a period <= 0 takes client-go's. 0 or -ENOMEM. */
int ks_event_series_create(int64_t finish_ns, int64_t refresh_ns, struct ks_event_series **out);
void ks_event_series_destroy(struct ks_event_series *s); /* accepts NULL */

/* ks_event_series_period - the finish period, or (@refresh) the refresh period. */
int64_t ks_event_series_period(const struct ks_event_series *s, bool refresh);

/*
 * ks_event_series_record - record @ev at @ev->now_ns (wall clock): 1 with *out to send (the
 * POST of a new Event, or the PATCH that makes the first of its kind a series), 0 when it
 * only counted in a series, -ENOMEM. Any thread.
 */
int ks_event_series_record(struct ks_event_series *s, const struct ks_serve_event *ev,
                           struct ks_event_write *out);

/*
 * ks_event_series_tick - finishSeries at @now_ns (wall clock) and, with @refresh,
 * refreshExistingEventSeries: @emit gets each PATCH to send and owns it. Call it every finish
 * period (@refresh every refresh period). Any thread; @emit runs with no lock held.
 */
void ks_event_series_tick(struct ks_event_series *s, int64_t now_ns, bool refresh,
                          void (*emit)(void *ctx, struct ks_event_write *w), void *ctx);

/* ks_event_series_stats - Events remembered, and how many of them are series. */
void ks_event_series_stats(struct ks_event_series *s, size_t *events, size_t *series);

/* ---- volume binding (serve_volumes.c) ---------------------------------------------------- */

struct ks_serve_volumes_opts {
    struct ks_serve_transport transport; /* GET and PUT of PVs and PVCs (ks_kube_request's contract) */
    int64_t poll_ns;                     /* how often waits are checked without news; 0: 1 s */
};

/* Counters (tests, logs). */
struct ks_serve_volumes_stats {
    uint64_t updates;         /* PUTs that succeeded */
    uint64_t update_failures; /* PUTs (or their GETs) that did not */
    uint64_t conflicts;       /* of which 409 Conflict */
    uint64_t waits, bound, failed, timeouts;
    uint32_t waiting; /* now */
};

/*
 * ks_serve_volumes_create - the volume API (ksched/volume_api.h) over @opts->transport, and
 * the thread that checks its waits. 0 or -errno.
 */
int ks_serve_volumes_create(const struct ks_serve_volumes_opts *opts, struct ks_serve_volumes **out);

/* ks_serve_volumes_api - the ops table for ks_scheduler_opts.volume_api (lives as long as @v). */
const struct ks_volume_api *ks_serve_volumes_api(struct ks_serve_volumes *v);

/*
 * ks_serve_volumes_object - the newest PV or PVC @key ("/name", "namespace/name"; other
 * kinds are ignored), NULL when deleted; it must stay valid until @v is destroyed. Waits
 * are checked again. The intake thread.
 */
void ks_serve_volumes_object(struct ks_serve_volumes *v, enum ks_kind kind, const char *key, const void *obj);

/* ks_serve_volumes_pod_deleted - pod "namespace/name" is gone: its wait fails. The intake thread. */
void ks_serve_volumes_pod_deleted(struct ks_serve_volumes *v, const char *key);

/*
 * ks_serve_volumes_cancel - end every wait (KS_VOL_CANCELLED) and refuse new ones: at
 * shutdown, before the scheduler waits for its bindings in flight. Any thread. Accepts NULL.
 */
void ks_serve_volumes_cancel(struct ks_serve_volumes *v);

void ks_serve_volumes_stats(struct ks_serve_volumes *v, struct ks_serve_volumes_stats *out);

/* ks_serve_volumes_destroy - cancel, stop the thread, free. The objects stay the intake's. Accepts NULL. */
void ks_serve_volumes_destroy(struct ks_serve_volumes *v);

/* ---- DRA claims (serve_dra.c, serve_dra_json.c) -------------------------------------------- */

/* ResourceClaim finalizer the scheduler adds with an allocation (resource.k8s.io/v1 Finalizer) */
#define KS_DRA_FINALIZER "resource.kubernetes.io/delete-protection"

struct ks_serve_dra;
struct ks_allocation;

struct ks_serve_dra_opts {
    struct ks_serve_transport
        transport;     /* GET, PUT and PATCH of ResourceClaims (ks_kube_request's contract) */
    int64_t retry_ns;  /* between conflict retries; 0: retry.DefaultRetry's 10 ms */
    bool no_timestamp; /* never set allocationTimestamp (tests) */
};

/* Counters (tests, logs). Requests count every GET (reads) and every PUT or PATCH (writes). */
struct ks_serve_dra_stats {
    uint64_t binds, bind_failures, attempts, conflicts, reads, writes;
    uint64_t unreserves, unreserve_failures, deallocations, deallocation_failures;
    uint64_t creates, create_failures, deletes, delete_failures; /* special claims */
};

/* ks_serve_dra_create - the DRA API (ksched/internal/dra_api.h) over @opts->transport. 0 or -ENOMEM. */
int ks_serve_dra_create(const struct ks_serve_dra_opts *opts, struct ks_serve_dra **out);

/* ks_serve_dra_api - the ops table for ks_scheduler_opts.dra_api (lives as long as @d). */
const struct ks_dra_api *ks_serve_dra_api(struct ks_serve_dra *d);

/* ks_serve_dra_stats - the counters so far. Any thread. */
void ks_serve_dra_stats(struct ks_serve_dra *d, struct ks_serve_dra_stats *out);

/* ks_serve_dra_destroy - free; no call may be running. Accepts NULL. */
void ks_serve_dra_destroy(struct ks_serve_dra *d);

/* ks_serve_dra_kinds - the informer bits (1u << KS_KIND_x) of the resource.k8s.io/v1 kinds. */
uint32_t ks_serve_dra_kinds(void);

/*
 * ks_serve_dra_discover - which resource.k8s.io/v1 kinds the server serves: GET
 * /apis/resource.k8s.io/v1. 1 with their informer bits in *@kinds (those its
 * APIResourceList names); 0 when the group version is not served (404, as kube-apiserver
 * before v1.34 answers); -EAGAIN when the answer says neither (no response, another status,
 * no resource list), with why in @msg. Blocks for one round trip; any thread.
 */
int ks_serve_dra_discover(const struct ks_serve_transport *t, uint32_t *kinds, char *msg, size_t len);

/*
 * The JSON (serve_dra_json.c; any thread, pure). ks_serve_dra_allocation_json writes @a as a
 * resource.k8s.io/v1 AllocationResult on @out, with allocationTimestamp @a's or, when it has
 * none, @stamp_ns (KS_TIME_NONE: none); 0, -ERANGE (a quantity too large to write), -EIO.
 * ks_serve_dra_time: @ns (unix nanoseconds) as metav1.Time marshals it ("2026-01-02T03:04:05Z").
 */
int ks_serve_dra_allocation_json(FILE *out, const struct ks_allocation *a, int64_t stamp_ns);
void ks_serve_dra_time(int64_t ns, char *buf, size_t len);

/* What bindClaim reads of a claim the server sent. */
struct ks_serve_dra_claim_view {
    char name[256]; /* metadata.name ("" when absent) */
    char uid[128];  /* metadata.uid ("" when absent) */
    char rv[64];    /* metadata.resourceVersion ("" when absent) */
    bool deleting;  /* metadata.deletionTimestamp is set */
    bool finalizer; /* metadata.finalizers holds KS_DRA_FINALIZER */
    bool allocated; /* status.allocation is set */
    bool stamped;   /* with an allocationTimestamp */
};

/* ks_serve_dra_claim_read - @v from the claim's JSON. 0, -EINVAL (not a JSON object), -ENOMEM. */
int ks_serve_dra_claim_read(const char *body, size_t len, struct ks_serve_dra_claim_view *v);

/*
 * Request bodies from the claim's JSON @claim as the server sent it (everything else kept as
 * it came): the claim with KS_DRA_FINALIZER appended to metadata.finalizers; the claim with
 * status.allocation = @alloc (NULL: kept; then an allocation without allocationTimestamp gets
 * @stamp_ns unless it is KS_TIME_NONE) and {resource: pods, name: @pod_name, uid: @pod_uid}
 * appended to status.reservedFor; the claim at resourceVersion @rv with a status holding no
 * allocation, reservedFor or devices; Unreserve's strategic merge patch for the pod @pod_uid.
 * 0 with *@out malloc'ed (NUL-terminated, *@out_len bytes), -EINVAL (@claim is no JSON
 * object), -ERANGE, -ENOMEM.
 */
int ks_serve_dra_finalizer_body(const char *claim, size_t len, char **out, size_t *out_len);
int ks_serve_dra_status_body(const char *claim, size_t len, const struct ks_allocation *alloc,
                             const char *pod_name, const char *pod_uid, int64_t stamp_ns, char **out,
                             size_t *out_len);
int ks_serve_dra_deallocate_body(const char *claim, size_t len, const char *rv, char **out, size_t *out_len);
int ks_serve_dra_unreserve_patch(const char *claim_uid, const char *pod_uid, char **out, size_t *out_len);

/*
 * The special claim for a pod's extended resources (serve_dra_json.c, serve_dra_extended.c;
 * same returns): the claim @claim with its first KS_DRA_FINALIZER taken out of
 * metadata.finalizers (deleteClaim's update); the body that creates special claim @c of pod
 * @pod_name (metadata.generateName "<pod>-extended-resources-", namespace, owner reference,
 * annotation; spec.devices.requests); the pod status patch setting
 * status.extendedResourceClaimStatus to the @n mappings @maps and claim @claim_name.
 */
int ks_serve_dra_unfinalize_body(const char *claim, size_t len, char **out, size_t *out_len);
int ks_serve_dra_extended_claim_body(const struct ks_resource_claim *c, const char *pod_name, char **out,
                                     size_t *out_len);
int ks_serve_dra_pod_extended_patch(const char *claim_name, const struct ks_dra_ext_mapping *maps, uint32_t n,
                                    char **out, size_t *out_len);

/* ---- metrics (serve_metrics.c) ---------------------------------------------------------- */

struct ks_serve_metrics;

/*
 * ks_serve_metrics_create - register the scheduler's families in @reg for the profiles of
 * @cfg: serve's own (attempts, pending pods, ...) and the engine's (ksched/internal/metrics_sched.h).
 */
int ks_serve_metrics_create(struct ks_metrics *reg, const struct ks_config *cfg,
                            struct ks_serve_metrics **out);
void ks_serve_metrics_destroy(struct ks_serve_metrics *m);

/* ks_serve_metrics_engine - the engine's set, for ks_scheduler_opts.metrics. */
struct ks_sched_metrics *ks_serve_metrics_engine(struct ks_serve_metrics *m);

/*
 * ks_serve_metrics_attach - read the pending-pods gauges from @s's queue and
 * scheduler_indexed_cycles_total from @s at each scrape (NULL: stop; the counter keeps its value).
 */
void ks_serve_metrics_attach(struct ks_serve_metrics *m, struct ks_scheduler *s);

/* A cycle begins for @qp (scheduling thread): remembers when, for the attempt's duration. */
void ks_serve_metrics_cycle(struct ks_serve_metrics *m, const struct ks_queued_pod *qp, int64_t now_ns);

/* An outcome (the scheduler's on_event): attempts, durations, preemption. */
void ks_serve_metrics_event(struct ks_serve_metrics *m, const struct ks_sched_event *ev, int64_t now_ns);

/* A pod entered the queue (scheduler_queue_incoming_pods_total{queue="active",event}). */
void ks_serve_metrics_incoming(struct ks_serve_metrics *m, const char *event);

/* A victim was evicted (counted into the next Nominated's scheduler_preemption_victims). */
void ks_serve_metrics_victim(struct ks_serve_metrics *m);

/* ---- HTTP (serve_http.c, serve_http_request.c) ------------------------------------------ */

struct ks_http;
struct ks_tls;
struct ks_auth;

/* What a GET of a path answers: 200 with the body written to @out, or another status. */
typedef int (*ks_http_handler_fn)(void *ctx, const char *path, FILE *out, const char **content_type);

struct ks_http_opts {
    const char *addr;   /* "host:port", "[v6]:port"; port 0 picks one */
    const char *flag;   /* the flag @addr came from, for messages (NULL: "--metrics-addr") */
    struct ks_tls *tls; /* NULL: plain HTTP; else HTTPS (the caller keeps it until ks_http_stop) */
    /* NULL: every request reaches @handler; else each is authenticated and authorized first
     * (the caller keeps it until ks_http_stop) */
    struct ks_auth *auth;
    ks_http_handler_fn handler;
    void *ctx;
    uint32_t max_conns; /* connections held at once; 0: 128 */
    uint32_t workers;   /* threads that wait on the API server for @auth; 0: 2 */
    int64_t timeout_ms; /* for the TLS handshake and the request head, then for the answer; 0: 10 s */
};

/*
 * ks_http_start - listen on @o->addr and answer on a thread of its own: one request per
 * connection, GET and HEAD reach @o->handler (on that thread, one at a time), other
 * methods are 405. At most @o->max_conns connections are held; when all are taken, a new
 * one displaces the oldest still in its handshake or head (or is closed when none is);
 * each has @o->timeout_ms for its handshake and head and as long again for its answer.
 * Requests that need the API server wait on worker threads, never on the HTTP thread, so
 * /healthz and /readyz answer while reviews are slow. *bound_port gets the port. 0, or
 * -errno with a message on standard error (-EINVAL: a bad address).
 */
int ks_http_start(const struct ks_http_opts *o, struct ks_http **out, int *bound_port);
void ks_http_stop(struct ks_http *h); /* waits for a review in progress; accepts NULL */

/* A request head (ks_http_parse_request). */
enum { KS_HTTP_TARGET_MAX = 2048, KS_HTTP_HEAD_MAX = 32768 };
struct ks_http_request {
    char method[16];
    char target[KS_HTTP_TARGET_MAX]; /* as sent (origin or absolute form) */
    char path[KS_HTTP_TARGET_MAX];   /* percent-decoded, without the query */
    const char *authorization; /* the first Authorization header's value (in the buffer parsed), or NULL */
};

/* ks_http_head_len - the length of the request head at the start of @buf (through its
 * empty line, CRLF or LF), or 0 while it is incomplete. */
size_t ks_http_head_len(const char *buf, size_t len);

/*
 * ks_http_parse_request - parse the head of @len bytes at @buf (as ks_http_head_len
 * measured it; header values are cut out in place, so @buf must outlive @r). 0, or the
 * status to refuse it with: 400 (malformed line, method, target, escape or header), 414
 * (target longer than KS_HTTP_TARGET_MAX), 505 (not HTTP/1.x).
 */
int ks_http_parse_request(char *buf, size_t len, struct ks_http_request *r);

/* ---- TLS (serve_tls.c) ------------------------------------------------------------------ */

struct ssl_ctx_st;

struct ks_tls_opts {
    const char *cert_file, *key_file; /* --tls-cert-file, --tls-private-key-file: both or neither */
    const char *cert_dir;             /* --cert-dir (without the files): DIR/kube-scheduler.{crt,key} */
    const char *bind_ip; /* the secure port's address: a name of a made certificate unless unspecified */
    bool tls13_only;     /* --tls-min-version=VersionTLS13 */
};

/*
 * ks_tls_create - the serving certificate (the files, --cert-dir's pair made when absent,
 * or a self-signed pair made in memory) and the TLS settings. 0; -EINVAL for unusable
 * files, with one line "ksched: FILE:0: FLAG: why" on standard error; -errno otherwise.
 */
int ks_tls_create(const struct ks_tls_opts *o, struct ks_tls **out);
void ks_tls_destroy(struct ks_tls *t); /* accepts NULL */

/* ks_tls_ctx - the SSL_CTX for new connections (it changes when ks_tls_refresh reloads). */
struct ssl_ctx_st *ks_tls_ctx(struct ks_tls *t);

/* ks_tls_describe - "a self-signed certificate made in memory (CN localhost@..., DNS:localhost, ...)". */
const char *ks_tls_describe(const struct ks_tls *t);

/* ks_tls_refresh - reload changed certificate files (a minute after the last look, or now
 * with @force). 1 reloaded, 0 nothing to do, -EINVAL kept the old pair (said on stderr). */
int ks_tls_refresh(struct ks_tls *t, int64_t now_ns, bool force);

/*
 * ks_tls_self_signed - client-go's GenerateSelfSignedCertKey for "localhost" at @now_s:
 * PEM of the serving certificate then its CA, and the serving key (malloc'ed). @bind_ip
 * (NULL, "" or unspecified: none) is added to the names. 0, -EINVAL (bad @bind_ip), -ENOMEM.
 */
int ks_tls_self_signed(const char *bind_ip, int64_t now_s, char **cert_pem, size_t *cert_len, char **key_pem,
                       size_t *key_len);

/* ---- delegated authentication and authorization (serve_auth.c, serve_auth_cache.c) ---- */

struct ks_auth_opts {
    struct ks_serve_transport transport; /* TokenReview and SubjectAccessReview POSTs */
    int64_t token_ttl_ns;                /* --authentication-token-webhook-cache-ttl (0: not cached) */
    int64_t allow_ttl_ns, deny_ttl_ns;   /* --authorization-webhook-cache-{authorized,unauthorized}-ttl */
    const char *always_allow_paths;      /* comma-separated; NULL: "/healthz,/readyz,/livez" */
    uint32_t cache_entries;              /* of each cache; 0: 8192 */
};

/* ks_auth_create - 0, -EINVAL (a '*' not at the end of an always-allowed path), -ENOMEM. */
int ks_auth_create(const struct ks_auth_opts *o, struct ks_auth **out);
void ks_auth_destroy(struct ks_auth *a); /* accepts NULL */

struct ks_auth_request {
    const char *authorization; /* the Authorization header's value; NULL: none */
    const char *method;        /* its lower case is the verb */
    const char *path;          /* decoded */
    const char *uri;           /* the target as sent (500 messages) */
};

struct ks_auth_result {
    int status;               /* 0: serve the request; else refuse it with this status and @body */
    const char *content_type; /* of @body */
    char *body;
    size_t len;
    char *user; /* who asked (when authenticated) */
};

enum { KS_AUTH_NONBLOCK = 1 };

/*
 * ks_auth_check - may @req be served? 0 with *out set (free it with ks_auth_result_free);
 * -EWOULDBLOCK when @flags has KS_AUTH_NONBLOCK and the answer needs a review the caches
 * do not hold; -ENOMEM. @now_ns: CLOCK_MONOTONIC, 0 for now. Any thread; may block for a
 * review (the transport's timeout) without KS_AUTH_NONBLOCK.
 */
int ks_auth_check(struct ks_auth *a, const struct ks_auth_request *req, unsigned flags, int64_t now_ns,
                  struct ks_auth_result *out);
void ks_auth_result_free(struct ks_auth_result *r);

/* ks_auth_stats - the TokenReviews and SubjectAccessReviews sent so far (tests). */
void ks_auth_stats(struct ks_auth *a, uint64_t *token_reviews, uint64_t *access_reviews);

/*
 * ks_auth_bearer - the token of an Authorization header value as upstream's bearer token
 * authenticator reads it (trimmed, "Bearer" in any case, one space, the token up to the
 * next space). 1 with *token (and *len) pointing into @header, 0 when there is none.
 */
int ks_auth_bearer(const char *header, const char **token, size_t *len);

/*
 * A bounded cache of byte strings with expiry times, keyed by a salted SHA-256 of the key
 * (least recently used out first). Thread-safe. get: a malloc'ed copy (NUL-terminated) or
 * -ENOENT when absent or expired at @now_ns; put: replaces, and does nothing for @ttl_ns <= 0.
 */
struct ks_auth_cache;
int ks_auth_cache_create(uint32_t capacity, struct ks_auth_cache **out);
void ks_auth_cache_destroy(struct ks_auth_cache *c); /* accepts NULL */
int ks_auth_cache_get(struct ks_auth_cache *c, const char *key, size_t klen, int64_t now_ns, char **value,
                      size_t *len);
int ks_auth_cache_put(struct ks_auth_cache *c, const char *key, size_t klen, const char *value, size_t len,
                      int64_t now_ns, int64_t ttl_ns);
uint32_t ks_auth_cache_len(struct ks_auth_cache *c);

/* ---- flags (serve_flags.c) -------------------------------------------------------------- */

struct ks_serve_args {
    const char *kubeconfig; /* NULL: clientConnection.kubeconfig, else in-cluster */
    const char *config;     /* NULL: kube-scheduler's defaults */
    /* --content-type: "application/json" or "application/vnd.kubernetes.protobuf" ("json" and
     * "protobuf" are normalised to them); NULL: clientConnection.contentType (protobuf) */
    const char *content_type;
    /* --metrics-addr: plain HTTP without authentication on a loopback HOST:PORT ("": none,
     * the default). Given without --secure-port it is the only endpoint, as before the
     * secure port existed. */
    const char *metrics_addr;
    /* the secure port (HTTPS, authentication and authorization, kube-scheduler's flags) */
    int secure_port;          /* 0: none; default 10259, or 0 when only --metrics-addr was given */
    const char *bind_address; /* default "0.0.0.0" */
    const char *tls_cert_file, *tls_private_key_file, *cert_dir;
    const char *tls_min_version;                     /* VersionTLS12 (default) or VersionTLS13 */
    bool tls13_only;                                 /* it is VersionTLS13 */
    const char *always_allow_paths;                  /* default "/healthz,/readyz,/livez" */
    int64_t token_ttl_ns, allow_ttl_ns, deny_ttl_ns; /* default 10 s each; 0: not cached */
    const char *identity;                            /* NULL: hostname_uuid */
    bool seeded;
    uint64_t seed;
    uint32_t binders; /* binder threads (each POSTs one Binding at a time); 0: the scheduler's default */
    bool no_index;    /* --no-index: ks_scheduler_opts.no_index */
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

/* ---- running (serve_run.c) -------------------------------------------------------------- */

/*
 * ks_serve_run - serve with the flags @a until SIGTERM/SIGINT (exit status 0), a lost lease
 * or a failed start (1), or bad input (2: the configuration or the kubeconfig, one line
 * FILE:LINE: FIELD: MESSAGE on standard error). Blocks every signal in the calling thread
 * and the threads it starts. Context: the process's main thread, once.
 */
int ks_serve_run(const struct ks_serve_args *a);

#endif
