/*
 * serve_http_request.c - reading an HTTP/1.x request head (serve/serve.h) for the probe and
 * metrics endpoint: the request line (method, target, version), the target's path
 * percent-decoded as Go's net/url gives it to kube-scheduler's handlers (query cut off;
 * origin form "/p" or absolute form "http://host/p"), and the Authorization header.
 *
 * Strict where leniency could mislead the authorizer: the method must be a token, the
 * target a path, every escape valid (no %00), every header line "Name: value" with a
 * token name, no NUL byte; anything else is 400. Lines end in CRLF or LF, as Go accepts.
 */
#include "serve.h"

#include <string.h>
#include <strings.h>

size_t ks_http_head_len(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* RFC 9110 tchar */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The next line of [*p, end) with its CR/LF cut off (NUL-terminated in place); NULL at the end. */
static char *next_line(char **p, char *end)
{
    if (*p >= end)
        return NULL;
    char *line = *p, *nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl)
        nl = end;
    *p = nl + 1;
    if (nl > line && nl[-1] == '\r')
        nl--;
    *nl = '\0';
    return line;
}

static int parse_target(const char *t, struct ks_http_request *r)
{
    if (strncasecmp(t, "http://", 7) == 0 || strncasecmp(t, "https://", 8) == 0) {
        t = strchr(t, '/') + 2; /* past "//" */
        t = strchr(t, '/');
        if (!t)
            t = "/";
    } else if (strcmp(t, "*") == 0) {
        strcpy(r->path, "*");
        return 0;
    } else if (t[0] != '/') {
        return 400;
    }
    size_t n = 0;
    for (const char *p = t; *p && *p != '?'; p++) {
        char c = *p;
        if (c == '%') {
            int hi = hex(p[1]), lo = hi < 0 ? -1 : hex(p[2]);
            if (lo < 0 || (hi == 0 && lo == 0))
                return 400;
            c = (char)(hi * 16 + lo);
            p += 2;
        } else if ((unsigned char)c <= ' ' || c == 0x7f) {
            return 400;
        }
        r->path[n++] = c; /* never longer than the target, which fits */
    }
    r->path[n] = '\0';
    return 0;
}

int ks_http_parse_request(char *buf, size_t len, struct ks_http_request *r)
{
    char *p = buf, *end = buf + len;
    memset(r, 0, sizeof(*r));
    if (memchr(buf, '\0', len))
        return 400; /* no NUL anywhere: every part below is read as a C string */
    char *line = next_line(&p, end);
    if (!line)
        return 400;
    /* METHOD SP TARGET SP VERSION, single spaces */
    char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strrchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1)
        return 400;
    size_t mlen = (size_t)(sp1 - line), tlen = (size_t)(sp2 - sp1 - 1);
    if (mlen >= sizeof(r->method))
        return 400;
    for (size_t i = 0; i < mlen; i++)
        if (!is_tchar((unsigned char)line[i]))
            return 400;
    memcpy(r->method, line, mlen);
    if (tlen >= sizeof(r->target))
        return 414;
    memcpy(r->target, sp1 + 1, tlen);
    if (memchr(r->target, ' ', tlen))
        return 400;
    const char *v = sp2 + 1;
    if (strncmp(v, "HTTP/", 5) != 0 || !(v[5] >= '0' && v[5] <= '9') || v[6] != '.' ||
        !(v[7] >= '0' && v[7] <= '9') || v[8])
        return 400;
    if (v[5] != '1')
        return 505;
    int rc = parse_target(r->target, r);
    if (rc)
        return rc;
    while ((line = next_line(&p, end)) && line[0]) {
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            return 400;
        for (char *c = line; c < colon; c++)
            if (!is_tchar((unsigned char)*c))
                return 400; /* also a folded line, which starts with a space */
        char *val = colon + 1, *vend = val + strlen(val);
        while (*val == ' ' || *val == '\t')
            val++;
        while (vend > val && (vend[-1] == ' ' || vend[-1] == '\t'))
            *--vend = '\0';
        if (!r->authorization && colon - line == 13 && strncasecmp(line, "authorization", 13) == 0)
            r->authorization = val;
    }
    return 0;
}
