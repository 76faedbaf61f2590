/*
 * dra_internal.h - the structured allocator's own types, shared by the files of dra/ and by
 * its tests (test/dra/); nothing else includes it.
 *
 * Layout. A catalog (catalog.c) numbers every device of every ResourceSlice once (its
 * global index, "gidx"), keeps a CEL view of each device (device_view.c), the DeviceClasses
 * with their compiled selectors, and for every node name that has node-local slices a
 * poolset: the pools GatherPools would build for that node (pools.c), with their devices
 * flattened in pool/slice/device order (the order the search tries them). Claims are
 * prepared once per pod (claims.c: classes resolved, selectors compiled, node-independent
 * errors formatted in upstream's order); ks_dra_allocate() (allocate.c) then runs upstream's
 * depth-first search over a poolset with per-call state kept in a scratch.
 *
 * Memory. Catalog and prepared claims allocate from a struct dra_bump that they own; a
 * scratch's bump is reset at each call and, once grown to the high-water mark, serves every
 * call from one chunk (no malloc in the steady state).
 */
#ifndef KSCHED_DRA_INTERNAL_H
#define KSCHED_DRA_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/dra.h"
#include "ksched/dra_types.h"
#include "ksched/internal/cel.h"

/* ---- bump allocation ------------------------------------------------------------------------------ */

struct dra_chunk;

/* A chain of chunks handing out 16-byte aligned memory; zeroed struct: empty. Single-threaded. */
struct dra_bump {
    struct dra_chunk *head;
    size_t used;      /* bytes used in head */
    size_t since;     /* bytes handed out since the last reset (the high-water candidate) */
    uint32_t nchunks; /* chunks in the chain */
};

/* ks__dra_bump_alloc - @n uninitialised bytes, NULL when out of memory. */
void *ks__dra_bump_alloc(struct dra_bump *b, size_t n);
/* ks__dra_bump_zalloc - @n zeroed bytes (an array of @count of @size), NULL on overflow or ENOMEM. */
void *ks__dra_bump_zalloc(struct dra_bump *b, size_t count, size_t size);
/* ks__dra_bump_strdup - a copy of the @len bytes at @s plus a NUL. */
char *ks__dra_bump_strndup(struct dra_bump *b, const char *s, size_t len);
/* ks__dra_bump_printf - a formatted string in @b, NULL when out of memory. */
char *ks__dra_bump_printf(struct dra_bump *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * ks__dra_bump_reset - forget every allocation. When the last round needed more than one
 * chunk, the chain is replaced by one chunk that holds all of it, so that the next round of
 * the same size mallocs nothing.
 */
void ks__dra_bump_reset(struct dra_bump *b);
/* ks__dra_bump_free - free every chunk. */
void ks__dra_bump_free(struct dra_bump *b);

/* A growable array of uint32_t in malloc'd memory (build-time helper). */
struct dra_u32v {
    uint32_t n, cap;
    uint32_t *v;
};
int ks__dra_u32v_push(struct dra_u32v *v, uint32_t x);

/* ---- the CEL side: device views and compiled selectors --------------------------------------------- */

/* One entry of an attribute or capacity map of a domain: its id (text) and its CEL value. */
struct dra_cel_entry {
    const char *id;
    size_t len;
    struct ks_cel_value value;
};

/* The attributes or capacities of one domain, a map from id to value. */
struct dra_cel_domain {
    const char *name;
    size_t len;
    uint32_t n;
    const struct dra_cel_entry *entries;
    const struct ks_cel_type *type; /* its declared type (NULL without CEL) */
};

/*
 * device.attributes or device.capacity: a map from domain to its map. Looking up a domain
 * the device has none of gives @empty (cel's newStringInterfaceMapWithDefault).
 */
struct dra_cel_map {
    uint32_t n;
    const struct dra_cel_domain *domains;
    const struct ks_cel_type *type;
    struct dra_cel_domain empty;
};

/* The declared types of the device variable's parts (device_cel.c makes them; all NULL without CEL). */
struct dra_cel_types {
    const struct ks_cel_type *device, *attr_outer, *attr_inner, *cap_outer, *cap_inner;
};

/*
 * The `device` variable of a device selector, as cel.DeviceMatches builds it: driver,
 * allowMultipleAllocations, attributes and capacities grouped by domain (an unqualified
 * name belongs to the driver's domain). Built once per device by the catalog; evaluation
 * reads it through host ops and copies nothing.
 */
struct dra_cel_device {
    const char *driver;
    size_t driver_len;
    bool allow_multiple;
    struct dra_cel_map attributes;
    struct dra_cel_map capacity;
    /* DeviceMatches' error for this device before evaluation ("attribute x: parse semantic version: ..."), or
     * NULL */
    const char *error;
};

/*
 * ks__dra_cel_device_build - the CEL view of @dev, a device of a slice of driver @driver,
 * in @mem. 0 or -ENOMEM.
 */
int ks__dra_cel_device_build(struct dra_bump *mem, const struct ks_device *dev, const char *driver,
                             const struct dra_cel_types *types, struct dra_cel_device *out);

/* The host ops of the device object, its two maps and their domain maps (device_view.c). */
extern const struct ks_cel_host_ops ks__dra_cel_device_ops, ks__dra_cel_map_ops, ks__dra_cel_domain_ops;

/*
 * semver as blang/semver's Parse (what DeviceMatches runs on version attributes): 0 and the
 * parts; or -EINVAL with its error text in @err.
 */
int ks__dra_semver_parse(const char *s, uint64_t *major, uint64_t *minor, uint64_t *patch, const char **pre,
                         size_t *pre_len, char *err, size_t errlen);

/* The memo's states of one (device, selector) pair; 0 is "not evaluated yet". */
enum { DRA_MEMO_UNKNOWN = 0, DRA_MEMO_FALSE = 1, DRA_MEMO_TRUE = 2, DRA_MEMO_ERROR = 3 };

/*
 * A compiled device selector: one per distinct expression per catalog. @error is the
 * compile error (upstream's CompilationResult.Error text, "compilation failed: ..."), in
 * which case @prog is NULL. @memo holds one state per catalog device, filled by any thread
 * with relaxed atomics (see ks__dra_selector_match).
 */
struct dra_selector {
    const struct dra_cel *cel;
    const char *expr;
    size_t len;
    uint64_t hash;
    struct ks_cel_program *prog;
    char *error;
    uint32_t nmemo;
    _Atomic uint8_t *memo;
};

struct dra_cel;

/*
 * ks__dra_cel_shared - the device-selector environment (device_cel.c), made on first use
 * and kept for the process (it is only read once made, and the same for every catalog);
 * NULL when it could not be made (out of memory). Any thread.
 */
const struct dra_cel *ks__dra_cel_shared(void);
/* ks__dra_cel_scratch_create / _destroy - an evaluation scratch (ks_cel_scratch_create). */
int ks__dra_cel_scratch_create(struct ks_cel_scratch **out);
void ks__dra_cel_scratch_destroy(struct ks_cel_scratch *s);
/* ks__dra_cel_types - the declared types of @c's device variable. */
const struct dra_cel_types *ks__dra_cel_types(const struct dra_cel *c);
/* ks__dra_cel_available - false when this build has no CEL evaluator (device_cel_stub.c). */
bool ks__dra_cel_available(void);

/*
 * ks__dra_selector_new - compile @len bytes of @expr in @c (any thread; the environment is
 * read-only), with a memo for @ndevices devices. A compile error is kept in the selector,
 * not returned. 0 or -ENOMEM.
 */
int ks__dra_selector_new(const struct dra_cel *c, const char *expr, size_t len, uint64_t hash,
                         uint32_t ndevices, struct dra_selector **out);
void ks__dra_selector_destroy(struct dra_selector *s);

/*
 * ks__dra_selector_eval - evaluate @s on device @d with the runtime cost limit
 * CELSelectorExpressionMaxCost: 1 matches, 0 does not, -EINVAL with the runtime error text
 * (already through cel.EnhanceRuntimeError) in @err, -ENOMEM. @s must have compiled.
 */
int ks__dra_selector_eval(const struct dra_selector *s, const struct dra_cel_device *d,
                          struct ks_cel_scratch *cs, char *err, size_t errlen);

/* ks__dra_expr_hash - the hash the selector tables key expressions by. */
uint64_t ks__dra_expr_hash(const char *s, size_t len);

/* ---- catalog ----------------------------------------------------------------------------------------- */

/* A DeviceClass with its compiled selectors (NULL entries: a selector without CEL). */
struct dra_class {
    const struct ks_device_class *obj;
    uint32_t nsel;
    struct dra_selector **sel;
};

/* A device of the catalog, by global index. */
struct dra_dev {
    const struct ks_device *dev;
    const struct ks_resource_slice *slice;
    uint32_t slice_idx;
    bool node_sel_bad;        /* its own node selector does not parse (per-device node selection) */
    bool cap_policy;          /* one of its capacities has a requestPolicy */
    const uint32_t *attr_str; /* catalog-local id of each STRING/VERSION attribute value (0 for others) */
    struct dra_cel_device cel;
};

/* A slice of the catalog, by input index. */
struct dra_slice {
    const struct ks_resource_slice *obj;
    uint32_t pool;       /* index in the catalog's pools */
    uint32_t name_rank;  /* position when sorted by name, ties in input order */
    uint32_t name_class; /* equal for slices of equal names */
    uint32_t first_dev;  /* global index of its first device */
    bool sel_bad;        /* its node selector does not parse */
};

/* A resource pool (driver, pool name) of the catalog with all its slices in input order. */
struct dra_pool_id {
    uint32_t driver, pool;
    uint32_t rank; /* position when sorted by driver, then pool name */
    uint32_t nslices;
    uint32_t *slices;
};

/* One counter a device consumes: the pool's counter slot and the amount. */
struct dra_consume {
    uint32_t slot;
    struct ks_quantity q;
};

/* A device of a poolset: the flat order the search tries devices in. */
struct dra_pdev {
    uint32_t gidx;
    uint32_t pool; /* index in the poolset's pools */
    uint32_t ncons;
    const struct dra_consume *cons; /* resolved consumesCounters (valid pools with partitionable devices) */
};

/* A device of a pool outside the node's slices that consumes counters (its slices do not target the node). */
struct dra_other {
    uint32_t gidx;
    uint32_t ncons;
    const struct dra_consume *cons;
};

/* A pool as GatherPools/buildPool makes it for one node. */
struct dra_pool {
    uint32_t id; /* index in the catalog's pools */
    bool incomplete, invalid, binding;
    const char *invalid_reason;
    uint32_t nslices;
    const uint32_t *slices;   /* the device slices targeting the node, sorted by name */
    uint32_t dev_first, ndev; /* their devices in the poolset's flat array */
    uint32_t nslots;          /* counters of the pool's counter sets */
    const struct ks_quantity *slot_value;
    uint32_t nother;
    const struct dra_other *other;
};

/* The pools one node sees, in the order the search tries them. */
struct dra_poolset {
    uint32_t npools;
    struct dra_pool *pools;
    uint32_t ndev;
    struct dra_pdev *devs;
    uint32_t max_cap;                   /* most capacities of one device */
    uint32_t max_slots;                 /* most counter slots of one pool */
    uint32_t node;                      /* the node name of a node's precomputed poolset (KS_ID_NONE: none) */
    struct ks_node_selector *local_sel; /* ... and its results' node selector: metadata.name In [node] */
    uint32_t index;                     /* a precomputed poolset's number in its catalog (npoolsets) */
    bool memo_ok; /* precomputed, no device selecting nodes itself: verdicts may be remembered (verdict.c) */
};

/* Claim-set shapes (verdict.c): an insert-only table of lock-free slots, numbered from 1. */
struct dra_shape;
enum { DRA_SHAPE_MAX = (1 << 20) - 1, DRA_VERDICT_SLOTS = 8 };
struct dra_shape_table {
    uint32_t mask;
    _Atomic(struct dra_shape *) *slots;
    _Atomic uint32_t next;
};

/* Claim selectors compiled lazily: an insert-only table of lock-free slots. */
struct dra_sel_table {
    uint32_t mask;
    _Atomic(struct dra_selector *) *slots;
};

struct ks_dra_catalog {
    struct ks_dra_features features;
    uint32_t metadata_name; /* interned "metadata.name" */

    uint32_t nclasses;
    struct dra_class *classes;
    uint32_t class_mask;
    uint32_t *class_table; /* open addressing by interned name; UINT32_MAX empty */

    uint32_t nslices;
    struct dra_slice *slices;
    uint32_t ndevices;
    struct dra_dev *devs;
    uint32_t npools;
    struct dra_pool_id *pools;

    /* GatherPools' inputs besides the node's own slices: slices without a node name */
    uint32_t nshared;
    uint32_t *shared;     /* every slice without a node name, in input order */
    bool *shared_dynamic; /* per shared slice: relevance depends on the node's labels or devices */
    uint32_t ndynamic;

    /* precomputed poolsets: node name id -> poolset of its slices and the allNodes slices */
    uint32_t node_mask;
    uint32_t *node_keys; /* KS_ID_NONE empty */
    struct dra_poolset **node_sets;
    uint32_t *node_local_of;         /* index in node_local */
    struct dra_poolset *default_set; /* for nodes without node-local slices */
    uint32_t nnode_names;
    uint32_t *node_names;        /* distinct node names of node-local slices */
    struct dra_u32v *node_local; /* per distinct node name: its slices in input order (build only) */

    /* devices by id (driver, pool, device): the first gidx with that id, then dev_same[] */
    uint32_t dev_mask;
    uint32_t *dev_table; /* UINT32_MAX empty */
    uint32_t *dev_same;  /* per gidx: the next gidx with the same id, UINT32_MAX at the end */
    uint64_t serial;     /* unique among the process's catalogs: what an allocated state binds to */

    uint32_t npoolsets; /* precomputed poolsets: the default one (index 0) and one per node name */

    struct dra_sel_table sels;
    struct dra_shape_table shapes;
    uint32_t max_cap;
    struct dra_bump mem;
};

/*
 * ks__dra_catalog_device - the first catalog device (gidx) named (@driver, @pool, @device),
 * UINT32_MAX when none; the others follow through cat->dev_same.
 */
uint32_t ks__dra_catalog_device(const struct ks_dra_catalog *cat, uint32_t driver, uint32_t pool,
                                uint32_t device);

/* ks__dra_catalog_find_selector - the catalog's compiled selector for @expr, compiling and
 * publishing it when new; *@private_out set when the table is full (then the caller owns the
 * selector). Any thread; lock-free. 0 or -ENOMEM. */
int ks__dra_catalog_selector(const struct ks_dra_catalog *cat, const char *expr, struct dra_selector **out,
                             bool *private_out);

/* ks__dra_catalog_class - the class named by the NUL-terminated @name, or NULL. */
const struct dra_class *ks__dra_catalog_class_by_name(const struct ks_dra_catalog *cat, const char *name);

/* ks__dra_name_selector - matchFields metadata.name In [@node] in @mem (node-local results'). NULL: ENOMEM.
 */
struct ks_node_selector *ks__dra_name_selector(const struct ks_dra_catalog *c, struct dra_bump *mem,
                                               uint32_t node);

/*
 * ks__dra_catalog_poolset - the precomputed poolset of node name @name_id (the default one
 * when no slice names it), and in *@local the node's own slices (NULL: none).
 */
const struct dra_poolset *ks__dra_catalog_poolset(const struct ks_dra_catalog *cat, uint32_t name_id,
                                                  const struct dra_u32v **local);

/* ---- remembered verdicts (verdict.c) ---------------------------------------------------------------- */

int ks__dra_shapes_init(struct dra_shape_table *t);
void ks__dra_shapes_free(struct dra_shape_table *t);

/*
 * ks__dra_claims_shape - the shape id of the claim set (@nclaims @claims) in @cat: equal for
 * sets with equal specs, 0 when the catalog has numbered DRA_SHAPE_MAX shapes. 0 or -ENOMEM.
 * Any thread; lock-free.
 */
int ks__dra_claims_shape(const struct ks_dra_catalog *cat, const struct ks_resource_claim *const *claims,
                         uint32_t nclaims, uint32_t *shape);

/*
 * ks__dra_verdict_slot - where the verdict of @p over @ps is remembered in @a, with in *@key
 * the word that identifies the current state; NULL when it cannot be (no shape, a poolset
 * gathered for one node, a state not bound to the claims' catalog).
 * ks__dra_verdict_get - KS_DRA_ALLOCATED or KS_DRA_UNSUITABLE when @slot holds @key's
 * verdict, else -1. ks__dra_verdict_put - remember @outcome (one of those two) for @key.
 */
_Atomic uint64_t *ks__dra_verdict_slot(const struct ks_dra_allocated *a, const struct ks_dra_claims *p,
                                       const struct dra_poolset *ps, uint64_t *key);
int ks__dra_verdict_get(_Atomic uint64_t *slot, uint64_t key);
void ks__dra_verdict_put(_Atomic uint64_t *slot, uint64_t key, int outcome);

/* ---- GatherPools (pools.c) ---------------------------------------------------------------------- */

/* Per-gather working memory sized by the catalog (malloc'd, reused). */
struct dra_gather_tmp {
    uint32_t stamp;
    uint32_t cap_pools;
    uint32_t *pool_stamp; /* per catalog pool */
    int64_t *pool_gen;
    uint32_t *pool_count; /* relevant slices at that generation */
    uint32_t *touched;
    uint32_t cap_hash;
    uint32_t *hash_keys; /* device-name set for validateDeviceNames */
    uint32_t *hash_stamp;
    uint32_t cap_list;
    uint32_t *list; /* scratch slice list */
};

void ks__dra_gather_tmp_free(struct dra_gather_tmp *t);

/*
 * ks__dra_gather - GatherPools over the relevant slices @rel (catalog slice indices, in
 * slicesForNode order) into @out, with every array in @mem. 0 or -ENOMEM.
 */
int ks__dra_gather(const struct ks_dra_catalog *cat, const uint32_t *rel, uint32_t nrel,
                   struct dra_gather_tmp *t, struct dra_bump *mem, struct dra_poolset *out);

/*
 * ks__dra_node_matches - NodeMatches(node, nodeName, allNodes, nodeSelector): 1, 0, or
 * -EINVAL when the selector does not parse (@sel_bad).
 */
int ks__dra_node_matches(const struct ks_node *node, uint32_t node_name, bool all_nodes,
                         const struct ks_node_selector *sel, bool sel_bad);

/* ---- allocated state (allocated.c) --------------------------------------------------------------- */

/* The hash of a device id (interned driver, pool, device) for tables indexed by its low bits. */
static inline uint32_t ks__dra_id_hash(uint32_t driver, uint32_t pool, uint32_t device)
{
    uint64_t h = (uint64_t)device * 0x9e3779b97f4a7c15ull ^ (uint64_t)pool * 0xc2b2ae3d27d4eb4full ^
                 (uint64_t)driver * 0x165667b19e3779f9ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    return (uint32_t)(h >> 32);
}

/* What the allocated claims hold of one device. An entry with all counts zero is absent. */
struct dra_alloc_entry {
    uint32_t driver, pool, device;
    uint32_t dedicated; /* results without a share id */
    uint32_t shared;    /* results with a share id */
    uint32_t capacity;  /* results with consumedCapacity: AggregatedCapacity has the device when > 0 */
    uint32_t ncap, capcap;
    struct ks_named_quantity *cap; /* the sums of consumedCapacity */
};

/* ks__dra_allocated_find - the entry of device (@driver, @pool, @device), or NULL. */
const struct dra_alloc_entry *ks__dra_allocated_find(const struct ks_dra_allocated *a, uint32_t driver,
                                                     uint32_t pool, uint32_t device);

/* What an allocated state holds of a device, as bits: results without a share id, with one, with capacity. */
enum { DRA_HELD_DEDICATED = 1, DRA_HELD_SHARED = 2, DRA_HELD_CAPACITY = 4 };

/*
 * ks__dra_allocated_held - the DRA_HELD_* bits of catalog device @gidx of @cat; from the
 * state's per-device array when it is bound to @cat (ks_dra_allocated_bind), else by its id.
 * ks__dra_allocated_entry - the device's entry, or NULL when nothing holds it.
 */
uint8_t ks__dra_allocated_held(const struct ks_dra_allocated *a, const struct ks_dra_catalog *cat,
                               uint32_t gidx);
const struct dra_alloc_entry *ks__dra_allocated_entry(const struct ks_dra_allocated *a,
                                                      const struct ks_dra_catalog *cat, uint32_t gidx);

/*
 * ks__dra_allocated_memo - the verdict slots (DRA_VERDICT_SLOTS) of precomputed poolset @ps
 * in a state bound to @cat, and in *@version the sum of the changes counted to the devices of
 * its pools; NULL when @a is NULL or not bound to @cat. The slots are the one part of a
 * state that its readers write (atomically, verdict.c).
 */
_Atomic uint64_t *ks__dra_allocated_memo(const struct ks_dra_allocated *a, const struct ks_dra_catalog *cat,
                                         const struct dra_poolset *ps, uint64_t *version);

/* ---- consumable capacity (capacity.c) ------------------------------------------------------------ */

/* calculateConsumedCapacity: what a request of @req (NULL: none) consumes of @cap. */
void ks__dra_consumed_capacity(const struct ks_quantity *req, const struct ks_device_capacity *cap,
                               struct ks_quantity *out);
/* violatesPolicy: @val breaks @policy (NULL: no policy). */
bool ks__dra_violates_policy(const struct ks_quantity *val, const struct ks_capacity_policy *policy);
/* A quantity of @v in BinarySI (resource.NewQuantity(v, resource.BinarySI)). */
void ks__dra_quantity_int(int64_t v, struct ks_quantity *out);

/* ---- prepared claims (claims.c) ------------------------------------------------------------------ */

/* A request without subrequests, or one subrequest: what upstream's requestAccessor reads. */
struct dra_spec {
    const struct ks_device_request_spec *spec;
    uint32_t claim, request, sub;
    bool is_sub;
    const char *name;      /* request.name(): the request's or the subrequest's own name */
    const char *full_name; /* "req" or "req/sub" */
    const char *base_name; /* the request's name */
    uint32_t
        name_key; /* the first request of the claim with the same base name (distinctAttribute's map key) */
    const char *static_error; /* validateDeviceRequest's error that needs no node, or NULL */
    const struct dra_class *cls;
    bool admin;
    bool all; /* allocationMode All */
    int64_t count;
    uint32_t nsel;
    struct dra_selector **sel; /* NULL entries: a selector without CEL (static_error reports it) */
    /* capacity.requests by interned name; has_capacity: capacity set at all */
    bool has_capacity;
    uint32_t ncapreq;
    const struct ks_named_quantity *capreq;
    /* the tolerations the result carries: those of the first request or subrequest by this name */
    uint32_t nres_tol;
    const struct ks_device_toleration *res_tol;
};

struct dra_req {
    const char *pre_error; /* DRAPrioritizedList / DRAConsumableCapacity disabled, or NULL */
    bool has_sub;
    uint32_t first_spec, nspec;
};

enum dra_constraint_kind { DRA_MATCH, DRA_DISTINCT };

struct dra_constraint {
    enum dra_constraint_kind kind;
    uint32_t full, domain,
        id;         /* the attribute: qualified name, its domain and its id, interned (NONE: unknown) */
    bool has_slash; /* the name has a domain (it always should) */
    bool *applies;  /* per spec of the claim (index - claim's first spec): the constraint counts it */
};

struct dra_claim {
    const struct ks_resource_claim *obj;
    const char *kobj; /* klog.KObj: "namespace/name" or "name" */
    uint32_t nreq;
    struct dra_req *reqs;
    uint32_t first_spec, nspec;
    uint32_t ncons;
    struct dra_constraint *cons;
    const char *constraint_error;
};

struct ks_dra_claims {
    const struct ks_dra_catalog *cat;
    uint32_t shape; /* the claim set's shape in cat (verdict.c), 0: none */
    uint32_t nclaims;
    struct dra_claim *claims;
    uint32_t nspecs;
    struct dra_spec *specs;
    uint32_t nprivate;
    struct dra_selector **private_sels; /* selectors the catalog's table had no room for */
    uint32_t cap_private;
    struct dra_bump mem;
};

/* ks__dra_claims_prepare_into - prepare into @p (emptied first; its memory reused). */
int ks__dra_claims_prepare_into(const struct ks_dra_catalog *cat,
                                const struct ks_resource_claim *const *claims, uint32_t nclaims,
                                struct ks_dra_claims *p);
void ks__dra_claims_clear(struct ks_dra_claims *p);

/* ---- constraints (constraint.c) ---------------------------------------------------------------------- */

/* matchAttribute's and distinctAttribute's state during one search. */
struct dra_cstate {
    const struct ks_device_attribute *attr; /* matchAttribute: the set's value */
    uint32_t attr_str;                      /* ... and its value's string id */
    int num;                                /* numDevices */
    /* distinctAttribute: a map from request name (its key) to the value added last */
    uint32_t nkeys;
    bool *present;
    const struct ks_device_attribute **vals;
    uint32_t *val_str;
};

/* lookupAttribute: the attribute @c names on device @d (NULL: absent); *@str: its string id. */
const struct ks_device_attribute *ks__dra_lookup_attribute(const struct dra_constraint *c,
                                                           const struct dra_dev *d, uint32_t driver,
                                                           uint32_t *str);
bool ks__dra_constraint_add(const struct dra_constraint *c, struct dra_cstate *st, const struct dra_spec *sp,
                            uint32_t spec_in_claim, const struct dra_dev *d);
void ks__dra_constraint_remove(const struct dra_constraint *c, struct dra_cstate *st,
                               const struct dra_spec *sp, uint32_t spec_in_claim);

/* ---- scratch --------------------------------------------------------------------------------------------
 */

struct ks_dra_scratch {
    struct dra_bump mem;        /* reset at each call */
    struct ks_cel_scratch *cel; /* created on first evaluation */
    struct dra_gather_tmp gather;
    struct ks_dra_claims claims; /* ks_dra_allocate's own prepared claims */
    uint64_t steps;              /* allocateOne invocations of the last call */
    char msg[1024];              /* a CEL error text while it is formatted */
};

#endif
