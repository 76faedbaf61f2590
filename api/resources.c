/*
 * resources.c - effective pod requests and node allocatable as scheduler resources.
 *
 * ks_pod_finish() computes once, at load, what kube-scheduler derives for every pod it
 * sees: the effective requests (k8s.io/component-helpers/resource/helpers.go PodRequests
 * and aggregateContainerResourcesByFn, without the in-place resize, pod-level resources
 * and DRA parts) folded into a framework.Resource (pkg/scheduler/framework/types.go
 * Resource.Add), and the non-zero cpu/memory used for scoring (PodInfo.calculateResource
 * with NonMissingContainerRequests of pkg/scheduler/util/pod_resources.go's defaults).
 * ks_node_finish() is NewResource(node.Status.Allocatable).
 *
 * The rule for requests, per resource name:
 *   regular   = sum of the regular containers, plus every restartable (sidecar) init container;
 *   init(i)   = init container i plus the sidecars declared before it (a sidecar's own entry is
 *               the running sum of the sidecars up to and including it);
 *   requests  = max(regular, max_i init(i)) + overhead.
 * A name is present in the result when any container or the overhead names it (even with a
 * zero quantity); only present "scalar" names (pkg/scheduler/util IsScalarResourceName:
 * extended names, hugepages-<size>, <domain>kubernetes.io/<name>, attachable-volumes-<name>) enter
 * the scalar list.
 *
 * Values come pre-scaled (cpu in millicores, others in units), so sums are of already
 * rounded per-container quantities. Runs at load on the loading thread; allocates
 * temporaries with malloc and the result in the pod's arena.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* pkg/scheduler/util: what a container that requests no cpu or memory counts as for scoring. */
#define KS_DEFAULT_MILLI_CPU_REQUEST 100
#define KS_DEFAULT_MEMORY_REQUEST    (200LL * 1024 * 1024)

int64_t ks_resource_list_get(const struct ks_resource_list *list, uint32_t name)
{
    uint32_t lo = 0, hi = list->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t n = list->items[mid].name;
        if (n == name)
            return list->items[mid].value;
        if (n < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* ---- resource name classes (k8s.io/kubernetes/pkg/apis/core/v1/helper) ---- */

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* RFC 1123 subdomain: dot-separated non-empty labels of [a-z0-9-] that start and end alphanumeric. */
static bool is_dns1123_label_run(const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
                return false;
            start = i + 1;
        } else if (!is_lower_alnum(s[i]) && s[i] != '-') {
            return false;
        }
    }
    return true;
}

/* The name part of a qualified name: 1..63 of [A-Za-z0-9-_.], starting and ending alphanumeric. */
static bool is_qualified_name_part(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return false;
    for (size_t i = 1; i + 1 < len; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    }
    return true;
}

/*
 * IsExtendedResourceName: not native (it has a '/' outside *kubernetes.io/), not starting with
 * "requests.", and "requests.<name>" is a qualified name, i.e. <name> is exactly
 * "<subdomain>/<name part>" with len("requests.<subdomain>") <= 253.
 */
bool ks_is_extended_resource_name(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash || strstr(s, "kubernetes.io/") || has_prefix(s, "requests."))
        return false;
    if (strchr(slash + 1, '/'))
        return false;
    size_t domain = (size_t)(slash - s);
    if (domain + strlen("requests.") > 253 || !is_dns1123_label_run(s, domain))
        return false;
    return is_qualified_name_part(slash + 1, strlen(slash + 1));
}

/* pkg/scheduler/util.IsScalarResourceName; false for cpu, memory, ephemeral-storage and pods. */
static bool is_scalar_resource(uint32_t name)
{
    const char *s = ks_intern_str(name);
    return ks_is_extended_resource_name(s) || has_prefix(s, "hugepages-") || strstr(s, "kubernetes.io/") ||
           has_prefix(s, "attachable-volumes-");
}

/* Add @v to the field of @r for the well-known resource @name; false when @name is not one. */
static bool add_well_known(struct ks_resources *r, uint32_t name, int64_t v)
{
    if (name == ks_wk.cpu)
        r->milli_cpu += v;
    else if (name == ks_wk.memory)
        r->memory += v;
    else if (name == ks_wk.ephemeral_storage)
        r->ephemeral_storage += v;
    else if (name == ks_wk.pods)
        r->allowed_pods += v;
    else
        return false;
    return true;
}

/* ---- aggregation over a dense vector indexed by the pod's resource names ---- */

/* A dense resource list: one slot per name of the pod's name union; `set` marks presence. */
struct vec {
    int64_t *v;
    bool *set;
};

struct agg {
    const uint32_t *names; /* sorted, unique */
    uint32_t n;
    uint32_t cpu, memory; /* slots of cpu and memory (always in the union) */
    struct vec result, sidecars, init_max, cur, combined;
};

static uint32_t slot_of(const struct agg *g, uint32_t name)
{
    uint32_t lo = 0, hi = g->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->names[mid] < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo; /* every name looked up is in the union */
}

static void vec_clear(const struct agg *g, struct vec *d)
{
    memset(d->v, 0, g->n * sizeof(*d->v));
    memset(d->set, 0, g->n * sizeof(*d->set));
}

/*
 * Load one container's requests into @d; with @defaults, a missing cpu or memory entry
 * reads as the scheduler's default (applyNonMissing), an explicit zero stays zero.
 */
static void vec_load(const struct agg *g, struct vec *d, const struct ks_resource_list *l, bool defaults)
{
    vec_clear(g, d);
    for (uint32_t i = 0; i < l->n; i++) {
        uint32_t s = slot_of(g, l->items[i].name);
        d->v[s] = l->items[i].value;
        d->set[s] = true;
    }
    if (defaults) {
        if (!d->set[g->cpu]) {
            d->v[g->cpu] = KS_DEFAULT_MILLI_CPU_REQUEST;
            d->set[g->cpu] = true;
        }
        if (!d->set[g->memory]) {
            d->v[g->memory] = KS_DEFAULT_MEMORY_REQUEST;
            d->set[g->memory] = true;
        }
    }
}

/*
 * @a + @b saturating at the int64 rails, where quantities already saturate (quantity.h):
 * a pod whose containers each request "1e30" memory needs more than any node has, however
 * the sum is written, and must not wrap around to a small or negative request.
 */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* addResourceList: @d += @s, adding names @s has. */
static void vec_add(const struct agg *g, struct vec *d, const struct vec *s)
{
    for (uint32_t i = 0; i < g->n; i++) {
        if (s->set[i]) {
            d->v[i] = sat_add(d->v[i], s->v[i]);
            d->set[i] = true;
        }
    }
}

/* maxResourceList: for each name of @s, @d takes @s's value when @d lacks it or is smaller. */
static void vec_max(const struct agg *g, struct vec *d, const struct vec *s)
{
    for (uint32_t i = 0; i < g->n; i++) {
        if (s->set[i] && (!d->set[i] || s->v[i] > d->v[i])) {
            d->v[i] = s->v[i];
            d->set[i] = true;
        }
    }
}

/* PodRequests over spec only (no status, no pod-level resources), overhead included, into g->result. */
static void aggregate(struct agg *g, const struct ks_pod *pod, bool defaults)
{
    vec_clear(g, &g->result);
    for (uint32_t i = 0; i < pod->ncontainers; i++) {
        vec_load(g, &g->cur, &pod->containers[i].requests, defaults);
        vec_add(g, &g->result, &g->cur);
    }

    vec_clear(g, &g->sidecars);
    vec_clear(g, &g->init_max);
    for (uint32_t i = 0; i < pod->ninit_containers; i++) {
        const struct ks_container *c = &pod->init_containers[i];
        vec_load(g, &g->cur, &c->requests, defaults);
        if (c->restart_always) {
            /* A sidecar keeps running: it adds to the pod and to every later init container. */
            vec_add(g, &g->result, &g->cur);
            vec_add(g, &g->sidecars, &g->cur);
            vec_max(g, &g->init_max, &g->sidecars);
        } else {
            vec_clear(g, &g->combined);
            vec_add(g, &g->combined, &g->cur);
            vec_add(g, &g->combined, &g->sidecars);
            vec_max(g, &g->init_max, &g->combined);
        }
    }
    vec_max(g, &g->result, &g->init_max);

    vec_load(g, &g->cur, &pod->overhead, false);
    vec_add(g, &g->result, &g->cur);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void collect(uint32_t *names, size_t *n, const struct ks_resource_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        names[(*n)++] = l->items[i].name;
}

int ks_pod_finish(struct ks_pod *pod)
{
    /* The union of every resource name the pod mentions, plus cpu and memory. */
    size_t total = 2 + pod->overhead.n;
    for (uint32_t i = 0; i < pod->ncontainers; i++)
        total += pod->containers[i].requests.n;
    for (uint32_t i = 0; i < pod->ninit_containers; i++)
        total += pod->init_containers[i].requests.n;

    int rc = -ENOMEM;
    uint32_t *names = malloc(total * sizeof(*names));
    if (!names)
        goto err_names;
    size_t n = 0;
    names[n++] = ks_wk.cpu;
    names[n++] = ks_wk.memory;
    collect(names, &n, &pod->overhead);
    for (uint32_t i = 0; i < pod->ncontainers; i++)
        collect(names, &n, &pod->containers[i].requests);
    for (uint32_t i = 0; i < pod->ninit_containers; i++)
        collect(names, &n, &pod->init_containers[i].requests);
    qsort(names, n, sizeof(*names), cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k == 0 || names[k - 1] != names[i])
            names[k++] = names[i];
    }

    struct agg g = {.names = names, .n = (uint32_t)k};
    g.cpu = slot_of(&g, ks_wk.cpu);
    g.memory = slot_of(&g, ks_wk.memory);
    enum { NVEC = 5 };
    int64_t *vals = malloc(NVEC * k * sizeof(*vals));
    if (!vals)
        goto err_vals;
    bool *sets = malloc(NVEC * k * sizeof(*sets));
    if (!sets)
        goto err_sets;
    struct vec *vecs[NVEC] = {&g.result, &g.sidecars, &g.init_max, &g.cur, &g.combined};
    for (size_t i = 0; i < NVEC; i++) {
        vecs[i]->v = vals + i * k;
        vecs[i]->set = sets + i * k;
    }

    /* Non-zero requests for scoring first; then the real requests stay in g.result. */
    aggregate(&g, pod, true);
    int64_t nonzero_cpu = g.result.v[g.cpu];
    int64_t nonzero_memory = g.result.v[g.memory];
    aggregate(&g, pod, false);

    struct ks_resources r = {0};
    for (size_t i = 0; i < k; i++) {
        if (!g.result.set[i])
            continue;
        if (!add_well_known(&r, names[i], g.result.v[i]) && is_scalar_resource(names[i]))
            r.nscalar++;
    }
    if (r.nscalar) {
        r.scalar = ks_arena_calloc(&pod->arena, r.nscalar, sizeof(*r.scalar));
        if (!r.scalar)
            goto err_scalar;
        /* The union is sorted by name id, so the scalar list comes out sorted too. */
        uint32_t j = 0;
        for (size_t i = 0; i < k; i++) {
            uint32_t name = names[i];
            if (g.result.set[i] && is_scalar_resource(name))
                r.scalar[j++] = (struct ks_resource_item){.name = name, .value = g.result.v[i]};
        }
    }
    pod->requests = r;
    pod->nonzero_milli_cpu = nonzero_cpu;
    pod->nonzero_memory = nonzero_memory;
    rc = 0;

err_scalar:
    free(sets);
err_sets:
    free(vals);
err_vals:
    free(names);
err_names:
    return rc;
}

int ks_node_finish(struct ks_node *node)
{
    const struct ks_resource_list *l = &node->allocatable;
    struct ks_resources r = {0};
    uint32_t nscalar = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (is_scalar_resource(l->items[i].name))
            nscalar++;
    }
    if (nscalar) {
        r.scalar = ks_arena_calloc(&node->arena, nscalar, sizeof(*r.scalar));
        if (!r.scalar)
            return -ENOMEM;
    }
    for (uint32_t i = 0; i < l->n; i++) {
        if (!add_well_known(&r, l->items[i].name, l->items[i].value) && is_scalar_resource(l->items[i].name))
            r.scalar[r.nscalar++] = l->items[i]; /* the list is sorted by name, so is the result */
    }
    node->alloc = r;
    return 0;
}
