/*
 * decode_workloads.c - Service, ReplicationController (v1), ReplicaSet and StatefulSet
 * (apps/v1): the selectors that helper.DefaultSelector merges for default topology
 * spreading (PodTopologySpread's system defaults, SelectorSpread).
 *
 * Only the selectors are kept. Defaulting and validation follow the API server, since a
 * manifest read here stands for an object it would have admitted:
 *  - ReplicationController: SetDefaults_ReplicationController copies
 *    spec.template.metadata.labels into an empty spec.selector; ValidateNonEmptySelector
 *    then requires one ("spec.selector: Required value").
 *  - ReplicaSet and StatefulSet: spec.selector is required and must not be empty
 *    (ValidateReplicaSetSpec / ValidateStatefulSetSpec); its syntax is checked by
 *    ks_dec_label_selector.
 *  - Service: a missing spec.selector is kept apart from an empty one, because upstream's
 *    GetPodServices skips nil selectors but lets an empty one select every pod.
 */
#include "ksched/api.h"
#include "ksched/internal/decode.h"

static int service_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_service *svc)
{
    const struct ks_yaml_node *spec = NULL;
    int rc;

    if ((rc = ks_dec_meta(d, doc, true, &svc->meta)) || (rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    if (!spec)
        return 0;
    size_t saved = ks_dec_push(d, "spec");
    svc->has_selector = !ks_yaml_is_null(ks_yaml_get(spec, "selector"));
    if ((rc = ks_dec_labels(d, spec, "selector", &svc->selector)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

/* spec.template.metadata.labels of a workload, left alone when absent. */
static int template_labels(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_labels *out)
{
    const struct ks_yaml_node *tmpl = NULL, *meta = NULL;
    int rc;

    if ((rc = ks_dec_map(d, spec, "template", &tmpl)) || !tmpl)
        return rc;
    size_t saved = ks_dec_push(d, "template");
    if ((rc = ks_dec_map(d, tmpl, "metadata", &meta)))
        return rc;
    if (meta) {
        size_t s2 = ks_dec_push(d, "metadata");
        if ((rc = ks_dec_labels(d, meta, "labels", out)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int rc_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_replication_controller *rc)
{
    const struct ks_yaml_node *spec = NULL;
    struct ks_labels tmpl = {0};
    int err;

    if ((err = ks_dec_meta(d, doc, true, &rc->meta)) || (err = ks_dec_map(d, doc, "spec", &spec)))
        return err;
    if (!spec)
        return ks_dec_required(d, doc, "spec");
    size_t saved = ks_dec_push(d, "spec");
    if ((err = ks_dec_labels(d, spec, "selector", &rc->selector)) || (err = template_labels(d, spec, &tmpl)))
        return err;
    if (rc->selector.n == 0)
        rc->selector = tmpl;
    if (rc->selector.n == 0)
        return ks_dec_required(d, spec, "selector");
    ks_dec_pop(d, saved);
    return 0;
}

/* spec.selector of a ReplicaSet or StatefulSet: present and not empty. */
static int workload_selector(struct ks_decoder *d, const struct ks_yaml_node *doc, const char *what,
                             struct ks_label_selector **out)
{
    const struct ks_yaml_node *spec = NULL;
    int rc;

    if ((rc = ks_dec_map(d, doc, "spec", &spec)))
        return rc;
    if (!spec)
        return ks_dec_required(d, doc, "spec");
    size_t saved = ks_dec_push(d, "spec");
    if ((rc = ks_dec_label_selector(d, spec, "selector", out)))
        return rc;
    if (!*out)
        return ks_dec_required(d, spec, "selector");
    if ((*out)->nreqs == 0) {
        ks_dec_push(d, "selector");
        return ks_dec_fail(d, ks_yaml_get(spec, "selector"), 0,
                           "Invalid value: {}: empty selector is invalid for %s", what);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int replica_set_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_replica_set *rs)
{
    int rc = ks_dec_meta(d, doc, true, &rs->meta);
    return rc ? rc : workload_selector(d, doc, "deployment", &rs->selector);
}

static int stateful_set_body(struct ks_decoder *d, const struct ks_yaml_node *doc, struct ks_stateful_set *ss)
{
    int rc = ks_dec_meta(d, doc, true, &ss->meta);
    return rc ? rc : workload_selector(d, doc, "statefulset", &ss->selector);
}

KS_DEFINE_DECODER(ks_decode_service, struct ks_service, ks_service_destroy, service_body)
KS_DEFINE_DECODER(ks_decode_replication_controller, struct ks_replication_controller,
                  ks_replication_controller_destroy, rc_body)
KS_DEFINE_DECODER(ks_decode_replica_set, struct ks_replica_set, ks_replica_set_destroy, replica_set_body)
KS_DEFINE_DECODER(ks_decode_stateful_set, struct ks_stateful_set, ks_stateful_set_destroy, stateful_set_body)
