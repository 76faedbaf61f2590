/*
 * default_binder.c - the DefaultBinder plugin: binds the pod to the chosen node (Bind).
 *
 * Mirrors pkg/scheduler/framework/plugins/defaultbinder/default_binder.go: upstream posts a
 * v1.Binding to the API server and turns a failure into an Error status. Here the binding
 * goes to the framework's binder backend (struct ks_framework_deps.binder: the API server
 * client, or a test double); with no backend configured the bind succeeds at once and the
 * scheduler confirms the assumed pod in-process. It takes no args; the instance keeps a
 * copy of the backend taken at init.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/framework.h"
#include "ksched/registry.h"

struct default_binder {
    struct ks_binder_backend backend;
};

static int init(const struct ks_plugin_init *in, void **self, struct ks_error *err)
{
    struct default_binder *p = calloc(1, sizeof(*p));

    (void)err;
    if (!p)
        return -ENOMEM;
    if (in->framework)
        p->backend = ks_framework_deps(in->framework)->binder;
    *self = p;
    return 0;
}

static void destroy(void *self)
{
    free(self);
}

/* do_bind - Context: binder threads; may block in the backend. */
static int do_bind(void *self, struct ks_cycle_state *cs, const struct ks_pod *pod, uint32_t node,
                   struct ks_status *st)
{
    const struct default_binder *p = self;

    (void)cs;
    if (!p->backend.bind)
        return KS_SUCCESS;
    st->nreasons = 0;
    int rc = p->backend.bind(p->backend.ctx, pod, node, st);
    if (rc >= 0)
        return KS_SUCCESS;
    if (st->nreasons == 0)
        ks_status_set(st, KS_ERROR, "binding rejected: %s", strerror(-rc));
    st->code = KS_ERROR;
    return KS_ERROR;
}

const struct ks_plugin ks_plugin_default_binder = {
    .abi_version = KS_PLUGIN_ABI_VERSION,
    .name = "DefaultBinder",
    .init = init,
    .destroy = destroy,
    .bind = do_bind,
};
