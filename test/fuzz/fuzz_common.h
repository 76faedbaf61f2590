/*
 * fuzz_common.h - what every libFuzzer target of test/fuzz shares.
 *
 * The contract each target checks beyond "no crash, no leak, no undefined behaviour"
 * (which ASan, LeakSanitizer and UBSan enforce): a rejected input yields -EINVAL with a
 * struct ks_error naming the input's file name, a line inside the input and a message,
 * and no half-built object (*out NULL); -ENOMEM is the only other failure allowed.
 * A broken contract aborts, which libFuzzer reports as a crash with the input saved.
 *
 * Interned strings live for the process (include/ksched/base/intern.h), so fuzzing would grow
 * the table without bound: ks_fuzz_recycle() forgets them between inputs once there are
 * many, when no object is alive any more.
 */
#ifndef KSCHED_FUZZ_COMMON_H
#define KSCHED_FUZZ_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksched/api.h"
#include "ksched/base/error.h"
#include "ksched/base/intern.h"

#define KS_FUZZ_FILE "fuzz.yaml"

enum { KS_FUZZ_MAX_INTERNED = 200000 };

/* ks_fuzz_check - abort with a message when @cond is false. */
#define ks_fuzz_check(cond, ...)                                                                             \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz contract broken at %s:%d: ", __FILE__, __LINE__);                          \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

/*
 * The number of lines of the @len bytes at @buf as YAML counts them (a last line without a
 * break counts): "\r\n", a lone "\r", "\n", and in UTF-8 NEL, LS and PS each end a line.
 * JSON's parser counts only "\n", which never gives more.
 */
static inline int ks_fuzz_lines(const uint8_t *buf, size_t len)
{
    int lines = 1;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\r')
            lines += !(i + 1 < len && buf[i + 1] == '\n');
        else if (buf[i] == '\n')
            lines++;
        else if (buf[i] == 0xc2 && i + 1 < len && buf[i + 1] == 0x85)
            lines++;
        else if (buf[i] == 0xe2 && i + 2 < len && buf[i + 1] == 0x80 &&
                 (buf[i + 2] == 0xa8 || buf[i + 2] == 0xa9))
            lines++;
    }
    return lines;
}

/*
 * ks_fuzz_check_result - the failure contract for @rc from loading the @len bytes at
 * @buf named @file: 0, -ENOMEM, or -EINVAL with a complete error. @obj is the output
 * object pointer, which must be NULL unless rc is 0. @line_required: the error must name
 * a line within the input (libyaml counts a trailing "\r" or break as one more line).
 */
static inline void ks_fuzz_check_result(int rc, const void *obj, const struct ks_error *err, const char *file,
                                        const uint8_t *buf, size_t len)
{
    ks_fuzz_check(rc == 0 || rc == -EINVAL || rc == -ENOMEM, "unexpected rc %d", rc);
    ks_fuzz_check(rc == 0 ? obj != NULL : obj == NULL, "rc %d with object %p", rc, obj);
    if (rc != -EINVAL)
        return;
    char text[KS_ERROR_FILE_MAX + KS_ERROR_FIELD_MAX + KS_ERROR_MSG_MAX + 32];
    ks_error_format(err, text, sizeof(text));
    ks_fuzz_check(err->set && err->msg[0], "-EINVAL without a message");
    ks_fuzz_check(strcmp(err->file, file) == 0, "error names file \"%s\": %s", err->file, text);
    ks_fuzz_check(err->line >= 1 && err->line <= ks_fuzz_lines(buf, len) + 1, "error line %d of %d: %s",
                  err->line, ks_fuzz_lines(buf, len), text);
}

/* ks_fuzz_recycle - forget interned strings once there are many (no object may be alive). */
static inline void ks_fuzz_recycle(void)
{
    if (ks_intern_count() > KS_FUZZ_MAX_INTERNED) {
        ks_intern_reset();
        if (ks_api_init() < 0)
            abort();
    }
}

/* ks_fuzz_init - for LLVMFuzzerInitialize: the well-known names every decoder uses. */
static inline int ks_fuzz_init(void)
{
    if (ks_api_init() < 0)
        abort();
    return 0;
}

/*
 * KS_FUZZ_INITIALIZE_API - define libFuzzer's LLVMFuzzerInitialize as ks_fuzz_init(), and
 * declare the entry points (the targets that decode objects or configurations).
 */
#define KS_FUZZ_INITIALIZE_API()                                                                             \
    int LLVMFuzzerInitialize(int *argc, char ***argv);                                                       \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                            \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                                        \
    {                                                                                                        \
        (void)argc;                                                                                          \
        (void)argv;                                                                                          \
        return ks_fuzz_init();                                                                               \
    }

#endif
