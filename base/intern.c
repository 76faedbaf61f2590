/*
 * intern.c - the process-wide string table behind include/ksched/base/intern.h.
 *
 * Insertion: a mutex-protected open-addressing hash of ids (linear probing, load factor
 * at most 1/2, resized by doubling). Reading an id's string: a two-level table of fixed
 * chunks that never move once published, so ks_intern_str() needs no lock. Strings are
 * copied into large append-only pages owned by the table.
 *
 * Invariant: ids are dense, 0 is "", and an id's chunk pointer is published with a
 * release store before the id is returned to any caller.
 */
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum {
    CHUNK_BITS = 14,
    CHUNK_SIZE = 1 << CHUNK_BITS,
    MAX_CHUNKS = 1 << 14, /* 2^28 strings */
    PAGE_SIZE_BYTES = 256 * 1024,
};

struct str_page {
    struct str_page *next;
    size_t used, cap;
    char data[];
};

static struct ks_mutex lock = KS_MUTEX_INITIALIZER(KS_LOCK_INTERN);
static _Atomic(const char **) chunks[MAX_CHUNKS];
static uint32_t *slots; /* hash slots holding id + 1, 0 = free; guarded by lock */
static uint32_t nslots;
static _Atomic uint32_t count; /* ids handed out; guarded by lock for writers */
static struct str_page *pages;

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static const char *id_str(uint32_t id)
{
    /* Acquire pairs with the release store in publish(): the chunk's contents are visible. */
    const char **chunk = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return chunk[id & (CHUNK_SIZE - 1)];
}

static int same(uint32_t id, const char *s, size_t len)
{
    const char *t = id_str(id);
    return strncmp(t, s, len) == 0 && t[len] == '\0';
}

static char *copy_string(const char *s, size_t len)
{
    if (!pages || pages->cap - pages->used < len + 1) {
        size_t cap = len + 1 > PAGE_SIZE_BYTES ? len + 1 : PAGE_SIZE_BYTES;
        struct str_page *p = malloc(sizeof(*p) + cap);
        if (!p)
            return NULL;
        p->next = pages;
        p->used = 0;
        p->cap = cap;
        pages = p;
    }
    char *d = pages->data + pages->used;
    memcpy(d, s, len);
    d[len] = '\0';
    pages->used += len + 1;
    return d;
}

static uint32_t *probe(const char *s, size_t len, uint64_t h)
{
    uint32_t mask = nslots - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        if (slots[i] == 0 || same(slots[i] - 1, s, len))
            return &slots[i];
    }
}

static int grow(void)
{
    uint32_t n = nslots ? nslots * 2 : 1024;
    uint32_t *fresh = calloc(n, sizeof(*fresh));
    if (!fresh)
        return -1;
    uint32_t *old = slots, oldn = nslots;
    slots = fresh;
    nslots = n;
    for (uint32_t i = 0; i < oldn; i++) {
        if (old[i]) {
            const char *t = id_str(old[i] - 1);
            *probe(t, strlen(t), hash_bytes(t, strlen(t))) = old[i];
        }
    }
    free(old);
    return 0;
}

/* Called with lock held: give @str the next id. */
static uint32_t publish(const char *str)
{
    ks_mutex_assert_held(&lock);
    uint32_t id = atomic_load_explicit(&count, memory_order_relaxed);
    if (id >= (uint32_t)MAX_CHUNKS * CHUNK_SIZE)
        return KS_ID_NONE;
    const char **chunk = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_relaxed);
    if (!chunk) {
        chunk = calloc(CHUNK_SIZE, sizeof(*chunk));
        if (!chunk)
            return KS_ID_NONE;
    }
    chunk[id & (CHUNK_SIZE - 1)] = str;
    /* Release: the entry written above is visible to any reader that sees this chunk. */
    atomic_store_explicit(&chunks[id >> CHUNK_BITS], chunk, memory_order_release);
    atomic_store_explicit(&count, id + 1, memory_order_release);
    return id;
}

static uint32_t insert_locked(const char *s, size_t len)
{
    if (atomic_load_explicit(&count, memory_order_relaxed) == 0 && publish("") != KS_ID_EMPTY)
        return KS_ID_NONE;
    if ((atomic_load_explicit(&count, memory_order_relaxed) + 1) * 2 > nslots && grow() < 0)
        return KS_ID_NONE;
    if (len == 0)
        return KS_ID_EMPTY;
    uint32_t *slot = probe(s, len, hash_bytes(s, len));
    if (*slot)
        return *slot - 1;
    char *copy = copy_string(s, len);
    if (!copy)
        return KS_ID_NONE;
    uint32_t id = publish(copy);
    if (id != KS_ID_NONE)
        *slot = id + 1;
    return id;
}

uint32_t ks_intern_n(const char *s, size_t len)
{
    ks_mutex_lock(&lock);
    uint32_t id = insert_locked(s, len);
    ks_mutex_unlock(&lock);
    return id;
}

uint32_t ks_intern(const char *s)
{
    return ks_intern_n(s, strlen(s));
}

uint32_t ks_intern_find(const char *s, size_t len)
{
    uint32_t id = KS_ID_NONE;
    ks_mutex_lock(&lock);
    if (len == 0 && atomic_load_explicit(&count, memory_order_relaxed) > 0) {
        id = KS_ID_EMPTY;
    } else if (nslots) {
        uint32_t slot = *probe(s, len, hash_bytes(s, len));
        if (slot)
            id = slot - 1;
    }
    ks_mutex_unlock(&lock);
    return id;
}

/* @fn applied to "@ns/@name", or to @name alone when @ns is KS_ID_NONE. */
static uint32_t with_ns_name(uint32_t ns, const char *name, uint32_t (*fn)(const char *s, size_t len))
{
    if (ns == KS_ID_NONE)
        return fn(name, strlen(name));
    const char *nss = ks_intern_str(ns);
    size_t a = strlen(nss), b = strlen(name);
    char small[256];
    char *buf = a + b + 2 <= sizeof(small) ? small : malloc(a + b + 2);
    if (!buf)
        return KS_ID_NONE;
    memcpy(buf, nss, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b);
    uint32_t id = fn(buf, a + b + 1);
    if (buf != small)
        free(buf);
    return id;
}

uint32_t ks_intern_ns_name(uint32_t ns, const char *name)
{
    return with_ns_name(ns, name, ks_intern_n);
}

uint32_t ks_intern_find_ns_name(uint32_t ns, const char *name)
{
    return with_ns_name(ns, name, ks_intern_find);
}

const char *ks_intern_str(uint32_t id)
{
    if (id >= atomic_load_explicit(&count, memory_order_acquire))
        return "";
    return id_str(id);
}

uint32_t ks_intern_count(void)
{
    return atomic_load_explicit(&count, memory_order_acquire);
}

void ks_intern_reset(void)
{
    ks_mutex_lock(&lock);
    for (uint32_t c = 0; c < MAX_CHUNKS; c++) {
        const char **chunk = atomic_load_explicit(&chunks[c], memory_order_relaxed);
        if (!chunk)
            break;
        free((void *)chunk);
        atomic_store_explicit(&chunks[c], NULL, memory_order_relaxed);
    }
    while (pages) {
        struct str_page *next = pages->next;
        free(pages);
        pages = next;
    }
    free(slots);
    slots = NULL;
    nslots = 0;
    atomic_store_explicit(&count, 0, memory_order_release);
    ks_mutex_unlock(&lock);
}
