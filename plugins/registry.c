/*
 * registry.c - the plugin registry (see include/ksched/registry.h).
 *
 * Mirrors pkg/scheduler/framework/plugins/registry.go (NewInTreeRegistry) merged with the
 * out-of-tree registry that kube-scheduler's app.WithPlugin() adds: an explicit,
 * NULL-terminated table of every in-tree plugin, built from KS_INTREE_PLUGIN_MAP, followed
 * by the plugins added at run time (loaded shared objects, test fakes, embedders). Lookups
 * by name happen at configuration load only; the scheduling cycle dispatches through
 * resolved pointers. A plugin's extension points come from its ops (points_of_ops()).
 *
 * Added plugins live in a fixed array published through an atomic count: a writer fills
 * the next entry under add_lock and then stores the count with release order; readers
 * load the count with acquire order and read only entries below it, without a lock.
 */
#include "ksched/registry.h"
#include "ksched/base/lock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

const struct ks_plugin *const ks_registry[] = {
#define KS_X(suffix) &ks_plugin_##suffix,
    KS_INTREE_PLUGIN_MAP(KS_X)
#undef KS_X
        NULL,
};

#define NINTREE (sizeof(ks_registry) / sizeof(ks_registry[0]) - 1)

static struct ks_mutex add_lock = KS_MUTEX_INITIALIZER(KS_LOCK_PLUGIN_REGISTRY);
static const struct ks_plugin *added[KS_REGISTRY_MAX_ADDED];
static _Atomic uint32_t nadded;

static const struct ks_plugin *find_intree(const char *name)
{
    for (const struct ks_plugin *const *p = ks_registry; *p; p++) {
        if (strcmp((*p)->name, name) == 0)
            return *p;
    }
    return NULL;
}

static const struct ks_plugin *find_added(const char *name, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(added[i]->name, name) == 0)
            return added[i];
    }
    return NULL;
}

const struct ks_plugin *ks_registry_find(const char *name)
{
    const struct ks_plugin *p = find_intree(name);

    if (p)
        return p;
    /* acquire: pairs with the release in ks_registry_add(), so added[i < n] is complete */
    return find_added(name, atomic_load_explicit(&nadded, memory_order_acquire));
}

static unsigned points_of_ops(const struct ks_plugin *p)
{
    unsigned m = 0;

    if (p->pre_enqueue)
        m |= KS_EXT_BIT(PRE_ENQUEUE);
    if (p->less)
        m |= KS_EXT_BIT(QUEUE_SORT);
    if (p->pre_filter)
        m |= KS_EXT_BIT(PRE_FILTER);
    if (p->filter)
        m |= KS_EXT_BIT(FILTER);
    if (p->post_filter)
        m |= KS_EXT_BIT(POST_FILTER);
    if (p->pre_score)
        m |= KS_EXT_BIT(PRE_SCORE);
    if (p->score)
        m |= KS_EXT_BIT(SCORE);
    if (p->reserve || p->unreserve)
        m |= KS_EXT_BIT(RESERVE);
    if (p->permit)
        m |= KS_EXT_BIT(PERMIT);
    if (p->pre_bind)
        m |= KS_EXT_BIT(PRE_BIND);
    if (p->bind)
        m |= KS_EXT_BIT(BIND);
    if (p->post_bind)
        m |= KS_EXT_BIT(POST_BIND);
    return m;
}

unsigned ks_registry_points(const struct ks_plugin *plugin)
{
    return plugin ? points_of_ops(plugin) : 0;
}

/* The checks of the table itself: present, an ABI version this build reads, a name. */
static int check_table(const struct ks_plugin *plugin, struct ks_error *err)
{
    if (!plugin)
        return ks_error_set(err, NULL, 0, NULL, "no plugin");
    if (plugin->abi_version < 1 || plugin->abi_version > KS_PLUGIN_ABI_VERSION)
        return ks_error_set(
            err, NULL, 0, NULL,
            "plugin \"%s\" was built for plugin ABI version %u, this ksched reads versions 1 to %u",
            plugin->name ? plugin->name : "", plugin->abi_version, KS_PLUGIN_ABI_VERSION);
    if (!plugin->name || !plugin->name[0])
        return ks_error_set(err, NULL, 0, NULL, "plugin has no name");
    return 0;
}

int ks_registry_check(const struct ks_plugin *plugin, struct ks_error *err)
{
    int rc = check_table(plugin, err);
    if (rc == 0 && ks_registry_find(plugin->name))
        rc = ks_error_set(err, NULL, 0, NULL, "a plugin named %s already exists", plugin->name);
    return rc;
}

int ks_registry_add(const struct ks_plugin *plugin, struct ks_error *err)
{
    int rc = check_table(plugin, err);

    if (rc < 0)
        return rc;
    ks_mutex_lock(&add_lock);
    uint32_t n = atomic_load_explicit(&nadded, memory_order_relaxed);
    if (find_intree(plugin->name) || find_added(plugin->name, n)) {
        rc = ks_error_set(err, NULL, 0, NULL, "a plugin named %s already exists", plugin->name);
    } else if (n == KS_REGISTRY_MAX_ADDED) {
        rc = ks_error_set(err, NULL, 0, NULL, "cannot add plugin %s: %d plugins were added already",
                          plugin->name, KS_REGISTRY_MAX_ADDED);
    } else {
        added[n] = plugin;
        /* release: the entry is written before readers can count it */
        atomic_store_explicit(&nadded, n + 1, memory_order_release);
    }
    ks_mutex_unlock(&add_lock);
    return rc;
}

uint32_t ks_registry_count(void)
{
    return (uint32_t)NINTREE + atomic_load_explicit(&nadded, memory_order_acquire);
}
