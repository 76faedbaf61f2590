/*
 * image_locality.c - the ImageLocality plugin: scores nodes by the size of the pod's container
 * images they already hold, spread-adjusted (Score).
 *
 * Mirrors pkg/scheduler/framework/plugins/imagelocality/image_locality.go (current
 * upstream, init containers included):
 *  - each init container and container image, normalized as normalizedImageName does
 *    (":latest" appended unless the part after the last '/' has a ':' tag or the name a
 *    digest), that the node reports contributes
 *    int64(float64(size) * float64(numNodes) / float64(totalNodes)), numNodes being the
 *    nodes of the cluster reporting that image name and totalNodes the nodes in the
 *    snapshot (not only the feasible ones), in float64 exactly as upstream;
 *  - calculatePriority clamps the sum to [23 MiB, 1000 MiB x containers] and scales it
 *    to [0, 100] with int64 division. There is no NormalizeScore.
 * Node image names are used as the kubelet reported them (the cache does not normalize
 * them, as upstream's addNodeImageStates); only the pod's names are normalized.
 *
 * The plugin implements Score only, as upstream, so the snapshot's node count is read in
 * Score from the framework's cache (ks_framework_deps()->cache): workers score while the
 * scheduling thread holds the RCU read lock on the cycle's snapshot, and only that thread
 * publishes snapshots, so the snapshot seen is the cycle's. It is read only for a node
 * that holds one of the pod's images.
 *
 * Normalized names: the pod's image ids are interned as written, the node's as reported.
 * The id of the normalized name is memoised per instance in a small lock-free table of
 * (raw id, normalized id) words: a tagged name maps to itself, an untagged one to the id
 * of "<name>:latest". Looking that id up (ks_intern_find) takes the intern table's lock,
 * so it happens once per image name; a name that is not interned yet (no node reports it)
 * is remembered with the intern count, and looked up again only after new strings were
 * interned. Untagged names longer than NAME_MAX_LEN (no valid image reference is) are
 * treated as absent rather than allocating. The table assumes ks_intern_reset() is not
 * called while the instance lives.
 * The signature is the pod's images as written, per container list. It takes no args.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/plugin_batch.h"
#include "ksched/registry.h"
#include "ksched/sign.h"

#define MB                      (INT64_C(1024) * 1024)
#define MIN_THRESHOLD           (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)

/* Longest untagged image name normalized (references are at most 255 + 128 + 71 characters). */
#define NAME_MAX_LEN 1024

#define MEMO_SLOTS  256u                 /* power of two */
#define MEMO_EMPTY  UINT64_MAX           /* no entry */
#define MEMO_ABSENT UINT32_C(0x80000000) /* flag: not interned as of the intern count in the low bits */

struct image_locality {
    struct ks_cache *cache; /* the snapshot's node count; NULL when the framework has none */
    uint32_t msg_no_snapshot;
    /* raw id << 32 | normalized id (or MEMO_ABSENT | intern count); relaxed: each word stands alone */
    _Atomic uint64_t memo[MEMO_SLOTS];
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct image_locality *p = malloc(sizeof(*p));
    const struct ks_framework_deps *deps = in->framework ? ks_framework_deps(in->framework) : NULL;

    (void)err;
    if (!p)
        return -ENOMEM;
    p->cache = deps ? deps->cache : NULL;
    p->msg_no_snapshot = ks_intern("ImageLocality: no snapshot to count the nodes of");
    if (p->msg_no_snapshot == KS_ID_NONE) {
        free(p);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < MEMO_SLOTS; i++)
        atomic_init(&p->memo[i], MEMO_EMPTY);
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    free(self);
}

/*
 * normalizedImageName on @raw's string: the id of "<raw>:latest" when the last ':' does not
 * come after the last '/', @raw itself otherwise; KS_ID_NONE when the normalized name was
 * never interned (then no node reports it). Takes the intern table's lock: memo misses only.
 */
static uint32_t normalize_slow(uint32_t raw)
{
    static const char latest[] = ":latest";
    const char *s = ks_intern_str(raw);
    const char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');

    if (colon && (!slash || colon > slash))
        return raw;
    size_t len = strlen(s);
    char buf[NAME_MAX_LEN + sizeof(latest)];
    if (len > NAME_MAX_LEN)
        return KS_ID_NONE;
    memcpy(buf, s, len);
    memcpy(buf + len, latest, sizeof(latest));
    return ks_intern_find(buf, len + sizeof(latest) - 1);
}

/* The normalized id of @raw through the memo (KS_ID_NONE: not interned). Any thread. */
static uint32_t normalized_id(struct image_locality *p, uint32_t raw)
{
    _Atomic uint64_t *slot = &p->memo[(raw * UINT32_C(2654435761)) >> 24 & (MEMO_SLOTS - 1)];
    uint64_t e = atomic_load_explicit(slot, memory_order_relaxed);
    uint32_t count = 0;

    if (e != MEMO_EMPTY && (uint32_t)(e >> 32) == raw) {
        uint32_t v = (uint32_t)e;
        if (!(v & MEMO_ABSENT))
            return v;
        /* absent then; still absent while nothing new was interned */
        count = ks_intern_count();
        if ((v & ~MEMO_ABSENT) == (count & ~MEMO_ABSENT))
            return KS_ID_NONE;
    } else {
        count = ks_intern_count();
    }
    /* the count is read before the lookup: a string interned in between only causes a re-lookup */
    uint32_t id = normalize_slow(raw);
    /* ids stay below 2^28 (intern.c), so the flag bit never collides with one */
    uint32_t v = id == KS_ID_NONE ? MEMO_ABSENT | (count & ~MEMO_ABSENT) : id;
    atomic_store_explicit(slot, (uint64_t)raw << 32 | v, memory_order_relaxed);
    return id;
}

/* The image state of name @id on @node (images are sorted by name id), or NULL. */
static const struct ks_image_state *find_image(const struct ks_node_snap *node, uint32_t id)
{
    uint32_t lo = 0, hi = node->nimages;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (node->images[mid].name < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < node->nimages && node->images[lo].name == id ? &node->images[lo] : NULL;
}

/* scaledImageScore: the size scaled by the share of nodes holding the image, in float64. */
static int64_t scaled_image_score(const struct ks_image_state *st, uint32_t total)
{
    double spread = (double)st->num_nodes / (double)total;
    return (int64_t)((double)st->size_bytes * spread);
}

/* calculatePriority */
static int64_t calculate_priority(int64_t sum, int64_t ncontainers)
{
    int64_t max_threshold = MAX_CONTAINER_THRESHOLD * ncontainers;

    if (sum < MIN_THRESHOLD)
        sum = MIN_THRESHOLD;
    else if (sum > max_threshold)
        sum = max_threshold;
    return KS_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD);
}

/* The sum over @n containers of the scaled scores of their images on @node; *total loaded on first use. */
static int sum_containers(struct image_locality *p, const struct ks_container *cs, uint32_t n,
                          const struct ks_node_snap *node, uint32_t *total, int64_t *sum)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = normalized_id(p, cs[i].image);
        const struct ks_image_state *st = id == KS_ID_NONE ? NULL : find_image(node, id);
        if (!st)
            continue;
        if (*total == 0) {
            if (!p->cache)
                return -1;
            /* the cycle's snapshot: its RCU read section is held by the scheduling thread */
            *total = ks_cache_snapshot(p->cache)->nnodes;
        }
        *sum += scaled_image_score(st, *total);
    }
    return 0;
}

/* score_node - Worker threads; reads the pod, the node record and the snapshot's node count; allocation-free.
 */
static inline KS_ALWAYS_INLINE int score_node(void *self, const struct ks_cycle_state *cs,
                                              const struct ks_pod *pod, const struct ks_node_snap *node,
                                              int64_t *out, struct ks_status *st)
{
    struct image_locality *p = self;
    uint32_t total = 0;
    int64_t sum = 0;

    (void)cs;
    if (node->nimages &&
        (sum_containers(p, pod->init_containers, pod->ninit_containers, node, &total, &sum) ||
         sum_containers(p, pod->containers, pod->ncontainers, node, &total, &sum))) {
        st->code = KS_ERROR;
        st->nreasons = 1;
        st->reasons[0] = p->msg_no_snapshot;
        return KS_ERROR;
    }
    /* a sum at or below the threshold scores 0 whatever the containers: spare the division */
    *out =
        sum > MIN_THRESHOLD ? calculate_priority(sum, (int64_t)pod->ninit_containers + pod->ncontainers) : 0;
    return KS_SUCCESS;
}

KS_SCORE_OPS(score, score_nodes, score_node)

/* Append the images of @n containers as written (their normalized ids follow from them). */
static void sign_images(struct ks_sign *sig, const struct ks_container *cs, uint32_t n)
{
    ks_sign_u32(sig, n);
    for (uint32_t i = 0; i < n; i++)
        ks_sign_u32(sig, cs[i].image);
}

/*
 * sign - Score reads the image of every init container and container and their number.
 * The snapshot's node count it also reads is the index's to watch (plugin_types.h).
 * Scheduling thread; allocation-free.
 */
static int sign(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod, struct ks_sign *sig)
{
    (void)self;
    (void)cs;
    sign_images(sig, pod->init_containers, pod->ninit_containers);
    sign_images(sig, pod->containers, pod->ncontainers);
    return KS_SUCCESS;
}

const struct ks_plugin ks_plugin_image_locality = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "ImageLocality",
    .init = init,
    .destroy = destroy,
    .score = score,
    .score_nodes = score_nodes,
    .sign = sign,
};
