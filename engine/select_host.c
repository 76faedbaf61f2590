/*
 * select_host.c - selectHost over the feasible nodes' total scores.
 *
 * Upstream (schedule_one.go) keeps a randomised heap, or earlier reservoir-sampled every
 * tie with one random number per tie; either way each node with the best total wins with
 * equal probability. Here one pass finds the best total and how many nodes share it, one
 * random number picks the k-th of them, and a second pass stops at it: O(n) comparisons,
 * no division or random draw per tie (a run of thousands of equal scores is the normal
 * case on a fresh cluster). The draw maps 32 random bits onto [0, ties) by multiplication
 * (Lemire); its bias, below ties / 2^32, is far under what any test could see.
 */
#include "select_host.h"

uint32_t ks__select_host(const int64_t *totals, uint32_t n, uint64_t *rng)
{
    int64_t best = totals[0];
    uint32_t ties = 1, first = 0;
    for (uint32_t i = 1; i < n; i++) {
        int64_t t = totals[i];
        if (t > best) {
            best = t;
            ties = 1;
            first = i;
        } else {
            ties += t == best;
        }
    }
    if (ties == 1)
        return first;
    uint32_t k = ks__draw(rng, ties);
    for (uint32_t i = first;; i++) {
        if (totals[i] == best && k-- == 0)
            return i;
    }
}
