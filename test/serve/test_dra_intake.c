/*
 * test_dra_intake.c - the resource.k8s.io kinds through ksched serve's intake
 * (serve/serve_intake.c): recorded before the caches sync, queued for the scheduling thread
 * once live and counted announced before their events reach the queue (ResourceClaim,
 * ResourceSlice, DeviceClass events with the old and the new object; none for a
 * ResourceClaimTemplate), a pod's recorded generated claim as UpdatePodGeneratedResourceClaim,
 * and replaced claims kept readable (a plugin may hold them beyond a cycle).
 *
 * A plugin of the test's own ("DraWatch") gates every pod at PreEnqueue and registers the
 * DRA events with hints that record what they were given and return QueueSkip.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "serve.h"

#include "fakes/fake_plugins.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/internal/config.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/queue.h"
#include "ksched/registry.h"
#include "ksched/yaml_tree.h"

#include <stdlib.h>
#include <string.h>

/* ---- the watching plugin -------------------------------------------------------------------- */

struct seen {
    enum ks_event_resource resource;
    const void *old_obj, *new_obj;
    uint64_t pending; /* queued - gen of the object's kind when the hint ran */
};

static struct ks_objects *watched;
static struct seen seen[16];
static int nseen;

static uint64_t pending_of(enum ks_kind kind)
{
    return ks_objects_queued(watched, kind) - watched->gen[kind];
}

static enum ks_queueing_hint record(enum ks_event_resource r, enum ks_kind kind, const void *old_obj,
                                    const void *new_obj)
{
    if (nseen < 16)
        seen[nseen++] = (struct seen){r, old_obj, new_obj, pending_of(kind)};
    return KS_QUEUE_SKIP;
}

static enum ks_queueing_hint hint_claim(void *self, const struct ks_pod *pod, const void *o, const void *n)
{
    (void)self, (void)pod;
    return record(KS_ER_RESOURCE_CLAIM, KS_KIND_RESOURCE_CLAIM, o, n);
}

static enum ks_queueing_hint hint_slice(void *self, const struct ks_pod *pod, const void *o, const void *n)
{
    (void)self, (void)pod;
    return record(KS_ER_RESOURCE_SLICE, KS_KIND_RESOURCE_SLICE, o, n);
}

static enum ks_queueing_hint hint_class(void *self, const struct ks_pod *pod, const void *o, const void *n)
{
    (void)self, (void)pod;
    return record(KS_ER_DEVICE_CLASS, KS_KIND_DEVICE_CLASS, o, n);
}

static enum ks_queueing_hint hint_pod(void *self, const struct ks_pod *pod, const void *o, const void *n)
{
    (void)self, (void)pod;
    return record(KS_ER_POD, KS_KIND_POD, o, n);
}

static int gate(void *self, const struct ks_pod *pod, struct ks_status *st)
{
    (void)self, (void)pod;
    return ks_status_set(st, KS_UNSCHEDULABLE_AND_UNRESOLVABLE, "watching");
}

static uint32_t watch_events(void *self, struct ks_event_registration *out, uint32_t max)
{
    static const struct ks_event_registration regs[] = {
        {{KS_ER_RESOURCE_CLAIM, KS_ACT_ADD | KS_ACT_UPDATE | KS_ACT_DELETE}, hint_claim},
        {{KS_ER_RESOURCE_SLICE, KS_ACT_ADD | KS_ACT_UPDATE | KS_ACT_DELETE}, hint_slice},
        {{KS_ER_DEVICE_CLASS, KS_ACT_ADD | KS_ACT_UPDATE | KS_ACT_DELETE}, hint_class},
        {{KS_ER_POD, KS_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM}, hint_pod},
    };
    (void)self;
    for (uint32_t i = 0; i < 4 && i < max; i++)
        out[i] = regs[i];
    return 4;
}

static const struct ks_plugin dra_watch = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DraWatch",
    .pre_enqueue = gate,
    .events_to_register = watch_events,
};

/* ---- objects --------------------------------------------------------------------------------- */

static void *object(enum ks_kind kind, const char *yaml)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    void *obj;
    cr_assert(eq(int, ks_yaml_parse("t.yaml", yaml, strlen(yaml), &st, &err), 0), "%s", err.msg);
    cr_assert(eq(int, ks_object_decode_as("t.yaml", st->docs[0], kind, &obj, &err), 0), "%s: %s", err.field,
              err.msg);
    ks_yaml_stream_destroy(st);
    return obj;
}

static void *claim(const char *rv, bool allocated)
{
    char y[1024];
    snprintf(
        y, sizeof(y),
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns, "
        "resourceVersion: '%s'}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: "
        "gpu}}]}}\n%s",
        rv,
        allocated
            ? "status: {allocation: {devices: {results: [{request: r, driver: d, pool: p, device: g}]}}}\n"
            : "");
    return object(KS_KIND_RESOURCE_CLAIM, y);
}

static void *device_class(const char *expr)
{
    char y[512];
    snprintf(y, sizeof(y),
             "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
             "spec: {selectors: [{cel: {expression: '%s'}}]}\n",
             expr);
    return object(KS_KIND_DEVICE_CLASS, y);
}

static void *slice(const char *node)
{
    char y[512];
    snprintf(y, sizeof(y),
             "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: %s-d}\nspec: {driver: d, "
             "pool: {name: %s, generation: 1, resourceSliceCount: 1}, nodeName: %s, devices: [{name: g}]}\n",
             node, node, node);
    return object(KS_KIND_RESOURCE_SLICE, y);
}

static void *claim_template(void)
{
    return object(
        KS_KIND_RESOURCE_CLAIM_TEMPLATE,
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: "
        "ns}\nspec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}}\n");
}

static struct ks_pod *pod(bool recorded)
{
    char y[1024];
    snprintf(y, sizeof(y),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, uid: up}\n"
             "spec: {schedulerName: fake-scheduler, containers: [{name: c, image: i}], "
             "resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]}\n%s",
             recorded ? "status: {resourceClaimStatuses: [{name: gpu, resourceClaimName: p-gpu-x}]}\n" : "");
    return object(KS_KIND_POD, y);
}

static void send(struct ks_intake *in, enum ks_watch_type type, enum ks_kind kind, const char *ns,
                 const char *name, void *obj)
{
    struct ks_watch_event ev = {.type = type, .kind = kind, .namespace_ = ns, .name = name, .obj = obj};
    ks_intake_apply(in, &ev);
}

Test(serve_dra_intake, dra_kinds_are_queued_counted_and_offered_to_the_queue)
{
    struct ks_error err = {0};
    struct ks_cache *cache;
    struct ks_scheduler *s;
    struct ks_intake *in;

    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
    cr_assert(eq(int, ks_registry_add(&dra_watch, &err), 0), "%s", err.msg);
    struct ks_config *cfg = ks_fake_config("    preEnqueue:\n      enabled:\n      - name: DraWatch\n");
    watched = calloc(1, sizeof(*watched));
    cr_assert(eq(int, ks_intake_create(watched, &in), 0));

    /* before the caches sync: recorded at once, and counted so that nothing is pending */
    void *c1 = claim("1", false);
    send(in, KS_WATCH_ADDED, KS_KIND_RESOURCE_CLAIM, "ns", "c", c1);
    send(in, KS_WATCH_ADDED, KS_KIND_DEVICE_CLASS, "", "gpu", device_class("true"));
    send(in, KS_WATCH_ADDED, KS_KIND_RESOURCE_CLAIM_TEMPLATE, "ns", "t", claim_template());
    cr_expect(eq(u32, ks_objects_count(watched, RESOURCE_CLAIM), 1));
    cr_expect(eq(u64, pending_of(KS_KIND_RESOURCE_CLAIM), 0));
    cr_expect(eq(u64, ks_objects_queued(watched, KS_KIND_RESOURCE_CLAIM), 1));

    struct ks_scheduler_opts opts = {.config = cfg, .objects = watched, .seeded = true};
    cr_assert(eq(int, ks_cache_create(&cache), 0));
    cr_assert(eq(int, ks_scheduler_create(&opts, cache, &s, &err), 0), "%s", err.msg);
    cr_assert(eq(int, ks_intake_go_live(in, s, cache), 0));
    send(in, KS_WATCH_ADDED, KS_KIND_POD, "ns", "p", pod(false));
    struct ks_queue_counts q;
    ks_queue_count(ks_scheduler_queue(s), &q);
    cr_expect(eq(u32, q.gated, 1), "DraWatch gates the pod");

    /* live: each change waits for the scheduling thread, announced before its event */
    void *c2 = claim("2", true);
    send(in, KS_WATCH_MODIFIED, KS_KIND_RESOURCE_CLAIM, "ns", "c", c2);
    void *s1 = slice("n1");
    send(in, KS_WATCH_ADDED, KS_KIND_RESOURCE_SLICE, "", "n1-d", s1);
    void *d2 = device_class("false");
    send(in, KS_WATCH_MODIFIED, KS_KIND_DEVICE_CLASS, "", "gpu", d2);
    send(in, KS_WATCH_MODIFIED, KS_KIND_RESOURCE_CLAIM_TEMPLATE, "ns", "t", claim_template());
    send(in, KS_WATCH_DELETED, KS_KIND_RESOURCE_CLAIM, "ns", "c", NULL);
    send(in, KS_WATCH_MODIFIED, KS_KIND_POD, "ns", "p", pod(true));

    cr_assert(eq(int, nseen, 5), "hints ran %d times", nseen);
    cr_expect(eq(int, seen[0].resource, KS_ER_RESOURCE_CLAIM));
    cr_expect(eq(ptr, (void *)seen[0].old_obj, c1));
    cr_expect(eq(ptr, (void *)seen[0].new_obj, c2));
    cr_expect(eq(u64, seen[0].pending, 1), "counted before the event");
    cr_expect(eq(int, seen[1].resource, KS_ER_RESOURCE_SLICE));
    cr_expect(eq(ptr, (void *)seen[1].old_obj, NULL));
    cr_expect(eq(ptr, (void *)seen[1].new_obj, s1));
    cr_expect(eq(u64, seen[1].pending, 1));
    cr_expect(eq(int, seen[2].resource, KS_ER_DEVICE_CLASS));
    cr_expect(eq(ptr, (void *)seen[2].new_obj, d2));
    cr_expect(eq(u64, seen[2].pending, 1));
    cr_expect(eq(int, seen[3].resource, KS_ER_RESOURCE_CLAIM), "the deletion");
    cr_expect(eq(ptr, (void *)seen[3].old_obj, c2));
    cr_expect(eq(ptr, (void *)seen[3].new_obj, NULL));
    cr_expect(eq(u64, seen[3].pending, 2));
    cr_expect(eq(int, seen[4].resource, KS_ER_POD), "the generated claim recorded in the pod's status");
    cr_expect(eq(u64, pending_of(KS_KIND_RESOURCE_CLAIM_TEMPLATE), 1), "templates have no event, but count");
    cr_expect(eq(u32, ks_objects_count(watched, RESOURCE_CLAIM), 1), "nothing applied before the next cycle");

    /* the scheduling thread applies them; the replaced claims stay readable until the intake goes */
    ks_intake_apply_objects(in);
    for (int k = 0; k < KS_KIND_COUNT; k++)
        cr_expect(eq(u64, pending_of((enum ks_kind)k), 0), "%s", ks_kind_name((enum ks_kind)k));
    cr_expect(eq(u32, ks_objects_count(watched, RESOURCE_CLAIM), 0));
    cr_expect(eq(u32, ks_objects_count(watched, RESOURCE_SLICE), 1));
    cr_expect(eq(str, (char *)((struct ks_resource_claim *)c1)->meta.resource_version, "1"));
    cr_expect(eq(str, (char *)((struct ks_resource_claim *)c2)->meta.resource_version, "2"));
    cr_expect(ne(ptr, (void *)((struct ks_resource_claim *)c2)->allocation, NULL));

    ks_scheduler_destroy(s);
    ks_cache_destroy(cache);
    ks_intake_destroy(in);
    ks_objects_destroy(watched);
    ks_config_destroy(cfg);
    ks_rcu_unregister_thread();
}
