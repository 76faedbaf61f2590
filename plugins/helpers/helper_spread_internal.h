/*
 * helper_spread_internal.h - what the spreading helpers share among their files
 * (helper_spread.c, helper_spread_owners.c, helper_spread_counter.c): the domain tables'
 * probe and allocation, requirement equality, and lookups in the index of workloads and
 * Services.
 */
#ifndef KSCHED_PLUGINS_HELPER_SPREAD_INTERNAL_H
#define KSCHED_PLUGINS_HELPER_SPREAD_INTERNAL_H

#include "ksched/loader.h"
#include "ksched/plugin_helpers_spread.h"

/*
 * ks__spread_owners_find - the ReplicationController, ReplicaSet or StatefulSet (@kind)
 * named @name in namespace @ns, the first in input order; NULL when none.
 */
const void *ks__spread_owners_find(const struct ks_spread_owners *o, enum ks_kind kind, uint32_t ns,
                                   const char *name);

/*
 * ks__spread_owners_services - call @fn for each Service of @pod's namespace whose
 * selector's first pair @pod carries (each once; whether it selects the pod is @fn's to
 * check), until @fn returns false. Returns false when @fn stopped it.
 */
bool ks__spread_owners_services(const struct ks_spread_owners *o, const struct ks_pod *pod,
                                bool (*fn)(void *ctx, const struct ks_service *svc), void *ctx);

/*
 * ks__spread_table_probe - the slot of @value in an open-addressing table of @mask + 1
 * slots (struct ks_spread_domain, KS_ID_NONE marking a free one): its own, or the free
 * slot where it would go. The table must have a free slot.
 */
struct ks_spread_domain *ks__spread_table_probe(struct ks_spread_domain *slots, uint32_t mask,
                                                uint32_t value);

/* ks__spread_domains_alloc - an empty table for at least @need values (at most half full) in @arena. 0 or
 * -ENOMEM. */
int ks__spread_domains_alloc(struct ks_spread_domains *d, struct ks_arena *arena, uint32_t need);

/* ks__spread_requirements_equal - the same requirements in the same order. */
bool ks__spread_requirements_equal(const struct ks_requirement *a, uint32_t na,
                                   const struct ks_requirement *b, uint32_t nb);

#endif
