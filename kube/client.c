/*
 * client.c - one HTTP request at a time per caller, from any thread, to a kube-apiserver.
 *
 * libcurl does HTTP/1.1 and HTTP/2 (negotiated by ALPN over TLS, CURL_HTTP_VERSION_2TLS)
 * and TLS with the kubeconfig's material, from files or from memory (the *_BLOB options,
 * so decoded certificate-authority-data never touches the disk). Easy handles are pooled:
 * a call takes an idle handle (or makes one), runs it, and gives it back, so concurrent
 * callers each have a handle while a CURLSH share keeps one connection cache, DNS cache
 * and TLS session cache for all of them (connections are reused across threads).
 *
 * A bearer token from token_file is re-read when the file's mtime or size changes
 * (projected service-account tokens rotate, as client-go's cachingTokenSource re-reads
 * them). Writes (every method but GET) pass a token bucket of qps/burst first, like
 * client-go's flowcontrol.NewTokenBucketRateLimiter: a caller reserves a token and sleeps
 * until it is due, so callers are served in order of arrival. A 429 (or a 5xx) with
 * Retry-After is retried after that delay, up to 10 times, as client-go's Request does.
 *
 * Locks: pool_lock, token_lock and rate_lock are leaves of the lock order in
 * include/ksched/base/lock.h; the share locks are taken by libcurl inside curl calls only.
 */
#include "kube_internal.h"

#include "ksched/base/lock.h"
#include "ksched/internal/json_edit.h"
#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define KS_KUBE_USER_AGENT "ksched/0.1.0"

enum {
    KS_KUBE_POOL_MAX = 16,
    KS_KUBE_CONNECT_TIMEOUT_MS = 10000,
    KS_KUBE_MAX_RETRIES = 10,     /* client-go's default maxRetries */
    KS_KUBE_RETRY_AFTER_MAX = 30, /* seconds: never sleep longer on one Retry-After */
};

struct blob {
    char *data;
    size_t len;
};

struct ks_kube_client {
    char *server;
    char *user_agent;
    bool protobuf; /* contentType protobuf: the requests of ks__proto_route() go as protobuf */
    char *accept;  /* Accept of LIST/WATCH and of protobuf requests */
    char *ca_file, *cert_file, *key_file;
    struct blob ca, cert, key;
    bool insecure;
    long timeout_ms;

    struct ks_mutex token_lock;
    char *token; /* current bearer token ("" when none) */
    char *token_file;
    struct timespec token_mtime;
    off_t token_size;

    struct ks_mutex rate_lock;
    struct ks__token_bucket rate;

    CURLSH *share;
    struct ks_mutex share_locks[CURL_LOCK_DATA_LAST];

    struct ks_mutex pool_lock;
    CURL *idle[KS_KUBE_POOL_MAX];
    int nidle;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int ks__kube_curl_errno(CURLcode rc)
{
    switch (rc) {
    case CURLE_OK:
        return 0;
    case CURLE_OUT_OF_MEMORY:
        return -ENOMEM;
    case CURLE_OPERATION_TIMEDOUT:
        return -ETIMEDOUT;
    case CURLE_COULDNT_CONNECT:
        return -ECONNREFUSED;
    case CURLE_COULDNT_RESOLVE_HOST:
        return -EHOSTUNREACH;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
        return -EPROTO;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return -ECONNRESET;
    default:
        return -EIO;
    }
}

long ks__kube_client_timeout_ms(const struct ks_kube_client *c)
{
    return c->timeout_ms;
}

/* ---- bearer token ---- */

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return -errno;
    for (;;) {
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap + 8192);
            if (!nb) {
                free(buf);
                fclose(f);
                return -ENOMEM;
            }
            buf = nb;
            cap += 8192;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return -EIO;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

/* Re-read token_file when it changed; call with token_lock held. Keeps the old token on failure. */
static int refresh_token_locked(struct ks_kube_client *c)
{
    ks_mutex_assert_held(&c->token_lock);
    struct stat st;
    if (!c->token_file)
        return 0;
    if (stat(c->token_file, &st) != 0)
        return -errno;
    if (c->token && st.st_mtim.tv_sec == c->token_mtime.tv_sec &&
        st.st_mtim.tv_nsec == c->token_mtime.tv_nsec && st.st_size == c->token_size)
        return 0;
    char *t = NULL;
    size_t len = 0;
    int rc = read_file(c->token_file, &t, &len);
    if (rc < 0)
        return rc;
    while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
        t[--len] = '\0';
    free(c->token);
    c->token = t;
    c->token_mtime = st.st_mtim;
    c->token_size = st.st_size;
    return 0;
}

/* ---- write rate limit ---- */

double ks__token_bucket_reserve(struct ks__token_bucket *b, double now_s)
{
    b->tokens += (now_s - b->last_s) * b->qps;
    if (b->tokens > b->burst)
        b->tokens = b->burst;
    b->last_s = now_s;
    b->tokens -= 1; /* reserve: a negative balance is the queue of callers ahead of this one */
    return b->tokens < 0 ? -b->tokens / b->qps : 0;
}

static void rate_wait(struct ks_kube_client *c)
{
    struct timespec now;
    double wait;
    if (c->rate.qps <= 0)
        return;
    ks_mutex_lock(&c->rate_lock);
    clock_gettime(CLOCK_MONOTONIC, &now);
    wait = ks__token_bucket_reserve(&c->rate, (double)now.tv_sec + (double)now.tv_nsec / 1e9);
    ks_mutex_unlock(&c->rate_lock);
    if (wait > 0) {
        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

/* ---- share locks ---- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ctx)
{
    struct ks_kube_client *c = ctx;
    (void)h;
    (void)access;
    ks_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ctx)
{
    struct ks_kube_client *c = ctx;
    (void)h;
    ks_mutex_unlock(&c->share_locks[data]);
}

/* ---- create/destroy ---- */

static int dup_str(char **dst, const char *src)
{
    if (!src)
        return 0;
    return (*dst = strdup(src)) ? 0 : -ENOMEM;
}

static int dup_blob(struct blob *dst, const char *src, size_t len)
{
    if (!src)
        return 0;
    if (!(dst->data = malloc(len + 1)))
        return -ENOMEM;
    memcpy(dst->data, src, len);
    dst->data[len] = '\0';
    dst->len = len;
    return 0;
}

int ks_kube_client_create(const struct ks_kube_client_opts *opts, struct ks_kube_client **out,
                          struct ks_error *err)
{
    const struct ks_kubeconfig *kc = opts->config;
    struct ks_kube_client *c;
    int rc = -ENOMEM;

    *out = NULL;
    if (!kc || !kc->server || !kc->server[0])
        return ks_error_set(err, NULL, 0, "server", "Required value: the API server's URL");
    if (opts->qps < 0)
        return ks_error_set(err, NULL, 0, "qps", "Invalid value: %g: must not be negative", opts->qps);
    bool protobuf = opts->content_type && strcmp(opts->content_type, KS_PROTO_MEDIA_TYPE) == 0;
    if (opts->content_type && opts->content_type[0] && !protobuf &&
        strcmp(opts->content_type, KS_JSON_MEDIA_TYPE) != 0)
        return ks_error_set(err, NULL, 0, "contentType",
                            "Unsupported value: \"%s\": supported values: \"" KS_JSON_MEDIA_TYPE
                            "\", \"" KS_PROTO_MEDIA_TYPE "\"",
                            opts->content_type);
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return ks_error_set(err, NULL, 0, NULL, "libcurl: %s", curl_easy_strerror(curl_init_rc));
    if (!(c = calloc(1, sizeof(*c))))
        goto err_nomem;
    ks_mutex_init(&c->token_lock, KS_LOCK_KUBE_TOKEN);
    ks_mutex_init(&c->rate_lock, KS_LOCK_KUBE_RATE);
    ks_mutex_init(&c->pool_lock, KS_LOCK_KUBE_POOL);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        ks_mutex_init(&c->share_locks[i], KS_LOCK_CURL_SHARE);

    size_t slen = strlen(kc->server);
    while (slen > 0 && kc->server[slen - 1] == '/')
        slen--;
    if (!(c->server = strndup(kc->server, slen)))
        goto err_client;
    c->protobuf = protobuf;
    /* client-go: acceptContentTypes when set, else the content type and anything else */
    if (dup_str(&c->accept, opts->accept_content_types && opts->accept_content_types[0]
                                ? opts->accept_content_types
                            : protobuf ? KS_PROTO_MEDIA_TYPE ", */*"
                                       : KS_JSON_MEDIA_TYPE) ||
        dup_str(&c->user_agent, opts->user_agent ? opts->user_agent : KS_KUBE_USER_AGENT) ||
        dup_str(&c->ca_file, kc->ca_file) || dup_str(&c->cert_file, kc->cert_file) ||
        dup_str(&c->key_file, kc->key_file) || dup_blob(&c->ca, kc->ca_data, kc->ca_len) ||
        dup_blob(&c->cert, kc->cert_data, kc->cert_len) || dup_blob(&c->key, kc->key_data, kc->key_len) ||
        dup_str(&c->token, kc->token) || dup_str(&c->token_file, kc->token_file))
        goto err_client;
    c->insecure = kc->insecure;
    c->timeout_ms = opts->timeout_ms > 0 ? (long)opts->timeout_ms : 30000;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    c->rate = (struct ks__token_bucket){.qps = opts->qps,
                                        .burst = opts->burst > 0 ? (double)opts->burst : 1,
                                        .last_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9};
    c->rate.tokens = c->rate.burst;
    if (c->token_file) {
        free(c->token);
        c->token = NULL;
        ks_mutex_lock(&c->token_lock); /* not shared yet; taken to keep refresh_token_locked's contract */
        int trc = refresh_token_locked(c);
        ks_mutex_unlock(&c->token_lock);
        if (trc < 0) {
            rc = trc == -ENOMEM ? -ENOMEM
                                : ks_error_set(err, c->token_file, 0, "tokenFile",
                                               "cannot read the token: %s", strerror(-trc));
            goto err_client;
        }
    }

    if (!(c->share = curl_share_init()))
        goto err_client;
    if (curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock) != CURLSHE_OK ||
        curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock) != CURLSHE_OK ||
        curl_share_setopt(c->share, CURLSHOPT_USERDATA, c) != CURLSHE_OK ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK)
        goto err_client;
    *out = c;
    return 0;

err_client:
    ks_kube_client_destroy(c);
err_nomem:
    if (rc == -ENOMEM)
        ks_error_set(err, NULL, 0, NULL, "out of memory");
    return rc;
}

void ks_kube_client_destroy(struct ks_kube_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nidle; i++)
        curl_easy_cleanup(c->idle[i]);
    if (c->share)
        curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        ks_mutex_destroy(&c->share_locks[i]);
    ks_mutex_destroy(&c->pool_lock);
    ks_mutex_destroy(&c->rate_lock);
    ks_mutex_destroy(&c->token_lock);
    free(c->server);
    free(c->user_agent);
    free(c->accept);
    free(c->ca_file);
    free(c->cert_file);
    free(c->key_file);
    free(c->ca.data);
    free(c->cert.data);
    free(c->key.data);
    free(c->token);
    free(c->token_file);
    free(c);
}

/* ---- requests ---- */

static int set_blob(CURL *h, CURLoption opt, const struct blob *b)
{
    struct curl_blob cb = {.data = b->data, .len = b->len, .flags = CURL_BLOB_NOCOPY};
    return curl_easy_setopt(h, opt, &cb) == CURLE_OK ? 0 : -ENOMEM;
}

static int add_header(struct curl_slist **hdrs, const char *h)
{
    struct curl_slist *n = curl_slist_append(*hdrs, h);
    if (!n)
        return -ENOMEM;
    *hdrs = n;
    return 0;
}

/* ks__kube_client_setup() with the Accept header's value given. */
static int setup(struct ks_kube_client *c, CURL *h, const char *method, const char *path,
                 const char *content_type, const char *accept, bool stream, struct curl_slist **hdrs)
{
    size_t ulen = strlen(c->server) + strlen(path) + 1;
    char *url = malloc(ulen);
    int rc;

    *hdrs = NULL;
    if (!url)
        return -ENOMEM;
    snprintf(url, ulen, "%s%s", c->server, path);
    CURLcode cr = curl_easy_setopt(h, CURLOPT_URL, url);
    free(url); /* libcurl copies string options */
    if (cr != CURLE_OK)
        return -ENOMEM;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)KS_KUBE_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* gzip when the server compresses */
    if (!stream) {
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
        curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    }
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    else if (strcmp(method, "POST") == 0)
        curl_easy_setopt(h, CURLOPT_POST, 1L);
    else
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);

    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if ((c->ca_file && curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file) != CURLE_OK) ||
        (c->ca.data && set_blob(h, CURLOPT_CAINFO_BLOB, &c->ca)) ||
        (c->cert_file && curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file) != CURLE_OK) ||
        (c->cert.data && set_blob(h, CURLOPT_SSLCERT_BLOB, &c->cert)) ||
        (c->key_file && curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file) != CURLE_OK) ||
        (c->key.data && set_blob(h, CURLOPT_SSLKEY_BLOB, &c->key)))
        return -ENOMEM;
    if (c->cert.data || c->cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");

    char accept_hdr[256];
    snprintf(accept_hdr, sizeof(accept_hdr), "Accept: %s", accept);
    if (add_header(hdrs, accept_hdr))
        goto err_hdrs;
    if (content_type) {
        char ct[256];
        snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
        if (add_header(hdrs, ct))
            goto err_hdrs;
    }
    /* no "Expect: 100-continue" round trip before large bodies */
    if (add_header(hdrs, "Expect:"))
        goto err_hdrs;
    char *auth = NULL;
    ks_mutex_lock(&c->token_lock);
    (void)refresh_token_locked(c); /* a rotation in progress: keep the token we have */
    bool bearer = c->token && c->token[0];
    if (bearer) {
        size_t alen = strlen(c->token) + sizeof("Authorization: Bearer ");
        if ((auth = malloc(alen)))
            snprintf(auth, alen, "Authorization: Bearer %s", c->token);
    }
    ks_mutex_unlock(&c->token_lock);
    if (bearer) {
        rc = auth ? add_header(hdrs, auth) : -ENOMEM;
        free(auth);
        if (rc)
            goto err_hdrs;
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    return 0;

err_hdrs:
    curl_slist_free_all(*hdrs);
    *hdrs = NULL;
    return -ENOMEM;
}

int ks__kube_client_setup(struct ks_kube_client *c, CURL *h, const char *method, const char *path,
                          const char *content_type, bool stream, bool json, struct curl_slist **hdrs)
{
    return setup(c, h, method, path, content_type, stream && !json ? c->accept : KS_JSON_MEDIA_TYPE, stream,
                 hdrs);
}

static CURL *pool_get(struct ks_kube_client *c)
{
    CURL *h = NULL;
    ks_mutex_lock(&c->pool_lock);
    if (c->nidle > 0)
        h = c->idle[--c->nidle];
    ks_mutex_unlock(&c->pool_lock);
    if (h) {
        curl_easy_reset(h); /* keeps the handle's caches; options are set again */
        return h;
    }
    return curl_easy_init();
}

static void pool_put(struct ks_kube_client *c, CURL *h)
{
    ks_mutex_lock(&c->pool_lock);
    if (c->nidle < KS_KUBE_POOL_MAX) {
        c->idle[c->nidle++] = h;
        h = NULL;
    }
    ks_mutex_unlock(&c->pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

struct body {
    char *p;
    size_t len, cap;
    int nomem;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct body *b = ctx;
    size_t n = size * nmemb;
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->nomem = 1;
            return 0; /* aborts the transfer */
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}

/* on_header - remember a Retry-After of whole seconds (the only form the apiserver sends). */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
    long *retry_after = ctx;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
        char buf[32];
        size_t vlen = n - (sizeof(name) - 1);
        if (vlen >= sizeof(buf))
            vlen = sizeof(buf) - 1;
        memcpy(buf, data + sizeof(name) - 1, vlen);
        buf[vlen] = '\0';
        char *end;
        long v = strtol(buf, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end != buf && *end == '\0' && v >= 0)
            *retry_after = v;
    }
    return n;
}

/* request_once - one round trip; *retry_after is the response's Retry-After or -1. */
static int request_once(struct ks_kube_client *c, const char *method, const char *path,
                        const char *content_type, const char *accept, const char *body, size_t len,
                        struct ks_kube_response *resp, long *retry_after)
{
    struct curl_slist *hdrs = NULL;
    struct body b = {0};
    CURL *h;
    int rc;

    memset(resp, 0, sizeof(*resp));
    if (strcmp(method, "GET") != 0)
        rate_wait(c);
    if (!(h = pool_get(c))) {
        snprintf(resp->error, sizeof(resp->error), "out of memory");
        return -ENOMEM;
    }
    if ((rc = setup(c, h, method, path, body ? content_type : NULL, accept, false, &hdrs))) {
        snprintf(resp->error, sizeof(resp->error), "out of memory");
        goto out;
    }
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    *retry_after = -1;
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, retry_after);
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);

    CURLcode cr = curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    if (cr != CURLE_OK) {
        rc = b.nomem ? -ENOMEM : ks__kube_curl_errno(cr);
        snprintf(resp->error, sizeof(resp->error), "%.10s %.120s: %.120s", method, path,
                 b.nomem     ? "out of memory"
                 : errbuf[0] ? errbuf
                             : curl_easy_strerror(cr));
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    if (!b.p && !(b.p = calloc(1, 1))) {
        rc = -ENOMEM;
        snprintf(resp->error, sizeof(resp->error), "out of memory");
        resp->status = 0;
        goto out;
    }
    resp->body = b.p;
    resp->len = b.len;
    b.p = NULL;
    rc = 0;
out:
    free(b.p);
    curl_slist_free_all(hdrs);
    pool_put(c, h);
    return rc;
}

/*
 * A 429, or a 5xx that carries Retry-After, is the server saying it did not process the
 * request and when to come back: like client-go's request retry (checkWait, at most 10
 * retries), wait that many seconds (at most KS_KUBE_RETRY_AFTER_MAX) and send it again.
 * Without Retry-After a 5xx is the caller's answer.
 */
int ks_kube_request(struct ks_kube_client *c, const char *method, const char *path, const char *content_type,
                    const char *body, size_t len, struct ks_kube_response *resp)
{
    const char *accept = KS_JSON_MEDIA_TYPE, *api_version, *kind;
    char *pbody = NULL;
    size_t plen = 0;
    bool proto = c->protobuf && ks__proto_route(path, &api_version, &kind);
    if (proto) {
        accept = c->accept;
        if (body && content_type && strcmp(content_type, KS_JSON_MEDIA_TYPE) == 0 &&
            ks__proto_transcode_body(body, len, api_version, kind, &pbody, &plen) == 0) {
            body = pbody;
            len = plen;
            content_type = KS_PROTO_MEDIA_TYPE;
        }
    }
    for (int attempt = 0;; attempt++) {
        long retry_after;
        int rc = request_once(c, method, path, content_type, accept, body, len, resp, &retry_after);
        bool again = rc == 0 && retry_after >= 0 && (resp->status == 429 || resp->status >= 500) &&
                     attempt < KS_KUBE_MAX_RETRIES;
        if (!again) {
            if (rc == 0 && proto)
                (void)ks__proto_response_to_json(resp); /* an undecodable answer stays as it came */
            free(pbody);
            return rc;
        }
        ks_kube_response_free(resp);
        if (retry_after > KS_KUBE_RETRY_AFTER_MAX)
            retry_after = KS_KUBE_RETRY_AFTER_MAX;
        struct timespec ts = {.tv_sec = retry_after};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

void ks_kube_error_text(const struct ks_kube_response *r, int rc, const char *op, const char *path, char *msg,
                        size_t len)
{
    static const char *const message[] = {"message", NULL};
    if (rc < 0 || r->status == 0) {
        size_t n = strlen(op);
        if (strncasecmp(r->error, op, n) == 0 && r->error[n] == ' ')
            snprintf(msg, len, "%s", r->error); /* "METHOD PATH: why" (request_once) names them already */
        else
            snprintf(msg, len, "%s \"%s\": %s", op, path,
                     r->error[0] ? r->error : strerror(rc < 0 ? -rc : EIO));
        return;
    }
    if (r->body && ks_json_get_string(r->body, r->len, message, msg, len) && msg[0])
        return;
    snprintf(msg, len, "the server responded with the status code %ld but did not return more information",
             r->status);
}

void ks_kube_response_free(struct ks_kube_response *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}
