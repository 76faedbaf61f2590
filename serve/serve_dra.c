/*
 * serve_dra.c - the DRA API of `ksched serve` (include/ksched/internal/dra_api.h): the ResourceClaim
 * writes of the DynamicResources plugin through the API server, and the discovery of
 * resource.k8s.io/v1 before the informers start (serve/serve.h).
 *
 * Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go:
 *   - bindClaim (PreBind): retry.RetryOnConflict(retry.DefaultRetry, ...): at most 5
 *     attempts, 10 ms (+10% jitter) apart, another attempt only after a 409 Conflict. Each
 *     attempt but the first reads the claim again ("get updated claim ns/name after conflict:
 *     ..."); then "claim ns/name got deleted in the meantime" (deletionTimestamp), and, when
 *     allocating, "claim ns/name got allocated elsewhere in the meantime"; the finalizer
 *     resource.kubernetes.io/delete-protection is added by an update of the claim when it
 *     lacks it ("add finalizer to claim ns/name: ..."); then an update of the status
 *     subresource sets status.allocation and appends the pod to status.reservedFor ("add
 *     allocation and reservation to claim ns/name: ..." / "add reservation to claim ns/name:
 *     ..."). With v1.37's default gates (DRADeviceBindingConditions and
 *     DRAResourceClaimDeviceStatus) an allocation without allocationTimestamp gets the time
 *     of that update, as upstream sets it. After the last attempt the last conflict is the
 *     error. The error texts wrap the server's Status message, as client-go's StatusError
 *     prints.
 *   - Unreserve: the strategic merge patch of the status subresource that deletes the pod's
 *     entry of status.reservedFor (by uid), with metadata.uid.
 *   - PostFilter's deallocation: one UpdateStatus of the claim at the version the scheduler
 *     saw, with status.allocation, status.reservedFor and status.devices cleared; no retry.
 *   - The special claim for a pod's extended resources (extendeddynamicresources.go): a POST
 *     under generateName "<pod>-extended-resources-" (then bindClaim as above, then the pod's
 *     status.extendedResourceClaimStatus by a strategic merge patch of pods/status, retried
 *     on 429, 500, 503 and lost connections four times, 10 ms growing fivefold, as
 *     retry.DefaultBackoff); deleteClaim: the claim without the finalizer PUT back
 *     (RetryOnConflict, a GET per attempt), then DELETE, NotFound counting as deleted.
 *
 * How an update is made, and why: Update and UpdateStatus send the whole object client-go
 * holds, with its resourceVersion, and the server answers 409 Conflict when the object
 * changed since. ksched's decoded claims keep only what the scheduler reads, so the object is
 * read with GET and PUT back with the changed fields (kube/json_edit.c): every field the
 * server sent, those ksched does not know included, goes back as it came, and the
 * resourceVersion in the body is the server's precondition, exactly as for upstream's update
 * (a JSON merge patch carrying metadata.resourceVersion would be a precondition too, but the
 * whole lists of finalizers and reservedFor must be sent with it, read first all the same,
 * and a PUT is literally the request client-go's Update makes). Upstream's first attempt
 * writes the claim as its cache holds it, at the version the scheduling cycle saw; here the
 * first attempt reads the claim, and when the server's version is that version the object
 * read is the scheduler's view and the attempt proceeds; when it is another, a write at
 * the scheduler's version could only answer 409, so that attempt counts as the conflict
 * without sending it, and the claim read is the one the next attempt uses (upstream reads it
 * after the 409; the attempts, their bound and the texts of every error that can end the
 * loop are the same). A read that fails on the first attempt is the failure of the write it
 * precedes ("add finalizer to claim ns/name: ..." when allocating: an unallocated claim
 * lacks the finalizer; "add reservation to claim ns/name: ..." otherwise). The deallocation
 * has no retry, so its conflict is the server's own: the object read is PUT back at the
 * scheduler's version, as serve_volumes.c updates PVs.
 *
 * Threads: bind_claim and unreserve run on binder threads, deallocate on the scheduling
 * thread; each blocks for its round trips and keeps nothing between calls but the counters
 * (atomics). The transport is thread-safe.
 */
#include "serve.h"

#include "ksched/base/intern.h"
#include "ksched/dra.h"
#include "ksched/internal/dra_api.h"
#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KS_DRA_RETRY_STEPS 5                 /* retry.DefaultRetry.Steps */
#define KS_DRA_RETRY_NS    INT64_C(10000000) /* retry.DefaultRetry.Duration (Factor 1.0) */
#define KS_DRA_PATH_MAX    768
#define KS_DRA_GROUP       "/apis/resource.k8s.io/v1"

struct ks_serve_dra {
    struct ks_dra_api api;
    struct ks_serve_transport transport;
    int64_t retry_ns;
    bool stamp; /* allocationTimestamp (DRADeviceBindingConditions, DRAResourceClaimDeviceStatus) */
    _Atomic uint64_t seed;
    struct {
        _Atomic uint64_t binds, bind_failures, attempts, conflicts, reads, writes;
        _Atomic uint64_t unreserves, unreserve_failures, deallocations, deallocation_failures;
        _Atomic uint64_t creates, create_failures, deletes, delete_failures;
    } st;
};

static void count(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed); /* statistics only */
}

static void claim_path(const struct ks_dra_api_claim *c, bool status, char *buf, size_t len)
{
    snprintf(buf, len, KS_DRA_GROUP "/namespaces/%s/resourceclaims/%s%s", c->namespace_, c->name,
             status ? "/status" : "");
}

/* The claim's "ns/name" as klog.KObj prints it. */
static void kobj(const struct ks_dra_api_claim *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", c->namespace_, c->name);
}

/* A response that succeeded (200 or 201 for a write). */
static bool ok(int rc, const struct ks_kube_response *r)
{
    return rc == 0 && (r->status == 200 || r->status == 201);
}

/* A 409 Conflict: RetryOnConflict's retriable error (errors.IsConflict). */
static bool is_conflict(int rc, const struct ks_kube_response *r)
{
    return rc == 0 && r->status == 409;
}

/* Sleep the retry's step: retry_ns with up to 10% more (wait.Jitter(duration, 0.1)). Binder threads. */
static void pause_step(struct ks_serve_dra *d)
{
    /* splitmix64 over a shared counter: jitter only, races harmless */
    uint64_t x = atomic_fetch_add_explicit(&d->seed, UINT64_C(0x9e3779b97f4a7c15), memory_order_relaxed);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    int64_t ns = d->retry_ns + (int64_t)(x % (uint64_t)(d->retry_ns / 10 + 1));
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- bindClaim ----------------------------------------------------------------------------------- */

/* One request; *@r is the caller's to free. Counted as a read or a write. Blocks; any thread. */
static int dra_request(struct ks_serve_dra *d, const char *method, const char *path, const char *content_type,
                       const char *body, size_t len, struct ks_kube_response *r)
{
    memset(r, 0, sizeof(*r));
    count(strcmp(method, "GET") == 0 ? &d->st.reads : &d->st.writes);
    return d->transport.request(d->transport.ctx, method, path, content_type, body, len, r);
}

enum step { STEP_DONE, STEP_CONFLICT, STEP_FAILED };

/*
 * One attempt on the claim @body (the server's JSON, owned by the caller): the checks, the
 * finalizer update when allocating, the status update. STEP_DONE with the new version in
 * @rv_out; STEP_CONFLICT (a 409: read again) or STEP_FAILED, with the error in @msg.
 */
static enum step attempt(struct ks_serve_dra *d, const struct ks_dra_api_claim *c,
                         const struct ks_allocation *alloc, const char *pod_name, const char *pod_uid,
                         char **body, size_t *blen, char *rv_out, size_t rvlen, char *msg, size_t len)
{
    struct ks_serve_dra_claim_view v;
    struct ks_kube_response r;
    char path[KS_DRA_PATH_MAX], who[600], why[512];
    char *next = NULL;
    size_t nlen;
    int rc;

    kobj(c, who, sizeof(who));
    if (ks_serve_dra_claim_read(*body, *blen, &v) < 0) {
        snprintf(msg, len, "claim %s: the server sent no JSON object", who);
        return STEP_FAILED;
    }
    if (v.deleting) {
        snprintf(msg, len, "claim %s got deleted in the meantime", who);
        return STEP_FAILED;
    }
    if (alloc) {
        if (v.allocated) {
            snprintf(msg, len, "claim %s got allocated elsewhere in the meantime", who);
            return STEP_FAILED;
        }
        if (!v.finalizer) {
            /* the finalizer needs a normal update (the status subresource ignores metadata) */
            if ((rc = ks_serve_dra_finalizer_body(*body, *blen, &next, &nlen)) < 0) {
                snprintf(msg, len, "add finalizer to claim %s: %s", who, strerror(-rc));
                return STEP_FAILED;
            }
            claim_path(c, false, path, sizeof(path));
            rc = dra_request(d, "PUT", path, "application/json", next, nlen, &r);
            free(next);
            if (!ok(rc, &r)) {
                ks_kube_error_text(&r, rc, "Put", path, why, sizeof(why));
                snprintf(msg, len, "add finalizer to claim %s: %s", who, why);
                enum step s = is_conflict(rc, &r) ? STEP_CONFLICT : STEP_FAILED;
                ks_kube_response_free(&r);
                return s;
            }
            free(*body);
            *body = r.body; /* the updated claim: the status update starts from it */
            *blen = r.len;
        }
    }
    rc = ks_serve_dra_status_body(*body, *blen, alloc, pod_name, pod_uid, d->stamp ? wall_ns() : KS_TIME_NONE,
                                  &next, &nlen);
    const char *what = alloc ? "add allocation and reservation to claim" : "add reservation to claim";
    if (rc < 0) {
        snprintf(msg, len, "%s %s: %s", what, who, strerror(-rc));
        return STEP_FAILED;
    }
    claim_path(c, true, path, sizeof(path));
    rc = dra_request(d, "PUT", path, "application/json", next, nlen, &r);
    free(next);
    if (!ok(rc, &r)) {
        ks_kube_error_text(&r, rc, "Put", path, why, sizeof(why));
        snprintf(msg, len, "%s %s: %s", what, who, why);
        enum step s = is_conflict(rc, &r) ? STEP_CONFLICT : STEP_FAILED;
        ks_kube_response_free(&r);
        return s;
    }
    if (ks_serve_dra_claim_read(r.body, r.len, &v) < 0)
        v.rv[0] = '\0';
    snprintf(rv_out, rvlen, "%s", v.rv);
    ks_kube_response_free(&r);
    return STEP_DONE;
}

/* bind_claim - dra_api.h's op (the file comment says how). Binder threads; blocks. */
static int bind_claim(const struct ks_dra_api *api, const struct ks_dra_api_claim *c,
                      const struct ks_allocation *alloc, const char *pod_name, const char *pod_uid,
                      char *rv_out, size_t rvlen, char *msg, size_t len)
{
    struct ks_serve_dra *d = api->impl;
    struct ks_kube_response r;
    char path[KS_DRA_PATH_MAX], who[600], why[512];
    char *body = NULL;
    size_t blen = 0;
    enum step s = STEP_FAILED;

    kobj(c, who, sizeof(who));
    claim_path(c, false, path, sizeof(path));
    msg[0] = '\0';
    count(&d->st.binds);
    for (int i = 0; i < KS_DRA_RETRY_STEPS; i++) {
        if (i > 0 && !body)
            pause_step(d); /* not before using a claim read in the step that found the conflict */
        count(&d->st.attempts);
        if (!body) {
            int rc = dra_request(d, "GET", path, NULL, NULL, 0, &r);
            if (!ok(rc, &r)) {
                ks_kube_error_text(&r, rc, "Get", path, why, sizeof(why));
                if (i > 0)
                    snprintf(msg, len, "get updated claim %s after conflict: %s", who, why);
                else
                    snprintf(msg, len, "%s %s: %s",
                             alloc ? "add finalizer to claim" : "add reservation to claim", who, why);
                s = is_conflict(rc, &r) ? STEP_CONFLICT : STEP_FAILED;
                ks_kube_response_free(&r);
                if (s == STEP_CONFLICT) {
                    count(&d->st.conflicts);
                    continue;
                }
                break;
            }
            body = r.body;
            blen = r.len;
            if (i == 0) {
                struct ks_serve_dra_claim_view v;
                if (ks_serve_dra_claim_read(body, blen, &v) == 0 && c->resource_version &&
                    strcmp(v.rv, c->resource_version) != 0) {
                    /* the scheduler's view is stale: its update could only answer 409 (file comment) */
                    count(&d->st.conflicts);
                    s = STEP_CONFLICT;
                    snprintf(msg, len, "claim %s: resourceVersion %s, the scheduler saw %s", who, v.rv,
                             c->resource_version);
                    continue; /* @body is the claim read again */
                }
            }
        }
        s = attempt(d, c, alloc, pod_name, pod_uid, &body, &blen, rv_out, rvlen, msg, len);
        free(body);
        body = NULL;
        if (s != STEP_CONFLICT)
            break;
        count(&d->st.conflicts);
    }
    free(body);
    if (s != STEP_DONE)
        count(&d->st.bind_failures);
    return s == STEP_DONE ? 0 : -1;
}

/* ---- Unreserve, PostFilter ----------------------------------------------------------------------- */

/* unreserve - dra_api.h's op: one PATCH. Binder threads (any thread running Unreserve); blocks. */
static int unreserve(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, const char *pod_uid,
                     char *msg, size_t len)
{
    struct ks_serve_dra *d = api->impl;
    struct ks_kube_response r;
    char path[KS_DRA_PATH_MAX], *patch;
    size_t plen;
    int rc;

    count(&d->st.unreserves);
    if ((rc = ks_serve_dra_unreserve_patch(c->uid, pod_uid, &patch, &plen)) < 0) {
        snprintf(msg, len, "%s", strerror(-rc));
        count(&d->st.unreserve_failures);
        return -1;
    }
    claim_path(c, true, path, sizeof(path));
    rc = dra_request(d, "PATCH", path, "application/strategic-merge-patch+json", patch, plen, &r);
    free(patch);
    bool done = ok(rc, &r);
    if (!done) {
        ks_kube_error_text(&r, rc, "Patch", path, msg, len);
        count(&d->st.unreserve_failures);
    }
    ks_kube_response_free(&r);
    return done ? 0 : -1;
}

/* deallocate - dra_api.h's op: GET, then PUT at the scheduler's version. Scheduling thread; blocks. */
static int deallocate(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, char *rv_out,
                      size_t rvlen, char *msg, size_t len)
{
    struct ks_serve_dra *d = api->impl;
    struct ks_kube_response r;
    struct ks_serve_dra_claim_view v;
    char path[KS_DRA_PATH_MAX], *body = NULL;
    size_t blen;
    int rc;

    count(&d->st.deallocations);
    claim_path(c, false, path, sizeof(path));
    rc = dra_request(d, "GET", path, NULL, NULL, 0, &r);
    if (!ok(rc, &r)) {
        ks_kube_error_text(&r, rc, "Get", path, msg, len);
        goto fail;
    }
    rc = ks_serve_dra_deallocate_body(r.body, r.len, c->resource_version, &body, &blen);
    ks_kube_response_free(&r);
    if (rc < 0) {
        snprintf(msg, len, "%s: %s", path,
                 rc == -ENOMEM ? "out of memory" : "the server sent no JSON object");
        goto fail_nofree;
    }
    claim_path(c, true, path, sizeof(path));
    rc = dra_request(d, "PUT", path, "application/json", body, blen, &r);
    free(body);
    if (!ok(rc, &r)) {
        ks_kube_error_text(&r, rc, "Put", path, msg, len);
        goto fail;
    }
    if (ks_serve_dra_claim_read(r.body, r.len, &v) < 0)
        v.rv[0] = '\0';
    snprintf(rv_out, rvlen, "%s", v.rv);
    ks_kube_response_free(&r);
    return 0;
fail:
    ks_kube_response_free(&r);
fail_nofree:
    count(&d->st.deallocation_failures);
    return -1;
}

/* ---- the special claim for extended resources ---------------------------------------------------- */

/* create_claim - dra_api.h's op: one POST. Binder threads; blocks. */
static int create_claim(const struct ks_dra_api *api, const struct ks_resource_claim *claim,
                        const char *pod_name, char *name_out, size_t namelen, char *uid_out, size_t uidlen,
                        char *rv_out, size_t rvlen, char *msg, size_t len)
{
    struct ks_serve_dra *d = api->impl;
    struct ks_kube_response r;
    struct ks_serve_dra_claim_view v;
    const char *ns = ks_intern_str(claim->meta.namespace_id);
    char path[KS_DRA_PATH_MAX], why[512], *body;
    size_t blen;
    int rc;

    count(&d->st.creates);
    if ((rc = ks_serve_dra_extended_claim_body(claim, pod_name, &body, &blen)) < 0) {
        snprintf(msg, len, "create claim for extended resources %s/: %s", ns, strerror(-rc));
        goto fail_nofree;
    }
    snprintf(path, sizeof(path), KS_DRA_GROUP "/namespaces/%s/resourceclaims", ns);
    rc = dra_request(d, "POST", path, "application/json", body, blen, &r);
    free(body);
    if (!ok(rc, &r) || ks_serve_dra_claim_read(r.body, r.len, &v) < 0 || !v.name[0]) {
        ks_kube_error_text(&r, rc, "Post", path, why, sizeof(why));
        snprintf(msg, len, "create claim for extended resources %s/: %s", ns, why);
        ks_kube_response_free(&r);
        goto fail_nofree;
    }
    snprintf(name_out, namelen, "%s", v.name);
    snprintf(uid_out, uidlen, "%s", v.uid);
    snprintf(rv_out, rvlen, "%s", v.rv);
    ks_kube_response_free(&r);
    return 0;
fail_nofree:
    count(&d->st.create_failures);
    return -1;
}

/* delete_claim - dra_api.h's op: the finalizer update (RetryOnConflict), then DELETE. Any thread; blocks. */
static int delete_claim(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, char *msg, size_t len)
{
    struct ks_serve_dra *d = api->impl;
    struct ks_kube_response r;
    char path[KS_DRA_PATH_MAX], who[600], why[512], *body;
    size_t blen;
    bool done = false;
    int rc;

    kobj(c, who, sizeof(who));
    claim_path(c, false, path, sizeof(path));
    count(&d->st.deletes);
    for (int i = 0; i < KS_DRA_RETRY_STEPS && !done; i++) {
        if (i > 0)
            pause_step(d);
        rc = dra_request(d, "GET", path, NULL, NULL, 0, &r);
        if (!ok(rc, &r)) {
            ks_kube_error_text(&r, rc, "Get", path, why, sizeof(why));
            snprintf(msg, len, "get resourceclaim %s: %s", who, why);
            bool gone = rc == 0 && r.status == 404;
            ks_kube_response_free(&r);
            if (gone)
                return 0; /* deleted meanwhile: nothing left to do */
            goto fail;
        }
        rc = ks_serve_dra_unfinalize_body(r.body, r.len, &body, &blen);
        ks_kube_response_free(&r);
        if (rc < 0) {
            snprintf(msg, len, "update resourceclaim %s: %s", who, strerror(-rc));
            goto fail;
        }
        rc = dra_request(d, "PUT", path, "application/json", body, blen, &r);
        free(body);
        done = ok(rc, &r);
        if (!done) {
            ks_kube_error_text(&r, rc, "Put", path, why, sizeof(why));
            snprintf(msg, len, "update resourceclaim %s: %s", who, why);
            bool conflict = is_conflict(rc, &r);
            ks_kube_response_free(&r);
            if (!conflict)
                goto fail;
            count(&d->st.conflicts);
            continue;
        }
        ks_kube_response_free(&r);
    }
    if (!done)
        goto fail;
    rc = dra_request(d, "DELETE", path, NULL, NULL, 0, &r);
    if (!ok(rc, &r) && !(rc == 0 && (r.status == 202 || r.status == 404))) {
        ks_kube_error_text(&r, rc, "Delete", path, msg, len);
        ks_kube_response_free(&r);
        goto fail;
    }
    ks_kube_response_free(&r);
    return 0;
fail:
    count(&d->st.delete_failures);
    return -1;
}

/* Whether PatchPodStatus retries the answer (schedutil.Retriable: 500, 503, 429, no connection). */
static bool retriable(int rc, const struct ks_kube_response *r)
{
    return rc != 0 || r->status == 500 || r->status == 503 || r->status == 429;
}

/*
 * patch_pod_extended - dra_api.h's op: the pod status patch under retry.DefaultBackoff (four
 * attempts, 10 ms growing fivefold). Binder threads; blocks.
 */
static int patch_pod_extended(const struct ks_dra_api *api, const char *namespace_, const char *pod_name,
                              const char *claim_name, const struct ks_dra_ext_mapping *maps, uint32_t n,
                              char *msg, size_t len)
{
    struct ks_serve_dra *d = api->impl;
    struct ks_kube_response r;
    char path[KS_DRA_PATH_MAX], why[512], *patch;
    size_t plen;
    int rc;

    if (n == 0) {
        snprintf(msg, len,
                 "nil or empty request mappings, no update of pod %s/%s ExtendedResourceClaimStatus",
                 namespace_, pod_name);
        return -1;
    }
    if ((rc = ks_serve_dra_pod_extended_patch(claim_name, maps, n, &patch, &plen)) < 0) {
        snprintf(msg, len, "update pod %s/%s ExtendedResourceClaimStatus: %s", namespace_, pod_name,
                 strerror(-rc));
        return -1;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", namespace_, pod_name);
    int64_t step = d->retry_ns;
    for (int i = 0; i < 4; i++, step *= 5) {
        if (i > 0) {
            struct timespec ts = {.tv_sec = step / 1000000000, .tv_nsec = step % 1000000000};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        rc = dra_request(d, "PATCH", path, "application/strategic-merge-patch+json", patch, plen, &r);
        if (ok(rc, &r)) {
            ks_kube_response_free(&r);
            free(patch);
            return 0;
        }
        ks_kube_error_text(&r, rc, "Patch", path, why, sizeof(why));
        bool again = retriable(rc, &r);
        ks_kube_response_free(&r);
        if (!again)
            break;
    }
    free(patch);
    snprintf(msg, len, "update pod %s/%s ExtendedResourceClaimStatus: %s", namespace_, pod_name, why);
    return -1;
}

/* ---- lifetime ------------------------------------------------------------------------------------ */

int ks_serve_dra_create(const struct ks_serve_dra_opts *opts, struct ks_serve_dra **out)
{
    struct ks_serve_dra *d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    d->transport = opts->transport;
    d->retry_ns = opts->retry_ns > 0 ? opts->retry_ns : KS_DRA_RETRY_NS;
    d->stamp = !opts->no_timestamp && ks_dra_features_default().device_binding_conditions;
    atomic_init(&d->seed, (uint64_t)wall_ns());
    d->api = (struct ks_dra_api){.bind_claim = bind_claim,
                                 .unreserve = unreserve,
                                 .deallocate = deallocate,
                                 .create_claim = create_claim,
                                 .delete_claim = delete_claim,
                                 .patch_pod_extended = patch_pod_extended,
                                 .impl = d};
    *out = d;
    return 0;
}

const struct ks_dra_api *ks_serve_dra_api(struct ks_serve_dra *d)
{
    return &d->api;
}

void ks_serve_dra_stats(struct ks_serve_dra *d, struct ks_serve_dra_stats *out)
{
    out->binds = atomic_load(&d->st.binds);
    out->bind_failures = atomic_load(&d->st.bind_failures);
    out->attempts = atomic_load(&d->st.attempts);
    out->conflicts = atomic_load(&d->st.conflicts);
    out->reads = atomic_load(&d->st.reads);
    out->writes = atomic_load(&d->st.writes);
    out->unreserves = atomic_load(&d->st.unreserves);
    out->unreserve_failures = atomic_load(&d->st.unreserve_failures);
    out->deallocations = atomic_load(&d->st.deallocations);
    out->deallocation_failures = atomic_load(&d->st.deallocation_failures);
    out->creates = atomic_load(&d->st.creates);
    out->create_failures = atomic_load(&d->st.create_failures);
    out->deletes = atomic_load(&d->st.deletes);
    out->delete_failures = atomic_load(&d->st.delete_failures);
}

void ks_serve_dra_destroy(struct ks_serve_dra *d)
{
    free(d);
}

/* ---- discovery ----------------------------------------------------------------------------------- */

static const struct {
    const char *resource;
    enum ks_kind kind;
} dra_resources[] = {
    {"deviceclasses", KS_KIND_DEVICE_CLASS},
    {"resourceslices", KS_KIND_RESOURCE_SLICE},
    {"resourceclaims", KS_KIND_RESOURCE_CLAIM},
    {"resourceclaimtemplates", KS_KIND_RESOURCE_CLAIM_TEMPLATE},
};

uint32_t ks_serve_dra_kinds(void)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < sizeof(dra_resources) / sizeof(dra_resources[0]); i++)
        mask |= 1u << dra_resources[i].kind;
    return mask;
}

int ks_serve_dra_discover(const struct ks_serve_transport *t, uint32_t *kinds, char *msg, size_t len)
{
    struct ks_kube_response r = {0};
    struct ks_yaml_stream *st = NULL;
    struct ks_error err = {0};
    int rc = t->request(t->ctx, "GET", KS_DRA_GROUP, NULL, NULL, 0, &r);

    *kinds = 0;
    msg[0] = '\0';
    if (rc == 0 && r.status == 404) {
        ks_kube_response_free(&r);
        return 0;
    }
    if (!ok(rc, &r)) {
        ks_kube_error_text(&r, rc, "Get", KS_DRA_GROUP, msg, len);
        ks_kube_response_free(&r);
        return -EAGAIN;
    }
    rc = ks_kube_body_parse(KS_DRA_GROUP, r.body, r.len, &st, &err);
    ks_kube_response_free(&r);
    const struct ks_yaml_node *list = rc == 0 ? ks_yaml_get(st->docs[0], "resources") : NULL;
    if (!list || list->kind != KS_YAML_SEQ) {
        snprintf(msg, len, "GET %s: %s", KS_DRA_GROUP, rc < 0 ? err.msg : "no APIResourceList");
        ks_yaml_stream_destroy(st);
        return -EAGAIN;
    }
    for (uint32_t i = 0; i < list->n; i++) {
        const struct ks_yaml_node *name = ks_yaml_get(list->items[i], "name");
        for (size_t j = 0;
             name && name->kind == KS_YAML_SCALAR && j < sizeof(dra_resources) / sizeof(dra_resources[0]);
             j++) {
            if (strcmp(name->str, dra_resources[j].resource) == 0)
                *kinds |= 1u << dra_resources[j].kind;
        }
    }
    ks_yaml_stream_destroy(st);
    return 1;
}
