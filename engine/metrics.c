/*
 * metrics.c - the metrics registry of include/ksched/metrics.h and its Prometheus text
 * exposition (format 0.0.4, as client_golang's expfmt writes it).
 *
 * Values are doubles kept as their bit patterns in 64-bit atomics: counters and gauges
 * add with a compare-and-swap loop, histograms count each observation in its first
 * bucket whose bound is >= the value (kept per bucket, made cumulative when written).
 * Every update is relaxed: a scrape reads each number on its own, and Prometheus never
 * relied on one scrape being a consistent cut across series either.
 *
 * Families and series are appended under the registry mutex and never removed; the
 * writer holds the mutex too, so it never sees a half-built series.
 */
#include "ksched/metrics.h"

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
    struct ks_metric *series, **series_tail;
};

struct ks_metrics {
    pthread_mutex_t lock;
    struct ks_metric_family *families, **families_tail;
    ks_metrics_collect_fn collect;
    void *collect_ctx;
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
    pthread_mutex_init(&m->lock, NULL);
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
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void ks_metrics_on_collect(struct ks_metrics *m, ks_metrics_collect_fn fn, void *ctx)
{
    pthread_mutex_lock(&m->lock);
    m->collect = fn;
    m->collect_ctx = ctx;
    pthread_mutex_unlock(&m->lock);
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
    pthread_mutex_lock(&m->lock);
    *m->families_tail = f;
    m->families_tail = &f->next;
    pthread_mutex_unlock(&m->lock);
    return f;
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

    pthread_mutex_lock(&m->lock);
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
    pthread_mutex_unlock(&m->lock);
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

void ks_metric_set(struct ks_metric *s, double v)
{
    atomic_store_explicit(&s->value, double_to_bits(v), memory_order_relaxed);
}

void ks_metric_observe(struct ks_metric *s, double v)
{
    const struct ks_metric_family *f = s->family;
    uint32_t i = 0;
    while (i < f->nbuckets && v > f->bounds[i])
        i++;
    if (i < f->nbuckets)
        atomic_fetch_add_explicit(&s->buckets[i], 1, memory_order_relaxed);
    atomic_add_double(&s->value, v);
    atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
}

double ks_metric_value(const struct ks_metric *s)
{
    if (s->family->type == KS_METRIC_HISTOGRAM)
        return (double)atomic_load_explicit(&s->count, memory_order_relaxed);
    return bits_to_double(atomic_load_explicit(&s->value, memory_order_relaxed));
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
    pthread_mutex_lock(&m->lock);
    ks_metrics_collect_fn collect = m->collect;
    void *ctx = m->collect_ctx;
    pthread_mutex_unlock(&m->lock);
    if (collect)
        collect(ctx); /* outside the lock: it may create series */

    pthread_mutex_lock(&m->lock);
    for (const struct ks_metric_family *f = m->families; f; f = f->next) {
        fprintf(out, "# HELP %s ", f->name);
        write_escaped(out, f->help, false);
        fprintf(out, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
        for (const struct ks_metric *s = f->series; s; s = s->next) {
            double value = bits_to_double(atomic_load_explicit(&s->value, memory_order_relaxed));
            if (f->type != KS_METRIC_HISTOGRAM) {
                write_sample(out, f, s, "", NULL, value);
                continue;
            }
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
    pthread_mutex_unlock(&m->lock);
    return ferror(out) ? -EIO : 0;
}
