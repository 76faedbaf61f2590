/*
 * test_http.c - the probe/metrics endpoint (serve/serve_http.c, serve_http_request.c): the
 * request head as it is parsed; plain HTTP (GET and HEAD answered by the handler with
 * Content-Length and Connection: close, other methods 405, a free port for ":0"); HTTPS
 * with authentication and authorization in front (upstream's 401/403, probes open, a slow
 * review never holding up a probe); and the limits that keep it from being a DoS lever
 * (bounded connections, a slow client displaced, idle connections timed out, 431).
 */
#include <criterion/criterion.h>

#include "fakes/fake_reviews.h"
#include "serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- the request head ------------------------------------------------------------------- */

static int parse(const char *text, struct ks_http_request *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", text);
    size_t n = ks_http_head_len(buf, strlen(buf));
    cr_assert_gt(n, 0, "incomplete head: %s", text);
    return ks_http_parse_request(buf, n, r);
}

Test(http_request, head_length)
{
    cr_expect_eq(ks_http_head_len("GET / HTTP/1.1\r\nA: b\r\n", 22), 0);
    cr_expect_eq(ks_http_head_len("GET / HTTP/1.1\r\n\r\nbody", 22), 18);
    cr_expect_eq(ks_http_head_len("GET / HTTP/1.0\n\nx", 17), 16);
    cr_expect_eq(ks_http_head_len("GET / HTTP/1.1\r\nA: b\n\r\n", 23), 23);
}

Test(http_request, parses_what_the_handlers_and_the_authorizer_read)
{
    struct ks_http_request r;
    char buf[4096];
    cr_assert_eq(parse("GET /metrics?x=1&y HTTP/1.1\r\nHost: a\r\nauthorization:  Bearer t0k \r\n"
                       "Authorization: Bearer second\r\n\r\n",
                       &r, buf, sizeof(buf)),
                 0);
    cr_expect_str_eq(r.method, "GET");
    cr_expect_str_eq(r.target, "/metrics?x=1&y");
    cr_expect_str_eq(r.path, "/metrics");
    cr_expect_str_eq(r.authorization, "Bearer t0k", "the first one, trimmed");
    cr_assert_eq(parse("HEAD /%6detrics%2Fx HTTP/1.0\n\n", &r, buf, sizeof(buf)), 0);
    cr_expect_str_eq(r.path, "/metrics/x", "percent-decoded as Go's URL.Path");
    cr_expect_null(r.authorization);
    cr_assert_eq(parse("GET http://host:1/readyz?v HTTP/1.1\r\n\r\n", &r, buf, sizeof(buf)), 0);
    cr_expect_str_eq(r.path, "/readyz", "absolute form");
    cr_assert_eq(parse("GET https://host HTTP/1.1\r\n\r\n", &r, buf, sizeof(buf)), 0);
    cr_expect_str_eq(r.path, "/");
    cr_assert_eq(parse("PROPFIND /x HTTP/1.1\r\n\r\n", &r, buf, sizeof(buf)), 0);
    cr_expect_str_eq(r.method, "PROPFIND");
}

Test(http_request, refuses_what_it_cannot_read_exactly)
{
    static const struct {
        const char *head;
        int status;
    } bad[] = {
        {"garbage\r\n\r\n", 400},
        {"GET /\r\n\r\n", 400},
        {"GET  / HTTP/1.1\r\n\r\n", 400},
        {"GET / x HTTP/1.1\r\n\r\n", 400},
        {"G(T / HTTP/1.1\r\n\r\n", 400},
        {"GET metrics HTTP/1.1\r\n\r\n", 400},
        {"GET /a%zz HTTP/1.1\r\n\r\n", 400},
        {"GET /a%0 HTTP/1.1\r\n\r\n", 400},
        {"GET /a%00b HTTP/1.1\r\n\r\n", 400},
        {"GET / HTTP/2.0\r\n\r\n", 505},
        {"GET / HTTPS/1.1\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nBad name: x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\n: empty\r\n\r\n", 400},
        {"AVERYLONGMETHODNAME / HTTP/1.1\r\n\r\n", 400},
    };
    struct ks_http_request r;
    char buf[4096];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(parse(bad[i].head, &r, buf, sizeof(buf)), bad[i].status, "%s", bad[i].head);
    /* a target that does not fit */
    char big[KS_HTTP_TARGET_MAX + 64];
    int n = snprintf(big, sizeof(big), "GET /");
    memset(big + n, 'a', KS_HTTP_TARGET_MAX);
    snprintf(big + n + KS_HTTP_TARGET_MAX, sizeof(big) - (size_t)n - KS_HTTP_TARGET_MAX, " HTTP/1.1\r\n\r\n");
    char *copy = strdup(big);
    cr_expect_eq(ks_http_parse_request(copy, strlen(copy), &r), 414);
    free(copy);
    /* a NUL anywhere */
    char nul[] = "GET / HTTP/1.1\r\nAuthorization: Bearer a\0b\r\n\r\n";
    cr_expect_eq(ks_http_parse_request(nul, sizeof(nul) - 1, &r), 400);
}

/* ---- plain HTTP ------------------------------------------------------------------------- */

static int handler(void *ctx, const char *path, FILE *out, const char **content_type)
{
    (*(int *)ctx)++;
    if (strcmp(path, "/metrics") == 0) {
        *content_type = "text/plain; version=0.0.4; charset=utf-8";
        fputs("x 1\n", out);
        return 200;
    }
    if (strcmp(path, "/healthz") == 0) {
        fputs("ok", out);
        return 200;
    }
    fputs("nope\n", out);
    return 404;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Read until the peer closes (or 5 s pass) into @buf. */
static size_t read_all(int fd, char *buf, size_t len)
{
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < len - 1 && poll(&p, 1, 5000) == 1) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

/* Send @req to 127.0.0.1:@port and read the whole answer into @buf. */
static void exchange(int port, const char *req, char *buf, size_t len)
{
    int fd = connect_to(port);
    cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    read_all(fd, buf, len);
    close(fd);
}

static struct ks_http *start_plain(int *calls, int *port, uint32_t max_conns, int64_t timeout_ms)
{
    struct ks_http *h;
    struct ks_http_opts o = {.addr = "127.0.0.1:0",
                             .handler = handler,
                             .ctx = calls,
                             .max_conns = max_conns,
                             .timeout_ms = timeout_ms};
    cr_assert_eq(ks_http_start(&o, &h, port), 0);
    cr_assert_gt(*port, 0);
    return h;
}

Test(http, get_head_and_errors)
{
    int port = 0, calls = 0;
    char buf[4096];
    struct ks_http *h = start_plain(&calls, &port, 0, 0);

    exchange(port, "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", buf, sizeof(buf));
    cr_expect_str_eq(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                          "Content-Length: 4\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache, "
                          "private\r\nConnection: close\r\n\r\nx 1\n");
    exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf));
    cr_expect(strstr(buf, "Content-Length: 4\r\n") && !strstr(buf, "x 1"), "HEAD has no body: %s", buf);
    exchange(port, "GET /other HTTP/1.0\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 404 Not Found\r\n", 24) == 0, "%s", buf);
    exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 405 ", 13) == 0, "%s", buf);
    exchange(port, "garbage\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s", buf);
    /* the head arriving in pieces */
    int fd = connect_to(port);
    cr_assert_eq(write(fd, "GET /metr", 9), 9);
    usleep(50000);
    cr_assert_eq(write(fd, "ics HTTP/1.1\r", 13), 13);
    usleep(50000);
    cr_assert_eq(write(fd, "\n\r\n", 3), 3);
    read_all(fd, buf, sizeof(buf));
    close(fd);
    cr_expect(strstr(buf, "\r\n\r\nx 1\n"), "%s", buf);
    cr_expect_eq(calls, 4, "the handler answers GET and HEAD only");
    ks_http_stop(h);
}

Test(http, bad_addresses)
{
    struct ks_http *h;
    int calls = 0;
    static const char *const bad[] = {"nonsense", "[::1", "127.0.0.1:", "127.0.0.1:notaport"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ks_http_opts o = {.addr = bad[i], .handler = handler, .ctx = &calls};
        cr_expect_eq(ks_http_start(&o, &h, NULL), -EINVAL, "%s", bad[i]);
    }
}

Test(http, oversized_head_is_431)
{
    int port = 0, calls = 0;
    char buf[4096];
    struct ks_http *h = start_plain(&calls, &port, 0, 0);
    int fd = connect_to(port);
    char *req = malloc(KS_HTTP_HEAD_MAX + 100);
    int n = sprintf(req, "GET /metrics HTTP/1.1\r\nX: ");
    memset(req + n, 'a', KS_HTTP_HEAD_MAX + 100 - (size_t)n);
    ssize_t w = write(fd, req, KS_HTTP_HEAD_MAX + 100);
    cr_expect_gt(w, 0);
    read_all(fd, buf, sizeof(buf));
    close(fd);
    free(req);
    static const char want[] = "HTTP/1.1 431 Request Header Fields Too Large\r\n";
    cr_expect(strncmp(buf, want, sizeof(want) - 1) == 0, "%s", buf);
    cr_expect_eq(calls, 0);
    ks_http_stop(h);
}

Test(http, slow_and_idle_clients_are_bounded)
{
    int port = 0, calls = 0;
    char buf[4096];
    struct ks_http *h = start_plain(&calls, &port, 2, 400);
    /* two idle connections take every slot... */
    int idle1 = connect_to(port);
    usleep(20000);
    int idle2 = connect_to(port);
    usleep(20000);
    /* ...and a third still gets its answer: it displaces the oldest one still in its head */
    exchange(port, "GET /healthz HTTP/1.1\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", buf);
    cr_expect_eq(read_all(idle1, buf, sizeof(buf)), 0, "the oldest idle connection was closed");
    /* an idle connection is closed at the timeout, without an answer */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_expect_eq(read_all(idle2, buf, sizeof(buf)), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_expect(s < 2.0, "closed after the 0.4 s timeout, not %.2f s", s);
    close(idle1);
    close(idle2);
    ks_http_stop(h);
}

/* ---- HTTPS with authentication and authorization ---------------------------------------- */

struct tls_server {
    struct ks_tls *tls;
    struct ks_auth *auth;
    struct ks_http *http;
    int port, calls;
};

static struct fake_reviews fake = FAKE_REVIEWS_INIT;

static void start_tls(struct tls_server *s)
{
    struct ks_tls_opts to = {0};
    cr_assert_eq(ks_tls_create(&to, &s->tls), 0);
    struct ks_auth_opts ao = {.transport = {.request = fake_reviews_request, .ctx = &fake},
                              .token_ttl_ns = INT64_C(10000000000),
                              .allow_ttl_ns = INT64_C(10000000000),
                              .deny_ttl_ns = INT64_C(10000000000)};
    cr_assert_eq(ks_auth_create(&ao, &s->auth), 0);
    struct ks_http_opts ho = {
        .addr = "127.0.0.1:0", .tls = s->tls, .auth = s->auth, .handler = handler, .ctx = &s->calls};
    cr_assert_eq(ks_http_start(&ho, &s->http, &s->port), 0);
}

static void stop_tls(struct tls_server *s)
{
    ks_http_stop(s->http);
    ks_auth_destroy(s->auth);
    ks_tls_destroy(s->tls);
}

/* One request over TLS (any certificate accepted); the answer in @buf, its status returned. */
static int tls_get(int port, const char *path, const char *token, char *buf, size_t len)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = SSL_new(ctx);
    int fd = connect_to(port);
    SSL_set_fd(ssl, fd);
    cr_assert_eq(SSL_connect(ssl), 1, "TLS handshake");
    char req[512];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\n%s%s%s\r\n", path,
                     token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "");
    cr_assert_eq(SSL_write(ssl, req, n), n);
    size_t got = 0;
    int r;
    while (got < len - 1 && (r = SSL_read(ssl, buf + got, (int)(len - 1 - got))) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    int status = 0;
    sscanf(buf, "HTTP/1.1 %d", &status);
    return status;
}

Test(https, probes_open_metrics_need_an_authorized_token)
{
    struct tls_server s = {0};
    start_tls(&s);
    char buf[8192];
    cr_expect_eq(tls_get(s.port, "/healthz", NULL, buf, sizeof(buf)), 200);
    cr_expect(strstr(buf, "\r\n\r\nok"), "%s", buf);
    cr_expect_eq(tls_get(s.port, "/metrics", NULL, buf, sizeof(buf)), 403, "anonymous: %s", buf);
    cr_expect(strstr(buf, "Content-Type: application/json\r\n") &&
                  strstr(buf, "\"message\":\"forbidden: User \\\"system:anonymous\\\" cannot get path "
                              "\\\"/metrics\\\"\""),
              "%s", buf);
    cr_expect_eq(tls_get(s.port, "/metrics", "nope", buf, sizeof(buf)), 401, "%s", buf);
    cr_expect(strstr(buf, "\"reason\":\"Unauthorized\",\"code\":401}\n"), "%s", buf);
    cr_expect_eq(tls_get(s.port, "/metrics", "good", buf, sizeof(buf)), 200, "%s", buf);
    cr_expect(strstr(buf, "\r\n\r\nx 1\n"), "%s", buf);
    cr_expect_eq(tls_get(s.port, "/metrics", "good", buf, sizeof(buf)), 200, "from the caches");
    cr_expect_eq(fake.token_reviews, 2, "good once (cached), nope once");
    cr_expect_eq(s.calls, 3, "the handler saw /healthz and the two authorized scrapes only");
    stop_tls(&s);
}

static void *slow_scrape(void *arg)
{
    static char buf[8192];
    return (void *)(intptr_t)tls_get(*(int *)arg, "/metrics", "good", buf, sizeof(buf));
}

Test(https, a_slow_review_does_not_hold_up_probes)
{
    struct tls_server s = {0};
    start_tls(&s);
    fake.delay_ms = 1500;
    pthread_t t;
    pthread_create(&t, NULL, slow_scrape, &s.port);
    usleep(200000); /* the scrape's review is under way */
    struct timespec t0, t1;
    char buf[4096];
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_expect_eq(tls_get(s.port, "/readyz", NULL, buf, sizeof(buf)), 404); /* this handler has no /readyz */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_expect(sec < 1.0, "a probe waited %.2f s behind a review", sec);
    void *status;
    pthread_join(t, &status);
    cr_expect_eq((int)(intptr_t)status, 200);
    stop_tls(&s);
}

Test(https, plain_text_to_the_tls_port_is_dropped)
{
    struct tls_server s = {0};
    start_tls(&s);
    char buf[4096];
    exchange(s.port, "GET /healthz HTTP/1.1\r\n\r\n", buf, sizeof(buf));
    cr_expect_null(strstr(buf, "HTTP/1.1 200"), "%s", buf);
    cr_expect_eq(s.calls, 0);
    cr_expect_eq(tls_get(s.port, "/healthz", NULL, buf, sizeof(buf)), 200, "still serving");
    stop_tls(&s);
}
