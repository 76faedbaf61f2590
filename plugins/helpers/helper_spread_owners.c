/*
 * helper_spread_owners.c - the objects DefaultSelector looks up, indexed
 * (ksched/plugin_helpers_spread.h, struct ks_spread_owners): ReplicationControllers,
 * ReplicaSets and StatefulSets by (kind, namespace, name), Services by (namespace, the
 * first pair of their selector). A pod's controller is then one probe and the Services
 * that may select it one probe per label, where a scan reads every workload of the
 * cluster for every pod.
 *
 * One open-addressing table (linear probing, at most half full) holds both; entries of
 * one key keep their input order along the probe chain, so the first of two objects with
 * one name is the one found, as a scan finds it. The table is rebuilt whole when the
 * objects changed (a kind's generation moved, ksched/loader.h), on the scheduling thread.
 */
#include "helper_spread_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { OWNER_RC, OWNER_RS, OWNER_SS, OWNER_SVC, OWNER_KINDS };

static const enum ks_kind kind_of[OWNER_KINDS] = {KS_KIND_REPLICATION_CONTROLLER, KS_KIND_REPLICA_SET,
                                                  KS_KIND_STATEFUL_SET, KS_KIND_SERVICE};

struct owner_slot {
    uint64_t hash; /* 0: free */
    const void *obj;
};

struct ks_spread_owners {
    const struct ks_objects *objs; /* what the table indexes; NULL: nothing yet */
    uint64_t gen[OWNER_KINDS];
    uint32_t mask;
    struct owner_slot *slots;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xFF51AFD7ED558CCDull;
    return h ^ (h >> 33);
}

/* The key of a workload named @name; never 0. */
static uint64_t name_hash(uint32_t kind, uint32_t ns, const char *name)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001B3ull;
    h = mix(mix(h, kind), ns);
    return h ? h : 1;
}

/* The key of the Services of @ns whose selector's first pair is @key=@value; never 0. */
static uint64_t pair_hash(uint32_t ns, uint32_t key, uint32_t value)
{
    uint64_t h = mix(mix(mix(0x27D4EB2F165667C5ull, OWNER_SVC), ns), ((uint64_t)key << 32) | value);
    return h ? h : 1;
}

int ks_spread_owners_create(struct ks_spread_owners **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

void ks_spread_owners_destroy(struct ks_spread_owners *o)
{
    if (!o)
        return;
    free(o->slots);
    free(o);
}

static void insert(struct ks_spread_owners *o, uint64_t hash, const void *obj)
{
    uint32_t i = (uint32_t)hash & o->mask;
    while (o->slots[i].hash)
        i = (i + 1) & o->mask;
    o->slots[i] = (struct owner_slot){hash, obj};
}

static bool current(const struct ks_spread_owners *o, const struct ks_objects *objs)
{
    if (o->objs != objs)
        return false;
    for (int k = 0; k < OWNER_KINDS; k++) {
        if (o->gen[k] != objs->gen[kind_of[k]])
            return false;
    }
    return true;
}

const struct ks_spread_owners *ks_spread_owners_current(const struct ks_spread_owners *o,
                                                        const struct ks_objects *objs)
{
    return o && objs && current(o, objs) ? o : NULL;
}

const struct ks_spread_owners *ks_spread_owners_sync(struct ks_spread_owners *o,
                                                     const struct ks_objects *objs)
{
    if (!o || !objs)
        return NULL;
    if (current(o, objs))
        return o;
    o->objs = NULL;
    uint64_t n = 0;
    for (int k = 0; k < OWNER_KINDS; k++)
        n += objs->of[kind_of[k]].n;
    uint32_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    if (cap - 1 != o->mask || !o->slots) {
        struct owner_slot *slots = malloc((size_t)cap * sizeof(*slots));
        if (!slots)
            return NULL;
        free(o->slots);
        o->slots = slots;
        o->mask = cap - 1;
    }
    memset(o->slots, 0, (size_t)cap * sizeof(*o->slots));
    for (int k = 0; k < OWNER_SVC; k++) {
        const struct ks_objvec *v = &objs->of[kind_of[k]];
        for (uint32_t i = 0; i < v->n; i++) {
            const struct ks_object_meta *m = v->items[i]; /* every workload kind starts with its metadata */
            insert(o, name_hash((uint32_t)k, m->namespace_id, m->name), m);
        }
    }
    const struct ks_objvec *svcs = &objs->of[KS_KIND_SERVICE];
    for (uint32_t i = 0; i < svcs->n; i++) {
        const struct ks_service *svc = svcs->items[i];
        /* a Service with no pair in its selector adds nothing to a pod's selector */
        if (svc->has_selector && svc->selector.n)
            insert(
                o,
                pair_hash(svc->meta.namespace_id, svc->selector.items[0].key, svc->selector.items[0].value),
                svc);
    }
    for (int k = 0; k < OWNER_KINDS; k++)
        o->gen[k] = objs->gen[kind_of[k]];
    o->objs = objs;
    return o;
}

const void *ks__spread_owners_find(const struct ks_spread_owners *o, enum ks_kind kind, uint32_t ns,
                                   const char *name)
{
    uint32_t k = kind == KS_KIND_REPLICATION_CONTROLLER ? OWNER_RC
                 : kind == KS_KIND_REPLICA_SET          ? OWNER_RS
                                                        : OWNER_SS;
    uint64_t h = name_hash(k, ns, name);
    for (uint32_t i = (uint32_t)h & o->mask; o->slots[i].hash; i = (i + 1) & o->mask) {
        const struct ks_object_meta *m = o->slots[i].obj;
        if (o->slots[i].hash == h && m->namespace_id == ns && strcmp(m->name, name) == 0)
            return m;
    }
    return NULL;
}

bool ks__spread_owners_services(const struct ks_spread_owners *o, const struct ks_pod *pod,
                                bool (*fn)(void *ctx, const struct ks_service *svc), void *ctx)
{
    uint32_t ns = pod->meta.namespace_id;
    for (uint32_t l = 0; l < pod->meta.labels.n; l++) {
        const struct ks_label *pair = &pod->meta.labels.items[l];
        uint64_t h = pair_hash(ns, pair->key, pair->value);
        for (uint32_t i = (uint32_t)h & o->mask; o->slots[i].hash; i = (i + 1) & o->mask) {
            const struct ks_service *svc = o->slots[i].obj;
            if (o->slots[i].hash == h && svc->meta.namespace_id == ns &&
                svc->selector.items[0].key == pair->key && svc->selector.items[0].value == pair->value &&
                !fn(ctx, svc))
                return false;
        }
    }
    return true;
}
