/*
 * helper_volumes_bind.c - VolumeBinding's PreBind through an API server: the updates of
 * bindAPIUpdate and the checks of checkBindings (see include/ksched/plugin_helpers_volumes.h
 * and include/ksched/volume_api.h).
 *
 * Mirrors BindPodVolumes, bindAPIUpdate and checkBindings of
 * pkg/scheduler/framework/plugins/volumebinding/binder.go, and IsVolumeBoundToClaim /
 * GetBindVolumeToClaim of k8s.io/component-helpers/storage/volume. Upstream blocks its
 * binding goroutine in wait.PollUntilContextTimeout; here the binding cycle is parked
 * (KS_WAIT) and the API implementation runs the check whenever the informers deliver a
 * PV, a PVC or a pod deletion, and every second, then ends the wait through done.
 *
 * Messages are upstream's: an update's error is the client's (the server's Status
 * message); a check's failure, a timeout and a shutdown are "binding volumes: <why>" with
 * checkBindings' texts, "context deadline exceeded" and "context canceled".
 */
#include "ksched/plugin_helpers_volumes.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A resourceVersion as etcd3's APIObjectVersioner parses it; 0 when it is not a number. */
static uint64_t parse_rv(const char *rv)
{
    if (!rv || !*rv)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(rv, &end, 10);
    return errno || *end ? 0 : (uint64_t)v;
}

static const char *ns_of(const struct ks_persistent_volume_claim *pvc)
{
    return pvc->meta.namespace_id == KS_ID_EMPTY ? "" : ks_intern_str(pvc->meta.namespace_id);
}

static bool same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* IsVolumeBoundToClaim: the claimRef names the claim (and its uid, when the ref has one). */
static bool bound_to_claim(const struct ks_persistent_volume *pv,
                           const struct ks_persistent_volume_claim *pvc)
{
    if (!pv->claim_name || !same(pv->claim_name, pvc->meta.name) || !same(pv->claim_namespace, ns_of(pvc)))
        return false;
    return !pv->claim_uid || !pv->claim_uid[0] || same(pv->claim_uid, pvc->meta.uid);
}

/* GetBindVolumeToClaim rewrites the claimRef unless it names the claim with the claim's uid. */
static bool claim_ref_differs(const struct ks_persistent_volume *pv,
                              const struct ks_persistent_volume_claim *pvc)
{
    return !pv->claim_name || !same(pv->claim_name, pvc->meta.name) ||
           !same(pv->claim_namespace, ns_of(pvc)) || !same(pv->claim_uid, pvc->meta.uid);
}

static enum ks_vol_wait_result wait_check(struct ks_vol_wait *w, const struct ks_vol_lookup *l, char *msg,
                                          size_t len)
{
    const struct ks_vol_bind *b =
        (const struct ks_vol_bind *)((char *)w - offsetof(struct ks_vol_bind, wait));
    return ks_vol_check_bindings(b, l, msg, len);
}

/* The wait is over: resume the binding cycle. @b lives in its arena: not touched after. */
static void wait_done(struct ks_vol_wait *w, enum ks_vol_wait_result result, const char *msg)
{
    struct ks_vol_bind *b = (struct ks_vol_bind *)((char *)w - offsetof(struct ks_vol_bind, wait));
    struct ks_bind_wait *resume = b->resume;
    struct ks_status st = {0};
    int code;

    switch (result) {
    case KS_VOL_BOUND:
        ks_bind_wait_done(resume, KS_SUCCESS, NULL);
        return;
    case KS_VOL_TIMEOUT:
        code = ks_status_set(&st, KS_ERROR, "binding volumes: context deadline exceeded");
        break;
    case KS_VOL_CANCELLED:
        code = ks_status_set(&st, KS_ERROR, "binding volumes: context canceled");
        break;
    default:
        code = ks_status_set(&st, KS_ERROR, "binding volumes: %s", msg ? msg : "");
        break;
    }
    ks_bind_wait_done(resume, code, &st);
}

int ks_vol_bind_start(const struct ks_volume_api *api, struct ks_vol_bind *b, struct ks_status *st)
{
    char rv[64], msg[1024];
    const char *node = ks_intern_str(b->node);

    for (uint32_t i = 0; i < b->n; i++) {
        struct ks_vol_bind_item *it = &b->items[i];
        int rc;
        rv[0] = msg[0] = '\0';
        if (i < b->nstatic)
            rc = api->update_pv(api->ctx, it->pv, it->pvc, claim_ref_differs(it->pv, it->pvc),
                                !bound_to_claim(it->pv, it->pvc), rv, sizeof(rv), msg, sizeof(msg));
        else
            rc = api->update_pvc(api->ctx, it->pvc, node, rv, sizeof(rv), msg, sizeof(msg));
        if (rc < 0)
            return ks_status_set(st, KS_ERROR, "%s", msg[0] ? msg : "update failed");
        it->rv = parse_rv(rv);
    }
    b->wait.pod_namespace = ks_intern_str(b->pod->meta.namespace_id);
    b->wait.pod_name = b->pod->meta.name;
    b->wait.timeout_ns = b->timeout_ns;
    b->wait.check = wait_check;
    b->wait.done = wait_done;
    if (api->wait(api->ctx, &b->wait) < 0)
        return ks_status_set(st, KS_ERROR, "binding volumes: context canceled");
    return KS_WAIT;
}

/* CheckNodeAffinity of @pv against the node; false with checkBindings' message in @msg. */
static bool affinity_ok(const struct ks_persistent_volume *pv, const struct ks_labels *labels,
                        const char *node, char *msg, size_t len)
{
    if (ks_pv_node_affinity_ok(pv, labels))
        return true;
    snprintf(msg, len, "pv \"%s\" node affinity doesn't match node \"%s\": no matching NodeSelectorTerms",
             pv->meta.name, node);
    return false;
}

/* checkBindings' per-claim part, inside the RCU read section that holds @labels. */
static enum ks_vol_wait_result check_claims(const struct ks_vol_bind *b, const struct ks_vol_lookup *l,
                                            const struct ks_labels *labels, const char *node, char *msg,
                                            size_t len)
{
    for (uint32_t i = 0; i < b->nstatic; i++) {
        const struct ks_vol_bind_item *it = &b->items[i];
        const struct ks_persistent_volume *pv = l->pv(l, it->pv->meta.name);
        if (!pv) {
            snprintf(msg, len, "failed to check binding: could not find v1.PersistentVolume \"%s\"",
                     it->pv->meta.name);
            return KS_VOL_FAILED;
        }
        const struct ks_persistent_volume_claim *pvc = l->pvc(l, ns_of(it->pvc), it->pvc->meta.name);
        if (!pvc) {
            snprintf(msg, len, "failed to check binding: could not find v1.PersistentVolumeClaim \"%s/%s\"",
                     ns_of(it->pvc), it->pvc->meta.name);
            return KS_VOL_FAILED;
        }
        if (it->rv > parse_rv(pv->meta.resource_version))
            return KS_VOL_PENDING; /* our update has not reached the informer yet */
        if (!affinity_ok(pv, labels, node, msg, len))
            return KS_VOL_FAILED;
        if (!pv->claim_name || !pv->claim_uid || !pv->claim_uid[0]) {
            snprintf(msg, len, "ClaimRef got reset for pv \"%s\"", pv->meta.name);
            return KS_VOL_FAILED;
        }
        if (!ks_pvc_fully_bound(pvc))
            return KS_VOL_PENDING;
    }
    for (uint32_t i = b->nstatic; i < b->n; i++) {
        const struct ks_vol_bind_item *it = &b->items[i];
        const struct ks_persistent_volume_claim *pvc = l->pvc(l, ns_of(it->pvc), it->pvc->meta.name);
        if (!pvc) {
            snprintf(msg, len,
                     "failed to check provisioning pvc: could not find v1.PersistentVolumeClaim \"%s/%s\"",
                     ns_of(it->pvc), it->pvc->meta.name);
            return KS_VOL_FAILED;
        }
        if (it->rv > parse_rv(pvc->meta.resource_version))
            return KS_VOL_PENDING;
        if (pvc->meta.annotations.n == 0) {
            snprintf(msg, len, "selectedNode annotation reset for PVC \"%s\"", pvc->meta.name);
            return KS_VOL_FAILED;
        }
        const char *selected = ks_annotation(&pvc->meta.annotations, KS_ANN_SELECTED_NODE);
        if (!selected || strcmp(selected, node) != 0) {
            /* the provisioner gave up: it removes the annotation so that the pod is rescheduled */
            snprintf(msg, len, "provisioning failed for PVC \"%s\"", pvc->meta.name);
            return KS_VOL_FAILED;
        }
        if (pvc->volume_name && pvc->volume_name[0]) {
            const struct ks_persistent_volume *pv = l->pv(l, pvc->volume_name);
            if (!pv)
                return KS_VOL_PENDING; /* not delivered yet (or deleted: the claim will be unbound) */
            if (!affinity_ok(pv, labels, node, msg, len))
                return KS_VOL_FAILED;
        }
        if (!ks_pvc_fully_bound(pvc))
            return KS_VOL_PENDING;
    }
    return KS_VOL_BOUND;
}

enum ks_vol_wait_result ks_vol_check_bindings(const struct ks_vol_bind *b, const struct ks_vol_lookup *l,
                                              char *msg, size_t len)
{
    const char *node = ks_intern_str(b->node);
    enum ks_vol_wait_result r;

    ks_rcu_read_lock();
    const struct ks_node_snap *ns = b->cache ? ks_snapshot_find(ks_cache_snapshot(b->cache), b->node) : NULL;
    if (!ns || !ns->node) {
        snprintf(msg, len, "failed to get node \"%s\": node \"%s\" not found", node, node);
        r = KS_VOL_FAILED;
    } else if (!l->pod_exists(l)) {
        snprintf(msg, len, "pod does not exist any more: pod \"%s\" not found", b->pod->meta.name);
        r = KS_VOL_FAILED;
    } else {
        r = check_claims(b, l, &ns->node->meta.labels, node, msg, len);
    }
    ks_rcu_read_unlock();
    return r;
}
