/*
 * status.c - plugin statuses: code names, filling a status with an interned reason, and
 * wrapping a plugin's status into the framework's error messages.
 *
 * Mirrors framework/interface.go (Code.String, NewStatus, Status.Message, AsStatus): a
 * status's message is its reasons joined by ", "; an error coming out of a Run function
 * is a single reason "<what failed>: <message>", as upstream builds with
 * fmt.Errorf("...: %w", status.AsError()).
 *
 * Context: any thread. Everything here interns its message, which takes the intern
 * table's lock and may allocate: plugins call ks_status_set() outside the per-node loop
 * (or only on failure), and the framework wraps statuses only on error paths.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "framework_internal.h"
#include "ksched/base/intern.h"

static const char *const code_names[] = {
#define KS_X(id, text) [KS_##id] = text,
    KS_CODE_MAP(KS_X)
#undef KS_X
};

const char *ks_code_name(enum ks_code code)
{
    if ((unsigned)code >= KS_CODE_COUNT)
        return "Unknown";
    return code_names[code];
}

static void set_one(struct ks_status *st, enum ks_code code, const char *msg)
{
    uint32_t id = ks_intern(msg);

    st->code = code;
    st->nreasons = 0;
    if (id != KS_ID_NONE)
        st->reasons[st->nreasons++] = id;
}

int ks_status_set(struct ks_status *st, enum ks_code code, const char *fmt, ...)
{
    char msg[KS_FW_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    set_one(st, code, msg);
    st->plugin = KS_NO_PLUGIN;
    return code;
}

void ks__status_message(const struct ks_status *st, char *buf, size_t len)
{
    size_t off = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (uint16_t i = 0; i < st->nreasons && i < KS_STATUS_MAX_REASONS && off < len; i++) {
        int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", ks_intern_str(st->reasons[i]));
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

int ks__status_wrap(struct ks_status *st, enum ks_code code, uint16_t slot, const char *fmt, ...)
{
    char inner[KS_FW_MSG_MAX];
    char msg[2 * KS_FW_MSG_MAX];
    va_list ap;
    int n;

    ks__status_message(st, inner, sizeof(inner));
    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - (size_t)n, "%s", inner);
    set_one(st, code, msg);
    st->plugin = slot;
    return code;
}
