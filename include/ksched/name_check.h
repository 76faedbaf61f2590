/*
 * name_check.h - the name formats the Kubernetes API validates (k8s.io/apimachinery
 * pkg/util/validation): DNS-1123 labels and subdomains, C identifiers. Each check returns
 * NULL when @s has the format, else the first message upstream's check gives for it (its
 * length limit first, then its pattern), a constant string.
 *
 * Pure functions: any thread, no allocation.
 */
#ifndef KSCHED_NAME_CHECK_H
#define KSCHED_NAME_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* IsDNS1123Label: at most 63 of [a-z0-9-], alphanumeric at both ends. */
const char *ks_name_dns1123_label(const char *s, size_t len);

/* IsDNS1123Subdomain: at most 253, dot-separated DNS-1123 labels. */
const char *ks_name_dns1123_subdomain(const char *s, size_t len);

/* IsCIdentifier: [A-Za-z_][A-Za-z0-9_]* (no length limit of its own). */
const char *ks_name_c_identifier(const char *s, size_t len);

/*
 * ks_qualified_name_ok - IsQualifiedName (label keys); on failure writes upstream's
 * reasons, joined by "; ", to @why.
 */
bool ks_qualified_name_ok(const char *s, char *why, size_t len);

/* ks_label_value_ok - IsValidLabelValue; on failure writes upstream's reasons to @why. */
bool ks_label_value_ok(const char *v, char *why, size_t len);

#endif
