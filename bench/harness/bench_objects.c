/*
 * bench_objects.c - createAny's objects, and the pods that belong to them (bench.h).
 *
 * createAny mirrors scheduler_perf's (test/integration/scheduler_perf/create.go): objects
 * made from one template, before the pods that need them. Each object is a decoder product,
 * as a manifest's would be: the template's tree is copied where it changes (the parts that
 * do not are shared) and decoded by the loader's decoder. It makes any kind the loader
 * decodes except Nodes and Pods (createNodes and createPods make those), and apps/v1
 * Deployments.
 *
 * Templates: upstream runs the template file through text/template with .Index (the object's
 * index) and .Count (the op's count); here a scalar of the parsed tree may hold {{.Index}}
 * and {{.Count}}, nothing else of text/template, so a scalar that begins with one is quoted
 * ("{{.Index}}"). The objects of one template are numbered across the ops that make them:
 * a second createAny of the template goes on from where the first stopped, so its objects'
 * names and labels are new ones.
 *
 * Names: an op with count or countParam names object i <generateName><i>, or <name>-<i>;
 * one without names its single object metadata.name; a metadata.name that holds an action
 * names every object as expanded.
 *
 * Deployments: the scheduler reads no Deployment (kube-scheduler watches none, and the
 * object set has no kind for one): what it sees of a Deployment is the ReplicaSet the
 * Deployment controller makes for it (pkg/controller/deployment/sync.go getNewReplicaSet):
 * named <deployment>-<pod-template-hash>, with the Deployment's spec.replicas, its selector
 * and its template's labels both with pod-template-hash added, those labels as its own, and
 * a controlling ownerReference to the Deployment. The hash has the controller's form (fnv-32a
 * printed in decimal, each digit safe-encoded as rand.SafeEncodeString does) but is taken
 * over "<namespace>/<name>" rather than the printed pod template, which only a Go program
 * prints alike. A Deployment creates no pods by itself: createPods with owners does.
 *
 * Owners: a ReplicaSet (a Deployment's too), StatefulSet or ReplicationController gets a uid
 * (a UUID made from its kind, namespace and name, so runs are reproducible), and the API
 * server's check that its selector selects its template's labels ("`selector` does not
 * match template `labels`"). Its pods, made by ks_bench_owned_pod() from a createPods op's
 * template, get what the controller would give them (controller_utils.go GetPodFromTemplate,
 * stateful_set_utils.go newStatefulSetPod): the object's spec.template.metadata.labels over
 * the template's own, a controlling ownerReference (apiVersion, kind, name, uid, controller
 * and blockOwnerDeletion true), and the name: <owner>-<five characters of the same alphabet
 * upstream's generateName draws from> for a ReplicaSet's and a ReplicationController's pods,
 * <set>-<ordinal> for a StatefulSet's, which also get the labels controller-revision-hash
 * (<set>-<hash>), statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index. The
 * pods of an op fill the objects in blocks of their replicas, in order: pods 0..r-1 are the
 * first object's, as a controller creates an object's pods together.
 *
 * Context: load time, the command's main thread, before a scheduler reads the object set.
 */
#include "bench.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/dra_check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The alphabet of rand.String and rand.SafeEncodeString (k8s.io/apimachinery/pkg/util/rand). */
static const char safe_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
#define SAFE_LEN 27u

/* ---- trees ------------------------------------------------------------------------------------ */

static struct ks_yaml_node *scalar_node(struct ks_arena *a, const char *text, bool plain, int line)
{
    struct ks_yaml_node *n = ks_arena_calloc(a, 1, sizeof(*n));
    char *s = ks_arena_strdup(a, text);
    if (!n || !s)
        return NULL;
    *n = (struct ks_yaml_node){
        .kind = KS_YAML_SCALAR, .line = line, .plain = plain, .str = s, .len = strlen(s)};
    return n;
}

/* A copy of @map (NULL or not a map: an empty one at @line) with room for @extra more pairs. */
static struct ks_yaml_node *map_copy(struct ks_arena *a, const struct ks_yaml_node *map, int line,
                                     uint32_t extra)
{
    uint32_t n = map && map->kind == KS_YAML_MAP ? map->n : 0;
    struct ks_yaml_node *m = ks_arena_calloc(a, 1, sizeof(*m));
    struct ks_yaml_pair *pairs = ks_arena_calloc(a, n + extra ? n + extra : 1, sizeof(*pairs));
    if (!m || !pairs)
        return NULL;
    *m = (struct ks_yaml_node){.kind = KS_YAML_MAP, .line = map ? map->line : line, .pairs = pairs, .n = n};
    if (n)
        memcpy(pairs, map->pairs, n * sizeof(*pairs));
    return m;
}

/* Set @key of @m (a map_copy() with room left) to @value (NULL: a failed allocation). 0 or -ENOMEM. */
static int map_put(struct ks_arena *a, struct ks_yaml_node *m, const char *key,
                   const struct ks_yaml_node *value)
{
    if (!value)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->pairs[i].key->kind == KS_YAML_SCALAR && strcmp(m->pairs[i].key->str, key) == 0) {
            m->pairs[i].value = (struct ks_yaml_node *)value;
            return 0;
        }
    }
    struct ks_yaml_node *k = scalar_node(a, key, true, value->line);
    if (!k)
        return -ENOMEM;
    m->pairs[m->n++] = (struct ks_yaml_pair){k, (struct ks_yaml_node *)value};
    return 0;
}

/* @map with @key set to @value, as a copy (@map unchanged; NULL: a new map at @line). NULL on ENOMEM. */
static struct ks_yaml_node *map_with(struct ks_arena *a, const struct ks_yaml_node *map, int line,
                                     const char *key, const struct ks_yaml_node *value)
{
    struct ks_yaml_node *m = value ? map_copy(a, map, line, 1) : NULL;
    return m && map_put(a, m, key, value) == 0 ? m : NULL;
}

/* @map with @key set to the string @text (quoted, so "0" stays a string). NULL on ENOMEM. */
static struct ks_yaml_node *map_with_str(struct ks_arena *a, const struct ks_yaml_node *map, int line,
                                         const char *key, const char *text)
{
    return map_with(a, map, line, key, scalar_node(a, text, false, map ? map->line : line));
}

/* @base's pairs with @over's over them (either may be NULL): a new map. NULL on ENOMEM. */
static struct ks_yaml_node *map_merge(struct ks_arena *a, const struct ks_yaml_node *base,
                                      const struct ks_yaml_node *over, int line)
{
    uint32_t extra = over && over->kind == KS_YAML_MAP ? over->n : 0;
    struct ks_yaml_node *m = map_copy(a, base, line, extra + 3); /* + a StatefulSet pod's three */
    for (uint32_t i = 0; m && i < extra; i++) {
        if (over->pairs[i].key->kind == KS_YAML_SCALAR &&
            map_put(a, m, over->pairs[i].key->str, over->pairs[i].value))
            return NULL;
    }
    return m;
}

static const struct ks_yaml_node *path(const struct ks_yaml_node *n, const char *a, const char *b,
                                       const char *c)
{
    n = ks_yaml_get(n, a);
    if (b)
        n = ks_yaml_get(n, b);
    if (c)
        n = ks_yaml_get(n, c);
    return n;
}

/* ---- template actions --------------------------------------------------------------------------- */

/*
 * The length of the action at @s ("{{" ...), {{.Index}} or {{.Count}} with spaces allowed
 * inside the braces, with *@count telling which; 0 for anything else.
 */
static size_t action_len(const char *s, bool *count)
{
    const char *p = s + 2;
    while (*p == ' ')
        p++;
    if (strncmp(p, ".Index", 6) == 0)
        *count = false;
    else if (strncmp(p, ".Count", 6) == 0)
        *count = true;
    else
        return 0;
    p += 6;
    while (*p == ' ')
        p++;
    return strncmp(p, "}}", 2) == 0 ? (size_t)(p + 2 - s) : 0;
}

int ks_bench_template_check(const struct ks_yaml_node *n, const char *file, const char *field,
                            struct ks_error *err)
{
    if (!n)
        return 0;
    if (n->kind == KS_YAML_SCALAR) {
        bool count;
        for (const char *s = strstr(n->str, "{{"); s; s = strstr(s + 2, "{{")) {
            if (!action_len(s, &count))
                return ks_error_set(err, file, n->line, field,
                                    "unsupported template action in \"%s\" (only {{.Index}} and {{.Count}})",
                                    n->str);
        }
        return 0;
    }
    for (uint32_t i = 0; i < n->n; i++) {
        int rc = n->kind == KS_YAML_MAP ? ks_bench_template_check(n->pairs[i].key, file, field, err) ||
                                              ks_bench_template_check(n->pairs[i].value, file, field, err)
                                        : ks_bench_template_check(n->items[i], file, field, err);
        if (rc)
            return -EINVAL;
    }
    return 0;
}

static int expand_scalar(struct ks_arena *a, const struct ks_yaml_node *n, int64_t index, int64_t count,
                         const struct ks_yaml_node **out)
{
    size_t actions = 0;
    for (const char *s = strstr(n->str, "{{"); s; s = strstr(s + 2, "{{"))
        actions++;
    if (!actions)
        return 0;
    char *buf = ks_arena_alloc(a, n->len + actions * 21 + 1), *w = buf;
    struct ks_yaml_node *copy = ks_arena_alloc(a, sizeof(*copy));
    if (!buf || !copy)
        return -ENOMEM;
    for (const char *s = n->str; *s;) {
        bool is_count;
        size_t len = s[0] == '{' && s[1] == '{' ? action_len(s, &is_count) : 0;
        if (!len) {
            *w++ = *s++;
            continue;
        }
        w += sprintf(w, "%" PRId64, is_count ? count : index);
        s += len;
    }
    *w = '\0';
    *copy = *n;
    copy->str = buf;
    copy->len = (size_t)(w - buf);
    *out = copy;
    return 0;
}

int ks_bench_template_expand(struct ks_arena *a, const struct ks_yaml_node *n, int64_t index, int64_t count,
                             const struct ks_yaml_node **out)
{
    *out = n;
    if (!n)
        return 0;
    if (n->kind == KS_YAML_SCALAR)
        return expand_scalar(a, n, index, count, out);
    struct ks_yaml_node *copy = NULL;
    bool map = n->kind == KS_YAML_MAP;
    for (uint32_t i = 0; i < n->n; i++) {
        const struct ks_yaml_node *k = map ? n->pairs[i].key : NULL,
                                  *v = map ? n->pairs[i].value : n->items[i];
        const struct ks_yaml_node *k2 = k, *v2 = v;
        int rc;
        if ((map && (rc = ks_bench_template_expand(a, k, index, count, &k2))) ||
            (rc = ks_bench_template_expand(a, v, index, count, &v2)))
            return rc;
        if (k2 == k && v2 == v)
            continue;
        if (!copy) {
            /* the first change: this node is copied, its children still shared */
            size_t size = map ? sizeof(*n->pairs) : sizeof(*n->items);
            void *items = ks_arena_calloc(a, n->n, size);
            if (!(copy = ks_arena_alloc(a, sizeof(*copy))) || !items)
                return -ENOMEM;
            *copy = *n;
            copy->ndup = 0;
            memcpy(items, map ? (void *)n->pairs : (void *)n->items, n->n * size);
            if (map)
                copy->pairs = items;
            else
                copy->items = items;
        }
        if (map)
            copy->pairs[i] = (struct ks_yaml_pair){(struct ks_yaml_node *)k2, (struct ks_yaml_node *)v2};
        else
            copy->items[i] = (struct ks_yaml_node *)v2;
    }
    if (copy)
        *out = copy;
    return 0;
}

/* ---- names, uids, hashes -------------------------------------------------------------------------- */

static uint32_t fnv32a(const char *s, uint32_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static uint64_t fnv64a(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* A version 4 UUID drawn from @kind, @ns and @name: the same object gets the same uid in every run. */
static void make_uid(char *buf, size_t len, const char *kind, const char *ns, const char *name)
{
    uint64_t s = fnv64a(name, fnv64a("/", fnv64a(ns, fnv64a("/", fnv64a(kind, 0xcbf29ce484222325ull)))));
    uint64_t x = ks_bench_splitmix(&s), y = ks_bench_splitmix(&s);
    snprintf(buf, len, "%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-%04" PRIx32 "-%012" PRIx64,
             (uint32_t)(x >> 32), (uint32_t)(x >> 16) & 0xffff, (uint32_t)x & 0xfff,
             ((uint32_t)(y >> 48) & 0x3fff) | 0x8000, (uint64_t)(y & 0xffffffffffffull));
}

/*
 * The form of the controllers' hashes (controller.ComputeHash: fnv-32a printed in decimal,
 * then rand.SafeEncodeString, one character per digit), over "<ns>/<name>[/<what>]".
 */
static void hash_of(char *buf, size_t len, const char *ns, const char *name, const char *what)
{
    uint32_t h = fnv32a(what, fnv32a("/", fnv32a(name, fnv32a("/", fnv32a(ns, 2166136261u)))));
    char dec[16];
    snprintf(dec, sizeof(dec), "%" PRIu32, h);
    size_t i = 0;
    for (; dec[i] && i + 1 < len; i++)
        buf[i] = safe_alphabet[(unsigned char)dec[i] % SAFE_LEN];
    buf[i] = '\0';
}

/*
 * The five characters of a ReplicaSet's pod @ordinal: generateName draws them at random from
 * the safe alphabet; here they are @ordinal scrambled by a bijection of [0, 27^5) (an odd
 * multiplier not divisible by 3, and an offset drawn from @owner), so the names of one owner's
 * pods never collide and look like the controller's.
 */
static void pod_suffix(char buf[6], const char *owner, uint64_t ordinal)
{
    const uint64_t span = 27ull * 27 * 27 * 27 * 27;
    uint64_t v = (ordinal * 1000003ull + fnv32a(owner, 2166136261u)) % span;
    for (int i = 4; i >= 0; i--, v /= SAFE_LEN)
        buf[i] = safe_alphabet[v % SAFE_LEN];
    buf[5] = '\0';
}

/* ---- createAny ----------------------------------------------------------------------------------------- */

static bool can_own(enum ks_kind kind)
{
    return kind == KS_KIND_REPLICA_SET || kind == KS_KIND_STATEFUL_SET ||
           kind == KS_KIND_REPLICATION_CONTROLLER;
}

/* [{apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true}]: a controlling reference. */
static struct ks_yaml_node *controller_ref(struct ks_arena *a, const char *api_version, const char *kind,
                                           const char *name, const char *uid, int line)
{
    struct ks_yaml_node *seq = ks_arena_calloc(a, 1, sizeof(*seq)),
                        **items = ks_arena_calloc(a, 1, sizeof(*items));
    struct ks_yaml_node *ref = map_copy(a, NULL, line, 6), *yes = scalar_node(a, "true", true, line);
    if (!seq || !items || !ref || !yes ||
        map_put(a, ref, "apiVersion", scalar_node(a, api_version, false, line)) ||
        map_put(a, ref, "kind", scalar_node(a, kind, false, line)) ||
        map_put(a, ref, "name", scalar_node(a, name, false, line)) ||
        map_put(a, ref, "uid", scalar_node(a, uid, false, line)) || map_put(a, ref, "controller", yes) ||
        map_put(a, ref, "blockOwnerDeletion", yes))
        return NULL;
    items[0] = ref;
    *seq = (struct ks_yaml_node){.kind = KS_YAML_SEQ, .line = line, .n = 1, .items = items};
    return seq;
}

/* The text of @n, a scalar, or @dflt. */
static const char *text_of(const struct ks_yaml_node *n, const char *dflt)
{
    return n && n->kind == KS_YAML_SCALAR ? n->str : dflt;
}

/*
 * The ReplicaSet the Deployment controller makes for Deployment @dep (named, in its
 * namespace @ns, with its uid): see the file's comment. NULL on ENOMEM.
 */
static const struct ks_yaml_node *deployment_replica_set(struct ks_arena *a, const struct ks_yaml_node *dep,
                                                         const char *ns)
{
    const struct ks_yaml_node *meta = ks_yaml_get(dep, "metadata"), *spec = ks_yaml_get(dep, "spec");
    const struct ks_yaml_node *tmpl = ks_yaml_get(spec, "template"), *tmeta = ks_yaml_get(tmpl, "metadata");
    const struct ks_yaml_node *sel = ks_yaml_get(spec, "selector");
    const char *name = text_of(ks_yaml_get(meta, "name"), "");
    int line = dep->line;
    char hash[16], rs[320], uid[40];

    hash_of(hash, sizeof(hash), ns, name, "");
    snprintf(rs, sizeof(rs), "%s-%s", name, hash);
    make_uid(uid, sizeof(uid), "ReplicaSet", ns, rs);
    struct ks_yaml_node *labels =
        map_with_str(a, ks_yaml_get(tmeta, "labels"), line, "pod-template-hash", hash);
    struct ks_yaml_node *match =
        map_with_str(a, ks_yaml_get(sel, "matchLabels"), line, "pod-template-hash", hash);
    struct ks_yaml_node *spec2 = map_copy(a, spec, line, 2), *rmeta = map_copy(a, NULL, line, 5);
    struct ks_yaml_node *doc = map_copy(a, NULL, line, 4);
    const struct ks_yaml_node *ref =
        controller_ref(a, "apps/v1", "Deployment", name, text_of(ks_yaml_get(meta, "uid"), ""), line);
    if (!labels || !match || !spec2 || !rmeta || !doc || !ref ||
        map_put(a, spec2, "selector", map_with(a, sel, line, "matchLabels", match)) ||
        map_put(a, spec2, "template",
                map_with(a, tmpl, line, "metadata", map_with(a, tmeta, line, "labels", labels))) ||
        map_put(a, rmeta, "name", scalar_node(a, rs, false, line)) ||
        map_put(a, rmeta, "namespace", scalar_node(a, ns, false, line)) ||
        map_put(a, rmeta, "uid", scalar_node(a, uid, false, line)) || map_put(a, rmeta, "labels", labels) ||
        map_put(a, rmeta, "ownerReferences", ref) ||
        map_put(a, doc, "apiVersion", scalar_node(a, "apps/v1", false, line)) ||
        map_put(a, doc, "kind", scalar_node(a, "ReplicaSet", false, line)) ||
        map_put(a, doc, "metadata", rmeta) || map_put(a, doc, "spec", spec2))
        return NULL;
    return doc;
}

/* Object @index of @op's template, expanded, named and placed: the document to decode. 0 or -ENOMEM. */
static int object_doc(struct ks_arena *a, const struct ks_bench_op *op, int64_t index, int64_t count,
                      const struct ks_yaml_node **out)
{
    const struct ks_yaml_node *t = op->object_template, *doc;
    const struct ks_yaml_node *own = path(t, "metadata", "name", NULL);
    bool owner = can_own(op->object_kind);
    char name[320], uid[40];
    int rc;

    if ((rc = ks_bench_template_expand(a, t, index, count, &doc)))
        return rc;
    const struct ks_yaml_node *meta = ks_yaml_get(doc, "metadata");
    snprintf(name, sizeof(name), "%s", text_of(ks_yaml_get(meta, "name"), ""));
    if (op->numbered && !strstr(text_of(own, ""), "{{")) {
        const char *prefix = text_of(ks_yaml_get(meta, "generateName"), NULL);
        if (prefix)
            snprintf(name, sizeof(name), "%s%" PRId64, prefix, index);
        else
            snprintf(name, sizeof(name), "%s-%" PRId64, text_of(ks_yaml_get(meta, "name"), ""), index);
    }
    struct ks_yaml_node *m = map_copy(a, meta, doc->line, 3);
    if (!m || map_put(a, m, "name", scalar_node(a, name, false, m->line)))
        return -ENOMEM;
    if (op->namespace && op->object_ns != KS_ID_EMPTY &&
        map_put(a, m, "namespace", scalar_node(a, op->namespace, false, m->line)))
        return -ENOMEM;
    const char *ns = op->object_ns == KS_ID_EMPTY ? "" : text_of(ks_yaml_get(m, "namespace"), "default");
    if ((owner || op->deployment) && (op->numbered || !ks_yaml_get(m, "uid"))) {
        make_uid(uid, sizeof(uid), op->deployment ? "Deployment" : ks_kind_name(op->object_kind), ns, name);
        if (map_put(a, m, "uid", scalar_node(a, uid, false, m->line)))
            return -ENOMEM;
    }
    if (!(doc = map_with(a, doc, doc->line, "metadata", m)))
        return -ENOMEM;
    if (op->deployment && !(doc = deployment_replica_set(a, doc, ns)))
        return -ENOMEM;
    *out = doc;
    return 0;
}

/*
 * The pods' labels of @obj (of @kind, decoded from @doc) with the API server's check that its
 * selector selects them, into a new entry of @made. 0, -EINVAL with @err, or -ENOMEM.
 */
static int record_owner(struct ks_bench_owners *made, const char *file, const struct ks_yaml_node *doc,
                        enum ks_kind kind, const void *obj, struct ks_error *err)
{
    const struct ks_yaml_node *spec = ks_yaml_get(doc, "spec");
    const struct ks_yaml_node *tmeta = path(spec, "template", "metadata", NULL);
    const struct ks_yaml_node *reps = ks_yaml_get(spec, "replicas");
    const struct ks_object_meta *meta = obj; /* every kind starts with its metadata */
    struct ks_arena *a = &made->arena;
    struct ks_bench_owner *o;
    struct ks_decoder d;
    struct ks_labels labels = {0};
    int rc;

    if (made->n == made->cap) {
        if (ks_reserve((void **)&made->items, &made->cap, (uint64_t)made->n + 1, sizeof(*made->items)) < 0)
            return -ENOMEM;
    }
    o = &made->items[made->n];
    *o = (struct ks_bench_owner){.kind = kind, .name = meta->name, .ns = meta->namespace_id, .replicas = 1};
    /* spec.replicas: the decoders do not read it; the API server requires an int32 >= 0 */
    if (reps && !ks_yaml_is_null(reps)) {
        char *end = NULL;
        errno = 0;
        long long v = reps->kind == KS_YAML_SCALAR && reps->plain ? strtoll(reps->str, &end, 10) : -1;
        if (v < 0 || *end || end == reps->str)
            return ks_error_set(err, file, reps->line, "spec.replicas", "must be an integer >= 0, not \"%s\"",
                                text_of(reps, "?"));
        if (v > INT32_MAX || errno == ERANGE)
            return ks_error_set(err, file, reps->line, "spec.replicas", "must be at most %d (int32), not %s",
                                INT32_MAX, reps->str);
        o->replicas = v;
    }
    /*
     * The template's labels, which the selector must select. A ReplicationController's selector
     * stands in for absent ones, as SetDefaults_ReplicationController has it the other way round.
     */
    o->labels = ks_yaml_get(tmeta, "labels");
    ks_decoder_init(&d, file, a, err);
    size_t saved = ks_dec_push(&d, "spec");
    if (!o->labels && kind == KS_KIND_REPLICATION_CONTROLLER) {
        o->labels = ks_yaml_get(spec, "selector");
        rc = ks_dec_labels(&d, spec, "selector", &labels);
    } else {
        ks_dec_push(&d, "template");
        ks_dec_push(&d, "metadata");
        rc = ks_dec_labels(&d, tmeta, "labels", &labels);
    }
    if (rc)
        return rc;
    ks_dec_pop(&d, saved);
    bool selects = true;
    if (kind == KS_KIND_REPLICATION_CONTROLLER) {
        const struct ks_labels *sel = &((const struct ks_replication_controller *)obj)->selector;
        for (uint32_t i = 0; i < sel->n && selects; i++) {
            uint32_t v;
            selects = ks_labels_get(&labels, sel->items[i].key, &v) && v == sel->items[i].value;
        }
    } else {
        const struct ks_label_selector *sel = kind == KS_KIND_REPLICA_SET
                                                  ? ((const struct ks_replica_set *)obj)->selector
                                                  : ((const struct ks_stateful_set *)obj)->selector;
        selects = ks_label_selector_matches(sel, &labels);
    }
    if (!selects)
        return ks_error_set(
            err, file, o->labels ? o->labels->line : (tmeta ? tmeta->line : doc->line),
            "spec.template.metadata.labels",
            "Invalid value: the labels of %s/%s's pods: `selector` does not match template `labels`",
            ks_intern_str(meta->namespace_id), meta->name);
    const char *api_version = kind == KS_KIND_REPLICATION_CONTROLLER ? "v1" : "apps/v1";
    if (!(o->uid = meta->uid) ||
        !(o->refs = controller_ref(a, api_version, ks_kind_name(kind), meta->name, meta->uid, doc->line)))
        return o->uid ? -ENOMEM : ks_error_set(err, file, doc->line, "metadata.uid", "Required value%s", "");
    if (kind == KS_KIND_STATEFUL_SET) {
        char hash[16], rev[340];
        hash_of(hash, sizeof(hash), ks_intern_str(meta->namespace_id), meta->name, "revision");
        snprintf(rev, sizeof(rev), "%s-%s", meta->name, hash);
        if (!(o->revision = ks_arena_strdup(a, rev)))
            return -ENOMEM;
    }
    o->first = made->pods;
    made->pods += (uint64_t)o->replicas;
    made->n++;
    return 0;
}

int ks_bench_create_any(const struct ks_bench_op *op, const char *file, int64_t first, int64_t count,
                        struct ks_objects *objs, struct ks_bench_owners *made, struct ks_error *err)
{
    struct ks_arena scratch = {0};
    bool keep =
        made && can_own(op->object_kind); /* the trees of owners stay: their pods' labels are in them */
    struct ks_arena *a = keep ? &made->arena : &scratch;
    int rc = 0;

    for (int64_t i = 0; i < count && rc == 0; i++) {
        const struct ks_yaml_node *doc = NULL;
        enum ks_kind kind = op->object_kind;
        void *obj = NULL;
        if ((rc = object_doc(a, op, first + i, count, &doc)) == 0 &&
            (rc = ks_object_decode(file, doc, &kind, &obj, err)) == 0)
            rc = ks_dra_check_object(NULL, file, "", kind, obj, err);
        if (rc == 0 && kind != op->object_kind)
            rc =
                ks_error_set(err, file, doc->line, "kind", "every object of a createAny op is a %s, not a %s",
                             ks_kind_name(op->object_kind), ks_kind_name(kind));
        if (rc == 0 && (rc = ks_objects_push(objs, kind, obj)) == 0) {
            obj = NULL; /* the set's now */
            if (keep)
                rc = record_owner(made, file, doc, kind, objs->of[kind].items[objs->of[kind].n - 1], err);
        }
        ks_object_destroy(kind, obj);
        if (!keep)
            ks_arena_reset(&scratch);
    }
    ks_arena_destroy(&scratch);
    return rc;
}

void ks_bench_owners_release(struct ks_bench_owners *o)
{
    if (!o)
        return;
    free(o->items);
    ks_arena_destroy(&o->arena);
    *o = (struct ks_bench_owners){0};
}

/* ---- the pods of an owner ---------------------------------------------------------------------------- */

int ks_bench_owned_pod(const struct ks_bench_op *op, const char *file, const struct ks_bench_owners *owners,
                       uint64_t k, struct ks_arena *scratch, struct ks_pod **out, struct ks_error *err)
{
    if (k >= owners->pods)
        return ks_error_set(err, file, op->line, "owners",
                            "pod %" PRIu64 " of the op has no owner: the %u objects of %s take %" PRIu64
                            " pods (their replicas)",
                            k, owners->n, op->owners, owners->pods);
    /* the last object whose first pod is not after pod k: objects of 0 replicas share the next one's first */
    uint32_t lo = 0, hi = owners->n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (owners->items[mid].first <= k)
            lo = mid;
        else
            hi = mid;
    }
    const struct ks_bench_owner *o = &owners->items[lo];
    uint64_t ordinal = k - o->first;
    const struct ks_yaml_node *tmpl = ks_bench_op_pod_template(op, k);
    const struct ks_yaml_node *meta = ks_yaml_get(tmpl, "metadata");
    char name[352], suffix[6], index[24];

    if (o->kind == KS_KIND_STATEFUL_SET) {
        snprintf(name, sizeof(name), "%s-%" PRIu64, o->name, ordinal);
    } else {
        pod_suffix(suffix, o->name, ordinal);
        snprintf(name, sizeof(name), "%s-%s", o->name, suffix);
    }
    struct ks_yaml_node *labels = map_merge(scratch, ks_yaml_get(meta, "labels"), o->labels, tmpl->line);
    if (!labels)
        return -ENOMEM;
    if (o->kind == KS_KIND_STATEFUL_SET) {
        snprintf(index, sizeof(index), "%" PRIu64, ordinal);
        const struct ks_yaml_node *rev = scalar_node(scratch, o->revision, false, labels->line),
                                  *pod = scalar_node(scratch, name, false, labels->line),
                                  *idx = scalar_node(scratch, index, false, labels->line);
        if (!rev || !pod || !idx || map_put(scratch, labels, "controller-revision-hash", rev) ||
            map_put(scratch, labels, "statefulset.kubernetes.io/pod-name", pod) ||
            map_put(scratch, labels, "apps.kubernetes.io/pod-index", idx))
            return -ENOMEM;
    }
    struct ks_yaml_node *m = map_copy(scratch, meta, tmpl->line, 2);
    if (!m || map_put(scratch, m, "labels", labels) || map_put(scratch, m, "ownerReferences", o->refs))
        return -ENOMEM;
    const struct ks_yaml_node *doc = map_with(scratch, tmpl, tmpl->line, "metadata", m);
    if (!doc)
        return -ENOMEM;
    return ks_bench_pod(doc, file, name, ks_intern_str(o->ns), out, err);
}
