/*
 * test_preemption_async.c - asynchronous preemption's tracker (engine/preemption_async.c):
 * a preemptor is in it from the start of its victims' calls to their completion, which
 * activates it (gated_only when the calls succeeded: only a pod PreEnqueue holds back;
 * every way when they failed or could not start); a preemptor preempting again before
 * the first calls return stays until both are done; after the owner closed the tracker,
 * completions activate nothing (and free it, checked under AddressSanitizer).
 */
#include <criterion/criterion.h>

#include <errno.h>

#include "fakes/objects.h"
#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/preemption.h"

struct fake {
    void (*done[4])(void *, bool);
    void *ctx[4];
    uint32_t calls, victims;
    int rc;
    const struct ks_pod *activated[8];
    bool gated_only[8];
    uint32_t nactivated;
};

static int evict_async(void *ctx, const struct ks_pod *preemptor, uint32_t node,
                       const struct ks_pod *const *victims, uint32_t n, void (*done)(void *, bool),
                       void *done_ctx)
{
    struct fake *f = ctx;
    (void)preemptor, (void)node, (void)victims;
    if (f->rc)
        return f->rc;
    f->done[f->calls] = done;
    f->ctx[f->calls++] = done_ctx;
    f->victims += n;
    return 0;
}

static void activate(void *ctx, const struct ks_pod *pod, bool gated_only)
{
    struct fake *f = ctx;
    f->gated_only[f->nactivated] = gated_only;
    f->activated[f->nactivated++] = pod;
}

Test(preemption_async, the_tracker_holds_preemptors_until_their_calls_are_done)
{
    cr_assert_eq(ks_api_init(), 0);
    struct fake f = {0};
    struct ks_activator act = {.activate = activate, .ctx = &f};
    struct ks_evictor ev = {.evict_async = evict_async, .ctx = &f};
    struct ks_preempting *t;
    cr_assert_eq(ks_preempting_create(&act, &t), 0);
    struct ks_pod *p = ks_fake_pod_done(ks_fake_pod("ns", "high")),
                  *v1 = ks_fake_pod_done(ks_fake_pod("ns", "v1")),
                  *v2 = ks_fake_pod_done(ks_fake_pod("ns", "v2")),
                  *same = ks_fake_pod_done(ks_fake_pod("ns", "high"));
    p->refs = v1->refs = v2->refs = same->refs = 1;
    const struct ks_pod *victims[] = {v1, v2};

    cr_expect_not(ks_preempting_has(t, p));
    cr_assert_eq(ks_preempting_start(t, &ev, p, ks_intern("n1"), victims, 2), 0);
    cr_expect(ks_preempting_has(t, p));
    cr_expect(ks_preempting_has(t, same), "found by namespace/name");
    cr_expect_not(ks_preempting_has(t, v1));
    cr_expect_eq(f.victims, 2u);
    cr_expect_eq(v1->refs, 1, "the tracker holds no victim: the evictor does what it needs");
    /* preempting again before the calls returned: in until both are done */
    cr_assert_eq(ks_preempting_start(t, &ev, same, ks_intern("n2"), victims, 1), 0);
    f.done[0](f.ctx[0], true);
    cr_expect(ks_preempting_has(t, p));
    cr_expect_eq(f.nactivated, 1u);
    cr_expect(f.gated_only[0], "a success releases only a pod PreEnqueue holds back");
    f.done[1](f.ctx[1], true);
    cr_expect_not(ks_preempting_has(t, p));
    uint32_t running;
    uint64_t started, failed;
    ks_preempting_counts(t, &running, &started, &failed);
    cr_expect_eq(running, 0u);
    cr_expect_eq(started, 2u);
    cr_expect_eq(failed, 0u);

    /* a failure activates it whatever holds it */
    cr_assert_eq(ks_preempting_start(t, &ev, p, ks_intern("n1"), victims, 2), 0);
    f.done[2](f.ctx[2], false);
    cr_expect_eq(f.nactivated, 3u);
    cr_expect_not(f.gated_only[2]);
    cr_expect_eq(f.activated[2], p);
    /* calls that cannot start: out at once, activated */
    f.rc = -EIO;
    cr_expect_eq(ks_preempting_start(t, &ev, p, ks_intern("n1"), victims, 2), -EIO);
    cr_expect_not(ks_preempting_has(t, p));
    cr_expect_eq(f.nactivated, 4u);
    f.rc = 0;

    /* closed with calls under way: their completion activates nothing, and frees the tracker */
    cr_assert_eq(ks_preempting_start(t, &ev, p, ks_intern("n1"), victims, 2), 0);
    ks_preempting_close(t);
    f.done[3](f.ctx[3], true);
    cr_expect_eq(f.nactivated, 4u);
    cr_expect_eq(p->refs, 1, "no reference left behind");
    ks_pod_put(p);
    ks_pod_put(v1);
    ks_pod_put(v2);
    ks_pod_put(same);
}
