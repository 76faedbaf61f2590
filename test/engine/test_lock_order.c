/*
 * test_lock_order.c - the lock checker of include/ksched/base/lock.h: locks taken in rank order
 * pass and are recorded, a thread that takes a rank lower than or equal to one it holds
 * aborts naming both locks, and releasing, waiting on or asserting a mutex the thread does
 * not hold aborts. This file turns the checker on itself, so it runs in every build type,
 * Release included.
 */
#ifndef KS_LOCK_CHECK
#define KS_LOCK_CHECK 1
#endif
#include <criterion/criterion.h>

#include "ksched/base/lock.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIT(r) (UINT64_C(1) << (r))

/* One mutex per rank the tests use, and a second of some ranks. */
static struct ks_mutex bind_m = KS_MUTEX_INITIALIZER(KS_LOCK_BIND);
static struct ks_mutex cache_m = KS_MUTEX_INITIALIZER(KS_LOCK_CACHE);
static struct ks_mutex intern_m = KS_MUTEX_INITIALIZER(KS_LOCK_INTERN);
static struct ks_mutex queue_m = KS_MUTEX_INITIALIZER(KS_LOCK_QUEUE);
static struct ks_mutex queue2_m = KS_MUTEX_INITIALIZER(KS_LOCK_QUEUE);
static struct ks_mutex volumes_m = KS_MUTEX_INITIALIZER(KS_LOCK_SERVE_VOLUMES);
static struct ks_mutex share1_m = KS_MUTEX_INITIALIZER(KS_LOCK_CURL_SHARE);
static struct ks_mutex share2_m = KS_MUTEX_INITIALIZER(KS_LOCK_CURL_SHARE);

/* The tests that abort keep the checker's message out of the suite's output. */
static void quiet_stderr(void)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
}

Test(lock_order, outer_then_inner_is_recorded_and_released)
{
    ks_mutex_lock(&bind_m);
    ks_mutex_lock(&cache_m);
    ks_mutex_lock(&intern_m);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_BIND) | BIT(KS_LOCK_CACHE) | BIT(KS_LOCK_INTERN));
    ks_mutex_unlock(&intern_m);
    ks_mutex_unlock(&cache_m);
    /* a released rank may be taken again under the ones still held */
    ks_mutex_lock(&cache_m);
    ks_mutex_unlock(&cache_m);
    ks_mutex_unlock(&bind_m);
    cr_assert_eq(ks__lock_held.mask, 0, "held after release: %#llx", (unsigned long long)ks__lock_held.mask);
}

Test(lock_order, the_rank_is_bound_at_init)
{
    struct ks_mutex m;
    cr_assert_eq(ks_mutex_init(&m, KS_LOCK_NOMINATOR), 0);
    cr_assert_eq(m.rank, KS_LOCK_NOMINATOR);
    ks_mutex_lock(&m);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_NOMINATOR));
    ks_mutex_unlock(&m);
    ks_mutex_destroy(&m);
    cr_assert_eq(ks_mutex_init_adaptive(&m, KS_LOCK_QUEUE_POD), 0);
    cr_assert_eq(m.rank, KS_LOCK_QUEUE_POD);
    ks_mutex_destroy(&m);
}

Test(lock_order, unlock_order_is_free)
{
    ks_mutex_lock(&volumes_m);
    ks_mutex_lock(&intern_m);
    ks_mutex_unlock(&volumes_m);
    ks_mutex_unlock(&intern_m);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, trylock_and_polling_lock_record_the_rank)
{
    cr_assert_eq(ks_mutex_trylock(&bind_m), 0);
    ks_mutex_lock_polling(&cache_m, 1000);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_BIND) | BIT(KS_LOCK_CACHE));
    ks_mutex_assert_held(&bind_m);
    ks_mutex_assert_held(&cache_m);
    ks_mutex_unlock(&cache_m);
    ks_mutex_unlock(&bind_m);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, inner_then_outer_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&cache_m);
    ks_mutex_lock(&bind_m);
}

Test(lock_order, two_locks_of_one_rank_abort, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&queue_m);
    ks_mutex_lock(&queue2_m);
}

Test(lock_order, out_of_order_trylock_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&intern_m);
    ks_mutex_trylock(&cache_m);
}

Test(lock_order, releasing_a_mutex_not_held_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&queue_m);
    /* the rank is held, this mutex is not */
    ks_mutex_unlock(&queue2_m);
}

Test(lock_order, assert_held_names_the_mutex_not_the_rank, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&queue_m);
    ks_mutex_assert_held(&queue_m);
    ks_mutex_assert_held(&queue2_m);
}

static void *hold_queue(void *arg)
{
    (void)arg;
    ks_mutex_lock(&queue_m);
    ks_mutex_unlock(&queue_m);
    return NULL;
}

Test(lock_order, assert_held_fails_for_another_threads_hold, .signal = SIGABRT)
{
    quiet_stderr();
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, hold_queue, NULL), 0);
    pthread_join(t, NULL);
    /* the other thread held and released it: nobody holds it now */
    ks_mutex_assert_held(&queue_m);
}

static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *signal_under_lock(void *arg)
{
    (void)arg;
    ks_mutex_lock(&queue_m);
    /* while the test waits, this thread is the owner */
    ks_mutex_assert_held(&queue_m);
    pthread_cond_signal(&cv);
    ks_mutex_unlock(&queue_m);
    return NULL;
}

Test(lock_order, cond_wait_hands_the_mutex_over_and_back)
{
    pthread_t t;
    ks_mutex_lock(&queue_m);
    cr_assert_eq(pthread_create(&t, NULL, signal_under_lock, NULL), 0);
    ks_cond_wait(&cv, &queue_m);
    ks_mutex_assert_held(&queue_m);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_QUEUE));
    ks_mutex_unlock(&queue_m);
    pthread_join(t, NULL);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, cond_wait_on_a_mutex_not_held_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    ks_cond_timedwait(&cv, &queue_m, &now);
}

Test(lock_order, curl_share_locks_nest_within_their_rank)
{
    ks_mutex_lock(&queue_m);
    ks_mutex_lock(&share1_m);
    ks_mutex_lock(&share2_m);
    ks_mutex_unlock(&share1_m);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_QUEUE) | BIT(KS_LOCK_CURL_SHARE));
    ks_mutex_unlock(&share2_m);
    ks_mutex_unlock(&queue_m);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, nothing_is_taken_under_curl_share_locks, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&share1_m);
    ks_mutex_lock(&intern_m);
}

/* Runs @fn in a child with stderr to a pipe: the child's exit status, and what it wrote in @buf. */
static int run_child(void (*fn)(void), char *buf, size_t len)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t off = 0;
    ssize_t n;
    while (off + 1 < len && (n = read(fds[0], buf + off, len - 1 - off)) > 0)
        off += (size_t)n;
    buf[off] = '\0';
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

static void wrong_order(void)
{
    ks_mutex_lock(&queue_m);
    ks_mutex_lock(&volumes_m);
}

static void right_order(void)
{
    ks_mutex_lock(&volumes_m);
    ks_mutex_lock(&queue_m);
    ks_mutex_unlock(&queue_m);
    ks_mutex_unlock(&volumes_m);
}

Test(lock_order, the_abort_names_both_locks)
{
    char msg[1024];
    int status = run_child(wrong_order, msg, sizeof(msg));
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %#x, stderr: %s", status,
              msg);
    cr_assert_str_eq(msg,
                     "ksched: lock order violated: taking KS_LOCK_SERVE_VOLUMES (serve/serve_volumes.c lock) "
                     "while holding KS_LOCK_QUEUE (queue/queue.c slow) (include/ksched/base/lock.h)\n");

    status = run_child(right_order, msg, sizeof(msg));
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x, stderr: %s", status, msg);
    cr_assert_str_empty(msg);
}

static void under_two_inner_locks(void)
{
    ks_mutex_lock(&cache_m);
    ks_mutex_lock(&intern_m);
    ks_mutex_lock(&bind_m);
}

static void release_unheld(void)
{
    ks_mutex_lock(&queue_m);
    ks_mutex_unlock(&queue2_m);
}

Test(lock_order, the_abort_names_the_innermost_lock_held)
{
    char msg[1024];
    int status = run_child(under_two_inner_locks, msg, sizeof(msg));
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %#x", status);
    cr_assert(strstr(msg, "taking KS_LOCK_BIND") && strstr(msg, "while holding KS_LOCK_INTERN"), "stderr: %s",
              msg);
}

Test(lock_order, the_misuse_abort_names_the_lock)
{
    char msg[1024];
    int status = run_child(release_unheld, msg, sizeof(msg));
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %#x", status);
    cr_assert_str_eq(msg,
                     "ksched: lock misuse: releasing KS_LOCK_QUEUE (queue/queue.c slow), which this thread "
                     "does not hold\n");
}

Test(lock_order, every_rank_has_a_name)
{
    for (int r = 0; r < KS_LOCK_RANK_COUNT; r++)
        cr_assert(strncmp(ks_lock_rank_name((enum ks_lock_rank)r), "KS_LOCK_", 8) == 0, "rank %d: %s", r,
                  ks_lock_rank_name((enum ks_lock_rank)r));
    cr_assert_str_eq(ks_lock_rank_name(KS_LOCK_RANK_COUNT), "?");
}
