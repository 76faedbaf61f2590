/*
 * helper_spread_owners.h - lookups in the index of workloads and Services
 * (helper_spread_owners.c), internal to the spreading helpers (helper_spread.c).
 */
#ifndef KSCHED_PLUGINS_HELPER_SPREAD_OWNERS_H
#define KSCHED_PLUGINS_HELPER_SPREAD_OWNERS_H

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

#endif
