/*
 * config_load.c - reading a KubeSchedulerConfiguration file and running the load stages.
 *
 * Implements ks_config_load_*() and ks_config_destroy() (include/ksched/internal/config.h), and the
 * strict decoding stage: the document is decoded as kube-scheduler's versioned types
 * (staging/src/k8s.io/kube-scheduler/config/{v1,v1beta3,v1beta2}/types.go) with the
 * scheme's strict decoder, so a field the version does not have is an error naming it.
 * Pointer fields of the versioned types ("unset" versus zero) are tracked as the nodes
 * that were present; defaulting (config_defaults.c) fills what is unset.
 *
 * Stages after decoding, in upstream's order: SetDefaults_KubeSchedulerConfiguration
 * (scalars, profiles, merged plugins, default plugin args), ValidateKubeSchedulerConfiguration,
 * then what NewFramework checks for each profile and what the profile map checks across
 * profiles. The first failure stops the load and frees everything.
 */
#include "config_internal.h"

#include "ksched/internal/config_decode.h"
#include "ksched/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strict decoding ------------------------------------------------------------------------ */

/* The field's node when present and not null (a nil pointer in the versioned type). */
static const struct ks_yaml_node *present(const struct ks_yaml_node *map, const char *key)
{
    const struct ks_yaml_node *n = ks_yaml_get(map, key);
    return ks_yaml_is_null(n) ? NULL : n;
}

static int decode_float(struct ks__cfg_load *l, const struct ks_yaml_node *map, const char *key, float *out)
{
    const struct ks_yaml_node *n = present(map, key);
    char *end;

    if (!n)
        return 0;
    if (n->kind != KS_YAML_SCALAR || !n->plain)
        return ks_cfg_fail_at(&l->dec, n, 0, key, "expected a number, found %s",
                              n->kind == KS_YAML_SCALAR ? "a string" : ks_yaml_kind_name(n));
    errno = 0;
    *out = strtof(n->str, &end);
    if (errno || end == n->str || *end)
        return ks_cfg_fail_at(&l->dec, n, 0, key, "invalid number \"%s\"", n->str);
    return 0;
}

static int decode_plugin_list(struct ks__cfg_load *l, const struct ks_yaml_node *set, const char *key,
                              uint32_t *n, struct ks_plugin_ref **out)
{
    static const char *const fields[] = {"name", "weight", NULL};
    struct ks_decoder *d = &l->dec;
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, set, key, &seq);

    if (rc || !seq)
        return rc;
    struct ks_plugin_ref *refs = ks_arena_calloc(&l->cfg->arena, seq->n ? seq->n : 1, sizeof(*refs));
    if (!refs)
        return ks_dec_nomem(d);
    size_t saved = ks_dec_push(d, key);
    for (uint32_t i = 0; i < seq->n; i++) {
        const struct ks_yaml_node *item = seq->items[i];
        struct ks_plugin_ref *r = &refs[i];
        size_t s2 = ks_dec_push_index(d, i);
        r->name = "";
        if ((rc = ks_cfg_strict(d, item, fields)) || (rc = ks_dec_string(d, item, "name", &r->name)) ||
            (rc = ks_dec_int32(d, item, "weight", &r->weight)))
            return rc;
        r->has_weight = present(item, "weight") != NULL;
        r->weight_line = r->has_weight ? present(item, "weight")->line : 0;
        r->index = (int32_t)i;
        r->line = item->line;
        r->plugin = strcmp(r->name, "*") == 0 ? NULL : ks_registry_find(r->name);
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    *n = seq->n;
    *out = refs;
    return 0;
}

static int decode_plugins(struct ks__cfg_load *l, struct ks__profile_src *src)
{
    static const char *const set_fields[] = {"enabled", "disabled", NULL};
    const char *fields[KS_EXT_COUNT + 1] = {0};
    unsigned mask = ks__points_of_version(l->cfg->version);
    struct ks_decoder *d = &l->dec;
    int nf = 0, rc;

    for (int p = 0; p < KS_EXT_COUNT; p++) {
        if (mask & (1u << p))
            fields[nf++] = ks_ext_point_name((enum ks_ext_point)p);
    }
    size_t saved = ks_dec_push(d, "plugins");
    if ((rc = ks_cfg_strict(d, src->plugins, fields)))
        return rc;
    for (int p = 0; p < KS_EXT_COUNT; p++) {
        const struct ks_yaml_node *set = NULL;
        struct ks_plugin_set *ps = &src->custom.point[p];
        if (!(mask & (1u << p)))
            continue;
        if ((rc = ks_dec_map(d, src->plugins, ks_ext_point_name((enum ks_ext_point)p), &set)))
            return rc;
        if (!set)
            continue;
        size_t s2 = ks_dec_push(d, ks_ext_point_name((enum ks_ext_point)p));
        if ((rc = ks_cfg_strict(d, set, set_fields)) ||
            (rc = decode_plugin_list(l, set, "enabled", &ps->nenabled, &ps->enabled)) ||
            (rc = decode_plugin_list(l, set, "disabled", &ps->ndisabled, &ps->disabled)))
            return rc;
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    return 0;
}

static int decode_plugin_config(struct ks__cfg_load *l, struct ks_profile *prof, struct ks__profile_src *src)
{
    static const char *const fields[] = {"name", "args", NULL};
    struct ks_decoder *d = &l->dec;
    const struct ks_yaml_node *seq = src->plugin_config;
    uint32_t n = seq ? seq->n : 0;
    int rc;

    /* room for the file's entries and one defaulted entry per registered plugin */
    uint32_t cap = n + ks_registry_count();
    prof->plugin_config = ks_arena_calloc(&l->cfg->arena, cap, sizeof(*prof->plugin_config));
    src->args = ks_arena_calloc(&l->cfg->arena, n ? n : 1, sizeof(*src->args));
    if (!prof->plugin_config || !src->args)
        return ks_dec_nomem(d);
    if (!seq)
        return 0;
    size_t saved = ks_dec_push(d, "pluginConfig");
    for (uint32_t i = 0; i < n; i++) {
        struct ks_plugin_config *pc = &prof->plugin_config[i];
        size_t s2 = ks_dec_push_index(d, i);
        pc->name = "";
        if ((rc = ks_cfg_strict(d, seq->items[i], fields)) ||
            (rc = ks_dec_string(d, seq->items[i], "name", &pc->name)))
            return rc;
        pc->line = seq->items[i]->line;
        pc->plugin = ks_registry_find(pc->name);
        src->args[i] = present(seq->items[i], "args");
        ks_dec_pop(d, s2);
    }
    ks_dec_pop(d, saved);
    prof->nplugin_config = n;
    return 0;
}

static int decode_profile(struct ks__cfg_load *l, const struct ks_yaml_node *node, struct ks_profile *prof,
                          struct ks__profile_src *src)
{
    static const char *const fields_v1beta2[] = {"schedulerName", "plugins", "pluginConfig", NULL};
    static const char *const fields[] = {"schedulerName", "percentageOfNodesToScore", "plugins",
                                         "pluginConfig", NULL};
    struct ks_decoder *d = &l->dec;
    int rc;

    src->node = node;
    prof->line = node->line;
    if ((rc = ks_cfg_strict(d, node, l->cfg->version == KS_CONFIG_V1BETA2 ? fields_v1beta2 : fields)))
        return rc;
    src->name = present(node, "schedulerName");
    src->has_name = src->name != NULL;
    if ((rc = ks_dec_string(d, node, "schedulerName", &prof->scheduler_name)))
        return rc;
    src->percentage = present(node, "percentageOfNodesToScore");
    prof->has_percentage = src->percentage != NULL;
    if ((rc = ks_dec_int32(d, node, "percentageOfNodesToScore", &prof->percentage_of_nodes_to_score)))
        return rc;
    if ((rc = ks_dec_map(d, node, "plugins", &src->plugins)) ||
        (rc = ks_dec_seq(d, node, "pluginConfig", &src->plugin_config)))
        return rc;
    if (src->plugins && (rc = decode_plugins(l, src)))
        return rc;
    return decode_plugin_config(l, prof, src);
}

static int decode_profiles(struct ks__cfg_load *l)
{
    struct ks_config *cfg = l->cfg;
    struct ks_decoder *d = &l->dec;
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(d, l->doc, "profiles", &seq);

    if (rc)
        return rc;
    /* no profiles: defaulting adds one, so keep room for it */
    uint32_t n = seq && seq->n ? seq->n : 1;
    cfg->profiles = ks_arena_calloc(&cfg->arena, n, sizeof(*cfg->profiles));
    l->src = ks_arena_calloc(&cfg->arena, n, sizeof(*l->src));
    if (!cfg->profiles || !l->src)
        return ks_dec_nomem(d);
    if (!seq)
        return 0;
    size_t saved = ks_dec_push(d, "profiles");
    for (uint32_t i = 0; i < seq->n; i++) {
        size_t s2 = ks_dec_push_index(d, i);
        if ((rc = decode_profile(l, seq->items[i], &cfg->profiles[i], &l->src[i])))
            return rc;
        ks_dec_pop(d, s2);
        cfg->nprofiles = i + 1;
    }
    ks_dec_pop(d, saved);
    return 0;
}

/* The optional map @key of the document: strictly @fields, then @body with the path at it. */
static int decode_section(struct ks__cfg_load *l, const char *key, const char *const *fields,
                          int (*body)(struct ks__cfg_load *l, const struct ks_yaml_node *m))
{
    struct ks_decoder *d = &l->dec;
    const struct ks_yaml_node *m = NULL;
    int rc = ks_dec_map(d, l->doc, key, &m);

    if (rc || !m)
        return rc;
    size_t saved = ks_dec_push(d, key);
    if ((rc = ks_cfg_strict(d, m, fields)) || (rc = body(l, m)))
        return rc;
    ks_dec_pop(d, saved);
    return 0;
}

static const char *const leader_election_fields[] = {
    "leaderElect",  "leaseDuration", "renewDeadline",     "retryPeriod",
    "resourceLock", "resourceName",  "resourceNamespace", NULL};

static int decode_leader_election(struct ks__cfg_load *l, const struct ks_yaml_node *m)
{
    struct ks_leader_election *le = &l->cfg->leader_election;
    struct ks_decoder *d = &l->dec;
    int rc;

    l->leader_elect = present(m, "leaderElect");
    if ((rc = ks_dec_bool(d, m, "leaderElect", &le->leader_elect)) ||
        (rc = ks_cfg_duration(d, m, "leaseDuration", &le->lease_duration_ns)) ||
        (rc = ks_cfg_duration(d, m, "renewDeadline", &le->renew_deadline_ns)) ||
        (rc = ks_cfg_duration(d, m, "retryPeriod", &le->retry_period_ns)) ||
        (rc = ks_dec_string(d, m, "resourceLock", &le->resource_lock)) ||
        (rc = ks_dec_string(d, m, "resourceName", &le->resource_name)) ||
        (rc = ks_dec_string(d, m, "resourceNamespace", &le->resource_namespace)))
        return rc;
    return 0;
}

static const char *const client_connection_fields[] = {
    "kubeconfig", "acceptContentTypes", "contentType", "qps", "burst", NULL};

static int decode_client_connection(struct ks__cfg_load *l, const struct ks_yaml_node *m)
{
    struct ks_client_connection *cc = &l->cfg->client_connection;
    struct ks_decoder *d = &l->dec;
    int rc;

    if ((rc = ks_dec_string(d, m, "kubeconfig", &cc->kubeconfig)) ||
        (rc = ks_dec_string(d, m, "acceptContentTypes", &cc->accept_content_types)) ||
        (rc = ks_dec_string(d, m, "contentType", &cc->content_type)) ||
        (rc = decode_float(l, m, "qps", &cc->qps)) || (rc = ks_dec_int32(d, m, "burst", &cc->burst)))
        return rc;
    return 0;
}

/* Extenders call out over HTTP; ksched has no such client, so only an empty list is accepted. */
static int decode_extenders(struct ks__cfg_load *l)
{
    const struct ks_yaml_node *seq = NULL;
    int rc = ks_dec_seq(&l->dec, l->doc, "extenders", &seq);

    if (rc || !seq || seq->n == 0)
        return rc;
    return ks__cfg_fail(l, seq->items[0]->line, "extenders[0]",
                        "scheduler extenders are not supported by ksched");
}

static int decode_version(struct ks__cfg_load *l)
{
    const struct ks_yaml_node *av = present(l->doc, "apiVersion"), *kind = present(l->doc, "kind");
    char supported[256] = "";

    for (int v = KS_CONFIG_VERSION_COUNT - 1; v >= 0; v--) {
        size_t len = strlen(supported);
        snprintf(supported + len, sizeof(supported) - len, "%s\"%s\"", len ? ", " : "",
                 ks_config_version_name((enum ks_config_version)v));
    }
    if (!av)
        return ks__cfg_fail(l, ks__cfg_line(l, NULL), "apiVersion", "Required value: supported values: %s",
                            supported);
    if (av->kind != KS_YAML_SCALAR || ks_config_version_parse(av->str, &l->cfg->version) < 0)
        return ks__cfg_fail(l, av->line, "apiVersion", "Unsupported value: \"%s\": supported values: %s",
                            av->kind == KS_YAML_SCALAR ? av->str : ks_yaml_kind_name(av), supported);
    if (!kind)
        return ks__cfg_fail(l, ks__cfg_line(l, NULL), "kind", "Required value: must be \"%s\"",
                            KS_CONFIG_KIND);
    if (kind->kind != KS_YAML_SCALAR || strcmp(kind->str, KS_CONFIG_KIND) != 0)
        return ks__cfg_fail(l, kind->line, "kind", "Unsupported value: \"%s\": supported values: \"%s\"",
                            kind->kind == KS_YAML_SCALAR ? kind->str : ks_yaml_kind_name(kind),
                            KS_CONFIG_KIND);
    return 0;
}

int ks__config_decode(struct ks__cfg_load *l)
{
    static const char *const fields_v1beta2[] = {
        "apiVersion",
        "kind",
        "parallelism",
        "leaderElection",
        "clientConnection",
        "healthzBindAddress",
        "metricsBindAddress",
        "enableProfiling",
        "enableContentionProfiling",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "profiles",
        "extenders",
        NULL,
    };
    static const char *const fields[] = {
        "apiVersion",
        "kind",
        "parallelism",
        "leaderElection",
        "clientConnection",
        "enableProfiling",
        "enableContentionProfiling",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "profiles",
        "extenders",
        "delayCacheUntilActive",
        NULL,
    };
    struct ks_config *cfg = l->cfg;
    struct ks_decoder *d = &l->dec;
    int rc;

    if (l->doc->kind != KS_YAML_MAP)
        return ks__cfg_fail(l, l->doc->line, NULL, "expected a map, found %s", ks_yaml_kind_name(l->doc));
    if ((rc = decode_version(l)))
        return rc;
    bool v1beta2 = cfg->version == KS_CONFIG_V1BETA2;
    if ((rc = ks_cfg_strict(d, l->doc, v1beta2 ? fields_v1beta2 : fields)))
        return rc;

    l->parallelism = present(l->doc, "parallelism");
    l->percentage = present(l->doc, "percentageOfNodesToScore");
    l->initial_backoff = present(l->doc, "podInitialBackoffSeconds");
    l->max_backoff = present(l->doc, "podMaxBackoffSeconds");
    l->enable_profiling = present(l->doc, "enableProfiling");
    l->enable_contention_profiling = present(l->doc, "enableContentionProfiling");
    if ((rc = ks_dec_int32(d, l->doc, "parallelism", &cfg->parallelism)) ||
        (rc = decode_section(l, "leaderElection", leader_election_fields, decode_leader_election)) ||
        (rc = decode_section(l, "clientConnection", client_connection_fields, decode_client_connection)) ||
        (rc = ks_dec_string(d, l->doc, "healthzBindAddress", &cfg->healthz_bind_address)) ||
        (rc = ks_dec_string(d, l->doc, "metricsBindAddress", &cfg->metrics_bind_address)) ||
        (rc = ks_dec_bool(d, l->doc, "enableProfiling", &cfg->enable_profiling)) ||
        (rc = ks_dec_bool(d, l->doc, "enableContentionProfiling", &cfg->enable_contention_profiling)) ||
        (rc = ks_dec_int32(d, l->doc, "percentageOfNodesToScore", &cfg->percentage_of_nodes_to_score)) ||
        (rc = ks_dec_int64(d, l->doc, "podInitialBackoffSeconds", &cfg->pod_initial_backoff_seconds)) ||
        (rc = ks_dec_int64(d, l->doc, "podMaxBackoffSeconds", &cfg->pod_max_backoff_seconds)) ||
        (rc = decode_profiles(l)) || (rc = decode_extenders(l)) ||
        (rc = ks_dec_bool(d, l->doc, "delayCacheUntilActive", &cfg->delay_cache_until_active)))
        return rc;
    return 0;
}

/* ---- the load --------------------------------------------------------------------------------- */

static int run_stages(struct ks__cfg_load *l)
{
    int rc;

    if ((rc = ks__config_decode(l)))
        return rc;
    ks__config_default_scalars(l);
    if ((rc = ks__config_default_profiles(l)))
        return rc;
    for (uint32_t i = 0; i < l->cfg->nprofiles; i++) {
        if ((rc = ks__config_merge(l, i)) || (rc = ks__config_plugin_config(l, i)))
            return rc;
    }
    if ((rc = ks__config_validate(l)))
        return rc;
    for (uint32_t i = 0; i < l->cfg->nprofiles; i++) {
        if ((rc = ks__config_resolve(l, i)))
            return rc;
    }
    return ks__config_validate_queue_sorts(l);
}

static int load_stream(const char *file, const struct ks_yaml_stream *s, struct ks_config **out,
                       struct ks_error *err)
{
    static const struct ks_yaml_node empty = {.kind = KS_YAML_MAP, .line = 1};
    struct ks__cfg_load l = {.file = file, .err = err, .doc = &empty};
    int rc;

    for (uint32_t i = 0; i < s->ndocs; i++) {
        if (!s->docs[i])
            continue;
        if (l.doc != &empty)
            return ks_error_set(err, file, s->docs[i]->line, NULL,
                                "expected one KubeSchedulerConfiguration document, found another");
        l.doc = s->docs[i];
    }
    rc = -ENOMEM;
    if (!(l.cfg = calloc(1, sizeof(*l.cfg))))
        goto err_alloc;
    ks_decoder_init(&l.dec, file, &l.cfg->arena, err);
    if ((rc = run_stages(&l)) < 0)
        goto err_stages;
    *out = l.cfg;
    return 0;

err_stages:
    ks_config_destroy(l.cfg);
err_alloc:
    if (rc == -ENOMEM)
        ks_error_set(err, file, 0, NULL, "out of memory");
    return rc;
}

int ks_config_load_yaml(const char *file, const char *buf, size_t len, struct ks_config **out,
                        struct ks_error *err)
{
    struct ks_yaml_stream *s = NULL;
    int rc = ks_yaml_parse(file, buf, len, &s, err);

    if (rc == 0)
        rc = load_stream(file, s, out, err);
    ks_yaml_stream_destroy(s);
    return rc;
}

int ks_config_load_file(const char *path, struct ks_config **out, struct ks_error *err)
{
    struct ks_yaml_stream *s = NULL;
    int rc = ks_yaml_parse_file(path, &s, err);

    if (rc == 0)
        rc = load_stream(ks_yaml_file_name(path), s, out, err);
    ks_yaml_stream_destroy(s);
    return rc;
}

int ks_config_load_default(struct ks_config **out)
{
    static const char doc[] =
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
    struct ks_error err = {0};
    int rc = ks_config_load_yaml("<default>", doc, sizeof(doc) - 1, out, &err);
    return rc < 0 ? -ENOMEM : 0;
}

void ks_config_destroy(struct ks_config *cfg)
{
    if (!cfg)
        return;
    for (uint32_t i = 0; i < cfg->nprofiles; i++) {
        struct ks_profile *prof = &cfg->profiles[i];
        for (uint32_t j = 0; prof->plugin_config && j < prof->nplugin_config; j++) {
            struct ks_plugin_config *pc = &prof->plugin_config[j];
            if (pc->args && pc->plugin && pc->plugin->args_destroy)
                pc->plugin->args_destroy(pc->args);
        }
    }
    ks_arena_destroy(&cfg->arena);
    free(cfg);
}
