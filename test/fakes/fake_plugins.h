/*
 * fake_plugins.h - configurable plugins for the framework tests.
 *
 * KS_FAKE_N plugins named "FakeA", "FakeB", ... implement every extension point. What
 * each op returns is set per plugin through ks_fake(i) (a zeroed behaviour returns
 * Success everywhere), and every op call is appended to a log, so a test checks both the
 * merged status and which plugins ran in which order:
 *
 *     ks_fake(1)->code[KS_FAKE_FILTER] = KS_UNSCHEDULABLE;
 *     ...
 *     cr_assert_str_eq(ks_fake_log(), "A.filter B.filter");
 *
 * The fakes are not in-tree plugins: ks_fake_register() adds them to the registry (with
 * ks_registry_add()) so a configuration can enable them by name; ks_fake_config() builds
 * a v1 KubeSchedulerConfiguration with one profile whose default plugins are disabled and
 * whose points are the caller's YAML.
 *
 * PreFilter stores a per-cycle counter in the plugin's cycle-state slot; AddPod /
 * RemovePod change it and state_clone copies it, so cloning can be checked.
 *
 * Context: test code; the log is guarded by a mutex, so ops may run on several threads.
 */
#ifndef KSCHED_TEST_FAKES_FAKE_PLUGINS_H
#define KSCHED_TEST_FAKES_FAKE_PLUGINS_H

#include <stdbool.h>
#include <stdint.h>

#include "ksched/framework.h"
#include "ksched/internal/config.h"
#include "ksched/plugin_types.h"

#define KS_FAKE_N 6

#define KS_FAKE_POINT_MAP(X)                                                                                 \
    X(LESS, "less")                                                                                          \
    X(PRE_FILTER, "pre_filter")                                                                              \
    X(ADD_POD, "add_pod")                                                                                    \
    X(REMOVE_POD, "remove_pod")                                                                              \
    X(FILTER, "filter")                                                                                      \
    X(POST_FILTER, "post_filter")                                                                            \
    X(PRE_SCORE, "pre_score")                                                                                \
    X(SCORE, "score")                                                                                        \
    X(NORMALIZE, "normalize")                                                                                \
    X(RESERVE, "reserve")                                                                                    \
    X(UNRESERVE, "unreserve")                                                                                \
    X(PERMIT, "permit")                                                                                      \
    X(PRE_BIND, "pre_bind")                                                                                  \
    X(BIND, "bind")                                                                                          \
    X(POST_BIND, "post_bind")                                                                                \
    X(INIT, "init")                                                                                          \
    X(DESTROY, "destroy")

enum ks_fake_point {
#define KS_X(id, text) KS_FAKE_##id,
    KS_FAKE_POINT_MAP(KS_X)
#undef KS_X
        KS_FAKE_POINT_COUNT
};

enum ks_fake_normalize {
    KS_FAKE_NORM_KEEP, /* leave the scores */
    KS_FAKE_NORM_MAX,  /* score * 100 / max, as upstream's DefaultNormalizeScore */
    KS_FAKE_NORM_ADD,  /* add norm_add to every score */
};

struct ks_fake_behavior {
    int code[KS_FAKE_POINT_COUNT]; /* returned by each op (INIT: a negative errno fails init) */
    const char *msg;               /* reason of non-Success codes; NULL: "<Name> <point>" */
    const char *msg2;              /* a second reason, or NULL */
    uint32_t only_node;            /* Filter / Score: code applies to this interned node name only (0: all) */
    /* PreFilter: narrow the nodes to these interned names (sorted by the fake) */
    bool narrow;
    uint32_t nnames;
    uint32_t names[8];
    /* Score: score_fn(node) when set, else score */
    int64_t score;
    int64_t (*score_fn)(const struct ks_node_snap *node);
    enum ks_fake_normalize normalize;
    int64_t norm_add;
    uint32_t nominate;  /* PostFilter: nominated node (interned), 0 for none */
    int64_t timeout_ns; /* Permit: wait timeout when code[PERMIT] is Wait */
};

/* The fakes' ops tables, FakeA first. */
extern const struct ks_plugin ks_fake_plugins[KS_FAKE_N];

/* ks_fake_register - add every fake to the registry (once per process). */
void ks_fake_register(void);

/* ks_fake_reset - every behaviour back to Success, log cleared. */
void ks_fake_reset(void);

/* ks_fake - the behaviour of fake @i (0 = FakeA). */
struct ks_fake_behavior *ks_fake(int i);

/* ks_fake_log - calls so far as "A.filter B.score ..." (valid until the next call). ks_fake_log_clear empties
 * it. */
const char *ks_fake_log(void);
void ks_fake_log_clear(void);

/* ks_fake_state_pods - FakeX's PreFilter counter in @cs (slot @slot), -1 when it has no state. */
int64_t ks_fake_state_pods(const struct ks_cycle_state *cs, uint32_t slot);

/*
 * ks_fake_config - a v1 configuration with one profile "fake-scheduler" whose default
 * plugins are disabled; @plugins_yaml is the body of `plugins:`, each point indented by
 * 4 spaces (see KS_FAKE_POINT*). Queue sort and bind default to FakeA when the YAML does
 * not set them. Aborts the test on failure.
 */
struct ks_config *ks_fake_config(const char *plugins_yaml);

/* ks_fake_framework - ks_fake_config() + ks_framework_create() of its profile; aborts on failure. */
struct ks_framework *ks_fake_framework(const char *plugins_yaml, struct ks_config **cfg);

/* KS_FAKE_POINT("filter", "FakeA", "FakeB") - the YAML of one point enabling the plugins in order. */
#define KS_FAKE_POINT1(point, a) "    " point ":\n      enabled:\n      - name: " a "\n"
#define KS_FAKE_POINT2(point, a, b)                                                                          \
    "    " point ":\n      enabled:\n      - name: " a "\n      - name: " b "\n"
#define KS_FAKE_POINT3(point, a, b, c)                                                                       \
    "    " point ":\n      enabled:\n      - name: " a "\n      - name: " b "\n      - name: " c "\n"

#endif
