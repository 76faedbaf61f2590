/*
 * proto_wire.c - the envelope of Kubernetes' protobuf encoding, the kinds ksched speaks it
 * for, and watch events (include/ksched/internal/kube_proto.h).
 *
 * Mirrors k8s.io/apimachinery pkg/runtime/serializer/protobuf (Serializer: the "k8s\0"
 * prefix and runtime.Unknown; RawSerializer: a watch frame's WatchEvent carries no prefix)
 * and pkg/apiserver's watch encoding (the event's object is enveloped by the embedded
 * encoder). Messages are unpacked with protobuf-c into the result's arena, so one
 * ks_yaml_stream_destroy() frees the message and its tree together.
 */
#include "proto_internal.h"

#include "ksched/internal/json_tree.h"
#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char magic[4] = {0x6b, 0x38, 0x73, 0x00};

static const struct {
    const char *api_version, *kind;
    const ProtobufCMessageDescriptor *desc;
} kinds[] = {
    {"v1", "Node", &ks__core__node__descriptor},
    {"v1", "NodeList", &ks__core__node_list__descriptor},
    {"v1", "Pod", &ks__core__pod__descriptor},
    {"v1", "PodList", &ks__core__pod_list__descriptor},
    {"v1", "PersistentVolume", &ks__core__persistent_volume__descriptor},
    {"v1", "PersistentVolumeList", &ks__core__persistent_volume_list__descriptor},
    {"v1", "PersistentVolumeClaim", &ks__core__persistent_volume_claim__descriptor},
    {"v1", "PersistentVolumeClaimList", &ks__core__persistent_volume_claim_list__descriptor},
    {"v1", "Namespace", &ks__core__namespace__descriptor},
    {"v1", "NamespaceList", &ks__core__namespace_list__descriptor},
    {"v1", "Service", &ks__core__service__descriptor},
    {"v1", "ServiceList", &ks__core__service_list__descriptor},
    {"v1", "ReplicationController", &ks__core__replication_controller__descriptor},
    {"v1", "ReplicationControllerList", &ks__core__replication_controller_list__descriptor},
    {"v1", "Binding", &ks__core__binding__descriptor},
    {"storage.k8s.io/v1", "StorageClass", &ks__storage__storage_class__descriptor},
    {"storage.k8s.io/v1", "StorageClassList", &ks__storage__storage_class_list__descriptor},
    {"storage.k8s.io/v1", "CSINode", &ks__storage__csinode__descriptor},
    {"storage.k8s.io/v1", "CSINodeList", &ks__storage__csinode_list__descriptor},
    {"policy/v1", "PodDisruptionBudget", &ks__policy__pod_disruption_budget__descriptor},
    {"policy/v1", "PodDisruptionBudgetList", &ks__policy__pod_disruption_budget_list__descriptor},
    {"scheduling.k8s.io/v1", "PriorityClass", &ks__scheduling__priority_class__descriptor},
    {"scheduling.k8s.io/v1", "PriorityClassList", &ks__scheduling__priority_class_list__descriptor},
    {"apps/v1", "ReplicaSet", &ks__apps__replica_set__descriptor},
    {"apps/v1", "ReplicaSetList", &ks__apps__replica_set_list__descriptor},
    {"apps/v1", "StatefulSet", &ks__apps__stateful_set__descriptor},
    {"apps/v1", "StatefulSetList", &ks__apps__stateful_set_list__descriptor},
    {"events.k8s.io/v1", "Event", &ks__events__event__descriptor},
    {"coordination.k8s.io/v1", "Lease", &ks__coordination__lease__descriptor},
};

const ProtobufCMessageDescriptor *ks__proto_kind_descriptor(const char *api_version, const char *kind)
{
    if (!kind)
        return NULL;
    if (strcmp(kind, "Status") == 0)
        return &ks__meta__status__descriptor; /* metav1.Status answers in every group version */
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(kinds[i].kind, kind) == 0 && api_version && strcmp(kinds[i].api_version, api_version) == 0)
            return kinds[i].desc;
    }
    return NULL;
}

bool ks_proto_kind_known(const char *api_version, const char *kind)
{
    return ks__proto_kind_descriptor(api_version, kind) != NULL;
}

bool ks_proto_is_enveloped(const void *buf, size_t len)
{
    return len >= sizeof(magic) && memcmp(buf, magic, sizeof(magic)) == 0;
}

static struct ks_yaml_stream *new_stream(const char *file)
{
    struct ks_yaml_stream *s = calloc(1, sizeof(*s));
    if (s && (!(s->file = ks_arena_strdup(&s->arena, file ? file : "")) ||
              !(s->docs = ks_arena_alloc(&s->arena, sizeof(*s->docs))))) {
        ks_yaml_stream_destroy(s);
        return NULL;
    }
    return s;
}

static struct ks_yaml_node *text_node(struct ks_arena *a, const char *s, int plain)
{
    struct ks_yaml_node *n = ks_arena_alloc(a, sizeof(*n));
    if (n) {
        *n = (struct ks_yaml_node){
            .kind = KS_YAML_SCALAR, .line = 1, .plain = plain, .str = s, .len = strlen(s)};
    }
    return n;
}

/* Put apiVersion and kind first in @map (as the object's JSON has them), in @a. */
static int add_type(struct ks_arena *a, struct ks_yaml_node *map, const char *api_version, const char *kind)
{
    struct ks_yaml_pair *pairs = ks_arena_calloc(a, map->n + 2, sizeof(*pairs));
    struct ks_yaml_node *kav = text_node(a, "apiVersion", 0), *vav = text_node(a, api_version, 0);
    struct ks_yaml_node *kk = text_node(a, "kind", 0), *vk = text_node(a, kind, 0);
    if (!pairs || !kav || !vav || !kk || !vk)
        return -ENOMEM;
    pairs[0] = (struct ks_yaml_pair){kav, vav};
    pairs[1] = (struct ks_yaml_pair){kk, vk};
    if (map->n)
        memcpy(pairs + 2, map->pairs, map->n * sizeof(*pairs));
    map->pairs = pairs;
    map->n += 2;
    return 0;
}

/* An enveloped object as a tree in @s's arena. */
static int parse_enveloped(struct ks_yaml_stream *s, const void *buf, size_t len, struct ks_yaml_node **out,
                           struct ks_error *err)
{
    ProtobufCAllocator al = ks__proto_arena_allocator(&s->arena);
    if (!ks_proto_is_enveloped(buf, len))
        return ks_error_set(err, s->file, 1, NULL, "not a protobuf object: no \"k8s\\0\" prefix");
    Ks__Runtime__Unknown *unk =
        ks__runtime__unknown__unpack(&al, len - sizeof(magic), (const uint8_t *)buf + sizeof(magic));
    if (!unk)
        return ks_error_set(err, s->file, 1, NULL, "invalid protobuf: a malformed runtime.Unknown envelope");
    const char *av = unk->typemeta ? unk->typemeta->apiversion : "";
    const char *kind = unk->typemeta ? unk->typemeta->kind : "";
    if (unk->contentencoding && unk->contentencoding[0])
        return ks_error_set(err, s->file, 1, NULL, "unsupported content encoding \"%.64s\" of %.64s",
                            unk->contentencoding, kind);
    if (unk->contenttype && unk->contenttype[0] && strcmp(unk->contenttype, KS_PROTO_MEDIA_TYPE) != 0)
        return ks_error_set(err, s->file, 1, NULL, "unsupported content type \"%.64s\" of %.64s",
                            unk->contenttype, kind);
    const ProtobufCMessageDescriptor *d = ks__proto_kind_descriptor(av, kind);
    if (!d)
        return ks_error_set(err, s->file, 1, NULL,
                            "no protobuf message for kind \"%.64s\" of apiVersion \"%.64s\"", kind, av);
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &al, unk->raw.len, unk->raw.data);
    if (!m)
        return ks_error_set(err, s->file, 1, NULL, "invalid protobuf: a malformed %.64s", kind);
    int rc = ks__proto_to_tree(&s->arena, m, s->file, out, err);
    if (rc == 0 && (rc = add_type(&s->arena, *out, av, kind)) == -ENOMEM)
        ks_error_set(err, s->file, 0, NULL, "out of memory");
    return rc;
}

/* @s with its one document @root as *out when @rc is 0; else @s freed and @rc returned (-ENOMEM said in
 * @err). */
static int done(struct ks_yaml_stream *s, int rc, struct ks_yaml_node *root, const char *file,
                struct ks_yaml_stream **out, struct ks_error *err)
{
    if (rc) {
        ks_yaml_stream_destroy(s);
        if (rc == -ENOMEM)
            ks_error_set(err, file, 0, NULL, "out of memory");
        return rc;
    }
    s->docs[0] = root;
    s->ndocs = 1;
    *out = s;
    return 0;
}

int ks_proto_parse(const char *file, const void *buf, size_t len, struct ks_yaml_stream **out,
                   struct ks_error *err)
{
    struct ks_yaml_stream *s = new_stream(file);
    struct ks_yaml_node *root = NULL;
    *out = NULL;
    int rc = s ? parse_enveloped(s, buf, len, &root, err) : -ENOMEM;
    return done(s, rc, root, file, out, err);
}

int ks__proto_parse_message(const char *file, const ProtobufCMessageDescriptor *d, const void *buf,
                            size_t len, struct ks_yaml_stream **out, struct ks_error *err)
{
    struct ks_yaml_stream *s = new_stream(file);
    struct ks_yaml_node *root = NULL;
    *out = NULL;
    if (!s)
        return done(s, -ENOMEM, NULL, file, out, err);
    ProtobufCAllocator al = ks__proto_arena_allocator(&s->arena);
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &al, len, buf);
    int rc = m ? ks__proto_to_tree(&s->arena, m, s->file, &root, err)
               : ks_error_set(err, s->file, 1, NULL, "invalid protobuf: a malformed %.64s", d->short_name);
    return done(s, rc, root, file, out, err);
}

int ks_proto_parse_watch_event(const char *file, const void *buf, size_t len, struct ks_yaml_stream **out,
                               struct ks_error *err)
{
    struct ks_yaml_stream *s = new_stream(file);
    *out = NULL;
    if (!s)
        return done(s, -ENOMEM, NULL, file, out, err);
    ProtobufCAllocator al = ks__proto_arena_allocator(&s->arena);
    Ks__Meta__WatchEvent *ev = ks__meta__watch_event__unpack(&al, len, buf);
    if (!ev)
        return done(s, ks_error_set(err, s->file, 1, NULL, "invalid protobuf: a malformed watch event"), NULL,
                    file, out, err);
    struct ks_yaml_node *root = ks_arena_alloc(&s->arena, sizeof(*root)), *obj = NULL;
    struct ks_yaml_node *ktype = text_node(&s->arena, "type", 0), *vtype = text_node(&s->arena, ev->type, 0);
    struct ks_yaml_node *kobj = text_node(&s->arena, "object", 0);
    if (!root || !ktype || !vtype || !kobj ||
        !(root->pairs = ks_arena_calloc(&s->arena, 2, sizeof(*root->pairs))))
        return done(s, -ENOMEM, NULL, file, out, err);
    root->kind = KS_YAML_MAP;
    root->line = 1;
    root->pairs[root->n++] = (struct ks_yaml_pair){ktype, vtype};
    int rc = 0;
    if (ev->object && ev->object->raw.len &&
        (rc = parse_enveloped(s, ev->object->raw.data, ev->object->raw.len, &obj, err)) == 0)
        root->pairs[root->n++] = (struct ks_yaml_pair){kobj, obj};
    return done(s, rc, root, file, out, err);
}

int ks_kube_body_parse(const char *file, const char *buf, size_t len, struct ks_yaml_stream **out,
                       struct ks_error *err)
{
    if (ks_proto_is_enveloped(buf, len))
        return ks_proto_parse(file, buf, len, out, err);
    return ks_json_parse(file, buf, len, out, err);
}

static const char *scalar_text(const struct ks_yaml_node *doc, const char *key)
{
    const struct ks_yaml_node *n = ks_yaml_get(doc, key);
    return n && n->kind == KS_YAML_SCALAR ? n->str : NULL;
}

int ks_proto_encode(const char *file, const struct ks_yaml_node *doc, const char *api_version,
                    const char *kind, unsigned flags, char **out, size_t *len, struct ks_error *err)
{
    struct ks_arena arena = KS_ARENA_INIT;
    ProtobufCMessage *m = NULL;
    int rc;

    *out = NULL;
    *len = 0;
    if (!api_version)
        api_version = scalar_text(doc, "apiVersion");
    if (!kind)
        kind = scalar_text(doc, "kind");
    const ProtobufCMessageDescriptor *d = ks__proto_kind_descriptor(api_version, kind);
    if (!d)
        return ks_error_set(err, file, doc ? doc->line : 0, "kind",
                            "no protobuf message for kind \"%.64s\" of "
                            "apiVersion \"%.64s\"",
                            kind ? kind : "", api_version ? api_version : "");
    rc = ks__proto_from_tree(&arena, d, doc, flags & KS_PROTO_ENCODE_LENIENT ? KS__PROTO_LENIENT : 0, file,
                             &m, err);
    if (rc)
        goto out;
    size_t raw_len = protobuf_c_message_get_packed_size(m);
    uint8_t *raw = malloc(raw_len ? raw_len : 1);
    Ks__Runtime__TypeMeta tm = KS__RUNTIME__TYPE_META__INIT;
    Ks__Runtime__Unknown unk = KS__RUNTIME__UNKNOWN__INIT;
    tm.apiversion = (char *)api_version;
    tm.kind = (char *)kind;
    unk.typemeta = &tm;
    if (!raw)
        goto nomem;
    unk.raw.data = raw;
    unk.raw.len = protobuf_c_message_pack(m, raw);
    size_t total = sizeof(magic) + ks__runtime__unknown__get_packed_size(&unk);
    char *body = malloc(total);
    if (!body) {
        free(raw);
        goto nomem;
    }
    memcpy(body, magic, sizeof(magic));
    ks__runtime__unknown__pack(&unk, (uint8_t *)body + sizeof(magic));
    free(raw);
    *out = body;
    *len = total;
    rc = 0;
    goto out;
nomem:
    rc = -ENOMEM;
    ks_error_set(err, file, 0, NULL, "out of memory");
out:
    ks_arena_destroy(&arena);
    return rc;
}
