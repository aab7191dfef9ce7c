/* jcheck.c - content checks that collect every problem (jcheck.h). */
#include "core/jcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tw_jc_fail(struct tw_jc *c, const char *path, size_t off, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    c->n++;
    if (c->problem)
        c->problem(c->arg, path, off, msg);
}

size_t tw_jc_off(struct tw_jc *c)
{
    tw_jr_peek(c->r);
    return (size_t)(c->r->p - c->r->base);
}

char tw_jc_kind(struct tw_jc *c)
{
    char k = tw_jr_peek(c->r);
    switch (k) {
    case '"': return 's';
    case '{': return 'o';
    case '[': return 'a';
    case 't':
    case 'f': return 'b';
    case 'n': return 'z';
    case '-': return 'n';
    default: return k >= '0' && k <= '9' ? 'n' : 0;
    }
}

const char *tw_jc_kind_name(char kind)
{
    switch (kind) {
    case 's': return "a string";
    case 'o': return "an object";
    case 'a': return "an array";
    case 'b': return "a boolean";
    case 'z': return "null";
    case 'n': return "a number";
    default: return "nothing";
    }
}

int tw_jc_skip(struct tw_jc *c)
{
    return tw_jr_skip(c->r) ? 0 : -1;
}

int tw_jc_str(struct tw_jc *c, const char *path, char *dst, size_t cap, bool nonempty)
{
    size_t off = tw_jc_off(c);
    char k = tw_jc_kind(c);
    if (k != 's') {
        tw_jc_fail(c, path, off, "must be a string, got %s", tw_jc_kind_name(k));
        return tw_jc_skip(c);
    }
    size_t len = 0;
    bool over = false;
    if (!tw_jr_string(c->r, dst, cap, &len, &over))
        return -1;
    if (over) {
        tw_jc_fail(c, path, off, "is longer than %zu bytes (or holds a NUL)", cap - 1);
        dst[0] = '\0';
        return 0;
    }
    if (nonempty && len == 0) {
        tw_jc_fail(c, path, off, "must not be empty");
        return 0;
    }
    return 1;
}

int tw_jc_int(struct tw_jc *c, const char *path, int64_t lo, int64_t hi, int64_t *out)
{
    size_t off = tw_jc_off(c);
    char k = tw_jc_kind(c);
    if (k != 'n') {
        tw_jc_fail(c, path, off, "must be an integer from %lld to %lld, got %s", (long long)lo,
                   (long long)hi, tw_jc_kind_name(k));
        return tw_jc_skip(c);
    }
    struct tw_jr_num n;
    if (!tw_jr_number(c->r, &n))
        return -1;
    if (!n.is_int || n.i < lo || n.i > hi) {
        tw_jc_fail(c, path, off, "must be an integer from %lld to %lld, got %.*s", (long long)lo,
                   (long long)hi, (int)(n.len > 40 ? 40 : n.len), n.text);
        return 0;
    }
    *out = n.i;
    return 1;
}

int tw_jc_bool(struct tw_jc *c, const char *path, bool *out)
{
    size_t off = tw_jc_off(c);
    char k = tw_jc_kind(c);
    if (k != 'b') {
        tw_jc_fail(c, path, off, "must be true or false, got %s", tw_jc_kind_name(k));
        return tw_jc_skip(c);
    }
    return tw_jr_bool(c->r, out) ? 1 : -1;
}

int tw_jc_want(struct tw_jc *c, const char *path, char open)
{
    size_t off = tw_jc_off(c);
    char k = tw_jc_kind(c);
    if (k == (open == '{' ? 'o' : 'a'))
        return 1;
    tw_jc_fail(c, path, off, "must be %s, got %s", open == '{' ? "an object" : "an array",
               tw_jc_kind_name(k));
    return tw_jc_skip(c);
}

char *tw_jc_path(char *dst, size_t cap, const char *path, const char *key)
{
    snprintf(dst, cap, "%s.%s", path, key);
    return dst;
}

char *tw_jc_path_at(char *dst, size_t cap, const char *path, size_t i)
{
    snprintf(dst, cap, "%s[%zu]", path, i);
    return dst;
}

/* Where tw_jc_validate failed: the path of the deepest frame that saw the
 * reader fail, set once. */
struct where {
    char *path;
    size_t cap;
    bool set;
};

static void note(struct where *w, const char *path)
{
    if (!w->set) {
        snprintf(w->path, w->cap, "%s", path);
        w->set = true;
    }
}

/* Whether the reader's error is at byte OFF (the repeated key's quote). */
static bool error_at(const struct tw_jr *r, size_t off)
{
    if (!r->err || r->err->line < 1)
        return false;
    long line, col;
    tw_jc_position(r->base, (size_t)(r->end - r->base), off, &line, &col);
    return line == r->err->line && col == r->err->column;
}

static bool walk(struct tw_jr *r, const char *path, struct where *w)
{
    char sub[256];
    char c = tw_jr_peek(r);
    if (c == '{') {
        struct tw_jr_obj o = {0};
        char key[128];
        while (tw_jr_member(r, &o, key, sizeof(key))) {
            if (o.key_over) {
                char *k = tw_jr_key_dup(r, &o);
                tw_jc_path(sub, sizeof(sub), path, k ? k : "?");
                free(k);
            } else {
                tw_jc_path(sub, sizeof(sub), path, key);
            }
            if (!walk(r, sub, w))
                return false;
        }
        if (r->rc == TW_OK)
            return true;
        /* A member's key that is repeated: the member; anything else
         * wrong between members: the object. */
        if (o.started && o.key_off > 0 && error_at(r, o.key_off)) {
            if (o.key_over) {
                char *k = tw_jr_key_dup(r, &o);
                tw_jc_path(sub, sizeof(sub), path, k ? k : "?");
                free(k);
            } else {
                tw_jc_path(sub, sizeof(sub), path, key);
            }
            note(w, sub);
        }
        note(w, path);
        return false;
    }
    if (c == '[') {
        struct tw_jr_arr a = {0};
        while (tw_jr_element(r, &a))
            if (!walk(r, tw_jc_path_at(sub, sizeof(sub), path, a.n - 1), w))
                return false;
        if (r->rc == TW_OK)
            return true;
        note(w, path);
        return false;
    }
    if (tw_jr_skip(r))
        return true;
    note(w, path);
    return false;
}

bool tw_jc_validate(struct tw_jr *r, char *path, size_t cap)
{
    struct where w = {path, cap, false};
    if (walk(r, "$", &w) && tw_jr_finish(r)) {
        snprintf(path, cap, "$");
        return true;
    }
    note(&w, "$");
    return false;
}

void tw_jc_position(const char *buf, size_t len, size_t off, long *line, long *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n') {
            ++*line;
            *column = 1;
        } else {
            ++*column;
        }
    }
}
