/*
 * binder.c - the binding cycle on a small pool of threads (bindingCycle in
 * schedule_one.go): WaitOnPermit, PreBind, Bind, PostBind; on any failure Unreserve,
 * forget the assumption and requeue the pod with the error.
 *
 * Jobs wait in a FIFO under bind_lock; in_flight counts jobs queued or running so
 * ks__wait_bindings() can tell when every binding has finished. A bound pod is done
 * with the queue (ks_queue_done); the cache holds its own reference.
 *
 * Wake-ups are batched. A binder drains the FIFO faster than the scheduling thread fills
 * it, so it is asleep whenever a job arrives, and waking it costs the scheduling thread a
 * futex system call (and in a VM an inter-processor interrupt), a large share of a cycle
 * (docs/perf.md, "Design constants"). So ks__bind_async() wakes a sleeping binder only when no binder is
 * awake to find the job by itself and either KS_BIND_BATCH jobs wait or the job is urgent (its pod waits on
 * Permit: a Permit timeout runs from now, as upstream's binding goroutine starts at once). Otherwise it
 * reports the job deferred, and the scheduling thread calls ks__bind_flush() as soon as it has nothing better
 * to do: when the active queue is empty after a cycle, before a pop that would find it empty or block, and in
 * ks__wait_bindings(). A deferred job thus waits at most for the scheduling cycles of
 * the next KS_BIND_BATCH - 1 pods that were already queued behind it.
 *
 * A binder that finds the FIFO empty first polls it for KS_BIND_SPIN_NS, one binder at a
 * time (bind_spinner), napping KS_BIND_NAP_NS between two looks: while pods keep coming,
 * that binder takes the jobs queued meanwhile and nobody is ever woken, so the scheduling
 * thread pays neither the futex nor a batch's delay, and a binding waits a nap at most
 * (tens of microseconds, timer slack included). The naps leave the core to the worker pool:
 * a binder that spun instead (pausing, yielding every 8 polls) held half of the second core
 * of a two-core machine while the pool's thread needed it for Filter and Score (the paired
 * runs are in docs/perf.md, "Design constants").
 *
 * Binder states (bind_lock): asleep on bind_ready (bind_sleeping), inside a job whose pod
 * waits on Permit (bind_stuck: it may block for long), or awake (the rest, polling binder
 * included: it checks the FIFO again before it sleeps, so a job queued meanwhile needs no
 * signal).
 *
 * A PreBind that waits (KS_WAIT, framework_types.h) does not hold its binder: the job is
 * parked (still counted in in_flight, so ks__wait_bindings() waits for it) and the binder
 * takes the next one. Whoever ends the wait calls job->wait.done (resume_parked), which
 * puts the job back on the FIFO, marked resumed, and a binder finishes its binding cycle
 * from PreBind on. The wait may end before the binder has seen KS_WAIT: wait_state, under
 * bind_lock, decides who continues (RUNNING -> PARKED by the binder, or -> RESOLVED by the
 * resumer, in which case the binder goes on at once).
 */
#include "ksched/base/spin.h"
#include "scheduler_internal.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/base/rcu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ks_bind_job *ks__job_get(struct ks_scheduler *s)
{
    ks_mutex_lock(&s->bind_lock);
    struct ks_bind_job *job = s->free_jobs;
    if (job)
        s->free_jobs = job->next;
    ks_mutex_unlock(&s->bind_lock);
    if (!job) {
        if (!(job = calloc(1, sizeof(*job))))
            return NULL;
        ks_cycle_state_init(&job->cs);
    } else {
        ks_cycle_state_reset(&job->cs);
    }
    job->next = NULL;
    job->s = s;
    job->resumed = false;
    return job;
}

void ks__job_put(struct ks_scheduler *s, struct ks_bind_job *job)
{
    ks_mutex_lock(&s->bind_lock);
    job->next = s->free_jobs;
    s->free_jobs = job;
    ks_mutex_unlock(&s->bind_lock);
}

/* Queue @job at the FIFO's tail. Under bind_lock. */
static void fifo_push(struct ks_scheduler *s, struct ks_bind_job *job)
{
    job->next = NULL;
    if (s->bind_tail)
        s->bind_tail->next = job;
    else
        s->bind_head = job;
    s->bind_tail = job;
    s->bind_len++;
    atomic_store_explicit(&s->bind_queued, s->bind_len, memory_order_relaxed);
}

/* job->wait.done: the PreBind wait is over (any thread; takes bind_lock, a leaf: ksched/base/lock.h). */
static void resume_parked(struct ks_bind_wait *w, int code, const struct ks_status *st)
{
    struct ks_bind_job *job = (struct ks_bind_job *)((char *)w - offsetof(struct ks_bind_job, wait));
    struct ks_scheduler *s = job->s;

    ks_mutex_lock(&s->bind_lock);
    job->wait_code = code;
    if (st)
        job->wait_st = *st;
    else
        job->wait_st = (struct ks_status){.code = (enum ks_code)code, .plugin = KS_NO_PLUGIN};
    if (job->wait_state == KS_JOB_PARKED) {
        job->resumed = true;
        fifo_push(s, job);
        /* as for an urgent job: wake a binder unless one is awake to find it */
        if (s->bind_sleeping && s->bind_sleeping + s->bind_stuck >= s->nbinders)
            pthread_cond_signal(&s->bind_ready);
    } else {
        job->wait_state = KS_JOB_RESOLVED; /* the binder has not parked it yet: it goes on itself */
    }
    ks_mutex_unlock(&s->bind_lock);
}

/* PreBind returned KS_WAIT: park @job, or false when the wait already ended (go on). */
static bool park(struct ks_scheduler *s, struct ks_bind_job *job)
{
    ks_mutex_lock(&s->bind_lock);
    bool parked = job->wait_state == KS_JOB_RUNNING;
    if (parked)
        job->wait_state = KS_JOB_PARKED;
    ks_mutex_unlock(&s->bind_lock);
    return parked;
}

/* PreBind, from the start or (a resumed job) from the plugin that waited; KS_WAIT: parked. */
static int pre_bind(struct ks_scheduler *s, struct ks_bind_job *job, struct ks_status *st)
{
    struct ks_framework *fw = job->fw;
    const struct ks_pod *pod = job->qp->pod;
    int rc;

    /*
     * Armed without the lock: nobody else can reach the job until a plugin hands out
     * cs.bind_wait, and that hand-off (the plugin's own locking) orders these stores
     * before the resumer's read under bind_lock.
     */
    job->wait.done = resume_parked;
    job->cs.bind_wait = &job->wait;
    job->wait_state = KS_JOB_RUNNING;
    if (job->resumed) {
        job->resumed = false;
        rc = ks_fw_resume_pre_bind(fw, &job->cs, pod, job->node, job->wait_code, &job->wait_st, st);
    } else {
        rc = ks_fw_run_pre_bind(fw, &job->cs, pod, job->node, st);
    }
    while (rc == KS_WAIT) {
        if (park(s, job))
            return KS_WAIT;
        job->wait_state = KS_JOB_RUNNING; /* resolved before it was parked: go on here */
        rc = ks_fw_resume_pre_bind(fw, &job->cs, pod, job->node, job->wait_code, &job->wait_st, st);
    }
    job->cs.bind_wait = NULL;
    return rc;
}

/* The binding cycle of one pod; false when its PreBind waits (the job is parked), true when it is done. */
static bool bind_one(struct ks_scheduler *s, struct ks_bind_job *job)
{
    struct ks_framework *fw = job->fw;
    const struct ks_pod *pod = job->qp->pod;
    struct ks_status st = {0};
    int rc = KS_SUCCESS;

    if (!job->resumed)
        rc = ks_fw_wait_on_permit(fw, pod, &st);
    if (rc == KS_SUCCESS && (rc = pre_bind(s, job, &st)) == KS_WAIT)
        return false;
    if (rc == KS_SUCCESS && (rc = ks_fw_run_bind(fw, &job->cs, pod, job->node, &st)) == KS_SUCCESS) {
        /*
         * in process, the bound pod reaches the cache at once (the informer's add event),
         * unless it was deleted or evicted while it was being bound
         */
        if (ks_cache_confirm_pod(s->cache, ks_pod_get(pod), job->node) < 0) {
            ks_pod_put(pod);
            ks_cache_forget_pod(s->cache, pod);
        }
        ks_fw_run_post_bind(fw, &job->cs, pod, job->node);
        ks__emit(s, KS_SCHED_SCHEDULED, pod, job->node, NULL);
        /* relaxed: batch runs read it after joining the binders (ks__wait_bindings) */
        atomic_fetch_add_explicit(&s->progress, 1, memory_order_relaxed);
        ks__assigned_pod_event(s, KS_ACT_ADD, pod, job->node);
        ks_queue_done(s->queue, job->qp);
    } else {
        /*
         * handleBindingCycleError: unreserve, forget, and the assumed pod's room is free
         * again (AssignedPod/Delete). A rejection comes back as unschedulable with the
         * plugin that rejected it; other failures are retried after backoff.
         */
        ks_fw_run_unreserve(fw, &job->cs, pod, job->node);
        ks_cache_forget_pod(s->cache, pod);
        ks__assigned_pod_event(s, KS_ACT_DELETE, pod, job->node);
        const char *msg = st.nreasons ? ks_intern_str(st.reasons[0]) : ks_code_name((enum ks_code)rc);
        uint64_t rejectors = st.plugin != KS_NO_PLUGIN && st.plugin < 64 ? UINT64_C(1) << st.plugin : 0;
        ks__failure(s, fw, job->qp, job->cycle, rc, msg, rejectors);
    }
    ks__job_put(s, job);
    return true;
}

/*
 * Poll for a job without the lock for up to KS_BIND_SPIN_NS, napping in between (see
 * above): while the scheduling thread produces a pod every few tens of microseconds, one
 * binder stays awake and ks__bind_async() never pays a wake-up. The lock is only tried (a
 * binder blocking on it while the scheduling thread still holds it would make that
 * thread's unlock a futex wake-up, the very cost the poll avoids). Called and returns with
 * bind_lock held.
 */
static void poll_for_job(struct ks_scheduler *s)
{
    ks_mutex_assert_held(&s->bind_lock);
    int64_t deadline = ks__mono_ns() + KS_BIND_SPIN_NS;
    s->bind_spinner = true;
    ks_mutex_unlock(&s->bind_lock);
    for (;;) {
        /* relaxed: a hint; the FIFO is read again under the lock */
        if (atomic_load_explicit(&s->bind_queued, memory_order_relaxed) &&
            ks_mutex_trylock(&s->bind_lock) == 0) {
            if (s->bind_head || s->bind_quit)
                break;
            ks_mutex_unlock(&s->bind_lock);
        }
        if (ks__mono_ns() > deadline) {
            ks_mutex_lock(&s->bind_lock);
            break;
        }
        struct timespec nap = {0, KS_BIND_NAP_NS};
        nanosleep(&nap, NULL);
    }
    s->bind_spinner = false;
}

static void *binder_main(void *arg)
{
    struct ks_scheduler *s = arg;
    ks_rcu_register_thread();
    ks_mutex_lock(&s->bind_lock);
    for (;;) {
        bool polled = false;
        while (!s->bind_head && !s->bind_quit) {
            /* one binder polls after its last job; the others, and it after a fruitless poll, sleep */
            if (!polled && !s->bind_spinner) {
                polled = true;
                poll_for_job(s);
                continue;
            }
            s->bind_sleeping++;
            ks_cond_wait(&s->bind_ready, &s->bind_lock);
            s->bind_sleeping--;
        }
        if (!s->bind_head)
            break;
        struct ks_bind_job *job = s->bind_head;
        s->bind_head = job->next;
        if (!s->bind_head)
            s->bind_tail = NULL;
        s->bind_len--;
        atomic_store_explicit(&s->bind_queued, s->bind_len, memory_order_relaxed);
        bool urgent = job->urgent && !job->resumed;
        s->bind_stuck += urgent;
        ks_mutex_unlock(&s->bind_lock);
        bool done = bind_one(s, job);
        ks_mutex_lock(&s->bind_lock);
        s->bind_stuck -= urgent;
        /* a deterministic run's settling waits for every binding done, not only the last */
        if (done && (--s->in_flight == 0 || s->opts.deterministic))
            pthread_cond_broadcast(&s->bind_idle);
    }
    ks_mutex_unlock(&s->bind_lock);
    ks_rcu_unregister_thread();
    return NULL;
}

int ks__binders_start(struct ks_scheduler *s)
{
    uint32_t n = s->opts.binders ? s->opts.binders : 2;
    if (!(s->binders = calloc(n, sizeof(*s->binders))))
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        int rc = pthread_create(&s->binders[i], NULL, binder_main, s);
        if (rc)
            return -rc;
        s->nbinders++;
    }
    return 0;
}

void ks__binders_stop(struct ks_scheduler *s)
{
    ks_mutex_lock(&s->bind_lock);
    s->bind_quit = true;
    pthread_cond_broadcast(&s->bind_ready);
    ks_mutex_unlock(&s->bind_lock);
    for (uint32_t i = 0; i < s->nbinders; i++)
        pthread_join(s->binders[i], NULL);
    free(s->binders);
    s->binders = NULL;
    s->nbinders = 0;
}

bool ks__bind_async(struct ks_scheduler *s, struct ks_bind_job *job, bool urgent)
{
    bool deferred = false;
    ks_mutex_lock(&s->bind_lock);
    job->urgent = urgent;
    fifo_push(s, job);
    s->in_flight++;
    /* a binder that is awake (not asleep, not held by a Permit) takes the job before it sleeps */
    if (s->bind_sleeping + s->bind_stuck < s->nbinders) {
        /* nothing to do */
    } else if (s->bind_sleeping && (urgent || s->bind_len >= KS_BIND_BATCH)) {
        pthread_cond_signal(&s->bind_ready);
    } else {
        deferred = true;
    }
    ks_mutex_unlock(&s->bind_lock);
    return deferred;
}

void ks__bind_flush(struct ks_scheduler *s)
{
    ks_mutex_lock(&s->bind_lock);
    /* a polling binder finds up to KS_BIND_BATCH jobs by itself */
    if (s->bind_head && s->bind_sleeping && (!s->bind_spinner || s->bind_len > KS_BIND_BATCH)) {
        /* one binder per KS_BIND_BATCH jobs: more would only contend for the cache */
        if (s->bind_len > KS_BIND_BATCH)
            pthread_cond_broadcast(&s->bind_ready);
        else
            pthread_cond_signal(&s->bind_ready);
    }
    ks_mutex_unlock(&s->bind_lock);
}

/* Pods of every profile that wait on Permit and were not yet allowed, rejected or timed out. */
static uint32_t permit_undecided(struct ks_scheduler *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nfw; i++)
        n += ks_fw_undecided_count(s->fw[i]);
    return n;
}

void ks__bind_settle(struct ks_scheduler *s)
{
    ks__bind_flush(s);
    ks_mutex_lock(&s->bind_lock);
    /*
     * Each undecided pod's job is in flight (its Permit ran before its job was queued), so
     * in_flight exceeds the undecided count exactly while some other binding is unfinished.
     * Both are read under bind_lock, and a binder finishing a job broadcasts bind_idle under
     * it, so no finish is missed between the check and the wait.
     */
    while (s->in_flight > permit_undecided(s))
        ks_cond_wait(&s->bind_idle, &s->bind_lock);
    ks_mutex_unlock(&s->bind_lock);
}

void ks__bind_inline(struct ks_scheduler *s, struct ks_bind_job *job)
{
    ks__bind_settle(s);
    ks_mutex_lock(&s->bind_lock);
    s->in_flight++;
    ks_mutex_unlock(&s->bind_lock);
    if (!bind_one(s, job))
        return; /* parked on a PreBind wait: a binder finishes it, and settling waits for that */
    ks_mutex_lock(&s->bind_lock);
    if (--s->in_flight == 0)
        pthread_cond_broadcast(&s->bind_idle);
    ks_mutex_unlock(&s->bind_lock);
}

void ks__wait_bindings(struct ks_scheduler *s)
{
    ks__bind_flush(s);
    ks_mutex_lock(&s->bind_lock);
    while (s->in_flight)
        ks_cond_wait(&s->bind_idle, &s->bind_lock);
    ks_mutex_unlock(&s->bind_lock);
}
