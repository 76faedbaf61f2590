/*
 * serve_podgroup.c - a PodGroup's status after its scheduling cycle: the
 * PodGroupInitiallyScheduled condition kube-scheduler v1.37 writes (updatePodGroupCondition
 * in schedule_one_podgroup.go): True/Scheduled once the group's placed members go on to
 * binding, False/Unschedulable or False/SchedulerError (the group's message) otherwise, with
 * observedGeneration the object's generation; never back from True to False; nothing sent
 * when the condition would not change (apimeta.SetStatusCondition). The patch is the two-way
 * strategic merge patch of the status (util.PatchPodGroupStatus) against the PodGroup the
 * informer holds.
 */
#include "serve.h"

#include "ksched/base/intern.h"
#include "ksched/internal/json_write.h"
#include "ksched/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONDITION "PodGroupInitiallyScheduled"

static bool same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

char *ks_serve_pod_group_patch(const struct ks_pod_group *pg, const struct ks_group_attempt *g,
                               int64_t now_ns, size_t *len)
{
    const struct ks_pod_group_condition *cur = NULL;
    for (uint32_t i = 0; i < pg->nconditions && !cur; i++) {
        if (same(pg->conditions[i].type, CONDITION))
            cur = &pg->conditions[i];
    }
    const char *status = g->ok ? "True" : "False";
    const char *reason = g->ok ? "Scheduled" : g->error ? "SchedulerError" : "Unschedulable";
    const char *message = g->ok || !g->message ? "" : g->message;
    if (cur && same(cur->status, "True") && !g->ok)
        return NULL; /* scheduled once: later cycles of extra pods do not undo it */
    bool new_status = !cur || !same(cur->status, status);
    bool new_reason = !cur || !same(cur->reason, reason);
    bool new_message = !cur || !same(cur->message, message);
    bool new_generation = !cur || cur->observed_generation != pg->generation;
    if (!new_status && !new_reason && !new_message && !new_generation)
        return NULL;

    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out)
        return NULL;
    /* the list's order by its merge key, then the changed element with its changed fields, keys sorted */
    fputs("{\"status\":{\"$setElementOrder/conditions\":[", out);
    for (uint32_t i = 0; i < pg->nconditions; i++) {
        fputs(i ? ",{\"type\":" : "{\"type\":", out);
        ks_json_write_cstr(out, pg->conditions[i].type ? pg->conditions[i].type : "");
        fputc('}', out);
    }
    if (!cur)
        fputs(pg->nconditions ? ",{\"type\":\"" CONDITION "\"}" : "{\"type\":\"" CONDITION "\"}", out);
    fputs("],\"conditions\":[{", out);
    if (new_status) {
        char t[40];
        ks_serve_format_time(now_ns, false, t, sizeof(t));
        fputs("\"lastTransitionTime\":", out);
        ks_json_write_cstr(out, t);
        fputc(',', out);
    }
    if (new_message) {
        fputs("\"message\":", out);
        ks_json_write_cstr(out, message);
        fputc(',', out);
    }
    if (new_generation && pg->generation)
        fprintf(out, "\"observedGeneration\":%lld,", (long long)pg->generation);
    if (new_reason) {
        fputs("\"reason\":", out);
        ks_json_write_cstr(out, reason);
        fputc(',', out);
    }
    if (new_status) {
        fputs("\"status\":", out);
        ks_json_write_cstr(out, status);
        fputc(',', out);
    }
    fputs("\"type\":\"" CONDITION "\"}]}}", out);
    return ks_serve_text_close(out, &buf);
}

/* The PodGroup @g names among @objs, NULL when the informer has none. */
static const struct ks_pod_group *find(const struct ks_objects *objs, const struct ks_group_attempt *g)
{
    const struct ks_objvec *v = &objs->of[KS_KIND_POD_GROUP];
    for (uint32_t i = 0; i < v->n; i++) {
        const struct ks_pod_group *pg = v->items[i];
        if (pg->meta.namespace_id == g->namespace_id && same(pg->meta.name, g->name))
            return pg;
    }
    return NULL;
}

void ks_serve_on_group(struct ks_writer *w, const struct ks_objects *objs, const struct ks_group_attempt *g,
                       int64_t now_ns)
{
    const struct ks_pod_group *pg = find(objs, g);
    if (!pg)
        return;
    size_t len = 0;
    char *body = ks_serve_pod_group_patch(pg, g, now_ns, &len);
    if (!body)
        return;
    char path[1024];
    snprintf(path, sizeof(path), "/apis/scheduling.k8s.io/v1beta1/namespaces/%s/podgroups/%s/status",
             ks_intern_str(g->namespace_id), g->name);
    if (ks_writer_enqueue(w, "PATCH", path, "application/strategic-merge-patch+json", body, len, false) < 0)
        fprintf(stderr, "ksched serve: out of room queueing the status of PodGroup %s/%s\n",
                ks_intern_str(g->namespace_id), g->name);
}
