/*
 * json_edit.c - set a few fields of an API object's JSON text, keeping everything else
 * (see include/ksched/internal/json_edit.h).
 *
 * The text is parsed into the tree API objects are read as (ksched/internal/json_tree.h: numbers
 * keep their literal text, so nothing is reformatted) and written back compactly by a
 * walk that applies the edits: at each object it replaces (or, for if_absent edits,
 * keeps) the members an edit names, descends into the members an edit's path goes
 * through, writes every other member as it is (ks_yaml_write_json), and appends at the
 * object's end what is still missing, creating the objects on the way. Edits are few (an
 * update sets two or three fields), so matching them by walking their paths at each
 * object is cheap.
 */
#include "ksched/internal/json_edit.h"
#include "ksched/internal/json_tree.h"
#include "ksched/internal/json_write.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int write_object(struct writer *w, const struct ks_yaml_node *v)
{
    bool first = true;
    fputc('{', w->out);
    for (uint32_t k = 0; k < v->n; k++) {
        const struct ks_yaml_node *kn = v->pairs[k].key, *val = v->pairs[k].value;
        const char *key = kn->str;
        bool through;
        long set = find(w, key, &through);
        if (!first)
            fputc(',', w->out);
        first = false;
        ks_json_write_str(w->out, key, kn->len);
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
            if (val->kind != KS_YAML_MAP && !ks_yaml_is_null(val))
                return -EINVAL;
            w->path[w->depth++] = key;
            int rc;
            if (val->kind == KS_YAML_MAP) {
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
        if (ks_yaml_write_json(w->out, val))
            return -ENOMEM; /* a memory stream fails to write only when it cannot grow */
    }
    int rc = write_missing(w, first);
    fputc('}', w->out);
    return rc;
}

/* @in as a tree in *@s: 0, -EINVAL (not JSON) or -ENOMEM. */
static int parse(const char *in, size_t len, struct ks_yaml_stream **s)
{
    struct ks_error err = {0};
    int rc = ks_json_parse("", in, len, s, &err);
    return rc == -ENOMEM ? rc : rc ? -EINVAL : 0;
}

int ks_json_edit(const char *in, size_t len, const struct ks_json_edit *edits, size_t n, char **out,
                 size_t *out_len)
{
    struct ks_yaml_stream *s = NULL;
    int rc = parse(in, len, &s);
    if (rc)
        return rc;
    const struct ks_yaml_node *root = s->docs[0];
    struct writer w = {.edits = edits, .n = n};
    char *buf = NULL;
    size_t blen = 0;
    rc = -EINVAL;
    if (root->kind != KS_YAML_MAP)
        goto out;
    rc = -ENOMEM;
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
    ks_yaml_stream_destroy(s);
    return rc;
}

bool ks_json_get_string(const char *in, size_t len, const char *const *path, char *buf, size_t buf_len)
{
    struct ks_yaml_stream *s = NULL;
    if (parse(in, len, &s))
        return false;
    const struct ks_yaml_node *v = s->docs[0];
    for (size_t i = 0; v && path[i]; i++)
        v = ks_yaml_get(v, path[i]);
    bool found = v && v->kind == KS_YAML_SCALAR && !v->plain && buf_len > 0;
    if (found)
        snprintf(buf, buf_len, "%s", v->str);
    ks_yaml_stream_destroy(s);
    return found;
}
