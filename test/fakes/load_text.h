/*
 * load_text.h - load manifests given as a string, through the loader's file path.
 */
#ifndef KS_TEST_LOAD_TEXT_H
#define KS_TEST_LOAD_TEXT_H

#include "ksched/loader.h"

/*
 * ks_test_load_text - write @text to a new temporary file, load it with
 * ks_objects_load_validate() under @validation, remove the file and return the loader's
 * code (*out and @err as the loader leaves them). Aborts the test if the file cannot be
 * written.
 */
int ks_test_load_text(const char *text, enum ks_validation validation, struct ks_objects **out,
                      struct ks_error *err);

#endif
