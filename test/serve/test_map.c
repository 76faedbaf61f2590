/*
 * test_map.c - the string-keyed hash map of serve/serve.h (serve/serve_map.c): its hash is
 * 64-bit FNV-1a, and a sweep removes exactly the entries its callback picks, across growth.
 */
#include <criterion/criterion.h>

#include "serve.h"

#include <stdio.h>
#include <stdlib.h>

Test(smap, hash_is_fnv1a_64)
{
    cr_expect_eq(ks_smap_hash(""), UINT64_C(0xcbf29ce484222325));
    cr_expect_eq(ks_smap_hash("a"), UINT64_C(0xaf63dc4c8601ec8c));
}

/* Picks the entries whose value is even, and counts every entry it was shown. */
static bool even(void *ctx, const char *key, void *value)
{
    (void)key;
    ++*(int *)ctx;
    return (uintptr_t)value % 2 == 0;
}

Test(smap, sweep_removes_what_the_callback_picks)
{
    struct ks_smap m = {0};
    char key[16];
    int shown = 0;
    for (uintptr_t i = 1; i <= 300; i++) {
        snprintf(key, sizeof(key), "k%u", (unsigned)i);
        cr_assert_eq(ks_smap_put(&m, key, (void *)i, NULL), 0);
    }
    ks_smap_sweep(&m, even, &shown);
    cr_expect_eq(shown, 300);
    cr_expect_eq(m.n, 150);
    for (uintptr_t i = 1; i <= 300; i++) {
        snprintf(key, sizeof(key), "k%u", (unsigned)i);
        cr_expect_eq((uintptr_t)ks_smap_get(&m, key), i % 2 ? i : 0, "%s", key);
    }
    ks_smap_clear(&m, NULL);
    ks_smap_sweep(&m, even, &shown); /* an empty map */
    cr_expect_eq(shown, 300);
}
