/*
 * objects.c - well-known interned names, enum name tables and object destructors.
 *
 * The enum name tables are generated from the X-macros of api_types.h, so a value and its
 * name can never drift apart.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/dra_types.h"
#include "ksched/workload_types.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ks_wellknown ks_wk;

int ks_api_init(void)
{
    struct ks_wellknown wk = {
        .cpu = ks_intern("cpu"),
        .memory = ks_intern("memory"),
        .ephemeral_storage = ks_intern("ephemeral-storage"),
        .pods = ks_intern("pods"),
        .metadata_name = ks_intern("metadata.name"),
        .default_scheduler = ks_intern("default-scheduler"),
        .hostname_label = ks_intern("kubernetes.io/hostname"),
        .zone_label = ks_intern("topology.kubernetes.io/zone"),
        .region_label = ks_intern("topology.kubernetes.io/region"),
    };
    const uint32_t *ids = (const uint32_t *)&wk;
    for (size_t i = 0; i < sizeof(wk) / sizeof(uint32_t); i++) {
        if (ids[i] == KS_ID_NONE)
            return -ENOMEM;
    }
    ks_wk = wk;
    return 0;
}

#define KS_NAME_TABLE(fn, type, map, prefix)                                                                 \
    const char *fn(type v)                                                                                   \
    {                                                                                                        \
        switch (v) {                                                                                         \
            map(prefix)                                                                                      \
        }                                                                                                    \
        return "?";                                                                                          \
    }

#define KS_CASE_OP(name, text)                                                                               \
    case KS_OP_##name:                                                                                       \
        return text;
#define KS_CASE_EFFECT(name, text)                                                                           \
    case KS_EFFECT_##name:                                                                                   \
        return text;
#define KS_CASE_PHASE(name, text)                                                                            \
    case KS_PHASE_##name:                                                                                    \
        return text;

KS_NAME_TABLE(ks_selector_op_name, enum ks_selector_op, KS_SELECTOR_OP_MAP, KS_CASE_OP)
KS_NAME_TABLE(ks_taint_effect_name, enum ks_taint_effect, KS_TAINT_EFFECT_MAP, KS_CASE_EFFECT)
KS_NAME_TABLE(ks_pod_phase_name, enum ks_pod_phase, KS_POD_PHASE_MAP, KS_CASE_PHASE)

struct ks_pod *ks_pod_get(const struct ks_pod *pod)
{
    struct ks_pod *p = (struct ks_pod *)pod; /* the count is the only field a holder may change */
    if (p)
        __atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED);
    return p;
}

void ks_pod_put(const struct ks_pod *pod)
{
    struct ks_pod *p = (struct ks_pod *)pod;
    /* acq_rel: every holder's reads of the pod happen before the last holder frees it */
    if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
        ks_pod_destroy(p);
}

bool ks_pod_same_name(const struct ks_pod *a, const struct ks_pod *b)
{
    return a == b || (a->meta.namespace_id == b->meta.namespace_id && a->meta.name && b->meta.name &&
                      strcmp(a->meta.name, b->meta.name) == 0);
}

uint64_t ks_pod_name_hash(const struct ks_pod *pod)
{
    uint64_t h = 0xcbf29ce484222325ull ^ pod->meta.namespace_id; /* FNV-1a over the name */
    for (const char *p = pod->meta.name ? pod->meta.name : ""; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    return h ^ (h >> 32);
}

/* Every loaded object is one malloc'd struct whose contents live in its embedded arena. */
#define KS_DESTRUCTOR(fn, type)                                                                              \
    void fn(type *obj)                                                                                       \
    {                                                                                                        \
        if (!obj)                                                                                            \
            return;                                                                                          \
        ks_arena_destroy(&obj->arena);                                                                       \
        free(obj);                                                                                           \
    }

KS_DESTRUCTOR(ks_pod_group_destroy, struct ks_pod_group)
KS_DESTRUCTOR(ks_workload_destroy, struct ks_workload)
KS_DESTRUCTOR(ks_pod_destroy, struct ks_pod)
KS_DESTRUCTOR(ks_node_destroy, struct ks_node)
KS_DESTRUCTOR(ks_pv_destroy, struct ks_persistent_volume)
KS_DESTRUCTOR(ks_pvc_destroy, struct ks_persistent_volume_claim)
KS_DESTRUCTOR(ks_storage_class_destroy, struct ks_storage_class)
KS_DESTRUCTOR(ks_csi_node_destroy, struct ks_csi_node)
KS_DESTRUCTOR(ks_pdb_destroy, struct ks_pod_disruption_budget)
KS_DESTRUCTOR(ks_namespace_destroy, struct ks_namespace)
KS_DESTRUCTOR(ks_priority_class_destroy, struct ks_priority_class)
KS_DESTRUCTOR(ks_service_destroy, struct ks_service)
KS_DESTRUCTOR(ks_replication_controller_destroy, struct ks_replication_controller)
KS_DESTRUCTOR(ks_replica_set_destroy, struct ks_replica_set)
KS_DESTRUCTOR(ks_stateful_set_destroy, struct ks_stateful_set)
KS_DESTRUCTOR(ks_device_class_destroy, struct ks_device_class)
KS_DESTRUCTOR(ks_resource_slice_destroy, struct ks_resource_slice)
KS_DESTRUCTOR(ks_resource_claim_destroy, struct ks_resource_claim)
KS_DESTRUCTOR(ks_resource_claim_template_destroy, struct ks_resource_claim_template)

void ks_pod_identity(const struct ks_pod *pod, char *buf, size_t len)
{
    if (pod->meta.uid && pod->meta.uid[0])
        snprintf(buf, len, "%s", pod->meta.uid);
    else
        snprintf(buf, len, "%s/%s", ks_intern_str(pod->meta.namespace_id), pod->meta.name);
}

/* ---- host ports ----------------------------------------------------------------------------------- */

bool ks_host_ports_next(struct ks_host_port_iter *it, struct ks_host_port *out)
{
    const struct ks_pod *pod = it->pod;
    /* part 0: restartable init containers (sidecars), part 1: containers */
    for (; it->part < 2; it->part++, it->container = 0) {
        const struct ks_container *cs = it->part ? pod->containers : pod->init_containers;
        uint32_t n = it->part ? pod->ncontainers : pod->ninit_containers;
        for (; it->container < n; it->container++, it->port = 0) {
            const struct ks_container *c = &cs[it->container];
            if (!it->part && !c->restart_always)
                continue;
            while (it->port < c->nports) {
                const struct ks_container_port *p = &c->ports[it->port++];
                if (p->host_port <= 0)
                    continue;
                bool any = p->host_ip == KS_ID_EMPTY || p->host_ip == KS_ID_NONE;
                *out = (struct ks_host_port){
                    .ip = any ? it->any_ip : p->host_ip,
                    .port = (uint16_t)p->host_port,
                    .protocol = (uint8_t)p->protocol,
                };
                return true;
            }
        }
    }
    return false;
}

uint32_t ks_pod_host_ports(const struct ks_pod *pod, uint32_t any_ip, struct ks_host_port *out)
{
    struct ks_host_port_iter it = {.pod = pod, .any_ip = any_ip};
    struct ks_host_port p;
    uint32_t k = 0;
    while (ks_host_ports_next(&it, &p)) {
        if (out)
            out[k] = p;
        k++;
    }
    return k;
}

bool ks_host_port_conflict(const struct ks_host_port *a, const struct ks_host_port *b, uint32_t any_ip)
{
    return a->port == b->port && a->protocol == b->protocol &&
           (a->ip == b->ip || a->ip == any_ip || b->ip == any_ip);
}
