/*
 * schedule_cmd.c - `ksched schedule [FLAGS] FILE...` (usage() lists the flags; FILE - is
 * standard input).
 *
 * Loads the cluster (all or nothing), puts nodes and bound pods in the cache and the
 * pending pods in the queue, runs the scheduler until every pending pod is bound or can
 * no longer be helped by retrying, and writes one JSON line per event:
 *   {"pod":"ns/name","status":"Scheduled","node":"n1"}
 *   {"pod":"ns/name","status":"Unschedulable","message":"0/3 nodes are available: ..."}
 * With --explain every attempt also writes its filtered nodes and per-plugin scores.
 * -o table writes tables for a terminal instead (explain_table.c).
 * Bad input prints one "FILE:LINE: FIELD: MESSAGE" line on standard error, nothing on
 * standard output, and exits 2. Unknown and duplicate fields are warnings on standard error
 * (--validate=strict: bad input; --validate=ignore: not checked).
 */
#include "commands.h"
#include "explain_table.h"
#include "feature_gates.h"
#include "ksched/base/flag.h"
#include "summary.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/framework.h"
#include "ksched/internal/cache.h"
#include "ksched/internal/config.h"
#include "ksched/internal/dra_check.h"
#include "ksched/internal/dra_controller.h"
#include "ksched/internal/json_write.h"
#include "ksched/internal/scheduler.h"
#include "ksched/loader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "ksched schedule"

struct schedule_args {
    const char *config;
    const char *plugin_dir;
    bool explain;
    bool summary;                /* --summary */
    bool no_index;               /* --no-index */
    bool table;                  /* -o table */
    enum ks_validation validate; /* --validate, warn by default */
    bool seeded;
    uint64_t seed;
    uint32_t parallelism; /* --parallelism; 0: the configuration's */
    int nfiles;
    const char **files;
};

static int fail_input(const struct ks_error *err)
{
    char msg[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
    ks_error_format(err, msg, sizeof(msg));
    fprintf(stderr, "ksched: %s\n", msg);
    return 2;
}

/* One line per plugin object --plugin-dir cannot load, before the line that fails the start. */
static void report_plugin(void *ctx, const struct ks_error *err)
{
    (void)ctx;
    fail_input(err);
}

static void pod_key(FILE *out, const struct ks_pod *pod)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ks_intern_str(pod->meta.namespace_id), pod->meta.name);
    ks_json_write_cstr(out, key);
}

/* Events come from the scheduling thread and from binder threads: each record is written under
 * the stream's lock so two records never interleave. */
static void on_event(void *ctx, const struct ks_sched_event *ev)
{
    FILE *out = ctx;
    flockfile(out);
    fputs("{\"pod\":", out);
    pod_key(out, ev->pod);
    fputs(",\"status\":", out);
    ks_json_write_cstr(out, ks_sched_event_name(ev->kind));
    if (ev->kind == KS_SCHED_SCHEDULED || ev->kind == KS_SCHED_NOMINATED || ev->kind == KS_SCHED_PREEMPTED) {
        fputs(",\"node\":", out);
        ks_json_write_cstr(out, ks_intern_str(ev->node));
    }
    if (ev->by) {
        fputs(",\"by\":", out);
        pod_key(out, ev->by);
    }
    if (ev->message) {
        fputs(",\"message\":", out);
        ks_json_write_cstr(out, ev->message);
    }
    fputs("}\n", out);
    fflush(out);
    funlockfile(out);
}

/* The reasons of @st on @node joined by ", ", with its plugin's account when it gives one. */
static void reasons(FILE *out, const struct ks_attempt *a, const struct ks_node_snap *node,
                    const struct ks_status *st)
{
    char buf[2048];
    if (st->nreasons == 0) {
        ks_json_write_cstr(out, "");
        return;
    }
    ks_framework_explain_status(a->fw, a->cs, a->pod, node, st, buf, sizeof(buf));
    ks_json_write_cstr(out, buf);
}

static void on_attempt(void *ctx, const struct ks_attempt *a)
{
    FILE *out = ctx;
    const struct ks_diagnosis *d = a->diag;
    bool first = true;

    flockfile(out);
    fputs("{\"pod\":", out);
    pod_key(out, a->pod);
    fprintf(out, ",\"attempt\":%" PRIu32 ",\"filtered\":{", a->attempt);
    for (uint32_t i = 0; i < d->nfailed; i++) {
        fputs(first ? "" : ",", out);
        first = false;
        ks_json_write_cstr(out, ks_intern_str(d->nodes[i]->name));
        fputc(':', out);
        reasons(out, a, d->nodes[i], &d->statuses[i]);
    }
    if (d->absent.code != KS_SUCCESS) {
        /* every node without an explicit entry that did not pass carries the absent status */
        for (uint32_t i = 0; i < a->snap->nnodes; i++) {
            const struct ks_node_snap *n = ks_snapshot_node(a->snap, i);
            bool listed = !ks_attempt_lists(a, n->name); /* outside the placement: not considered */
            for (uint32_t j = 0; j < d->nfailed && !listed; j++)
                listed = d->nodes[j] == n;
            for (uint32_t j = 0; j < a->nfeasible && !listed; j++)
                listed = a->feasible[j] == n;
            if (listed)
                continue;
            fputs(first ? "" : ",", out);
            first = false;
            ks_json_write_cstr(out, ks_intern_str(n->name));
            fputc(':', out);
            reasons(out, a, n, &d->absent);
        }
    }
    fputs("},\"scores\":{", out);
    for (uint32_t i = 0; i < a->nfeasible; i++) {
        fputs(i ? "," : "", out);
        ks_json_write_cstr(out, ks_intern_str(a->feasible[i]->name));
        fprintf(out, ":{\"total\":%" PRId64, a->totals ? a->totals[i] : 0);
        for (uint32_t k = 0; k < a->nscore; k++) {
            fputc(',', out);
            ks_json_write_cstr(out, ks_framework_plugin_name(a->fw, ks_framework_score_slot(a->fw, k)));
            fprintf(out, ":%" PRId64, a->scores[(size_t)i * a->nscore + k]);
        }
        fputc('}', out);
    }
    fputs("}}\n", out);
    fflush(out);
    funlockfile(out);
}

/* --explain's line for a PodGroup cycle: the group, and with a topology constraint its placements. */
static void on_group(void *ctx, const struct ks_group_attempt *g)
{
    FILE *out = ctx;
    char key[512];
    flockfile(out);
    snprintf(key, sizeof(key), "%s/%s", ks_intern_str(g->namespace_id), g->name);
    fputs("{\"podGroup\":", out);
    ks_json_write_cstr(out, key);
    fprintf(out, ",\"members\":%" PRIu32 ",\"scheduled\":%" PRIu32, g->members, g->scheduled);
    if (g->topology_key != KS_ID_NONE) {
        fputs(",\"topologyKey\":", out);
        ks_json_write_cstr(out, ks_intern_str(g->topology_key));
        fputs(",\"placements\":[", out);
        for (uint32_t i = 0; i < g->nplacements; i++) {
            const struct ks_group_placement *p = &g->placements[i];
            fputs(i ? ",{\"domain\":" : "{\"domain\":", out);
            ks_json_write_cstr(out, ks_intern_str(p->domain));
            fprintf(out, ",\"nodes\":%" PRIu32 ",\"outcome\":\"%s\"", p->nnodes,
                    !p->room        ? "no room"
                    : !p->evaluated ? "not needed"
                    : p->feasible   ? "feasible"
                                    : "infeasible");
            if (p->evaluated)
                fprintf(out, ",\"pods\":%" PRIu32, p->placed);
            if (p->fit_score >= 0)
                fprintf(out, ",\"NodeResourcesFit\":%" PRId64, p->fit_score);
            if (p->why) {
                fputs(",\"reason\":", out);
                ks_json_write_cstr(out, p->why);
            }
            fputc('}', out);
        }
        fputc(']', out);
        if (g->chosen < g->nplacements) {
            fputs(",\"chosen\":", out);
            ks_json_write_cstr(out, ks_intern_str(g->placements[g->chosen].domain));
        }
    }
    fputs(",\"status\":", out);
    ks_json_write_cstr(out, g->ok ? "Scheduled" : "Unschedulable");
    if (g->message) {
        fputs(",\"message\":", out);
        ks_json_write_cstr(out, g->message);
    }
    fputs("}\n", out);
    fflush(out);
    funlockfile(out);
}

static int usage(FILE *out)
{
    fputs(
        "usage: ksched schedule [--config FILE] [--feature-gates GATES] [--explain | --summary] [--seed N]\n"
        "                       [--parallelism N] [--plugin-dir DIR] [--validate MODE] [--no-index]\n"
        "                       [-o json|table] FILE...\n"
        "Loads manifests (multi-document YAML or kind: List; FILE - is standard input), schedules\n"
        "their pending pods as kube-scheduler does and writes one JSON line per outcome.\n"
        "  --config FILE          a KubeSchedulerConfiguration (default: kube-scheduler's defaults;\n"
        "                         - is standard input)\n"
        "  --feature-gates GATES  kube-scheduler's feature gates, Name=bool,... (before --config is read)\n"
        "  --summary              per workload (the pods of one owner, or of one template) instead of\n"
        "                         per pod: pods placed, nodes and zones, the reasons of the others,\n"
        "                         the pods preempted, and what would fit them (more nodes, smaller\n"
        "                         requests) where the failures are of capacity alone\n"
        "  --explain              per attempt, also every filtered node with its reasons and every\n"
        "                         feasible node's score per plugin (percentageOfNodesToScore 100)\n"
        "  -o, --output FORMAT    json (default: one object per line) or table (for a terminal:\n"
        "                         outcomes; with --explain, per attempt the best nodes' scores and\n"
        "                         the filtered nodes grouped by reason)\n"
        "  --seed N               seed tie-breaks: the same files, flags and seed give the same\n"
        "                         output, byte for byte (without it, ties break differently per run)\n"
        "  --parallelism N        Filter/Score threads, the scheduling thread included (default: the\n"
        "                         configuration's, at most the online cores); never changes the output\n"
        "  --no-index             never answer a cycle from the signature index: filter and score\n"
        "                         node by node in every cycle (the same decisions, the same output)\n"
        "  --validate MODE        fields the Kubernetes API does not define, and duplicate fields, as\n"
        "                         kubectl: warn (default: say so on standard error), strict (or true,\n"
        "                         the default of a bare --validate: bad input), ignore (or false)\n"
        "  --plugin-dir DIR       out-of-tree plugins: every DIR/*.so exporting ks_plugin_entry; one\n"
        "                         that cannot be loaded fails the start, and none is loaded\n",
        out);
    return out == stderr ? 2 : 0;
}

/*
 * -o/--output FORMAT (also -oFORMAT, --output=FORMAT), as kubectl spells it: json or table.
 * 0: @argv[*i] is another flag; 1: taken; -1: after a message on standard error.
 */
static int output_arg(int argc, char **argv, int *i, struct schedule_args *a)
{
    const char *arg = argv[*i], *val;
    if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "ksched schedule: %s needs a format (json or table)\n", arg);
            return -1;
        }
        val = argv[++*i];
    } else if (strncmp(arg, "--output=", 9) == 0) {
        val = arg + 9;
    } else if (strncmp(arg, "-o", 2) == 0 && arg[2]) {
        val = arg + 2;
    } else {
        return 0;
    }
    if (strcmp(val, "json") != 0 && strcmp(val, "table") != 0) {
        fprintf(stderr, "ksched schedule: --output: unknown format \"%s\" (json or table)\n", val);
        return -1;
    }
    a->table = strcmp(val, "table") == 0;
    return 1;
}

/*
 * --validate MODE, --validate=MODE, or a bare --validate (strict), as kubectl: strict (or
 * true), warn, ignore (or false). 0: @argv[*i] is another flag; 1: taken; -1: after a
 * message on standard error.
 */
static int validate_arg(int argc, char **argv, int *i, struct schedule_args *a)
{
    const char *arg = argv[*i], *val = "strict";
    enum ks_validation v;
    if (strncmp(arg, "--validate=", 11) == 0)
        val = arg + 11;
    else if (strcmp(arg, "--validate") != 0)
        return 0;
    else if (*i + 1 < argc && ks_validation_parse(argv[*i + 1], &v) == 0)
        val = argv[++*i];
    if (ks_validation_parse(val, &a->validate) < 0) {
        fprintf(stderr,
                "ksched schedule: --validate: invalid value \"%s\"; must be one of: strict (or true), warn, "
                "ignore (or false)\n",
                val);
        return -1;
    }
    return 1;
}

/* 0, 1 for -h/--help, or -1 after a message on standard error. */
static int parse_args(int argc, char **argv, struct schedule_args *a)
{
    int rc, stdin_uses = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            return 1;
        } else if (strcmp(arg, "--") == 0) {
            while (++i < argc)
                a->files[a->nfiles++] = argv[i];
        } else if (strcmp(arg, "--explain") == 0) {
            a->explain = true;
        } else if (strcmp(arg, "--summary") == 0) {
            a->summary = true;
        } else if (strcmp(arg, "--no-index") == 0) {
            a->no_index = true;
        } else if ((rc = output_arg(argc, argv, &i, a)) != 0) {
            if (rc < 0)
                return -1;
        } else if ((rc = validate_arg(argc, argv, &i, a)) != 0) {
            if (rc < 0)
                return -1;
        } else if ((rc = ks_cmd_flag_value(CMD, "--config", argc, argv, &i, &a->config)) != 0 ||
                   (rc = ks_cmd_flag_value(CMD, "--plugin-dir", argc, argv, &i, &a->plugin_dir)) != 0) {
            if (rc < 0)
                return -1;
        } else if ((rc = ks_cmd_flag_value(CMD, "--seed", argc, argv, &i, &val)) != 0) {
            if (rc < 0 || ks_cmd_parse_u64(CMD, "--seed", val, UINT64_MAX, &a->seed) < 0)
                return -1;
            a->seeded = true;
        } else if ((rc = ks_cmd_flag_value(CMD, "--parallelism", argc, argv, &i, &val)) != 0) {
            uint64_t v;
            if (rc < 0 || ks_cmd_parse_u64(CMD, "--parallelism", val, 1024, &v) < 0)
                return -1;
            if (v == 0) {
                fprintf(stderr, "ksched schedule: --parallelism: must be at least 1\n");
                return -1;
            }
            a->parallelism = (uint32_t)v;
        } else if ((rc = ks_cmd_feature_gates_arg("ksched schedule", argc, argv, &i)) != 0) {
            if (rc < 0)
                return -1;
        } else if (arg[0] == '-' && arg[1]) {
            fprintf(stderr, "ksched schedule: unknown or incomplete flag \"%s\"\n", arg);
            return -1;
        } else {
            a->files[a->nfiles++] = arg;
        }
    }
    if (a->nfiles == 0) {
        usage(stderr);
        return -1;
    }
    if (a->summary && a->explain) {
        fprintf(stderr, "ksched schedule: --summary and --explain do not go together\n");
        return -1;
    }
    /* standard input can be read once */
    for (int f = 0; f < a->nfiles; f++)
        stdin_uses += strcmp(a->files[f], "-") == 0;
    if (stdin_uses + (a->config && strcmp(a->config, "-") == 0) > 1) {
        fprintf(stderr, "ksched schedule: standard input (-) given more than once\n");
        return -1;
    }
    return 0;
}

/* Hand nodes to the cache and bound pods to it; queue the pending ones. */
static int populate(struct ks_objects *objs, struct ks_cache *cache, struct ks_scheduler *s)
{
    struct ks_node **nodes = ks_objects_nodes(objs);
    uint32_t nnodes = ks_objects_count(objs, NODE);
    int rc = 0;

    for (uint32_t i = 0; i < nnodes; i++) {
        if (rc == 0 && (rc = ks_cache_add_node(cache, nodes[i])) == 0)
            continue;
        ks_node_destroy(nodes[i]); /* the cache did not take it */
    }
    objs->of[KS_KIND_NODE].n = 0; /* the cache owns them now */
    struct ks_pod **pods = ks_objects_pods(objs);
    for (uint32_t i = 0; rc == 0 && i < ks_objects_count(objs, POD); i++) {
        const struct ks_pod *pod = pods[i];
        if (pod->phase == KS_PHASE_SUCCEEDED || pod->phase == KS_PHASE_FAILED)
            continue; /* terminal pods hold no resources, as the scheduler's informer filter */
        if (pod->node_name != KS_ID_EMPTY && pod->scheduling_group) {
            rc = ks_scheduler_add_pod(s, pod) < 0 ? -ENOMEM : 0; /* it counts among its group's pods */
        } else if (pod->node_name != KS_ID_EMPTY) {
            if ((rc = ks_cache_add_pod(cache, ks_pod_get(pod), pod->node_name)) < 0)
                ks_pod_put(pod);
        }
    }
    for (uint32_t i = 0; rc == 0 && i < ks_objects_count(objs, POD); i++) {
        const struct ks_pod *pod = pods[i];
        if (pod->node_name == KS_ID_EMPTY && pod->phase != KS_PHASE_SUCCEEDED &&
            pod->phase != KS_PHASE_FAILED)
            rc = ks_scheduler_add_pod(s, pod) < 0 ? -ENOMEM : 0;
    }
    return rc;
}

int ks_cmd_schedule(int argc, char **argv)
{
    struct schedule_args a = {0};
    struct ks_error err = {0};
    struct ks_objects *objs = NULL;
    struct ks_config *cfg = NULL;
    struct ks_cache *cache = NULL;
    struct ks_scheduler *s = NULL;
    struct ks_explain_table *table = NULL;
    struct ks_summary *summary = NULL;
    int status = 1, rc;

    if (!(a.files = calloc((size_t)argc, sizeof(*a.files))))
        return 1;
    if ((rc = parse_args(argc, argv, &a)) != 0) {
        free(a.files);
        return rc > 0 ? usage(stdout) : 2;
    }
    if (a.plugin_dir && (rc = ks_registry_load_dir(a.plugin_dir, report_plugin, NULL, &err)) < 0) {
        status = fail_input(&err);
        goto out;
    }
    rc = a.config ? ks_config_load_file(a.config, &cfg, &err) : ks_config_load_default(&cfg);
    if (rc == 0)
        rc = ks_objects_load_checked(a.files, a.nfiles, a.validate, ks_dra_check_object, NULL, &objs, &err);
    if (rc < 0) {
        if (err.set) {
            status = fail_input(&err);
        } else {
            fprintf(stderr, "ksched: %s\n", strerror(-rc));
        }
        goto out;
    }
    for (uint32_t i = 0; i < objs->nwarnings && i < KS_LOAD_MAX_WARNINGS; i++)
        fprintf(stderr, "ksched: warning: %s\n", objs->warnings[i]);
    if (objs->nwarnings > KS_LOAD_MAX_WARNINGS)
        fprintf(stderr, "ksched: warning: %u more unknown or duplicate fields not shown\n",
                objs->nwarnings - KS_LOAD_MAX_WARNINGS);
    for (uint32_t i = 0; i < objs->nnotes; i++)
        fprintf(stderr, "ksched: note: %s\n", objs->notes[i]);
    if ((rc = ks_dra_make_template_claims(objs, a.seed)) < 0) {
        fprintf(stderr, "ksched: %s\n", strerror(-rc));
        goto out;
    }
    if (rc > 0)
        fprintf(stderr,
                "ksched: note: %d ResourceClaim%s made from ResourceClaimTemplates, as the resourceclaim "
                "controller makes them\n",
                rc, rc == 1 ? "" : "s");
    if (a.summary ? (rc = ks_summary_create(objs, a.table, stdout, &summary)) < 0
                  : a.table && (rc = ks_explain_table_create(stdout, a.explain, &table)) < 0) {
        fprintf(stderr, "ksched: %s\n", strerror(-rc));
        goto out;
    }
    struct ks_scheduler_opts opts = {
        .config = cfg,
        .objects = objs,
        .seed = a.seed,
        .seeded = a.seeded,
        .parallelism = a.parallelism,
        .deterministic = true,
        .explain = a.explain,
        .no_index = a.no_index,
        .on_event = summary ? ks_summary_on_event
                    : table ? ks_explain_table_on_event
                            : on_event,
        .on_attempt = a.explain ? (table ? ks_explain_table_on_attempt : on_attempt) : NULL,
        .on_group = a.explain ? (table ? ks_explain_table_on_group : on_group) : NULL,
        .on_unschedulable = summary ? ks_summary_on_unschedulable : NULL,
        .on_cycle = table ? ks_explain_table_on_cycle : NULL,
        .ctx = summary ? (void *)summary
               : table ? (void *)table
                       : stdout,
    };
    if ((rc = ks_cache_create(&cache)) < 0 || (rc = ks_scheduler_create(&opts, cache, &s, &err)) < 0) {
        if (err.set)
            status = fail_input(&err);
        else
            fprintf(stderr, "ksched: %s\n", strerror(-rc));
        goto out;
    }
    if ((rc = populate(objs, cache, s)) < 0) {
        fprintf(stderr, "ksched: loading the cluster into the cache: %s\n", strerror(-rc));
        goto out;
    }
    ks_scheduler_run_until_idle(s);
    status = 0;
    if (table && (rc = ks_explain_table_finish(table)) < 0) {
        fprintf(stderr, "ksched: writing the table: %s\n", strerror(-rc));
        status = 1;
    }
    if (summary && (rc = ks_summary_finish(summary, cache)) < 0) {
        fprintf(stderr, "ksched: writing the summary: %s\n", strerror(-rc));
        status = 1;
    }
out:
    ks_scheduler_destroy(s);
    ks_explain_table_destroy(table);
    ks_summary_destroy(summary);
    ks_cache_destroy(cache);
    ks_objects_destroy(objs);
    ks_config_destroy(cfg);
    free(a.files);
    return status;
}
