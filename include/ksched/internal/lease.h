/*
 * lease.h - leader election with a coordination.k8s.io/v1 Lease, as client-go's
 * tools/leaderelection with resourcelock.LeaseLock.
 *
 * The elector is a state machine driven by ks_lease_tick(): each tick makes one
 * tryAcquireOrRenew attempt and says how long to wait before the next one. A candidate
 * takes the lease when it has none holder, when it already holds it, or when the record
 * it observes has not changed for leaseDuration - measured on the local clock from the
 * moment the record was last seen to change, never from the timestamps in the record
 * (clocks of different machines are not compared). A leader renews every retryPeriod;
 * when renewals keep failing for renewDeadline it has lost the lease. Updates carry the
 * resourceVersion last read, so two candidates racing for an expired lease cannot both
 * win (409 Conflict: the loser retries later).
 *
 * ks_lease_start() runs the ticks on a thread of its own and reports becoming leader and
 * losing the lease through callbacks; ks_lease_stop() releases the lease when held
 * (ReleaseOnCancel: holder cleared, leaseDurationSeconds 1) so a successor need not wait.
 *
 * The transport and the clocks are parameters, so tests run the state machine on a fake
 * server and a fake clock.
 */
#ifndef KSCHED_LEASE_H
#define KSCHED_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/internal/kube.h"

/* One HTTP exchange (ks_kube_request's contract). */
struct ks_lease_transport {
    int (*request)(void *ctx, const char *method, const char *path, const char *content_type,
                   const char *body, size_t len, struct ks_kube_response *resp);
    void *ctx;
};

struct ks_lease_clock {
    int64_t (*mono_ns)(void *ctx); /* observation time (CLOCK_MONOTONIC) */
    int64_t (*wall_ns)(void *ctx); /* acquireTime / renewTime (CLOCK_REALTIME, unix ns) */
    void *ctx;
};

typedef void (*ks_lease_fn)(void *ctx);

struct ks_lease_opts {
    struct ks_lease_transport transport; /* NULL request: ks_kube_request on @client */
    struct ks_kube_client *client;
    struct ks_lease_clock clock;    /* NULL functions: the system clocks */
    const char *namespace_;         /* "kube-system" */
    const char *name;               /* "kube-scheduler" */
    const char *identity;           /* holderIdentity: hostname_uuid */
    int64_t lease_duration_ns;      /* 15 s */
    int64_t renew_deadline_ns;      /* 10 s */
    int64_t retry_period_ns;        /* 2 s */
    uint64_t jitter_seed;           /* candidates wait retryPeriod * (1 + 1.2 * rand) between attempts */
    ks_lease_fn on_started_leading; /* the lease thread (ks_lease_start) */
    ks_lease_fn on_stopped_leading; /* lost the lease (not called by ks_lease_stop) */
    void *ctx;
};

/* The lease record as the server holds it (LeaderElectionRecord). */
struct ks_lease_record {
    char holder[256];
    int32_t lease_duration_s;
    char acquire_time[40]; /* MicroTime "2006-01-02T15:04:05.000000Z", "" when absent */
    char renew_time[40];
    int32_t transitions;
    char resource_version[64];
};

struct ks_lease;

/* ks_lease_create - validate @opts (durations positive, renewDeadline < leaseDuration, retry < renewDeadline
 * as client-go's NewLeaderElector requires). 0, -EINVAL or -ENOMEM. */
int ks_lease_create(const struct ks_lease_opts *opts, struct ks_lease **out);

/* ks_lease_destroy - stop the thread if started (releasing the lease) and free. Accepts NULL. */
void ks_lease_destroy(struct ks_lease *l);

/*
 * ks_lease_tick - one tryAcquireOrRenew; calls on_started_leading when it makes us leader,
 * on_stopped_leading when renewals have failed for renewDeadline or a renewal read the lease
 * held, unexpired, by another identity (then at once). Returns the nanoseconds
 * to wait before the next tick. Context: one thread at a time (the lease thread, or a test).
 */
int64_t ks_lease_tick(struct ks_lease *l);

/* ks_lease_release - give the lease up if we hold it (holder "", leaseDurationSeconds 1). 0 or -errno. */
int ks_lease_release(struct ks_lease *l);

/* ks_lease_start - run ks_lease_tick on a new thread until ks_lease_stop. 0 or -errno. */
int ks_lease_start(struct ks_lease *l);

/* ks_lease_stop - stop the thread and release the lease if held. Any thread but the lease thread. */
void ks_lease_stop(struct ks_lease *l);

/* ks_lease_is_leader - we hold the lease (as of the last tick). Any thread. */
bool ks_lease_is_leader(const struct ks_lease *l);

/*
 * ks_lease_healthy - client-go's HealthzAdaptor check: false when we are leader but have
 * not renewed for leaseDuration + @grace_ns (the renew loop is stuck). Any thread.
 */
bool ks_lease_healthy(const struct ks_lease *l, int64_t grace_ns);

/* ks_lease_format_micro_time - unix @ns as MicroTime ("2006-01-02T15:04:05.000000Z"). */
void ks_lease_format_micro_time(int64_t ns, char *buf, size_t len);

/* ks_lease_default_identity - "hostname_uuid" as kube-scheduler builds it (random v4 uuid). */
void ks_lease_default_identity(char *buf, size_t len);

#endif
