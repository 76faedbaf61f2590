/*
 * kube.h - talking to a kube-apiserver: kubeconfig, an HTTP client, and informers.
 *
 * Three layers, each usable alone:
 *   - ks_kubeconfig: where the server is and how to authenticate (a kubeconfig file's
 *     current context, or the in-cluster service account).
 *   - ks_kube_client: one request at a time per call, from any thread (libcurl underneath,
 *     HTTP/2 where the server offers it, connections reused).
 *   - ks_informers: LIST (paginated) then WATCH for a set of kinds, on one thread of their
 *     own, resuming a closed stream from the last resourceVersion and relisting on
 *     410 Gone; each object change is delivered exactly once, in order per kind.
 *
 * API objects arrive as JSON or, under a protobuf content type, as protobuf
 * (ksched/internal/kube_proto.h); either is parsed into the same tree the manifest loader reads
 * (ksched/internal/json_tree.h) and decoded by the loader's decoders (ksched/internal/decode.h), so a Pod
 * from the server and a Pod from a YAML file are the same struct.
 */
#ifndef KSCHED_KUBE_H
#define KSCHED_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/base/error.h"
#include "ksched/loader.h"

/* ---- kubeconfig ------------------------------------------------------------------------ */

/* Every string is owned by the struct (NULL when absent); *_data are PEM bytes. */
struct ks_kubeconfig {
    char *server; /* "https://host:port", no trailing slash */
    char *ca_file;
    char *ca_data;
    size_t ca_len;
    char *cert_file;
    char *cert_data;
    size_t cert_len;
    char *key_file;
    char *key_data;
    size_t key_len;
    char *token;      /* bearer token */
    char *token_file; /* re-read when it changes (projected service-account tokens rotate) */
    bool insecure;    /* insecure-skip-tls-verify */
    char *namespace_; /* the context's namespace, or the service account's; "default" if none */
};

/*
 * ks_kubeconfig_load - the current context of the kubeconfig at @path (clusters, users,
 * contexts; base64 *-data fields decoded; relative file paths resolved against the file's
 * directory). Errors name the file, line and field: -EINVAL, -ENOENT, -ENOMEM.
 */
int ks_kubeconfig_load(const char *path, struct ks_kubeconfig *out, struct ks_error *err);

/*
 * ks_kubeconfig_in_cluster - the service account of a pod: KUBERNETES_SERVICE_HOST/PORT,
 * /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace} (@root replaces
 * "/var/run/secrets/kubernetes.io/serviceaccount" when not NULL, for tests).
 */
int ks_kubeconfig_in_cluster(const char *root, struct ks_kubeconfig *out, struct ks_error *err);

/* ks_kubeconfig_free - free every field. Accepts a zeroed struct. */
void ks_kubeconfig_free(struct ks_kubeconfig *kc);

/* ---- HTTP client ----------------------------------------------------------------------- */

struct ks_kube_client;

struct ks_kube_client_opts {
    const struct ks_kubeconfig *config;
    const char *user_agent; /* NULL: "ksched/<version>" */
    double qps;             /* client-side rate limit for writes; 0: unlimited */
    uint32_t burst;
    int64_t timeout_ms; /* per request, not for watches; 0: 30 s */
    /*
     * clientConnection.contentType: "application/vnd.kubernetes.protobuf" speaks protobuf
     * (LIST/WATCH answers, Bindings, Events, Leases: ksched/internal/kube_proto.h), as kube-scheduler
     * does; NULL, "" or "application/json": JSON only. Anything else is -EINVAL.
     */
    const char *content_type;
    /* clientConnection.acceptContentTypes: the Accept of those requests; NULL or "": the
     * content type, then any type (client-go's default) */
    const char *accept_content_types;
};

int ks_kube_client_create(const struct ks_kube_client_opts *opts, struct ks_kube_client **out,
                          struct ks_error *err);
void ks_kube_client_destroy(struct ks_kube_client *c); /* accepts NULL */

/* A response: HTTP status (0 when the request never got one) and the body, NUL-terminated. */
struct ks_kube_response {
    long status;
    char *body;
    size_t len;
    char error[256]; /* transport error text when status is 0 */
};

/*
 * ks_kube_request - @method ("GET", "POST", "PUT", "PATCH", "DELETE") on @path (beginning
 * with "/", query included) with an optional @body of @content_type. Bodies and answers are
 * JSON for the caller: under a protobuf content type, a JSON body of a Binding, an Event
 * or a Lease is sent as protobuf (as JSON when the message lacks one of its fields) and a
 * protobuf answer is handed back as JSON. Thread-safe. Returns 0
 * when a response arrived (any status: look at resp->status) or a negative errno on a
 * transport failure (resp->error says why). Free with ks_kube_response_free.
 */
int ks_kube_request(struct ks_kube_client *c, const char *method, const char *path, const char *content_type,
                    const char *body, size_t len, struct ks_kube_response *resp);
void ks_kube_response_free(struct ks_kube_response *r);

/*
 * ks_kube_error_text - the error of a request that did not succeed (ks_kube_request's @rc
 * and @r), as client-go prints it into @msg: the server's Status message (a StatusError);
 * without a response, "<Op> \"<path>\": <why>" (@op "Get", "Put", "Patch": url.Error's Op;
 * the transport's error as it is when it names the method and path already);
 * a response without a message, "the server responded with the status code N but did not
 * return more information". Any thread; no allocation.
 */
void ks_kube_error_text(const struct ks_kube_response *r, int rc, const char *op, const char *path, char *msg,
                        size_t len);

/* ---- informers ------------------------------------------------------------------------- */

enum ks_watch_type {
    KS_WATCH_ADDED,
    KS_WATCH_MODIFIED,
    KS_WATCH_DELETED,
};

/*
 * One change. @obj is the decoded object (the struct KS_KIND_MAP names for @kind) and
 * ownership passes to the handler; it is NULL only for a DELETED that a relist found (the
 * object vanished while the watch was down; @namespace_/@name say which). The strings are
 * valid during the call.
 */
struct ks_watch_event {
    enum ks_watch_type type;
    enum ks_kind kind;
    const char *namespace_; /* "" for cluster-scoped kinds */
    const char *name;
    const char *uid;
    const char *resource_version;
    void *obj;
};

typedef void (*ks_informer_event_fn)(void *ctx, const struct ks_watch_event *ev);
/* every kind's initial LIST has been delivered (upstream's WaitForCacheSync) */
typedef void (*ks_informer_synced_fn)(void *ctx);
/* an object the server sent could not be used (truncated JSON, no metadata.name, a field of the wrong
 * type...) */
typedef void (*ks_informer_error_fn)(void *ctx, enum ks_kind kind, const char *message);
/* the API server stopped answering (a request got no HTTP answer: refused, reset, timed out),
 * or answers again (any answer, or watch data); called on each change only */
typedef void (*ks_informer_reachable_fn)(void *ctx, bool reachable);

struct ks_informer_opts {
    struct ks_kube_client *client;
    uint32_t kinds;      /* bit (1u << KS_KIND_x) for each kind to watch */
    uint32_t page_limit; /* LIST ?limit=; 0: 500 */
    /* field selector for pods; NULL: upstream's "status.phase!=Succeeded,status.phase!=Failed" */
    const char *pod_field_selector;
    ks_informer_event_fn on_event;
    ks_informer_synced_fn on_synced;
    ks_informer_error_fn on_error;         /* NULL: logged to stderr */
    ks_informer_reachable_fn on_reachable; /* NULL: not reported */
    void *ctx;
};

struct ks_informers;

/*
 * ks_informers_start - start the informer thread: for each kind LIST (first with
 * resourceVersion=0, from the API server's watch cache; pages of page_limit when the server
 * pages, following `continue`; an expired continue token lists everything at once), deliver
 * the objects as ADDED (or MODIFIED/DELETED against what was delivered before, on a
 * relist), then WATCH from the list's resourceVersion with bookmarks. A closed stream
 * resumes from the last resourceVersion seen; 410 Gone (as a status or an ERROR event)
 * relists at that resourceVersion, and consistently (from etcd) only when that list answers
 * 410 or ResourceVersionTooLarge, as client-go's reflector does. Every callback runs on the
 * informer thread, one at a time.
 *
 * Details (kube/informer.c): ks_api_init() must have run (the decoders intern names).
 * Events are checked against what was delivered, so a watch event that repeats the
 * delivered resourceVersion is dropped, a MODIFIED for an unknown object arrives as
 * ADDED, and an object recreated under the same name (new uid) arrives as DELETED (obj
 * NULL) then ADDED. A relist delivers its ADDED/MODIFIED page by page, then the DELETED
 * of what vanished, sorted by namespace/name. Transport errors and unexpected statuses
 * back off 250 ms doubling to 30 s (+-25% jitter) and go to on_error, as do skipped
 * objects and events. Pod lists and watches carry pod_field_selector as fieldSelector.
 */
int ks_informers_start(const struct ks_informer_opts *opts, struct ks_informers **out, struct ks_error *err);

/*
 * ks_informers_stop - stop the thread and free everything. Accepts NULL. Any thread but the
 * informer's own (it joins it: never call it from a callback); no callback runs after it returns.
 */
void ks_informers_stop(struct ks_informers *inf);

/* ks_informers_synced - every kind's initial LIST has been delivered. */
bool ks_informers_synced(const struct ks_informers *inf);

/* ---- resource paths -------------------------------------------------------------------- */

/* ks_kube_resource_path - the collection path of @kind ("/api/v1/pods", "/apis/storage.k8s.io/v1/csinodes").
 */
const char *ks_kube_resource_path(enum ks_kind kind);

#endif
