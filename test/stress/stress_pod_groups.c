/*
 * stress_pod_groups.c - the scheduler's pod groups (workload/pod_groups.c) under concurrent
 * use, run under ThreadSanitizer: writers add, replace and delete pods of a few groups and
 * set and clear their PodGroup objects while readers take states and member lists, as the
 * intake, the queue's PreEnqueue and the scheduling thread do. In the end every group holds
 * exactly the pods last added and not deleted, and no reference is leaked or dropped twice
 * (AddressSanitizer's leak check, ks_pod_put's count).
 */
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/pod_groups.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WRITERS = 3, READERS = 2, GROUPS = 4, PODS = 64, ROUNDS = 400 };

static struct ks_pod_groups *groups;
static uint32_t ns, names[GROUPS];
static char group_names[GROUPS][8];

static struct ks_pod *make_pod(int writer, int k)
{
    struct ks_pod *p = calloc(1, sizeof(*p));
    char name[32];
    snprintf(name, sizeof(name), "w%d-%d", writer, k);
    p->meta.name = ks_arena_strdup(&p->arena, name);
    p->meta.namespace_id = ns;
    p->scheduling_group = group_names[k % GROUPS];
    p->refs = 1;
    return p;
}

static void *writer(void *arg)
{
    int w = (int)(long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < PODS; k++) {
            struct ks_pod *p = make_pod(w, k);
            if (ks_pod_groups_add_pod(groups, p) < 0)
                return (void *)1;
            if ((k + r) % 3 == 0 && r + 1 < ROUNDS)
                ks_pod_groups_delete_pod(groups, p);
            ks_pod_put(p);
        }
        struct ks_pod_group pg = {.spec = {.policy = KS_POD_GROUP_GANG, .min_count = 3}};
        pg.meta.name = group_names[r % GROUPS];
        pg.meta.namespace_id = ns;
        ks_pod_groups_set_object(groups, NULL, r % 2 ? &pg : NULL);
        if (r % 2 == 0)
            ks_pod_groups_set_object(groups, &pg, NULL);
    }
    return NULL;
}

static void *reader(void *arg)
{
    const struct ks_pod *out[PODS * WRITERS];
    (void)arg;
    for (int r = 0; r < ROUNDS * 4; r++) {
        struct ks_pod_group_state st;
        uint32_t g = (uint32_t)r % GROUPS;
        ks_pod_groups_state(groups, ns, names[g], &st);
        uint32_t n = ks_pod_groups_members(groups, ns, names[g], out, PODS * WRITERS);
        for (uint32_t i = 0; i < n && i < PODS * WRITERS; i++) {
            if (strcmp(out[i]->scheduling_group, group_names[g]) != 0)
                return (void *)1;
            ks_pod_put(out[i]);
        }
    }
    return NULL;
}

int main(void)
{
    ns = ks_intern("default");
    for (int g = 0; g < GROUPS; g++) {
        snprintf(group_names[g], sizeof(group_names[g]), "g%d", g);
        names[g] = ks_intern(group_names[g]);
    }
    if (ks_pod_groups_create(&groups) < 0)
        return 1;
    pthread_t th[WRITERS + READERS];
    for (long t = 0; t < WRITERS + READERS; t++)
        pthread_create(&th[t], NULL, t < WRITERS ? writer : reader, (void *)t);
    int bad = 0;
    for (int t = 0; t < WRITERS + READERS; t++) {
        void *rc;
        pthread_join(th[t], &rc);
        bad |= rc != NULL;
    }
    /* the last round deleted nothing: every pod of every writer is listed once */
    uint32_t total = 0;
    for (int g = 0; g < GROUPS; g++) {
        struct ks_pod_group_state st;
        ks_pod_groups_state(groups, ns, names[g], &st);
        total += st.all_pods;
        bad |= st.all_pods != WRITERS * PODS / GROUPS;
    }
    printf("stress_pod_groups: %d writers x %d rounds of %d pods, %d readers: %u pods in %d groups, %s\n",
           WRITERS, ROUNDS, PODS, READERS, total, GROUPS, bad ? "MISMATCH" : "consistent");
    ks_pod_groups_destroy(groups);
    ks_intern_reset();
    return bad;
}
