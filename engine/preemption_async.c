/*
 * preemption_async.c - asynchronous preemption (KEP-4832; include/ksched/internal/preemption.h,
 * struct ks_preempting).
 *
 * Mirrors the async half of framework/preemption's Executor (prepareCandidateAsync,
 * IsPodRunningPreemption) with DefaultPreemption's PreEnqueue: the chosen node's victims
 * are handed to the evictor's evict_async, which makes their API calls off the scheduling
 * cycle; meanwhile the preemptor, already nominated, is in the tracker, and PreEnqueue
 * holds it back ("waiting for the preemption for this pod to be finished") whenever the
 * queue would let it into activeQ. When the calls are done the preemptor leaves the
 * tracker; if they failed it is activated, as upstream activates it, and if they succeeded
 * while PreEnqueue was holding it back it is activated too: upstream lets it through on
 * the last victim's deletion event by reading the victim from its informer's lister
 * (lastVictimsPendingPreemption); here the completion itself releases it, so that a
 * deletion event that arrived before the calls returned does not leave it waiting.
 *
 * The tracker is a hash of the preemptors (namespace/name), each holding a reference; it
 * outlives its owner while calls are under way (a reference per preemption), and after
 * its owner closed it, completions activate nothing.
 */
#include "ksched/internal/preemption.h"

#include "ksched/api.h"
#include "ksched/base/lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct preempting_entry {
    const struct ks_pod *pod;
    uint64_t hash;
    uint32_t runs; /* its preemptions under way (a pod preempting again before the last returned) */
    struct preempting_entry *next;
};

struct ks_preempting {
    struct ks_mutex lock; /* KS_LOCK_PREEMPTING: everything below */
    uint32_t refs;        /* the owner's (until closed) and one per preemption under way */
    bool closed;
    struct ks_activator activator;
    uint32_t mask, n;
    struct preempting_entry **buckets;
    uint64_t started, failed;
};

/* One preemption under way: what its completion needs. */
struct preemption_run {
    struct ks_preempting *t;
    const struct ks_pod *preemptor;
};

enum { BUCKETS = 256 };

int ks_preempting_create(const struct ks_activator *activator, struct ks_preempting **out)
{
    struct ks_preempting *t = calloc(1, sizeof(*t));
    if (!t || !(t->buckets = calloc(BUCKETS, sizeof(*t->buckets)))) {
        free(t);
        return -ENOMEM;
    }
    ks_mutex_init(&t->lock, KS_LOCK_PREEMPTING);
    t->refs = 1;
    t->mask = BUCKETS - 1;
    t->activator = activator ? *activator : (struct ks_activator){0};
    *out = t;
    return 0;
}

static void destroy(struct ks_preempting *t)
{
    for (uint32_t b = 0; b <= t->mask; b++) {
        for (struct preempting_entry *e = t->buckets[b], *next; e; e = next) {
            next = e->next;
            ks_pod_put(e->pod);
            free(e);
        }
    }
    ks_mutex_destroy(&t->lock);
    free(t->buckets);
    free(t);
}

/* Drop one reference (the lock held, and released here); the last one frees @t. */
static void unref_unlock(struct ks_preempting *t)
{
    ks_mutex_assert_held(&t->lock);
    bool last = --t->refs == 0;
    ks_mutex_unlock(&t->lock);
    if (last)
        destroy(t);
}

void ks_preempting_close(struct ks_preempting *t)
{
    if (!t)
        return;
    ks_mutex_lock(&t->lock);
    t->closed = true;
    unref_unlock(t);
}

/* The link that holds @pod's entry (or the chain's end). Lock held. */
static struct preempting_entry **find(struct ks_preempting *t, const struct ks_pod *pod, uint64_t h)
{
    ks_mutex_assert_held(&t->lock);
    struct preempting_entry **p = &t->buckets[h & t->mask];
    while (*p && !((*p)->hash == h && ks_pod_same_name((*p)->pod, pod)))
        p = &(*p)->next;
    return p;
}

bool ks_preempting_has(struct ks_preempting *t, const struct ks_pod *pod)
{
    uint64_t h = ks_pod_name_hash(pod);
    ks_mutex_lock(&t->lock);
    bool has = t->n && *find(t, pod, h) != NULL;
    ks_mutex_unlock(&t->lock);
    return has;
}

void ks_preempting_counts(struct ks_preempting *t, uint32_t *running, uint64_t *started, uint64_t *failed)
{
    ks_mutex_lock(&t->lock);
    *running = t->n;
    *started = t->started;
    *failed = t->failed;
    ks_mutex_unlock(&t->lock);
}

/* evict_async's completion: any thread. */
static void done(void *ctx, bool ok)
{
    struct preemption_run *r = ctx;
    struct ks_preempting *t = r->t;
    uint64_t h = ks_pod_name_hash(r->preemptor);
    ks_mutex_lock(&t->lock);
    struct preempting_entry **p = find(t, r->preemptor, h), *e = *p;
    if (e && --e->runs == 0) {
        *p = e->next;
        t->n--;
    } else {
        e = NULL; /* another run keeps it */
    }
    t->failed += !ok;
    struct ks_activator a = t->closed ? (struct ks_activator){0} : t->activator;
    ks_mutex_unlock(&t->lock);
    /* outside the lock: activation takes the queue's locks, inside which PreEnqueue takes ours */
    if (a.activate)
        a.activate(a.ctx, r->preemptor, ok);
    if (e) {
        ks_pod_put(e->pod);
        free(e);
    }
    ks_mutex_lock(&t->lock);
    unref_unlock(t);
    ks_pod_put(r->preemptor);
    free(r);
}

int ks_preempting_start(struct ks_preempting *t, const struct ks_evictor *ev, const struct ks_pod *preemptor,
                        uint32_t node, const struct ks_pod *const *victims, uint32_t n)
{
    struct preemption_run *r = malloc(sizeof(*r));
    struct preempting_entry *e = malloc(sizeof(*e));
    if (!r || !e) {
        free(r);
        free(e);
        return -ENOMEM;
    }
    uint64_t h = ks_pod_name_hash(preemptor);
    *r = (struct preemption_run){.t = t, .preemptor = ks_pod_get(preemptor)};
    *e = (struct preempting_entry){.pod = ks_pod_get(preemptor), .hash = h, .runs = 1};
    ks_mutex_lock(&t->lock);
    struct preempting_entry **p = find(t, preemptor, h);
    if (*p) { /* preempting again before the last preemption's calls returned: one entry */
        (*p)->runs++;
        ks_pod_put(e->pod);
        free(e);
    } else {
        *p = e;
        t->n++;
    }
    t->refs++;
    t->started++;
    ks_mutex_unlock(&t->lock);
    int rc = ev->evict_async(ev->ctx, preemptor, node, victims, n, done, r);
    if (rc < 0)
        done(r, false); /* nothing was sent: the pod leaves the tracker and is activated */
    return rc;
}
