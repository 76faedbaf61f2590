/*
 * test_loader.c - manifests decode into the object model with upstream defaulting, and
 * bad input fails as a whole with file, line and field.
 */
#include <criterion/criterion.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/loader.h"

#include "fakes/load_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ks_objects *objs;

static void load_all_kinds(void)
{
    const char *path = KS_TEST_DATA_DIR "/good/all-kinds.yaml";
    struct ks_error err = {0};
    cr_assert_eq(ks_api_init(), 0);
    int rc = ks_objects_load(&path, 1, &objs, &err);
    cr_assert_eq(rc, 0, "load failed: %s:%d: %s: %s", err.file, err.line, err.field, err.msg);
}

static void unload(void)
{
    ks_objects_destroy(objs);
    objs = NULL;
}

static uint32_t id(const char *s)
{
    return ks_intern(s);
}

static const void *find(enum ks_kind kind, const char *name)
{
    for (uint32_t i = 0; i < objs->of[kind].n; i++) {
        /* every kind starts with its metadata */
        const struct ks_object_meta *m = objs->of[kind].items[i];
        if (strcmp(m->name, name) == 0)
            return m;
    }
    cr_assert_fail("no %s named %s", ks_kind_name(kind), name);
    return NULL;
}

TestSuite(loader, .init = load_all_kinds, .fini = unload);

Test(loader, counts_every_kind_and_list_items)
{
    cr_expect_eq(ks_objects_count(objs, NODE), 2);
    cr_expect_eq(ks_objects_count(objs, POD), 2);
    cr_expect_eq(ks_objects_count(objs, PV), 1);
    cr_expect_eq(ks_objects_count(objs, PVC), 1);
    cr_expect_eq(ks_objects_count(objs, STORAGE_CLASS), 1);
    cr_expect_eq(ks_objects_count(objs, CSI_NODE), 1);
    cr_expect_eq(ks_objects_count(objs, PDB), 1);
    cr_expect_eq(ks_objects_count(objs, NAMESPACE), 1);
    cr_expect_eq(ks_objects_count(objs, PRIORITY_CLASS), 2);
}

Test(loader, node_fields)
{
    const struct ks_node *n = find(KS_KIND_NODE, "node-a");
    uint32_t v;
    cr_expect_eq(n->name_id, id("node-a"));
    cr_expect(n->unschedulable);
    cr_assert_eq(n->ntaints, 2);
    cr_expect_eq(n->taints[0].key, id("dedicated"));
    cr_expect_eq(n->taints[0].value, id("gpu"));
    cr_expect_eq(n->taints[0].effect, KS_EFFECT_NO_SCHEDULE);
    cr_expect_eq(n->taints[1].value, KS_ID_EMPTY);
    cr_expect_eq(n->taints[1].effect, KS_EFFECT_PREFER_NO_SCHEDULE);
    cr_expect(ks_labels_get(&n->meta.labels, id("disk"), &v));
    cr_expect_eq(v, id("ssd"));
    cr_expect_eq(n->meta.namespace_id, KS_ID_EMPTY);
    cr_expect_eq(n->alloc.milli_cpu, 3800);
    cr_expect_eq(n->alloc.memory, 7680LL * 1024 * 1024);
    cr_expect_eq(n->alloc.allowed_pods, 110);
    cr_expect_eq(n->alloc.ephemeral_storage, 90LL << 30);
    cr_expect_eq(n->alloc.nscalar, 2);
    cr_expect_eq(ks_resource_list_get(&n->allocatable, id("example.com/gpu")), 2);
    cr_expect_eq(ks_resource_list_get(&n->allocatable, id("hugepages-2Mi")), 1LL << 30);
    cr_assert_eq(n->nimages, 1);
    cr_expect_eq(n->images[0].nnames, 2);
    cr_expect_eq(n->images[0].size_bytes, 300000);
    cr_expect_str_eq(n->conditions[0].type, "Ready");
    cr_expect_str_eq(n->conditions[0].status, "True");
}

Test(loader, node_without_allocatable_has_zero_capacity)
{
    const struct ks_node *n = find(KS_KIND_NODE, "node-empty");
    cr_expect_eq(n->alloc.milli_cpu, 0);
    cr_expect_eq(n->alloc.memory, 0);
    cr_expect_eq(n->alloc.allowed_pods, 0);
    cr_expect_eq(n->meta.labels.n, 0);
}

Test(loader, labels_are_sorted_by_id)
{
    const struct ks_node *n = find(KS_KIND_NODE, "node-a");
    for (uint32_t i = 1; i < n->meta.labels.n; i++)
        cr_expect_lt(n->meta.labels.items[i - 1].key, n->meta.labels.items[i].key);
}

Test(loader, pod_metadata_and_defaults)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    cr_expect_eq(p->meta.namespace_id, id("team-a"));
    cr_expect_str_eq(p->meta.uid, "1234");
    cr_expect_eq(p->meta.annotations.n, 1);
    cr_expect_str_eq(p->meta.annotations.items[0].value, "hello");
    cr_assert_eq(p->meta.nowners, 1);
    cr_expect_str_eq(p->meta.owners[0].kind, "StatefulSet");
    cr_expect(p->meta.owners[0].controller);
    cr_expect_eq(p->meta.creation_time, 1704067200LL * 1000000000);
    cr_expect_eq(p->scheduler_name, id("my-scheduler"));
    cr_expect_eq(p->node_name, KS_ID_EMPTY);

    const struct ks_pod *plain = find(KS_KIND_POD, "plain");
    cr_expect_eq(plain->meta.namespace_id, id("default"));
    cr_expect_eq(plain->scheduler_name, id("default-scheduler"));
    cr_expect_eq(plain->phase, KS_PHASE_PENDING);
    cr_expect_eq(plain->start_time, KS_TIME_NONE);
}

Test(loader, priority_from_class_and_global_default)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    cr_expect_eq(p->priority, 1000);
    cr_expect_eq(p->preemption_policy, KS_PREEMPT_NEVER, "policy comes from the class");
    const struct ks_pod *plain = find(KS_KIND_POD, "plain");
    cr_expect_eq(plain->priority, 7, "the globalDefault class applies");
}

Test(loader, containers_requests_default_to_limits)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    cr_assert_eq(p->ncontainers, 1);
    const struct ks_container *c = &p->containers[0];
    cr_expect_eq(c->image, id("nginx:1.25"));
    cr_expect_eq(ks_resource_list_get(&c->requests, id("cpu")), 500);
    cr_expect_eq(ks_resource_list_get(&c->requests, id("memory")), 256LL << 20);
    cr_expect_eq(ks_resource_list_get(&c->requests, id("example.com/gpu")), 1,
                 "request defaulted from limit");
    cr_assert_eq(p->ninit_containers, 2);
    cr_expect_not(p->init_containers[0].restart_always);
    cr_expect(p->init_containers[1].restart_always);
    cr_expect_eq(ks_resource_list_get(&p->overhead, id("cpu")), 50);
}

Test(loader, host_network_defaults_host_port)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    const struct ks_container_port *port = &p->containers[0].ports[0];
    cr_expect_eq(port->container_port, 8080);
    cr_expect_eq(port->host_port, 8080);
    cr_expect_eq(port->protocol, KS_PROTO_UDP);
    cr_expect_eq(port->host_ip, id("10.0.0.1"));
}

Test(loader, tolerations)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    cr_assert_eq(p->ntolerations, 2);
    cr_expect_eq(p->tolerations[0].op, KS_TOLERATION_EQUAL);
    cr_expect_eq(p->tolerations[0].effect, KS_EFFECT_NO_SCHEDULE);
    cr_expect_eq(p->tolerations[1].op, KS_TOLERATION_EXISTS);
    cr_expect_eq(p->tolerations[1].key, KS_ID_EMPTY);
    cr_expect_eq(p->tolerations[1].effect, KS_EFFECT_NONE);
    cr_expect_eq(p->tolerations[1].toleration_seconds, -1);
}

Test(loader, node_affinity)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    const struct ks_node_affinity *na = p->affinity.node_affinity;
    cr_assert_not_null(na);
    cr_assert_not_null(na->required);
    cr_assert_eq(na->required->nterms, 1);
    const struct ks_node_selector_term *t = &na->required->terms[0];
    cr_assert_eq(t->nexprs, 1);
    cr_expect_eq(t->exprs[0].op, KS_OP_GT);
    cr_expect_eq(t->exprs[0].number, 3);
    cr_assert_eq(t->nfields, 1);
    cr_expect_eq(t->fields[0].key, id("metadata.name"));
    cr_assert_eq(na->npreferred, 1);
    cr_expect_eq(na->preferred[0].weight, 20);
    cr_expect_eq(na->preferred[0].term.exprs[0].nvalues, 2);
    cr_expect_lt(na->preferred[0].term.exprs[0].values[0], na->preferred[0].term.exprs[0].values[1],
                 "values are sorted ids");
    cr_expect_eq(p->node_selector.n, 1);
}

Test(loader, pod_anti_affinity)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    const struct ks_pod_affinity *aa = p->affinity.pod_anti_affinity;
    cr_expect_null(p->affinity.pod_affinity);
    cr_assert_not_null(aa);
    cr_assert_eq(aa->nrequired, 1);
    cr_expect_eq(aa->required[0].topology_key, id("kubernetes.io/hostname"));
    cr_assert_not_null(aa->required[0].selector);
    cr_expect_eq(aa->required[0].selector->nreqs, 1);
    cr_expect_eq(aa->required[0].selector->reqs[0].op, KS_OP_IN);
    cr_assert_not_null(aa->required[0].namespace_selector, "{} is an empty, not a nil, selector");
    cr_expect_eq(aa->required[0].namespace_selector->nreqs, 0);
    cr_assert_eq(aa->npreferred, 1);
    cr_expect_eq(aa->preferred[0].weight, 5);
    cr_expect_eq(aa->preferred[0].term.nnamespaces, 2);
    cr_expect_null(aa->preferred[0].term.namespace_selector);
    cr_expect_eq(aa->preferred[0].term.selector->reqs[0].op, KS_OP_NOT_IN);
}

Test(loader, spread_constraints)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    cr_assert_eq(p->nspread, 1);
    const struct ks_spread_constraint *c = &p->spread[0];
    cr_expect_eq(c->max_skew, 2);
    cr_expect_eq(c->topology_key, id("topology.kubernetes.io/zone"));
    cr_expect_eq(c->when_unsatisfiable, KS_DO_NOT_SCHEDULE);
    cr_expect_eq(c->min_domains, 3);
    cr_expect_eq(c->node_affinity_policy, KS_POLICY_IGNORE);
    cr_expect_eq(c->node_taints_policy, KS_POLICY_HONOR);
    cr_expect_eq(c->nmatch_label_keys, 1);
}

Test(loader, volumes_gates_and_status)
{
    const struct ks_pod *p = find(KS_KIND_POD, "web-0");
    cr_assert_eq(p->nvolumes, 3);
    cr_expect_eq(p->volumes[0].kind, KS_VOLUME_PVC);
    cr_expect_str_eq(p->volumes[0].source, "data");
    cr_expect_eq(p->volumes[1].kind, KS_VOLUME_EPHEMERAL);
    cr_expect_str_eq(p->volumes[1].source, "web-0-scratch");
    cr_expect_eq(p->volumes[2].kind, KS_VOLUME_OTHER);
    cr_assert_eq(p->ngates, 1);
    cr_expect_str_eq(p->scheduling_gates[0], "wait-for-quota");
    cr_expect_eq(p->nominated_node_name, id("node-a"));
    /* 00:00:01.5 at +01:00 is 23:00:01.5 UTC the day before */
    cr_expect_eq(p->start_time, (1704067200LL - 3600 + 1) * 1000000000 + 500000000);
}

Test(loader, storage_objects)
{
    const struct ks_persistent_volume *pv = find(KS_KIND_PV, "pv-1");
    cr_expect_eq(pv->capacity_storage, 10LL << 30);
    cr_expect_eq(pv->access_modes, KS_ACCESS_RWO | KS_ACCESS_ROX);
    cr_expect_str_eq(pv->claim_name, "data");
    cr_expect_str_eq(pv->csi_driver, "csi.example.com");
    cr_assert_not_null(pv->node_affinity);
    const struct ks_persistent_volume_claim *pvc = find(KS_KIND_PVC, "data");
    cr_expect(pvc->has_storage_class);
    cr_expect_eq(pvc->request_storage, 5LL << 30);
    cr_expect_str_eq(pvc->volume_name, "pv-1");
    const struct ks_storage_class *sc = find(KS_KIND_STORAGE_CLASS, "wffc");
    cr_expect_eq(sc->binding_mode, KS_BINDING_WAIT_FOR_FIRST_CONSUMER);
    cr_expect_eq(sc->nallowed_topologies, 1);
    const struct ks_csi_node *cn = find(KS_KIND_CSI_NODE, "node-a");
    cr_assert_eq(cn->ndrivers, 1);
    cr_expect(cn->drivers[0].has_count);
    cr_expect_eq(cn->drivers[0].allocatable_count, 16);
}

Test(loader, policy_objects)
{
    const struct ks_pod_disruption_budget *pdb = find(KS_KIND_PDB, "web-pdb");
    cr_expect(pdb->min_available.set);
    cr_expect(pdb->min_available.percent);
    cr_expect_eq(pdb->min_available.value, 50);
    cr_expect_not(pdb->max_unavailable.set);
    cr_expect_eq(pdb->disruptions_allowed, 1);
    cr_expect_eq(pdb->ndisrupted, 1);
    const struct ks_namespace *ns = find(KS_KIND_NAMESPACE, "team-a");
    cr_expect_eq(ns->meta.labels.n, 1);
}

/* ---- failures leave nothing behind ---- */

static int load_text(const char *text, struct ks_objects **out, struct ks_error *err)
{
    return ks_test_load_text(text, KS_VALIDATE_WARN, out, err);
}

Test(loader_errors, error_after_good_objects_returns_nothing)
{
    struct ks_objects *o = (struct ks_objects *)0x1;
    struct ks_error err = {0};
    ks_api_init();
    int rc = load_text("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                       "  - name: c\n    resources: {requests: {cpu: abc}}\n",
                       &o, &err);
    cr_expect_lt(rc, 0);
    cr_expect_null(o);
    cr_expect_eq(err.line, 11);
    cr_expect_str_eq(err.field, "spec.containers[0].resources.requests.cpu");
    cr_expect_str_eq(err.msg,
                     "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular "
                     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

Test(loader_errors, first_error_wins)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    ks_api_init();
    int rc = load_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\nspec: {containers: [{name: c}]}\n---\n"
        "apiVersion: v1\nkind: Nope\n",
        &o, &err);
    cr_expect_lt(rc, 0);
    cr_expect_str_eq(err.field, "metadata.name");
    cr_expect_eq(err.line, 3);
}

Test(loader_errors, empty_documents_are_skipped)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    ks_api_init();
    cr_assert_eq(
        load_text("---\n---\n# nothing\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n", &o, &err),
        0);
    cr_expect_eq(ks_objects_count(o, NODE), 1);
    ks_objects_destroy(o);
}

Test(loader_errors, same_name_in_other_namespace_is_fine)
{
    struct ks_objects *o;
    struct ks_error err = {0};
    ks_api_init();
    cr_assert_eq(
        load_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec: {containers: [{name: c}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: b}\n"
            "spec: {containers: [{name: c}]}\n",
            &o, &err),
        0);
    cr_expect_eq(ks_objects_count(o, POD), 2);
    ks_objects_destroy(o);
}

Test(decoder, paths_spell_fields_indexes_and_keys_and_are_cut_at_the_end)
{
    struct ks_decoder d;
    struct ks_error err = {0};
    ks_decoder_init(&d, "f.yaml", NULL, &err);
    size_t top = ks_dec_push(&d, "spec");
    ks_dec_push(&d, "containers");
    size_t at = ks_dec_push_index(&d, 120);
    ks_dec_push_key(&d, "example.com/gpu");
    cr_expect_str_eq(d.path, "spec.containers[120][example.com/gpu]");
    ks_dec_pop(&d, at);
    ks_dec_push_index(&d, 0);
    ks_dec_push_key(&d, "cpu");
    cr_expect_str_eq(d.path, "spec.containers[0].cpu");
    ks_dec_pop(&d, top);
    cr_expect_str_eq(d.path, "");
    char long_key[400];
    memset(long_key, 'k', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    ks_dec_push(&d, "metadata");
    ks_dec_push_key(&d, long_key);
    ks_dec_push_index(&d, 7);
    cr_expect_eq(strlen(d.path), KS_DECODE_PATH_MAX - 1);
    cr_expect_eq(d.plen, KS_DECODE_PATH_MAX - 1);
    cr_expect(strncmp(d.path, "metadata.kkk", 12) == 0);
}
