/*
 * test_nominator.c - nominations: replace, remove by name, per-node listing with references.
 */
#include <criterion/criterion.h>

#include "fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/nominator.h"

#include <stdio.h>
#include <string.h>

Test(nominator, add_replace_remove_and_list)
{
    cr_assert_eq(ks_api_init(), 0);
    struct ks_nominator *n;
    cr_assert_eq(ks_nominator_create(&n), 0);
    struct ks_pod *a = ks_fake_pod_done(ks_fake_pod("default", "a"));
    struct ks_pod *b = ks_fake_pod_done(ks_fake_pod("default", "b"));
    struct ks_pod *a2 = ks_fake_pod_done(ks_fake_pod("default", "a"));
    a->refs = b->refs = a2->refs = 1;
    uint32_t n1 = ks_intern("n1"), n2 = ks_intern("n2");

    cr_expect_eq(ks_nominator_count(n), 0);
    cr_assert_eq(ks_nominator_add(n, a, n1), 0);
    cr_assert_eq(ks_nominator_add(n, b, n1), 0);
    cr_expect_eq(ks_nominator_count(n), 2);
    cr_expect_eq(ks_nominator_node(n, a), n1);
    /* a new object of the same pod moves the nomination */
    cr_assert_eq(ks_nominator_add(n, a2, n2), 0);
    cr_expect_eq(ks_nominator_count(n), 2);
    cr_expect_eq(ks_nominator_node(n, a), n2);

    const struct ks_pod *out[4];
    cr_expect_eq(ks_nominator_pods(n, n1, out, 4), 1);
    cr_expect_eq(out[0], b);
    cr_expect_eq(b->refs, 3, "the nominator's and the listing's references");
    ks_pod_put(out[0]);
    cr_expect_eq(ks_nominator_pods(n, n2, out, 0), 1, "the count even with no room");

    ks_nominator_remove(n, b);
    cr_expect_eq(ks_nominator_node(n, b), KS_ID_EMPTY);
    cr_expect_eq(b->refs, 1);
    cr_expect_eq(ks_nominator_count(n), 1);
    ks_nominator_destroy(n);
    cr_expect_eq(a2->refs, 1);
    ks_pod_put(a);
    ks_pod_put(b);
    ks_pod_put(a2);
}

/*
 * A burst: 3,000 pods nominated to 200 nodes, then renominated and removed at random,
 * against a model kept as an array in nomination order: the list, each node's pods (in
 * nomination order), each pod's node, and the node versions (changed by every change to
 * the node, 0 without nominations) after every step.
 */
Test(nominator, a_burst_agrees_with_a_model)
{
    cr_assert_eq(ks_api_init(), 0);
    struct ks_nominator *n;
    cr_assert_eq(ks_nominator_create(&n), 0);
    enum { PODS = 3000, NODES = 200 };
    static struct ks_pod *pods[PODS];
    static uint32_t node_of[NODES], model_pod[PODS], model_node[PODS];
    static uint64_t version[NODES];
    uint32_t nmodel = 0;
    char name[32];
    for (uint32_t i = 0; i < PODS; i++) {
        snprintf(name, sizeof(name), "p%u", i);
        pods[i] = ks_fake_pod_done(ks_fake_pod(i % 2 ? "a" : "b", name));
        pods[i]->refs = 1;
    }
    for (uint32_t k = 0; k < NODES; k++) {
        snprintf(name, sizeof(name), "node-%u", k);
        node_of[k] = ks_intern(name);
    }
    uint64_t rng = 7;
    static const struct ks_pod *got[PODS];
    static uint32_t got_nodes[PODS];
    for (int step = 0; step < 20000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t p = (uint32_t)(rng >> 33) % PODS, k = (uint32_t)(rng >> 20) % NODES;
        uint32_t at = 0;
        while (at < nmodel && model_pod[at] != p)
            at++;
        uint32_t touched[2] = {UINT32_MAX, UINT32_MAX};
        if (at < nmodel) {
            touched[0] = model_node[at];
            memmove(&model_pod[at], &model_pod[at + 1], (nmodel - at - 1) * sizeof(uint32_t));
            memmove(&model_node[at], &model_node[at + 1], (nmodel - at - 1) * sizeof(uint32_t));
            nmodel--;
        }
        if (step < 6000 || (rng >> 60) & 1) {
            cr_assert_eq(ks_nominator_add(n, pods[p], node_of[k]), 0);
            model_pod[nmodel] = p;
            model_node[nmodel++] = k;
            touched[1] = k;
        } else {
            ks_nominator_remove(n, pods[p]);
        }
        cr_assert_eq(ks_nominator_count(n), nmodel);
        cr_assert_eq(ks_nominator_node(n, pods[p]), touched[1] != UINT32_MAX ? node_of[k] : KS_ID_EMPTY);
        for (int t = 0; t < 2; t++) {
            if (touched[t] == UINT32_MAX || (t == 1 && touched[1] == touched[0]))
                continue;
            uint64_t v = ks_nominator_node_version(n, node_of[touched[t]]);
            uint32_t there = 0;
            for (uint32_t i = 0; i < nmodel; i++)
                there += model_node[i] == touched[t];
            cr_assert(there ? v != 0 && v != version[touched[t]] : v == 0, "step %d: node %u version %llu",
                      step, touched[t], (unsigned long long)v);
            version[touched[t]] = v;
        }
        if (step % 1000 != 999)
            continue;
        cr_assert_eq(ks_nominator_list(n, got, got_nodes, PODS), nmodel);
        for (uint32_t i = 0; i < nmodel; i++) {
            cr_assert_eq(got[i], pods[model_pod[i]], "step %d: nomination %u", step, i);
            cr_assert_eq(got_nodes[i], node_of[model_node[i]]);
            ks_pod_put(got[i]);
        }
        for (uint32_t kk = 0; kk < NODES; kk++) {
            uint32_t c = ks_nominator_pods(n, node_of[kk], got, PODS), j = 0;
            for (uint32_t i = 0; i < nmodel; i++) {
                if (model_node[i] != kk)
                    continue;
                cr_assert(j < c && got[j] == pods[model_pod[i]], "step %d: node %u pod %u", step, kk, j);
                j++;
            }
            cr_assert_eq(j, c);
            for (uint32_t i = 0; i < c; i++)
                ks_pod_put(got[i]);
        }
    }
    ks_nominator_destroy(n);
    for (uint32_t i = 0; i < PODS; i++) {
        cr_expect_eq(pods[i]->refs, 1, "pod %u: only the test's reference is left", i);
        ks_pod_put(pods[i]);
    }
}
