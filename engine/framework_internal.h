/*
 * framework_internal.h - the layout of struct ks_framework, shared by the files of the
 * framework runtime: framework.c (building and introspection), framework_run.c (the Run
 * functions), framework_permit.c (Permit and the waiting-pods map), cycle_state.c and
 * status.c.
 *
 * A framework keeps, per extension point, one array of calls: the plugin instance, the
 * op at that point, the plugin's slot (its cycle-state index) and its score weight.
 * Arrays are built once by ks_framework_create() in configuration order and never change,
 * so worker threads read them without synchronisation.
 *
 * Context: internal to engine/framework*.c, engine/cycle_state.c and engine/status.c.
 */
#ifndef KSCHED_ENGINE_FRAMEWORK_INTERNAL_H
#define KSCHED_ENGINE_FRAMEWORK_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "ksched/base/lock.h"
#include "ksched/framework.h"

/* The ops of struct ks_plugin, by type, so a call entry holds the op it runs. */
union ks_fw_op {
    bool (*less)(void *, const struct ks_queued_pod *, const struct ks_queued_pod *);
    int (*pre_filter)(void *, struct ks_cycle_state *, const struct ks_pod *, struct ks_pre_filter_result *,
                      struct ks_status *);
    int (*pod_ext)(void *, struct ks_cycle_state *, const struct ks_pod *, const struct ks_pod *,
                   const struct ks_node_snap *, struct ks_status *);
    int (*filter)(void *, const struct ks_cycle_state *, const struct ks_pod *, const struct ks_node_snap *,
                  struct ks_status *);
    int (*post_filter)(void *, struct ks_cycle_state *, const struct ks_pod *, const struct ks_diagnosis *,
                       struct ks_post_filter_result *, struct ks_status *);
    int (*pg_post_filter)(void *, struct ks_pod_group_preemptor *, struct ks_status *);
    int (*pre_score)(void *, struct ks_cycle_state *, const struct ks_pod *,
                     const struct ks_node_snap *const *, uint32_t, struct ks_status *);
    int (*score)(void *, const struct ks_cycle_state *, const struct ks_pod *, const struct ks_node_snap *,
                 int64_t *, struct ks_status *);
    int (*normalize)(void *, const struct ks_cycle_state *, const struct ks_pod *,
                     const struct ks_node_snap *const *, int64_t *, uint32_t, struct ks_status *);
    int (*node_op)(void *, struct ks_cycle_state *, const struct ks_pod *, uint32_t, struct ks_status *);
    void (*node_void)(void *, struct ks_cycle_state *, const struct ks_pod *, uint32_t);
    int (*permit)(void *, struct ks_cycle_state *, const struct ks_pod *, uint32_t, int64_t *,
                  struct ks_status *);
};

/* One plugin at one extension point. */
struct ks_fw_call {
    void *self;        /* the plugin's instance */
    union ks_fw_op op; /* its op at this point (NULL only in the NormalizeScore list) */
    uint64_t bit;      /* 1 << slot, to test the cycle's skip masks */
    uint16_t slot;     /* index in the framework's plugin table */
    int32_t weight;    /* score weight (score lists), else 0 */
    const struct ks_plugin *plugin;
};

/*
 * The call lists. Filter and Score come first: they are what the workers read per node.
 * Unreserve and the PreFilterExtensions get their own lists because a plugin may
 * implement only one op of a pair.
 */
enum ks_fw_list {
    KS_FWL_FILTER,
    KS_FWL_SCORE,
    KS_FWL_PRE_FILTER,
    KS_FWL_ADD_POD,
    KS_FWL_REMOVE_POD,
    KS_FWL_POST_FILTER,
    KS_FWL_PRE_SCORE,
    KS_FWL_NORMALIZE, /* parallel to KS_FWL_SCORE: op NULL where the plugin has no NormalizeScore */
    KS_FWL_RESERVE,
    KS_FWL_UNRESERVE,
    KS_FWL_PERMIT,
    KS_FWL_PRE_BIND,
    KS_FWL_BIND,
    KS_FWL_POST_BIND,
    KS_FWL_POD_GROUP_POST_FILTER, /* the PostFilter plugins that have a PodGroupPostFilter */
    KS_FWL_COUNT
};

struct ks_fw_calls {
    uint32_t n;
    struct ks_fw_call *v;
};

/* One plugin of the profile and its instance. */
struct ks_fw_plugin {
    const struct ks_plugin *plugin;
    void *self;
};

struct ks_waiting_pod; /* framework_permit.c */
struct ks_fw_metrics;  /* framework_metrics.h */

struct ks_framework {
    struct ks_fw_calls list[KS_FWL_COUNT];
    struct ks_fw_call queue_sort; /* op.less NULL when the profile's queue sort has no Less op */

    const struct ks_profile *prof;
    struct ks_framework_deps deps;
    uint32_t nplugins;
    struct ks_fw_plugin plugins[KS_MAX_PROFILE_PLUGINS];
    struct ks_fw_call *calls; /* one allocation behind every list */
    uint64_t signed_slots;    /* plugins at PreFilter, Filter, PreScore or Score: ks_fw_sign asks each */

    /* The series the Run functions record into (framework_metrics.h); NULL: none. */
    struct ks_fw_metrics *metrics;

    /* NormalizeScore scratch column (scheduling thread). */
    int64_t *norm_buf;
    uint32_t norm_cap;

    /* Pods waiting on Permit: a list guarded by wait_lock (framework_permit.c). */
    struct ks_mutex wait_lock;
    struct ks_waiting_pod *waiting;
    uint32_t nwaiting;
};

/* ks__fw_permit_init / _fini - set up and tear down the waiting-pods map. */
int ks__fw_permit_init(struct ks_framework *fw);
void ks__fw_permit_fini(struct ks_framework *fw);

/*
 * ks__status_wrap - turn @st into an Error status (or @code) whose one reason is @fmt
 * followed by the message @st held (its reasons joined by ", "), as upstream wraps
 * errors with fmt.Errorf("...: %w", status.AsError()). Sets st->plugin to @slot.
 * Interns: not for the per-node success path. Returns @code.
 */
int ks__status_wrap(struct ks_status *st, enum ks_code code, uint16_t slot, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ks__status_message - @st's reasons joined by ", " into @buf (upstream's Status.Message()). */
void ks__status_message(const struct ks_status *st, char *buf, size_t len);

/* ks__status_clear - Success, no reasons, no plugin. */
static inline void ks__status_clear(struct ks_status *st)
{
    st->code = KS_SUCCESS;
    st->plugin = KS_NO_PLUGIN;
    st->nreasons = 0;
}

/* Longest message the framework composes (wrapped errors, Permit timeouts). */
#define KS_FW_MSG_MAX 1024

#endif
