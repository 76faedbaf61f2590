/*
 * test_volumes.c - ksched serve's volume API (serve/serve_volumes.c) over a fake transport:
 * an update GETs the object, sets claimRef / the annotations / the resourceVersion the
 * scheduler saw and PUTs everything else back as the server sent it; failures carry the
 * server's Status message; waits are checked when a wait starts and when the intake
 * delivers a PV or PVC, fail when their pod is deleted, time out, and end at cancel.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/volume_api.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a fake API server -------------------------------------------------------------------- */

struct fake_server {
    pthread_mutex_t lock;
    char log[1024];
    char put[4096]; /* the last PUT's body */
    const char *get_body;
    long get_status, put_status;
    const char *put_body;
    int transport_rc; /* < 0: the request fails in transport */
};

static int fake_request(void *ctx, const char *method, const char *path, const char *content_type,
                        const char *body, size_t len, struct ks_kube_response *resp)
{
    struct fake_server *f = ctx;
    pthread_mutex_lock(&f->lock);
    size_t n = strlen(f->log);
    snprintf(f->log + n, sizeof(f->log) - n, "%s %s %s; ", method, path, content_type ? content_type : "-");
    if (f->transport_rc) {
        snprintf(resp->error, sizeof(resp->error), "connection refused");
        pthread_mutex_unlock(&f->lock);
        return f->transport_rc;
    }
    const char *answer;
    if (strcmp(method, "GET") == 0) {
        resp->status = f->get_status ? f->get_status : 200;
        answer = f->get_body;
    } else {
        snprintf(f->put, sizeof(f->put), "%.*s", (int)len, body);
        resp->status = f->put_status ? f->put_status : 200;
        answer = f->put_body;
    }
    resp->body = strdup(answer ? answer : "");
    resp->len = strlen(resp->body);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

static struct ks_serve_volumes *open_volumes(struct fake_server *f, int64_t poll_ns)
{
    struct ks_serve_volumes *v;
    cr_assert(eq(int, ks_api_init(), 0));
    pthread_mutex_init(&f->lock, NULL);
    struct ks_serve_volumes_opts o = {.transport = {.request = fake_request, .ctx = f}, .poll_ns = poll_ns};
    cr_assert(eq(int, ks_serve_volumes_create(&o, &v), 0));
    return v;
}

static const struct ks_persistent_volume_claim claim = {
    .meta = {.name = "data-0", .uid = "uid-c", .resource_version = "31"}};

#define SERVER_PV                                                                                            \
    "{\"kind\":\"PersistentVolume\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"pv-1\",\"uid\":\"u1\","   \
    "\"resourceVersion\":\"12\",\"finalizers\":[\"kubernetes.io/pv-protection\"]},\"spec\":{\"capacity\":"   \
    "{\"storage\":\"10Gi\"},\"local\":{\"path\":\"/mnt/x\"},\"accessModes\":[\"ReadWriteOnce\"],"            \
    "\"storageClassName\":\"local\"},\"status\":{\"phase\":\"Available\"}}"

Test(serve_volumes, update_pv_puts_the_server_object_with_the_claim_at_our_version)
{
    struct fake_server f = {.get_body = SERVER_PV, .put_body = "{\"metadata\":{\"resourceVersion\":\"40\"}}"};
    struct ks_serve_volumes *v = open_volumes(&f, 0);
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct ks_persistent_volume pv = {.meta = {.name = "pv-1", .resource_version = "12"}};
    struct ks_persistent_volume_claim c = claim;
    c.meta.namespace_id = ks_intern("prod");
    char rv[32] = "", msg[256] = "";

    cr_assert(eq(int, api->update_pv(api->ctx, &pv, &c, true, true, rv, sizeof(rv), msg, sizeof(msg)), 0),
              "%s", msg);
    cr_expect(eq(str, rv, "40"));
    cr_expect(
        eq(str, f.log,
           "GET /api/v1/persistentvolumes/pv-1 -; PUT /api/v1/persistentvolumes/pv-1 application/json; "));
    cr_expect(eq(
        str, f.put,
        "{\"kind\":\"PersistentVolume\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"pv-1\",\"uid\":\"u1\","
        "\"resourceVersion\":\"12\",\"finalizers\":[\"kubernetes.io/pv-protection\"],\"annotations\":"
        "{\"pv.kubernetes.io/bound-by-controller\":\"yes\"}},\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},"
        "\"local\":{\"path\":\"/mnt/x\"},\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"local\","
        "\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"prod\",\"name\":\"data-0\","
        "\"uid\":\"uid-c\",\"apiVersion\":\"v1\",\"resourceVersion\":\"31\"}},\"status\":{\"phase\":"
        "\"Available\"}}"));

    /* the server has a newer version: the PUT carries ours and the server refuses it */
    f.log[0] = '\0';
    f.put_status = 409;
    f.put_body =
        "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Operation cannot be fulfilled on "
        "persistentvolumes \\\"pv-1\\\": the object has been modified; please apply your changes to the "
        "latest version and try again\",\"reason\":\"Conflict\",\"code\":409}";
    pv.meta.resource_version = "11";
    cr_expect(eq(int, api->update_pv(api->ctx, &pv, &c, false, false, rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(eq(
        str, msg,
        "Operation cannot be fulfilled on persistentvolumes \"pv-1\": the object has been modified; please "
        "apply your changes to the latest version and try again"));
    cr_expect(strstr(f.put, "\"resourceVersion\":\"11\"") != NULL, "%s", f.put);
    cr_expect(strstr(f.put, "claimRef") == NULL && strstr(f.put, "bound-by-controller") == NULL, "%s", f.put);
    struct ks_serve_volumes_stats st;
    ks_serve_volumes_stats(v, &st);
    cr_expect(eq(u64, st.updates, 1));
    cr_expect(eq(u64, st.update_failures, 1));
    cr_expect(eq(u64, st.conflicts, 1));
    ks_serve_volumes_destroy(v);
}

Test(serve_volumes, update_pvc_sets_the_selected_node)
{
    struct fake_server f = {
        .get_body =
            "{\"metadata\":{\"name\":\"data-0\",\"namespace\":\"prod\",\"resourceVersion\":\"31\","
            "\"annotations\":{\"a\":\"b\",\"volume.kubernetes.io/selected-node\":\"old\"}},\"spec\":{}}",
        .put_body = "{\"metadata\":{\"resourceVersion\":\"41\"}}"};
    struct ks_serve_volumes *v = open_volumes(&f, 0);
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct ks_persistent_volume_claim c = claim;
    c.meta.namespace_id = ks_intern("prod");
    char rv[32] = "", msg[256] = "";
    cr_assert(eq(int, api->update_pvc(api->ctx, &c, "node-7", rv, sizeof(rv), msg, sizeof(msg)), 0), "%s",
              msg);
    cr_expect(eq(str, rv, "41"));
    cr_expect(eq(str, f.log,
                 "GET /api/v1/namespaces/prod/persistentvolumeclaims/data-0 -; "
                 "PUT /api/v1/namespaces/prod/persistentvolumeclaims/data-0 application/json; "));
    cr_expect(
        eq(str, f.put,
           "{\"metadata\":{\"name\":\"data-0\",\"namespace\":\"prod\",\"resourceVersion\":\"31\","
           "\"annotations\":{\"a\":\"b\",\"volume.kubernetes.io/selected-node\":\"node-7\"}},\"spec\":{}}"));
    ks_serve_volumes_destroy(v);
}

Test(serve_volumes, failures_say_why)
{
    struct fake_server f = {.get_status = 404,
                            .get_body =
                                "{\"kind\":\"Status\",\"message\":\"persistentvolumes \\\"pv-1\\\" not "
                                "found\",\"code\":404}"};
    struct ks_serve_volumes *v = open_volumes(&f, 0);
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct ks_persistent_volume pv = {.meta = {.name = "pv-1", .resource_version = "12"}};
    char rv[32] = "", msg[256] = "";
    cr_expect(
        eq(int, api->update_pv(api->ctx, &pv, &claim, true, true, rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(eq(str, msg, "persistentvolumes \"pv-1\" not found"));
    cr_expect(strstr(f.log, "PUT") == NULL, "no PUT after a failed GET: %s", f.log);
    f.get_status = 500;
    f.get_body = "oops";
    cr_expect(
        eq(int, api->update_pv(api->ctx, &pv, &claim, true, true, rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(
        eq(str, msg, "the server responded with the status code 500 but did not return more information"));
    f.transport_rc = -ECONNREFUSED;
    cr_expect(
        eq(int, api->update_pv(api->ctx, &pv, &claim, true, true, rv, sizeof(rv), msg, sizeof(msg)), -1));
    cr_expect(eq(str, msg, "Get \"/api/v1/persistentvolumes/pv-1\": connection refused"));
    ks_serve_volumes_destroy(v);
}

/* ---- waits -------------------------------------------------------------------------------------- */

/* A wait that is bound once the lookup has "pv-1", fails when its pod is gone. */
struct test_wait {
    struct ks_vol_wait w; /* first */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int checks, done;
    enum ks_vol_wait_result result;
    char msg[128];
};

static enum ks_vol_wait_result test_check(struct ks_vol_wait *w, const struct ks_vol_lookup *l, char *msg,
                                          size_t len)
{
    struct test_wait *t = (struct test_wait *)w;
    pthread_mutex_lock(&t->lock);
    t->checks++;
    pthread_mutex_unlock(&t->lock);
    if (!l->pod_exists(l)) {
        snprintf(msg, len, "pod gone");
        return KS_VOL_FAILED;
    }
    return l->pv(l, "pv-1") && l->pvc(l, "prod", "data-0") ? KS_VOL_BOUND : KS_VOL_PENDING;
}

static void test_done(struct ks_vol_wait *w, enum ks_vol_wait_result result, const char *msg)
{
    struct test_wait *t = (struct test_wait *)w;
    pthread_mutex_lock(&t->lock);
    t->done++;
    t->result = result;
    snprintf(t->msg, sizeof(t->msg), "%s", msg ? msg : "");
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static void test_wait_init(struct test_wait *t, int64_t timeout_ns)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    t->w = (struct ks_vol_wait){.pod_namespace = "prod",
                                .pod_name = "web-0",
                                .timeout_ns = timeout_ns,
                                .check = test_check,
                                .done = test_done};
}

/* Poll up to 5 s for @t to end (@checks 0) or to have been checked @checks times. */
static bool await(struct test_wait *t, int checks)
{
    for (int i = 0; i < 2500; i++) {
        pthread_mutex_lock(&t->lock);
        bool ok = checks ? t->checks >= checks : t->done > 0;
        pthread_mutex_unlock(&t->lock);
        if (ok)
            return true;
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    return false;
}

static struct ks_persistent_volume pv1 = {.meta = {.name = "pv-1"}};

Test(serve_volumes, a_wait_ends_when_the_informer_delivers_the_binding)
{
    struct fake_server f = {0};
    struct ks_serve_volumes *v = open_volumes(&f, INT64_C(3600) * 1000000000); /* no polls */
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct test_wait t;
    test_wait_init(&t, INT64_C(600) * 1000000000);
    cr_assert(eq(int, api->wait(api->ctx, &t.w), 0));
    cr_expect(await(&t, 1), "checked when it starts");
    ks_serve_volumes_object(v, KS_KIND_PV, "/pv-1", &pv1);
    cr_expect(await(&t, 2), "checked again on a PV");
    cr_expect(eq(int, t.done, 0));
    ks_serve_volumes_object(v, KS_KIND_PVC, "prod/data-0", &claim);
    cr_assert(await(&t, 0));
    cr_expect(eq(int, t.result, KS_VOL_BOUND));
    struct ks_serve_volumes_stats st;
    ks_serve_volumes_stats(v, &st);
    cr_expect(eq(u64, st.waits, 1));
    cr_expect(eq(u64, st.bound, 1));
    cr_expect(eq(u32, st.waiting, 0));
    /* a deleted object is gone from the lookups */
    ks_serve_volumes_object(v, KS_KIND_PV, "/pv-1", NULL);
    struct test_wait t2;
    test_wait_init(&t2, INT64_C(600) * 1000000000);
    cr_assert(eq(int, api->wait(api->ctx, &t2.w), 0));
    cr_expect(await(&t2, 1));
    cr_expect(eq(int, t2.done, 0));
    ks_serve_volumes_destroy(v); /* cancels it */
    cr_expect(eq(int, t2.done, 1));
    cr_expect(eq(int, t2.result, KS_VOL_CANCELLED));
}

Test(serve_volumes, a_wait_fails_when_its_pod_is_deleted)
{
    struct fake_server f = {0};
    struct ks_serve_volumes *v = open_volumes(&f, INT64_C(3600) * 1000000000);
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct test_wait t;
    test_wait_init(&t, INT64_C(600) * 1000000000);
    cr_assert(eq(int, api->wait(api->ctx, &t.w), 0));
    cr_expect(await(&t, 1));
    ks_serve_volumes_pod_deleted(v, "prod/web-1"); /* another pod */
    ks_serve_volumes_pod_deleted(v, "prod/web-0");
    cr_assert(await(&t, 0));
    cr_expect(eq(int, t.result, KS_VOL_FAILED));
    cr_expect(eq(str, t.msg, "pod gone"));
    ks_serve_volumes_destroy(v);
}

Test(serve_volumes, waits_time_out_and_polls_look_again)
{
    struct fake_server f = {0};
    struct ks_serve_volumes *v = open_volumes(&f, INT64_C(20) * 1000000); /* poll every 20 ms */
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct test_wait t, z;
    test_wait_init(&t, INT64_C(300) * 1000000);
    test_wait_init(&z, 0);
    cr_assert(eq(int, api->wait(api->ctx, &t.w), 0));
    cr_assert(eq(int, api->wait(api->ctx, &z.w), 0));
    cr_assert(await(&z, 0));
    cr_expect(eq(int, z.result, KS_VOL_TIMEOUT));
    cr_expect(eq(int, z.checks, 0), "a zero timeout ends without a check");
    cr_assert(await(&t, 0));
    cr_expect(eq(int, t.result, KS_VOL_TIMEOUT));
    cr_expect(ge(int, t.checks, 3), "polled while waiting (%d checks)", t.checks);
    struct ks_serve_volumes_stats st;
    ks_serve_volumes_stats(v, &st);
    cr_expect(eq(u64, st.timeouts, 2));
    ks_serve_volumes_destroy(v);
}

Test(serve_volumes, cancel_ends_every_wait_and_refuses_new_ones)
{
    struct fake_server f = {0};
    struct ks_serve_volumes *v = open_volumes(&f, 0);
    const struct ks_volume_api *api = ks_serve_volumes_api(v);
    struct test_wait a, b;
    test_wait_init(&a, INT64_C(600) * 1000000000);
    test_wait_init(&b, INT64_C(600) * 1000000000);
    cr_assert(eq(int, api->wait(api->ctx, &a.w), 0));
    cr_assert(eq(int, api->wait(api->ctx, &b.w), 0));
    ks_serve_volumes_cancel(v);
    cr_expect(eq(int, a.done, 1));
    cr_expect(eq(int, a.result, KS_VOL_CANCELLED));
    cr_expect(eq(int, b.done, 1));
    struct test_wait c;
    test_wait_init(&c, INT64_C(600) * 1000000000);
    cr_expect(eq(int, api->wait(api->ctx, &c.w), -ECANCELED));
    ks_serve_volumes_destroy(v);
    cr_expect(eq(int, c.done, 0));
}
