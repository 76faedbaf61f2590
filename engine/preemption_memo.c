/*
 * preemption_memo.c - dry-run verdicts remembered per node (include/ksched/internal/preemption.h,
 * struct ks_preempt_memo).
 *
 * A dry run's verdict on a node (SelectVictimsOnNode: the victims and their PDB
 * violations, or why the node cannot help) is a function of the preemptor's Filter and
 * PreFilter extensions on that node, the node's record, the pods nominated to it, the
 * PodDisruptionBudgets, and, for ordering pods that have no start time, "now". The memo
 * keeps, for preemptors of one key (their signature, skips and priority: pods the plugins
 * cannot tell apart, weighing the same nominated pods), the verdict per node with what it
 * was computed from - the record (pointer and generation: the same generation is the same
 * record, cache_types.h) and the node's nomination version - and gives it back while both
 * are unchanged. It is used only without PDBs, and keeps only verdicts that do not depend
 * on "now" (the node's lower-priority pods either all have a start time or none has), that
 * are not errors, and that name at most KS_PREEMPT_MEMO_VICTIMS victims.
 *
 * The table is open addressing by node name, sized to twice the nodes it has seen; a new
 * key empties it. Victim pointers stay in an entry after its record is gone but are only
 * read when the record (pointer and generation) is found again, which keeps its pods.
 *
 * The index's candidate trees (engine/preemption_indexed.c) answer most dry runs of an
 * indexed class before the memo is asked; it serves the rest (a pod the index does not
 * classify, a window it cannot answer exactly).
 *
 * Context: the scheduling thread (PostFilter), inside the snapshot's RCU read section.
 */
#include "ksched/internal/preemption.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/sign.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KS_PREEMPT_MEMO_VICTIMS 8
#define MEMO_KEY_MAX            4096

struct memo_entry {
    uint32_t name; /* KS_ID_NONE: empty */
    int32_t code;  /* KS_SUCCESS: a candidate; else why not */
    const struct ks_node_snap *rec;
    uint64_t generation;
    uint64_t nominations; /* ks_nominator_node_version when computed */
    int64_t npdb_violations;
    uint32_t nvictims;
    struct ks_status st;
    const struct ks_pod *victims[KS_PREEMPT_MEMO_VICTIMS];
};

struct ks_preempt_memo {
    uint32_t keylen;
    uint8_t key[MEMO_KEY_MAX];
    uint8_t next[MEMO_KEY_MAX]; /* the key being built */
    uint32_t mask;              /* table size - 1 (a power of two), 0 before the first use */
    uint32_t used;
    struct memo_entry *table;
    uint64_t hits, misses;
};

int ks_preempt_memo_create(struct ks_preempt_memo **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

void ks_preempt_memo_destroy(struct ks_preempt_memo *m)
{
    if (!m)
        return;
    free(m->table);
    free(m);
}

static void clear(struct ks_preempt_memo *m)
{
    for (uint32_t i = 0; m->table && i <= m->mask; i++)
        m->table[i].name = KS_ID_NONE;
    m->used = 0;
}

/* Room for @nodes nodes at most half full; false when out of memory. */
static bool reserve(struct ks_preempt_memo *m, uint32_t nodes)
{
    uint64_t want = 16;
    while (want < 2 * (uint64_t)nodes)
        want *= 2;
    if (m->table && want <= (uint64_t)m->mask + 1 && 2 * (uint64_t)m->used < want)
        return true;
    struct memo_entry *t = malloc(want * sizeof(*t));
    if (!t)
        return false;
    free(m->table);
    m->table = t;
    m->mask = (uint32_t)want - 1;
    clear(m);
    return true;
}

bool ks_preempt_memo_begin(struct ks_preempt_memo *m, const struct ks_framework *fw,
                           const struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t nodes)
{
    struct ks_sign sig = {.buf = m->next, .cap = MEMO_KEY_MAX};
    if (ks_fw_sign(fw, cs, pod, &sig) != KS_SUCCESS)
        return false;
    ks_sign_u64(&sig, cs->skip_filter);
    ks_sign_u64(&sig, (uint32_t)pod->priority);
    ks_sign_u64(&sig, (uint64_t)(uintptr_t)fw);
    if (sig.overflow)
        return false;
    if (sig.len != m->keylen || memcmp(m->key, m->next, sig.len) != 0) {
        memcpy(m->key, m->next, sig.len);
        m->keylen = sig.len;
        clear(m);
    }
    return reserve(m, nodes);
}

static struct memo_entry *slot(struct ks_preempt_memo *m, uint32_t name)
{
    uint32_t i = (name * 0x9e3779b1u) & m->mask;
    while (m->table[i].name != KS_ID_NONE && m->table[i].name != name)
        i = (i + 1) & m->mask;
    return &m->table[i];
}

int ks_preempt_memo_get(struct ks_preempt_memo *m, const struct ks_node_snap *node, uint64_t nominations,
                        struct ks_preempt_candidate *c, struct ks_status *st)
{
    struct memo_entry *e = slot(m, node->name);
    if (e->name == KS_ID_NONE || e->rec != node || e->generation != node->generation || !node->generation ||
        e->nominations != nominations) {
        m->misses++;
        return -ENOENT;
    }
    m->hits++;
    if (e->code != KS_SUCCESS) {
        *st = e->st;
        return e->code;
    }
    c->victims = (const struct ks_pod **)e->victims; /* see ks_preempt_memo_get in preemption.h */
    c->nvictims = e->nvictims;
    c->npdb_violations = e->npdb_violations;
    return KS_SUCCESS;
}

void ks_preempt_memo_put(struct ks_preempt_memo *m, const struct ks_preemptor *p,
                         const struct ks_node_snap *node, uint64_t nominations, int code,
                         const struct ks_preempt_candidate *c, const struct ks_status *st)
{
    if (code == KS_ERROR || !node->generation || ks_preempt_now_matters(node, p->pod->priority) ||
        (code == KS_SUCCESS && c->nvictims > KS_PREEMPT_MEMO_VICTIMS) ||
        2 * (uint64_t)(m->used + 1) > m->mask + 1)
        return;
    struct memo_entry *e = slot(m, node->name);
    if (e->name == KS_ID_NONE)
        m->used++;
    *e = (struct memo_entry){.name = node->name,
                             .code = code,
                             .rec = node,
                             .generation = node->generation,
                             .nominations = nominations};
    if (code != KS_SUCCESS) {
        e->st = *st;
        return;
    }
    e->nvictims = c->nvictims;
    e->npdb_violations = c->npdb_violations;
    memcpy(e->victims, c->victims, c->nvictims * sizeof(*c->victims));
}

void ks_preempt_memo_counts(const struct ks_preempt_memo *m, uint64_t *hits, uint64_t *misses)
{
    *hits = m->hits;
    *misses = m->misses;
}
