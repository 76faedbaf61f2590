/*
 * kubeconfig.c - where the API server is and how to authenticate: a kubeconfig file's
 * current context, or a pod's service account.
 *
 * Mirrors client-go's clientcmd for the fields a scheduler needs: current-context names
 * a context, whose cluster gives server, certificate-authority(-data) and
 * insecure-skip-tls-verify and whose user gives client-certificate(-data),
 * client-key(-data), token and tokenFile. *-data fields are base64 and win over the file
 * fields (as clientcmd's data-over-file rule); relative file paths are resolved against
 * the kubeconfig's directory. In-cluster mode mirrors rest.InClusterConfig: the server
 * from KUBERNETES_SERVICE_HOST/PORT, the CA and the (rotating) token from the service
 * account directory. Every failure names the file, line and field.
 */
#include "ksched/internal/kube.h"

#include "ksched/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KS_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct kc_load {
    const char *file;
    char *dir; /* the kubeconfig's directory, for relative paths */
    struct ks_error *err;
};

static int fail(struct kc_load *l, const struct ks_yaml_node *at, const char *field, const char *fmt,
                const char *arg)
{
    return ks_error_set(l->err, l->file, at ? at->line : 0, field, fmt, arg);
}

static int nomem(struct kc_load *l)
{
    ks_error_set(l->err, l->file, 0, NULL, "out of memory");
    return -ENOMEM;
}

/* A string field of @map (NULL when absent or null); anything else than a scalar fails. */
static int str_field(struct kc_load *l, const struct ks_yaml_node *map, const char *key, const char *path,
                     const char **out)
{
    const struct ks_yaml_node *n = ks_yaml_get(map, key);
    char field[KS_ERROR_FIELD_MAX];
    *out = NULL;
    if (ks_yaml_is_null(n))
        return 0;
    snprintf(field, sizeof(field), "%s.%s", path, key);
    if (n->kind != KS_YAML_SCALAR)
        return fail(l, n, field, "expected a string, found %s", ks_yaml_kind_name(n));
    *out = n->str;
    return 0;
}

/* ---- base64 (RFC 4648, padding optional, whitespace ignored) ---- */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode @in into a new NUL-terminated buffer; -EINVAL on a bad character or length. */
static int b64_decode(const char *in, size_t len, char **out, size_t *olen)
{
    char *buf = malloc(len / 4 * 3 + 4);
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    size_t n = 0;

    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad) {
            free(buf);
            return -EINVAL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (bits >= 6 || pad > 2) { /* one leftover sextet cannot encode a byte */
        free(buf);
        return -EINVAL;
    }
    buf[n] = '\0';
    *out = buf;
    *olen = n;
    return 0;
}

static int data_field(struct kc_load *l, const struct ks_yaml_node *map, const char *key, const char *path,
                      char **out, size_t *len)
{
    const char *s;
    int rc = str_field(l, map, key, path, &s);
    if (rc || !s)
        return rc;
    rc = b64_decode(s, strlen(s), out, len);
    if (rc == -ENOMEM)
        return nomem(l);
    if (rc) {
        char field[KS_ERROR_FIELD_MAX];
        snprintf(field, sizeof(field), "%s.%s", path, key);
        return fail(l, ks_yaml_get(map, key), field, "%s", "illegal base64 data");
    }
    return 0;
}

/* A file field, made absolute against the kubeconfig's directory. */
static int path_field(struct kc_load *l, const struct ks_yaml_node *map, const char *key, const char *path,
                      char **out)
{
    const char *s;
    int rc = str_field(l, map, key, path, &s);
    if (rc || !s || !s[0])
        return rc;
    if (s[0] == '/' || !l->dir)
        *out = strdup(s);
    else if (asprintf(out, "%s/%s", l->dir, s) < 0)
        *out = NULL;
    return *out ? 0 : nomem(l);
}

/* The entry of list @key ("clusters") whose name is @name, and its @inner map ("cluster"). */
static int named(struct kc_load *l, const struct ks_yaml_node *root, const char *key, const char *inner,
                 const char *name, const struct ks_yaml_node *ref, const char *ref_field,
                 const struct ks_yaml_node **out, char *path, size_t path_len)
{
    const struct ks_yaml_node *list = ks_yaml_get(root, key);
    if (!ks_yaml_is_null(list) && list->kind != KS_YAML_SEQ)
        return fail(l, list, key, "expected a list, found %s", ks_yaml_kind_name(list));
    for (uint32_t i = 0; list && list->kind == KS_YAML_SEQ && i < list->n; i++) {
        const struct ks_yaml_node *e = list->items[i], *n = ks_yaml_get(e, "name");
        if (!n || n->kind != KS_YAML_SCALAR || strcmp(n->str, name) != 0)
            continue;
        const struct ks_yaml_node *m = ks_yaml_get(e, inner);
        snprintf(path, path_len, "%s[%u].%s", key, i, inner);
        if (ks_yaml_is_null(m) || m->kind != KS_YAML_MAP)
            return ks_error_set(l->err, l->file, m ? m->line : e->line, path, "expected a map, found %s",
                                ks_yaml_kind_name(m));
        *out = m;
        return 0;
    }
    return ks_error_set(l->err, l->file, ref ? ref->line : 0, ref_field, "%s \"%s\" not found in %s", inner,
                        name, key);
}

static int load_tree(struct kc_load *l, const struct ks_yaml_node *root, struct ks_kubeconfig *out)
{
    const struct ks_yaml_node *ctx_map, *cluster, *user = NULL, *ref;
    const char *cur, *cluster_name, *user_name, *ns, *server, *token;
    char ctx_path[64], cluster_path[64], user_path[64];
    int rc;

    if (!root || root->kind != KS_YAML_MAP)
        return ks_error_set(l->err, l->file, root ? root->line : 1, NULL,
                            "expected a kubeconfig (a map), found %s", ks_yaml_kind_name(root));
    if ((rc = str_field(l, root, "current-context", "", &cur)))
        return rc;
    if (!cur || !cur[0])
        return ks_error_set(l->err, l->file, root->line, "current-context",
                            "Required value: no current context is set");
    ref = ks_yaml_get(root, "current-context");
    if ((rc = named(l, root, "contexts", "context", cur, ref, "current-context", &ctx_map, ctx_path,
                    sizeof(ctx_path))) ||
        (rc = str_field(l, ctx_map, "cluster", ctx_path, &cluster_name)) ||
        (rc = str_field(l, ctx_map, "user", ctx_path, &user_name)) ||
        (rc = str_field(l, ctx_map, "namespace", ctx_path, &ns)))
        return rc;
    if (!cluster_name || !cluster_name[0]) {
        char field[KS_ERROR_FIELD_MAX];
        snprintf(field, sizeof(field), "%s.cluster", ctx_path);
        return ks_error_set(l->err, l->file, ctx_map->line, field,
                            "Required value: the context names no cluster");
    }
    char field[KS_ERROR_FIELD_MAX];
    snprintf(field, sizeof(field), "%s.cluster", ctx_path);
    if ((rc = named(l, root, "clusters", "cluster", cluster_name, ks_yaml_get(ctx_map, "cluster"), field,
                    &cluster, cluster_path, sizeof(cluster_path))))
        return rc;
    if (user_name && user_name[0]) {
        snprintf(field, sizeof(field), "%s.user", ctx_path);
        if ((rc = named(l, root, "users", "user", user_name, ks_yaml_get(ctx_map, "user"), field, &user,
                        user_path, sizeof(user_path))))
            return rc;
    }

    if ((rc = str_field(l, cluster, "server", cluster_path, &server)))
        return rc;
    if (!server || !server[0]) {
        snprintf(field, sizeof(field), "%s.server", cluster_path);
        return ks_error_set(l->err, l->file, cluster->line, field,
                            "Required value: no server found for cluster \"%s\"", cluster_name);
    }
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) {
        snprintf(field, sizeof(field), "%s.server", cluster_path);
        return fail(l, ks_yaml_get(cluster, "server"), field, "Invalid value: \"%s\": must be an http(s) URL",
                    server);
    }
    size_t slen = strlen(server);
    while (slen > 0 && server[slen - 1] == '/')
        slen--;
    if (!(out->server = strndup(server, slen)))
        return nomem(l);

    const struct ks_yaml_node *insecure = ks_yaml_get(cluster, "insecure-skip-tls-verify");
    if (!ks_yaml_is_null(insecure)) {
        if (insecure->kind != KS_YAML_SCALAR ||
            (strcmp(insecure->str, "true") && strcmp(insecure->str, "false"))) {
            snprintf(field, sizeof(field), "%s.insecure-skip-tls-verify", cluster_path);
            return fail(l, insecure, field, "expected true or false, found \"%s\"",
                        insecure->kind == KS_YAML_SCALAR ? insecure->str : ks_yaml_kind_name(insecure));
        }
        out->insecure = strcmp(insecure->str, "true") == 0;
    }
    if ((rc =
             data_field(l, cluster, "certificate-authority-data", cluster_path, &out->ca_data, &out->ca_len)))
        return rc;
    if (!out->ca_data && (rc = path_field(l, cluster, "certificate-authority", cluster_path, &out->ca_file)))
        return rc;
    if (out->insecure && (out->ca_data || out->ca_file)) {
        /* as clientcmd's validation: trusting a CA and trusting anything contradict */
        snprintf(field, sizeof(field), "%s.insecure-skip-tls-verify", cluster_path);
        return fail(l, insecure, field, "%s",
                    "specifying a root certificates file with the insecure flag is not allowed");
    }

    if (user) {
        if ((rc = data_field(l, user, "client-certificate-data", user_path, &out->cert_data,
                             &out->cert_len)) ||
            (!out->cert_data &&
             (rc = path_field(l, user, "client-certificate", user_path, &out->cert_file))) ||
            (rc = data_field(l, user, "client-key-data", user_path, &out->key_data, &out->key_len)) ||
            (!out->key_data && (rc = path_field(l, user, "client-key", user_path, &out->key_file))) ||
            (rc = str_field(l, user, "token", user_path, &token)))
            return rc;
        if (token && token[0] && !(out->token = strdup(token)))
            return nomem(l);
        if (!out->token && (rc = path_field(l, user, "tokenFile", user_path, &out->token_file)))
            return rc;
        if ((out->cert_data || out->cert_file) != (out->key_data || out->key_file)) {
            snprintf(field, sizeof(field), "%s.%s", user_path,
                     out->cert_data || out->cert_file ? "client-key" : "client-certificate");
            return ks_error_set(
                l->err, l->file, user->line, field,
                "Required value: a client certificate needs its key and a key its certificate");
        }
    }
    if (!(out->namespace_ = strdup(ns && ns[0] ? ns : "default")))
        return nomem(l);
    return 0;
}

int ks_kubeconfig_load(const char *path, struct ks_kubeconfig *out, struct ks_error *err)
{
    struct ks_yaml_stream *s;
    struct kc_load l = {.file = path, .err = err};
    int rc;

    memset(out, 0, sizeof(*out));
    if (access(path, R_OK) != 0) {
        rc = -errno;
        ks_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
        return rc == -ENOENT ? -ENOENT : rc;
    }
    if ((rc = ks_yaml_parse_file(path, &s, err)))
        return rc;
    const char *slash = strrchr(path, '/');
    if (slash && !(l.dir = strndup(path, slash == path ? 1 : (size_t)(slash - path)))) {
        ks_yaml_stream_destroy(s);
        return nomem(&l);
    }
    if (s->ndocs != 1)
        rc = ks_error_set(err, path, 1, NULL, "expected one YAML document, found %u", s->ndocs);
    else
        rc = load_tree(&l, s->docs[0], out);
    ks_yaml_stream_destroy(s);
    free(l.dir);
    if (rc)
        ks_kubeconfig_free(out);
    return rc;
}

static int read_small(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    char buf[4096];
    size_t n;
    if (!f)
        return -errno;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    return (*out = strndup(buf, n)) ? 0 : -ENOMEM;
}

int ks_kubeconfig_in_cluster(const char *root, struct ks_kubeconfig *out, struct ks_error *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = root ? root : KS_SA_DIR;
    char *ns = NULL;
    int rc = -ENOMEM;

    memset(out, 0, sizeof(*out));
    if (!host || !host[0] || !port || !port[0]) {
        ks_error_set(err, NULL, 0, NULL,
                     "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                     "KUBERNETES_SERVICE_PORT must be defined");
        return -ENOENT;
    }
    /* an IPv6 service address needs brackets in a URL */
    if (asprintf(&out->server, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0) {
        out->server = NULL;
        goto err_nomem;
    }
    if (asprintf(&out->token_file, "%s/token", dir) < 0) {
        out->token_file = NULL;
        goto err_nomem;
    }
    if (access(out->token_file, R_OK) != 0) {
        rc = -errno;
        ks_error_set(err, out->token_file, 0, NULL, "cannot read the service account token: %s",
                     strerror(errno));
        goto err_free;
    }
    if (asprintf(&out->ca_file, "%s/ca.crt", dir) < 0) {
        out->ca_file = NULL;
        goto err_nomem;
    }
    if (access(out->ca_file, R_OK) != 0) { /* as client-go: go on with the system roots */
        free(out->ca_file);
        out->ca_file = NULL;
    }
    char *nspath;
    if (asprintf(&nspath, "%s/namespace", dir) < 0)
        goto err_nomem;
    rc = read_small(nspath, &ns);
    free(nspath);
    if (rc == -ENOMEM)
        goto err_nomem;
    out->namespace_ = ns && ns[0] ? ns : strdup("default");
    if (ns && !ns[0])
        free(ns);
    if (!out->namespace_)
        goto err_nomem;
    return 0;

err_nomem:
    ks_error_set(err, NULL, 0, NULL, "out of memory");
    rc = -ENOMEM;
err_free:
    ks_kubeconfig_free(out);
    return rc;
}

void ks_kubeconfig_free(struct ks_kubeconfig *kc)
{
    if (!kc)
        return;
    free(kc->server);
    free(kc->ca_file);
    free(kc->ca_data);
    free(kc->cert_file);
    free(kc->cert_data);
    free(kc->key_file);
    free(kc->key_data);
    free(kc->token);
    free(kc->token_file);
    free(kc->namespace_);
    memset(kc, 0, sizeof(*kc));
}
