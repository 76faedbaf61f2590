/*
 * framework_permit.c - Permit, and the pods waiting on it.
 *
 * Mirrors RunPermitPlugins / WaitOnPermit of pkg/scheduler/framework/runtime/framework.go
 * and waiting_pods_map.go. Permit plugins run in order: a rejection ends the run with its
 * code, any other failure becomes Error "running Permit plugin %q: <message>", and Wait
 * records the plugin with its timeout (at most 15 minutes, upstream's maxTimeout). When
 * some plugin waits, the pod enters the framework's waiting map and Permit returns Wait
 * "one or more plugins asked to wait and no plugin rejected pod %q".
 *
 * A waiting pod is decided once: by the last pending plugin's allow (Success), by a
 * reject (Unschedulable with the caller's message and plugin), or by the first pending
 * plugin whose timeout passes (Unschedulable "rejected due to timeout after waiting %v at
 * plugin %v", the duration as Go prints it). Whatever comes first wins and later signals
 * are ignored, as upstream's one-slot channel with non-blocking sends. Upstream arms one
 * timer per plugin; here the binder blocked in ks_fw_wait_on_permit() sleeps on the pod's
 * condition variable until the earliest pending deadline, and every allow/reject first
 * applies the deadlines that have passed, so a timeout that fired before a late allow
 * still wins.
 *
 * Locking: fw->wait_lock (KS_LOCK_PERMIT_WAIT, include/ksched/base/lock.h) guards the list
 * and every entry; messages are interned under it. Plugin ops never run under wait_lock,
 * so a Permit plugin may allow or reject other waiting pods.
 *
 * Metrics: the Permit point and its plugins as the other Run functions record them
 * (framework_run.c); a pod that waited adds how long to permit_wait_duration_seconds
 * with the code it was decided with, as upstream's WaitOnPermit.
 *
 * Context: ks_fw_run_permit() on the scheduling thread; ks_fw_wait_on_permit() on a
 * binder thread (it blocks); allow/reject/count from any thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framework_internal.h"
#include "framework_metrics.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/internal/config_decode.h"

/* Upstream's maxTimeout: the longest a Permit plugin may make a pod wait. */
#define KS_PERMIT_MAX_TIMEOUT_NS (15LL * 60 * 1000000000LL)

struct ks_pending {
    uint16_t slot;
    int64_t timeout_ns;
    int64_t deadline_ns; /* CLOCK_MONOTONIC */
};

struct ks_waiting_pod {
    struct ks_waiting_pod *next;
    const struct ks_pod *pod;
    pthread_cond_t cond;
    bool decided;
    struct ks_status result;
    uint32_t npending;
    struct ks_pending pending[];
};

int ks__fw_permit_init(struct ks_framework *fw)
{
    return -ks_mutex_init(&fw->wait_lock, KS_LOCK_PERMIT_WAIT);
}

void ks__fw_permit_fini(struct ks_framework *fw)
{
    struct ks_waiting_pod *wp = fw->waiting, *next;

    for (; wp; wp = next) {
        next = wp->next;
        pthread_cond_destroy(&wp->cond);
        free(wp);
    }
    fw->waiting = NULL;
    fw->nwaiting = 0;
    ks_mutex_destroy(&fw->wait_lock);
}

/* The same pod: the same object, or the same non-empty uid (upstream keys by UID). */
static bool same_pod(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a == b)
        return true;
    return a->meta.uid && b->meta.uid && a->meta.uid[0] && strcmp(a->meta.uid, b->meta.uid) == 0;
}

/* Under wait_lock. */
static struct ks_waiting_pod **find(struct ks_framework *fw, const struct ks_pod *pod)
{
    for (struct ks_waiting_pod **pp = &fw->waiting; *pp; pp = &(*pp)->next) {
        if (same_pod((*pp)->pod, pod))
            return pp;
    }
    return NULL;
}

/* Under wait_lock: the first decision wins. */
static void decide(struct ks_waiting_pod *wp, const struct ks_status *st)
{
    if (wp->decided)
        return;
    wp->decided = true;
    wp->result = *st;
    pthread_cond_signal(&wp->cond);
}

/* Under wait_lock: reject @wp if a pending plugin's timeout has passed by @now. */
static void expire(struct ks_framework *fw, struct ks_waiting_pod *wp, int64_t now)
{
    const struct ks_pending *first = NULL;
    char dur[64];
    struct ks_status st;

    if (wp->decided)
        return;
    for (uint32_t i = 0; i < wp->npending; i++) {
        if (wp->pending[i].deadline_ns <= now && (!first || wp->pending[i].deadline_ns < first->deadline_ns))
            first = &wp->pending[i];
    }
    if (!first)
        return;
    ks_cfg_format_duration(first->timeout_ns, dur, sizeof(dur));
    ks_status_set(&st, KS_UNSCHEDULABLE, "rejected due to timeout after waiting %s at plugin %s", dur,
                  fw->plugins[first->slot].plugin->name);
    st.plugin = first->slot;
    decide(wp, &st);
}

static uint16_t slot_named(const struct ks_framework *fw, const char *plugin)
{
    for (uint32_t i = 0; plugin && i < fw->nplugins; i++) {
        if (strcmp(fw->plugins[i].plugin->name, plugin) == 0)
            return (uint16_t)i;
    }
    return KS_NO_PLUGIN;
}

static int add_waiting(struct ks_framework *fw, const struct ks_pod *pod, const struct ks_pending *pending,
                       uint32_t n)
{
    struct ks_waiting_pod *wp = calloc(1, sizeof(*wp) + n * sizeof(wp->pending[0]));
    pthread_condattr_t attr;
    int64_t now = ks__mono_ns();

    if (!wp)
        return -ENOMEM;
    if (pthread_condattr_init(&attr)) {
        free(wp);
        return -ENOMEM;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&wp->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (rc) {
        free(wp);
        return -rc;
    }
    wp->pod = pod;
    wp->npending = n;
    for (uint32_t i = 0; i < n; i++) {
        wp->pending[i] = pending[i];
        wp->pending[i].deadline_ns = now + pending[i].timeout_ns;
    }
    ks_mutex_lock(&fw->wait_lock);
    /* newest first, so a pod that waits again is found before a stale entry */
    wp->next = fw->waiting;
    fw->waiting = wp;
    fw->nwaiting++;
    ks_mutex_unlock(&fw->wait_lock);
    return 0;
}

static int run_permit(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      uint32_t node, struct ks_status *st)
{
    const struct ks_fw_calls *l = &fw->list[KS_FWL_PERMIT];
    struct ks_pending pending[KS_MAX_PROFILE_PLUGINS];
    uint32_t nwait = 0;

    for (uint32_t i = 0; i < l->n; i++) {
        const struct ks_fw_call *c = &l->v[i];
        int64_t timeout = 0;

        ks__status_clear(st);
        int64_t t0 = ks__fw_plugin_start(fw, cs);
        int code = c->op.permit(c->self, cs, pod, node, &timeout, st);
        ks__fw_plugin_end(fw, KS_FWL_PERMIT, i, code, t0);
        if (code == KS_SUCCESS)
            continue;
        if (code == KS_UNSCHEDULABLE || code == KS_UNSCHEDULABLE_AND_UNRESOLVABLE || code == KS_PENDING) {
            st->code = (enum ks_code)code;
            st->plugin = c->slot;
            return code;
        }
        if (code == KS_WAIT) {
            if (timeout > KS_PERMIT_MAX_TIMEOUT_NS)
                timeout = KS_PERMIT_MAX_TIMEOUT_NS;
            if (timeout < 0)
                timeout = 0;
            pending[nwait++] = (struct ks_pending){.slot = c->slot, .timeout_ns = timeout};
            continue;
        }
        return ks__status_wrap(st, KS_ERROR, c->slot, "running Permit plugin \"%s\": ", c->plugin->name);
    }
    if (nwait == 0) {
        ks__status_clear(st);
        return KS_SUCCESS;
    }
    if (add_waiting(fw, pod, pending, nwait) < 0) {
        ks_status_set(st, KS_ERROR, "running Permit plugins: out of memory");
        return KS_ERROR;
    }
    return ks_status_set(st, KS_WAIT, "one or more plugins asked to wait and no plugin rejected pod \"%s\"",
                         pod->meta.name ? pod->meta.name : "");
}

int ks_fw_run_permit(struct ks_framework *fw, struct ks_cycle_state *cs, const struct ks_pod *pod,
                     uint32_t node, struct ks_status *st)
{
    int64_t t0 = ks__fw_point_start(fw);
    return ks__fw_point_end(fw, KS_FWL_PERMIT, run_permit(fw, cs, pod, node, st), t0);
}

int ks_fw_wait_on_permit(struct ks_framework *fw, const struct ks_pod *pod, struct ks_status *st)
{
    struct ks_waiting_pod **pp, *wp;

    ks_mutex_lock(&fw->wait_lock);
    pp = find(fw, pod);
    if (!pp) {
        ks_mutex_unlock(&fw->wait_lock);
        ks__status_clear(st);
        return KS_SUCCESS;
    }
    wp = *pp;
    int64_t start = ks__mono_ns();
    for (;;) {
        int64_t now = ks__mono_ns(), earliest = INT64_MAX;
        expire(fw, wp, now);
        if (wp->decided)
            break;
        for (uint32_t i = 0; i < wp->npending; i++) {
            if (wp->pending[i].deadline_ns < earliest)
                earliest = wp->pending[i].deadline_ns;
        }
        if (earliest == INT64_MAX) {
            ks_cond_wait(&wp->cond, &fw->wait_lock);
            continue;
        }
        struct timespec ts = {.tv_sec = earliest / 1000000000LL, .tv_nsec = earliest % 1000000000LL};
        ks_cond_timedwait(&wp->cond, &fw->wait_lock, &ts);
    }
    /* the entry may have moved in the list while we slept: unlink it by identity */
    for (pp = &fw->waiting; *pp != wp; pp = &(*pp)->next)
        ;
    *pp = wp->next;
    fw->nwaiting--;
    ks_mutex_unlock(&fw->wait_lock);

    *st = wp->result;
    pthread_cond_destroy(&wp->cond);
    free(wp);
    if (fw->metrics)
        ks_metric_observe(fw->metrics->permit_wait[ks__code_index(st->code)],
                          ks__metrics_secs(ks__mono_ns() - start));
    return st->code;
}

int ks_fw_allow(struct ks_framework *fw, const struct ks_pod *pod, const char *plugin)
{
    struct ks_waiting_pod **pp;

    ks_mutex_lock(&fw->wait_lock);
    pp = find(fw, pod);
    if (!pp) {
        ks_mutex_unlock(&fw->wait_lock);
        return -ENOENT;
    }
    struct ks_waiting_pod *wp = *pp;
    expire(fw, wp, ks__mono_ns());
    uint16_t slot = slot_named(fw, plugin);
    for (uint32_t i = 0; i < wp->npending; i++) {
        if (wp->pending[i].slot == slot) {
            wp->pending[i] = wp->pending[--wp->npending];
            break;
        }
    }
    /* success only once every waiting plugin allowed the pod */
    if (wp->npending == 0) {
        struct ks_status ok;
        ks__status_clear(&ok);
        decide(wp, &ok);
    }
    ks_mutex_unlock(&fw->wait_lock);
    return 0;
}

int ks_fw_reject(struct ks_framework *fw, const struct ks_pod *pod, const char *plugin, const char *msg)
{
    struct ks_waiting_pod **pp;
    struct ks_status st;

    ks_mutex_lock(&fw->wait_lock);
    pp = find(fw, pod);
    if (!pp) {
        ks_mutex_unlock(&fw->wait_lock);
        return -ENOENT;
    }
    expire(fw, *pp, ks__mono_ns());
    ks_status_set(&st, KS_UNSCHEDULABLE, "%s", msg ? msg : "");
    st.plugin = slot_named(fw, plugin);
    decide(*pp, &st);
    ks_mutex_unlock(&fw->wait_lock);
    return 0;
}

uint32_t ks_fw_undecided_count(struct ks_framework *fw)
{
    uint32_t n = 0;
    ks_mutex_lock(&fw->wait_lock);
    for (const struct ks_waiting_pod *wp = fw->waiting; wp; wp = wp->next)
        n += !wp->decided;
    ks_mutex_unlock(&fw->wait_lock);
    return n;
}

uint32_t ks_fw_waiting_count(struct ks_framework *fw)
{
    ks_mutex_lock(&fw->wait_lock);
    uint32_t n = fw->nwaiting;
    ks_mutex_unlock(&fw->wait_lock);
    return n;
}
