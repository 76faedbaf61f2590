/*
 * fake_plugins.c - configurable plugins for the framework tests (see fake_plugins.h).
 *
 * Every fake shares one set of ops; the instance (made by the per-fake init below)
 * carries the fake's index and slot, and each op reads its behaviour from a global table
 * that the test sets. Calls are logged under a mutex.
 */
#include "fake_plugins.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/base/intern.h"
#include "ksched/registry.h"

static const char *const point_names[] = {
#define KS_X(id, text) [KS_FAKE_##id] = text,
    KS_FAKE_POINT_MAP(KS_X)
#undef KS_X
};

struct fake_self {
    int index;
    uint16_t slot;
};

/* The PreFilter state one fake keeps in its cycle-state slot. */
struct fake_state {
    int64_t pods;
};

static struct ks_fake_behavior behavior[KS_FAKE_N];

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_buf[16384];
static size_t log_len;
static char log_copy[sizeof(log_buf)];

static void log_call(int index, enum ks_fake_point p)
{
    pthread_mutex_lock(&log_lock);
    int n = snprintf(log_buf + log_len, sizeof(log_buf) - log_len, "%s%c.%s", log_len ? " " : "", 'A' + index,
                     point_names[p]);
    if (n > 0 && log_len + (size_t)n < sizeof(log_buf))
        log_len += (size_t)n;
    pthread_mutex_unlock(&log_lock);
}

const char *ks_fake_log(void)
{
    pthread_mutex_lock(&log_lock);
    memcpy(log_copy, log_buf, log_len);
    log_copy[log_len] = '\0';
    pthread_mutex_unlock(&log_lock);
    return log_copy;
}

void ks_fake_log_clear(void)
{
    pthread_mutex_lock(&log_lock);
    log_len = 0;
    log_buf[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

void ks_fake_reset(void)
{
    memset(behavior, 0, sizeof(behavior));
    ks_fake_log_clear();
}

struct ks_fake_behavior *ks_fake(int i)
{
    cr_assert(i >= 0 && i < KS_FAKE_N, "no fake %d", i);
    return &behavior[i];
}

/* The configured code for @p; Filter and Score honour only_node. */
static int result(const struct fake_self *f, enum ks_fake_point p, const struct ks_node_snap *node,
                  struct ks_status *st)
{
    const struct ks_fake_behavior *b = &behavior[f->index];
    int code = b->code[p];

    log_call(f->index, p);
    if (node && b->only_node && node->name != b->only_node)
        return KS_SUCCESS;
    if (code != KS_SUCCESS && st) {
        if (b->msg)
            ks_status_set(st, (enum ks_code)code, "%s", b->msg);
        else
            ks_status_set(st, (enum ks_code)code, "%s %s", ks_fake_plugins[f->index].name, point_names[p]);
        if (b->msg2 && st->nreasons < KS_STATUS_MAX_REASONS)
            st->reasons[st->nreasons++] = ks_intern(b->msg2);
    }
    return code;
}

static int fake_init(int index, const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    log_call(index, KS_FAKE_INIT);
    if (behavior[index].code[KS_FAKE_INIT] < 0)
        return ks_error_set(err, NULL, 0, NULL, "fake %c refuses to start", 'A' + index);
    struct fake_self *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    f->index = index;
    f->slot = in->slot;
    *self = f;
    return 0;
}

static void fake_destroy(void *self)
{
    struct fake_self *f = self;
    if (!f)
        return;
    log_call(f->index, KS_FAKE_DESTROY);
    free(f);
}

static bool fake_less(void *self, const struct ks_queued_pod *a, const struct ks_queued_pod *b)
{
    log_call(((struct fake_self *)self)->index, KS_FAKE_LESS);
    return a->timestamp_ns < b->timestamp_ns;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int fake_pre_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                           struct ks_pre_filter_result *res, struct ks_status *st)
{
    struct fake_self *f = self;
    const struct ks_fake_behavior *b = &behavior[f->index];
    struct fake_state *s = ks_arena_alloc(&cs->arena, sizeof(*s));

    (void)pod;
    if (!s)
        return ks_status_set(st, KS_ERROR, "out of memory");
    cs->slot[f->slot] = s;
    if (b->narrow) {
        uint32_t *names = ks_arena_calloc(&cs->arena, b->nnames ? b->nnames : 1, sizeof(*names));
        if (!names)
            return ks_status_set(st, KS_ERROR, "out of memory");
        memcpy(names, b->names, b->nnames * sizeof(*names));
        qsort(names, b->nnames, sizeof(*names), cmp_u32);
        res->all = false;
        res->n = b->nnames;
        res->names = names;
    }
    return result(f, KS_FAKE_PRE_FILTER, NULL, st);
}

static int fake_pod_ext(struct fake_self *f, struct ks_cycle_state *cs, enum ks_fake_point p, int64_t delta,
                        struct ks_status *st)
{
    struct fake_state *s = cs->slot[f->slot];
    if (s)
        s->pods += delta;
    return result(f, p, NULL, st);
}

static int fake_add_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                        const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    (void)pod, (void)other, (void)node;
    return fake_pod_ext(self, cs, KS_FAKE_ADD_POD, 1, st);
}

static int fake_remove_pod(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                           const struct ks_pod *other, const struct ks_node_snap *node, struct ks_status *st)
{
    (void)pod, (void)other, (void)node;
    return fake_pod_ext(self, cs, KS_FAKE_REMOVE_POD, -1, st);
}

static int fake_state_clone(void *self, const void *src, struct ks_arena *arena, void **dst)
{
    struct fake_state *copy = ks_arena_alloc(arena, sizeof(*copy));
    (void)self;
    if (!copy)
        return -ENOMEM;
    *copy = *(const struct fake_state *)src;
    *dst = copy;
    return 0;
}

int64_t ks_fake_state_pods(const struct ks_cycle_state *cs, uint32_t slot)
{
    const struct fake_state *s = cs->slot[slot];
    return s ? s->pods : -1;
}

static int fake_filter(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                       const struct ks_node_snap *node, struct ks_status *st)
{
    (void)cs, (void)pod;
    return result(self, KS_FAKE_FILTER, node, st);
}

static int fake_post_filter(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                            const struct ks_diagnosis *diag, struct ks_post_filter_result *res,
                            struct ks_status *st)
{
    struct fake_self *f = self;
    (void)cs, (void)pod, (void)diag;
    res->nominated_node = behavior[f->index].nominate;
    return result(f, KS_FAKE_POST_FILTER, NULL, st);
}

static int fake_pre_score(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_node_snap *const *nodes, uint32_t n, struct ks_status *st)
{
    (void)cs, (void)pod, (void)nodes, (void)n;
    return result(self, KS_FAKE_PRE_SCORE, NULL, st);
}

static int fake_score(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                      const struct ks_node_snap *node, int64_t *score, struct ks_status *st)
{
    struct fake_self *f = self;
    const struct ks_fake_behavior *b = &behavior[f->index];
    (void)cs, (void)pod;
    *score = b->score_fn ? b->score_fn(node) : b->score;
    return result(f, KS_FAKE_SCORE, node, st);
}

static int fake_normalize(void *self, const struct ks_cycle_state *cs, const struct ks_pod *pod,
                          const struct ks_node_snap *const *nodes, int64_t *scores, uint32_t n,
                          struct ks_status *st)
{
    struct fake_self *f = self;
    const struct ks_fake_behavior *b = &behavior[f->index];
    int64_t max = 0;
    (void)cs, (void)pod, (void)nodes;

    switch (b->normalize) {
    case KS_FAKE_NORM_MAX:
        for (uint32_t i = 0; i < n; i++)
            max = scores[i] > max ? scores[i] : max;
        for (uint32_t i = 0; i < n; i++)
            scores[i] = max ? scores[i] * KS_MAX_NODE_SCORE / max : 0;
        break;
    case KS_FAKE_NORM_ADD:
        for (uint32_t i = 0; i < n; i++)
            scores[i] += b->norm_add;
        break;
    case KS_FAKE_NORM_KEEP:
        break;
    }
    return result(f, KS_FAKE_NORMALIZE, NULL, st);
}

static int fake_reserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                        struct ks_status *st)
{
    (void)cs, (void)pod, (void)node;
    return result(self, KS_FAKE_RESERVE, NULL, st);
}

static void fake_unreserve(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node)
{
    (void)cs, (void)pod, (void)node;
    result(self, KS_FAKE_UNRESERVE, NULL, NULL);
}

static int fake_permit(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                       int64_t *timeout_ns, struct ks_status *st)
{
    struct fake_self *f = self;
    (void)cs, (void)pod, (void)node;
    *timeout_ns = behavior[f->index].timeout_ns;
    return result(f, KS_FAKE_PERMIT, NULL, st);
}

static int fake_pre_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                         struct ks_status *st)
{
    (void)cs, (void)pod, (void)node;
    return result(self, KS_FAKE_PRE_BIND, NULL, st);
}

static int fake_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                     struct ks_status *st)
{
    (void)cs, (void)pod, (void)node;
    return result(self, KS_FAKE_BIND, NULL, st);
}

static void fake_post_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node)
{
    (void)cs, (void)pod, (void)node;
    result(self, KS_FAKE_POST_BIND, NULL, NULL);
}

#define FAKE_INIT(i)                                                                                         \
    static int fake_init_##i(const struct ks_plugin_init *in, void **self, struct ks_error *err)             \
    {                                                                                                        \
        return fake_init(i, in, self, err);                                                                  \
    }
FAKE_INIT(0)
FAKE_INIT(1)
FAKE_INIT(2)
FAKE_INIT(3)
FAKE_INIT(4)
FAKE_INIT(5)
#undef FAKE_INIT

#define FAKE_TABLE(i, nm)                                                                                    \
    {                                                                                                        \
        .abi_version = KS_PLUGIN_ABI_VERSION, .name = nm, .init = fake_init_##i, .destroy = fake_destroy,    \
        .less = fake_less, .pre_filter = fake_pre_filter, .add_pod = fake_add_pod,                           \
        .remove_pod = fake_remove_pod, .filter = fake_filter, .post_filter = fake_post_filter,               \
        .pre_score = fake_pre_score, .score = fake_score, .normalize_score = fake_normalize,                 \
        .reserve = fake_reserve, .unreserve = fake_unreserve, .permit = fake_permit,                         \
        .pre_bind = fake_pre_bind, .bind = fake_bind, .post_bind = fake_post_bind,                           \
        .state_clone = fake_state_clone,                                                                     \
    }

const struct ks_plugin ks_fake_plugins[KS_FAKE_N] = {
    FAKE_TABLE(0, "FakeA"), FAKE_TABLE(1, "FakeB"), FAKE_TABLE(2, "FakeC"),
    FAKE_TABLE(3, "FakeD"), FAKE_TABLE(4, "FakeE"), FAKE_TABLE(5, "FakeF"),
};

void ks_fake_register(void)
{
    for (int i = 0; i < KS_FAKE_N; i++) {
        if (ks_registry_find(ks_fake_plugins[i].name) == &ks_fake_plugins[i])
            continue;
        struct ks_error err = {0};
        int rc = ks_registry_add(&ks_fake_plugins[i], &err);
        cr_assert_eq(rc, 0, "registering %s: %s", ks_fake_plugins[i].name, err.msg);
    }
}

struct ks_config *ks_fake_config(const char *plugins_yaml)
{
    static const char head[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "profiles:\n"
                               "- schedulerName: fake-scheduler\n"
                               "  plugins:\n"
                               "    multiPoint:\n"
                               "      disabled:\n"
                               "      - name: \"*\"\n";
    char yaml[8192];
    struct ks_config *cfg = NULL;
    struct ks_error err = {0};
    char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 16];

    ks_fake_register();
    snprintf(yaml, sizeof(yaml), "%s%s%s%s", head,
             strstr(plugins_yaml, "    queueSort:") ? "" : KS_FAKE_POINT1("queueSort", "FakeA"),
             strstr(plugins_yaml, "    bind:") ? "" : KS_FAKE_POINT1("bind", "FakeA"), plugins_yaml);
    int rc = ks_config_load_yaml("fake.yaml", yaml, strlen(yaml), &cfg, &err);
    ks_error_format(&err, msg, sizeof(msg));
    cr_assert_eq(rc, 0, "loading the fake configuration failed: %s\n--- input ---\n%s", msg, yaml);
    return cfg;
}

struct ks_framework *ks_fake_framework(const char *plugins_yaml, struct ks_config **cfg)
{
    struct ks_framework *fw = NULL;
    struct ks_error err = {0};

    *cfg = ks_fake_config(plugins_yaml);
    int rc = ks_framework_create(&(*cfg)->profiles[0], NULL, &fw, &err);
    cr_assert_eq(rc, 0, "ks_framework_create: %d %s", rc, err.msg);
    return fw;
}
