/*
 * metrics.c - the metrics registry of include/ksched/base/metrics.h and its Prometheus text
 * exposition (format 0.0.4, as client_golang's expfmt writes it).
 *
 * Values are doubles kept as their bit patterns in 64-bit atomics: counters and gauges
 * add with a compare-and-swap loop, histograms count each observation in its first
 * bucket whose bound is >= the value (kept per bucket, made cumulative when written).
 * Whole-number counter increments go to a separate integer (one atomic add); a counter's
 * value is the sum of both. Every update is relaxed: a scrape reads each number on its
 * own, and Prometheus never relied on one scrape being a consistent cut across series
 * either. Single-writer updates (`_sw`) load and store the same atomics without a
 * read-modify-write: correct while one thread updates the series, and still race-free
 * against scrapes.
 *
 * Families and series are appended under the registry mutex and never removed; the
 * writer holds the mutex too, so it never sees a half-built series. Collectors run under
 * collect_lock, outside the mutex (they create series); removing one takes collect_lock,
 * so no collector runs after its removal returns. collect_lock and lock are
 * KS_LOCK_METRICS_COLLECT and KS_LOCK_METRICS_REGISTRY in include/ksched/base/lock.h's order.
 */
#include "ksched/base/metrics.h"
#include "ksched/base/lock.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct ks_metric {
    struct ks_metric *next;
    const struct ks_metric_family *family;
    char *values[KS_METRIC_MAX_LABELS];
    _Atomic uint64_t value;                          /* counter/gauge value, histogram sum (double bits) */
    _Atomic uint64_t ivalue;                         /* counters: whole-number increments (ks_metric_count) */
    _Atomic uint64_t count;                          /* histogram observations */
    _Atomic uint64_t buckets[KS_METRIC_MAX_BUCKETS]; /* per bucket, not cumulative */
};

struct ks_metric_family {
    struct ks_metric_family *next;
    struct ks_metrics *registry;
    enum ks_metric_type type;
    const char *name, *help;
    uint32_t nlabels;
    const char *labels[KS_METRIC_MAX_LABELS];
    uint32_t nbuckets;
    double bounds[KS_METRIC_MAX_BUCKETS];
    bool hide_unused; /* histograms: series without observations are not written */
    struct ks_metric *series, **series_tail;
};

struct ks_collector {
    ks_metrics_collect_fn fn;
    void *ctx;
};

struct ks_metrics {
    struct ks_mutex lock;
    struct ks_metric_family *families, **families_tail;
    struct ks_mutex collect_lock; /* the collectors; held while they run */
    uint32_t ncollectors;
    struct ks_collector collectors[KS_METRICS_MAX_COLLECTORS];
};

static double bits_to_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    return b;
}

int ks_metrics_create(struct ks_metrics **out)
{
    struct ks_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    ks_mutex_init(&m->lock, KS_LOCK_METRICS_REGISTRY);
    ks_mutex_init(&m->collect_lock, KS_LOCK_METRICS_COLLECT);
    m->families_tail = &m->families;
    *out = m;
    return 0;
}

void ks_metrics_destroy(struct ks_metrics *m)
{
    if (!m)
        return;
    while (m->families) {
        struct ks_metric_family *f = m->families;
        m->families = f->next;
        while (f->series) {
            struct ks_metric *s = f->series;
            f->series = s->next;
            for (uint32_t i = 0; i < f->nlabels; i++)
                free(s->values[i]);
            free(s);
        }
        free(f);
    }
    ks_mutex_destroy(&m->collect_lock);
    ks_mutex_destroy(&m->lock);
    free(m);
}

int ks_metrics_add_collector(struct ks_metrics *m, ks_metrics_collect_fn fn, void *ctx)
{
    int rc = -ENOSPC;
    ks_mutex_lock(&m->collect_lock);
    if (m->ncollectors < KS_METRICS_MAX_COLLECTORS) {
        m->collectors[m->ncollectors++] = (struct ks_collector){fn, ctx};
        rc = 0;
    }
    ks_mutex_unlock(&m->collect_lock);
    return rc;
}

void ks_metrics_remove_collector(struct ks_metrics *m, ks_metrics_collect_fn fn, void *ctx)
{
    ks_mutex_lock(&m->collect_lock);
    for (uint32_t i = 0; i < m->ncollectors; i++) {
        if (m->collectors[i].fn == fn && m->collectors[i].ctx == ctx) {
            memmove(&m->collectors[i], &m->collectors[i + 1],
                    (m->ncollectors - i - 1) * sizeof(m->collectors[0]));
            m->ncollectors--;
            break;
        }
    }
    ks_mutex_unlock(&m->collect_lock);
}

struct ks_metric_family *ks_metrics_family(struct ks_metrics *m, enum ks_metric_type type, const char *name,
                                           const char *help, const char *const *labels, const double *buckets,
                                           uint32_t nbuckets)
{
    if (nbuckets > KS_METRIC_MAX_BUCKETS || (type == KS_METRIC_HISTOGRAM) != (nbuckets > 0))
        return NULL;
    for (uint32_t i = 1; i < nbuckets; i++) {
        if (!(buckets[i] > buckets[i - 1]))
            return NULL;
    }
    struct ks_metric_family *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->registry = m;
    f->type = type;
    f->name = name;
    f->help = help;
    for (; labels && labels[f->nlabels]; f->nlabels++) {
        if (f->nlabels == KS_METRIC_MAX_LABELS) {
            free(f);
            return NULL;
        }
        f->labels[f->nlabels] = labels[f->nlabels];
    }
    f->nbuckets = nbuckets;
    if (nbuckets)
        memcpy(f->bounds, buckets, nbuckets * sizeof(*buckets));
    f->series_tail = &f->series;
    ks_mutex_lock(&m->lock);
    *m->families_tail = f;
    m->families_tail = &f->next;
    ks_mutex_unlock(&m->lock);
    return f;
}

void ks_metrics_family_hide_unused(struct ks_metric_family *f)
{
    ks_mutex_lock(&f->registry->lock);
    f->hide_unused = true;
    ks_mutex_unlock(&f->registry->lock);
}

static bool series_matches(const struct ks_metric_family *f, const struct ks_metric *s,
                           const char *const *values)
{
    for (uint32_t i = 0; i < f->nlabels; i++) {
        if (strcmp(s->values[i], values[i]) != 0)
            return false;
    }
    return true;
}

struct ks_metric *ks_metric_series(struct ks_metric_family *f, const char *const *values)
{
    struct ks_metrics *m = f->registry;
    struct ks_metric *s;

    ks_mutex_lock(&m->lock);
    for (s = f->series; s; s = s->next) {
        if (series_matches(f, s, values))
            goto out;
    }
    if (!(s = calloc(1, sizeof(*s))))
        goto out;
    s->family = f;
    for (uint32_t i = 0; i < f->nlabels; i++) {
        if (!(s->values[i] = strdup(values[i]))) {
            for (uint32_t j = 0; j < i; j++)
                free(s->values[j]);
            free(s);
            s = NULL;
            goto out;
        }
    }
    *f->series_tail = s;
    f->series_tail = &s->next;
out:
    ks_mutex_unlock(&m->lock);
    return s;
}

static void atomic_add_double(_Atomic uint64_t *p, double v)
{
    uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
    /* relaxed: the value is read on its own by scrapes; the CAS only keeps additions from being lost */
    while (!atomic_compare_exchange_weak_explicit(p, &old, double_to_bits(bits_to_double(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

void ks_metric_inc(struct ks_metric *s)
{
    ks_metric_add(s, 1);
}

void ks_metric_add(struct ks_metric *s, double v)
{
    atomic_add_double(&s->value, v);
}

void ks_metric_count(struct ks_metric *s, uint64_t n)
{
    atomic_fetch_add_explicit(&s->ivalue, n, memory_order_relaxed);
}

/* relaxed load and store: the one writer's own updates are ordered; scrapes read a recent value */
static inline void add_sw(_Atomic uint64_t *p, uint64_t n)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + n, memory_order_relaxed);
}

void ks_metric_count_sw(struct ks_metric *s, uint64_t n)
{
    add_sw(&s->ivalue, n);
}

void ks_metric_set(struct ks_metric *s, double v)
{
    atomic_store_explicit(&s->value, double_to_bits(v), memory_order_relaxed);
}

/* The bucket of @v: the first whose bound is >= it, nbuckets for +Inf only. */
static inline uint32_t bucket_of(const struct ks_metric_family *f, double v)
{
    uint32_t i = 0;
    while (i < f->nbuckets && v > f->bounds[i])
        i++;
    return i;
}

void ks_metric_observe_n(struct ks_metric *s, double v, uint64_t n)
{
    uint32_t i = bucket_of(s->family, v);
    if (i < s->family->nbuckets)
        atomic_fetch_add_explicit(&s->buckets[i], n, memory_order_relaxed);
    atomic_add_double(&s->value, v * (double)n);
    atomic_fetch_add_explicit(&s->count, n, memory_order_relaxed);
}

void ks_metric_observe(struct ks_metric *s, double v)
{
    ks_metric_observe_n(s, v, 1);
}

void ks_metric_observe_sw(struct ks_metric *s, double v)
{
    uint32_t i = bucket_of(s->family, v);
    if (i < s->family->nbuckets)
        add_sw(&s->buckets[i], 1);
    double sum = bits_to_double(atomic_load_explicit(&s->value, memory_order_relaxed));
    atomic_store_explicit(&s->value, double_to_bits(sum + v), memory_order_relaxed);
    add_sw(&s->count, 1);
}

/* A counter's or gauge's value: the double part plus the whole-number increments. */
static double scalar_value(const struct ks_metric *s)
{
    return bits_to_double(atomic_load_explicit(&s->value, memory_order_relaxed)) +
           (double)atomic_load_explicit(&s->ivalue, memory_order_relaxed);
}

double ks_metric_value(const struct ks_metric *s)
{
    if (s->family->type == KS_METRIC_HISTOGRAM)
        return (double)atomic_load_explicit(&s->count, memory_order_relaxed);
    return scalar_value(s);
}

void ks_metrics_exponential_buckets(double start, double factor, uint32_t n, double *out)
{
    for (uint32_t i = 0; i < n; i++) {
        out[i] = start;
        start *= factor;
    }
}

void ks_metrics_format_double(double v, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, len, signbit(v) ? "-0" : "0");
        return;
    }
    /* the fewest significant digits that read back as @v */
    char e[40];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", prec - 1, v);
    int exp = atoi(strchr(e, 'e') + 1);
    /* Go's 'g' with the shortest precision switches to an exponent below 1e-4 and from 1e6 */
    if (exp < -4 || exp >= 6) {
        snprintf(buf, len, "%s", e);
        return;
    }
    int decimals = prec - 1 - exp;
    snprintf(buf, len, "%.*f", decimals > 0 ? decimals : 0, v);
}

/* A label value or help text with its escapes: backslash, newline, and (label values) the quote. */
static void write_escaped(FILE *out, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", out);
        else if (*s == '\n')
            fputs("\\n", out);
        else if (quote && *s == '"')
            fputs("\\\"", out);
        else
            fputc(*s, out);
    }
}

/* name{labels[,le="bound"]} value */
static void write_sample(FILE *out, const struct ks_metric_family *f, const struct ks_metric *s,
                         const char *suffix, const char *le, double v)
{
    char num[64];
    fprintf(out, "%s%s", f->name, suffix);
    if (f->nlabels || le) {
        fputc('{', out);
        for (uint32_t i = 0; i < f->nlabels; i++) {
            fprintf(out, "%s%s=\"", i ? "," : "", f->labels[i]);
            write_escaped(out, s->values[i], true);
            fputc('"', out);
        }
        if (le)
            fprintf(out, "%sle=\"%s\"", f->nlabels ? "," : "", le);
        fputc('}', out);
    }
    ks_metrics_format_double(v, num, sizeof(num));
    fprintf(out, " %s\n", num);
}

static const char *const type_names[] = {"counter", "gauge", "histogram"};

int ks_metrics_write(struct ks_metrics *m, FILE *out)
{
    /* outside the registry lock: collectors may create series */
    ks_mutex_lock(&m->collect_lock);
    for (uint32_t i = 0; i < m->ncollectors; i++)
        m->collectors[i].fn(m->collectors[i].ctx);
    ks_mutex_unlock(&m->collect_lock);

    ks_mutex_lock(&m->lock);
    for (const struct ks_metric_family *f = m->families; f; f = f->next) {
        fprintf(out, "# HELP %s ", f->name);
        write_escaped(out, f->help, false);
        fprintf(out, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
        for (const struct ks_metric *s = f->series; s; s = s->next) {
            if (f->type != KS_METRIC_HISTOGRAM) {
                write_sample(out, f, s, "", NULL, scalar_value(s));
                continue;
            }
            if (f->hide_unused && atomic_load_explicit(&s->count, memory_order_relaxed) == 0)
                continue;
            double value = bits_to_double(atomic_load_explicit(&s->value, memory_order_relaxed));
            uint64_t cumulative = 0;
            for (uint32_t b = 0; b < f->nbuckets; b++) {
                char le[64];
                cumulative += atomic_load_explicit(&s->buckets[b], memory_order_relaxed);
                ks_metrics_format_double(f->bounds[b], le, sizeof(le));
                write_sample(out, f, s, "_bucket", le, (double)cumulative);
            }
            /* the count is read last, so +Inf is never below a finite bucket of this scrape */
            uint64_t count = atomic_load_explicit(&s->count, memory_order_relaxed);
            if (count < cumulative)
                count = cumulative;
            write_sample(out, f, s, "_bucket", "+Inf", (double)count);
            write_sample(out, f, s, "_sum", NULL, value);
            write_sample(out, f, s, "_count", NULL, (double)count);
        }
    }
    ks_mutex_unlock(&m->lock);
    return ferror(out) ? -EIO : 0;
}
