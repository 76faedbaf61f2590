/*
 * test_http_script.c - the scripted test server (http_script.c, compiled into the unit
 * suite here once) answers by script: steps used in order per route, 404 otherwise.
 */
#include <criterion/criterion.h>

#include "http_script.c"

#include "ksched/internal/kube.h"

Test(http_script, steps_are_used_up_in_order_and_unmatched_requests_get_404)
{
    static const struct ks_script_step steps[] = {
        {.method = "GET", .path = "/a", .status = 200, .body = "first"},
        {.method = "GET", .path = "/a", .status = 200, .body = "second"},
    };
    struct ks_script_server *s = ks_script_start(steps, 2);
    struct ks_kubeconfig kc = {.server = (char *)ks_script_url(s)};
    struct ks_kube_client_opts o = {.config = &kc};
    struct ks_kube_client *c;
    struct ks_kube_response r;
    struct ks_error err = {0};
    cr_assert_eq(ks_kube_client_create(&o, &c, &err), 0, "%s", err.msg);
    static const char *const want[] = {"first", "second"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(ks_kube_request(c, "GET", "/a?x=1", NULL, NULL, 0, &r), 0, "%s", r.error);
        if (i < 2) {
            cr_assert_eq(r.status, 200);
            cr_assert_str_eq(r.body, want[i]);
        } else {
            cr_assert_eq(r.status, 404);
        }
        ks_kube_response_free(&r);
    }
    cr_assert_eq(ks_script_nrequests(s), 3);
    cr_assert_eq(ks_script_request_at(s, 2).step, -1);
    ks_kube_client_destroy(c);
    ks_script_stop(s);
}
