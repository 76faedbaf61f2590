/*
 * decode_pod.c - v1 Pod manifests into struct ks_pod.
 *
 * Applies the API server's defaulting that changes scheduling (k8s pkg/apis/core/v1
 * defaults.go): requests default to limits per resource, hostPort defaults to
 * containerPort under hostNetwork, protocol TCP, schedulerName "default-scheduler",
 * toleration operator Equal. Validation mirrors the parts of pkg/apis/core/validation that
 * the scheduler relies on (required names, operators, non-negative quantities).
 */
#include "ksched/api.h"
#include "ksched/decode.h"
#include "ksched/intern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const effect_names[] = {
#define KS_X(name, text) text,
    KS_TAINT_EFFECT_MAP(KS_X)
#undef KS_X
        NULL,
};

static const char *const phase_names[] = {
#define KS_X(name, text) text,
    KS_POD_PHASE_MAP(KS_X)
#undef KS_X
        NULL,
};

static int required(struct ks_decoder *d, const struct ks_yaml_node *at, const char *field)
{
    size_t s = ks_dec_push(d, field);
    int rc = ks_dec_fail(d, at, 0, "Required value");
    ks_dec_pop(d, s);
    return rc;
}

/* requests default to limits for every resource with a limit and no request */
static int default_requests(struct ks_decoder *d, struct ks_container *c)
{
    if (c->limits.n == 0)
        return 0;
    struct ks_resource_item *items = ks_arena_calloc(d->arena, c->requests.n + c->limits.n, sizeof(*items));
    if (!items)
        return ks_dec_nomem(d);
    uint32_t n = 0, i = 0, j = 0;
    while (i < c->requests.n || j < c->limits.n) {
        if (j == c->limits.n || (i < c->requests.n && c->requests.items[i].name < c->limits.items[j].name)) {
            items[n++] = c->requests.items[i++];
        } else if (i == c->requests.n || c->limits.items[j].name < c->requests.items[i].name) {
            items[n++] = c->limits.items[j++];
        } else {
            items[n++] = c->requests.items[i++];
            j++;
        }
    }
    c->requests.items = items;
    c->requests.n = n;
    return 0;
}

static int container_ports(struct ks_decoder *d, const struct ks_yaml_node *cn, bool host_network,
                           struct ks_container *c)
{
    static const char *const protocols[] = {"TCP", "UDP", "SCTP", NULL};
    const struct ks_yaml_node *ports = NULL;
    int rc = ks_dec_seq(d, cn, "ports", &ports);
    if (rc || !ports)
        return rc;
    c->nports = ports->n;
    if (!(c->ports = ks_arena_calloc(d->arena, ports->n ? ports->n : 1, sizeof(*c->ports))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "ports");
    for (uint32_t i = 0; i < ports->n; i++) {
        const struct ks_yaml_node *pn = ports->items[i];
        struct ks_container_port *p = &c->ports[i];
        int proto = KS_PROTO_TCP;
        size_t s2 = ks_dec_push_index(d, i);
        if (pn->kind != KS_YAML_MAP)
            return ks_dec_fail(d, pn, 0, "expected a map, found %s", ks_yaml_kind_name(pn));
        if ((rc = ks_dec_int32(d, pn, "containerPort", &p->container_port)) ||
            (rc = ks_dec_int32(d, pn, "hostPort", &p->host_port)) || (rc = ks_dec_id(d, pn, "hostIP", &p->host_ip)) ||
            (rc = ks_dec_enum(d, pn, "protocol", protocols, &proto)))
            return rc;
        p->protocol = (enum ks_protocol)proto;
        if (p->host_port < 0 || p->host_port > 65535) {
            ks_dec_push(d, "hostPort");
            return ks_dec_fail(d, pn, 0, "must be between 0 and 65535, inclusive");
        }
        if (host_network && p->host_port == 0)
            p->host_port = p->container_port;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int containers(struct ks_decoder *d, const struct ks_yaml_node *spec, const char *key, bool init,
                      bool host_network, uint32_t *n, struct ks_container **out)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, spec, key, &seq);
    if (rc || !seq)
        return rc;
    *n = seq->n;
    if (!(*out = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(**out))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *cn = seq->items[i], *res = NULL;
        struct ks_container *c = &(*out)[i];
        const char *restart = NULL;
        size_t s2 = ks_dec_push_index(d, i);
        if (cn->kind != KS_YAML_MAP)
            return ks_dec_fail(d, cn, 0, "expected a map, found %s", ks_yaml_kind_name(cn));
        if ((rc = ks_dec_string(d, cn, "name", &c->name)) || (rc = ks_dec_id(d, cn, "image", &c->image)) ||
            (rc = ks_dec_map(d, cn, "resources", &res)) || (rc = ks_dec_string(d, cn, "restartPolicy", &restart)))
            return rc;
        if (!c->name)
            return required(d, cn, "name");
        if (res) {
            size_t s3 = ks_dec_push(d, "resources");
            if ((rc = ks_dec_resources(d, res, "requests", &c->requests)) ||
                (rc = ks_dec_resources(d, res, "limits", &c->limits)) || (rc = default_requests(d, c)))
                return rc;
            ks_dec_pop(d, s3);
        }
        if (restart) {
            if (!init || strcmp(restart, "Always") != 0) {
                ks_dec_push(d, "restartPolicy");
                return ks_dec_fail(d, ks_yaml_get(cn, "restartPolicy"), 0,
                                   init ? "Unsupported value: \"%s\": supported values: \"Always\""
                                        : "Forbidden: may not be set for non-init containers (\"%s\")",
                                   restart);
            }
            c->restart_always = true;
        }
        if ((rc = container_ports(d, cn, host_network, c)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int pod_affinity_term(struct ks_decoder *d, const struct ks_yaml_node *n, struct ks_pod_affinity_term *t)
{
    int rc;
    if (n->kind != KS_YAML_MAP)
        return ks_dec_fail(d, n, 0, "expected a map, found %s", ks_yaml_kind_name(n));
    t->topology_key = KS_ID_EMPTY;
    if ((rc = ks_dec_label_selector(d, n, "labelSelector", &t->selector)) ||
        (rc = ks_dec_id_set(d, n, "namespaces", &t->nnamespaces, &t->namespaces)) ||
        (rc = ks_dec_label_selector(d, n, "namespaceSelector", &t->namespace_selector)) ||
        (rc = ks_dec_id(d, n, "topologyKey", &t->topology_key)) ||
        (rc = ks_dec_id_list(d, n, "matchLabelKeys", &t->nmatch_label_keys, &t->match_label_keys)) ||
        (rc = ks_dec_id_list(d, n, "mismatchLabelKeys", &t->nmismatch_label_keys, &t->mismatch_label_keys)))
        return rc;
    if (t->topology_key == KS_ID_EMPTY) {
        size_t s = ks_dec_push(d, "topologyKey");
        rc = ks_dec_fail(d, n, 0, "Required value: can not be empty");
        ks_dec_pop(d, s);
        return rc;
    }
    return 0;
}

static int weight(struct ks_decoder *d, const struct ks_yaml_node *n, int32_t *w)
{
    int rc = ks_dec_int32(d, n, "weight", w);
    if (rc == 0 && (*w < 1 || *w > 100)) {
        size_t s = ks_dec_push(d, "weight");
        rc = ks_dec_fail(d, ks_yaml_get(n, "weight") ? ks_yaml_get(n, "weight") : n, 0,
                         "must be in the range 1-100");
        ks_dec_pop(d, s);
    }
    return rc;
}

static int pod_affinity(struct ks_decoder *d, const struct ks_yaml_node *aff, const char *key,
                        struct ks_pod_affinity **out)
{
    const struct ks_yaml_node *pa = NULL, *req = NULL, *pref = NULL;
    int rc = ks_dec_map(d, aff, key, &pa);
    if (rc || !pa)
        return rc;
    size_t saved = ks_dec_push(d, key);
    struct ks_pod_affinity *p = ks_arena_alloc(d->arena, sizeof(*p));
    if (!p)
        return ks_dec_nomem(d);
    if ((rc = ks_dec_seq(d, pa, "requiredDuringSchedulingIgnoredDuringExecution", &req)) ||
        (rc = ks_dec_seq(d, pa, "preferredDuringSchedulingIgnoredDuringExecution", &pref)))
        return rc;
    if (req) {
        p->nrequired = req->n;
        if (!(p->required = ks_arena_calloc(d->arena, req->n ? req->n : 1, sizeof(*p->required))))
            return ks_dec_nomem(d);
        size_t s2 = ks_dec_push(d, "requiredDuringSchedulingIgnoredDuringExecution");
        for (uint32_t i = 0; i < req->n; i++) {
            size_t s3 = ks_dec_push_index(d, i);
            if ((rc = pod_affinity_term(d, req->items[i], &p->required[i])))
                return rc;
            ks_dec_pop(d, s3);
        }
        ks_dec_pop(d, s2);
    }
    if (pref) {
        p->npreferred = pref->n;
        if (!(p->preferred = ks_arena_calloc(d->arena, pref->n ? pref->n : 1, sizeof(*p->preferred))))
            return ks_dec_nomem(d);
        size_t s2 = ks_dec_push(d, "preferredDuringSchedulingIgnoredDuringExecution");
        for (uint32_t i = 0; i < pref->n; i++) {
            const struct ks_yaml_node *wn = pref->items[i], *tn = NULL;
            size_t s3 = ks_dec_push_index(d, i);
            if (wn->kind != KS_YAML_MAP)
                return ks_dec_fail(d, wn, 0, "expected a map, found %s", ks_yaml_kind_name(wn));
            if ((rc = weight(d, wn, &p->preferred[i].weight)) || (rc = ks_dec_map(d, wn, "podAffinityTerm", &tn)))
                return rc;
            if (!tn)
                return required(d, wn, "podAffinityTerm");
            size_t s4 = ks_dec_push(d, "podAffinityTerm");
            if ((rc = pod_affinity_term(d, tn, &p->preferred[i].term)))
                return rc;
            ks_dec_pop(d, s4);
            ks_dec_pop(d, s3);
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    *out = p;
    return 0;
}

static int node_affinity(struct ks_decoder *d, const struct ks_yaml_node *aff, struct ks_node_affinity **out)
{
    const struct ks_yaml_node *na = NULL, *pref = NULL;
    int rc = ks_dec_map(d, aff, "nodeAffinity", &na);
    if (rc || !na)
        return rc;
    size_t saved = ks_dec_push(d, "nodeAffinity");
    struct ks_node_affinity *a = ks_arena_alloc(d->arena, sizeof(*a));
    if (!a)
        return ks_dec_nomem(d);
    if ((rc = ks_dec_node_selector(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &a->required)) ||
        (rc = ks_dec_seq(d, na, "preferredDuringSchedulingIgnoredDuringExecution", &pref)))
        return rc;
    if (pref) {
        a->npreferred = pref->n;
        if (!(a->preferred = ks_arena_calloc(d->arena, pref->n ? pref->n : 1, sizeof(*a->preferred))))
            return ks_dec_nomem(d);
        size_t s2 = ks_dec_push(d, "preferredDuringSchedulingIgnoredDuringExecution");
        for (uint32_t i = 0; i < pref->n; i++) {
            const struct ks_yaml_node *wn = pref->items[i], *tn = NULL;
            size_t s3 = ks_dec_push_index(d, i);
            if (wn->kind != KS_YAML_MAP)
                return ks_dec_fail(d, wn, 0, "expected a map, found %s", ks_yaml_kind_name(wn));
            if ((rc = weight(d, wn, &a->preferred[i].weight)) || (rc = ks_dec_map(d, wn, "preference", &tn)))
                return rc;
            if (!tn)
                return required(d, wn, "preference");
            size_t s4 = ks_dec_push(d, "preference");
            if ((rc = ks_dec_node_selector_term(d, tn, &a->preferred[i].term)))
                return rc;
            ks_dec_pop(d, s4);
            ks_dec_pop(d, s3);
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    *out = a;
    return 0;
}

static int affinity(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_affinity *out)
{
    const struct ks_yaml_node *aff = NULL;
    int rc = ks_dec_map(d, spec, "affinity", &aff);
    if (rc || !aff)
        return rc;
    size_t saved = ks_dec_push(d, "affinity");
    if ((rc = node_affinity(d, aff, &out->node_affinity)) ||
        (rc = pod_affinity(d, aff, "podAffinity", &out->pod_affinity)) ||
        (rc = pod_affinity(d, aff, "podAntiAffinity", &out->pod_anti_affinity)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

static int tolerations(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod *pod)
{
    static const char *const ops[] = {"Equal", "Exists", "", NULL};
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, spec, "tolerations", &seq);
    if (rc || !seq)
        return rc;
    pod->ntolerations = seq->n;
    if (!(pod->tolerations = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*pod->tolerations))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "tolerations");
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *tn = seq->items[i];
        struct ks_toleration *t = &pod->tolerations[i];
        int op = 0, effect = KS_EFFECT_NONE;
        size_t s2 = ks_dec_push_index(d, i);
        if (tn->kind != KS_YAML_MAP)
            return ks_dec_fail(d, tn, 0, "expected a map, found %s", ks_yaml_kind_name(tn));
        t->toleration_seconds = -1;
        if ((rc = ks_dec_id(d, tn, "key", &t->key)) || (rc = ks_dec_enum(d, tn, "operator", ops, &op)) ||
            (rc = ks_dec_id(d, tn, "value", &t->value)) || (rc = ks_dec_enum(d, tn, "effect", effect_names, &effect)) ||
            (rc = ks_dec_int64(d, tn, "tolerationSeconds", &t->toleration_seconds)))
            return rc;
        t->op = op == 1 ? KS_TOLERATION_EXISTS : KS_TOLERATION_EQUAL;
        t->effect = (enum ks_taint_effect)effect;
        if (t->op == KS_TOLERATION_EXISTS && t->value != KS_ID_EMPTY) {
            ks_dec_push(d, "operator");
            return ks_dec_fail(d, tn, 0, "value must be empty when `operator` is 'Exists'");
        }
        if (t->op == KS_TOLERATION_EQUAL && t->key == KS_ID_EMPTY) {
            ks_dec_push(d, "operator");
            return ks_dec_fail(d, tn, 0, "operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int spread_constraints(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod *pod)
{
    static const char *const actions[] = {"DoNotSchedule", "ScheduleAnyway", NULL};
    static const char *const policies[] = {"", "Honor", "Ignore", NULL};
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, spec, "topologySpreadConstraints", &seq);
    if (rc || !seq)
        return rc;
    pod->nspread = seq->n;
    if (!(pod->spread = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*pod->spread))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "topologySpreadConstraints");
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *cn = seq->items[i];
        struct ks_spread_constraint *c = &pod->spread[i];
        int action = -1, nap = 0, ntp = 0;
        size_t s2 = ks_dec_push_index(d, i);
        if (cn->kind != KS_YAML_MAP)
            return ks_dec_fail(d, cn, 0, "expected a map, found %s", ks_yaml_kind_name(cn));
        c->topology_key = KS_ID_EMPTY;
        if ((rc = ks_dec_int32(d, cn, "maxSkew", &c->max_skew)) ||
            (rc = ks_dec_id(d, cn, "topologyKey", &c->topology_key)) ||
            (rc = ks_dec_enum(d, cn, "whenUnsatisfiable", actions, &action)) ||
            (rc = ks_dec_label_selector(d, cn, "labelSelector", &c->selector)) ||
            (rc = ks_dec_int32(d, cn, "minDomains", &c->min_domains)) ||
            (rc = ks_dec_enum(d, cn, "nodeAffinityPolicy", policies, &nap)) ||
            (rc = ks_dec_enum(d, cn, "nodeTaintsPolicy", policies, &ntp)) ||
            (rc = ks_dec_id_list(d, cn, "matchLabelKeys", &c->nmatch_label_keys, &c->match_label_keys)))
            return rc;
        if (c->max_skew <= 0) {
            ks_dec_push(d, "maxSkew");
            return ks_dec_fail(d, ks_yaml_get(cn, "maxSkew") ? ks_yaml_get(cn, "maxSkew") : cn, 0,
                               "must be greater than zero");
        }
        if (c->topology_key == KS_ID_EMPTY)
            return required(d, cn, "topologyKey");
        if (action < 0)
            return required(d, cn, "whenUnsatisfiable");
        c->when_unsatisfiable = (enum ks_unsatisfiable_action)action;
        c->node_affinity_policy = (enum ks_inclusion_policy)nap;
        c->node_taints_policy = (enum ks_inclusion_policy)ntp;
        if (ks_yaml_get(cn, "minDomains") && !ks_yaml_is_null(ks_yaml_get(cn, "minDomains"))) {
            ks_dec_push(d, "minDomains");
            if (c->min_domains <= 0)
                return ks_dec_fail(d, ks_yaml_get(cn, "minDomains"), 0, "must be greater than zero");
            if (c->when_unsatisfiable != KS_DO_NOT_SCHEDULE)
                return ks_dec_fail(d, ks_yaml_get(cn, "minDomains"), 0,
                                   "can only use minDomains if whenUnsatisfiable=DoNotSchedule");
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

/* One volume source: @key names its map, @src/@ro the fields read from it. */
static int volume_source(struct ks_decoder *d, const struct ks_yaml_node *vn, const char *key, const char *src,
                         struct ks_volume *v, enum ks_volume_kind kind, const struct ks_yaml_node **out)
{
    const struct ks_yaml_node *m = NULL;
    int rc = ks_dec_map(d, vn, key, &m);
    if (rc || !m)
        return rc;
    size_t saved = ks_dec_push(d, key);
    v->kind = kind;
    if ((src && (rc = ks_dec_string(d, m, src, &v->source))) || (rc = ks_dec_bool(d, m, "readOnly", &v->read_only)))
        return rc;
    if (src && (!v->source || !v->source[0]))
        return required(d, m, src);
    ks_dec_pop(d, saved);
    *out = m;
    return 0;
}

static int volumes(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod *pod)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, spec, "volumes", &seq);
    if (rc || !seq)
        return rc;
    pod->nvolumes = seq->n;
    if (!(pod->volumes = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(*pod->volumes))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "volumes");
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *vn = seq->items[i], *m = NULL;
        struct ks_volume *v = &pod->volumes[i];
        size_t s2 = ks_dec_push_index(d, i);
        if (vn->kind != KS_YAML_MAP)
            return ks_dec_fail(d, vn, 0, "expected a map, found %s", ks_yaml_kind_name(vn));
        if ((rc = ks_dec_string(d, vn, "name", &v->name)))
            return rc;
        if (!v->name)
            return required(d, vn, "name");
        v->kind = KS_VOLUME_OTHER;
        if ((rc = volume_source(d, vn, "persistentVolumeClaim", "claimName", v, KS_VOLUME_PVC, &m)) ||
            (rc = volume_source(d, vn, "gcePersistentDisk", "pdName", v, KS_VOLUME_GCE_PD, &m)) ||
            (rc = volume_source(d, vn, "awsElasticBlockStore", "volumeID", v, KS_VOLUME_AWS_EBS, &m)))
            return rc;
        m = NULL;
        if ((rc = volume_source(d, vn, "rbd", "image", v, KS_VOLUME_RBD, &m)))
            return rc;
        if (m) {
            size_t s3 = ks_dec_push(d, "rbd");
            v->pool = "rbd";
            if ((rc = ks_dec_string(d, m, "pool", &v->pool)) ||
                (rc = ks_dec_string_list(d, m, "monitors", &v->nmonitors, &v->monitors)))
                return rc;
            ks_dec_pop(d, s3);
        }
        m = NULL;
        if ((rc = volume_source(d, vn, "iscsi", "iqn", v, KS_VOLUME_ISCSI, &m)))
            return rc;
        if (m) {
            size_t s3 = ks_dec_push(d, "iscsi");
            if ((rc = ks_dec_string(d, m, "targetPortal", &v->target)) || (rc = ks_dec_int32(d, m, "lun", &v->lun)))
                return rc;
            ks_dec_pop(d, s3);
        }
        m = NULL;
        if ((rc = volume_source(d, vn, "ephemeral", NULL, v, KS_VOLUME_EPHEMERAL, &m)))
            return rc;
        if (m) {
            /* the ephemeral volume controller names the claim <pod>-<volume> */
            size_t len = strlen(pod->meta.name) + strlen(v->name) + 2;
            char *claim = ks_arena_alloc(d->arena, len);
            if (!claim)
                return ks_dec_nomem(d);
            snprintf(claim, len, "%s-%s", pod->meta.name, v->name);
            v->source = claim;
        }
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int gates(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod *pod)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, spec, "schedulingGates", &seq);
    if (rc || !seq)
        return rc;
    pod->ngates = seq->n;
    if (!(pod->scheduling_gates = ks_arena_calloc(d->arena, seq->n ? seq->n : 1, sizeof(char *))))
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, "schedulingGates");
    for (uint32_t i = 0; i < seq->n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if (seq->items[i]->kind != KS_YAML_MAP)
            return ks_dec_fail(d, seq->items[i], 0, "expected a map, found %s", ks_yaml_kind_name(seq->items[i]));
        if ((rc = ks_dec_string(d, seq->items[i], "name", &pod->scheduling_gates[i])))
            return rc;
        if (!pod->scheduling_gates[i])
            return required(d, seq->items[i], "name");
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int spec(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_pod *pod)
{
    static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
    const struct ks_yaml_node *s = NULL;
    int policy = -1, rc;

    if ((rc = ks_dec_map(d, doc, "spec", &s)))
        return rc;
    if (!s)
        return required(d, doc, "spec");
    size_t saved = ks_dec_push(d, "spec");
    const struct ks_yaml_node *prio = ks_yaml_get(s, "priority");
    pod->has_priority = prio && !ks_yaml_is_null(prio);
    if ((rc = ks_dec_id(d, s, "nodeName", &pod->node_name)) ||
        (rc = ks_dec_id(d, s, "schedulerName", &pod->scheduler_name)) ||
        (rc = ks_dec_int32(d, s, "priority", &pod->priority)) ||
        (rc = ks_dec_string(d, s, "priorityClassName", &pod->priority_class_name)) ||
        (rc = ks_dec_enum(d, s, "preemptionPolicy", policies, &policy)) ||
        (rc = ks_dec_bool(d, s, "hostNetwork", &pod->host_network)) ||
        (rc = containers(d, s, "containers", false, pod->host_network, &pod->ncontainers, &pod->containers)) ||
        (rc = containers(d, s, "initContainers", true, pod->host_network, &pod->ninit_containers,
                         &pod->init_containers)) ||
        (rc = ks_dec_resources(d, s, "overhead", &pod->overhead)) ||
        (rc = ks_dec_labels(d, s, "nodeSelector", &pod->node_selector)) || (rc = affinity(d, s, &pod->affinity)) ||
        (rc = tolerations(d, s, pod)) || (rc = spread_constraints(d, s, pod)) || (rc = volumes(d, s, pod)) ||
        (rc = gates(d, s, pod)))
        return rc;
    if (pod->ncontainers == 0)
        return required(d, s, "containers");
    if (pod->scheduler_name == KS_ID_EMPTY)
        pod->scheduler_name = ks_wk.default_scheduler;
    pod->has_preemption_policy = policy >= 0;
    pod->preemption_policy = policy == 1 ? KS_PREEMPT_NEVER : KS_PREEMPT_LOWER_PRIORITY;
    ks_dec_pop(d, saved);
    return 0;
}

static int status(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_pod *pod)
{
    const struct ks_yaml_node *s = NULL, *conds = NULL;
    int phase = KS_PHASE_PENDING, rc;

    if ((rc = ks_dec_map(d, doc, "status", &s)) || !s)
        return rc;
    size_t saved = ks_dec_push(d, "status");
    if ((rc = ks_dec_enum(d, s, "phase", phase_names, &phase)) ||
        (rc = ks_dec_id(d, s, "nominatedNodeName", &pod->nominated_node_name)) ||
        (rc = ks_dec_time(d, s, "startTime", &pod->start_time)) || (rc = ks_dec_seq(d, s, "conditions", &conds)))
        return rc;
    pod->phase = (enum ks_pod_phase)phase;
    if (conds) {
        pod->nconditions = conds->n;
        if (!(pod->conditions = ks_arena_calloc(d->arena, conds->n ? conds->n : 1, sizeof(*pod->conditions))))
            return ks_dec_nomem(d);
        ks_dec_push(d, "conditions");
        for (uint32_t i = 0; i < conds->n; i++) {
            struct ks_pod_condition *c = &pod->conditions[i];
            size_t s2 = ks_dec_push_index(d, i);
            if ((rc = ks_dec_string(d, conds->items[i], "type", &c->type)) ||
                (rc = ks_dec_string(d, conds->items[i], "status", &c->status)) ||
                (rc = ks_dec_string(d, conds->items[i], "reason", &c->reason)))
                return rc;
            ks_dec_pop(d, s2);
        }
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int pod_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_pod *pod)
{
    int rc;

    pod->start_time = KS_TIME_NONE;
    pod->phase = KS_PHASE_PENDING;
    if ((rc = ks_dec_meta(d, doc, true, &pod->meta)) || (rc = spec(d, doc, pod)) || (rc = status(d, doc, pod)))
        return rc;
    return ks_pod_finish(pod) < 0 ? ks_dec_nomem(d) : 0;
}

KS_DEFINE_DECODER(ks_decode_pod, struct ks_pod, ks_pod_destroy, pod_body)
