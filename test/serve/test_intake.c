/*
 * test_intake.c - informer events into the scheduler (serve/serve_intake.c), as
 * eventhandlers.go wires them: what is recorded before the caches sync, nodes and bound
 * pods into the cache, pending pods into the queue, pending -> bound, deletes with and
 * without the object, terminal pods, pods of other schedulers, and the object changes
 * applied between cycles.
 */
#include <criterion/criterion.h>

#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/config.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/queue.h"
#include "ksched/yaml_tree.h"

#include <stdlib.h>
#include <string.h>

static struct ks_yaml_stream *parse(const char *yaml)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    cr_assert_eq(ks_yaml_parse("t.yaml", yaml, strlen(yaml), &st, &err), 0, "%s", err.msg);
    return st;
}

static struct ks_node *node(const char *name, const char *cpu)
{
    char y[512];
    struct ks_node *n;
    struct ks_error err = {0};
    snprintf(y, sizeof(y),
             "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {zone: a}}\n"
             "status: {allocatable: {cpu: '%s', memory: 8Gi, pods: '110'}}\n",
             name, cpu);
    struct ks_yaml_stream *st = parse(y);
    cr_assert_eq(ks_decode_node("t.yaml", st->docs[0], &n, &err), 0, "%s", err.msg);
    ks_yaml_stream_destroy(st);
    return n;
}

/* @extra: ", field: v" added to spec, or a top-level "status: {...}" */
static struct ks_pod *pod(const char *name, const char *node_name, const char *extra)
{
    char y[1024];
    struct ks_pod *p;
    struct ks_error err = {0};
    snprintf(y, sizeof(y),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: ns, uid: uid-%s}\n"
             "spec: {nodeName: '%s', containers: [{name: c, image: i, resources: {requests: {cpu: "
             "100m}}}]%s}\n%s\n",
             name, name, node_name ? node_name : "", extra && extra[0] == ',' ? extra : "",
             extra && extra[0] != ',' ? extra : "");
    struct ks_yaml_stream *st = parse(y);
    cr_assert_eq(ks_decode_pod("t.yaml", st->docs[0], &p, &err), 0, "%s: %s", err.field, err.msg);
    ks_yaml_stream_destroy(st);
    return p;
}

static struct ks_persistent_volume_claim *pvc(const char *name, const char *volume)
{
    char y[512];
    struct ks_persistent_volume_claim *c;
    struct ks_error err = {0};
    snprintf(y, sizeof(y),
             "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: ns}\n"
             "spec: {volumeName: '%s', accessModes: [ReadWriteOnce]}\n",
             name, volume);
    struct ks_yaml_stream *st = parse(y);
    cr_assert_eq(ks_decode_pvc("t.yaml", st->docs[0], &c, &err), 0, "%s: %s", err.field, err.msg);
    ks_yaml_stream_destroy(st);
    return c;
}

struct fixture {
    struct ks_config *cfg;
    struct ks_objects *objects;
    struct ks_intake *in;
    struct ks_cache *cache;
    struct ks_scheduler *s;
};

static void setup(struct fixture *f)
{
    cr_assert_eq(ks_api_init(), 0);
    ks_rcu_register_thread();
    cr_assert_eq(ks_config_load_default(&f->cfg), 0);
    f->objects = calloc(1, sizeof(*f->objects));
    cr_assert_eq(ks_intake_create(f->objects, &f->in), 0);
}

static void go_live(struct fixture *f)
{
    struct ks_error err = {0};
    struct ks_scheduler_opts opts = {.config = f->cfg, .objects = f->objects, .seeded = true};
    cr_assert_eq(ks_cache_create(&f->cache), 0);
    cr_assert_eq(ks_scheduler_create(&opts, f->cache, &f->s, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_intake_go_live(f->in, f->s, f->cache), 0);
}

static void teardown(struct fixture *f)
{
    ks_scheduler_destroy(f->s);
    ks_cache_destroy(f->cache);
    ks_intake_destroy(f->in);
    ks_objects_destroy(f->objects);
    ks_config_destroy(f->cfg);
    ks_rcu_unregister_thread();
}

static void send(struct fixture *f, enum ks_watch_type type, enum ks_kind kind, const char *ns,
                 const char *name, void *obj)
{
    struct ks_watch_event ev = {.type = type, .kind = kind, .namespace_ = ns, .name = name, .obj = obj};
    ks_intake_apply(f->in, &ev);
}

static void expect_counts(struct fixture *f, uint32_t nodes, uint32_t pods, uint32_t active, const char *when)
{
    uint32_t cn, cp;
    struct ks_queue_counts q;
    ks_cache_counts(f->cache, &cn, &cp);
    ks_queue_count(ks_scheduler_queue(f->s), &q);
    cr_expect_eq(cn, nodes, "%s: %u nodes in the cache, want %u", when, cn, nodes);
    cr_expect_eq(cp, pods, "%s: %u pods in the cache, want %u", when, cp, pods);
    cr_expect_eq(q.active, active, "%s: %u pods in activeQ, want %u", when, q.active, active);
}

Test(intake, records_until_synced_then_feeds_cache_and_queue)
{
    struct fixture f = {0};
    setup(&f);
    send(&f, KS_WATCH_ADDED, KS_KIND_NODE, "", "n1", node("n1", "4"));
    send(&f, KS_WATCH_ADDED, KS_KIND_NODE, "", "n2", node("n2", "4"));
    send(&f, KS_WATCH_DELETED, KS_KIND_NODE, "", "n2", NULL); /* a relist found it gone */
    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "pending", pod("pending", NULL, NULL));
    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "bound", pod("bound", "n1", NULL));
    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "gone", pod("gone", NULL, NULL));
    send(&f, KS_WATCH_DELETED, KS_KIND_POD, "ns", "gone", pod("gone", NULL, NULL));
    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "other",
         pod("other", NULL, ", schedulerName: someone-else")); /* not ours: left alone */
    send(&f, KS_WATCH_ADDED, KS_KIND_PVC, "ns", "c1", pvc("c1", "v1"));
    cr_expect_eq(ks_objects_count(f.objects, PVC), 1, "recorded at once before the sync");

    struct ks_metrics *reg;
    struct ks_serve_metrics *sm;
    cr_assert_eq(ks_metrics_create(&reg), 0);
    cr_assert_eq(ks_serve_metrics_create(reg, f.cfg, &sm), 0);
    ks_intake_set_metrics(f.in, sm);
    go_live(&f);
    expect_counts(&f, 1, 1, 1, "after the sync");
    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "late", pod("late", NULL, NULL));
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ks_metrics_write(reg, out);
    fclose(out);
    cr_expect(strstr(text, "scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"} 2\n"),
              "the pending pods queued at the sync and after: %s", text);
    free(text);
    ks_serve_metrics_destroy(sm);
    ks_metrics_destroy(reg);
    struct ks_intake_stats st;
    ks_intake_stats(f.in, &st);
    cr_expect_eq(st.nodes, 1);
    cr_expect_eq(st.pods, 4, "pending, bound, other and late");
    teardown(&f);
}

Test(intake, live_transitions)
{
    struct fixture f = {0};
    setup(&f);
    send(&f, KS_WATCH_ADDED, KS_KIND_NODE, "", "n1", node("n1", "4"));
    go_live(&f);

    send(&f, KS_WATCH_ADDED, KS_KIND_NODE, "", "n2", node("n2", "4"));
    send(&f, KS_WATCH_MODIFIED, KS_KIND_NODE, "", "n1", node("n1", "8"));
    expect_counts(&f, 2, 0, 0, "nodes");

    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "p", pod("p", NULL, NULL));
    send(&f, KS_WATCH_MODIFIED, KS_KIND_POD, "ns", "p", pod("p", NULL, ", priority: 5"));
    expect_counts(&f, 2, 0, 1, "a pending pod updated in the queue");
    send(&f, KS_WATCH_MODIFIED, KS_KIND_POD, "ns", "p", pod("p", "n2", NULL));
    expect_counts(&f, 2, 1, 0, "bound by another scheduler: queue -> cache");
    struct ks_pod *p = ks_intake_find_pod(f.in, "ns", "p");
    cr_expect_eq(ks_cache_pod_node(f.cache, p), ks_intern("n2"));
    ks_pod_put(p);

    send(&f, KS_WATCH_MODIFIED, KS_KIND_POD, "ns", "p", pod("p", "n2", "status: {phase: Succeeded}"));
    expect_counts(&f, 2, 0, 0, "a terminal pod counts as deleted");

    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "q", pod("q", "n1", NULL));
    expect_counts(&f, 2, 1, 0, "a bound pod");
    send(&f, KS_WATCH_DELETED, KS_KIND_POD, "ns", "q", NULL); /* relist: deleted while the watch was down */
    expect_counts(&f, 2, 0, 0, "deleted without its object");

    send(&f, KS_WATCH_DELETED, KS_KIND_NODE, "", "n2", node("n2", "4"));
    expect_counts(&f, 1, 0, 0, "node deleted");

    struct ks_intake_stats before, after;
    ks_intake_stats(f.in, &before);
    send(&f, KS_WATCH_DELETED, KS_KIND_POD, "ns", "never-seen", NULL);
    send(&f, KS_WATCH_DELETED, KS_KIND_NODE, "", "never-seen", NULL);
    ks_intake_stats(f.in, &after);
    cr_expect_eq(after.skipped, before.skipped + 2, "deletes of unknown objects are skipped");
    teardown(&f);
}

/* A pod we bound: the binder put our queued object in the cache; the server's bound version replaces it. */
Test(intake, our_own_binding_comes_back)
{
    struct fixture f = {0};
    setup(&f);
    send(&f, KS_WATCH_ADDED, KS_KIND_NODE, "", "n1", node("n1", "4"));
    send(&f, KS_WATCH_ADDED, KS_KIND_POD, "ns", "p", pod("p", NULL, NULL));
    go_live(&f);
    ks_scheduler_run_until_idle(f.s);
    expect_counts(&f, 1, 1, 0, "bound in process");

    struct ks_intake_stats before, after;
    ks_intake_stats(f.in, &before);
    send(&f, KS_WATCH_MODIFIED, KS_KIND_POD, "ns", "p", pod("p", "n1", NULL));
    ks_intake_stats(f.in, &after);
    cr_expect_eq(after.skipped, before.skipped, "the informer's copy of our binding is not an error");
    expect_counts(&f, 1, 1, 0, "still one pod");
    send(&f, KS_WATCH_DELETED, KS_KIND_POD, "ns", "p", NULL);
    expect_counts(&f, 1, 0, 0, "and it can be deleted");
    teardown(&f);
}

Test(intake, object_changes_wait_for_the_scheduling_thread)
{
    struct fixture f = {0};
    setup(&f);
    send(&f, KS_WATCH_ADDED, KS_KIND_PVC, "ns", "c1", pvc("c1", "v1"));
    send(&f, KS_WATCH_ADDED, KS_KIND_PVC, "ns", "c2", pvc("c2", "v2"));
    go_live(&f);
    const struct ks_persistent_volume_claim *c1 = f.objects->of[KS_KIND_PVC].items[0];

    send(&f, KS_WATCH_MODIFIED, KS_KIND_PVC, "ns", "c1", pvc("c1", "v9"));
    send(&f, KS_WATCH_DELETED, KS_KIND_PVC, "ns", "c2", NULL);
    send(&f, KS_WATCH_ADDED, KS_KIND_PVC, "ns", "c3", pvc("c3", "v3"));
    struct ks_intake_stats st;
    ks_intake_stats(f.in, &st);
    cr_expect_eq(st.queued_objects, 3);
    cr_expect_eq(ks_objects_count(f.objects, PVC), 2, "plugins see nothing before the next cycle");
    cr_expect_eq(f.objects->of[KS_KIND_PVC].items[0], c1);

    ks_intake_apply_objects(f.in);
    ks_intake_stats(f.in, &st);
    cr_expect_eq(st.queued_objects, 0);
    cr_assert_eq(ks_objects_count(f.objects, PVC), 2);
    bool saw_c1 = false, saw_c3 = false;
    for (uint32_t i = 0; i < 2; i++) {
        const struct ks_persistent_volume_claim *c = f.objects->of[KS_KIND_PVC].items[i];
        if (strcmp(c->meta.name, "c1") == 0) {
            saw_c1 = true;
            cr_expect_str_eq(c->volume_name, "v9", "the new version");
        }
        saw_c3 |= strcmp(c->meta.name, "c3") == 0;
    }
    cr_expect(saw_c1 && saw_c3);
    /* the replaced c1 stays readable (an index built at start-up may point at it) until the intake goes */
    cr_expect_str_eq(c1->volume_name, "v1");
    teardown(&f);
}
