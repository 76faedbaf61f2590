/*
 * test_informer.c - informers against the scripted server: paginated lists (and an
 * expired continue token), chunked watches that split events and close mid-stream,
 * bookmarks, 410 Gone as a status and as an ERROR event, junk and bad objects; the
 * delivered event sequence is asserted exactly. Also the watch-stream framing and the
 * delivered-key table on their own.
 */
#include <criterion/criterion.h>

#include "../../kube/kube_internal.h"
#include "http_script.h"
#include "line_recorder.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/kube.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- watch stream framing ---- */

struct frames {
    char out[64][256];
    bool junk[64];
    int n;
};

static int collect(void *ctx, const char *text, size_t len, bool junk)
{
    struct frames *f = ctx;
    cr_assert_lt(f->n, 64);
    snprintf(f->out[f->n], sizeof(f->out[0]), "%.*s", (int)len, text);
    f->junk[f->n++] = junk;
    return 0;
}

Test(watch_scan, values_are_whole_however_the_bytes_are_split)
{
    static const char stream[] = "{\"type\":\"ADDED\",\"object\":{\"s\":\"}{\\\"]\"}}\n"
                                 "garbage line\n"
                                 "  {\"a\":\n  [1, {\"b\": 2}]}\n"
                                 "[\"x\"]{\"y\":1}";
    for (size_t step = 1; step <= sizeof(stream); step++) {
        struct ks__watch_scan w = {0};
        struct frames f = {0};
        for (size_t off = 0; off < sizeof(stream) - 1; off += step) {
            size_t n = sizeof(stream) - 1 - off < step ? sizeof(stream) - 1 - off : step;
            cr_assert_eq(ks__watch_scan_feed(&w, stream + off, n, collect, &f), 0);
        }
        cr_assert_eq(f.n, 5, "step %zu: %d values", step, f.n);
        cr_assert_str_eq(f.out[0], "{\"type\":\"ADDED\",\"object\":{\"s\":\"}{\\\"]\"}}");
        cr_assert(f.junk[1]);
        cr_assert_str_eq(f.out[1], "garbage line");
        cr_assert_str_eq(f.out[2], "{\"a\":\n  [1, {\"b\": 2}]}");
        cr_assert_str_eq(f.out[3], "[\"x\"]");
        cr_assert_str_eq(f.out[4], "{\"y\":1}");
        cr_assert_not(f.junk[0] || f.junk[2] || f.junk[3] || f.junk[4]);
        cr_assert_eq(w.len, 0, "step %zu: %zu bytes left", step, w.len);
        ks__watch_scan_free(&w);
    }
}

Test(watch_scan, an_unfinished_value_stays_buffered_until_reset)
{
    struct ks__watch_scan w = {0};
    struct frames f = {0};
    cr_assert_eq(ks__watch_scan_feed(&w, "{\"a\":1}\n{\"b\":", 13, collect, &f), 0);
    cr_assert_eq(f.n, 1);
    cr_assert_eq(w.len, 5);
    ks__watch_scan_reset(&w);
    cr_assert_eq(ks__watch_scan_feed(&w, "{\"c\":3}", 7, collect, &f), 0);
    cr_assert_eq(f.n, 2);
    cr_assert_str_eq(f.out[1], "{\"c\":3}");
    ks__watch_scan_free(&w);
}

/* ---- delivered keys ---- */

struct swept {
    char names[8][32];
    int n;
};

static void on_swept(void *ctx, const struct ks__seen_entry *e)
{
    struct swept *s = ctx;
    snprintf(s->names[s->n++], sizeof(s->names[0]), "%s/%s@%s", e->key, e->name, e->rv);
}

Test(informer_seen, put_get_delete_and_sweep_in_key_order)
{
    struct ks__seen s = {0};
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        cr_assert_eq(ks__seen_put(&s, i % 2 ? "a" : "b", name, "1", "u", 1), 0);
    }
    cr_assert_eq(s.n, 1000);
    cr_assert_null(ks__seen_get(&s, "a", "p0"), "namespace is part of the key");
    cr_assert_str_eq(ks__seen_get(&s, "b", "p0")->rv, "1");
    cr_assert_eq(ks__seen_put(&s, "b", "p0", "7", "u2", 2), 0);
    cr_assert_str_eq(ks__seen_get(&s, "b", "p0")->rv, "7");
    cr_assert_str_eq(ks__seen_get(&s, "b", "p0")->uid, "u2");
    ks__seen_del(&s, "a", "p1");
    cr_assert_null(ks__seen_get(&s, "a", "p1"));
    cr_assert_eq(s.n, 999);
    /* keep generation 2: b/p0 and a/p3, a/p5; everything else is swept */
    ks__seen_get(&s, "a", "p5")->gen = 2;
    ks__seen_get(&s, "a", "p3")->gen = 2;
    struct swept sw = {0};
    for (int i = 6; i < 1000; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        ks__seen_del(&s, i % 2 ? "a" : "b", name);
    }
    ks__seen_sweep(&s, 2, on_swept, &sw);
    cr_assert_eq(sw.n, 2);
    cr_assert_str_eq(sw.names[0], "b/p2@1");
    cr_assert_str_eq(sw.names[1], "b/p4@1");
    cr_assert_eq(s.n, 3);
    ks__seen_free(&s);
}

Test(informer, resource_path_for_every_kind)
{
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        const char *p = ks_kube_resource_path((enum ks_kind)k);
        cr_assert_not_null(p, "%s", ks_kind_name((enum ks_kind)k));
        cr_assert(!strncmp(p, "/api/v1/", 8) || !strncmp(p, "/apis/", 6), "%s", p);
    }
    cr_assert_str_eq(ks_kube_resource_path(KS_KIND_CSI_NODE), "/apis/storage.k8s.io/v1/csinodes");
    cr_assert_str_eq(ks_kube_resource_path(KS_KIND_PDB), "/apis/policy/v1/poddisruptionbudgets");
    cr_assert_null(ks_kube_resource_path(KS_KIND_COUNT));
}

/* ---- informers against the scripted server ---- */

static const char *const type_names[] = {"ADDED", "MODIFIED", "DELETED"};

static void on_event(void *ctx, const struct ks_watch_event *ev)
{
    char line[160];
    const char *detail = "-";
    char buf[64];
    if (ev->obj && ev->kind == KS_KIND_NODE) {
        const struct ks_node *n = ev->obj;
        cr_assert_str_eq(n->meta.name, ev->name);
        detail = n->unschedulable ? "unschedulable" : "schedulable";
        ks_node_destroy(ev->obj);
    } else if (ev->obj && ev->kind == KS_KIND_POD) {
        const struct ks_pod *p = ev->obj;
        snprintf(buf, sizeof(buf), "node=%s", ks_intern_str(p->node_name));
        detail = buf;
        ks_pod_destroy(ev->obj);
    } else if (ev->obj) {
        cr_assert_fail("unexpected kind %d", ev->kind);
    }
    snprintf(line, sizeof(line), "%s %s %s%s%s rv=%s %s", ks_kind_name(ev->kind), type_names[ev->type],
             ev->namespace_, ev->namespace_[0] ? "/" : "", ev->name, ev->resource_version,
             ev->obj ? detail : "gone");
    record(ctx, line);
}

static void on_synced(void *ctx)
{
    record(ctx, "synced");
}

static void on_error(void *ctx, enum ks_kind kind, const char *msg)
{
    struct recorder *r = ctx;
    char line[160];
    (void)kind;
    pthread_mutex_lock(&r->lock);
    r->errors++;
    snprintf(r->last_error, sizeof(r->last_error), "%s", msg);
    pthread_mutex_unlock(&r->lock);
    /* the message without request queries (timeoutSeconds is random) */
    char *o = line + snprintf(line, sizeof(line), "error: ");
    for (const char *p = msg; *p && o < line + sizeof(line) - 1; p++) {
        if (*p == '?')
            p += strcspn(p, ": ") - 1;
        else
            *o++ = *p;
    }
    *o = '\0';
    record(ctx, line);
}

static struct ks_kube_client *client_for(struct ks_script_server *s, struct ks_kubeconfig *kc)
{
    struct ks_kube_client_opts o = {.config = kc, .timeout_ms = 5000};
    struct ks_kube_client *c;
    struct ks_error err = {0};
    kc->server = (char *)ks_script_url(s);
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), 0, "%s", err.msg);
    return c;
}

static struct ks_informers *start(struct ks_kube_client *c, uint32_t kinds, uint32_t limit,
                                  struct recorder *r)
{
    struct ks_informer_opts o = {
        .client = c,
        .kinds = kinds,
        .page_limit = limit,
        .on_event = on_event,
        .on_synced = on_synced,
        .on_error = on_error,
        .ctx = r,
    };
    struct ks_informers *inf;
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_informers_start(&o, &inf, &err), 0, "%s", err.msg);
    return inf;
}

static void expect_lines(struct recorder *r, const char *const *want, int n)
{
    for (int i = 0; i < n && i < r->n; i++)
        cr_assert_str_eq(r->lines[i], want[i], "line %d: <%s> want <%s>", i, r->lines[i], want[i]);
    cr_assert_eq(r->n, n, "%d lines, want %d (last: %s)", r->n, n, r->n ? r->lines[r->n - 1] : "");
}

#define NODE(name, rv, uid, extra)                                                                           \
    "{\"metadata\":{\"name\":\"" name "\",\"uid\":\"" uid "\",\"resourceVersion\":\"" rv "\"}" extra "}"
#define UNSCHED ",\"spec\":{\"unschedulable\":true}"
#define LIST(rv, cont, items)                                                                                \
    "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv                   \
    "\",\"continue\":\"" cont "\"},\"items\":[" items "]}"
#define EVENT(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"

Test(informer, lists_watches_resumes_and_relists_without_loss_or_duplicates)
{
    static const char *const stream1[] = {
        EVENT("ADDED", NODE("n4", "13", "u4", "")),
        /* an event split across chunks */
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"n1\",\"uid\":\"u1\",",
        "\"resourceVersion\":\"10\"}}}\n", /* same rv as delivered: dropped */
        "this is not json\n",
        EVENT("EXPLODED", NODE("n1", "14", "u1", "")),
        EVENT("ADDED", "{\"metadata\":{\"uid\":\"nameless\",\"resourceVersion\":\"15\"}}"),
        EVENT("MODIFIED", NODE("n2", "16", "u2", ",\"spec\":{\"unschedulable\":\"very\"}")),
        EVENT("BOOKMARK", "{\"kind\":\"Node\",\"metadata\":{\"resourceVersion\":\"20\"}}"),
        EVENT("MODIFIED", NODE("n3", "21", "u3", UNSCHED)),
        /* the connection drops in the middle of an event */
        "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"na",
    };
    static const struct ks_script_step steps[] = {
        /* the first list at resourceVersion 0, paged (a server without the watch cache), then an
         * expired continue token: everything in one unpaginated list at the same resourceVersion
         * (client-go's pager falls back so; paging again could expire again) */
        {.path = "/api/v1/nodes?limit=2&resourceVersion=0",
         .status = 200,
         .body = LIST("10", "c1", NODE("n1", "10", "u1", "") "," NODE("n2", "10", "u2", ""))},
        {.path = "/api/v1/nodes?limit=2&continue=c1",
         .status = 410,
         .body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}"},
        {.path = "/api/v1/nodes?resourceVersion=0",
         .status = 200,
         .body = LIST(
             "12", "",
             NODE("n1", "10", "u1", "") "," NODE("n2", "11", "u2", UNSCHED) "," NODE("n3", "12", "u3", ""))},
        {.path = "/api/v1/nodes?watch=1&resourceVersion=12&allowWatchBookmarks=true&timeoutSeconds=",
         .status = 200,
         .chunks = {stream1[0], stream1[1], stream1[2], stream1[3], stream1[4], stream1[5], stream1[6],
                    stream1[7], stream1[8], stream1[9]},
         .close_mid = true,
         .delay_ms = 2},
        /* resumed from the last resourceVersion: the server has compacted it away */
        {.path = "/api/v1/nodes?watch=1&resourceVersion=21&",
         .status = 200,
         .chunks = {EVENT("ERROR", "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}")},
         .hold = true},
        /* the relist at the last resourceVersion seen, in pages again (the server paged the first
         * list): n2 and n4 are gone, n3 changed, n5 is new, n1 is as delivered */
        {.path = "/api/v1/nodes?limit=2&resourceVersion=21",
         .status = 200,
         .body = LIST("30", "c%202", NODE("n1", "10", "u1", "") "," NODE("n3", "22", "u3", ""))},
        {.path = "/api/v1/nodes?limit=2&continue=c%25202",
         .status = 200,
         .body = LIST("30", "", NODE("n5", "23", "u5", ""))},
        {.path = "/api/v1/nodes?watch=1&resourceVersion=30&", .status = 200, .chunks = {"\n"}, .hold = true},
    };
    struct ks_script_server *s = ks_script_start(steps, sizeof(steps) / sizeof(steps[0]));
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc);
    struct recorder r = RECORDER_INIT;
    struct ks_informers *inf = start(c, 1u << KS_KIND_NODE, 2, &r);

    static const char *const want[] = {
        "Node ADDED n1 rv=10 schedulable",
        "Node ADDED n2 rv=10 schedulable",
        "Node MODIFIED n2 rv=11 unschedulable",
        "Node ADDED n3 rv=12 schedulable",
        "synced",
        "Node ADDED n4 rv=13 schedulable",
        "error: WATCH /api/v1/nodes: not JSON, skipped: this is not json",
        "error: WATCH /api/v1/nodes: unknown event type \"EXPLODED\": skipped",
        "error: /api/v1/nodes: metadata.name: Required value: object skipped",
        "error: Node \"n2\": /api/v1/nodes:1: spec.unschedulable: expected true or false, found \"very\": "
        "skipped",
        "Node MODIFIED n3 rv=21 unschedulable",
        "Node MODIFIED n3 rv=22 schedulable",
        "Node ADDED n5 rv=23 schedulable",
        "Node DELETED n2 rv=11 gone",
        "Node DELETED n4 rv=13 gone",
    };
    int nwant = sizeof(want) / sizeof(want[0]);
    wait_lines(&r, nwant);
    cr_assert_eq(ks_script_wait_requests(s, 8, 20000), 8);
    cr_assert(ks_informers_synced(inf));
    ks_informers_stop(inf);
    expect_lines(&r, want, nwant);

    /* what was asked: the requests in order */
    cr_assert_eq(ks_script_nrequests(s), 8);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(ks_script_request_at(s, i).step, i, "request %d (%s) answered by step %d", i,
                     ks_script_request_at(s, i).target, ks_script_request_at(s, i).step);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

Test(informer, pods_use_the_field_selector_and_a_watch_410_status_relists)
{
    static const struct ks_script_step steps[] = {
        {.path =
             "/api/v1/pods?limit=500&resourceVersion=0&fieldSelector=status.phase%21%3DSucceeded%2Cstatus."
             "phase%21%3DFailed",
         .status = 200,
         .body = "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":\"p\","
                 "\"namespace\":"
                 "\"ns\",\"uid\":\"u\",\"resourceVersion\":\"5\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]"
                 "}}]}"},
        {.path = "/api/v1/pods?watch=1&resourceVersion=5&",
         .status = 410,
         .body = "{\"kind\":\"Status\",\"code\":410}"},
        /* the relist at the last resourceVersion, whole: a server error, then a resourceVersion the
         * server has not seen (a restarted watch cache); then a consistent list, paged. The pod is
         * now bound under a new uid: delete + add */
        {.path = "/api/v1/pods?resourceVersion=5&fieldSelector=",
         .status = 500,
         .body = "{\"kind\":\"Status\",\"message\":\"etcd down\"}"},
        {.path = "/api/v1/pods?resourceVersion=5&fieldSelector=",
         .status = 504,
         .body =
             "{\"kind\":\"Status\",\"code\":504,\"reason\":\"Timeout\",\"message\":\"Too large resource "
             "version: 5, current: 3\",\"details\":{\"causes\":[{\"reason\":\"ResourceVersionTooLarge\"}]}}"},
        {.path = "/api/v1/pods?limit=500&fieldSelector=",
         .status = 200,
         .body = "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[{\"metadata\":{\"name\":\"p\","
                 "\"namespace\":"
                 "\"ns\",\"uid\":\"u-new\",\"resourceVersion\":\"8\"},\"spec\":{\"nodeName\":\"n1\","
                 "\"containers\":[{\"name\":\"c\"}]}}]}"},
        {.path = "/api/v1/pods?watch=1&resourceVersion=9&", .status = 200, .chunks = {"\n"}, .hold = true},
    };
    struct ks_script_server *s = ks_script_start(steps, 6);
    struct ks_kubeconfig kc = {.token = "t0k"};
    struct ks_kube_client *c = client_for(s, &kc);
    struct recorder r = RECORDER_INIT;
    struct ks_informers *inf = start(c, 1u << KS_KIND_POD, 0, &r);
    static const char *const want[] = {
        "Pod ADDED ns/p rv=5 node=",
        "synced",
        "error: LIST /api/v1/pods: HTTP 500: etcd down: retrying",
        "Pod DELETED ns/p rv=5 gone",
        "Pod ADDED ns/p rv=8 node=n1",
    };
    wait_lines(&r, 5);
    cr_assert_eq(ks_script_wait_requests(s, 6, 20000), 6);
    ks_informers_stop(inf);
    expect_lines(&r, want, 5);
    cr_assert(strstr(r.last_error, "HTTP 500: etcd down"), "%s", r.last_error);
    cr_assert_str_eq(ks_script_request_at(s, 0).authorization, "Bearer t0k");
    for (int i = 0; i < 6; i++)
        cr_assert_eq(ks_script_request_at(s, i).step, i, "request %d: %s", i,
                     ks_script_request_at(s, i).target);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

#define POD(name, rv)                                                                                        \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"u-" name                            \
    "\",\"resourceVersion\":\"" rv "\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"
#define PHASES "fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"

Test(informer, an_expired_continue_token_lists_everything_at_once)
{
    static const struct ks_script_step steps[] = {
        {.path = "/api/v1/pods?limit=1&resourceVersion=0&" PHASES,
         .status = 200,
         .body =
             "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"c\"},\"items\":[" POD("p1", "5") "]}"},
        {.path = "/api/v1/pods?limit=1&continue=c&" PHASES,
         .status = 410,
         .body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}"},
        {.path = "/api/v1/pods?resourceVersion=0&" PHASES,
         .status = 200,
         .body =
             "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[" POD("p1", "5") "," POD("p2", "6") "]}"},
        {.path = "/api/v1/pods?watch=1&resourceVersion=7&", .status = 200, .chunks = {"\n"}, .hold = true},
    };
    struct ks_script_server *s = ks_script_start(steps, 4);
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc);
    struct recorder r = RECORDER_INIT;
    struct ks_informers *inf = start(c, 1u << KS_KIND_POD, 1, &r);
    static const char *const want[] = {"Pod ADDED ns/p1 rv=5 node=", "Pod ADDED ns/p2 rv=6 node=", "synced"};
    wait_lines(&r, 3);
    cr_assert_eq(ks_script_wait_requests(s, 4, 20000), 4);
    ks_informers_stop(inf);
    expect_lines(&r, want, 3);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(ks_script_request_at(s, i).step, i, "request %d: %s", i,
                     ks_script_request_at(s, i).target);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

Test(informer, synced_waits_for_every_kind_and_bad_list_items_are_skipped)
{
    static const struct ks_script_step steps[] = {
        {.path = "/api/v1/nodes?limit=500",
         .status = 200,
         .body = LIST(
             "3", "",
             NODE("good", "2", "u", "") ",{\"metadata\":{\"name\":\"bad\"},\"status\":{"
                                        "\"allocatable\":{\"cpu\":[1]}}}," NODE("also-good", "3", "v", ""))},
        {.path = "/api/v1/nodes?watch=1", .status = 200, .chunks = {"\n"}, .hold = true},
        /* the pod list is truncated JSON: reported, and the list is tried again */
        {.path = "/api/v1/pods?limit=500",
         .status = 200,
         .body = "{\"metadata\":{\"resourceVersion\":\"4\"},\"ite"},
        {.path = "/api/v1/pods?limit=500",
         .status = 200,
         .body = "{\"metadata\":{\"resourceVersion\":\"4\"}}"},
        {.path = "/api/v1/pods?watch=1", .status = 200, .chunks = {"\n"}, .hold = true},
    };
    struct ks_script_server *s = ks_script_start(steps, 5);
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc);
    struct recorder r = RECORDER_INIT;
    struct ks_informers *inf = start(c, 1u << KS_KIND_NODE | 1u << KS_KIND_POD, 0, &r);
    cr_assert_eq(ks_script_wait_requests(s, 5, 20000), 5);
    wait_lines(&r, 5);
    ks_informers_stop(inf);
    /* the kinds interleave: look at each kind's lines and at where "synced" is */
    int synced_at = -1, nodes = 0, errors = 0;
    for (int i = 0; i < r.n; i++) {
        if (!strcmp(r.lines[i], "synced"))
            synced_at = i;
        else if (!strncmp(r.lines[i], "Node ADDED", 10))
            nodes++;
        else if (!strncmp(r.lines[i], "error:", 6))
            errors++;
    }
    cr_assert_eq(r.n, 5, "%d lines", r.n);
    cr_assert_eq(synced_at, 4, "synced once, last");
    cr_assert_eq(nodes, 2);
    cr_assert_eq(errors, 2);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

Test(informer, start_rejects_bad_options)
{
    struct ks_informer_opts o = {0};
    struct ks_informers *inf = (void *)1;
    struct ks_error err = {0};
    cr_assert_eq(ks_informers_start(&o, &inf, &err), -EINVAL);
    cr_assert_null(inf);
    cr_assert_str_eq(err.field, "client");
    cr_assert_not(ks_informers_synced(NULL));
    ks_informers_stop(NULL);
}

static void on_reachable(void *ctx, bool reachable)
{
    record(ctx, reachable ? "reachable" : "unreachable");
}

Test(informer, a_server_that_stops_answering_is_reported_unreachable)
{
    static const struct ks_script_step steps[] = {
        {.path = "/api/v1/nodes?limit=500&resourceVersion=0",
         .status = 500,
         .body = "{\"kind\":\"Status\",\"message\":\"etcd down\"}"},
        {.path = "/api/v1/nodes?limit=500&resourceVersion=0", .status = 200, .body = LIST("4", "", "")},
        {.path = "/api/v1/nodes?watch=1", .status = 200, .chunks = {"\n"}, .hold = true},
    };
    struct ks_script_server *s = ks_script_start(steps, 3);
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc);
    struct recorder r = RECORDER_INIT;
    struct ks_informer_opts o = {
        .client = c,
        .kinds = 1u << KS_KIND_NODE,
        .on_event = on_event,
        .on_synced = on_synced,
        .on_error = on_error,
        .on_reachable = on_reachable,
        .ctx = &r,
    };
    struct ks_informers *inf;
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_informers_start(&o, &inf, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_script_wait_requests(s, 3, 20000), 3);
    wait_lines(&r, 2); /* an error answer is an answer: nothing reported */
    ks_script_stop(s); /* the watch ends; the next request is refused */
    wait_lines(&r, 4);
    ks_informers_stop(inf);
    cr_assert_str_eq(r.lines[0], "error: LIST /api/v1/nodes: HTTP 500: etcd down: retrying");
    cr_assert_str_eq(r.lines[1], "synced");
    cr_assert_str_eq(r.lines[2], "unreachable", "%s", r.lines[2]);
    cr_assert(!strncmp(r.lines[3], "error: WATCH /api/v1/nodes: ", 28), "%s", r.lines[3]);
    ks_kube_client_destroy(c);
}
