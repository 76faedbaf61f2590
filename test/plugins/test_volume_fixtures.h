/*
 * test_volume_fixtures.h - what the storage plugin tests share: a cluster loaded from YAML
 * (the loader, as `ksched schedule` loads it), a cache holding its nodes and bound pods, a
 * framework whose deps carry the cache and the objects, and small runners that call a
 * plugin's ops the way the framework does and render statuses as text.
 *
 * Used by test_volume_restrictions.c, test_volume_zone.c, test_volume_binding.c,
 * test_volume_binding_api.c, test_volume_limits.c and test_node_volume_limits.c.
 *
 * Context: test code, one thread, registered with RCU by vfx_setup(). A fixture holds the
 * RCU read lock from vfx_node() until vfx_close() (or vfx_unlock()), as a scheduling cycle does.
 */
#ifndef KSCHED_TEST_VOLUME_FIXTURES_H
#define KSCHED_TEST_VOLUME_FIXTURES_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/rcu.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/loader.h"

static inline void vfx_setup(void)
{
    cr_assert(eq(int, ks_api_init(), 0));
    ks_rcu_register_thread();
}

static inline void vfx_teardown(void)
{
    ks_rcu_unregister_thread();
}

struct vfx {
    struct ks_objects *objs;
    struct ks_cache *cache;
    struct ks_config *cfg;
    struct ks_framework *fw;
    bool locked;
};

/* A common YAML prefix: a Node document with @name and @labels (flow map body, may be ""). */
#define VFX_NODE(name, labels)                                                                               \
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {" labels "}}\n"                    \
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"

/*
 * vfx_open - load @yaml (multi-document), hand its nodes and bound pods to a new cache as
 * `ksched schedule` does, and build a default framework whose deps carry both.
 */
/* vfx_load - the objects of @yaml, loaded from a file as ksched schedule loads them. */
static inline struct ks_objects *vfx_load(const char *yaml)
{
    char path[] = "/tmp/ksched-vfx-XXXXXX";
    struct ks_error err = {0};
    struct ks_objects *objs;
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    size_t len = strlen(yaml);
    cr_assert(eq(sz, (size_t)write(fd, yaml, len), len));
    close(fd);
    const char *paths[] = {path};
    int rc = ks_objects_load(paths, 1, &objs, &err);
    unlink(path);
    cr_assert(eq(int, rc, 0), "load: %s:%d: %s", err.file, err.line, err.msg);
    return objs;
}

static inline void vfx_open(struct vfx *x, const char *yaml)
{
    struct ks_error err = {0};
    memset(x, 0, sizeof(*x));
    x->objs = vfx_load(yaml);
    cr_assert(eq(int, ks_cache_create(&x->cache), 0));
    cr_assert(eq(int, ks_config_load_default(&x->cfg), 0));
    struct ks_framework_deps deps = {.cache = x->cache, .objects = x->objs};
    cr_assert(eq(int, ks_framework_create(&x->cfg->profiles[0], &deps, &x->fw, &err), 0), "%s", err.msg);
    struct ks_node **nodes = ks_objects_nodes(x->objs);
    for (uint32_t i = 0; i < ks_objects_count(x->objs, NODE); i++)
        cr_assert(eq(int, ks_cache_add_node(x->cache, nodes[i]), 0));
    x->objs->of[KS_KIND_NODE].n = 0; /* the cache owns them now */
    struct ks_pod **pods = ks_objects_pods(x->objs);
    for (uint32_t i = 0; i < ks_objects_count(x->objs, POD); i++) {
        if (pods[i]->node_name != KS_ID_EMPTY)
            cr_assert(eq(int, ks_cache_add_pod(x->cache, ks_pod_get(pods[i]), pods[i]->node_name), 0));
    }
    cr_assert(ge(int, ks_cache_refresh(x->cache), 0));
}

static inline void vfx_unlock(struct vfx *x)
{
    if (x->locked)
        ks_rcu_read_unlock();
    x->locked = false;
}

static inline void vfx_close(struct vfx *x)
{
    vfx_unlock(x);
    ks_framework_destroy(x->fw);
    ks_cache_destroy(x->cache);
    ks_objects_destroy(x->objs);
    ks_config_destroy(x->cfg);
    memset(x, 0, sizeof(*x));
}

/* vfx_plugin - an instance of @p in slot 0, initialised with the fixture's framework. */
static inline void *vfx_plugin(struct vfx *x, const struct ks_plugin *p)
{
    struct ks_plugin_init in = {.args = NULL, .slot = 0, .framework = x->fw};
    struct ks_error err = {0};
    void *self = NULL;
    cr_assert(eq(int, p->init(&in, &self, &err), 0), "init %s: %s", p->name, err.msg);
    return self;
}

/* vfx_node - the snapshot record of node @name (enters the RCU read section once). */
static inline const struct ks_node_snap *vfx_node(struct vfx *x, const char *name)
{
    if (!x->locked)
        ks_rcu_read_lock();
    x->locked = true;
    const struct ks_node_snap *n = ks_snapshot_find(ks_cache_snapshot(x->cache), ks_intern(name));
    cr_assert(n != NULL, "no node %s", name);
    return n;
}

/* vfx_pod - the loaded pod @ns/@name. */
static inline struct ks_pod *vfx_pod(struct vfx *x, const char *ns, const char *name)
{
    struct ks_pod **pods = ks_objects_pods(x->objs);
    for (uint32_t i = 0; i < ks_objects_count(x->objs, POD); i++) {
        if (pods[i]->meta.namespace_id == ks_intern(ns) && strcmp(pods[i]->meta.name, name) == 0)
            return pods[i];
    }
    cr_assert(false, "no pod %s/%s", ns, name);
    return NULL;
}

/*
 * vfx_volume - append a volume to @pod (built with ks_fake_pod): @kind with @source (claim,
 * pdName, volumeID, image or iqn) and @read_only. Returns it for further fields.
 */
static inline struct ks_volume *vfx_volume(struct ks_pod *pod, enum ks_volume_kind kind, const char *name,
                                           const char *source, bool read_only)
{
    struct ks_volume *v = ks_arena_calloc(&pod->arena, pod->nvolumes + 1, sizeof(*v));
    cr_assert(v != NULL);
    if (pod->nvolumes)
        memcpy(v, pod->volumes, pod->nvolumes * sizeof(*v));
    pod->volumes = v;
    v = &pod->volumes[pod->nvolumes++];
    v->name = ks_arena_strdup(&pod->arena, name);
    v->kind = kind;
    v->read_only = read_only;
    if (kind == KS_VOLUME_EPHEMERAL) {
        char claim[256];
        snprintf(claim, sizeof(claim), "%s-%s", pod->meta.name, name);
        v->source = ks_arena_strdup(&pod->arena, claim);
    } else {
        v->source = source ? ks_arena_strdup(&pod->arena, source) : NULL;
    }
    if (kind == KS_VOLUME_RBD)
        v->pool = "rbd";
    return v;
}

/* vfx_status - "Success", or "<Code>: <reason>; <reason>" of a non-Success status. */
static inline const char *vfx_status(int code, const struct ks_status *st, char *buf, size_t len)
{
    if (code == KS_SUCCESS)
        return "Success";
    size_t off = (size_t)snprintf(buf, len, "%s", ks_code_name((enum ks_code)code));
    for (uint32_t i = 0; i < st->nreasons && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "; " : ": ", ks_intern_str(st->reasons[i]));
    return buf;
}

#define VFX_MSG 1024

/* vfx_pre_filter - run @p's PreFilter; the status as text (PreFilter's Skip is "Skip"). */
static inline const char *vfx_pre_filter(const struct ks_plugin *p, void *self, struct ks_cycle_state *cs,
                                         const struct ks_pod *pod, struct ks_pre_filter_result *res,
                                         char *buf)
{
    struct ks_status st = {0};
    *res = (struct ks_pre_filter_result){.all = true};
    int code = p->pre_filter(self, cs, pod, res, &st);
    return vfx_status(code, &st, buf, VFX_MSG);
}

/* vfx_filter - run @p's Filter on @node; the status as text. */
static inline const char *vfx_filter(const struct ks_plugin *p, void *self, const struct ks_cycle_state *cs,
                                     const struct ks_pod *pod, const struct ks_node_snap *node, char *buf)
{
    struct ks_status st = {0};
    int code = p->filter(self, cs, pod, node, &st);
    return vfx_status(code, &st, buf, VFX_MSG);
}

/*
 * vfx_cycle_to_reserve - one scheduling cycle of @pod through @p's PreFilter and its Filter on
 * @node (both must succeed), then, out of the read section as the framework runs it, Reserve:
 * Reserve's code.
 */
static inline int vfx_cycle_to_reserve(const struct ks_plugin *p, void *self, struct vfx *x,
                                       const struct ks_pod *pod, const char *node, struct ks_cycle_state *cs)
{
    char buf[VFX_MSG];
    struct ks_pre_filter_result res;
    struct ks_status st = {0};
    cr_assert(eq(str, (char *)vfx_pre_filter(p, self, cs, pod, &res, buf), "Success"));
    cr_assert(eq(str, (char *)vfx_filter(p, self, cs, pod, vfx_node(x, node), buf), "Success"));
    vfx_unlock(x);
    return p->reserve(self, cs, pod, ks_intern(node), &st);
}

#endif
