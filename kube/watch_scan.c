/*
 * watch_scan.c - framing of a watch stream into events (see kube_internal.h).
 *
 * A kube-apiserver writes one JSON object per event, each followed by a newline, in
 * chunks that need not end on an event boundary. Rather than trusting the newlines, the
 * scanner tracks nesting depth and string state byte by byte, so an event split across
 * any number of reads, or pretty-printed over several lines, is handed on whole once its
 * closing brace arrives. Anything at the top level that does not open a value is junk up
 * to the next newline. Consumed bytes are dropped from the front of the buffer. A protobuf
 * stream is cut at its length prefixes instead (kube/proto_frame.c).
 */
#include "kube_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ks__watch_scan_grow(struct ks__watch_scan *w, size_t total)
{
    if (w->cap >= total)
        return 0;
    size_t cap = w->cap ? w->cap : 16384;
    while (cap < total)
        cap *= 2;
    char *b = realloc(w->buf, cap);
    if (!b)
        return -ENOMEM;
    w->buf = b;
    w->cap = cap;
    return 0;
}

static int reserve(struct ks__watch_scan *w, size_t more)
{
    if (w->cap - w->len >= more)
        return 0;
    if (w->len + more > KS__SCAN_MAX)
        return -E2BIG;
    return ks__watch_scan_grow(w, w->len + more);
}

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int ks__watch_scan_feed(struct ks__watch_scan *w, const char *data, size_t len,
                        int (*fn)(void *ctx, const char *text, size_t len, bool junk), void *ctx)
{
    if (w->framed)
        return ks__frame_scan_feed(w, data, len, fn, ctx);
    int rc = reserve(w, len);
    if (rc)
        return rc;
    memcpy(w->buf + w->len, data, len);
    w->len += len;

    for (; w->pos < w->len; w->pos++) {
        char c = w->buf[w->pos];
        if (w->junk) {
            if (c == '\n') {
                w->junk = false;
                if ((rc = fn(ctx, w->buf + w->start, w->pos - w->start, true)))
                    break;
            }
            continue;
        }
        if (w->depth == 0) {
            if (is_space(c))
                continue;
            w->start = w->pos;
            if (c == '{' || c == '[')
                w->depth = 1;
            else
                w->junk = true;
            continue;
        }
        if (ks__json_in_string(&w->in_str, &w->esc, c))
            continue;
        if (c == '"') {
            w->in_str = true;
        } else if (c == '{' || c == '[') {
            w->depth++;
        } else if ((c == '}' || c == ']') && --w->depth == 0) {
            if ((rc = fn(ctx, w->buf + w->start, w->pos + 1 - w->start, false))) {
                w->pos++;
                break;
            }
        }
    }
    /* drop what is consumed: everything before the value (or junk) still open */
    size_t keep = w->depth > 0 || w->junk ? w->start : w->pos;
    if (keep > 0) {
        memmove(w->buf, w->buf + keep, w->len - keep);
        w->len -= keep;
        w->pos -= keep;
        w->start -= keep < w->start ? keep : w->start;
    }
    return rc;
}

void ks__watch_scan_reset(struct ks__watch_scan *w)
{
    w->len = w->pos = w->start = 0;
    w->depth = 0;
    w->in_str = w->esc = w->junk = false;
    w->typed = w->framed = false;
}

void ks__watch_scan_free(struct ks__watch_scan *w)
{
    free(w->buf);
    memset(w, 0, sizeof(*w));
}
