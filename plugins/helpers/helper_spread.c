/*
 * helper_spread.c - selectors, pod counting and per-domain counts for the spreading
 * plugins (PodTopologySpread, SelectorSpread); see ksched/plugin_helpers_spread.h.
 *
 * Mirrors helper/spread.go (DefaultSelector, GetPodServices), podtopologyspread/common.go
 * (countPodsMatchSelector, matchNodeInclusionPolicies, mergeLabelSetWithSelector),
 * podtopologyspread/filtering.go (criticalPaths) and pkg/util/node (GetZoneKey).
 *
 * The counter. Upstream's PreFilter and PreScore walk every node and every pod on it for
 * each pod they schedule. Here a counted query is remembered: per node position of the
 * snapshot, the domain and count it contributed to each term; per term, a table value ->
 * {eligible nodes, pods}. Which record each position was counted from is kept by the
 * shared node memo (plugin_helpers_memo.h, also behind InterPodAffinity's counts): a sync
 * skips every snapshot chunk whose generation did not move and recounts, within the
 * others, only the positions whose record generation moved (a changed node, or another
 * node after the node set changed). A query is answered by that sync, then copying the
 * live domains into the cycle's arena. A record with generation 0 (not built by the
 * cache) is always recounted.
 *
 * Invariants: an entry's tables equal the sums of its per-position contributions; a
 * domain is live while it has at least one eligible node; an entry holds one reference to
 * the pod whose affinity and tolerations it was counted with.
 */
#include "helper_spread_owners.h"

#include "ksched/plugin_helpers_memo.h"
#include "ksched/plugin_helpers_spread.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/cache.h"
#include "ksched/loader.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- selectors ------------------------------------------------------------------------------ */

/* One entry of a labels.Set being merged: keys unique, later merges overwrite. */
static void set_put(struct ks_label *set, uint32_t *n, uint32_t key, uint32_t value)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (set[i].key == key) {
            set[i].value = value;
            return;
        }
    }
    set[(*n)++] = (struct ks_label){key, value};
}

/* labels.Set(@sel).AsSelectorPreValidated().Matches(@labels): every pair present with its value. */
static bool set_matches(const struct ks_labels *sel, const struct ks_labels *labels)
{
    for (uint32_t i = 0; i < sel->n; i++) {
        uint32_t v;
        if (!ks_labels_get(labels, sel->items[i].key, &v) || v != sel->items[i].value)
            return false;
    }
    return true;
}

/* metav1.GetControllerOfNoCopy: the first owner reference with controller: true. */
static const struct ks_owner_ref *controller_of(const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < pod->meta.nowners; i++) {
        if (pod->meta.owners[i].controller)
            return &pod->meta.owners[i];
    }
    return NULL;
}

/* schema.ParseGroupVersion(@api_version) == @group/@version (a second '/' is a parse error). */
static bool group_version_is(const char *api_version, const char *group, const char *version)
{
    const char *s = api_version ? api_version : "";
    const char *slash = strchr(s, '/');
    if (!*s)
        return !*group && !*version;
    if (!slash)
        return !*group && strcmp(s, version) == 0;
    if (strchr(slash + 1, '/'))
        return false;
    size_t glen = (size_t)(slash - s);
    return strlen(group) == glen && memcmp(s, group, glen) == 0 && strcmp(slash + 1, version) == 0;
}

/* The object of @kind named @name in namespace @ns, NULL when not loaded. */
static const void *find_object(const struct ks_objects *objs, enum ks_kind kind, uint32_t ns,
                               const char *name)
{
    const struct ks_objvec *v = &objs->of[kind];
    for (uint32_t i = 0; i < v->n; i++) {
        /* every workload kind starts with its metadata */
        const struct ks_object_meta *m = v->items[i];
        if (m->namespace_id == ns && strcmp(m->name, name) == 0)
            return v->items[i];
    }
    return NULL;
}

/* The object of @kind named @name in namespace @ns, through @ix when given, NULL when not loaded. */
static const void *owner_object(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                                enum ks_kind kind, uint32_t ns, const char *name)
{
    return ix ? ks__spread_owners_find(ix, kind, ns, name) : find_object(objs, kind, ns, name);
}

/*
 * The pod's controlling workload that DefaultSelector reads: its ReplicationController
 * into *rc, or the selector of its ReplicaSet or StatefulSet into *extra (NULL when none).
 */
static void controller_workload(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                                const struct ks_pod *pod, const struct ks_replication_controller **rc,
                                const struct ks_label_selector **extra)
{
    const struct ks_owner_ref *owner = controller_of(pod);
    uint32_t ns = pod->meta.namespace_id;

    *rc = NULL;
    *extra = NULL;
    if (!owner || !owner->kind || !owner->name)
        return;
    if (group_version_is(owner->api_version, "", "v1") && strcmp(owner->kind, "ReplicationController") == 0) {
        *rc = owner_object(objs, ix, KS_KIND_REPLICATION_CONTROLLER, ns, owner->name);
    } else if (group_version_is(owner->api_version, "apps", "v1") && strcmp(owner->kind, "ReplicaSet") == 0) {
        const struct ks_replica_set *rs = owner_object(objs, ix, KS_KIND_REPLICA_SET, ns, owner->name);
        *extra = rs ? rs->selector : NULL;
    } else if (group_version_is(owner->api_version, "apps", "v1") &&
               strcmp(owner->kind, "StatefulSet") == 0) {
        const struct ks_stateful_set *ss = owner_object(objs, ix, KS_KIND_STATEFUL_SET, ns, owner->name);
        *extra = ss ? ss->selector : NULL;
    }
}

/* Whether Service @svc selects @pod (GetPodServices: same namespace, a non-nil selector that matches). */
static bool service_selects(const struct ks_service *svc, const struct ks_pod *pod)
{
    return svc->meta.namespace_id == pod->meta.namespace_id && svc->has_selector &&
           set_matches(&svc->selector, &pod->meta.labels);
}

/*
 * Call @fn for each Service that selects @pod with a pair in its selector, until @fn
 * returns false (then false).
 */
static bool services_selecting(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                               const struct ks_pod *pod, bool (*fn)(void *ctx, const struct ks_service *svc),
                               void *ctx)
{
    if (ix)
        return ks__spread_owners_services(ix, pod, fn, ctx);
    const struct ks_objvec *svcs = &objs->of[KS_KIND_SERVICE];
    for (uint32_t i = 0; i < svcs->n; i++) {
        const struct ks_service *svc = svcs->items[i];
        if (svc->selector.n && !fn(ctx, svc))
            return false;
    }
    return true;
}

/* services_selecting's callback of ks_spread_default_selects: stops at the first that selects. */
static bool stop_at_selecting(void *ctx, const struct ks_service *svc)
{
    return !service_selects(svc, ctx);
}

bool ks_spread_default_selects(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                               const struct ks_pod *pod)
{
    const struct ks_replication_controller *rc;
    const struct ks_label_selector *extra;

    if (!objs)
        return false;
    controller_workload(objs, ix, pod, &rc, &extra);
    if ((rc && rc->selector.n) || (extra && extra->nreqs))
        return true;
    return !services_selecting(objs, ix, pod, stop_at_selecting, (void *)pod);
}

/* The pairs DefaultSelector merges (a labels.Set), in a table sized for them. */
struct merged {
    const struct ks_pod *pod;
    struct ks_label *set;
    uint32_t n;
};

static bool merge_service(void *ctx, const struct ks_service *svc)
{
    struct merged *m = ctx;
    if (service_selects(svc, m->pod)) {
        for (uint32_t k = 0; k < svc->selector.n; k++)
            set_put(m->set, &m->n, svc->selector.items[k].key, svc->selector.items[k].value);
    }
    return true;
}

int ks_spread_default_selector(const struct ks_objects *objs, const struct ks_spread_owners *ix,
                               const struct ks_pod *pod, struct ks_arena *arena,
                               const struct ks_label_selector **out)
{
    static const struct ks_label_selector empty = {0, NULL};

    *out = &empty;
    if (!objs)
        return 0;
    const struct ks_replication_controller *rc;
    const struct ks_label_selector *extra;
    controller_workload(objs, ix, pod, &rc, &extra);

    /* GetPodServices: a Service that selects the pod has only keys the pod carries */
    uint32_t cap = pod->meta.labels.n + (rc ? rc->selector.n : 0);
    struct merged m = {.pod = pod, .set = ks_arena_calloc(arena, cap ? cap : 1, sizeof(*m.set))};
    if (!m.set)
        return -ENOMEM;
    services_selecting(objs, ix, pod, merge_service, &m);
    for (uint32_t k = 0; rc && k < rc->selector.n; k++)
        set_put(m.set, &m.n, rc->selector.items[k].key, rc->selector.items[k].value);
    /* AsSelector: the pairs' requirements sorted by key */
    for (uint32_t i = 1; i < m.n; i++) {
        struct ks_label x = m.set[i];
        uint32_t j = i;
        for (; j > 0 && m.set[j - 1].key > x.key; j--)
            m.set[j] = m.set[j - 1];
        m.set[j] = x;
    }
    uint32_t nset = m.n;
    struct ks_label *set = m.set;

    uint32_t nreqs = nset + (extra ? extra->nreqs : 0);
    if (nreqs == 0)
        return 0;
    struct ks_label_selector *sel = ks_arena_alloc(arena, sizeof(*sel));
    struct ks_requirement *reqs = ks_arena_calloc(arena, nreqs, sizeof(*reqs));
    if (!sel || !reqs)
        return -ENOMEM;
    for (uint32_t i = 0; i < nset; i++)
        reqs[i] =
            (struct ks_requirement){.key = set[i].key, .op = KS_OP_IN, .nvalues = 1, .values = &set[i].value};
    for (uint32_t i = 0; extra && i < extra->nreqs; i++)
        reqs[nset + i] = extra->reqs[i];
    sel->nreqs = nreqs;
    sel->reqs = reqs;
    *out = sel;
    return 0;
}

int ks_spread_match_label_keys(const struct ks_spread_constraint *c, const struct ks_labels *labels,
                               struct ks_arena *arena, const struct ks_label_selector **out)
{
    *out = c->selector;
    if (!c->selector || c->nmatch_label_keys == 0)
        return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->nmatch_label_keys; i++)
        n += ks_labels_get(labels, c->match_label_keys[i], NULL);
    if (n == 0)
        return 0;
    struct ks_label_selector *sel = ks_arena_alloc(arena, sizeof(*sel));
    struct ks_requirement *reqs = ks_arena_calloc(arena, n + c->selector->nreqs, sizeof(*reqs));
    uint32_t *values = ks_arena_calloc(arena, n, sizeof(*values));
    if (!sel || !reqs || !values)
        return -ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->nmatch_label_keys; i++) {
        uint32_t key = c->match_label_keys[i], v;
        if (!ks_labels_get(labels, key, &v))
            continue;
        /* a repeated key is one entry of the labels.Set */
        uint32_t j = 0;
        while (j < k && reqs[j].key != key)
            j++;
        if (j < k)
            continue;
        values[k] = v;
        reqs[k] = (struct ks_requirement){.key = key, .op = KS_OP_IN, .nvalues = 1, .values = &values[k]};
        k++;
    }
    if (c->selector->nreqs)
        memcpy(&reqs[k], c->selector->reqs, c->selector->nreqs * sizeof(*reqs));
    sel->nreqs = k + c->selector->nreqs;
    sel->reqs = reqs;
    *out = sel;
    return 0;
}

static bool requirement_equal(const struct ks_requirement *a, const struct ks_requirement *b)
{
    return a->key == b->key && a->op == b->op && a->number == b->number && a->nvalues == b->nvalues &&
           (a->nvalues == 0 || memcmp(a->values, b->values, a->nvalues * sizeof(*a->values)) == 0);
}

static bool requirements_equal(const struct ks_requirement *a, uint32_t na, const struct ks_requirement *b,
                               uint32_t nb)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++) {
        if (!requirement_equal(&a[i], &b[i]))
            return false;
    }
    return true;
}

bool ks_spread_selector_equal(const struct ks_label_selector *a, const struct ks_label_selector *b)
{
    if (!a || !b)
        return a == b;
    return requirements_equal(a->reqs, a->nreqs, b->reqs, b->nreqs);
}

uint32_t ks_spread_count_pods(const struct ks_node_snap *node, const struct ks_label_selector *sel,
                              uint32_t ns)
{
    uint32_t count = 0;
    if (!sel || sel->nreqs == 0)
        return 0;
    for (uint32_t i = 0; i < node->npods; i++) {
        const struct ks_pod *p = node->pods[i];
        /* terminating pods do not count (#87621) */
        if (p->meta.deletion_time != KS_TIME_NONE || p->meta.namespace_id != ns)
            continue;
        count += ks_label_selector_matches(sel, &p->meta.labels);
    }
    return count;
}

uint32_t ks_spread_node_count(const struct ks_node_snap *node, const struct ks_label_selector *sel,
                              uint32_t ns, uint32_t sel_id)
{
    uint32_t count;
    if (sel_id != KS_ID_NONE && ks_node_snap_sel_count(node, sel_id, &count))
        return count;
    return ks_spread_count_pods(node, sel, ns);
}

uint32_t ks_spread_counted_id(struct ks_spread_tracker *t, struct ks_cache *cache,
                              const struct ks_snapshot *snap, uint32_t ns,
                              const struct ks_label_selector *sel, bool *empty)
{
    if (empty)
        *empty = false;
    if (!cache || !snap || !sel || sel->nreqs == 0)
        return KS_ID_NONE;
    struct ks_spread_tracked *x = NULL;
    for (uint32_t i = 0; i < KS_SPREAD_TRACKED && !x; i++) {
        if (t->slot[i].sel && t->slot[i].ns == ns && ks_spread_selector_equal(t->slot[i].sel, sel))
            x = &t->slot[i];
    }
    if (!x) {
        uint32_t id;
        uint64_t ready;
        int rc = ks_cache_selector_track(cache, ns, sel, &id, &ready);
        if (rc < 0)
            return KS_ID_NONE;
        x = &t->slot[t->next++ % KS_SPREAD_TRACKED];
        ks_arena_reset(&x->arena);
        if (!(x->sel = ks_spread_selector_copy(&x->arena, sel)))
            return KS_ID_NONE;
        x->ns = ns;
        x->id = id;
        x->ready = ready;
        x->empty_at = rc == 1 ? snap->generation : 0;
    }
    if (empty)
        *empty = x->empty_at && x->empty_at == snap->generation;
    return snap->generation >= x->ready ? x->id : KS_ID_NONE;
}

void ks_spread_tracker_destroy(struct ks_spread_tracker *t)
{
    for (uint32_t i = 0; i < KS_SPREAD_TRACKED; i++)
        ks_arena_destroy(&t->slot[i].arena);
}

/* ---- node inclusion ------------------------------------------------------------------------- */

bool ks_spread_affinity_matches(const struct ks_pod *pod, const struct ks_node *node)
{
    const struct ks_labels *labels = &node->meta.labels;
    if (pod->node_selector.n && !set_matches(&pod->node_selector, labels))
        return false;
    const struct ks_node_affinity *na = pod->affinity.node_affinity;
    if (na && na->required)
        return ks_node_selector_matches(na->required, labels, node->name_id);
    return true;
}

/* helper.DoNotScheduleTaintsFilterFunc */
static bool do_not_schedule(enum ks_taint_effect e)
{
    return e == KS_EFFECT_NO_SCHEDULE || e == KS_EFFECT_NO_EXECUTE;
}

bool ks_spread_taints_tolerated(const struct ks_pod *pod, const struct ks_node *node)
{
    return node->ntaints == 0 || !ks_find_untolerated_taint(node->taints, node->ntaints, pod->tolerations,
                                                            pod->ntolerations, do_not_schedule);
}

static uint32_t beta_zone_label, beta_region_label;
static pthread_once_t beta_once = PTHREAD_ONCE_INIT;

static void intern_beta_labels(void)
{
    beta_zone_label = ks_intern("failure-domain.beta.kubernetes.io/zone");
    beta_region_label = ks_intern("failure-domain.beta.kubernetes.io/region");
}

bool ks_spread_zone_key(const struct ks_node *node, uint32_t *region, uint32_t *zone)
{
    const struct ks_labels *l = &node->meta.labels;
    pthread_once(&beta_once, intern_beta_labels);
    *zone = KS_ID_EMPTY;
    *region = KS_ID_EMPTY;
    if (!ks_labels_get(l, beta_zone_label, zone))
        ks_labels_get(l, ks_wk.zone_label, zone);
    if (!ks_labels_get(l, beta_region_label, region))
        ks_labels_get(l, ks_wk.region_label, region);
    return *zone != KS_ID_EMPTY || *region != KS_ID_EMPTY;
}

/*
 * fdlibm's e_log.c as Go's math.Log implements it (the amd64 assembly evaluates the same
 * expressions in the same order): x = 2^k * (1+f) with sqrt(2)/2 <= 1+f < sqrt(2), then
 * log(1+f) = f - s*(f - R) with s = f/(2+f) and R a minimax polynomial in s^2.
 */
double ks_spread_log(double x)
{
    static const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    static const double lg1 = 6.666666666666735130e-01, lg2 = 3.999999999940941908e-01,
                        lg3 = 2.857142874366239149e-01, lg4 = 2.222219843214978396e-01,
                        lg5 = 1.818357216161805012e-01, lg6 = 1.531383769920937332e-01,
                        lg7 = 1.479819860511658591e-01;
    if (isnan(x) || isinf(x))
        return x > 0 || isnan(x) ? x : NAN;
    if (x < 0)
        return NAN;
    if (x == 0)
        return -INFINITY;
    int e;
    double m = frexp(x, &e);
    if (m < 7.07106781186547524401e-01) {
        m *= 2;
        e--;
    }
    double f = m - 1, k = (double)e;
    double s = f / (2 + f), s2 = s * s, s4 = s2 * s2;
    double t1 = s2 * (lg1 + s4 * (lg3 + s4 * (lg5 + s4 * lg7)));
    double t2 = s4 * (lg2 + s4 * (lg4 + s4 * lg6));
    double r = t1 + t2;
    double hfsq = 0.5 * f * f;
    return k * ln2_hi - ((hfsq - (s * (hfsq + r) + k * ln2_lo)) - f);
}

/* ---- domain tables --------------------------------------------------------------------------- */

static inline uint32_t slot_of(uint32_t value, uint32_t mask)
{
    return (uint32_t)(((uint64_t)value * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static struct ks_spread_domain *table_probe(struct ks_spread_domain *slots, uint32_t mask, uint32_t value)
{
    for (uint32_t i = slot_of(value, mask);; i = (i + 1) & mask) {
        if (slots[i].value == value || slots[i].value == KS_ID_NONE)
            return &slots[i];
    }
}

const struct ks_spread_domain *ks_spread_domains_find(const struct ks_spread_domains *d, uint32_t value)
{
    if (!d->slots)
        return NULL;
    const struct ks_spread_domain *s = table_probe(d->slots, d->mask, value);
    return s->value == KS_ID_NONE ? NULL : s;
}

/* A table of at least @need values at load <= 1/2 in @arena. */
static int domains_alloc(struct ks_spread_domains *d, struct ks_arena *arena, uint32_t need)
{
    uint32_t cap = 8;
    while (cap < 2 * (uint64_t)need + 2)
        cap *= 2;
    struct ks_spread_domain *slots = ks_arena_alloc(arena, (size_t)cap * sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < cap; i++)
        slots[i].value = KS_ID_NONE;
    d->slots = slots;
    d->mask = cap - 1;
    d->n = 0;
    return 0;
}

/* Put every value of @src into the empty table @d. */
static void domains_fill(struct ks_spread_domains *d, const struct ks_spread_domain *src, uint32_t nslots)
{
    for (uint32_t i = 0; i < nslots; i++) {
        if (src[i].value == KS_ID_NONE)
            continue;
        *table_probe(d->slots, d->mask, src[i].value) = src[i];
        d->n++;
    }
}

int ks_spread_domains_add(struct ks_spread_domains *d, struct ks_arena *arena, uint32_t value, int64_t delta,
                          int64_t *after)
{
    if (!d->slots || 2 * ((uint64_t)d->n + 1) > (uint64_t)d->mask + 1) {
        struct ks_spread_domains grown;
        if (domains_alloc(&grown, arena, d->n + 1) < 0)
            return -ENOMEM;
        if (d->slots)
            domains_fill(&grown, d->slots, d->mask + 1);
        *d = grown;
    }
    struct ks_spread_domain *s = table_probe(d->slots, d->mask, value);
    if (s->value == KS_ID_NONE) {
        *s = (struct ks_spread_domain){.value = value, .nodes = 1, .count = 0};
        d->n++;
    }
    s->count += delta;
    if (after)
        *after = s->count;
    return 0;
}

int ks_spread_domains_clone(struct ks_spread_domains *dst, const struct ks_spread_domains *src,
                            struct ks_arena *arena)
{
    if (domains_alloc(dst, arena, src->n) < 0)
        return -ENOMEM;
    if (src->slots)
        domains_fill(dst, src->slots, src->mask + 1);
    return 0;
}

/* ---- critical paths ------------------------------------------------------------------------ */

void ks_spread_paths_init(struct ks_spread_paths *p)
{
    p->value[0] = p->value[1] = KS_ID_EMPTY;
    p->num[0] = p->num[1] = INT32_MAX;
}

void ks_spread_paths_update(struct ks_spread_paths *p, uint32_t value, int64_t num)
{
    int i = value == p->value[0] ? 0 : value == p->value[1] ? 1 : -1;
    if (i >= 0) {
        p->num[i] = num;
        if (p->num[0] > p->num[1]) {
            uint32_t v = p->value[0];
            int64_t c = p->num[0];
            p->value[0] = p->value[1];
            p->num[0] = p->num[1];
            p->value[1] = v;
            p->num[1] = c;
        }
    } else if (num < p->num[0]) {
        p->value[1] = p->value[0];
        p->num[1] = p->num[0];
        p->value[0] = value;
        p->num[0] = num;
    } else if (num < p->num[1]) {
        p->value[1] = value;
        p->num[1] = num;
    }
}

/* ---- the counter ------------------------------------------------------------------------------ */

/* A term's persistent table: value -> {eligible nodes, matching pods}, on the heap. */
struct heap_table {
    uint32_t used; /* occupied slots (live or not: entries are never removed) */
    uint32_t live; /* values with nodes > 0 */
    uint32_t mask;
    struct ks_spread_domain *slots;
};

struct entry {
    struct ks_arena arena; /* the key's copies */
    /* key */
    uint32_t ns;
    bool require_all;
    bool any_affinity, any_taints;
    uint32_t nterms;
    struct ks_spread_term *terms; /* selectors copied into arena */
    const struct ks_pod *tmpl;    /* referenced: the affinity and tolerations counted with */
    /* counts */
    struct ks_node_memo memo;  /* the record generations counted (plugin_helpers_memo.h) */
    uint32_t cap;              /* positions allocated below */
    uint32_t *dom;             /* [cap * nterms] domain value, KS_ID_NONE when not counted */
    uint32_t *cnt;             /* [cap * nterms] matching pods */
    struct heap_table *tables; /* [nterms] */
    /* the first per_node term: the positions whose count is not 0, and where each is listed */
    int32_t host_term; /* -1: none */
    uint32_t nhosts;
    uint32_t *hosts;   /* [cap] */
    uint32_t *host_at; /* [cap] index in hosts, or UINT32_MAX */
    uint64_t last_use;
};

struct ks_spread_counter {
    uint32_t max, n;
    uint64_t clock;
    struct entry **entries;
};

int ks_spread_counter_create(uint32_t max_entries, struct ks_spread_counter **out)
{
    struct ks_spread_counter *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->max = max_entries ? max_entries : 1;
    if (!(c->entries = calloc(c->max, sizeof(*c->entries)))) {
        free(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

static void entry_destroy(struct entry *e)
{
    if (!e)
        return;
    for (uint32_t t = 0; e->tables && t < e->nterms; t++)
        free(e->tables[t].slots);
    free(e->tables);
    ks_node_memo_destroy(&e->memo);
    free(e->dom);
    free(e->cnt);
    free(e->hosts);
    free(e->host_at);
    ks_pod_put(e->tmpl);
    ks_arena_destroy(&e->arena);
    free(e);
}

void ks_spread_counter_destroy(struct ks_spread_counter *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        entry_destroy(c->entries[i]);
    free(c->entries);
    free(c);
}

static bool labels_equal(const struct ks_labels *a, const struct ks_labels *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->items, b->items, a->n * sizeof(*a->items)) == 0);
}

static bool node_selector_equal(const struct ks_node_selector *a, const struct ks_node_selector *b)
{
    if (!a || !b)
        return a == b;
    if (a->nterms != b->nterms)
        return false;
    for (uint32_t i = 0; i < a->nterms; i++) {
        const struct ks_node_selector_term *x = &a->terms[i], *y = &b->terms[i];
        if (!requirements_equal(x->exprs, x->nexprs, y->exprs, y->nexprs) ||
            !requirements_equal(x->fields, x->nfields, y->fields, y->nfields))
            return false;
    }
    return true;
}

/* The pod's required node affinity as GetRequiredNodeAffinity reads it. */
static const struct ks_node_selector *required_of(const struct ks_pod *pod)
{
    return pod->affinity.node_affinity ? pod->affinity.node_affinity->required : NULL;
}

static bool tolerations_equal(const struct ks_pod *a, const struct ks_pod *b)
{
    if (a->ntolerations != b->ntolerations)
        return false;
    for (uint32_t i = 0; i < a->ntolerations; i++) {
        const struct ks_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->key != y->key || x->op != y->op || x->value != y->value || x->effect != y->effect ||
            x->toleration_seconds != y->toleration_seconds)
            return false;
    }
    return true;
}

/*
 * Whether @e counts the nodes as @q would, selectors and namespace aside: the same keys,
 * policies, and the pod's affinity and tolerations where a policy reads them, so the same
 * domains and eligible nodes.
 */
static bool layout_matches(const struct entry *e, const struct ks_spread_query *q)
{
    if (e->require_all != q->require_all || e->nterms != q->nterms)
        return false;
    for (uint32_t t = 0; t < q->nterms; t++) {
        const struct ks_spread_term *x = &e->terms[t], *y = &q->terms[t];
        if (x->topology_key != y->topology_key || x->honor_affinity != y->honor_affinity ||
            x->honor_taints != y->honor_taints || x->per_node != y->per_node)
            return false;
    }
    if (e->any_affinity && (!labels_equal(&e->tmpl->node_selector, &q->pod->node_selector) ||
                            !node_selector_equal(required_of(e->tmpl), required_of(q->pod))))
        return false;
    return !e->any_taints || tolerations_equal(e->tmpl, q->pod);
}

static bool entry_matches(const struct entry *e, const struct ks_spread_query *q)
{
    if (e->ns != q->ns || !layout_matches(e, q))
        return false;
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (!ks_spread_selector_equal(e->terms[t].selector, q->terms[t].selector))
            return false;
    }
    return true;
}

const struct ks_label_selector *ks_spread_selector_copy(struct ks_arena *a, const struct ks_label_selector *s)
{
    if (!s)
        return NULL;
    struct ks_label_selector *c = ks_arena_alloc(a, sizeof(*c));
    struct ks_requirement *reqs = ks_arena_calloc(a, s->nreqs ? s->nreqs : 1, sizeof(*reqs));
    if (!c || !reqs)
        return NULL;
    for (uint32_t i = 0; i < s->nreqs; i++) {
        reqs[i] = s->reqs[i];
        if (s->reqs[i].nvalues) {
            uint32_t *v = ks_arena_calloc(a, s->reqs[i].nvalues, sizeof(*v));
            if (!v)
                return NULL;
            memcpy(v, s->reqs[i].values, s->reqs[i].nvalues * sizeof(*v));
            reqs[i].values = v;
        }
    }
    c->nreqs = s->nreqs;
    c->reqs = reqs;
    return c;
}

/* @e counts nothing: no domain per position, no pod, no memo, empty tables. */
static void entry_clear(struct entry *e)
{
    size_t per = e->nterms ? e->nterms : 1;
    for (size_t i = 0; i < (size_t)e->cap * per; i++) {
        e->dom[i] = KS_ID_NONE;
        e->cnt[i] = 0;
    }
    for (uint32_t k = 0; k < e->nhosts; k++)
        e->host_at[e->hosts[k]] = UINT32_MAX;
    e->nhosts = 0;
    for (uint32_t t = 0; t < e->nterms; t++) {
        free(e->tables[t].slots);
        e->tables[t] = (struct heap_table){0};
    }
    ks_node_memo_reset(&e->memo);
}

/*
 * @e (new, counting nothing yet) takes over @old's per-position arrays when they have the
 * same shape (terms), reset to "nothing counted" - but for the domains and the memo when
 * @derived (entry_derive overwrites them next): an entry replacing another touches memory
 * already in use instead of fresh pages.
 */
static void entry_adopt(struct entry *e, struct entry *old, bool derived)
{
    if (old->nterms != e->nterms || e->cap)
        return;
    size_t per = e->nterms ? e->nterms : 1;
    e->cap = old->cap;
    e->dom = old->dom;
    e->cnt = old->cnt;
    e->hosts = old->hosts;
    e->host_at = old->host_at;
    e->memo = old->memo;
    for (uint32_t k = 0; k < old->nhosts; k++)
        e->host_at[old->hosts[k]] = UINT32_MAX;
    old->cap = old->nhosts = 0;
    old->dom = old->cnt = old->hosts = old->host_at = NULL;
    old->memo = (struct ks_node_memo){0};
    memset(e->cnt, 0, (size_t)e->cap * per * sizeof(*e->cnt));
    if (!derived)
        entry_clear(e);
}

static struct entry *entry_new(const struct ks_spread_query *q)
{
    struct entry *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->ns = q->ns;
    e->host_term = -1;
    e->require_all = q->require_all;
    e->nterms = q->nterms;
    e->terms = ks_arena_calloc(&e->arena, q->nterms ? q->nterms : 1, sizeof(*e->terms));
    e->tables = calloc(q->nterms ? q->nterms : 1, sizeof(*e->tables));
    if (!e->terms || !e->tables)
        goto err;
    for (uint32_t t = 0; t < q->nterms; t++) {
        e->terms[t] = q->terms[t];
        e->any_affinity |= q->terms[t].honor_affinity && !q->terms[t].per_node;
        e->any_taints |= q->terms[t].honor_taints && !q->terms[t].per_node;
        if (q->terms[t].per_node && e->host_term < 0)
            e->host_term = (int32_t)t;
        if (q->terms[t].selector &&
            !(e->terms[t].selector = ks_spread_selector_copy(&e->arena, q->terms[t].selector)))
            goto err;
    }
    e->tmpl = ks_pod_get(q->pod);
    return e;
err:
    entry_destroy(e);
    return NULL;
}

/* Rehash into a table sized for the live values (at most 1/4 full), dropping dead ones. */
static int heap_table_grow(struct heap_table *t)
{
    uint32_t cap = 16;
    while (cap < 4 * ((uint64_t)t->live + 1))
        cap *= 2;
    struct ks_spread_domain *slots = malloc((size_t)cap * sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < cap; i++)
        slots[i].value = KS_ID_NONE;
    /* values whose last node left are dropped while rehashing */
    uint32_t used = 0;
    for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
        if (t->slots[i].value != KS_ID_NONE && t->slots[i].nodes) {
            *table_probe(slots, cap - 1, t->slots[i].value) = t->slots[i];
            used++;
        }
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    t->used = used;
    return 0;
}

/* Add (sign 1) or take away (sign -1) one node's contribution to a value. */
static int heap_table_apply(struct heap_table *t, uint32_t value, uint32_t count, int sign)
{
    if (sign > 0 && (!t->slots || 2 * ((uint64_t)t->used + 1) > (uint64_t)t->mask + 1) &&
        heap_table_grow(t) < 0)
        return -ENOMEM;
    struct ks_spread_domain *s = table_probe(t->slots, t->mask, value);
    if (s->value == KS_ID_NONE) {
        /* only additions reach a new value: a contribution is removed from where it was added */
        *s = (struct ks_spread_domain){.value = value};
        t->used++;
    }
    if (sign > 0) {
        t->live += s->nodes == 0;
        s->nodes++;
        s->count += count;
    } else {
        s->nodes--;
        s->count -= count;
        t->live -= s->nodes == 0;
    }
    return 0;
}

static int entry_reserve(struct entry *e, uint32_t nnodes)
{
    if (nnodes <= e->cap)
        return 0;
    uint32_t cap = e->cap ? e->cap : 64;
    while (cap < nnodes)
        cap *= 2;
    size_t per = e->nterms ? e->nterms : 1;
    uint32_t *dom = realloc(e->dom, (size_t)cap * per * sizeof(*dom));
    if (dom)
        e->dom = dom;
    uint32_t *cnt = realloc(e->cnt, (size_t)cap * per * sizeof(*cnt));
    if (cnt)
        e->cnt = cnt;
    uint32_t *hosts = realloc(e->hosts, (size_t)cap * sizeof(*hosts));
    if (hosts)
        e->hosts = hosts;
    uint32_t *host_at = realloc(e->host_at, (size_t)cap * sizeof(*host_at));
    if (host_at)
        e->host_at = host_at;
    if (!dom || !cnt || !hosts || !host_at)
        return -ENOMEM;
    for (uint32_t i = e->cap; i < cap; i++) {
        for (size_t t = 0; t < per; t++) {
            e->dom[i * per + t] = KS_ID_NONE;
            e->cnt[i * per + t] = 0;
        }
        e->host_at[i] = UINT32_MAX;
    }
    e->cap = cap;
    return 0;
}

/* Take away what position @i contributed. */
static void position_clear(struct entry *e, uint32_t i)
{
    uint32_t at = e->host_at[i];
    if (at != UINT32_MAX) {
        uint32_t moved = e->hosts[--e->nhosts];
        e->hosts[at] = moved;
        e->host_at[moved] = at;
        e->host_at[i] = UINT32_MAX;
        e->cnt[(size_t)i * e->nterms + (uint32_t)e->host_term] = 0;
    }
    for (uint32_t t = 0; t < e->nterms; t++) {
        uint32_t *dom = &e->dom[(size_t)i * e->nterms + t];
        if (*dom != KS_ID_NONE) {
            heap_table_apply(&e->tables[t], *dom, e->cnt[(size_t)i * e->nterms + t], -1);
            *dom = KS_ID_NONE;
        }
    }
}

/* Count record @r at position @i (whose previous contribution was cleared). */
static int position_count(struct entry *e, uint32_t i, const struct ks_node_snap *r)
{
    const struct ks_node *node = r->node;
    if (!node || !(r->flags & KS_SNAP_HAS_NODE))
        goto done;
    const struct ks_labels *labels = &node->meta.labels;
    if (e->host_term >= 0) {
        const struct ks_spread_term *term = &e->terms[e->host_term];
        uint32_t count = ks_spread_node_count(r, term->selector, e->ns, term->sel_id);
        e->cnt[(size_t)i * e->nterms + (uint32_t)e->host_term] = count;
        if (count) {
            e->host_at[i] = e->nhosts;
            e->hosts[e->nhosts++] = i; /* room: one entry per position */
        }
    }
    if (e->require_all) {
        for (uint32_t t = 0; t < e->nterms; t++) {
            if (!ks_labels_get(labels, e->terms[t].topology_key, NULL))
                goto done;
        }
    }
    int affinity = -1, taints = -1; /* computed once per node, when a term asks */
    for (uint32_t t = 0; t < e->nterms; t++) {
        const struct ks_spread_term *term = &e->terms[t];
        if (term->per_node)
            continue;
        if (term->honor_affinity) {
            if (affinity < 0)
                affinity = ks_spread_affinity_matches(e->tmpl, node);
            if (!affinity)
                continue;
        }
        if (term->honor_taints) {
            if (taints < 0)
                taints = ks_spread_taints_tolerated(e->tmpl, node);
            if (!taints)
                continue;
        }
        uint32_t value = KS_ID_EMPTY; /* node.Labels[key] reads "" for a missing key */
        ks_labels_get(labels, term->topology_key, &value);
        uint32_t count = ks_spread_node_count(r, term->selector, e->ns, term->sel_id);
        if (heap_table_apply(&e->tables[t], value, count, 1) < 0)
            return -ENOMEM;
        e->dom[(size_t)i * e->nterms + t] = value;
        e->cnt[(size_t)i * e->nterms + t] = count;
    }
done:
    return 0;
}

/* ks_node_memo_update_fn: position @i now holds @r (NULL: past the end). */
static int position_update(void *ctx, uint32_t i, const struct ks_node_snap *r)
{
    struct entry *e = ctx;
    position_clear(e, i);
    return r ? position_count(e, i, r) : 0;
}

/* Recount the positions whose record changed; on failure what was counted stays consistent. */
static int entry_sync(struct entry *e, const struct ks_snapshot *snap)
{
    if (!ks_node_memo_synced(&e->memo, snap) && entry_reserve(e, snap->nnodes) < 0)
        return -ENOMEM;
    return ks_node_memo_sync(&e->memo, snap, position_update, e);
}

/* The live values of @t into a cycle table in @arena. */
static int table_export(const struct heap_table *t, struct ks_arena *arena, struct ks_spread_domains *out)
{
    if (domains_alloc(out, arena, t->live + 4) < 0)
        return -ENOMEM;
    for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
        const struct ks_spread_domain *s = &t->slots[i];
        if (s->value == KS_ID_NONE || s->nodes == 0)
            continue;
        *table_probe(out->slots, out->mask, s->value) = (struct ks_spread_domain){s->value, 1, s->count};
        out->n++;
    }
    return 0;
}

/* The counts of the listed nodes alone, from what each position contributed. */
static int listing_export(const struct entry *e, const struct ks_snapshot *snap,
                          const struct ks_spread_query *q, struct ks_arena *arena,
                          struct ks_spread_domains *out)
{
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (domains_alloc(&out[t], arena, q->nlisting + 4) < 0)
            return -ENOMEM;
        for (uint32_t k = 0; k < q->nlisting; k++) {
            uint32_t i = ks_snapshot_position(snap, q->listing[k]);
            uint32_t value = i == UINT32_MAX ? KS_ID_NONE : e->dom[(size_t)i * e->nterms + t];
            if (value == KS_ID_NONE)
                continue;
            struct ks_spread_domain *d = table_probe(out[t].slots, out[t].mask, value);
            if (d->value == KS_ID_NONE) {
                *d = (struct ks_spread_domain){value, 1, 0};
                out[t].n++;
            }
            d->count += e->cnt[(size_t)i * e->nterms + t];
        }
    }
    return 0;
}

/* The per_node term's positions with matching pods and their counts, copied into @arena. */
static int hosts_export(const struct entry *e, struct ks_arena *arena, struct ks_spread_hosts *out)
{
    *out = (struct ks_spread_hosts){0};
    if (e->host_term < 0 || !e->nhosts)
        return 0;
    out->pos = ks_arena_calloc(arena, e->nhosts, sizeof(*out->pos));
    out->count = ks_arena_calloc(arena, e->nhosts, sizeof(*out->count));
    if (!out->pos || !out->count)
        return -ENOMEM;
    for (uint32_t k = 0; k < e->nhosts; k++) {
        out->pos[k] = e->hosts[k];
        out->count[k] = e->cnt[(size_t)e->hosts[k] * e->nterms + (uint32_t)e->host_term];
    }
    out->n = e->nhosts;
    return 0;
}

/*
 * @e (new) takes @sib's domains, eligible nodes and memo (@sib synced to the snapshot and
 * counting the nodes alike, layout_matches), with no pod counted: the entry of a query
 * whose selectors match no pod of the snapshot, without reading a record. Nothing
 * changes on failure (-ENOMEM).
 */
static int entry_derive(struct entry *e, const struct entry *sib)
{
    size_t per = e->nterms ? e->nterms : 1;
    struct heap_table *tables = calloc(per, sizeof(*tables));
    uint32_t made = 0;
    if (!tables || entry_reserve(e, sib->cap) < 0)
        goto nomem;
    for (; made < e->nterms; made++) {
        const struct heap_table *from = &sib->tables[made];
        tables[made] = *from;
        if (!from->slots)
            continue;
        if (!(tables[made].slots = malloc(((size_t)from->mask + 1) * sizeof(*from->slots))))
            goto nomem;
        for (uint32_t i = 0; i <= from->mask; i++) {
            tables[made].slots[i] = from->slots[i];
            tables[made].slots[i].count = 0;
        }
    }
    if (ks_node_memo_copy(&e->memo, &sib->memo) < 0)
        goto nomem;
    memcpy(e->dom, sib->dom, (size_t)sib->cap * per * sizeof(*e->dom));
    for (uint32_t t = 0; t < e->nterms; t++) {
        free(e->tables[t].slots);
        e->tables[t] = tables[t];
    }
    free(tables);
    return 0;
nomem:
    while (tables && made--)
        free(tables[made].slots);
    free(tables);
    return -ENOMEM;
}

/* An entry @q can be derived from (entry_derive): its selectors match nothing in @snap. */
static struct entry *sibling_of(struct ks_spread_counter *c, const struct ks_spread_query *q,
                                const struct ks_snapshot *snap)
{
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (!q->terms[t].empty)
            return NULL;
    }
    for (uint32_t i = 0; i < c->n; i++) {
        if (layout_matches(c->entries[i], q) && entry_sync(c->entries[i], snap) == 0)
            return c->entries[i];
    }
    return NULL;
}

int ks_spread_counter_count(struct ks_spread_counter *c, const struct ks_snapshot *snap,
                            const struct ks_spread_query *q, struct ks_arena *arena,
                            struct ks_spread_domains *out)
{
    struct entry *e = NULL;
    uint32_t at = 0;
    for (; at < c->n; at++) {
        if (entry_matches(c->entries[at], q)) {
            e = c->entries[at];
            break;
        }
    }
    if (!e) {
        if (!(e = entry_new(q)))
            return -ENOMEM;
        struct entry *victim = NULL, *sib = sibling_of(c, q, snap);
        if (c->n < c->max) {
            at = c->n++;
        } else {
            /* replace the least recently used entry */
            at = 0;
            for (uint32_t i = 1; i < c->n; i++) {
                if (c->entries[i]->last_use < c->entries[at]->last_use)
                    at = i;
            }
            victim = c->entries[at];
        }
        if (victim && victim != sib)
            entry_adopt(e, victim, sib != NULL);
        if (sib && entry_derive(e, sib) < 0)
            entry_clear(e); /* out of memory: the entry counts every node instead */
        entry_destroy(victim);
        c->entries[at] = e;
    }
    e->last_use = ++c->clock;
    for (uint32_t t = 0; t < q->nterms; t++)
        e->terms[t].sel_id = q->terms[t].sel_id; /* this snapshot's: how the changed nodes are counted */
    if (entry_sync(e, snap) < 0)
        return -ENOMEM;
    if (q->hosts && hosts_export(e, arena, q->hosts) < 0)
        return -ENOMEM;
    if (q->nlisting)
        return listing_export(e, snap, q, arena, out);
    for (uint32_t t = 0; t < q->nterms; t++) {
        if (table_export(&e->tables[t], arena, &out[t]) < 0)
            return -ENOMEM;
    }
    return 0;
}
