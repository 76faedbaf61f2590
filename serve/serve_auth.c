/*
 * serve_auth.c - who may read the secure port of `ksched serve` (serve/serve.h): the
 * delegated authentication and authorization of kube-scheduler (k8s.io/apiserver
 * pkg/server/options DelegatingAuthenticationOptions/DelegatingAuthorizationOptions, the
 * webhook token authenticator and webhook authorizer, pkg/endpoints/filters).
 *
 * Authentication: a bearer token ("Authorization: Bearer T", the scheme matched without
 * case) is sent to the API server as an authentication.k8s.io/v1 TokenReview; a request
 * without one is system:anonymous (group system:unauthenticated), as upstream's delegating
 * authenticator allows anonymous requests. A token the review does not authenticate, or a
 * review that fails, is refused 401 with upstream's Unauthorized Status. An authenticated
 * user gets the group system:authenticated. Answers are cached for the token TTL (10 s,
 * success and failure alike; a review that failed or came back with status.error is not
 * cached). Client certificates and front-proxy headers are not looked at.
 *
 * Authorization, in upstream's order: a member of system:masters may do anything; a path
 * of --authorization-always-allow-paths (default /healthz, /readyz, /livez; a trailing *
 * makes a prefix) is allowed to anyone; everything else is an authorization.k8s.io/v1
 * SubjectAccessReview of the non-resource path with the request's lower-cased method as
 * verb (so a GET is "get"). Allowed: served. Denied or no opinion: 403 with upstream's
 * Forbidden Status ("forbidden: User \"U\" cannot get path \"/metrics\"", then ": REASON"
 * when the review gave one). A review that fails: 500 "Internal Server Error". Answers are
 * cached by the review's spec for the allowed TTL or the denied TTL (10 s each).
 *
 * Context: any thread; the caches lock inside. ks_auth_check with KS_AUTH_NONBLOCK never
 * calls the API server (it answers -EWOULDBLOCK instead), so the HTTP thread can settle
 * what the caches and the rules alone decide and leave the rest to its workers.
 */
#include "serve.h"

#include "ksched/base/spin.h" /* ks__mono_ns */
#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define KS_ANONYMOUS       "system:anonymous"
#define KS_UNAUTHENTICATED "system:unauthenticated"
#define KS_AUTHENTICATED   "system:authenticated"
#define KS_MASTERS         "system:masters"
#define KS_TOKENREVIEWS    "/apis/authentication.k8s.io/v1/tokenreviews"
#define KS_SARS            "/apis/authorization.k8s.io/v1/subjectaccessreviews"

struct allow_path {
    char *path; /* without its leading '/' (and without the '*' of a prefix) */
    bool prefix;
};

struct ks_auth {
    struct ks_serve_transport transport;
    struct ks_auth_cache *tokens, *reviews;
    int64_t token_ttl_ns, allow_ttl_ns, deny_ttl_ns;
    struct allow_path *paths;
    size_t npaths;
    _Atomic uint64_t token_reviews, access_reviews; /* counts only: relaxed */
};

/* An authenticated user as the caches hold it: "M<name>\0<spec fragment>" (M: '1' in system:masters). */
struct user {
    char *blob;
    size_t len;
    bool masters;
    const char *name;
    const char *fragment; /* "user":...,"groups":[...],"extra":{...},"uid":... of a review's spec */
};

/* ---- options ---------------------------------------------------------------------------- */

static void free_paths(struct allow_path *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i].path);
    free(p);
}

/* "/healthz,/readyz,/livez" (upstream's path authorizer: a leading '/' is optional, '*' only last). */
static int parse_paths(const char *list, struct allow_path **out, size_t *n)
{
    size_t cap = 1;
    for (const char *s = list; *s; s++)
        cap += *s == ',';
    struct allow_path *p = calloc(cap, sizeof(*p));
    if (!p)
        return -ENOMEM;
    *n = 0;
    for (const char *s = list; *s || s == list;) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == 0 && !*s && s == list)
            break; /* "" allows nothing */
        const char *item = s;
        if (len && item[0] == '/')
            item++, len--;
        bool prefix = len && item[len - 1] == '*';
        if (prefix)
            len--;
        if (memchr(item, '*', len)) {
            free_paths(p, *n);
            return -EINVAL;
        }
        if (!(p[*n].path = strndup(item, len))) {
            free_paths(p, *n);
            return -ENOMEM;
        }
        p[(*n)++].prefix = prefix;
        if (!end)
            break;
        s = end + 1;
    }
    *out = p;
    return 0;
}

int ks_auth_create(const struct ks_auth_opts *o, struct ks_auth **out)
{
    struct ks_auth *a = calloc(1, sizeof(*a));
    int rc;
    if (!a)
        return -ENOMEM;
    a->transport = o->transport;
    a->token_ttl_ns = o->token_ttl_ns;
    a->allow_ttl_ns = o->allow_ttl_ns;
    a->deny_ttl_ns = o->deny_ttl_ns;
    uint32_t cap = o->cache_entries ? o->cache_entries : 8192; /* the webhook authorizer's LRU size */
    if ((rc = parse_paths(o->always_allow_paths ? o->always_allow_paths : "/healthz,/readyz,/livez",
                          &a->paths, &a->npaths)) < 0 ||
        (rc = ks_auth_cache_create(cap, &a->tokens)) < 0 ||
        (rc = ks_auth_cache_create(cap, &a->reviews)) < 0) {
        ks_auth_destroy(a);
        return rc;
    }
    *out = a;
    return 0;
}

void ks_auth_destroy(struct ks_auth *a)
{
    if (!a)
        return;
    ks_auth_cache_destroy(a->tokens);
    ks_auth_cache_destroy(a->reviews);
    free_paths(a->paths, a->npaths);
    free(a);
}

void ks_auth_stats(struct ks_auth *a, uint64_t *token_reviews, uint64_t *access_reviews)
{
    *token_reviews = atomic_load_explicit(&a->token_reviews, memory_order_relaxed);
    *access_reviews = atomic_load_explicit(&a->access_reviews, memory_order_relaxed);
}

/* ---- request parts ---------------------------------------------------------------------- */

static bool is_go_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int ks_auth_bearer(const char *header, const char **token, size_t *len)
{
    *token = NULL;
    *len = 0;
    if (!header)
        return 0;
    /* bearertoken.go: TrimSpace, then SplitN(" ", 3): "Bearer" (any case), then the token */
    while (is_go_space(*header))
        header++;
    size_t n = strlen(header);
    while (n && is_go_space(header[n - 1]))
        n--;
    const char *sp = memchr(header, ' ', n);
    if (!sp || (size_t)(sp - header) != 6 || strncasecmp(header, "bearer", 6) != 0)
        return 0;
    const char *tok = sp + 1;
    const char *end = memchr(tok, ' ', n - (size_t)(tok - header));
    size_t tlen = end ? (size_t)(end - tok) : n - (size_t)(tok - header);
    if (tlen == 0)
        return 0; /* empty tokens are not tokens */
    *token = tok;
    *len = tlen;
    return 1;
}

static bool path_allowed(const struct ks_auth *a, const char *path)
{
    const char *p = path[0] == '/' ? path + 1 : path;
    for (size_t i = 0; i < a->npaths; i++) {
        const struct allow_path *ap = &a->paths[i];
        if (ap->prefix ? strncmp(p, ap->path, strlen(ap->path)) == 0 : strcmp(p, ap->path) == 0)
            return true;
    }
    return false;
}

/* ---- answers ---------------------------------------------------------------------------- */

/* Go's %q of @s (strconv.Quote for ASCII; other bytes as \x escapes). */
static void go_quote(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* @s with upstream's sanitizer applied (& < > as HTML entities), into a new string. */
static char *sanitize(const char *s)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else
            fputc(*s, f);
    }
    return ks_serve_text_close(f, &out);
}

static void set_status_json(struct ks_auth_result *r, int code, const char *reason, const char *message,
                            bool details)
{
    FILE *f = open_memstream(&r->body, &r->len);
    r->status = code;
    r->content_type = "application/json";
    if (!f)
        return;
    fputs("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":",
          f);
    ks_json_write_cstr(f, message);
    fprintf(f, ",\"reason\":\"%s\",%s\"code\":%d}\n", reason, details ? "\"details\":{}," : "", code);
    ks_serve_text_close(f, &r->body);
}

static void unauthorized(struct ks_auth_result *r)
{
    set_status_json(r, 401, "Unauthorized", "Unauthorized", false);
}

static void forbidden(struct ks_auth_result *r, const char *user, const char *verb, const char *path,
                      const char *reason)
{
    char *msg = NULL, *clean = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&msg, &len);
    r->status = 403;
    if (!f)
        return;
    fputs("forbidden: User ", f);
    go_quote(f, user);
    fprintf(f, " cannot %s path ", verb);
    go_quote(f, path);
    if (reason && reason[0])
        fprintf(f, ": %s", reason);
    if (ks_serve_text_close(f, &msg) && (clean = sanitize(msg)))
        set_status_json(r, 403, "Forbidden", clean, true);
    free(msg);
    free(clean);
}

static void internal_error(struct ks_auth_result *r, const char *uri, const char *err)
{
    char *msg = NULL, *clean = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&msg, &len);
    r->status = 500;
    r->content_type = "text/plain; charset=utf-8";
    if (!f)
        return;
    fputs("Internal Server Error: ", f);
    go_quote(f, uri);
    fprintf(f, ": %s", err);
    if (ks_serve_text_close(f, &msg) && (clean = sanitize(msg))) {
        size_t n = strlen(clean);
        if ((r->body = malloc(n + 2))) {
            memcpy(r->body, clean, n);
            memcpy(r->body + n, "\n", 2);
            r->len = n + 1;
        }
    }
    free(msg);
    free(clean);
}

void ks_auth_result_free(struct ks_auth_result *r)
{
    free(r->body);
    free(r->user);
    memset(r, 0, sizeof(*r));
}

/* ---- talking to the API server ---------------------------------------------------------- */

/*
 * POST @body to @path; on a 2xx the parsed answer goes to *doc. 0, or -EIO with @err set
 * (the Status message of another code, or the transport's error). Retries a connection
 * reset up to 4 times (upstream's webhook backoff: 0.5 s growing by 1.5).
 */
static int post_review(struct ks_auth *a, const char *path, const char *body, size_t len,
                       struct ks_yaml_stream **doc, char *err, size_t elen)
{
    struct ks_kube_response resp;
    int rc;
    long wait_ms = 500;
    for (int attempt = 0;; attempt++) {
        memset(&resp, 0, sizeof(resp));
        rc = a->transport.request(a->transport.ctx, "POST", path, "application/json", body, len, &resp);
        if (rc != -ECONNRESET || attempt == 4)
            break;
        ks_kube_response_free(&resp);
        struct timespec ts = {.tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
        wait_ms = wait_ms * 3 / 2;
    }
    if (rc < 0) {
        snprintf(err, elen, "%s", resp.error[0] ? resp.error : strerror(-rc));
        ks_kube_response_free(&resp);
        return -EIO;
    }
    struct ks_error perr = {0};
    struct ks_yaml_stream *s = NULL;
    int prc = ks_json_parse(path, resp.body ? resp.body : "", resp.len, &s, &perr);
    if (resp.status < 200 || resp.status > 299 || prc < 0 || !s->docs[0]) {
        const struct ks_yaml_node *m = prc == 0 && s->docs[0] ? ks_yaml_get(s->docs[0], "message") : NULL;
        if (m && m->kind == KS_YAML_SCALAR && resp.status >= 300)
            snprintf(err, elen, "%s", m->str);
        else if (resp.status >= 200 && resp.status <= 299)
            snprintf(err, elen, "an unreadable answer from %s", path);
        else
            snprintf(err, elen, "the server responded with status %ld to POST %s", resp.status, path);
        ks_yaml_stream_destroy(s);
        ks_kube_response_free(&resp);
        return -EIO;
    }
    ks_kube_response_free(&resp);
    *doc = s;
    return 0;
}

static bool yes(const struct ks_yaml_node *n)
{
    return n && n->kind == KS_YAML_SCALAR && n->plain && strcmp(n->str, "true") == 0;
}

static const char *scalar(const struct ks_yaml_node *n)
{
    return n && n->kind == KS_YAML_SCALAR && !(n->plain && strcmp(n->str, "null") == 0) ? n->str : "";
}

/* Fill @u from its blob. */
static void user_from_blob(struct user *u)
{
    u->masters = u->blob[0] == '1';
    u->name = u->blob + 1;
    u->fragment = u->name + strlen(u->name) + 1;
}

/*
 * The user of a TokenReview's status (@st) as a blob. Groups get system:authenticated
 * as upstream's AuthenticatedGroupAdder gives it (not to system:anonymous, nor to a user
 * already in system:authenticated or system:unauthenticated).
 */
static int user_blob(const struct ks_yaml_node *st, struct user *u)
{
    const struct ks_yaml_node *usr = ks_yaml_get(st, "user");
    const char *name = scalar(ks_yaml_get(usr, "username"));
    const char *uid = scalar(ks_yaml_get(usr, "uid"));
    const struct ks_yaml_node *groups = ks_yaml_get(usr, "groups");
    const struct ks_yaml_node *extra = ks_yaml_get(usr, "extra");
    bool masters = false, marked = strcmp(name, KS_ANONYMOUS) == 0;
    uint32_t ng = groups && groups->kind == KS_YAML_SEQ ? groups->n : 0;
    for (uint32_t i = 0; i < ng; i++) {
        const char *g = scalar(groups->items[i]);
        masters |= strcmp(g, KS_MASTERS) == 0;
        marked |= strcmp(g, KS_AUTHENTICATED) == 0 || strcmp(g, KS_UNAUTHENTICATED) == 0;
    }
    FILE *f = open_memstream(&u->blob, &u->len);
    if (!f)
        return -ENOMEM;
    fprintf(f, "%c%s%c\"user\":", masters ? '1' : '0', name, 0);
    ks_json_write_cstr(f, name);
    if (ng || !marked) {
        fputs(",\"groups\":[", f);
        for (uint32_t i = 0; i < ng; i++) {
            fputs(i ? "," : "", f);
            ks_json_write_cstr(f, scalar(groups->items[i]));
        }
        if (!marked) {
            fputs(ng ? "," : "", f);
            ks_json_write_cstr(f, KS_AUTHENTICATED);
        }
        fputc(']', f);
    }
    if (extra && extra->kind == KS_YAML_MAP && extra->n) {
        fputs(",\"extra\":{", f);
        for (uint32_t i = 0; i < extra->n; i++) {
            const struct ks_yaml_node *v = extra->pairs[i].value;
            fputs(i ? "," : "", f);
            ks_json_write_cstr(f, scalar(extra->pairs[i].key));
            fputs(":[", f);
            for (uint32_t j = 0; v && v->kind == KS_YAML_SEQ && j < v->n; j++) {
                fputs(j ? "," : "", f);
                ks_json_write_cstr(f, scalar(v->items[j]));
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    if (uid[0]) {
        fputs(",\"uid\":", f);
        ks_json_write_cstr(f, uid);
    }
    if (!ks_serve_text_close(f, &u->blob))
        return -ENOMEM;
    user_from_blob(u);
    return 0;
}

enum authn { AUTHN_OK, AUTHN_REFUSED, AUTHN_LATER, AUTHN_NOMEM };

static enum authn authenticate(struct ks_auth *a, const char *token, size_t tlen, unsigned flags, int64_t now,
                               struct user *u)
{
    char *v;
    size_t vlen;
    int rc = ks_auth_cache_get(a->tokens, token, tlen, now, &v, &vlen);
    if (rc == -ENOMEM)
        return AUTHN_NOMEM;
    if (rc == 0) {
        if (v[0] == 'F') {
            free(v);
            return AUTHN_REFUSED;
        }
        u->blob = v;
        u->len = vlen;
        user_from_blob(u);
        return AUTHN_OK;
    }
    if (flags & KS_AUTH_NONBLOCK)
        return AUTHN_LATER;

    char *body = NULL, err[512];
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f)
        return AUTHN_NOMEM;
    fputs("{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\",\"spec\":{\"token\":", f);
    char *tok = strndup(token, tlen);
    ks_json_write_cstr(f, tok ? tok : "");
    fputs("}}", f);
    if (tok) {
        explicit_bzero(tok, tlen);
        free(tok);
    }
    if (!ks_serve_text_close(f, &body))
        return AUTHN_NOMEM;
    struct ks_yaml_stream *doc = NULL;
    atomic_fetch_add_explicit(&a->token_reviews, 1, memory_order_relaxed);
    rc = post_review(a, KS_TOKENREVIEWS, body, len, &doc, err, sizeof(err));
    explicit_bzero(body, len); /* it holds the token */
    free(body);
    if (rc < 0) {
        fprintf(stderr, "ksched serve: TokenReview failed: %s\n", err);
        return AUTHN_REFUSED; /* not cached: the next request asks again */
    }
    const struct ks_yaml_node *st = ks_yaml_get(doc->docs[0], "status");
    enum authn out = AUTHN_REFUSED;
    if (yes(ks_yaml_get(st, "authenticated"))) {
        if (user_blob(st, u) < 0)
            out = AUTHN_NOMEM;
        else if (ks_auth_cache_put(a->tokens, token, tlen, u->blob, u->len, now, a->token_ttl_ns) == -ENOMEM)
            out = AUTHN_NOMEM;
        else
            out = AUTHN_OK;
    } else if (!scalar(ks_yaml_get(st, "error"))[0]) {
        /* plainly not authenticated: cached like a success; a review with an error is not */
        ks_auth_cache_put(a->tokens, token, tlen, "F", 1, now, a->token_ttl_ns);
    }
    ks_yaml_stream_destroy(doc);
    return out;
}

/* What a SubjectAccessReview said: 'A'llowed, 'D'enied, 'N'o opinion, 'B'oth (an error); reason after. */
static int authorize(struct ks_auth *a, const struct user *u, const char *verb, const char *path,
                     unsigned flags, int64_t now, char **answer, char *err, size_t elen)
{
    char *spec = NULL;
    size_t slen = 0;
    FILE *f = open_memstream(&spec, &slen);
    if (!f)
        return -ENOMEM;
    fputs("{\"nonResourceAttributes\":{\"path\":", f);
    ks_json_write_cstr(f, path);
    fputs(",\"verb\":", f);
    ks_json_write_cstr(f, verb);
    fprintf(f, "},%s}", u->fragment);
    if (!ks_serve_text_close(f, &spec))
        return -ENOMEM;
    size_t alen;
    int rc = ks_auth_cache_get(a->reviews, spec, slen, now, answer, &alen);
    if (rc != -ENOENT || (flags & KS_AUTH_NONBLOCK)) {
        free(spec);
        return rc == -ENOENT ? -EWOULDBLOCK : rc;
    }
    char *body = NULL;
    size_t len = 0;
    if (!(f = open_memstream(&body, &len))) {
        free(spec);
        return -ENOMEM;
    }
    fprintf(f, "{\"kind\":\"SubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":%s}",
            spec);
    if (!ks_serve_text_close(f, &body)) {
        free(spec);
        return -ENOMEM;
    }
    struct ks_yaml_stream *doc = NULL;
    atomic_fetch_add_explicit(&a->access_reviews, 1, memory_order_relaxed);
    rc = post_review(a, KS_SARS, body, len, &doc, err, elen);
    free(body);
    if (rc < 0) {
        free(spec);
        return rc;
    }
    const struct ks_yaml_node *st = ks_yaml_get(doc->docs[0], "status");
    bool allowed = yes(ks_yaml_get(st, "allowed")), denied = yes(ks_yaml_get(st, "denied"));
    const char *reason = scalar(ks_yaml_get(st, "reason"));
    size_t rlen = strlen(reason);
    if ((*answer = malloc(rlen + 2))) {
        (*answer)[0] = allowed && denied ? 'B' : allowed ? 'A' : denied ? 'D' : 'N';
        memcpy(*answer + 1, reason, rlen + 1);
        rc = ks_auth_cache_put(a->reviews, spec, slen, *answer, rlen + 1, now,
                               allowed ? a->allow_ttl_ns : a->deny_ttl_ns);
    } else {
        rc = -ENOMEM;
    }
    ks_yaml_stream_destroy(doc);
    free(spec);
    return rc;
}

int ks_auth_check(struct ks_auth *a, const struct ks_auth_request *req, unsigned flags, int64_t now_ns,
                  struct ks_auth_result *out)
{
    memset(out, 0, sizeof(*out));
    if (!now_ns)
        now_ns = ks__mono_ns();
    char verb[32];
    size_t i = 0;
    for (; req->method[i] && i < sizeof(verb) - 1; i++)
        verb[i] =
            (char)(req->method[i] >= 'A' && req->method[i] <= 'Z' ? req->method[i] + 32 : req->method[i]);
    verb[i] = '\0';

    const char *token;
    size_t tlen;
    struct user u = {0};
    if (ks_auth_bearer(req->authorization, &token, &tlen)) {
        switch (authenticate(a, token, tlen, flags, now_ns, &u)) {
        case AUTHN_OK:
            break;
        case AUTHN_REFUSED:
            unauthorized(out);
            return out->body ? 0 : -ENOMEM;
        case AUTHN_LATER:
            return -EWOULDBLOCK;
        case AUTHN_NOMEM:
            return -ENOMEM;
        }
    } else {
        static const char anon[] =
            "0" KS_ANONYMOUS "\0\"user\":\"" KS_ANONYMOUS "\",\"groups\":[\"" KS_UNAUTHENTICATED "\"]";
        if (!(u.blob = malloc(sizeof(anon))))
            return -ENOMEM;
        memcpy(u.blob, anon, sizeof(anon));
        u.len = sizeof(anon) - 1;
        user_from_blob(&u);
    }
    if (!(out->user = strdup(u.name))) {
        free(u.blob);
        return -ENOMEM;
    }
    if (u.masters || path_allowed(a, req->path)) {
        free(u.blob);
        return 0;
    }
    char *answer = NULL, err[512] = "";
    int rc = authorize(a, &u, verb, req->path, flags, now_ns, &answer, err, sizeof(err));
    if (rc == -EWOULDBLOCK || rc == -ENOMEM) {
        free(u.blob);
        free(answer);
        ks_auth_result_free(out);
        return rc;
    }
    if (rc == -EIO)
        internal_error(out, req->uri, err);
    else if (answer[0] == 'B')
        internal_error(out, req->uri, "webhook subject access review returned both allow and deny response");
    else if (answer[0] != 'A')
        forbidden(out, u.name, verb, req->path, answer + 1);
    free(answer);
    free(u.blob);
    if (out->status && !out->body) {
        ks_auth_result_free(out);
        return -ENOMEM;
    }
    return 0;
}
