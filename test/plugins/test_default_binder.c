/*
 * test_default_binder.c - the DefaultBinder plugin (plugins/default_binder.c).
 *
 * Upstream's defaultbinder/default_binder_test.go checks that Bind posts one Binding and
 * turns a client failure into an Error status; here the binder backend of the
 * framework's deps stands for the client. Without a backend the bind succeeds at once.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>

#include "ksched/internal/config.h"
#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(defaultbinder);

static const struct ks_plugin *const binder = &ks_plugin_default_binder;

struct recorder {
    int calls;
    const struct ks_pod *pod;
    uint32_t node;
    int rc;          /* what bind returns */
    const char *msg; /* reason it reports on failure, NULL for none */
};

static int record_bind(void *ctx, const struct ks_pod *pod, uint32_t node, struct ks_status *st)
{
    struct recorder *r = ctx;
    r->calls++;
    r->pod = pod;
    r->node = node;
    if (r->rc < 0 && r->msg)
        ks_status_set(st, KS_ERROR, "%s", r->msg);
    return r->rc;
}

/* The plugin's instance inside a real framework built with @deps. */
static void *with_backend(struct recorder *r, struct ks_config **cfg, struct ks_framework **fw)
{
    struct ks_framework_deps deps = {.binder = {.bind = record_bind, .ctx = r}};
    struct ks_error err = {0};
    cr_assert(eq(int, ks_config_load_default(cfg), 0));
    cr_assert(eq(int, ks_framework_create(&(*cfg)->profiles[0], &deps, fw, &err), 0), "%s", err.msg);
    struct ks_plugin_init in = {.slot = 0, .framework = *fw};
    void *self = NULL;
    cr_assert(eq(int, binder->init(&in, &self, &err), 0));
    return self;
}

Test(defaultbinder, binds_through_the_backend)
{
    struct recorder r = {.rc = 0};
    struct ks_config *cfg;
    struct ks_framework *fw;
    void *self = with_backend(&r, &cfg, &fw);
    struct ks_pod *pod = fx_done(ks_fake_pod("ns1", "foo"));
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);

    cr_expect(
        eq(int, binder->bind(self, &cs, pod, ks_intern("foohost.kubernetes.mydomain.com"), &st), KS_SUCCESS));
    cr_expect(eq(int, r.calls, 1));
    cr_expect(eq(ptr, (void *)r.pod, pod));
    cr_expect(eq(u32, r.node, ks_intern("foohost.kubernetes.mydomain.com")));

    fx_cs_free(&cs);
    ks_pod_destroy(pod);
    binder->destroy(self);
    ks_framework_destroy(fw);
    ks_config_destroy(cfg);
}

Test(defaultbinder, backend_failure_is_an_error)
{
    static const struct {
        const char *msg, *want;
    } cases[] = {
        {"pods \"foo\" is forbidden", "pods \"foo\" is forbidden"},
        {NULL, "binding rejected: Connection refused"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct recorder r = {.rc = -ECONNREFUSED, .msg = cases[i].msg};
        struct ks_config *cfg;
        struct ks_framework *fw;
        void *self = with_backend(&r, &cfg, &fw);
        struct ks_pod *pod = fx_done(ks_fake_pod("ns1", "foo"));
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        fx_cs_init(&cs);

        cr_expect(eq(int, binder->bind(self, &cs, pod, ks_intern("node"), &st), KS_ERROR));
        cr_expect(eq(int, st.code, KS_ERROR));
        cr_expect(eq(str, (char *)fx_reason(&st, 0), (char *)cases[i].want));

        fx_cs_free(&cs);
        ks_pod_destroy(pod);
        binder->destroy(self);
        ks_framework_destroy(fw);
        ks_config_destroy(cfg);
    }
}

Test(defaultbinder, no_backend_binds_in_process)
{
    void *self = fx_init(binder, NULL);
    struct ks_pod *pod = fx_done(ks_fake_pod("ns1", "foo"));
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);

    cr_expect(eq(int, binder->bind(self, &cs, pod, ks_intern("node"), &st), KS_SUCCESS));

    fx_cs_free(&cs);
    ks_pod_destroy(pod);
    binder->destroy(self);
}
