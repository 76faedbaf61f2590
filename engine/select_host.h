/*
 * select_host.h - selectHost: the best-scoring feasible node, ties broken at random.
 *
 * Internal to the scheduling loop (prioritize.c) and its micro-benchmark. Mirrors
 * schedule_one.go's selectHost: every node with the highest total is equally likely.
 */
#ifndef KSCHED_ENGINE_SELECT_HOST_H
#define KSCHED_ENGINE_SELECT_HOST_H

#include <stdint.h>

/* ks__xorshift - the next number of the xorshift64* generator whose state is *@state (non-zero). */
static inline uint64_t ks__xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* ks__draw - a number in [0, @n) from *@rng: 32 random bits mapped by multiplication (Lemire). */
static inline uint32_t ks__draw(uint64_t *rng, uint32_t n)
{
    return (uint32_t)(((ks__xorshift(rng) >> 32) * (uint64_t)n) >> 32);
}

/*
 * ks__select_host - the index of a node with the highest of @totals[0..@n) (@n >= 1),
 * chosen uniformly among the ties with one draw from *@rng when there is more than one.
 * Context: any thread; reads @totals only; allocation-free.
 */
uint32_t ks__select_host(const int64_t *totals, uint32_t n, uint64_t *rng);

#endif
