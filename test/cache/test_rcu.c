/*
 * test_rcu.c - the reclaimer of include/ksched/base/rcu.h: callbacks wait for the read sections
 * that could see their object, run in the order of the calls, and ks_rcu_barrier() waits
 * for all of them.
 */
#include "ksched/base/rcu.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

struct obj {
    struct ks_rcu_head rcu;
    int id;
};

enum { NCALLS = 1000 };

static atomic_int ran, out_of_order;
static int last_id = -1;

static void record(struct ks_rcu_head *h)
{
    struct obj *o = caa_container_of(h, struct obj, rcu);
    if (o->id != last_id + 1) /* callbacks run one at a time: last_id needs no atomics */
        atomic_fetch_add(&out_of_order, 1);
    last_id = o->id;
    atomic_fetch_add(&ran, 1);
}

Test(rcu, callbacks_run_in_call_order)
{
    static struct obj objs[NCALLS];
    atomic_store(&ran, 0);
    atomic_store(&out_of_order, 0);
    last_id = -1;
    for (int i = 0; i < NCALLS; i++) {
        objs[i].id = i;
        ks_rcu_call(&objs[i].rcu, record);
        if (i % 97 == 0) { /* let some batches be taken while calls keep coming */
            struct timespec ts = {0, 200 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    ks_rcu_barrier();
    cr_assert_eq(atomic_load(&ran), NCALLS);
    cr_assert_eq(atomic_load(&out_of_order), 0);
}

static atomic_int reader_in, reader_release;

static void *hold_read_section(void *arg)
{
    (void)arg;
    ks_rcu_register_thread();
    ks_rcu_read_lock();
    atomic_store(&reader_in, 1);
    while (!atomic_load(&reader_release)) {
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
    ks_rcu_read_unlock();
    ks_rcu_unregister_thread();
    return NULL;
}

static atomic_int freed;

static void mark_freed(struct ks_rcu_head *h)
{
    (void)h;
    atomic_store(&freed, 1);
}

Test(rcu, a_callback_waits_for_the_read_sections_before_it)
{
    static struct obj o;
    pthread_t t;
    atomic_store(&reader_in, 0);
    atomic_store(&reader_release, 0);
    atomic_store(&freed, 0);
    cr_assert_eq(pthread_create(&t, NULL, hold_read_section, NULL), 0);
    while (!atomic_load(&reader_in))
        sched_yield();
    ks_rcu_call(&o.rcu, mark_freed);
    /* several of the reclaimer's pauses: it took the call and waits in the grace period */
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cr_assert_eq(atomic_load(&freed), 0,
                 "a callback ran while a reader that could see its object was inside");
    atomic_store(&reader_release, 1);
    ks_rcu_barrier();
    cr_assert_eq(atomic_load(&freed), 1);
    pthread_join(t, NULL);
}

#ifdef KS_LOCK_CHECK
#include <signal.h>

/* The rules rcu.h states, checked in the debug and sanitizer builds. */
Test(rcu, a_barrier_inside_a_read_section_aborts, .signal = SIGABRT)
{
    ks_rcu_register_thread();
    ks_rcu_read_lock();
    ks_rcu_barrier(); /* would wait for a grace period that waits for this section */
}

static void barrier_in_callback(struct ks_rcu_head *h)
{
    (void)h;
    ks_rcu_barrier(); /* would wait for itself */
}

Test(rcu, a_barrier_from_a_callback_aborts, .signal = SIGABRT)
{
    static struct ks_rcu_head h;
    ks_rcu_register_thread();
    ks_rcu_call(&h, barrier_in_callback);
    ks_rcu_barrier();
}

Test(rcu, reading_is_asserted_where_the_contract_says_so, .signal = SIGABRT)
{
    ks_rcu_register_thread();
    ks_rcu_read_lock();
    ks_rcu_assert_reading();
    ks_rcu_read_unlock();
    ks_rcu_assert_not_reading();
    ks_rcu_assert_reading(); /* outside: aborts */
}
#endif
