/*
 * dynamic_resources.c - the DynamicResources plugin: places pods whose ResourceClaims need
 * devices on nodes where the structured allocator finds them, and allocates them
 * (PreEnqueue, PreFilter, Filter, PostFilter, Score, NormalizeScore, Reserve, Unreserve,
 * PreBind).
 *
 * Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go of current
 * upstream with v1.37's default feature gates; the allocator is dra/ (ksched/dra.h), the
 * claims as the scheduler sees them are the tracker's (ksched/plugin_helpers_dra.h):
 *  - PreEnqueue: every claim of the pod exists ("pod \"ns/name\": ResourceClaim not created
 *    yet", "could not find ResourceClaim \"ns/name\"", "resourceclaim \"name\" is being
 *    deleted", "ResourceClaim ns/name was not created for pod ns/name (pod is not owner)"),
 *    UnschedulableAndUnresolvable.
 *  - PreFilter: the same lookups; no claim: Skip. Per claim in order: allocated, reserved
 *    for 256 consumers and not for this pod: "resourceclaim in use"; allocated: its node
 *    selector limits the nodes; not allocated: "resource claim ns/name is in the process of
 *    being allocated" while another pod's allocation of it is written, and every request's
 *    class must exist ("request r: device class c does not exist", "request r/s: ..." for a
 *    subrequest). The unallocated claims are prepared for the allocator once.
 *  - Filter: an allocated claim whose node selector rejects the node, or whose devices
 *    report a binding failure, makes it "resourceclaim not available on the node"; the
 *    unallocated claims must be allocatable together there ("cannot allocate all claims";
 *    the allocator's node-specific failure message; its errors abort the cycle as Error).
 *    All UnschedulableAndUnresolvable.
 *  - PostFilter: an allocated claim that was not available on some node the plugin
 *    rejected, and is reserved for no one but this pod, is deallocated ("deallocation of
 *    ResourceClaim completed"); the first such claim is taken (upstream takes a random one).
 *  - Score: for the claims that prioritized lists (firstAvailable) leave a choice, 8 minus
 *    the index of the subrequest the allocation used, summed; DefaultNormalizeScore.
 *  - Reserve: the chosen node's allocation becomes in flight (its devices in use);
 *    Unreserve ends it and drops the pod's reservations.
 *  - PreBind: each claim not yet reserved for the pod gets its allocation and the pod in
 *    status.reservedFor: through the API server (ksched/internal/dra_api.h: bindClaim with its
 *    conflict retries; what was written is assumed until the informer delivers it), or,
 *    without one (`ksched schedule`, bench), in process, the claim update then delivered to
 *    the queue as its informer event would be. Unreserve patches the pod's reservation
 *    away; PostFilter's deallocation is an update of the claim's status.
 *
 * Extended resources backed by devices (DRAExtendedResource, ksched/dra_extended.h;
 * extendeddynamicresources.go): PreFilter finds the pod's requests a DeviceClass backs and
 * prepares, per set of them a node may lack, the pod's claims with that variant of the
 * special claim (helper_dra_extended.c); Filter rejects every node while the pod's special
 * claim of an earlier cycle exists ("cannot schedule extended resource claim") and a node
 * without a requested resource no class backs ("cannot fit resource"), then allocates the
 * node's variant with the claims; PostFilter deletes that earlier claim ("deletion of
 * ResourceClaim completed"); Reserve puts the special claim's devices in flight; PreBind
 * creates it (through the server: POSTed, written as bindClaim writes, the pod's
 * status.extendedResourceClaimStatus patched; in process: named as generateName would);
 * Unreserve deletes it. Device status binding waits and the allocation timeouts are not part
 * of this plugin yet.
 *
 * Filter and Score run in parallel and read only the cycle state, the tracker's catalog
 * and devices in use (changed by the scheduling thread between cycles only) and a
 * per-thread allocator scratch: no lock, no allocation once a thread's scratch has grown.
 * A pod without claims pays one check in PreFilter, one call per block of nodes in Score
 * (all zeros), and the signature covers it.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/dra.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config_decode.h"
#include "ksched/internal/dra_api.h"
#include "ksched/internal/yaml_out.h"
#include "ksched/plugin_args.h"
#include "ksched/plugin_helpers.h"
#include "ksched/plugin_helpers_dra.h"
#include "ksched/registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DR_MSG_MAX            512
#define DR_FIRST_AVAILABLE    8   /* FirstAvailableDeviceRequestMaxSize */
#define DR_RESERVED_FOR_MAX   256 /* ResourceClaimReservedForMaxSize */
#define DR_DEFAULT_FILTER_NS  (INT64_C(10) * 1000000000)
#define DR_DEFAULT_BINDING_NS (INT64_C(600) * 1000000000)

/* ---- args ---------------------------------------------------------------------------------------- */

static int args_decode(struct ks_decoder *d, const struct ks_yaml_node *node, const char *api_version,
                       struct ks_dynamicresources_args *a)
{
    static const char *const fields[] = {"filterTimeout", "bindingTimeout", NULL};
    enum ks_config_version version;
    char text[32];
    int rc;

    a->filter_timeout_ns = DR_DEFAULT_FILTER_NS;
    a->binding_timeout_ns = DR_DEFAULT_BINDING_NS;
    if ((rc = ks_cfg_args_begin(d, node, "DynamicResourcesArgs", api_version, fields, &version)) ||
        (rc = ks_cfg_duration(d, node, "filterTimeout", &a->filter_timeout_ns)) ||
        (rc = ks_cfg_duration(d, node, "bindingTimeout", &a->binding_timeout_ns)))
        return rc;
    if (a->filter_timeout_ns < 0) {
        ks_cfg_format_duration(a->filter_timeout_ns, text, sizeof(text));
        return ks_cfg_fail_at(d, ks_yaml_get(node, "filterTimeout"), 0, "filterTimeout",
                              "Invalid value: \"%s\": must be zero or positive", text);
    }
    if (a->binding_timeout_ns < INT64_C(1000000000)) {
        ks_cfg_format_duration(a->binding_timeout_ns, text, sizeof(text));
        return ks_cfg_fail_at(d, ks_yaml_get(node, "bindingTimeout"), 0, "bindingTimeout",
                              "Invalid value: \"%s\": must be at least 1 second", text);
    }
    return 0;
}

KS_DEFINE_PLAIN_ARGS_OPS(struct ks_dynamicresources_args, args_decode)

static void args_print(const void *args, struct ks_yaml_out *o)
{
    const struct ks_dynamicresources_args *a = args;
    char text[32];

    ks_cfg_format_duration(a->binding_timeout_ns, text, sizeof(text));
    ks_yaml_key_str(o, "bindingTimeout", text);
    ks_cfg_format_duration(a->filter_timeout_ns, text, sizeof(text));
    ks_yaml_key_str(o, "filterTimeout", text);
}

/* ---- the instance and the cycle state ---------------------------------------------------------- */

struct dynamic_resources {
    struct ks_dra_tracker *tracker;
    const struct ks_objects *objs; /* the DeviceClasses that back extended resources */
    struct ks_cache *cache;
    const struct ks_dra_api *api; /* NULL: claims are written in process */
    struct ks_event_sink events;  /* in process: the claim updates the queue sees */
    uint16_t slot;
    int64_t binding_timeout_ns;     /* DynamicResourcesArgs.bindingTimeout */
    struct ks_dra_claims *prepared; /* the last PreFilter's, freed by the next one */
    struct ks_dra_ext ext;          /* the last PreFilter's extended resources, refilled by the next one */
    _Atomic uint64_t names;         /* in process: special claims named so far */
    uint32_t msg_cannot_allocate, msg_not_available, msg_cannot_fit, msg_stale;
};

/* One claim of the pod, as PreFilter saw it. */
struct dr_claim {
    struct ks_dra_claim c;
    const char *ns, *name, *uid, *rv; /* copies for the binding cycle */
    struct ks_allocation *allocation; /* Reserve's, for PreBind; NULL: none made */
    bool scored;                      /* unallocated, with a prioritized list */
    bool binding_unusable;            /* allocated, its binding failed or timed out */
};

/* The special claim for the pod's extended resources backed by devices, from Reserve on. */
struct dr_special {
    struct ks_resource_claim *claim; /* the chosen node's variant, then as created */
    struct ks_dra_ext_mapping *maps; /* its request mappings */
    uint32_t nmaps;
    struct ks_allocation *allocation; /* Reserve's */
    uint32_t key;                     /* the tracker's entry: in memory, then the created claim's */
    bool created;                     /* PreBind created it */
};

struct dr_state {
    uint32_t n;
    struct dr_claim *claims;
    uint32_t nalloc;                      /* claims to allocate */
    const struct ks_dra_claims *prepared; /* NULL when nalloc is 0 */
    bool scores;                          /* some claim to allocate has a prioritized list */
    const struct ks_dra_ext *ext;         /* NULL: no extended resource backed by devices */
    struct dr_special special;            /* claim NULL: none reserved */
    char pod_uid[320];
};

/* ---- per-thread allocator scratch ---------------------------------------------------------------- */

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static _Thread_local struct ks_dra_scratch *thread_scratch;

static void scratch_free(void *s)
{
    ks_dra_scratch_destroy(s);
}

static void scratch_key_create(void)
{
    pthread_key_create(&scratch_key, scratch_free);
}

/* The calling thread's scratch, made on its first use (a thread's first Filter allocates). */
static struct ks_dra_scratch *scratch(void)
{
    if (__builtin_expect(thread_scratch != NULL, 1))
        return thread_scratch;
    pthread_once(&scratch_once, scratch_key_create);
    if (ks_dra_scratch_create(&thread_scratch) < 0)
        return NULL;
    pthread_setspecific(scratch_key, thread_scratch);
    return thread_scratch;
}

/* ---- life ---------------------------------------------------------------------------------------- */

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    const struct ks_framework_deps *deps = in->framework ? ks_framework_deps(in->framework) : NULL;
    struct dynamic_resources *p = calloc(1, sizeof(*p));
    struct ks_dra_features features = ks_dra_features_default();
    int rc;

    (void)err;
    if (!p)
        return -ENOMEM;
    p->slot = in->slot;
    p->binding_timeout_ns = in->args ? ((const struct ks_dynamicresources_args *)in->args)->binding_timeout_ns
                                     : DR_DEFAULT_BINDING_NS;
    p->cache = deps ? deps->cache : NULL;
    p->objs = deps ? deps->objects : NULL;
    p->api = deps ? deps->dra_api : NULL;
    if (deps && !p->api)
        p->events = deps->events;
    p->msg_cannot_allocate = ks_intern("cannot allocate all claims");
    p->msg_not_available = ks_intern("resourceclaim not available on the node");
    p->msg_cannot_fit = ks_intern("cannot fit resource");
    p->msg_stale = ks_intern("cannot schedule extended resource claim");
    if ((rc = ks_dra_tracker_create(deps ? deps->objects : NULL, &features, p->api == NULL, &p->tracker)) <
        0) {
        free(p);
        return rc;
    }
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    struct dynamic_resources *p = self;

    if (!p)
        return;
    ks_dra_claims_destroy(p->prepared);
    ks_dra_ext_destroy(&p->ext);
    ks_dra_tracker_destroy(p->tracker);
    free(p);
}

/* ---- PreEnqueue ----------------------------------------------------------------------------------- */

/* pre_enqueue - any thread, under the queue's locks; takes the tracker's lock, interns on rejection. */
static int pre_enqueue(void *self, const struct ks_pod *pod, struct ks_status *st)
{
    struct dynamic_resources *p = self;
    char msg[DR_MSG_MAX];
    uint32_t n;
    int code = KS_SUCCESS;

    if (pod->nclaims == 0)
        return KS_SUCCESS;
    /* a tracker behind the announced claim changes cannot tell: PreFilter syncs it and answers */
    if (ks_dra_tracker_pod_claims(p->tracker, pod, NULL, NULL, &n, NULL, msg, sizeof(msg)) != KS_DRA_FOUND &&
        !ks_dra_tracker_behind(p->tracker))
        code = ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", msg);
    return code;
}

/* ---- binding conditions ---------------------------------------------------------------------------- */

/* The status of device @r of @obj's allocation (getAllocatedDeviceStatus), or NULL. */
static const struct ks_device_status *device_status(const struct ks_resource_claim *obj,
                                                    const struct ks_device_result *r)
{
    for (uint32_t d = 0; d < obj->ndevice_status; d++) {
        const struct ks_device_status *ds = &obj->device_status[d];
        if (ds->driver == r->driver && ds->pool == r->pool && ds->device == r->device)
            return ds;
    }
    return NULL;
}

/* apimeta.IsStatusConditionTrue of condition @type in @ds. */
static bool condition_true(const struct ks_device_status *ds, const char *type)
{
    for (uint32_t k = 0; k < ds->nconditions; k++) {
        if (ds->conditions[k].type && strcmp(ds->conditions[k].type, type) == 0)
            return ds->conditions[k].status && strcmp(ds->conditions[k].status, "True") == 0;
    }
    return false;
}

/*
 * isClaimReadyForBinding and isClaimTimeout: whether allocated claim @obj (allocation @a)
 * cannot be used until it is deallocated: a device reports a binding failure condition, or
 * its binding conditions are not all true @timeout_ns after the allocation (at @now_ns).
 */
static bool binding_unusable(const struct ks_resource_claim *obj, const struct ks_allocation *a,
                             int64_t now_ns, int64_t timeout_ns)
{
    bool ready = true, conditions = false;

    for (uint32_t i = 0; i < a->nresults; i++) {
        const struct ks_device_result *r = &a->results[i];
        if (!r->nbinding_conditions)
            continue;
        conditions = true;
        const struct ks_device_status *ds = device_status(obj, r);
        if (!ds) {
            ready = false;
            continue;
        }
        for (uint32_t f = 0; f < r->nbinding_failure_conditions; f++) {
            if (condition_true(ds, r->binding_failure_conditions[f]))
                return true;
        }
        for (uint32_t k = 0; k < r->nbinding_conditions; k++)
            ready = ready && condition_true(ds, r->binding_conditions[k]);
    }
    return !ready && conditions && a->allocation_time != KS_TIME_NONE &&
           a->allocation_time + timeout_ns < now_ns;
}

/* ---- PreFilter ------------------------------------------------------------------------------------ */

/* validateDeviceClass of one request or subrequest named @req. */
static int check_class(const struct dynamic_resources *p, const char *req, const char *class,
                       struct ks_status *st)
{
    if (!class || !class[0])
        return ks_status_set(st, KS_ERROR, "request %s: unsupported request type", req);
    uint32_t id = ks_intern_find(class, strlen(class));
    if (id == KS_ID_NONE || !ks_dra_catalog_class(ks_dra_tracker_catalog(p->tracker), id))
        return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "request %s: device class %s does not exist", req, class);
    return KS_SUCCESS;
}

static int check_requests(const struct dynamic_resources *p, const struct ks_resource_claim *c, bool *scored,
                          struct ks_status *st)
{
    char name[320];
    int code;

    for (uint32_t i = 0; i < c->spec.nrequests; i++) {
        const struct ks_device_request *r = &c->spec.requests[i];
        if (r->exact) {
            if ((code = check_class(p, r->name, r->spec.device_class_name, st)) != KS_SUCCESS)
                return code;
            continue;
        }
        *scored = true;
        for (uint32_t j = 0; j < r->nsubrequests; j++) {
            snprintf(name, sizeof(name), "%s/%s", r->name, r->subrequests[j].name);
            if ((code = check_class(p, name, r->subrequests[j].device_class_name, st)) != KS_SUCCESS)
                return code;
        }
    }
    return KS_SUCCESS;
}

/* The wall clock: the binding timeout counts from a claim's allocationTimestamp, a date. */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *cs_strdup(struct ks_cycle_state *cs, const char *s)
{
    return s ? ks_arena_strdup(&cs->arena, s) : NULL;
}

/* Whether @pod may ask for an extended resource that devices back: some class and a scalar request. */
static bool may_use_devices_for_resources(const struct dynamic_resources *p, const struct ks_pod *pod)
{
    return pod->requests.nscalar && p->objs && p->objs->of[KS_KIND_DEVICE_CLASS].n;
}

static int pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                      struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct dynamic_resources *p = self;
    char msg[DR_MSG_MAX];
    int code;

    (void)res;
    cs->slot[p->slot] = NULL;
    if (pod->nclaims == 0 && !may_use_devices_for_resources(p, pod))
        return KS_SKIP;
    ks_dra_claims_destroy(p->prepared); /* the previous pod's cycles are over */
    p->prepared = NULL;
    ks_dra_ext_release(&p->ext);
    if (ks_dra_tracker_sync(p->tracker) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    uint32_t room = pod->nclaims ? pod->nclaims : 1;
    struct dr_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));
    struct ks_dra_claim *views = ks_arena_calloc(&cs->arena, room, sizeof(*views));
    if (!s || !views || !(s->claims = ks_arena_calloc(&cs->arena, room, sizeof(*s->claims))))
        return ks_status_set(st, KS_ERROR, "out of memory");
    uint32_t n;
    enum ks_dra_lookup r =
        ks_dra_tracker_pod_claims(p->tracker, pod, NULL, views, &n, NULL, msg, sizeof(msg));
    if (r != KS_DRA_FOUND)
        return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", msg);
    if (n == 0 && !may_use_devices_for_resources(p, pod))
        return KS_SKIP;
    ks_pod_identity(pod, s->pod_uid, sizeof(s->pod_uid));
    const struct ks_resource_claim **to_alloc = ks_arena_calloc(&cs->arena, room, sizeof(*to_alloc));
    if (!to_alloc)
        return ks_status_set(st, KS_ERROR, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        struct dr_claim *c = &s->claims[i];
        const struct ks_resource_claim *obj = views[i].obj;
        const char *ns = ks_intern_str(obj->meta.namespace_id);
        c->c = views[i];
        if (!(c->ns = cs_strdup(cs, ns)) || !(c->name = cs_strdup(cs, obj->meta.name)) ||
            (obj->meta.uid && !(c->uid = cs_strdup(cs, obj->meta.uid))) ||
            (obj->meta.resource_version && !(c->rv = cs_strdup(cs, obj->meta.resource_version))))
            return ks_status_set(st, KS_ERROR, "out of memory");
        if (c->c.allocation) {
            if (c->c.nreserved >= DR_RESERVED_FOR_MAX && !c->c.reserved_for_pod)
                return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim in use");
            c->binding_unusable = binding_unusable(obj, c->c.allocation, now_ns(), p->binding_timeout_ns);
            continue;
        }
        if (c->c.in_flight)
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "resource claim %s/%s is in the process of being allocated", ns,
                                 obj->meta.name);
        if ((code = check_requests(p, obj, &c->scored, st)) != KS_SUCCESS)
            return code;
        s->scores = s->scores || c->scored;
        to_alloc[s->nalloc++] = obj;
    }
    s->n = n;
    int x = ks_dra_ext_prepare(&p->ext, p->tracker, p->objs, pod, to_alloc, s->nalloc);
    if (x == -E2BIG)
        return ks_status_set(st, KS_ERROR, "more than %d extended resources backed by devices",
                             KS_DRA_EXT_MAX);
    if (x < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    s->ext = x ? &p->ext : NULL;
    if (n == 0 && !s->ext)
        return KS_SKIP;
    if (s->nalloc) {
        if (ks_dra_claims_prepare(ks_dra_tracker_catalog(p->tracker), to_alloc, s->nalloc, &p->prepared) < 0)
            return ks_status_set(st, KS_ERROR, "out of memory");
        s->prepared = p->prepared;
    }
    cs->slot[p->slot] = s;
    return KS_SUCCESS;
}

/* ---- Filter --------------------------------------------------------------------------------------- */

/* Claim @c (allocated) cannot be used on @node: its node selector rejects it, or its binding failed. */
static bool unavailable(const struct dr_claim *c, const struct ks_node_snap *node)
{
    const struct ks_allocation *a = c->c.allocation;
    static const struct ks_labels none;

    if (a->node_selector && !ks_node_selector_matches(
                                a->node_selector, node->node ? &node->node->meta.labels : &none, node->name))
        return true;
    return c->binding_unusable;
}

/* Set @st to UnschedulableAndUnresolvable with interned reason @msg. */
static int unresolvable(struct ks_status *st, uint32_t msg)
{
    st->code = KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    st->nreasons = 1;
    st->reasons[0] = msg;
    return KS_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/*
 * The allocation of the @prepared claims on @node into @results (in the thread's scratch;
 * NULL: only whether there is one): KS_SUCCESS, or the code and reason Filter reports.
 */
static int allocate_on(const struct dynamic_resources *p, const struct ks_dra_claims *prepared,
                       const struct ks_node_snap *node, struct ks_allocation *results, struct ks_status *st)
{
    struct ks_dra_scratch *sc = scratch();
    char err[DR_MSG_MAX];

    if (!sc || !node->node)
        return ks_status_set(st, KS_ERROR, !sc ? "out of memory" : "node not found");
    err[0] = '\0';
    int rc = ks_dra_allocate_prepared(ks_dra_tracker_allocated(p->tracker), node->node, prepared, sc, results,
                                      err, sizeof(err));
    switch (rc) {
    case KS_DRA_ALLOCATED:
        return KS_SUCCESS;
    case KS_DRA_UNSUITABLE:
        if (err[0])
            return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", err);
        return unresolvable(st, p->msg_cannot_allocate);
    case KS_DRA_ERROR:
        return ks_status_set(st, KS_ERROR, "%s", err);
    default:
        return ks_status_set(st, KS_ERROR, "out of memory");
    }
}

/*
 * The claims to allocate on @node: the pod's, with the node's variant of the special claim
 * when the pod's extended resources need devices there (*mask: which of them; *out NULL:
 * nothing to allocate); or filterExtendedResources' rejection of the node.
 */
static int node_claims(const struct dynamic_resources *p, const struct dr_state *s,
                       const struct ks_node_snap *node, const struct ks_dra_claims **out, int *mask,
                       struct ks_status *st)
{
    *out = s->prepared;
    *mask = 0;
    if (!s->ext)
        return KS_SUCCESS;
    if (s->ext->stale)
        return unresolvable(st, p->msg_stale);
    if ((*mask = ks_dra_ext_node_mask(s->ext, node->node)) < 0)
        return unresolvable(st, p->msg_cannot_fit);
    if (*mask)
        *out = s->ext->variant[*mask];
    return KS_SUCCESS;
}

static int filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                  const struct ks_node_snap *node, struct ks_status *st)
{
    const struct dynamic_resources *p = self;
    const struct dr_state *s = cs->slot[p->slot];
    const struct ks_dra_claims *prepared;
    bool any_unavailable = false;
    int mask, code;

    (void)pod;
    if (!s)
        return KS_SUCCESS;
    if ((code = node_claims(p, s, node, &prepared, &mask, st)) != KS_SUCCESS)
        return code;
    for (uint32_t i = 0; i < s->n; i++)
        any_unavailable = any_unavailable || (s->claims[i].c.allocation && unavailable(&s->claims[i], node));
    if (prepared && (code = allocate_on(p, prepared, node, NULL, st)) != KS_SUCCESS)
        return code; /* Reserve allocates again on its node */
    if (any_unavailable)
        return unresolvable(st, p->msg_not_available);
    return KS_SUCCESS;
}

/*
 * explain_filter - for --explain, on a node where the claims could not be allocated: which
 * claim and request the node cannot serve, and why (ks_dra_explain). Scheduling thread.
 */
static int explain_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_node_snap *node, const struct ks_status *st, char *buf, size_t len)
{
    const struct dynamic_resources *p = self;
    const struct dr_state *s = cs->slot[p->slot];
    struct ks_dra_scratch *sc = scratch();
    const struct ks_dra_claims *prepared;
    struct ks_status ignored;
    int mask;

    (void)pod;
    if (!s || !sc || !node->node || st->nreasons != 1 || st->reasons[0] != p->msg_cannot_allocate ||
        node_claims(p, s, node, &prepared, &mask, &ignored) != KS_SUCCESS || !prepared)
        return 0;
    return ks_dra_explain(ks_dra_tracker_allocated(p->tracker), node->node, prepared, sc, buf, len);
}

/* ---- PostFilter ----------------------------------------------------------------------------------- */

/* Whether allocated claim @c was found not available on a node this plugin rejected. */
static bool was_unavailable(const struct dynamic_resources *p, const struct dr_claim *c,
                            const struct ks_diagnosis *diag)
{
    for (uint32_t i = 0; i < diag->nfailed; i++) {
        const struct ks_node_snap *node;
        const struct ks_status *st = ks_diagnosis_at(diag, i, &node);
        if (st->plugin == p->slot && unavailable(c, node))
            return true;
    }
    return false;
}

/* A view of claim @obj with @alloc and @nreserved, for the queue's hints (which read no more). */
static void emit_update(const struct dynamic_resources *p, const struct ks_resource_claim *obj,
                        const struct ks_allocation *old_alloc, uint32_t old_nreserved,
                        const struct ks_allocation *new_alloc, uint32_t new_nreserved)
{
    struct ks_resource_claim before, after;

    if (!p->events.emit || !obj)
        return;
    before = *obj;
    before.allocation = (struct ks_allocation *)old_alloc;
    before.nreserved = old_nreserved;
    after = *obj;
    after.allocation = (struct ks_allocation *)new_alloc;
    after.nreserved = new_nreserved;
    after.reserved = new_nreserved <= obj->nreserved ? obj->reserved : NULL;
    before.reserved = old_nreserved <= obj->nreserved ? obj->reserved : NULL;
    p->events.emit(p->events.ctx, KS_ER_RESOURCE_CLAIM, &before, &after);
}

/* The special claim of an earlier cycle goes (its finalizer removed first), for the pod to retry anew. */
static int delete_stale(struct dynamic_resources *p, const struct dr_state *s, struct ks_status *st)
{
    const struct ks_resource_claim *c = s->ext->found.obj;
    char msg[DR_MSG_MAX];

    if (p->api) {
        struct ks_dra_api_claim ac = {ks_intern_str(c->meta.namespace_id), c->meta.name, c->meta.uid,
                                      c->meta.resource_version};
        if (!p->api->delete_claim)
            return ks_status_set(st, KS_ERROR, "delete resourceclaim: not supported by this API");
        if (p->api->delete_claim(p->api, &ac, msg, sizeof(msg)) < 0)
            return ks_status_set(st, KS_ERROR, "%s", msg);
    }
    if (ks_dra_tracker_deleted(p->tracker, s->ext->found.key) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    return ks_status_set(st, KS_UNSCHEDULABLE, "deletion of ResourceClaim completed");
}

static int post_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                       struct ks_status *st)
{
    struct dynamic_resources *p = self;
    const struct dr_state *s = cs->slot[p->slot];

    (void)pod;
    (void)res;
    if (!s)
        return ks_status_set(st, KS_UNSCHEDULABLE, "no new claims to deallocate");
    for (uint32_t i = 0; i < s->n; i++) {
        const struct dr_claim *c = &s->claims[i];
        if (!c->c.allocation || !was_unavailable(p, c, diag))
            continue;
        if (c->c.nreserved != 0 && !c->c.only_reserved_for_pod)
            continue;
        char rv[64], msg[DR_MSG_MAX];
        if (p->api) {
            struct ks_dra_api_claim ac = {c->ns, c->name, c->uid, c->rv};
            if (p->api->deallocate(p->api, &ac, rv, sizeof(rv), msg, sizeof(msg)) < 0)
                return ks_status_set(st, KS_ERROR, "%s", msg);
        }
        if (ks_dra_tracker_deallocate(p->tracker, c->c.key, p->api ? rv : NULL) < 0)
            return ks_status_set(st, KS_ERROR, "out of memory");
        emit_update(p, c->c.obj, c->c.allocation, c->c.nreserved, NULL, 0);
        return ks_status_set(st, KS_UNSCHEDULABLE, "deallocation of ResourceClaim completed");
    }
    if (s->ext && s->ext->stale)
        return delete_stale(p, s, st);
    return ks_status_set(st, KS_UNSCHEDULABLE, "still not schedulable");
}

/* ---- Score ---------------------------------------------------------------------------------------- */

/* computeScore: FirstAvailableDeviceRequestMaxSize minus the index of each allocated subrequest. */
static int64_t claim_score(const struct ks_resource_claim *obj, const struct ks_allocation *a)
{
    int64_t score = 0;

    for (uint32_t i = 0; i < obj->spec.nrequests; i++) {
        const struct ks_device_request *r = &obj->spec.requests[i];
        size_t len = strlen(r->name);
        if (r->exact)
            continue;
        for (uint32_t j = 0; j < r->nsubrequests; j++) {
            const char *sub = r->subrequests[j].name;
            for (uint32_t k = 0; k < a->nresults; k++) {
                const char *ref = a->results[k].request;
                if (strncmp(ref, r->name, len) == 0 && ref[len] == '/' && strcmp(ref + len + 1, sub) == 0) {
                    score += DR_FIRST_AVAILABLE - (int64_t)j;
                    break;
                }
            }
        }
    }
    return score;
}

static int score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                 const struct ks_node_snap *node, int64_t *out, struct ks_status *st)
{
    const struct dynamic_resources *p = self;
    const struct dr_state *s = cs->slot[p->slot];
    struct ks_allocation results[KS_DRA_ALLOCATION_RESULTS_MAX + 1];
    const struct ks_dra_claims *prepared;
    uint32_t j = 0;
    int mask;

    (void)pod;
    *out = 0;
    if (!s || !s->scores || s->nalloc > KS_DRA_ALLOCATION_RESULTS_MAX)
        return KS_SUCCESS;
    /* Filter passed the node: the same inputs allocate the same way */
    if (node_claims(p, s, node, &prepared, &mask, st) != KS_SUCCESS || !prepared ||
        allocate_on(p, prepared, node, results, st) != KS_SUCCESS)
        return KS_SUCCESS;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct dr_claim *c = &s->claims[i];
        *out += claim_score(c->c.obj, c->c.allocation ? c->c.allocation : &results[j++]);
    }
    return KS_SUCCESS;
}

/* score_nodes - the batched Score: a pod with nothing to choose among scores 0 everywhere at once. */
static int score_nodes(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_node_snap *const *nodes, uint32_t n, int64_t *out)
{
    const struct dynamic_resources *p = self;
    const struct dr_state *s = cs->slot[p->slot];
    struct ks_status st;

    if (!s || !s->scores) {
        memset(out, 0, n * sizeof(*out));
        return KS_SUCCESS;
    }
    for (uint32_t i = 0; i < n; i++)
        score(self, cs, pod, nodes[i], &out[i], &st);
    return KS_SUCCESS;
}

/* ---- Reserve, Unreserve --------------------------------------------------------------------------- */

/*
 * The special claim Reserve allocated (its variant for the resources the node lacks, @mask)
 * with its request mappings, in flight in the tracker until PreBind creates it.
 */
static int reserve_special(struct dynamic_resources *p, struct dr_state *s, struct ks_cycle_state *cs,
                           const struct ks_pod *pod, int mask, struct ks_status *st)
{
    struct ks_dra_ext_resource sub[KS_DRA_EXT_MAX];
    struct dr_special *x = &s->special;
    uint32_t n = 0;

    for (uint32_t i = 0; i < s->ext->nres; i++) {
        if (mask & (1 << i))
            sub[n++] = s->ext->res[i];
    }
    if (ks_dra_extended_claim(&cs->arena, pod, sub, n, &x->claim, &x->maps, &x->nmaps) < 0)
        return ks_status_set(st, KS_ERROR, "out of memory");
    if (ks_dra_tracker_reserve_new(p->tracker, x->claim, s->pod_uid, x->allocation, &x->key) < 0) {
        x->claim = NULL;
        return ks_status_set(st, KS_ERROR, "internal error, couldn't signal allocation for claim %s",
                             KS_DRA_SPECIAL_CLAIM_NAME);
    }
    return KS_SUCCESS;
}

/* reserve - Scheduling thread, outside RCU: allocates again on the chosen node and keeps it in flight. */
static int reserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                   struct ks_status *st)
{
    struct dynamic_resources *p = self;
    struct dr_state *s = cs->slot[p->slot];
    struct ks_allocation results[KS_DRA_ALLOCATION_RESULTS_MAX + 1];
    const struct ks_dra_claims *prepared = NULL;
    int code = KS_SUCCESS, mask = 0;

    if (!s || (!s->nalloc && !s->ext))
        return KS_SUCCESS;
    if (!p->cache || s->nalloc > KS_DRA_ALLOCATION_RESULTS_MAX)
        return ks_status_set(st, KS_ERROR, "claim allocation not found for node");
    ks_rcu_read_lock();
    const struct ks_node_snap *ns = ks_snapshot_find(ks_cache_snapshot(p->cache), node);
    if (!ns || node_claims(p, s, ns, &prepared, &mask, st) != KS_SUCCESS ||
        (prepared && allocate_on(p, prepared, ns, results, st) != KS_SUCCESS)) {
        code = KS_ERROR;
    } else if (prepared) {
        uint32_t j = 0;
        for (uint32_t i = 0; i < s->n && code == KS_SUCCESS; i++) {
            struct dr_claim *c = &s->claims[i];
            if (c->c.allocation)
                continue;
            if (!(c->allocation = ks_dra_allocation_copy(&cs->arena, &results[j++])))
                code = KS_ERROR;
        }
        if (mask && code == KS_SUCCESS &&
            !(s->special.allocation = ks_dra_allocation_copy(&cs->arena, &results[j])))
            code = KS_ERROR;
    }
    ks_rcu_read_unlock();
    if (code != KS_SUCCESS)
        return ks_status_set(st, KS_ERROR, "claim allocation not found for node");
    if (mask && (code = reserve_special(p, s, cs, pod, mask, st)) != KS_SUCCESS)
        return code;
    for (uint32_t i = 0; i < s->n; i++) {
        struct dr_claim *c = &s->claims[i];
        if (!c->allocation)
            continue;
        if (ks_dra_tracker_reserve(p->tracker, c->c.key, c->allocation) < 0)
            return ks_status_set(st, KS_ERROR, "internal error, couldn't signal allocation for claim %s",
                                 c->name);
    }
    return KS_SUCCESS;
}

/*
 * unreserve - Any thread; idempotent: the in-flight allocations end, the pod's reservations
 * go, the special claim is deleted (unreserveExtendedResourceClaim).
 */
static void unreserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node)
{
    struct dynamic_resources *p = self;
    struct dr_state *s = cs->slot[p->slot];

    (void)pod;
    (void)node;
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct dr_claim *c = &s->claims[i];
        ks_dra_tracker_unreserved(p->tracker, c->c.key, s->pod_uid);
        if (p->api && c->c.reserved_for_pod && (c->allocation || c->c.allocation)) {
            struct ks_dra_api_claim ac = {c->ns, c->name, c->uid, c->rv};
            char msg[DR_MSG_MAX];
            /* a failure is retried with the pod's next attempt, as upstream only logs it */
            p->api->unreserve(p->api, &ac, s->pod_uid, msg, sizeof(msg));
        }
    }
    struct dr_special *x = &s->special;
    if (!x->claim)
        return;
    if (p->api && p->api->delete_claim && x->claim->meta.uid) {
        /* created: deleted again so that no claim is left behind (upstream only logs a failure) */
        struct ks_dra_api_claim ac = {ks_intern_str(x->claim->meta.namespace_id), x->claim->meta.name,
                                      x->claim->meta.uid, x->claim->meta.resource_version};
        char msg[DR_MSG_MAX];
        p->api->delete_claim(p->api, &ac, msg, sizeof(msg));
    }
    ks_dra_tracker_deleted(p->tracker, x->key);
    x->claim = NULL;
}

/* ---- PreBind -------------------------------------------------------------------------------------- */

/*
 * create_special - bindClaim of the special claim: created (through the server: POSTed,
 * then its allocation and reservation written, then the pod's extendedResourceClaimStatus
 * patched; in process: named as generateName would), then known to the tracker under its
 * name. A binder thread; a failure leaves Unreserve to delete what was created.
 */
static int create_special(struct dynamic_resources *p, struct dr_state *s, struct ks_cycle_state *cs,
                          const struct ks_pod *pod, struct ks_status *st)
{
    struct dr_special *x = &s->special;
    const char *ns = ks_intern_str(x->claim->meta.namespace_id);
    char name[80], uid[128], rv[64], msg[DR_MSG_MAX];

    if (p->api && (!p->api->create_claim || !p->api->patch_pod_extended))
        return ks_status_set(st, KS_ERROR,
                             "create claim for extended resources %s/: not supported by this API", ns);
    if (p->api) {
        if (p->api->create_claim(p->api, x->claim, pod->meta.name, name, sizeof(name), uid, sizeof(uid), rv,
                                 sizeof(rv), msg, sizeof(msg)) < 0)
            return ks_status_set(st, KS_ERROR, "%s", msg);
    } else {
        /* binder threads; in deterministic mode bindings run in scheduling order, so the names repeat */
        ks_dra_extended_claim_name(pod->meta.name, atomic_fetch_add(&p->names, 1), name, sizeof(name));
        uid[0] = rv[0] = '\0';
    }
    if (!(x->claim->meta.name = cs_strdup(cs, name)) ||
        (uid[0] && !(x->claim->meta.uid = cs_strdup(cs, uid))) ||
        (rv[0] && !(x->claim->meta.resource_version = cs_strdup(cs, rv))))
        return ks_status_set(st, KS_ERROR, "out of memory");
    if (p->api) {
        struct ks_dra_api_claim ac = {ns, x->claim->meta.name, x->claim->meta.uid,
                                      x->claim->meta.resource_version};
        if (p->api->bind_claim(p->api, &ac, x->allocation, pod->meta.name, s->pod_uid, rv, sizeof(rv), msg,
                               sizeof(msg)) < 0 ||
            p->api->patch_pod_extended(p->api, ns, pod->meta.name, name, x->maps, x->nmaps, msg,
                                       sizeof(msg)) < 0)
            return ks_status_set(st, KS_ERROR, "%s", msg);
    }
    if (ks_dra_tracker_created(p->tracker, x->key, x->claim, x->allocation, s->pod_uid, p->api ? rv : NULL) <
            0 ||
        (x->key = ks_intern_ns_name(x->claim->meta.namespace_id, name)) == KS_ID_NONE)
        return ks_status_set(st, KS_ERROR, "out of memory");
    x->created = true;
    return KS_SUCCESS;
}

/* pre_bind - a binder: each claim not reserved for the pod is written with its allocation and the pod. */
static int pre_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                    struct ks_status *st)
{
    struct dynamic_resources *p = self;
    struct dr_state *s = cs->slot[p->slot];

    (void)node;
    if (!s)
        return KS_SUCCESS;
    for (uint32_t i = 0; i < s->n; i++) {
        struct dr_claim *c = &s->claims[i];
        if (c->c.reserved_for_pod)
            continue;
        char rv[64], msg[DR_MSG_MAX];
        if (p->api) {
            struct ks_dra_api_claim ac = {c->ns, c->name, c->uid, c->rv};
            if (p->api->bind_claim(p->api, &ac, c->allocation, pod->meta.name, s->pod_uid, rv, sizeof(rv),
                                   msg, sizeof(msg)) < 0) {
                if (c->allocation)
                    ks_dra_tracker_unwritten(p->tracker, c->c.key);
                return ks_status_set(st, KS_ERROR, "%s", msg);
            }
        }
        if (ks_dra_tracker_written(p->tracker, c->c.key, c->allocation, s->pod_uid, pod->meta.name,
                                   p->api ? rv : NULL) < 0)
            return ks_status_set(st, KS_ERROR, "out of memory");
        const struct ks_allocation *now = c->allocation ? c->allocation : c->c.allocation;
        emit_update(p, c->c.obj, c->c.allocation, c->c.nreserved, now, c->c.nreserved + 1);
        c->c.reserved_for_pod = true;
    }
    if (s->special.claim && !s->special.created)
        return create_special(p, s, cs, pod, st);
    return KS_SUCCESS;
}

/* ---- events -------------------------------------------------------------------------------------- */

/* The parts of two claims' status a pod may care about (apiequality.Semantic.DeepEqual of status). */
static bool same_status(const struct ks_resource_claim *a, const struct ks_resource_claim *b)
{
    const struct ks_allocation *x = a->allocation, *y = b->allocation;

    if (a->nreserved != b->nreserved || a->ndevice_status != b->ndevice_status || !x != !y)
        return false;
    for (uint32_t i = 0; i < a->nreserved && a->reserved && b->reserved; i++) {
        if (strcmp(a->reserved[i].uid, b->reserved[i].uid) != 0)
            return false;
    }
    if (!x || x == y)
        return true;
    if (x->nresults != y->nresults)
        return false;
    for (uint32_t i = 0; i < x->nresults; i++) {
        const struct ks_device_result *r = &x->results[i], *q = &y->results[i];
        if (r->driver != q->driver || r->pool != q->pool || r->device != q->device ||
            strcmp(r->request, q->request))
            return false;
    }
    return true;
}

/*
 * isSchedulableAfterClaimChange. Any thread, under the queue's locks; takes the tracker's
 * lock. Upstream looks the pod's other claims up in a live lister; a tracker behind the
 * announced claim changes may lack them, so the pod is queued and PreFilter, which syncs
 * first, answers (the same holds for the pod's own change and for PreEnqueue).
 */
static enum ks_queueing_hint hint_claim(void *self, const struct ks_pod *pod, const void *old_obj,
                                        const void *new_obj)
{
    struct dynamic_resources *p = self;
    const struct ks_resource_claim *old_claim = old_obj, *claim = new_obj;
    uint32_t n;
    bool uses;

    if (!claim)
        return KS_QUEUE;
    if (ks_dra_tracker_pod_claims(p->tracker, pod, claim, NULL, &n, &uses, NULL, 0) != KS_DRA_FOUND)
        return ks_dra_tracker_behind(p->tracker) ? KS_QUEUE : KS_QUEUE_SKIP; /* PreFilter will know */
    if (old_claim && old_claim->allocation && !claim->allocation)
        return KS_QUEUE; /* deallocated: its devices may help */
    if (!uses)
        return KS_QUEUE_SKIP;
    if (!old_claim)
        return KS_QUEUE;
    return same_status(old_claim, claim) ? KS_QUEUE_SKIP : KS_QUEUE;
}

/* isSchedulableAfterPodChange: the pod itself, now with every claim there. */
static enum ks_queueing_hint hint_pod(void *self, const struct ks_pod *pod, const void *old_obj,
                                      const void *new_obj)
{
    struct dynamic_resources *p = self;
    const struct ks_pod *changed = new_obj;
    uint32_t n;

    (void)old_obj;
    if (!changed || changed->meta.namespace_id != pod->meta.namespace_id ||
        strcmp(changed->meta.name, pod->meta.name) != 0 ||
        (pod->meta.uid && changed->meta.uid && strcmp(pod->meta.uid, changed->meta.uid) != 0))
        return KS_QUEUE_SKIP;
    return ks_dra_tracker_pod_claims(p->tracker, changed, NULL, NULL, &n, NULL, NULL, 0) == KS_DRA_FOUND ||
                   ks_dra_tracker_behind(p->tracker)
               ? KS_QUEUE
               : KS_QUEUE_SKIP;
}

/*
 * EventsToRegister with SchedulerQueueingHints: node additions and label or allocatable
 * changes, claims added or changed (hinted), a pod's generated claims recorded (hinted),
 * device classes and resource slices added or changed.
 */
static uint32_t events_to_register(void *self, struct ks_event_registration *out, uint32_t max)
{
    static const struct ks_event_registration regs[] = {
        {{KS_ER_NODE, KS_ACT_ADD | KS_ACT_UPDATE_NODE_LABEL | KS_ACT_UPDATE_NODE_ALLOCATABLE}, NULL},
        {{KS_ER_RESOURCE_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE}, hint_claim},
        {{KS_ER_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM}, hint_pod},
        {{KS_ER_DEVICE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
        {{KS_ER_RESOURCE_SLICE, KS_ACT_ADD | KS_ACT_UPDATE}, NULL},
    };
    uint32_t n = sizeof(regs) / sizeof(regs[0]);

    (void)self;
    for (uint32_t i = 0; i < n && i < max; i++)
        out[i] = regs[i];
    return n;
}

/* ---- signature ------------------------------------------------------------------------------------ */

/*
 * sign - a pod without claims and without extended resources that devices back: nothing of
 * it is read; one with either reads the cluster's claims and devices.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    const struct dynamic_resources *p = self;

    (void)sig;
    return pod->nclaims || cs->slot[p->slot] ? KS_SKIP : KS_SUCCESS;
}

const struct ks_plugin ks_plugin_dynamic_resources = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DynamicResources",
    .args_parse = args_parse,
    .args_print = args_print,
    .args_destroy = args_destroy,
    .init = init,
    .destroy = destroy,
    .pre_enqueue = pre_enqueue,
    .pre_filter = pre_filter,
    .filter = filter,
    .post_filter = post_filter,
    .score = score,
    .normalize_score = ks_normalize_score_default,
    .reserve = reserve,
    .unreserve = unreserve,
    .pre_bind = pre_bind,
    .events_to_register = events_to_register,
    .score_nodes = score_nodes,
    .sign = sign,
    .explain_filter = explain_filter,
};
