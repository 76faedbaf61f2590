/*
 * serve_http.c - the probe and metrics endpoint of `ksched serve` (cmd/serve.h): a
 * minimal HTTP/1.1 server on one thread for GET and HEAD only.
 *
 * Hand-written on sockets because it answers three fixed paths to probes and
 * Prometheus: one request per connection (Connection: close), request head at most 8 KiB,
 * a 5 s receive timeout so a silent client cannot hold the thread, anything but GET/HEAD
 * is 405. kube-scheduler serves these on its secure port; ksched serves plain HTTP on
 * loopback by default (--metrics-addr).
 */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct ks_http {
    int fd;
    int wake[2]; /* a byte on wake[1] stops the thread */
    pthread_t thread;
    ks_http_handler_fn handler;
    void *ctx;
};

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 500:
        return "Internal Server Error";
    default:
        return status >= 500 ? "Service Unavailable" : "Error";
    }
}

static void write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

static void respond(int fd, int status, const char *content_type, const char *body, size_t len, bool head)
{
    char hdr[512];
    int n = snprintf(hdr, sizeof(hdr),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nX-Content-Type-Options: "
                     "nosniff\r\nConnection: close\r\n\r\n",
                     status, status_text(status), content_type, len);
    write_all(fd, hdr, (size_t)n);
    if (!head)
        write_all(fd, body, len);
}

static void serve_one(struct ks_http *h, int fd)
{
    char req[8192];
    size_t got = 0;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    while (got < sizeof(req) - 1) {
        ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);
        if (n <= 0)
            return;
        got += (size_t)n;
        req[got] = '\0';
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
            break;
    }
    req[got] = '\0';
    char method[16], target[2048];
    if (sscanf(req, "%15s %2047s", method, target) != 2) {
        respond(fd, 400, "text/plain; charset=utf-8", "bad request\n", 12, false);
        return;
    }
    bool head = strcmp(method, "HEAD") == 0;
    if (!head && strcmp(method, "GET") != 0) {
        respond(fd, 405, "text/plain; charset=utf-8", "method not allowed\n", 19, false);
        return;
    }
    char *q = strchr(target, '?');
    if (q)
        *q = '\0';
    char *body = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&body, &len);
    if (!out) {
        respond(fd, 500, "text/plain; charset=utf-8", "out of memory\n", 14, head);
        return;
    }
    const char *type = "text/plain; charset=utf-8";
    int status = h->handler(h->ctx, target, out, &type);
    if (fclose(out) != 0) {
        free(body);
        respond(fd, 500, "text/plain; charset=utf-8", "out of memory\n", 14, head);
        return;
    }
    respond(fd, status, type, body ? body : "", len, head);
    free(body);
}

static void *http_main(void *arg)
{
    struct ks_http *h = arg;
    struct pollfd fds[2] = {{.fd = h->fd, .events = POLLIN}, {.fd = h->wake[0], .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[1].revents)
            break;
        if (!(fds[0].revents & POLLIN))
            continue;
        int c = accept(h->fd, NULL, NULL);
        if (c < 0)
            continue;
        serve_one(h, c);
        shutdown(c, SHUT_WR);
        close(c);
    }
    return NULL;
}

/* Split "host:port" / "[v6]:port" / ":port". */
static int split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon;
    if (addr[0] == '[') {
        const char *end = strchr(addr, ']');
        if (!end || end[1] != ':')
            return -EINVAL;
        snprintf(host, hlen, "%.*s", (int)(end - addr - 1), addr + 1);
        colon = end + 1;
    } else {
        if (!(colon = strrchr(addr, ':')))
            return -EINVAL;
        snprintf(host, hlen, "%.*s", (int)(colon - addr), addr);
    }
    snprintf(port, plen, "%s", colon + 1);
    return port[0] ? 0 : -EINVAL;
}

int ks_http_start(const char *addr, ks_http_handler_fn handler, void *ctx, struct ks_http **out,
                  int *bound_port)
{
    char host[256], port[32];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    if (split_addr(addr, host, sizeof(host), port, sizeof(port)) < 0) {
        fprintf(stderr, "ksched serve: --metrics-addr \"%s\": expected HOST:PORT\n", addr);
        return -EINVAL;
    }
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc) {
        fprintf(stderr, "ksched serve: --metrics-addr \"%s\": %s\n", addr, gai_strerror(rc));
        return -EINVAL;
    }
    struct ks_http *h = calloc(1, sizeof(*h));
    if (!h) {
        freeaddrinfo(ai);
        return -ENOMEM;
    }
    h->handler = handler;
    h->ctx = ctx;
    h->wake[0] = h->wake[1] = -1;
    h->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (h->fd < 0 || setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(h->fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(h->fd, 64) < 0 ||
        pipe2(h->wake, O_CLOEXEC) < 0) {
        rc = -errno;
        fprintf(stderr, "ksched serve: listening on %s: %s\n", addr, strerror(errno));
        goto err;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(h->fd, (struct sockaddr *)&ss, &sl) == 0 && bound_port) {
        char p[32];
        if (getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, p, sizeof(p), NI_NUMERICSERV) == 0)
            *bound_port = atoi(p);
    }
    if ((rc = -pthread_create(&h->thread, NULL, http_main, h)) < 0)
        goto err;
    freeaddrinfo(ai);
    *out = h;
    return 0;
err:
    freeaddrinfo(ai);
    if (h->fd >= 0)
        close(h->fd);
    if (h->wake[0] >= 0) {
        close(h->wake[0]);
        close(h->wake[1]);
    }
    free(h);
    return rc;
}

void ks_http_stop(struct ks_http *h)
{
    if (!h)
        return;
    ssize_t n = write(h->wake[1], "x", 1);
    (void)n;
    pthread_join(h->thread, NULL);
    close(h->fd);
    close(h->wake[0]);
    close(h->wake[1]);
    free(h);
}
