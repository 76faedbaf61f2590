/*
 * plugin_helpers_volumes.h - what the storage plugins share: indexes of the loaded
 * PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes, the storage
 * helpers of k8s.io/component-helpers/storage/volume and ephemeral, and the counting of the
 * in-tree volume limit plugins (EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits).
 *
 * Mirrors GetPersistentVolumeClaimClass, GetPersistentVolumeClass, CheckNodeAffinity
 * (component-helpers/storage/volume), v1helper.MatchTopologySelectorTerms,
 * ephemeral.VolumeIsForPod, volumehelpers.LabelZonesToSet and the nonCSILimits plugin of
 * pkg/scheduler/framework/plugins/nodevolumelimits/non_csi.go.
 *
 * An index is built at plugin init from the framework's objects and is immutable
 * afterwards: lookups by key id are lock-free binary searches that any thread may run.
 * ksched serve changes the objects between cycles (loader.h, gen): a plugin refreshes its
 * index at PreFilter, on the scheduling thread, before the cycle's Filter workers read it. Keys are interned
 * strings: "namespace/name" for claims (the same key the cache interns for pvcs_in_use and pvc_refs), the
 * name for the cluster-scoped kinds, built by ks_intern_ns_name() (ksched/base/intern.h) and looked up with
 * ks_intern_find_ns_name(), which takes the intern lock (init and PreFilter only).
 *
 * Context: building interns and allocates (init, or PreFilter when the objects changed); every
 * function here is otherwise pure and allocation-free.
 */
#ifndef KSCHED_PLUGIN_HELPERS_VOLUMES_H
#define KSCHED_PLUGIN_HELPERS_VOLUMES_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/base/error.h"
#include "ksched/cache_types.h"
#include "ksched/framework_types.h"
#include "ksched/volume_api.h"

struct ks_objects;
struct ks_framework;

/* Annotations and labels read by the storage plugins (component-helpers/storage/volume). */
#define KS_ANN_BIND_COMPLETED        "pv.kubernetes.io/bind-completed"
#define KS_ANN_BOUND_BY_CONTROLLER   "pv.kubernetes.io/bound-by-controller"
#define KS_ANN_SELECTED_NODE         "volume.kubernetes.io/selected-node"
#define KS_ANN_BETA_STORAGE_CLASS    "volume.beta.kubernetes.io/storage-class"
#define KS_ANN_MIGRATED_PLUGINS      "storage.alpha.kubernetes.io/migrated-plugins"
#define KS_NOT_SUPPORTED_PROVISIONER "kubernetes.io/no-provisioner"
#define KS_LABEL_BETA_ZONE           "failure-domain.beta.kubernetes.io/zone"
#define KS_LABEL_BETA_REGION         "failure-domain.beta.kubernetes.io/region"

/* One entry of an index: an interned key and the object it names. */
struct ks_vol_entry {
    uint32_t key;
    uint32_t pos; /* position in the objects' list of its kind (input order) */
    const void *obj;
};

struct ks_vol_table {
    uint32_t n;
    struct ks_vol_entry *items; /* sorted by key */
};

/* The storage objects of one struct ks_objects, indexed. */
struct ks_vol_index {
    struct ks_vol_table pvcs;     /* "namespace/name" -> struct ks_persistent_volume_claim */
    struct ks_vol_table pvs;      /* name -> struct ks_persistent_volume */
    struct ks_vol_table classes;  /* name -> struct ks_storage_class */
    struct ks_vol_table csinodes; /* name (= node name) -> struct ks_csi_node */
    uint64_t gen;                 /* ks_vol_objects_gen() of the objects when built */
};

/*
 * ks_vol_index_build - index the PVs, PVCs, StorageClasses and CSINodes of @objs (NULL:
 * empty). Duplicate keys keep the first object. Returns 0 or -ENOMEM (nothing to free).
 */
int ks_vol_index_build(struct ks_vol_index *ix, const struct ks_objects *objs);

/* ks_vol_index_destroy - free the tables (not the objects). Accepts an empty index. */
void ks_vol_index_destroy(struct ks_vol_index *ix);

/*
 * ks_vol_objects_gen - the sum of the change counters (struct ks_objects gen, loader.h) of
 * the four indexed kinds; 0 for NULL. Scheduling thread (the counters' thread).
 */
uint64_t ks_vol_objects_gen(const struct ks_objects *objs);

/*
 * ks_vol_index_stale - whether @objs changed since @ix was built. Scheduling thread.
 * Nothing to do when false: a plugin calls it at each PreFilter, so an unchanged set costs
 * four loads and a compare.
 */
bool ks_vol_index_stale(const struct ks_vol_index *ix, const struct ks_objects *objs);

/*
 * ks_vol_index_refresh - rebuild @ix from @objs when ks_vol_index_stale(). Returns 1
 * when rebuilt (the old tables are freed: the caller must know no other thread reads
 * them), 0 when unchanged, -ENOMEM with @ix untouched. Scheduling thread; allocates and
 * interns only when rebuilding. Plugins whose index is read on binder threads build a
 * new index with ks_vol_index_build() and publish it themselves (volume_binding.c).
 */
int ks_vol_index_refresh(struct ks_vol_index *ix, const struct ks_objects *objs);

/* ks_vol_objects - the loaded objects of the framework of a plugin being initialised (NULL: none). */
const struct ks_objects *ks_vol_objects(const struct ks_framework *fw);

/* ks_vol_table_find - the entry of @key, NULL when absent. Any thread. */
const struct ks_vol_entry *ks_vol_table_find(const struct ks_vol_table *t, uint32_t key);

/* Typed lookups by name (ns: interned namespace of the pod). NULL when absent. PreFilter/init. */
const struct ks_persistent_volume_claim *ks_vol_find_pvc(const struct ks_vol_index *ix, uint32_t ns,
                                                         const char *name);
const struct ks_persistent_volume *ks_vol_find_pv(const struct ks_vol_index *ix, const char *name);
const struct ks_storage_class *ks_vol_find_class(const struct ks_vol_index *ix, const char *name);

/* ks_vol_find_csinode - the CSINode of node @node_name (interned), NULL when absent. Any thread. */
const struct ks_csi_node *ks_vol_find_csinode(const struct ks_vol_index *ix, uint32_t node_name);

/* ---- object helpers ---------------------------------------------------------------------- */

/* ks_annotation - the value of annotation @key, NULL when absent. */
const char *ks_annotation(const struct ks_annotations *a, const char *key);

/*
 * ks_pvc_class - GetPersistentVolumeClaimClass: the beta storage-class annotation when
 * present, else spec.storageClassName, else "".
 */
const char *ks_pvc_class(const struct ks_persistent_volume_claim *pvc);

/* ks_pv_class - GetPersistentVolumeClass: the beta annotation, else spec.storageClassName. */
const char *ks_pv_class(const struct ks_persistent_volume *pv);

/* ks_pvc_fully_bound - spec.volumeName set and the bind-completed annotation present. */
bool ks_pvc_fully_bound(const struct ks_persistent_volume_claim *pvc);

/*
 * ks_pv_node_affinity_ok - CheckNodeAffinity: a PV without spec.nodeAffinity.required
 * fits every node; otherwise one of its terms must match @labels (matched as a node that
 * has labels and no name, as upstream does).
 */
bool ks_pv_node_affinity_ok(const struct ks_persistent_volume *pv, const struct ks_labels *labels);

/*
 * ks_topology_terms_match - MatchTopologySelectorTerms: no terms match everything, a term
 * without expressions matches nothing, terms are ORed.
 */
bool ks_topology_terms_match(const struct ks_node_selector_term *terms, uint32_t n,
                             const struct ks_labels *labels);

/*
 * ks_volume_claim_name - the claim a pod volume uses: the claim name of a
 * persistentVolumeClaim volume, "<pod>-<volume>" of an ephemeral one, NULL otherwise.
 */
const char *ks_volume_claim_name(const struct ks_volume *v);

/*
 * ks_ephemeral_is_for_pod - ephemeral.VolumeIsForPod: @pvc must be in @pod's namespace and
 * controlled by @pod (a controller owner reference with the pod's uid).
 */
bool ks_ephemeral_is_for_pod(const struct ks_pod *pod, const struct ks_persistent_volume_claim *pvc);

/*
 * ks_label_zones_split - LabelZonesToSet: split @value at "__", trim each part; calls
 * @fn(@ctx, part, len) for each. Returns false (without calling @fn) when a part is empty,
 * as upstream rejects the whole label then.
 */
bool ks_label_zones_split(const char *value, void (*fn)(void *ctx, const char *s, size_t len), void *ctx);

/* ---- binding a pod's volumes through an API server (binder.go BindPodVolumes) ------------ */

struct ks_volume_api;

/* One claim of a pod's binding: a static binding (@pv set) or a claim to provision (@pv NULL). */
struct ks_vol_bind_item {
    const struct ks_persistent_volume *pv;        /* the PV Reserve chose, as it was then */
    const struct ks_persistent_volume_claim *pvc; /* the claim, as Reserve saw it */
    uint64_t rv;                                  /* the resourceVersion its update returned */
};

/*
 * The API binding of one pod's volumes, from PreBind until the wait ends. The caller
 * (VolumeBinding's PreBind) fills everything up to @resume in memory that outlives the
 * wait (the binding cycle's arena: the cycle is parked meanwhile) and calls
 * ks_vol_bind_start(). The wait is ended with ks_bind_wait_done(@resume, ...): Success,
 * or Error "binding volumes: <why>".
 */
struct ks_vol_bind {
    struct ks_vol_wait wait; /* handed to the API (volume_api.h) */
    struct ks_cache *cache;  /* the node's labels, for CheckNodeAffinity */
    const struct ks_pod *pod;
    uint32_t node;    /* interned */
    uint32_t n;       /* items */
    uint32_t nstatic; /* items[0..nstatic) are static bindings, the rest provisions */
    struct ks_vol_bind_item *items;
    int64_t timeout_ns;          /* bindTimeoutSeconds */
    struct ks_bind_wait *resume; /* the parked binding cycle (cs->bind_wait) */
};

/*
 * ks_vol_bind_start - bindAPIUpdate: PUT each static binding's PV with its claimRef (and
 * pv.kubernetes.io/bound-by-controller unless the PV was already bound to the claim), then
 * each provisioned claim with volume.kubernetes.io/selected-node, in that order, stopping
 * at the first failure (its error is the status, as upstream returns the client's error;
 * the updates already made stay, as upstream makes no API rollback); then hand the wait to
 * @api. Returns KS_WAIT (the wait will end through @b->resume), or KS_ERROR with @st set.
 * Binder thread; blocks for the updates' round trips; takes no plugin lock.
 */
int ks_vol_bind_start(const struct ks_volume_api *api, struct ks_vol_bind *b, struct ks_status *st);

/*
 * ks_vol_check_bindings - checkBindings against the informers' newest objects: KS_VOL_BOUND
 * when every claim is fully bound (spec.volumeName and pv.kubernetes.io/bind-completed, its
 * PV's node affinity matching the node); KS_VOL_PENDING while the informers have not yet
 * delivered what our updates wrote or the PV controller is not done; KS_VOL_FAILED with
 * upstream's message in @msg when binding must be retried (pod or node gone, a PV's claimRef
 * reset, a PV's node affinity not matching, a provisioning given up: selected-node removed).
 * Any RCU-registered thread outside a read section (it reads the cache's snapshot).
 */
enum ks_vol_wait_result ks_vol_check_bindings(const struct ks_vol_bind *b, const struct ks_vol_lookup *l,
                                              char *msg, size_t len);

/* ---- the in-tree volume limit plugins (non_csi.go) --------------------------------------- */

/* Which in-tree plugin a nonCSILimits instance counts. */
enum ks_noncsi_kind {
    KS_NONCSI_EBS,
    KS_NONCSI_GCE_PD,
    KS_NONCSI_AZURE_DISK,
    KS_NONCSI_CINDER,
};

struct ks_noncsi;

/*
 * The four plugins share one implementation; each plugin file exports an ops table whose
 * ops call these with its kind. See plugins/ebs_limits.c for the semantics.
 */
int ks_noncsi_init(enum ks_noncsi_kind kind, const struct ks_plugin_init *in, void **self);
void ks_noncsi_destroy(void *self);
int ks_noncsi_pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                         struct ks_pre_filter_result *res, struct ks_status *st);
int ks_noncsi_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                     const struct ks_node_snap *node, struct ks_status *st);
struct ks_event_registration;
uint32_t ks_noncsi_events_to_register(void *self, struct ks_event_registration *out, uint32_t max);

#endif
