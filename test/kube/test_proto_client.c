/*
 * test_proto_client.c - protobuf against the scripted server: which requests of
 * ks_kube_request go as protobuf (Binding, Event, Lease) with their answers handed back
 * as JSON, which stay JSON (patches, and everything under a JSON content type), the
 * Accept headers; and informers that LIST protobuf lists and WATCH length-prefixed
 * frames cut at arbitrary points, skipping a malformed frame.
 */
#include <criterion/criterion.h>

#include "../../kube/kube_internal.h"
#include "http_script.h"
#include "line_recorder.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/kube.h"
#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROTO_ACCEPT KS_PROTO_MEDIA_TYPE ", */*"

static struct ks_kube_client *client_for(struct ks_script_server *s, struct ks_kubeconfig *kc, const char *ct,
                                         const char *accept)
{
    struct ks_kube_client_opts o = {
        .config = kc, .timeout_ms = 5000, .content_type = ct, .accept_content_types = accept};
    struct ks_kube_client *c;
    struct ks_error err = {0};
    kc->server = (char *)ks_script_url(s);
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), 0, "%s", err.msg);
    return c;
}

/* The protobuf body of @json (strict). */
static char *wire(const char *json, size_t *len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    char *out = NULL;
    cr_assert_eq(ks_json_parse("t", json, strlen(json), &s, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_proto_encode("t", s->docs[0], NULL, NULL, 0, &out, len, &err), 0, "%s", err.msg);
    ks_yaml_stream_destroy(s);
    return out;
}

static const char *field(const struct ks_yaml_node *doc, const char *a, const char *b)
{
    const struct ks_yaml_node *n = ks_yaml_get(b ? ks_yaml_get(doc, a) : doc, b ? b : a);
    return n && n->kind == KS_YAML_SCALAR ? n->str : "";
}

static struct ks_yaml_stream *parse_body(const char *body, size_t len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_body_parse("b", body, len, &s, &err), 0, "%s", err.msg);
    return s;
}

Test(proto_client, bindings_events_and_leases_go_as_protobuf_and_answer_as_json)
{
    size_t slen, llen;
    char *status = wire("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"metadata\":{},\"status\":\"Success\","
                        "\"code\":201}",
                        &slen);
    char *lease = wire("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
                       "\"l\",\"namespace\":\"kube-system\",\"resourceVersion\":\"8\"},\"spec\":{"
                       "\"holderIdentity\":\"me\",\"leaseDurationSeconds\":15,\"renewTime\":"
                       "\"2024-05-01T10:00:02.500000Z\",\"leaseTransitions\":0}}",
                       &llen);
    struct ks_script_step steps[] = {
        {.method = "POST",
         .path = "/api/v1/namespaces/ns/pods/p/binding",
         .status = 201,
         .body = status,
         .body_len = slen,
         .content_type = KS_PROTO_MEDIA_TYPE,
         .repeat = true},
        {.method = "PATCH", .path = "/api/v1/namespaces/ns/pods/p/status", .status = 200, .body = "{}"},
        {.method = "GET",
         .path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
         .status = 200,
         .body = lease,
         .body_len = llen,
         .content_type = KS_PROTO_MEDIA_TYPE},
        {.method = "POST",
         .path = "/apis/events.k8s.io/v1/namespaces/ns/events",
         .status = 201,
         .body = "{}"},
    };
    struct ks_script_server *s = ks_script_start(steps, 4);
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc, KS_PROTO_MEDIA_TYPE, NULL);
    struct ks_kube_response r;

    static const char binding[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\","
        "\"namespace\":\"ns\",\"uid\":\"u1\"},\"target\":{\"kind\":\"Node\",\"name\":"
        "\"n1\"}}";
    cr_assert_eq(ks_kube_request(c, "POST", "/api/v1/namespaces/ns/pods/p/binding", "application/json",
                                 binding, sizeof(binding) - 1, &r),
                 0, "%s", r.error);
    cr_assert_eq(r.status, 201);
    struct ks_yaml_stream *st = parse_body(r.body, r.len);
    cr_assert(r.body[0] == '{', "the answer is JSON for the caller");
    cr_assert_str_eq(field(st->docs[0], "status", NULL), "Success");
    cr_assert_str_eq(field(st->docs[0], "code", NULL), "201");
    ks_yaml_stream_destroy(st);
    ks_kube_response_free(&r);
    struct ks_script_request q = ks_script_request_at(s, 0);
    cr_assert_str_eq(q.content_type, KS_PROTO_MEDIA_TYPE);
    cr_assert_str_eq(q.accept, PROTO_ACCEPT);
    cr_assert(ks_proto_is_enveloped(q.body, q.body_len));
    st = parse_body(q.body, q.body_len);
    cr_assert_str_eq(field(st->docs[0], "kind", NULL), "Binding");
    cr_assert_str_eq(field(st->docs[0], "metadata", "uid"), "u1");
    cr_assert_str_eq(field(st->docs[0], "target", "name"), "n1");
    ks_yaml_stream_destroy(st);

    /* a field the Binding message lacks: the body goes as JSON, untouched */
    static const char odd[] = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\"},"
                              "\"target\":{\"name\":\"n1\"},\"extra\":1}";
    cr_assert_eq(ks_kube_request(c, "POST", "/api/v1/namespaces/ns/pods/p/binding", "application/json", odd,
                                 sizeof(odd) - 1, &r),
                 0);
    ks_kube_response_free(&r);
    q = ks_script_request_at(s, 1);
    cr_assert_str_eq(q.content_type, "application/json");
    cr_assert_str_eq(q.body, odd);

    /* a patch stays JSON and asks for JSON: a patched Pod is more than the messages carry */
    cr_assert_eq(ks_kube_request(c, "PATCH", "/api/v1/namespaces/ns/pods/p/status",
                                 "application/strategic-merge-patch+json", "{}", 2, &r),
                 0);
    ks_kube_response_free(&r);
    q = ks_script_request_at(s, 2);
    cr_assert_str_eq(q.content_type, "application/strategic-merge-patch+json");
    cr_assert_str_eq(q.accept, "application/json");

    cr_assert_eq(ks_kube_request(c, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
                                 NULL, NULL, 0, &r),
                 0);
    q = ks_script_request_at(s, 3);
    cr_assert_str_eq(q.accept, PROTO_ACCEPT);
    st = parse_body(r.body, r.len);
    cr_assert(r.body[0] == '{');
    cr_assert_str_eq(field(st->docs[0], "spec", "holderIdentity"), "me");
    cr_assert_str_eq(field(st->docs[0], "spec", "renewTime"), "2024-05-01T10:00:02.500000Z");
    cr_assert_str_eq(field(st->docs[0], "spec", "leaseTransitions"), "0");
    cr_assert_str_eq(field(st->docs[0], "metadata", "resourceVersion"), "8");
    ks_yaml_stream_destroy(st);
    ks_kube_response_free(&r);

    static const char event[] =
        "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
        "\"p.1\",\"namespace\":\"ns\"},\"eventTime\":\"2024-05-01T10:00:00.000001Z\","
        "\"reason\":\"Scheduled\",\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\"},"
        "\"note\":\"n\",\"type\":\"Normal\"}";
    cr_assert_eq(ks_kube_request(c, "POST", "/apis/events.k8s.io/v1/namespaces/ns/events", "application/json",
                                 event, sizeof(event) - 1, &r),
                 0);
    cr_assert_str_eq(r.body, "{}", "a JSON answer is left as it is");
    ks_kube_response_free(&r);
    q = ks_script_request_at(s, 4);
    cr_assert_str_eq(q.content_type, KS_PROTO_MEDIA_TYPE);
    st = parse_body(q.body, q.body_len);
    cr_assert_str_eq(field(st->docs[0], "eventTime", NULL), "2024-05-01T10:00:00.000001Z");
    ks_yaml_stream_destroy(st);

    ks_kube_client_destroy(c);
    ks_script_stop(s);
    free(status);
    free(lease);
}

Test(proto_client, a_json_client_speaks_json_only)
{
    static const struct ks_script_step steps[] = {
        {.method = "POST", .path = "/api/v1/namespaces/ns/pods/p/binding", .status = 201, .body = "{}"},
    };
    struct ks_script_server *s = ks_script_start(steps, 1);
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc, "application/json", NULL);
    struct ks_kube_response r;
    static const char binding[] = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\"},"
                                  "\"target\":{\"name\":\"n1\"}}";
    cr_assert_eq(ks_kube_request(c, "POST", "/api/v1/namespaces/ns/pods/p/binding", "application/json",
                                 binding, sizeof(binding) - 1, &r),
                 0);
    ks_kube_response_free(&r);
    struct ks_script_request q = ks_script_request_at(s, 0);
    cr_assert_str_eq(q.content_type, "application/json");
    cr_assert_str_eq(q.accept, "application/json");
    cr_assert_str_eq(q.body, binding);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

Test(proto_client, content_type_must_be_json_or_protobuf)
{
    struct ks_kubeconfig kc = {.server = "http://127.0.0.1:1"};
    struct ks_kube_client_opts o = {.config = &kc, .content_type = "application/yaml"};
    struct ks_kube_client *c = (void *)1;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), -EINVAL);
    cr_assert_null(c);
    cr_assert_str_eq(err.field, "contentType");
    cr_assert(strstr(err.msg, "Unsupported value: \"application/yaml\""), "%s", err.msg);
}

/* ---- informers ---- */

static void on_event(void *ctx, const struct ks_watch_event *ev)
{
    static const char *const types[] = {"ADDED", "MODIFIED", "DELETED"};
    char line[128];
    const struct ks_node *n = ev->obj;
    snprintf(line, sizeof(line), "%s %s rv=%s %s", types[ev->type], ev->name, ev->resource_version,
             !n                 ? "gone"
             : n->unschedulable ? "unschedulable"
                                : "schedulable");
    if (ev->obj)
        ks_node_destroy(ev->obj);
    record(ctx, line);
}

static void on_synced(void *ctx)
{
    record(ctx, "synced");
}

static void on_error(void *ctx, enum ks_kind kind, const char *msg)
{
    (void)kind;
    record(ctx, strstr(msg, "malformed watch event") ? "error: malformed watch event" : msg);
}

/* A watch frame: 4-byte length, then the WatchEvent of @type carrying @object_json (NULL: none). */
static char *frame(const char *type, const char *object_json, size_t *len)
{
    char *obj = NULL;
    size_t olen = 0;
    if (object_json)
        obj = wire(object_json, &olen);
    /* WatchEvent {1: type, 2: RawExtension {1: raw}}, all lengths below 128 */
    size_t tlen = strlen(type);
    cr_assert_lt(olen, 125);
    size_t body = 2 + tlen + (obj ? 4 + olen : 0);
    char *f = malloc(4 + body), *p = f;
    p[0] = 0, p[1] = 0, p[2] = (char)(body >> 8), p[3] = (char)body;
    p += 4;
    *p++ = 0x0a, *p++ = (char)tlen;
    memcpy(p, type, tlen);
    p += tlen;
    if (obj) {
        *p++ = 0x12, *p++ = (char)(olen + 2), *p++ = 0x0a, *p++ = (char)olen;
        memcpy(p, obj, olen);
    }
    free(obj);
    *len = 4 + body;
    return f;
}

#define NODE_JSON(name, rv, extra)                                                                           \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"uid\":\"u-" name         \
    "\",\"resourceVersion\":\"" rv "\"}" extra "}"

Test(proto_client, informer_lists_and_watches_protobuf)
{
    size_t llen, l1, l2, l3, lbad = 6;
    char *list =
        wire("{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"5\"},"
             "\"items\":[{\"metadata\":{\"name\":\"n1\",\"uid\":\"u-n1\",\"resourceVersion\":\"1\"}}]}",
             &llen);
    char *added = frame("ADDED", NODE_JSON("n2", "6", ""), &l1);
    char *modified = frame("MODIFIED", NODE_JSON("n1", "7", ",\"spec\":{\"unschedulable\":true}"), &l2);
    char *bookmark = frame("BOOKMARK", NODE_JSON("x", "9", ""), &l3);
    /* a frame of 2 bytes that is no WatchEvent (a string field longer than the frame) */
    static const char bad[] = {0, 0, 0, 2, 0x0a, 0x09};
    /* the stream cut inside a length prefix and inside frames */
    char *stream = malloc(l1 + l2 + l3 + lbad);
    memcpy(stream, added, l1);
    memcpy(stream + l1, bad, lbad);
    memcpy(stream + l1 + lbad, modified, l2);
    memcpy(stream + l1 + lbad + l2, bookmark, l3);
    size_t total = l1 + lbad + l2 + l3, cut1 = 2, cut2 = l1 + 3, cut3 = l1 + lbad + l2 / 2;
    struct ks_script_step steps[] = {
        {.method = "GET",
         .path = "/api/v1/nodes?limit",
         .status = 200,
         .body = list,
         .body_len = llen,
         .content_type = KS_PROTO_MEDIA_TYPE},
        {.method = "GET",
         .path = "/api/v1/nodes?watch",
         .status = 200,
         .content_type = KS_PROTO_MEDIA_TYPE ";stream=watch",
         .chunks = {stream, stream + cut1, stream + cut2, stream + cut3},
         .chunk_lens = {cut1, cut2 - cut1, cut3 - cut2, total - cut3},
         .delay_ms = 20,
         .hold = true},
    };
    struct ks_script_server *s = ks_script_start(steps, 2);
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client *c = client_for(s, &kc, KS_PROTO_MEDIA_TYPE, NULL);
    struct recorder r = RECORDER_INIT;
    struct ks_informer_opts o = {.client = c,
                                 .kinds = 1u << KS_KIND_NODE,
                                 .on_event = on_event,
                                 .on_synced = on_synced,
                                 .on_error = on_error,
                                 .ctx = &r};
    struct ks_informers *inf;
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_informers_start(&o, &inf, &err), 0, "%s", err.msg);
    wait_lines(&r, 5);
    ks_informers_stop(inf);
    static const char *const want[] = {
        "ADDED n1 rv=1 schedulable",      "synced",
        "ADDED n2 rv=6 schedulable",      "error: malformed watch event",
        "MODIFIED n1 rv=7 unschedulable",
    };
    for (int i = 0; i < 5 && i < r.n; i++)
        cr_assert_str_eq(r.lines[i], want[i], "line %d", i);
    cr_assert_eq(r.n, 5, "%d lines (last %s)", r.n, r.n ? r.lines[r.n - 1] : "-");
    struct ks_script_request q = ks_script_request_at(s, 0);
    cr_assert_str_eq(q.accept, PROTO_ACCEPT);
    q = ks_script_request_at(s, 1);
    cr_assert(strstr(q.target, "resourceVersion=5"), "%s", q.target);
    cr_assert_str_eq(q.accept, PROTO_ACCEPT);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
    free(list);
    free(added);
    free(modified);
    free(bookmark);
    free(stream);
}
