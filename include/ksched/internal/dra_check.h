/*
 * dra_check.h - the API server's validation of DRA device selectors that needs the CEL
 * module: each expression compiles in the device environment, evaluates to bool, and its
 * estimated cost stays within resourceapi.CELSelectorExpressionMaxCost (validateCELExpression
 * of pkg/apis/resource/validation).
 */
#ifndef KSCHED_DRA_CHECK_H
#define KSCHED_DRA_CHECK_H

#include "ksched/base/error.h"
#include "ksched/loader.h"

/*
 * ks_dra_check_object - a ks_object_check_fn (ksched/loader.h) for the loader: the selectors
 * of a DeviceClass, ResourceClaim or ResourceClaimTemplate (other kinds pass). 0, or -EINVAL
 * with @err at the expression's line and field, in the API server's words
 * ("spec.selectors[0].cel.expression: Invalid value: \"<expr>\": compilation failed: ERROR:
 * <input>:1:1: ...", "...: Forbidden: too complex, exceeds cost limit"); -ENOMEM. @ctx is
 * unused. Load time, one thread; compiles (slow path).
 */
int ks_dra_check_object(void *ctx, const char *file, const char *prefix, enum ks_kind kind, const void *obj,
                        struct ks_error *err);

#endif
