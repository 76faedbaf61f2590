/*
 * serve_tls.c - the serving certificate and TLS settings of `ksched serve`'s secure port
 * (serve/serve.h), chosen as kube-scheduler chooses them (k8s.io/apiserver
 * pkg/server/options/serving.go MaybeDefaultWithSelfSignedCerts):
 *   1. --tls-cert-file and --tls-private-key-file (the certificate file may carry the
 *      chain after the leaf);
 *   2. else, with --cert-dir, DIR/kube-scheduler.crt and DIR/kube-scheduler.key, written
 *      there first when they cannot both be read;
 *   3. else a pair made in memory at start.
 * A made pair is client-go util/cert GenerateSelfSignedCertKey's: a CA named
 * "localhost-ca@<unix time>" signs a serving certificate "localhost@<unix time>" (serial 2,
 * server auth) for DNS:localhost and IP:127.0.0.1, plus the bind address when it is not
 * 0.0.0.0 or ::; both keys RSA 2048, signatures SHA-256, valid from an hour ago for one
 * year; the server sends the leaf then the CA.
 *
 * TLS 1.2 at least (TLS 1.3 with --tls-min-version VersionTLS13), for TLS 1.2 only the
 * ECDHE AEAD suites (kube's preferred list), no renegotiation, no compression, ALPN
 * http/1.1 (the only protocol the server speaks).
 *
 * Certificate files are looked at again at most once a minute (ks_tls_refresh): when one
 * changed, the pair is reloaded for new connections, as kube's dynamic serving content
 * does; a pair that fails to load leaves the previous one in place.
 *
 * Context: created and refreshed by one thread (the HTTP thread after start).
 */
#include "serve.h"

#include "ksched/base/spin.h" /* ks__mono_ns */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KS_TLS_PAIR_NAME  "kube-scheduler"
#define KS_TLS_REFRESH_NS INT64_C(60000000000)
/* TLS 1.2 suites: ECDHE key exchange and AEAD ciphers only (TLS 1.3 suites are all AEAD). */
#define KS_TLS12_CIPHERS                                                                                     \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"               \
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct ks_tls {
    SSL_CTX *ctx;
    char *cert_file, *key_file; /* NULL: a pair made in memory */
    struct file_id cert_id, key_id;
    int64_t next_check_ns;
    int min_version;
    char describe[512];
};

/* The reason of the newest OpenSSL error (or @fallback), and the queue cleared. */
static const char *ssl_reason(char *buf, size_t len, const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(buf, len, "%s", r ? r : fallback);
    ERR_clear_error();
    return buf;
}

/* ---- a self-signed pair ------------------------------------------------------------------ */

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

/* A v3 certificate of @key's public half named CN=@cn, valid [@from, @to), not yet signed. */
static X509 *new_cert(long serial, const char *cn, EVP_PKEY *key, time_t from, time_t to)
{
    X509 *x = X509_new();
    if (!x || !X509_set_version(x, X509_VERSION_3) || !ASN1_INTEGER_set(X509_get_serialNumber(x), serial) ||
        !ASN1_TIME_set(X509_getm_notBefore(x), from) || !ASN1_TIME_set(X509_getm_notAfter(x), to) ||
        !X509_set_pubkey(x, key) ||
        !X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)cn,
                                    -1, -1, 0)) {
        X509_free(x);
        return NULL;
    }
    return x;
}

int ks_tls_self_signed(const char *bind_ip, int64_t now_s, char **cert_pem, size_t *cert_len, char **key_pem,
                       size_t *key_len)
{
    int rc = -ENOMEM;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    X509 *ca = NULL, *leaf = NULL;
    BIO *cb = NULL, *kb = NULL;
    char cn[64], ca_cn[64], san[160] = "DNS:localhost,IP:127.0.0.1";
    time_t from = (time_t)(now_s - 3600), to = from + 365 * 24 * 3600;

    *cert_pem = *key_pem = NULL;
    if (bind_ip && bind_ip[0]) {
        unsigned char a[16];
        bool v6 = strchr(bind_ip, ':') != NULL;
        if (inet_pton(v6 ? AF_INET6 : AF_INET, bind_ip, a) != 1)
            return -EINVAL;
        static const unsigned char zero[16];
        if (memcmp(a, zero, v6 ? 16 : 4) != 0 && strcmp(bind_ip, "127.0.0.1") != 0)
            snprintf(san + strlen(san), sizeof(san) - strlen(san), ",IP:%s", bind_ip);
    }
    snprintf(cn, sizeof(cn), "localhost@%lld", (long long)now_s);
    snprintf(ca_cn, sizeof(ca_cn), "localhost-ca@%lld", (long long)now_s);
    if (!(ca_key = EVP_RSA_gen(2048)) || !(key = EVP_RSA_gen(2048)))
        goto out;
    if (!(ca = new_cert(1, ca_cn, ca_key, from, to)) ||
        !X509_set_issuer_name(ca, X509_get_subject_name(ca)) ||
        add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") ||
        add_ext(ca, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
        add_ext(ca, ca, NID_subject_key_identifier, "hash") || !X509_sign(ca, ca_key, EVP_sha256()))
        goto out;
    if (!(leaf = new_cert(2, cn, key, from, to)) || !X509_set_issuer_name(leaf, X509_get_subject_name(ca)) ||
        add_ext(leaf, ca, NID_basic_constraints, "critical,CA:FALSE") ||
        add_ext(leaf, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        add_ext(leaf, ca, NID_ext_key_usage, "serverAuth") || add_ext(leaf, ca, NID_subject_alt_name, san) ||
        add_ext(leaf, ca, NID_authority_key_identifier, "keyid:always") ||
        !X509_sign(leaf, ca_key, EVP_sha256()))
        goto out;
    if (!(cb = BIO_new(BIO_s_mem())) || !(kb = BIO_new(BIO_s_mem())) || !PEM_write_bio_X509(cb, leaf) ||
        !PEM_write_bio_X509(cb, ca) ||
        !PEM_write_bio_PrivateKey_traditional(kb, key, NULL, NULL, 0, NULL, NULL))
        goto out;
    char *p;
    long n = BIO_get_mem_data(cb, &p);
    if (!(*cert_pem = malloc((size_t)n + 1)))
        goto out;
    memcpy(*cert_pem, p, (size_t)n);
    (*cert_pem)[n] = '\0';
    *cert_len = (size_t)n;
    n = BIO_get_mem_data(kb, &p);
    if (!(*key_pem = malloc((size_t)n + 1))) {
        free(*cert_pem);
        *cert_pem = NULL;
        goto out;
    }
    memcpy(*key_pem, p, (size_t)n);
    (*key_pem)[n] = '\0';
    *key_len = (size_t)n;
    rc = 0;
out:
    if (rc)
        ERR_clear_error();
    if (kb) {
        /* the key's PEM was in this buffer: wipe it before freeing */
        char *kp;
        long kn = BIO_get_mem_data(kb, &kp);
        if (kn > 0)
            OPENSSL_cleanse(kp, (size_t)kn);
    }
    BIO_free(cb);
    BIO_free(kb);
    X509_free(leaf);
    X509_free(ca);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    return rc;
}

/* ---- the SSL_CTX ------------------------------------------------------------------------ */

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                       unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    static const unsigned char h1[] = "\x08http/1.1";
    unsigned char *sel;
    if (SSL_select_next_proto(&sel, outlen, h1, sizeof(h1) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no protocol in common: go on without ALPN */
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/*
 * A server context for the PEM pair in memory (@cert: the leaf, then its chain). 0, or
 * -EINVAL with @why set (@which: "certificate" or "key" names the culprit).
 */
static int make_ctx(int min_version, const char *cert, size_t cert_len, const char *key, size_t key_len,
                    SSL_CTX **out, const char **which, char *why, size_t wlen)
{
    BIO *b = NULL;
    X509 *x = NULL;
    EVP_PKEY *pk = NULL;
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    *which = "certificate";
    if (!ctx) {
        ssl_reason(why, wlen, "out of memory");
        return -ENOMEM;
    }
    SSL_CTX_set_min_proto_version(ctx, min_version);
    SSL_CTX_set_options(ctx,
                        SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    if (!SSL_CTX_set_cipher_list(ctx, KS_TLS12_CIPHERS))
        goto bad;
    if (!(b = BIO_new_mem_buf(cert, (int)cert_len)))
        goto bad;
    if (!(x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
        snprintf(why, wlen, "no PEM certificate in it");
        ERR_clear_error();
        goto fail;
    }
    if (!SSL_CTX_use_certificate(ctx, x))
        goto bad;
    X509_free(x);
    while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
        if (!SSL_CTX_add0_chain_cert(ctx, x))
            goto bad;
        x = NULL;
    }
    ERR_clear_error(); /* the end of the PEM blocks */
    BIO_free(b);
    *which = "key";
    if (!(b = BIO_new_mem_buf(key, (int)key_len)))
        goto bad;
    if (!(pk = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL))) {
        snprintf(why, wlen, "no PEM private key in it");
        ERR_clear_error();
        goto fail;
    }
    if (!SSL_CTX_use_PrivateKey(ctx, pk) || !SSL_CTX_check_private_key(ctx)) {
        snprintf(why, wlen, "the key does not match the certificate (%s)",
                 ssl_reason((char[128]){0}, 128, "mismatch"));
        goto fail;
    }
    EVP_PKEY_free(pk);
    BIO_free(b);
    *out = ctx;
    return 0;
bad:
    ssl_reason(why, wlen, "out of memory");
fail:
    X509_free(x);
    EVP_PKEY_free(pk);
    BIO_free(b);
    SSL_CTX_free(ctx);
    return -EINVAL;
}

static char *read_file(const char *path, size_t *len, struct file_id *id, int *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = errno;
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fileno(f), &st) != 0)
        *err = errno;
    else if (st.st_size > (16 << 20))
        *err = EFBIG; /* no certificate or key is that large */
    else if (!(buf = malloc((size_t)st.st_size + 1)))
        *err = ENOMEM;
    if (buf) {
        *len = fread(buf, 1, (size_t)st.st_size, f);
        buf[*len] = '\0';
        if (id)
            *id = (struct file_id){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
        *err = 0;
    }
    fclose(f);
    return buf;
}

static void free_secret(char *p, size_t len)
{
    if (p)
        OPENSSL_cleanse(p, len);
    free(p);
}

/* Load the pair from its files into a new context. 0 or -errno with @msg set (FILE: FLAG: why). */
static int load_files(struct ks_tls *t, SSL_CTX **out, struct file_id *cid, struct file_id *kid, char *msg,
                      size_t mlen)
{
    size_t clen = 0, klen = 0;
    int err;
    char *cert = read_file(t->cert_file, &clen, cid, &err);
    if (!cert) {
        snprintf(msg, mlen, "%s:0: --tls-cert-file: %s", t->cert_file, strerror(err));
        return -err;
    }
    char *key = read_file(t->key_file, &klen, kid, &err);
    if (!key) {
        free(cert);
        snprintf(msg, mlen, "%s:0: --tls-private-key-file: %s", t->key_file, strerror(err));
        return -err;
    }
    const char *which;
    char why[256];
    int rc = make_ctx(t->min_version, cert, clen, key, klen, out, &which, why, sizeof(why));
    if (rc < 0) {
        bool k = strcmp(which, "key") == 0;
        snprintf(msg, mlen, "%s:0: %s: %s", k ? t->key_file : t->cert_file,
                 k ? "--tls-private-key-file" : "--tls-cert-file", why);
    }
    free(cert);
    free_secret(key, klen);
    return rc;
}

/* A one-line account of the leaf of @ctx: its subject CN and names. */
static void describe_leaf(SSL_CTX *ctx, char *buf, size_t len)
{
    X509 *x = SSL_CTX_get0_certificate(ctx);
    char cn[128] = "?";
    if (x)
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof(cn));
    size_t n = (size_t)snprintf(buf, len, "CN %s", cn);
    GENERAL_NAMES *names = x ? X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL) : NULL;
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names) && n < len; i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        if (g->type == GEN_DNS) {
            n += (size_t)snprintf(buf + n, len - n, ", DNS:%.*s", ASN1_STRING_length(g->d.dNSName),
                                  (const char *)ASN1_STRING_get0_data(g->d.dNSName));
        } else if (g->type == GEN_IPADD) {
            char ip[INET6_ADDRSTRLEN] = "?";
            int l = ASN1_STRING_length(g->d.iPAddress);
            inet_ntop(l == 16 ? AF_INET6 : AF_INET, ASN1_STRING_get0_data(g->d.iPAddress), ip, sizeof(ip));
            n += (size_t)snprintf(buf + n, len - n, ", IP:%s", ip);
        }
    }
    GENERAL_NAMES_free(names);
}

static int write_file(const char *path, const char *data, size_t len, mode_t mode)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = NULL;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0 || !(f = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    bool ok = fwrite(data, 1, len, f) == len;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno ? errno : EIO;
        unlink(tmp);
        return -e;
    }
    return 0;
}

/* --cert-dir: write a new pair as DIR/kube-scheduler.{crt,key} unless both files can be read. */
static int cert_dir_pair(struct ks_tls *t, const char *dir, const char *bind_ip, bool *made)
{
    size_t n = strlen(dir) + sizeof(KS_TLS_PAIR_NAME) + 8;
    if (!(t->cert_file = malloc(n)) || !(t->key_file = malloc(n)))
        return -ENOMEM;
    snprintf(t->cert_file, n, "%s/%s.crt", dir, KS_TLS_PAIR_NAME);
    snprintf(t->key_file, n, "%s/%s.key", dir, KS_TLS_PAIR_NAME);
    *made = false;
    if (access(t->cert_file, R_OK) == 0 && access(t->key_file, R_OK) == 0)
        return 0;
    char *cert, *key;
    size_t clen, klen;
    int rc = ks_tls_self_signed(bind_ip, (int64_t)time(NULL), &cert, &clen, &key, &klen);
    if (rc < 0) {
        fprintf(stderr, "ksched serve: making a self-signed certificate: %s\n", strerror(-rc));
        return rc;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        rc = -errno;
    if (rc == 0 && (rc = write_file(t->cert_file, cert, clen, 0644)) == 0)
        rc = write_file(t->key_file, key, klen, 0600);
    free(cert);
    free_secret(key, klen);
    if (rc < 0) {
        fprintf(stderr, "ksched: %s:0: --cert-dir: %s\n", dir, strerror(-rc));
        return -EINVAL;
    }
    *made = true;
    return 0;
}

int ks_tls_create(const struct ks_tls_opts *o, struct ks_tls **out)
{
    struct ks_tls *t = calloc(1, sizeof(*t));
    char msg[1024];
    int rc = -ENOMEM;
    if (!t)
        return -ENOMEM;
    t->min_version = o->tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION;
    if (o->cert_file && o->cert_file[0]) {
        if (!(t->cert_file = strdup(o->cert_file)) || !(t->key_file = strdup(o->key_file)))
            goto err;
        if ((rc = load_files(t, &t->ctx, &t->cert_id, &t->key_id, msg, sizeof(msg))) < 0)
            goto bad_input;
        snprintf(t->describe, sizeof(t->describe), "certificate %s (", t->cert_file);
    } else if (o->cert_dir && o->cert_dir[0]) {
        bool made;
        if ((rc = cert_dir_pair(t, o->cert_dir, o->bind_ip, &made)) < 0)
            goto err;
        if ((rc = load_files(t, &t->ctx, &t->cert_id, &t->key_id, msg, sizeof(msg))) < 0)
            goto bad_input;
        snprintf(t->describe, sizeof(t->describe), "%s certificate %s (", made ? "a new self-signed" : "the",
                 t->cert_file);
    } else {
        char *cert, *key, why[256];
        size_t clen, klen;
        const char *which;
        if ((rc = ks_tls_self_signed(o->bind_ip, (int64_t)time(NULL), &cert, &clen, &key, &klen)) < 0) {
            fprintf(stderr, "ksched serve: making a self-signed certificate: %s\n", strerror(-rc));
            goto err;
        }
        rc = make_ctx(t->min_version, cert, clen, key, klen, &t->ctx, &which, why, sizeof(why));
        free(cert);
        free_secret(key, klen);
        if (rc < 0) {
            fprintf(stderr, "ksched serve: the self-signed certificate: %s\n", why);
            goto err;
        }
        snprintf(t->describe, sizeof(t->describe), "a self-signed certificate made in memory (");
    }
    size_t n = strlen(t->describe);
    describe_leaf(t->ctx, t->describe + n, sizeof(t->describe) - n - 1);
    strncat(t->describe, ")", sizeof(t->describe) - strlen(t->describe) - 1);
    t->next_check_ns = ks__mono_ns() + KS_TLS_REFRESH_NS;
    *out = t;
    return 0;
bad_input:
    fprintf(stderr, "ksched: %s\n", msg);
    rc = rc == -ENOMEM ? rc : -EINVAL;
err:
    ks_tls_destroy(t);
    return rc;
}

void ks_tls_destroy(struct ks_tls *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    free(t->cert_file);
    free(t->key_file);
    free(t);
}

struct ssl_ctx_st *ks_tls_ctx(struct ks_tls *t)
{
    return t->ctx;
}

const char *ks_tls_describe(const struct ks_tls *t)
{
    return t->describe;
}

static bool same_id(const struct file_id *a, const struct file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static bool changed(const char *path, const struct file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false; /* gone for now: keep serving what we have */
    struct file_id now = {st.st_dev, st.st_ino, st.st_size, st.st_mtim};
    return !same_id(&now, id);
}

int ks_tls_refresh(struct ks_tls *t, int64_t now_ns, bool force)
{
    if (!t->cert_file || (!force && now_ns < t->next_check_ns))
        return 0;
    t->next_check_ns = now_ns + KS_TLS_REFRESH_NS;
    if (!changed(t->cert_file, &t->cert_id) && !changed(t->key_file, &t->key_id))
        return 0;
    SSL_CTX *ctx;
    struct file_id cid, kid;
    char msg[1024];
    if (load_files(t, &ctx, &cid, &kid, msg, sizeof(msg)) < 0) {
        /* remember the files as they are, so the same bad pair is reported once */
        struct stat st;
        if (stat(t->cert_file, &st) == 0)
            t->cert_id = (struct file_id){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
        if (stat(t->key_file, &st) == 0)
            t->key_id = (struct file_id){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
        fprintf(stderr, "ksched serve: keeping the previous serving certificate: %s\n", msg);
        return -EINVAL;
    }
    SSL_CTX_free(t->ctx); /* connections in progress hold their own reference */
    t->ctx = ctx;
    t->cert_id = cid;
    t->key_id = kid;
    fprintf(stderr, "ksched serve: reloaded the serving certificate from %s\n", t->cert_file);
    return 1;
}
