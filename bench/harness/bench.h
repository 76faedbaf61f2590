/*
 * bench.h - the harness behind `ksched bench` (bench/harness/bench_*.c; the command,
 * cmd/bench_cmd.c, parses the flags).
 *
 * bench_workload.c reads a workload file (bench/workloads/NAME.yaml, modelled on
 * kube-scheduler's scheduler_perf performance-config.yaml: a workloadTemplate of opcodes,
 * named pod, node and object templates, and sized workloads that bind the template's
 * $params); bench_cluster.c builds the generated cluster and the objects the templates
 * describe; bench_objects.c createAny's objects (any kind the loader decodes, Deployments'
 * ReplicaSets) and the pods that belong to them; bench_dra.c the objects of Dynamic Resource
 * Allocation (a test driver's ResourceSlices, claims allocated ahead) and the record of the
 * allocations --check verifies; bench_stats.c holds the latency histogram
 * and the process's resource figures; bench_run.c runs the opcodes through the real
 * scheduler and reports.
 *
 * Context: everything here runs on the command's main thread, except the event callback
 * in bench_run.c (binder threads).
 */
#ifndef KSCHED_BENCH_HARNESS_BENCH_H
#define KSCHED_BENCH_HARNESS_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ksched/api_types.h"
#include "ksched/base/error.h"
#include "ksched/base/spin.h" /* ks__mono_ns */
#include "ksched/dra_types.h"
#include "ksched/internal/dra_api.h"
#include "ksched/loader.h"
#include "ksched/yaml_tree.h"

/* ---- workloads (bench_workload.c) ---------------------------------------------------------- */

enum ks_bench_opcode {
    KS_BENCH_CREATE_NODES,
    KS_BENCH_CREATE_PODS,
    KS_BENCH_CHURN,
    KS_BENCH_CREATE_RESOURCE_DRIVER, /* a DRA test driver's ResourceSlices (upstream's createResourceDriver)
                                      */
    KS_BENCH_CREATE_ANY,             /* objects from an objectTemplates entry (upstream's createAny) */
    KS_BENCH_ALLOC_RESOURCE_CLAIMS,  /* claims allocated without a pod (upstream's allocResourceClaims) */
};

/*
 * One attribute (or capacity) of a createResourceDriver op's devices: device d of the k-th
 * node the op matches takes values[(k * maxClaimsPerNode + d) % nvalues], so the devices take
 * the values in turn across the nodes.
 */
struct ks_bench_device_attr {
    const char *name;              /* a qualified name, as in a ResourceSlice */
    enum ks_device_attr_kind kind; /* attributes: the value's type; capacities: unused */
    uint32_t nvalues;
    const char **values; /* the scalars as written (an int, a bool, a quantity: checked by the decoder) */
};

/* What every pod of a createPods op must end as (checked by --check). */
enum ks_bench_expect {
    KS_BENCH_EXPECT_BOUND,         /* bound to a node */
    KS_BENCH_EXPECT_UNSCHEDULABLE, /* reported unschedulable, never bound */
    KS_BENCH_EXPECT_SETTLED,       /* bound, unschedulable or preempted: any outcome but an error */
};

struct ks_bench_op {
    enum ks_bench_opcode code;
    int line;
    const char *count_param; /* a $param name (without the $), or NULL for count */
    int64_t count;
    const struct ks_yaml_node *pod_template; /* createPods, churn: a v1 Pod (the first of pod_templates) */
    /* createPods: the templates its pods take in turn (podTemplates; one: podTemplate) */
    uint32_t npod_templates;
    const struct ks_yaml_node **pod_templates;
    const struct ks_yaml_node *node_template; /* createNodes, churn: a v1 Node; NULL: generated nodes */
    const char *namespace;                    /* createPods: metadata.namespace of every pod, or NULL */
    bool collect_metrics;                     /* createPods: the measured pods */
    enum ks_bench_expect expect;
    /* createNodes: labelNodePrepareStrategy (the label set on node i is values[i % n]) */
    uint32_t label_key; /* interned; KS_ID_NONE when absent */
    uint32_t nlabel_values;
    uint32_t *label_values;
    const char *label_prefix; /* or: node i gets <label_prefix><i / nodes_per_value> */
    uint32_t nodes_per_value;
    /* churn (mode recreate): every interval_pods measured cycles, create or delete @number objects */
    uint32_t interval_pods;
    uint32_t number;
    /*
     * createPods: steadyState (upstream's: count pods at a time, each batch deleted with its
     * generated claims once bound and replaced by the next) until totalPods pods were created
     * in all (upstream runs for a duration instead); skipWaitToCompletion: queue the pods and
     * go on to the next op without scheduling them.
     */
    bool steady_state, skip_wait;
    const char *total_param; /* a $param name, or NULL for total */
    int64_t total;
    /* createResourceDriver */
    const char *driver_name;
    const char *nodes;            /* fnmatch pattern of the nodes with devices; NULL: every node */
    const char *max_claims_param; /* maxClaimsPerNodeParam without the $, or NULL for max_claims */
    int64_t max_claims;           /* devices per node */
    bool own_devices;             /* deviceAttributes or deviceCapacity given: upstream's devices replaced */
    uint32_t nattrs, ncapacity;
    struct ks_bench_device_attr *attrs, *capacity;
    /* createAny: an object of objectTemplates (count/countParam: that many, numbered) */
    const struct ks_yaml_node *object_template;
    const char *template_name; /* its name in objectTemplates */
    enum ks_kind object_kind;  /* of the objects made (a Deployment's: KS_KIND_REPLICA_SET) */
    bool numbered;             /* count or countParam given */
    bool deployment;           /* the template is an apps/v1 Deployment: the op makes its ReplicaSets */
    uint32_t object_ns;        /* the objects' namespace (interned), KS_ID_EMPTY for cluster-scoped kinds */
    /*
     * createPods: owners, a template of objectTemplates: the pods belong to the objects that the
     * last createAny op of that template before this one made (owner_op, its index; -1: none).
     */
    const char *owners;
    int32_t owner_op;
    /*
     * createPods: podGroupSizes. The pods whose template has spec.schedulingGroup join
     * generated gangs in turn: the g-th has group_sizes[g % n] pods and a PodGroup of that
     * minCount (the harness makes it), named <op's pod name prefix>g<g>.
     */
    uint32_t ngroup_sizes;
    uint32_t *group_sizes;
    const char **group_size_params; /* per size: a $param name (without the $) resolved per run, or NULL */
    /* podGroupTopologyKeys: gang g's PodGroup constrains it to one value of group_keys[g % n] (KS_ID_NONE:
     * none) */
    uint32_t ngroup_keys;
    uint32_t *group_keys;
    int64_t expect_bound_gangs; /* createPods: expectBoundGangs, checked by --check; -1: not given */
    /*
     * createPods: persistentVolumeTemplate and persistentVolumeClaimTemplate (objectTemplates),
     * upstream's persistentVolume(Claim)TemplatePath: each pod's only volume is a claim of its
     * own, bound to a volume of its own. NULL: the pods keep their template's volumes.
     */
    const struct ks_yaml_node *pv_template, *pvc_template;
};

struct ks_bench_param {
    const char *name;
    int64_t value;
};

/* One sized instance of the template (upstream's workloads[]: 500Nodes, 5000Nodes...). */
struct ks_bench_size {
    const char *name;
    uint32_t nlabels;
    const char **labels; /* "performance", "smoke"... */
    uint32_t nparams;
    struct ks_bench_param *params;
};

struct ks_bench_workload {
    const char *file;
    const char *name;
    uint32_t nops;
    struct ks_bench_op *ops;
    uint32_t nsizes;
    struct ks_bench_size *sizes;
    const char *feature_gates;     /* featureGates as a --feature-gates value; NULL: none */
    struct ks_yaml_stream *stream; /* owns every string and template above */
    struct ks_arena arena;         /* owns ops, sizes, params */
};

/*
 * ks_bench_workload_find - the file of workload @name: @name itself when it contains a
 * '/' or ends in ".yaml", else NAME.yaml in $KSCHED_BENCH_WORKLOADS, or in bench/workloads
 * next to the binary's source tree (../bench/workloads, ../../bench/workloads from the
 * binary), or under the working directory. Returns a malloc'd path or NULL.
 */
char *ks_bench_workload_find(const char *name, const char *argv0);

/* ks_bench_workload_list - print the name of every workload in the directory used for @argv0. */
void ks_bench_workload_list(FILE *out, const char *argv0);

/* ks_bench_workload_load - parse @path. 0, -EINVAL with @err set, or -ENOMEM. */
int ks_bench_workload_load(const char *path, struct ks_bench_workload **out, struct ks_error *err);

/* ks_bench_workload_destroy - accepts NULL. */
void ks_bench_workload_destroy(struct ks_bench_workload *w);

/* ks_bench_size_for - the size whose initNodes is closest to @nodes (in ratio). */
const struct ks_bench_size *ks_bench_size_for(const struct ks_bench_workload *w, uint32_t nodes);

/* ks_bench_param - the value of $@name in @size, or @dflt when it does not define it. */
int64_t ks_bench_param(const struct ks_bench_size *size, const char *name, int64_t dflt);

/*
 * ks_bench_op_pod_template - the template of pod @k (0-based) of @op: pod_templates[k % n],
 * so a createPods op with podTemplates [a, b, c] interleaves them (a, b, c, a, b, c, ...).
 */
const struct ks_yaml_node *ks_bench_op_pod_template(const struct ks_bench_op *op, uint64_t k);

/* ---- objects (bench_cluster.c) --------------------------------------------------------------- */

/* The metadata.name the workload loader gives a template that has none. */
#define KS_BENCH_TEMPLATE_NAME "bench-template"

/*
 * ks_bench_node - a generated node: allocatable (and capacity) cpu 32, memory 256Gi, pods
 * 110, labels kubernetes.io/hostname=@name and topology.kubernetes.io/zone=zone-<@index % 10>
 * (or @label_key = its value from the op's labelNodePrepareStrategy), Ready. NULL on ENOMEM.
 */
struct ks_node *ks_bench_node(const char *name, uint32_t index, const struct ks_bench_op *op);

/*
 * ks_bench_pod - a pod decoded from @tmpl (a v1 Pod) by the loader's decoder, named @name,
 * in @namespace (NULL: the template's, else "default"). 0, or -EINVAL with @err set, -ENOMEM.
 */
int ks_bench_pod(const struct ks_yaml_node *tmpl, const char *file, const char *name, const char *namespace,
                 struct ks_pod **out, struct ks_error *err);

/*
 * ks_bench_pod_volume - pod @k of createPods op @opi (@op has a persistentVolumeTemplate):
 * its claim pvc-<opi>-<k> and that claim's volume <namespace>-vol-<opi>-<k>, bound to each
 * other, into @objs, and the claim as @pod's only volume, "vol" (bench_workload.c). 0,
 * -EINVAL with @err, or -ENOMEM; @objs and @pod are unchanged on failure.
 */
int ks_bench_pod_volume(const struct ks_bench_op *op, const char *file, uint32_t opi, uint32_t k,
                        struct ks_pod *pod, struct ks_objects *objs, struct ks_error *err);

/*
 * ks_bench_node_from - a node decoded from @tmpl (a v1 Node), named @name unless the
 * template names it (a metadata.name other than KS_BENCH_TEMPLATE_NAME and no generateName).
 */
int ks_bench_node_from(const struct ks_yaml_node *tmpl, const char *file, const char *name,
                       struct ks_node **out, struct ks_error *err);

/* ks_bench_template_prefix - metadata.generateName of @tmpl, or @dflt. */
const char *ks_bench_template_prefix(const struct ks_yaml_node *tmpl, const char *dflt);

/* ---- createAny and the pods objects own (bench_objects.c) ------------------------------------- */

/* splitmix64: the next of the sequence at *@s (the harness's deterministic choices). */
static inline uint64_t ks_bench_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * An object of a createAny op that pods belong to (a ReplicaSet, a Deployment's ReplicaSet, a
 * StatefulSet or a ReplicationController): what its controller puts in each pod it makes.
 */
struct ks_bench_owner {
    enum ks_kind kind;                 /* KS_KIND_REPLICA_SET, _STATEFUL_SET or _REPLICATION_CONTROLLER */
    const char *name, *uid;            /* the object's own (the object set holds the object) */
    uint32_t ns;                       /* interned */
    int64_t replicas;                  /* spec.replicas, 1 when absent */
    uint64_t first;                    /* the createPods op's pods that come before this object's first */
    const struct ks_yaml_node *labels; /* the pods' labels: spec.template.metadata.labels as made */
    const struct ks_yaml_node *refs;   /* the pods' metadata.ownerReferences: the object, controller */
    const char *revision;              /* a StatefulSet's controller-revision-hash, else NULL */
};

/* The objects one createAny op made that pods may belong to, in order. */
struct ks_bench_owners {
    uint32_t n, cap;
    struct ks_bench_owner *items;
    uint64_t pods;         /* the sum of their replicas: the most pods they take */
    struct ks_arena arena; /* their trees and strings */
};

/* ks_bench_owners_release - free what @o holds (not @o); a zeroed struct is empty. Accepts NULL. */
void ks_bench_owners_release(struct ks_bench_owners *o);

/*
 * ks_bench_template_check - every {{...}} in a scalar of @tmpl is {{.Index}} or {{.Count}}
 * (upstream's text/template fields; spaces inside the braces allowed). 0, or -EINVAL with
 * @err at the scalar's line, @field named.
 */
int ks_bench_template_check(const struct ks_yaml_node *tmpl, const char *file, const char *field,
                            struct ks_error *err);

/*
 * ks_bench_template_expand - @tmpl with {{.Index}} replaced by @index and {{.Count}} by @count
 * in every scalar (keys included), in @a: the parts without an action are shared with @tmpl,
 * which is unchanged. 0 or -ENOMEM.
 */
int ks_bench_template_expand(struct ks_arena *a, const struct ks_yaml_node *tmpl, int64_t index,
                             int64_t count, const struct ks_yaml_node **out);

/*
 * ks_bench_create_any - createAny @op: objects @first .. @first + @count - 1 of its object
 * template (the template's objects are numbered across the ops that make them), each the
 * template with {{.Index}} and {{.Count}} replaced, named (numbered: <generateName><index>
 * or <name>-<index>, unless metadata.name holds an action), in the op's namespace when it is
 * namespaced, decoded by the loader's decoder, its device selectors checked as the API server
 * does (ksched/internal/dra_check.h), and pushed to @objs. A Deployment's object is the
 * ReplicaSet its controller makes; a ReplicaSet, StatefulSet or ReplicationController gets a
 * uid, and its pods' labels are checked against its selector and recorded in @made (when not
 * NULL; bench_objects.c says what). 0, -EINVAL with @err (file @file), or -ENOMEM; the
 * objects made before a failure stay in @objs. One thread, before a scheduler reads @objs.
 */
int ks_bench_create_any(const struct ks_bench_op *op, const char *file, int64_t first, int64_t count,
                        struct ks_objects *objs, struct ks_bench_owners *made, struct ks_error *err);

/*
 * ks_bench_owned_pod - pod @k (0-based) of createPods @op whose owners are @owners: the
 * op's template for @k with the owner's labels over the template's, its controlling
 * ownerReference, its namespace and the name its controller gives it (the owner of pod k:
 * the objects take the pods in blocks of their replicas, in order). @scratch holds the
 * pod's tree; reset it after the call. 0, -EINVAL with @err (@k beyond the replicas, or
 * the decoder's), or -ENOMEM.
 */
int ks_bench_owned_pod(const struct ks_bench_op *op, const char *file, const struct ks_bench_owners *owners,
                       uint64_t k, struct ks_arena *scratch, struct ks_pod **out, struct ks_error *err);

/* ---- Dynamic Resource Allocation (bench_dra.c) ----------------------------------------------- */

/*
 * ks_bench_driver_slices - the ResourceSlices of createResourceDriver @op, as upstream's
 * resourceSlice() makes them: for each of the @n node names @names that the op's nodes
 * pattern matches (fnmatch, as filepath.Match; every node without a pattern), one slice
 * named after the node, on that node, of the op's driver, alone in the pool named after the
 * node (generation 1, resourceSliceCount 1), with @per_node devices instance-0, instance-1...
 * Upstream's devices have the attributes model "A100", family "GPU", driverVersion 1.2.3 and
 * dra.example.com/numa = the device's index, and capacity memory 1Gi (its binding conditions,
 * which only a feature gate the benchmark does not turn on reads, are left out); the op's
 * deviceAttributes and deviceCapacity replace them. Each slice is decoded from its YAML by the
 * loader's decoder and pushed to @objs (before a scheduler reads it). Returns the number of
 * slices, -EINVAL with @err at the op's line in @file, or -ENOMEM. One thread.
 */
int ks_bench_driver_slices(const struct ks_bench_op *op, const char *file, int64_t per_node,
                           const char *const *names, uint32_t n, struct ks_objects *objs,
                           struct ks_error *err);

/* ---- pod groups (bench_groups.c) ------------------------------------------------------------ */

/* ks_bench_group_name - the name of gang @g of createPods op @op: "gang-OP-G". */
void ks_bench_group_name(char *buf, size_t len, uint32_t op, uint32_t g);

/* ks_bench_join_group - @pod's spec.schedulingGroup names gang @g of op @op. 0 or -ENOMEM. */
int ks_bench_join_group(struct ks_pod *pod, uint32_t op, uint32_t g);

/*
 * ks_bench_pod_groups - the PodGroups of op @op's @ngroups gangs in namespace @ns (interned),
 * gang g of minCount group_sizes[g % n] of @spec (the last one's @last, the pods it got) and
 * the topology key group_keys[g % n], pushed into @objs. 0 or -ENOMEM.
 */
int ks_bench_pod_groups(struct ks_objects *objs, uint32_t op, uint32_t ns, uint32_t ngroups,
                        const struct ks_bench_op *spec, uint32_t last);

/*
 * ks_bench_alloc_claims - allocResourceClaims: every unallocated ResourceClaim of @objs in
 * @namespace (NULL: all) allocated, one after the other, on the first of the @n @nodes,
 * tried from a random one (@seed) onwards, where the structured allocator finds its devices
 * among the set's slices and what the claims before it took; the allocation is written into
 * the claim's status. Upstream's op does this through the API server before the measured
 * pods come. Returns the number allocated, or -EINVAL with the claim and the reason in @msg
 * (no node has room), -ENOMEM. Before a scheduler reads the set; one thread.
 */
int ks_bench_alloc_claims(struct ks_objects *objs, const char *namespace, struct ks_node *const *nodes,
                          uint32_t n, uint64_t seed, char *msg, size_t len);

/*
 * The allocations the scheduler published, for --check: a struct ks_dra_api (as ksched serve
 * gives DynamicResources one to write through) that records every claim's allocation instead
 * of sending it, and counts every device found allocated to two claims at once. In process
 * the plugin keeps its allocations in its claim tracker, which it does not expose; with the
 * record it writes them here (and sends the queue no claim update events, which only an
 * informer would deliver then).
 */
struct ks_bench_dra_record;

/*
 * ks_bench_dra_record_create - a record that starts with the allocations the claims of @objs
 * already have (allocResourceClaims). 0 or -ENOMEM. Main thread, before the scheduler.
 */
int ks_bench_dra_record_create(const struct ks_objects *objs, struct ks_bench_dra_record **out);
void ks_bench_dra_record_destroy(struct ks_bench_dra_record *rec); /* accepts NULL */

/* ks_bench_dra_record_api - the API the scheduler writes through (ks_scheduler_opts.dra_api). */
const struct ks_dra_api *ks_bench_dra_record_api(struct ks_bench_dra_record *rec);

/* ks_bench_dra_record_forget - claim @c was deleted: its devices are free. Any thread. */
void ks_bench_dra_record_forget(struct ks_bench_dra_record *rec, const struct ks_resource_claim *c);

/*
 * ks_bench_dra_record_conflicts - how many times a device was written as allocated to a claim
 * while another claim held it, with the first such case in @example. Any thread.
 */
uint64_t ks_bench_dra_record_conflicts(struct ks_bench_dra_record *rec, char *example, size_t len);

/*
 * ks_bench_dra_record_check_pod - @pod is bound to node @node (interned): each of its claims,
 * and the special claim the scheduler made for its extended resources (as its status patch
 * named it), has a recorded allocation, and every device of it is in a pool of @node (by the
 * slices of @objs; pools that are not a node's pass). 0, or -1 with the first problem in @msg. Main
 * thread, after the scheduling.
 */
int ks_bench_dra_record_check_pod(struct ks_bench_dra_record *rec, const struct ks_objects *objs,
                                  const struct ks_pod *pod, uint32_t node, char *msg, size_t len);

/* ---- measurement (bench_stats.c) ------------------------------------------------------------- */

/*
 * A log-linear histogram of durations in nanoseconds: exact below 64 ns, then 32 linear
 * buckets per power of two (at most 3% relative error), like HdrHistogram with two
 * significant digits. Not thread-safe: one recorder.
 */
#define KS_HIST_SUB_BITS 5
#define KS_HIST_BUCKETS  ((64 - KS_HIST_SUB_BITS + 1) << KS_HIST_SUB_BITS)

struct ks_hist {
    uint64_t count;
    uint64_t max;
    uint64_t sum;
    uint64_t buckets[KS_HIST_BUCKETS];
};

void ks_hist_record(struct ks_hist *h, uint64_t ns);

/* ks_hist_quantile - the value at quantile @q (0..1): the midpoint of its bucket; 0 when empty. */
uint64_t ks_hist_quantile(const struct ks_hist *h, double q);

/* ks_bench_cpu_ns - user + system CPU time of the process so far (getrusage). */
int64_t ks_bench_cpu_ns(void);

/* ks_bench_peak_rss - peak resident set size of the process in bytes (getrusage ru_maxrss). */
uint64_t ks_bench_peak_rss(void);

/* ks_bench_rss - current resident set size in bytes (/proc/self/statm), 0 when unknown. */
uint64_t ks_bench_rss(void);

/* ---- the run (bench_run.c) ------------------------------------------------------------------ */

/* `ksched bench`'s flags (cmd/bench_cmd.c parses them; its usage text says what each means). */
struct ks_bench_args {
    const char *workload;
    const char *config;
    const char *size;
    uint32_t nodes;
    int64_t pods, existing;
    uint32_t parallelism, binders;
    bool have_nodes, seeded, json, check, quiet, list;
    bool no_index; /* --no-index: ks_scheduler_opts.no_index */
    uint64_t seed;
};

/*
 * ks_bench_run - run what @a asks for: with list and no workload the workloads' names, with
 * list the workload's sizes, else the workload at its size, reported on standard output
 * (progress on standard error). @argv0 locates bench/workloads/ (ks_bench_workload_find).
 * Returns the exit status: 0, 1 (a failure, or --check found a problem), 2 (bad input, with
 * one FILE:LINE: FIELD: MESSAGE line or a usage message on standard error).
 * Context: the process's main thread, which becomes the scheduling thread.
 */
int ks_bench_run(const struct ks_bench_args *a, const char *argv0);

#endif
