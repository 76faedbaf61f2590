/*
 * pod_table.c - the cache's pod index: (namespace, name) -> struct pod_entry.
 *
 * Mirrors the podStates map of pkg/scheduler/backend/cache/cache.go, keyed by
 * namespace/name instead of UID (ksched's pod identity). Pod names are not interned (a
 * cluster churns through unbounded names), so the key is the interned namespace id plus
 * the name bytes, hashed once per operation. Chained buckets; the table doubles at load
 * factor 1 and never shrinks. Also builds entries: the per-pod facts node aggregates need
 * (upstream's GetHostPorts, PodPVCKeys, podWithAffinity, podWithRequiredAntiAffinity),
 * computed outside the cache lock because PVC keys are interned.
 *
 * Context: table functions run under the cache lock; ks__pod_entry_make() runs outside it.
 */
#include "cache_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t ks__pod_key_hash(uint32_t ns, const char *name)
{
    /* FNV-1a over the name, then the namespace id folded in and the bits mixed */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    h ^= (uint64_t)ns * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

static bool key_eq(const struct pod_entry *e, uint32_t ns, const char *name, uint64_t hash)
{
    return e->hash == hash && e->pod->meta.namespace_id == ns && strcmp(e->pod->meta.name, name) == 0;
}

struct pod_entry *ks__pod_table_find(const struct pod_table *t, uint32_t ns, const char *name, uint64_t hash)
{
    if (!t->buckets)
        return NULL;
    for (struct pod_entry *e = t->buckets[hash & t->mask]; e; e = e->hnext) {
        if (key_eq(e, ns, name, hash))
            return e;
    }
    return NULL;
}

/* Double the bucket array; on ENOMEM keep the old one (chains just get longer). */
static void grow(struct pod_table *t)
{
    uint32_t nb = t->buckets ? (t->mask + 1) * 2 : 64;
    struct pod_entry **b = calloc(nb, sizeof(*b));
    if (!b)
        return;
    if (t->buckets) {
        for (uint32_t i = 0; i <= t->mask; i++) {
            struct pod_entry *e = t->buckets[i];
            while (e) {
                struct pod_entry *next = e->hnext;
                e->hnext = b[e->hash & (nb - 1)];
                b[e->hash & (nb - 1)] = e;
                e = next;
            }
        }
        free(t->buckets);
    }
    t->buckets = b;
    t->mask = nb - 1;
}

int ks__pod_table_init(struct pod_table *t)
{
    grow(t);
    return t->buckets ? 0 : -ENOMEM;
}

void ks__pod_table_insert(struct pod_table *t, struct pod_entry *e)
{
    if (t->n >= t->mask + 1)
        grow(t); /* may fail: the table stays valid with longer chains */
    struct pod_entry **b = &t->buckets[e->hash & t->mask];
    e->hnext = *b;
    *b = e;
    t->n++;
}

void ks__pod_table_remove(struct pod_table *t, struct pod_entry *e)
{
    struct pod_entry **p = &t->buckets[e->hash & t->mask];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    t->n--;
}

void ks__pod_table_destroy(struct pod_table *t)
{
    free(t->buckets);
    t->buckets = NULL;
    t->mask = 0;
    t->n = 0;
}

/* ---- entries ---------------------------------------------------------------------------- */

struct pod_entry *ks__pod_entry_make(const struct ks_pod *pod, uint32_t node, uint32_t any_ip)
{
    uint32_t nports = ks_pod_host_ports(pod, any_ip, NULL);
    uint32_t npvcs = 0;
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        enum ks_volume_kind k = pod->volumes[i].kind;
        npvcs += (k == KS_VOLUME_PVC || k == KS_VOLUME_EPHEMERAL) && pod->volumes[i].source;
    }
    size_t size = sizeof(struct pod_entry) + (size_t)nports * sizeof(struct ks_host_port) +
                  ((size_t)npvcs + pod->meta.labels.n) * sizeof(uint32_t);
    struct pod_entry *e = calloc(1, size);
    if (!e)
        return NULL;
    e->pod = pod;
    e->node = node;
    e->hash = ks__pod_key_hash(pod->meta.namespace_id, pod->meta.name);
    e->slot = e->aff_slot = e->anti_slot = KS__NO_INDEX;
    e->ports = (struct ks_host_port *)(e + 1);
    e->pvcs = (uint32_t *)(e->ports + nports);
    e->label_pos = e->pvcs + npvcs;
    e->nports = ks_pod_host_ports(pod, any_ip, e->ports);
    for (uint32_t i = 0; i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if ((v->kind != KS_VOLUME_PVC && v->kind != KS_VOLUME_EPHEMERAL) || !v->source)
            continue;
        uint32_t id = ks_intern_ns_name(pod->meta.namespace_id, v->source);
        if (id == KS_ID_NONE) {
            free(e);
            return NULL;
        }
        e->pvcs[e->npvcs++] = id;
    }
    const struct ks_affinity *a = &pod->affinity;
    e->has_affinity = a->pod_affinity || a->pod_anti_affinity;
    e->has_anti_affinity = a->pod_anti_affinity && a->pod_anti_affinity->nrequired > 0;
    return e;
}
