/*
 * bench_dra.c - the Dynamic Resource Allocation objects of a benchmark (bench.h): the
 * ResourceSlices of a test driver (createResourceDriver), claims allocated without a pod
 * (allocResourceClaims), and the record of the allocations the scheduler published, which
 * --check verifies. (createAny, which makes DeviceClasses and claims here, is in
 * bench_objects.c.)
 *
 * Mirrors test/integration/scheduler_perf/dra.go (createResourceDriverOp and its
 * resourceSlice(), allocResourceClaimsOp). Every object is a
 * decoder product: slices are written as YAML and decoded by the loader's decoder, as a
 * manifest's would be, so their names, attributes and quantities are checked as the API
 * server checks them. All of it runs before the scheduler reads the set, except the record,
 * whose API binder threads call (under the record's lock) while the main thread may forget
 * deleted claims.
 *
 * The record's tables: `devices` maps each allocated device (driver, pool, device: interned)
 * to the claim that holds it, `claims` each recorded claim ("namespace/name", interned) to
 * its devices; both are open addressing with linear probing and backward-shift deletion
 * (no tombstones), key 0 empty (id 0 is "", never a key).
 */
#include "bench.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/dra.h"
#include "ksched/dra_extended.h"
#include "ksched/plugin_helpers_dra.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- createResourceDriver --------------------------------------------------------------------- */

/* @s as a double-quoted YAML (JSON) string. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void put_attr_value(FILE *f, enum ks_device_attr_kind kind, const char *v)
{
    static const char *const names[] = {[KS_ATTR_INT] = "int",
                                        [KS_ATTR_BOOL] = "bool",
                                        [KS_ATTR_STRING] = "string",
                                        [KS_ATTR_VERSION] = "version"};
    fprintf(f, "{%s: ", names[kind]);
    if (kind == KS_ATTR_INT || kind == KS_ATTR_BOOL)
        fputs(v, f);
    else
        put_quoted(f, v);
    fputs("}", f);
}

/* The YAML of the slice of node @node (the @k-th the op matched) with @per_node devices. */
static void write_slice(FILE *f, const struct ks_bench_op *op, const char *node, uint64_t k, int64_t per_node)
{
    fputs("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", f);
    put_quoted(f, node);
    fputs("}\nspec:\n  driver: ", f);
    put_quoted(f, op->driver_name);
    fputs("\n  nodeName: ", f);
    put_quoted(f, node);
    fputs("\n  pool: {name: ", f);
    put_quoted(f, node);
    fputs(", generation: 1, resourceSliceCount: 1}\n  devices:\n", f);
    for (int64_t d = 0; d < per_node; d++) {
        uint64_t g = k * (uint64_t)per_node + (uint64_t)d;
        fprintf(f, "  - name: instance-%" PRId64 "\n", d);
        if (!op->own_devices) {
            fprintf(f,
                    "    attributes:\n      model: {string: A100}\n      family: {string: GPU}\n"
                    "      driverVersion: {version: 1.2.3}\n      dra.example.com/numa: {int: %" PRId64 "}\n"
                    "    capacity:\n      memory: {value: 1Gi}\n",
                    d);
            continue;
        }
        if (op->nattrs)
            fputs("    attributes:\n", f);
        for (uint32_t a = 0; a < op->nattrs; a++) {
            const struct ks_bench_device_attr *at = &op->attrs[a];
            fputs("      ", f);
            put_quoted(f, at->name);
            fputs(": ", f);
            put_attr_value(f, at->kind, at->values[g % at->nvalues]);
            fputc('\n', f);
        }
        if (op->ncapacity)
            fputs("    capacity:\n", f);
        for (uint32_t c = 0; c < op->ncapacity; c++) {
            const struct ks_bench_device_attr *cap = &op->capacity[c];
            fputs("      ", f);
            put_quoted(f, cap->name);
            fputs(": {value: ", f);
            put_quoted(f, cap->values[g % cap->nvalues]);
            fputs("}\n", f);
        }
    }
}

/* A decoder error about generated text, moved to the op that asked for it. */
static int at_op(struct ks_error *err, const char *file, const struct ks_bench_op *op, const char *what)
{
    char msg[KS_ERROR_MSG_MAX];
    snprintf(msg, sizeof(msg), "%s", err->msg);
    const char *field = err->field[0] ? err->field : NULL;
    char fieldbuf[KS_ERROR_FIELD_MAX];
    if (field)
        snprintf(fieldbuf, sizeof(fieldbuf), "%s", field);
    *err = (struct ks_error){0};
    return ks_error_set(err, file, op->line, field ? fieldbuf : NULL, "%s: %s", what, msg);
}

int ks_bench_driver_slices(const struct ks_bench_op *op, const char *file, int64_t per_node,
                           const char *const *names, uint32_t n, struct ks_objects *objs,
                           struct ks_error *err)
{
    char *text = NULL;
    size_t len = 0;
    uint64_t k = 0;
    int rc = 0;

    for (uint32_t i = 0; i < n && rc >= 0; i++) {
        if (op->nodes && fnmatch(op->nodes, names[i], 0) != 0)
            continue;
        FILE *f = open_memstream(&text, &len);
        if (!f)
            return -ENOMEM;
        write_slice(f, op, names[i], k++, per_node);
        if (fclose(f) != 0) {
            free(text);
            return -ENOMEM;
        }
        struct ks_yaml_stream *stream = NULL;
        void *obj = NULL;
        if ((rc = ks_yaml_parse(file, text, len, &stream, err)) == 0) {
            rc = ks_object_decode_as(file, stream->docs[0], KS_KIND_RESOURCE_SLICE, &obj, err);
            if (rc == 0 && (rc = ks_objects_push(objs, KS_KIND_RESOURCE_SLICE, obj)) < 0)
                ks_resource_slice_destroy(obj);
        }
        ks_yaml_stream_destroy(stream);
        free(text);
        text = NULL;
        if (rc == -EINVAL)
            return at_op(err, file, op, "createResourceDriver");
    }
    return rc < 0 ? rc : (int)k;
}

/* ---- allocResourceClaims ---------------------------------------------------------------------- */

int ks_bench_alloc_claims(struct ks_objects *objs, const char *namespace, struct ks_node *const *nodes,
                          uint32_t n, uint64_t seed, char *msg, size_t len)
{
    const struct ks_objvec *cv = &objs->of[KS_KIND_DEVICE_CLASS], *sv = &objs->of[KS_KIND_RESOURCE_SLICE];
    const struct ks_objvec *claims = &objs->of[KS_KIND_RESOURCE_CLAIM];
    uint32_t ns = namespace ? ks_intern(namespace) : KS_ID_NONE;
    struct ks_dra_catalog *cat = NULL;
    struct ks_dra_allocated *allocated = NULL;
    struct ks_dra_scratch *scratch = NULL;
    uint32_t *order = calloc(n ? n : 1, sizeof(*order));
    uint64_t rng = seed ^ 0x414c4c4f43415445ull; /* "ALLOCATE" */
    int made = 0, rc = -ENOMEM;
    char err[512];

    msg[0] = '\0';
    if (!order || (namespace && ns == KS_ID_NONE) ||
        ks_dra_catalog_build((const struct ks_device_class *const *)cv->items, cv->n,
                             (const struct ks_resource_slice *const *)sv->items, sv->n, NULL, &cat) < 0 ||
        ks_dra_allocated_create(&allocated) < 0 || ks_dra_scratch_create(&scratch) < 0)
        goto out;
    /* one shuffle of the nodes; each claim starts at a random one of them (upstream shuffles per claim) */
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)(ks_bench_splitmix(&rng) % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (uint32_t i = 0; i < claims->n; i++) {
        const struct ks_resource_claim *c = claims->items[i];
        if (c->allocation && ks_dra_allocated_add(allocated, c->allocation) < 0)
            goto out;
    }
    for (uint32_t i = 0; i < claims->n; i++) {
        struct ks_resource_claim *c = claims->items[i];
        const struct ks_resource_claim *one = c;
        struct ks_dra_claims *prep = NULL;
        struct ks_allocation result;
        bool done = false;
        if (c->allocation || (namespace && c->meta.namespace_id != ns))
            continue;
        if (ks_dra_claims_prepare(cat, &one, 1, &prep) < 0)
            goto out;
        uint32_t start = n ? (uint32_t)(ks_bench_splitmix(&rng) % n) : 0;
        for (uint32_t j = 0; j < n && !done; j++) {
            err[0] = '\0';
            int r = ks_dra_allocate_prepared(allocated, nodes[order[(start + j) % n]], prep, scratch, &result,
                                             err, sizeof(err));
            if (r == KS_DRA_ERROR) {
                snprintf(msg, len, "allocResourceClaims: claim %s/%s: %s",
                         ks_intern_str(c->meta.namespace_id), c->meta.name, err);
                ks_dra_claims_destroy(prep);
                rc = -EINVAL;
                goto out;
            }
            if (r < 0) {
                ks_dra_claims_destroy(prep);
                goto out;
            }
            if (r != KS_DRA_ALLOCATED)
                continue;
            if (!(c->allocation = ks_dra_allocation_copy(&c->arena, &result)) ||
                ks_dra_allocated_add(allocated, c->allocation) < 0) {
                ks_dra_claims_destroy(prep);
                goto out;
            }
            done = true;
        }
        ks_dra_claims_destroy(prep);
        if (!done) {
            snprintf(msg, len, "allocResourceClaims: claim %s/%s: no node has room for it after %d claims",
                     ks_intern_str(c->meta.namespace_id), c->meta.name, made);
            rc = -EINVAL;
            goto out;
        }
        made++;
    }
    rc = made;
out:
    ks_dra_scratch_destroy(scratch);
    ks_dra_allocated_destroy(allocated);
    ks_dra_catalog_destroy(cat);
    free(order);
    return rc;
}

/* ---- the record of allocations (--check) ------------------------------------------------------ */

struct dev {
    uint32_t driver, pool, device;
};

struct dev_slot {
    struct dev d;
    uint32_t claim; /* 0: empty */
};

struct rec_claim {
    uint32_t key;
    uint32_t ndevs;
    struct dev devs[];
};

struct claim_slot {
    uint32_t key; /* 0: empty */
    struct rec_claim *rc;
};

struct ks_bench_dra_record {
    struct ks_dra_api api;
    struct ks_mutex lock; /* everything below; a leaf lock, taken by binder threads and the main thread */
    struct dev_slot *devices;
    uint32_t dmask, ndevices;
    struct claim_slot *claims;
    uint32_t cmask, nclaims;
    uint64_t conflicts;
    char example[320];    /* the first conflict */
    uint32_t *pool_nodes; /* check: (driver, pool) -> node name, pairs of keys then values; built once */
    uint32_t pmask;
    uint32_t *pod_claims; /* pod ("ns/name") -> its special claim ("ns/name"), pairs; 0: empty */
    uint32_t xmask, npod_claims;
    _Atomic uint64_t made; /* special claims named so far */
};

static uint32_t dev_hash(const struct dev *d)
{
    uint64_t x = ((uint64_t)d->driver * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)d->pool * 0xc2b2ae3d27d4eb4full) ^
                 ((uint64_t)d->device * 0x165667b19e3779f9ull);
    return (uint32_t)((x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull >> 32);
}

static bool dev_eq(const struct dev *a, const struct dev *b)
{
    return a->driver == b->driver && a->pool == b->pool && a->device == b->device;
}

static struct dev_slot *dev_find(const struct ks_bench_dra_record *r, const struct dev *d)
{
    for (uint32_t h = dev_hash(d) & r->dmask;; h = (h + 1) & r->dmask) {
        struct dev_slot *s = &r->devices[h];
        if (!s->claim || dev_eq(&s->d, d))
            return s;
    }
}

static int dev_grow(struct ks_bench_dra_record *r)
{
    uint32_t old = r->dmask + 1;
    struct dev_slot *prev = r->devices;
    if (!(r->devices = calloc(old * 2, sizeof(*r->devices)))) {
        r->devices = prev;
        return -ENOMEM;
    }
    r->dmask = old * 2 - 1;
    for (uint32_t i = 0; i < old; i++) {
        if (prev[i].claim)
            *dev_find(r, &prev[i].d) = prev[i];
    }
    free(prev);
    return 0;
}

/* Remove slot @s of the device table, moving later members of its chain back. */
static void dev_unslot(struct ks_bench_dra_record *r, struct dev_slot *s)
{
    uint32_t hole = (uint32_t)(s - r->devices);
    r->devices[hole].claim = 0;
    r->ndevices--;
    for (uint32_t j = (hole + 1) & r->dmask; r->devices[j].claim; j = (j + 1) & r->dmask) {
        uint32_t home = dev_hash(&r->devices[j].d) & r->dmask;
        if (((j - home) & r->dmask) >= ((j - hole) & r->dmask)) {
            r->devices[hole] = r->devices[j];
            r->devices[j].claim = 0;
            hole = j;
        }
    }
}

static struct claim_slot *claim_find(const struct ks_bench_dra_record *r, uint32_t key)
{
    for (uint32_t h = ks_id_hash(key) & r->cmask;; h = (h + 1) & r->cmask) {
        struct claim_slot *s = &r->claims[h];
        if (!s->key || s->key == key)
            return s;
    }
}

static int claim_grow(struct ks_bench_dra_record *r)
{
    uint32_t old = r->cmask + 1;
    struct claim_slot *prev = r->claims;
    if (!(r->claims = calloc(old * 2, sizeof(*r->claims)))) {
        r->claims = prev;
        return -ENOMEM;
    }
    r->cmask = old * 2 - 1;
    for (uint32_t i = 0; i < old; i++) {
        if (prev[i].key)
            *claim_find(r, prev[i].key) = prev[i];
    }
    free(prev);
    return 0;
}

static void claim_unslot(struct ks_bench_dra_record *r, struct claim_slot *s)
{
    uint32_t hole = (uint32_t)(s - r->claims);
    r->claims[hole] = (struct claim_slot){0};
    r->nclaims--;
    for (uint32_t j = (hole + 1) & r->cmask; r->claims[j].key; j = (j + 1) & r->cmask) {
        uint32_t home = ks_id_hash(r->claims[j].key) & r->cmask;
        if (((j - home) & r->cmask) >= ((j - hole) & r->cmask)) {
            r->claims[hole] = r->claims[j];
            r->claims[j] = (struct claim_slot){0};
            hole = j;
        }
    }
}

/* Claim @key holds no device any more. Under the lock. */
static void drop_claim(struct ks_bench_dra_record *r, uint32_t key)
{
    struct claim_slot *s = claim_find(r, key);
    if (!s->key)
        return;
    struct rec_claim *rc = s->rc;
    for (uint32_t i = 0; i < rc->ndevs; i++) {
        struct dev_slot *d = dev_find(r, &rc->devs[i]);
        if (d->claim == key)
            dev_unslot(r, d);
    }
    claim_unslot(r, s);
    free(rc);
}

/* Claim @key now holds the devices of @alloc; a device another claim holds is a conflict. Under the lock. */
static int add_claim(struct ks_bench_dra_record *r, uint32_t key, const struct ks_allocation *alloc)
{
    drop_claim(r, key);
    struct rec_claim *rc = malloc(sizeof(*rc) + alloc->nresults * sizeof(rc->devs[0]));
    if (!rc || ((r->nclaims + 1) * 2 > r->cmask + 1 && claim_grow(r) < 0)) {
        free(rc);
        return -ENOMEM;
    }
    rc->key = key;
    rc->ndevs = 0;
    for (uint32_t i = 0; i < alloc->nresults; i++) {
        const struct ks_device_result *res = &alloc->results[i];
        struct dev d = {res->driver, res->pool, res->device};
        if (res->share_id || (res->has_admin_access && res->admin_access))
            continue; /* shared or admin access: not a dedicated device */
        if ((r->ndevices + 1) * 2 > r->dmask + 1 && dev_grow(r) < 0) {
            free(rc);
            return -ENOMEM;
        }
        struct dev_slot *s = dev_find(r, &d);
        if (s->claim && s->claim != key) {
            if (r->conflicts++ == 0)
                snprintf(r->example, sizeof(r->example), "device %s/%s/%s allocated to %s and %s",
                         ks_intern_str(d.driver), ks_intern_str(d.pool), ks_intern_str(d.device),
                         ks_intern_str(s->claim), ks_intern_str(key));
            continue;
        }
        if (!s->claim)
            r->ndevices++;
        *s = (struct dev_slot){d, key};
        rc->devs[rc->ndevs++] = d;
    }
    *claim_find(r, key) = (struct claim_slot){key, rc};
    r->nclaims++;
    return 0;
}

static uint32_t api_key(const struct ks_dra_api_claim *c)
{
    uint32_t ns = ks_intern(c->namespace_);
    return ns == KS_ID_NONE ? KS_ID_NONE : ks_intern_ns_name(ns, c->name);
}

/* bind_claim - binder threads: record the allocation (the reservation is not kept). */
static int rec_bind_claim(const struct ks_dra_api *api, const struct ks_dra_api_claim *c,
                          const struct ks_allocation *alloc, const char *pod_name, const char *pod_uid,
                          char *rv_out, size_t rvlen, char *msg, size_t len)
{
    struct ks_bench_dra_record *r = api->impl;
    uint32_t key = api_key(c);
    int rc = 0;

    (void)pod_name;
    (void)pod_uid;
    if (key == KS_ID_NONE) {
        snprintf(msg, len, "add allocation and reservation to claim %s/%s: out of memory", c->namespace_,
                 c->name);
        return -1;
    }
    if (alloc) {
        ks_mutex_lock(&r->lock);
        rc = add_claim(r, key, alloc);
        ks_mutex_unlock(&r->lock);
    }
    if (rc < 0) {
        snprintf(msg, len, "add allocation and reservation to claim %s/%s: out of memory", c->namespace_,
                 c->name);
        return -1;
    }
    /* a version no claim of the set reaches: what was written stays assumed */
    snprintf(rv_out, rvlen, "1");
    return 0;
}

static int rec_unreserve(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, const char *pod_uid,
                         char *msg, size_t len)
{
    (void)api;
    (void)c;
    (void)pod_uid;
    (void)msg;
    (void)len;
    return 0;
}

static int rec_deallocate(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, char *rv_out,
                          size_t rvlen, char *msg, size_t len)
{
    struct ks_bench_dra_record *r = api->impl;
    uint32_t key = api_key(c);

    (void)msg;
    (void)len;
    ks_mutex_lock(&r->lock);
    drop_claim(r, key);
    ks_mutex_unlock(&r->lock);
    snprintf(rv_out, rvlen, "1");
    return 0;
}

/* create_claim - binder threads: the special claim is named as generateName would, with a uid of its own. */
static int rec_create_claim(const struct ks_dra_api *api, const struct ks_resource_claim *claim,
                            const char *pod_name, char *name_out, size_t namelen, char *uid_out,
                            size_t uidlen, char *rv_out, size_t rvlen, char *msg, size_t len)
{
    struct ks_bench_dra_record *r = api->impl;
    uint64_t n = atomic_fetch_add_explicit(&r->made, 1, memory_order_relaxed);

    (void)claim;
    (void)msg;
    (void)len;
    ks_dra_extended_claim_name(pod_name, n, name_out, namelen);
    snprintf(uid_out, uidlen, "bench-claim-%" PRIu64, n);
    snprintf(rv_out, rvlen, "1");
    return 0;
}

static int rec_delete_claim(const struct ks_dra_api *api, const struct ks_dra_api_claim *c, char *msg,
                            size_t len)
{
    return rec_deallocate(api, c, (char[8]){0}, 8, msg, len);
}

static uint32_t *pod_claim_slot(const struct ks_bench_dra_record *r, uint32_t pod)
{
    uint32_t h = ks_id_hash(pod) & r->xmask;
    while (r->pod_claims[h * 2] && r->pod_claims[h * 2] != pod)
        h = (h + 1) & r->xmask;
    return &r->pod_claims[h * 2];
}

/* patch_pod_extended - binder threads: which claim serves the pod, for --check. */
static int rec_patch_pod_extended(const struct ks_dra_api *api, const char *namespace_, const char *pod_name,
                                  const char *claim_name, const struct ks_dra_ext_mapping *maps, uint32_t n,
                                  char *msg, size_t len)
{
    struct ks_bench_dra_record *r = api->impl;
    uint32_t ns = ks_intern(namespace_);
    uint32_t pod = ns == KS_ID_NONE ? KS_ID_NONE : ks_intern_ns_name(ns, pod_name);
    uint32_t claim = ns == KS_ID_NONE ? KS_ID_NONE : ks_intern_ns_name(ns, claim_name);
    int rc = 0;

    (void)maps;
    (void)n;
    if (pod == KS_ID_NONE || claim == KS_ID_NONE) {
        snprintf(msg, len, "update pod %s/%s ExtendedResourceClaimStatus: out of memory", namespace_,
                 pod_name);
        return -1;
    }
    ks_mutex_lock(&r->lock);
    if ((r->npod_claims + 1) * 2 > r->xmask + 1) {
        uint32_t *old = r->pod_claims, omask = r->xmask, cap = r->pod_claims ? (r->xmask + 1) * 2 : 64;
        if ((r->pod_claims = calloc((size_t)cap * 2, sizeof(uint32_t)))) {
            r->xmask = cap - 1;
            for (uint32_t i = 0; old && i <= omask; i++) {
                if (old[i * 2]) {
                    uint32_t *slot = pod_claim_slot(r, old[i * 2]);
                    slot[0] = old[i * 2];
                    slot[1] = old[i * 2 + 1];
                }
            }
            free(old);
        } else {
            r->pod_claims = old;
            rc = -1;
        }
    }
    if (rc == 0) {
        uint32_t *slot = pod_claim_slot(r, pod);
        r->npod_claims += slot[0] == 0;
        slot[0] = pod;
        slot[1] = claim;
    }
    ks_mutex_unlock(&r->lock);
    if (rc < 0)
        snprintf(msg, len, "update pod %s/%s ExtendedResourceClaimStatus: out of memory", namespace_,
                 pod_name);
    return rc;
}

int ks_bench_dra_record_create(const struct ks_objects *objs, struct ks_bench_dra_record **out)
{
    struct ks_bench_dra_record *r = calloc(1, sizeof(*r));

    *out = NULL;
    if (!r)
        return -ENOMEM;
    ks_mutex_init(&r->lock, KS_LOCK_BENCH_DRA);
    r->api = (struct ks_dra_api){.bind_claim = rec_bind_claim,
                                 .unreserve = rec_unreserve,
                                 .deallocate = rec_deallocate,
                                 .create_claim = rec_create_claim,
                                 .delete_claim = rec_delete_claim,
                                 .patch_pod_extended = rec_patch_pod_extended,
                                 .impl = r};
    r->dmask = r->cmask = 63;
    if (!(r->devices = calloc(64, sizeof(*r->devices))) || !(r->claims = calloc(64, sizeof(*r->claims))))
        goto fail;
    for (uint32_t i = 0; objs && i < objs->of[KS_KIND_RESOURCE_CLAIM].n; i++) {
        const struct ks_resource_claim *c = objs->of[KS_KIND_RESOURCE_CLAIM].items[i];
        uint32_t key = ks_intern_ns_name(c->meta.namespace_id, c->meta.name);
        if (c->allocation && (key == KS_ID_NONE || add_claim(r, key, c->allocation) < 0))
            goto fail;
    }
    *out = r;
    return 0;
fail:
    ks_bench_dra_record_destroy(r);
    return -ENOMEM;
}

void ks_bench_dra_record_destroy(struct ks_bench_dra_record *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; r->claims && i <= r->cmask; i++)
        free(r->claims[i].rc);
    free(r->claims);
    free(r->devices);
    free(r->pool_nodes);
    free(r->pod_claims);
    ks_mutex_destroy(&r->lock);
    free(r);
}

const struct ks_dra_api *ks_bench_dra_record_api(struct ks_bench_dra_record *r)
{
    return &r->api;
}

void ks_bench_dra_record_forget(struct ks_bench_dra_record *r, const struct ks_resource_claim *c)
{
    uint32_t key = ks_intern_find_ns_name(c->meta.namespace_id, c->meta.name);
    if (key == KS_ID_NONE)
        return;
    ks_mutex_lock(&r->lock);
    drop_claim(r, key);
    ks_mutex_unlock(&r->lock);
}

uint64_t ks_bench_dra_record_conflicts(struct ks_bench_dra_record *r, char *example, size_t len)
{
    ks_mutex_lock(&r->lock);
    uint64_t n = r->conflicts;
    snprintf(example, len, "%s", r->example);
    ks_mutex_unlock(&r->lock);
    return n;
}

/* The node of pool (@driver, @pool) among the slices of @objs: KS_ID_NONE when not node-local or unknown. */
static uint32_t pool_node(struct ks_bench_dra_record *r, const struct ks_objects *objs, uint32_t driver,
                          uint32_t pool)
{
    const struct ks_objvec *sv = &objs->of[KS_KIND_RESOURCE_SLICE];
    if (!r->pool_nodes) {
        uint32_t cap = 16;
        while (cap < 2 * sv->n + 2)
            cap *= 2;
        if (!(r->pool_nodes = calloc((size_t)cap * 3, sizeof(uint32_t))))
            return KS_ID_NONE;
        r->pmask = cap - 1;
        for (uint32_t i = 0; i < sv->n; i++) {
            const struct ks_resource_slice *s = sv->items[i];
            uint32_t h = (ks_id_hash(s->driver) ^ ks_id_hash(s->pool) * 31) & r->pmask;
            while (r->pool_nodes[h * 3] &&
                   !(r->pool_nodes[h * 3] == s->driver && r->pool_nodes[h * 3 + 1] == s->pool))
                h = (h + 1) & r->pmask;
            r->pool_nodes[h * 3] = s->driver;
            r->pool_nodes[h * 3 + 1] = s->pool;
            r->pool_nodes[h * 3 + 2] = s->node_name;
        }
    }
    for (uint32_t h = (ks_id_hash(driver) ^ ks_id_hash(pool) * 31) & r->pmask; r->pool_nodes[h * 3];
         h = (h + 1) & r->pmask) {
        if (r->pool_nodes[h * 3] == driver && r->pool_nodes[h * 3 + 1] == pool)
            return r->pool_nodes[h * 3 + 2];
    }
    return KS_ID_NONE;
}

/* Claim @name (key @key) of @pod bound to @node: written, with devices of that node only. Under the lock. */
static int check_claim(struct ks_bench_dra_record *r, const struct ks_objects *objs, const struct ks_pod *pod,
                       uint32_t node, uint32_t key, const char *name, char *msg, size_t len)
{
    const char *ns = ks_intern_str(pod->meta.namespace_id);
    struct claim_slot *s = key == KS_ID_NONE ? NULL : claim_find(r, key);

    if (!s || !s->key) {
        snprintf(msg, len, "pod %s/%s bound to %s: no allocation of its claim %s/%s was written", ns,
                 pod->meta.name, ks_intern_str(node), ns, name);
        return -1;
    }
    for (uint32_t d = 0; d < s->rc->ndevs; d++) {
        const struct dev *dv = &s->rc->devs[d];
        uint32_t at = pool_node(r, objs, dv->driver, dv->pool);
        if (at != KS_ID_NONE && at != node) {
            snprintf(msg, len, "pod %s/%s bound to %s: its claim %s/%s has device %s/%s/%s of node %s", ns,
                     pod->meta.name, ks_intern_str(node), ns, name, ks_intern_str(dv->driver),
                     ks_intern_str(dv->pool), ks_intern_str(dv->device), ks_intern_str(at));
            return -1;
        }
    }
    return 0;
}

int ks_bench_dra_record_check_pod(struct ks_bench_dra_record *r, const struct ks_objects *objs,
                                  const struct ks_pod *pod, uint32_t node, char *msg, size_t len)
{
    int rc = 0;

    ks_mutex_lock(&r->lock);
    for (uint32_t i = 0; i < pod->nclaims && rc == 0; i++) {
        const struct ks_pod_claim *pc = &pod->claims[i];
        const char *name = pc->claim_name;
        for (uint32_t s = 0; !name && s < pod->nclaim_statuses; s++) {
            if (strcmp(pod->claim_statuses[s].name, pc->name) == 0)
                name = pod->claim_statuses[s].claim_name;
        }
        if (name)
            rc = check_claim(r, objs, pod, node, ks_intern_find_ns_name(pod->meta.namespace_id, name), name,
                             msg, len);
    }
    uint32_t key =
        r->pod_claims ? ks_intern_find_ns_name(pod->meta.namespace_id, pod->meta.name) : KS_ID_NONE;
    const uint32_t *slot = key != KS_ID_NONE ? pod_claim_slot(r, key) : NULL;
    if (rc == 0 && slot && slot[0])
        rc = check_claim(r, objs, pod, node, slot[1], strchr(ks_intern_str(slot[1]), '/') + 1, msg, len);
    ks_mutex_unlock(&r->lock);
    return rc;
}
