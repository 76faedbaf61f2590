/*
 * objects.c - test builders for labels, selectors, resources, taints, pods and nodes
 * (see objects.h for the string syntaxes).
 *
 * Stands in for the loader in unit tests: like it, the builders intern every compared
 * string, keep label sets, requirement values and resource lists sorted by id, and put
 * everything in the object's arena. The selector syntax follows labels.Parse of
 * k8s.io/apimachinery (selector.go) closely enough for the upstream test tables; the
 * quantity syntax is the common subset of resource.Quantity (no exponents).
 * Failures abort: a broken fixture is a broken test.
 */
#include "fakes/objects.h"

#include "ksched/base/intern.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *spec)
{
    fprintf(stderr, "fakes: bad %s: \"%s\"\n", what, spec ? spec : "(null)");
    abort();
}

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "fakes: out of memory\n");
        abort();
    }
    return p;
}

static uint32_t intern_n(const char *s, size_t len)
{
    uint32_t id = ks_intern_n(s, len);
    if (id == KS_ID_NONE)
        must(NULL);
    return id;
}

static void ensure_init(void)
{
    if (ks_api_init() < 0)
        must(NULL);
}

/* Trim spaces at both ends of [*s, *s + *len). */
static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

/*
 * Split @spec at top-level commas (not inside parentheses) and call @fn on each trimmed,
 * non-empty piece. Returns the number of pieces.
 */
static size_t split(const char *spec, void (*fn)(const char *s, size_t len, void *arg), void *arg)
{
    size_t count = 0;
    if (!spec)
        return 0;
    const char *start = spec;
    int depth = 0;
    for (const char *p = spec;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if (*p == '\0' || (*p == ',' && depth == 0)) {
            const char *s = start;
            size_t len = (size_t)(p - start);
            trim(&s, &len);
            if (len) {
                if (fn)
                    fn(s, len, arg);
                count++;
            }
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    return count;
}

/* ---- labels ---- */

struct label_fill {
    struct ks_label *items;
    uint32_t n;
    const char *spec;
};

/* Split "key=value" at its first '=' into trimmed key and value; @what names it when there is none. */
static void split_pair(const char *s, size_t len, const char *what, const char *spec, const char **k,
                       size_t *klen, const char **v, size_t *vlen)
{
    const char *eq = memchr(s, '=', len);
    if (!eq)
        fail(what, spec);
    *k = s;
    *klen = (size_t)(eq - s);
    *v = eq + 1;
    *vlen = len - *klen - 1;
    trim(k, klen);
    trim(v, vlen);
}

/* Sort @n items of @size by @cmp; two that compare equal are a bad @what. */
static void sort_unique(void *items, size_t n, size_t size, int (*cmp)(const void *, const void *),
                        const char *what, const char *spec)
{
    qsort(items, n, size, cmp);
    for (size_t i = 1; i < n; i++) {
        if (cmp((const char *)items + (i - 1) * size, (const char *)items + i * size) == 0)
            fail(what, spec);
    }
}

static void add_label(const char *s, size_t len, void *arg)
{
    struct label_fill *f = arg;
    const char *k, *v;
    size_t klen, vlen;
    split_pair(s, len, "label", f->spec, &k, &klen, &v, &vlen);
    f->items[f->n++] = (struct ks_label){.key = intern_n(k, klen), .value = intern_n(v, vlen)};
}

static int cmp_label(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_label *)a)->key, y = ((const struct ks_label *)b)->key;
    return (x > y) - (x < y);
}

struct ks_labels ks_fake_labels(struct ks_arena *a, const char *spec)
{
    struct ks_labels out = {0};
    size_t n = split(spec, NULL, NULL);
    if (!n)
        return out;
    struct label_fill f = {.items = must(ks_arena_calloc(a, n, sizeof(struct ks_label))), .spec = spec};
    split(spec, add_label, &f);
    sort_unique(f.items, f.n, sizeof(*f.items), cmp_label, "labels (duplicate key)", spec);
    out.n = f.n;
    out.items = f.items;
    return out;
}

/* ---- quantities and resource lists ---- */

int64_t ks_fake_quantity(uint32_t name, const char *q)
{
    const char *p = q;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    __int128 digits = 0;
    int frac = 0, ndigits = 0;
    bool dot = false;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
        if (*p == '.') {
            dot = true;
            continue;
        }
        digits = digits * 10 + (*p - '0');
        frac += dot;
        if (++ndigits > 18)
            fail("quantity (too many digits)", q);
    }
    if (ndigits == 0)
        fail("quantity", q);

    static const struct {
        const char *suffix;
        int dec; /* power of ten */
        int bin; /* power of 1024 */
    } suffixes[] = {
        {"", 0, 0},   {"m", -3, 0}, {"k", 3, 0},  {"M", 6, 0},  {"G", 9, 0},  {"T", 12, 0}, {"P", 15, 0},
        {"E", 18, 0}, {"Ki", 0, 1}, {"Mi", 0, 2}, {"Gi", 0, 3}, {"Ti", 0, 4}, {"Pi", 0, 5}, {"Ei", 0, 6},
    };
    int dec = 0, bin = -1;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strcmp(p, suffixes[i].suffix) == 0) {
            dec = suffixes[i].dec;
            bin = suffixes[i].bin;
        }
    }
    if (bin < 0)
        fail("quantity suffix", q);
    if (name == ks_wk.cpu)
        dec += 3;
    dec -= frac;

    __int128 num = digits << (10 * bin), den = 1;
    for (; dec > 0; dec--)
        num *= 10;
    for (; dec < 0; dec++)
        den *= 10;
    __int128 v = (num + den - 1) / den; /* round up, as Quantity.Value() and MilliValue() */
    if (v > INT64_MAX)
        fail("quantity (too large)", q);
    return neg ? -(int64_t)v : (int64_t)v;
}

struct resource_fill {
    struct ks_resource_item *items;
    uint32_t n;
    const char *spec;
};

static void add_resource(const char *s, size_t len, void *arg)
{
    struct resource_fill *f = arg;
    const char *k, *v;
    size_t klen, vlen;
    split_pair(s, len, "resource", f->spec, &k, &klen, &v, &vlen);
    char buf[64];
    if (vlen >= sizeof(buf))
        fail("resource quantity", f->spec);
    memcpy(buf, v, vlen);
    buf[vlen] = '\0';
    uint32_t name = intern_n(k, klen);
    f->items[f->n++] = (struct ks_resource_item){.name = name, .value = ks_fake_quantity(name, buf)};
}

static int cmp_resource(const void *a, const void *b)
{
    uint32_t x = ((const struct ks_resource_item *)a)->name, y = ((const struct ks_resource_item *)b)->name;
    return (x > y) - (x < y);
}

struct ks_resource_list ks_fake_resource_list(struct ks_arena *a, const char *spec)
{
    ensure_init();
    struct ks_resource_list out = {0};
    size_t n = split(spec, NULL, NULL);
    if (!n)
        return out;
    struct resource_fill f = {.items = must(ks_arena_calloc(a, n, sizeof(struct ks_resource_item))),
                              .spec = spec};
    split(spec, add_resource, &f);
    sort_unique(f.items, f.n, sizeof(*f.items), cmp_resource, "resources (duplicate name)", spec);
    out.n = f.n;
    out.items = f.items;
    return out;
}

/* ---- selectors ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

struct req_fill {
    struct ks_arena *a;
    struct ks_requirement *reqs;
    uint32_t n;
    const char *spec;
};

/*
 * Set @r's values from the text [s, s + len), a comma-separated list in which empty items
 * are the empty value ("a," is {"", "a"}); an empty text gives no values at all.
 */
static void set_values(struct req_fill *f, struct ks_requirement *r, const char *s, size_t len)
{
    trim(&s, &len);
    r->values = NULL;
    r->nvalues = 0;
    if (len == 0)
        return;
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += s[i] == ',';
    uint32_t *ids = must(ks_arena_calloc(f->a, n, sizeof(uint32_t)));
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == ',') {
            const char *v = s + start;
            size_t vlen = i - start;
            trim(&v, &vlen);
            ids[k++] = intern_n(v, vlen);
            start = i + 1;
        }
    }
    qsort(ids, k, sizeof(*ids), cmp_u32);
    uint32_t u = 0;
    for (size_t i = 0; i < k; i++) {
        if (u == 0 || ids[u - 1] != ids[i])
            ids[u++] = ids[i];
    }
    r->values = ids;
    r->nvalues = u;
}

static bool is_key_char(char c)
{
    return !isspace((unsigned char)c) && c != '=' && c != '!' && c != '<' && c != '>' && c != '(' && c != ')';
}

static void add_requirement(const char *s, size_t len, void *arg)
{
    struct req_fill *f = arg;
    struct ks_requirement *r = &f->reqs[f->n++];
    const char *end = s + len;
    if (*s == '!') {
        const char *k = s + 1;
        size_t klen = len - 1;
        trim(&k, &klen);
        r->key = intern_n(k, klen);
        r->op = KS_OP_DOES_NOT_EXIST;
        return;
    }
    const char *p = s;
    while (p < end && is_key_char(*p))
        p++;
    r->key = intern_n(s, (size_t)(p - s));
    while (p < end && isspace((unsigned char)*p))
        p++;
    if (p == end) {
        r->op = KS_OP_EXISTS;
        return;
    }
    size_t oplen;
    bool set_form = false;
    if (strncmp(p, "in", 2) == 0 && (p + 2 == end || p[2] == ' ' || p[2] == '(')) {
        r->op = KS_OP_IN;
        oplen = 2;
        set_form = true;
    } else if (strncmp(p, "notin", 5) == 0 && (p + 5 == end || p[5] == ' ' || p[5] == '(')) {
        r->op = KS_OP_NOT_IN;
        oplen = 5;
        set_form = true;
    } else if (strncmp(p, "==", 2) == 0 || strncmp(p, "!=", 2) == 0) {
        r->op = *p == '=' ? KS_OP_IN : KS_OP_NOT_IN;
        oplen = 2;
    } else if (*p == '=' || *p == '>' || *p == '<') {
        r->op = *p == '=' ? KS_OP_IN : *p == '>' ? KS_OP_GT : KS_OP_LT;
        oplen = 1;
    } else {
        fail("selector operator", f->spec);
        return;
    }
    const char *v = p + oplen;
    size_t vlen = (size_t)(end - v);
    trim(&v, &vlen);
    if (set_form) {
        /* "(a,b)"; "()" gives a requirement without values, which upstream rejects */
        if (vlen < 2 || v[0] != '(' || v[vlen - 1] != ')')
            fail("selector value set", f->spec);
        set_values(f, r, v + 1, vlen - 2);
        return;
    }
    /* One value, taken whole ("k=" selects the empty value). */
    r->values = must(ks_arena_calloc(f->a, 1, sizeof(uint32_t)));
    r->values[0] = intern_n(v, vlen);
    r->nvalues = 1;
    if (r->op == KS_OP_GT || r->op == KS_OP_LT) {
        char buf[32];
        if (vlen >= sizeof(buf))
            fail("selector number", f->spec);
        memcpy(buf, v, vlen);
        buf[vlen] = '\0';
        char *stop;
        r->number = strtoll(buf, &stop, 10);
        if (*stop != '\0')
            fail("selector number", f->spec);
    }
}

uint32_t ks_fake_requirements(struct ks_arena *a, const char *spec, struct ks_requirement **out)
{
    size_t n = split(spec, NULL, NULL);
    *out = NULL;
    if (!n)
        return 0;
    struct req_fill f = {
        .a = a, .reqs = must(ks_arena_calloc(a, n, sizeof(struct ks_requirement))), .spec = spec};
    split(spec, add_requirement, &f);
    *out = f.reqs;
    return f.n;
}

struct ks_label_selector *ks_fake_selector(struct ks_arena *a, const char *spec)
{
    if (!spec)
        return NULL;
    struct ks_label_selector *sel = must(ks_arena_calloc(a, 1, sizeof(*sel)));
    sel->nreqs = ks_fake_requirements(a, spec, &sel->reqs);
    return sel;
}

struct ks_node_selector_term ks_fake_term(struct ks_arena *a, const char *exprs, const char *fields)
{
    struct ks_node_selector_term t = {0};
    t.nexprs = ks_fake_requirements(a, exprs, &t.exprs);
    t.nfields = ks_fake_requirements(a, fields, &t.fields);
    return t;
}

struct ks_node_selector *ks_fake_node_selector(struct ks_arena *a, size_t n, const struct ks_fake_term *terms)
{
    struct ks_node_selector *sel = must(ks_arena_calloc(a, 1, sizeof(*sel)));
    if (n)
        sel->terms = must(ks_arena_calloc(a, n, sizeof(*sel->terms)));
    for (size_t i = 0; i < n; i++)
        sel->terms[i] = ks_fake_term(a, terms[i].exprs, terms[i].fields);
    sel->nterms = (uint32_t)n;
    return sel;
}

/* ---- taints and tolerations ---- */

static enum ks_taint_effect effect_of(const char *s, size_t len, const char *spec)
{
    static const struct {
        const char *name;
        enum ks_taint_effect effect;
    } effects[] = {
        {"", KS_EFFECT_NONE},
        {"NoSchedule", KS_EFFECT_NO_SCHEDULE},
        {"PreferNoSchedule", KS_EFFECT_PREFER_NO_SCHEDULE},
        {"NoExecute", KS_EFFECT_NO_EXECUTE},
    };
    for (size_t i = 0; i < sizeof(effects) / sizeof(effects[0]); i++) {
        if (strlen(effects[i].name) == len && strncmp(effects[i].name, s, len) == 0)
            return effects[i].effect;
    }
    fail("taint effect", spec);
    return KS_EFFECT_NONE;
}

static struct ks_taint parse_taint(const char *s, size_t len, const char *spec)
{
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':')
            colon = s + i;
    }
    if (!colon)
        fail("taint (no effect)", spec);
    size_t kvlen = (size_t)(colon - s);
    const char *eq = memchr(s, '=', kvlen);
    struct ks_taint t = {.value = KS_ID_EMPTY};
    if (eq) {
        t.key = intern_n(s, (size_t)(eq - s));
        t.value = intern_n(eq + 1, (size_t)(colon - eq - 1));
    } else {
        t.key = intern_n(s, kvlen);
    }
    t.effect = effect_of(colon + 1, len - kvlen - 1, spec);
    return t;
}

struct ks_taint ks_fake_taint(const char *spec)
{
    return parse_taint(spec, strlen(spec), spec);
}

struct ks_toleration ks_fake_toleration(const char *key, const char *op, const char *value,
                                        const char *effect)
{
    struct ks_toleration t = {
        .key = intern_n(key ? key : "", key ? strlen(key) : 0),
        .value = intern_n(value ? value : "", value ? strlen(value) : 0),
        .toleration_seconds = -1,
    };
    if (!op || !*op || strcmp(op, "Equal") == 0)
        t.op = KS_TOLERATION_EQUAL;
    else if (strcmp(op, "Exists") == 0)
        t.op = KS_TOLERATION_EXISTS;
    else
        fail("toleration operator", op);
    t.effect = effect ? effect_of(effect, strlen(effect), effect) : KS_EFFECT_NONE;
    return t;
}

/* ---- pods ---- */

struct ks_pod *ks_fake_pod(const char *namespace_name, const char *name)
{
    ensure_init();
    struct ks_pod *pod = must(calloc(1, sizeof(*pod)));
    pod->meta.name = must(ks_arena_strdup(&pod->arena, name));
    pod->meta.namespace_id = intern_n(namespace_name, strlen(namespace_name));
    pod->meta.uid = must(ks_arena_strdup(&pod->arena, name));
    pod->meta.creation_time = KS_TIME_NONE;
    pod->meta.deletion_time = KS_TIME_NONE;
    pod->node_name = KS_ID_EMPTY;
    pod->scheduler_name = ks_wk.default_scheduler;
    pod->phase = KS_PHASE_PENDING;
    pod->nominated_node_name = KS_ID_EMPTY;
    pod->start_time = KS_TIME_NONE;
    pod->refs = 1; /* as a decoded pod: the caller holds one reference */
    return pod;
}

void ks_fake_pod_labels(struct ks_pod *pod, const char *labels)
{
    pod->meta.labels = ks_fake_labels(&pod->arena, labels);
}

/* Append one zeroed element to an arena array of @size-byte elements; returns the new element. */
static void *append(struct ks_arena *a, void **array, uint32_t *n, size_t size)
{
    char *fresh = must(ks_arena_calloc(a, (size_t)*n + 1, size));
    if (*n)
        memcpy(fresh, *array, (size_t)*n * size);
    *array = fresh;
    return fresh + (size_t)(*n)++ * size;
}

static struct ks_container *add_container(struct ks_pod *pod, struct ks_container **array, uint32_t *n,
                                          const char *prefix, const char *requests)
{
    struct ks_container *c = append(&pod->arena, (void **)array, n, sizeof(**array));
    char name[32];
    snprintf(name, sizeof(name), "%s%u", prefix, *n - 1);
    c->name = must(ks_arena_strdup(&pod->arena, name));
    c->image = KS_ID_EMPTY;
    c->requests = ks_fake_resource_list(&pod->arena, requests);
    return c;
}

struct ks_container *ks_fake_container(struct ks_pod *pod, const char *requests)
{
    return add_container(pod, &pod->containers, &pod->ncontainers, "c", requests);
}

struct ks_container *ks_fake_init_container(struct ks_pod *pod, const char *requests, bool sidecar)
{
    struct ks_container *c =
        add_container(pod, &pod->init_containers, &pod->ninit_containers, "init", requests);
    c->restart_always = sidecar;
    return c;
}

void ks_fake_pod_overhead(struct ks_pod *pod, const char *resources)
{
    pod->overhead = ks_fake_resource_list(&pod->arena, resources);
}

void ks_fake_pod_toleration(struct ks_pod *pod, struct ks_toleration tol)
{
    struct ks_toleration *t =
        append(&pod->arena, (void **)&pod->tolerations, &pod->ntolerations, sizeof(tol));
    *t = tol;
}

struct ks_pod *ks_fake_pod_done(struct ks_pod *pod)
{
    if (ks_pod_finish(pod) < 0)
        must(NULL);
    return pod;
}

/* ---- nodes ---- */

struct ks_node *ks_fake_node(const char *name, const char *labels)
{
    ensure_init();
    struct ks_node *node = must(calloc(1, sizeof(*node)));
    node->meta.name = must(ks_arena_strdup(&node->arena, name));
    node->meta.namespace_id = KS_ID_EMPTY;
    node->meta.uid = must(ks_arena_strdup(&node->arena, name));
    node->meta.creation_time = KS_TIME_NONE;
    node->meta.deletion_time = KS_TIME_NONE;
    node->meta.labels = ks_fake_labels(&node->arena, labels);
    node->name_id = intern_n(name, strlen(name));
    return node;
}

void ks_fake_node_allocatable(struct ks_node *node, const char *resources)
{
    node->allocatable = ks_fake_resource_list(&node->arena, resources);
    node->capacity = node->allocatable;
    if (ks_node_finish(node) < 0)
        must(NULL);
}

struct taint_fill {
    struct ks_taint *items;
    uint32_t n;
    const char *spec;
};

static void add_taint(const char *s, size_t len, void *arg)
{
    struct taint_fill *f = arg;
    f->items[f->n++] = parse_taint(s, len, f->spec);
}

void ks_fake_node_taints(struct ks_node *node, const char *spec)
{
    size_t n = split(spec, NULL, NULL);
    struct taint_fill f = {.spec = spec};
    if (n)
        f.items = must(ks_arena_calloc(&node->arena, n, sizeof(struct ks_taint)));
    split(spec, add_taint, &f);
    node->taints = f.items;
    node->ntaints = f.n;
}
