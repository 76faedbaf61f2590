/*
 * stress_rcu.c - RCU publish/read/reclaim torture, run under ThreadSanitizer.
 *
 * A writer publishes a new version of a record every iteration and retires the old one
 * through ks_rcu_call(); readers check, inside their read sections, that every word of
 * the record they see carries the same generation (a torn or freed record would not).
 * TSan must see no race: that checks the annotations of include/ksched/base/rcu.h.
 */
#include "ksched/base/rcu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { READERS = 3, WORDS = 32, WRITES = 20000 };

struct record {
    struct ks_rcu_head rcu;
    uint64_t gen;
    uint64_t words[WORDS];
};

static struct record *current;
static atomic_int done;
static atomic_ulong reads, freed;

static void free_record(struct ks_rcu_head *h)
{
    struct record *r = caa_container_of(h, struct record, rcu);
    for (int i = 0; i < WORDS; i++)
        r->words[i] = UINT64_MAX; /* poison: a late reader would see it */
    free(r);
    atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
}

static struct record *make(uint64_t gen)
{
    struct record *r = malloc(sizeof(*r));
    if (!r)
        abort();
    r->gen = gen;
    for (int i = 0; i < WORDS; i++)
        r->words[i] = gen * 31 + (uint64_t)i;
    return r;
}

static void *reader(void *arg)
{
    (void)arg;
    ks_rcu_register_thread();
    while (!atomic_load_explicit(&done, memory_order_acquire)) {
        ks_rcu_read_lock();
        struct record *r = ks_rcu_deref(current);
        for (int i = 0; i < WORDS; i++) {
            if (r->words[i] != r->gen * 31 + (uint64_t)i) {
                fprintf(stderr, "torn record: gen %llu word %d\n", (unsigned long long)r->gen, i);
                abort();
            }
        }
        ks_rcu_read_unlock();
        atomic_fetch_add_explicit(&reads, 1, memory_order_relaxed);
    }
    ks_rcu_unregister_thread();
    return NULL;
}

int main(void)
{
    pthread_t t[READERS];

    ks_rcu_register_thread();
    ks_rcu_publish(current, make(0));
    for (int i = 0; i < READERS; i++)
        pthread_create(&t[i], NULL, reader, NULL);
    for (uint64_t gen = 1; gen <= WRITES; gen++) {
        struct record *old = current; /* only this thread writes `current` */
        ks_rcu_publish(current, make(gen));
        ks_rcu_call(&old->rcu, free_record);
    }
    atomic_store_explicit(&done, 1, memory_order_release);
    for (int i = 0; i < READERS; i++)
        pthread_join(t[i], NULL);
    struct record *last = current;
    ks_rcu_synchronize();
    free(last);
    ks_rcu_barrier();
    ks_rcu_unregister_thread();
    unsigned long f = atomic_load(&freed), r = atomic_load(&reads);
    printf("stress_rcu: %d versions published, %lu reclaimed, %lu reads\n", WRITES, f, r);
    if (f != WRITES) {
        fprintf(stderr, "stress_rcu: expected %d reclaimed versions\n", WRITES);
        return 1;
    }
    return 0;
}
