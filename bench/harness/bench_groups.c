/*
 * bench_groups.c - the pod groups of createPods' podGroupSizes: gang names, and the
 * PodGroup objects (scheduling.k8s.io/v1beta1, gang policy, minCount the gang's size) a
 * workload controller would have made for them.
 */
#include "bench.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void ks_bench_group_name(char *buf, size_t len, uint32_t op, uint32_t g)
{
    snprintf(buf, len, "gang-%u-%u", op, g);
}

int ks_bench_join_group(struct ks_pod *pod, uint32_t op, uint32_t g)
{
    char name[64];
    ks_bench_group_name(name, sizeof(name), op, g);
    const char *copy = ks_arena_strdup(&pod->arena, name);
    if (!copy)
        return -ENOMEM;
    pod->scheduling_group = copy;
    return 0;
}

int ks_bench_pod_groups(struct ks_objects *objs, uint32_t op, uint32_t ns, uint32_t ngroups,
                        const struct ks_bench_op *spec, uint32_t last)
{
    char name[64];
    for (uint32_t g = 0; g < ngroups; g++) {
        struct ks_pod_group *pg = calloc(1, sizeof(*pg));
        if (!pg)
            return -ENOMEM;
        ks_bench_group_name(name, sizeof(name), op, g);
        pg->meta.name = ks_arena_strdup(&pg->arena, name);
        pg->meta.namespace_id = ns;
        pg->spec.policy = KS_POD_GROUP_GANG;
        pg->spec.min_count = (int32_t)(g + 1 == ngroups ? last : spec->group_sizes[g % spec->ngroup_sizes]);
        pg->spec.topology_key = spec->ngroup_keys ? spec->group_keys[g % spec->ngroup_keys] : KS_ID_NONE;
        int rc = pg->meta.name ? ks_objects_push(objs, KS_KIND_POD_GROUP, pg) : -ENOMEM;
        if (rc < 0) {
            ks_pod_group_destroy(pg);
            return rc;
        }
    }
    return 0;
}
