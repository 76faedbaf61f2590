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

#include "ksched/base/intern.h"

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

/* Count @reason @n more times among the @nc entries of @c (room for one more). */
static int tally(struct count *c, int nc, uint32_t reason, uint64_t n)
{
    int j;
    for (j = 0; j < nc && c[j].reason != reason; j++)
        ;
    if (j == nc)
        c[nc++] = (struct count){.reason = reason};
    c[j].n += n;
    return nc;
}

/* The histogram of reasons as sorted "<n> <reason>" entries; returns the count or -1. */
static int histogram(const struct ks_diagnosis *d, struct count **out)
{
    size_t total = d->absent.code != KS_SUCCESS && d->nfailed < d->nall ? d->absent.nreasons : 0;
    uint32_t nexplicit = d->group_count ? d->ngroups : d->nfailed;
    for (uint32_t i = 0; i < nexplicit; i++)
        total += d->statuses[i].nreasons;
    uint32_t *ids = malloc((total ? total : 1) * sizeof(*ids));
    struct count *c = calloc(total ? total : 1, sizeof(*c));
    if (!ids || !c) {
        free(ids);
        free(c);
        return -1;
    }
    int nc = 0;
    if (!d->group_count) {
        size_t k = 0;
        for (uint32_t i = 0; i < d->nfailed; i++) {
            for (uint32_t r = 0; r < d->statuses[i].nreasons; r++)
                ids[k++] = d->statuses[i].reasons[r];
        }
        qsort(ids, k, sizeof(*ids), cmp_id);
        for (size_t i = 0; i < k; i++) {
            if (nc == 0 || c[nc - 1].reason != ids[i])
                c[nc++] = (struct count){.reason = ids[i]};
            c[nc - 1].n++;
        }
    } else {
        for (uint32_t g = 0; g < d->ngroups; g++) {
            for (uint32_t r = 0; r < d->statuses[g].nreasons && d->group_count[g]; r++)
                nc = tally(c, nc, d->statuses[g].reasons[r], d->group_count[g]);
        }
    }
    if (d->absent.code != KS_SUCCESS && d->nfailed < d->nall) {
        for (uint32_t r = 0; r < d->absent.nreasons; r++)
            nc = tally(c, nc, d->absent.reasons[r], d->nall - d->nfailed);
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
