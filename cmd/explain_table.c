/*
 * explain_table.c - the terminal tables of `ksched schedule -o table` (explain_table.h).
 *
 * What kube-scheduler-simulator shows for a pod, for a terminal. Each scheduling cycle is
 * a section, opened by on_cycle in the order the scheduling thread pops pods, so the
 * sections come out in the same order on every run with the same --seed, whichever
 * binder thread reports first. Until its terminal outcome (Scheduled, Unschedulable,
 * Error) arrives a section is open and found by its pod (at most one cycle of a pod is in
 * flight): Nominated lands in the pod's section, Preempted in its preemptor's.
 *
 * An attempt keeps only what is shown: the KS_EXPLAIN_TABLE_TOP feasible nodes with the
 * best totals (ties in natural name order, node-2 before node-10, so the order is stable),
 * how many share the best total, and the filtered nodes counted per reason with the first
 * few node names. A node that fails for several reasons counts under each, as in the
 * FitError message. Node names and reasons are interned strings, which live as long as
 * the process.
 *
 * Score columns are headed by the plugin names when they fit in 100 columns, else by
 * abbreviations (a name's capitals: NodeResourcesFit -> NRF); a legend with every
 * plugin's weight comes before the first score table of each profile.
 */
#include "explain_table.h"

#include "ksched/api.h"
#include "ksched/base/intern.h"
#include "ksched/base/lock.h"
#include "ksched/framework.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum {
    NAMES_PER_REASON = 3, /* node names listed per filter reason */
    ABBR_MAX = 6,         /* an abbreviated header, before a digit that tells two apart */
    SCREEN = 100,         /* the width the default profile's table fits */
    NODE_GUESS = 12,      /* node-name width assumed when choosing headers */
};

/* The score columns of one profile. */
struct legend {
    struct legend *next;
    const struct ks_framework *fw;
    char *profile;
    uint32_t n;
    char **name;     /* plugin names */
    char **head;     /* column headers: the names, or abbreviations */
    int32_t *weight; /* per column */
    bool abbreviated;
    bool written;
};

/* One event reported for a section's cycle. */
struct outcome {
    struct outcome *next;
    enum ks_sched_event_kind kind;
    const char *node; /* interned; "" for none */
    char *victim;     /* PREEMPTED: the evicted pod's key */
    char *message;    /* NULL for none */
};

/* Filtered nodes sharing one reason. */
struct reason {
    const char *text;
    uint32_t count;
    uint32_t nnames;
    const char *names[NAMES_PER_REASON]; /* the first by name */
};

/* What is shown of one attempt. */
struct view {
    const struct legend *legend;
    uint32_t nall, nfeasible, nfiltered, nbest; /* nodes; the rest were not evaluated */
    int64_t best;                               /* the best total, shared by nbest nodes */
    uint32_t nrows;
    const char *row_node[KS_EXPLAIN_TABLE_TOP];
    int64_t row_total[KS_EXPLAIN_TABLE_TOP];
    int64_t *row_scores; /* nrows x legend->n */
    uint32_t nreasons;
    struct reason *reasons;
};

struct section {
    struct section *next;     /* cycle order */
    const struct ks_pod *pod; /* a reference, while open */
    char *key;                /* "namespace/name" */
    uint32_t attempt;         /* 0: not known */
    bool open, dropped;       /* dropped: a cycle that reported nothing (skipped) */
    struct view *view;        /* NULL: no attempt recorded */
    struct outcome *outcomes, **outcomes_tail;
    char *text; /* a PodGroup cycle's section, written whole (no pod, never open) */
};

struct ks_explain_table {
    struct ks_mutex lock; /* everything below */
    FILE *out;
    bool explain;
    bool failed; /* a report was lost for want of memory */
    bool wrote;  /* a section or legend is out: the next one starts after a blank line */
    struct section *head, **tail, *last; /* last: the newest section, NULL when there is none */
    struct section **open;               /* sections waiting for their outcome, any order */
    uint32_t nopen, capopen;
    struct legend *legends;
};

/* ---- helpers ------------------------------------------------------------------------------ */

static char *pod_key(const struct ks_pod *pod)
{
    const char *ns = ks_intern_str(pod->meta.namespace_id), *name = pod->meta.name ? pod->meta.name : "";
    size_t len = strlen(ns) + strlen(name) + 2;
    char *key = malloc(len);
    if (key)
        snprintf(key, len, "%s/%s", ns, name);
    return key;
}

static int num_width(int64_t v)
{
    return snprintf(NULL, 0, "%" PRId64, v);
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static bool terminal(enum ks_sched_event_kind k)
{
    return k == KS_SCHED_SCHEDULED || k == KS_SCHED_UNSCHEDULABLE || k == KS_SCHED_ERROR;
}

/* ---- legends -------------------------------------------------------------------------------- */

static void legend_free(struct legend *l)
{
    for (uint32_t i = 0; l->name && l->head && i < l->n; i++) {
        free(l->name[i]);
        free(l->head[i]);
    }
    free(l->name);
    free(l->head);
    free(l->weight);
    free(l->profile);
    free(l);
}

/* @name's capitals and digits, or its first letters when it has fewer than two; at most ABBR_MAX. */
static void abbreviate(const char *name, char *buf)
{
    size_t n = 0;
    for (const char *p = name; *p && n < ABBR_MAX; p++) {
        if (isupper((unsigned char)*p) || isdigit((unsigned char)*p))
            buf[n++] = *p;
    }
    if (n < 2) {
        for (n = 0; name[n] && n < 4; n++)
            buf[n] = name[n];
    }
    buf[n] = '\0';
}

/* Whether one of the first @n headers of @l is @head. */
static bool head_taken(const struct legend *l, uint32_t n, const char *head)
{
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(l->head[i], head) == 0)
            return true;
    }
    return false;
}

static struct legend *legend_build(const struct ks_framework *fw, uint32_t n)
{
    struct legend *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->fw = fw;
    l->n = n;
    const char *profile = ks_framework_profile(fw)->scheduler_name;
    l->profile = strdup(profile ? profile : "");
    l->name = calloc(n ? n : 1, sizeof(*l->name));
    l->head = calloc(n ? n : 1, sizeof(*l->head));
    l->weight = calloc(n ? n : 1, sizeof(*l->weight));
    if (!l->profile || !l->name || !l->head || !l->weight)
        goto err;
    size_t width = 4 + NODE_GUESS + 2 + strlen("TOTAL");
    for (uint32_t i = 0; i < n; i++) {
        if (!(l->name[i] = strdup(ks_framework_plugin_name(fw, ks_framework_score_slot(fw, i)))))
            goto err;
        l->weight[i] = ks_framework_score_weight(fw, i);
        width += 2 + strlen(l->name[i]);
    }
    l->abbreviated = width > SCREEN;
    for (uint32_t i = 0; i < n; i++) {
        char buf[ABBR_MAX + 12];
        if (l->abbreviated) {
            abbreviate(l->name[i], buf);
            size_t base = strlen(buf);
            for (uint32_t suffix = 2; head_taken(l, i, buf); suffix++)
                snprintf(buf + base, sizeof(buf) - base, "%" PRIu32, suffix);
        }
        if (!(l->head[i] = strdup(l->abbreviated ? buf : l->name[i])))
            goto err;
    }
    return l;
err:
    legend_free(l);
    return NULL;
}

static const struct legend *legend_of(struct ks_explain_table *t, const struct ks_framework *fw)
{
    for (struct legend *l = t->legends; l; l = l->next) {
        if (l->fw == fw)
            return l;
    }
    struct legend *l = legend_build(fw, ks_framework_nscore(fw));
    if (l) {
        l->next = t->legends;
        t->legends = l;
    }
    return l;
}

static void legend_write(struct ks_explain_table *t, struct legend *l)
{
    int wh = 0, wn = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        wh = max_int(wh, (int)strlen(l->head[i]));
        wn = max_int(wn, (int)strlen(l->name[i]));
    }
    fprintf(t->out, "%sScore columns of profile %s: each plugin's normalized score times its weight\n",
            t->wrote ? "\n" : "", l->profile);
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->abbreviated)
            fprintf(t->out, "  %-*s  %-*s  x%" PRId32 "\n", wh, l->head[i], wn, l->name[i], l->weight[i]);
        else
            fprintf(t->out, "  %-*s  x%" PRId32 "\n", wn, l->name[i], l->weight[i]);
    }
    l->written = true;
    t->wrote = true;
}

/* ---- sections ------------------------------------------------------------------------------- */

static void section_free(struct section *s)
{
    if (!s)
        return;
    if (s->pod)
        ks_pod_put(s->pod);
    for (struct outcome *o = s->outcomes, *next; o; o = next) {
        next = o->next;
        free(o->victim);
        free(o->message);
        free(o);
    }
    if (s->view) {
        free(s->view->row_scores);
        free(s->view->reasons);
        free(s->view);
    }
    free(s->key);
    free(s->text);
    free(s);
}

static struct section *find_open(struct ks_explain_table *t, const struct ks_pod *pod)
{
    for (uint32_t i = 0; i < t->nopen; i++) {
        if (t->open[i]->pod == pod)
            return t->open[i];
    }
    return NULL;
}

/* The section no longer waits: off the open set, its pod reference dropped. */
static void close_section(struct ks_explain_table *t, struct section *s)
{
    for (uint32_t i = 0; i < t->nopen; i++) {
        if (t->open[i] == s) {
            t->open[i] = t->open[--t->nopen];
            break;
        }
    }
    s->open = false;
    ks_pod_put(s->pod);
    s->pod = NULL;
}

/* A new open section for @pod at the end of the order; NULL (and failed) without memory. */
static struct section *open_section(struct ks_explain_table *t, const struct ks_pod *pod, uint32_t attempt)
{
    struct section *s = calloc(1, sizeof(*s));
    if (!s || !(s->key = pod_key(pod)))
        goto err;
    if (t->nopen == t->capopen) {
        uint32_t cap = t->capopen ? 2 * t->capopen : 16;
        struct section **open = realloc(t->open, cap * sizeof(*open));
        if (!open)
            goto err;
        t->open = open;
        t->capopen = cap;
    }
    s->pod = ks_pod_get(pod);
    s->attempt = attempt;
    s->open = true;
    s->outcomes_tail = &s->outcomes;
    t->open[t->nopen++] = s;
    *t->tail = s;
    t->tail = &s->next;
    t->last = s;
    return s;
err:
    section_free(s);
    t->failed = true;
    return NULL;
}

/* @s's open section, or a new one (a report outside any cycle seen). */
static struct section *section_for(struct ks_explain_table *t, const struct ks_pod *pod)
{
    struct section *s = find_open(t, pod);
    return s ? s : open_section(t, pod, 0);
}

/* ---- recording an attempt --------------------------------------------------------------------- */

/* Names in natural order: digit runs compare as numbers (node-2 before node-10), then bytes. */
static int name_cmp(const char *na, const char *nb)
{
    const char *a = na, *b = nb;
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            const char *x = a, *y = b;
            while (*x == '0' && isdigit((unsigned char)x[1]))
                x++;
            while (*y == '0' && isdigit((unsigned char)y[1]))
                y++;
            size_t nx = 0, ny = 0;
            while (isdigit((unsigned char)x[nx]))
                nx++;
            while (isdigit((unsigned char)y[ny]))
                ny++;
            if (nx != ny)
                return nx < ny ? -1 : 1;
            int c = memcmp(x, y, nx);
            if (c)
                return c;
            a = x + nx;
            b = y + ny;
        } else if (*a != *b) {
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        } else {
            a++;
            b++;
        }
    }
    if (*a || *b)
        return *a ? 1 : -1;
    return strcmp(na, nb); /* equal but for leading zeros */
}

static bool ranks_before(int64_t ta, const char *na, int64_t tb, const char *nb)
{
    return ta > tb || (ta == tb && name_cmp(na, nb) < 0);
}

/* Keep the best rows of the attempt in order; returns the feasible index of each in @idx. */
static void pick_rows(struct view *v, const struct ks_attempt *a, uint32_t *idx)
{
    for (uint32_t i = 0; i < a->nfeasible; i++) {
        int64_t total = a->totals ? a->totals[i] : 0;
        const char *name = ks_intern_str(a->feasible[i]->name);
        if (i == 0 || total > v->best) {
            v->best = total;
            v->nbest = 1;
        } else if (total == v->best) {
            v->nbest++;
        }
        uint32_t r = v->nrows;
        if (r == KS_EXPLAIN_TABLE_TOP) {
            if (!ranks_before(total, name, v->row_total[r - 1], v->row_node[r - 1]))
                continue;
            r--; /* the last row drops out */
        } else {
            v->nrows++;
        }
        for (; r > 0 && ranks_before(total, name, v->row_total[r - 1], v->row_node[r - 1]); r--) {
            v->row_total[r] = v->row_total[r - 1];
            v->row_node[r] = v->row_node[r - 1];
            idx[r] = idx[r - 1];
        }
        v->row_total[r] = total;
        v->row_node[r] = name;
        idx[r] = i;
    }
}

static int add_reason(struct view *v, const char *text, const char *node)
{
    struct reason *g = NULL;
    for (uint32_t i = 0; i < v->nreasons && !g; i++) {
        if (strcmp(v->reasons[i].text, text) == 0)
            g = &v->reasons[i];
    }
    if (!g) {
        /* grown one at a time: an attempt has a handful of distinct reasons */
        struct reason *r = realloc(v->reasons, (v->nreasons + 1) * sizeof(*r));
        if (!r)
            return -ENOMEM;
        v->reasons = r;
        g = &r[v->nreasons++];
        memset(g, 0, sizeof(*g));
        g->text = text;
    }
    g->count++;
    uint32_t j = g->nnames;
    if (j == NAMES_PER_REASON) {
        if (name_cmp(node, g->names[j - 1]) >= 0)
            return 0;
        j--;
    } else {
        g->nnames++;
    }
    for (; j > 0 && name_cmp(node, g->names[j - 1]) < 0; j--)
        g->names[j] = g->names[j - 1];
    g->names[j] = node;
    return 0;
}

/* A node's status: under each of its reasons, or under its plugin's account of them when it gives one. */
static int add_status(struct view *v, const struct ks_attempt *a, const struct ks_status *st,
                      const struct ks_node_snap *n)
{
    const char *node = ks_intern_str(n->name);
    char text[1024];
    int rc = 0;
    v->nfiltered++;
    if (st->nreasons == 0)
        return add_reason(v, ks_code_name(st->code), node);
    if (ks_framework_explain_status(a->fw, a->cs, a->pod, n, st, text, sizeof(text))) {
        uint32_t id = ks_intern(text);
        return id == KS_ID_NONE ? -ENOMEM : add_reason(v, ks_intern_str(id), node);
    }
    for (uint32_t r = 0; r < st->nreasons && rc == 0; r++)
        rc = add_reason(v, ks_intern_str(st->reasons[r]), node);
    return rc;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;
    return (x > y) - (x < y);
}

static int cmp_reason(const void *a, const void *b)
{
    const struct reason *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->text, y->text);
}

/* Every node without an entry that did not pass carries the diagnosis's absent status. */
static int add_absent(struct view *v, const struct ks_attempt *a)
{
    const struct ks_diagnosis *d = a->diag;
    size_t nlisted = (size_t)d->nfailed + a->nfeasible;
    const void **listed = malloc((nlisted ? nlisted : 1) * sizeof(*listed));
    int rc = 0;
    if (!listed)
        return -ENOMEM;
    for (uint32_t i = 0; i < d->nfailed; i++)
        listed[i] = d->nodes[i];
    for (uint32_t i = 0; i < a->nfeasible; i++)
        listed[d->nfailed + i] = a->feasible[i];
    qsort(listed, nlisted, sizeof(*listed), cmp_ptr);
    for (uint32_t i = 0; i < a->snap->nnodes && rc == 0; i++) {
        const struct ks_node_snap *n = ks_snapshot_node(a->snap, i);
        if (ks_attempt_lists(a, n->name) && !bsearch(&n, listed, nlisted, sizeof(*listed), cmp_ptr))
            rc = add_status(v, a, &d->absent, n);
    }
    free(listed);
    return rc;
}

/* The attempt's view into @s; on failure @s keeps no view and the caller reports the loss. */
static int record_attempt(struct ks_explain_table *t, struct section *s, const struct ks_attempt *a)
{
    const struct ks_diagnosis *d = a->diag;
    uint32_t idx[KS_EXPLAIN_TABLE_TOP];
    struct view *v = calloc(1, sizeof(*v));
    int rc = -ENOMEM;

    /* an attempt without feasible nodes reports no score plugins: the columns come from the framework */
    if (!v || !(v->legend = legend_of(t, a->fw)))
        goto err;
    s->attempt = a->attempt;
    v->nall = a->snap->nnodes;
    v->nfeasible = a->nfeasible;
    pick_rows(v, a, idx);
    uint32_t n = v->legend->n;
    if (v->nrows && n) {
        if (!(v->row_scores = calloc((size_t)v->nrows * n, sizeof(*v->row_scores))))
            goto err;
        for (uint32_t r = 0; r < v->nrows && a->nscore == n; r++)
            memcpy(&v->row_scores[(size_t)r * n], &a->scores[(size_t)idx[r] * n], n * sizeof(*v->row_scores));
    }
    rc = 0;
    for (uint32_t i = 0; i < d->nfailed && rc == 0; i++)
        rc = add_status(v, a, &d->statuses[i], d->nodes[i]);
    if (rc == 0 && d->absent.code != KS_SUCCESS)
        rc = add_absent(v, a);
    if (rc < 0)
        goto err;
    if (v->nreasons > 1)
        qsort(v->reasons, v->nreasons, sizeof(*v->reasons), cmp_reason);
    s->view = v;
    return 0;
err:
    if (v) {
        free(v->row_scores);
        free(v->reasons);
        free(v);
    }
    return rc;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static void write_scores(struct ks_explain_table *t, const struct view *v, const char *chosen)
{
    const struct legend *l = v->legend;
    int wnode = (int)strlen("NODE"), wtotal = (int)strlen("TOTAL");
    int *w = calloc(l->n ? l->n : 1, sizeof(*w));
    if (!w) {
        t->failed = true;
        return;
    }
    for (uint32_t k = 0; k < l->n; k++)
        w[k] = (int)strlen(l->head[k]);
    for (uint32_t r = 0; r < v->nrows; r++) {
        wnode = max_int(wnode, (int)strlen(v->row_node[r]));
        wtotal = max_int(wtotal, num_width(v->row_total[r]));
        for (uint32_t k = 0; k < l->n; k++)
            w[k] = max_int(w[k], num_width(v->row_scores[(size_t)r * l->n + k]));
    }
    fprintf(t->out, "    %-*s", wnode, "NODE");
    for (uint32_t k = 0; k < l->n; k++)
        fprintf(t->out, "  %*s", w[k], l->head[k]);
    fprintf(t->out, "  %*s\n", wtotal, "TOTAL");
    for (uint32_t r = 0; r < v->nrows; r++) {
        bool mark = chosen && strcmp(chosen, v->row_node[r]) == 0;
        fprintf(t->out, "  %c %-*s", mark ? '*' : ' ', wnode, v->row_node[r]);
        for (uint32_t k = 0; k < l->n; k++)
            fprintf(t->out, "  %*" PRId64, w[k], v->row_scores[(size_t)r * l->n + k]);
        fprintf(t->out, "  %*" PRId64 "\n", wtotal, v->row_total[r]);
    }
    if (v->nfeasible > v->nrows)
        fprintf(t->out, "    ... and %" PRIu32 " more feasible node%s\n", v->nfeasible - v->nrows,
                v->nfeasible - v->nrows == 1 ? "" : "s");
    free(w);
}

static void write_reasons(struct ks_explain_table *t, const struct view *v)
{
    int wcount = (int)strlen("FILTERED"), wtext = (int)strlen("REASON");
    for (uint32_t i = 0; i < v->nreasons; i++)
        wtext = max_int(wtext, (int)strlen(v->reasons[i].text));
    fprintf(t->out, "  %*s  %-*s  NODES\n", wcount, "FILTERED", wtext, "REASON");
    for (uint32_t i = 0; i < v->nreasons; i++) {
        const struct reason *g = &v->reasons[i];
        int used = fprintf(t->out, "  %*" PRIu32 "  %-*s  ", wcount, g->count, wtext, g->text);
        /* the first name always; more while they and the count of the rest fit the screen */
        uint32_t j = 0;
        for (; j < g->nnames; j++) {
            int more = j + 1 < g->count ? snprintf(NULL, 0, " and %" PRIu32 " more", g->count - j - 1) : 0;
            int len = (j ? 2 : 0) + (int)strlen(g->names[j]);
            if (j && used + len + more > SCREEN)
                break;
            used += fprintf(t->out, "%s%s", j ? ", " : "", g->names[j]);
        }
        if (g->count > j)
            fprintf(t->out, " and %" PRIu32 " more", g->count - j);
        fputc('\n', t->out);
    }
}

static void write_outcome(struct ks_explain_table *t, const struct view *v, const struct outcome *o)
{
    fprintf(t->out, "  => %s:", ks_sched_event_name(o->kind));
    switch (o->kind) {
    case KS_SCHED_SCHEDULED:
        fprintf(t->out, " %s", o->node);
        if (v && v->nbest > 1)
            fprintf(t->out, " (picked at random among %" PRIu32 " nodes tied at %" PRId64 ")", v->nbest,
                    v->best);
        break;
    case KS_SCHED_NOMINATED:
        fprintf(t->out, " %s", o->node);
        break;
    case KS_SCHED_PREEMPTED:
        fprintf(t->out, " %s on %s", o->victim ? o->victim : "", o->node);
        break;
    default:
        break;
    }
    if (o->message)
        fprintf(t->out, " %s", o->message);
    fputc('\n', t->out);
}

/* One --explain section; @s has an attempt, an outcome, or a PodGroup cycle's text. */
static void write_section(struct ks_explain_table *t, const struct section *s)
{
    if (s->text) {
        fprintf(t->out, "%s%s", t->wrote ? "\n" : "", s->text);
        t->wrote = true;
        return;
    }
    const char *chosen = NULL;
    for (const struct outcome *o = s->outcomes; o; o = o->next) {
        if (o->kind == KS_SCHED_SCHEDULED)
            chosen = o->node;
    }
    const struct view *v = s->view;
    if (v && v->nrows && v->legend->n && !v->legend->written)
        legend_write(t, (struct legend *)v->legend);
    fprintf(t->out, "%s%s", t->wrote ? "\n" : "", s->key);
    if (s->attempt)
        fprintf(t->out, " (attempt %" PRIu32 ")", s->attempt);
    if (v)
        fprintf(t->out, ": %" PRIu32 " of %" PRIu32 " node%s feasible", v->nfeasible, v->nall,
                v->nall == 1 ? "" : "s");
    if (v && v->nall > v->nfeasible + v->nfiltered)
        fprintf(t->out, " (%" PRIu32 " not evaluated)", v->nall - v->nfeasible - v->nfiltered);
    fputc('\n', t->out);
    t->wrote = true;
    if (v && v->nrows)
        write_scores(t, v, chosen);
    if (v && v->nreasons)
        write_reasons(t, v);
    for (const struct outcome *o = s->outcomes; o; o = o->next)
        write_outcome(t, v, o);
    if (s->open)
        fputs("  => no outcome when the run ended\n", t->out);
}

/* Write (with --explain) and free the sections at the head of the order that are complete, or all. */
static void flush(struct ks_explain_table *t, bool all)
{
    bool any = false;
    while (t->head && (all || !t->head->open)) {
        struct section *s = t->head;
        if (!(t->head = s->next)) {
            t->tail = &t->head;
            t->last = NULL;
        }
        if (t->explain && !s->dropped && (s->view || s->outcomes || s->text)) {
            write_section(t, s);
            any = true;
        }
        if (s->open)
            close_section(t, s);
        section_free(s);
    }
    if (any)
        fflush(t->out);
}

/* Without --explain: one row per outcome, in cycle order, columns as wide as their widest cell. */
static void write_outcome_table(struct ks_explain_table *t)
{
    enum { POD, STATUS, NODE, MESSAGE, NCOLS };
    static const char *const heads[NCOLS] = {"POD", "STATUS", "NODE", "MESSAGE"};
    int w[NCOLS];
    bool any = false;
    for (int c = 0; c < NCOLS; c++)
        w[c] = (int)strlen(heads[c]);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && any)
            fprintf(t->out, "%-*s  %-*s  %-*s  %s\n", w[POD], heads[POD], w[STATUS], heads[STATUS], w[NODE],
                    heads[NODE], heads[MESSAGE]);
        for (const struct section *s = t->head; s; s = s->next) {
            for (const struct outcome *o = s->outcomes; o; o = o->next) {
                const char *cell[NCOLS] = {o->victim ? o->victim : s->key, ks_sched_event_name(o->kind),
                                           o->node, o->message ? o->message : ""};
                char by[600];
                if (o->kind == KS_SCHED_PREEMPTED) {
                    snprintf(by, sizeof(by), "preempted by %s", s->key);
                    cell[MESSAGE] = by;
                }
                if (pass == 0) {
                    any = true;
                    for (int c = 0; c < MESSAGE; c++)
                        w[c] = max_int(w[c], (int)strlen(cell[c]));
                    continue;
                }
                /* no padding after the last cell that has text */
                int last = cell[MESSAGE][0] ? MESSAGE : cell[NODE][0] ? NODE : STATUS;
                for (int c = 0; c < last; c++)
                    fprintf(t->out, "%-*s  ", w[c], cell[c]);
                fprintf(t->out, "%s\n", cell[last]);
            }
        }
    }
    fflush(t->out);
}

/* ---- the public face ---------------------------------------------------------------------------- */

int ks_explain_table_create(FILE *out, bool explain, struct ks_explain_table **tp)
{
    struct ks_explain_table *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    if (ks_mutex_init(&t->lock, KS_LOCK_EXPLAIN_TABLE) != 0) {
        free(t);
        return -ENOMEM;
    }
    t->out = out;
    t->explain = explain;
    t->tail = &t->head;
    *tp = t;
    return 0;
}

void ks_explain_table_on_cycle(void *ctx, const struct ks_queued_pod *qp)
{
    struct ks_explain_table *t = ctx;
    ks_mutex_lock(&t->lock);
    struct section *prev = find_open(t, qp->pod);
    if (prev) {
        /* nothing reported: the earlier cycle skipped the pod; else it ended without a terminal outcome */
        prev->dropped = !prev->view && !prev->outcomes;
        close_section(t, prev);
    }
    /*
     * With --explain every cycle that does not skip its pod reports an attempt or an
     * outcome before the next cycle starts: a silent previous cycle was skipped.
     */
    struct section *last = t->last;
    if (t->explain && last && last->open && !last->view && !last->outcomes) {
        last->dropped = true;
        close_section(t, last);
    }
    open_section(t, qp->pod, qp->attempts);
    if (t->explain)
        flush(t, false);
    ks_mutex_unlock(&t->lock);
}

void ks_explain_table_on_attempt(void *ctx, const struct ks_attempt *a)
{
    struct ks_explain_table *t = ctx;
    ks_mutex_lock(&t->lock);
    struct section *s = section_for(t, a->pod);
    if (s && !s->view && record_attempt(t, s, a) < 0)
        t->failed = true;
    ks_mutex_unlock(&t->lock);
}

void ks_explain_table_on_event(void *ctx, const struct ks_sched_event *ev)
{
    struct ks_explain_table *t = ctx;
    /* a victim's eviction belongs to its preemptor's cycle */
    const struct ks_pod *owner = ev->kind == KS_SCHED_PREEMPTED && ev->by ? ev->by : ev->pod;
    ks_mutex_lock(&t->lock);
    struct section *s = section_for(t, owner);
    struct outcome *o = s ? calloc(1, sizeof(*o)) : NULL;
    if (!o)
        goto fail;
    o->kind = ev->kind;
    o->node = ks_intern_str(ev->node);
    if ((owner != ev->pod && !(o->victim = pod_key(ev->pod))) ||
        (ev->message && !(o->message = strdup(ev->message)))) {
        free(o->victim);
        free(o);
        goto fail;
    }
    *s->outcomes_tail = o;
    s->outcomes_tail = &o->next;
    if (terminal(ev->kind) && owner == ev->pod) {
        close_section(t, s);
        if (t->explain)
            flush(t, false);
    }
    ks_mutex_unlock(&t->lock);
    return;
fail:
    t->failed = true;
    ks_mutex_unlock(&t->lock);
}

/* The placements table of a PodGroup cycle with a topology constraint into @f. */
static void write_placements(FILE *f, const struct ks_group_attempt *g)
{
    static const char *const heads[] = {"DOMAIN", "NODES", "OUTCOME", "PODS", "NodeResourcesFit"};
    int wd = (int)strlen(heads[0]);
    for (uint32_t i = 0; i < g->nplacements; i++)
        wd = max_int(wd, (int)strlen(ks_intern_str(g->placements[i].domain)) + (i == g->chosen));
    fprintf(f, "  %s (%s)\n  %-*s  %5s  %-10s  %4s  %16s  REASON\n", "placements",
            ks_intern_str(g->topology_key), wd, heads[0], heads[1], heads[2], heads[3], heads[4]);
    for (uint32_t i = 0; i < g->nplacements; i++) {
        const struct ks_group_placement *p = &g->placements[i];
        char domain[300], pods[16] = "", fit[24] = "";
        snprintf(domain, sizeof(domain), "%s%s", ks_intern_str(p->domain), i == g->chosen ? "*" : "");
        if (p->evaluated)
            snprintf(pods, sizeof(pods), "%" PRIu32, p->placed);
        if (p->fit_score >= 0)
            snprintf(fit, sizeof(fit), "%" PRId64, p->fit_score);
        const char *outcome = !p->room        ? "no room"
                              : !p->evaluated ? "not needed"
                              : p->feasible   ? "feasible"
                                              : "infeasible";
        char line[700];
        int n = snprintf(line, sizeof(line), "  %-*s  %5" PRIu32 "  %-10s  %4s  %16s  %s", wd, domain,
                         p->nnodes, outcome, pods, fit, p->why ? p->why : "");
        while (n > 0 && (size_t)n < sizeof(line) && line[n - 1] == ' ')
            line[--n] = '\0'; /* no padding after the last cell with text */
        fprintf(f, "%s\n", line);
    }
}

void ks_explain_table_on_group(void *ctx, const struct ks_group_attempt *g)
{
    struct ks_explain_table *t = ctx;
    struct section *s = calloc(1, sizeof(*s));
    size_t len = 0;
    FILE *f = s ? open_memstream(&s->text, &len) : NULL;
    if (f) {
        fprintf(f, "pod group %s/%s: %" PRIu32 " member%s, %" PRIu32 " scheduled before => %s",
                ks_intern_str(g->namespace_id), g->name, g->members, g->members == 1 ? "" : "s", g->scheduled,
                g->ok ? "Scheduled" : "Unschedulable");
        if (g->message)
            fprintf(f, ": %s", g->message);
        fputc('\n', f);
        if (g->topology_key != KS_ID_NONE)
            write_placements(f, g);
    }
    ks_mutex_lock(&t->lock);
    if (!f || fclose(f) != 0 || !s->text) {
        t->failed = true;
        section_free(s);
    } else {
        /* after the members' sections; not t->last, which on_cycle reads for a skipped pod's cycle */
        s->outcomes_tail = &s->outcomes;
        *t->tail = s;
        t->tail = &s->next;
        flush(t, false);
    }
    ks_mutex_unlock(&t->lock);
}

int ks_explain_table_finish(struct ks_explain_table *t)
{
    ks_mutex_lock(&t->lock);
    if (!t->explain)
        write_outcome_table(t);
    flush(t, true);
    bool failed = t->failed;
    ks_mutex_unlock(&t->lock);
    return failed ? -ENOMEM : 0;
}

void ks_explain_table_destroy(struct ks_explain_table *t)
{
    if (!t)
        return;
    while (t->head) {
        struct section *s = t->head;
        t->head = s->next;
        section_free(s);
    }
    while (t->legends) {
        struct legend *l = t->legends;
        t->legends = l->next;
        legend_free(l);
    }
    free(t->open);
    ks_mutex_destroy(&t->lock);
    free(t);
}
