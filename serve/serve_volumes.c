/*
 * serve_volumes.c - the volume API of `ksched serve` (include/ksched/volume_api.h): the
 * updates VolumeBinding's PreBind makes, and its waits for the PV controller.
 *
 * Updates: upstream's binder sends Update(assumedPV), the whole object its informer holds
 * with the claimRef (or the claim with the selected-node annotation) set, at the cached
 * resourceVersion. ksched's objects keep only the fields it reads, so an update GETs the
 * object as the server has it, sets the fields (kube/json_edit.c) and metadata.resourceVersion
 * to the version the scheduling cycle saw, and PUTs it: a PV or claim the server changed
 * since (a PV taken by another claim) answers 409 Conflict, as upstream's update would. The
 * error text is the server's Status message, as client-go's StatusError prints it.
 *
 * Waits: one thread (RCU-registered: a wait's check reads the scheduler cache's snapshot)
 * runs every wait's check when the intake delivers a PV, a PVC or a pod deletion
 * (ks_serve_volumes_object / _pod_deleted, intake thread), when a wait starts, and every
 * poll period (1 s, upstream's poll interval), and ends a wait whose deadline passed
 * (before checking it, as PollUntilContextTimeout looks at its context first). So no
 * binder thread waits, and a binding completes as soon as the informer shows it.
 *
 * The newest PV and PVC objects are kept by key ("/name", "namespace/name") as the intake
 * delivers them: the intake keeps every PV and PVC object it ever held until it is
 * destroyed (serve_intake.c, retire), and this is destroyed before it.
 *
 * Locking: `lock` guards the objects, the waits and the flags; a check runs under it (its
 * lookups read the objects); done runs outside it (it resumes a binding cycle: the
 * binder's bind_lock is taken). `lock` is KS_LOCK_SERVE_VOLUMES in the lock order of
 * include/ksched/base/lock.h.
 */
#include "serve.h"

#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/rcu.h"
#include "ksched/base/spin.h" /* ks__mono_ns */
#include "ksched/internal/json_edit.h"
#include "ksched/internal/json_write.h"
#include "ksched/plugin_helpers_volumes.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KS_VOLUMES_POLL_NS INT64_C(1000000000)

struct wait_rec {
    struct wait_rec *next;
    struct ks_vol_wait *w;
    int64_t deadline_ns; /* CLOCK_MONOTONIC */
    bool pod_gone;
    enum ks_vol_wait_result result; /* once finished */
    char msg[512];
};

struct ks_serve_volumes {
    struct ks_serve_transport transport;
    struct ks_volume_api api;
    int64_t poll_ns;

    struct ks_mutex lock;
    pthread_cond_t cond; /* a change, a new wait, quit */
    struct ks_smap pvs;  /* "/name" -> the newest struct ks_persistent_volume */
    struct ks_smap pvcs; /* "namespace/name" -> the newest struct ks_persistent_volume_claim */
    struct wait_rec *waits;
    bool changed; /* something a check reads changed since the last round */
    bool closing; /* cancelled: no new waits */
    bool quit;
    struct ks_serve_volumes_stats stats;

    pthread_t thread;
    bool started;
};

/* ---- updates ------------------------------------------------------------------------------ */

/* @s as a JSON string literal (malloc'ed), NULL when out of memory. */
static char *quote(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    ks_json_write_cstr(f, s ? s : "");
    return ks_serve_text_close(f, &buf);
}

/*
 * GET @path, apply @edits, PUT it back; the new resourceVersion into @rv. 0, or -1 with
 * @msg set. Binder thread (blocks).
 */
static int get_edit_put(struct ks_serve_volumes *v, const char *path, const struct ks_json_edit *edits,
                        size_t n, char *rv, size_t rv_len, char *msg, size_t msg_len)
{
    static const char *const rv_path[] = {"metadata", "resourceVersion", NULL};
    struct ks_kube_response r = {0};
    char *body = NULL;
    size_t blen = 0;
    int rc = v->transport.request(v->transport.ctx, "GET", path, NULL, NULL, 0, &r);
    if (rc < 0 || r.status != 200) {
        ks_kube_error_text(&r, rc, "Get", path, msg, msg_len);
        ks_kube_response_free(&r);
        return -1;
    }
    rc = ks_json_edit(r.body, r.len, edits, n, &body, &blen);
    ks_kube_response_free(&r);
    if (rc < 0) {
        snprintf(msg, msg_len, "%s: %s", path,
                 rc == -ENOMEM ? "out of memory" : "the server sent no JSON object");
        return -1;
    }
    memset(&r, 0, sizeof(r));
    rc = v->transport.request(v->transport.ctx, "PUT", path, "application/json", body, blen, &r);
    free(body);
    if (rc < 0 || r.status != 200) {
        ks_kube_error_text(&r, rc, "Put", path, msg, msg_len);
        ks_mutex_lock(&v->lock);
        v->stats.update_failures++;
        v->stats.conflicts += rc == 0 && r.status == 409;
        ks_mutex_unlock(&v->lock);
        ks_kube_response_free(&r);
        return -1;
    }
    if (!ks_json_get_string(r.body, r.len, rv_path, rv, rv_len))
        rv[0] = '\0';
    ks_kube_response_free(&r);
    ks_mutex_lock(&v->lock);
    v->stats.updates++;
    ks_mutex_unlock(&v->lock);
    return 0;
}

static const char *ns_name(uint32_t ns)
{
    return ns == KS_ID_EMPTY ? "" : ks_intern_str(ns);
}

static int update_pv(void *ctx, const struct ks_persistent_volume *pv,
                     const struct ks_persistent_volume_claim *claim, bool claim_ref, bool bound_by_controller,
                     char *rv, size_t rv_len, char *msg, size_t msg_len)
{
    static const char *const rv_path[] = {"metadata", "resourceVersion", NULL};
    static const char *const ref_path[] = {"spec", "claimRef", NULL};
    static const char *const ann_path[] = {"metadata", "annotations", KS_ANN_BOUND_BY_CONTROLLER, NULL};
    struct ks_serve_volumes *v = ctx;
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/persistentvolumes/%s", pv->meta.name);

    char *version = quote(pv->meta.resource_version);
    char *ref = NULL;
    size_t ref_len = 0;
    int rc = -1;
    if (!version)
        goto out;
    FILE *f = open_memstream(&ref, &ref_len);
    if (!f)
        goto out;
    ks_serve_object_ref(f, "PersistentVolumeClaim", ns_name(claim->meta.namespace_id), claim->meta.name,
                        claim->meta.uid, claim->meta.resource_version);
    if (!ks_serve_text_close(f, &ref))
        goto out;
    struct ks_json_edit edits[3] = {{.path = rv_path, .value = version}};
    size_t n = 1;
    if (claim_ref)
        edits[n++] = (struct ks_json_edit){.path = ref_path, .value = ref};
    if (bound_by_controller)
        edits[n++] = (struct ks_json_edit){.path = ann_path, .value = "\"yes\"", .if_absent = true};
    rc = get_edit_put(v, path, edits, n, rv, rv_len, msg, msg_len);
out:
    if (rc < 0 && !msg[0])
        snprintf(msg, msg_len, "out of memory");
    free(ref);
    free(version);
    return rc;
}

static int update_pvc(void *ctx, const struct ks_persistent_volume_claim *pvc, const char *node, char *rv,
                      size_t rv_len, char *msg, size_t msg_len)
{
    static const char *const rv_path[] = {"metadata", "resourceVersion", NULL};
    static const char *const ann_path[] = {"metadata", "annotations", KS_ANN_SELECTED_NODE, NULL};
    struct ks_serve_volumes *v = ctx;
    char path[768];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/persistentvolumeclaims/%s",
             ns_name(pvc->meta.namespace_id), pvc->meta.name);
    char *version = quote(pvc->meta.resource_version), *value = quote(node);
    int rc = -1;
    if (version && value) {
        struct ks_json_edit edits[] = {{.path = rv_path, .value = version},
                                       {.path = ann_path, .value = value}};
        rc = get_edit_put(v, path, edits, 2, rv, rv_len, msg, msg_len);
    } else {
        snprintf(msg, msg_len, "out of memory");
    }
    free(version);
    free(value);
    return rc;
}

/* ---- waits -------------------------------------------------------------------------------- */

struct lookup {
    struct ks_vol_lookup l; /* first */
    struct ks_serve_volumes *v;
    const struct wait_rec *rec;
};

static const struct ks_persistent_volume *lookup_pv(const struct ks_vol_lookup *l, const char *name)
{
    const struct lookup *k = (const struct lookup *)l;
    char key[512];
    snprintf(key, sizeof(key), "/%s", name);
    return ks_smap_get(&k->v->pvs, key);
}

static const struct ks_persistent_volume_claim *lookup_pvc(const struct ks_vol_lookup *l,
                                                           const char *namespace_, const char *name)
{
    const struct lookup *k = (const struct lookup *)l;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", namespace_, name);
    return ks_smap_get(&k->v->pvcs, key);
}

static bool lookup_pod(const struct ks_vol_lookup *l)
{
    return !((const struct lookup *)l)->rec->pod_gone;
}

static int start_wait(void *ctx, struct ks_vol_wait *w)
{
    struct ks_serve_volumes *v = ctx;
    struct wait_rec *rec = calloc(1, sizeof(*rec));
    if (!rec)
        return -ENOMEM;
    rec->w = w;
    rec->deadline_ns = ks__mono_ns() + (w->timeout_ns > 0 ? w->timeout_ns : 0);
    ks_mutex_lock(&v->lock);
    if (v->closing) {
        ks_mutex_unlock(&v->lock);
        free(rec);
        return -ECANCELED;
    }
    rec->next = v->waits;
    v->waits = rec;
    v->stats.waits++;
    v->changed = true;
    pthread_cond_signal(&v->cond);
    ks_mutex_unlock(&v->lock);
    return 0;
}

/* End the finished waits of @list (outside the lock) and free their records. */
static void finish(struct wait_rec *list)
{
    while (list) {
        struct wait_rec *rec = list;
        list = rec->next;
        rec->w->done(rec->w, rec->result, rec->msg);
        free(rec);
    }
}

/* One round over the waits: the expired ones and those whose check ended. Under the lock. */
static struct wait_rec *round_locked(struct ks_serve_volumes *v, int64_t now)
{
    ks_mutex_assert_held(&v->lock);
    struct wait_rec *done = NULL, **pp = &v->waits;
    while (*pp) {
        struct wait_rec *rec = *pp;
        if (now >= rec->deadline_ns) {
            rec->result = KS_VOL_TIMEOUT;
            v->stats.timeouts++;
        } else {
            struct lookup k = {
                .l = {.pv = lookup_pv, .pvc = lookup_pvc, .pod_exists = lookup_pod}, .v = v, .rec = rec};
            rec->msg[0] = '\0';
            rec->result = rec->w->check(rec->w, &k.l, rec->msg, sizeof(rec->msg));
            if (rec->result == KS_VOL_PENDING) {
                pp = &rec->next;
                continue;
            }
            v->stats.bound += rec->result == KS_VOL_BOUND;
            v->stats.failed += rec->result != KS_VOL_BOUND;
        }
        *pp = rec->next;
        rec->next = done;
        done = rec;
    }
    return done;
}

static void *waiter_main(void *arg)
{
    struct ks_serve_volumes *v = arg;
    int64_t next_poll = 0;
    ks_rcu_register_thread();
    ks_mutex_lock(&v->lock);
    while (!v->quit) {
        int64_t now = ks__mono_ns();
        int64_t wake = INT64_MAX;
        for (const struct wait_rec *r = v->waits; r; r = r->next)
            wake = r->deadline_ns < wake ? r->deadline_ns : wake;
        if (v->waits && next_poll < wake)
            wake = next_poll;
        if (!v->changed && now < wake) {
            if (wake == INT64_MAX) {
                ks_cond_wait(&v->cond, &v->lock);
            } else {
                /* wake is a CLOCK_MONOTONIC time, the clock of cond */
                struct timespec ts = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000};
                ks_cond_timedwait(&v->cond, &v->lock, &ts);
            }
            continue;
        }
        v->changed = false;
        next_poll = now + v->poll_ns;
        struct wait_rec *done = round_locked(v, now);
        if (done) {
            ks_mutex_unlock(&v->lock);
            finish(done);
            ks_mutex_lock(&v->lock);
        }
    }
    ks_mutex_unlock(&v->lock);
    ks_rcu_unregister_thread();
    return NULL;
}

/* ---- lifetime and the intake's news ---------------------------------------------------------- */

int ks_serve_volumes_create(const struct ks_serve_volumes_opts *opts, struct ks_serve_volumes **out)
{
    struct ks_serve_volumes *v = calloc(1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    v->transport = opts->transport;
    v->poll_ns = opts->poll_ns > 0 ? opts->poll_ns : KS_VOLUMES_POLL_NS;
    v->api = (struct ks_volume_api){
        .update_pv = update_pv, .update_pvc = update_pvc, .wait = start_wait, .ctx = v};
    ks_mutex_init(&v->lock, KS_LOCK_SERVE_VOLUMES);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->cond, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&v->thread, NULL, waiter_main, v);
    if (rc) {
        pthread_cond_destroy(&v->cond);
        ks_mutex_destroy(&v->lock);
        free(v);
        return -rc;
    }
    v->started = true;
    *out = v;
    return 0;
}

const struct ks_volume_api *ks_serve_volumes_api(struct ks_serve_volumes *v)
{
    return &v->api;
}

void ks_serve_volumes_object(struct ks_serve_volumes *v, enum ks_kind kind, const char *key, const void *obj)
{
    struct ks_smap *m = kind == KS_KIND_PV ? &v->pvs : kind == KS_KIND_PVC ? &v->pvcs : NULL;
    if (!m)
        return;
    ks_mutex_lock(&v->lock);
    if (obj) {
        if (ks_smap_put(m, key, (void *)obj, NULL) < 0)
            fprintf(stderr, "ksched serve: out of memory tracking %s %s for volume binding\n",
                    ks_kind_name(kind), key);
    } else {
        ks_smap_del(m, key);
    }
    if (v->waits) {
        v->changed = true;
        pthread_cond_signal(&v->cond);
    }
    ks_mutex_unlock(&v->lock);
}

void ks_serve_volumes_pod_deleted(struct ks_serve_volumes *v, const char *key)
{
    ks_mutex_lock(&v->lock);
    for (struct wait_rec *r = v->waits; r; r = r->next) {
        size_t nl = strlen(r->w->pod_namespace);
        if (strncmp(key, r->w->pod_namespace, nl) == 0 && key[nl] == '/' &&
            strcmp(key + nl + 1, r->w->pod_name) == 0) {
            r->pod_gone = true;
            v->changed = true;
        }
    }
    if (v->changed)
        pthread_cond_signal(&v->cond);
    ks_mutex_unlock(&v->lock);
}

void ks_serve_volumes_cancel(struct ks_serve_volumes *v)
{
    if (!v)
        return;
    ks_mutex_lock(&v->lock);
    v->closing = true;
    struct wait_rec *list = v->waits;
    v->waits = NULL;
    for (struct wait_rec *r = list; r; r = r->next) {
        r->result = KS_VOL_CANCELLED;
        r->msg[0] = '\0';
        v->stats.failed++;
    }
    ks_mutex_unlock(&v->lock);
    finish(list);
}

void ks_serve_volumes_stats(struct ks_serve_volumes *v, struct ks_serve_volumes_stats *out)
{
    ks_mutex_lock(&v->lock);
    *out = v->stats;
    uint32_t n = 0;
    for (const struct wait_rec *r = v->waits; r; r = r->next)
        n++;
    out->waiting = n;
    ks_mutex_unlock(&v->lock);
}

void ks_serve_volumes_destroy(struct ks_serve_volumes *v)
{
    if (!v)
        return;
    ks_serve_volumes_cancel(v);
    ks_mutex_lock(&v->lock);
    v->quit = true;
    pthread_cond_signal(&v->cond);
    ks_mutex_unlock(&v->lock);
    if (v->started)
        pthread_join(v->thread, NULL);
    ks_smap_clear(&v->pvs, NULL);
    ks_smap_clear(&v->pvcs, NULL);
    pthread_cond_destroy(&v->cond);
    ks_mutex_destroy(&v->lock);
    free(v);
}
