/*
 * stress_snapshot.c - the cache's copy-on-write snapshot under concurrent readers, run
 * under ThreadSanitizer (and AddressSanitizer) by `make test`.
 *
 * One writer (this thread) mutates the cache at random - bound pods added and removed,
 * pods assumed, forgotten and confirmed (sometimes on another node), bound pods hidden and
 * shown again (ks_cache_hide_pod), nodes updated, removed and re-added - and refreshes the
 * snapshot after every operation. Two readers
 * walk every record of whatever version they load, inside one read section, and check
 * what must hold in any version: a record's requested resources are the sums over its
 * pods, its affinity pod lists are the pods with such terms, the find table and the
 * affinity node lists agree with the records. A record or pod freed too early shows up
 * as a TSan report or a broken sum; a torn version as a broken invariant.
 *
 * Bounded to about 1.5 s of writing (less work under sanitizers, same duration).
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NODES = 600, ZONES = 3, READERS = 2, MAX_BOUND = 4000, MAX_ASSUMED = 256, MAX_LIMBO = 1 << 16 };
#define WRITE_NS 1500000000LL

static struct ks_cache *cache;
static atomic_int done;
static atomic_ulong walks, records;

static void die(const char *what)
{
    fprintf(stderr, "stress_snapshot: %s\n", what);
    abort();
}

static void *must(void *p)
{
    if (!p)
        die("out of memory");
    return p;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* ---- objects, built by hand (the stress drivers link only the library) ------------------------- */

static int cmp_item(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_resource_item *)a)->name, y = ((const struct ks_resource_item *)b)->name;
    return (x > y) - (x < y);
}

static struct ks_resource_list resources(struct ks_arena *a, int64_t milli_cpu, int64_t memory, int64_t pods)
{
    struct ks_resource_list l = {0};
    l.items = must(ks_arena_calloc(a, 3, sizeof(*l.items)));
    l.items[l.n++] = (struct ks_resource_item){ks_wk.cpu, milli_cpu};
    l.items[l.n++] = (struct ks_resource_item){ks_wk.memory, memory};
    if (pods)
        l.items[l.n++] = (struct ks_resource_item){ks_wk.pods, pods};
    qsort(l.items, l.n, sizeof(*l.items), cmp_item);
    return l;
}

static struct ks_node *mk_node(uint32_t i, int64_t milli_cpu)
{
    char name[32], zone[16];
    snprintf(name, sizeof(name), "node-%u", i);
    snprintf(zone, sizeof(zone), "zone-%u", i % ZONES);
    struct ks_node *n = must(calloc(1, sizeof(*n)));
    n->meta.name = must(ks_arena_strdup(&n->arena, name));
    n->meta.creation_time = n->meta.deletion_time = KS_TIME_NONE;
    n->name_id = ks_intern(name);
    n->meta.labels.items = must(ks_arena_calloc(&n->arena, 1, sizeof(struct ks_label)));
    n->meta.labels.items[0] = (struct ks_label){ks_wk.zone_label, ks_intern(zone)};
    n->meta.labels.n = 1;
    n->allocatable = n->capacity = resources(&n->arena, milli_cpu, 64LL << 30, 500);
    if (ks_node_finish(n))
        die("node finish");
    return n;
}

static struct ks_pod *mk_pod(uint64_t serial)
{
    char name[32];
    snprintf(name, sizeof(name), "pod-%llu", (unsigned long long)serial);
    struct ks_pod *p = must(calloc(1, sizeof(*p)));
    p->refs = 1; /* the writer's: handed over by add, kept across assume */
    p->meta.name = must(ks_arena_strdup(&p->arena, name));
    p->meta.namespace_id = ks_intern(serial % 2 ? "a" : "b");
    p->meta.creation_time = p->meta.deletion_time = p->start_time = KS_TIME_NONE;
    p->scheduler_name = ks_wk.default_scheduler;
    p->containers = must(ks_arena_calloc(&p->arena, 1, sizeof(*p->containers)));
    p->ncontainers = 1;
    p->containers[0].name = "c";
    if (serial % 5) /* every fifth pod requests nothing: non-zero defaults apply */
        p->containers[0].requests =
            resources(&p->arena, 10 + (int64_t)(serial % 90), (int64_t)(serial % 7) << 20, 0);
    if (serial % 4 == 0) {
        struct ks_pod_affinity *a = must(ks_arena_calloc(&p->arena, 1, sizeof(*a)));
        a->nrequired = serial % 8 == 0;
        a->required = must(ks_arena_calloc(&p->arena, 1, sizeof(*a->required)));
        p->affinity.pod_anti_affinity = a;
    }
    if (ks_pod_finish(p))
        die("pod finish");
    return p;
}

/* ---- readers ------------------------------------------------------------------------------------- */

static void check_record(const struct ks_snapshot *s, const struct ks_node_snap *r)
{
    int64_t cpu = 0, mem = 0, nzcpu = 0, nzmem = 0;
    uint32_t aff = 0, anti = 0;
    for (uint32_t k = 0; k < r->npods; k++) {
        const struct ks_pod *p = r->pods[k];
        cpu += p->requests.milli_cpu;
        mem += p->requests.memory;
        nzcpu += p->nonzero_milli_cpu;
        nzmem += p->nonzero_memory;
        aff += p->affinity.pod_anti_affinity != NULL;
        anti += p->affinity.pod_anti_affinity && p->affinity.pod_anti_affinity->nrequired;
    }
    if (cpu != r->req_milli_cpu || mem != r->req_memory)
        die("requested is not the sum of the pods' requests");
    if (nzcpu != r->nonzero_milli_cpu || nzmem != r->nonzero_memory)
        die("non-zero requested is not the sum");
    if (aff != r->naffinity_pods || anti != r->nanti_affinity_pods)
        die("affinity pod lists disagree with the pods");
    for (uint32_t k = 0; k < r->naffinity_pods; k++) {
        if (!r->affinity_pods[k]->affinity.pod_anti_affinity)
            die("a pod without affinity in the affinity list");
    }
    if (!r->node || r->node->name_id != r->name || r->alloc_milli_cpu != r->node->alloc.milli_cpu)
        die("record and node disagree");
    if (ks_snapshot_find(s, r->name) != r)
        die("find does not return the record");
}

static void check_version(const struct ks_snapshot *s)
{
    uint32_t with_aff = 0, with_anti = 0;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct ks_node_snap *r = ks_snapshot_node(s, i);
        check_record(s, r);
        with_aff += r->naffinity_pods > 0;
        with_anti += r->nanti_affinity_pods > 0;
    }
    if (with_aff != s->naffinity_nodes || with_anti != s->nanti_affinity_nodes)
        die("affinity node lists have the wrong length");
    for (uint32_t k = 0; k < s->naffinity_nodes; k++) {
        if (s->affinity_nodes[k] >= s->nnodes || (k && s->affinity_nodes[k] <= s->affinity_nodes[k - 1]) ||
            ks_snapshot_node(s, s->affinity_nodes[k])->naffinity_pods == 0)
            die("bad affinity node list");
    }
    for (uint32_t k = 0; k < s->nanti_affinity_nodes; k++) {
        if (s->anti_affinity_nodes[k] >= s->nnodes ||
            ks_snapshot_node(s, s->anti_affinity_nodes[k])->nanti_affinity_pods == 0)
            die("bad anti-affinity node list");
    }
    atomic_fetch_add_explicit(&records, s->nnodes, memory_order_relaxed);
}

static void *reader(void *arg)
{
    (void)arg;
    ks_rcu_register_thread();
    while (!atomic_load_explicit(&done, memory_order_acquire)) {
        ks_rcu_read_lock();
        check_version(ks_cache_snapshot(cache));
        ks_rcu_read_unlock();
        atomic_fetch_add_explicit(&walks, 1, memory_order_relaxed);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

/* ---- writer ---------------------------------------------------------------------------------------- */

static struct ks_pod *bound[MAX_BOUND];     /* the cache holds their reference; we keep keys only */
static struct ks_pod *assumed[MAX_ASSUMED]; /* we hold a reference until confirmed */
static struct ks_pod **limbo;               /* forgotten: our reference, dropped at the end */
static uint32_t nbound, nassumed, nlimbo;
static bool node_present[NODES];
static uint64_t serial;

static uint32_t node_id(uint32_t i)
{
    char name[32];
    snprintf(name, sizeof(name), "node-%u", i);
    return ks_intern(name);
}

static void expect(int rc, int want, const char *what)
{
    if (rc != want) {
        fprintf(stderr, "stress_snapshot: %s: %d, expected %d\n", what, rc, want);
        abort();
    }
}

static void write_one(void)
{
    uint32_t op = rnd(110), n = rnd(NODES);
    if (op >= 100) {
        /* a preemption's what-if: bound pods hidden, then every one shown again */
        if (op >= 106) {
            ks_cache_unhide_all(cache);
        } else if (nbound) {
            int rc = ks_cache_hide_pod(cache, bound[rnd(nbound)]);
            if (rc != 0 && rc != -EALREADY)
                expect(rc, 0, "hide pod");
        }
    } else if (op < 30 && nbound < MAX_BOUND) {
        struct ks_pod *p = mk_pod(serial++);
        expect(ks_cache_add_pod(cache, p, node_id(n)), 0, "add pod");
        bound[nbound++] = p;
    } else if (op < 45 && nbound) {
        uint32_t k = rnd(nbound);
        expect(ks_cache_remove_pod(cache, bound[k]), 0, "remove pod"); /* the key; the cache frees it */
        bound[k] = bound[--nbound];
    } else if (op < 65 && nassumed < MAX_ASSUMED) {
        struct ks_pod *p = mk_pod(serial++);
        expect(ks_cache_assume_pod(cache, p, node_id(n)), 0, "assume");
        assumed[nassumed++] = p;
    } else if (op < 75 && nassumed && nlimbo < MAX_LIMBO) {
        uint32_t k = rnd(nassumed);
        expect(ks_cache_forget_pod(cache, assumed[k]), 0, "forget");
        limbo[nlimbo++] = assumed[k]; /* the cache's reference goes with a retired version */
        assumed[k] = assumed[--nassumed];
    } else if (op < 85 && nassumed && nbound < MAX_BOUND) {
        uint32_t k = rnd(nassumed); /* confirmed, sometimes on another node than assumed */
        expect(
            ks_cache_add_pod(cache, assumed[k], rnd(4) ? ks_cache_pod_node(cache, assumed[k]) : node_id(n)),
            0, "confirm");
        bound[nbound++] = assumed[k];
        assumed[k] = assumed[--nassumed];
    } else if (op < 95) {
        if (node_present[n])
            expect(ks_cache_update_node(cache, mk_node(n, 1000 * (8 + rnd(56)))), 0, "update node");
    } else if (node_present[n]) {
        expect(ks_cache_remove_node(cache, node_id(n)), 0, "remove node"); /* its pods stay */
        node_present[n] = false;
    } else {
        expect(ks_cache_add_node(cache, mk_node(n, 32000)), 0, "re-add node");
        node_present[n] = true;
    }
}

int main(void)
{
    if (ks_api_init() || ks_cache_create(&cache))
        die("create");
    ks_rcu_register_thread();
    limbo = must(calloc(MAX_LIMBO, sizeof(*limbo)));
    for (uint32_t i = 0; i < NODES; i++) {
        expect(ks_cache_add_node(cache, mk_node(i, 32000)), 0, "add node");
        node_present[i] = true;
    }
    expect(ks_cache_refresh(cache), NODES, "first refresh");

    pthread_t t[READERS];
    for (int i = 0; i < READERS; i++)
        pthread_create(&t[i], NULL, reader, NULL);
    int64_t end = now_ns() + WRITE_NS;
    unsigned long ops = 0, rebuilt = 0;
    while (now_ns() < end) {
        for (int k = 0; k < 16; k++, ops++) {
            write_one();
            int rc = ks_cache_refresh(cache);
            if (rc < 0)
                die("refresh");
            rebuilt += (unsigned long)rc;
        }
    }
    atomic_store_explicit(&done, 1, memory_order_release);
    for (int i = 0; i < READERS; i++)
        pthread_join(t[i], NULL);

    /* everything shown again, the cache's own invariants, then the last version once more */
    ks_cache_unhide_all(cache);
    char msg[256] = "";
    if (ks_cache_refresh(cache) < 0 ||
        ks_cache_check(cache, KS_CACHE_CHECK_SNAPSHOT, NULL, msg, sizeof(msg))) {
        fprintf(stderr, "stress_snapshot: %s\n", msg);
        abort();
    }
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(cache);
    check_version(s);
    uint32_t pods_seen = 0;
    for (uint32_t i = 0; i < s->nnodes; i++)
        pods_seen += ks_snapshot_node(s, i)->npods;
    ks_rcu_read_unlock();
    uint32_t nodes = 0, pods = 0;
    ks_cache_counts(cache, &nodes, &pods);
    if (pods != nbound + nassumed)
        die("pod count differs from the writer's");
    if (pods_seen > pods)
        die("more pods in the snapshot than in the cache");

    ks_cache_destroy(cache);
    for (uint32_t i = 0; i < nassumed; i++)
        ks_pod_put(assumed[i]);
    for (uint32_t i = 0; i < nlimbo; i++)
        ks_pod_put(limbo[i]);
    free(limbo);
    ks_rcu_unregister_thread();
    printf("stress_snapshot: %lu operations, %lu records rebuilt, %lu versions walked (%lu records)\n", ops,
           rebuilt, atomic_load(&walks), atomic_load(&records));
    if (atomic_load(&walks) == 0)
        die("readers never ran");
    return 0;
}
