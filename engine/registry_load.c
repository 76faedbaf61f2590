/*
 * registry_load.c - out-of-tree plugins loaded from shared objects.
 *
 * kube-scheduler takes out-of-tree plugins at build time (app.WithPlugin adds factories
 * to the registry before the configuration is read); ksched takes them at start-up from
 * shared objects. A plugin's shared object exports
 *
 *     const struct ks_plugin *ks_plugin_entry(void);
 *
 * returning its ops table. ks_registry_load() opens the object (RTLD_NOW, so a missing
 * symbol fails here and not in the middle of a cycle; RTLD_LOCAL, so plugins do not see
 * each other's symbols), checks the table through ks_registry_add() (ABI version, a
 * name, no clash with an in-tree or already loaded plugin) and keeps the object open for
 * the life of the process. A shared object calls ksched's own functions (ks_intern(),
 * ks_labels_get(), ...) through the executable's dynamic symbol table, so executables
 * that load plugins link with --export-dynamic (CMake: ENABLE_EXPORTS).
 *
 * Errors name the file in err->file.
 *
 * Context: start-up, one thread, before any configuration is loaded.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/framework.h"
#include "ksched/registry.h"

#define KS_PLUGIN_ENTRY "ks_plugin_entry"

typedef const struct ks_plugin *(*ks_plugin_entry_fn)(void);

/* Handles of loaded objects: never closed, kept reachable. */
static void *handles[KS_REGISTRY_MAX_ADDED];
static uint32_t nhandles;

int ks_registry_load(const char *path, struct ks_error *err)
{
    struct ks_error perr = {0};
    const char *why;
    void *h;

    dlerror();
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        why = dlerror();
        return ks_error_set(err, path, 0, NULL, "cannot load plugin: %s", why ? why : "dlopen failed");
    }
    if (nhandles == KS_REGISTRY_MAX_ADDED) {
        dlclose(h);
        return ks_error_set(err, path, 0, NULL, "cannot load plugin: %d plugins were added already",
                            KS_REGISTRY_MAX_ADDED);
    }
    dlerror();
    void *sym = dlsym(h, KS_PLUGIN_ENTRY);
    why = dlerror();
    if (!sym || why) {
        ks_error_set(err, path, 0, NULL, "not a ksched plugin: no %s symbol (%s)", KS_PLUGIN_ENTRY,
                     why ? why : "NULL symbol");
        dlclose(h);
        return -EINVAL;
    }
    /* object-to-function pointer conversion, as POSIX requires dlsym() to allow */
    ks_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof(entry));
    const struct ks_plugin *plugin = entry();
    if (!plugin) {
        ks_error_set(err, path, 0, NULL, "not a ksched plugin: %s() returned no plugin", KS_PLUGIN_ENTRY);
        dlclose(h);
        return -EINVAL;
    }
    if (ks_registry_add(plugin, &perr) < 0) {
        ks_error_set(err, path, 0, NULL, "%s", perr.msg);
        dlclose(h);
        return -EINVAL;
    }
    handles[nhandles++] = h;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_shared_object(const char *name)
{
    size_t len = strlen(name);
    return name[0] != '.' && len > 3 && strcmp(name + len - 3, ".so") == 0;
}

int ks_registry_load_dir(const char *dir, struct ks_error *err)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!d) {
        rc = -errno;
        ks_error_set(err, dir, 0, NULL, "cannot open plugin directory: %s", strerror(-rc));
        return rc;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_shared_object(e->d_name))
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            char **nn = realloc(names, ncap * sizeof(*nn));
            if (!nn) {
                rc = -ENOMEM;
                goto out;
            }
            names = nn;
            cap = ncap;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = -ENOMEM;
            goto out;
        }
        n++;
    }
    qsort(names, n, sizeof(*names), cmp_name);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
            rc = ks_error_set(err, dir, 0, NULL, "plugin path too long: %s", names[i]);
            break;
        }
        rc = ks_registry_load(path, err);
    }
out:
    if (rc == -ENOMEM)
        ks_error_set(err, dir, 0, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return rc;
}
