/*
 * cel_internal.h - the CEL module's private declarations, shared by the files of cel/ and
 * included by nothing outside it.
 *
 * The pipeline: cel_lex.c turns the text into tokens, cel_parse.c builds the expression tree
 * (struct cel_expr) and expands the macros, cel_check.c types every node and resolves the
 * overloads, cel_plan.c folds constants and binds every call to its implementation, and
 * cel_eval.c walks the tree. One tree serves all stages: the checker and the planner fill in
 * the fields the evaluator reads. Memory: the tree, its strings and its constants live in the
 * program's arena; an evaluation allocates only from its struct ks_cel_scratch.
 */
#ifndef KSCHED_CEL_INTERNAL_H
#define KSCHED_CEL_INTERNAL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/internal/cel.h"

/* ---- arenas and string building ------------------------------------------------------------- */

struct cel_chunk;

/* A bump allocator. reset keeps every chunk for reuse, so a steady load stops calling malloc. */
struct cel_arena {
    struct cel_chunk *head; /* every chunk, oldest first */
    struct cel_chunk *cur;  /* the chunk being filled */
    size_t used;            /* bytes used in cur */
};

/* ks__cel_alloc - @n bytes aligned to 16 (not zeroed), NULL when out of memory. */
void *ks__cel_alloc(struct cel_arena *a, size_t n);
/* ks__cel_zalloc - zeroed ks__cel_alloc. */
void *ks__cel_zalloc(struct cel_arena *a, size_t n);
/* ks__cel_strndup - a NUL-terminated copy of @len bytes. */
char *ks__cel_strndup(struct cel_arena *a, const char *p, size_t len);
void ks__cel_arena_reset(struct cel_arena *a);
void ks__cel_arena_free(struct cel_arena *a);

/* A growable malloc'd string for compile-time texts; oom latches. */
struct cel_sb {
    char *p;
    size_t len, cap;
    bool oom;
};
void ks__cel_sb_putn(struct cel_sb *b, const char *s, size_t n);
void ks__cel_sb_puts(struct cel_sb *b, const char *s);
void ks__cel_sb_printf(struct cel_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ks__cel_sb_free(struct cel_sb *b);

/* ---- UTF-8 ------------------------------------------------------------------------------------- */

/* Decode one code point at p[0..n); *len gets its byte length (1 for an invalid byte, then -1 returned). */
int32_t ks__cel_utf8_decode(const char *p, size_t n, size_t *len);
/* Encode @cp into @out (4 bytes room); returns the byte count. */
size_t ks__cel_utf8_encode(uint32_t cp, char *out);
/* Number of code points in p[0..n) (invalid bytes count one each, as Go's range loop). */
size_t ks__cel_utf8_count(const char *p, size_t n);
bool ks__cel_utf8_valid(const char *p, size_t n);

/* ---- types --------------------------------------------------------------------------------------- */

/* Kinds a checker type may have beyond enum ks_cel_kind. */
#define CEL_T_PARAM 64 /* a type parameter: name */

struct ks_cel_type {
    int kind;                       /* enum ks_cel_kind, or CEL_T_PARAM */
    const char *name;               /* OBJECT and CEL_T_PARAM: the name */
    const struct ks_cel_type *p[2]; /* LIST: elem; MAP: key, value; OPTIONAL: elem; TYPE: param or NULL */
    const struct ks_cel_field_decl *fields; /* OBJECT: sorted by name */
    uint32_t nfields;
    uint64_t max_size; /* cost estimation: max elements (list, map) or length (string, bytes); 0 none */
};

/* The shared primitive types (no environment needed). */
extern const struct ks_cel_type ks__cel_t_dyn, ks__cel_t_null, ks__cel_t_bool, ks__cel_t_int, ks__cel_t_uint,
    ks__cel_t_double, ks__cel_t_string, ks__cel_t_bytes, ks__cel_t_duration, ks__cel_t_timestamp,
    ks__cel_t_type, ks__cel_t_error, ks__cel_t_list_dyn, ks__cel_t_map_dyn, ks__cel_t_quantity,
    ks__cel_t_semver, ks__cel_t_optional_dyn;

/* ks__cel_type_prim - the shared type of a primitive kind (NULL for aggregate kinds). */
const struct ks_cel_type *ks__cel_type_prim(int kind);
/* Type constructors in an arena (the env's or a compile's). NULL when out of memory. */
const struct ks_cel_type *ks__cel_type_new(struct cel_arena *a, int kind, const struct ks_cel_type *p0,
                                           const struct ks_cel_type *p1);
const struct ks_cel_type *ks__cel_type_param(struct cel_arena *a, const char *name);
/* FormatCELType: "int", "list(string)", "map(string, dyn)", "optional_type(int)", "!error!". */
void ks__cel_type_format(struct cel_sb *b, const struct ks_cel_type *t);
/* The runtime type name a type value prints as: "int", "google.protobuf.Duration", "list", "map", ... */
const char *ks__cel_type_name(const struct ks_cel_type *t);
/* IsExactType: kinds, names and parameters equal. */
bool ks__cel_type_exact(const struct ks_cel_type *a, const struct ks_cel_type *b);
/* The field @name of an object type, NULL when it has none. */
const struct ks_cel_field_decl *ks__cel_type_field(const struct ks_cel_type *t, const char *name, size_t len);
/* ks__cel_type_parse - a type from its text ("list(A)", "map(string, dyn)", "kubernetes.Quantity"). */
const struct ks_cel_type *ks__cel_type_parse(struct cel_arena *a, const char *text);

/* ---- values ----------------------------------------------------------------------------------------- */

/* The module's own lists and maps: aggregates with these ops in v.host (obj: the structs below). */
struct cel_list {
    uint32_t n;
    uint32_t cap; /* a comprehension accumulator's room (0 otherwise) */
    bool mutable; /* an accumulator list that may still grow in place */
    const struct ks_cel_value *items;
};
struct cel_map {
    uint32_t n;
    uint32_t cap; /* a comprehension accumulator's room (0 otherwise) */
    bool mutable; /* an accumulator map that may still grow in place */
    const struct ks_cel_value *keys;
    const struct ks_cel_value *vals;
};
/* An optional value: v.own points to one (NULL own: optional.none()). */
struct cel_opt {
    struct ks_cel_value v;
};
extern const struct ks_cel_host_ops ks__cel_list_ops, ks__cel_map_ops;

static inline struct ks_cel_value ks__cel_bool(bool b)
{
    struct ks_cel_value v = {.kind = KS_CEL_BOOL};
    v.v.b = b;
    return v;
}
static inline struct ks_cel_value ks__cel_int(int64_t i)
{
    struct ks_cel_value v = {.kind = KS_CEL_INT};
    v.v.i = i;
    return v;
}
static inline struct ks_cel_value ks__cel_uint(uint64_t u)
{
    struct ks_cel_value v = {.kind = KS_CEL_UINT};
    v.v.u = u;
    return v;
}
static inline struct ks_cel_value ks__cel_double(double d)
{
    struct ks_cel_value v = {.kind = KS_CEL_DOUBLE};
    v.v.d = d;
    return v;
}
static inline struct ks_cel_value ks__cel_str(int kind, const char *p, size_t len)
{
    struct ks_cel_value v = {.kind = (enum ks_cel_kind)kind};
    v.v.str.p = p;
    v.v.str.len = len;
    return v;
}
static inline struct ks_cel_value ks__cel_typev(const struct ks_cel_type *t)
{
    struct ks_cel_value v = {.kind = KS_CEL_TYPE};
    v.v.type = t;
    return v;
}
static inline struct ks_cel_value ks__cel_null(void)
{
    struct ks_cel_value v = {.kind = KS_CEL_NULL};
    return v;
}
static inline bool ks__cel_is_err(const struct ks_cel_value *v)
{
    return v->kind == KS_CEL_ERROR;
}

struct cel_ctx;

/* Aggregates: size, the i-th element or entry, lookup. Host callbacks' errors become error values. */
uint32_t ks__cel_agg_size(const struct ks_cel_value *v);
struct ks_cel_value ks__cel_list_at(struct cel_ctx *c, const struct ks_cel_value *l, uint32_t i);
/* The i-th key of a map (its value in *val when val is not NULL). */
struct ks_cel_value ks__cel_map_entry(struct cel_ctx *c, const struct ks_cel_value *m, uint32_t i,
                                      struct ks_cel_value *val);
/* 0 found (*out), 1 absent, or an error value in *out with -1. */
int ks__cel_map_find(struct cel_ctx *c, const struct ks_cel_value *m, const struct ks_cel_value *key,
                     struct ks_cel_value *out);
struct ks_cel_value ks__cel_make_list(struct cel_ctx *c, const struct ks_cel_value *items, uint32_t n);
struct ks_cel_value ks__cel_make_map(struct cel_ctx *c, const struct ks_cel_value *keys,
                                     const struct ks_cel_value *vals, uint32_t n);
struct ks_cel_value ks__cel_make_opt(struct cel_ctx *c, const struct ks_cel_value *v); /* NULL: none */

/* Heterogeneous equality (cel-go's types.Equal); never an error. */
bool ks__cel_equal(const struct ks_cel_value *a, const struct ks_cel_value *b);
/* Ordering: -1, 0, 1; or 2 with *err set ("no such overload", NaN) */
int ks__cel_compare(struct cel_ctx *c, const struct ks_cel_value *a, const struct ks_cel_value *b,
                    struct ks_cel_value *err);
/* Go's %v of a value (for messages: "no such key: x"). */
void ks__cel_value_fmt(struct cel_sb *b, const struct ks_cel_value *v);
/* The runtime type value of a value. */
const struct ks_cel_type *ks__cel_type_of(const struct ks_cel_value *v);
/* Size (for cost): strings in code points, bytes, lists, maps; 1 otherwise. */
uint64_t ks__cel_actual_size(const struct ks_cel_value *v);

/* Go's %g (and %v) of a float64: strconv.FormatFloat(d, 'g', -1, 64). Returns the length. */
size_t ks__cel_fmt_double(char *buf, size_t cap, double d);

/* ---- expressions --------------------------------------------------------------------------------- */

enum cel_ekind {
    CEL_E_UNSPEC = 0,
    CEL_E_LIT,
    CEL_E_IDENT,
    CEL_E_SELECT,
    CEL_E_CALL,
    CEL_E_LIST,
    CEL_E_MAP,
    CEL_E_STRUCT,
    CEL_E_COMP,
};

/* What the evaluator does at a node (set by the planner). */
enum cel_op {
    CEL_OP_NONE = 0,
    CEL_OP_CONST,  /* u.lit */
    CEL_OP_VAR,    /* u.ident.slot */
    CEL_OP_SELECT, /* operand.field */
    CEL_OP_HAS,    /* has(operand.field) */
    CEL_OP_INDEX,  /* args[0][args[1]] */
    CEL_OP_OPT_SELECT,
    CEL_OP_OPT_INDEX,
    CEL_OP_AND,
    CEL_OP_OR,
    CEL_OP_NOT_STRICTLY_FALSE,
    CEL_OP_COND,
    CEL_OP_EQ,
    CEL_OP_NE,
    CEL_OP_IN_SET, /* x in a constant list of primitives */
    CEL_OP_CALL,   /* a function: static overload or dynamic dispatch */
    CEL_OP_LIST,
    CEL_OP_MAP,
    CEL_OP_COMP,
    CEL_OP_OPT_OR, /* a.or(b): non-strict in b */
    CEL_OP_OPT_OR_VALUE,
};

struct cel_expr;
struct cel_overload;

struct cel_entry {
    uint32_t id, off;
    bool optional;
    const char *field; /* STRUCT: the field name */
    struct cel_expr *key;
    struct cel_expr *value;
};

struct cel_expr {
    uint8_t kind;  /* enum cel_ekind */
    uint8_t op;    /* enum cel_op */
    uint8_t flags; /* CEL_F_* */
    uint8_t scost; /* the node's own runtime cost (a variable read, a qualifier, a literal) */
    uint32_t id;
    uint32_t off; /* location: code point offset into the source */
    const struct ks_cel_type *type;
    union {
        struct ks_cel_value lit;
        struct {
            const char *name;
            uint32_t slot;
        } ident;
        struct {
            struct cel_expr *operand;
            const char *field;
            uint32_t flen;
            struct ks_cel_value key; /* the field as a string value (planner) */
        } sel;
        struct {
            const char *fn;
            struct cel_expr *target;
            struct cel_expr **args; /* the planner puts the target first for member calls */
            uint32_t nargs;
            const struct cel_overload **ovls; /* candidate overloads (checker) */
            uint32_t novls;
            const void *aux;                   /* a precompiled regex */
            const struct ks_cel_value *cached; /* the result of a pure call of constants */
        } call;
        struct {
            struct cel_expr **elems;
            uint32_t n;
            uint8_t *opt; /* NULL or n flags */
        } list;
        struct {
            struct cel_entry *e;
            uint32_t n;
            const char *type_name; /* STRUCT */
        } map;
        struct {
            const char *iter, *iter2, *accu;
            struct cel_expr *range, *init, *cond, *step, *result;
            uint32_t slot_iter, slot_iter2, slot_accu;
        } comp;
    } u;
};

#define CEL_F_MEMBER      0x01 /* CALL: a receiver call (target set) */
#define CEL_F_TEST_ONLY   0x02 /* SELECT: has() */
#define CEL_F_REL_ROOT    0x04 /* cost: a qualifier over a non-attribute operand (+1) */
#define CEL_F_ACCU_APPEND 0x20 /* CALL: accu + [...] on a comprehension's list accumulator */

/* ---- functions ---------------------------------------------------------------------------------------- */

/*
 * An overload implementation: @a holds the @n evaluated arguments (target first), never errors
 * unless the overload is non-strict. Returns the result or an error value.
 */
typedef struct ks_cel_value (*cel_impl_fn)(struct cel_ctx *c, const struct cel_expr *e,
                                           const struct ks_cel_value *a, uint32_t n);

/* Runtime cost kinds (interpreter/runtimecost.go and k8s library/cost.go CallCost). */
enum cel_cost {
    CEL_COST_ONE = 0,
    CEL_COST_STR0,      /* ceil(size(a0) * 0.1) */
    CEL_COST_STR0_X2,   /* ceil(size(a0) * 0.2) */
    CEL_COST_IN_LIST,   /* size(a1) */
    CEL_COST_MIN_SIZE,  /* ceil(min(size(a0), size(a1)) * 0.1) */
    CEL_COST_SUM_SIZE,  /* ceil((size(a0) + size(a1)) * 0.1) */
    CEL_COST_MATCHES,   /* ceil((1 + size(a0)) * 0.1) * ceil(size(a1) * 0.25) */
    CEL_COST_CONTAINS,  /* ceil(size(a0) * 0.1) * ceil(size(a1) * 0.1) */
    CEL_COST_TRAVERSE0, /* k8s traversalCost(a0) */
    CEL_COST_RESULT_X2, /* ceil(size(result) * 0.2) */
    CEL_COST_ZERO,
    CEL_COST_SETS1, /* ext.Sets: 1 + size(a0) * size(a1) */
    CEL_COST_SETS2, /* ext.Sets: 1 + 2 * size(a0) * size(a1) */
};

#define CEL_OVL_NONSTRICT 0x01
#define CEL_OVL_MEMBER    0x02
#define CEL_OVL_TRAIT     0x04 /* a standard operator bound by trait: "no such overload[: fn]" on a mismatch */

struct cel_overload {
    const char *id;
    const char *fn;
    uint8_t flags;
    uint8_t nargs; /* target included */
    uint8_t cost;  /* enum cel_cost */
    const struct ks_cel_type *args[4];
    const struct ks_cel_type *result;
    const char *params[2]; /* type parameter names used, NULL terminated */
    cel_impl_fn impl;
};

struct cel_function {
    const char *name;
    const struct cel_overload **ovls;
    uint32_t n;
};

/* A declaration table row: the overload's types as text, parsed when the environment is made. */
struct cel_decl {
    const char *fn;
    const char *id;
    uint8_t flags;
    uint8_t cost;
    const char *sig; /* "int, int -> int"; a member overload's target is the first */
    cel_impl_fn impl;
};

/* The declaration tables of the standard library and of each library (cel_std*.c, cel_lib_*.c). */
extern const struct cel_decl ks__cel_std_decls[];
extern const struct cel_decl ks__cel_time_decls[];
extern const struct cel_decl ks__cel_opt_decls[];
extern const struct cel_decl ks__cel_strings_decls[];
extern const struct cel_decl ks__cel_lists_decls[];
extern const struct cel_decl ks__cel_regex_decls[];
extern const struct cel_decl ks__cel_quantity_decls[];
extern const struct cel_decl ks__cel_semver_decls[];
extern const struct cel_decl ks__cel_sets_decls[];
extern const struct cel_decl ks__cel_comprev2_decls[];

/* ---- environments and programs --------------------------------------------------------------------- */

struct cel_var {
    const char *name;
    const struct ks_cel_type *type;
    bool is_type; /* a type name: its value is the type (type(int) has the value int) */
    struct ks_cel_value value;
};

struct ks_cel_env {
    unsigned libs;
    struct cel_arena arena;
    struct cel_var *vars;
    uint32_t nvars, capvars;
    struct cel_function *fns;
    uint32_t nfns;
};

const struct cel_function *ks__cel_env_function(const struct ks_cel_env *env, const char *name);
const struct cel_var *ks__cel_env_var(const struct ks_cel_env *env, const char *name);

/* A parsed and checked expression with its source, positioned for issue texts. */
struct cel_source {
    const char *text;
    size_t len;
    uint32_t *line_starts; /* code point offset of each line */
    uint32_t nlines;
};

struct cel_issue {
    uint32_t off; /* code point offset, UINT32_MAX: no location */
    int32_t line, col;
    char *msg;
};

struct cel_issues {
    struct cel_issue *v;
    uint32_t n, cap;
    uint32_t total;
    bool oom;
};

void ks__cel_issue(struct cel_issues *is, const struct cel_source *src, uint32_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* cel-go's Errors.ToDisplayString: sorted by position, "ERROR: <input>:L:C: msg\n | line\n | ..^". */
char *ks__cel_issues_string(struct cel_issues *is, const struct cel_source *src);
void ks__cel_issues_free(struct cel_issues *is);

struct ks_cel_program {
    const struct ks_cel_env *env;
    struct cel_arena arena;
    struct cel_expr *root;
    const struct ks_cel_type *type;
    uint32_t nglobals; /* slots [0, nglobals) are the env's variables referenced */
    const char **global_names;
    uint32_t nslots; /* globals + comprehension variables */
    uint32_t next_id;
    unsigned flags; /* KS_CEL_COMPILE_* */
    bool checked;
    uint64_t max_cost;
    void **regexes; /* compiled regexes to destroy */
    uint32_t nregexes;
};

/* Parser entry: the tree in @arena, issues in @is. */
struct cel_parse_opts {
    bool bindings; /* cel.bind */
};
struct cel_expr *ks__cel_parse(struct cel_arena *arena, const struct cel_source *src, struct cel_issues *is,
                               const struct cel_parse_opts *o, uint32_t *next_id);

/* Checker: types every node, records candidate overloads. */
int ks__cel_check(struct ks_cel_program *p, const struct cel_source *src, struct cel_issues *is);
/* Planner: slots, constants, regexes; 0 or -EINVAL with an issue, -ENOMEM. */
int ks__cel_plan(struct ks_cel_program *p, const struct cel_source *src, struct cel_issues *is, bool checked);
/* Cost estimator (checker/cost.go with k8s' estimator). */
uint64_t ks__cel_estimate_cost(const struct ks_cel_program *p);

/* ---- evaluation ------------------------------------------------------------------------------------------
 */

struct ks_re;
struct ks_re_scratch;

struct ks_cel_scratch {
    struct cel_arena arena;
    struct ks_re_scratch *re;
};

struct cel_ctx {
    const struct ks_cel_program *p;
    struct ks_cel_scratch *s;
    struct ks_cel_value *slots;
    uint64_t cost, limit;
    int fatal; /* -ENOMEM or -ECANCELED once jumped */
    jmp_buf jb;
};

/* Evaluate a node. */
struct ks_cel_value ks__cel_eval(struct cel_ctx *c, const struct cel_expr *e);
/* Finish a two-argument call whose arguments are evaluated (errors, dispatch, cost). */
struct ks_cel_value ks__cel_eval_call_values(struct cel_ctx *c, const struct cel_expr *e,
                                             struct ks_cel_value *a);
/* Scratch memory for the evaluation; jumps out with -ENOMEM on failure. */
void *ks__cel_salloc(struct cel_ctx *c, size_t n);
/* An error value with a printf message in scratch memory. */
struct ks_cel_value ks__cel_errf(struct cel_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct ks_cel_value ks__cel_err_overload(void); /* "no such overload" */
/* A message formatter into scratch (Go %v values). */
struct ks_cel_value ks__cel_err_key(struct cel_ctx *c, const char *prefix, const struct ks_cel_value *k);
/* Add @n to the cost; jumps out when over the limit. */
void ks__cel_cost_add(struct cel_ctx *c, uint64_t n);
/* The cost of a call by its overload's kind. */
uint64_t ks__cel_call_cost(int kind, const struct ks_cel_value *a, uint32_t n,
                           const struct ks_cel_value *res);
/* Scratch string builder: append to a buffer growing in scratch. */
struct cel_ssb {
    struct cel_ctx *c;
    char *p;
    size_t len, cap;
};
void ks__cel_ssb_putn(struct cel_ssb *b, const char *s, size_t n);
void ks__cel_ssb_putc(struct cel_ssb *b, char ch);
struct ks_cel_value ks__cel_ssb_value(struct cel_ssb *b, int kind);

/* Runtime overload matching: does value @v fit the declared type @t? */
bool ks__cel_value_fits(const struct ks_cel_value *v, const struct ks_cel_type *t);
/* Dispatch a call on its evaluated arguments @a among its candidate overloads (*used: the one run). */
struct ks_cel_value ks__cel_dispatch(struct cel_ctx *c, const struct cel_expr *e,
                                     const struct ks_cel_value *a, uint32_t n,
                                     const struct cel_overload **used);
void ks__cel_regex_scratch_destroy(struct ks_cel_scratch *s);
void ks__cel_regex_free_all(struct ks_cel_program *p);

/* Timestamps and durations (cel_time.c): Go's text forms; 0 or -EINVAL/-ERANGE. */
int ks__cel_parse_duration(const char *s, size_t n, int64_t *nanos);
int ks__cel_parse_timestamp(const char *s, size_t n, int64_t *sec, int32_t *nsec);
size_t ks__cel_fmt_duration(char *buf, size_t cap, int64_t sec, int32_t nsec);
size_t ks__cel_fmt_timestamp(char *buf, size_t cap, int64_t sec, int32_t nsec);
/* The standard implementations other files reuse. */
struct ks_cel_value ks__cel_add_time(struct cel_ctx *c, const struct cel_expr *e,
                                     const struct ks_cel_value *a, uint32_t n);
struct ks_cel_value ks__cel_matches(struct cel_ctx *c, const struct cel_expr *e, const struct ks_cel_value *a,
                                    uint32_t n);
#define CEL_MIN_UNIX_TIME (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define CEL_MAX_UNIX_TIME 253402300799LL   /* 9999-12-31T23:59:59Z */

/* Quantities and semvers (cel_quantity.c, cel_semver.c) for equality and ordering. */
int ks__cel_quantity_cmp(const struct ks_quantity *a, const struct ks_quantity *b);
int ks__cel_semver_cmp(const struct ks_cel_value *a, const struct ks_cel_value *b);

/* Regexes (cel_regex.c by another hand): compile for a literal pattern, at plan time. */
int ks__cel_regex_compile(struct ks_cel_program *p, const char *pat, size_t len, const void **out, char *err,
                          size_t errlen);

#endif
