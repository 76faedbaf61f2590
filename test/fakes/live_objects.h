/*
 * live_objects.h - change a loaded struct ks_objects after plugins indexed it, the way
 * `ksched serve`'s intake does between cycles (serve/serve_intake.c): the objects join their
 * kind's vector and the kind's change counter (loader.h, gen) moves.
 *
 * Used by test/plugins/test_live_objects.c and test/stress/stress_live_objects.c.
 * Context: the thread that owns @objs (a test's scheduling thread); header-only so the
 * plain-main stress drivers, which link ksched_core alone, can use it.
 */
#ifndef KSCHED_TEST_LIVE_OBJECTS_H
#define KSCHED_TEST_LIVE_OBJECTS_H

#include "ksched/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * ks_live_add - load @yaml (no Pods: their claims are checked against @yaml alone) and move
 * its objects to the end of @objs's vectors, bumping gen of each kind that got one.
 * Returns 0, or -EINVAL / -ENOMEM with nothing moved.
 */
static inline int ks_live_add(struct ks_objects *objs, const char *yaml)
{
    struct ks_objects *add = NULL;
    struct ks_error err = {0};
    int rc = ks_objects_load_buffer("live.yaml", yaml, strlen(yaml), &add, &err);
    if (rc < 0)
        return rc;
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        struct ks_objvec *v = &objs->of[k];
        uint32_t n = add->of[k].n;
        if (n == 0)
            continue;
        void **items = realloc(v->items, (size_t)(v->n + n) * sizeof(*items));
        if (!items) {
            ks_objects_destroy(add);
            return -ENOMEM;
        }
        v->items = items;
        v->cap = v->n + n;
    }
    for (int k = 0; k < KS_KIND_COUNT; k++) {
        struct ks_objvec *v = &objs->of[k];
        if (add->of[k].n == 0)
            continue;
        memcpy(v->items + v->n, add->of[k].items, add->of[k].n * sizeof(void *));
        v->n += add->of[k].n;
        add->of[k].n = 0; /* @objs owns them now */
        objs->gen[k]++;
    }
    ks_objects_destroy(add);
    return 0;
}

#endif
