/*
 * test_http.c - the probe/metrics endpoint (cmd/serve_http.c): GET and HEAD answered by
 * the handler with Content-Length and Connection: close, other methods 405, a free port
 * picked for ":0".
 */
#include <criterion/criterion.h>

#include "serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int handler(void *ctx, const char *path, FILE *out, const char **content_type)
{
    (*(int *)ctx)++;
    if (strcmp(path, "/metrics") == 0) {
        *content_type = "text/plain; version=0.0.4; charset=utf-8";
        fputs("x 1\n", out);
        return 200;
    }
    fputs("nope\n", out);
    return 404;
}

/* Send @req to 127.0.0.1:@port and read the whole answer into @buf. */
static void exchange(int port, const char *req, char *buf, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    size_t got = 0;
    ssize_t n;
    while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(fd);
}

Test(http, get_head_and_errors)
{
    struct ks_http *h;
    int port = 0, calls = 0;
    char buf[4096];
    cr_assert_eq(ks_http_start("127.0.0.1:0", handler, &calls, &h, &port), 0);
    cr_assert_gt(port, 0);

    exchange(port, "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", buf, sizeof(buf));
    cr_expect_str_eq(
        buf, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
             "Content-Length: 4\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nx 1\n");
    exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n", buf, sizeof(buf));
    cr_expect(strstr(buf, "Content-Length: 4\r\n") && !strstr(buf, "x 1"), "HEAD has no body: %s", buf);
    exchange(port, "GET /other HTTP/1.0\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 404 Not Found\r\n", 24) == 0, "%s", buf);
    exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 405 ", 13) == 0, "%s", buf);
    exchange(port, "garbage\r\n\r\n", buf, sizeof(buf));
    cr_expect(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s", buf);
    cr_expect_eq(calls, 3, "the handler answers GET and HEAD only");
    ks_http_stop(h);
}

Test(http, bad_addresses)
{
    struct ks_http *h;
    int calls = 0;
    cr_expect_eq(ks_http_start("nonsense", handler, &calls, &h, NULL), -EINVAL);
    cr_expect_eq(ks_http_start("[::1", handler, &calls, &h, NULL), -EINVAL);
    cr_expect_eq(ks_http_start("127.0.0.1:", handler, &calls, &h, NULL), -EINVAL);
}
