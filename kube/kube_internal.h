/*
 * kube_internal.h - what the kube/ files share and nothing outside kube/ uses.
 */
#ifndef KSCHED_KUBE_INTERNAL_H
#define KSCHED_KUBE_INTERNAL_H

#include "ksched/internal/kube.h"

#include <curl/curl.h>

struct ks_yaml_node;
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * ks__kube_client_setup - configure @h (fresh or reset) for @method on @path of @c's server:
 * URL, TLS material, bearer token (re-read from token_file when it changed), user agent,
 * Accept (for a stream - a LIST or WATCH - the client's: protobuf first when its content
 * type is protobuf, so the body may be either; otherwise, or with @json, application/json),
 * HTTP/2 over TLS, no signals. @hdrs receives the header list the caller frees after the
 * transfer (curl_slist_free_all). @stream: a watch (no total timeout, no shared connection
 * cache: the informer's multi handle keeps its own). @json: a stream of a kind kube/proto/
 * has no message for, which must come as JSON. Thread-safe. 0 or -ENOMEM.
 */
int ks__kube_client_setup(struct ks_kube_client *c, CURL *h, const char *method, const char *path,
                          const char *content_type, bool stream, bool json, struct curl_slist **hdrs);

/* ---- protobuf requests (kube/proto_client.c) ---- */

/*
 * ks__proto_route - whether a request on @path (query ignored) is one ks_kube_request()
 * makes in protobuf under a protobuf content type: its body and answer are of a kind whose
 * every field kube/proto/ carries (*api_version, *kind: a pod's Binding, an
 * events.k8s.io Event, a Lease).
 */
bool ks__proto_route(const char *path, const char **api_version, const char **kind);

/* ks__proto_transcode_body - the JSON @body as the protobuf of (@api_version, @kind), malloc'ed in *out. 0 or
 * a negative errno (a field the message lacks: send the JSON). */
int ks__proto_transcode_body(const char *body, size_t len, const char *api_version, const char *kind,
                             char **out, size_t *out_len);

/* ks__proto_response_to_json - replace a protobuf answer's body with its JSON (a JSON body is left). 0 or a
 * negative errno (the body is left as it came). */
int ks__proto_response_to_json(struct ks_kube_response *resp);

/* ks__kube_curl_errno - a negative errno for a libcurl error code. */
int ks__kube_curl_errno(CURLcode rc);

/* A token bucket of @qps tokens a second holding at most @burst (client-go's flowcontrol). */
struct ks__token_bucket {
    double qps, burst, tokens;
    double last_s; /* time of the last refill, seconds */
};

/*
 * ks__token_bucket_reserve - take one token at @now_s and return how long (seconds) the
 * caller must wait before using it: 0 while tokens remain; callers that find the bucket
 * empty queue up behind each other (the balance goes negative). Caller serialises.
 */
double ks__token_bucket_reserve(struct ks__token_bucket *b, double now_s);

/* ks__kube_client_timeout_ms - the client's per-request timeout (for LIST requests). */
long ks__kube_client_timeout_ms(const struct ks_kube_client *c);

/* ---- informer internals (kube/informer_seen.c, kube/watch_scan.c) ---- */

/* ks__set_str - *dst becomes a copy of @src (NULL: NULL), the old one freed. 0 or -ENOMEM (*dst kept). */
int ks__set_str(char **dst, const char *src);

/*
 * What one kind's informer has delivered: (namespace, name) -> resourceVersion and uid,
 * with the list generation that last saw it (a relist deletes what it did not see). The
 * handler owns the objects; this holds only keys. Informer thread only.
 */
struct ks__seen_entry {
    struct ks__seen_entry *next;
    uint64_t hash;
    uint32_t gen;
    char *rv, *uid;
    const char *name; /* points into key, after the namespace's NUL */
    char key[];       /* namespace "\0" name "\0" */
};

struct ks__seen {
    struct ks__seen_entry **buckets;
    size_t nbuckets, n;
};

/* ks__seen_get - the entry of (@ns, @name) or NULL. */
struct ks__seen_entry *ks__seen_get(const struct ks__seen *s, const char *ns, const char *name);
/* ks__seen_put - insert or update (@ns, @name) with @rv, @uid (copied) and @gen. 0 or -ENOMEM. */
int ks__seen_put(struct ks__seen *s, const char *ns, const char *name, const char *rv, const char *uid,
                 uint32_t gen);
/* ks__seen_del - remove (@ns, @name) if present. */
void ks__seen_del(struct ks__seen *s, const char *ns, const char *name);
/*
 * ks__seen_sweep - remove every entry whose gen is not @gen, calling @fn(ctx, entry)
 * before each removal (the entry is freed after the call).
 */
void ks__seen_sweep(struct ks__seen *s, uint32_t gen, void (*fn)(void *ctx, const struct ks__seen_entry *e),
                    void *ctx);
void ks__seen_free(struct ks__seen *s);

/*
 * A watch stream's framing: top-level JSON values (events) found in bytes that arrive in
 * arbitrary pieces. Text between values that is not JSON (up to a newline) is reported
 * as junk. Strings are tracked so braces inside them do not count.
 */
/*
 * ks__json_in_string - one byte @c of JSON text whose string state is *in_str / *esc: false when
 * @c was outside a string (the state untouched), else the state moved past it (a closing quote
 * ends the string). The framing of watch streams and of lists share it.
 */
static inline bool ks__json_in_string(bool *in_str, bool *esc, char c)
{
    if (!*in_str)
        return false;
    if (*esc)
        *esc = false;
    else if (c == '\\')
        *esc = true;
    else if (c == '"')
        *in_str = false;
    return true;
}

struct ks__watch_scan {
    char *buf;
    size_t len, cap;
    size_t pos;   /* scanned up to here */
    size_t start; /* start of the current value or junk */
    int depth;
    bool in_str, esc, junk;
    bool typed;  /* the framing below is known (from the response's Content-Type) */
    bool framed; /* protobuf: 4-byte big-endian length, then that many bytes (kube/proto_frame.c) */
};

enum { KS__SCAN_MAX = 64 << 20 }; /* one event larger than this is an error */

/*
 * ks__watch_scan_feed - append @len bytes and call @fn(ctx, text, len, is_junk) for every
 * complete value (or junk line); a nonzero return from @fn stops and is returned. -ENOMEM,
 * or -E2BIG when one value outgrows KS__SCAN_MAX.
 */
int ks__watch_scan_feed(struct ks__watch_scan *w, const char *data, size_t len,
                        int (*fn)(void *ctx, const char *text, size_t len, bool junk), void *ctx);
/* ks__watch_scan_reset - forget buffered bytes and the framing (a new stream). */
void ks__watch_scan_reset(struct ks__watch_scan *w);

/*
 * ks__watch_scan_detect - once per stream, before the first feed: frame by the Content-Type
 * of @h's response ("application/vnd.kubernetes.protobuf;stream=watch": length-prefixed
 * frames, handed to the callback whole and never as junk; anything else: JSON values).
 */
void ks__watch_scan_detect(struct ks__watch_scan *w, CURL *h);

/* ks__watch_scan_grow - make @w's buffer hold at least @total bytes (it doubles from 16 KiB). 0 or -ENOMEM.
 */
int ks__watch_scan_grow(struct ks__watch_scan *w, size_t total);
/* ks__frame_scan_feed - ks__watch_scan_feed() of a length-prefixed stream (-E2BIG past KS__SCAN_MAX). */
int ks__frame_scan_feed(struct ks__watch_scan *w, const char *data, size_t len,
                        int (*fn)(void *ctx, const char *text, size_t len, bool junk), void *ctx);
void ks__watch_scan_free(struct ks__watch_scan *w);

/*
 * A LIST answer read item by item as its bytes arrive (kube/list_scan.c), so a list of
 * 200,000 pods from the watch cache never sits whole in memory, nor as one tree: only the
 * item in progress is kept. JSON: the items of the top-level object's "items" array are
 * cut out one by one; the rest (kind, apiVersion, metadata) is kept as the list's shell
 * with an empty items array. Protobuf (the "k8s\0" magic): the runtime.Unknown envelope
 * and the list message inside its raw bytes are walked field by field; each items field
 * is unpacked alone (kube/proto_list.c).
 */
struct ks__list_scan {
    char *buf; /* bytes not yet consumed (JSON: the item in progress; protobuf: the field) */
    size_t len, cap;
    size_t pos; /* JSON: scanned up to here */
    int mode;   /* 0: no byte yet; then JSON or protobuf */
    /* JSON */
    int depth, item_depth;
    bool in_str, esc, in_items, in_item, key_items, scalar_item;
    char key[8]; /* the start of the string in progress at depth 1 */
    size_t keylen, start;
    char *shell;
    size_t shell_len, shell_cap;
    /* protobuf */
    int pstate;
    uint64_t raw_left;                 /* bytes of the list message still to come */
    const void *list_desc, *item_desc; /* ProtobufCMessageDescriptor */
    bool raw_seen;
    char *rv, *cont; /* the list's metadata, once known */
};

/* an item of the list as the tree of its JSON (no apiVersion, no kind): nonzero stops the scan */
typedef int (*ks__list_item_fn)(void *ctx, const struct ks_yaml_node *item);

/*
 * ks__list_scan_feed - take @len more bytes of the answer (named @file in errors); @fn gets each
 * item as soon as it is whole. 0; -EINVAL with @err set (malformed JSON or protobuf, an unknown
 * kind); -ENOMEM; -E2BIG (one item over KS__SCAN_MAX); or @fn's nonzero return.
 */
int ks__list_scan_feed(struct ks__list_scan *ls, const char *file, const char *data, size_t len,
                       ks__list_item_fn fn, void *ctx, struct ks_error *err);
/*
 * ks__list_scan_finish - the answer is complete: its metadata.resourceVersion and continue
 * ("" when absent; valid until the next reset). 0, -EINVAL (truncated, not a list, items not a
 * list) or -ENOMEM.
 */
int ks__list_scan_finish(struct ks__list_scan *ls, const char *file, const char **rv, const char **cont,
                         struct ks_error *err);
void ks__list_scan_reset(struct ks__list_scan *ls); /* a new answer; keeps the buffers */
void ks__list_scan_free(struct ks__list_scan *ls);

/* protobuf half of the above (kube/proto_list.c), after the mode is known */
int ks__proto_list_feed(struct ks__list_scan *ls, const char *file, ks__list_item_fn fn, void *ctx,
                        struct ks_error *err);
int ks__proto_list_finish(struct ks__list_scan *ls, const char *file, struct ks_error *err);

#endif
