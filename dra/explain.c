/*
 * explain.c - ks_dra_explain(): why a pod's claims cannot be allocated on a node, in words,
 * for `ksched schedule --explain` (the messages kube-scheduler prints stay upstream's:
 * "cannot allocate all claims").
 *
 * The account takes the claims' requests in the order the search does and, for each, counts
 * the node's devices by the first reason the search's loop would skip them for (enum
 * dra_unfit: in use, not of the class, not matching the request's selectors, ...). The
 * first request with fewer usable devices than it asks for is the answer ("claim NS/NAME,
 * request R: 2 devices of class gpu wanted, 1 of 8 usable (6 in use, 1 not matching the
 * request's selectors)"); a firstAvailable request is that when none of its subrequests
 * has enough. When every request has enough on its own, they do not fit together: devices
 * wanted by several requests, constraints, or shared counters.
 *
 * Context: as ks_dra_allocate_prepared(), whose validation it repeats (an error there is
 * the call's own message: nothing to add). Slow path: only --explain asks.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ksched/base/intern.h"

#include "allocate_run.h"

static const char *const unfit_text[DRA_UNFIT_COUNT] = {
    [DRA_UNFIT_IN_USE] = "in use",
    [DRA_UNFIT_BINDING] = "with binding conditions",
    [DRA_UNFIT_CLASS] = "not of the class",
    [DRA_UNFIT_SELECTOR] = "not matching the request's selectors",
    [DRA_UNFIT_NODE] = "not selecting this node",
    [DRA_UNFIT_CAPACITY] = "without the capacity asked for",
    [DRA_UNFIT_PARTITIONABLE] = "partitionable",
    [DRA_UNFIT_TAINT] = "with an untolerated taint",
};

struct out {
    char *buf;
    size_t len, at;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
    va_list ap;
    if (o->at >= o->len)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->at, o->len - o->at, fmt, ap);
    va_end(ap);
    o->at = n < 0 ? o->len : o->at + (size_t)n;
}

/*
 * One request or subrequest: 1 when the node has enough usable devices for it, 0 when not
 * (its account said in @o), or R_ERR / R_NOMEM.
 */
static int spec_fits(struct run *R, const struct dra_spec *sp, struct out *o)
{
    uint32_t count[DRA_UNFIT_COUNT] = {0};
    for (uint32_t k = 0; k < R->ps->ndev; k++) {
        int why = ks__dra_unfit(R, sp, k);
        if (why < 0)
            return why;
        count[why]++;
    }
    /* allocationMode All wants every device of the class and selectors, none of them in use */
    uint32_t wanted = sp->all ? count[DRA_FIT] + count[DRA_UNFIT_IN_USE] : (uint32_t)sp->count;
    if (count[DRA_FIT] >= wanted && (!sp->all || count[DRA_UNFIT_IN_USE] == 0) && wanted > 0)
        return 1;
    const char *cls = sp->cls ? ks_intern_str(sp->cls->obj->name) : "?";
    if (sp->all)
        say(o, "%s: all devices of class %s wanted", sp->full_name, cls);
    else
        say(o, "%s: %" PRId64 " device%s of class %s wanted", sp->full_name, sp->count,
            sp->count == 1 ? "" : "s", cls);
    if (R->ps->ndev == 0) {
        say(o, ", the node has no devices");
        return 0;
    }
    say(o, ", %u of %u usable", count[DRA_FIT], R->ps->ndev);
    const char *sep = " (";
    for (uint32_t w = DRA_UNFIT_IN_USE; w < DRA_UNFIT_COUNT; w++) {
        if (!count[w])
            continue;
        say(o, "%s%u %s", sep, count[w], unfit_text[w]);
        sep = ", ";
    }
    if (*sep == ',')
        say(o, ")");
    return 0;
}

int ks_dra_explain(const struct ks_dra_allocated *alloc, const struct ks_node *node,
                   const struct ks_dra_claims *claims, struct ks_dra_scratch *s, char *buf, size_t len)
{
    struct run R;
    char err[256];
    struct out o = {buf, len, 0};

    if (!len)
        return 0;
    buf[0] = '\0';
    if (ks_dra_allocate_prepared(alloc, node, claims, s, NULL, err, sizeof(err)) != KS_DRA_UNSUITABLE)
        return 0;
    ks__dra_run_init(&R, alloc, node, claims, s, err, sizeof(err));
    if (ks__dra_run_begin(&R) != R_DONE)
        return 0;
    for (uint32_t ci = 0; ci < claims->nclaims; ci++) {
        const struct dra_claim *cl = &claims->claims[ci];
        for (uint32_t ri = 0; ri < cl->nreq; ri++) {
            const struct dra_req *rq = &cl->reqs[ri];
            size_t mark = o.at;
            say(&o, "claim %s, request ", cl->kobj);
            if (rq->has_sub)
                say(&o, "%s: none of its subrequests fits: ", claims->specs[rq->first_spec].base_name);
            int fits = 0;
            for (uint32_t j = 0; j < rq->nspec && !fits; j++) {
                if (j)
                    say(&o, "; ");
                fits = spec_fits(&R, &claims->specs[rq->first_spec + j], &o);
                if (fits < 0)
                    return 0;
            }
            if (!fits)
                return 1;
            o.at = mark;
            buf[mark] = '\0';
        }
    }
    say(&o, "each request has devices enough on its own, but not all of them together (devices wanted by "
            "several requests, constraints, or shared counters)");
    return 1;
}
