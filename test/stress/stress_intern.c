/*
 * stress_intern.c - concurrent interning, run under ThreadSanitizer.
 *
 * Threads intern overlapping sets of strings in different orders while others read ids
 * back with ks_intern_str(); every thread must get the same id for the same string and
 * every id must read back as its string.
 */
#include "ksched/base/intern.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { THREADS = 4, STRINGS = 20000 };

static uint32_t ids[THREADS][STRINGS];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    char buf[32];
    for (int k = 0; k < STRINGS; k++) {
        int i = (t % 2) ? STRINGS - 1 - k : k; /* half the threads go backwards */
        snprintf(buf, sizeof(buf), "label-%d", i);
        ids[t][i] = ks_intern(buf);
        if (strcmp(ks_intern_str(ids[t][i]), buf) != 0) {
            fprintf(stderr, "id %u reads back as %s, want %s\n", ids[t][i], ks_intern_str(ids[t][i]), buf);
            return (void *)1;
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    int bad = 0;
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++) {
        void *rc;
        pthread_join(th[t], &rc);
        bad |= rc != NULL;
    }
    for (int i = 0; i < STRINGS; i++) {
        for (int t = 1; t < THREADS; t++)
            bad |= ids[t][i] != ids[0][i];
    }
    printf("stress_intern: %d strings by %d threads, %u interned, %s\n", STRINGS, THREADS, ks_intern_count(),
           bad ? "MISMATCH" : "consistent");
    ks_intern_reset();
    return bad;
}
