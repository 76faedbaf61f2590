/*
 * test_lock_order.c - the lock-order checker of include/ksched/lock.h: locks taken in
 * rank order pass and are recorded, and a thread that takes a rank lower than or equal to
 * one it holds (or releases a rank it does not hold) aborts, naming both locks. This file
 * turns the checker on itself, so it runs in every build type, Release included.
 */
#ifndef KS_LOCK_CHECK
#define KS_LOCK_CHECK 1
#endif
#include <criterion/criterion.h>

#include "ksched/lock.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIT(r) (UINT64_C(1) << (r))

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t c = PTHREAD_MUTEX_INITIALIZER;

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
    ks_mutex_lock(&a, KS_LOCK_BIND);
    ks_mutex_lock(&b, KS_LOCK_CACHE);
    ks_mutex_lock(&c, KS_LOCK_INTERN);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_BIND) | BIT(KS_LOCK_CACHE) | BIT(KS_LOCK_INTERN));
    ks_mutex_unlock(&c, KS_LOCK_INTERN);
    ks_mutex_unlock(&b, KS_LOCK_CACHE);
    /* a released rank may be taken again under the ones still held */
    ks_mutex_lock(&b, KS_LOCK_QUEUE);
    ks_mutex_unlock(&b, KS_LOCK_QUEUE);
    ks_mutex_unlock(&a, KS_LOCK_BIND);
    cr_assert_eq(ks__lock_held.mask, 0, "held after release: %#llx", (unsigned long long)ks__lock_held.mask);
}

Test(lock_order, unlock_order_is_free)
{
    ks_mutex_lock(&a, KS_LOCK_SERVE_VOLUMES);
    ks_mutex_lock(&b, KS_LOCK_INTERN);
    ks_mutex_unlock(&a, KS_LOCK_SERVE_VOLUMES);
    ks_mutex_unlock(&b, KS_LOCK_INTERN);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, trylock_and_polling_lock_record_the_rank)
{
    cr_assert_eq(ks_mutex_trylock(&a, KS_LOCK_BIND), 0);
    ks_mutex_lock_polling(&b, KS_LOCK_CACHE, 1000);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_BIND) | BIT(KS_LOCK_CACHE));
    ks_mutex_unlock(&b, KS_LOCK_CACHE);
    ks_mutex_unlock(&a, KS_LOCK_BIND);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, inner_then_outer_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&a, KS_LOCK_CACHE);
    ks_mutex_lock(&b, KS_LOCK_BIND);
}

Test(lock_order, two_locks_of_one_rank_abort, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&a, KS_LOCK_QUEUE);
    ks_mutex_lock(&b, KS_LOCK_QUEUE);
}

Test(lock_order, out_of_order_trylock_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&a, KS_LOCK_INTERN);
    ks_mutex_trylock(&b, KS_LOCK_CACHE);
}

Test(lock_order, releasing_a_rank_not_held_aborts, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&a, KS_LOCK_CACHE);
    ks_mutex_unlock(&a, KS_LOCK_QUEUE);
}

Test(lock_order, curl_share_locks_nest_within_their_rank)
{
    ks_mutex_lock(&a, KS_LOCK_QUEUE);
    ks_mutex_lock(&b, KS_LOCK_CURL_SHARE);
    ks_mutex_lock(&c, KS_LOCK_CURL_SHARE);
    ks_mutex_unlock(&b, KS_LOCK_CURL_SHARE);
    cr_assert_eq(ks__lock_held.mask, BIT(KS_LOCK_QUEUE) | BIT(KS_LOCK_CURL_SHARE));
    ks_mutex_unlock(&c, KS_LOCK_CURL_SHARE);
    ks_mutex_unlock(&a, KS_LOCK_QUEUE);
    cr_assert_eq(ks__lock_held.mask, 0);
}

Test(lock_order, nothing_is_taken_under_curl_share_locks, .signal = SIGABRT)
{
    quiet_stderr();
    ks_mutex_lock(&a, KS_LOCK_CURL_SHARE);
    ks_mutex_lock(&b, KS_LOCK_INTERN);
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
    ks_mutex_lock(&a, KS_LOCK_QUEUE);
    ks_mutex_lock(&b, KS_LOCK_SERVE_VOLUMES);
}

static void right_order(void)
{
    ks_mutex_lock(&a, KS_LOCK_SERVE_VOLUMES);
    ks_mutex_lock(&b, KS_LOCK_QUEUE);
    ks_mutex_unlock(&b, KS_LOCK_QUEUE);
    ks_mutex_unlock(&a, KS_LOCK_SERVE_VOLUMES);
}

Test(lock_order, the_abort_names_both_locks)
{
    char msg[1024];
    int status = run_child(wrong_order, msg, sizeof(msg));
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %#x, stderr: %s", status,
              msg);
    cr_assert_str_eq(msg,
                     "ksched: lock order violated: taking KS_LOCK_SERVE_VOLUMES (serve/serve_volumes.c lock) "
                     "while holding KS_LOCK_QUEUE (queue/queue.c slow) (include/ksched/lock.h)\n");

    status = run_child(right_order, msg, sizeof(msg));
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x, stderr: %s", status, msg);
    cr_assert_str_empty(msg);
}

static void under_two_inner_locks(void)
{
    ks_mutex_lock(&a, KS_LOCK_CACHE);
    ks_mutex_lock(&b, KS_LOCK_INTERN);
    ks_mutex_lock(&c, KS_LOCK_BIND);
}

Test(lock_order, the_abort_names_the_innermost_lock_held)
{
    char msg[1024];
    int status = run_child(under_two_inner_locks, msg, sizeof(msg));
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %#x", status);
    cr_assert(strstr(msg, "taking KS_LOCK_BIND") && strstr(msg, "while holding KS_LOCK_INTERN"), "stderr: %s",
              msg);
}

Test(lock_order, every_rank_has_a_name)
{
    for (int r = 0; r < KS_LOCK_RANK_COUNT; r++)
        cr_assert(strncmp(ks_lock_rank_name((enum ks_lock_rank)r), "KS_LOCK_", 8) == 0, "rank %d: %s", r,
                  ks_lock_rank_name((enum ks_lock_rank)r));
    cr_assert_str_eq(ks_lock_rank_name(KS_LOCK_RANK_COUNT), "?");
}
