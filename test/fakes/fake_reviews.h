/*
 * fake_reviews.h - a stand-in API server for TokenReviews and SubjectAccessReviews, as a
 * ks_serve_transport (test_auth.c, test_http.c). Thread-safe (a mutex around the counts).
 *
 * Tokens: "good" is alice (group readers), "root" is root (system:masters), "err" is not
 * authenticated with status.error set, any other is plainly not authenticated. Access:
 * alice or the group readers may get /metrics; everyone else is denied, with @deny_reason
 * as status.reason when set. @fail makes every request a transport failure (that errno),
 * @status another HTTP status (with a Status message), @delay_ms slows every answer.
 */
#ifndef KSCHED_TEST_FAKE_REVIEWS_H
#define KSCHED_TEST_FAKE_REVIEWS_H

#include "serve.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fake_reviews {
    pthread_mutex_t lock;
    int token_reviews, access_reviews;
    char last_token_body[1024], last_access_body[2048];
    int fail;    /* -errno: every request fails in transport */
    long status; /* 0: 201 */
    const char *deny_reason;
    int delay_ms;
};

#define FAKE_REVIEWS_INIT                                                                                    \
    {                                                                                                        \
        .lock = PTHREAD_MUTEX_INITIALIZER                                                                    \
    }

static inline int fake_reviews_request(void *ctx, const char *method, const char *path,
                                       const char *content_type, const char *body, size_t len,
                                       struct ks_kube_response *resp)
{
    struct fake_reviews *f = ctx;
    bool token = strstr(path, "/tokenreviews") != NULL;
    (void)method;
    (void)content_type;
    memset(resp, 0, sizeof(*resp));
    if (f->delay_ms) {
        struct timespec ts = {.tv_sec = f->delay_ms / 1000, .tv_nsec = (long)(f->delay_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&f->lock);
    if (token) {
        f->token_reviews++;
        snprintf(f->last_token_body, sizeof(f->last_token_body), "%.*s", (int)len, body);
    } else {
        f->access_reviews++;
        snprintf(f->last_access_body, sizeof(f->last_access_body), "%.*s", (int)len, body);
    }
    pthread_mutex_unlock(&f->lock);
    if (f->fail) {
        snprintf(resp->error, sizeof(resp->error), "POST %s: Connection refused", path);
        return f->fail;
    }
    const char *answer;
    if (f->status) {
        answer =
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"reviews are "
            "forbidden to you\",\"reason\":\"Forbidden\",\"code\":403}";
    } else if (token) {
        if (strstr(body, "\"token\":\"good\""))
            answer = "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"alice\",\"uid\":\"u-1\","
                     "\"groups\":[\"readers\"],\"extra\":{\"scopes\":[\"a\",\"b\"]}}}}";
        else if (strstr(body, "\"token\":\"root\""))
            answer =
                "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"root\",\"groups\":[\"system:"
                "masters\",\"system:authenticated\"]}}}";
        else if (strstr(body, "\"token\":\"err\""))
            answer = "{\"status\":{\"user\":{},\"error\":\"invalid bearer token\"}}";
        else
            answer = "{\"status\":{\"user\":{}}}";
    } else if (strstr(body, "\"path\":\"/metrics\"") &&
               (strstr(body, "\"user\":\"alice\"") || strstr(body, "\"readers\""))) {
        answer = "{\"status\":{\"allowed\":true,\"reason\":\"RBAC: allowed\"}}";
    } else {
        answer = f->deny_reason ? NULL : "{\"status\":{\"allowed\":false}}";
    }
    char buf[256];
    if (!answer) {
        snprintf(buf, sizeof(buf), "{\"status\":{\"allowed\":false,\"reason\":\"%s\"}}", f->deny_reason);
        answer = buf;
    }
    resp->status = f->status ? f->status : 201;
    resp->body = strdup(answer);
    resp->len = strlen(answer);
    return 0;
}

#endif
