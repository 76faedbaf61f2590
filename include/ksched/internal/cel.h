/*
 * cel.h - the Common Expression Language (CEL): environments, compiled programs, values,
 * evaluation. The module lives in cel/; nothing outside it includes cel/'s own headers.
 *
 * Semantics are cel-go's (google/cel-go v0.26, the version Kubernetes v1.36/v1.37 vendors)
 * as Kubernetes configures it for stored expressions (k8s.io/apiserver/pkg/cel/environment,
 * the base environment set with strict cost): the language (cel-spec), the standard
 * functions and macros (has, all, exists, exists_one, map, filter), cross-type numeric
 * comparisons, homogeneous aggregate literals, optional types (`.?`, `[?`, optional.of,
 * orValue, ...), and the libraries an environment enables (enum ks_cel_lib). Compile errors
 * are cel-go's issue texts ("ERROR: <input>:1:8: undeclared reference to 'foo' (in container
 * '')" with the source line and the caret), runtime errors cel-go's ("no such key: x",
 * "no matching overload", "operation cancelled: actual cost limit exceeded").
 *
 * Lifetimes and threads. An environment is built once and is immutable once a program was
 * compiled in it. A program is immutable: any thread may evaluate it at once with its own
 * struct ks_cel_scratch. Evaluation allocates only from its scratch, which keeps its memory
 * from one evaluation to the next: steady state allocates nothing.
 */
#ifndef KSCHED_CEL_H
#define KSCHED_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/quantity.h"

/* ---- types ------------------------------------------------------------------------------------ */

enum ks_cel_kind {
    KS_CEL_DYN, /* a type: any value (never a value's kind) */
    KS_CEL_NULL,
    KS_CEL_BOOL,
    KS_CEL_INT,
    KS_CEL_UINT,
    KS_CEL_DOUBLE,
    KS_CEL_STRING,
    KS_CEL_BYTES,
    KS_CEL_DURATION,
    KS_CEL_TIMESTAMP,
    KS_CEL_LIST,
    KS_CEL_MAP,
    KS_CEL_TYPE,     /* a type value: int, string, ... */
    KS_CEL_OPTIONAL, /* optional_type(T) */
    KS_CEL_QUANTITY, /* kubernetes' Quantity (the quantity library) */
    KS_CEL_SEMVER,   /* kubernetes' Semver (the semver library) */
    KS_CEL_OBJECT,   /* a host object: named, with declared fields (see struct ks_cel_host_ops) */
    KS_CEL_ERROR,    /* a value: an evaluation error */
};

/* A type. Types are owned by the environment that made them and live as long as it. */
struct ks_cel_type;

/* A field of an object type. */
struct ks_cel_field_decl {
    const char *name;
    const struct ks_cel_type *type;
};

/* The libraries an environment may enable on top of the language and standard functions. */
enum ks_cel_lib {
    KS_CEL_LIB_STRINGS = 1u << 0,  /* cel-go ext.Strings: charAt, indexOf, lowerAscii, split, ... */
    KS_CEL_LIB_LISTS = 1u << 1,    /* k8s library.Lists: isSorted, sum, min, max, indexOf, ... */
    KS_CEL_LIB_REGEX = 1u << 2,    /* k8s library.Regex: find, findAll (matches is standard) */
    KS_CEL_LIB_QUANTITY = 1u << 3, /* k8s library.Quantity: quantity(), isQuantity, compareTo, ... */
    KS_CEL_LIB_SEMVER = 1u << 4,   /* k8s library.SemverLib: semver(), isSemver, major, compareTo, ... */
    KS_CEL_LIB_BINDINGS = 1u << 5, /* cel-go ext.Bindings: cel.bind(var, init, expr) */
    KS_CEL_LIB_SETS = 1u << 6,     /* cel-go ext.Sets: sets.contains, sets.equivalent, sets.intersects */
};

/* Everything Kubernetes' stored-expression environment has that this module implements. */
#define KS_CEL_LIB_KUBERNETES                                                                                \
    (KS_CEL_LIB_STRINGS | KS_CEL_LIB_LISTS | KS_CEL_LIB_REGEX | KS_CEL_LIB_QUANTITY | KS_CEL_LIB_SEMVER |    \
     KS_CEL_LIB_SETS)

/* ---- environments --------------------------------------------------------------------------------- */

struct ks_cel_env;

/* ks_cel_env_create - an environment with @libs (enum ks_cel_lib bits). 0 or -ENOMEM. */
int ks_cel_env_create(unsigned libs, struct ks_cel_env **out);

/* ks_cel_env_destroy - free the environment, its types. Programs compiled in it must be gone. NULL ok. */
void ks_cel_env_destroy(struct ks_cel_env *env);

/*
 * Type constructors: a primitive kind (DYN, NULL ... TIMESTAMP, TYPE, QUANTITY, SEMVER), a
 * list, a map, an optional, or a named object with @n fields. NULL when out of memory.
 * @max_elements is the size bound the cost estimator may assume (0: none known).
 */
const struct ks_cel_type *ks_cel_type_kind(struct ks_cel_env *env, enum ks_cel_kind kind);
const struct ks_cel_type *ks_cel_type_list(struct ks_cel_env *env, const struct ks_cel_type *elem);
const struct ks_cel_type *ks_cel_type_map(struct ks_cel_env *env, const struct ks_cel_type *key,
                                          const struct ks_cel_type *value);
const struct ks_cel_type *ks_cel_type_object(struct ks_cel_env *env, const char *name,
                                             const struct ks_cel_field_decl *fields, uint32_t n);

/*
 * Bounded and optional types. _bounded: a list or map of at most @max_elements entries, or a
 * STRING/BYTES kind of at most @max_size (code points, bytes) - the sizes cel-go's cost
 * estimator takes from Kubernetes' declared types (0: unknown). ks_cel_type_optional:
 * optional_type(@elem). NULL when out of memory.
 */
const struct ks_cel_type *ks_cel_type_list_bounded(struct ks_cel_env *env, const struct ks_cel_type *elem,
                                                   uint64_t max_elements);
const struct ks_cel_type *ks_cel_type_map_bounded(struct ks_cel_env *env, const struct ks_cel_type *key,
                                                  const struct ks_cel_type *value, uint64_t max_elements);
const struct ks_cel_type *ks_cel_type_bounded(struct ks_cel_env *env, enum ks_cel_kind kind,
                                              uint64_t max_size);
const struct ks_cel_type *ks_cel_type_optional(struct ks_cel_env *env, const struct ks_cel_type *elem);

/* ks_cel_env_declare - a variable @name of @type. 0, -EEXIST, -ENOMEM. */
int ks_cel_env_declare(struct ks_cel_env *env, const char *name, const struct ks_cel_type *type);

/* ---- programs ------------------------------------------------------------------------------------- */

struct ks_cel_program;

/*
 * ks_cel_compile - parse and type-check the @len bytes of @expr in @env. 0 and *@out; or
 * -EINVAL with *@msg set to cel-go's issues text (malloc'd, the caller frees it); -ENOMEM.
 * Compilation may be slow; evaluation is what must be fast.
 */
int ks_cel_compile(const struct ks_cel_env *env, const char *expr, size_t len, struct ks_cel_program **out,
                   char **msg);

/*
 * Compile options cel-go has but Kubernetes' environment does not use (tests, tools):
 * UNCHECKED - parse only, no type check: overloads are chosen from the values at evaluation
 *   (cel-go's env.Parse then Program);
 * DYN_AGGREGATES - list and map literals of mixed types are dyn-typed instead of an error
 *   (cel-go without HomogeneousAggregateLiterals);
 * NO_FOLD - no constant folding and no literal validators (cel-go without OptOptimize and
 *   without its AST validators): a failing conversion of a constant fails at evaluation;
 * BAD_PRESENCE_ERROR - has() or .? on a value that has no fields (an int, a string) is an
 *   error "no such key: f" rather than false (cel.EnableErrorOnBadPresenceTest).
 */
enum ks_cel_compile_flag {
    KS_CEL_COMPILE_UNCHECKED = 1u << 0,
    KS_CEL_COMPILE_DYN_AGGREGATES = 1u << 1,
    KS_CEL_COMPILE_NO_FOLD = 1u << 2,
    KS_CEL_COMPILE_BAD_PRESENCE_ERROR = 1u << 3,
};

/* ks_cel_compile_flags - ks_cel_compile() with @flags (enum ks_cel_compile_flag bits). */
int ks_cel_compile_flags(const struct ks_cel_env *env, const char *expr, size_t len, unsigned flags,
                         struct ks_cel_program **out, char **msg);

/* ks_cel_program_type - the type the program evaluates to (dyn when unknown). */
const struct ks_cel_type *ks_cel_program_type(const struct ks_cel_program *p);

/* ks_cel_type_kind_of - the kind of a type (KS_CEL_DYN for dyn). */
enum ks_cel_kind ks_cel_type_kind_of(const struct ks_cel_type *t);

/*
 * ks_cel_type_name - cel-go's type name of @t (Type.TypeName(): "int", "list", "map",
 * "google.protobuf.Duration", an object's or abstract type's name).
 */
const char *ks_cel_type_name(const struct ks_cel_type *t);

/*
 * ks_cel_type_string - cel-go's Type.String() of @t: its name and, for a parameterised type,
 * its parameters ("list(int)", "map(string, dyn)", "optional_type(int)"), at most @len bytes
 * into @buf, NUL included.
 */
void ks_cel_type_string(const struct ks_cel_type *t, char *buf, size_t len);

/*
 * ks_cel_program_max_cost - cel-go's estimated worst-case cost (EstimateCost's Max) of the
 * program, with the size bounds its types declare; UINT64_MAX when unbounded.
 */
uint64_t ks_cel_program_max_cost(const struct ks_cel_program *p);

/* ks_cel_program_destroy - accepts NULL. */
void ks_cel_program_destroy(struct ks_cel_program *p);

/* ---- values and evaluation -------------------------------------------------------------------------- */

struct ks_cel_value;

/*
 * A host object: a value whose fields (or map entries) the caller provides, never copied.
 * lookup - the field or entry @key (a string for an object's fields): 0 with *@out set, 1
 *   when absent, or a negative errno. @out's memory: constant, or the host's, or from
 *   ks_cel_scratch_* of @s (for values made on the fly).
 * size, entry - the number of entries and the @i-th (key and value) for iteration (map
 *   macros, size()); entry order must be stable for a given object.
 * `key in map` on a host map compares @key with the keys size and entry report (lookup when
 * they are NULL), so a host whose lookup answers absent keys with a default (as DRA's
 * attribute maps answer an unknown domain with an empty map) keeps `in` exact, as
 * Kubernetes' Contains does.
 * Called from the evaluating thread only.
 */
struct ks_cel_scratch;
struct ks_cel_host_ops {
    int (*lookup)(const void *obj, const struct ks_cel_value *key, struct ks_cel_value *out,
                  struct ks_cel_scratch *s);
    uint32_t (*size)(const void *obj);
    int (*entry)(const void *obj, uint32_t i, struct ks_cel_value *key, struct ks_cel_value *value,
                 struct ks_cel_scratch *s);
};

/*
 * A value. Strings and bytes are not NUL-terminated. Lists and maps made by the evaluator
 * are the module's own (opaque); a map may also be a host object with kind KS_CEL_MAP.
 */
struct ks_cel_value {
    enum ks_cel_kind kind;
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            const char *p;
            size_t len;
        } str; /* STRING, BYTES; ERROR: the message */
        struct ks_quantity q;
        struct {
            uint64_t major, minor, patch;
            const char *pre; /* NULL, or the pre-release identifiers, "rc.1" */
            size_t pre_len;
        } semver;
        struct {
            int64_t seconds;
            int32_t nanos;
        } time; /* DURATION, TIMESTAMP */
        const struct ks_cel_type *type;
        struct {
            const struct ks_cel_host_ops *ops;
            const void *obj;
            const struct ks_cel_type *type; /* the declared type of the object or map */
        } host;
        const void *own; /* LIST, MAP, OPTIONAL made by the evaluator */
    } v;
};

/* ks_cel_value_type_name - cel-go's type name of @v's runtime type (ref.Val's Type().TypeName()). */
const char *ks_cel_value_type_name(const struct ks_cel_value *v);

/* ks_cel_scratch_create / _destroy - an evaluation's reusable memory (one per thread). */
int ks_cel_scratch_create(struct ks_cel_scratch **out);
void ks_cel_scratch_destroy(struct ks_cel_scratch *s);

/* ks_cel_scratch_string - a copy of @len bytes in @s, valid until the next evaluation with @s. */
const char *ks_cel_scratch_string(struct ks_cel_scratch *s, const char *p, size_t len);

/*
 * ks_cel_scratch_alloc - @n bytes aligned to 16 in @s (not zeroed), valid until the next
 * evaluation with @s; NULL when out of memory. For host lookups that build values on the fly.
 */
void *ks_cel_scratch_alloc(struct ks_cel_scratch *s, size_t n);

/*
 * A list the caller owns, for bindings: a LIST value with ops &ks_cel_array_ops and obj
 * pointing to a struct ks_cel_array (never copied).
 */
struct ks_cel_array {
    const struct ks_cel_value *items;
    uint32_t n;
};
extern const struct ks_cel_host_ops ks_cel_array_ops;

/* ks_cel_value_equal - CEL's == (numbers of different kinds equal by value; null only null). */
bool ks_cel_value_equal(const struct ks_cel_value *a, const struct ks_cel_value *b);

/*
 * ks_cel_value_format - a CEL text of @v into @buf (NUL-terminated, truncated to @len): 1, 1u,
 * 1.0, "s", b"\x01", [1, 2], {"k": 1} (entries sorted by key text), duration("1.5s"),
 * timestamp("2024-01-01T00:00:00Z"), optional.of(1), int (a type), error("text"). Returns the
 * length the whole text needs. Any thread.
 */
size_t ks_cel_value_format(const struct ks_cel_value *v, char *buf, size_t len);

/* An activation: the values of the environment's declared variables, by name. */
struct ks_cel_binding {
    const char *name;
    struct ks_cel_value value;
};

/*
 * ks_cel_eval - evaluate @p with the variables @vars, counting cel-go's runtime cost against
 * @cost_limit (0: none). 0 with *@result set (valid until the next evaluation with @s); or
 * -EINVAL with the error text in @err (@errlen bytes): the evaluation failed (no such key,
 * no matching overload, division by zero, the cost limit, ...); -ENOMEM. *@cost: the cost
 * spent (may be NULL).
 */
int ks_cel_eval(const struct ks_cel_program *p, const struct ks_cel_binding *vars, uint32_t nvars,
                struct ks_cel_scratch *s, uint64_t cost_limit, struct ks_cel_value *result, uint64_t *cost,
                char *err, size_t errlen);

#endif
