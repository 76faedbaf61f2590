/*
 * kube_proto.h - Kubernetes' protobuf wire format (application/vnd.kubernetes.protobuf), as
 * kube-scheduler's client speaks it, for the kinds ksched lists, watches and writes.
 *
 * A body is the magic "k8s\0" then a runtime.Unknown {typeMeta {apiVersion, kind}, raw}
 * whose raw bytes are the object (a Pod, a PodList, a Status...). A watch stream is a
 * sequence of frames, each a 4-byte big-endian length and a metav1.WatchEvent {type,
 * object} whose object's raw bytes are an enveloped object again. The message definitions
 * are the .proto files of kube/proto/: only the fields ksched reads or writes (a decoder
 * skips the rest).
 *
 * Decoding yields the tree the object's JSON parses to (ksched/internal/json_tree.h), so the
 * manifest decoders build the same structs from either format. Nothing here keeps state:
 * every function may run on any thread.
 */
#ifndef KSCHED_KUBE_PROTO_H
#define KSCHED_KUBE_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "ksched/base/error.h"
#include "ksched/yaml_tree.h"

#define KS_PROTO_MEDIA_TYPE "application/vnd.kubernetes.protobuf"
#define KS_JSON_MEDIA_TYPE  "application/json"

/* ks_proto_is_enveloped - the @len bytes at @buf begin with the "k8s\0" magic. */
bool ks_proto_is_enveloped(const void *buf, size_t len);

/*
 * ks_proto_parse - an enveloped object or list of a kind ksched knows (the Unknown's
 * typeMeta says which) as the tree of its JSON: one document with apiVersion and kind,
 * fields ksched does not read left out. Returns 0 and *out, -EINVAL with @err set (file
 * @file, line 1: no magic, a malformed message, an unknown kind, a content encoding), or
 * -ENOMEM. Free *out with ks_yaml_stream_destroy().
 */
int ks_proto_parse(const char *file, const void *buf, size_t len, struct ks_yaml_stream **out,
                   struct ks_error *err);

/*
 * ks_proto_parse_watch_event - one frame of a protobuf watch stream (without its length
 * prefix) as the tree of the JSON event: {type, object}. As ks_proto_parse().
 */
int ks_proto_parse_watch_event(const char *file, const void *buf, size_t len, struct ks_yaml_stream **out,
                               struct ks_error *err);

/*
 * ks_kube_body_parse - a response body of an API server: ks_proto_parse() when it is
 * enveloped, ks_json_parse() otherwise. Same contract.
 */
int ks_kube_body_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                       struct ks_error *err);

enum {
    KS_PROTO_ENCODE_LENIENT = 1u, /* skip fields the message lacks instead of failing */
};

/*
 * ks_proto_encode - @doc (an object's tree, as JSON or YAML give it) as the enveloped
 * protobuf body of (@api_version, @kind) (NULL: the document's own apiVersion and kind).
 * A field the message does not carry fails with -ENOENT (the field named in @err) unless
 * @flags has KS_PROTO_ENCODE_LENIENT; a value of the wrong shape or an unknown kind is
 * -EINVAL; -ENOMEM. On success *out (malloc'ed, free()) holds *len bytes.
 */
int ks_proto_encode(const char *file, const struct ks_yaml_node *doc, const char *api_version,
                    const char *kind, unsigned flags, char **out, size_t *len, struct ks_error *err);

/* ks_proto_kind_known - ksched has a protobuf message for (@api_version, @kind). */
bool ks_proto_kind_known(const char *api_version, const char *kind);

#endif
