/*
 * test_json_edit.c - an object's JSON with a few fields set (kube/json_edit.c): members
 * replaced in place, kept under if_absent, appended when new with the objects on the way,
 * null replaced by an object, everything else (numbers' text, escapes, order) kept.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/internal/json_edit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *edit(const char *in, const struct ks_json_edit *e, size_t n, int *rc)
{
    char *out = NULL;
    size_t len = 0;
    *rc = ks_json_edit(in, strlen(in), e, n, &out, &len);
    if (*rc == 0)
        cr_expect(eq(sz, len, strlen(out)));
    return out;
}

static const char *const rv[] = {"metadata", "resourceVersion", NULL};
static const char *const ann[] = {"metadata", "annotations", "pv.kubernetes.io/bound-by-controller", NULL};
static const char *const ref[] = {"spec", "claimRef", NULL};

Test(json_edit, replaces_in_place_and_keeps_the_rest)
{
    const char *in =
        "{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-1\",\"resourceVersion\":\"12\","
        "\"labels\":{\"a\":\"x\\\"y\\u00e9\\n\"}},\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},"
        "\"n\":1.50e3,\"b\":[true,false,null],\"claimRef\":{\"name\":\"old\"}},\"status\":{}}";
    struct ks_json_edit e[] = {{.path = rv, .value = "\"9\""}, {.path = ref, .value = "{\"name\":\"c\"}"}};
    int rc;
    char *out = edit(in, e, 2, &rc);
    cr_assert(eq(int, rc, 0));
    cr_expect(eq(str, out,
                 "{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-1\",\"resourceVersion\":\"9\","
                 "\"labels\":{\"a\":\"x\\\"y\xc3\xa9\\n\"}},\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},"
                 "\"n\":1.50e3,\"b\":[true,false,null],\"claimRef\":{\"name\":\"c\"}},\"status\":{}}"));
    free(out);
}

Test(json_edit, appends_members_and_the_objects_on_the_way)
{
    int rc;
    struct ks_json_edit e[] = {{.path = ann, .value = "\"yes\"", .if_absent = true},
                               {.path = ref, .value = "{}"}};
    char *out = edit("{\"metadata\":{\"name\":\"pv\"}}", e, 2, &rc);
    cr_assert(eq(int, rc, 0));
    cr_expect(eq(
        str, out,
        "{\"metadata\":{\"name\":\"pv\",\"annotations\":{\"pv.kubernetes.io/bound-by-controller\":\"yes\"}},"
        "\"spec\":{\"claimRef\":{}}}"));
    free(out);
    /* annotations: null becomes an object; existing annotations are kept */
    out = edit("{\"metadata\":{\"annotations\":null}}", e, 1, &rc);
    cr_assert(eq(int, rc, 0));
    cr_expect(
        eq(str, out, "{\"metadata\":{\"annotations\":{\"pv.kubernetes.io/bound-by-controller\":\"yes\"}}}"));
    free(out);
    out = edit("{\"metadata\":{\"annotations\":{\"x\":\"1\"}}}", e, 1, &rc);
    cr_assert(eq(int, rc, 0));
    cr_expect(eq(
        str, out,
        "{\"metadata\":{\"annotations\":{\"x\":\"1\",\"pv.kubernetes.io/bound-by-controller\":\"yes\"}}}"));
    free(out);
}

Test(json_edit, if_absent_keeps_an_existing_member)
{
    int rc;
    struct ks_json_edit e[] = {{.path = ann, .value = "\"yes\"", .if_absent = true}};
    char *out =
        edit("{\"metadata\":{\"annotations\":{\"pv.kubernetes.io/bound-by-controller\":\"no\"}}}", e, 1, &rc);
    cr_assert(eq(int, rc, 0));
    cr_expect(
        eq(str, out, "{\"metadata\":{\"annotations\":{\"pv.kubernetes.io/bound-by-controller\":\"no\"}}}"));
    free(out);
}

Test(json_edit, refuses_what_is_not_an_object)
{
    int rc;
    struct ks_json_edit e[] = {{.path = rv, .value = "\"1\""}};
    cr_expect(edit("[1]", e, 1, &rc) == NULL);
    cr_expect(eq(int, rc, -EINVAL));
    cr_expect(edit("{\"metadata\":", e, 1, &rc) == NULL);
    cr_expect(eq(int, rc, -EINVAL));
    cr_expect(edit("{\"metadata\":\"x\"}", e, 1, &rc) == NULL, "a path through a string");
    cr_expect(eq(int, rc, -EINVAL));
}

Test(json_edit, get_string)
{
    char buf[32];
    const char *in =
        "{\"kind\":\"Status\",\"message\":\"no \\\"x\\\"\",\"metadata\":{\"resourceVersion\":\"77\"}}";
    static const char *const msg[] = {"message", NULL};
    cr_expect(ks_json_get_string(in, strlen(in), rv, buf, sizeof(buf)));
    cr_expect(eq(str, buf, "77"));
    cr_expect(ks_json_get_string(in, strlen(in), msg, buf, sizeof(buf)));
    cr_expect(eq(str, buf, "no \"x\""));
    cr_expect(ks_json_get_string(in, strlen(in), ref, buf, sizeof(buf)) == false);
    cr_expect(ks_json_get_string("nope", 4, msg, buf, sizeof(buf)) == false);
}
