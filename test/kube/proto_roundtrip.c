/*
 * proto_roundtrip.c - ks_proto_roundtrip FILE: every document of a manifest through
 * Kubernetes' protobuf encoding and back, written out as JSON documents.
 *
 * Each object of a kind ksched has a message for is encoded leniently (fields the
 * messages do not carry are dropped, as a protobuf LIST from the API server drops them
 * for ksched) and decoded again; anything else (other kinds, objects that do not encode)
 * is written as it was. What `ksched schedule` decides from the output must be what it
 * decides from the input: test/scenarios/proto_roundtrip.sh checks that over the
 * conformance corpus, so a field a plugin reads but kube/proto/ lacks cannot go unseen.
 * Standard error gets "roundtripped N of M documents". Exit 2 when FILE does not parse.
 */
#include "ksched/base/error.h"
#include "ksched/internal/json_write.h"
#include "ksched/internal/kube_proto.h"
#include "ksched/yaml_tree.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    if (argc != 2) {
        fprintf(stderr, "usage: ks_proto_roundtrip FILE\n");
        return 2;
    }
    if (ks_yaml_parse_file(argv[1], &s, &err) < 0) {
        char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
        ks_error_format(&err, msg, sizeof(msg));
        fprintf(stderr, "ks_proto_roundtrip: %s\n", msg);
        return 2;
    }
    unsigned done = 0, total = 0;
    for (uint32_t i = 0; i < s->ndocs; i++) {
        const struct ks_yaml_node *doc = s->docs[i];
        if (!doc || ks_yaml_is_null(doc))
            continue;
        total++;
        char *wire = NULL;
        size_t len = 0;
        struct ks_yaml_stream *back = NULL;
        struct ks_error e2 = {0};
        if (ks_proto_encode(argv[1], doc, NULL, NULL, KS_PROTO_ENCODE_LENIENT, &wire, &len, &e2) == 0 &&
            ks_proto_parse(argv[1], wire, len, &back, &e2) == 0) {
            doc = back->docs[0];
            done++;
        }
        fputs("---\n", stdout);
        ks_yaml_write_json(stdout, doc);
        fputc('\n', stdout);
        ks_yaml_stream_destroy(back);
        free(wire);
    }
    fprintf(stderr, "roundtripped %u of %u documents\n", done, total);
    ks_yaml_stream_destroy(s);
    return ferror(stdout) ? 1 : 0;
}
