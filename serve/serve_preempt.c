/*
 * serve_preempt.c - a preemption's API calls (serve/serve.h, struct ks_preemption_calls).
 *
 * Mirrors the Executor's PreemptPod (framework/preemption/executor.go) for each victim in
 * turn: the DisruptionTarget condition (status True, reason PreemptionByScheduler, message
 * "<schedulerName>: preempting to accommodate a higher priority pod") patched onto the
 * victim's status as util.PatchPodStatus sends it (a strategic merge patch; nothing when
 * the pod already carries that condition), then the pod DELETEd, then the Preempted Event.
 * A victim found gone (404 on either call) is done, without an Event; any other failure
 * ends the preemption there, as upstream's first error cancels the rest. The calls run on
 * the writer's lane 0 (serve_writer.c) in the order preemptions were made, and the
 * completion (asynchronous preemption) is reported once the last victim's calls returned.
 */
#include "serve.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/internal/json_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ks_preemption_calls {
    const struct ks_pod *preemptor;
    uint32_t node;
    bool ran;
    void (*done)(void *ctx, bool ok);
    void *done_ctx;
    uint32_t n;
    const struct ks_pod *victims[];
};

#define DISRUPTION_REASON "PreemptionByScheduler"

char *ks_serve_disruption_patch(const struct ks_pod *victim, const char *scheduler_name, int64_t now_ns,
                                size_t *len)
{
    const struct ks_pod_condition *cur = NULL;
    for (uint32_t i = 0; i < victim->nconditions && !cur; i++) {
        if (victim->conditions[i].type && strcmp(victim->conditions[i].type, "DisruptionTarget") == 0)
            cur = &victim->conditions[i];
    }
    /* apipod.UpdatePodCondition: the same status and reason change nothing worth a call */
    bool same_status = cur && cur->status && strcmp(cur->status, "True") == 0;
    if (same_status && cur->reason && strcmp(cur->reason, DISRUPTION_REASON) == 0)
        return NULL;
    char *buf = NULL, t[40];
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    fputs("{\"status\":{\"$setElementOrder/conditions\":[", out);
    for (uint32_t i = 0; i < victim->nconditions; i++) {
        fputs(i ? ",{\"type\":" : "{\"type\":", out);
        ks_json_write_cstr(out, victim->conditions[i].type ? victim->conditions[i].type : "");
        fputc('}', out);
    }
    if (!cur)
        fputs(victim->nconditions ? ",{\"type\":\"DisruptionTarget\"}" : "{\"type\":\"DisruptionTarget\"}",
              out);
    fputs("],\"conditions\":[{", out);
    if (!cur)
        fputs("\"lastProbeTime\":null,", out);
    if (!same_status) {
        ks_serve_format_time(now_ns, false, t, sizeof(t));
        fputs("\"lastTransitionTime\":", out);
        ks_json_write_cstr(out, t);
        fputc(',', out);
    }
    fputs("\"message\":", out);
    char msg[600];
    snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority pod", scheduler_name);
    ks_json_write_cstr(out, msg);
    fputs(",\"reason\":\"" DISRUPTION_REASON "\"", out);
    if (!same_status)
        fputs(",\"status\":\"True\"", out);
    fputs(",\"type\":\"DisruptionTarget\"}]}}", out);
    return ks_serve_text_close(out, &buf);
}

struct ks_preemption_calls *ks__preemption_calls_new(const struct ks_pod *preemptor, uint32_t node,
                                                     const struct ks_pod *const *victims, uint32_t n,
                                                     void (*done)(void *ctx, bool ok), void *done_ctx)
{
    struct ks_preemption_calls *c = malloc(sizeof(*c) + (size_t)n * sizeof(c->victims[0]));
    if (!c)
        return NULL;
    *c = (struct ks_preemption_calls){
        .preemptor = ks_pod_get(preemptor), .node = node, .done = done, .done_ctx = done_ctx, .n = n};
    for (uint32_t i = 0; i < n; i++)
        c->victims[i] = ks_pod_get(victims[i]);
    return c;
}

void ks__preemption_calls_free(struct ks_preemption_calls *c)
{
    if (!c)
        return;
    if (!c->ran && c->done)
        c->done(c->done_ctx, false); /* dropped unsent (shutdown, out of memory) */
    for (uint32_t i = 0; i < c->n; i++)
        ks_pod_put(c->victims[i]);
    ks_pod_put(c->preemptor);
    free(c);
}

static void victim_path(const struct ks_pod *pod, const char *sub, char *buf, size_t len)
{
    snprintf(buf, len, "/api/v1/namespaces/%s/pods/%s%s", ks_intern_str(pod->meta.namespace_id),
             pod->meta.name, sub);
}

/* The call's outcome: 1 done, 0 the victim is gone (nothing more to do), -1 failed (logged). */
static int outcome(int rc, const struct ks_kube_response *resp, const char *method, const char *path)
{
    if (rc == 0 && resp->status >= 200 && resp->status < 300)
        return 1;
    if (rc == 0 && resp->status == 404)
        return 0;
    fprintf(stderr, "ksched serve: preemption: %s %s: %s\n", method, path,
            rc < 0                        ? resp->error
            : resp->body && resp->body[0] ? resp->body
                                          : "no response body");
    return -1;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* PreemptPod for @victim: true when it is being deleted (or gone), false when a call failed. */
static bool preempt_one(struct ks_writer *w, const struct ks_preemption_calls *c, const struct ks_pod *victim)
{
    struct ks_kube_response resp = {0};
    char path[800];
    size_t len = 0;
    int done = 1;
    char *body =
        ks_serve_disruption_patch(victim, ks_intern_str(c->preemptor->scheduler_name), wall_ns(), &len);
    if (body) {
        victim_path(victim, "/status", path, sizeof(path));
        int rc =
            ks__writer_request(w, "PATCH", path, "application/strategic-merge-patch+json", body, len, &resp);
        free(body);
        done = outcome(rc, &resp, "PATCH", path);
        ks_kube_response_free(&resp);
        memset(&resp, 0, sizeof(resp));
    }
    if (done == 1) {
        victim_path(victim, "", path, sizeof(path));
        int rc = ks__writer_request(w, "DELETE", path, NULL, NULL, 0, &resp);
        done = outcome(rc, &resp, "DELETE", path);
        ks_kube_response_free(&resp);
    }
    if (done == 1)
        ks__writer_preempted_event(w, victim, c->preemptor, c->node);
    return done >= 0;
}

void ks__preemption_calls_run(struct ks_writer *w, struct ks_preemption_calls *c)
{
    bool ok = true;
    for (uint32_t i = 0; i < c->n && ok; i++)
        ok = preempt_one(w, c, c->victims[i]);
    c->ran = true;
    if (c->done)
        c->done(c->done_ctx, ok);
}
