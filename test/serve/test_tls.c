/*
 * test_tls.c - the secure port's certificate (serve/serve_tls.c): the self-signed pair as
 * client-go makes it (names, validity, key type, chain), given files used (and bad ones
 * refused as bad input), --cert-dir's pair made once and reused, and a changed pair
 * reloaded.
 */
#include <criterion/criterion.h>

#include "serve.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static STACK_OF(X509) * read_chain(const char *pem, size_t len)
{
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    STACK_OF(X509) *chain = sk_X509_new_null();
    X509 *x;
    while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)))
        sk_X509_push(chain, x);
    BIO_free(b);
    return chain;
}

static void cn_of(const X509_NAME *n, char *buf, size_t len)
{
    buf[0] = '\0';
    X509_NAME_get_text_by_NID((X509_NAME *)n, NID_commonName, buf, (int)len);
}

/* "DNS:a,IP:1.2.3.4" for the subjectAltName of @x. */
static void sans_of(X509 *x, char *buf, size_t len)
{
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    buf[0] = '\0';
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        size_t n = strlen(buf);
        if (g->type == GEN_DNS) {
            snprintf(buf + n, len - n, "%sDNS:%s", n ? "," : "", ASN1_STRING_get0_data(g->d.dNSName));
        } else if (g->type == GEN_IPADD) {
            const unsigned char *ip = ASN1_STRING_get0_data(g->d.iPAddress);
            snprintf(buf + n, len - n, "%sIP:%d.%d.%d.%d", n ? "," : "", ip[0], ip[1], ip[2], ip[3]);
        }
    }
    GENERAL_NAMES_free(names);
}

Test(tls, self_signed_as_client_go_makes_it)
{
    char *cert, *key;
    size_t clen, klen;
    int64_t now = 1700000000;
    cr_assert_eq(ks_tls_self_signed("0.0.0.0", now, &cert, &clen, &key, &klen), 0);
    STACK_OF(X509) *chain = read_chain(cert, clen);
    cr_assert_eq(sk_X509_num(chain), 2, "the serving certificate, then its CA");
    X509 *leaf = sk_X509_value(chain, 0), *ca = sk_X509_value(chain, 1);
    char buf[256];
    cn_of(X509_get_subject_name(leaf), buf, sizeof(buf));
    cr_expect_str_eq(buf, "localhost@1700000000");
    cn_of(X509_get_issuer_name(leaf), buf, sizeof(buf));
    cr_expect_str_eq(buf, "localhost-ca@1700000000");
    cn_of(X509_get_subject_name(ca), buf, sizeof(buf));
    cr_expect_str_eq(buf, "localhost-ca@1700000000");
    sans_of(leaf, buf, sizeof(buf));
    cr_expect_str_eq(buf, "DNS:localhost,IP:127.0.0.1", "0.0.0.0 adds no name");
    /* from an hour before now, for a year */
    int days, secs;
    ASN1_TIME *t = ASN1_TIME_new();
    ASN1_TIME_set(t, (time_t)now);
    ASN1_TIME_diff(&days, &secs, t, X509_get0_notBefore(leaf));
    cr_expect(days == 0 && secs == -3600, "notBefore: %d days %d s from now", days, secs);
    ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(leaf), X509_get0_notAfter(leaf));
    cr_expect(days == 365 && secs == 0, "valid %d days %d s", days, secs);
    ASN1_TIME_free(t);
    /* RSA 2048, the leaf signed by the CA, only the CA a CA, the leaf for servers */
    EVP_PKEY *pk = X509_get0_pubkey(leaf);
    cr_expect_eq(EVP_PKEY_get_base_id(pk), EVP_PKEY_RSA);
    cr_expect_eq(EVP_PKEY_get_bits(pk), 2048);
    cr_expect_eq(X509_verify(leaf, X509_get0_pubkey(ca)), 1);
    cr_expect_eq(X509_check_ca(ca), 1);
    cr_expect_eq(X509_check_ca(leaf), 0);
    cr_expect_eq(X509_check_purpose(leaf, X509_PURPOSE_SSL_SERVER, 0), 1);
    cr_expect_eq(X509_get_signature_nid(leaf), NID_sha256WithRSAEncryption);
    /* the key is the leaf's, in the PKCS#1 form client-go writes */
    cr_expect(strncmp(key, "-----BEGIN RSA PRIVATE KEY-----", 31) == 0, "%.40s", key);
    BIO *kb = BIO_new_mem_buf(key, (int)klen);
    EVP_PKEY *priv = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
    cr_expect_eq(X509_check_private_key(leaf, priv), 1);
    EVP_PKEY_free(priv);
    BIO_free(kb);
    sk_X509_pop_free(chain, X509_free);
    free(cert);
    free(key);

    /* a specific bind address is one more name */
    cr_assert_eq(ks_tls_self_signed("10.1.2.3", now, &cert, &clen, &key, &klen), 0);
    chain = read_chain(cert, clen);
    sans_of(sk_X509_value(chain, 0), buf, sizeof(buf));
    cr_expect_str_eq(buf, "DNS:localhost,IP:127.0.0.1,IP:10.1.2.3");
    sk_X509_pop_free(chain, X509_free);
    free(cert);
    free(key);
    cr_expect_eq(ks_tls_self_signed("nonsense", now, &cert, &clen, &key, &klen), -EINVAL);
}

static char *tmpdir(void)
{
    char *d = strdup("/tmp/ksched-tls-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static void write_text(const char *path, const char *s, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(s, 1, len, f);
    fclose(f);
}

static void rm_rf(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(tls, given_files_are_used_and_bad_ones_refused)
{
    char *dir = tmpdir(), crt[256], keyf[256], other[256];
    snprintf(crt, sizeof(crt), "%s/tls.crt", dir);
    snprintf(keyf, sizeof(keyf), "%s/tls.key", dir);
    snprintf(other, sizeof(other), "%s/other.key", dir);
    char *cert, *key, *cert2, *key2;
    size_t clen, klen, clen2, klen2;
    cr_assert_eq(ks_tls_self_signed("10.9.9.9", 1700000000, &cert, &clen, &key, &klen), 0);
    cr_assert_eq(ks_tls_self_signed(NULL, 1700000001, &cert2, &clen2, &key2, &klen2), 0);
    write_text(crt, cert, clen);
    write_text(keyf, key, klen);
    write_text(other, key2, klen2);

    struct ks_tls *t;
    struct ks_tls_opts o = {.cert_file = crt, .key_file = keyf};
    cr_assert_eq(ks_tls_create(&o, &t), 0);
    cr_expect(strstr(ks_tls_describe(t), crt) && strstr(ks_tls_describe(t), "CN localhost@1700000000") &&
                  strstr(ks_tls_describe(t), "IP:10.9.9.9"),
              "%s", ks_tls_describe(t));
    X509 *x = SSL_CTX_get0_certificate(ks_tls_ctx(t));
    char cn[64];
    cn_of(X509_get_subject_name(x), cn, sizeof(cn));
    cr_expect_str_eq(cn, "localhost@1700000000", "the file's certificate is served");
    cr_expect_eq(ks_tls_refresh(t, 0, true), 0, "nothing changed");
    /* a new pair in the files is loaded; a broken one leaves the last good one */
    sleep(1); /* a new mtime */
    write_text(crt, cert2, clen2);
    write_text(keyf, key2, klen2);
    cr_expect_eq(ks_tls_refresh(t, 0, true), 1);
    cn_of(X509_get_subject_name(SSL_CTX_get0_certificate(ks_tls_ctx(t))), cn, sizeof(cn));
    cr_expect_str_eq(cn, "localhost@1700000001");
    write_text(crt, "garbage", 7);
    cr_expect_eq(ks_tls_refresh(t, 0, true), -EINVAL);
    cn_of(X509_get_subject_name(SSL_CTX_get0_certificate(ks_tls_ctx(t))), cn, sizeof(cn));
    cr_expect_str_eq(cn, "localhost@1700000001");
    ks_tls_destroy(t);

    /* bad input: -EINVAL (the message names the file and the flag) */
    write_text(crt, cert, clen);
    struct ks_tls_opts mismatch = {.cert_file = crt, .key_file = other};
    cr_expect_eq(ks_tls_create(&mismatch, &t), -EINVAL);
    struct ks_tls_opts missing = {.cert_file = "/nonexistent/tls.crt", .key_file = keyf};
    cr_expect_eq(ks_tls_create(&missing, &t), -EINVAL);
    struct ks_tls_opts not_pem = {.cert_file = keyf, .key_file = keyf};
    cr_expect_eq(ks_tls_create(&not_pem, &t), -EINVAL);
    free(cert);
    free(key);
    free(cert2);
    free(key2);
    rm_rf(dir);
    free(dir);
}

Test(tls, cert_dir_pair_made_once)
{
    char *dir = tmpdir(), sub[256], crt[300], keyf[300];
    snprintf(sub, sizeof(sub), "%s/certs", dir);
    snprintf(crt, sizeof(crt), "%s/kube-scheduler.crt", sub);
    snprintf(keyf, sizeof(keyf), "%s/kube-scheduler.key", sub);
    struct ks_tls *t;
    struct ks_tls_opts o = {.cert_dir = sub, .bind_ip = "0.0.0.0"};
    cr_assert_eq(ks_tls_create(&o, &t), 0);
    cr_expect(strstr(ks_tls_describe(t), "a new self-signed certificate"), "%s", ks_tls_describe(t));
    struct stat st;
    cr_assert_eq(stat(keyf, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "the key is private");
    cr_assert_eq(stat(crt, &st), 0);
    char cn1[64], cn2[64];
    cn_of(X509_get_subject_name(SSL_CTX_get0_certificate(ks_tls_ctx(t))), cn1, sizeof(cn1));
    ks_tls_destroy(t);
    sleep(1); /* a pair made now would have another name */
    cr_assert_eq(ks_tls_create(&o, &t), 0);
    cr_expect(strstr(ks_tls_describe(t), "the certificate"), "%s", ks_tls_describe(t));
    cn_of(X509_get_subject_name(SSL_CTX_get0_certificate(ks_tls_ctx(t))), cn2, sizeof(cn2));
    cr_expect_str_eq(cn1, cn2, "the pair in the folder is reused");
    ks_tls_destroy(t);
    rm_rf(dir);
    free(dir);
}

Test(tls, in_memory_by_default)
{
    struct ks_tls *t;
    struct ks_tls_opts o = {.bind_ip = "127.0.0.1", .tls13_only = true};
    cr_assert_eq(ks_tls_create(&o, &t), 0);
    cr_expect(strstr(ks_tls_describe(t), "made in memory (CN localhost@") &&
                  strstr(ks_tls_describe(t), "DNS:localhost, IP:127.0.0.1)"),
              "%s", ks_tls_describe(t));
    cr_expect_eq(SSL_CTX_get_min_proto_version(ks_tls_ctx(t)), TLS1_3_VERSION);
    cr_expect_eq(ks_tls_refresh(t, 0, true), 0, "nothing to reload");
    ks_tls_destroy(t);
}
