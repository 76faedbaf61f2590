/*
 * cache_helpers.h - fixtures shared by the cache tests: nodes and pods with the fields
 * the cache aggregates (host ports, volumes, pod affinity, images), and snapshot lookups.
 *
 * Context: test code, one thread. Objects are built like test/fakes/objects.h does
 * (arena allocation, interned strings); failures abort.
 */
#ifndef KSCHED_TEST_CACHE_HELPERS_H
#define KSCHED_TEST_CACHE_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakes/objects.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static inline void *cache_test_must(void *p)
{
    if (!p) {
        fprintf(stderr, "cache tests: out of memory\n");
        abort();
    }
    return p;
}

static inline uint32_t id(const char *s)
{
    return ks_intern(s);
}

/* A node with @labels and allocatable @alloc ("cpu=4,memory=8Gi,pods=110"). */
static inline struct ks_node *mk_node(const char *name, const char *labels, const char *alloc)
{
    struct ks_node *n = ks_fake_node(name, labels);
    ks_fake_node_allocatable(n, alloc ? alloc : "cpu=4,memory=8Gi,pods=110");
    return n;
}

/* Give @n one image per entry of @names ("a,b" are two names of one image: use one call each). */
static inline void node_image(struct ks_node *n, const char *name1, const char *name2, int64_t size)
{
    struct ks_container_image *fresh =
        cache_test_must(ks_arena_calloc(&n->arena, (size_t)n->nimages + 1, sizeof(*fresh)));
    if (n->nimages)
        memcpy(fresh, n->images, n->nimages * sizeof(*fresh));
    struct ks_container_image *img = &fresh[n->nimages];
    img->nnames = name2 ? 2 : 1;
    img->names = cache_test_must(ks_arena_calloc(&n->arena, 2, sizeof(uint32_t)));
    img->names[0] = id(name1);
    if (name2)
        img->names[1] = id(name2);
    img->size_bytes = size;
    n->images = fresh;
    n->nimages++;
}

/* A pod in @ns with one container requesting @requests (NULL: none), one reference; not finished yet. */
static inline struct ks_pod *mk_pod_raw(const char *ns, const char *name, const char *requests)
{
    struct ks_pod *p = ks_fake_pod(ns, name);
    p->refs = 1; /* the test's reference, handed over by add or kept across assume */
    ks_fake_container(p, requests);
    return p;
}

static inline struct ks_pod *mk_pod(const char *ns, const char *name, const char *requests)
{
    return ks_fake_pod_done(mk_pod_raw(ns, name, requests));
}

/* Append a port (hostIP NULL: unset) to the pod's first container. */
static inline void pod_port(struct ks_pod *p, const char *host_ip, int32_t host_port, enum ks_protocol proto)
{
    struct ks_container *c = &p->containers[0];
    struct ks_container_port *fresh =
        cache_test_must(ks_arena_calloc(&p->arena, (size_t)c->nports + 1, sizeof(*fresh)));
    if (c->nports)
        memcpy(fresh, c->ports, c->nports * sizeof(*fresh));
    fresh[c->nports] = (struct ks_container_port){
        .container_port = 80,
        .host_port = host_port,
        .host_ip = host_ip ? id(host_ip) : KS_ID_EMPTY,
        .protocol = proto,
    };
    c->ports = fresh;
    c->nports++;
}

/* Append a volume of @kind whose source is @source (claim name, or "<pod>-<volume>"). */
static inline void pod_volume(struct ks_pod *p, enum ks_volume_kind kind, const char *source)
{
    struct ks_volume *fresh =
        cache_test_must(ks_arena_calloc(&p->arena, (size_t)p->nvolumes + 1, sizeof(*fresh)));
    if (p->nvolumes)
        memcpy(fresh, p->volumes, p->nvolumes * sizeof(*fresh));
    fresh[p->nvolumes] = (struct ks_volume){.name = "v", .kind = kind, .source = source};
    p->volumes = fresh;
    p->nvolumes++;
}

/* Pod affinity (@required_anti: also a required anti-affinity term) with topology key hostname. */
static inline void pod_affinity(struct ks_pod *p, bool affinity, bool preferred_anti, bool required_anti)
{
    if (affinity) {
        struct ks_pod_affinity *a = cache_test_must(ks_arena_calloc(&p->arena, 1, sizeof(*a)));
        a->nrequired = 1;
        a->required = cache_test_must(ks_arena_calloc(&p->arena, 1, sizeof(*a->required)));
        a->required[0].topology_key = ks_wk.hostname_label;
        p->affinity.pod_affinity = a;
    }
    if (preferred_anti || required_anti) {
        struct ks_pod_affinity *a = cache_test_must(ks_arena_calloc(&p->arena, 1, sizeof(*a)));
        if (required_anti) {
            a->nrequired = 1;
            a->required = cache_test_must(ks_arena_calloc(&p->arena, 1, sizeof(*a->required)));
            a->required[0].topology_key = ks_wk.hostname_label;
        }
        if (preferred_anti) {
            a->npreferred = 1;
            a->preferred = cache_test_must(ks_arena_calloc(&p->arena, 1, sizeof(*a->preferred)));
            a->preferred[0].weight = 1;
        }
        p->affinity.pod_anti_affinity = a;
    }
}

/* The record of node @name in the current snapshot (caller holds the RCU read lock). */
static inline const struct ks_node_snap *snap_node(struct ks_cache *c, const char *name)
{
    return ks_snapshot_find(ks_cache_snapshot(c), id(name));
}

#endif
