/*
 * test_events.c - Event series (serve/serve_events.c) with a fake clock: which Events are
 * isomorphic, the POST of the first, the PATCH that makes the second a series, counting
 * without writes, finishSeries and refreshExistingEventSeries, expiry of single Events;
 * and the writer's side (serve/serve_writer.c): a series PATCH answered 404 creates the
 * Event whole, and a 409 on that create patches again.
 */
#include <criterion/criterion.h>

#include "serve.h"
#include "serve_fixtures.h"

#include "ksched/api.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/json_tree.h"
#include "ksched/yaml_tree.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEC INT64_C(1000000000)
#define T0  (INT64_C(1700000000) * SEC) /* 2023-11-14T22:13:20Z */

static struct ks_pod *pod_rv(const char *name, const char *uid, const char *rv)
{
    char yaml[512];
    snprintf(
        yaml, sizeof(yaml),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: prod, uid: %s, resourceVersion: '%s'}\n"
        "spec: {containers: [{name: c, image: i}]}\n",
        name, uid, rv);
    return pod_from(yaml);
}

static struct ks_serve_event failed(const struct ks_pod *pod, const char *note, int64_t now)
{
    return (struct ks_serve_event){
        .regarding = pod,
        .type = "Warning",
        .reason = "FailedScheduling",
        .action = "Scheduling",
        .note = note,
        .reporting_controller = "default-scheduler",
        .reporting_instance = "default-scheduler-host",
        .now_ns = now,
    };
}

Test(event_series, first_posts_second_patches_later_ones_only_count)
{
    struct ks_event_series *s;
    struct ks_event_write w;
    char buf[256];
    cr_assert_eq(ks_event_series_create(0, 0, &s), 0);
    cr_expect_eq(ks_event_series_period(s, false), 6 * 60 * SEC);
    cr_expect_eq(ks_event_series_period(s, true), 30 * 60 * SEC);
    struct ks_pod *pod = pod_rv("web-1", "u-1", "42");

    struct ks_serve_event ev = failed(pod, "0/3 nodes are available.", T0 + 1000);
    cr_assert_eq(ks_event_series_record(s, &ev, &w), 1);
    cr_expect_str_eq(w.method, "POST");
    cr_expect_str_eq(w.path, "/apis/events.k8s.io/v1/namespaces/prod/events");
    cr_expect_null(w.create_body);
    cr_expect_str_eq(field(w.body, "metadata.name", buf, sizeof(buf)), "web-1.17979cfe362a03e8");
    cr_expect_str_eq(field(w.body, "eventTime", buf, sizeof(buf)), "2023-11-14T22:13:20.000001Z");
    cr_expect_str_eq(field(w.body, "series", buf, sizeof(buf)), "");
    cr_expect_eq(w.len, strlen(w.body));
    ks_event_write_free(&w);

    /* the second (another note: not part of the key) makes the first a series */
    ev = failed(pod, "0/4 nodes are available.", T0 + 10 * SEC);
    cr_assert_eq(ks_event_series_record(s, &ev, &w), 1);
    cr_expect_str_eq(w.method, "PATCH");
    cr_expect_str_eq(w.path, "/apis/events.k8s.io/v1/namespaces/prod/events/web-1.17979cfe362a03e8");
    cr_expect_str_eq(w.body,
                     "{\"series\":{\"count\":2,\"lastObservedTime\":\"2023-11-14T22:13:30.000000Z\"}}");
    cr_expect_str_eq(w.create_path, "/apis/events.k8s.io/v1/namespaces/prod/events");
    cr_expect_str_eq(field(w.create_body, "metadata.name", buf, sizeof(buf)), "web-1.17979cfe362a03e8");
    cr_expect_str_eq(field(w.create_body, "eventTime", buf, sizeof(buf)), "2023-11-14T22:13:20.000001Z");
    cr_expect_str_eq(field(w.create_body, "series.count", buf, sizeof(buf)), "2");
    cr_expect_str_eq(field(w.create_body, "reason", buf, sizeof(buf)), "FailedScheduling");
    cr_expect_str_eq(field(w.create_body, "regarding.resourceVersion", buf, sizeof(buf)), "42");
    cr_expect_eq(w.create_len, strlen(w.create_body));
    ks_event_write_free(&w);

    /* later ones only count */
    for (int i = 3; i <= 7; i++) {
        ev = failed(pod, "0/4 nodes are available.", T0 + i * 10 * SEC);
        cr_expect_eq(ks_event_series_record(s, &ev, &w), 0, "occurrence %d wrote", i);
    }
    size_t events, series;
    ks_event_series_stats(s, &events, &series);
    cr_expect_eq(events, 1);
    cr_expect_eq(series, 1);
    ks_event_series_destroy(s);
    ks_pod_put(pod);
}

Test(event_series, the_key)
{
    struct ks_event_series *s;
    struct ks_event_write w;
    cr_assert_eq(ks_event_series_create(0, 0, &s), 0);
    struct ks_pod *pod = pod_rv("web-1", "u-1", "42");
    struct ks_pod *newer = pod_rv("web-1", "u-1", "43");
    struct ks_pod *other = pod_rv("web-2", "u-2", "42");
    struct ks_pod *by = pod_rv("hi", "u-9", "7");

    struct ks_serve_event base = failed(pod, "n", T0);
    cr_assert_eq(ks_event_series_record(s, &base, &w), 1);
    ks_event_write_free(&w);

    /* each differs from `base` in one part of the key: a new Event each */
    struct ks_serve_event differ[7];
    for (int i = 0; i < 7; i++)
        differ[i] = failed(pod, "n", T0 + (i + 1) * SEC);
    differ[0].regarding = newer; /* resourceVersion */
    differ[1].regarding = other;
    differ[2].reason = "Preempted";
    differ[3].action = "Preempting";
    differ[4].type = "Normal";
    differ[5].reporting_instance = "default-scheduler-other";
    differ[6].related = by;
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(ks_event_series_record(s, &differ[i], &w), 1);
        cr_expect_str_eq(w.method, "POST", "variant %d was taken for a repeat", i);
        ks_event_write_free(&w);
    }
    differ[6].related = other; /* another related object */
    cr_assert_eq(ks_event_series_record(s, &differ[6], &w), 1);
    cr_expect_str_eq(w.method, "POST");
    ks_event_write_free(&w);
    differ[0].reporting_controller = "ksched"; /* another reportingController */
    cr_assert_eq(ks_event_series_record(s, &differ[0], &w), 1);
    cr_expect_str_eq(w.method, "POST");
    ks_event_write_free(&w);

    /* and each repeated: a series of its own */
    differ[2].now_ns = T0 + 20 * SEC;
    cr_assert_eq(ks_event_series_record(s, &differ[2], &w), 1);
    cr_expect_str_eq(w.method, "PATCH");
    ks_event_write_free(&w);
    size_t events, series;
    ks_event_series_stats(s, &events, &series);
    cr_expect_eq(events, 10);
    cr_expect_eq(series, 1);
    ks_event_series_destroy(s);
    ks_pod_put(by);
    ks_pod_put(other);
    ks_pod_put(newer);
    ks_pod_put(pod);
}

struct emitted {
    int n;
    struct ks_event_write w[8];
};

static void collect(void *ctx, struct ks_event_write *w)
{
    struct emitted *e = ctx;
    cr_assert_lt(e->n, 8);
    e->w[e->n++] = *w;
}

static void emitted_free(struct emitted *e)
{
    for (int i = 0; i < e->n; i++)
        ks_event_write_free(&e->w[i]);
    e->n = 0;
}

Test(event_series, finish_and_refresh)
{
    struct ks_event_series *s;
    struct ks_event_write w;
    struct emitted out = {0};
    size_t events, series;
    char buf[256];
    cr_assert_eq(ks_event_series_create(0, 0, &s), 0);
    struct ks_pod *stuck = pod_rv("stuck", "u-1", "5");
    struct ks_pod *once = pod_rv("once", "u-2", "6");

    struct ks_serve_event ev = failed(once, "n", T0);
    cr_assert_eq(ks_event_series_record(s, &ev, &w), 1);
    ks_event_write_free(&w);
    for (int i = 0; i < 4; i++) { /* a POST, the series PATCH, 2 counted */
        ev = failed(stuck, "n", T0 + i * 60 * SEC);
        cr_assert_geq(ks_event_series_record(s, &ev, &w), 0);
        ks_event_write_free(&w);
    }

    /* 5 min in: nothing has ended */
    ks_event_series_tick(s, T0 + 5 * 60 * SEC, false, collect, &out);
    cr_expect_eq(out.n, 0);
    ks_event_series_stats(s, &events, &series);
    cr_expect_eq(events, 2);

    /* 7 min in: the single Event (6 min old) is forgotten; the series (last seen at 3 min) goes on */
    ks_event_series_tick(s, T0 + 7 * 60 * SEC, false, collect, &out);
    cr_expect_eq(out.n, 0);
    ks_event_series_stats(s, &events, &series);
    cr_expect_eq(events, 1);
    cr_expect_eq(series, 1);

    /* a refresh writes the count the server lacks, once */
    ks_event_series_tick(s, T0 + 8 * 60 * SEC, true, collect, &out);
    cr_assert_eq(out.n, 1);
    cr_expect_str_eq(out.w[0].method, "PATCH");
    cr_expect_str_eq(out.w[0].body,
                     "{\"series\":{\"count\":4,\"lastObservedTime\":\"2023-11-14T22:16:20.000000Z\"}}");
    cr_expect_str_eq(out.w[0].path, "/apis/events.k8s.io/v1/namespaces/prod/events/stuck.17979cfe362a0000");
    emitted_free(&out);
    ks_event_series_tick(s, T0 + 8 * 60 * SEC, true, collect, &out);
    cr_expect_eq(out.n, 0, "the server has that count already");

    /* two more, then quiet: 6 min after the last, the final count and the series ends */
    for (int i = 0; i < 2; i++) {
        ev = failed(stuck, "n", T0 + (10 + i) * 60 * SEC);
        cr_expect_eq(ks_event_series_record(s, &ev, &w), 0);
    }
    ks_event_series_tick(s, T0 + 16 * 60 * SEC, false, collect, &out);
    cr_expect_eq(out.n, 0, "last seen 5 min ago: not ended yet");
    ks_event_series_tick(s, T0 + 17 * 60 * SEC + 1, false, collect, &out);
    cr_assert_eq(out.n, 1);
    cr_expect_str_eq(field(out.w[0].body, "series.count", buf, sizeof(buf)), "6");
    cr_expect_str_eq(field(out.w[0].create_body, "series.count", buf, sizeof(buf)), "6");
    emitted_free(&out);
    ks_event_series_stats(s, &events, &series);
    cr_expect_eq(events, 0);
    cr_expect_eq(series, 0);

    /* the same Event after its series ended: a new Event */
    ev = failed(stuck, "n", T0 + 18 * 60 * SEC);
    cr_assert_eq(ks_event_series_record(s, &ev, &w), 1);
    cr_expect_str_eq(w.method, "POST");
    cr_expect_str_neq(field(w.body, "metadata.name", buf, sizeof(buf)), "stuck.17979cfe362a0000");
    ks_event_write_free(&w);
    ks_event_series_destroy(s);
    ks_pod_put(once);
    ks_pod_put(stuck);
}

Test(event_series, ended_series_without_news_is_not_patched)
{
    struct ks_event_series *s;
    struct ks_event_write w;
    struct emitted out = {0};
    cr_assert_eq(ks_event_series_create(2 * SEC, 10 * SEC, &s), 0);
    struct ks_pod *pod = pod_rv("p", "u-1", "1");
    for (int i = 0; i < 2; i++) {
        struct ks_serve_event ev = failed(pod, "n", T0 + i * SEC);
        cr_assert_eq(ks_event_series_record(s, &ev, &w), 1);
        ks_event_write_free(&w);
    }
    ks_event_series_tick(s, T0 + 4 * SEC, false, collect, &out);
    cr_expect_eq(out.n, 0, "count 2 was sent with the series' PATCH");
    size_t events, series;
    ks_event_series_stats(s, &events, &series);
    cr_expect_eq(events, 0);
    ks_event_series_destroy(s);
    ks_pod_put(pod);
}

/* ---- the writer: 404 on a series PATCH, 409 on the create ---------------------------------- */

struct fake_server {
    pthread_mutex_t lock;
    int n;
    char method[16][8], path[16][200], body[16][2048];
    long answers[16]; /* status of request i; 0: 201 for POST, 200 otherwise */
};

static int serve_fake(void *ctx, const char *method, const char *path, const char *ct, const char *body,
                      size_t len, struct ks_kube_response *resp)
{
    struct fake_server *f = ctx;
    (void)ct;
    pthread_mutex_lock(&f->lock);
    int i = f->n < 16 ? f->n++ : 15;
    snprintf(f->method[i], sizeof(f->method[0]), "%s", method);
    snprintf(f->path[i], sizeof(f->path[0]), "%s", path);
    snprintf(f->body[i], sizeof(f->body[0]), "%.*s", (int)len, body ? body : "");
    long status = f->answers[i] ? f->answers[i] : strcmp(method, "POST") == 0 ? 201 : 200;
    pthread_mutex_unlock(&f->lock);
    memset(resp, 0, sizeof(*resp));
    resp->status = status;
    resp->body = strdup("{}");
    resp->len = 2;
    return 0;
}

Test(event_series, writer_recreates_a_vanished_event)
{
    /* POST, PATCH -> 404, POST -> 409 (created meanwhile), PATCH -> 200 */
    struct fake_server f = {.lock = PTHREAD_MUTEX_INITIALIZER, .answers = {0, 404, 409, 0}};
    struct fake_server main_f = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = serve_fake, .ctx = &main_f},
                               .events = {.request = serve_fake, .ctx = &f},
                               .reporting_instance = "h"};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pod = pod_rv("web-1", "u-1", "42");
    char buf[256];

    for (int i = 0; i < 3; i++) {
        struct ks_sched_event un = {.kind = KS_SCHED_UNSCHEDULABLE, .pod = pod, .message = "0/1 nodes"};
        ks_writer_on_sched_event(w, &un);
        ks_writer_flush(w);
    }
    int events = 0;
    const char *want[] = {"POST", "PATCH", "POST", "PATCH"};
    for (int i = 0; i < f.n; i++) {
        cr_assert_lt(events, 4);
        cr_expect_str_eq(f.method[i], want[events], "Event request %d", events);
        if (events == 2) {
            cr_expect_str_eq(f.path[i], "/apis/events.k8s.io/v1/namespaces/prod/events");
            cr_expect_str_eq(field(f.body[i], "series.count", buf, sizeof(buf)), "2");
            cr_expect_str_eq(field(f.body[i], "note", buf, sizeof(buf)), "0/1 nodes");
        }
        events++;
    }
    cr_expect_eq(events, 4);
    struct ks_writer_stats st;
    ks_writer_stats(w, &st);
    cr_expect_eq(st.failed, 0);
    cr_expect_eq(st.series_counted, 1, "the third only counted");
    ks_writer_destroy(w, 1000);
    ks_pod_put(pod);
}

Test(event_series, writer_ticks_the_series)
{
    struct fake_server f = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct fake_server main_f = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct ks_writer *w;
    struct ks_writer_opts o = {.transport = {.request = serve_fake, .ctx = &main_f},
                               .events = {.request = serve_fake, .ctx = &f},
                               .series_finish_ns = SEC / 5,
                               .series_refresh_ns = 3600 * SEC};
    cr_assert_eq(ks_writer_create(&o, &w), 0);
    struct ks_pod *pod = pod_rv("web-1", "u-1", "42");
    char buf[256];
    for (int i = 0; i < 5; i++) {
        struct ks_sched_event un = {.kind = KS_SCHED_UNSCHEDULABLE, .pod = pod, .message = "0/1 nodes"};
        ks_writer_on_sched_event(w, &un);
    }
    ks_writer_flush(w);
    /* POST, PATCH (count 2); within two finish periods of quiet the final count */
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&f.lock);
        bool done = f.n >= 3;
        pthread_mutex_unlock(&f.lock);
        if (done)
            break;
        usleep(20000);
    }
    ks_writer_flush(w);
    pthread_mutex_lock(&f.lock);
    int last = f.n - 1;
    cr_assert_eq(last, 2);
    cr_expect_str_eq(f.method[last], "PATCH");
    cr_expect_str_eq(field(f.body[last], "series.count", buf, sizeof(buf)), "5");
    pthread_mutex_unlock(&f.lock);
    ks_writer_destroy(w, 1000);
    ks_pod_put(pod);
}
