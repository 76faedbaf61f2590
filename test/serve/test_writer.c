/*
 * test_writer.c - what `ksched serve` writes to the API server (serve/serve_writer.c): the
 * Binding, the PodScheduled=False status patch (and when it is skipped), nominations,
 * Events, victim deletions, and the binder's answer to 201 / 409.
 */
#include <criterion/criterion.h>

#include "serve.h"
#include "serve_fixtures.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/json_tree.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define POD_HEAD                                                                                             \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: prod, uid: u-1, resourceVersion: '42'}\n" \
    "spec: {containers: [{name: c, image: i}]}\n"

Test(writer, binding_body)
{
    struct ks_pod *pod = pod_from(POD_HEAD);
    size_t len;
    char *b = ks_serve_binding_body(pod, "node-7", &len);
    cr_expect_str_eq(
        b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
           "\"prod\",\"uid\":\"u-1\"},\"target\":{\"kind\":\"Node\",\"name\":\"node-7\"}}");
    cr_expect_eq(len, strlen(b));
    free(b);
    ks_pod_put(pod);
}

Test(writer, condition_patch_adds_podscheduled_false)
{
    struct ks_pod *pod = pod_from(POD_HEAD "status: {conditions: [{type: Ready, status: 'False'}]}\n");
    bool unchanged = true;
    size_t len;
    char buf[256];
    char *p = ks_serve_condition_patch(pod, "Unschedulable", "0/3 nodes are available: 3 Insufficient cpu.",
                                       NULL, NULL, INT64_C(1700000000) * 1000000000, &unchanged, &len);
    cr_assert(!unchanged && p);
    cr_expect_str_eq(p,
                     "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Ready\"},{\"type\":"
                     "\"PodScheduled\"}],\"conditions\":[{\"lastProbeTime\":null,\"lastTransitionTime\":"
                     "\"2023-11-14T22:13:20Z\",\"message\":\"0/3 nodes are available: 3 Insufficient cpu.\","
                     "\"reason\":\"Unschedulable\",\"status\":\"False\",\"type\":\"PodScheduled\"}]}}");
    cr_expect_str_eq(field(p, "status.conditions.0.type", buf, sizeof(buf)), "PodScheduled");
    free(p);
    ks_pod_put(pod);
}

Test(writer, condition_patch_skipped_when_nothing_changes)
{
    struct ks_pod *pod = pod_from(
        POD_HEAD "status: {conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}\n");
    bool unchanged = false;
    size_t len;
    char buf[256];
    char *p = ks_serve_condition_patch(pod, "Unschedulable", "m1", NULL, "m1", 0, &unchanged, &len);
    cr_expect(unchanged && !p, "same status, reason and message: no patch");

    /* a new message: only it (and the reason) changes; no transition time */
    p = ks_serve_condition_patch(pod, "Unschedulable", "m2", NULL, "m1", 0, &unchanged, &len);
    cr_assert(!unchanged && p);
    cr_expect_str_eq(field(p, "status.conditions.0.message", buf, sizeof(buf)), "m2");
    cr_expect_null(strstr(p, "lastTransitionTime"), "the status did not change: %s", p);
    free(p);

    /* unknown last message (a restart): sent again */
    p = ks_serve_condition_patch(pod, "Unschedulable", "m1", NULL, NULL, 0, &unchanged, &len);
    cr_expect(!unchanged && p);
    free(p);

    /* same condition, new nomination: only status.nominatedNodeName */
    p = ks_serve_condition_patch(pod, "Unschedulable", "m1", "n1", "m1", 0, &unchanged, &len);
    cr_assert(!unchanged && p);
    cr_expect_str_eq(p, "{\"status\":{\"nominatedNodeName\":\"n1\"}}");
    free(p);
    ks_pod_put(pod);
}

Test(writer, condition_patch_from_true_and_with_nomination)
{
    struct ks_pod *pod = pod_from(
        POD_HEAD "status: {conditions: [{type: PodScheduled, status: 'True'}], nominatedNodeName: n0}\n");
    bool unchanged;
    size_t len;
    char buf[256];
    char *p = ks_serve_condition_patch(pod, "SchedulerError", "binding rejected", "n1", "binding rejected",
                                       5000000000, &unchanged, &len);
    cr_assert(p);
    cr_expect_str_eq(field(p, "status.conditions.0.status", buf, sizeof(buf)), "False");
    cr_expect_str_eq(field(p, "status.conditions.0.reason", buf, sizeof(buf)), "SchedulerError");
    cr_expect_str_eq(field(p, "status.conditions.0.lastTransitionTime", buf, sizeof(buf)),
                     "1970-01-01T00:00:05Z");
    cr_expect_str_eq(field(p, "status.nominatedNodeName", buf, sizeof(buf)), "n1");
    cr_expect_null(strstr(p, "lastProbeTime"), "the element exists: only changed fields");
    free(p);
    p = ks_serve_nominated_patch(NULL, &len);
    cr_expect_str_eq(p, "{\"status\":{\"nominatedNodeName\":null}}");
    free(p);
    ks_pod_put(pod);
}

Test(writer, event_body)
{
    struct ks_pod *pod = pod_from(POD_HEAD);
    struct ks_pod *by =
        pod_from("apiVersion: v1\nkind: Pod\nmetadata: {name: hi, namespace: prod, uid: u-2}\n"
                 "spec: {containers: [{name: c, image: i}]}\n");
    struct ks_serve_event ev = {
        .regarding = pod,
        .related = by,
        .type = "Normal",
        .reason = "Preempted",
        .action = "Preempting",
        .note = "Preempted by prod/hi on node n1",
        .reporting_controller = "default-scheduler",
        .reporting_instance = "default-scheduler-host",
        .now_ns = INT64_C(1700000000) * 1000000000 + 1000,
    };
    size_t len;
    char buf[256];
    char *b = ks_serve_event_body(&ev, &len);
    cr_expect_str_eq(field(b, "apiVersion", buf, sizeof(buf)), "events.k8s.io/v1");
    cr_expect_str_eq(field(b, "metadata.name", buf, sizeof(buf)), "web-1.17979cfe362a03e8");
    cr_expect_str_eq(field(b, "metadata.namespace", buf, sizeof(buf)), "prod");
    cr_expect_str_eq(field(b, "eventTime", buf, sizeof(buf)), "2023-11-14T22:13:20.000001Z");
    cr_expect_str_eq(field(b, "reportingController", buf, sizeof(buf)), "default-scheduler");
    cr_expect_str_eq(field(b, "regarding.uid", buf, sizeof(buf)), "u-1");
    cr_expect_str_eq(field(b, "regarding.resourceVersion", buf, sizeof(buf)), "42");
    cr_expect_str_eq(field(b, "related.name", buf, sizeof(buf)), "hi");
    cr_expect_str_eq(field(b, "note", buf, sizeof(buf)), "Preempted by prod/hi on node n1");
    free(b);

    /* the API takes notes up to 1024 bytes */
    char note[3000];
    memset(note, 'x', sizeof(note) - 1);
    note[sizeof(note) - 1] = '\0';
    ev.note = note;
    ev.related = NULL;
    b = ks_serve_event_body(&ev, &len);
    const char *n = strstr(b, "\"note\":\"") + 8;
    cr_expect_eq(strchr(n, '"') - n, 1024);
    cr_expect_null(strstr(b, "related"));
    free(b);
    ks_pod_put(by);
    ks_pod_put(pod);
}

/* ---- the writer thread and the binder against a recording fake server -------------------- */

struct recorder {
    pthread_mutex_t lock;
    int n;
    char method[32][8], path[32][200], body[32][2048];
    long answer;         /* status for bindings */
    int binding_rc;      /* < 0: bindings get no answer (that transport error) */
    const char *pod_get; /* the answer to a GET of the pod; NULL: 404 */
    const char *fail;    /* requests whose path holds this get @fail_status (NULL: none) */
    long fail_status;
};

static int record(void *ctx, const char *method, const char *path, const char *ct, const char *body,
                  size_t len, struct ks_kube_response *resp)
{
    struct recorder *r = ctx;
    (void)ct;
    pthread_mutex_lock(&r->lock);
    if (r->n < 32) {
        snprintf(r->method[r->n], sizeof(r->method[0]), "%s", method);
        snprintf(r->path[r->n], sizeof(r->path[0]), "%s", path);
        snprintf(r->body[r->n], sizeof(r->body[0]), "%.*s", (int)len, body ? body : "");
        r->n++;
    }
    pthread_mutex_unlock(&r->lock);
    memset(resp, 0, sizeof(*resp));
    bool binding = strstr(path, "/binding") != NULL;
    if (binding && r->binding_rc < 0) {
        snprintf(resp->error, sizeof(resp->error), "POST %s: connection reset", path);
        return r->binding_rc;
    }
    if (strcmp(method, "GET") == 0) {
        resp->status = r->pod_get ? 200 : 404;
        resp->body = strdup(r->pod_get ? r->pod_get : "{\"kind\":\"Status\",\"code\":404}");
        resp->len = strlen(resp->body);
        return 0;
    }
    resp->status = binding ? r->answer : strcmp(method, "POST") == 0 ? 201 : 200;
    if (r->fail && strstr(path, r->fail))
        resp->status = r->fail_status;
    const char *b = resp->status == 409
                        ? "{\"kind\":\"Status\",\"message\":\"pod web-1 is already assigned to node "
                          "\\\"n9\\\"\",\"reason\":\"Conflict\",\"code\":409}"
                        : "{}";
    resp->body = strdup(b);
    resp->len = strlen(b);
    return 0;
}

/* The first request of @method with @path_part, or -1. */
static int first(struct recorder *r, const char *method, const char *path_part)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->method[i], method) == 0 && strstr(r->path[i], path_part))
            return i;
    return -1;
}

static int find(struct recorder *r, const char *method, const char *path_part)
{
    int count = 0;
    for (int i = 0; i < r->n; i++)
        count += strcmp(r->method[i], method) == 0 && strstr(r->path[i], path_part) != NULL;
    return count;
}

Test(writer, binder_answers)
{
    struct recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER, .answer = 201};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = record, .ctx = &r}};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pod = pod_from(POD_HEAD);
    struct ks_binder_backend b = ks_writer_binder(w);
    struct ks_status st = {0};

    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), 0);
    cr_expect_str_eq(r.path[0], "/api/v1/namespaces/prod/pods/web-1/binding");
    r.answer = 409;
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-1\"},\"spec\":{\"nodeName\":\"n9\"}}";
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), -EEXIST, "409: another scheduler bound it");
    cr_assert_eq(st.nreasons, 1);
    cr_expect_str_eq(ks_intern_str(st.reasons[0]),
                     "binding rejected: pod web-1 is already assigned to node \"n9\"");
    /* a 409 that is our own earlier binding, applied: bound */
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-1\"},\"spec\":{\"nodeName\":\"n1\"}}";
    memset(&st, 0, sizeof(st));
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), 0);
    /* a 409 while the pod is not bound at all: another conflict, tried again */
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-1\"},\"spec\":{}}";
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), -EIO);
    /* a 500 or a reset connection: what the server has decides (etcd may have committed it) */
    r.answer = 500;
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), -EIO, "not bound: an error");
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-1\"},\"spec\":{\"nodeName\":\"n1\"}}";
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), 0, "applied although answered 500");
    r.binding_rc = -ECONNRESET;
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), 0, "applied although the answer was lost");
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-2\"},\"spec\":{\"nodeName\":\"n1\"}}";
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), -ECONNRESET, "another pod of that name");
    /*
     * refused: libcurl may have sent it on a pooled connection that died unanswered before it
     * reconnected (and was refused), so what the server has decides here too
     */
    int gets = find(&r, "GET", "/pods/web-1");
    r.binding_rc = -ECONNREFUSED;
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-1\"},\"spec\":{\"nodeName\":\"n1\"}}";
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), 0, "applied before the connection died");
    r.pod_get = "{\"metadata\":{\"name\":\"web-1\",\"uid\":\"u-1\"},\"spec\":{}}";
    cr_expect_eq(b.bind(b.ctx, pod, ks_intern("n1"), &st), -ECONNREFUSED, "not bound: the error");
    cr_expect_eq(find(&r, "GET", "/pods/web-1"), gets + 2);
    ks_writer_destroy(w, 1000);
    ks_pod_put(pod);
}

Test(writer, outcomes_become_patches_events_and_deletes)
{
    struct recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER, .answer = 201};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = record, .ctx = &r}, .reporting_instance = "h"};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pod = pod_from(POD_HEAD);
    struct ks_pod *victim = pod_from("apiVersion: v1\nkind: Pod\nmetadata: {name: low, namespace: prod}\n"
                                     "spec: {containers: [{name: c, image: i}]}\n");
    char buf[256];

    /* preemption: the victim's DELETE + Preempted, then the preemptor's nomination with its condition */
    struct ks_evictor ev = ks_writer_evictor(w);
    cr_expect_eq(ev.evict(ev.ctx, victim, pod, ks_intern("n1")), 0);
    struct ks_sched_event nom = {.kind = KS_SCHED_NOMINATED, .pod = pod, .node = ks_intern("n1")};
    ks_writer_on_sched_event(w, &nom);
    struct ks_sched_event un = {
        .kind = KS_SCHED_UNSCHEDULABLE, .pod = pod, .message = "0/1 nodes are available."};
    ks_writer_on_sched_event(w, &un);
    ks_writer_flush(w);
    cr_expect_eq(find(&r, "DELETE", "/api/v1/namespaces/prod/pods/low"), 1);
    cr_expect_eq(find(&r, "PATCH", "/api/v1/namespaces/prod/pods/web-1/status"), 1);
    cr_expect_eq(find(&r, "POST", "/apis/events.k8s.io/v1/namespaces/prod/events"), 2);
    /* the victim's DisruptionTarget condition first, then its DELETE (PreemptPod) */
    cr_assert_eq(find(&r, "PATCH", "/api/v1/namespaces/prod/pods/low/status"), 1);
    int patch = first(&r, "PATCH", "/pods/low/status");
    cr_expect_lt(patch, first(&r, "DELETE", "/pods/low"), "the condition before the deletion");
    cr_expect_str_eq(field(r.body[patch], "status.conditions.0.type", buf, sizeof(buf)), "DisruptionTarget");
    cr_expect_str_eq(field(r.body[patch], "status.conditions.0.status", buf, sizeof(buf)), "True");
    cr_expect_str_eq(field(r.body[patch], "status.conditions.0.reason", buf, sizeof(buf)),
                     "PreemptionByScheduler");
    cr_expect_str_eq(field(r.body[patch], "status.conditions.0.message", buf, sizeof(buf)),
                     "default-scheduler: preempting to accommodate a higher priority pod");
    for (int i = 0; i < r.n; i++) {
        if (strcmp(r.method[i], "PATCH") == 0 && strstr(r.path[i], "web-1"))
            cr_expect_str_eq(field(r.body[i], "status.nominatedNodeName", buf, sizeof(buf)), "n1");
        if (strstr(r.body[i], "FailedScheduling")) {
            cr_expect_str_eq(field(r.body[i], "type", buf, sizeof(buf)), "Warning");
            cr_expect_str_eq(field(r.body[i], "action", buf, sizeof(buf)), "Scheduling");
            cr_expect_str_eq(field(r.body[i], "reportingInstance", buf, sizeof(buf)), "default-scheduler-h");
        }
    }

    /* the same failure again: the pod object still shows no condition (the informer has not caught
     * up), so the patch goes again; once the object shows it, the same message is not re-sent */
    struct ks_pod *seen =
        pod_from(POD_HEAD "status: {nominatedNodeName: n1, conditions: [{type: PodScheduled, "
                          "status: 'False', reason: Unschedulable}]}\n");
    struct ks_sched_event again = {
        .kind = KS_SCHED_UNSCHEDULABLE, .pod = seen, .message = "0/1 nodes are available."};
    ks_writer_on_sched_event(w, &again);
    ks_writer_flush(w);
    cr_expect_eq(find(&r, "PATCH", "web-1/status"), 1, "an unchanged condition is not patched again");
    cr_expect_eq(find(&r, "POST", "/events"), 2, "the same Event again is no new Event...");
    cr_expect_eq(find(&r, "PATCH", "/apis/events.k8s.io/v1/namespaces/prod/events/web-1."), 1,
                 "...but the first one's series (serve/serve_events.c)");

    /* bound elsewhere than nominated: the nomination is cleared, and Scheduled recorded */
    struct ks_sched_event ok = {.kind = KS_SCHED_SCHEDULED, .pod = seen, .node = ks_intern("n2")};
    ks_writer_on_sched_event(w, &ok);
    ks_writer_flush(w);
    cr_expect_eq(find(&r, "PATCH", "web-1/status"), 2);
    int scheduled = 0;
    for (int i = 0; i < r.n; i++)
        if (strstr(r.body[i], "\"Scheduled\"")) {
            scheduled++;
            cr_expect_str_eq(field(r.body[i], "note", buf, sizeof(buf)),
                             "Successfully assigned prod/web-1 to n2");
            cr_expect_str_eq(field(r.body[i], "action", buf, sizeof(buf)), "Binding");
        }
    cr_expect_eq(scheduled, 1);
    struct ks_writer_stats s;
    ks_writer_stats(w, &s);
    cr_expect_eq(s.failed, 0);
    cr_expect_eq(s.skipped, 1);
    ks_writer_destroy(w, 1000);
    ks_pod_put(seen);
    ks_pod_put(victim);
    ks_pod_put(pod);
}

/* Events go through a client of their own (kube-scheduler's eventClient), everything else through the main
 * one. */
Test(writer, events_use_their_own_transport)
{
    struct recorder main_r = {.lock = PTHREAD_MUTEX_INITIALIZER, .answer = 201};
    struct recorder ev_r = {.lock = PTHREAD_MUTEX_INITIALIZER, .answer = 201};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = record, .ctx = &main_r},
                               .events = {.request = record, .ctx = &ev_r}};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pod = pod_from(POD_HEAD);
    struct ks_sched_event un = {.kind = KS_SCHED_UNSCHEDULABLE, .pod = pod, .message = "no"};
    ks_writer_on_sched_event(w, &un);
    ks_writer_flush(w);
    cr_expect_eq(find(&main_r, "PATCH", "/status"), 1);
    cr_expect_eq(find(&main_r, "POST", "/events"), 0);
    cr_expect_eq(find(&ev_r, "POST", "/apis/events.k8s.io/v1/namespaces/prod/events"), 1);
    cr_expect_eq(ev_r.n, 1);
    ks_writer_destroy(w, 1000);
    ks_pod_put(pod);
}

/* A transport that counts requests in flight: each waits (up to 2 s) until another one is in flight,
 * and remembers, per pod, whether a request about it started while another about it was in flight. */
struct overlap {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int in_flight, max_in_flight, n;
    char busy_pod[64][32];
    int nbusy;
    bool same_pod_overlap;
};

static int overlap_request(void *ctx, const char *method, const char *path, const char *ct, const char *body,
                           size_t len, struct ks_kube_response *resp)
{
    struct overlap *o = ctx;
    char pod[32] = "";
    (void)ct;
    (void)len;
    const char *at = strstr(body ? body : "", "\"regarding\":");
    const char *nm = at ? strstr(at, "\"name\":\"") : NULL;
    if (nm)
        sscanf(nm + 8, "%31[^\"]", pod);
    else if ((nm = strstr(path, "/events/")))
        sscanf(nm + 8, "%31[^.]", pod);
    pthread_mutex_lock(&o->lock);
    for (int i = 0; i < o->nbusy; i++)
        o->same_pod_overlap |= strcmp(o->busy_pod[i], pod) == 0;
    int slot = o->nbusy++;
    snprintf(o->busy_pod[slot], sizeof(o->busy_pod[0]), "%s", pod);
    o->in_flight++;
    o->n++;
    if (o->in_flight > o->max_in_flight)
        o->max_in_flight = o->in_flight;
    pthread_cond_broadcast(&o->cond);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    while (o->in_flight < 2 && o->n < 16)
        if (pthread_cond_timedwait(&o->cond, &o->lock, &until) != 0)
            break;
    o->in_flight--;
    for (int i = 0; i < o->nbusy; i++)
        if (strcmp(o->busy_pod[i], pod) == 0) {
            memmove(o->busy_pod[i], o->busy_pod[o->nbusy - 1], sizeof(o->busy_pod[0]));
            o->nbusy--;
            break;
        }
    pthread_mutex_unlock(&o->lock);
    memset(resp, 0, sizeof(*resp));
    resp->status = strcmp(method, "POST") == 0 ? 201 : 200;
    resp->body = strdup("{}");
    resp->len = 2;
    return 0;
}

Test(writer, events_go_out_side_by_side_and_in_order_per_object)
{
    struct recorder main_r = {.lock = PTHREAD_MUTEX_INITIALIZER, .answer = 201};
    struct overlap ov = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = record, .ctx = &main_r},
                               .events = {.request = overlap_request, .ctx = &ov}};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pods[8];
    char text[256];
    for (int i = 0; i < 8; i++) {
        snprintf(text, sizeof(text),
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: prod, uid: u%d}\n"
                 "spec: {containers: [{name: c, image: i}]}\n",
                 i, i);
        pods[i] = pod_from(text);
    }
    /* each pod fails twice: its Event, then the PATCH that makes it a series */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 8; i++) {
            struct ks_sched_event un = {.kind = KS_SCHED_UNSCHEDULABLE, .pod = pods[i], .message = "no"};
            ks_writer_on_sched_event(w, &un);
        }
    ks_writer_flush(w);
    cr_expect_eq(ov.n, 16, "8 Events and their 8 series patches");
    cr_expect_geq(ov.max_in_flight, 2, "Events of different pods go out side by side");
    cr_expect_leq(ov.max_in_flight, KS_WRITER_EVENT_LANES);
    cr_expect(!ov.same_pod_overlap, "a pod's series patch went out while its Event was still in flight");
    ks_writer_destroy(w, 1000);
    for (int i = 0; i < 8; i++)
        ks_pod_put(pods[i]);
}

static void note_done(void *ctx, bool ok)
{
    int *outcome = ctx;
    *outcome = ok ? 1 : 0;
}

/*
 * evict_async: each victim's condition then DELETE, in order, then the outcome; a victim gone
 * (404) is done without a deletion or an Event; any other failure ends the calls there and
 * reports failure.
 */
Test(writer, asynchronous_preemption_calls_report_their_outcome)
{
    struct recorder r = {.lock = PTHREAD_MUTEX_INITIALIZER, .answer = 201};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = record, .ctx = &r}, .reporting_instance = "h"};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pod = pod_from(POD_HEAD);
    struct ks_pod *a = pod_from("apiVersion: v1\nkind: Pod\nmetadata: {name: va, namespace: prod}\n"
                                "spec: {containers: [{name: c, image: i}]}\n");
    struct ks_pod *b = pod_from("apiVersion: v1\nkind: Pod\nmetadata: {name: vb, namespace: prod}\n"
                                "spec: {containers: [{name: c, image: i}]}\n");
    const struct ks_pod *victims[] = {a, b};
    struct ks_evictor ev = ks_writer_evictor(w);
    int outcome = -1;

    r.fail = "/pods/va/status"; /* va is gone already */
    r.fail_status = 404;
    cr_assert_eq(ev.evict_async(ev.ctx, pod, ks_intern("n1"), victims, 2, note_done, &outcome), 0);
    ks_writer_flush(w);
    cr_expect_eq(outcome, 1);
    cr_expect_eq(find(&r, "DELETE", "/pods/va"), 0, "a victim found gone is not deleted");
    cr_expect_eq(find(&r, "DELETE", "/pods/vb"), 1);
    cr_expect_lt(first(&r, "PATCH", "/pods/vb/status"), first(&r, "DELETE", "/pods/vb"));

    r.fail = "/pods/va"; /* va cannot be patched: vb is left alone */
    r.fail_status = 403;
    int deletes = find(&r, "DELETE", "/pods/vb");
    outcome = -1;
    cr_assert_eq(ev.evict_async(ev.ctx, pod, ks_intern("n1"), victims, 2, note_done, &outcome), 0);
    ks_writer_flush(w);
    cr_expect_eq(outcome, 0);
    cr_expect_eq(find(&r, "DELETE", "/pods/vb"), deletes);
    ks_writer_destroy(w, 1000);
    ks_pod_put(pod);
    ks_pod_put(a);
    ks_pod_put(b);
}
