/*
 * stress_filter_prefix.c - the parallel Filter phase stops early (inside blocks, and before
 * blocks claimed past the numFeasibleNodesToFind-th feasible node: engine/find_nodes.c)
 * without changing a decision: the same seeded run with parallelism 4 (as many threads as
 * the machine has cores, up to four) and with parallelism 1 (no worker thread) places every
 * pod on the same node, round after round.
 *
 * 3,000 nodes, every other one tainted NoSchedule, so the 780 feasible nodes a cycle needs
 * are spread over about 1,560 positions and blocks end with failures as well as passes;
 * every 7th node is small, so nodes fill up and the feasible ones move as pods land.
 * 2,000 pods without tolerations. Under ThreadSanitizer this also races the workers'
 * block marks and the prefix they advance.
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NODES = 3000, PODS = 2000, ROUNDS = 3 };

struct placements {
    uint32_t node[PODS]; /* interned node name per pod index; 0 until bound */
    uint32_t bound, other;
};

static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct placements *p = ctx;
    if (ev->kind != KS_SCHED_SCHEDULED) {
        p->other++;
        return;
    }
    unsigned i;
    if (sscanf(ev->pod->meta.name, "pod-%u", &i) != 1 || i >= PODS) {
        p->other++;
        return;
    }
    p->node[i] = ev->node;
    p->bound++;
}

static char *write_cluster(void)
{
    char *path = strdup("/tmp/ksched-prefix-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    for (unsigned i = 0; i < NODES; i++) {
        fprintf(f, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%u}\n", i);
        if (i % 2)
            fprintf(f, "spec:\n  taints:\n  - {key: dedicated, value: x, effect: NoSchedule}\n");
        fprintf(f, "status:\n  allocatable: {cpu: \"%s\", memory: 16Gi, pods: \"110\"}\n", i % 7 ? "8" : "1");
    }
    for (unsigned i = 0; i < PODS; i++)
        fprintf(f,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%u, namespace: default}\nspec:\n"
                "  containers:\n  - name: c\n    resources: {requests: {cpu: 500m, memory: 100Mi}}\n",
                i);
    fclose(f);
    return path;
}

static int run(const char *path, uint32_t parallelism, struct placements *out)
{
    const char *p = path;
    struct ks_objects *objs;
    struct ks_config *cfg;
    struct ks_error err = {0};
    struct ks_cache *cache;
    struct ks_scheduler *s;

    memset(out, 0, sizeof(*out));
    if (ks_objects_load(&p, 1, &objs, &err) || ks_config_load_default(&cfg) || ks_cache_create(&cache)) {
        fprintf(stderr, "stress_filter_prefix: set-up failed: %s\n", err.msg);
        return -1;
    }
    struct ks_scheduler_opts opts = {.config = cfg,
                                     .parallelism = parallelism,
                                     .binders = 2,
                                     .seeded = true,
                                     .seed = 11,
                                     .on_event = on_event,
                                     .ctx = out};
    if (ks_scheduler_create(&opts, cache, &s, &err)) {
        fprintf(stderr, "stress_filter_prefix: %s\n", err.msg);
        return -1;
    }
    for (uint32_t i = 0; i < ks_objects_count(objs, NODE); i++)
        ks_cache_add_node(cache, ks_objects_nodes(objs)[i]);
    objs->of[KS_KIND_NODE].n = 0;
    for (uint32_t i = 0; i < ks_objects_count(objs, POD); i++)
        ks_scheduler_add_pod(s, ks_objects_pods(objs)[i]);
    ks_scheduler_run_until_idle(s);
    ks_scheduler_destroy(s);
    ks_cache_destroy(cache);
    ks_objects_destroy(objs);
    ks_config_destroy(cfg);
    return 0;
}

int main(void)
{
    static struct placements serial, parallel;
    int failures = 0;

    if (ks_api_init())
        return 1;
    ks_rcu_register_thread();
    char *path = write_cluster();
    if (!path || run(path, 1, &serial))
        return 1;
    if (serial.bound != PODS || serial.other) {
        fprintf(stderr, "stress_filter_prefix: serial run bound %u of %u (%u other events)\n", serial.bound,
                PODS, serial.other);
        failures++;
    }
    for (int r = 0; r < ROUNDS && !failures; r++) {
        if (run(path, 4, &parallel))
            return 1;
        for (unsigned i = 0; i < PODS; i++) {
            if (parallel.node[i] != serial.node[i]) {
                fprintf(stderr,
                        "stress_filter_prefix: round %d: pod-%u on %s with parallelism 4, on %s with 1\n", r,
                        i, parallel.node[i] ? ks_intern_str(parallel.node[i]) : "(none)",
                        serial.node[i] ? ks_intern_str(serial.node[i]) : "(none)");
                failures++;
                break;
            }
        }
    }
    unlink(path);
    free(path);
    ks_rcu_unregister_thread();
    if (failures)
        return 1;
    printf("stress_filter_prefix: %u pods, %d rounds with parallelism 4 placed as with 1\n", PODS, ROUNDS);
    return 0;
}
