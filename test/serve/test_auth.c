/*
 * test_auth.c - the secure port's delegated authentication and authorization
 * (serve/serve_auth.c) and their cache (serve/serve_auth_cache.c): the bearer token as
 * upstream reads it, the TokenReview and SubjectAccessReview bodies, upstream's 401/403/500
 * answers, the always-allowed paths and system:masters, and what is cached for how long.
 */
#include <criterion/criterion.h>

#include "fakes/fake_reviews.h"
#include "serve.h"

#include <errno.h>

#define SEC INT64_C(1000000000)

/* ---- the cache -------------------------------------------------------------------------- */

static char *get(struct ks_auth_cache *c, const char *key, int64_t now)
{
    char *v;
    size_t len;
    return ks_auth_cache_get(c, key, strlen(key), now, &v, &len) == 0 ? v : NULL;
}

Test(auth_cache, expiry_replace_and_ttl_zero)
{
    struct ks_auth_cache *c;
    cr_assert_eq(ks_auth_cache_create(4, &c), 0);
    cr_assert_eq(ks_auth_cache_put(c, "k", 1, "v1", 2, 100, 10 * SEC), 0);
    char *v = get(c, "k", 100 + 10 * SEC - 1);
    cr_expect_str_eq(v, "v1");
    free(v);
    cr_expect_null(get(c, "k", 100 + 10 * SEC), "expired at its TTL");
    cr_expect_eq(ks_auth_cache_len(c), 0, "an expired entry is dropped when looked at");
    ks_auth_cache_put(c, "k", 1, "v1", 2, 0, SEC);
    ks_auth_cache_put(c, "k", 1, "v2", 2, 0, SEC);
    cr_expect_eq(ks_auth_cache_len(c), 1);
    cr_expect_str_eq((v = get(c, "k", 1)), "v2");
    free(v);
    ks_auth_cache_put(c, "z", 1, "v", 1, 0, 0);
    cr_expect_null(get(c, "z", 0), "TTL 0: not cached");
    /* binary keys: a prefix is another key */
    ks_auth_cache_put(c, "ab\0c", 4, "x", 1, 0, SEC);
    cr_expect_null(get(c, "ab", 1));
    ks_auth_cache_destroy(c);
}

Test(auth_cache, least_recently_used_goes_first)
{
    struct ks_auth_cache *c;
    cr_assert_eq(ks_auth_cache_create(3, &c), 0);
    ks_auth_cache_put(c, "a", 1, "1", 1, 0, SEC);
    ks_auth_cache_put(c, "b", 1, "2", 1, 0, SEC);
    ks_auth_cache_put(c, "c", 1, "3", 1, 0, SEC);
    free(get(c, "a", 1)); /* a is now the most recently used */
    ks_auth_cache_put(c, "d", 1, "4", 1, 0, SEC);
    cr_expect_eq(ks_auth_cache_len(c), 3);
    char *v;
    cr_expect_null(get(c, "b", 1), "b was the least recently used");
    cr_expect_not_null((v = get(c, "a", 1)));
    free(v);
    cr_expect_not_null((v = get(c, "d", 1)));
    free(v);
    /* many more keys than room: never more than the capacity */
    char key[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        ks_auth_cache_put(c, key, strlen(key), "v", 1, 0, SEC);
    }
    cr_expect_eq(ks_auth_cache_len(c), 3);
    cr_expect_not_null((v = get(c, "k999", 1)));
    free(v);
    ks_auth_cache_destroy(c);
}

/* ---- the bearer token ------------------------------------------------------------------- */

Test(auth, bearer_token_as_upstream_reads_it)
{
    static const struct {
        const char *header, *token;
    } cases[] = {
        {"Bearer abc", "abc"},
        {"bearer abc", "abc"},
        {"BEARER abc", "abc"},
        {"  Bearer abc \r\t", "abc"},
        {"Bearer abc def", "abc"},
        {"Bearer  abc", NULL}, /* the space is the token */
        {"Bearer ", NULL},
        {"Bearer", NULL},
        {"Basic dXNlcjpwYXNz", NULL},
        {"Bearerabc", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *tok;
        size_t len;
        int got = ks_auth_bearer(cases[i].header, &tok, &len);
        if (!cases[i].token) {
            cr_expect_eq(got, 0, "\"%s\" has no token", cases[i].header);
        } else {
            cr_expect_eq(got, 1, "\"%s\"", cases[i].header);
            cr_expect(got && len == strlen(cases[i].token) && strncmp(tok, cases[i].token, len) == 0,
                      "\"%s\": got \"%.*s\"", cases[i].header, (int)len, got ? tok : "");
        }
    }
    const char *tok;
    size_t len;
    cr_expect_eq(ks_auth_bearer(NULL, &tok, &len), 0);
}

/* ---- decisions -------------------------------------------------------------------------- */

static struct fake_reviews fake = FAKE_REVIEWS_INIT;

static struct ks_auth *make_auth(const char *paths)
{
    struct ks_auth_opts o = {.transport = {.request = fake_reviews_request, .ctx = &fake},
                             .token_ttl_ns = 10 * SEC,
                             .allow_ttl_ns = 10 * SEC,
                             .deny_ttl_ns = 5 * SEC,
                             .always_allow_paths = paths};
    struct ks_auth *a;
    cr_assert_eq(ks_auth_create(&o, &a), 0);
    return a;
}

/* Check @header on @method @path at @now; the answer's status (0: served), its body in @body. */
static int check(struct ks_auth *a, const char *header, const char *method, const char *path, unsigned flags,
                 int64_t now, char *body, size_t blen)
{
    struct ks_auth_request req = {.authorization = header, .method = method, .path = path, .uri = path};
    struct ks_auth_result r;
    int rc = ks_auth_check(a, &req, flags, now, &r);
    if (rc < 0)
        return rc;
    if (body)
        snprintf(body, blen, "%.*s", (int)r.len, r.body ? r.body : "");
    int status = r.status;
    ks_auth_result_free(&r);
    return status;
}

static const char anonymous_403[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                                    "\"Failure\",\"message\":\"forbidden: "
                                    "User \\\"system:anonymous\\\" cannot get path "
                                    "\\\"/metrics\\\"\",\"reason\":\"Forbidden\",\"details\":{},"
                                    "\"code\":403}\n";

Test(auth, anonymous_probes_pass_and_metrics_are_forbidden)
{
    struct ks_auth *a = make_auth(NULL);
    char body[1024];
    for (const char *const *p = (const char *const[]){"/healthz", "/readyz", "/livez", NULL}; *p; p++)
        cr_expect_eq(check(a, NULL, "GET", *p, KS_AUTH_NONBLOCK, 1, NULL, 0), 0, "%s", *p);
    cr_expect_eq(fake.access_reviews + fake.token_reviews, 0, "probes need no review");
    cr_expect_eq(check(a, NULL, "GET", "/healthz/x", KS_AUTH_NONBLOCK, 1, NULL, 0), -EWOULDBLOCK,
                 "only the exact paths are always allowed");

    cr_expect_eq(check(a, NULL, "GET", "/metrics", KS_AUTH_NONBLOCK, 1, NULL, 0), -EWOULDBLOCK);
    cr_expect_eq(check(a, NULL, "GET", "/metrics", 0, 1, body, sizeof(body)), 403);
    cr_expect_str_eq(body, anonymous_403);
    cr_expect_str_eq(fake.last_access_body,
                     "{\"kind\":\"SubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{"
                     "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"},\"user\":\"system:"
                     "anonymous\",\"groups\":[\"system:unauthenticated\"]}}");
    /* the denial is cached for the denied TTL (5 s here), then asked again */
    cr_expect_eq(check(a, NULL, "GET", "/metrics", KS_AUTH_NONBLOCK, 1 + 5 * SEC - 1, body, sizeof(body)),
                 403);
    cr_expect_eq(fake.access_reviews, 1);
    cr_expect_eq(check(a, NULL, "GET", "/metrics", KS_AUTH_NONBLOCK, 1 + 5 * SEC, NULL, 0), -EWOULDBLOCK);
    /* the verb is the method in lower case */
    cr_expect_eq(check(a, NULL, "POST", "/metrics", 0, 1, body, sizeof(body)), 403);
    cr_expect(strstr(body, "cannot post path"), "%s", body);
    ks_auth_destroy(a);
}

Test(auth, authorized_token_is_served_and_cached)
{
    struct ks_auth *a = make_auth(NULL);
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", KS_AUTH_NONBLOCK, 1, NULL, 0), -EWOULDBLOCK);
    cr_expect_eq(fake.token_reviews, 0, "nonblocking: no review sent");
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", 0, 1, NULL, 0), 0);
    cr_expect_str_eq(fake.last_token_body,
                     "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\","
                     "\"spec\":{\"token\":\"good\"}}");
    /* the user as the review gave it, plus system:authenticated */
    cr_expect_str_eq(fake.last_access_body,
                     "{\"kind\":\"SubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{"
                     "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"},\"user\":\"alice\","
                     "\"groups\":[\"readers\",\"system:authenticated\"],\"extra\":{\"scopes\":[\"a\",\"b\"]},"
                     "\"uid\":\"u-1\"}}");
    cr_expect_eq(fake.token_reviews, 1);
    cr_expect_eq(fake.access_reviews, 1);
    /* within 10 s: both answers from the caches, without blocking */
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", KS_AUTH_NONBLOCK, 1 + 10 * SEC - 1, NULL, 0), 0);
    cr_expect_eq(fake.token_reviews + fake.access_reviews, 2);
    /* another path is another review, the token still cached */
    char body[1024];
    cr_expect_eq(check(a, "Bearer good", "GET", "/configz", 0, 2, body, sizeof(body)), 403);
    cr_expect(strstr(body, "forbidden: User \\\"alice\\\" cannot get path \\\"/configz\\\""), "%s", body);
    cr_expect_eq(fake.token_reviews, 1);
    /* past the TTLs, reviewed again */
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", KS_AUTH_NONBLOCK, 1 + 10 * SEC, NULL, 0),
                 -EWOULDBLOCK);
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", 0, 1 + 10 * SEC, NULL, 0), 0);
    cr_expect_eq(fake.token_reviews, 2);
    cr_expect_eq(fake.access_reviews, 3);
    uint64_t tr, ar;
    ks_auth_stats(a, &tr, &ar);
    cr_expect(tr == 2 && ar == 3);
    ks_auth_destroy(a);
}

static const char unauthorized_401[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
    "\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
    "\"code\":401}\n";

Test(auth, rejected_tokens_are_401_even_on_probes)
{
    struct ks_auth *a = make_auth(NULL);
    char body[1024];
    cr_expect_eq(check(a, "Bearer nope", "GET", "/metrics", 0, 1, body, sizeof(body)), 401);
    cr_expect_str_eq(body, unauthorized_401);
    /* a plain "not authenticated" is cached... */
    cr_expect_eq(check(a, "Bearer nope", "GET", "/metrics", KS_AUTH_NONBLOCK, 2, NULL, 0), 401);
    cr_expect_eq(fake.token_reviews, 1);
    /* ...one with status.error is not */
    cr_expect_eq(check(a, "Bearer err", "GET", "/metrics", 0, 1, NULL, 0), 401);
    cr_expect_eq(check(a, "Bearer err", "GET", "/metrics", KS_AUTH_NONBLOCK, 2, NULL, 0), -EWOULDBLOCK);
    /* upstream authenticates before it looks at the path */
    cr_expect_eq(check(a, "Bearer nope", "GET", "/healthz", KS_AUTH_NONBLOCK, 3, NULL, 0), 401);
    cr_expect_eq(fake.access_reviews, 0, "no access review for an unauthenticated request");
    /* a review that fails (transport, or a refusal of the review itself) is a 401 too, not cached */
    fake.fail = -ECONNREFUSED;
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", 0, 1, NULL, 0), 401);
    fake.fail = 0;
    fake.status = 403;
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", 0, 1, NULL, 0), 401);
    fake.status = 0;
    cr_expect_eq(check(a, "Bearer good", "GET", "/metrics", 0, 1, NULL, 0), 0);
    ks_auth_destroy(a);
}

Test(auth, masters_skip_the_access_review)
{
    struct ks_auth *a = make_auth(NULL);
    cr_expect_eq(check(a, "Bearer root", "GET", "/anything", 0, 1, NULL, 0), 0);
    cr_expect_eq(fake.token_reviews, 1);
    cr_expect_eq(fake.access_reviews, 0);
    ks_auth_destroy(a);
}

Test(auth, failed_access_review_is_500_and_a_reason_is_appended)
{
    struct ks_auth *a = make_auth(NULL);
    char body[1024];
    fake.fail = -ECONNREFUSED;
    struct ks_auth_request req = {.method = "GET", .path = "/metrics", .uri = "/metrics?x=<1>"};
    struct ks_auth_result r;
    cr_assert_eq(ks_auth_check(a, &req, 0, 1, &r), 0);
    cr_expect_eq(r.status, 500);
    cr_expect_str_eq(r.content_type, "text/plain; charset=utf-8");
    cr_expect_str_eq(r.body, "Internal Server Error: \"/metrics?x=&lt;1&gt;\": POST "
                             "/apis/authorization.k8s.io/v1/subjectaccessreviews: Connection refused\n");
    ks_auth_result_free(&r);
    fake.fail = 0;
    fake.status = 403;
    cr_assert_eq(ks_auth_check(a, &req, 0, 1, &r), 0);
    cr_expect_eq(r.status, 500);
    cr_expect(strstr(r.body, ": reviews are forbidden to you\n"), "%s", r.body);
    ks_auth_result_free(&r);
    fake.status = 0;
    /* a failure is not cached */
    cr_expect_eq(check(a, NULL, "GET", "/metrics", KS_AUTH_NONBLOCK, 1, NULL, 0), -EWOULDBLOCK);
    fake.deny_reason = "no RBAC <rule>";
    cr_expect_eq(check(a, NULL, "GET", "/metrics", 0, 1, body, sizeof(body)), 403);
    cr_expect(strstr(body, "cannot get path \\\"/metrics\\\": no RBAC &lt;rule&gt;\""), "%s", body);
    fake.deny_reason = NULL;
    ks_auth_destroy(a);
}

Test(auth, always_allow_paths_flag)
{
    struct ks_auth *a = make_auth("/healthz,/debug/*,metrics-lite");
    cr_expect_eq(check(a, NULL, "GET", "/debug/pprof/heap", KS_AUTH_NONBLOCK, 1, NULL, 0), 0);
    cr_expect_eq(check(a, NULL, "GET", "/metrics-lite", KS_AUTH_NONBLOCK, 1, NULL, 0), 0,
                 "a leading / is optional");
    cr_expect_eq(check(a, NULL, "GET", "/readyz", KS_AUTH_NONBLOCK, 1, NULL, 0), -EWOULDBLOCK,
                 "the list replaces the default");
    ks_auth_destroy(a);
    struct ks_auth *none = make_auth("");
    cr_expect_eq(check(none, NULL, "GET", "/healthz", KS_AUTH_NONBLOCK, 1, NULL, 0), -EWOULDBLOCK,
                 "an empty list allows nothing");
    ks_auth_destroy(none);
    struct ks_auth_opts o = {.always_allow_paths = "/a*b"};
    cr_expect_eq(ks_auth_create(&o, &a), -EINVAL);
}
