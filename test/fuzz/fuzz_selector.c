/*
 * fuzz_selector.c - libFuzzer target: label selectors and node selectors, decoded from
 * YAML (ks_dec_labels, ks_dec_label_selector, ks_dec_node_selector in api/decode.c) and
 * matched (api/selector.c).
 *
 * Input: YAML documents, each a map with any of `labels` (a node's labels), `nodeName`,
 * `selector` (a metav1.LabelSelector) and `nodeSelector` (a v1.NodeSelector). Checked
 * beyond sanitizers: the decoders' failure contract (fuzz_common.h), the invariants the
 * matchers rely on (labels sorted with unique keys, In/NotIn values sorted), and the
 * matchers' answers against a naive reference that scans linearly and re-reads every
 * Gt/Lt value with strtoll (labels.Requirement.Matches semantics).
 */
#include "fuzz_common.h"

#include <ctype.h>
#include <limits.h>

#include "ksched/internal/decode.h"
#include "ksched/yaml_tree.h"

KS_FUZZ_INITIALIZE_API()

static bool ref_label(const struct ks_labels *l, uint32_t key, uint32_t *value)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].key == key) {
            *value = l->items[i].value;
            return true;
        }
    }
    return false;
}

static bool ref_in(const struct ks_requirement *r, uint32_t v)
{
    for (uint32_t i = 0; i < r->nvalues; i++) {
        if (r->values[i] == v)
            return true;
    }
    return false;
}

/* strconv.ParseInt(s, 10, 64) by strtoll plus the checks strtoll skips (spaces, empty). */
static bool ref_int(const char *s, long long *out)
{
    const char *d = s + (*s == '+' || *s == '-');
    if (!isdigit((unsigned char)*d))
        return false;
    for (const char *p = d; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return false;
    }
    errno = 0;
    *out = strtoll(s, NULL, 10);
    return errno == 0;
}

static bool ref_requirement(const struct ks_requirement *r, const struct ks_labels *l)
{
    uint32_t v;
    bool has = ref_label(l, r->key, &v);
    long long n;
    switch (r->op) {
    case KS_OP_IN:
        return has && ref_in(r, v);
    case KS_OP_NOT_IN:
        return !has || !ref_in(r, v);
    case KS_OP_EXISTS:
        return has;
    case KS_OP_DOES_NOT_EXIST:
        return !has;
    case KS_OP_GT:
        return has && ref_int(ks_intern_str(v), &n) && n > r->number;
    case KS_OP_LT:
        return has && ref_int(ks_intern_str(v), &n) && n < r->number;
    }
    return false;
}

static void check_sorted(const struct ks_requirement *r)
{
    ks_fuzz_check(r->key != KS_ID_NONE, "requirement without a key");
    for (uint32_t i = 0; (r->op == KS_OP_IN || r->op == KS_OP_NOT_IN) && i + 1 < r->nvalues; i++)
        ks_fuzz_check(r->values[i] <= r->values[i + 1], "values not sorted");
}

static bool ref_term(const struct ks_node_selector_term *t, const struct ks_labels *l, uint32_t name)
{
    if (t->nexprs == 0 && t->nfields == 0)
        return false;
    for (uint32_t i = 0; i < t->nexprs; i++) {
        check_sorted(&t->exprs[i]);
        if (!ref_requirement(&t->exprs[i], l))
            return false;
    }
    for (uint32_t i = 0; i < t->nfields; i++) {
        const struct ks_requirement *r = &t->fields[i];
        ks_fuzz_check(r->nvalues == 1 && (r->op == KS_OP_IN || r->op == KS_OP_NOT_IN),
                      "decoded field requirement with op %d and %u values", (int)r->op, r->nvalues);
        if (name != KS_ID_EMPTY && (r->op == KS_OP_IN) != (r->values[0] == name))
            return false;
    }
    return true;
}

static void check_doc(const struct ks_yaml_node *doc, const uint8_t *data, size_t size)
{
    struct ks_arena arena = {0};
    struct ks_error err = {0};
    struct ks_decoder d;
    struct ks_labels labels = {0};
    struct ks_label_selector *sel = NULL;
    struct ks_node_selector *nsel = NULL;
    uint32_t name = KS_ID_EMPTY;
    int rc;

    ks_decoder_init(&d, KS_FUZZ_FILE, &arena, &err);
    if ((rc = ks_dec_labels(&d, doc, "labels", &labels)) || (rc = ks_dec_id(&d, doc, "nodeName", &name)) ||
        (rc = ks_dec_label_selector(&d, doc, "selector", &sel)) ||
        (rc = ks_dec_node_selector(&d, doc, "nodeSelector", &nsel))) {
        ks_fuzz_check_result(rc, NULL, &err, KS_FUZZ_FILE, data, size);
        goto out;
    }
    for (uint32_t i = 0; i + 1 < labels.n; i++)
        ks_fuzz_check(labels.items[i].key < labels.items[i + 1].key, "labels not sorted by unique key");
    if (sel) {
        bool want = true;
        for (uint32_t i = 0; i < sel->nreqs; i++) {
            check_sorted(&sel->reqs[i]);
            ks_fuzz_check(sel->reqs[i].op <= KS_OP_DOES_NOT_EXIST, "Gt/Lt decoded in a label selector");
            want = want && ref_requirement(&sel->reqs[i], &labels);
        }
        ks_fuzz_check(ks_label_selector_matches(sel, &labels) == want, "label selector: reference says %d",
                      want);
    }
    if (nsel) {
        bool want = false;
        ks_fuzz_check(nsel->nterms > 0, "node selector without terms decoded");
        for (uint32_t i = 0; i < nsel->nterms; i++) {
            bool t = ref_term(&nsel->terms[i], &labels, name);
            ks_fuzz_check(ks_node_selector_term_matches(&nsel->terms[i], &labels, name) == t,
                          "term %u: reference says %d", i, t);
            want = want || t;
        }
        ks_fuzz_check(ks_node_selector_matches(nsel, &labels, name) == want,
                      "node selector: reference says %d", want);
    }
out:
    ks_arena_destroy(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    int rc = ks_yaml_parse(KS_FUZZ_FILE, (const char *)data, size, &s, &err);

    ks_fuzz_check_result(rc, s, &err, KS_FUZZ_FILE, data, size);
    for (uint32_t i = 0; s && i < s->ndocs; i++) {
        if (s->docs[i] && s->docs[i]->kind == KS_YAML_MAP)
            check_doc(s->docs[i], data, size);
    }
    ks_yaml_stream_destroy(s);
    ks_fuzz_recycle();
    return 0;
}
