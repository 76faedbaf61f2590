/*
 * claim_controller.c - ResourceClaims from templates, as the resourceclaim controller of
 * kube-controller-manager creates them (see ksched/internal/dra_controller.h).
 *
 * Mirrors pkg/controller/resourceclaim/controller.go (handleClaim: the generated name's base
 * and its truncation, the owner reference, the pod-claim-name annotation, the pod status
 * update) and the API server's names.SimpleNameGenerator (a base of at most 58 characters
 * and five characters of utilrand's alphabet). The random characters and the claims' uids
 * come from a splitmix64 stream seeded with the caller's seed, so the same input and seed
 * name the same claims.
 *
 * ks_dra_make_pod_claims does the same for one pod at a time (a benchmark's pods, created as
 * it runs), with the stream and the set of names kept in a struct ks_dra_claim_maker instead
 * of rebuilt from the whole set per call: a pod's claims cost what its claims cost.
 */
#include "ksched/internal/dra_controller.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/dra_types.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POD_CLAIM_ANNOTATION "resource.kubernetes.io/pod-claim-name"
#define MAX_BASE_LEN         57 /* handleClaim: room for the generator's hyphen-free suffix in 63 */
#define NAME_MAX_LEN         63
#define RANDOM_LEN           5

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* handleClaim's generateName: pod and claim names shortened in proportion past MAX_BASE_LEN. */
static void base_name(const char *pod, const char *claim, char *out, size_t len)
{
    size_t lp = strlen(pod), lc = strlen(claim), total = lp + 1 + lc + 1;

    if (total <= MAX_BASE_LEN) {
        snprintf(out, len, "%s-%s-", pod, claim);
        return;
    }
    snprintf(out, len, "%.*s-%.*s", (int)(lp * MAX_BASE_LEN / total), pod, (int)(lc * MAX_BASE_LEN / total),
             claim);
}

/* SimpleNameGenerator.GenerateName: the base cut to 58 characters, then five of utilrand's. */
static void generate(const char *base, uint64_t *rng, char *out, size_t len)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    size_t n = strlen(base);

    if (n > NAME_MAX_LEN - RANDOM_LEN)
        n = NAME_MAX_LEN - RANDOM_LEN;
    snprintf(out, len, "%.*s", (int)n, base);
    for (int i = 0; i < RANDOM_LEN && n + (size_t)i + 1 < len; i++)
        out[n + (size_t)i] = alphabet[next(rng) % (sizeof(alphabet) - 1)];
    out[n + RANDOM_LEN < len ? n + RANDOM_LEN : len - 1] = '\0';
}

static const struct ks_resource_claim_template *find_template(const struct ks_objects *objs, uint32_t ns,
                                                              const char *name)
{
    const struct ks_objvec *v = &objs->of[KS_KIND_RESOURCE_CLAIM_TEMPLATE];
    for (uint32_t i = 0; i < v->n; i++) {
        const struct ks_resource_claim_template *t = v->items[i];
        if (t->meta.namespace_id == ns && strcmp(t->meta.name, name) == 0)
            return t;
    }
    return NULL;
}

/* The claims' "namespace/name" ids: open addressing, 0 empty (id 0 is "", never a key). */
struct name_set {
    uint32_t *slot;
    uint32_t mask, n;
};

static bool set_has(const struct name_set *s, uint32_t id)
{
    for (uint32_t h = ks_id_hash(id) & s->mask; s->slot[h]; h = (h + 1) & s->mask) {
        if (s->slot[h] == id)
            return true;
    }
    return false;
}

static int set_add(struct name_set *s, uint32_t id)
{
    if (id == KS_ID_NONE)
        return -ENOMEM;
    if ((s->n + 1) * 2 > s->mask + 1) {
        struct name_set g = {calloc((s->mask + 1) * 2, sizeof(uint32_t)), s->mask * 2 + 1, 0};
        if (!g.slot)
            return -ENOMEM;
        for (uint32_t i = 0; i <= s->mask; i++) {
            if (s->slot[i])
                set_add(&g, s->slot[i]);
        }
        free(s->slot);
        *s = g;
    }
    uint32_t h = ks_id_hash(id) & s->mask;
    while (s->slot[h] && s->slot[h] != id)
        h = (h + 1) & s->mask;
    s->n += !s->slot[h];
    s->slot[h] = id;
    return 0;
}

/* The claim for pod claim @pc of @pod from template @t, named @name. NULL when out of memory. */
static struct ks_resource_claim *make_claim(const struct ks_pod *pod, const struct ks_pod_claim *pc,
                                            const struct ks_resource_claim_template *t, const char *name,
                                            uint64_t *rng)
{
    struct ks_resource_claim *c = calloc(1, sizeof(*c));
    char uid[40], pod_uid[320];

    if (!c)
        return NULL;
    uint64_t a = next(rng), b = next(rng);
    snprintf(uid, sizeof(uid), "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff, (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
             (unsigned long long)(b & 0xffffffffffffull));
    ks_pod_identity(pod, pod_uid, sizeof(pod_uid));
    c->meta.name = ks_arena_strdup(&c->arena, name);
    c->meta.namespace_id = pod->meta.namespace_id;
    c->meta.uid = ks_arena_strdup(&c->arena, uid);
    c->meta.creation_time = KS_TIME_NONE;
    c->meta.deletion_time = KS_TIME_NONE;
    c->meta.line = pod->meta.line;
    c->meta.labels = t->claim_labels;
    c->meta.annotations.items = ks_arena_calloc(&c->arena, t->claim_annotations.n + 1, sizeof(struct ks_kv));
    c->meta.owners = ks_arena_alloc(&c->arena, sizeof(*c->meta.owners));
    if (!c->meta.name || !c->meta.uid || !c->meta.annotations.items || !c->meta.owners)
        goto fail;
    for (uint32_t i = 0; i < t->claim_annotations.n; i++)
        c->meta.annotations.items[c->meta.annotations.n++] = t->claim_annotations.items[i];
    c->meta.annotations.items[c->meta.annotations.n++] = (struct ks_kv){POD_CLAIM_ANNOTATION, pc->name};
    c->meta.nowners = 1;
    c->meta.owners[0] = (struct ks_owner_ref){.api_version = "v1",
                                              .kind = "Pod",
                                              .name = pod->meta.name,
                                              .uid = ks_arena_strdup(&c->arena, pod_uid),
                                              .controller = true};
    if (!c->meta.owners[0].uid)
        goto fail;
    c->spec = t->spec;
    return c;
fail:
    ks_resource_claim_destroy(c);
    return NULL;
}

/* Record claim @name for pod claim @pc in @pod's status (the pod's arena holds the new list). */
static int record_status(struct ks_pod *pod, const struct ks_pod_claim *pc, const char *name)
{
    struct ks_pod_claim_status *s = ks_arena_calloc(&pod->arena, pod->nclaim_statuses + 1, sizeof(*s));
    const char *copy = ks_arena_strdup(&pod->arena, name);

    if (!s || !copy)
        return -ENOMEM;
    if (pod->nclaim_statuses)
        memcpy(s, pod->claim_statuses, pod->nclaim_statuses * sizeof(*s));
    s[pod->nclaim_statuses++] = (struct ks_pod_claim_status){pc->name, copy};
    pod->claim_statuses = s;
    return 0;
}

/* ---- one pod at a time ---------------------------------------------------------------------------- */

struct ks_dra_claim_maker {
    uint64_t rng;
    struct name_set names;
};

int ks_dra_claim_maker_create(const struct ks_objects *objs, uint64_t seed, struct ks_dra_claim_maker **out)
{
    struct ks_dra_claim_maker *m = calloc(1, sizeof(*m));

    *out = NULL;
    if (!m || !(m->names.slot = calloc(64, sizeof(uint32_t)))) {
        free(m);
        return -ENOMEM;
    }
    m->names.mask = 63;
    m->rng = seed ^ 0x5245534f55524345ull; /* "RESOURCE" */
    for (uint32_t i = 0; objs && i < objs->of[KS_KIND_RESOURCE_CLAIM].n; i++) {
        const struct ks_resource_claim *c = objs->of[KS_KIND_RESOURCE_CLAIM].items[i];
        if (set_add(&m->names, ks_intern_ns_name(c->meta.namespace_id, c->meta.name)) < 0) {
            ks_dra_claim_maker_destroy(m);
            return -ENOMEM;
        }
    }
    *out = m;
    return 0;
}

void ks_dra_claim_maker_destroy(struct ks_dra_claim_maker *m)
{
    if (!m)
        return;
    free(m->names.slot);
    free(m);
}

int ks_dra_make_pod_claims(struct ks_dra_claim_maker *m, const struct ks_objects *objs, struct ks_pod *pod,
                           struct ks_resource_claim **out)
{
    int made = 0;

    if (pod->nclaims == 0 || pod->node_name != KS_ID_EMPTY || pod->phase == KS_PHASE_SUCCEEDED ||
        pod->phase == KS_PHASE_FAILED)
        return 0;
    for (uint32_t k = 0; k < pod->nclaims; k++) {
        const struct ks_pod_claim *pc = &pod->claims[k];
        bool recorded = false;
        for (uint32_t s = 0; s < pod->nclaim_statuses; s++)
            recorded = recorded || strcmp(pod->claim_statuses[s].name, pc->name) == 0;
        const struct ks_resource_claim_template *t =
            pc->template_name && !recorded ? find_template(objs, pod->meta.namespace_id, pc->template_name)
                                           : NULL;
        if (!t)
            continue;
        char base[NAME_MAX_LEN * 2], name[NAME_MAX_LEN + 1];
        uint32_t id;
        base_name(pod->meta.name, pc->name, base, sizeof(base));
        do {
            generate(base, &m->rng, name, sizeof(name));
            id = ks_intern_ns_name(pod->meta.namespace_id, name);
        } while (id != KS_ID_NONE && set_has(&m->names, id));
        struct ks_resource_claim *c = make_claim(pod, pc, t, name, &m->rng);
        if (!c || set_add(&m->names, id) < 0 || record_status(pod, pc, name) < 0) {
            ks_resource_claim_destroy(c);
            goto fail;
        }
        out[made++] = c;
    }
    return made;
fail:
    while (made > 0)
        ks_resource_claim_destroy(out[--made]);
    return -ENOMEM;
}

/* ---- a whole set ------------------------------------------------------------------------------------ */

int ks_dra_make_template_claims(struct ks_objects *objs, uint64_t seed)
{
    struct ks_dra_claim_maker *m;
    int made = 0, rc = ks_dra_claim_maker_create(objs, seed, &m);

    for (uint32_t i = 0; rc == 0 && i < objs->of[KS_KIND_POD].n; i++) {
        struct ks_pod *pod = objs->of[KS_KIND_POD].items[i];
        struct ks_resource_claim **out = pod->nclaims ? malloc(pod->nclaims * sizeof(*out)) : NULL;
        int n = !pod->nclaims ? 0 : out ? ks_dra_make_pod_claims(m, objs, pod, out) : -ENOMEM;
        for (int j = 0; j < n; j++) {
            if (rc == 0 && ks_objects_push(objs, KS_KIND_RESOURCE_CLAIM, out[j]) < 0)
                rc = -ENOMEM;
            if (rc < 0)
                ks_resource_claim_destroy(out[j]); /* not taken by the set */
        }
        free(out);
        rc = n < 0 ? n : rc;
        made += n > 0 ? n : 0;
    }
    ks_dra_claim_maker_destroy(m);
    return rc < 0 ? rc : made;
}
