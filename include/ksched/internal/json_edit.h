/*
 * json_edit.h - an API object's JSON text with a few fields set, the rest kept as the server
 * sent it: what an update (PUT) of an object read with GET sends back, as client-go sends
 * the whole object it holds with the fields it changed.
 */
#ifndef KSCHED_JSON_EDIT_H
#define KSCHED_JSON_EDIT_H

#include <stdbool.h>
#include <stddef.h>

/* One change: the member at @path (object keys from the root, NULL-terminated) becomes @value. */
struct ks_json_edit {
    const char *const *path;
    const char *value; /* JSON text, written as it is (the caller makes it valid JSON) */
    bool if_absent;    /* keep the member when it exists (SetMetaDataAnnotation after HasAnnotation) */
};

/*
 * ks_json_edit - @len bytes of JSON text @in (an object) with @n edits applied, as a new
 * compact JSON text in *@out (malloc'ed, NUL-terminated, *@out_len bytes). A member that
 * exists keeps its place; a new one is appended to its object; objects on the way to a
 * path are created when absent or null. Strings are re-escaped, numbers written as they
 * were. Returns 0, -EINVAL (not a JSON object - a key twice in one object included, as
 * ks_json_parse() - or a path through a value that is neither an object nor null) or
 * -ENOMEM. Any thread; allocates.
 */
int ks_json_edit(const char *in, size_t len, const struct ks_json_edit *edits, size_t n, char **out,
                 size_t *out_len);

/*
 * ks_json_get_string - the string at @path (as above) of JSON text @in, copied into @buf
 * (truncated to @len - 1 bytes); false when absent, not a string, or @in is not JSON.
 */
bool ks_json_get_string(const char *in, size_t len, const char *const *path, char *buf, size_t buf_len);

#endif
