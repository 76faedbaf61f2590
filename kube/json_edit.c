/*
 * json_edit.c - set a few fields of an API object's JSON text, keeping everything else
 * (see include/ksched/json_edit.h).
 *
 * The text is parsed into yajl's tree (numbers keep their literal text, so nothing is
 * reformatted) and written back compactly by a walk that applies the edits: at each object
 * it replaces (or, for if_absent edits, keeps) the members an edit names, descends into
 * the members an edit's path goes through, and appends at the object's end what is still
 * missing, creating the objects on the way. Edits are few (an update sets two or three
 * fields), so matching them by walking their paths at each object is cheap.
 */
#include "ksched/json_edit.h"
#include "ksched/json_write.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

enum { KS_JSON_EDIT_MAX_DEPTH = 64 };

struct writer {
    FILE *out;
    const struct ks_json_edit *edits;
    size_t n;
    const char *path[KS_JSON_EDIT_MAX_DEPTH]; /* keys from the root to the object being written */
    size_t depth;
    unsigned char *done; /* per edit: written (or kept) */
};

/* Does edit @e's path start with the writer's path (the object at depth w->depth)? */
static bool under(const struct writer *w, const struct ks_json_edit *e)
{
    for (size_t i = 0; i < w->depth; i++) {
        if (!e->path[i] || strcmp(e->path[i], w->path[i]) != 0)
            return false;
    }
    return e->path[w->depth] != NULL;
}

/* The edit that sets member @key of the current object, or -1; *through: an edit goes deeper. */
static long find(const struct writer *w, const char *key, bool *through)
{
    long set = -1;
    *through = false;
    for (size_t i = 0; i < w->n; i++) {
        const struct ks_json_edit *e = &w->edits[i];
        if (!under(w, e) || strcmp(e->path[w->depth], key) != 0)
            continue;
        if (e->path[w->depth + 1])
            *through = true;
        else if (set < 0)
            set = (long)i;
    }
    return set;
}

/* A value outside every edit's path, as it was. */
static int write_plain(FILE *out, yajl_val v)
{
    switch (v->type) {
    case yajl_t_string:
        ks_json_write_cstr(out, v->u.string);
        return 0;
    case yajl_t_number:
        fputs(v->u.number.r, out);
        return 0;
    case yajl_t_true:
        fputs("true", out);
        return 0;
    case yajl_t_false:
        fputs("false", out);
        return 0;
    case yajl_t_null:
        fputs("null", out);
        return 0;
    case yajl_t_array:
        fputc('[', out);
        for (size_t i = 0; i < v->u.array.len; i++) {
            if (i)
                fputc(',', out);
            int rc = write_plain(out, v->u.array.values[i]);
            if (rc)
                return rc;
        }
        fputc(']', out);
        return 0;
    case yajl_t_object:
        fputc('{', out);
        for (size_t i = 0; i < v->u.object.len; i++) {
            if (i)
                fputc(',', out);
            ks_json_write_cstr(out, v->u.object.keys[i]);
            fputc(':', out);
            int rc = write_plain(out, v->u.object.values[i]);
            if (rc)
                return rc;
        }
        fputc('}', out);
        return 0;
    default:
        return -EINVAL;
    }
}

/*
 * The members the edits under the current path still need, appended to an object being
 * written (@first: no member written yet). Each missing key is written once: its value,
 * or an object holding the deeper edits.
 */
static int write_missing(struct writer *w, bool first)
{
    for (size_t i = 0; i < w->n; i++) {
        const struct ks_json_edit *e = &w->edits[i];
        if (w->done[i] || !under(w, e))
            continue;
        const char *key = e->path[w->depth];
        bool seen = false; /* an earlier edit with this key was written in this pass */
        for (size_t j = 0; j < i && !seen; j++)
            seen = under(w, &w->edits[j]) && strcmp(w->edits[j].path[w->depth], key) == 0 && w->done[j];
        if (seen)
            continue;
        if (!first)
            fputc(',', w->out);
        first = false;
        ks_json_write_cstr(w->out, key);
        fputc(':', w->out);
        bool through;
        long set = find(w, key, &through);
        if (set >= 0) {
            fputs(w->edits[set].value, w->out);
            w->done[set] = 1;
            continue;
        }
        if (w->depth + 1 >= KS_JSON_EDIT_MAX_DEPTH)
            return -EINVAL;
        w->path[w->depth++] = key;
        fputc('{', w->out);
        int rc = write_missing(w, true);
        fputc('}', w->out);
        w->depth--;
        if (rc)
            return rc;
        w->done[i] = 1; /* every edit through @key is now written */
    }
    return 0;
}

static int write_object(struct writer *w, yajl_val v)
{
    bool first = true;
    fputc('{', w->out);
    for (size_t k = 0; k < v->u.object.len; k++) {
        const char *key = v->u.object.keys[k];
        yajl_val val = v->u.object.values[k];
        bool through;
        long set = find(w, key, &through);
        if (!first)
            fputc(',', w->out);
        first = false;
        ks_json_write_cstr(w->out, key);
        fputc(':', w->out);
        if (set >= 0) {
            w->done[set] = 1;
            if (!w->edits[set].if_absent) {
                fputs(w->edits[set].value, w->out);
                continue;
            }
        }
        if (through && set < 0) {
            if (w->depth + 1 >= KS_JSON_EDIT_MAX_DEPTH)
                return -EINVAL;
            if (!YAJL_IS_OBJECT(val) && !YAJL_IS_NULL(val))
                return -EINVAL;
            w->path[w->depth++] = key;
            int rc;
            if (YAJL_IS_OBJECT(val)) {
                rc = write_object(w, val);
            } else {
                fputc('{', w->out);
                rc = write_missing(w, true);
                fputc('}', w->out);
            }
            w->depth--;
            if (rc)
                return rc;
            continue;
        }
        int rc = write_plain(w->out, val);
        if (rc)
            return rc;
    }
    int rc = write_missing(w, first);
    fputc('}', w->out);
    return rc;
}

/* yajl_tree_parse wants a NUL-terminated text. */
static yajl_val parse(const char *in, size_t len)
{
    char *text = malloc(len + 1);
    if (!text)
        return NULL;
    memcpy(text, in, len);
    text[len] = '\0';
    yajl_val v = yajl_tree_parse(text, NULL, 0);
    free(text);
    return v;
}

int ks_json_edit(const char *in, size_t len, const struct ks_json_edit *edits, size_t n, char **out,
                 size_t *out_len)
{
    yajl_val root = parse(in, len);
    if (!root || !YAJL_IS_OBJECT(root)) {
        yajl_tree_free(root);
        return -EINVAL;
    }
    struct writer w = {.edits = edits, .n = n};
    char *buf = NULL;
    size_t blen = 0;
    int rc = -ENOMEM;
    if (!(w.done = calloc(n ? n : 1, 1)) || !(w.out = open_memstream(&buf, &blen)))
        goto out;
    rc = write_object(&w, root);
    if (fclose(w.out) != 0 && rc == 0)
        rc = -ENOMEM;
    w.out = NULL;
    if (rc == 0) {
        *out = buf;
        *out_len = blen;
        buf = NULL;
    }
out:
    free(buf);
    free(w.done);
    yajl_tree_free(root);
    return rc;
}

bool ks_json_get_string(const char *in, size_t len, const char *const *path, char *buf, size_t buf_len)
{
    yajl_val root = parse(in, len);
    if (!root)
        return false;
    yajl_val v = yajl_tree_get(root, (const char **)path, yajl_t_string);
    bool found = v != NULL && buf_len > 0;
    if (found)
        snprintf(buf, buf_len, "%s", v->u.string);
    yajl_tree_free(root);
    return found;
}
