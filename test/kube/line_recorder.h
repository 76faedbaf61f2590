/*
 * line_recorder.h - what the informer tests share: the lines an informer's callbacks
 * record (on its thread), read by the test once wait_lines() has seen enough of them.
 *
 * Used by test_informer.c and test_proto_client.c. Initialise with RECORDER_INIT.
 */
#ifndef KSCHED_TEST_LINE_RECORDER_H
#define KSCHED_TEST_LINE_RECORDER_H

#include <pthread.h>
#include <stdio.h>
#include <time.h>

struct recorder {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char lines[128][160];
    int n;
    int errors; /* for a test's error callback */
    char last_error[512];
};

#define RECORDER_INIT                                                                                        \
    {                                                                                                        \
        .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER                                  \
    }

/* record - append @line (the first 128 lines are kept, each cut at 159 bytes). Any thread. */
static inline void record(struct recorder *r, const char *line)
{
    pthread_mutex_lock(&r->lock);
    if (r->n < 128)
        snprintf(r->lines[r->n++], sizeof(r->lines[0]), "%s", line);
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* wait_lines - until @n lines are recorded, or 20 s have passed (a deadlock guard, not a timing assertion).
 */
static inline void wait_lines(struct recorder *r, int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&r->lock);
    while (r->n < n && pthread_cond_timedwait(&r->cond, &r->lock, &until) == 0)
        ;
    pthread_mutex_unlock(&r->lock);
}

#endif
