/*
 * test_dra.c - ksched serve's DRA API (serve/serve_dra.c) and its JSON (serve_dra_json.c):
 * an AllocationResult written as resource.k8s.io/v1 marshals it (and read back by the
 * decoder unchanged); bindClaim's requests against a fake claim store (the finalizer update,
 * then the status update, both PUTs of the object the server sent at its resourceVersion),
 * its RetryOnConflict loop (a stale view, conflicts re-read, at most five attempts, the
 * checks after a re-read) and upstream's error texts; Unreserve's patch; the deallocation;
 * discovery of resource.k8s.io/v1; the pod update event of a generated claim.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "serve.h"
#include "serve_fixtures.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/dra_api.h"
#include "ksched/internal/json_edit.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- a fake claim store ------------------------------------------------------------------- */

/* Another writer's change: before request @at (1-based), the claim becomes @obj (a new version). */
struct change {
    int at;
    const char *obj;
};

/* An answer given instead of the store's at request @at. */
struct forced {
    int at;
    long status;
    const char *body;
    int transport_rc;
};

struct store {
    pthread_mutex_t lock;
    char *obj; /* the claim as stored (its resourceVersion is rv) */
    long rv;
    int nreq;
    char log[4096];
    char bodies[8][4096]; /* the bodies of the first writes */
    int nbodies;
    struct change changes[8];
    struct forced forced[16];
};

static char *with_rv(const char *obj, long rv)
{
    static const char *const rv_path[] = {"metadata", "resourceVersion", NULL};
    char v[32], *out;
    size_t len;
    snprintf(v, sizeof(v), "\"%ld\"", rv);
    struct ks_json_edit e = {.path = rv_path, .value = v};
    cr_assert(eq(int, ks_json_edit(obj, strlen(obj), &e, 1, &out, &len), 0), "%s", obj);
    return out;
}

static void store_set(struct store *s, const char *obj)
{
    free(s->obj);
    s->obj = with_rv(obj, ++s->rv);
}

static const char *conflict_body =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"Operation cannot be "
    "fulfilled on resourceclaims.resource.k8s.io \\\"c\\\": the object has been modified; please apply your "
    "changes to the latest version and try again\",\"reason\":\"Conflict\",\"code\":409}";

static void answer(struct ks_kube_response *r, long status, const char *body)
{
    r->status = status;
    r->body = strdup(body);
    r->len = strlen(body);
}

static int store_request(void *ctx, const char *method, const char *path, const char *content_type,
                         const char *body, size_t len, struct ks_kube_response *resp)
{
    struct store *s = ctx;
    pthread_mutex_lock(&s->lock);
    int n = ++s->nreq;
    size_t l = strlen(s->log);
    const char *tail = strstr(path, "/resourceclaims/");
    snprintf(s->log + l, sizeof(s->log) - l, "%s %s%s; ", method, tail ? "" : path,
             tail ? (strstr(tail, "/status") ? "status" : "claim") : "");
    if (body && s->nbodies < 8)
        snprintf(s->bodies[s->nbodies++], sizeof(s->bodies[0]), "%.*s", (int)len, body);
    (void)content_type;
    for (int i = 0; i < 8; i++) {
        if (s->changes[i].at == n)
            store_set(s, s->changes[i].obj);
    }
    for (int i = 0; i < 16; i++) {
        if (s->forced[i].at != n)
            continue;
        if (s->forced[i].transport_rc) {
            snprintf(resp->error, sizeof(resp->error), "%s %s: connection refused", method, path);
            pthread_mutex_unlock(&s->lock);
            return s->forced[i].transport_rc;
        }
        answer(resp, s->forced[i].status, s->forced[i].body);
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    if (strcmp(method, "GET") == 0) {
        answer(resp, 200, s->obj);
    } else if (strcmp(method, "PUT") == 0) {
        char want[32], got[64] = "";
        static const char *const rv_path[] = {"metadata", "resourceVersion", NULL};
        snprintf(want, sizeof(want), "%ld", s->rv);
        ks_json_get_string(body, len, rv_path, got, sizeof(got));
        if (strcmp(got, want) != 0) {
            answer(resp, 409, conflict_body);
        } else {
            store_set(s, body);
            answer(resp, 200, s->obj);
        }
    } else {
        answer(resp, 200, s->obj);
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static struct ks_serve_dra *open_dra(struct store *s, const char *claim, long rv)
{
    struct ks_serve_dra *d;
    cr_assert(eq(int, ks_api_init(), 0));
    pthread_mutex_init(&s->lock, NULL);
    s->rv = rv - 1;
    store_set(s, claim);
    struct ks_serve_dra_opts o = {
        .transport = {.request = store_request, .ctx = s}, .retry_ns = 1000, .no_timestamp = true};
    cr_assert(eq(int, ks_serve_dra_create(&o, &d), 0));
    return d;
}

static void close_dra(struct ks_serve_dra *d, struct store *s)
{
    ks_serve_dra_destroy(d);
    free(s->obj);
    pthread_mutex_destroy(&s->lock);
}

#define CLAIM                                                                                                \
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\","        \
    "\"namespace\":\"ns\",\"uid\":\"cu\",\"resourceVersion\":\"0\",\"labels\":{\"x\":\"y\"}},\"spec\":"      \
    "{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]}},"             \
    "\"future\":{\"kept\":[1,2]}}"

#define ALLOCATED_CLAIM                                                                                      \
    "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"cu\",\"resourceVersion\":\"0\","           \
    "\"finalizers\":[\"other\",\"resource.kubernetes.io/delete-protection\"]},\"spec\":{},\"status\":"       \
    "{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\","         \
    "\"device\":\"g0\"}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"ua\"}]}}"

/* The field at @path of JSON @body (serve_fixtures.h field(), as criterion's str wants it). */
static char *fld(const char *body, const char *path, char *buf, size_t len)
{
    return (char *)field(body, path, buf, len);
}

/* The field at @path of the @i-th body written. */
static char *body_field(struct store *s, int i, const char *path, char *buf, size_t len)
{
    return fld(s->bodies[i], path, buf, len);
}

static struct ks_allocation *one_device(const char *device)
{
    static struct ks_device_result r;
    static struct ks_allocation a;
    r = (struct ks_device_result){
        .request = "r", .driver = ks_intern("d"), .pool = ks_intern("p"), .device = ks_intern(device)};
    a = (struct ks_allocation){.nresults = 1, .results = &r, .allocation_time = KS_TIME_NONE};
    return &a;
}

static const struct ks_dra_api_claim the_claim = {"ns", "c", "cu", "10"};

/* ---- the AllocationResult ------------------------------------------------------------------ */

/* The allocation of the claim document @yaml (decoded as the informers decode claims). */
static struct ks_resource_claim *claim_from(const char *yaml)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    void *obj;
    cr_assert(eq(int, ks_api_init(), 0));
    cr_assert(eq(int, ks_yaml_parse("claim.yaml", yaml, strlen(yaml), &st, &err), 0), "%s", err.msg);
    cr_assert(eq(int, ks_object_decode_as("claim.yaml", st->docs[0], KS_KIND_RESOURCE_CLAIM, &obj, &err), 0),
              "%s: %s", err.field, err.msg);
    ks_yaml_stream_destroy(st);
    return obj;
}

static char *allocation_text(const struct ks_allocation *a, int64_t stamp)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert(eq(int, ks_serve_dra_allocation_json(f, a, stamp), 0));
    fclose(f);
    return buf;
}

#define FULL_ALLOCATION                                                                                      \
    "{\"devices\":{\"results\":[{\"request\":\"gpu/"                                                         \
    "big\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\","                                              \
    "\"device\":\"gpu-0\",\"adminAccess\":true,\"tolerations\":[{\"key\":\"example.com/hot\",\"operator\":"  \
    "\"Equal\",\"value\":\"yes\",\"effect\":\"NoSchedule\"},{\"operator\":\"Exists\",\"effect\":"            \
    "\"NoExecute\","                                                                                         \
    "\"tolerationSeconds\":30}],\"bindingConditions\":[\"example.com/"                                       \
    "attached\"],\"bindingFailureConditions\":"                                                              \
    "[\"example.com/failed\"],\"shareID\":\"3f1d2a4b-0000-4000-8000-000000000001\",\"consumedCapacity\":"    \
    "{\"memory\":\"4Gi\",\"sm\":\"10\"}},{\"request\":\"nic\",\"driver\":\"net.example.com\",\"pool\":"      \
    "\"p\","                                                                                                 \
    "\"device\":\"eth1\"}],\"config\":[{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"gpu.example."      \
    "com\","                                                                                                 \
    "\"parameters\":{\"mode\":\"fast\",\"n\":[1,2.5]}}},{\"source\":\"FromClaim\",\"requests\":[\"gpu\","    \
    "\"nic\"],"                                                                                              \
    "\"opaque\":{\"driver\":\"net.example.com\",\"parameters\":{}}}]},\"nodeSelector\":{"                    \
    "\"nodeSelectorTerms\":"                                                                                 \
    "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-1\"]}]},"          \
    "{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"Exists\"},{\"key\":\"gen\",\"operator\":"       \
    "\"Gt\","                                                                                                \
    "\"values\":[\"3\"]}]}]},\"allocationTimestamp\":\"2026-03-04T05:06:07Z\"}"

Test(serve_dra, allocation_json_is_what_the_decoder_reads_back)
{
    char yaml[4096];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
             "spec: {devices: {requests: [{name: gpu, firstAvailable: [{name: big, deviceClassName: gpu}]},"
             " {name: nic, exactly: {deviceClassName: nic}}]}}\n"
             "status: {allocation: %s}\n",
             FULL_ALLOCATION);
    struct ks_resource_claim *c = claim_from(yaml);
    cr_assert(c->allocation != NULL);
    char *text = allocation_text(c->allocation, KS_TIME_NONE);
    cr_expect(eq(str, text, FULL_ALLOCATION));
    /* and once more through the decoder: the same text */
    snprintf(yaml, sizeof(yaml),
             "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
             "spec: {devices: {requests: [{name: gpu, firstAvailable: [{name: big, deviceClassName: gpu}]},"
             " {name: nic, exactly: {deviceClassName: nic}}]}}\n"
             "status: {allocation: %s}\n",
             text);
    struct ks_resource_claim *again = claim_from(yaml);
    char *text2 = allocation_text(again->allocation, INT64_C(1) * 1000000000);
    cr_expect(eq(str, text2, text), "a timestamp there is kept");
    free(text);
    free(text2);
    ks_object_destroy(KS_KIND_RESOURCE_CLAIM, c);
    ks_object_destroy(KS_KIND_RESOURCE_CLAIM, again);
}

Test(serve_dra, allocation_json_of_a_plain_allocation)
{
    cr_assert(eq(int, ks_api_init(), 0));
    char *text = allocation_text(one_device("g0"), KS_TIME_NONE);
    cr_expect(eq(str, text,
                 "{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\",\"device\":"
                 "\"g0\"}]}}"));
    free(text);
    struct ks_allocation empty = {.allocation_time = KS_TIME_NONE};
    text = allocation_text(&empty, INT64_C(-1));
    cr_expect(eq(str, text, "{\"devices\":{},\"allocationTimestamp\":\"1969-12-31T23:59:59Z\"}"));
    free(text);
}

/* ---- bindClaim ---------------------------------------------------------------------------- */

Test(serve_dra, bind_claim_adds_the_finalizer_then_allocation_and_reservation)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "", buf[256];

    cr_assert(eq(int,
                 api->bind_claim(api, &the_claim, one_device("g0"), "web-0", "uw", rv, sizeof(rv), msg,
                                 sizeof(msg)),
                 0),
              "%s", msg);
    cr_expect(eq(str, rv, "12"));
    cr_expect(eq(str, s.log, "GET claim; PUT claim; PUT status; "));
    /* the finalizer update: the claim as read, at its version, with the finalizer appended */
    cr_expect(eq(str, body_field(&s, 0, "metadata.resourceVersion", buf, sizeof(buf)), "10"));
    cr_expect(eq(str, body_field(&s, 0, "metadata.finalizers.0", buf, sizeof(buf)), KS_DRA_FINALIZER));
    cr_expect(eq(str, body_field(&s, 0, "future.kept.1", buf, sizeof(buf)), "2"), "unknown fields go back");
    cr_expect(eq(str, body_field(&s, 0, "status", buf, sizeof(buf)), ""));
    /* the status update starts from the claim the finalizer update answered */
    cr_expect(eq(str, body_field(&s, 1, "metadata.resourceVersion", buf, sizeof(buf)), "11"));
    cr_expect(
        eq(str, body_field(&s, 1, "status.allocation.devices.results.0.device", buf, sizeof(buf)), "g0"));
    cr_expect(eq(str, body_field(&s, 1, "status.reservedFor.0.resource", buf, sizeof(buf)), "pods"));
    cr_expect(eq(str, body_field(&s, 1, "status.reservedFor.0.name", buf, sizeof(buf)), "web-0"));
    cr_expect(eq(str, body_field(&s, 1, "status.reservedFor.0.uid", buf, sizeof(buf)), "uw"));
    cr_expect(eq(str, body_field(&s, 1, "status.reservedFor.0.apiGroup", buf, sizeof(buf)), ""));
    cr_expect(eq(str, body_field(&s, 1, "status.allocation.allocationTimestamp", buf, sizeof(buf)), ""),
              "no_timestamp");
    struct ks_serve_dra_stats st;
    ks_serve_dra_stats(d, &st);
    cr_expect(eq(u64, st.binds, 1));
    cr_expect(eq(u64, st.attempts, 1));
    cr_expect(eq(u64, st.conflicts, 0));
    cr_expect(eq(u64, st.reads, 1));
    cr_expect(eq(u64, st.writes, 2));
    close_dra(d, &s);
}

Test(serve_dra, bind_claim_reserves_an_allocated_claim_with_one_update)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, ALLOCATED_CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "", buf[256];

    cr_assert(eq(int, api->bind_claim(api, &the_claim, NULL, "b", "ub", rv, sizeof(rv), msg, sizeof(msg)), 0),
              "%s", msg);
    cr_expect(eq(str, s.log, "GET claim; PUT status; "));
    cr_expect(eq(str, rv, "11"));
    cr_expect(eq(str, body_field(&s, 0, "status.reservedFor.0.uid", buf, sizeof(buf)), "ua"));
    cr_expect(eq(str, body_field(&s, 0, "status.reservedFor.1.uid", buf, sizeof(buf)), "ub"));
    cr_expect(
        eq(str, body_field(&s, 0, "status.allocation.devices.results.0.device", buf, sizeof(buf)), "g0"));
    close_dra(d, &s);
}

Test(serve_dra, bind_claim_stamps_an_allocation_without_a_timestamp)
{
    struct ks_serve_dra_claim_view v;
    char *out, buf[128];
    size_t len;
    cr_assert(eq(int, ks_api_init(), 0));
    /* reservation only: the allocation there gets the time (DRADeviceBindingConditions) */
    cr_assert(eq(int,
                 ks_serve_dra_status_body(ALLOCATED_CLAIM, strlen(ALLOCATED_CLAIM), NULL, "b", "ub",
                                          INT64_C(1767323045) * 1000000000, &out, &len),
                 0));
    cr_expect(
        eq(str, fld(out, "status.allocation.allocationTimestamp", buf, sizeof(buf)), "2026-01-02T03:04:05Z"));
    cr_assert(eq(int, ks_serve_dra_claim_read(out, len, &v), 0));
    cr_expect(v.allocated && v.stamped && v.finalizer && !v.deleting);
    /* one there already stays */
    char *again;
    cr_assert(eq(
        int,
        ks_serve_dra_status_body(out, len, NULL, "c", "uc", INT64_C(1900000000) * 1000000000, &again, &len),
        0));
    cr_expect(eq(str, fld(again, "status.allocation.allocationTimestamp", buf, sizeof(buf)),
                 "2026-01-02T03:04:05Z"));
    cr_expect(eq(str, fld(again, "status.reservedFor.2.uid", buf, sizeof(buf)), "uc"));
    free(again);
    free(out);
    /* a new allocation: its own time, else the stamp */
    cr_assert(eq(
        int, ks_serve_dra_status_body(CLAIM, strlen(CLAIM), one_device("g1"), "b", "ub", 0, &out, &len), 0));
    cr_expect(
        eq(str, fld(out, "status.allocation.allocationTimestamp", buf, sizeof(buf)), "1970-01-01T00:00:00Z"));
    free(out);
}

Test(serve_dra, bind_claim_treats_a_stale_view_as_the_first_conflict)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 11); /* the scheduler saw 10 */
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "", buf[64];

    cr_assert(eq(int,
                 api->bind_claim(api, &the_claim, one_device("g0"), "web-0", "uw", rv, sizeof(rv), msg,
                                 sizeof(msg)),
                 0),
              "%s", msg);
    /* no write at version 10 (it could only answer 409): the claim read is the next attempt's */
    cr_expect(eq(str, s.log, "GET claim; PUT claim; PUT status; "));
    cr_expect(eq(str, body_field(&s, 0, "metadata.resourceVersion", buf, sizeof(buf)), "11"));
    struct ks_serve_dra_stats st;
    ks_serve_dra_stats(d, &st);
    cr_expect(eq(u64, st.attempts, 2));
    cr_expect(eq(u64, st.conflicts, 1));
    close_dra(d, &s);
}

Test(serve_dra, bind_claim_reads_again_after_a_conflict)
{
    struct store s = {0};
    /* another writer changes the claim between our read and our finalizer update */
    s.changes[0] = (struct change){.at = 2, .obj = CLAIM};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "";

    cr_assert(
        eq(int,
           api->bind_claim(api, &the_claim, one_device("g0"), "p", "up", rv, sizeof(rv), msg, sizeof(msg)),
           0),
        "%s", msg);
    cr_expect(eq(str, s.log, "GET claim; PUT claim; GET claim; PUT claim; PUT status; "));
    cr_expect(eq(str, rv, "13"));
    close_dra(d, &s);
}

Test(serve_dra, bind_claim_gives_up_after_five_attempts_with_the_last_conflict)
{
    struct store s = {0};
    for (int i = 0; i < 5; i++) /* every status update (requests 2, 4, ...) meets another writer first */
        s.changes[i] = (struct change){.at = 2 + 2 * i, .obj = ALLOCATED_CLAIM};
    struct ks_serve_dra *d = open_dra(&s, ALLOCATED_CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "";

    cr_expect(
        eq(int, api->bind_claim(api, &the_claim, NULL, "p", "up", rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(
        eq(str, s.log,
           "GET claim; PUT status; GET claim; PUT status; GET claim; PUT status; GET claim; PUT status; "
           "GET claim; PUT status; "));
    cr_expect(
        eq(str, msg,
           "add reservation to claim ns/c: Operation cannot be fulfilled on resourceclaims.resource.k8s.io "
           "\"c\": the object has been modified; please apply your changes to the latest version and try "
           "again"));
    struct ks_serve_dra_stats st;
    ks_serve_dra_stats(d, &st);
    cr_expect(eq(u64, st.attempts, 5));
    cr_expect(eq(u64, st.conflicts, 5));
    cr_expect(eq(u64, st.bind_failures, 1));
    close_dra(d, &s);
}

Test(serve_dra, bind_claim_checks_the_claim_read_again)
{
    static const char *deleted =
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
        "\"finalizers\":[\"x\"]},\"spec\":{}}";
    struct store s = {0};
    s.changes[0] = (struct change){.at = 2, .obj = deleted};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "";
    cr_expect(eq(
        int, api->bind_claim(api, &the_claim, one_device("g0"), "p", "up", rv, sizeof(rv), msg, sizeof(msg)),
        -1));
    cr_expect(eq(str, msg, "claim ns/c got deleted in the meantime"));
    cr_expect(eq(str, s.log, "GET claim; PUT claim; GET claim; "));
    close_dra(d, &s);

    struct store s2 = {0};
    s2.changes[0] = (struct change){.at = 2, .obj = ALLOCATED_CLAIM};
    d = open_dra(&s2, CLAIM, 10);
    api = ks_serve_dra_api(d);
    cr_expect(eq(
        int, api->bind_claim(api, &the_claim, one_device("g0"), "p", "up", rv, sizeof(rv), msg, sizeof(msg)),
        -1));
    cr_expect(eq(str, msg, "claim ns/c got allocated elsewhere in the meantime"));
    close_dra(d, &s2);
}

Test(serve_dra, bind_claim_error_texts)
{
    static const char *not_found = "{\"kind\":\"Status\",\"message\":\"resourceclaims.resource.k8s.io "
                                   "\\\"c\\\" not found\",\"code\":404}";
    static const char *internal =
        "{\"kind\":\"Status\",\"message\":\"Internal error occurred: injected fault\",\"code\":500}";
    char rv[64], msg[512];

    /* the first read fails: it is the failure of the write it precedes */
    struct store s = {.forced = {{.at = 1, .status = 404, .body = not_found}}};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    cr_expect(eq(
        int, api->bind_claim(api, &the_claim, one_device("g0"), "p", "up", rv, sizeof(rv), msg, sizeof(msg)),
        -1));
    cr_expect(eq(str, msg, "add finalizer to claim ns/c: resourceclaims.resource.k8s.io \"c\" not found"));
    close_dra(d, &s);

    /* a read after a conflict fails */
    struct store s2 = {.forced = {{.at = 2, .status = 409, .body = conflict_body},
                                  {.at = 3, .status = 404, .body = not_found}}};
    d = open_dra(&s2, ALLOCATED_CLAIM, 10);
    api = ks_serve_dra_api(d);
    cr_expect(
        eq(int, api->bind_claim(api, &the_claim, NULL, "p", "up", rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(eq(str, msg,
                 "get updated claim ns/c after conflict: resourceclaims.resource.k8s.io \"c\" not found"));
    close_dra(d, &s2);

    /* anything but a conflict ends the loop at once */
    struct store s3 = {.forced = {{.at = 3, .status = 500, .body = internal}}};
    d = open_dra(&s3, CLAIM, 10);
    api = ks_serve_dra_api(d);
    cr_expect(eq(
        int, api->bind_claim(api, &the_claim, one_device("g0"), "p", "up", rv, sizeof(rv), msg, sizeof(msg)),
        -1));
    cr_expect(eq(str, msg,
                 "add allocation and reservation to claim ns/c: Internal error occurred: injected fault"));
    cr_expect(eq(str, s3.log, "GET claim; PUT claim; PUT status; "));
    close_dra(d, &s3);

    /* no response at all */
    struct store s4 = {.forced = {{.at = 2, .transport_rc = -ECONNREFUSED}}};
    d = open_dra(&s4, CLAIM, 10);
    api = ks_serve_dra_api(d);
    cr_expect(eq(
        int, api->bind_claim(api, &the_claim, one_device("g0"), "p", "up", rv, sizeof(rv), msg, sizeof(msg)),
        -1));
    cr_expect(eq(str, msg,
                 "add finalizer to claim ns/c: PUT /apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c: "
                 "connection refused"));
    close_dra(d, &s4);
}

/* ---- Unreserve, deallocation ------------------------------------------------------------------ */

Test(serve_dra, unreserve_patches_the_reservation_away)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, ALLOCATED_CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char msg[256] = "";
    cr_expect(eq(int, api->unreserve(api, &the_claim, "ua", msg, sizeof(msg)), 0), "%s", msg);
    cr_expect(eq(str, s.log, "PATCH status; "));
    cr_expect(eq(str, s.bodies[0],
                 "{\"metadata\":{\"uid\":\"cu\"},\"status\":{\"reservedFor\":[{\"$patch\":\"delete\",\"uid\":"
                 "\"ua\"}]}}"));
    s.forced[0] = (struct forced){.at = 2, .status = 500, .body = "{\"message\":\"boom\"}"};
    cr_expect(eq(int, api->unreserve(api, &the_claim, "ua", msg, sizeof(msg)), -1));
    cr_expect(eq(str, msg, "boom"));
    close_dra(d, &s);
}

Test(serve_dra, deallocate_updates_the_status_at_the_scheduler_s_version)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, ALLOCATED_CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char rv[64] = "", msg[512] = "", buf[64];
    cr_assert(eq(int, api->deallocate(api, &the_claim, rv, sizeof(rv), msg, sizeof(msg)), 0), "%s", msg);
    cr_expect(eq(str, s.log, "GET claim; PUT status; "));
    cr_expect(eq(str, rv, "11"));
    cr_expect(eq(str, body_field(&s, 0, "status", buf, sizeof(buf)), "<composite>"));
    cr_expect(strstr(s.bodies[0], "\"status\":{}") != NULL, "%s", s.bodies[0]);
    cr_expect(eq(str, body_field(&s, 0, "metadata.finalizers.1", buf, sizeof(buf)), KS_DRA_FINALIZER));
    /* a newer claim on the server: its own 409 is the error (no retry) */
    s.nbodies = 0;
    cr_expect(eq(int, api->deallocate(api, &the_claim, rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(eq(str, body_field(&s, 0, "metadata.resourceVersion", buf, sizeof(buf)), "10"));
    cr_expect(eq(str, msg,
                 "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"c\": the object has been "
                 "modified; please apply your changes to the latest version and try again"));
    close_dra(d, &s);
}

/* ---- discovery ------------------------------------------------------------------------------------ */

struct disco {
    long status;
    const char *body;
    int rc;
};

static int disco_request(void *ctx, const char *method, const char *path, const char *content_type,
                         const char *body, size_t len, struct ks_kube_response *resp)
{
    struct disco *d = ctx;
    (void)content_type, (void)body, (void)len;
    cr_expect(eq(str, (char *)method, "GET"));
    cr_expect(eq(str, (char *)path, "/apis/resource.k8s.io/v1"));
    if (d->rc) {
        snprintf(resp->error, sizeof(resp->error), "GET %s: connection refused", path);
        return d->rc;
    }
    answer(resp, d->status, d->body);
    return 0;
}

Test(serve_dra, discovery_tells_served_from_not_served)
{
    uint32_t kinds;
    char msg[256];
    struct disco d = {
        .status = 200,
        .body =
            "{\"kind\":\"APIResourceList\",\"groupVersion\":\"resource.k8s.io/v1\",\"resources\":["
            "{\"name\":\"deviceclasses\"},{\"name\":\"resourceclaims\"},{\"name\":\"resourceclaims/status\"},"
            "{\"name\":\"resourceslices\"},{\"name\":\"resourceclaimtemplates\"}]}"};
    struct ks_serve_transport t = {.request = disco_request, .ctx = &d};
    cr_assert(eq(int, ks_api_init(), 0));
    cr_expect(eq(int, ks_serve_dra_discover(&t, &kinds, msg, sizeof(msg)), 1));
    cr_expect(eq(u32, kinds, ks_serve_dra_kinds()));
    d.body = "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"resourceclaims\"}]}";
    cr_expect(eq(int, ks_serve_dra_discover(&t, &kinds, msg, sizeof(msg)), 1));
    cr_expect(eq(u32, kinds, 1u << KS_KIND_RESOURCE_CLAIM));
    /* kube-apiserver v1.25 */
    d.status = 404;
    d.body =
        "{\"kind\":\"Status\",\"message\":\"the server could not find the requested resource\",\"code\":404}";
    cr_expect(eq(int, ks_serve_dra_discover(&t, &kinds, msg, sizeof(msg)), 0));
    cr_expect(eq(u32, kinds, 0));
    d.status = 503;
    d.body = "{\"kind\":\"Status\",\"message\":\"the server is currently unable to handle the request\"}";
    cr_expect(eq(int, ks_serve_dra_discover(&t, &kinds, msg, sizeof(msg)), -EAGAIN));
    cr_expect(eq(str, msg, "the server is currently unable to handle the request"));
    d.status = 200;
    d.body = "not json";
    cr_expect(eq(int, ks_serve_dra_discover(&t, &kinds, msg, sizeof(msg)), -EAGAIN));
    d.rc = -ECONNREFUSED;
    cr_expect(eq(int, ks_serve_dra_discover(&t, &kinds, msg, sizeof(msg)), -EAGAIN));
    cr_expect(eq(str, msg, "GET /apis/resource.k8s.io/v1: connection refused"));
}

/* ---- the pod update of a generated claim ------------------------------------------------------------ */

Test(serve_dra, a_recorded_generated_claim_is_its_own_pod_event)
{
    static const char *base = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, uid: u}\n"
                              "spec:\n  containers: [{name: c, image: i}]\n"
                              "  resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]\n";
    char y[1024];
    struct ks_pod *before = pod_from(base);
    snprintf(y, sizeof(y), "%sstatus:\n  resourceClaimStatuses: [{name: gpu, resourceClaimName: p-gpu-x}]\n",
             base);
    struct ks_pod *after = pod_from(y);
    struct ks_cluster_event ev[KS_ACTION_COUNT];
    cr_assert(eq(u32, ks_pod_update_events(before, after, KS_ER_UNSCHEDULED_POD, ev), 1));
    cr_expect(eq(u32, ev[0].actions, (uint32_t)KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM));
    cr_assert(eq(u32, ks_pod_update_events(after, after, KS_ER_UNSCHEDULED_POD, ev), 1));
    cr_expect(eq(u32, ev[0].actions, (uint32_t)KS_ACT_UPDATE), "the same statuses: a plain update");
    ks_pod_put(before);
    ks_pod_put(after);
}

/* ---- the special claim for extended resources ------------------------------------------------ */

/* The special claim of pod "web-0" (uid "uw") in "ns" for one example.com/gpu. */
static struct ks_resource_claim *special_claim(struct ks_arena *a)
{
    static struct ks_kv ann = {"resource.kubernetes.io/extended-resource-claim", "true"};
    static struct ks_owner_ref owner = {"v1", "Pod", "web-0", "uw", true};
    static struct ks_device_request req;
    struct ks_resource_claim *c = ks_arena_alloc(a, sizeof(*c));
    req =
        (struct ks_device_request){"container-0-request-0", true, {.name = "container-0-request-0"}, 0, NULL};
    req.spec.device_class_name = "gpu";
    req.spec.mode = KS_ALLOC_EXACT_COUNT;
    req.spec.count = 2;
    c->meta.name = "<extended-resources>";
    c->meta.namespace_id = ks_intern("ns");
    c->meta.annotations = (struct ks_annotations){1, &ann};
    c->meta.nowners = 1;
    c->meta.owners = &owner;
    c->spec = (struct ks_device_claim){1, &req, 0, NULL, 0, NULL};
    return c;
}

Test(serve_dra, create_claim_posts_the_special_claim_under_a_generated_name)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    struct ks_arena a = KS_ARENA_INIT;
    char name[64], uid[64], rv[64], msg[512] = "", buf[256];

    cr_assert(eq(int,
                 api->create_claim(api, special_claim(&a), "web-0", name, sizeof(name), uid, sizeof(uid), rv,
                                   sizeof(rv), msg, sizeof(msg)),
                 0),
              "%s", msg);
    cr_expect(eq(str, s.log, "POST /apis/resource.k8s.io/v1/namespaces/ns/resourceclaims; "));
    cr_expect(eq(str, name, "c"));
    cr_expect(eq(str, uid, "cu"));
    cr_expect(eq(str, rv, "10"));
    cr_expect(
        eq(str, body_field(&s, 0, "metadata.generateName", buf, sizeof(buf)), "web-0-extended-resources-"));
    cr_expect(eq(str, body_field(&s, 0, "metadata.name", buf, sizeof(buf)), ""), "the server names it");
    cr_expect(eq(str, body_field(&s, 0, "metadata.ownerReferences.0.uid", buf, sizeof(buf)), "uw"));
    cr_expect(eq(str, body_field(&s, 0, "metadata.ownerReferences.0.controller", buf, sizeof(buf)), "true"));
    bool annotated =
        strstr(s.bodies[0],
               "\"annotations\":{\"resource.kubernetes.io/extended-resource-claim\":\"true\"}") != NULL;
    cr_expect(annotated, "%s", s.bodies[0]);
    cr_expect(eq(str, body_field(&s, 0, "spec.devices.requests.0.name", buf, sizeof(buf)),
                 "container-0-request-0"));
    cr_expect(eq(str, body_field(&s, 0, "spec.devices.requests.0.exactly.count", buf, sizeof(buf)), "2"));
    cr_expect(eq(str, body_field(&s, 0, "spec.devices.requests.0.exactly.allocationMode", buf, sizeof(buf)),
                 "ExactCount"));
    cr_expect(eq(str, body_field(&s, 0, "status", buf, sizeof(buf)), ""));

    s.forced[0] = (struct forced){2, 403,
                                  "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"forbidden\","
                                  "\"reason\":\"Forbidden\",\"code\":403}",
                                  0};
    cr_expect(eq(int,
                 api->create_claim(api, special_claim(&a), "web-0", name, sizeof(name), uid, sizeof(uid), rv,
                                   sizeof(rv), msg, sizeof(msg)),
                 -1));
    cr_expect(eq(str, msg, "create claim for extended resources ns/: forbidden"));
    ks_arena_destroy(&a);
    close_dra(d, &s);
}

Test(serve_dra, delete_claim_drops_the_finalizer_then_deletes)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, ALLOCATED_CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    char msg[512] = "", buf[256];

    /* another writer changes the claim between the read and the update: read again */
    s.changes[0] = (struct change){2, ALLOCATED_CLAIM};
    cr_assert(eq(int, api->delete_claim(api, &the_claim, msg, sizeof(msg)), 0), "%s", msg);
    cr_expect(eq(str, s.log, "GET claim; PUT claim; GET claim; PUT claim; DELETE claim; "));
    cr_expect(eq(str, body_field(&s, 1, "metadata.finalizers.0", buf, sizeof(buf)), "other"));
    cr_expect(eq(str, body_field(&s, 1, "metadata.finalizers.1", buf, sizeof(buf)), ""), "only ours goes");

    /* gone already: nothing to do */
    memset(s.log, 0, sizeof(s.log));
    s.forced[0] = (struct forced){s.nreq + 1, 404,
                                  "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"not found\","
                                  "\"reason\":\"NotFound\",\"code\":404}",
                                  0};
    cr_expect(eq(int, api->delete_claim(api, &the_claim, msg, sizeof(msg)), 0));
    cr_expect(eq(str, s.log, "GET claim; "));
    struct ks_serve_dra_stats st;
    ks_serve_dra_stats(d, &st);
    cr_expect(eq(u64, st.deletes, 2));
    cr_expect(eq(u64, st.delete_failures, 0));
    close_dra(d, &s);
}

Test(serve_dra, the_pod_status_patch_names_the_claim_and_retries_server_errors)
{
    struct store s = {0};
    struct ks_serve_dra *d = open_dra(&s, CLAIM, 10);
    const struct ks_dra_api *api = ks_serve_dra_api(d);
    const struct ks_dra_ext_mapping maps[] = {{"app", "example.com/gpu", "container-0-request-0"}};
    char msg[512] = "", buf[256];

    s.forced[0] = (struct forced){1, 503, "{\"kind\":\"Status\",\"message\":\"busy\",\"code\":503}", 0};
    cr_assert(eq(int,
                 api->patch_pod_extended(api, "ns", "web-0", "web-0-extended-resources-x2b4c", maps, 1, msg,
                                         sizeof(msg)),
                 0),
              "%s", msg);
    cr_expect(
        eq(str, s.log,
           "PATCH /api/v1/namespaces/ns/pods/web-0/status; PATCH /api/v1/namespaces/ns/pods/web-0/status; "));
    cr_expect(eq(str,
                 body_field(&s, 1, "status.extendedResourceClaimStatus.resourceClaimName", buf, sizeof(buf)),
                 "web-0-extended-resources-x2b4c"));
    cr_expect(eq(str,
                 body_field(&s, 1, "status.extendedResourceClaimStatus.requestMappings.0.requestName", buf,
                            sizeof(buf)),
                 "container-0-request-0"));
    cr_expect(eq(str,
                 body_field(&s, 1, "status.extendedResourceClaimStatus.requestMappings.0.containerName", buf,
                            sizeof(buf)),
                 "app"));
    s.forced[1] = (struct forced){3, 422, "{\"kind\":\"Status\",\"message\":\"invalid\",\"code\":422}", 0};
    cr_expect(eq(int, api->patch_pod_extended(api, "ns", "web-0", "n", maps, 1, msg, sizeof(msg)), -1));
    cr_expect(eq(str, msg, "update pod ns/web-0 ExtendedResourceClaimStatus: invalid"));
    cr_expect(eq(int, api->patch_pod_extended(api, "ns", "web-0", "n", maps, 0, msg, sizeof(msg)), -1));
    cr_expect(
        eq(str, msg, "nil or empty request mappings, no update of pod ns/web-0 ExtendedResourceClaimStatus"));
    close_dra(d, &s);
}
