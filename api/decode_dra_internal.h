/*
 * decode_dra_internal.h - what the decoders of the resource.k8s.io/v1 kinds share
 * (api/decode_dra*.c): the API server's validation of names, selectors, configurations,
 * tolerations and taints, with its messages (pkg/apis/resource/validation).
 *
 * Each function decodes or checks one field of the map @n at the decoder's current path,
 * returning 0 or a negative errno with the decoder's error set (the first error upstream's
 * validation would list).
 */
#ifndef KSCHED_DECODE_DRA_INTERNAL_H
#define KSCHED_DECODE_DRA_INTERNAL_H

#include "ksched/dra_types.h"
#include "ksched/internal/decode.h"

/* Limits of resource.k8s.io/v1 (types.go). */
#define KS_DRA_DRIVER_NAME_MAX          63
#define KS_DRA_POOL_NAME_MAX            253
#define KS_DRA_DOMAIN_MAX               63
#define KS_DRA_ID_MAX                   32
#define KS_DRA_ATTRIBUTE_VALUE_MAX      64
#define KS_DRA_SELECTORS_MAX            32
#define KS_DRA_CONFIG_MAX               32
#define KS_DRA_CONSTRAINTS_MAX          32
#define KS_DRA_REQUESTS_MAX             32
#define KS_DRA_FIRST_AVAILABLE_MAX      8
#define KS_DRA_TOLERATIONS_MAX          16
#define KS_DRA_TAINTS_MAX               16
#define KS_DRA_CEL_EXPRESSION_MAX       (10 * 1024)
#define KS_DRA_OPAQUE_PARAMETERS_MAX    (10 * 1024)
#define KS_DRA_SLICE_DEVICES_MAX        128
#define KS_DRA_SLICE_DEVICES_ADVANCED   64
#define KS_DRA_COUNTER_SETS_MAX         8
#define KS_DRA_COUNTERS_PER_SET_MAX     32
#define KS_DRA_CONSUMPTIONS_MAX         2
#define KS_DRA_ATTRS_AND_CAPACITIES_MAX 32
#define KS_DRA_BINDING_CONDITIONS_MAX   4
#define KS_DRA_DISCRETE_OPTIONS_MAX     10

/* Field errors in upstream's words, at @at (pushed when not NULL) of node @n. */
int ks__dra_required(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *detail);
int ks__dra_too_many(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, uint32_t count,
                     uint32_t max);
int ks__dra_too_long(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, size_t max);
int ks__dra_duplicate(struct ks_decoder *d, const struct ks_yaml_node *n, const char *value);
int ks__dra_invalid_int(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, int64_t value,
                        const char *detail);
int ks__dra_unsupported(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *value,
                        const char *supported);

/* A list field's node (NULL when missing or null) that must hold at most @max items. */
int ks__dra_seq_max(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t max,
                    const struct ks_yaml_node **out);

/* Name checks: validateDriverName (CSI driver rules), the pool name, a device or request name. */
int ks__dra_check_driver(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at,
                         const char *name);
int ks__dra_check_pool(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *name);
int ks__dra_check_label(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at, const char *name);
int ks__dra_check_subdomain(struct ks_decoder *d, const struct ks_yaml_node *n, const char *at,
                            const char *name);
/* validateQualifiedName (@full: validateFullyQualifiedName, a domain is required). */
int ks__dra_check_qualified(struct ks_decoder *d, const struct ks_yaml_node *n, const char *name, bool full);
/* metadata.name of a DRA object: a DNS-1123 subdomain. */
int ks__dra_check_meta_name(struct ks_decoder *d, const struct ks_yaml_node *doc,
                            const struct ks_object_meta *m);

/* spec.selectors-style lists: [{cel: {expression}}], expressions and their lines into *@out. */
int ks__dra_selectors(struct ks_decoder *d, const struct ks_yaml_node *n, uint32_t *count, const char ***out,
                      int **lines);

/* An object holding `opaque: {driver, parameters}` (a class's or a claim's config item). */
int ks__dra_opaque(struct ks_decoder *d, const struct ks_yaml_node *n, struct ks_opaque_config *out);

/* A device toleration (of a request or an allocation result). */
int ks__dra_toleration(struct ks_decoder *d, const struct ks_yaml_node *n, void *elem, void *ctx);

/* A map of qualified names to quantities (capacity requests, consumed capacity). */
int ks__dra_quantity_map(struct ks_decoder *d, const struct ks_yaml_node *n, const char *key, uint32_t *count,
                         struct ks_named_quantity **out);

/* A quantity node (a number, or a string) into *@q; fails with upstream's unmarshal text. */
int ks__dra_quantity(struct ks_decoder *d, const struct ks_yaml_node *n, struct ks_quantity *q);

/* bindingConditions and bindingFailureConditions of a device or a result (validateDeviceBindingParameters).
 */
int ks__dra_binding_conditions(struct ks_decoder *d, const struct ks_yaml_node *n, uint32_t *nok,
                               const char ***ok, uint32_t *nfail, const char ***fail);

/* The device claim (spec.devices of a claim, spec.spec.devices of a template). */
int ks__dra_device_claim(struct ks_decoder *d, const struct ks_yaml_node *spec, struct ks_device_claim *out);

#endif
