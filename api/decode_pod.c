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
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/features.h"
#include "ksched/name_check.h"

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

static int container_port(struct ks_decoder *d, const struct ks_yaml_node *pn, void *elem, void *ctx)
{
    static const char *const protocols[] = {"TCP", "UDP", "SCTP", NULL};
    struct ks_container_port *p = elem;
    const bool *host_network = ctx;
    int proto = KS_PROTO_TCP, rc;

    if ((rc = ks_dec_int32(d, pn, "containerPort", &p->container_port)) ||
        (rc = ks_dec_int32(d, pn, "hostPort", &p->host_port)) ||
        (rc = ks_dec_id(d, pn, "hostIP", &p->host_ip)) ||
        (rc = ks_dec_enum(d, pn, "protocol", protocols, &proto)))
        return rc;
    p->protocol = (enum ks_protocol)proto;
    if (p->host_port < 0 || p->host_port > 65535) {
        ks_dec_push(d, "hostPort");
        return ks_dec_fail(d, pn, 0, "must be between 0 and 65535, inclusive");
    }
    if (*host_network && p->host_port == 0)
        p->host_port = p->container_port;
    return 0;
}

struct container_ctx {
    bool init;
    bool host_network;
    const struct ks_pod *pod; /* its resourceClaims are decoded */
};

/* resources.claims[i]: validateResourceClaimNames (a pod claim's name, unique with its request). */
static int container_claim(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    const struct ks_pod *pod = ctx;
    struct ks_container_claim *c = elem;
    char names[512] = "", q[256];
    int rc;

    if ((rc = ks_dec_string(d, n, "name", &c->name)) || (rc = ks_dec_string(d, n, "request", &c->request)))
        return rc;
    if (!c->name || !c->name[0])
        return ks_dec_fail(d, n, 0, "Required value");
    for (uint32_t i = 0; i < pod->nclaims; i++) {
        if (strcmp(pod->claims[i].name, c->name) == 0)
            return 0;
    }
    /* the names as sets.List gives them: sorted, each once */
    for (const char *prev = NULL;;) {
        const char *next = NULL;
        for (uint32_t i = 0; i < pod->nclaims; i++) {
            const char *x = pod->claims[i].name;
            if ((!prev || strcmp(x, prev) > 0) && (!next || strcmp(x, next) < 0))
                next = x;
        }
        if (!next)
            break;
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", prev ? ", " : "", next);
        prev = next;
    }
    ks_go_quote(q, sizeof(q), c->name, strlen(c->name));
    if (pod->nclaims == 0)
        return ks_dec_fail(
            d, n, 0, "Not found: %s: must be one of the names in pod.spec.resourceClaims which is empty", q);
    return ks_dec_fail(d, n, 0, "Not found: %s: must be one of the names in pod.spec.resourceClaims: %s", q,
                       names);
}

static int container(struct ks_decoder *d, const struct ks_yaml_node *cn, void *elem, void *ctx)
{
    struct container_ctx *cx = ctx;
    struct ks_container *c = elem;
    const struct ks_yaml_node *res = NULL;
    const char *restart = NULL;
    int rc;

    if ((rc = ks_dec_string(d, cn, "name", &c->name)) || (rc = ks_dec_id(d, cn, "image", &c->image)) ||
        (rc = ks_dec_map(d, cn, "resources", &res)) || (rc = ks_dec_string(d, cn, "restartPolicy", &restart)))
        return rc;
    if (!c->name)
        return ks_dec_required(d, cn, "name");
    if (res) {
        size_t s3 = ks_dec_push(d, "resources");
        if ((rc = ks_dec_resources(d, res, "requests", &c->requests)) ||
            (rc = ks_dec_resources(d, res, "limits", &c->limits)) || (rc = default_requests(d, c)) ||
            (rc = ks_dec_list(d, res, "claims", sizeof(*c->claims), &c->nclaims, (void **)&c->claims,
                              container_claim, (void *)cx->pod)))
            return rc;
        for (uint32_t i = 1; i < c->nclaims; i++) {
            for (uint32_t j = 0; j < i; j++) {
                const struct ks_container_claim *a = &c->claims[i], *b = &c->claims[j];
                if (strcmp(a->name, b->name) == 0 &&
                    strcmp(a->request ? a->request : "", b->request ? b->request : "") == 0) {
                    char key[512];
                    snprintf(key, sizeof(key), "%s%s%s", a->name, a->request && a->request[0] ? "/" : "",
                             a->request ? a->request : "");
                    ks_dec_push(d, "claims");
                    ks_dec_push_index(d, i);
                    char q[600];
                    ks_go_quote(q, sizeof(q), key, strlen(key));
                    return ks_dec_fail(d, res, 0, "Duplicate value: %s", q);
                }
            }
        }
        ks_dec_pop(d, s3);
    }
    if (restart) {
        if (!cx->init || strcmp(restart, "Always") != 0) {
            ks_dec_push(d, "restartPolicy");
            return ks_dec_fail(d, ks_yaml_get(cn, "restartPolicy"), 0,
                               cx->init ? "Unsupported value: \"%s\": supported values: \"Always\""
                                        : "Forbidden: may not be set for non-init containers (\"%s\")",
                               restart);
        }
        c->restart_always = true;
    }
    return ks_dec_list(d, cn, "ports", sizeof(*c->ports), &c->nports, (void **)&c->ports, container_port,
                       &cx->host_network);
}

static int containers(struct ks_decoder *d, const struct ks_yaml_node *spec, const char *key, bool init,
                      const struct ks_pod *pod, uint32_t *n, struct ks_container **out)
{
    struct container_ctx cx = {.init = init, .host_network = pod->host_network, .pod = pod};
    return ks_dec_list(d, spec, key, sizeof(**out), n, (void **)out, container, &cx);
}

/* A PodAffinityTerm map (an item function, as the required list holds them directly). */
static int pod_affinity_term(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_pod_affinity_term *t = elem;
    int rc;
    (void)ctx;
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

/* A weighted term {weight, @key: term}: @fn decodes the term into @term. */
static int weighted_term(struct ks_decoder *d, const struct ks_yaml_node *wn, const char *key, int32_t *w,
                         ks_dec_item_fn fn, void *term)
{
    const struct ks_yaml_node *tn = NULL;
    int rc;

    if ((rc = weight(d, wn, w)) || (rc = ks_dec_map(d, wn, key, &tn)))
        return rc;
    if (!tn)
        return ks_dec_required(d, wn, key);
    size_t s = ks_dec_push(d, key);
    if ((rc = fn(d, tn, term, NULL)))
        return rc;
    ks_dec_pop(d, s);
    return 0;
}

static int pod_preferred_term(struct ks_decoder *d, const struct ks_yaml_node *wn, void *elem, void *ctx)
{
    struct ks_weighted_pod_affinity_term *t = elem;
    (void)ctx;
    return weighted_term(d, wn, "podAffinityTerm", &t->weight, pod_affinity_term, &t->term);
}

static int node_selector_term(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    (void)ctx;
    return ks_dec_node_selector_term(d, n, elem);
}

static int node_preferred_term(struct ks_decoder *d, const struct ks_yaml_node *wn, void *elem, void *ctx)
{
    struct ks_preferred_term *t = elem;
    (void)ctx;
    return weighted_term(d, wn, "preference", &t->weight, node_selector_term, &t->term);
}

static int pod_affinity(struct ks_decoder *d, const struct ks_yaml_node *pa, void *elem, void *ctx)
{
    static const char *const req_key = "requiredDuringSchedulingIgnoredDuringExecution";
    static const char *const pref_key = "preferredDuringSchedulingIgnoredDuringExecution";
    struct ks_pod_affinity *p = elem;
    const struct ks_yaml_node *seq = NULL;
    int rc;

    (void)ctx;
    /* both lists' shapes are checked before either's items */
    if ((rc = ks_dec_seq(d, pa, req_key, &seq)) || (rc = ks_dec_seq(d, pa, pref_key, &seq)) ||
        (rc = ks_dec_list(d, pa, req_key, sizeof(*p->required), &p->nrequired, (void **)&p->required,
                          pod_affinity_term, NULL)) ||
        (rc = ks_dec_list(d, pa, pref_key, sizeof(*p->preferred), &p->npreferred, (void **)&p->preferred,
                          pod_preferred_term, NULL)))
        return rc;
    return 0;
}

static int node_affinity(struct ks_decoder *d, const struct ks_yaml_node *na, void *elem, void *ctx)
{
    struct ks_node_affinity *a = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_node_selector(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &a->required)) ||
        (rc = ks_dec_list(d, na, "preferredDuringSchedulingIgnoredDuringExecution", sizeof(*a->preferred),
                          &a->npreferred, (void **)&a->preferred, node_preferred_term, NULL)))
        return rc;
    return 0;
}

static int affinity(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_affinity *out)
{
    const struct ks_yaml_node *aff = NULL;
    int rc = ks_dec_map(d, spec, "affinity", &aff);
    if (rc || !aff)
        return rc;
    size_t saved = ks_dec_push(d, "affinity");
    if ((rc = ks_dec_object(d, aff, "nodeAffinity", sizeof(*out->node_affinity), (void **)&out->node_affinity,
                            node_affinity, NULL)) ||
        (rc = ks_dec_object(d, aff, "podAffinity", sizeof(*out->pod_affinity), (void **)&out->pod_affinity,
                            pod_affinity, NULL)) ||
        (rc = ks_dec_object(d, aff, "podAntiAffinity", sizeof(*out->pod_anti_affinity),
                            (void **)&out->pod_anti_affinity, pod_affinity, NULL)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

static int toleration(struct ks_decoder *d, const struct ks_yaml_node *tn, void *elem, void *ctx)
{
    static const char *const ops[] = {"Equal", "Exists", "", NULL};
    struct ks_toleration *t = elem;
    int op = 0, effect = KS_EFFECT_NONE, rc;

    (void)ctx;
    t->toleration_seconds = -1;
    if ((rc = ks_dec_id(d, tn, "key", &t->key)) || (rc = ks_dec_enum(d, tn, "operator", ops, &op)) ||
        (rc = ks_dec_id(d, tn, "value", &t->value)) ||
        (rc = ks_dec_enum(d, tn, "effect", effect_names, &effect)) ||
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
        return ks_dec_fail(
            d, tn, 0,
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
    }
    return 0;
}

static int spread_constraint(struct ks_decoder *d, const struct ks_yaml_node *cn, void *elem, void *ctx)
{
    static const char *const actions[] = {"DoNotSchedule", "ScheduleAnyway", NULL};
    static const char *const policies[] = {"", "Honor", "Ignore", NULL};
    struct ks_spread_constraint *c = elem;
    int action = -1, nap = 0, ntp = 0, rc;

    (void)ctx;
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
        return ks_dec_required(d, cn, "topologyKey");
    if (action < 0)
        return ks_dec_required(d, cn, "whenUnsatisfiable");
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
    return 0;
}

/* One volume source: @key names its map, @src/@ro the fields read from it. */
static int volume_source(struct ks_decoder *d, const struct ks_yaml_node *vn, const char *key,
                         const char *src, struct ks_volume *v, enum ks_volume_kind kind,
                         const struct ks_yaml_node **out)
{
    const struct ks_yaml_node *m = NULL;
    int rc = ks_dec_map(d, vn, key, &m);
    if (rc || !m)
        return rc;
    size_t saved = ks_dec_push(d, key);
    v->kind = kind;
    if ((src && (rc = ks_dec_string(d, m, src, &v->source))) ||
        (rc = ks_dec_bool(d, m, "readOnly", &v->read_only)))
        return rc;
    if (src && (!v->source || !v->source[0]))
        return ks_dec_required(d, m, src);
    ks_dec_pop(d, saved);
    *out = m;
    return 0;
}

static int volume(struct ks_decoder *d, const struct ks_yaml_node *vn, void *elem, void *ctx)
{
    const struct ks_pod *pod = ctx;
    struct ks_volume *v = elem;
    const struct ks_yaml_node *m = NULL;
    int rc;

    if ((rc = ks_dec_string(d, vn, "name", &v->name)))
        return rc;
    if (!v->name)
        return ks_dec_required(d, vn, "name");
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
        if ((rc = ks_dec_string(d, m, "targetPortal", &v->target)) ||
            (rc = ks_dec_int32(d, m, "lun", &v->lun)))
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
    return 0;
}

/*
 * spec.schedulingGroup (GenericWorkload): the PodGroup of the pod's namespace it belongs to,
 * podGroupName required and a DNS subdomain. With the gate off the API server drops the field
 * and kube-scheduler never reads it: it is ignored.
 */
static int scheduling_group(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_pod *pod)
{
    const struct ks_yaml_node *g = NULL;
    int rc;

    if (!ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD))
        return 0;
    if ((rc = ks_dec_map(d, spec, "schedulingGroup", &g)) || !g)
        return rc;
    size_t saved = ks_dec_push(d, "schedulingGroup");
    if ((rc = ks_dec_string(d, g, "podGroupName", &pod->scheduling_group)))
        return rc;
    if (!pod->scheduling_group || !*pod->scheduling_group)
        return ks_dec_required(d, g, "podGroupName");
    const char *why = ks_name_dns1123_subdomain(pod->scheduling_group, strlen(pod->scheduling_group));
    if (why)
        return ks_dec_invalid(d, ks_yaml_get(g, "podGroupName"), "podGroupName", pod->scheduling_group, why);
    ks_dec_pop(d, saved);
    return 0;
}

/* spec.resourceClaims[i]: validatePodResourceClaim (a DNS-1123 label; one source); unique_claims() follows.
 */
static int pod_claim(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_pod_claim *c = elem;
    const char *why;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, n, "name", &c->name)) ||
        (rc = ks_dec_string(d, n, "resourceClaimName", &c->claim_name)) ||
        (rc = ks_dec_string(d, n, "resourceClaimTemplateName", &c->template_name)))
        return rc;
    if (!c->name || !c->name[0])
        return ks_dec_required(d, n, "name");
    if ((why = ks_name_dns1123_label(c->name, strlen(c->name))))
        return ks_dec_invalid(d, ks_yaml_get(n, "name"), "name", c->name, why);
    if (!c->claim_name == !c->template_name) {
        char v[768];
        snprintf(v, sizeof(v),
                 "core.PodResourceClaim{Name:\"%s\", ResourceClaimName:%s%s%s, "
                 "ResourceClaimTemplateName:%s%s%s}",
                 c->name, c->claim_name ? "\"" : "(*string)(nil)", c->claim_name ? c->claim_name : "",
                 c->claim_name ? "\"" : "", c->template_name ? "\"" : "(*string)(nil)",
                 c->template_name ? c->template_name : "", c->template_name ? "\"" : "");
        return ks_dec_fail(
            d, n, 0, "Invalid value: %s: %s", v,
            c->claim_name
                ? "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
                : "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`");
    }
    const char *src = c->claim_name ? c->claim_name : c->template_name;
    if ((why = ks_name_dns1123_subdomain(src, strlen(src))))
        return ks_dec_invalid(
            d, ks_yaml_get(n, c->claim_name ? "resourceClaimName" : "resourceClaimTemplateName"),
            c->claim_name ? "resourceClaimName" : "resourceClaimTemplateName", src, why);
    return 0;
}

/* The first pod claim whose name an earlier one has: "Duplicate value" at its name. */
static int unique_claims(struct ks_decoder *d, const struct ks_yaml_node *spec, const struct ks_pod *pod)
{
    const struct ks_yaml_node *seq = ks_yaml_get(spec, "resourceClaims");
    char q[256];

    for (uint32_t i = 1; i < pod->nclaims; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(pod->claims[i].name, pod->claims[j].name) == 0) {
                ks_dec_push(d, "resourceClaims");
                ks_dec_push_index(d, i);
                ks_dec_push(d, "name");
                ks_go_quote(q, sizeof(q), pod->claims[i].name, strlen(pod->claims[i].name));
                return ks_dec_fail(d, ks_yaml_get(seq->items[i], "name"), 0, "Duplicate value: %s", q);
            }
        }
    }
    return 0;
}

static int pod_claim_status(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx)
{
    struct ks_pod_claim_status *c = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, n, "name", &c->name)) ||
        (rc = ks_dec_string(d, n, "resourceClaimName", &c->claim_name)))
        return rc;
    if (!c->name || !c->name[0])
        return ks_dec_required(d, n, "name");
    return 0;
}

static int gate(struct ks_decoder *d, const struct ks_yaml_node *gn, void *elem, void *ctx)
{
    const char **name = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, gn, "name", name)))
        return rc;
    if (!*name)
        return ks_dec_required(d, gn, "name");
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
        return ks_dec_required(d, doc, "spec");
    size_t saved = ks_dec_push(d, "spec");
    const struct ks_yaml_node *prio = ks_yaml_get(s, "priority");
    pod->has_priority = prio && !ks_yaml_is_null(prio);
    if ((rc = ks_dec_id(d, s, "nodeName", &pod->node_name)) ||
        (rc = ks_dec_id(d, s, "schedulerName", &pod->scheduler_name)) ||
        (rc = ks_dec_int32(d, s, "priority", &pod->priority)) ||
        (rc = ks_dec_string(d, s, "priorityClassName", &pod->priority_class_name)) ||
        (rc = ks_dec_enum(d, s, "preemptionPolicy", policies, &policy)) ||
        (rc = ks_dec_bool(d, s, "hostNetwork", &pod->host_network)) || (rc = scheduling_group(d, s, pod)) ||
        (rc = ks_dec_list(d, s, "resourceClaims", sizeof(*pod->claims), &pod->nclaims, (void **)&pod->claims,
                          pod_claim, NULL)) ||
        (rc = unique_claims(d, s, pod)) ||
        (rc = containers(d, s, "containers", false, pod, &pod->ncontainers, &pod->containers)) ||
        (rc = containers(d, s, "initContainers", true, pod, &pod->ninit_containers, &pod->init_containers)) ||
        (rc = ks_dec_resources(d, s, "overhead", &pod->overhead)) ||
        (rc = ks_dec_labels(d, s, "nodeSelector", &pod->node_selector)) ||
        (rc = affinity(d, s, &pod->affinity)) ||
        (rc = ks_dec_list(d, s, "tolerations", sizeof(*pod->tolerations), &pod->ntolerations,
                          (void **)&pod->tolerations, toleration, NULL)) ||
        (rc = ks_dec_list(d, s, "topologySpreadConstraints", sizeof(*pod->spread), &pod->nspread,
                          (void **)&pod->spread, spread_constraint, NULL)) ||
        (rc = ks_dec_list(d, s, "volumes", sizeof(*pod->volumes), &pod->nvolumes, (void **)&pod->volumes,
                          volume, pod)) ||
        (rc = ks_dec_list(d, s, "schedulingGates", sizeof(*pod->scheduling_gates), &pod->ngates,
                          (void **)&pod->scheduling_gates, gate, NULL)))
        return rc;
    if (pod->ncontainers == 0)
        return ks_dec_required(d, s, "containers");
    if (pod->scheduler_name == KS_ID_EMPTY)
        pod->scheduler_name = ks_wk.default_scheduler;
    pod->has_preemption_policy = policy >= 0;
    pod->preemption_policy = policy == 1 ? KS_PREEMPT_NEVER : KS_PREEMPT_LOWER_PRIORITY;
    ks_dec_pop(d, saved);
    return 0;
}

static int pod_condition(struct ks_decoder *d, const struct ks_yaml_node *cn, void *elem, void *ctx)
{
    struct ks_pod_condition *c = elem;
    int rc;

    (void)ctx;
    if ((rc = ks_dec_string(d, cn, "type", &c->type)) || (rc = ks_dec_string(d, cn, "status", &c->status)) ||
        (rc = ks_dec_string(d, cn, "reason", &c->reason)))
        return rc;
    return 0;
}

static int status(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_pod *pod)
{
    const struct ks_yaml_node *s = NULL;
    int phase = KS_PHASE_PENDING, rc;

    if ((rc = ks_dec_map(d, doc, "status", &s)) || !s)
        return rc;
    size_t saved = ks_dec_push(d, "status");
    if ((rc = ks_dec_enum(d, s, "phase", phase_names, &phase)) ||
        (rc = ks_dec_id(d, s, "nominatedNodeName", &pod->nominated_node_name)) ||
        (rc = ks_dec_time(d, s, "startTime", &pod->start_time)) ||
        (rc = ks_dec_list(d, s, "conditions", sizeof(*pod->conditions), &pod->nconditions,
                          (void **)&pod->conditions, pod_condition, NULL)) ||
        (rc = ks_dec_list(d, s, "resourceClaimStatuses", sizeof(*pod->claim_statuses), &pod->nclaim_statuses,
                          (void **)&pod->claim_statuses, pod_claim_status, NULL)))
        return rc;
    pod->phase = (enum ks_pod_phase)phase;
    ks_dec_pop(d, saved);
    return 0;
}

static int pod_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_pod *pod)
{
    int rc;

    pod->start_time = KS_TIME_NONE;
    pod->phase = KS_PHASE_PENDING;
    pod->refs = 1;
    if ((rc = ks_dec_meta(d, doc, true, &pod->meta)) || (rc = spec(d, doc, pod)) ||
        (rc = status(d, doc, pod)))
        return rc;
    return ks_pod_finish(pod) < 0 ? ks_dec_nomem(d) : 0;
}

KS_DEFINE_DECODER(ks_decode_pod, struct ks_pod, ks_pod_destroy, pod_body)
