/*
 * http_script.c - the scripted HTTP/1.1 test server (see http_script.h).
 *
 * Not globbed into the unit suite by itself: test_http_script.c includes it once for
 * ksched_unit, and stress drivers include it directly.
 */
#include "http_script.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { KS_HTTP_MAX_CONNS = 64, KS_HTTP_MAX_REQS = 1024 };

struct conn {
    struct ks_script_server *srv;
    int fd;
    pthread_t thread;
    bool used;
    atomic_bool done; /* the thread is about to return: join it and reuse the slot */
};

struct ks_script_server {
    int lfd;
    int wake[2]; /* written once at stop: every poll() wakes */
    int port;
    char url[64];
    pthread_t accept_thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct ks_script_step *steps;
    bool *used;
    int nsteps;
    struct ks_script_request reqs[KS_HTTP_MAX_REQS];
    int nreqs;
    struct conn conns[KS_HTTP_MAX_CONNS];
    int nconns;
};

/* Wait until @fd is readable or the server stops: 1 readable, 0 stopping. */
static int wait_readable(struct ks_script_server *s, int fd)
{
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = s->wake[0], .events = POLLIN}};
    for (;;) {
        int rc = poll(p, 2, -1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0 || (p[1].revents & POLLIN))
            return 0;
        if (p[0].revents)
            return 1;
    }
}

static int send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 404:
        return "Not Found";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    default:
        return "Status";
    }
}

static void header_value(const char *head, const char *name, char *out, size_t cap)
{
    size_t nlen = strlen(name);
    out[0] = '\0';
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nlen) == 0 && p[2 + nlen] == ':') {
            const char *v = p + 3 + nlen;
            while (*v == ' ')
                v++;
            size_t len = strcspn(v, "\r\n");
            snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), v);
            return;
        }
    }
}

/* Record the request and pick its step (-1: none). */
static int route(struct ks_script_server *s, struct ks_script_request *req)
{
    int step = -1;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->nsteps; i++) {
        const struct ks_script_step *st = &s->steps[i];
        if (s->used[i] || (st->method && strcmp(st->method, req->method) != 0) ||
            (st->path && strncmp(req->target, st->path, strlen(st->path)) != 0))
            continue;
        if (!st->repeat)
            s->used[i] = true;
        step = i;
        break;
    }
    req->step = step;
    if (s->nreqs < KS_HTTP_MAX_REQS)
        s->reqs[s->nreqs++] = *req;
    else
        free(req->body);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return step;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Answer with step @i; 0 to keep the connection, -1 to close it. */
static int respond(struct ks_script_server *s, int fd, int i)
{
    char head[512];
    if (i < 0) {
        static const char nf[] = "{\"kind\":\"Status\",\"code\":404}";
        int n = snprintf(
            head, sizeof(head),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
            sizeof(nf) - 1);
        return send_all(fd, head, (size_t)n) || send_all(fd, nf, sizeof(nf) - 1) ? -1 : 0;
    }
    const struct ks_script_step *st = &s->steps[i];
    const char *ctype = st->content_type ? st->content_type : "application/json";
    if (!st->chunks[0]) {
        const char *body = st->body ? st->body : "";
        size_t blen = st->body_len ? st->body_len : strlen(body);
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%sContent-Length: %zu\r\n\r\n", st->status,
                         reason(st->status), ctype, st->headers ? st->headers : "", blen);
        return send_all(fd, head, (size_t)n) || send_all(fd, body, blen) ? -1 : 0;
    }
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", st->status,
                     reason(st->status), ctype);
    if (send_all(fd, head, (size_t)n))
        return -1;
    for (int c = 0; c < KS_HTTP_MAX_CHUNKS && st->chunks[c]; c++) {
        if (st->delay_ms)
            sleep_ms(st->delay_ms);
        size_t len = st->chunk_lens[c] ? st->chunk_lens[c] : strlen(st->chunks[c]);
        n = snprintf(head, sizeof(head), "%zx\r\n", len);
        if (send_all(fd, head, (size_t)n) || send_all(fd, st->chunks[c], len) || send_all(fd, "\r\n", 2))
            return -1;
    }
    if (st->close_mid)
        return -1;
    if (st->hold) {
        char drain[256];
        while (wait_readable(s, fd)) /* until the client goes away or the server stops */
            if (recv(fd, drain, sizeof(drain), 0) <= 0)
                break;
        return -1;
    }
    return send_all(fd, "0\r\n\r\n", 5) ? -1 : 0;
}

static void *serve_conn(void *arg)
{
    struct conn *c = arg;
    struct ks_script_server *s = c->srv;
    char *buf = NULL;
    size_t len = 0, cap = 0;

    for (;;) {
        char *end;
        while (!(end = buf ? memmem(buf, len, "\r\n\r\n", 4) : NULL)) {
            if (cap - len < 4096) {
                cap = cap ? cap * 2 : 8192;
                buf = realloc(buf, cap);
            }
            if (!wait_readable(s, c->fd))
                goto out;
            ssize_t n = recv(c->fd, buf + len, cap - len - 1, 0);
            if (n <= 0)
                goto out;
            len += (size_t)n;
            buf[len] = '\0';
        }
        size_t head_len = (size_t)(end - buf) + 4;
        struct ks_script_request req = {0};
        char cl[32];
        end[2] = '\0';
        sscanf(buf, "%15s %1023s", req.method, req.target);
        header_value(buf, "Authorization", req.authorization, sizeof(req.authorization));
        header_value(buf, "Content-Type", req.content_type, sizeof(req.content_type));
        header_value(buf, "Accept", req.accept, sizeof(req.accept));
        header_value(buf, "Content-Length", cl, sizeof(cl));
        size_t blen = cl[0] ? strtoul(cl, NULL, 10) : 0;
        while (len < head_len + blen) {
            if (cap - len < blen + 1) {
                cap = head_len + blen + 1;
                buf = realloc(buf, cap);
            }
            if (!wait_readable(s, c->fd))
                goto out;
            ssize_t n = recv(c->fd, buf + len, cap - len - 1, 0);
            if (n <= 0)
                goto out;
            len += (size_t)n;
        }
        req.body = malloc(blen + 1);
        memcpy(req.body, buf + head_len, blen);
        req.body[blen] = '\0';
        req.body_len = blen;
        memmove(buf, buf + head_len + blen, len - head_len - blen);
        len -= head_len + blen;
        if (respond(s, c->fd, route(s, &req)) < 0)
            goto out;
    }
out:
    free(buf);
    shutdown(c->fd, SHUT_RDWR);
    atomic_store_explicit(&c->done, true, memory_order_release);
    return NULL;
}

static void *accept_loop(void *arg)
{
    struct ks_script_server *s = arg;
    while (wait_readable(s, s->lfd)) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        int one = 1; /* responses go out in several sends: no Nagle/delayed-ACK stalls */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        /* reuse the slot of a finished connection; only this thread adds connections */
        struct conn *c = NULL;
        for (int i = 0; i < s->nconns && !c; i++) {
            if (atomic_load_explicit(&s->conns[i].done, memory_order_acquire)) {
                pthread_join(s->conns[i].thread, NULL);
                close(s->conns[i].fd);
                s->conns[i].used = false;
                atomic_store_explicit(&s->conns[i].done, false, memory_order_relaxed);
            }
            if (!s->conns[i].used)
                c = &s->conns[i];
        }
        if (!c && s->nconns < KS_HTTP_MAX_CONNS)
            c = &s->conns[s->nconns++];
        if (!c) {
            close(fd);
            continue;
        }
        c->srv = s;
        c->fd = fd;
        c->used = true;
        if (pthread_create(&c->thread, NULL, serve_conn, c) != 0) {
            c->used = false;
            close(fd);
        }
    }
    return NULL;
}

struct ks_script_server *ks_script_start(const struct ks_script_step *steps, int nsteps)
{
    struct ks_script_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    int one = 1;

    if (!s)
        return NULL;
    s->steps = calloc((size_t)nsteps + 1, sizeof(*s->steps));
    s->used = calloc((size_t)nsteps + 1, sizeof(*s->used));
    if (nsteps)
        memcpy(s->steps, steps, (size_t)nsteps * sizeof(*steps));
    s->nsteps = nsteps;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    if (pipe(s->wake) != 0 || (s->lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
        abort();
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s->lfd, 64) != 0 ||
        getsockname(s->lfd, (struct sockaddr *)&a, &alen) != 0)
        abort();
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
    if (pthread_create(&s->accept_thread, NULL, accept_loop, s) != 0)
        abort();
    return s;
}

int ks_script_port(const struct ks_script_server *s)
{
    return s->port;
}

const char *ks_script_url(const struct ks_script_server *s)
{
    return s->url;
}

int ks_script_nrequests(struct ks_script_server *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->nreqs;
    pthread_mutex_unlock(&s->lock);
    return n;
}

struct ks_script_request ks_script_request_at(struct ks_script_server *s, int i)
{
    pthread_mutex_lock(&s->lock);
    struct ks_script_request r = s->reqs[i];
    pthread_mutex_unlock(&s->lock);
    return r;
}

int ks_script_wait_requests(struct ks_script_server *s, int n, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->lock);
    while (s->nreqs < n && pthread_cond_timedwait(&s->cond, &s->lock, &until) == 0)
        ;
    int got = s->nreqs;
    pthread_mutex_unlock(&s->lock);
    return got;
}

void ks_script_stop(struct ks_script_server *s)
{
    if (!s)
        return;
    if (write(s->wake[1], "x", 1) != 1)
        abort();
    pthread_join(s->accept_thread, NULL);
    for (int i = 0; i < s->nconns; i++) {
        if (s->conns[i].used) {
            pthread_join(s->conns[i].thread, NULL);
            close(s->conns[i].fd);
        }
    }
    close(s->lfd);
    close(s->wake[0]);
    close(s->wake[1]);
    for (int i = 0; i < s->nreqs; i++)
        free(s->reqs[i].body);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    free(s->steps);
    free(s->used);
    free(s);
}
