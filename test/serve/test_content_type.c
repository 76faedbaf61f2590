/*
 * test_content_type.c - `ksched serve --content-type` (and kube-scheduler's name for it,
 * --kube-api-content-type): json and protobuf, short or as media types; anything else is
 * a usage error.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "serve.h"

#include <errno.h>

static int parse(const char *flag, const char *value, struct ks_serve_args *a)
{
    char *argv[] = {"serve", (char *)flag, (char *)value};
    return ks_serve_parse_args(value ? 3 : 2, argv, a);
}

Test(serve_content_type, json_or_protobuf_by_either_name)
{
    struct ks_serve_args a;
    cr_assert_eq(parse("--content-type", "json", &a), 0);
    cr_expect_str_eq(a.content_type, "application/json");
    cr_assert_eq(parse("--content-type=protobuf", NULL, &a), 0);
    cr_expect_str_eq(a.content_type, "application/vnd.kubernetes.protobuf");
    cr_assert_eq(parse("--kube-api-content-type", "application/json", &a), 0);
    cr_expect_str_eq(a.content_type, "application/json");
    cr_assert_eq(parse("--kube-api-content-type=application/vnd.kubernetes.protobuf", NULL, &a), 0);
    cr_expect_str_eq(a.content_type, "application/vnd.kubernetes.protobuf");
    cr_assert_eq(parse("--seed", "1", &a), 0);
    cr_expect_null(a.content_type, "no flag: the configuration's clientConnection.contentType");
}

Test(serve_content_type, anything_else_is_refused, .init = cr_redirect_stderr)
{
    struct ks_serve_args a;
    cr_expect_eq(parse("--content-type", "yaml", &a), -EINVAL);
    cr_expect_eq(parse("--content-type", "application/vnd.kubernetes.protobuf;stream=watch", &a), -EINVAL);
    cr_expect_eq(parse("--content-type", NULL, &a), -EINVAL);
}
