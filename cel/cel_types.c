/*
 * cel_types.c - CEL types: the shared primitives, constructors, cel-go's two ways of printing
 * a type (checker/format.go FormatCELType for issues; Type.String()/TypeName() for runtime
 * type values), exact-type comparison and the small type syntax the declaration tables use.
 *
 * Mirrors cel-go common/types/types.go. Kubernetes' Quantity and Semver are object types named
 * "kubernetes.Quantity" and "kubernetes.Semver" there; here they have kinds of their own with
 * those names. optional_type(T) is cel-go's opaque optional type.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_internal.h"

#define PRIM(n, k)                                                                                           \
    const struct ks_cel_type n = {                                                                           \
        .kind = (k),                                                                                         \
    }

PRIM(ks__cel_t_dyn, KS_CEL_DYN);
PRIM(ks__cel_t_null, KS_CEL_NULL);
PRIM(ks__cel_t_bool, KS_CEL_BOOL);
PRIM(ks__cel_t_int, KS_CEL_INT);
PRIM(ks__cel_t_uint, KS_CEL_UINT);
PRIM(ks__cel_t_double, KS_CEL_DOUBLE);
PRIM(ks__cel_t_string, KS_CEL_STRING);
PRIM(ks__cel_t_bytes, KS_CEL_BYTES);
PRIM(ks__cel_t_duration, KS_CEL_DURATION);
PRIM(ks__cel_t_timestamp, KS_CEL_TIMESTAMP);
PRIM(ks__cel_t_type, KS_CEL_TYPE);
PRIM(ks__cel_t_error, KS_CEL_ERROR);
const struct ks_cel_type ks__cel_t_quantity = {.kind = KS_CEL_QUANTITY, .name = "kubernetes.Quantity"};
const struct ks_cel_type ks__cel_t_semver = {.kind = KS_CEL_SEMVER, .name = "kubernetes.Semver"};
const struct ks_cel_type ks__cel_t_list_dyn = {.kind = KS_CEL_LIST, .p = {&ks__cel_t_dyn}};
const struct ks_cel_type ks__cel_t_map_dyn = {.kind = KS_CEL_MAP, .p = {&ks__cel_t_dyn, &ks__cel_t_dyn}};
const struct ks_cel_type ks__cel_t_optional_dyn = {.kind = KS_CEL_OPTIONAL, .p = {&ks__cel_t_dyn}};

const struct ks_cel_type *ks__cel_type_prim(int kind)
{
    switch (kind) {
    case KS_CEL_DYN:
        return &ks__cel_t_dyn;
    case KS_CEL_NULL:
        return &ks__cel_t_null;
    case KS_CEL_BOOL:
        return &ks__cel_t_bool;
    case KS_CEL_INT:
        return &ks__cel_t_int;
    case KS_CEL_UINT:
        return &ks__cel_t_uint;
    case KS_CEL_DOUBLE:
        return &ks__cel_t_double;
    case KS_CEL_STRING:
        return &ks__cel_t_string;
    case KS_CEL_BYTES:
        return &ks__cel_t_bytes;
    case KS_CEL_DURATION:
        return &ks__cel_t_duration;
    case KS_CEL_TIMESTAMP:
        return &ks__cel_t_timestamp;
    case KS_CEL_TYPE:
        return &ks__cel_t_type;
    case KS_CEL_QUANTITY:
        return &ks__cel_t_quantity;
    case KS_CEL_SEMVER:
        return &ks__cel_t_semver;
    case KS_CEL_ERROR:
        return &ks__cel_t_error;
    default:
        return NULL;
    }
}

const struct ks_cel_type *ks__cel_type_new(struct cel_arena *a, int kind, const struct ks_cel_type *p0,
                                           const struct ks_cel_type *p1)
{
    struct ks_cel_type *t = ks__cel_zalloc(a, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = kind;
    t->p[0] = p0;
    t->p[1] = p1;
    return t;
}

const struct ks_cel_type *ks__cel_type_param(struct cel_arena *a, const char *name)
{
    struct ks_cel_type *t = ks__cel_zalloc(a, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = CEL_T_PARAM;
    t->name = ks__cel_strndup(a, name, strlen(name));
    return t->name ? t : NULL;
}

void ks__cel_type_format(struct cel_sb *b, const struct ks_cel_type *t)
{
    if (!t)
        return;
    switch (t->kind) {
    case KS_CEL_DYN:
        ks__cel_sb_puts(b, "dyn");
        return;
    case KS_CEL_NULL:
        ks__cel_sb_puts(b, "null");
        return;
    case KS_CEL_BOOL:
        ks__cel_sb_puts(b, "bool");
        return;
    case KS_CEL_INT:
        ks__cel_sb_puts(b, "int");
        return;
    case KS_CEL_UINT:
        ks__cel_sb_puts(b, "uint");
        return;
    case KS_CEL_DOUBLE:
        ks__cel_sb_puts(b, "double");
        return;
    case KS_CEL_STRING:
        ks__cel_sb_puts(b, "string");
        return;
    case KS_CEL_BYTES:
        ks__cel_sb_puts(b, "bytes");
        return;
    case KS_CEL_DURATION:
        ks__cel_sb_puts(b, "duration");
        return;
    case KS_CEL_TIMESTAMP:
        ks__cel_sb_puts(b, "timestamp");
        return;
    case KS_CEL_ERROR:
        ks__cel_sb_puts(b, "!error!");
        return;
    case KS_CEL_QUANTITY:
    case KS_CEL_SEMVER:
    case KS_CEL_OBJECT:
    case CEL_T_PARAM:
        ks__cel_sb_puts(b, t->name);
        return;
    case KS_CEL_TYPE:
        ks__cel_sb_puts(b, "type");
        if (t->p[0]) {
            ks__cel_sb_puts(b, "(");
            ks__cel_type_format(b, t->p[0]);
            ks__cel_sb_puts(b, ")");
        }
        return;
    case KS_CEL_LIST:
        ks__cel_sb_puts(b, "list(");
        ks__cel_type_format(b, t->p[0]);
        ks__cel_sb_puts(b, ")");
        return;
    case KS_CEL_MAP:
        ks__cel_sb_puts(b, "map(");
        ks__cel_type_format(b, t->p[0]);
        ks__cel_sb_puts(b, ", ");
        ks__cel_type_format(b, t->p[1]);
        ks__cel_sb_puts(b, ")");
        return;
    case KS_CEL_OPTIONAL:
        ks__cel_sb_puts(b, "optional_type(");
        ks__cel_type_format(b, t->p[0]);
        ks__cel_sb_puts(b, ")");
        return;
    default:
        return;
    }
}

const char *ks__cel_type_name(const struct ks_cel_type *t)
{
    switch (t->kind) {
    case KS_CEL_DYN:
        return "dyn";
    case KS_CEL_NULL:
        return "null_type";
    case KS_CEL_BOOL:
        return "bool";
    case KS_CEL_INT:
        return "int";
    case KS_CEL_UINT:
        return "uint";
    case KS_CEL_DOUBLE:
        return "double";
    case KS_CEL_STRING:
        return "string";
    case KS_CEL_BYTES:
        return "bytes";
    case KS_CEL_DURATION:
        return "google.protobuf.Duration";
    case KS_CEL_TIMESTAMP:
        return "google.protobuf.Timestamp";
    case KS_CEL_LIST:
        return "list";
    case KS_CEL_MAP:
        return "map";
    case KS_CEL_TYPE:
        return "type";
    case KS_CEL_OPTIONAL:
        return "optional_type";
    case KS_CEL_ERROR:
        return "error";
    default:
        return t->name ? t->name : "";
    }
}

const char *ks_cel_type_name(const struct ks_cel_type *t)
{
    return ks__cel_type_name(t);
}

/* Append @t's Type.String() at @at of @buf (of @len); the new end (may pass @len when cut). */
static size_t type_string(const struct ks_cel_type *t, char *buf, size_t len, size_t at)
{
    int np = t->kind == KS_CEL_MAP ? 2
             : t->kind == KS_CEL_LIST || t->kind == KS_CEL_OPTIONAL || (t->kind == KS_CEL_TYPE && t->p[0])
                 ? 1
                 : 0;
    at += (size_t)snprintf(buf + (at < len ? at : len), at < len ? len - at : 0, "%s%s", ks__cel_type_name(t),
                           np ? "(" : "");
    for (int i = 0; i < np; i++) {
        if (i)
            at += (size_t)snprintf(buf + (at < len ? at : len), at < len ? len - at : 0, ", ");
        at = type_string(t->p[i] ? t->p[i] : &ks__cel_t_dyn, buf, len, at);
    }
    if (np)
        at += (size_t)snprintf(buf + (at < len ? at : len), at < len ? len - at : 0, ")");
    return at;
}

void ks_cel_type_string(const struct ks_cel_type *t, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (len)
        type_string(t ? t : &ks__cel_t_dyn, buf, len, 0);
}

const char *ks_cel_value_type_name(const struct ks_cel_value *v)
{
    return ks__cel_type_name(ks__cel_type_of(v));
}

bool ks__cel_type_exact(const struct ks_cel_type *a, const struct ks_cel_type *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KS_CEL_OBJECT:
    case CEL_T_PARAM:
        return !strcmp(a->name, b->name);
    case KS_CEL_LIST:
    case KS_CEL_OPTIONAL:
        return ks__cel_type_exact(a->p[0], b->p[0]);
    case KS_CEL_MAP:
        return ks__cel_type_exact(a->p[0], b->p[0]) && ks__cel_type_exact(a->p[1], b->p[1]);
    case KS_CEL_TYPE:
        if (!a->p[0] || !b->p[0])
            return !a->p[0] && !b->p[0];
        return ks__cel_type_exact(a->p[0], b->p[0]);
    default:
        return true;
    }
}

const struct ks_cel_field_decl *ks__cel_type_field(const struct ks_cel_type *t, const char *name, size_t len)
{
    uint32_t lo = 0, hi = t->nfields;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const char *f = t->fields[mid].name;
        int c = strncmp(f, name, len);
        if (c == 0 && f[len] != 0)
            c = 1;
        if (c == 0)
            return &t->fields[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- the declaration tables' type syntax -----------------------------------------------------------------
 */

struct tparse {
    struct cel_arena *a;
    const char *s;
    bool bad;
};

static void skip_ws(struct tparse *p)
{
    while (*p->s == ' ')
        p->s++;
}

static const struct ks_cel_type *parse_t(struct tparse *p)
{
    skip_ws(p);
    const char *st = p->s;
    while ((*p->s >= 'a' && *p->s <= 'z') || (*p->s >= 'A' && *p->s <= 'Z') || *p->s == '_' || *p->s == '.' ||
           (*p->s >= '0' && *p->s <= '9'))
        p->s++;
    size_t n = (size_t)(p->s - st);
    char name[64];
    if (n == 0 || n >= sizeof(name)) {
        p->bad = true;
        return NULL;
    }
    memcpy(name, st, n);
    name[n] = 0;
    const struct ks_cel_type *args[2] = {NULL, NULL};
    int nargs = 0;
    if (*p->s == '(') {
        p->s++;
        for (;;) {
            if (nargs == 2) {
                p->bad = true;
                return NULL;
            }
            args[nargs++] = parse_t(p);
            skip_ws(p);
            if (*p->s == ',') {
                p->s++;
                continue;
            }
            if (*p->s == ')') {
                p->s++;
                break;
            }
            p->bad = true;
            return NULL;
        }
    }
    static const struct {
        const char *n;
        int k;
    } prims[] = {{"dyn", KS_CEL_DYN},
                 {"null", KS_CEL_NULL},
                 {"bool", KS_CEL_BOOL},
                 {"int", KS_CEL_INT},
                 {"uint", KS_CEL_UINT},
                 {"double", KS_CEL_DOUBLE},
                 {"string", KS_CEL_STRING},
                 {"bytes", KS_CEL_BYTES},
                 {"duration", KS_CEL_DURATION},
                 {"timestamp", KS_CEL_TIMESTAMP},
                 {"kubernetes.Quantity", KS_CEL_QUANTITY},
                 {"kubernetes.Semver", KS_CEL_SEMVER}};
    for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
        if (!strcmp(name, prims[i].n))
            return ks__cel_type_prim(prims[i].k);
    if (!strcmp(name, "list") && nargs == 1)
        return ks__cel_type_new(p->a, KS_CEL_LIST, args[0], NULL);
    if (!strcmp(name, "map") && nargs == 2)
        return ks__cel_type_new(p->a, KS_CEL_MAP, args[0], args[1]);
    if (!strcmp(name, "optional") && nargs == 1)
        return ks__cel_type_new(p->a, KS_CEL_OPTIONAL, args[0], NULL);
    if (!strcmp(name, "type"))
        return nargs ? ks__cel_type_new(p->a, KS_CEL_TYPE, args[0], NULL) : &ks__cel_t_type;
    if (n == 1 && name[0] >= 'A' && name[0] <= 'Z')
        return ks__cel_type_param(p->a, name);
    p->bad = true;
    return NULL;
}

const struct ks_cel_type *ks__cel_type_parse(struct cel_arena *a, const char *text)
{
    struct tparse p = {.a = a, .s = text};
    const struct ks_cel_type *t = parse_t(&p);
    return p.bad ? NULL : t;
}

/* ---- public constructors
 * ------------------------------------------------------------------------------------ */

const struct ks_cel_type *ks_cel_type_kind(struct ks_cel_env *env, enum ks_cel_kind kind)
{
    (void)env;
    return ks__cel_type_prim(kind);
}

const struct ks_cel_type *ks_cel_type_list(struct ks_cel_env *env, const struct ks_cel_type *elem)
{
    return ks_cel_type_list_bounded(env, elem, 0);
}

const struct ks_cel_type *ks_cel_type_map(struct ks_cel_env *env, const struct ks_cel_type *key,
                                          const struct ks_cel_type *value)
{
    return ks_cel_type_map_bounded(env, key, value, 0);
}

const struct ks_cel_type *ks_cel_type_list_bounded(struct ks_cel_env *env, const struct ks_cel_type *elem,
                                                   uint64_t max_elements)
{
    if (!elem)
        return NULL;
    struct ks_cel_type *t = (struct ks_cel_type *)ks__cel_type_new(&env->arena, KS_CEL_LIST, elem, NULL);
    if (t)
        t->max_size = max_elements;
    return t;
}

const struct ks_cel_type *ks_cel_type_map_bounded(struct ks_cel_env *env, const struct ks_cel_type *key,
                                                  const struct ks_cel_type *value, uint64_t max_elements)
{
    if (!key || !value)
        return NULL;
    struct ks_cel_type *t = (struct ks_cel_type *)ks__cel_type_new(&env->arena, KS_CEL_MAP, key, value);
    if (t)
        t->max_size = max_elements;
    return t;
}

const struct ks_cel_type *ks_cel_type_optional(struct ks_cel_env *env, const struct ks_cel_type *elem)
{
    if (!elem)
        return NULL;
    return ks__cel_type_new(&env->arena, KS_CEL_OPTIONAL, elem, NULL);
}

const struct ks_cel_type *ks_cel_type_bounded(struct ks_cel_env *env, enum ks_cel_kind kind,
                                              uint64_t max_size)
{
    const struct ks_cel_type *p = ks__cel_type_prim(kind);
    if (!p)
        return NULL;
    struct ks_cel_type *t = ks__cel_zalloc(&env->arena, sizeof(*t));
    if (!t)
        return NULL;
    *t = *p;
    t->max_size = max_size;
    return t;
}

static int field_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ks_cel_field_decl *)a)->name, ((const struct ks_cel_field_decl *)b)->name);
}

const struct ks_cel_type *ks_cel_type_object(struct ks_cel_env *env, const char *name,
                                             const struct ks_cel_field_decl *fields, uint32_t n)
{
    struct ks_cel_type *t = ks__cel_zalloc(&env->arena, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = KS_CEL_OBJECT;
    t->name = ks__cel_strndup(&env->arena, name, strlen(name));
    struct ks_cel_field_decl *f = ks__cel_alloc(&env->arena, (n ? n : 1) * sizeof(*f));
    if (!t->name || !f)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!fields[i].type)
            return NULL;
        f[i].type = fields[i].type;
        f[i].name = ks__cel_strndup(&env->arena, fields[i].name, strlen(fields[i].name));
        if (!f[i].name)
            return NULL;
    }
    qsort(f, n, sizeof(*f), field_cmp);
    t->fields = f;
    t->nfields = n;
    return t;
}

enum ks_cel_kind ks_cel_type_kind_of(const struct ks_cel_type *t)
{
    if (!t || t->kind == CEL_T_PARAM || t->kind == KS_CEL_ERROR)
        return KS_CEL_DYN;
    return (enum ks_cel_kind)t->kind;
}
