/*
 * proto_frame.c - the framing of a protobuf watch stream (kube_internal.h).
 *
 * k8s.io/apimachinery's LengthDelimitedFramer: each frame is a 4-byte big-endian length
 * and that many bytes (a WatchEvent). Frames wholly inside the bytes just received are
 * handed on where they lie; only a frame cut by a read boundary is copied, so the buffer
 * never holds more than one frame and its prefix.
 */
#include "kube_internal.h"

#include "ksched/internal/kube_proto.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static size_t be32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (size_t)u[0] << 24 | (size_t)u[1] << 16 | (size_t)u[2] << 8 | (size_t)u[3];
}

int ks__frame_scan_feed(struct ks__watch_scan *w, const char *data, size_t len,
                        int (*fn)(void *ctx, const char *text, size_t len, bool junk), void *ctx)
{
    int rc;
    while (len > 0) {
        if (w->len == 0) {
            while (len >= 4) {
                size_t flen = be32(data);
                if (flen > KS__SCAN_MAX)
                    return -E2BIG;
                if (len - 4 < flen)
                    break;
                rc = fn(ctx, data + 4, flen, false);
                data += 4 + flen;
                len -= 4 + flen;
                if (rc)
                    return rc;
            }
            if (len == 0)
                return 0;
        }
        /* a cut frame: complete its prefix, then its body */
        size_t want = w->len < 4 ? 4 : 4 + be32(w->buf); /* a held prefix was checked on arrival */
        size_t take = want - w->len < len ? want - w->len : len;
        if ((rc = ks__watch_scan_grow(w, w->len + take)))
            return rc;
        memcpy(w->buf + w->len, data, take);
        w->len += take;
        data += take;
        len -= take;
        if (w->len < 4)
            continue;
        size_t flen = be32(w->buf);
        if (flen > KS__SCAN_MAX)
            return -E2BIG;
        if (w->len == 4 + flen) {
            w->len = 0;
            if ((rc = fn(ctx, w->buf + 4, flen, false)))
                return rc;
        }
    }
    return 0;
}

void ks__watch_scan_detect(struct ks__watch_scan *w, CURL *h)
{
    char *ct = NULL;
    if (w->typed)
        return;
    w->typed = true;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct &&
        strncasecmp(ct, KS_PROTO_MEDIA_TYPE, strlen(KS_PROTO_MEDIA_TYPE)) == 0)
        w->framed = true;
}
