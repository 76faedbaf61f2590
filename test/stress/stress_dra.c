/*
 * stress_dra.c - the structured allocator from several threads on one catalog, run under
 * ThreadSanitizer: the selector memo filled by racing readers, claim selectors compiled
 * and published into the catalog's lock-free table by racing preparations, the per-call
 * pool gathering of label-selected slices, each thread on its own scratch.
 *
 * A cluster of NODES nodes with eight devices each (node-local slices), an allNodes slice
 * and a slice selected by a node label; classes and claims with CEL selectors; the allocated
 * state bound to the shared catalog, so that verdicts remembered per poolset race too. The answer
 * for every (claim set, node) is first computed single-threaded on a separate catalog, then
 * THREADS threads prepare the same claim sets on a fresh catalog at the same time and
 * allocate them on every node, ROUNDS times, and must give exactly the reference answers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/arena.h"
#include "ksched/base/intern.h"
#include "ksched/dra.h"

enum { NODES = 120, DEVICES = 8, THREADS = 4, ROUNDS = 3, SETS = 6 };

static struct ks_arena arena;
static struct ks_device_class *classes[2];
static struct ks_resource_slice *slices[NODES + 2];
static uint32_t nslices;
static struct ks_node nodes[NODES];
static struct ks_resource_claim *claim_sets[SETS][2];

static struct ks_device_attribute attr_int(const char *name, int64_t v)
{
    struct ks_device_attribute a = {.name = ks_intern(name), .kind = KS_ATTR_INT, .i = v};
    return a;
}

static struct ks_device_attribute attr_str(const char *name, const char *v)
{
    struct ks_device_attribute a = {.name = ks_intern(name), .kind = KS_ATTR_STRING, .s = v};
    return a;
}

static struct ks_resource_slice *new_slice(const char *name, const char *pool, int ndev, int seed)
{
    struct ks_resource_slice *s = ks_arena_calloc(&arena, 1, sizeof(*s));
    s->meta.name = ks_arena_strdup(&arena, name);
    s->driver = ks_intern("gpu.example.com");
    s->pool = ks_intern(pool);
    s->generation = 1;
    s->slice_count = 1;
    s->node_name = KS_ID_NONE;
    s->ndevices = (uint32_t)ndev;
    s->devices = ks_arena_calloc(&arena, (size_t)ndev, sizeof(*s->devices));
    for (int i = 0; i < ndev; i++) {
        struct ks_device *d = &s->devices[i];
        char dn[32];
        snprintf(dn, sizeof(dn), "gpu-%d", i);
        d->name = ks_intern(dn);
        d->node_name = KS_ID_NONE;
        d->nattributes = 2;
        d->attributes = ks_arena_calloc(&arena, 2, sizeof(*d->attributes));
        d->attributes[0] = attr_int("numa", (i + seed) % 2);
        d->attributes[1] = attr_str("model", (i + seed) % 3 ? "a100" : "h100");
    }
    return s;
}

static struct ks_labels region_label(int region)
{
    struct ks_labels l = {.n = 1};
    l.items = ks_arena_calloc(&arena, 1, sizeof(*l.items));
    l.items[0].key = ks_intern("region");
    l.items[0].value = ks_intern(region ? "east" : "west");
    return l;
}

static struct ks_resource_claim *new_claim(const char *name, const char *cls, int count, const char *sel)
{
    struct ks_resource_claim *c = ks_arena_calloc(&arena, 1, sizeof(*c));
    c->meta.name = ks_arena_strdup(&arena, name);
    c->meta.namespace_id = ks_intern("default");
    c->spec.nrequests = 1;
    c->spec.requests = ks_arena_calloc(&arena, 1, sizeof(*c->spec.requests));
    struct ks_device_request *r = &c->spec.requests[0];
    r->name = "gpus";
    r->exact = true;
    r->spec.name = "gpus";
    r->spec.device_class_name = cls;
    r->spec.mode = KS_ALLOC_EXACT_COUNT;
    r->spec.count = count;
    if (sel) {
        r->spec.nselectors = 1;
        r->spec.selectors = ks_arena_calloc(&arena, 1, sizeof(char *));
        r->spec.selectors[0] = ks_arena_strdup(&arena, sel);
    }
    if (count == 2) {
        c->spec.nconstraints = 1;
        c->spec.constraints = ks_arena_calloc(&arena, 1, sizeof(*c->spec.constraints));
        c->spec.constraints[0].match_attribute = ks_intern("gpu.example.com/numa");
        c->spec.constraints[0].distinct_attribute = KS_ID_NONE;
    }
    return c;
}

static void build_objects(void)
{
    classes[0] = ks_arena_calloc(&arena, 1, sizeof(*classes[0]));
    classes[0]->meta.name = "gpu";
    classes[0]->name = ks_intern("gpu");
    classes[0]->nselectors = 1;
    classes[0]->selectors = ks_arena_calloc(&arena, 1, sizeof(char *));
    classes[0]->selectors[0] = "device.driver == \"gpu.example.com\"";
    classes[1] = ks_arena_calloc(&arena, 1, sizeof(*classes[1]));
    classes[1]->meta.name = "h100";
    classes[1]->name = ks_intern("h100");
    classes[1]->nselectors = 2;
    classes[1]->selectors = ks_arena_calloc(&arena, 2, sizeof(char *));
    classes[1]->selectors[0] = "device.driver == \"gpu.example.com\"";
    classes[1]->selectors[1] = "device.attributes[\"gpu.example.com\"].model == \"h100\"";
    for (int n = 0; n < NODES; n++) {
        char name[32], pool[32];
        snprintf(name, sizeof(name), "node-%d", n);
        snprintf(pool, sizeof(pool), "pool-%d", n);
        struct ks_resource_slice *s = new_slice(name, pool, DEVICES, n);
        s->node_name = ks_intern(name);
        slices[nslices++] = s;
        nodes[n].meta.name = ks_arena_strdup(&arena, name);
        nodes[n].name_id = ks_intern(name);
        nodes[n].meta.labels = region_label(n % 3 == 0);
    }
    struct ks_resource_slice *all = new_slice("shared-all", "pool-shared", 2, 1);
    all->all_nodes = true;
    slices[nslices++] = all;
    struct ks_resource_slice *east = new_slice("shared-east", "pool-east", 2, 0);
    east->node_selector = ks_arena_calloc(&arena, 1, sizeof(*east->node_selector));
    east->node_selector->nterms = 1;
    east->node_selector->terms = ks_arena_calloc(&arena, 1, sizeof(struct ks_node_selector_term));
    struct ks_requirement *req = ks_arena_calloc(&arena, 1, sizeof(*req));
    req->key = ks_intern("region");
    req->op = KS_OP_IN;
    req->nvalues = 1;
    req->values = ks_arena_calloc(&arena, 1, sizeof(uint32_t));
    req->values[0] = ks_intern("east");
    east->node_selector->terms[0].nexprs = 1;
    east->node_selector->terms[0].exprs = req;
    slices[nslices++] = east;
    static const char *const sels[SETS] = {
        NULL,
        "device.attributes[\"gpu.example.com\"].numa == 0",
        "device.attributes[\"gpu.example.com\"].numa == 1",
        "device.attributes[\"gpu.example.com\"].model.startsWith(\"a\")",
        "device.attributes[\"gpu.example.com\"].model != \"h100\" && "
        "device.attributes[\"gpu.example.com\"].numa == 0",
        "has(device.attributes[\"gpu.example.com\"].numa)",
    };
    for (int k = 0; k < SETS; k++) {
        claim_sets[k][0] = new_claim("a", k % 2 ? "gpu" : "h100", 1, sels[k]);
        claim_sets[k][1] = new_claim("b", "gpu", 2, sels[(k + 1) % SETS]);
    }
}

/* One answer as text. */
static void answer(char *buf, size_t len, int rc, const struct ks_allocation *res, const char *err)
{
    size_t at = (size_t)snprintf(buf, len, "%d %s", rc, err);
    if (rc != KS_DRA_ALLOCATED)
        return;
    for (int c = 0; c < 2 && at < len; c++) {
        for (uint32_t i = 0; i < res[c].nresults && at < len; i++)
            at += (size_t)snprintf(buf + at, len - at, " %d:%s/%s", c, ks_intern_str(res[c].results[i].pool),
                                   ks_intern_str(res[c].results[i].device));
    }
}

static char reference[SETS][NODES][512];
static int reference_rc[SETS][NODES];
static struct ks_dra_catalog *shared;
static struct ks_dra_allocated *allocated;
static int mismatches;
static pthread_mutex_t mismatch_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    long t = (long)arg;
    struct ks_dra_scratch *s;
    if (ks_dra_scratch_create(&s))
        return (void *)1;
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < SETS; k++) {
            int set = (int)((k + t) % SETS);
            struct ks_dra_claims *prep;
            if (ks_dra_claims_prepare(shared, (const struct ks_resource_claim *const *)claim_sets[set], 2,
                                      &prep))
                return (void *)1;
            for (int i = 0; i < NODES; i++) {
                int n = (int)((i * 7 + t * 13) % NODES);
                struct ks_allocation res[2];
                char err[512], got[512];
                /* no results: the verdict, possibly remembered by a racing thread */
                int rc = ks_dra_allocate_prepared(allocated, &nodes[n], prep, s, NULL, err, sizeof(err));
                if (rc != reference_rc[set][n]) {
                    pthread_mutex_lock(&mismatch_lock);
                    if (mismatches++ < 5)
                        fprintf(stderr, "thread %ld set %d node %d: verdict %d, want %d\n", t, set, n, rc,
                                reference_rc[set][n]);
                    pthread_mutex_unlock(&mismatch_lock);
                }
                rc = ks_dra_allocate_prepared(allocated, &nodes[n], prep, s, res, err, sizeof(err));
                answer(got, sizeof(got), rc, res, err);
                if (strcmp(got, reference[set][n]) != 0) {
                    pthread_mutex_lock(&mismatch_lock);
                    if (mismatches++ < 5)
                        fprintf(stderr, "thread %ld set %d node %d: %s, want %s\n", t, set, n, got,
                                reference[set][n]);
                    pthread_mutex_unlock(&mismatch_lock);
                }
            }
            ks_dra_claims_destroy(prep);
        }
    }
    ks_dra_scratch_destroy(s);
    return NULL;
}

int main(void)
{
    build_objects();
    struct ks_dra_features f = ks_dra_features_default();
    struct ks_dra_catalog *ref;
    struct ks_dra_scratch *s;
    if (ks_dra_catalog_build((const struct ks_device_class *const *)classes, 2,
                             (const struct ks_resource_slice *const *)slices, nslices, &f, &ref) ||
        ks_dra_catalog_build((const struct ks_device_class *const *)classes, 2,
                             (const struct ks_resource_slice *const *)slices, nslices, &f, &shared) ||
        ks_dra_allocated_create(&allocated) || ks_dra_scratch_create(&s)) {
        fprintf(stderr, "stress_dra: out of memory\n");
        return 1;
    }
    /* some devices in use: node-0's gpu-0 and gpu-3 */
    struct ks_device_result used[2] = {0};
    for (int i = 0; i < 2; i++) {
        used[i].request = "gpus";
        used[i].driver = ks_intern("gpu.example.com");
        used[i].pool = ks_intern("pool-0");
        used[i].device = ks_intern(i ? "gpu-3" : "gpu-0");
    }
    struct ks_allocation in_use = {.nresults = 2, .results = used};
    if (ks_dra_allocated_add(allocated, &in_use))
        return 1;
    int allocated_answers = 0;
    for (int k = 0; k < SETS; k++) {
        for (int n = 0; n < NODES; n++) {
            struct ks_allocation res[2];
            char err[512];
            int rc = ks_dra_allocate(ref, allocated, &nodes[n],
                                     (const struct ks_resource_claim *const *)claim_sets[k], 2, s, res, err,
                                     sizeof(err));
            answer(reference[k][n], sizeof(reference[k][n]), rc, res, err);
            reference_rc[k][n] = rc;
            allocated_answers += rc == KS_DRA_ALLOCATED;
        }
    }
    if (ks_dra_allocated_bind(allocated, shared))
        return 1;
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    int bad = 0;
    for (int t = 0; t < THREADS; t++) {
        void *rc;
        pthread_join(th[t], &rc);
        bad |= rc != NULL;
    }
    printf("stress_dra: %d threads x %d rounds x %d claim sets x %d nodes, %d of %d reference answers "
           "allocated, %d "
           "mismatches\n",
           THREADS, ROUNDS, SETS, NODES, allocated_answers, SETS * NODES, mismatches);
    ks_dra_scratch_destroy(s);
    ks_dra_allocated_destroy(allocated);
    ks_dra_catalog_destroy(ref);
    ks_dra_catalog_destroy(shared);
    ks_arena_destroy(&arena);
    return bad || mismatches || allocated_answers == 0;
}
