/*
 * serve_http.c - the probe and metrics endpoint of `ksched serve` (serve/serve.h): a small
 * HTTP/1.1 server, plain or TLS (OpenSSL), with kube-scheduler's delegated authentication
 * and authorization in front of the handler when it serves the secure port.
 *
 * One thread runs an event loop over non-blocking sockets (poll): TLS handshakes, request
 * heads, answers. It never waits on anything but poll: a request the caches and rules of
 * ks_auth cannot settle at once (a token not yet reviewed, an access not yet reviewed)
 * goes to a small pool of worker threads that call the API server, and comes back through
 * a pipe; everything else, and the handler itself, runs on the loop thread, one request
 * at a time (so the handler needs no locking of its own).
 *
 * Not a denial-of-service lever: at most max_conns connections, each with timeout_ms for
 * its handshake and head and as long for its answer; a head is at most KS_HTTP_HEAD_MAX
 * bytes (431 past it); one request per connection (Connection: close); no request body is
 * read; when every connection slot is taken, a new connection displaces the oldest one
 * still in its handshake or head, so idle or slow clients cannot lock probes out. Reviews
 * go through their own API client with its own rate limit (see serve_run.c). The server
 * shares nothing with the scheduler but what the handler reads.
 *
 * Connection states: HANDSHAKE (TLS only) -> HEAD -> [AUTH, owned by a worker] -> ANSWER
 * -> closed. A connection in AUTH is not polled and has no deadline (its review has the
 * API client's); slots carry a generation so a late answer finds its connection gone.
 */
#include "serve.h"

#include "ksched/base/lock.h"
#include "ksched/base/spin.h" /* ks__mono_ns */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum conn_state { C_FREE, C_HANDSHAKE, C_HEAD, C_AUTH, C_ANSWER };

struct conn {
    enum conn_state st;
    int fd;
    SSL *ssl;
    uint32_t gen;
    short events; /* what the next step waits for */
    int64_t started_ns, deadline_ns;
    char *in;
    size_t inlen, incap;
    char *out;
    size_t outlen, outpos;
    bool head; /* HEAD: no body */
    struct ks_http_request req;
};

/* A request waiting on the API server (strings owned). */
struct job {
    struct job *next;
    uint32_t slot, gen;
    char *authorization, *path, *uri;
    char method[16];
    int rc;
    struct ks_auth_result res;
};

struct ks_http {
    int fd;
    int wake[2]; /* a byte on wake[1] stops the loop */
    int done[2]; /* a byte on done[1]: a worker finished a job */
    pthread_t thread;
    struct ks_tls *tls;
    struct ks_auth *auth;
    ks_http_handler_fn handler;
    void *ctx;
    uint32_t max_conns, nconns;
    int64_t timeout_ns;
    int64_t accept_after_ns; /* out of descriptors: the listener rests until then */
    struct conn *conns;
    struct pollfd *pfds;
    uint32_t *pslot;

    struct ks_mutex lock; /* the job lists and quit */
    pthread_cond_t cond;
    struct job *todo, **todo_tail, *finished;
    bool quit;
    pthread_t *workers;
    uint32_t nworkers;
};

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 414:
        return "URI Too Long";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return status >= 500 ? "Service Unavailable" : "Error";
    }
}

/* ---- jobs ------------------------------------------------------------------------------- */

static void job_free(struct job *j)
{
    if (!j)
        return;
    if (j->authorization) {
        explicit_bzero(j->authorization, strlen(j->authorization));
        free(j->authorization);
    }
    free(j->path);
    free(j->uri);
    ks_auth_result_free(&j->res);
    free(j);
}

static void *worker_main(void *arg)
{
    struct ks_http *h = arg;
    ks_mutex_lock(&h->lock);
    for (;;) {
        while (!h->todo && !h->quit)
            ks_cond_wait(&h->cond, &h->lock);
        if (h->quit)
            break;
        struct job *j = h->todo;
        if (!(h->todo = j->next))
            h->todo_tail = &h->todo;
        ks_mutex_unlock(&h->lock);
        struct ks_auth_request req = {
            .authorization = j->authorization, .method = j->method, .path = j->path, .uri = j->uri};
        j->rc = ks_auth_check(h->auth, &req, 0, 0, &j->res);
        ks_mutex_lock(&h->lock);
        j->next = h->finished;
        h->finished = j;
        ssize_t n = write(h->done[1], "x", 1); /* a full pipe already says it */
        (void)n;
    }
    ks_mutex_unlock(&h->lock);
    return NULL;
}

/* ---- connections ------------------------------------------------------------------------ */

static void conn_close(struct ks_http *h, struct conn *c, bool clean)
{
    if (c->ssl) {
        if (clean) {
            ERR_clear_error();
            SSL_shutdown(c->ssl); /* close_notify, once, without waiting for the peer's */
        }
        SSL_free(c->ssl);
        ERR_clear_error();
    } else if (clean) {
        shutdown(c->fd, SHUT_WR);
    }
    close(c->fd);
    if (c->in)
        explicit_bzero(c->in, c->inlen); /* it may hold a bearer token */
    free(c->in);
    free(c->out);
    uint32_t gen = c->gen + 1;
    memset(c, 0, offsetof(struct conn, req));
    c->gen = gen;
    c->fd = -1;
    h->nconns--;
}

/* Bytes in or out: >0 moved, 0 the peer closed, -EAGAIN (c->events set), or -EIO. */
static ssize_t conn_io(struct conn *c, char *buf, size_t len, bool write)
{
    if (c->ssl) {
        size_t n = 0;
        ERR_clear_error();
        int ok = write ? SSL_write_ex(c->ssl, buf, len, &n) : SSL_read_ex(c->ssl, buf, len, &n);
        if (ok)
            return (ssize_t)n;
        switch (SSL_get_error(c->ssl, ok)) {
        case SSL_ERROR_WANT_READ:
            c->events = POLLIN;
            return -EAGAIN;
        case SSL_ERROR_WANT_WRITE:
            c->events = POLLOUT;
            return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
            return 0;
        default:
            return -EIO;
        }
    }
    for (;;) {
        ssize_t n = write ? send(c->fd, buf, len, MSG_NOSIGNAL) : recv(c->fd, buf, len, 0);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->events = write ? POLLOUT : POLLIN;
            return -EAGAIN;
        }
        return -EIO;
    }
}

static void step(struct ks_http *h, struct conn *c, int64_t now);

/* Answer @status with @body and start writing it. */
static void respond(struct ks_http *h, struct conn *c, int status, const char *content_type, const char *body,
                    size_t len, int64_t now)
{
    char hdr[512];
    int n = snprintf(hdr, sizeof(hdr),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nX-Content-Type-Options: "
                     "nosniff\r\nCache-Control: no-cache, private\r\nConnection: close\r\n\r\n",
                     status, status_text(status), content_type, len);
    size_t blen = c->head ? 0 : len;
    if (c->in)
        explicit_bzero(c->in, c->inlen); /* the head is no longer needed; it may hold a bearer token */
    free(c->in);
    c->in = NULL;
    c->inlen = c->incap = 0;
    c->req.authorization = NULL;
    if (!(c->out = malloc((size_t)n + blen))) {
        conn_close(h, c, false);
        return;
    }
    memcpy(c->out, hdr, (size_t)n);
    if (blen)
        memcpy(c->out + n, body, blen);
    c->outlen = (size_t)n + blen;
    c->outpos = 0;
    c->st = C_ANSWER;
    c->deadline_ns = now + h->timeout_ns;
    step(h, c, now);
}

static void respond_text(struct ks_http *h, struct conn *c, int status, const char *text, int64_t now)
{
    respond(h, c, status, "text/plain; charset=utf-8", text, strlen(text), now);
}

/* An authorized request: GET and HEAD go to the handler. */
static void serve(struct ks_http *h, struct conn *c, int64_t now)
{
    if (!c->head && strcmp(c->req.method, "GET") != 0) {
        respond_text(h, c, 405, "method not allowed\n", now);
        return;
    }
    char *body = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&body, &len);
    if (!out) {
        respond_text(h, c, 500, "out of memory\n", now);
        return;
    }
    const char *type = "text/plain; charset=utf-8";
    int status = h->handler(h->ctx, c->req.path, out, &type);
    if (fclose(out) != 0) {
        free(body);
        respond_text(h, c, 500, "out of memory\n", now);
        return;
    }
    respond(h, c, status, type, body ? body : "", len, now);
    free(body);
}

static void settle(struct ks_http *h, struct conn *c, int rc, struct ks_auth_result *res, int64_t now)
{
    if (rc < 0)
        respond_text(h, c, 500, "out of memory\n", now);
    else if (res->status)
        respond(h, c, res->status, res->content_type, res->body, res->len, now);
    else
        serve(h, c, now);
}

/* A complete head in c->in: parse it, then authorize (here, or on a worker) and answer. */
static void on_head(struct ks_http *h, struct conn *c, size_t head_len, int64_t now)
{
    int status = ks_http_parse_request(c->in, head_len, &c->req);
    if (status) {
        char text[64];
        snprintf(text, sizeof(text), "%s\n", status_text(status));
        respond_text(h, c, status, text, now);
        return;
    }
    c->head = strcmp(c->req.method, "HEAD") == 0;
    if (!h->auth) {
        serve(h, c, now);
        return;
    }
    struct ks_auth_request req = {.authorization = c->req.authorization,
                                  .method = c->req.method,
                                  .path = c->req.path,
                                  .uri = c->req.target};
    struct ks_auth_result res;
    int rc = ks_auth_check(h->auth, &req, KS_AUTH_NONBLOCK, 0, &res);
    if (rc != -EWOULDBLOCK) {
        settle(h, c, rc, &res, now);
        if (rc == 0)
            ks_auth_result_free(&res);
        return;
    }
    struct job *j = calloc(1, sizeof(*j));
    if (!j || (c->req.authorization && !(j->authorization = strdup(c->req.authorization))) ||
        !(j->path = strdup(c->req.path)) || !(j->uri = strdup(c->req.target))) {
        job_free(j);
        respond_text(h, c, 500, "out of memory\n", now);
        return;
    }
    memcpy(j->method, c->req.method, sizeof(j->method));
    j->slot = (uint32_t)(c - h->conns);
    j->gen = c->gen;
    c->st = C_AUTH;
    c->events = 0;
    ks_mutex_lock(&h->lock);
    *h->todo_tail = j;
    h->todo_tail = &j->next;
    pthread_cond_signal(&h->cond);
    ks_mutex_unlock(&h->lock);
}

/* Move @c along as far as its socket allows. */
static void step(struct ks_http *h, struct conn *c, int64_t now)
{
    if (c->st == C_HANDSHAKE) {
        ERR_clear_error();
        int ok = SSL_do_handshake(c->ssl);
        if (ok != 1) {
            int e = SSL_get_error(c->ssl, ok);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                c->events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
            else
                conn_close(h, c, false);
            return;
        }
        c->st = C_HEAD;
    }
    if (c->st == C_HEAD) {
        for (;;) {
            if (c->inlen == c->incap) {
                if (c->incap >= KS_HTTP_HEAD_MAX) {
                    respond_text(h, c, 431, "request header fields too large\n", now);
                    return;
                }
                size_t cap = c->incap ? c->incap * 2 : 4096;
                char *p = realloc(c->in, cap);
                if (!p) {
                    conn_close(h, c, false);
                    return;
                }
                c->in = p;
                c->incap = cap;
            }
            ssize_t n = conn_io(c, c->in + c->inlen, c->incap - c->inlen, false);
            if (n == -EAGAIN)
                return;
            if (n <= 0) {
                conn_close(h, c, false);
                return;
            }
            size_t from = c->inlen > 3 ? c->inlen - 3 : 0;
            c->inlen += (size_t)n;
            size_t end = ks_http_head_len(c->in + from, c->inlen - from);
            if (end) {
                on_head(h, c, from + end, now);
                return;
            }
        }
    }
    if (c->st == C_ANSWER) {
        while (c->outpos < c->outlen) {
            ssize_t n = conn_io(c, c->out + c->outpos, c->outlen - c->outpos, true);
            if (n == -EAGAIN)
                return;
            if (n <= 0) {
                conn_close(h, c, false);
                return;
            }
            c->outpos += (size_t)n;
        }
        conn_close(h, c, true);
    }
}

/* Take the connections waiting in the backlog. */
static void accept_all(struct ks_http *h, int64_t now)
{
    for (int k = 0; k < 64; k++) {
        int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* EAGAIN, or a connection that died in the backlog; without descriptors or memory
             * the backlog stays readable, so rest rather than spin */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                h->accept_after_ns = now + INT64_C(100000000);
            return;
        }
        struct conn *c = NULL, *oldest = NULL;
        for (uint32_t i = 0; i < h->max_conns && !c; i++) {
            struct conn *x = &h->conns[i];
            if (x->st == C_FREE)
                c = x;
            else if ((x->st == C_HANDSHAKE || x->st == C_HEAD) &&
                     (!oldest || x->started_ns < oldest->started_ns))
                oldest = x;
        }
        if (!c && oldest) {
            conn_close(h, oldest, false);
            c = oldest;
        }
        if (!c) {
            close(fd); /* every slot waits on a review or writes an answer */
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c->fd = fd;
        c->started_ns = now;
        c->deadline_ns = now + h->timeout_ns;
        c->events = POLLIN;
        c->st = C_HEAD;
        h->nconns++;
        if (h->tls) {
            if (!(c->ssl = SSL_new(ks_tls_ctx(h->tls))) || !SSL_set_fd(c->ssl, fd)) {
                conn_close(h, c, false);
                continue;
            }
            SSL_set_accept_state(c->ssl);
            c->st = C_HANDSHAKE;
        }
    }
}

/* Answers of the workers: finish their connections. */
static void take_finished(struct ks_http *h, int64_t now)
{
    char drain[64];
    while (read(h->done[0], drain, sizeof(drain)) > 0)
        ;
    ks_mutex_lock(&h->lock);
    struct job *j = h->finished;
    h->finished = NULL;
    ks_mutex_unlock(&h->lock);
    while (j) {
        struct job *next = j->next;
        struct conn *c = &h->conns[j->slot];
        if (c->st == C_AUTH && c->gen == j->gen)
            settle(h, c, j->rc, &j->res, now);
        job_free(j);
        j = next;
    }
}

static void *http_main(void *arg)
{
    struct ks_http *h = arg;
    /* OpenSSL writes with write(2): a peer gone mid-handshake must not kill the process */
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    for (;;) {
        int64_t now = ks__mono_ns();
        if (h->tls)
            ks_tls_refresh(h->tls, now, false);
        int64_t next = now + INT64_C(30000000000);
        nfds_t n = 0;
        h->pfds[n++] = (struct pollfd){.fd = h->wake[0], .events = POLLIN};
        h->pfds[n++] = (struct pollfd){.fd = h->done[0], .events = POLLIN};
        bool listening = now >= h->accept_after_ns;
        h->pfds[n++] = (struct pollfd){.fd = listening ? h->fd : -1, .events = POLLIN};
        if (!listening)
            next = h->accept_after_ns;
        for (uint32_t i = 0; i < h->max_conns; i++) {
            struct conn *c = &h->conns[i];
            if (c->st == C_FREE || c->st == C_AUTH)
                continue;
            if (c->deadline_ns <= now) {
                conn_close(h, c, false); /* too slow: no answer */
                continue;
            }
            if (c->deadline_ns < next)
                next = c->deadline_ns;
            h->pslot[n] = i;
            h->pfds[n++] = (struct pollfd){.fd = c->fd, .events = c->events};
        }
        int ms = (int)((next - now + 999999) / 1000000);
        if (poll(h->pfds, n, ms) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        now = ks__mono_ns();
        if (h->pfds[0].revents)
            break;
        if (h->pfds[1].revents)
            take_finished(h, now);
        for (nfds_t k = 3; k < n; k++) {
            struct conn *c = &h->conns[h->pslot[k]];
            if (h->pfds[k].revents && c->fd == h->pfds[k].fd && c->st != C_FREE && c->st != C_AUTH)
                step(h, c, now);
        }
        if (h->pfds[2].revents & POLLIN)
            accept_all(h, now);
    }
    return NULL;
}

/* ---- start and stop --------------------------------------------------------------------- */

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

static void free_server(struct ks_http *h)
{
    for (uint32_t i = 0; h->conns && i < h->max_conns; i++)
        if (h->conns[i].st != C_FREE)
            conn_close(h, &h->conns[i], false);
    while (h->todo) {
        struct job *j = h->todo;
        h->todo = j->next;
        job_free(j);
    }
    while (h->finished) {
        struct job *j = h->finished;
        h->finished = j->next;
        job_free(j);
    }
    for (int k = 0; k < 2; k++) {
        if (h->wake[k] >= 0)
            close(h->wake[k]);
        if (h->done[k] >= 0)
            close(h->done[k]);
    }
    if (h->fd >= 0)
        close(h->fd);
    pthread_cond_destroy(&h->cond);
    ks_mutex_destroy(&h->lock);
    free(h->workers);
    free(h->conns);
    free(h->pfds);
    free(h->pslot);
    free(h);
}

static void stop_workers(struct ks_http *h)
{
    ks_mutex_lock(&h->lock);
    h->quit = true;
    pthread_cond_broadcast(&h->cond);
    ks_mutex_unlock(&h->lock);
    for (uint32_t i = 0; i < h->nworkers; i++)
        pthread_join(h->workers[i], NULL);
    h->nworkers = 0;
}

int ks_http_start(const struct ks_http_opts *o, struct ks_http **out, int *bound_port)
{
    const char *flag = o->flag ? o->flag : "--metrics-addr";
    char host[256], port[32];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    if (split_addr(o->addr, host, sizeof(host), port, sizeof(port)) < 0) {
        fprintf(stderr, "ksched serve: %s \"%s\": expected HOST:PORT\n", flag, o->addr);
        return -EINVAL;
    }
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc) {
        fprintf(stderr, "ksched serve: %s \"%s\": %s\n", flag, o->addr, gai_strerror(rc));
        return -EINVAL;
    }
    struct ks_http *h = calloc(1, sizeof(*h));
    if (!h) {
        freeaddrinfo(ai);
        return -ENOMEM;
    }
    h->fd = h->wake[0] = h->wake[1] = h->done[0] = h->done[1] = -1;
    ks_mutex_init(&h->lock, KS_LOCK_SERVE_HTTP_JOBS);
    pthread_cond_init(&h->cond, NULL);
    h->todo_tail = &h->todo;
    h->tls = o->tls;
    h->auth = o->auth;
    h->handler = o->handler;
    h->ctx = o->ctx;
    h->max_conns = o->max_conns ? o->max_conns : 128;
    h->timeout_ns = (o->timeout_ms > 0 ? o->timeout_ms : 10000) * INT64_C(1000000);
    uint32_t nworkers = o->auth ? (o->workers ? o->workers : 2) : 0;
    if (!(h->conns = calloc(h->max_conns, sizeof(*h->conns))) ||
        !(h->pfds = calloc(h->max_conns + 3, sizeof(*h->pfds))) ||
        !(h->pslot = calloc(h->max_conns + 3, sizeof(*h->pslot))) ||
        (nworkers && !(h->workers = calloc(nworkers, sizeof(*h->workers))))) {
        rc = -ENOMEM;
        goto err;
    }
    for (uint32_t i = 0; i < h->max_conns; i++)
        h->conns[i].fd = -1;
    h->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (h->fd < 0 || setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(h->fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(h->fd, 128) < 0 ||
        pipe2(h->wake, O_CLOEXEC) < 0 || pipe2(h->done, O_CLOEXEC | O_NONBLOCK) < 0) {
        rc = -errno;
        fprintf(stderr, "ksched serve: listening on %s: %s\n", o->addr, strerror(errno));
        goto err;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(h->fd, (struct sockaddr *)&ss, &sl) == 0 && bound_port) {
        char p[32];
        if (getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, p, sizeof(p), NI_NUMERICSERV) == 0)
            *bound_port = atoi(p);
    }
    for (; h->nworkers < nworkers; h->nworkers++)
        if ((rc = -pthread_create(&h->workers[h->nworkers], NULL, worker_main, h)) < 0)
            goto err;
    if ((rc = -pthread_create(&h->thread, NULL, http_main, h)) < 0)
        goto err;
    freeaddrinfo(ai);
    *out = h;
    return 0;
err:
    freeaddrinfo(ai);
    stop_workers(h);
    free_server(h);
    return rc;
}

void ks_http_stop(struct ks_http *h)
{
    if (!h)
        return;
    ssize_t n = write(h->wake[1], "x", 1);
    (void)n;
    pthread_join(h->thread, NULL);
    stop_workers(h);
    free_server(h);
}
