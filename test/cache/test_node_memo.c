/*
 * test_node_memo.c - chunk generations of the snapshot (cache/snapshot.c) and the node
 * memo that skips unchanged chunks (plugins/helpers/helper_node_memo.c).
 *
 * The memo's update function here keeps a per-position copy of what a count cache would
 * derive from a record (its pod count and requested cpu) and their totals; after every
 * cluster change and refresh the totals must equal a brute-force sum over the current
 * snapshot (never stale), and the sync must have read only the records of the chunks the
 * change replaced.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>

#include "cache/cache_helpers.h"
#include "ksched/plugin_helpers_memo.h"

static void setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
}

static void teardown(void)
{
    ks_rcu_unregister_thread();
}

TestSuite(nodememo, .init = setup, .fini = teardown);

enum { MAXPOS = 4096 };

/* A count cache: per position the pods and cpu counted, and their sums. */
struct counts {
    uint32_t pods[MAXPOS];
    int64_t cpu[MAXPOS];
    int64_t total_pods, total_cpu;
    int fail_at; /* the update of this position fails once (-1: never) */
};

static int update(void *ctx, uint32_t pos, const struct ks_node_snap *rec)
{
    struct counts *k = ctx;
    cr_assert(lt(u32, pos, MAXPOS));
    k->total_pods -= k->pods[pos];
    k->total_cpu -= k->cpu[pos];
    k->pods[pos] = 0;
    k->cpu[pos] = 0;
    if (rec && (int)pos == k->fail_at) {
        k->fail_at = -1;
        return -ENOMEM;
    }
    if (rec) {
        k->pods[pos] = rec->npods;
        k->cpu[pos] = rec->req_milli_cpu;
    }
    k->total_pods += k->pods[pos];
    k->total_cpu += k->cpu[pos];
    return 0;
}

static struct ks_cache *mk_cluster(uint32_t n)
{
    struct ks_cache *c = NULL;
    char name[32];
    cr_assert(eq(int, ks_cache_create(&c), 0));
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "n-%u", i);
        cr_assert(eq(int, ks_cache_add_node(c, mk_node(name, "topology.kubernetes.io/zone=z", NULL)), 0));
    }
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    return c;
}

/* The position of node @name in @s. */
static uint32_t pos_of(const struct ks_snapshot *s, const char *name)
{
    const struct ks_node_snap *r = ks_snapshot_find(s, id(name));
    cr_assert(r != NULL, "%s", name);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (ks_snapshot_node(s, i) == r)
            return i;
    }
    cr_assert(false, "%s not listed", name);
    return 0;
}

/*
 * Refresh, sync the memo, and check the counts against the snapshot; returns how many
 * records the sync read. Every position's copy must match its record (nothing stale).
 */
static uint64_t sync_and_check(struct ks_cache *c, struct ks_node_memo *m, struct counts *k, const char *what)
{
    cr_assert(ge(int, ks_cache_refresh(c), 0));
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    uint64_t before = m->rec_reads;
    cr_assert(eq(int, ks_node_memo_sync(m, s, update, k), 0), "%s", what);
    cr_expect(ks_node_memo_synced(m, s), "%s", what);
    int64_t pods = 0, cpu = 0;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct ks_node_snap *r = ks_snapshot_node(s, i);
        pods += r->npods;
        cpu += r->req_milli_cpu;
        cr_assert(eq(u32, k->pods[i], r->npods), "%s: position %u", what, i);
        cr_assert(eq(i64, k->cpu[i], r->req_milli_cpu), "%s: position %u", what, i);
    }
    cr_expect(eq(i64, k->total_pods, pods), "%s: pods", what);
    cr_expect(eq(i64, k->total_cpu, cpu), "%s: cpu", what);
    ks_rcu_read_unlock();
    return m->rec_reads - before;
}

Test(nodememo, chunk_generation_changes_only_with_the_chunk)
{
    struct ks_cache *c = mk_cluster(1000);
    ks_rcu_read_lock(); /* keeps every version alive */
    const struct ks_snapshot *s1 = ks_cache_snapshot(c);
    cr_assert(eq(u32, s1->nchunks, 4));
    for (uint32_t ci = 0; ci < 4; ci++) {
        cr_expect(not(eq(u64, s1->chunks[ci]->generation, 0)), "chunk %u", ci);
        cr_expect(le(u64, s1->chunks[ci]->generation, s1->generation), "chunk %u", ci);
    }
    uint32_t ti = pos_of(s1, "n-600"), tc = ti >> KS_SNAP_CHUNK_SHIFT;

    struct ks_pod *p = mk_pod("d", "p", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n-600")), 0));
    cr_assert(eq(int, ks_cache_refresh(c), 1));
    const struct ks_snapshot *s2 = ks_cache_snapshot(c);
    cr_expect(gt(u64, s2->generation, s1->generation));
    for (uint32_t ci = 0; ci < 4; ci++) {
        if (ci == tc) {
            cr_expect(eq(u64, s2->chunks[ci]->generation, s2->generation), "the new chunk has the version's");
            cr_expect(gt(u64, s2->chunks[ci]->generation, s1->chunks[ci]->generation));
        } else {
            cr_expect(eq(u64, s2->chunks[ci]->generation, s1->chunks[ci]->generation), "chunk %u kept", ci);
        }
    }
    /* the record generation (read only for the changed chunks' records) sits in the record's first two lines
     */
    cr_expect(lt(sz, offsetof(struct ks_node_snap, generation) + sizeof(uint64_t), 129));

    /* forget: the chunk changes again, with yet another generation */
    cr_assert(eq(int, ks_cache_forget_pod(c, p), 0));
    cr_assert(eq(int, ks_cache_refresh(c), 1));
    const struct ks_snapshot *s3 = ks_cache_snapshot(c);
    cr_expect(gt(u64, s3->chunks[tc]->generation, s2->chunks[tc]->generation));
    cr_expect(gt(u64, s3->generation, s2->generation));
    ks_rcu_read_unlock();
    ks_cache_destroy(c);
    ks_pod_put(p);
}

Test(nodememo, counts_follow_assume_forget_and_node_updates_one_chunk_at_a_time)
{
    struct ks_cache *c = mk_cluster(1000);
    struct ks_node_memo m = {0};
    struct counts *k = calloc(1, sizeof(*k));
    k->fail_at = -1;

    cr_expect(eq(u64, sync_and_check(c, &m, k, "first sync"), 1000), "every record read once");
    cr_expect(eq(u64, sync_and_check(c, &m, k, "no change"), 0), "same version: nothing read");

    /* assume one pod: one chunk walked, one position recounted, the count moves */
    struct ks_pod *p = mk_pod("d", "p", "cpu=2");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n-600")), 0));
    uint64_t recounts = m.recounts;
    cr_expect(eq(u64, sync_and_check(c, &m, k, "assume"), KS_SNAP_CHUNK));
    cr_expect(eq(u64, m.recounts - recounts, 1));
    cr_expect(eq(i64, k->total_pods, 1));
    cr_expect(eq(i64, k->total_cpu, 2000));

    /* forget it: the count must drop back, not stay at the assumed value */
    cr_assert(eq(int, ks_cache_forget_pod(c, p), 0));
    cr_expect(eq(u64, sync_and_check(c, &m, k, "forget"), KS_SNAP_CHUNK));
    cr_expect(eq(i64, k->total_pods, 0));

    /* two pods in two chunks: two chunks walked */
    struct ks_pod *q = mk_pod("d", "q", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n-10")), 0));
    cr_assert(eq(int, ks_cache_assume_pod(c, q, id("n-700")), 0));
    cr_expect(eq(u64, sync_and_check(c, &m, k, "two assumes"), 2 * KS_SNAP_CHUNK));
    cr_expect(eq(i64, k->total_cpu, 3000));

    /* a node update (new allocatable object, same pods) in one chunk */
    struct ks_node *n = mk_node("n-700", "topology.kubernetes.io/zone=z", "cpu=8,memory=8Gi,pods=110");
    cr_assert(eq(int, ks_cache_update_node(c, n), 0));
    recounts = m.recounts;
    cr_expect(eq(u64, sync_and_check(c, &m, k, "node update"), KS_SNAP_CHUNK));
    cr_expect(eq(u64, m.recounts - recounts, 1));
    cr_expect(eq(i64, k->total_cpu, 3000), "the pods stay counted");

    /* bound pod added, and the assumed one confirmed elsewhere */
    cr_assert(eq(int, ks_cache_add_pod(c, mk_pod("d", "r", "cpu=4"), id("n-300")), 0));
    sync_and_check(c, &m, k, "add pod");
    cr_expect(eq(i64, k->total_cpu, 7000));

    /* the node set changes: nodes leave and join (order relisted), counts stay exact */
    cr_assert(eq(int, ks_cache_remove_node(c, id("n-5")), 0));
    cr_assert(eq(int, ks_cache_add_node(c, mk_node("late", "topology.kubernetes.io/zone=y", NULL)), 0));
    sync_and_check(c, &m, k, "node set");
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n-%d", 400 + i);
        cr_assert(eq(int, ks_cache_remove_node(c, id(name)), 0));
    }
    sync_and_check(c, &m, k, "shrink by a chunk");

    /* a reset (the query changed) recounts everything */
    memset(k, 0, sizeof(*k));
    k->fail_at = -1;
    ks_node_memo_reset(&m);
    ks_rcu_read_lock();
    uint32_t nn = ks_cache_snapshot(c)->nnodes;
    ks_rcu_read_unlock();
    cr_expect(eq(u64, sync_and_check(c, &m, k, "after reset"), nn));

    ks_node_memo_destroy(&m);
    free(k);
    ks_cache_destroy(c);
    ks_pod_put(p);
    ks_pod_put(q);
}

Test(nodememo, failed_update_is_redone_by_the_next_sync)
{
    struct ks_cache *c = mk_cluster(700);
    struct ks_node_memo m = {0};
    struct counts *k = calloc(1, sizeof(*k));
    k->fail_at = -1;
    sync_and_check(c, &m, k, "first sync");

    struct ks_pod *p = mk_pod("d", "p", "cpu=1"), *q = mk_pod("d", "q", "cpu=1");
    cr_assert(eq(int, ks_cache_assume_pod(c, p, id("n-100")), 0));
    cr_assert(eq(int, ks_cache_assume_pod(c, q, id("n-650")), 0));
    cr_assert(eq(int, ks_cache_refresh(c), 2));
    ks_rcu_read_lock();
    const struct ks_snapshot *s = ks_cache_snapshot(c);
    k->fail_at = (int)pos_of(s, "n-650");
    cr_expect(eq(int, ks_node_memo_sync(&m, s, update, k), -ENOMEM));
    cr_expect(not(ks_node_memo_synced(&m, s)));
    ks_rcu_read_unlock();
    /* same version again: the failed chunk is walked again and its position recounted */
    sync_and_check(c, &m, k, "retry");
    cr_expect(eq(i64, k->total_pods, 2));

    ks_node_memo_destroy(&m);
    free(k);
    ks_cache_destroy(c);
    ks_pod_put(p);
    ks_pod_put(q);
}

/* A record or chunk not built by the cache (generation 0) is never trusted. */
Test(nodememo, generation_zero_is_always_recounted)
{
    struct ks_node_snap recs[3] = {{.npods = 1}, {.npods = 2}, {.npods = 3}};
    struct ks_snap_chunk *chunk = calloc(1, sizeof(*chunk));
    for (int i = 0; i < 3; i++)
        chunk->nodes[i] = &recs[i];
    struct ks_snap_chunk *const chunks[1] = {chunk};
    struct ks_snapshot s = {.generation = 0, .nnodes = 3, .nchunks = 1, .chunks = chunks};
    struct ks_node_memo m = {0};
    struct counts *k = calloc(1, sizeof(*k));
    k->fail_at = -1;
    cr_assert(eq(int, ks_node_memo_sync(&m, &s, update, k), 0));
    cr_expect(eq(i64, k->total_pods, 6));
    recs[1].npods = 5; /* changed in place: only a generation-0 record may be */
    cr_assert(eq(int, ks_node_memo_sync(&m, &s, update, k), 0));
    cr_expect(eq(i64, k->total_pods, 9));
    cr_expect(eq(u64, m.recounts, 6));
    ks_node_memo_destroy(&m);
    free(k);
    free(chunk);
}
