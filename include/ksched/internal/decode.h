/*
 * decode.h - typed decoding of YAML trees into Kubernetes objects.
 *
 * A struct ks_decoder walks one object's tree, allocating into the object's arena and
 * tracking the dotted field path (spec.containers[0].resources.requests.cpu) so that the
 * first failure becomes one struct ks_error with file, line and field. Fields ksched does
 * not model are ignored, as a client decoding a newer server's objects would; a field it
 * does model must have the right shape and a valid value.
 *
 * Context: load time, one thread per decoder. Functions return 0 or a negative errno
 * (-EINVAL with the error set, -ENOMEM).
 */
#ifndef KSCHED_DECODE_H
#define KSCHED_DECODE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ksched/api_types.h"
#include "ksched/base/error.h"
#include "ksched/quantity.h"
#include "ksched/yaml_tree.h"

#define KS_DECODE_PATH_MAX 256

struct ks_decoder {
    const char *file;
    struct ks_error *err;
    struct ks_arena *arena;
    char path[KS_DECODE_PATH_MAX];
    size_t plen;
};

/* ks_decoder_init - a decoder for one object, allocating into @arena. */
void ks_decoder_init(struct ks_decoder *d, const char *file, struct ks_arena *arena, struct ks_error *err);

/* Path handling: push returns the previous length, which pop restores. */
size_t ks_dec_push(struct ks_decoder *d, const char *field);
size_t ks_dec_push_index(struct ks_decoder *d, uint32_t i);
size_t ks_dec_push_key(struct ks_decoder *d, const char *key); /* .key, or [key] when it has a dot */
void ks_dec_pop(struct ks_decoder *d, size_t len);

/* ks_dec_fail - record an error at @node's line (or @line when @node is NULL) on the current path. */
int ks_dec_fail(struct ks_decoder *d, const struct ks_yaml_node *node, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ks_dec_nomem - record an out-of-memory error; returns -ENOMEM. */
int ks_dec_nomem(struct ks_decoder *d);

/*
 * Each field decoder looks @key up in @map; a missing or null field leaves *out alone
 * (callers set defaults first) and returns 0. Path and line of errors are the field's.
 */
int ks_dec_map(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
               const struct ks_yaml_node **out);
int ks_dec_seq(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
               const struct ks_yaml_node **out);
int ks_dec_string(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, const char **out);
int ks_dec_id(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *out);
int ks_dec_int32(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int32_t *out);
int ks_dec_int64(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int64_t *out);
int ks_dec_bool(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, bool *out);
int ks_dec_time(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, int64_t *out);

/*
 * ks_dec_number_text - the JSON text of number node @n as kubectl would send it ("16" for
 * 0x10, "1000" for 1e3) into @buf: 0, or -EINVAL when @n is no number (-EDOM: NaN, an infinity).
 * ks_dec_quantity - quantity node @n (a number, or a string with its spaces trimmed) into *@q:
 * 0 or -EINVAL.
 */
int ks_dec_number_text(const struct ks_yaml_node *n, char *buf, size_t len);
int ks_dec_quantity(const struct ks_yaml_node *n, struct ks_quantity *q);

/*
 * ks_rfc3339_parse - RFC 3339 text (metav1.Time: YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), a day
 * its month has, seconds up to 59, as Go's time.Parse) to unix seconds and nanoseconds
 * (fraction digits past nine dropped). 0, or -1 when @s is not such a time. ks_dec_time()
 * reads fields with it, saturating at the int64 nanosecond range.
 */
int ks_rfc3339_parse(const char *s, int64_t *secs, int32_t *nanos);
int ks_dec_labels(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                  struct ks_labels *out);
int ks_dec_annotations(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                       struct ks_annotations *out);
int ks_dec_resources(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                     struct ks_resource_list *out);
int ks_dec_id_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                   uint32_t **out);
/* ks_dec_id_set - like ks_dec_id_list, sorted by id (for binary search). */
int ks_dec_id_set(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                  uint32_t **out);
int ks_dec_string_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, uint32_t *n,
                       const char ***out);

/*
 * ks_dec_item_fn - decode @node (a list item, or the map of ks_dec_object) into @elem
 * (zeroed arena memory); @ctx is the caller's. The path is at the node
 * ("tolerations[2]", "affinity.podAffinity") and is restored after it.
 */
typedef int (*ks_dec_item_fn)(struct ks_decoder *d, const struct ks_yaml_node *node, void *elem, void *ctx);

/*
 * ks_dec_list - the list field @key into a new arena array of *n elements of @elem_size
 * bytes: every item must be a map, which @item decodes. @items is the address of the
 * caller's array pointer (a struct ks_toleration ** passed as void **). A missing or null
 * field leaves *n and *items alone.
 */
int ks_dec_list(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t elem_size,
                uint32_t *n, void **items, ks_dec_item_fn item, void *ctx);

/*
 * ks_dec_object - the map field @key into a new zeroed arena object of @size bytes that
 * @fn decodes (with the path at the field); *out (the address of the caller's object
 * pointer) is set on success and left alone when the field is missing or null.
 */
int ks_dec_object(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t size,
                  void **out, ks_dec_item_fn fn, void *ctx);

/*
 * ks_dec_pair_fn - decode one pair of a map field: @key (a scalar) and @value (any node,
 * null included) into @elem (zeroed arena memory). The path is at the map; the function
 * pushes what its errors need (ks_dec_push_map_key) and the caller restores it.
 * ks_dec_pairs - the map field @key into a new arena array of *n elements, one per pair in
 * document order; a missing or null field leaves *n and *items alone.
 */
typedef int (*ks_dec_pair_fn)(struct ks_decoder *d, const struct ks_yaml_node *key,
                              const struct ks_yaml_node *value, void *elem, void *ctx);
int ks_dec_pairs(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key, size_t elem_size,
                 uint32_t *n, void **items, ks_dec_pair_fn fn, void *ctx);

/* ks_dec_push_map_key - push "[key]", as field.Path.Key() writes a map key; returns the previous length. */
size_t ks_dec_push_map_key(struct ks_decoder *d, const char *key);

/*
 * ks_go_quote - the @n bytes at @s as Go's %q writes an ASCII string ("a\"b", "\n", "\x01")
 * into @buf of @len bytes (truncated, NUL-terminated); returns the full length.
 */
size_t ks_go_quote(char *buf, size_t len, const char *s, size_t n);

/*
 * ks_dec_invalid - fail with field.Invalid's text at @field (pushed; NULL: the current path)
 * of node @n: "Invalid value: \"VALUE\": DETAIL".
 */
int ks_dec_invalid(struct ks_decoder *d, const struct ks_yaml_node *n, const char *field, const char *value,
                   const char *detail);

/* ks_dec_required - fail with "Required value" at @field of @at (the map that lacks it). */
int ks_dec_required(struct ks_decoder *d, const struct ks_yaml_node *at, const char *field);

/* ks_dec_enum - a string field that must be one of @names (NULL-terminated); *out is its index. */
int ks_dec_enum(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                const char *const *names, int *out);

/* Selectors: *out stays NULL when the field is missing or null (a nil selector). */
int ks_dec_label_selector(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                          struct ks_label_selector **out);
int ks_dec_node_selector(struct ks_decoder *d, const struct ks_yaml_node *map, const char *key,
                         struct ks_node_selector **out);
int ks_dec_node_selector_term(struct ks_decoder *d, const struct ks_yaml_node *node,
                              struct ks_node_selector_term *out);

/* ks_dec_meta - metadata; @namespaced objects default their namespace to "default". */
int ks_dec_meta(struct ks_decoder *d, const struct ks_yaml_node *doc, bool namespaced,
                struct ks_object_meta *out);

/*
 * KS_DEFINE_DECODER - define fn(file, doc, out, err): allocate a zeroed @type, decode it
 * with body(decoder, doc, obj) into its own arena, destroy it on failure.
 */
#define KS_DEFINE_DECODER(fn, type, destroy, body)                                                           \
    int fn(const char *file, const struct ks_yaml_node *doc, type **out, struct ks_error *err)               \
    {                                                                                                        \
        struct ks_decoder d;                                                                                 \
        type *obj = calloc(1, sizeof(*obj));                                                                 \
        int rc;                                                                                              \
        *out = NULL;                                                                                         \
        if (!obj)                                                                                            \
            return -ENOMEM;                                                                                  \
        ks_decoder_init(&d, file, &obj->arena, err);                                                         \
        if ((rc = body(&d, doc, obj))) {                                                                     \
            destroy(obj);                                                                                    \
            return rc;                                                                                       \
        }                                                                                                    \
        *out = obj;                                                                                          \
        return 0;                                                                                            \
    }

/* Object decoders: each allocates the object and returns it in *out (caller destroys). */
int ks_decode_pod(const char *file, const struct ks_yaml_node *doc, struct ks_pod **out,
                  struct ks_error *err);
int ks_decode_node(const char *file, const struct ks_yaml_node *doc, struct ks_node **out,
                   struct ks_error *err);
int ks_decode_pv(const char *file, const struct ks_yaml_node *doc, struct ks_persistent_volume **out,
                 struct ks_error *err);
int ks_decode_pvc(const char *file, const struct ks_yaml_node *doc, struct ks_persistent_volume_claim **out,
                  struct ks_error *err);
int ks_decode_storage_class(const char *file, const struct ks_yaml_node *doc, struct ks_storage_class **out,
                            struct ks_error *err);
int ks_decode_csi_node(const char *file, const struct ks_yaml_node *doc, struct ks_csi_node **out,
                       struct ks_error *err);
int ks_decode_pdb(const char *file, const struct ks_yaml_node *doc, struct ks_pod_disruption_budget **out,
                  struct ks_error *err);
int ks_decode_namespace(const char *file, const struct ks_yaml_node *doc, struct ks_namespace **out,
                        struct ks_error *err);
int ks_decode_priority_class(const char *file, const struct ks_yaml_node *doc, struct ks_priority_class **out,
                             struct ks_error *err);
int ks_decode_service(const char *file, const struct ks_yaml_node *doc, struct ks_service **out,
                      struct ks_error *err);
int ks_decode_replication_controller(const char *file, const struct ks_yaml_node *doc,
                                     struct ks_replication_controller **out, struct ks_error *err);
int ks_decode_replica_set(const char *file, const struct ks_yaml_node *doc, struct ks_replica_set **out,
                          struct ks_error *err);
struct ks_device_class;
struct ks_resource_slice;
struct ks_resource_claim;
struct ks_resource_claim_template;
int ks_decode_device_class(const char *file, const struct ks_yaml_node *doc, struct ks_device_class **out,
                           struct ks_error *err);
int ks_decode_resource_slice(const char *file, const struct ks_yaml_node *doc, struct ks_resource_slice **out,
                             struct ks_error *err);
int ks_decode_resource_claim(const char *file, const struct ks_yaml_node *doc, struct ks_resource_claim **out,
                             struct ks_error *err);
int ks_decode_resource_claim_template(const char *file, const struct ks_yaml_node *doc,
                                      struct ks_resource_claim_template **out, struct ks_error *err);
int ks_decode_stateful_set(const char *file, const struct ks_yaml_node *doc, struct ks_stateful_set **out,
                           struct ks_error *err);
/* scheduling.k8s.io/v1beta1 (api/decode_podgroup.c), validated as the API server validates a create. */
struct ks_pod_group;
struct ks_workload;
int ks_decode_pod_group(const char *file, const struct ks_yaml_node *doc, struct ks_pod_group **out,
                        struct ks_error *err);
int ks_decode_workload(const char *file, const struct ks_yaml_node *doc, struct ks_workload **out,
                       struct ks_error *err);

#endif
