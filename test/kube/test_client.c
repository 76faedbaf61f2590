/*
 * test_client.c - ks_kube_request against the scripted server: methods, bodies, headers,
 * bearer tokens (and a token file that rotates), transport errors, concurrent callers.
 */
#include <criterion/criterion.h>

#include "../../kube/kube_internal.h"
#include "http_script.h"

#include "ksched/internal/kube.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static struct ks_kube_client *client_for(struct ks_kubeconfig *kc, double qps)
{
    struct ks_kube_client_opts o = {.config = kc, .qps = qps, .burst = 2, .timeout_ms = 5000};
    struct ks_kube_client *c;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), 0, "%s", err.msg);
    return c;
}

Test(kube_client, get_and_post_with_bearer_token)
{
    static const struct ks_script_step steps[] = {
        {.method = "GET", .path = "/api/v1/nodes/n1", .status = 200, .body = "{\"kind\":\"Node\"}"},
        {.method = "POST", .path = "/api/v1/namespaces/ns/pods/p/binding", .status = 201, .body = "{}"},
        {.method = "DELETE", .path = "/api/v1/namespaces/ns/pods/p", .status = 409, .body = "{\"code\":409}"},
    };
    struct ks_script_server *s = ks_script_start(steps, 3);
    char url[80];
    snprintf(url, sizeof(url), "%s/", ks_script_url(s)); /* a trailing slash is dropped */
    struct ks_kubeconfig kc = {.server = url, .token = "sekret"};
    struct ks_kube_client *c = client_for(&kc, 100);
    struct ks_kube_response r;

    cr_assert_eq(ks_kube_request(c, "GET", "/api/v1/nodes/n1", NULL, NULL, 0, &r), 0, "%s", r.error);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "{\"kind\":\"Node\"}");
    cr_assert_eq(r.len, strlen(r.body));
    ks_kube_response_free(&r);

    static const char binding[] = "{\"kind\":\"Binding\",\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}";
    cr_assert_eq(ks_kube_request(c, "POST", "/api/v1/namespaces/ns/pods/p/binding", "application/json",
                                 binding, sizeof(binding) - 1, &r),
                 0);
    cr_assert_eq(r.status, 201);
    ks_kube_response_free(&r);

    cr_assert_eq(ks_kube_request(c, "DELETE", "/api/v1/namespaces/ns/pods/p", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 409, "a status is a response, not a transport error");
    ks_kube_response_free(&r);

    struct ks_script_request q0 = ks_script_request_at(s, 0), q1 = ks_script_request_at(s, 1),
                             q2 = ks_script_request_at(s, 2);
    cr_assert_str_eq(q0.target, "/api/v1/nodes/n1");
    cr_assert_str_eq(q0.authorization, "Bearer sekret");
    cr_assert_str_eq(q1.method, "POST");
    cr_assert_str_eq(q1.content_type, "application/json");
    cr_assert_str_eq(q1.body, binding);
    cr_assert_str_eq(q2.method, "DELETE");
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

Test(kube_client, token_file_is_reread_when_it_changes)
{
    static const struct ks_script_step steps[] = {{.path = "/", .status = 200, .body = "ok", .repeat = true}};
    struct ks_script_server *s = ks_script_start(steps, 1);
    char path[] = "/tmp/ks-token-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "first-token\n", 12), 12);
    close(fd);
    struct ks_kubeconfig kc = {.server = (char *)ks_script_url(s), .token_file = path};
    struct ks_kube_client *c = client_for(&kc, 0);
    struct ks_kube_response r;

    cr_assert_eq(ks_kube_request(c, "GET", "/", NULL, NULL, 0, &r), 0);
    ks_kube_response_free(&r);
    FILE *f = fopen(path, "w");
    fputs("second-token-rotated", f);
    fclose(f);
    struct timeval tv[2] = {{1000, 0}, {1000, 0}}; /* a different mtime whatever the clock did */
    utimes(path, tv);
    cr_assert_eq(ks_kube_request(c, "GET", "/", NULL, NULL, 0, &r), 0);
    ks_kube_response_free(&r);

    cr_assert_str_eq(ks_script_request_at(s, 0).authorization, "Bearer first-token");
    cr_assert_str_eq(ks_script_request_at(s, 1).authorization, "Bearer second-token-rotated");
    ks_kube_client_destroy(c);
    unlink(path);
    ks_script_stop(s);
}

Test(kube_client, transport_errors_have_no_status)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    getsockname(fd, (struct sockaddr *)&a, &alen);
    close(fd); /* nothing listens on that port now */
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
    struct ks_kubeconfig kc = {.server = url};
    struct ks_kube_client *c = client_for(&kc, 0);
    struct ks_kube_response r;
    int rc = ks_kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, 0, &r);
    cr_assert_lt(rc, 0);
    cr_assert_eq(r.status, 0);
    cr_assert_null(r.body);
    cr_assert(strstr(r.error, "/api/v1/nodes"), "%s", r.error);
    ks_kube_response_free(&r);
    ks_kube_client_destroy(c);
}

Test(kube_client, create_needs_a_server)
{
    struct ks_kubeconfig kc = {0};
    struct ks_kube_client_opts o = {.config = &kc};
    struct ks_kube_client *c = (void *)1;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), -EINVAL);
    cr_assert_null(c);
    cr_assert_str_eq(err.field, "server");
    ks_kube_client_destroy(NULL);
}

struct worker {
    struct ks_kube_client *c;
    int ok;
};

static void *hammer(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < 25; i++) {
        struct ks_kube_response r;
        const char *method = i % 5 ? "GET" : "PATCH";
        if (ks_kube_request(w->c, method, "/api/v1/pods", i % 5 ? NULL : "application/merge-patch+json",
                            i % 5 ? NULL : "{}", 2, &r) == 0 &&
            r.status == 200 && strcmp(r.body, "[]") == 0)
            w->ok++;
        ks_kube_response_free(&r);
    }
    return NULL;
}

Test(kube_client, concurrent_callers_share_the_client)
{
    static const struct ks_script_step steps[] = {
        {.path = "/api/v1/pods", .status = 200, .body = "[]", .repeat = true}};
    struct ks_script_server *s = ks_script_start(steps, 1);
    struct ks_kubeconfig kc = {.server = (char *)ks_script_url(s)};
    struct ks_kube_client *c = client_for(&kc, 1000);
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){.c = c};
        pthread_create(&t[i], NULL, hammer, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(w[i].ok, 25, "worker %d: %d of 25", i, w[i].ok);
    }
    cr_assert_eq(ks_script_nrequests(s), 100);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}

/* cr_assert_float_eq evaluates its arguments twice: reserve once, then compare */
static void reserve_expect(struct ks__token_bucket *b, double now, double want)
{
    double wait = ks__token_bucket_reserve(b, now);
    cr_assert_float_eq(wait, want, 1e-9, "at %g: wait %g, want %g", now, wait, want);
}

Test(kube_client, token_bucket_allows_a_burst_then_spaces_writes)
{
    struct ks__token_bucket b = {.qps = 10, .burst = 3, .tokens = 3, .last_s = 100};
    /* three at once pass, then each waits 0.1 s more than the one before */
    reserve_expect(&b, 100, 0);
    reserve_expect(&b, 100, 0);
    reserve_expect(&b, 100, 0);
    reserve_expect(&b, 100, 0.1);
    reserve_expect(&b, 100, 0.2);
    /* 0.5 s later the queue (-2 tokens) has refilled to +3, capped at the burst of 3 */
    reserve_expect(&b, 100.5, 0);
    cr_assert_float_eq(b.tokens, 2, 1e-9);
    /* a long pause never banks more than the burst */
    reserve_expect(&b, 1000, 0);
    cr_assert_float_eq(b.tokens, 2, 1e-9);
}

Test(kube_client, unreadable_token_file_fails_create)
{
    struct ks_kubeconfig kc = {.server = "http://127.0.0.1:1", .token_file = "/nonexistent/token"};
    struct ks_kube_client_opts o = {.config = &kc};
    struct ks_kube_client *c;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), -EINVAL);
    cr_assert_str_eq(err.field, "tokenFile");
    cr_assert(strstr(err.msg, "No such file"), "%s", err.msg);
}

Test(kube_client, too_many_requests_with_retry_after_is_retried)
{
    /* 429 and 503 with Retry-After: 0 are sent again (client-go's checkWait); a 500 without
     * Retry-After and a 429 past the tenth retry are the caller's answer. */
    static const struct ks_script_step steps[] = {
        {.method = "POST", .path = "/a", .status = 429, .headers = "Retry-After: 0\r\n", .body = "{}"},
        {.method = "POST", .path = "/a", .status = 503, .headers = "Retry-After: 0\r\n", .body = "{}"},
        {.method = "POST", .path = "/a", .status = 201, .body = "{\"ok\":1}"},
        {.method = "GET", .path = "/b", .status = 500, .body = "{}"},
        {.method = "GET",
         .path = "/c",
         .status = 429,
         .headers = "retry-after:  0 \r\n",
         .body = "{}",
         .repeat = true},
    };
    struct ks_script_server *s = ks_script_start(steps, 5);
    struct ks_kubeconfig kc = {.server = (char *)ks_script_url(s)};
    struct ks_kube_client *c = client_for(&kc, 0);
    struct ks_kube_response r;

    cr_assert_eq(ks_kube_request(c, "POST", "/a", "application/json", "{}", 2, &r), 0, "%s", r.error);
    cr_assert_eq(r.status, 201);
    cr_assert_str_eq(r.body, "{\"ok\":1}");
    ks_kube_response_free(&r);
    cr_assert_eq(ks_script_nrequests(s), 3, "two retries, then the answer");

    cr_assert_eq(ks_kube_request(c, "GET", "/b", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 500, "a 5xx without Retry-After is not retried");
    ks_kube_response_free(&r);
    cr_assert_eq(ks_script_nrequests(s), 4);

    cr_assert_eq(ks_kube_request(c, "GET", "/c", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 429, "the eleventh answer is returned");
    ks_kube_response_free(&r);
    cr_assert_eq(ks_script_nrequests(s), 4 + 11);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}
