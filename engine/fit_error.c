/*
 * fit_error.c - the FailedScheduling message of a pod no node fits.
 *
 * As upstream's FitError.Error() (framework/types.go): "0/N nodes are available:", then
 * the PreFilter message when PreFilter rejected the pod, otherwise a histogram of the
 * failed nodes' reasons ("<count> <reason>", sorted as strings, joined with ", ", the
 * absent-node status counted once per node without an entry), each part closed by ".",
 * then the PostFilter message.
 */
#include "scheduler_internal.h"

#include "ksched/intern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct text {
    char *buf;
    size_t len, cap;
    bool oom;
};

static void append(struct text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *b = realloc(t->buf, cap);
        if (!b) {
            t->oom = true;
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n + 1);
    t->len += n;
}

struct count {
    uint32_t reason;
    uint64_t n;
    char label[32]; /* "<n> " */
};

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort "<n> <reason>" strings as Go's sort.Strings would: bytewise. */
static int cmp_entry(const void *a, const void *b)
{
    const struct count *x = a, *y = b;
    char sx[KS_ERROR_MSG_MAX], sy[KS_ERROR_MSG_MAX];
    snprintf(sx, sizeof(sx), "%s%s", x->label, ks_intern_str(x->reason));
    snprintf(sy, sizeof(sy), "%s%s", y->label, ks_intern_str(y->reason));
    return strcmp(sx, sy);
}

/* The histogram of reasons as sorted "<n> <reason>" entries; returns the count or -1. */
static int histogram(const struct ks_diagnosis *d, struct count **out)
{
    size_t total = d->absent.code != KS_SUCCESS && d->nfailed < d->nall ? d->absent.nreasons : 0;
    for (uint32_t i = 0; i < d->nfailed; i++)
        total += d->statuses[i].nreasons;
    uint32_t *ids = malloc((total ? total : 1) * sizeof(*ids));
    struct count *c = calloc(total ? total : 1, sizeof(*c));
    if (!ids || !c) {
        free(ids);
        free(c);
        return -1;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < d->nfailed; i++) {
        for (uint32_t r = 0; r < d->statuses[i].nreasons; r++)
            ids[k++] = d->statuses[i].reasons[r];
    }
    size_t explicit_end = k;
    qsort(ids, explicit_end, sizeof(*ids), cmp_id);
    int nc = 0;
    for (size_t i = 0; i < explicit_end; i++) {
        if (nc == 0 || c[nc - 1].reason != ids[i])
            c[nc++] = (struct count){.reason = ids[i]};
        c[nc - 1].n++;
    }
    if (total > explicit_end) {
        for (uint32_t r = 0; r < d->absent.nreasons; r++) {
            int j;
            for (j = 0; j < nc && c[j].reason != d->absent.reasons[r]; j++)
                ;
            if (j == nc)
                c[nc++] = (struct count){.reason = d->absent.reasons[r]};
            c[j].n += d->nall - d->nfailed;
        }
    }
    for (int i = 0; i < nc; i++)
        snprintf(c[i].label, sizeof(c[i].label), "%llu ", (unsigned long long)c[i].n);
    qsort(c, (size_t)nc, sizeof(*c), cmp_entry);
    free(ids);
    *out = c;
    return nc;
}

char *ks__fit_error_message(const struct ks_diagnosis *d)
{
    struct text t = {0};
    char head[64];

    snprintf(head, sizeof(head), "0/%u nodes are available:", d->nall);
    append(&t, head);
    if (d->pre_filter_msg != KS_ID_EMPTY) {
        append(&t, " ");
        append(&t, ks_intern_str(d->pre_filter_msg));
        append(&t, ".");
    } else {
        struct count *c = NULL;
        int nc = histogram(d, &c);
        if (nc < 0) {
            free(t.buf);
            return NULL;
        }
        for (int i = 0; i < nc; i++) {
            append(&t, i ? ", " : " ");
            append(&t, c[i].label);
            append(&t, ks_intern_str(c[i].reason));
        }
        if (nc)
            append(&t, ".");
        free(c);
    }
    if (d->post_filter_msg != KS_ID_EMPTY) {
        append(&t, " ");
        append(&t, ks_intern_str(d->post_filter_msg));
    }
    if (t.oom) {
        free(t.buf);
        return NULL;
    }
    return t.buf;
}
