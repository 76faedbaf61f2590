/*
 * serve_auth_cache.c - the answers of TokenReviews and SubjectAccessReviews kept for a
 * while (serve/serve.h), as k8s.io/apiserver's token cache and the webhook authorizer's
 * LRU expiring cache keep them.
 *
 * A bounded map from a key to a byte string with an expiry time. Keys are kept only as a
 * salted SHA-256 (the salt is random per cache), so a token never stays in memory in the
 * clear; values are copied in and out. At capacity the least recently used entry goes;
 * an expired entry is dropped when it is next looked at (or when it is the least recently
 * used one and room is needed).
 *
 * Invariant: every entry is in its hash bucket and in the LRU list (most recent first).
 * Thread-safe: one mutex, held only to look up, copy and link (never across a request).
 */
#include "serve.h"

#include "ksched/base/lock.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct entry *hnext;       /* bucket chain */
    struct entry *prev, *next; /* LRU list */
    unsigned char digest[32];
    int64_t expires_ns;
    size_t len;
    char value[];
};

struct ks_auth_cache {
    struct ks_mutex lock;
    struct entry **buckets;
    uint32_t nbuckets, n, cap;
    struct entry lru; /* sentinel: lru.next is the most recent */
    unsigned char salt[32];
};

int ks_auth_cache_create(uint32_t capacity, struct ks_auth_cache **out)
{
    struct ks_auth_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->cap = capacity ? capacity : 1;
    c->nbuckets = 16;
    while (c->nbuckets < c->cap && c->nbuckets < (1u << 20))
        c->nbuckets <<= 1;
    if (!(c->buckets = calloc(c->nbuckets, sizeof(*c->buckets)))) {
        free(c);
        return -ENOMEM;
    }
    if (RAND_bytes(c->salt, sizeof(c->salt)) != 1) {
        free(c->buckets);
        free(c);
        return -EIO;
    }
    c->lru.next = c->lru.prev = &c->lru;
    ks_mutex_init(&c->lock, KS_LOCK_SERVE_AUTH_CACHE);
    *out = c;
    return 0;
}

void ks_auth_cache_destroy(struct ks_auth_cache *c)
{
    if (!c)
        return;
    for (struct entry *e = c->lru.next, *next; e != &c->lru; e = next) {
        next = e->next;
        free(e);
    }
    ks_mutex_destroy(&c->lock);
    free(c->buckets);
    free(c);
}

static int digest(const struct ks_auth_cache *c, const char *key, size_t klen, unsigned char out[32])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned int n = 0;
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
             EVP_DigestUpdate(md, c->salt, sizeof(c->salt)) && EVP_DigestUpdate(md, key, klen) &&
             EVP_DigestFinal_ex(md, out, &n) && n == 32;
    EVP_MD_CTX_free(md);
    return ok ? 0 : -ENOMEM;
}

static uint32_t bucket_of(const struct ks_auth_cache *c, const unsigned char d[32])
{
    uint32_t h;
    memcpy(&h, d, sizeof(h));
    return h & (c->nbuckets - 1);
}

static struct entry **find(struct ks_auth_cache *c, const unsigned char d[32])
{
    struct entry **p = &c->buckets[bucket_of(c, d)];
    while (*p && memcmp((*p)->digest, d, 32) != 0)
        p = &(*p)->hnext;
    return p;
}

static void unlink_lru(struct entry *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
}

static void push_front(struct ks_auth_cache *c, struct entry *e)
{
    e->next = c->lru.next;
    e->prev = &c->lru;
    c->lru.next->prev = e;
    c->lru.next = e;
}

/* Remove the entry *p points at (its bucket link). Lock held. */
static void drop(struct ks_auth_cache *c, struct entry **p)
{
    ks_mutex_assert_held(&c->lock);
    struct entry *e = *p;
    *p = e->hnext;
    unlink_lru(e);
    free(e);
    c->n--;
}

int ks_auth_cache_get(struct ks_auth_cache *c, const char *key, size_t klen, int64_t now_ns, char **value,
                      size_t *len)
{
    unsigned char d[32];
    if (digest(c, key, klen, d) < 0)
        return -ENOMEM;
    int rc = -ENOENT;
    ks_mutex_lock(&c->lock);
    struct entry **p = find(c, d);
    if (*p && (*p)->expires_ns <= now_ns) {
        drop(c, p);
    } else if (*p) {
        struct entry *e = *p;
        unlink_lru(e);
        push_front(c, e);
        if ((*value = malloc(e->len + 1))) {
            memcpy(*value, e->value, e->len);
            (*value)[e->len] = '\0';
            *len = e->len;
            rc = 0;
        } else {
            rc = -ENOMEM;
        }
    }
    ks_mutex_unlock(&c->lock);
    return rc;
}

int ks_auth_cache_put(struct ks_auth_cache *c, const char *key, size_t klen, const char *value, size_t len,
                      int64_t now_ns, int64_t ttl_ns)
{
    if (ttl_ns <= 0)
        return 0;
    unsigned char d[32];
    if (digest(c, key, klen, d) < 0)
        return -ENOMEM;
    struct entry *e = malloc(sizeof(*e) + len + 1);
    if (!e)
        return -ENOMEM;
    memcpy(e->digest, d, 32);
    e->expires_ns = now_ns + ttl_ns;
    e->len = len;
    memcpy(e->value, value, len);
    e->value[len] = '\0';
    ks_mutex_lock(&c->lock);
    struct entry **p = find(c, d);
    if (*p)
        drop(c, p);
    while (c->n >= c->cap) {
        /* the least recently used goes; it is the oldest too when all share one TTL */
        struct entry *old = c->lru.prev;
        drop(c, find(c, old->digest));
    }
    e->hnext = c->buckets[bucket_of(c, d)];
    c->buckets[bucket_of(c, d)] = e;
    push_front(c, e);
    c->n++;
    ks_mutex_unlock(&c->lock);
    return 0;
}

uint32_t ks_auth_cache_len(struct ks_auth_cache *c)
{
    ks_mutex_lock(&c->lock);
    uint32_t n = c->n;
    ks_mutex_unlock(&c->lock);
    return n;
}
