/*
 * test_kubeconfig.c - kubeconfig files and the in-cluster service account into struct
 * ks_kubeconfig, and bad kubeconfigs rejected with file, line and field.
 */
#include <criterion/criterion.h>

#include "ksched/internal/kube.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIR KS_TEST_DATA_DIR "/kube"

Test(kubeconfig, current_context_with_inline_data)
{
    struct ks_kubeconfig kc;
    struct ks_error err = {0};
    cr_assert_eq(ks_kubeconfig_load(DIR "/kubeconfig-data.yaml", &kc, &err), 0, "%s:%d: %s: %s", err.file,
                 err.line, err.field, err.msg);
    cr_assert_str_eq(kc.server, "https://10.0.0.1:6443");
    static const char ca[] = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
    cr_assert_eq(kc.ca_len, sizeof(ca) - 1);
    cr_assert_str_eq(kc.ca_data, ca);
    cr_assert_null(kc.ca_file, "certificate-authority-data wins over the file");
    cr_assert_eq(kc.cert_len, 11);
    cr_assert_str_eq(kc.cert_data, "client cert");
    cr_assert_str_eq(kc.key_data, "client key!");
    cr_assert_str_eq(kc.token, "admin-token");
    cr_assert_null(kc.token_file);
    cr_assert_not(kc.insecure);
    cr_assert_str_eq(kc.namespace_, "kube-system");
    ks_kubeconfig_free(&kc);
    ks_kubeconfig_free(&kc); /* a freed struct is zeroed: freeing again is harmless */
}

Test(kubeconfig, relative_files_resolve_against_the_kubeconfig_directory)
{
    struct ks_kubeconfig kc;
    struct ks_error err = {0};
    cr_assert_eq(ks_kubeconfig_load(DIR "/kubeconfig-files.yaml", &kc, &err), 0, "%s", err.msg);
    cr_assert_str_eq(kc.server, "https://localhost:6443");
    cr_assert_str_eq(kc.ca_file, DIR "/pki/ca.crt");
    cr_assert_str_eq(kc.cert_file, DIR "/pki/client.crt");
    cr_assert_str_eq(kc.key_file, "/etc/absolute/client.key");
    cr_assert_str_eq(kc.token_file, DIR "/token");
    cr_assert_null(kc.token);
    cr_assert_not(kc.insecure);
    cr_assert_str_eq(kc.namespace_, "default");
    ks_kubeconfig_free(&kc);
}

Test(kubeconfig, insecure_cluster_without_user)
{
    struct ks_kubeconfig kc;
    struct ks_error err = {0};
    cr_assert_eq(ks_kubeconfig_load(DIR "/kubeconfig-insecure.yaml", &kc, &err), 0, "%s", err.msg);
    cr_assert_str_eq(kc.server, "https://lab.example:6443");
    cr_assert(kc.insecure);
    cr_assert_null(kc.ca_file);
    cr_assert_null(kc.ca_data);
    cr_assert_null(kc.token);
    cr_assert_null(kc.cert_data);
    ks_kubeconfig_free(&kc);
}

static void bad(const char *name, int line, const char *field, const char *msg)
{
    struct ks_kubeconfig kc;
    struct ks_error err = {0};
    char path[512];
    snprintf(path, sizeof(path), DIR "/%s", name);
    cr_assert_eq(ks_kubeconfig_load(path, &kc, &err), -EINVAL, "%s loaded", name);
    cr_assert_str_eq(err.file, path);
    cr_assert_eq(err.line, line, "%s: line %d: %s", name, err.line, err.msg);
    cr_assert_str_eq(err.field, field, "%s", name);
    cr_assert(strstr(err.msg, msg), "%s: %s", name, err.msg);
    cr_assert_null(kc.server, "nothing is left behind");
}

Test(kubeconfig, bad_files_name_line_and_field)
{
    bad("bad-no-current-context.yaml", 1, "current-context", "no current context");
    bad("bad-unknown-context.yaml", 3, "current-context", "context \"missing\" not found in contexts");
    bad("bad-base64.yaml", 10, "clusters[0].cluster.certificate-authority-data", "illegal base64");
    bad("bad-no-server.yaml", 9, "clusters[0].cluster.server", "no server found for cluster \"c\"");
    bad("bad-unknown-user.yaml", 5, "contexts[0].context.user", "user \"u\" not found in users");
    bad("bad-insecure-with-ca.yaml", 11, "clusters[0].cluster.insecure-skip-tls-verify",
        "root certificates file with the insecure flag");
    bad("bad-insecure.yaml", 10, "clusters[0].cluster.insecure-skip-tls-verify", "expected true or false");
}

Test(kubeconfig, missing_file_is_enoent)
{
    struct ks_kubeconfig kc;
    struct ks_error err = {0};
    cr_assert_eq(ks_kubeconfig_load(DIR "/no-such-kubeconfig", &kc, &err), -ENOENT);
    cr_assert(strstr(err.msg, "cannot open"), "%s", err.msg);
}

Test(kubeconfig, in_cluster_service_account)
{
    struct ks_kubeconfig kc;
    struct ks_error err = {0};
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_assert_eq(ks_kubeconfig_in_cluster(DIR "/serviceaccount", &kc, &err), 0, "%s", err.msg);
    cr_assert_str_eq(kc.server, "https://10.96.0.1:443");
    cr_assert_str_eq(kc.token_file, DIR "/serviceaccount/token");
    cr_assert_str_eq(kc.ca_file, DIR "/serviceaccount/ca.crt");
    cr_assert_str_eq(kc.namespace_, "team-a");
    ks_kubeconfig_free(&kc);

    /* IPv6 service address; no CA and no namespace file */
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    cr_assert_eq(ks_kubeconfig_in_cluster(DIR "/serviceaccount-bare", &kc, &err), 0, "%s", err.msg);
    cr_assert_str_eq(kc.server, "https://[fd00::1]:443");
    cr_assert_null(kc.ca_file);
    cr_assert_str_eq(kc.namespace_, "default");
    ks_kubeconfig_free(&kc);

    /* no token */
    struct ks_error e2 = {0};
    cr_assert_eq(ks_kubeconfig_in_cluster(DIR "/no-such-dir", &kc, &e2), -ENOENT);
    cr_assert(strstr(e2.msg, "service account token"), "%s", e2.msg);

    unsetenv("KUBERNETES_SERVICE_HOST");
    struct ks_error e3 = {0};
    cr_assert_eq(ks_kubeconfig_in_cluster(DIR "/serviceaccount", &kc, &e3), -ENOENT);
    cr_assert(strstr(e3.msg, "KUBERNETES_SERVICE_HOST"), "%s", e3.msg);
    unsetenv("KUBERNETES_SERVICE_PORT");
}
