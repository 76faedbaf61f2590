/*
 * serve_dra_json.c - the JSON of the ResourceClaim writes `ksched serve` makes for the
 * DynamicResources plugin (serve/serve.h; the requests and their retries are serve_dra.c's).
 *
 *   - An AllocationResult (resource.k8s.io/v1 types.go) from a struct ks_allocation, as Go's
 *     encoding/json writes it: devices {results, config} (devices always present, the lists
 *     omitted when empty), nodeSelector, allocationTimestamp (RFC 3339 in seconds, as
 *     metav1.Time marshals). Each result: request, driver, pool, device, then the optional
 *     adminAccess, tolerations, bindingConditions, bindingFailureConditions, shareID and
 *     consumedCapacity (canonical quantities); each config: source, requests, opaque
 *     {driver, parameters} with the parameters written as the JSON text the decoder kept.
 *     Node selector values are interned ids: In/NotIn values come in the order of their ids,
 *     Gt/Lt the integer they hold.
 *   - The claim as the server sent it, read for what bindClaim checks (resourceVersion,
 *     deletionTimestamp, finalizers, status.allocation and its allocationTimestamp), and
 *     edited into the bodies of the updates (kube/json_edit.c keeps every other field as the
 *     server sent it): the finalizer appended to metadata.finalizers; status.allocation set
 *     and the pod appended to status.reservedFor; status without allocation, reservedFor and
 *     devices at a given resourceVersion (PostFilter's deallocation).
 *   - Unreserve's strategic merge patch.
 *
 * Every function is pure: any thread, no locks; bodies are malloc'ed.
 */
#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/json_edit.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the AllocationResult ------------------------------------------------------------------- */

static void key(FILE *out, bool *first, const char *name)
{
    if (!*first)
        fputc(',', out);
    *first = false;
    ks_json_write_cstr(out, name);
    fputc(':', out);
}

static void string_list(FILE *out, const char *const *s, uint32_t n)
{
    fputc('[', out);
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            fputc(',', out);
        ks_json_write_cstr(out, s[i] ? s[i] : "");
    }
    fputc(']', out);
}

void ks_serve_dra_time(int64_t ns, char *buf, size_t len)
{
    int64_t secs = ns / 1000000000 - (ns % 1000000000 < 0); /* floor: the second it falls in */
    time_t t = (time_t)secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, "Z");
}

static int quantity_map(FILE *out, const struct ks_named_quantity *q, uint32_t n)
{
    char text[KS_QUANTITY_STR_MAX];
    fputc('{', out);
    for (uint32_t i = 0; i < n; i++) {
        if (ks_quantity_format(&q[i].value, text, sizeof(text)) < 0)
            return -ERANGE;
        if (i)
            fputc(',', out);
        ks_json_write_cstr(out, ks_intern_str(q[i].name));
        fputc(':', out);
        ks_json_write_cstr(out, text);
    }
    fputc('}', out);
    return 0;
}

static const char *const effect_name[] = {
    [KS_DEVICE_TAINT_NONE] = "None",
    [KS_DEVICE_TAINT_NO_SCHEDULE] = "NoSchedule",
    [KS_DEVICE_TAINT_NO_EXECUTE] = "NoExecute",
};

/* DeviceToleration: every field omitempty (operator defaulted to Equal by the decoder). */
static void toleration(FILE *out, const struct ks_device_toleration *t)
{
    bool first = true;
    fputc('{', out);
    if (t->key != KS_ID_EMPTY && t->key != KS_ID_NONE) {
        key(out, &first, "key");
        ks_json_write_cstr(out, ks_intern_str(t->key));
    }
    key(out, &first, "operator");
    ks_json_write_cstr(out, t->exists ? "Exists" : "Equal");
    if (!t->exists && t->value != KS_ID_EMPTY && t->value != KS_ID_NONE) {
        key(out, &first, "value");
        ks_json_write_cstr(out, ks_intern_str(t->value));
    }
    if (t->has_effect && (unsigned)t->effect < sizeof(effect_name) / sizeof(effect_name[0])) {
        key(out, &first, "effect");
        ks_json_write_cstr(out, effect_name[t->effect]);
    }
    if (t->toleration_seconds >= 0) {
        key(out, &first, "tolerationSeconds");
        fprintf(out, "%" PRId64, t->toleration_seconds);
    }
    fputc('}', out);
}

static int result(FILE *out, const struct ks_device_result *r)
{
    bool first = true;
    fputc('{', out);
    key(out, &first, "request");
    ks_json_write_cstr(out, r->request ? r->request : "");
    key(out, &first, "driver");
    ks_json_write_cstr(out, ks_intern_str(r->driver));
    key(out, &first, "pool");
    ks_json_write_cstr(out, ks_intern_str(r->pool));
    key(out, &first, "device");
    ks_json_write_cstr(out, ks_intern_str(r->device));
    if (r->has_admin_access) {
        key(out, &first, "adminAccess");
        fputs(r->admin_access ? "true" : "false", out);
    }
    if (r->ntolerations) {
        key(out, &first, "tolerations");
        fputc('[', out);
        for (uint32_t i = 0; i < r->ntolerations; i++) {
            if (i)
                fputc(',', out);
            toleration(out, &r->tolerations[i]);
        }
        fputc(']', out);
    }
    if (r->nbinding_conditions) {
        key(out, &first, "bindingConditions");
        string_list(out, r->binding_conditions, r->nbinding_conditions);
    }
    if (r->nbinding_failure_conditions) {
        key(out, &first, "bindingFailureConditions");
        string_list(out, r->binding_failure_conditions, r->nbinding_failure_conditions);
    }
    if (r->share_id) {
        key(out, &first, "shareID");
        ks_json_write_cstr(out, r->share_id);
    }
    if (r->nconsumed) {
        key(out, &first, "consumedCapacity");
        if (quantity_map(out, r->consumed, r->nconsumed) < 0)
            return -ERANGE;
    }
    fputc('}', out);
    return 0;
}

static void config(FILE *out, const struct ks_allocation_config *c)
{
    bool first = true;
    fputc('{', out);
    key(out, &first, "source");
    ks_json_write_cstr(out, c->from_class ? "FromClass" : "FromClaim");
    if (c->nrequests) {
        key(out, &first, "requests");
        string_list(out, c->requests, c->nrequests);
    }
    if (c->opaque.driver || c->opaque.parameters) {
        key(out, &first, "opaque");
        fputs("{\"driver\":", out);
        ks_json_write_cstr(out, c->opaque.driver ? c->opaque.driver : "");
        /* the raw JSON text of the parameters, as a RawExtension marshals */
        fprintf(out, ",\"parameters\":%s}",
                c->opaque.parameters && c->opaque.parameters[0] ? c->opaque.parameters : "null");
    }
    fputc('}', out);
}

static void requirements(FILE *out, const char *name, const struct ks_requirement *r, uint32_t n, bool *first)
{
    if (!n)
        return;
    key(out, first, name);
    fputc('[', out);
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            fputc(',', out);
        fputs("{\"key\":", out);
        ks_json_write_cstr(out, ks_intern_str(r[i].key));
        fputs(",\"operator\":", out);
        ks_json_write_cstr(out, ks_selector_op_name(r[i].op));
        if (r[i].op == KS_OP_GT || r[i].op == KS_OP_LT) {
            fprintf(out, ",\"values\":[\"%" PRId64 "\"]", r[i].number);
        } else if (r[i].nvalues) {
            fputs(",\"values\":[", out);
            for (uint32_t j = 0; j < r[i].nvalues; j++) {
                if (j)
                    fputc(',', out);
                ks_json_write_cstr(out, ks_intern_str(r[i].values[j]));
            }
            fputc(']', out);
        }
        fputc('}', out);
    }
    fputc(']', out);
}

static void node_selector(FILE *out, const struct ks_node_selector *s)
{
    fputs("{\"nodeSelectorTerms\":[", out);
    for (uint32_t i = 0; i < s->nterms; i++) {
        bool first = true;
        if (i)
            fputc(',', out);
        fputc('{', out);
        requirements(out, "matchExpressions", s->terms[i].exprs, s->terms[i].nexprs, &first);
        requirements(out, "matchFields", s->terms[i].fields, s->terms[i].nfields, &first);
        fputc('}', out);
    }
    fputs("]}", out);
}

int ks_serve_dra_allocation_json(FILE *out, const struct ks_allocation *a, int64_t stamp_ns)
{
    bool first = true;
    fputs("{\"devices\":{", out);
    if (a->nresults) {
        key(out, &first, "results");
        fputc('[', out);
        for (uint32_t i = 0; i < a->nresults; i++) {
            if (i)
                fputc(',', out);
            if (result(out, &a->results[i]) < 0)
                return -ERANGE;
        }
        fputc(']', out);
    }
    if (a->nconfig) {
        key(out, &first, "config");
        fputc('[', out);
        for (uint32_t i = 0; i < a->nconfig; i++) {
            if (i)
                fputc(',', out);
            config(out, &a->config[i]);
        }
        fputc(']', out);
    }
    fputc('}', out);
    if (a->node_selector) {
        fputs(",\"nodeSelector\":", out);
        node_selector(out, a->node_selector);
    }
    int64_t stamp = a->allocation_time != KS_TIME_NONE ? a->allocation_time : stamp_ns;
    if (stamp != KS_TIME_NONE) {
        char when[64];
        ks_serve_dra_time(stamp, when, sizeof(when));
        fprintf(out, ",\"allocationTimestamp\":\"%s\"", when);
    }
    fputc('}', out);
    return ferror(out) ? -EIO : 0;
}

/* @fn's JSON on a memory stream: 0 with the text in *@text (*@len bytes), or a negative errno. */
static int to_text(int (*fn)(FILE *out, const void *arg), const void *arg, char **text, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return -ENOMEM;
    int rc = fn(f, arg);
    if (!ks_serve_text_close(f, &buf))
        return -ENOMEM;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return 0;
}

struct alloc_arg {
    const struct ks_allocation *a;
    int64_t stamp_ns;
};

static int alloc_fn(FILE *out, const void *arg)
{
    const struct alloc_arg *x = arg;
    return ks_serve_dra_allocation_json(out, x->a, x->stamp_ns);
}

/* ---- the claim as the server sent it ----------------------------------------------------------- */

static const struct ks_yaml_node *dig(const struct ks_yaml_node *n, const char *a, const char *b)
{
    n = ks_yaml_get(n, a);
    return b ? ks_yaml_get(n, b) : n;
}

static bool present(const struct ks_yaml_node *n)
{
    return n && !ks_yaml_is_null(n);
}

static bool has_string(const struct ks_yaml_node *seq, const char *s)
{
    for (uint32_t i = 0; seq && seq->kind == KS_YAML_SEQ && i < seq->n; i++) {
        if (seq->items[i]->kind == KS_YAML_SCALAR && strcmp(seq->items[i]->str, s) == 0)
            return true;
    }
    return false;
}

static int parse(const char *body, size_t len, struct ks_yaml_stream **st)
{
    struct ks_error err = {0};
    int rc = ks_json_parse("claim", body, len, st, &err);
    if (rc < 0)
        return rc;
    if (!(*st)->docs[0] || (*st)->docs[0]->kind != KS_YAML_MAP) {
        ks_yaml_stream_destroy(*st);
        return -EINVAL;
    }
    return 0;
}

int ks_serve_dra_claim_read(const char *body, size_t len, struct ks_serve_dra_claim_view *v)
{
    struct ks_yaml_stream *st;
    int rc = parse(body, len, &st);
    if (rc < 0)
        return rc;
    const struct ks_yaml_node *doc = st->docs[0], *rv = dig(doc, "metadata", "resourceVersion");
    const struct ks_yaml_node *alloc = dig(doc, "status", "allocation");
    memset(v, 0, sizeof(*v));
    const struct ks_yaml_node *name = dig(doc, "metadata", "name"), *uid = dig(doc, "metadata", "uid");
    snprintf(v->rv, sizeof(v->rv), "%s", rv && rv->kind == KS_YAML_SCALAR ? rv->str : "");
    snprintf(v->name, sizeof(v->name), "%s", name && name->kind == KS_YAML_SCALAR ? name->str : "");
    snprintf(v->uid, sizeof(v->uid), "%s", uid && uid->kind == KS_YAML_SCALAR ? uid->str : "");
    v->deleting = present(dig(doc, "metadata", "deletionTimestamp"));
    v->finalizer = has_string(dig(doc, "metadata", "finalizers"), KS_DRA_FINALIZER);
    v->allocated = present(alloc) && alloc->kind == KS_YAML_MAP;
    v->stamped = v->allocated && present(ks_yaml_get(alloc, "allocationTimestamp"));
    ks_yaml_stream_destroy(st);
    return 0;
}

/* @seq's items (NULL or null: none) written back, then @extra (JSON text, NULL: none), as a list. */
static int list_plus(const struct ks_yaml_node *seq, const char *extra, char **text, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return -ENOMEM;
    fputc('[', f);
    uint32_t count = seq && seq->kind == KS_YAML_SEQ ? seq->n : 0;
    for (uint32_t i = 0; i < count; i++) {
        if (i)
            fputc(',', f);
        ks_yaml_write_json(f, seq->items[i]);
    }
    if (extra)
        fprintf(f, "%s%s", count ? "," : "", extra);
    fputc(']', f);
    if (!ks_serve_text_close(f, &buf))
        return -ENOMEM;
    *text = buf;
    *len = n;
    return 0;
}

int ks_serve_dra_finalizer_body(const char *claim, size_t len, char **out, size_t *out_len)
{
    static const char *const fin_path[] = {"metadata", "finalizers", NULL};
    struct ks_yaml_stream *st;
    char *list = NULL;
    size_t n;
    int rc = parse(claim, len, &st);
    if (rc < 0)
        return rc;
    rc = list_plus(dig(st->docs[0], "metadata", "finalizers"), "\"" KS_DRA_FINALIZER "\"", &list, &n);
    ks_yaml_stream_destroy(st);
    if (rc == 0) {
        struct ks_json_edit e = {.path = fin_path, .value = list};
        rc = ks_json_edit(claim, len, &e, 1, out, out_len);
    }
    free(list);
    return rc;
}

int ks_serve_dra_unfinalize_body(const char *claim, size_t len, char **out, size_t *out_len)
{
    static const char *const fin_path[] = {"metadata", "finalizers", NULL};
    struct ks_yaml_stream *st;
    char *list = NULL;
    size_t n = 0;
    int rc = parse(claim, len, &st);
    if (rc < 0)
        return rc;
    const struct ks_yaml_node *seq = dig(st->docs[0], "metadata", "finalizers");
    FILE *f = open_memstream(&list, &n);
    if (!f) {
        ks_yaml_stream_destroy(st);
        return -ENOMEM;
    }
    /* slices.Delete of the first KS_DRA_FINALIZER only, as deleteClaim removes it */
    bool removed = false, first = true;
    fputc('[', f);
    for (uint32_t i = 0; seq && seq->kind == KS_YAML_SEQ && i < seq->n; i++) {
        const struct ks_yaml_node *it = seq->items[i];
        if (!removed && it->kind == KS_YAML_SCALAR && strcmp(it->str, KS_DRA_FINALIZER) == 0) {
            removed = true;
            continue;
        }
        if (!first)
            fputc(',', f);
        first = false;
        ks_yaml_write_json(f, it);
    }
    fputc(']', f);
    ks_yaml_stream_destroy(st);
    if (!ks_serve_text_close(f, &list))
        return -ENOMEM;
    struct ks_json_edit e = {.path = fin_path, .value = list};
    rc = ks_json_edit(claim, len, &e, 1, out, out_len);
    free(list);
    return rc;
}

int ks_serve_dra_status_body(const char *claim, size_t len, const struct ks_allocation *alloc,
                             const char *pod_name, const char *pod_uid, int64_t stamp_ns, char **out,
                             size_t *out_len)
{
    static const char *const alloc_path[] = {"status", "allocation", NULL};
    static const char *const stamp_path[] = {"status", "allocation", "allocationTimestamp", NULL};
    static const char *const reserved_path[] = {"status", "reservedFor", NULL};
    struct ks_yaml_stream *st;
    char *consumer = NULL, *list = NULL, *alloc_text = NULL, when[80];
    size_t n;
    int rc = parse(claim, len, &st);
    if (rc < 0)
        return rc;
    const struct ks_yaml_node *old_alloc = dig(st->docs[0], "status", "allocation");
    bool stamp_old = !alloc && stamp_ns != KS_TIME_NONE && present(old_alloc) &&
                     old_alloc->kind == KS_YAML_MAP &&
                     !present(ks_yaml_get(old_alloc, "allocationTimestamp"));
    /* ResourceClaimConsumerReference: apiGroup omitted (core), resource, name, uid */
    FILE *f = open_memstream(&consumer, &n);
    if (!f) {
        rc = -ENOMEM;
        goto out;
    }
    fputs("{\"resource\":\"pods\",\"name\":", f);
    ks_json_write_cstr(f, pod_name);
    fputs(",\"uid\":", f);
    ks_json_write_cstr(f, pod_uid);
    fputc('}', f);
    if (!ks_serve_text_close(f, &consumer)) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = list_plus(dig(st->docs[0], "status", "reservedFor"), consumer, &list, &n)) < 0)
        goto out;
    struct ks_json_edit edits[3];
    size_t ne = 0;
    if (alloc) {
        struct alloc_arg arg = {alloc, stamp_ns};
        if ((rc = to_text(alloc_fn, &arg, &alloc_text, &n)) < 0)
            goto out;
        edits[ne++] = (struct ks_json_edit){.path = alloc_path, .value = alloc_text};
    } else if (stamp_old) {
        ks_serve_dra_time(stamp_ns, when + 1, sizeof(when) - 2);
        when[0] = '"';
        strcat(when, "\"");
        edits[ne++] = (struct ks_json_edit){.path = stamp_path, .value = when};
    }
    edits[ne++] = (struct ks_json_edit){.path = reserved_path, .value = list};
    rc = ks_json_edit(claim, len, edits, ne, out, out_len);
out:
    ks_yaml_stream_destroy(st);
    free(consumer);
    free(list);
    free(alloc_text);
    return rc;
}

int ks_serve_dra_deallocate_body(const char *claim, size_t len, const char *rv, char **out, size_t *out_len)
{
    static const char *const rv_path[] = {"metadata", "resourceVersion", NULL};
    static const char *const status_path[] = {"status", NULL};
    struct ks_yaml_stream *st;
    char *status = NULL, *version = NULL;
    size_t n;
    int rc = parse(claim, len, &st);
    if (rc < 0)
        return rc;
    /* the status without allocation, reservedFor and devices (what else it holds stays) */
    const struct ks_yaml_node *old = ks_yaml_get(st->docs[0], "status");
    FILE *f = open_memstream(&status, &n);
    if (!f) {
        rc = -ENOMEM;
        goto out;
    }
    fputc('{', f);
    bool first = true;
    for (uint32_t i = 0; old && old->kind == KS_YAML_MAP && i < old->n; i++) {
        const char *k = old->pairs[i].key->str;
        if (strcmp(k, "allocation") == 0 || strcmp(k, "reservedFor") == 0 || strcmp(k, "devices") == 0)
            continue;
        key(f, &first, k);
        ks_yaml_write_json(f, old->pairs[i].value);
    }
    fputc('}', f);
    if (!ks_serve_text_close(f, &status)) {
        rc = -ENOMEM;
        goto out;
    }
    f = open_memstream(&version, &n);
    if (!f) {
        rc = -ENOMEM;
        goto out;
    }
    ks_json_write_cstr(f, rv ? rv : "");
    if (!ks_serve_text_close(f, &version)) {
        rc = -ENOMEM;
        goto out;
    }
    struct ks_json_edit edits[] = {{.path = rv_path, .value = version},
                                   {.path = status_path, .value = status}};
    rc = ks_json_edit(claim, len, edits, 2, out, out_len);
out:
    ks_yaml_stream_destroy(st);
    free(status);
    free(version);
    return rc;
}

int ks_serve_dra_unreserve_patch(const char *claim_uid, const char *pod_uid, char **out, size_t *out_len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return -ENOMEM;
    fputc('{', f);
    if (claim_uid && claim_uid[0]) { /* the claim's uid: the update fails on a claim made again */
        fputs("\"metadata\":{\"uid\":", f);
        ks_json_write_cstr(f, claim_uid);
        fputs("},", f);
    }
    fputs("\"status\":{\"reservedFor\":[{\"$patch\":\"delete\",\"uid\":", f);
    ks_json_write_cstr(f, pod_uid ? pod_uid : "");
    fputs("}]}}", f);
    if (!ks_serve_text_close(f, &buf))
        return -ENOMEM;
    *out = buf;
    *out_len = n;
    return 0;
}
