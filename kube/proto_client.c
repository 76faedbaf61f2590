/*
 * proto_client.c - which requests of ks_kube_request() go as protobuf, and the conversions
 * that keep its callers on JSON (kube_internal.h).
 *
 * kube-scheduler's client sends built-in kinds as protobuf and asks for protobuf answers.
 * ks_kube_request()'s callers build JSON bodies and read JSON answers; for the requests
 * whose every field the messages of kube/proto/ carry (a pod's Binding and its Status
 * answer, an events.k8s.io Event, a coordination Lease), the body is encoded to protobuf
 * on the way out and the answer decoded back to JSON on the way in. A body with a field
 * the message lacks goes as JSON (nothing is dropped); every other request, whose answer
 * the messages do not carry whole (a patched Pod...), asks for JSON.
 */
#include "kube_internal.h"

#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"
#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does @path (query ignored) split into exactly the segments of @pattern ("*" any one)? */
static bool match(const char *path, const char *pattern)
{
    const char *p = path, *q = pattern;
    while (*q) {
        if (*p != '/' || *q != '/')
            return false;
        p++, q++;
        size_t plen = strcspn(p, "/?"), qlen = strcspn(q, "/");
        if (plen == 0 || (!(qlen == 1 && *q == '*') && (plen != qlen || memcmp(p, q, plen) != 0)))
            return false;
        p += plen;
        q += qlen;
    }
    return *p == '\0' || *p == '?';
}

bool ks__proto_route(const char *path, const char **api_version, const char **kind)
{
    static const struct {
        const char *pattern, *api_version, *kind;
    } routes[] = {
        {"/api/v1/namespaces/*/pods/*/binding", "v1", "Binding"},
        {"/apis/events.k8s.io/v1/namespaces/*/events", "events.k8s.io/v1", "Event"},
        {"/apis/events.k8s.io/v1/namespaces/*/events/*", "events.k8s.io/v1", "Event"},
        {"/apis/coordination.k8s.io/v1/namespaces/*/leases", "coordination.k8s.io/v1", "Lease"},
        {"/apis/coordination.k8s.io/v1/namespaces/*/leases/*", "coordination.k8s.io/v1", "Lease"},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (match(path, routes[i].pattern)) {
            *api_version = routes[i].api_version;
            *kind = routes[i].kind;
            return true;
        }
    }
    return false;
}

int ks__proto_transcode_body(const char *body, size_t len, const char *api_version, const char *kind,
                             char **out, size_t *out_len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_json_parse("request", body, len, &s, &err);
    if (rc == 0) {
        rc = ks_proto_encode("request", s->docs[0], api_version, kind, 0, out, out_len, &err);
        ks_yaml_stream_destroy(s);
    }
    return rc;
}

int ks__proto_response_to_json(struct ks_kube_response *resp)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    char *text = NULL;
    size_t len = 0;
    if (!resp->body || !ks_proto_is_enveloped(resp->body, resp->len))
        return 0;
    int rc = ks_proto_parse("response", resp->body, resp->len, &s, &err);
    if (rc)
        return rc;
    FILE *f = open_memstream(&text, &len);
    rc = f ? ks_yaml_write_json(f, s->docs[0]) : -ENOMEM;
    if (f && fclose(f) != 0 && rc == 0)
        rc = -ENOMEM;
    ks_yaml_stream_destroy(s);
    if (rc) {
        free(text);
        return rc;
    }
    free(resp->body);
    resp->body = text;
    resp->len = len;
    return 0;
}
