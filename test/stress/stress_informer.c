/*
 * stress_informer.c - informers started and stopped at random moments while their
 * streams churn, with another thread using the same client; runs under TSan.
 *
 * The scripted server (test/kube/http_script.c) loops: node watches drop mid-stream and
 * resume (replaying events the informer must drop), pod watches end in ERROR 410 and
 * relist (turning the list into MODIFIED/ADDED/DELETED against what was delivered).
 * The handler checks the exactly-once invariant per object: ADDED only for an object it
 * does not hold, MODIFIED and DELETED only for one it holds. Bounded: a fixed number of
 * rounds, each stopped after at most ~30 ms.
 */
#include "../kube/http_script.c"

#include "ksched/api.h"
#include "ksched/internal/kube.h"

#include <stdatomic.h>

enum { ROUNDS = 40, NAMES = 8 };

#define OBJ(ns, name, rv)                                                                                    \
    "{\"metadata\":{" ns "\"name\":\"" name "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\"}"      \
    ",\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define NS            "\"namespace\":\"s\","

static const struct ks_script_step steps[] = {
    /* continue first: its path also starts with the first page's */
    {.path = "/api/v1/nodes?limit=2&continue=",
     .status = 200,
     .repeat = true,
     .body = "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" OBJ("", "n3", "1") "]}"},
    {.path = "/api/v1/nodes?limit=2",
     .status = 200,
     .repeat = true,
     .body = "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"c\"},\"items\":[" OBJ(
         "", "n1", "1") "," OBJ("", "n2", "1") "]}"},
    {.path = "/api/v1/nodes?watch=1",
     .status = 200,
     .repeat = true,
     .close_mid = true,
     .chunks = {EV("ADDED", OBJ("", "n4", "6")), EV("MODIFIED", OBJ("", "n1", "7")), "{\"type\":\"DELETED\",",
                "\"object\":" OBJ("", "n2", "8") "}\n", "{\"type\":\"MOD"}},
    {.path = "/api/v1/pods?limit=2",
     .status = 200,
     .repeat = true,
     .body = "{\"metadata\":{\"resourceVersion\":\"2\"},\"items\":[" OBJ(NS, "p1", "1") "," OBJ(NS, "p2",
                                                                                                "1") "]}"},
    {.path = "/api/v1/pods?watch=1",
     .status = 200,
     .repeat = true,
     .hold = true,
     .chunks = {EV("MODIFIED", OBJ(NS, "p1", "3")), EV("DELETED", OBJ(NS, "p2", "4")),
                EV("ADDED", OBJ(NS, "p3", "5")), EV("ERROR", "{\"kind\":\"Status\",\"code\":410}")}},
};

struct handler {
    char held[KS_KIND_COUNT][NAMES]; /* informer thread only */
    long events, violations;
};

static void on_event(void *ctx, const struct ks_watch_event *ev)
{
    struct handler *h = ctx;
    int i = ev->name[1] - '0';
    if (i < 0 || i >= NAMES) {
        h->violations++;
        return;
    }
    char *held = &h->held[ev->kind][i];
    if ((ev->type == KS_WATCH_ADDED) == (*held != 0))
        h->violations++;
    *held = ev->type != KS_WATCH_DELETED;
    h->events++;
    if (ev->obj && ev->kind == KS_KIND_NODE)
        ks_node_destroy(ev->obj);
    else if (ev->obj)
        ks_pod_destroy(ev->obj);
}

static void on_error(void *ctx, enum ks_kind kind, const char *msg)
{
    (void)ctx, (void)kind, (void)msg;
}

struct side {
    struct ks_kube_client *c;
    atomic_bool done;
    long ok;
};

static void *side_requests(void *arg)
{
    struct side *s = arg;
    while (!atomic_load_explicit(&s->done, memory_order_acquire)) {
        struct ks_kube_response r;
        if (ks_kube_request(s->c, "GET", "/api/v1/pods?limit=2", NULL, NULL, 0, &r) == 0 && r.status == 200)
            s->ok++;
        ks_kube_response_free(&r);
    }
    return NULL;
}

int main(void)
{
    struct ks_script_server *srv = ks_script_start(steps, sizeof(steps) / sizeof(steps[0]));
    struct ks_kubeconfig kc = {.server = (char *)ks_script_url(srv), .token = "t"};
    struct ks_kube_client_opts co = {.config = &kc, .timeout_ms = 5000};
    struct ks_kube_client *c;
    struct ks_error err = {0};
    long events = 0, synced = 0;
    unsigned seed = 12345;

    if (ks_api_init() || ks_kube_client_create(&co, &c, &err)) {
        fprintf(stderr, "stress_informer: setup failed: %s\n", err.msg);
        return 1;
    }
    struct side side = {.c = c};
    pthread_t t;
    pthread_create(&t, NULL, side_requests, &side);
    for (int round = 0; round < ROUNDS; round++) {
        struct handler h = {0};
        struct ks_informer_opts o = {.client = c,
                                     .kinds = 1u << KS_KIND_NODE | 1u << KS_KIND_POD,
                                     .page_limit = 2,
                                     .on_event = on_event,
                                     .on_error = on_error,
                                     .ctx = &h};
        struct ks_informers *inf;
        if (ks_informers_start(&o, &inf, &err)) {
            fprintf(stderr, "stress_informer: start: %s\n", err.msg);
            return 1;
        }
        int wait_us = (int)(rand_r(&seed) % 30000);
        for (int waited = 0; waited < wait_us; waited += 500) {
            synced += ks_informers_synced(inf);
            usleep(500);
        }
        ks_informers_stop(inf); /* joins: h is ours again */
        events += h.events;
        if (h.violations) {
            fprintf(stderr, "stress_informer: round %d: %ld events broke exactly-once\n", round,
                    h.violations);
            return 1;
        }
    }
    atomic_store_explicit(&side.done, true, memory_order_release);
    pthread_join(t, NULL);
    printf("stress_informer: %d rounds, %ld events, %ld synced polls, %ld side requests: ok\n", ROUNDS,
           events, synced, side.ok);
    ks_kube_client_destroy(c);
    ks_script_stop(srv);
    return events > 0 && side.ok > 0 ? 0 : 1;
}
