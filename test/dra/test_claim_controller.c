/*
 * test_claim_controller.c - ResourceClaims from templates (dra/claim_controller.c): the claims
 * ks_dra_make_pod_claims() makes pod by pod are those ks_dra_make_template_claims() makes for
 * the whole set (names, owners, annotations, the pods' statuses), it leaves out what the
 * controller leaves out, and never gives a name twice.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/dra_controller.h"
#include "ksched/loader.h"

#include <stdio.h>
#include <string.h>

static void init(void)
{
    cr_assert_eq(ks_api_init(), 0);
}

TestSuite(claim_controller, .init = init);

#define TEMPLATE(ns, name)                                                                                   \
    "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"                                     \
    "metadata: {name: " name ", namespace: " ns "}\n"                                                        \
    "spec:\n  metadata:\n    labels: {team: a}\n  spec:\n    devices:\n      requests:\n"                    \
    "      - {name: req-0, exactly: {deviceClassName: test-class}}\n"

#define POD(ns, name, claims)                                                                                \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: " ns "}\n"                        \
    "spec:\n  containers: [{name: c, image: pause}]\n  resourceClaims: " claims "\n"

static const char cluster[] = TEMPLATE("test", "tmpl") TEMPLATE("test", "other") TEMPLATE("init", "tmpl")
    /* one claim from a template */
    POD("test", "a", "[{name: gpu, resourceClaimTemplateName: tmpl}]")
    /* two, one from a template of another namespace's name (none there: left waiting) */
    POD("test", "b",
        "[{name: gpu, resourceClaimTemplateName: tmpl}, {name: nic, resourceClaimTemplateName: "
        "missing}]")
    /* a claim by name: nothing to make */
    POD("test", "c", "[{name: gpu, resourceClaimName: shared}]")
    /* a long name, cut as the controller cuts it */
    POD("init", "a-pod-whose-name-is-long-enough-to-need-shortening-by-the-controller",
        "[{name: a-claim-whose-name-is-long-too, resourceClaimTemplateName: tmpl}]")
    /* two claims from two templates */
    POD("test", "d",
        "[{name: first, resourceClaimTemplateName: tmpl}, {name: second, resourceClaimTemplateName: other}]");

static struct ks_objects *load(void)
{
    struct ks_objects *objs = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_objects_load_buffer("cluster.yaml", cluster, strlen(cluster), &objs, &err), 0,
                 "%s:%d: %s: %s", err.file, err.line, err.field, err.msg);
    return objs;
}

static const char *annotation(const struct ks_resource_claim *c, const char *key)
{
    for (uint32_t i = 0; i < c->meta.annotations.n; i++) {
        if (strcmp(c->meta.annotations.items[i].key, key) == 0)
            return c->meta.annotations.items[i].value;
    }
    return NULL;
}

Test(claim_controller, pod_by_pod_makes_what_the_whole_set_makes)
{
    struct ks_objects *whole = load(), *each = load();
    struct ks_dra_claim_maker *m = NULL;
    struct ks_resource_claim *made[8];

    int nwhole = ks_dra_make_template_claims(whole, 42);
    cr_assert_eq(nwhole, 5, "claims made for the whole set: %d", nwhole);

    cr_assert_eq(ks_dra_claim_maker_create(each, 42, &m), 0);
    uint32_t npods = each->of[KS_KIND_POD].n, total = 0;
    for (uint32_t i = 0; i < npods; i++) {
        struct ks_pod *pod = each->of[KS_KIND_POD].items[i];
        int n = ks_dra_make_pod_claims(m, each, pod, made);
        cr_assert_geq(n, 0);
        cr_assert_leq((uint32_t)n, pod->nclaims);
        for (int c = 0; c < n; c++)
            cr_assert_eq(ks_objects_push(each, KS_KIND_RESOURCE_CLAIM, made[c]), 0);
        total += (uint32_t)n;
        /* asked again, a pod whose claims are recorded gets none */
        cr_expect_eq(ks_dra_make_pod_claims(m, each, pod, made), 0, "pod %s made claims twice",
                     pod->meta.name);
    }
    ks_dra_claim_maker_destroy(m);
    cr_assert_eq(total, (uint32_t)nwhole);

    const struct ks_objvec *cw = &whole->of[KS_KIND_RESOURCE_CLAIM], *ce = &each->of[KS_KIND_RESOURCE_CLAIM];
    cr_assert_eq(cw->n, ce->n);
    for (uint32_t i = 0; i < cw->n; i++) {
        const struct ks_resource_claim *a = cw->items[i], *b = ce->items[i];
        cr_expect(eq(str, (char *)a->meta.name, (char *)b->meta.name), "claim %u", i);
        cr_expect_eq(a->meta.namespace_id, b->meta.namespace_id);
        cr_expect(eq(str, (char *)a->meta.uid, (char *)b->meta.uid));
        cr_assert_eq(b->meta.nowners, 1);
        cr_expect(eq(str, (char *)a->meta.owners[0].uid, (char *)b->meta.owners[0].uid));
        cr_expect(b->meta.owners[0].controller);
        cr_expect(eq(str, (char *)annotation(a, "resource.kubernetes.io/pod-claim-name"),
                     (char *)annotation(b, "resource.kubernetes.io/pod-claim-name")));
        cr_expect_eq(b->spec.nrequests, 1, "the template's spec");
        cr_expect_leq(strlen(b->meta.name), 63, "%s", b->meta.name);
    }
    for (uint32_t i = 0; i < whole->of[KS_KIND_POD].n; i++) {
        const struct ks_pod *a = whole->of[KS_KIND_POD].items[i], *b = each->of[KS_KIND_POD].items[i];
        cr_assert_eq(a->nclaim_statuses, b->nclaim_statuses, "pod %s", a->meta.name);
        for (uint32_t s = 0; s < a->nclaim_statuses; s++) {
            cr_expect(eq(str, (char *)a->claim_statuses[s].name, (char *)b->claim_statuses[s].name));
            cr_expect(
                eq(str, (char *)a->claim_statuses[s].claim_name, (char *)b->claim_statuses[s].claim_name));
        }
    }
    ks_objects_destroy(whole);
    ks_objects_destroy(each);
}

Test(claim_controller, a_claim_name_is_never_given_twice)
{
    struct ks_objects *objs = load();
    struct ks_dra_claim_maker *m = NULL;
    struct ks_resource_claim *made[8];
    struct ks_pod *pod = objs->of[KS_KIND_POD].items[0];
    char seen[64][64];
    uint32_t nseen = 0;

    /* the same pod, its status forgotten each time: every round draws new names for the same base */
    cr_assert_eq(ks_dra_claim_maker_create(objs, 7, &m), 0);
    for (int round = 0; round < 64; round++) {
        pod->nclaim_statuses = 0;
        cr_assert_eq(ks_dra_make_pod_claims(m, objs, pod, made), 1);
        cr_assert_eq(strncmp(made[0]->meta.name, "a-gpu-", 6), 0, "%s", made[0]->meta.name);
        for (uint32_t i = 0; i < nseen; i++)
            cr_expect(strcmp(seen[i], made[0]->meta.name) != 0, "%s given twice", made[0]->meta.name);
        snprintf(seen[nseen++], sizeof(seen[0]), "%s", made[0]->meta.name);
        ks_resource_claim_destroy(made[0]);
    }
    ks_dra_claim_maker_destroy(m);
    ks_objects_destroy(objs);
}
