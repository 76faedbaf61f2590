/*
 * test_proto.c - the protobuf wire format (include/ksched/internal/kube_proto.h): every kind ksched
 * reads or writes goes JSON -> protobuf -> the tree its JSON gives, unchanged; JSON's
 * omitempty and Go's pointers decide what a zero value shows; the special shapes (Time,
 * MicroTime, Quantity, IntOrString, maps, inline structs); envelopes and watch frames,
 * whole or split anywhere; malformed input rejected with a message, never a crash.
 */
#include <criterion/criterion.h>

#include "../../kube/kube_internal.h"
#include "../../kube/proto_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"
#include "ksched/internal/kube_proto.h"
#include "ksched/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* Trees equal: maps as key sets, sequences in order, scalars by text and plainness. */
static bool tree_eq(const struct ks_yaml_node *a, const struct ks_yaml_node *b, char *why, size_t cap)
{
    if (!a || !b || a->kind != b->kind) {
        snprintf(why, cap, "%s vs %s", ks_yaml_kind_name(a), ks_yaml_kind_name(b));
        return false;
    }
    if (a->kind == KS_YAML_SCALAR) {
        if (strcmp(a->str, b->str) != 0 || a->plain != b->plain) {
            snprintf(why, cap, "<%s>%s vs <%s>%s", a->str, a->plain ? " plain" : "", b->str,
                     b->plain ? " plain" : "");
            return false;
        }
        return true;
    }
    if (a->n != b->n) {
        snprintf(why, cap, "%u vs %u entries (first key %s)", a->n, b->n,
                 a->kind == KS_YAML_MAP && a->n ? a->pairs[0].key->str : "-");
        return false;
    }
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->kind == KS_YAML_SEQ) {
            if (!tree_eq(a->items[i], b->items[i], why, cap))
                return false;
            continue;
        }
        const struct ks_yaml_node *v = ks_yaml_get(b, a->pairs[i].key->str);
        if (!v) {
            snprintf(why, cap, "key %s missing", a->pairs[i].key->str);
            return false;
        }
        if (!tree_eq(a->pairs[i].value, v, why, cap)) {
            size_t l = strlen(why);
            snprintf(why + l, cap - l, " (at %s)", a->pairs[i].key->str);
            return false;
        }
    }
    return true;
}

static struct ks_yaml_stream *json(const char *text)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_json_parse("test.json", text, strlen(text), &s, &err), 0, "%s: %s", err.msg, text);
    return s;
}

/* @text through protobuf (strictly: every field must be carried) and back. */
static struct ks_yaml_stream *roundtrip(const char *text, char **wire, size_t *wire_len)
{
    struct ks_yaml_stream *in = json(text), *out = NULL;
    struct ks_error err = {0};
    char *buf = NULL;
    size_t len = 0;
    int rc = ks_proto_encode("test.json", in->docs[0], NULL, NULL, 0, &buf, &len, &err);
    cr_assert_eq(rc, 0, "encode: %d %s: %s", rc, err.field, err.msg);
    cr_assert(ks_proto_is_enveloped(buf, len));
    cr_assert_eq(ks_proto_parse("wire", buf, len, &out, &err), 0, "parse: %s", err.msg);
    ks_yaml_stream_destroy(in);
    if (wire) {
        *wire = buf;
        *wire_len = len;
    } else {
        free(buf);
    }
    return out;
}

static void expect_same(const char *text)
{
    struct ks_yaml_stream *want = json(text), *got = roundtrip(text, NULL, NULL);
    char why[512] = "";
    cr_assert(tree_eq(want->docs[0], got->docs[0], why, sizeof(why)), "%s\n%s", why, text);
    cr_assert(tree_eq(got->docs[0], want->docs[0], why, sizeof(why)), "%s\n%s", why, text);
    ks_yaml_stream_destroy(want);
    ks_yaml_stream_destroy(got);
}

/* ---- every kind, every field carried ---- */

#define META                                                                                                 \
    "\"metadata\":{\"name\":\"web\",\"namespace\":\"ns1\",\"uid\":\"u-1\",\"resourceVersion\":\"42\","       \
    "\"generation\":3,\"creationTimestamp\":\"2024-05-01T10:00:00Z\",\"labels\":{\"app\":\"web\",\"tier\":"  \
    "\"fe\"},\"annotations\":{\"a\":\"b\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"       \
    "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-1\",\"controller\":true}],\"finalizers\":[\"f1\"]}"

static const char pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"," META ",\"spec\":{"
    "\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"c1\",\"readOnly\":true}},"
    "{\"name\":\"eph\",\"ephemeral\":{}},{\"name\":\"r\",\"rbd\":{\"monitors\":[\"m1\"],\"image\":\"i\","
    "\"pool\":\"p\"}},{\"name\":\"s\",\"iscsi\":{\"targetPortal\":\"t:3260\",\"iqn\":\"q\",\"lun\":0}},"
    "{\"name\":\"g\",\"gcePersistentDisk\":{\"pdName\":\"pd\"}},{\"name\":\"a\",\"awsElasticBlockStore\":"
    "{\"volumeID\":\"vol\"}}],"
    "\"containers\":[{\"name\":\"c\",\"image\":\"img:1\",\"ports\":[{\"containerPort\":80,\"hostPort\":8080,"
    "\"protocol\":\"TCP\",\"hostIP\":\"1.2.3.4\"}],\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":"
    "\"1Gi\"},\"limits\":{\"cpu\":\"1\"}}}],"
    "\"initContainers\":[{\"name\":\"i\",\"image\":\"init\",\"restartPolicy\":\"Always\"}],"
    "\"nodeSelector\":{\"disk\":\"ssd\"},\"hostNetwork\":true,\"schedulerName\":\"my-sched\","
    "\"priorityClassName\":\"high\",\"priority\":0,\"preemptionPolicy\":\"Never\",\"overhead\":{\"cpu\":"
    "\"10m\"},\"nodeName\":\"n3\","
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
    "\"nodeSelectorTerms\":"
    "[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}],"
    "\"matchFields\":"
    "[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]},"
    "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":5,\"preference\":{\"matchExpressions\":"
    "[{\"key\":\"k\",\"operator\":\"Exists\"}]}}]},"
    "\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"zone\","
    "\"mismatchLabelKeys\":[\"m\"]}]},"
    "\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{"
    "\"matchLabels\":{\"app\":\"web\"}},\"topologyKey\":\"kubernetes.io/hostname\",\"namespaces\":[\"ns1\"],"
    "\"matchLabelKeys\":[\"pod-template-hash\"]}],\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
    "\"weight\":10,\"podAffinityTerm\":{\"namespaceSelector\":{},\"topologyKey\":\"zone\"}}]}},"
    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\",\"effect\":\"NoExecute\","
    "\"tolerationSeconds\":0},{\"operator\":\"Exists\"}],"
    "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
    "\"DoNotSchedule\",\"labelSelector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\","
    "\"values\":[\"web\"]}]},\"minDomains\":2,\"nodeAffinityPolicy\":\"Honor\",\"nodeTaintsPolicy\":"
    "\"Ignore\","
    "\"matchLabelKeys\":[\"x\"]}],"
    "\"schedulingGates\":[{\"name\":\"g\"}],\"schedulingGroup\":{\"podGroupName\":\"trainers\"}},"
    "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
    "\"reason\":\"Unschedulable\"}],\"nominatedNodeName\":\"n2\",\"startTime\":\"2024-05-01T10:00:05Z\"}}";

static const char *const objects[] = {
    pod,
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\"," META ",\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
    "\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"},{\"key\":\"k2\",\"effect\":\"NoExecute\"}]},\"status\":"
    "{"
    "\"capacity\":{\"cpu\":\"4\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"3900m\",\"memory\":\"15Gi\"},"
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],\"images\":[{\"names\":[\"a:1\",\"a@sha\"],"
    "\"sizeBytes\":123456789012}]}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\"," META ",\"spec\":{\"capacity\":{\"storage\":"
    "\"10Gi\"},\"csi\":{\"driver\":\"d\",\"volumeHandle\":\"h\"},\"accessModes\":[\"ReadWriteOnce\"],"
    "\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"ns1\",\"name\":\"c1\",\"uid\":\"x\"},"
    "\"storageClassName\":\"fast\",\"volumeMode\":\"Filesystem\",\"nodeAffinity\":{\"required\":{"
    "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"h\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]"
    "}}},"
    "\"status\":{\"phase\":\"Available\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\"," META ",\"spec\":{\"accessModes\":["
    "\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},\"volumeName\":\"pv1\","
    "\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"storageClassName\":\"\",\"volumeMode\":\"Block\"},"
    "\"status\":{\"phase\":\"Bound\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"," META "}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\"," META ",\"spec\":{\"selector\":{\"app\":\"web\"}}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\"," META ",\"spec\":{\"selector\":{\"app\":"
    "\"web\"},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}}}}}",
    "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\"," META ",\"provisioner\":\"p\","
    "\"volumeBindingMode\":\"WaitForFirstConsumer\",\"allowedTopologies\":[{\"matchLabelExpressions\":[{"
    "\"key\":\"zone\",\"values\":[\"a\"]}]}]}",
    "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\"," META ",\"spec\":{\"drivers\":[{\"name\":"
    "\"d\",\"nodeID\":\"n1\",\"topologyKeys\":[\"zone\"],\"allocatable\":{\"count\":0}}]}}",
    "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\"," META ",\"spec\":{\"minAvailable\":"
    "\"50%\",\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}},\"status\":{"
    "\"disruptedPods\":{\"p1\":\"2024-05-01T10:00:00Z\"},\"disruptionsAllowed\":0}}",
    "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\"," META
    ",\"spec\":{\"maxUnavailable\":1}}",
    "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\"," META ",\"value\":0,"
    "\"globalDefault\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"}",
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\"," META ",\"spec\":{\"selector\":{\"matchLabels\":{"
    "\"a\":\"b\"}}}}",
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\"," META ",\"spec\":{\"selector\":{\"matchLabels\":{"
    "\"a\":\"b\"}}}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":"
    "\"u\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
    "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"p.17\",\"namespace\":"
    "\"ns\"},\"eventTime\":\"2024-05-01T10:00:00.123456Z\",\"series\":{\"count\":2,\"lastObservedTime\":"
    "\"2024-05-01T10:01:00.000001Z\"},\"reportingController\":\"default-scheduler\",\"reportingInstance\":"
    "\"default-scheduler-h\",\"action\":\"Scheduling\",\"reason\":\"FailedScheduling\",\"regarding\":{"
    "\"kind\":\"Pod\",\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\",\"apiVersion\":\"v1\","
    "\"resourceVersion\":\"9\"},\"related\":{\"kind\":\"Pod\",\"name\":\"q\"},\"note\":\"0/3 nodes\","
    "\"type\":\"Warning\",\"deprecatedSource\":{\"component\":\"c\"},\"deprecatedFirstTimestamp\":"
    "\"2024-05-01T10:00:00Z\",\"deprecatedLastTimestamp\":\"2024-05-01T10:00:01Z\",\"deprecatedCount\":3}",
    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"kube-scheduler\","
    "\"namespace\":\"kube-system\",\"resourceVersion\":\"5\"},\"spec\":{\"holderIdentity\":\"\","
    "\"leaseDurationSeconds\":1,\"acquireTime\":\"2024-05-01T10:00:00.000000Z\",\"renewTime\":"
    "\"2024-05-01T10:00:02.500000Z\",\"leaseTransitions\":0}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"pods "
    "\\\"p\\\" not "
    "found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"p\",\"kind\":\"pods\",\"causes\":[{"
    "\"reason\":\"FieldValueInvalid\",\"message\":\"m\",\"field\":\"f\"}],\"retryAfterSeconds\":1},"
    "\"code\":404}",
    "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":"
    "\"tok\","
    "\"remainingItemCount\":0},\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[{\"name\":"
    "\"c\"}]}},{\"metadata\":{\"name\":\"b\"},\"spec\":{}}]}",
};

Test(proto, every_kind_comes_back_as_its_json)
{
    for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
        expect_same(objects[i]);
}

Test(proto, every_list_kind_is_known)
{
    static const char *const kinds[][2] = {
        {"v1", "NodeList"},
        {"v1", "PodList"},
        {"v1", "PersistentVolumeList"},
        {"v1", "PersistentVolumeClaimList"},
        {"v1", "NamespaceList"},
        {"v1", "ServiceList"},
        {"v1", "ReplicationControllerList"},
        {"storage.k8s.io/v1", "StorageClassList"},
        {"storage.k8s.io/v1", "CSINodeList"},
        {"policy/v1", "PodDisruptionBudgetList"},
        {"scheduling.k8s.io/v1", "PriorityClassList"},
        {"apps/v1", "ReplicaSetList"},
        {"apps/v1", "StatefulSetList"},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        cr_assert(ks_proto_kind_known(kinds[i][0], kinds[i][1]), "%s %s", kinds[i][0], kinds[i][1]);
    cr_assert_not(ks_proto_kind_known("v1", "Deployment"));
    cr_assert_not(ks_proto_kind_known("apps/v1", "Pod"));
    cr_assert(ks_proto_kind_known("coordination.k8s.io/v1", "Status"), "Status answers in every group");
}

/* ---- what a zero value shows ---- */

Test(proto, zero_values_show_as_json_shows_them)
{
    /* omitempty values vanish; pointers (priority, tolerationSeconds, PVC storageClassName,
     * CSINode count) and fields without omitempty (containerPort, name) stay, even zero */
    struct ks_yaml_stream *got = roundtrip(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"\"},\"spec\":{"
        "\"nodeName\":\"\",\"hostNetwork\":false,\"priority\":0,\"containers\":[{\"name\":\"\",\"ports\":[{"
        "\"containerPort\":0,\"hostPort\":0,\"protocol\":\"\"}]}],\"tolerations\":[{\"key\":\"\","
        "\"tolerationSeconds\":0}]},\"status\":{}}",
        NULL, NULL);
    struct ks_yaml_stream *want =
        json("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"priority\":0,"
             "\"containers\":[{\"name\":\"\",\"ports\":[{\"containerPort\":0}]}],\"tolerations\":[{"
             "\"tolerationSeconds\":0}]},\"status\":{}}");
    char why[512] = "";
    cr_assert(tree_eq(want->docs[0], got->docs[0], why, sizeof(why)), "%s", why);
    cr_assert(tree_eq(got->docs[0], want->docs[0], why, sizeof(why)), "%s", why);
    ks_yaml_stream_destroy(got);
    ks_yaml_stream_destroy(want);

    /* a PersistentVolume's storageClassName is a plain string (omitempty), a claim's a pointer */
    got = roundtrip("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"v\"},"
                    "\"spec\":{\"storageClassName\":\"\"}}",
                    NULL, NULL);
    cr_assert_null(ks_yaml_get(ks_yaml_get(got->docs[0], "spec"), "storageClassName"));
    ks_yaml_stream_destroy(got);
    got = roundtrip("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c\"},"
                    "\"spec\":{\"storageClassName\":\"\"}}",
                    NULL, NULL);
    const struct ks_yaml_node *sc = ks_yaml_get(ks_yaml_get(got->docs[0], "spec"), "storageClassName");
    cr_assert(sc && sc->kind == KS_YAML_SCALAR && !sc->plain && sc->len == 0);
    ks_yaml_stream_destroy(got);
}

Test(proto, a_pod_decodes_to_the_same_struct_from_either_format)
{
    cr_assert_eq(ks_api_init(), 0);
    struct ks_yaml_stream *j = json(pod), *p = roundtrip(pod, NULL, NULL);
    struct ks_error err = {0};
    struct ks_pod *a = NULL, *b = NULL;
    cr_assert_eq(ks_object_decode_as("j", j->docs[0], KS_KIND_POD, (void **)&a, &err), 0, "%s: %s", err.field,
                 err.msg);
    cr_assert_eq(ks_object_decode_as("p", p->docs[0], KS_KIND_POD, (void **)&b, &err), 0, "%s", err.msg);
    cr_assert(a->has_priority && b->has_priority);
    cr_assert_eq(a->priority, b->priority);
    cr_assert_eq(a->node_name, b->node_name);
    cr_assert_eq(a->ntolerations, 2);
    cr_assert_eq(b->ntolerations, 2);
    cr_assert_eq(b->tolerations[0].toleration_seconds, 0);
    cr_assert_eq(b->tolerations[1].toleration_seconds, -1);
    cr_assert_eq(a->nvolumes, b->nvolumes);
    for (uint32_t i = 0; i < a->nvolumes; i++) {
        cr_assert_eq(a->volumes[i].kind, b->volumes[i].kind, "volume %u", i);
        cr_assert_str_eq(a->volumes[i].source ? a->volumes[i].source : "-",
                         b->volumes[i].source ? b->volumes[i].source : "-");
    }
    cr_assert_eq(b->volumes[1].kind, KS_VOLUME_EPHEMERAL);
    cr_assert_eq(a->containers[0].requests.n, b->containers[0].requests.n);
    cr_assert_eq(a->start_time, b->start_time);
    cr_assert_eq(a->meta.creation_time, b->meta.creation_time);
    ks_object_destroy(KS_KIND_POD, a);
    ks_object_destroy(KS_KIND_POD, b);
    ks_yaml_stream_destroy(j);
    ks_yaml_stream_destroy(p);
}

/* ---- special shapes, built with protobuf-c ---- */

/* @m packed into an envelope of (@api_version, @kind). */
static char *envelope(const ProtobufCMessage *m, const char *api_version, const char *kind, size_t *len)
{
    Ks__Runtime__TypeMeta tm = KS__RUNTIME__TYPE_META__INIT;
    Ks__Runtime__Unknown unk = KS__RUNTIME__UNKNOWN__INIT;
    tm.apiversion = (char *)api_version;
    tm.kind = (char *)kind;
    unk.typemeta = &tm;
    unk.raw.len = protobuf_c_message_get_packed_size(m);
    unk.raw.data = malloc(unk.raw.len + 1);
    protobuf_c_message_pack(m, unk.raw.data);
    *len = 4 + ks__runtime__unknown__get_packed_size(&unk);
    char *buf = malloc(*len);
    memcpy(buf, "k8s", 4);
    ks__runtime__unknown__pack(&unk, (uint8_t *)buf + 4);
    free(unk.raw.data);
    return buf;
}

static struct ks_yaml_stream *parse_ok(const char *buf, size_t len)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_proto_parse("wire", buf, len, &s, &err), 0, "%s", err.msg);
    return s;
}

static const char *str_at(const struct ks_yaml_node *n, const char *a, const char *b)
{
    const struct ks_yaml_node *v = ks_yaml_get(b ? ks_yaml_get(n, a) : n, b ? b : a);
    return v && v->kind == KS_YAML_SCALAR ? v->str : NULL;
}

Test(proto, times_maps_and_quantities_take_their_json_shapes)
{
    Ks__Meta__Time zero = KS__META__TIME__INIT, epoch = KS__META__TIME__INIT;
    epoch.opt_seconds_case = KS__META__TIME__OPT_SECONDS_SECONDS; /* seconds 0, present */
    Ks__Meta__StringEntry l1 = KS__META__STRING_ENTRY__INIT, l2 = KS__META__STRING_ENTRY__INIT,
                          l3 = KS__META__STRING_ENTRY__INIT;
    l1.key = "b", l1.value = "1", l2.key = "a", l2.value = "2", l3.key = "b", l3.value = "3";
    Ks__Meta__StringEntry *labels[] = {&l1, &l2, &l3};
    Ks__Meta__ObjectMeta meta = KS__META__OBJECT_META__INIT;
    meta.name = "n";
    meta.creationtimestamp = &zero;
    meta.deletiontimestamp = &epoch;
    meta.n_labels = 3;
    meta.labels = labels;
    Ks__Meta__Quantity empty_q = KS__META__QUANTITY__INIT;
    Ks__Meta__QuantityEntry cap = KS__META__QUANTITY_ENTRY__INIT;
    cap.key = "cpu";
    cap.value = &empty_q;
    Ks__Meta__QuantityEntry *caps[] = {&cap};
    Ks__Core__NodeStatus st = KS__CORE__NODE_STATUS__INIT;
    st.n_capacity = 1;
    st.capacity = caps;
    Ks__Core__Node node = KS__CORE__NODE__INIT;
    node.metadata = &meta;
    node.status = &st;
    size_t len;
    char *buf = envelope(&node.base, "v1", "Node", &len);
    struct ks_yaml_stream *s = parse_ok(buf, len);
    const struct ks_yaml_node *md = ks_yaml_get(s->docs[0], "metadata");
    cr_assert_null(ks_yaml_get(md, "creationTimestamp"), "the zero time is JSON null");
    cr_assert_str_eq(str_at(md, "deletionTimestamp", NULL), "1970-01-01T00:00:00Z");
    const struct ks_yaml_node *lab = ks_yaml_get(md, "labels");
    cr_assert_eq(lab->n, 2, "a key given twice is one key");
    cr_assert_str_eq(str_at(lab, "b", NULL), "3", "the last value wins, as in Go's map");
    cr_assert_str_eq(str_at(lab, "a", NULL), "2");
    cr_assert_str_eq(str_at(ks_yaml_get(s->docs[0], "status"), "capacity", "cpu"), "0");
    cr_assert_str_eq(str_at(s->docs[0], "kind", NULL), "Node");
    ks_yaml_stream_destroy(s);
    free(buf);

    /* MicroTime: six digits whatever the nanoseconds; years 0 to 9999 only */
    Ks__Meta__MicroTime mt = KS__META__MICRO_TIME__INIT;
    mt.opt_seconds_case = KS__META__MICRO_TIME__OPT_SECONDS_SECONDS;
    mt.seconds = 253402300799; /* 9999-12-31T23:59:59Z */
    mt.nanos = 999999999;
    Ks__Events__Event ev = KS__EVENTS__EVENT__INIT;
    ev.eventtime = &mt;
    buf = envelope(&ev.base, "events.k8s.io/v1", "Event", &len);
    s = parse_ok(buf, len);
    cr_assert_str_eq(str_at(s->docs[0], "eventTime", NULL), "9999-12-31T23:59:59.999999Z");
    ks_yaml_stream_destroy(s);
    free(buf);
    mt.seconds = -62167219200 - 1; /* before year 0 */
    buf = envelope(&ev.base, "events.k8s.io/v1", "Event", &len);
    struct ks_error err = {0};
    cr_assert_eq(ks_proto_parse("wire", buf, len, &s, &err), -EINVAL);
    cr_assert_null(s);
    cr_assert_str_eq(err.field, "eventTime");
    cr_assert(strstr(err.msg, "time out of range"), "%s", err.msg);
    free(buf);

    /* IntOrString: intVal, or strVal when type is 1 */
    Ks__Meta__IntOrString min = KS__META__INT_OR_STRING__INIT, max = KS__META__INT_OR_STRING__INIT;
    min.type = 1, min.strval = "10%", max.intval = 3;
    Ks__Policy__PodDisruptionBudgetSpec spec = KS__POLICY__POD_DISRUPTION_BUDGET_SPEC__INIT;
    spec.minavailable = &min;
    spec.maxunavailable = &max;
    Ks__Policy__PodDisruptionBudget pdb = KS__POLICY__POD_DISRUPTION_BUDGET__INIT;
    pdb.spec = &spec;
    buf = envelope(&pdb.base, "policy/v1", "PodDisruptionBudget", &len);
    s = parse_ok(buf, len);
    const struct ks_yaml_node *sp = ks_yaml_get(s->docs[0], "spec");
    cr_assert_str_eq(str_at(sp, "minAvailable", NULL), "10%");
    cr_assert_not(ks_yaml_get(sp, "minAvailable")->plain);
    cr_assert_str_eq(str_at(sp, "maxUnavailable", NULL), "3");
    cr_assert(ks_yaml_get(sp, "maxUnavailable")->plain);
    ks_yaml_stream_destroy(s);
    free(buf);
}

Test(proto, inline_structs_join_their_parent)
{
    struct ks_yaml_stream *s =
        roundtrip("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{"
                  "\"name\":\"v\"},\"spec\":{\"csi\":{\"driver\":\"d\",\"volumeHandle\":"
                  "\"h\"}}}",
                  NULL, NULL);
    const struct ks_yaml_node *spec = ks_yaml_get(s->docs[0], "spec");
    cr_assert_eq(spec->n, 1);
    cr_assert_str_eq(str_at(spec, "csi", "driver"), "d");
    ks_yaml_stream_destroy(s);
}

/* ---- encoding ---- */

Test(proto, encoding_refuses_what_it_cannot_carry_unless_lenient)
{
    struct ks_yaml_stream *s =
        json("{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\","
             "\"clusterName\":\"x\"},\"target\":{\"name\":\"n\"}}");
    struct ks_error err = {0};
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(ks_proto_encode("b.json", s->docs[0], NULL, NULL, 0, &buf, &len, &err), -ENOENT);
    cr_assert_null(buf);
    cr_assert_str_eq(err.field, "metadata.clusterName");
    cr_assert(strstr(err.msg, "unknown field"), "%s", err.msg);
    memset(&err, 0, sizeof(err));
    cr_assert_eq(ks_proto_encode("b.json", s->docs[0], NULL, NULL, KS_PROTO_ENCODE_LENIENT, &buf, &len, &err),
                 0);
    struct ks_yaml_stream *back = parse_ok(buf, len);
    cr_assert_str_eq(str_at(back->docs[0], "metadata", "name"), "p");
    cr_assert_null(ks_yaml_get(ks_yaml_get(back->docs[0], "metadata"), "clusterName"));
    free(buf);
    ks_yaml_stream_destroy(back);
    ks_yaml_stream_destroy(s);

    static const char *const bad[][2] = {
        {"{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":[]}", "metadata"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"generation\":\"3\"}}",
         "metadata.generation"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"priority\":3000000000}}", "spec.priority"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"hostNetwork\":1}}", "spec.hostNetwork"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"creationTimestamp\":\"yesterday\"}}",
         "metadata.creationTimestamp"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"containers\":[null]}}", "spec.containers[0]"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"labels\":[\"a\"]}}", "metadata.labels"},
        {"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\"}", "kind"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        s = json(bad[i][0]);
        memset(&err, 0, sizeof(err));
        cr_assert_eq(
            ks_proto_encode("b.json", s->docs[0], NULL, NULL, KS_PROTO_ENCODE_LENIENT, &buf, &len, &err),
            -EINVAL, "%s", bad[i][0]);
        cr_assert_str_eq(err.field, bad[i][1], "%s: %s", bad[i][0], err.msg);
        cr_assert_str_eq(err.file, "b.json");
        ks_yaml_stream_destroy(s);
    }
}

Test(proto, json_text_of_a_tree_reads_back_the_same)
{
    struct ks_yaml_stream *p = roundtrip(pod, NULL, NULL), *back = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(ks_yaml_write_json(f, p->docs[0]), 0);
    fclose(f);
    back = json(text);
    char why[512] = "";
    cr_assert(tree_eq(p->docs[0], back->docs[0], why, sizeof(why)), "%s\n%s", why, text);
    free(text);
    ks_yaml_stream_destroy(p);
    ks_yaml_stream_destroy(back);
}

/* ---- malformed input ---- */

static void expect_rejected(const char *buf, size_t len, const char *what)
{
    struct ks_yaml_stream *s = (void *)1;
    struct ks_error err = {0};
    cr_assert_eq(ks_proto_parse("wire.pb", buf, len, &s, &err), -EINVAL, "%s", what);
    cr_assert_null(s);
    cr_assert_str_eq(err.file, "wire.pb");
    cr_assert_eq(err.line, 1);
    cr_assert(strstr(err.msg, what), "<%s> lacks <%s>", err.msg, what);
}

Test(proto, malformed_envelopes_are_rejected_with_a_message)
{
    expect_rejected("{\"kind\":\"Pod\"}", 14, "no \"k8s\\0\" prefix");
    expect_rejected("k8s", 3, "no \"k8s\\0\" prefix");
    expect_rejected("k8s", 4, "no protobuf message for kind \"\"");
    expect_rejected("k8s\0\x0a\x05\x0a\x02v1", 10, "malformed runtime.Unknown"); /* truncated typeMeta */
    expect_rejected("k8s\0\xff\xff\xff", 7, "malformed runtime.Unknown");

    Ks__Runtime__TypeMeta tm = KS__RUNTIME__TYPE_META__INIT;
    Ks__Runtime__Unknown unk = KS__RUNTIME__UNKNOWN__INIT;
    uint8_t raw[] = {0x0a, 0x10, 0x01}; /* a Pod whose metadata runs past the end */
    tm.apiversion = "v1";
    tm.kind = "Pod";
    unk.typemeta = &tm;
    unk.raw.data = raw;
    unk.raw.len = sizeof(raw);
    char buf[128] = "k8s";
    size_t len = 4 + ks__runtime__unknown__pack(&unk, (uint8_t *)buf + 4);
    expect_rejected(buf, len, "malformed Pod");
    tm.kind = "Deployment";
    len = 4 + ks__runtime__unknown__pack(&unk, (uint8_t *)buf + 4);
    expect_rejected(buf, len, "no protobuf message for kind \"Deployment\"");
    tm.kind = "Pod";
    unk.contentencoding = "gzip";
    len = 4 + ks__runtime__unknown__pack(&unk, (uint8_t *)buf + 4);
    expect_rejected(buf, len, "content encoding \"gzip\"");
    unk.contentencoding = "";
    unk.contenttype = "application/json";
    len = 4 + ks__runtime__unknown__pack(&unk, (uint8_t *)buf + 4);
    expect_rejected(buf, len, "content type \"application/json\"");
}

Test(proto, unknown_fields_are_skipped)
{
    /* a Pod with field 99 (varint) and 100 (bytes) the messages do not know */
    uint8_t raw[] = {0x0a, 0x03, 0x0a, 0x01, 'p', 0x98, 0x06, 0x07, 0xa2, 0x06, 0x02, 'x', 'y'};
    Ks__Runtime__TypeMeta tm = KS__RUNTIME__TYPE_META__INIT;
    Ks__Runtime__Unknown unk = KS__RUNTIME__UNKNOWN__INIT;
    tm.apiversion = "v1";
    tm.kind = "Pod";
    unk.typemeta = &tm;
    unk.raw.data = raw;
    unk.raw.len = sizeof(raw);
    char buf[128] = "k8s";
    size_t len = 4 + ks__runtime__unknown__pack(&unk, (uint8_t *)buf + 4);
    struct ks_yaml_stream *s = parse_ok(buf, len);
    cr_assert_eq(s->docs[0]->n, 3, "apiVersion, kind, metadata");
    cr_assert_str_eq(str_at(s->docs[0], "metadata", "name"), "p");
    ks_yaml_stream_destroy(s);
}

Test(proto, body_parse_takes_json_or_protobuf)
{
    struct ks_yaml_stream *s = NULL;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_body_parse("b", "{\"kind\":\"Status\",\"code\":409}", 28, &s, &err), 0);
    cr_assert_str_eq(str_at(s->docs[0], "code", NULL), "409");
    ks_yaml_stream_destroy(s);
    char *wire;
    size_t len;
    s = roundtrip(objects[17], &wire, &len); /* a Status */
    ks_yaml_stream_destroy(s);
    cr_assert_eq(ks_kube_body_parse("b", wire, len, &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(str_at(s->docs[0], "code", NULL), "404");
    cr_assert_str_eq(str_at(s->docs[0], "reason", NULL), "NotFound");
    ks_yaml_stream_destroy(s);
    free(wire);
}

/* ---- watch events and their framing ---- */

static char *watch_frame(const char *type, const char *object_json, size_t *len)
{
    Ks__Meta__WatchEvent ev = KS__META__WATCH_EVENT__INIT;
    Ks__Runtime__RawExtension raw = KS__RUNTIME__RAW_EXTENSION__INIT;
    char *obj = NULL;
    ev.type = (char *)type;
    if (object_json) {
        struct ks_yaml_stream *s = json(object_json);
        struct ks_error err = {0};
        cr_assert_eq(ks_proto_encode("o", s->docs[0], NULL, NULL, 0, &obj, &raw.raw.len, &err), 0, "%s",
                     err.msg);
        raw.raw.data = (uint8_t *)obj;
        ev.object = &raw;
        ks_yaml_stream_destroy(s);
    }
    *len = ks__meta__watch_event__get_packed_size(&ev);
    char *buf = malloc(*len + 1);
    ks__meta__watch_event__pack(&ev, (uint8_t *)buf);
    free(obj);
    return buf;
}

Test(proto, watch_events_carry_an_enveloped_object)
{
    size_t len;
    struct ks_error err = {0};
    struct ks_yaml_stream *s = NULL;
    char *f = watch_frame("MODIFIED",
                          "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
                          "\"resourceVersion\":\"12\"}}",
                          &len);
    cr_assert_eq(ks_proto_parse_watch_event("w", f, len, &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(str_at(s->docs[0], "type", NULL), "MODIFIED");
    cr_assert_str_eq(str_at(ks_yaml_get(s->docs[0], "object"), "metadata", "resourceVersion"), "12");
    cr_assert_str_eq(str_at(ks_yaml_get(s->docs[0], "object"), "kind", NULL), "Node");
    ks_yaml_stream_destroy(s);
    free(f);

    f = watch_frame("ERROR",
                    "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":"
                    "\"Expired\",\"code\":410}",
                    &len);
    cr_assert_eq(ks_proto_parse_watch_event("w", f, len, &s, &err), 0, "%s", err.msg);
    cr_assert_str_eq(str_at(ks_yaml_get(s->docs[0], "object"), "code", NULL), "410");
    ks_yaml_stream_destroy(s);
    free(f);

    f = watch_frame("BOOKMARK", NULL, &len);
    cr_assert_eq(ks_proto_parse_watch_event("w", f, len, &s, &err), 0, "%s", err.msg);
    cr_assert_null(ks_yaml_get(s->docs[0], "object"));
    ks_yaml_stream_destroy(s);
    free(f);

    /* the object must be enveloped; a frame must be a WatchEvent */
    static const char bare[] = "\x0a\x05"
                               "ADDED"
                               "\x12\x04\x0a\x02{}";
    cr_assert_eq(ks_proto_parse_watch_event("w", bare, sizeof(bare) - 1, &s, &err), -EINVAL);
    cr_assert_null(s);
    cr_assert(strstr(err.msg, "no \"k8s\\0\" prefix"), "%s", err.msg);
    memset(&err, 0, sizeof(err));
    cr_assert_eq(ks_proto_parse_watch_event("w",
                                            "\x0a\x09"
                                            "ADD",
                                            5, &s, &err),
                 -EINVAL);
    cr_assert(strstr(err.msg, "malformed watch event"), "%s", err.msg);
}

struct collected {
    char *frames[8];
    size_t lens[8];
    int n;
};

static int collect_frame(void *ctx, const char *text, size_t len, bool junk)
{
    struct collected *c = ctx;
    cr_assert_not(junk);
    cr_assert_lt(c->n, 8);
    c->frames[c->n] = malloc(len + 1);
    memcpy(c->frames[c->n], text, len);
    c->lens[c->n++] = len;
    return 0;
}

Test(proto, frames_are_whole_however_the_bytes_are_split)
{
    size_t l1, l2;
    char *f1 = watch_frame("ADDED", objects[0], &l1), *f2 = watch_frame("DELETED", NULL, &l2);
    size_t total = 4 + l1 + 4 + 0 + 4 + l2;
    char *stream = malloc(total), *p = stream;
    size_t lens[] = {l1, 0, l2};
    const char *bodies[] = {f1, "", f2};
    for (int i = 0; i < 3; i++) {
        p[0] = (char)(lens[i] >> 24), p[1] = (char)(lens[i] >> 16), p[2] = (char)(lens[i] >> 8),
        p[3] = (char)lens[i];
        memcpy(p + 4, bodies[i], lens[i]);
        p += 4 + lens[i];
    }
    for (size_t step = 1; step <= total; step += step < 16 ? 1 : 97) {
        struct ks__watch_scan w = {.typed = true, .framed = true};
        struct collected c = {0};
        for (size_t off = 0; off < total; off += step)
            cr_assert_eq(ks__watch_scan_feed(&w, stream + off, total - off < step ? total - off : step,
                                             collect_frame, &c),
                         0);
        cr_assert_eq(c.n, 3, "step %zu: %d frames", step, c.n);
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(c.lens[i], lens[i], "step %zu frame %d", step, i);
            cr_assert_eq(memcmp(c.frames[i], bodies[i], lens[i]), 0);
            free(c.frames[i]);
        }
        cr_assert_eq(w.len, 0);
        ks__watch_scan_free(&w);
    }
    free(stream);
    free(f1);
    free(f2);

    /* a length past 64 MiB ends the stream, whether it arrives whole or in pieces */
    struct ks__watch_scan w = {.typed = true, .framed = true};
    struct collected c = {0};
    cr_assert_eq(ks__watch_scan_feed(&w, "\x04\x00\x00\x01xyz", 7, collect_frame, &c), -E2BIG);
    ks__watch_scan_reset(&w);
    cr_assert_not(w.framed, "reset forgets the framing");
    w.typed = w.framed = true;
    cr_assert_eq(ks__watch_scan_feed(&w, "\x04\x00", 2, collect_frame, &c), 0);
    cr_assert_eq(ks__watch_scan_feed(&w, "\x00\x01", 2, collect_frame, &c), -E2BIG);
    cr_assert_eq(c.n, 0);
    ks__watch_scan_free(&w);
}
