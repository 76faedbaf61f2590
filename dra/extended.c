/*
 * extended.c - extended resources backed by devices: the resource names, the DeviceClass
 * resolver and the special claim's requests (see ksched/dra_extended.h).
 */
#include "ksched/dra_extended.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ks_dra_extended_name(const char *name)
{
    return strncmp(name, KS_DRA_DEVICE_CLASS_PREFIX, strlen(KS_DRA_DEVICE_CLASS_PREFIX)) == 0 ||
           ks_is_extended_resource_name(name);
}

/* Whether @a is picked over @b for the same explicit name: created later, then the name first. */
static bool preferred(const struct ks_device_class *a, const struct ks_device_class *b)
{
    if (a->meta.creation_time != b->meta.creation_time)
        return a->meta.creation_time > b->meta.creation_time;
    return strcmp(a->meta.name, b->meta.name) < 0;
}

const struct ks_device_class *ks_dra_class_for_resource(const struct ks_device_class *const *classes,
                                                        uint32_t n, const char *name)
{
    const size_t plen = strlen(KS_DRA_DEVICE_CLASS_PREFIX);
    const struct ks_device_class *best = NULL, *implicit = NULL;

    for (uint32_t i = 0; i < n; i++) {
        const struct ks_device_class *c = classes[i];
        if (c->extended_resource_name && strcmp(c->extended_resource_name, name) == 0 &&
            (!best || preferred(c, best)))
            best = c;
        if (strncmp(name, KS_DRA_DEVICE_CLASS_PREFIX, plen) == 0 && strcmp(name + plen, c->meta.name) == 0)
            implicit = c;
    }
    return best ? best : implicit;
}

const struct ks_owner_ref *ks_dra_extended_claim_controller(const struct ks_resource_claim *c)
{
    bool special = false;

    for (uint32_t i = 0; i < c->meta.annotations.n; i++)
        special |= strcmp(c->meta.annotations.items[i].key, KS_DRA_EXTENDED_CLAIM_ANNOTATION) == 0 &&
                   strcmp(c->meta.annotations.items[i].value, "true") == 0;
    for (uint32_t i = 0; special && i < c->meta.nowners; i++) {
        const struct ks_owner_ref *o = &c->meta.owners[i];
        if (o->controller && o->uid)
            return o;
    }
    return NULL;
}

bool ks_dra_is_extended_claim(const struct ks_resource_claim *c, const struct ks_pod *pod,
                              const char *pod_uid)
{
    const struct ks_owner_ref *o = ks_dra_extended_claim_controller(c);

    return o && c->meta.namespace_id == pod->meta.namespace_id && o->name &&
           strcmp(o->name, pod->meta.name) == 0 && strcmp(o->uid, pod_uid) == 0;
}

/* ---- the special claim's requests -------------------------------------------------------------- */

/* A long-lived container's request of one resource: its name (NULL: none) and count. */
struct req {
    const char *name;
    int64_t count;
};

/* What one container asks of one resource: its quantity and the request name it would get. */
static int64_t container_request(struct ks_arena *a, const struct ks_container *c, uint32_t index,
                                 uint32_t res, const char **name)
{
    const char *rs = ks_intern_str(res);
    int64_t q = 0;
    bool found = false;
    uint32_t ridx = 0;
    char buf[64];

    for (uint32_t i = 0; i < c->requests.n; i++) {
        if (c->requests.items[i].name == res) {
            q = c->requests.items[i].value;
            found = true;
        } else if (strcmp(ks_intern_str(c->requests.items[i].name), rs) < 0) {
            ridx++;
        }
    }
    if (!found || q <= 0)
        return 0;
    snprintf(buf, sizeof(buf), "container-%u-request-%u", index, ridx);
    *name = ks_arena_strdup(a, buf);
    return *name ? q : -1;
}

/* The container at index @i of init containers then containers. */
static const struct ks_container *container_at(const struct ks_pod *pod, uint32_t i)
{
    return i < pod->ninit_containers ? &pod->init_containers[i] : &pod->containers[i - pod->ninit_containers];
}

static bool long_lived(const struct ks_pod *pod, uint32_t i)
{
    return i >= pod->ninit_containers || pod->init_containers[i].restart_always;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const struct ks_device_request *)x)->name, ((const struct ks_device_request *)y)->name);
}

static int by_resource_name(const void *x, const void *y)
{
    return strcmp(ks_intern_str(((const struct ks_dra_ext_resource *)x)->name),
                  ks_intern_str(((const struct ks_dra_ext_resource *)y)->name));
}

/* An ExactCount request @name of @count devices of class @class_name. */
static void exact_request(struct ks_device_request *out, const char *name, const char *class_name,
                          int64_t count)
{
    *out = (struct ks_device_request){.name = name, .exact = true};
    out->spec = (struct ks_device_request_spec){.name = name,
                                                .device_class_name = class_name,
                                                .mode = KS_ALLOC_EXACT_COUNT,
                                                .mode_text = "ExactCount",
                                                .count = count};
}

/* Append a mapping; the array has room for every container and resource. */
static void map(struct ks_dra_ext_mapping *m, uint32_t *n, const struct ks_container *c, uint32_t res,
                const char *request)
{
    m[(*n)++] = (struct ks_dra_ext_mapping){c->name, ks_intern_str(res), request};
}

/*
 * The requests and mappings of one resource (createRequestsAndMappings' loop body): appended
 * to @reqs (*nreq) and @maps (*nmap). 0 or -ENOMEM.
 */
static int resource_requests(struct ks_arena *a, const struct ks_pod *pod,
                             const struct ks_dra_ext_resource *r, struct ks_device_request *reqs,
                             uint32_t *nreq, struct ks_dra_ext_mapping *maps, uint32_t *nmap,
                             struct req *lived)
{
    uint32_t m = pod->ninit_containers + pod->ncontainers, first_short = *nmap;
    int64_t max_count = 0;
    const char *max_name = NULL;
    uint32_t nshort_names = 0;

    for (uint32_t i = 0; i < m; i++) {
        lived[i] = (struct req){NULL, 0};
        if (!long_lived(pod, i))
            continue;
        int64_t q = container_request(a, container_at(pod, i), i, r->name, &lived[i].name);
        if (q < 0)
            return -ENOMEM;
        lived[i].count = q;
    }
    /* mappings of long-lived containers first, then those of init containers */
    struct ks_dra_ext_mapping *longmaps = maps + *nmap;
    uint32_t nlong = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (lived[i].name)
            map(longmaps, &nlong, container_at(pod, i), r->name, lived[i].name);
    }
    *nmap += nlong;
    first_short = *nmap;
    for (uint32_t i = 0; i < m; i++) {
        if (long_lived(pod, i))
            continue;
        const struct ks_container *c = container_at(pod, i);
        const char *name = NULL;
        int64_t q = container_request(a, c, i, r->name, &name);
        if (q < 0)
            return -ENOMEM;
        if (q == 0)
            continue;
        int64_t sum = 0;
        bool covered = false;
        for (uint32_t j = i; j < m && !covered; j++) {
            if (!lived[j].name)
                continue;
            sum += lived[j].count;
            map(maps, nmap, c, r->name, lived[j].name);
            covered = sum >= q;
        }
        if (covered)
            continue;
        map(maps, nmap, c, r->name, name);
        nshort_names++;
        if (!max_name || max_count < q - sum) {
            max_name = name;
            max_count = q - sum;
        }
    }
    if (max_name && nshort_names > 1) {
        /* every init container's own request becomes the largest one */
        for (uint32_t k = first_short; k < *nmap; k++) {
            bool own = true; /* not a long-lived container's request */
            for (uint32_t i = 0; i < m && own; i++)
                own = !(lived[i].name && strcmp(lived[i].name, maps[k].request) == 0);
            if (own)
                maps[k].request = max_name;
        }
    }
    if (max_name)
        exact_request(&reqs[(*nreq)++], max_name, r->class_name, max_count);
    for (uint32_t i = 0; i < m; i++) {
        if (lived[i].name)
            exact_request(&reqs[(*nreq)++], lived[i].name, r->class_name, lived[i].count);
    }
    return 0;
}

int ks_dra_extended_claim(struct ks_arena *a, const struct ks_pod *pod, const struct ks_dra_ext_resource *res,
                          uint32_t nres, struct ks_resource_claim **out, struct ks_dra_ext_mapping **maps,
                          uint32_t *nmaps)
{
    uint32_t m = pod->ninit_containers + pod->ncontainers;
    size_t cap = (size_t)nres * (m + 1) * (m + 1);
    struct ks_resource_claim *c = ks_arena_alloc(a, sizeof(*c));
    struct ks_dra_ext_resource *sorted = ks_arena_calloc(a, nres ? nres : 1, sizeof(*sorted));
    struct ks_device_request *reqs = ks_arena_calloc(a, cap ? cap : 1, sizeof(*reqs));
    struct ks_dra_ext_mapping *mv = ks_arena_calloc(a, cap ? cap : 1, sizeof(*mv));
    struct req *lived = ks_arena_calloc(a, m ? m : 1, sizeof(*lived));
    struct ks_kv *ann = ks_arena_alloc(a, sizeof(*ann));
    struct ks_owner_ref *owner = ks_arena_alloc(a, sizeof(*owner));
    char uid[320];
    uint32_t nreq = 0, nmap = 0;

    if (!c || !sorted || !reqs || !mv || !lived || !ann || !owner)
        return -ENOMEM;
    memcpy(sorted, res, nres * sizeof(*res));
    qsort(sorted, nres, sizeof(*sorted), by_resource_name);
    for (uint32_t i = 0; i < nres; i++) {
        if (resource_requests(a, pod, &sorted[i], reqs, &nreq, mv, &nmap, lived) < 0)
            return -ENOMEM;
    }
    qsort(reqs, nreq, sizeof(*reqs), by_name);
    ks_pod_identity(pod, uid, sizeof(uid));
    *ann = (struct ks_kv){KS_DRA_EXTENDED_CLAIM_ANNOTATION, "true"};
    *owner = (struct ks_owner_ref){"v1", "Pod", pod->meta.name, ks_arena_strdup(a, uid), true};
    if (!owner->uid)
        return -ENOMEM;
    c->meta.name = KS_DRA_SPECIAL_CLAIM_NAME;
    c->meta.namespace_id = pod->meta.namespace_id;
    c->meta.annotations = (struct ks_annotations){1, ann};
    c->meta.nowners = 1;
    c->meta.owners = owner;
    c->meta.creation_time = KS_TIME_NONE;
    c->meta.deletion_time = KS_TIME_NONE;
    c->spec.nrequests = nreq;
    c->spec.requests = reqs;
    *out = c;
    if (maps) {
        *maps = mv;
        *nmaps = nmap;
    }
    return 0;
}

int ks_dra_extended_claim_copy(struct ks_arena *a, const struct ks_resource_claim *src,
                               struct ks_resource_claim **out)
{
    struct ks_resource_claim *c = ks_arena_alloc(a, sizeof(*c));
    struct ks_kv *ann = ks_arena_calloc(a, src->meta.annotations.n + 1, sizeof(*ann));
    struct ks_owner_ref *owners = ks_arena_calloc(a, src->meta.nowners + 1, sizeof(*owners));
    struct ks_device_request *reqs = ks_arena_calloc(a, src->spec.nrequests + 1, sizeof(*reqs));
    bool ok = c && ann && owners && reqs;

    if (!ok)
        return -ENOMEM;
    c->meta = src->meta;
    c->meta.name = ks_arena_strdup(a, src->meta.name);
    c->meta.uid = ks_arena_strdup(a, src->meta.uid);
    c->meta.resource_version = ks_arena_strdup(a, src->meta.resource_version);
    c->meta.labels = (struct ks_labels){0, NULL};
    ok = c->meta.name && (!src->meta.uid || c->meta.uid) &&
         (!src->meta.resource_version || c->meta.resource_version);
    for (uint32_t i = 0; ok && i < src->meta.annotations.n; i++) {
        ann[i].key = ks_arena_strdup(a, src->meta.annotations.items[i].key);
        ann[i].value = ks_arena_strdup(a, src->meta.annotations.items[i].value);
        ok = ann[i].key && ann[i].value;
    }
    c->meta.annotations.items = ann;
    for (uint32_t i = 0; ok && i < src->meta.nowners; i++) {
        const struct ks_owner_ref *o = &src->meta.owners[i];
        owners[i] =
            (struct ks_owner_ref){ks_arena_strdup(a, o->api_version), ks_arena_strdup(a, o->kind),
                                  ks_arena_strdup(a, o->name), ks_arena_strdup(a, o->uid), o->controller};
        ok = (!o->api_version || owners[i].api_version) && (!o->kind || owners[i].kind) &&
             (!o->name || owners[i].name) && (!o->uid || owners[i].uid);
    }
    c->meta.owners = owners;
    for (uint32_t i = 0; ok && i < src->spec.nrequests; i++) {
        const struct ks_device_request *r = &src->spec.requests[i];
        reqs[i] = (struct ks_device_request){ks_arena_strdup(a, r->name), true, r->spec, 0, NULL};
        reqs[i].spec.name = reqs[i].name;
        reqs[i].spec.device_class_name = ks_arena_strdup(a, r->spec.device_class_name);
        reqs[i].spec.nselectors = 0;
        reqs[i].spec.selectors = NULL;
        reqs[i].spec.ntolerations = 0;
        reqs[i].spec.tolerations = NULL;
        reqs[i].spec.ncapacity_requests = 0;
        reqs[i].spec.capacity_requests = NULL;
        ok = reqs[i].name && reqs[i].spec.device_class_name;
    }
    c->spec = (struct ks_device_claim){src->spec.nrequests, reqs, 0, NULL, 0, NULL};
    *out = c;
    return ok ? 0 : -ENOMEM;
}

void ks_dra_extended_claim_name(const char *pod_name, uint64_t n, char *out, size_t len)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    const uint64_t space = UINT64_C(14348907); /* 27^5 */
    char base[KS_DRA_NAME_BASE_MAX + 6];

    snprintf(base, KS_DRA_NAME_BASE_MAX + 1, "%s-extended-resources-", pod_name);
    /* an affine bijection of [0, 27^5): distinct numbers, distinct suffixes, none in order */
    uint64_t x = (n % space * UINT64_C(7919) + UINT64_C(1234567)) % space;
    size_t k = strlen(base);
    for (int i = 0; i < 5; i++, x /= sizeof(alphabet) - 1)
        base[k + (size_t)i] = alphabet[x % (sizeof(alphabet) - 1)];
    base[k + 5] = '\0';
    snprintf(out, len, "%s", base);
}
