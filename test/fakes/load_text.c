/*
 * load_text.c - manifests as strings, loaded through a temporary file (test/fakes/load_text.h).
 */
#include "fakes/load_text.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int ks_test_load_text(const char *text, enum ks_validation validation, struct ks_objects **out,
                      struct ks_error *err)
{
    char path[] = "/tmp/ksched-load-text-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    cr_assert_geq(fputs(text, f), 0);
    cr_assert_eq(fclose(f), 0);
    const char *p = path;
    int rc = ks_objects_load_validate(&p, 1, validation, out, err);
    unlink(path);
    return rc;
}
