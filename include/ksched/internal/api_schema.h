/*
 * api_schema.h - the built-in Kubernetes API as the loader needs it: which kinds exist at
 * which group/version, and the fields of the kinds ksched decodes.
 *
 * The tables are generated from the Kubernetes OpenAPI spec (api/api_schema.c, by
 * scripts/gen-api-schema.py; ks_api_schema_version names the release). Everything here is
 * constant: any thread, no allocation.
 */
#ifndef KSCHED_API_SCHEMA_H
#define KSCHED_API_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

/* How a schema node constrains the YAML below it. */
enum ks_schema_kind {
    KS_SCHEMA_ANY,      /* nothing is checked below (free-form objects such as FieldsV1) */
    KS_SCHEMA_OBJECT,   /* a struct: every key must be one of its fields */
    KS_SCHEMA_ARRAY,    /* a list whose items are node `ref` */
    KS_SCHEMA_MAP,      /* a map whose keys are free and whose values are node `ref` */
    KS_SCHEMA_SEPARATE, /* not walked: a List's items, checked as objects of their own */
    /* scalars, as the API server's JSON decoder takes them (api/type_check.c) */
    KS_SCHEMA_STRING,        /* a JSON string */
    KS_SCHEMA_BYTES,         /* a JSON string of base64 ([]byte) */
    KS_SCHEMA_BOOL,          /* true or false */
    KS_SCHEMA_INT32,         /* a JSON number that is an integer in int32's range */
    KS_SCHEMA_INT64,         /* ... in int64's */
    KS_SCHEMA_FLOAT64,       /* any JSON number */
    KS_SCHEMA_QUANTITY,      /* resource.Quantity: a string or number that parses as a quantity */
    KS_SCHEMA_INT_OR_STRING, /* intstr.IntOrString: a string, or an int32 */
    KS_SCHEMA_TIME,          /* metav1.Time, MicroTime: an RFC 3339 string */
};

struct ks_schema_node {
    uint8_t kind;   /* enum ks_schema_kind */
    uint16_t n;     /* OBJECT: number of fields */
    uint32_t ref;   /* OBJECT: first field in ks_schema_fields; ARRAY, MAP: the element's node */
    const char *go; /* the Go type as the decoder's errors spell it: "v1.PodSpec", "[]string", "int32" */
};

/* One field of a struct; a struct's fields are sorted by (len, bytes of name). */
struct ks_schema_field {
    const char *name;
    uint32_t len;
    uint32_t node;
};

/* A group/version/kind the built-in API serves; group "" is the core group. */
struct ks_schema_gvk {
    const char *kind, *group, *version;
};

/* The schema node of a kind ksched decodes ("List" stands for every list type). */
struct ks_schema_root {
    const char *kind;
    uint32_t node;
};

extern const char ks_api_schema_version[];          /* "v1.36" */
extern const struct ks_schema_gvk ks_schema_gvks[]; /* sorted by kind, group, version */
extern const uint32_t ks_schema_ngvks;
extern const char *const ks_schema_groups[]; /* the built-in API groups, sorted */
extern const uint32_t ks_schema_ngroups;
extern const struct ks_schema_root ks_schema_roots[]; /* sorted by kind */
extern const uint32_t ks_schema_nroots;
extern const struct ks_schema_node ks_schema_nodes[];
extern const uint32_t ks_schema_nnodes;
extern const struct ks_schema_field ks_schema_fields[];
extern const uint32_t ks_schema_nfields;

/* What an (apiVersion, kind) pair is to the built-in API. */
enum ks_api_kind_class {
    KS_API_KIND_SERVED,        /* a built-in kind at this group/version */
    KS_API_KIND_WRONG_VERSION, /* a built-in kind, but not served at this group/version */
    KS_API_KIND_UNKNOWN,       /* a built-in group that has no such kind */
    KS_API_KIND_CUSTOM,        /* a group the built-in API does not serve: a custom resource */
};

/*
 * ks_api_kind_classify - what @kind at @api_version ("v1", "apps/v1") is. For
 * KS_API_KIND_WRONG_VERSION, the apiVersions that serve @kind are written to @want
 * (space separated, truncated to @len; @want may be NULL).
 */
enum ks_api_kind_class ks_api_kind_classify(const char *api_version, const char *kind, char *want,
                                            size_t len);

/*
 * ks_api_schema_root - the schema node that checks objects of @kind (a kind ksched
 * decodes, or "List"), or -1 when the schema has none.
 */
int64_t ks_api_schema_root(const char *kind);

/* ks_schema_field_find - the field @name (@len bytes) of struct node @s, or NULL. */
const struct ks_schema_field *ks_schema_field_find(const struct ks_schema_node *s, const char *name,
                                                   size_t len);

#endif
