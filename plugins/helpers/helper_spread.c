/*
 * helper_spread.c - selectors, pod counting and per-domain counts for the spreading
 * plugins (PodTopologySpread, SelectorSpread); see ksched/plugin_helpers_spread.h.
 *
 * Mirrors helper/spread.go (DefaultSelector, GetPodServices), podtopologyspread/common.go
 * (countPodsMatchSelector, matchNodeInclusionPolicies, mergeLabelSetWithSelector),
 * podtopologyspread/filtering.go (criticalPaths) and pkg/util/node (GetZoneKey).
 *
 * The counter of matching pods per domain is in helper_spread_counter.c, the index of the
 * workloads and Services the default selector reads in helper_spread_owners.c.
 */
#include "helper_spread_internal.h"

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

bool ks__spread_requirements_equal(const struct ks_requirement *a, uint32_t na,
                                   const struct ks_requirement *b, uint32_t nb)
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
    return ks__spread_requirements_equal(a->reqs, a->nreqs, b->reqs, b->nreqs);
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

struct ks_spread_domain *ks__spread_table_probe(struct ks_spread_domain *slots, uint32_t mask, uint32_t value)
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
    const struct ks_spread_domain *s = ks__spread_table_probe(d->slots, d->mask, value);
    return s->value == KS_ID_NONE ? NULL : s;
}

int ks__spread_domains_alloc(struct ks_spread_domains *d, struct ks_arena *arena, uint32_t need)
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
        *ks__spread_table_probe(d->slots, d->mask, src[i].value) = src[i];
        d->n++;
    }
}

int ks_spread_domains_add(struct ks_spread_domains *d, struct ks_arena *arena, uint32_t value, int64_t delta,
                          int64_t *after)
{
    if (!d->slots || 2 * ((uint64_t)d->n + 1) > (uint64_t)d->mask + 1) {
        struct ks_spread_domains grown;
        if (ks__spread_domains_alloc(&grown, arena, d->n + 1) < 0)
            return -ENOMEM;
        if (d->slots)
            domains_fill(&grown, d->slots, d->mask + 1);
        *d = grown;
    }
    struct ks_spread_domain *s = ks__spread_table_probe(d->slots, d->mask, value);
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
    if (ks__spread_domains_alloc(dst, arena, src->n) < 0)
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
