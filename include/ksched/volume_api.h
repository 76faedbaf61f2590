/*
 * volume_api.h - what the VolumeBinding plugin needs from an API server to bind a pod's
 * volumes as kube-scheduler does (binder.go BindPodVolumes): the two updates of
 * bindAPIUpdate, and somewhere to wait until the PV controller has finished.
 *
 * `ksched serve` implements it (serve/serve_volumes.c) and hands it to the scheduler
 * (ks_scheduler_opts.volume_api, then ks_framework_deps.volume_api); without one (`ksched
 * schedule`, bench, soak) the plugin binds in process. The plugin owns the semantics
 * (which updates, in which order, what "bound" means, every message); the implementation
 * only talks to the server and keeps the newest objects its informers delivered.
 *
 * Threads: update_pv and update_pvc are called on binder threads and block for their
 * round trips. wait may be called on any thread and returns at once. The implementation
 * calls a wait's check on an RCU-registered thread of its own, and done on that thread
 * (or on the one that shuts it down), never two ops at once for one wait.
 */
#ifndef KSCHED_VOLUME_API_H
#define KSCHED_VOLUME_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"

/* Where a wait stands (check), or how it ended (done). */
enum ks_vol_wait_result {
    KS_VOL_PENDING,   /* not bound yet: look again after the next change */
    KS_VOL_BOUND,     /* every claim is bound: success */
    KS_VOL_FAILED,    /* checkBindings failed: the message says why */
    KS_VOL_TIMEOUT,   /* not bound within the wait's timeout */
    KS_VOL_CANCELLED, /* the implementation is shutting down */
};

/*
 * The newest objects the informers delivered (the API objects of upstream's assume
 * caches). NULL when there is none. Valid during the check that received them only.
 */
struct ks_vol_lookup {
    const struct ks_persistent_volume *(*pv)(const struct ks_vol_lookup *l, const char *name);
    const struct ks_persistent_volume_claim *(*pvc)(const struct ks_vol_lookup *l, const char *namespace_,
                                                    const char *name);
    /* false once the waiting pod was deleted (upstream's podLister.Get NotFound) */
    bool (*pod_exists)(const struct ks_vol_lookup *l);
};

/*
 * A PreBind waiting for the PV controller: upstream's wait.PollUntilContextTimeout over
 * checkBindings. Owned by the plugin; the implementation links it into its own list.
 */
struct ks_vol_wait {
    const char *pod_namespace, *pod_name; /* the pod whose PreBind waits (pod_exists) */
    int64_t timeout_ns;                   /* bindTimeoutSeconds, from the call to wait */
    /*
     * check - KS_VOL_PENDING, KS_VOL_BOUND, or KS_VOL_FAILED with a message in @msg.
     * Called soon after wait, after every PV, PVC or pod deletion the informers deliver,
     * and at least every second; under the implementation's lock (lookups need it), so it
     * may not call back into the implementation.
     */
    enum ks_vol_wait_result (*check)(struct ks_vol_wait *w, const struct ks_vol_lookup *l, char *msg,
                                     size_t len);
    /*
     * done - the wait is over (KS_VOL_BOUND, KS_VOL_FAILED with @msg, KS_VOL_TIMEOUT,
     * KS_VOL_CANCELLED). Called exactly once, outside the implementation's lock; the
     * implementation never touches @w again, so done may free it.
     */
    void (*done)(struct ks_vol_wait *w, enum ks_vol_wait_result result, const char *msg);
    void *impl; /* the implementation's */
};

struct ks_volume_api {
    /*
     * update_pv - PUT PersistentVolume @pv back as the server has it, with
     * metadata.resourceVersion = @pv's (so a PV changed meanwhile answers 409 Conflict), and
     * with @claim_ref: spec.claimRef naming @claim (kind, namespace, name, uid, apiVersion,
     * resourceVersion, as reference.GetReference makes it); with @bound_by_controller:
     * annotation pv.kubernetes.io/bound-by-controller "yes" unless it has that annotation.
     * On success returns 0 and the new resourceVersion in @rv; otherwise -1 with the error
     * as client-go prints it (the server's Status message) in @msg.
     */
    int (*update_pv)(void *ctx, const struct ks_persistent_volume *pv,
                     const struct ks_persistent_volume_claim *claim, bool claim_ref, bool bound_by_controller,
                     char *rv, size_t rv_len, char *msg, size_t msg_len);
    /*
     * update_pvc - PUT PersistentVolumeClaim @pvc back as the server has it, at @pvc's
     * resourceVersion, with annotation volume.kubernetes.io/selected-node = @node. Same
     * results as update_pv.
     */
    int (*update_pvc)(void *ctx, const struct ks_persistent_volume_claim *pvc, const char *node, char *rv,
                      size_t rv_len, char *msg, size_t msg_len);
    /*
     * wait - start @w: checked soon and after every change until it ends (done), at most
     * w->timeout_ns from now (0: ends with KS_VOL_TIMEOUT without a check, as a zero
     * bindTimeoutSeconds does upstream). 0, or -ECANCELED when shutting down (done is then
     * not called).
     */
    int (*wait)(void *ctx, struct ks_vol_wait *w);
    void *ctx;
};

#endif
