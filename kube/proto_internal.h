/*
 * proto_internal.h - what the kube/proto_*.c files share (protobuf-c types; nothing outside
 * kube/ and its tests uses it).
 *
 * The messages are generated at build time by protoc-c from the .proto files of kube/proto/
 * (their conventions: kube/proto/runtime.proto). A decoded message is turned into the tree
 * the JSON path builds (ksched/yaml_tree.h) by walking its descriptor, and a tree into a
 * message the same way, so there is one converter for every kind and no per-kind code.
 */
#ifndef KSCHED_KUBE_PROTO_INTERNAL_H
#define KSCHED_KUBE_PROTO_INTERNAL_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "ksched/base/arena.h"
#include "ksched/base/error.h"
#include "ksched/yaml_tree.h"

#include "apps.pb-c.h"
#include "coordination.pb-c.h"
#include "core.pb-c.h"
#include "events.pb-c.h"
#include "meta.pb-c.h"
#include "policy.pb-c.h"
#include "runtime.pb-c.h"
#include "scheduling.pb-c.h"
#include "storage.pb-c.h"

/* A `<name>_inline` message field: its fields are the enclosing object's in JSON (Go's inline struct). */
static inline bool ks__proto_is_inline(const ProtobufCFieldDescriptor *f)
{
    static const char suffix[] = "_inline";
    size_t n = strlen(f->name);
    return f->type == PROTOBUF_C_TYPE_MESSAGE && n > sizeof(suffix) - 1 &&
           memcmp(f->name + n - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) == 0;
}

/* A `...Entry` message: a repeated field of it is a JSON map. */
static inline bool ks__proto_is_entry(const ProtobufCMessageDescriptor *d)
{
    return d == &ks__meta__string_entry__descriptor || d == &ks__meta__quantity_entry__descriptor ||
           d == &ks__meta__time_entry__descriptor;
}

/* The bytes of one element of repeated field @f's array in its message. */
static inline size_t ks__proto_element_size(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    default:
        return 4;
    }
}

/* A protobuf-c allocator that takes from @arena and never frees (the arena is freed whole). */
ProtobufCAllocator ks__proto_arena_allocator(struct ks_arena *arena);

/*
 * ks__proto_to_tree - @msg as the map its JSON form parses to: field names as keys, fields
 * JSON would omit left out (see runtime.proto), Time/MicroTime/Quantity/IntOrString as
 * their JSON scalars, map entries as maps, `_inline` fields merged into the parent. Nodes
 * live in @arena (strings may point into @msg, which must live as long). Errors (a time
 * out of range) name @file, line 1 and the field. 0, -EINVAL or -ENOMEM.
 */
int ks__proto_to_tree(struct ks_arena *arena, const ProtobufCMessage *msg, const char *file,
                      struct ks_yaml_node **out, struct ks_error *err);

enum {
    KS__PROTO_LENIENT = 1u, /* a key the message lacks is skipped instead of failing */
};

/*
 * ks__proto_from_tree - the message of @desc that the map @map describes (the inverse of
 * ks__proto_to_tree), allocated in @arena; strings point into @map. Top-level apiVersion
 * and kind are skipped (they belong to the envelope). A key the message lacks is an error
 * (-ENOENT, the field named) unless @flags has KS__PROTO_LENIENT; a value of the wrong shape
 * is -EINVAL. Errors name @file and the node's line.
 */
int ks__proto_from_tree(struct ks_arena *arena, const ProtobufCMessageDescriptor *desc,
                        const struct ks_yaml_node *map, unsigned flags, const char *file,
                        ProtobufCMessage **out, struct ks_error *err);

/*
 * ks__proto_parse_message - the message of @d in @len bytes at @buf (no envelope: a list's
 * item) as one document, the tree of its JSON without apiVersion and kind. 0, -EINVAL with
 * @err set (file @file, line 1), -ENOMEM. Free *out with ks_yaml_stream_destroy().
 */
int ks__proto_parse_message(const char *file, const ProtobufCMessageDescriptor *d, const void *buf,
                            size_t len, struct ks_yaml_stream **out, struct ks_error *err);

/* The message of an (apiVersion, kind) ksched speaks protobuf for, or NULL. Status matches any apiVersion. */
const ProtobufCMessageDescriptor *ks__proto_kind_descriptor(const char *api_version, const char *kind);

#endif
