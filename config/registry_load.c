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
 * each other's symbols), checks the table (ks_registry_check(): ABI version, a name, no
 * clash with an in-tree or already loaded plugin), adds it and keeps the object open for
 * the life of the process. A shared object calls ksched's own functions (ks_intern(),
 * ks_labels_get(), ...) through the executable's dynamic symbol table, so executables
 * that load plugins link with --export-dynamic (CMake: ENABLE_EXPORTS).
 *
 * ks_registry_load_dir() treats a folder as one unit, as kube-scheduler treats its
 * out-of-tree registry: a registration that fails stops kube-scheduler from starting, so a
 * folder holding one object that is not a loadable plugin fails as a whole. It opens and
 * checks every object first, reports each one that fails (not only the first), and adds
 * the plugins only when all of them passed; otherwise it closes them all and adds none.
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

/* Plugins added so far (by any caller), of the KS_REGISTRY_MAX_ADDED the registry holds. */
static uint32_t added_count(void)
{
    uint32_t intree = 0;
    while (ks_registry[intree])
        intree++;
    return ks_registry_count() - intree;
}

/*
 * Open @path and find its plugin table, checked by ks_registry_check(). On success the
 * object stays open in *handle; on failure it is closed and @err names @path.
 */
static int open_plugin(const char *path, void **handle, const struct ks_plugin **plugin, struct ks_error *err)
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
    const struct ks_plugin *p = entry();
    if (!p) {
        ks_error_set(err, path, 0, NULL, "not a ksched plugin: %s() returned no plugin", KS_PLUGIN_ENTRY);
        dlclose(h);
        return -EINVAL;
    }
    if (ks_registry_check(p, &perr) < 0) {
        ks_error_set(err, path, 0, NULL, "%s", perr.msg);
        dlclose(h);
        return -EINVAL;
    }
    *handle = h;
    *plugin = p;
    return 0;
}

int ks_registry_load(const char *path, struct ks_error *err)
{
    struct ks_error perr = {0};
    const struct ks_plugin *plugin;
    void *h;

    if (nhandles == KS_REGISTRY_MAX_ADDED || added_count() == KS_REGISTRY_MAX_ADDED)
        return ks_error_set(err, path, 0, NULL, "cannot load plugin: %d plugins were added already",
                            KS_REGISTRY_MAX_ADDED);
    if (open_plugin(path, &h, &plugin, err) < 0)
        return -EINVAL;
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

/* The *.so names in @dir, sorted, into *names (*n of them). 0, or -errno with @err set. */
static int list_dir(const char *dir, char ***names, size_t *n, struct ks_error *err)
{
    DIR *d = opendir(dir);
    size_t cap = 0;
    int rc = 0;

    *names = NULL;
    *n = 0;
    if (!d) {
        rc = -errno;
        ks_error_set(err, dir, 0, NULL, "cannot open plugin directory: %s", strerror(-rc));
        return rc;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_shared_object(e->d_name))
            continue;
        if (*n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            char **nn = realloc(*names, ncap * sizeof(*nn));
            if (!nn) {
                rc = -ENOMEM;
                break;
            }
            *names = nn;
            cap = ncap;
        }
        if (!((*names)[*n] = strdup(e->d_name))) {
            rc = -ENOMEM;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (rc == 0)
        qsort(*names, *n, sizeof(**names), cmp_name);
    else
        ks_error_set(err, dir, 0, NULL, "out of memory");
    return rc;
}

struct candidate {
    char *path; /* NULL when the object failed */
    void *handle;
    const struct ks_plugin *plugin;
};

/* The earlier candidate of @c[0..@n) whose plugin is called @name, or NULL. */
static const struct candidate *same_name(const struct candidate *c, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (c[i].path && strcmp(c[i].plugin->name, name) == 0)
            return &c[i];
    }
    return NULL;
}

int ks_registry_load_dir(const char *dir, ks_registry_report_fn report, void *ctx, struct ks_error *err)
{
    struct candidate *cand = NULL;
    char **names;
    size_t n, nbad = 0;
    int rc = list_dir(dir, &names, &n, err);

    if (rc < 0)
        goto out;
    if (n && !(cand = calloc(n, sizeof(*cand)))) {
        ks_error_set(err, dir, 0, NULL, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct ks_error e = {0};
        size_t len = strlen(dir) + 1 + strlen(names[i]) + 1;
        char *path = malloc(len);
        if (!path) {
            ks_error_set(err, dir, 0, NULL, "out of memory");
            rc = -ENOMEM;
            goto out;
        }
        snprintf(path, len, "%s/%s", dir, names[i]);
        if (open_plugin(path, &cand[i].handle, &cand[i].plugin, &e) == 0) {
            const struct candidate *first = same_name(cand, i, cand[i].plugin->name);
            if (!first) {
                cand[i].path = path;
                continue;
            }
            ks_error_set(&e, path, 0, NULL, "a plugin named %s is also in %s", first->plugin->name,
                         first->path);
            dlclose(cand[i].handle);
        }
        if (report)
            report(ctx, &e);
        free(path);
        nbad++;
    }
    if (nbad) {
        rc = ks_error_set(err, dir, 0, NULL,
                          "%zu of %zu shared objects cannot be loaded as plugins, so none was loaded", nbad,
                          n);
        goto out;
    }
    if (n > KS_REGISTRY_MAX_ADDED - added_count() || n > KS_REGISTRY_MAX_ADDED - nhandles) {
        rc = ks_error_set(err, dir, 0, NULL,
                          "%zu plugins: with those added already, more than %d; none was loaded", n,
                          KS_REGISTRY_MAX_ADDED);
        goto out;
    }
    /* every table passed ks_registry_check() against the registry and the others: all are added */
    for (size_t i = 0; i < n; i++) {
        struct ks_error e = {0};
        if (ks_registry_add(cand[i].plugin, &e) < 0) {
            /* only a concurrent ks_registry_add() could get here, which start-up rules out */
            rc = ks_error_set(err, cand[i].path, 0, NULL, "%s", e.msg);
            goto out;
        }
        handles[nhandles++] = cand[i].handle;
        cand[i].handle = NULL;
    }
out:
    for (size_t i = 0; cand && i < n; i++) {
        if (cand[i].path && cand[i].handle)
            dlclose(cand[i].handle);
        free(cand[i].path);
    }
    free(cand);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}
