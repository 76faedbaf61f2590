/*
 * test_lease.c - leader election (kube/lease.c) on a fake API server holding one Lease and
 * a fake clock: acquiring, observing another holder, expiry judged by local observation
 * time, renewing, losing the lease after the renew deadline, 409 races, and release.
 */
#include <criterion/criterion.h>

#include "ksched/internal/json_tree.h"
#include "ksched/internal/lease.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S INT64_C(1000000000)

/* One Lease object as the server stores it (the body last written, with its resourceVersion). */
struct fake_server {
    char *lease; /* JSON with metadata.resourceVersion, NULL: none */
    int rv;
    int fail_next; /* answer the next N requests with 500 */
    int conflict_next_write;
    int writes;
    char last_method[8];
};

struct fake_clock {
    int64_t mono, wall;
};

static int64_t clock_mono(void *ctx)
{
    return ((struct fake_clock *)ctx)->mono;
}

static int64_t clock_wall(void *ctx)
{
    return ((struct fake_clock *)ctx)->wall;
}

static void respond(struct ks_kube_response *resp, long status, const char *body)
{
    resp->status = status;
    resp->body = strdup(body);
    resp->len = strlen(body);
}

/* The body with metadata.resourceVersion set to @rv (the writes carry the old one or none). */
static char *with_rv(const char *body, int rv)
{
    const char *meta = strstr(body, "\"metadata\":{");
    cr_assert(meta);
    const char *old = strstr(body, ",\"resourceVersion\":");
    char *out = malloc(strlen(body) + 64);
    size_t pre = (size_t)(meta - body) + strlen("\"metadata\":{");
    memcpy(out, body, pre);
    int n = sprintf(out + pre, "\"resourceVersion\":\"%d\",", rv);
    const char *rest = body + pre;
    if (old) {
        /* drop the old ,"resourceVersion":"x" */
        size_t before = (size_t)(old - rest);
        memcpy(out + pre + n, rest, before);
        const char *after = strchr(old + strlen(",\"resourceVersion\":\""), '"') + 1;
        strcpy(out + pre + n + before, after);
    } else {
        strcpy(out + pre + n, rest);
    }
    return out;
}

static const char *rv_of(const char *body, char buf[64])
{
    buf[0] = '\0';
    const char *p = strstr(body, "\"resourceVersion\":\"");
    if (p)
        sscanf(p + strlen("\"resourceVersion\":\""), "%63[^\"]", buf);
    return buf;
}

static int fake_request(void *ctx, const char *method, const char *path, const char *ct, const char *body,
                        size_t len, struct ks_kube_response *resp)
{
    struct fake_server *f = ctx;
    (void)ct;
    (void)len;
    memset(resp, 0, sizeof(*resp));
    snprintf(f->last_method, sizeof(f->last_method), "%s", method);
    cr_assert(strncmp(path, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", 58) == 0, "%s",
              path);
    if (f->fail_next > 0) {
        f->fail_next--;
        respond(resp, 500, "{\"kind\":\"Status\",\"message\":\"etcd is down\"}");
        return 0;
    }
    if (strcmp(method, "GET") == 0) {
        if (!f->lease)
            respond(resp, 404, "{\"kind\":\"Status\",\"reason\":\"NotFound\"}");
        else
            respond(resp, 200, f->lease);
        return 0;
    }
    f->writes++;
    if (strcmp(method, "POST") == 0) {
        if (f->lease) {
            respond(resp, 409, "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\"}");
            return 0;
        }
    } else {
        char want[64], got[64];
        cr_assert_str_eq(method, "PUT");
        if (!f->lease || f->conflict_next_write || strcmp(rv_of(body, got), rv_of(f->lease, want)) != 0) {
            f->conflict_next_write = 0;
            respond(resp, 409, "{\"kind\":\"Status\",\"reason\":\"Conflict\"}");
            return 0;
        }
    }
    free(f->lease);
    f->lease = with_rv(body, ++f->rv);
    respond(resp, strcmp(method, "POST") == 0 ? 201 : 200, f->lease);
    return 0;
}

struct calls {
    int started, stopped;
};

static void started(void *ctx)
{
    ((struct calls *)ctx)->started++;
}

static void stopped(void *ctx)
{
    ((struct calls *)ctx)->stopped++;
}

static struct ks_lease *candidate(struct fake_server *f, struct fake_clock *c, const char *id,
                                  struct calls *calls)
{
    struct ks_lease_opts o = {
        .transport = {.request = fake_request, .ctx = f},
        .clock = {.mono_ns = clock_mono, .wall_ns = clock_wall, .ctx = c},
        .namespace_ = "kube-system",
        .name = "kube-scheduler",
        .identity = id,
        .lease_duration_ns = 15 * S,
        .renew_deadline_ns = 10 * S,
        .retry_period_ns = 2 * S,
        .jitter_seed = 1,
        .on_started_leading = started,
        .on_stopped_leading = stopped,
        .ctx = calls,
    };
    struct ks_lease *l;
    cr_assert_eq(ks_lease_create(&o, &l), 0);
    return l;
}

/* The stored Lease's spec field @key as text ("" when absent). */
static const char *spec_field(struct fake_server *f, const char *key, char *buf, size_t len)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    cr_assert(f->lease);
    cr_assert_eq(ks_json_parse("lease", f->lease, strlen(f->lease), &st, &err), 0, "%s", err.msg);
    const struct ks_yaml_node *v = ks_yaml_get(ks_yaml_get(st->docs[0], "spec"), key);
    snprintf(buf, len, "%s", v && v->kind == KS_YAML_SCALAR ? v->str : "");
    ks_yaml_stream_destroy(st);
    return buf;
}

Test(lease, creates_the_lease_and_leads)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S + 123456789};
    struct calls calls = {0};
    struct ks_lease *a = candidate(&f, &c, "host-a_1", &calls);
    char buf[128];

    cr_expect_eq(ks_lease_tick(a), 2 * S, "a leader renews every retry period");
    cr_expect(ks_lease_is_leader(a));
    cr_expect_eq(calls.started, 1);
    cr_expect_str_eq(f.last_method, "POST");
    cr_expect_str_eq(spec_field(&f, "holderIdentity", buf, sizeof(buf)), "host-a_1");
    cr_expect_str_eq(spec_field(&f, "leaseDurationSeconds", buf, sizeof(buf)), "15");
    cr_expect_str_eq(spec_field(&f, "leaseTransitions", buf, sizeof(buf)), "0");
    cr_expect_str_eq(spec_field(&f, "acquireTime", buf, sizeof(buf)), "2023-11-14T22:13:20.123456Z");
    cr_expect_str_eq(spec_field(&f, "renewTime", buf, sizeof(buf)), "2023-11-14T22:13:20.123456Z");

    /* a renewal keeps acquireTime and the transitions, moves renewTime, and updates (PUT) */
    c.mono += 2 * S;
    c.wall += 2 * S;
    cr_expect_eq(ks_lease_tick(a), 2 * S);
    cr_expect_str_eq(f.last_method, "PUT");
    cr_expect_str_eq(spec_field(&f, "acquireTime", buf, sizeof(buf)), "2023-11-14T22:13:20.123456Z");
    cr_expect_str_eq(spec_field(&f, "renewTime", buf, sizeof(buf)), "2023-11-14T22:13:22.123456Z");
    cr_expect_str_eq(spec_field(&f, "leaseTransitions", buf, sizeof(buf)), "0");
    cr_expect(ks_lease_healthy(a, 20 * S));
    ks_lease_destroy(a);
    free(f.lease);
}

Test(lease, another_holder_is_waited_out_on_the_local_clock)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls ca = {0}, cb = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &ca);
    struct ks_lease *b = candidate(&f, &c, "b", &cb);
    char buf[128];

    ks_lease_tick(a);
    int64_t wait = ks_lease_tick(b);
    cr_expect(!ks_lease_is_leader(b));
    cr_expect(wait >= 2 * S && wait <= 2 * S + 24 * S / 10, "a candidate waits retry * [1, 2.2]: %lld",
              (long long)wait);
    /* a stops renewing (it died); its record stays unchanged: b waits leaseDuration from first seeing it.
     * The wall clock jumping ahead (clock skew) changes nothing: only the local observation counts. */
    c.wall += 3600 * S;
    c.mono += 14 * S;
    ks_lease_tick(b);
    cr_expect(!ks_lease_is_leader(b), "taken before leaseDuration passed since b first observed the record");
    c.mono += 2 * S;
    ks_lease_tick(b);
    cr_expect(ks_lease_is_leader(b));
    cr_expect_eq(cb.started, 1);
    cr_expect_str_eq(spec_field(&f, "holderIdentity", buf, sizeof(buf)), "b");
    cr_expect_str_eq(spec_field(&f, "leaseTransitions", buf, sizeof(buf)), "1");
    ks_lease_destroy(a);
    ks_lease_destroy(b);
    free(f.lease);
}

Test(lease, a_renewing_holder_is_never_taken_over)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls ca = {0}, cb = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &ca);
    struct ks_lease *b = candidate(&f, &c, "b", &cb);

    ks_lease_tick(a);
    for (int i = 0; i < 30; i++) {
        c.mono += 2 * S;
        c.wall += 2 * S;
        ks_lease_tick(a);
        ks_lease_tick(b);
        cr_assert(ks_lease_is_leader(a) && !ks_lease_is_leader(b), "round %d", i);
    }
    cr_expect_eq(cb.started, 0);
    ks_lease_destroy(a);
    ks_lease_destroy(b);
    free(f.lease);
}

Test(lease, a_lease_taken_by_another_identity_is_lost_at_once)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls calls = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &calls);
    char buf[128];

    ks_lease_tick(a);
    cr_assert(ks_lease_is_leader(a));
    /* another writer takes the lease over (a fresh record in its name) */
    char stolen[512];
    snprintf(stolen, sizeof(stolen),
             "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
             "\"kube-scheduler\",\"namespace\":\"kube-system\",\"resourceVersion\":\"%d\"},\"spec\":{"
             "\"holderIdentity\":\"intruder\",\"leaseDurationSeconds\":15,\"acquireTime\":"
             "\"2023-11-14T22:13:21.000000Z\",\"renewTime\":\"2023-11-14T22:13:21.000000Z\","
             "\"leaseTransitions\":1}}",
             ++f.rv);
    free(f.lease);
    f.lease = strdup(stolen);
    int writes = f.writes;
    c.mono += 2 * S;
    c.wall += 2 * S;
    ks_lease_tick(a); /* the first renewal that reads it: no waiting out the renew deadline */
    cr_expect(!ks_lease_is_leader(a));
    cr_expect_eq(calls.stopped, 1);
    cr_expect_eq(f.writes, writes, "the lease was written over");
    cr_expect_str_eq(spec_field(&f, "holderIdentity", buf, sizeof(buf)), "intruder");
    ks_lease_destroy(a);
    free(f.lease);
}

Test(lease, renewals_failing_past_the_deadline_lose_the_lease)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls calls = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &calls);

    ks_lease_tick(a);
    f.fail_next = 1000;
    /* attempts at 0, 2, 4, 6, 8 s of the failing round keep the lease */
    for (int i = 0; i < 5; i++) {
        c.mono += 2 * S;
        ks_lease_tick(a);
        cr_assert(ks_lease_is_leader(a), "lost after %d failed renewals", i + 1);
    }
    cr_expect_eq(calls.stopped, 0);
    c.mono += 2 * S; /* 10 s since the first failure: the renew deadline */
    ks_lease_tick(a);
    cr_expect(!ks_lease_is_leader(a));
    cr_expect_eq(calls.stopped, 1);
    ks_lease_destroy(a);
    free(f.lease);
}

Test(lease, a_failed_renewal_that_recovers_keeps_the_lease)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls calls = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &calls);

    ks_lease_tick(a);
    f.fail_next = 4; /* a failed GET+... for two rounds */
    for (int i = 0; i < 10; i++) {
        c.mono += 2 * S;
        ks_lease_tick(a);
    }
    cr_expect(ks_lease_is_leader(a));
    cr_expect_eq(calls.stopped, 0);
    ks_lease_destroy(a);
    free(f.lease);
}

Test(lease, a_conflicting_write_loses_the_race)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls calls = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &calls);

    f.conflict_next_write = 0;
    ks_lease_tick(a);
    f.conflict_next_write = 1; /* someone wrote between our GET and our PUT */
    c.mono += 2 * S;
    ks_lease_tick(a);
    cr_expect(ks_lease_is_leader(a), "one failed renewal is not the deadline");
    c.mono += 2 * S;
    cr_expect_eq(ks_lease_tick(a), 2 * S);
    cr_expect(ks_lease_is_leader(a));
    ks_lease_destroy(a);
    free(f.lease);
}

Test(lease, release_lets_a_successor_in_at_once)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls ca = {0}, cb = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &ca);
    struct ks_lease *b = candidate(&f, &c, "b", &cb);
    char buf[128];

    ks_lease_tick(a);
    ks_lease_tick(b);
    cr_expect_eq(ks_lease_release(a), 0);
    cr_expect(!ks_lease_is_leader(a));
    cr_expect_str_eq(spec_field(&f, "holderIdentity", buf, sizeof(buf)), "");
    cr_expect_str_eq(spec_field(&f, "leaseDurationSeconds", buf, sizeof(buf)), "1");
    c.mono += 1; /* no need to wait for the lease duration */
    ks_lease_tick(b);
    cr_expect(ks_lease_is_leader(b));
    cr_expect_str_eq(spec_field(&f, "leaseTransitions", buf, sizeof(buf)), "1");
    cr_expect_eq(ks_lease_release(a), 0, "releasing a lease we do not hold writes nothing");
    cr_expect_str_eq(spec_field(&f, "holderIdentity", buf, sizeof(buf)), "b");
    ks_lease_destroy(a);
    ks_lease_destroy(b);
    free(f.lease);
}

Test(lease, unhealthy_when_renewals_stall)
{
    struct fake_server f = {0};
    struct fake_clock c = {.mono = 100 * S, .wall = INT64_C(1700000000) * S};
    struct calls calls = {0};
    struct ks_lease *a = candidate(&f, &c, "a", &calls);
    ks_lease_tick(a);
    c.mono += 36 * S; /* the ticking thread is stuck: no tick for over lease duration + 20 s */
    cr_expect(!ks_lease_healthy(a, 20 * S));
    ks_lease_destroy(a);
    free(f.lease);
}

Test(lease, rejects_inconsistent_durations)
{
    struct fake_server f = {0};
    struct ks_lease_opts o = {
        .transport = {.request = fake_request, .ctx = &f},
        .namespace_ = "kube-system",
        .name = "kube-scheduler",
        .identity = "x",
        .lease_duration_ns = 10 * S,
        .renew_deadline_ns = 10 * S,
        .retry_period_ns = 2 * S,
    };
    struct ks_lease *l;
    cr_expect_eq(ks_lease_create(&o, &l), -EINVAL, "renew deadline must be below the lease duration");
    o.lease_duration_ns = 15 * S;
    o.retry_period_ns = 9 * S;
    cr_expect_eq(ks_lease_create(&o, &l), -EINVAL, "renew deadline must exceed 1.2 x retry period");
    o.retry_period_ns = 2 * S;
    o.identity = "";
    cr_expect_eq(ks_lease_create(&o, &l), -EINVAL, "an identity is required");
}

Test(lease, micro_time_and_identity)
{
    char buf[64];
    ks_lease_format_micro_time(0, buf, sizeof(buf));
    cr_expect_str_eq(buf, "1970-01-01T00:00:00.000000Z");
    ks_lease_format_micro_time(INT64_C(1700000000) * S + 999999999, buf, sizeof(buf));
    cr_expect_str_eq(buf, "2023-11-14T22:13:20.999999Z");
    char id1[300], id2[300];
    ks_lease_default_identity(id1, sizeof(id1));
    ks_lease_default_identity(id2, sizeof(id2));
    cr_expect(strchr(id1, '_') && strlen(strrchr(id1, '_') + 1) == 36, "hostname_uuid: %s", id1);
    cr_expect_str_neq(id1, id2);
}
