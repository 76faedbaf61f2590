/*
 * http_script.h - a tiny deterministic HTTP/1.1 server for the kube client tests.
 *
 * One thread accepts on 127.0.0.1 (an ephemeral port) and one thread per connection
 * serves keep-alive requests. Each request takes the first unused step of the script
 * whose method and path prefix match (a `repeat` step is never used up), so every
 * resource's sequence of responses is fixed whatever order concurrent requests arrive
 * in. A request no step matches gets 404. Every request is recorded for assertions.
 *
 * A step answers with a Content-Length body, or with chunks (Transfer-Encoding:
 * chunked), after which it either ends the response, closes the connection without the
 * final chunk (`close_mid`: a watch the server drops), or holds the connection open until
 * the server stops (`hold`: a quiet watch).
 */
#ifndef KS_TEST_HTTP_SCRIPT_H
#define KS_TEST_HTTP_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#define KS_HTTP_MAX_CHUNKS 16

struct ks_script_step {
    const char *method; /* NULL: any */
    const char *path;   /* prefix of the request target (path and query); NULL: any */
    int status;
    const char *body;                       /* with Content-Length when chunks[0] is NULL */
    const char *chunks[KS_HTTP_MAX_CHUNKS]; /* chunked body, NULL-terminated */
    bool close_mid;                         /* drop the connection after the chunks */
    bool hold;                              /* keep the stream open until the server stops */
    bool repeat;                            /* never used up */
    int delay_ms;                           /* pause before each chunk (to split reads) */
    const char *headers;      /* extra header lines, each ending "\r\n" (Content-Length replies) */
    const char *content_type; /* NULL: application/json */
    size_t body_len;          /* bytes of body when they hold NULs (protobuf); 0: strlen */
    size_t chunk_lens[KS_HTTP_MAX_CHUNKS]; /* the same for each chunk */
};

struct ks_script_request {
    char method[16];
    char target[1024];
    char authorization[512];
    char content_type[128];
    char accept[256];
    char *body; /* NUL-terminated */
    size_t body_len;
    int step; /* index of the step that answered, -1 for 404 */
};

struct ks_script_server;

/* ks_script_start - serve @nsteps steps (copied) on 127.0.0.1; NULL on failure. */
struct ks_script_server *ks_script_start(const struct ks_script_step *steps, int nsteps);

/* ks_script_port - the port it listens on. */
int ks_script_port(const struct ks_script_server *s);

/* ks_script_url - "http://127.0.0.1:PORT" (owned by the server). */
const char *ks_script_url(const struct ks_script_server *s);

/* ks_script_nrequests - requests received so far. */
int ks_script_nrequests(struct ks_script_server *s);

/* ks_script_request_at - a copy of request @i (body owned by the server). */
struct ks_script_request ks_script_request_at(struct ks_script_server *s, int i);

/* ks_script_wait_requests - wait until at least @n requests arrived (up to @timeout_ms); the count. */
int ks_script_wait_requests(struct ks_script_server *s, int n, int timeout_ms);

/* ks_script_stop - close every connection, join every thread, free. Accepts NULL. */
void ks_script_stop(struct ks_script_server *s);

#endif
