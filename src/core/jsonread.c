/*
 * jsonread.c - the one-pass JSON reader (see jsonread.h).
 *
 * Strings are copied in runs of plain bytes; numbers that fit a double
 * exactly (at most 15 significant digits, a power of ten up to 22) are
 * converted without strtod, which gives the same correctly rounded result.
 * Repeated keys are found with a short list per open object, and a hash
 * index once an object has many keys, so a hostile body of a hundred
 * thousand keys costs linear time.
 */
#include "core/jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINEAR_KEYS 32 /* keys an object holds before it gets a hash index */

/* The document's name and a space for "%s%s", or nothing when unnamed. */
#define WHAT(r) ((r)->what ? (r)->what : ""), ((r)->what ? " " : "")
#define WHAT_IS(r) ((r)->what ? (r)->what : ""), ((r)->what ? " is " : "")

void tw_jr_init(struct tw_jr *r, const char *buf, size_t len, const char *what,
                unsigned flags, int max_depth, struct tw_error *err)
{
    r->base = buf;
    r->p = buf;
    r->end = buf + len;
    r->err = err;
    r->rc = TW_OK;
    r->syntax = false;
    r->what = what;
    r->depth_hint = NULL;
    r->flags = flags;
    r->max_depth = max_depth > TW_JR_MAX_DEPTH ? TW_JR_MAX_DEPTH : max_depth;
    r->depth = 0;
    r->keys = r->some_keys;
    r->n_keys = 0;
    r->cap_keys = sizeof(r->some_keys) / sizeof(r->some_keys[0]);
    memset(r->index, 0, sizeof(r->index));
    memset(r->index_cap, 0, sizeof(r->index_cap));
}

void tw_jr_done(struct tw_jr *r)
{
    if (r->keys != r->some_keys)
        free(r->keys);
    r->keys = r->some_keys;
    r->n_keys = 0;
    for (int i = 0; i <= TW_JR_MAX_DEPTH; i++) {
        free(r->index[i]);
        r->index[i] = NULL;
        r->index_cap[i] = 0;
    }
}

static void position(const struct tw_jr *r, const char *at, long *line, long *col)
{
    *line = 1;
    *col = 1;
    for (const char *q = r->base; q < at && q < r->end; q++) {
        if (*q == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

bool tw_jr_syntax(struct tw_jr *r, const char *msg)
{
    if (r->rc != TW_OK)
        return false;
    long line, col;
    position(r, r->p, &line, &col);
    r->syntax = true;
    r->rc = tw_error_set_at(r->err, TW_EPARSE, line, col,
                            "%s%snot valid JSON at line %ld, column %ld: %s", WHAT_IS(r), line,
                            col, msg);
    return false;
}

bool tw_jr_fail(struct tw_jr *r, enum tw_err code, const char *fmt, ...)
{
    if (r->rc != TW_OK)
        return false;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->rc = tw_error_set(r->err, code, "%s", msg);
    return false;
}

static bool too_deep(struct tw_jr *r)
{
    if (r->rc != TW_OK)
        return false;
    long line, col;
    position(r, r->p, &line, &col);
    r->syntax = true;
    r->rc = tw_error_set_at(r->err, TW_EPARSE, line, col,
                            "%s%snests deeper than %d levels at line %ld, column %ld%s%s",
                            WHAT(r), r->max_depth, line, col, r->depth_hint ? "; " : "",
                            r->depth_hint ? r->depth_hint : "");
    return false;
}

static inline void ws(struct tw_jr *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

char tw_jr_peek(struct tw_jr *r)
{
    ws(r);
    return r->p < r->end ? *r->p : '\0';
}

static bool lit(struct tw_jr *r, const char *word, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return tw_jr_syntax(r, "unexpected characters");
    r->p += n;
    return true;
}

bool tw_jr_null(struct tw_jr *r)
{
    ws(r);
    if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
        r->p += 4;
        return true;
    }
    return false;
}

bool tw_jr_bool(struct tw_jr *r, bool *out)
{
    char c = tw_jr_peek(r);
    *out = c == 't';
    if (c == 't')
        return lit(r, "true", 4);
    if (c == 'f')
        return lit(r, "false", 5);
    return tw_jr_syntax(r, "true or false was expected");
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool hex4(struct tw_jr *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return tw_jr_syntax(r, "a \\u escape needs four hex digits");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(r->p[i]);
        if (h < 0)
            return tw_jr_syntax(r, "a \\u escape needs four hex digits");
        v = v << 4 | (unsigned)h;
    }
    r->p += 4;
    *out = v;
    return true;
}

/* Length of the valid UTF-8 sequence at P (at most AVAIL bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t k;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        k = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        k = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (avail < k)
        return 0;
    unsigned cp = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k;
}

/* Where a string's decoded bytes go. */
struct sink {
    char *dst;      /* NULL: only validate */
    size_t cap, n;  /* n: bytes kept in dst */
    size_t total;   /* decoded length */
    bool over;
    bool hashing;
    uint32_t hash;  /* FNV-1a of the decoded bytes, when hashing */
};

static inline void put(struct sink *s, const char *b, size_t k)
{
    if (s->hashing) {
        for (size_t i = 0; i < k; i++)
            s->hash = (s->hash ^ (unsigned char)b[i]) * 16777619u;
    }
    s->total += k;
    if (!s->dst || s->over)
        return;
    if (s->n + k >= s->cap) {
        s->over = true;
        return;
    }
    memcpy(s->dst + s->n, b, k);
    s->n += k;
}

static void put_cp(struct sink *s, unsigned cp)
{
    char b[4];
    size_t k;
    if (cp < 0x80) {
        b[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3f));
        k = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        k = 3;
    } else {
        b[0] = (char)(0xf0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        k = 4;
    }
    put(s, b, k);
}

/* Bytes that end a plain run in a string: quote, backslash, control
 * characters and the first byte of a UTF-8 sequence. */
static const unsigned char stops[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Reads a string (R->p at its opening quote) into S. */
static bool string_into(struct tw_jr *r, struct sink *s)
{
    if (r->p >= r->end || *r->p != '"')
        return tw_jr_syntax(r, "a string was expected");
    r->p++;
    for (;;) {
        /* The plain run up to the next quote, backslash, control or
         * non-ASCII byte. */
        const char *from = r->p;
        while (r->p < r->end && !stops[(unsigned char)*r->p])
            r->p++;
        if (r->p > from)
            put(s, from, (size_t)(r->p - from));
        if (r->p >= r->end)
            return tw_jr_syntax(r, "a string is not closed");
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c < 0x20)
            return tw_jr_syntax(r, "a control character inside a string");
        if (c >= 0x80) {
            size_t k = utf8_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
            if (!k)
                return tw_jr_syntax(r, "a string is not valid UTF-8");
            put(s, r->p, k);
            r->p += k;
            continue;
        }
        /* A backslash escape. */
        r->p++;
        if (r->p >= r->end)
            return tw_jr_syntax(r, "a string is not closed");
        char e = *r->p++;
        unsigned cp;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (!hex4(r, &cp))
                return false;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                unsigned lo;
                if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
                    return tw_jr_syntax(r, "a lone UTF-16 surrogate in a \\u escape");
                r->p += 2;
                if (!hex4(r, &lo))
                    return false;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return tw_jr_syntax(r, "a lone UTF-16 surrogate in a \\u escape");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                return tw_jr_syntax(r, "a lone UTF-16 surrogate in a \\u escape");
            }
            if (cp == 0) {
                if (r->flags & TW_JR_STRICT)
                    return tw_jr_syntax(r, "\\u0000 is not allowed in a string");
                s->over = true; /* a NUL can't be kept in a C string */
            }
            break;
        default: return tw_jr_syntax(r, "an unknown escape in a string");
        }
        put_cp(s, cp);
    }
    return true;
}

bool tw_jr_string(struct tw_jr *r, char *dst, size_t cap, size_t *len, bool *over)
{
    ws(r);
    struct sink s = {.dst = dst, .cap = cap};
    if (!string_into(r, &s))
        return false;
    if (dst)
        dst[s.over ? 0 : s.n] = '\0';
    if (len)
        *len = s.total;
    if (over)
        *over = s.over;
    return true;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static bool number(struct tw_jr *r, struct tw_jr_num *out)
{
    ws(r);
    const char *s = r->p;
    bool neg = false, is_int = true, int_over = false;
    uint64_t mag = 0;  /* the integer part while it fits */
    uint64_t mant = 0; /* significant digits for the fast conversion */
    int sig = 0, frac = 0;
    if (r->p < r->end && *r->p == '-') {
        neg = true;
        r->p++;
    }
    if (r->p >= r->end)
        return tw_jr_syntax(r, "a number was expected");
    if (*r->p == '0') {
        r->p++;
    } else if (*r->p >= '1' && *r->p <= '9') {
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            unsigned dgt = (unsigned)(*r->p - '0');
            if (mag > (UINT64_MAX - dgt) / 10)
                int_over = true;
            else
                mag = mag * 10 + dgt;
            if (sig < 19) {
                mant = mant * 10 + dgt;
                sig++;
            } else {
                sig = 99; /* too many digits for the fast path */
            }
            r->p++;
        }
    } else {
        return tw_jr_syntax(r, "a value was expected");
    }
    if (r->p < r->end && *r->p == '.') {
        is_int = false;
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return tw_jr_syntax(r, "a digit must follow the decimal point");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            unsigned dgt = (unsigned)(*r->p - '0');
            if (mant == 0 && dgt == 0) {
                frac++; /* leading zeros are not significant */
            } else if (sig < 19) {
                mant = mant * 10 + dgt;
                sig++;
                frac++;
            } else {
                sig = 99;
            }
            r->p++;
        }
    }
    long exp10 = 0;
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        is_int = false;
        r->p++;
        bool eneg = false;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            eneg = *r->p++ == '-';
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return tw_jr_syntax(r, "an exponent needs digits");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            if (exp10 < 100000)
                exp10 = exp10 * 10 + (*r->p - '0');
            r->p++;
        }
        if (eneg)
            exp10 = -exp10;
    }
    out->is_int = false;
    out->i = 0;
    if (is_int) {
        uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        if (!int_over && mag <= lim) {
            out->is_int = true;
            out->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
            out->d = (double)out->i;
            return true;
        }
        if (r->flags & TW_JR_STRICT) {
            r->p = s;
            return tw_jr_syntax(r, "an integer outside -2^63..2^63-1");
        }
    }
    long e = exp10 - frac;
    if (!is_int && sig <= 15 && e >= -22 && e <= 22) {
        double d = (double)mant;
        d = e >= 0 ? d * pow10_exact[e] : d / pow10_exact[-e];
        out->d = neg ? -d : d;
        return true;
    }
    char small[64], *buf = small;
    size_t n = (size_t)(r->p - s);
    if (n >= sizeof(small)) {
        if (!(r->flags & TW_JR_STRICT)) {
            /* Longer than any figure tierwise reads: still a number. */
            out->d = NAN;
            return true;
        }
        buf = malloc(n + 1);
        if (!buf)
            return tw_jr_fail(r, TW_ENOMEM, "out of memory reading a number of %zu bytes", n);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    out->d = strtod(buf, NULL);
    bool overflow = errno == ERANGE && (out->d == HUGE_VAL || out->d == -HUGE_VAL);
    if (buf != small)
        free(buf);
    if (overflow && (r->flags & TW_JR_STRICT)) {
        r->p = s;
        return tw_jr_syntax(r, "a number too large for a double");
    }
    return true;
}

bool tw_jr_number(struct tw_jr *r, struct tw_jr_num *out)
{
    ws(r);
    const char *s = r->p;
    bool ok = number(r, out);
    out->text = s;
    out->len = ok ? (size_t)(r->p - s) : 0;
    return ok;
}

/* ---- objects and arrays ---- */

static bool enter(struct tw_jr *r)
{
    if (r->depth >= r->max_depth)
        return too_deep(r);
    r->depth++;
    r->p++;
    return true;
}

/* The decoded text of the key whose quote is at OFF, into a new buffer. */
static char *key_text(const struct tw_jr *r, size_t off, size_t len)
{
    struct tw_jr sub = *r;
    sub.p = r->base + off;
    sub.rc = TW_OK;
    sub.err = NULL;
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    struct sink s = {.dst = t, .cap = len + 1};
    string_into(&sub, &s);
    t[s.n] = '\0';
    return t;
}

/* Whether keys A and B (same hash) decode to the same text. */
static int same_key(struct tw_jr *r, const struct tw_jr_key *a, const struct tw_jr_key *b)
{
    if (a->len != b->len)
        return 0;
    char *x = key_text(r, a->off, a->len), *y = key_text(r, b->off, b->len);
    int same = x && y ? memcmp(x, y, a->len) == 0 : -1;
    free(x);
    free(y);
    return same;
}

/* Puts keys [O->kbase, n_keys) into the index of O's depth, sized for at
 * least WANT keys. */
static bool build_index(struct tw_jr *r, struct tw_jr_obj *o, size_t want)
{
    size_t cap = 64;
    while (cap < want * 2)
        cap *= 2;
    int d = o->depth;
    if (r->index_cap[d] < cap) {
        free(r->index[d]);
        r->index[d] = malloc(cap * sizeof(uint32_t));
        r->index_cap[d] = r->index[d] ? cap : 0;
        if (!r->index[d])
            return tw_jr_fail(r, TW_ENOMEM, "out of memory checking an object's keys");
    }
    cap = r->index_cap[d];
    memset(r->index[d], 0, cap * sizeof(uint32_t));
    for (size_t i = o->kbase; i < r->n_keys; i++) {
        size_t h = r->keys[i].hash & (cap - 1);
        while (r->index[d][h])
            h = (h + 1) & (cap - 1);
        r->index[d][h] = (uint32_t)(i - o->kbase + 1);
    }
    o->indexed = true;
    return true;
}

/* Adds key K to object O; false (with the error) when O already has it.
 * SHOWN is the key for the message, NULL to decode it from the document. */
static bool add_key(struct tw_jr *r, struct tw_jr_obj *o, struct tw_jr_key k, const char *shown,
                    const char *at)
{
    size_t count = r->n_keys - o->kbase;
    const struct tw_jr_key *dup = NULL;
    int same = 0;
    if (!o->indexed && count >= LINEAR_KEYS && !build_index(r, o, count + 1))
        return false;
    if (o->indexed) {
        size_t cap = r->index_cap[o->depth];
        if ((count + 1) * 2 > cap) {
            if (!build_index(r, o, count + 1))
                return false;
            cap = r->index_cap[o->depth];
        }
        uint32_t *tab = r->index[o->depth];
        size_t h = k.hash & (cap - 1);
        for (; tab[h]; h = (h + 1) & (cap - 1)) {
            const struct tw_jr_key *e = &r->keys[o->kbase + tab[h] - 1];
            if (e->hash == k.hash && (same = same_key(r, e, &k)) != 0) {
                dup = e;
                break;
            }
        }
        if (!dup)
            tab[h] = (uint32_t)(count + 1);
    } else {
        for (size_t i = o->kbase; i < r->n_keys; i++) {
            if (r->keys[i].hash == k.hash && (same = same_key(r, &r->keys[i], &k)) != 0) {
                dup = &r->keys[i];
                break;
            }
        }
    }
    if (same < 0)
        return tw_jr_fail(r, TW_ENOMEM, "out of memory checking an object's keys");
    if (dup) {
        long line, col;
        position(r, at, &line, &col);
        char *text = shown ? NULL : key_text(r, k.off, k.len);
        r->syntax = true;
        r->rc = tw_error_set_at(r->err, TW_EPARSE, line, col,
                                "%s%shas a duplicate key \"%.80s\" at line %ld, column %ld: a "
                                "key may appear only once in an object",
                                WHAT(r), shown ? shown : text ? text : "?", line, col);
        free(text);
        return false;
    }
    if (r->n_keys == r->cap_keys) {
        size_t cap = r->cap_keys * 2;
        struct tw_jr_key *v = r->keys == r->some_keys ? malloc(cap * sizeof(*v))
                                                      : realloc(r->keys, cap * sizeof(*v));
        if (!v)
            return tw_jr_fail(r, TW_ENOMEM, "out of memory checking an object's keys");
        if (r->keys == r->some_keys)
            memcpy(v, r->some_keys, sizeof(r->some_keys));
        r->keys = v;
        r->cap_keys = cap;
    }
    r->keys[r->n_keys++] = k;
    return true;
}

bool tw_jr_member(struct tw_jr *r, struct tw_jr_obj *o, char *key, size_t keycap)
{
    if (r->rc != TW_OK)
        return false;
    ws(r);
    if (!o->started) {
        o->started = true;
        if (r->p >= r->end || *r->p != '{')
            return tw_jr_syntax(r, "an object was expected");
        if (!enter(r))
            return false;
        o->depth = r->depth;
        o->kbase = r->n_keys;
        o->indexed = false;
        ws(r);
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            r->depth--;
            return false;
        }
    } else if (r->p < r->end && *r->p == ',') {
        r->p++;
        ws(r);
    } else if (r->p < r->end && *r->p == '}') {
        r->p++;
        r->depth--;
        r->n_keys = o->kbase;
        return false;
    } else {
        return tw_jr_syntax(r, "a ',' or '}' was expected");
    }
    const char *at = r->p;
    bool strict = (r->flags & TW_JR_STRICT) != 0;
    struct sink s = {.dst = key, .cap = keycap, .hashing = strict, .hash = 2166136261u};
    if (!string_into(r, &s))
        return false;
    o->key_over = s.over;
    o->key_len = s.total;
    o->key_off = (size_t)(at - r->base);
    key[s.over ? 0 : s.n] = '\0';
    if (strict) {
        struct tw_jr_key k = {.hash = s.hash, .len = (uint32_t)s.total,
                              .off = (size_t)(at - r->base)};
        if (s.total > UINT32_MAX)
            return tw_jr_syntax(r, "a key longer than 4 GiB");
        if (!add_key(r, o, k, s.over ? NULL : key, at))
            return false;
    }
    ws(r);
    if (r->p >= r->end || *r->p != ':')
        return tw_jr_syntax(r, "a ':' was expected after a key");
    r->p++;
    ws(r);
    return true;
}

char *tw_jr_key_dup(struct tw_jr *r, const struct tw_jr_obj *o)
{
    return key_text(r, o->key_off, o->key_len);
}

bool tw_jr_element(struct tw_jr *r, struct tw_jr_arr *a)
{
    if (r->rc != TW_OK)
        return false;
    ws(r);
    if (!a->started) {
        a->started = true;
        a->n = 0;
        if (r->p >= r->end || *r->p != '[')
            return tw_jr_syntax(r, "an array was expected");
        if (!enter(r))
            return false;
        ws(r);
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            r->depth--;
            return false;
        }
    } else if (r->p < r->end && *r->p == ',') {
        r->p++;
        ws(r);
    } else if (r->p < r->end && *r->p == ']') {
        r->p++;
        r->depth--;
        return false;
    } else {
        return tw_jr_syntax(r, "a ',' or ']' was expected");
    }
    a->n++;
    return true;
}

bool tw_jr_skip(struct tw_jr *r)
{
    char c = tw_jr_peek(r);
    switch (c) {
    case '{': {
        struct tw_jr_obj o = {0};
        char k[1];
        while (tw_jr_member(r, &o, k, sizeof(k)))
            if (!tw_jr_skip(r))
                return false;
        return r->rc == TW_OK;
    }
    case '[': {
        struct tw_jr_arr a = {0};
        while (tw_jr_element(r, &a))
            if (!tw_jr_skip(r))
                return false;
        return r->rc == TW_OK;
    }
    case '"': return tw_jr_string(r, NULL, 0, NULL, NULL);
    case 't': return lit(r, "true", 4);
    case 'f': return lit(r, "false", 5);
    case 'n': return lit(r, "null", 4);
    case '\0':
        if (r->p >= r->end)
            return tw_jr_syntax(r, "a value was expected");
        return tw_jr_syntax(r, "unexpected characters");
    default: {
        struct tw_jr_num n;
        return tw_jr_number(r, &n);
    }
    }
}

bool tw_jr_finish(struct tw_jr *r)
{
    if (r->rc != TW_OK)
        return false;
    ws(r);
    if (r->p != r->end)
        return tw_jr_syntax(r, "something follows the end of the document");
    return true;
}

char *tw_jr_path(char *dst, size_t cap, const char *a, const char *b)
{
    if (!a[0] && b[0] == '.')
        b++; /* a member of the root is named by its key alone */
    size_t na = strlen(a), nb = strlen(b);
    if (na >= cap)
        na = cap - 1;
    if (nb >= cap - na)
        nb = cap - na - 1;
    memcpy(dst, a, na);
    memcpy(dst + na, b, nb);
    dst[na + nb] = '\0';
    return dst;
}

char *tw_jr_path_at(char *dst, size_t cap, const char *a, const char *b, size_t i)
{
    char num[24], *q = num + sizeof(num);
    *--q = '\0';
    *--q = ']';
    do {
        *--q = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    *--q = '[';
    tw_jr_path(dst, cap, a, b);
    size_t n = strlen(dst);
    return tw_jr_path(dst + n, cap - n, "", q) - n;
}

/* ---- typed members ---- */

char *tw_jr_field(char *dst, size_t cap, const char *path, const char *key)
{
    size_t np = strlen(path);
    if (np >= cap)
        np = cap - 1;
    memcpy(dst, path, np);
    dst[np] = '\0';
    if (np && dst[np - 1] != '.' && np + 1 < cap) {
        dst[np++] = '.';
        dst[np] = '\0';
    }
    return tw_jr_path(dst + np, cap - np, "", key) - np;
}

#define FIELD(f, path, key) char f[600]; tw_jr_field(f, sizeof(f), path, key)

static bool num_start(char c)
{
    return c == '-' || (c >= '0' && c <= '9');
}

bool tw_jr_get_str(struct tw_jr *r, const char *path, const char *key, unsigned opt, char *dst,
                   size_t cap)
{
    if ((opt & TW_JR_NULLABLE) && tw_jr_null(r)) {
        dst[0] = '\0';
        return true;
    }
    if (tw_jr_peek(r) != '"') {
        FIELD(f, path, key);
        return tw_jr_fail(r, TW_EPARSE, "%s must be a string%s", f,
                          opt & TW_JR_NULLABLE ? " or null" : "");
    }
    size_t n;
    bool over;
    if (!tw_jr_string(r, dst, cap, &n, &over))
        return false;
    if (over || ((opt & TW_JR_NONEMPTY) && n == 0)) {
        FIELD(f, path, key);
        dst[0] = '\0';
        if (n >= cap)
            return tw_jr_fail(r, TW_EPARSE, "%s is too long (%zu bytes, at most %zu)", f, n,
                              cap - 1);
        if (n == 0)
            return tw_jr_fail(r, TW_EPARSE, "%s must not be empty", f);
        return tw_jr_fail(r, TW_EPARSE, "%s holds a NUL", f);
    }
    return true;
}

bool tw_jr_get_int(struct tw_jr *r, const char *path, const char *key, int64_t lo, int64_t hi,
                   unsigned opt, int64_t *out)
{
    if ((opt & TW_JR_NULLABLE) && tw_jr_null(r))
        return true;
    struct tw_jr_num n = {0};
    bool is_num = num_start(tw_jr_peek(r));
    if (is_num && !tw_jr_number(r, &n))
        return false;
    if (is_num && n.is_int && n.i >= lo && n.i <= hi) {
        *out = n.i;
        return true;
    }
    FIELD(f, path, key);
    char got[40] = "";
    if (is_num && n.is_int)
        snprintf(got, sizeof(got), ", got %lld", (long long)n.i);
    return tw_jr_fail(r, TW_EPARSE, "%s must be an integer from %lld to %lld%s%s", f,
                      (long long)lo, (long long)hi, opt & TW_JR_NULLABLE ? " or null" : "", got);
}

bool tw_jr_get_num(struct tw_jr *r, const char *path, const char *key, double lo, double hi,
                   double *out)
{
    struct tw_jr_num n = {.d = NAN};
    bool is_num = num_start(tw_jr_peek(r));
    if (is_num && !tw_jr_number(r, &n))
        return false;
    if (is_num && isfinite(n.d) && n.d >= lo && n.d <= hi) {
        *out = n.d;
        return true;
    }
    FIELD(f, path, key);
    if (isfinite(hi))
        return tw_jr_fail(r, TW_EPARSE, "%s must be a number from %g to %g", f, lo, hi);
    return tw_jr_fail(r, TW_EPARSE, "%s must be a finite number >= %g", f, lo);
}

bool tw_jr_get_bool(struct tw_jr *r, const char *path, const char *key, bool *out)
{
    char c = tw_jr_peek(r);
    if (c == 't' || c == 'f')
        return tw_jr_bool(r, out);
    FIELD(f, path, key);
    return tw_jr_fail(r, TW_EPARSE, "%s must be a boolean", f);
}

bool tw_jr_want(struct tw_jr *r, const char *path, const char *key, char open)
{
    if (tw_jr_peek(r) == open)
        return true;
    FIELD(f, path, key);
    return tw_jr_fail(r, TW_EPARSE, "%s must be %s", f, open == '[' ? "an array" : "an object");
}

bool tw_jr_need_all(struct tw_jr *r, const char *path, unsigned seen, const char *const *names,
                    int n)
{
    if (r->rc != TW_OK)
        return false;
    for (int i = 0; i < n; i++) {
        if (!(seen & (1u << i))) {
            FIELD(f, path, names[i]);
            return tw_jr_fail(r, TW_EPARSE, "%s is missing", f);
        }
    }
    return true;
}

int tw_jr_key_index(const char *key, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (key[0] == names[i][0] && strcmp(key, names[i]) == 0)
            return i;
    return -1;
}

/* ---- whole documents ---- */

enum tw_err tw_jr_read_doc(const char *buf, size_t len, const char *what, int max_depth,
                           bool (*read)(struct tw_jr *r, void *arg), void *arg,
                           struct tw_error *err)
{
    struct tw_jr r;
    tw_jr_init(&r, buf, len, what, TW_JR_STRICT, max_depth, err);
    if (read(&r, arg))
        tw_jr_finish(&r);
    tw_jr_done(&r);
    if (r.rc != TW_EPARSE || r.syntax)
        return r.rc;
    /* A wrong field may be refused before the end: broken JSON anywhere
     * is still reported as broken JSON. */
    struct tw_error verr = {0};
    struct tw_jr v;
    tw_jr_init(&v, buf, len, what, TW_JR_STRICT, max_depth, &verr);
    if (tw_jr_skip(&v))
        tw_jr_finish(&v);
    tw_jr_done(&v);
    if (v.rc == TW_OK)
        return r.rc;
    if (err)
        *err = verr;
    return v.rc;
}
