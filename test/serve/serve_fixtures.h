/*
 * serve_fixtures.h - what the tests of ksched serve's writes share: a pod decoded from a
 * YAML document (as the informers decode them), and a field read from a request body.
 * Used by test_events.c and test_writer.c.
 */
#ifndef KSCHED_TEST_SERVE_FIXTURES_H
#define KSCHED_TEST_SERVE_FIXTURES_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/internal/decode.h"
#include "ksched/internal/json_tree.h"
#include "ksched/yaml_tree.h"

/* pod_from - the pod of the single document @yaml (the test fails on bad input); free with ks_pod_put. */
static inline struct ks_pod *pod_from(const char *yaml)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    struct ks_pod *pod;
    cr_assert_eq(ks_api_init(), 0);
    cr_assert_eq(ks_yaml_parse("pod.yaml", yaml, strlen(yaml), &st, &err), 0, "%s", err.msg);
    cr_assert_eq(ks_decode_pod("pod.yaml", st->docs[0], &pod, &err), 0, "%s: %s", err.field, err.msg);
    ks_yaml_stream_destroy(st);
    return pod;
}

/* field - the text at dotted @path ("status.conditions.0.reason") of JSON @body, "" when absent. */
static inline const char *field(const char *body, const char *path, char *buf, size_t len)
{
    struct ks_yaml_stream *st;
    struct ks_error err = {0};
    cr_assert_eq(ks_json_parse("body", body, strlen(body), &st, &err), 0, "%s in %s", err.msg, body);
    const struct ks_yaml_node *n = st->docs[0];
    char p[256];
    snprintf(p, sizeof(p), "%s", path);
    for (char *save = NULL, *tok = strtok_r(p, ".", &save); tok && n; tok = strtok_r(NULL, ".", &save)) {
        if (n->kind == KS_YAML_SEQ) {
            unsigned i = (unsigned)atoi(tok);
            n = i < n->n ? n->items[i] : NULL;
        } else {
            n = ks_yaml_get(n, tok);
        }
    }
    snprintf(buf, len, "%s", n && n->kind == KS_YAML_SCALAR ? n->str : n ? "<composite>" : "");
    ks_yaml_stream_destroy(st);
    return buf;
}

#endif
