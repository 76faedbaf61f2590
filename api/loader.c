/*
 * loader.c - manifest files into a struct ks_objects, all or nothing.
 *
 * Each document is dispatched on (apiVersion, kind) through KS_KIND_MAP; `List` and
 * `<Kind>List` documents contribute their items. Documents, and a List's objects, are decoded
 * as the parser hands them over (ks_yaml_parse_each), in input order, so a cluster dump never
 * stands in memory as a whole tree; as kubectl writes `items` before `kind`, a List's objects
 * are loaded before its kind is known, and a document of another kind with `items` is an
 * error. Other kinds are skipped or refused, and the fields of what is decoded checked
 * against the API schema, by api/load_filter.c. An index keyed by (kind, namespace, name)
 * rejects duplicates and serves the cross-object checks that run once every file is in:
 * priority resolution (the Priority admission plugin's job in a real cluster:
 * plugin/pkg/admission/priority) and the objects bound pods name. An input may be a dump of
 * a live cluster that holds only some kinds: a bound pod is already placed, so an object it
 * names that the input lacks is only summed up in one note; a pending pod's missing claim is
 * left to the scheduler, which rejects the pod as upstream does (VolumeBinding PreFilter).
 */
#include "ksched/loader.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/api_schema.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/features.h"
#include "ksched/internal/load_filter.h"
#include "ksched/internal/type_check.h"
#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kind_ops {
    const char *kind;
    const char *versions;
    int (*decode)(const char *file, const struct ks_yaml_node *doc, void **out, struct ks_error *err);
    void (*destroy)(void *obj);
    size_t meta_off; /* offsetof(type, meta) */
};

#define KS_X(id, kind, versions, type, suffix)                                                               \
    static int decode_##suffix(const char *file, const struct ks_yaml_node *doc, void **out,                 \
                               struct ks_error *err)                                                         \
    {                                                                                                        \
        type *obj;                                                                                           \
        int rc = ks_decode_##suffix(file, doc, &obj, err);                                                   \
        *out = obj;                                                                                          \
        return rc;                                                                                           \
    }                                                                                                        \
    static void destroy_##suffix(void *obj)                                                                  \
    {                                                                                                        \
        ks_##suffix##_destroy(obj);                                                                          \
    }
KS_KIND_MAP(KS_X)
#undef KS_X

static const struct kind_ops kinds[KS_KIND_COUNT] = {
#define KS_X(id, kind, versions, type, suffix)                                                               \
    [KS_KIND_##id] = {kind, versions, decode_##suffix, destroy_##suffix, offsetof(type, meta)},
    KS_KIND_MAP(KS_X)
#undef KS_X
};

const char *ks_kind_name(enum ks_kind kind)
{
    return kind < KS_KIND_COUNT ? kinds[kind].kind : "?";
}

static const struct ks_object_meta *meta_of(enum ks_kind kind, const void *obj)
{
    return (const struct ks_object_meta *)((const char *)obj + kinds[kind].meta_off);
}

/* ---- (kind, namespace, name) index: open addressing over object pointers ---- */

struct index_slot {
    uint64_t hash;
    enum ks_kind kind;
    const void *obj;
};

struct index {
    struct index_slot *slots;
    uint32_t mask, n;
};

static uint64_t key_hash(enum ks_kind kind, uint32_t ns, const char *name)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)kind << 32) ^ ns;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static struct index_slot *index_find(struct index *ix, enum ks_kind kind, uint32_t ns, const char *name)
{
    uint64_t h = key_hash(kind, ns, name);
    for (uint32_t i = (uint32_t)h & ix->mask;; i = (i + 1) & ix->mask) {
        struct index_slot *s = &ix->slots[i];
        if (!s->obj)
            return s;
        const struct ks_object_meta *m = meta_of(s->kind, s->obj);
        if (s->hash == h && s->kind == kind && m->namespace_id == ns && strcmp(m->name, name) == 0)
            return s;
    }
}

static int index_grow(struct index *ix)
{
    uint32_t cap = ix->slots ? (ix->mask + 1) * 2 : 1024;
    struct index old = *ix;
    if (!(ix->slots = calloc(cap, sizeof(*ix->slots)))) {
        *ix = old;
        return -ENOMEM;
    }
    ix->mask = cap - 1;
    for (uint32_t i = 0; old.slots && i <= old.mask; i++) {
        if (old.slots[i].obj) {
            const struct ks_object_meta *m = meta_of(old.slots[i].kind, old.slots[i].obj);
            *index_find(ix, old.slots[i].kind, m->namespace_id, m->name) = old.slots[i];
        }
    }
    free(old.slots);
    return 0;
}

static const void *index_get(const struct index *ix, enum ks_kind kind, uint32_t ns, const char *name)
{
    return ix->slots ? index_find((struct index *)ix, kind, ns, name)->obj : NULL;
}

/* ---- loading ---- */

/* An object a bound pod names that the input lacks. */
struct missing_ref {
    enum ks_kind kind;
    uint32_t ns;      /* KS_ID_EMPTY for a cluster-scoped kind */
    const char *name; /* the pod's string */
};

struct load {
    struct ks_objects *objs;
    ks_object_check_fn check; /* NULL: none */
    void *check_ctx;
    struct ks_load_filter filter; /* kinds not decoded, --validate */
    struct index ix;
    struct ks_error *err;
    struct missing_ref *missing; /* in input order, repeats included */
    uint32_t nmissing, capmissing;
    uint32_t missing_pods; /* bound pods naming one or more */
    uint32_t items_done;   /* items of the document being loaded that were loaded as parsed */
};

static int push_object(struct load *l, enum ks_kind kind, void *obj, const char *file)
{
    const struct ks_object_meta *m = meta_of(kind, obj);

    if ((l->ix.n + 1) * 2 > (l->ix.slots ? l->ix.mask + 1 : 0) && index_grow(&l->ix) < 0)
        return -ENOMEM;
    struct index_slot *s = index_find(&l->ix, kind, m->namespace_id, m->name);
    if (s->obj) {
        const char *ns = ks_intern_str(m->namespace_id);
        return ks_error_set(l->err, file, m->line, "metadata.name",
                            "Duplicate value: %s \"%s%s%s\" already defined", kinds[kind].kind, ns,
                            *ns ? "/" : "", m->name);
    }
    if (ks_objects_push(l->objs, kind, obj) < 0)
        return -ENOMEM;
    *s = (struct index_slot){key_hash(kind, m->namespace_id, m->name), kind, obj};
    l->ix.n++;
    return 0;
}

static int version_ok(const char *versions, const char *v)
{
    size_t len = strlen(v);
    for (const char *p = versions; *p;) {
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && memcmp(p, v, n) == 0)
            return 1;
        p += n + (end != NULL);
    }
    return 0;
}

static int scalar_field(struct ks_error *err, const char *file, const struct ks_yaml_node *doc,
                        const char *key, const char *prefix, const char **out)
{
    const struct ks_yaml_node *n = ks_yaml_get(doc, key);
    if (ks_yaml_is_null(n) || n->kind != KS_YAML_SCALAR || n->len == 0)
        return ks_error_set(err, file, n ? n->line : doc->line, NULL, "%s%s: Required value", prefix, key);
    *out = n->str;
    return 0;
}

/* The kind and apiVersion of object @doc (errors name fields after @prefix). */
static int doc_header(struct ks_error *err, const char *file, const struct ks_yaml_node *doc,
                      const char *prefix, const char **kind, const char **api_version)
{
    int rc;
    if (doc->kind != KS_YAML_MAP)
        return ks_error_set(err, file, doc->line, prefix[0] ? prefix : NULL,
                            "expected a Kubernetes object (a map), found %s", ks_yaml_kind_name(doc));
    if ((rc = scalar_field(err, file, doc, "kind", prefix, kind)) ||
        (rc = scalar_field(err, file, doc, "apiVersion", prefix, api_version)))
        return rc;
    return 0;
}

/* Decode object @doc of @kind/@api_version through KS_KIND_MAP; errors name fields after @prefix. */
static int decode_doc(struct ks_error *err, const char *file, const struct ks_yaml_node *doc,
                      const char *prefix, const char *kind, const char *api_version, enum ks_kind *kind_out,
                      void **out)
{
    int rc;
    *out = NULL;
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        if (strcmp(kinds[k].kind, kind) != 0)
            continue;
        if (!version_ok(kinds[k].versions, api_version))
            return ks_error_set(err, file, ks_yaml_get(doc, "apiVersion")->line, NULL,
                                "%sapiVersion: unsupported apiVersion \"%s\" for kind %s (want %s)", prefix,
                                api_version, kind, kinds[k].versions);
        struct ks_error inner = {0};
        if ((rc = kinds[k].decode(file, doc, out, &inner))) {
            *out = NULL;
            if (rc == -ENOMEM && !inner.set)
                ks_error_set(&inner, file, doc->line, NULL, "out of memory");
            /* name the list item in the field path */
            if (err && !err->set) {
                ks_error_set(err, inner.file, inner.line, NULL, "%s", "");
                snprintf(err->field, sizeof(err->field), "%s%s", prefix, inner.field);
                snprintf(err->msg, sizeof(err->msg), "%s", inner.msg);
            }
            return rc;
        }
        *kind_out = (enum ks_kind)k;
        return 0;
    }
    return ks_error_set(err, file, ks_yaml_get(doc, "kind")->line, NULL,
                        "%skind: unsupported kind \"%s\" (apiVersion %s)", prefix, kind, api_version);
}

int ks_object_decode(const char *file, const struct ks_yaml_node *doc, enum ks_kind *kind, void **out,
                     struct ks_error *err)
{
    const char *k, *v;
    int rc;
    *out = NULL;
    if (!file)
        file = "";
    if (!doc)
        return ks_error_set(err, file, 0, NULL, "expected a Kubernetes object (a map), found nothing");
    if ((rc = doc_header(err, file, doc, "", &k, &v)))
        return rc;
    return decode_doc(err, file, doc, "", k, v, kind, out);
}

int ks_object_decode_as(const char *file, const struct ks_yaml_node *doc, enum ks_kind kind, void **out,
                        struct ks_error *err)
{
    *out = NULL;
    if (kind >= KS_KIND_COUNT)
        return ks_error_set(err, file ? file : "", 0, NULL, "unknown kind %d", (int)kind);
    return kinds[kind].decode(file ? file : "", doc, out, err);
}

void ks_object_destroy(enum ks_kind kind, void *obj)
{
    if (!obj || kind >= KS_KIND_COUNT)
        return;
    if (kind == KS_KIND_POD)
        ks_pod_put(obj);
    else
        kinds[kind].destroy(obj);
}

/*
 * The index of @kind in KS_KIND_MAP, or -1; also -1 for a kind whose feature gate is off
 * (PodGroup and Workload need GenericWorkload): the API server does not serve it, and such a
 * document is skipped as the other kinds that do not affect scheduling are.
 */
static int modelled(const char *kind)
{
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        if (strcmp(kinds[k].kind, kind) != 0)
            continue;
        if ((k == KS_KIND_POD_GROUP || k == KS_KIND_WORKLOAD) &&
            !ks_feature_enabled(KS_FEATURE_GENERIC_WORKLOAD))
            return -1;
        return k;
    }
    return -1;
}

static int load_doc(struct load *l, const char *file, const struct ks_yaml_node *doc, const char *prefix,
                    int depth)
{
    const char *api_version, *kind;
    int rc;

    if ((rc = doc_header(l->err, file, doc, prefix, &kind, &api_version)))
        return rc;
    size_t klen = strlen(kind);
    bool list = klen >= 4 && strcmp(kind + klen - 4, "List") == 0;
    if (depth == 0 && !list && l->items_done)
        return ks_error_set(l->err, file, ks_yaml_get(doc, "items")->line, "items",
                            "a %s has no items (only a List has)", kind);
    if (depth == 0 && list) {
        if ((rc = ks__load_filter_fields(&l->filter, file, doc, prefix, "List")))
            return rc;
        const struct ks_yaml_node *items = ks_yaml_get(doc, "items");
        if (!ks_yaml_is_null(items) && items->kind != KS_YAML_SEQ)
            return ks_error_set(l->err, file, items->line, "items", "expected a list, found %s",
                                ks_yaml_kind_name(items));
        for (uint32_t i = 0; items && items->kind == KS_YAML_SEQ && i < items->n; i++) {
            char item_prefix[32];
            snprintf(item_prefix, sizeof(item_prefix), "items[%u].", l->items_done + i);
            if ((rc = load_doc(l, file, items->items[i], item_prefix, 1)))
                return rc;
        }
        return 0;
    }
    int m = modelled(kind);
    if (m < 0 && !list)
        return ks__load_filter_kind(&l->filter, file, doc, prefix, kind, api_version); /* skip or refuse */
    if (m >= 0 && version_ok(kinds[m].versions, api_version)) {
        /* as the API server: values of the wrong type refuse the object, whatever --validate says */
        const char *slash = strchr(api_version, '/');
        if ((rc = ks_type_check(doc, ks_api_schema_root(kind), kind, slash ? slash + 1 : api_version, file,
                                prefix, l->err)) ||
            (rc = ks__load_filter_fields(&l->filter, file, doc, prefix, kind)))
            return rc;
    }
    enum ks_kind k;
    void *obj;
    /* a list inside a list fails here, as a kind that is not decoded */
    if ((rc = decode_doc(l->err, file, doc, prefix, kind, api_version, &k, &obj)))
        return rc;
    if (l->check && (rc = l->check(l->check_ctx, file, prefix, k, obj, l->err))) {
        kinds[k].destroy(obj);
        return rc;
    }
    if ((rc = push_object(l, k, obj, file))) {
        kinds[k].destroy(obj);
        if (rc == -ENOMEM)
            ks_error_set(l->err, file, doc->line, NULL, "out of memory");
    }
    return rc;
}

static int note_missing(struct load *l, enum ks_kind kind, uint32_t ns, const char *name)
{
    if (l->nmissing == l->capmissing) {
        uint32_t cap = l->capmissing ? l->capmissing * 2 : 16;
        struct missing_ref *m = realloc(l->missing, cap * sizeof(*m));
        if (!m)
            return -ENOMEM;
        l->missing = m;
        l->capmissing = cap;
    }
    l->missing[l->nmissing++] = (struct missing_ref){kind, ns, name};
    return 0;
}

/* What the Priority admission plugin resolves of a pod or a PodGroup. */
struct priority_of {
    bool has_priority;
    const char *class_name;
    int32_t *priority;
    bool *has_preemption_policy; /* NULL: the object has no preemption policy to default */
    enum ks_preemption_policy *preemption_policy;
};

/* Priority admission: spec.priority from the class, else the global default, else 0. A class
 * the input lacks fails a pending object (admission rejects it) and is noted for a bound one. */
static int resolve_priority(struct load *l, const struct priority_of *o, const char *file, int line,
                            bool bound)
{
    static const struct {
        const char *name;
        int32_t value;
    } builtin[] = {{"system-cluster-critical", 2000000000}, {"system-node-critical", 2000001000}};
    const struct ks_priority_class *pc = NULL;

    if (o->has_priority)
        return 0;
    if (o->class_name && o->class_name[0]) {
        pc = index_get(&l->ix, KS_KIND_PRIORITY_CLASS, KS_ID_EMPTY, o->class_name);
        if (!pc) {
            for (size_t b = 0; b < sizeof(builtin) / sizeof(builtin[0]); b++) {
                if (strcmp(builtin[b].name, o->class_name) == 0) {
                    *o->priority = builtin[b].value;
                    return 0;
                }
            }
            if (bound)
                return note_missing(l, KS_KIND_PRIORITY_CLASS, KS_ID_EMPTY, o->class_name);
            return ks_error_set(l->err, file, line, "spec.priorityClassName",
                                "no PriorityClass with name %s was found", o->class_name);
        }
    } else {
        struct ks_objvec *pcs = &l->objs->of[KS_KIND_PRIORITY_CLASS];
        for (uint32_t i = 0; i < pcs->n && !pc; i++) {
            const struct ks_priority_class *c = pcs->items[i];
            if (c->global_default)
                pc = c;
        }
    }
    if (pc) {
        *o->priority = pc->value;
        if (o->has_preemption_policy && !*o->has_preemption_policy && pc->has_preemption_policy)
            *o->preemption_policy = pc->preemption_policy;
    }
    return 0;
}

/* A PodGroup's spec.priority as the Priority admission plugin resolves it (the pods' rule). */
static int check_pod_group(struct load *l, struct ks_pod_group *pg, const char *file)
{
    struct priority_of o = {.has_priority = pg->spec.has_priority,
                            .class_name = pg->spec.priority_class_name,
                            .priority = &pg->spec.priority};
    int rc = resolve_priority(l, &o, file, pg->meta.line, false);
    if (rc == 0)
        pg->spec.has_priority = true;
    return rc;
}

static int check_pod(struct load *l, struct ks_pod *pod, const char *file)
{
    if (pod->phase == KS_PHASE_SUCCEEDED || pod->phase == KS_PHASE_FAILED)
        return 0; /* the scheduler never sees a finished pod */
    bool bound = pod->node_name != KS_ID_EMPTY;
    uint32_t before = l->nmissing;
    int rc = 0;
    for (uint32_t i = 0; bound && rc == 0 && i < pod->nvolumes; i++) {
        const struct ks_volume *v = &pod->volumes[i];
        if (v->kind == KS_VOLUME_PVC && !index_get(&l->ix, KS_KIND_PVC, pod->meta.namespace_id, v->source))
            rc = note_missing(l, KS_KIND_PVC, pod->meta.namespace_id, v->source);
    }
    struct priority_of o = {.has_priority = pod->has_priority,
                            .class_name = pod->priority_class_name,
                            .priority = &pod->priority,
                            .has_preemption_policy = &pod->has_preemption_policy,
                            .preemption_policy = &pod->preemption_policy};
    if (rc == 0)
        rc = resolve_priority(l, &o, file, pod->meta.line, bound);
    l->missing_pods += l->nmissing > before;
    if (rc == -ENOMEM)
        ks_error_set(l->err, file, pod->meta.line, NULL, "out of memory");
    return rc;
}

static int cmp_missing(const void *a, const void *b)
{
    const struct missing_ref *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int add_note(struct ks_objects *objs, const char *line)
{
    char **notes = realloc(objs->notes, (objs->nnotes + 1) * sizeof(*notes));
    if (!notes)
        return -ENOMEM;
    objs->notes = notes;
    if (!(notes[objs->nnotes] = strdup(line)))
        return -ENOMEM;
    objs->nnotes++;
    return 0;
}

/* One note for every object bound pods name that the input lacks: how many pods, the first
 * object in input order and how many other distinct ones. */
static int note_missing_refs(struct load *l)
{
    if (l->nmissing == 0)
        return 0;
    struct missing_ref first = l->missing[0];
    qsort(l->missing, l->nmissing, sizeof(*l->missing), cmp_missing);
    uint32_t distinct = 1;
    for (uint32_t i = 1; i < l->nmissing; i++)
        distinct += cmp_missing(&l->missing[i - 1], &l->missing[i]) != 0;
    const char *ns = first.ns == KS_ID_EMPTY ? "" : ks_intern_str(first.ns);
    char more[48] = "";
    if (distinct > 1)
        snprintf(more, sizeof(more), " (and %u more)", distinct - 1);
    char line[KS_ERROR_MSG_MAX];
    snprintf(line, sizeof(line), "%u bound pod%s name%s %s the input lacks, kept as bound: %s \"%s%s%s\"%s",
             l->missing_pods, l->missing_pods == 1 ? "" : "s", l->missing_pods == 1 ? "s" : "",
             distinct == 1 ? "an object" : "objects", kinds[first.kind].kind, ns, *ns ? "/" : "", first.name,
             more);
    return add_note(l->objs, line);
}

struct file_sink {
    struct load *l;
    const char *file;
};

/* A List's object as soon as it is parsed (ks_yaml_parse_each): its List is checked when it ends. */
static int sink_item(void *ctx, const struct ks_yaml_node *item, uint32_t index)
{
    struct file_sink *fs = ctx;
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "items[%u].", index);
    return load_doc(fs->l, fs->file, item, prefix, 1);
}

static int sink_doc(void *ctx, const struct ks_yaml_node *doc, uint32_t nitems)
{
    struct file_sink *fs = ctx;
    if (!doc || ks_yaml_is_null(doc))
        return 0;
    fs->l->items_done = nitems;
    int rc = load_doc(fs->l, fs->file, doc, "", 0);
    fs->l->items_done = 0;
    return rc;
}

/* The objects of @kind from @first on came from @path: recorded in *@files (one per object). */
static int record_files(struct load *l, enum ks_kind kind, uint32_t first, const char *path,
                        const char ***files)
{
    uint32_t n = l->objs->of[kind].n;
    if (n == first)
        return 0;
    const char **f = realloc(*files, n * sizeof(*f));
    if (!f) {
        ks_error_set(l->err, path, 0, NULL, "out of memory");
        return -ENOMEM;
    }
    *files = f;
    for (uint32_t i = first; i < n; i++)
        f[i] = path;
    return 0;
}

/* One file's text (@buf, or the file @path when @buf is NULL) into @l, object by object as it
 * is parsed; records the file of each pod and each PodGroup. */
static int load_one(struct load *l, const char *path, const char *buf, size_t len, const char ***pod_file,
                    const char ***group_file)
{
    uint32_t first_pod = l->objs->of[KS_KIND_POD].n, first_group = l->objs->of[KS_KIND_POD_GROUP].n;
    struct file_sink fs = {l, buf ? path : ks_yaml_file_name(path)}; /* "-" is standard input: STDIN */
    const struct ks_yaml_sink sink = {sink_item, sink_doc, &fs};
    /* duplicate keys are kept for field validation to report, as the API server does */
    int rc = buf ? ks_yaml_parse_each(path, buf, len, KS_YAML_KEEP_DUPLICATES, &sink, l->err)
                 : ks_yaml_parse_file_each(path, KS_YAML_KEEP_DUPLICATES, &sink, l->err);
    if (rc)
        return rc;
    path = fs.file;
    if ((rc = record_files(l, KS_KIND_POD, first_pod, path, pod_file)) < 0)
        return rc;
    return record_files(l, KS_KIND_POD_GROUP, first_group, path, group_file);
}

/* The files @paths, or the one in-memory text @buf named @paths[0], into a new set. */
static int load_all(const char *const *paths, int n, const char *buf, size_t len,
                    enum ks_validation validation, ks_object_check_fn check, void *check_ctx,
                    struct ks_objects **out, struct ks_error *err)
{
    struct load l = {.err = err, .check = check, .check_ctx = check_ctx};
    int rc = 0;

    *out = NULL;
    if (!(l.objs = calloc(1, sizeof(*l.objs))))
        return -ENOMEM;
    l.filter = (struct ks_load_filter){.validation = validation, .objs = l.objs, .err = err};
    /* pods are checked against the objects of every file: remember where each came from */
    const char **pod_file = NULL, **group_file = NULL;
    for (int f = 0; f < n && rc == 0; f++)
        rc = load_one(&l, paths[f], buf, len, &pod_file, &group_file);
    for (uint32_t p = 0; rc == 0 && p < l.objs->of[KS_KIND_POD].n; p++)
        rc = check_pod(&l, l.objs->of[KS_KIND_POD].items[p], pod_file[p]);
    for (uint32_t g = 0; rc == 0 && g < l.objs->of[KS_KIND_POD_GROUP].n; g++)
        rc = check_pod_group(&l, l.objs->of[KS_KIND_POD_GROUP].items[g], group_file[g]);
    char *skipped = rc == 0 ? ks__load_filter_summary(&l.filter, &rc) : NULL;
    if (skipped)
        rc = add_note(l.objs, skipped);
    if (rc == -ENOMEM)
        ks_error_set(err, n ? paths[0] : "", 0, NULL, "out of memory");
    free(skipped);
    ks__load_filter_release(&l.filter);
    if (rc == 0 && (rc = note_missing_refs(&l)) < 0)
        ks_error_set(err, n ? paths[0] : "", 0, NULL, "out of memory");
    free(l.missing);
    free(pod_file);
    free(group_file);
    free(l.ix.slots);
    if (rc) {
        ks_objects_destroy(l.objs);
        return rc;
    }
    *out = l.objs;
    return 0;
}

int ks_objects_load(const char *const *paths, int n, struct ks_objects **out, struct ks_error *err)
{
    return load_all(paths, n, NULL, 0, KS_VALIDATE_WARN, NULL, NULL, out, err);
}

int ks_objects_load_validate(const char *const *paths, int n, enum ks_validation validation,
                             struct ks_objects **out, struct ks_error *err)
{
    return load_all(paths, n, NULL, 0, validation, NULL, NULL, out, err);
}

int ks_objects_load_checked(const char *const *paths, int n, enum ks_validation validation,
                            ks_object_check_fn check, void *ctx, struct ks_objects **out,
                            struct ks_error *err)
{
    return load_all(paths, n, NULL, 0, validation, check, ctx, out, err);
}

int ks_objects_load_buffer(const char *file, const char *buf, size_t len, struct ks_objects **out,
                           struct ks_error *err)
{
    const char *name = file ? file : "";
    return load_all(&name, 1, buf ? buf : "", len, KS_VALIDATE_WARN, NULL, NULL, out, err);
}

void ks_objects_note_queued(struct ks_objects *objs, enum ks_kind kind)
{
    /* release: an index built after reading the new count sees what was queued before it */
    atomic_fetch_add_explicit(&objs->queued[kind], 1, memory_order_release);
}

uint64_t ks_objects_queued(const struct ks_objects *objs, enum ks_kind kind)
{
    return atomic_load_explicit(&((struct ks_objects *)objs)->queued[kind], memory_order_acquire);
}

int ks_objects_push(struct ks_objects *objs, enum ks_kind kind, void *obj)
{
    struct ks_objvec *v = &objs->of[kind];

    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 64;
        void **items = realloc(v->items, cap * sizeof(*items));
        if (!items)
            return -ENOMEM;
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = obj;
    return 0;
}

void ks_objects_destroy(struct ks_objects *objs)
{
    if (!objs)
        return;
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        for (uint32_t i = 0; i < objs->of[k].n; i++) {
            if (k == KS_KIND_POD)
                ks_pod_put(objs->of[k].items[i]); /* the scheduler may hold references too */
            else
                kinds[k].destroy(objs->of[k].items[i]);
        }
        free(objs->of[k].items);
    }
    for (uint32_t i = 0; i < objs->nnotes; i++)
        free(objs->notes[i]);
    free(objs->notes);
    for (uint32_t i = 0; i < objs->nwarnings && i < KS_LOAD_MAX_WARNINGS; i++)
        free(objs->warnings[i]);
    free(objs->warnings);
    free(objs);
}
