/*
 * sim_odata.c - the Retail Prices $filter subset: a recursive-descent
 * parser (or-expression of and-expressions of comparisons) and a matcher.
 */
#include "sim/sim_odata.h"

#include <string.h>
#include <strings.h>

/* Filter names (case-insensitive) and the item keys they read: the API's
 * filter name for the item's "type" is priceType. */
static const struct {
    const char *filter;
    const char *key;
} fields[] = {
    {"armRegionName", "armRegionName"},
    {"Location", "location"},
    {"meterId", "meterId"},
    {"meterName", "meterName"},
    {"productid", "productId"},
    {"skuId", "skuId"},
    {"productName", "productName"},
    {"skuName", "skuName"},
    {"serviceName", "serviceName"},
    {"serviceId", "serviceId"},
    {"serviceFamily", "serviceFamily"},
    {"priceType", "type"},
    {"armSkuName", "armSkuName"},
    {"currencyCode", "currencyCode"},
};
#define N_FIELDS ((int)(sizeof(fields) / sizeof(fields[0])))
#define PRICE_TYPE 11

/* priceType values the API accepts; SavingsPlan is accepted and matches
 * nothing (a capture answered Count 0). */
static const char *const price_types[] = {"Consumption", "Reservation", "DevTestConsumption",
                                          "SavingsPlan"};

const char *tw_odata_field_key(int field)
{
    return field >= 0 && field < N_FIELDS ? fields[field].key : "";
}

enum tok { T_END, T_IDENT, T_STRING, T_LPAREN, T_RPAREN, T_COMMA, T_BAD };

struct lexer {
    const char *s;
    size_t len, pos;
    enum tok tok;
    size_t start;                  /* offset of the current token */
    char text[TW_ODATA_MAX_VALUE]; /* identifier or unquoted string */
    bool too_long;
    struct tw_odata_filter *f;
    struct tw_error *err;
    int depth;
};

static void next(struct lexer *lx)
{
    while (lx->pos < lx->len && (lx->s[lx->pos] == ' ' || lx->s[lx->pos] == '\t'))
        lx->pos++;
    lx->start = lx->pos;
    lx->text[0] = '\0';
    if (lx->pos >= lx->len) {
        lx->tok = T_END;
        return;
    }
    char c = lx->s[lx->pos];
    if (c == '(' || c == ')' || c == ',') {
        lx->pos++;
        lx->tok = c == '(' ? T_LPAREN : c == ')' ? T_RPAREN : T_COMMA;
        return;
    }
    size_t n = 0;
    if (c == '\'') {
        /* OData strings double a quote to escape it: 'it''s'. */
        lx->pos++;
        for (;;) {
            if (lx->pos >= lx->len) {
                lx->tok = T_BAD;
                return;
            }
            c = lx->s[lx->pos++];
            if (c == '\'') {
                if (lx->pos < lx->len && lx->s[lx->pos] == '\'')
                    lx->pos++;
                else
                    break;
            }
            if (c == '\0') {
                lx->tok = T_BAD;
                return;
            }
            if (n + 1 >= sizeof(lx->text)) {
                lx->too_long = true;
                lx->tok = T_BAD;
                return;
            }
            lx->text[n++] = c;
        }
        lx->text[n] = '\0';
        lx->tok = T_STRING;
        return;
    }
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_') {
        while (lx->pos < lx->len) {
            c = lx->s[lx->pos];
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_'))
                break;
            if (n + 1 >= sizeof(lx->text)) {
                lx->too_long = true;
                lx->tok = T_BAD;
                return;
            }
            lx->text[n++] = c;
            lx->pos++;
        }
        lx->text[n] = '\0';
        lx->tok = T_IDENT;
        return;
    }
    lx->tok = T_BAD;
}

static int fail(struct lexer *lx, const char *what)
{
    tw_error_set_at(lx->err, TW_EPARSE, 1, (long)lx->start + 1, "$filter: %s at offset %zu%s", what,
                    lx->start, lx->too_long ? " (a name or value is too long)" : "");
    return -1;
}

static int new_node(struct lexer *lx)
{
    if (lx->f->n >= TW_ODATA_MAX_NODES)
        return fail(lx, "too many conditions");
    struct tw_odata_node *nd = &lx->f->nodes[lx->f->n];
    memset(nd, 0, sizeof(*nd));
    nd->left = nd->right = -1;
    return (int)lx->f->n++;
}

static int find_field(const char *name)
{
    for (int i = 0; i < N_FIELDS; i++) {
        if (strcasecmp(name, fields[i].filter) == 0)
            return i;
    }
    return -1;
}

static bool same(const struct tw_odata_filter *f, const char *a, const char *b)
{
    return f->case_sensitive ? strcmp(a, b) == 0 : strcasecmp(a, b) == 0;
}

static int parse_or(struct lexer *lx);

/* comparison := field 'eq' string | func '(' field ',' string ')' | '(' or ')' */
static int parse_primary(struct lexer *lx)
{
    if (lx->tok == T_LPAREN) {
        if (++lx->depth > TW_ODATA_MAX_DEPTH)
            return fail(lx, "parentheses nested too deep");
        next(lx);
        int e = parse_or(lx);
        if (e < 0)
            return -1;
        if (lx->tok != T_RPAREN)
            return fail(lx, "expected )");
        lx->depth--;
        next(lx);
        return e;
    }
    if (lx->tok != T_IDENT)
        return fail(lx, "expected a field name, a function or (");
    enum tw_odata_op op = TW_ODATA_EQ;
    bool func = true;
    if (strcmp(lx->text, "contains") == 0)
        op = TW_ODATA_CONTAINS;
    else if (strcmp(lx->text, "startswith") == 0)
        op = TW_ODATA_STARTSWITH;
    else if (strcmp(lx->text, "endswith") == 0)
        op = TW_ODATA_ENDSWITH;
    else
        func = false;
    if (func) {
        next(lx);
        if (lx->tok != T_LPAREN)
            return fail(lx, "expected ( after the function name");
        next(lx);
        if (lx->tok != T_IDENT)
            return fail(lx, "expected a field name");
    }
    int field = find_field(lx->text);
    if (field < 0)
        return fail(lx, "unknown or unsupported field");
    next(lx);
    if (func) {
        if (lx->tok != T_COMMA)
            return fail(lx, "expected ,");
    } else if (lx->tok != T_IDENT || strcmp(lx->text, "eq") != 0) {
        return fail(lx, "expected eq (the only comparison the API supports)");
    }
    next(lx);
    if (lx->tok != T_STRING)
        return fail(lx, "expected a quoted value like 'eastus'");
    int id = new_node(lx);
    if (id < 0)
        return -1;
    struct tw_odata_node *nd = &lx->f->nodes[id];
    nd->op = op;
    nd->field = field;
    memcpy(nd->value, lx->text, sizeof(nd->value));
    if (field == PRICE_TYPE && op == TW_ODATA_EQ) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(price_types) / sizeof(price_types[0]) && !ok; i++)
            ok = same(lx->f, nd->value, price_types[i]);
        if (!ok)
            return fail(lx, "priceType is not Consumption, Reservation, DevTestConsumption "
                            "or SavingsPlan");
    }
    next(lx);
    if (func) {
        if (lx->tok != T_RPAREN)
            return fail(lx, "expected )");
        next(lx);
    }
    return id;
}

static int parse_binary(struct lexer *lx, const char *word, enum tw_odata_op op,
                        int (*operand)(struct lexer *))
{
    int left = operand(lx);
    while (left >= 0 && lx->tok == T_IDENT && strcmp(lx->text, word) == 0) {
        next(lx);
        int right = operand(lx);
        if (right < 0)
            return -1;
        int id = new_node(lx);
        if (id < 0)
            return -1;
        lx->f->nodes[id].op = op;
        lx->f->nodes[id].left = left;
        lx->f->nodes[id].right = right;
        left = id;
    }
    return left;
}

static int parse_and(struct lexer *lx)
{
    return parse_binary(lx, "and", TW_ODATA_AND, parse_primary);
}

static int parse_or(struct lexer *lx)
{
    return parse_binary(lx, "or", TW_ODATA_OR, parse_and);
}

enum tw_err tw_odata_parse(const char *s, size_t len, bool case_sensitive,
                           struct tw_odata_filter *f, struct tw_error *err)
{
    f->n = 0;
    f->root = -1;
    f->case_sensitive = case_sensitive;
    struct lexer lx = {.s = s, .len = len, .f = f, .err = err};
    next(&lx);
    if (lx.tok == T_END)
        return TW_OK;
    int root = parse_or(&lx);
    if (root < 0)
        return TW_EPARSE;
    if (lx.tok != T_END) {
        fail(&lx, "expected and, or, or the end of the filter");
        return TW_EPARSE;
    }
    f->root = root;
    return TW_OK;
}

static bool contains(const char *hay, const char *needle, bool cs)
{
    return cs ? strstr(hay, needle) != NULL : strcasestr(hay, needle) != NULL;
}

static bool node_match(const struct tw_odata_filter *f, int id, const void *item,
                       tw_odata_get_fn get)
{
    const struct tw_odata_node *nd = &f->nodes[id];
    if (nd->op == TW_ODATA_AND)
        return node_match(f, nd->left, item, get) && node_match(f, nd->right, item, get);
    if (nd->op == TW_ODATA_OR)
        return node_match(f, nd->left, item, get) || node_match(f, nd->right, item, get);
    const char *v = get(item, fields[nd->field].key);
    if (!v)
        return false;
    size_t lv = strlen(v), ln = strlen(nd->value);
    switch (nd->op) {
    case TW_ODATA_EQ: return same(f, v, nd->value);
    case TW_ODATA_CONTAINS: return contains(v, nd->value, f->case_sensitive);
    case TW_ODATA_STARTSWITH:
        return lv >= ln && (f->case_sensitive ? strncmp(v, nd->value, ln) == 0
                                              : strncasecmp(v, nd->value, ln) == 0);
    case TW_ODATA_ENDSWITH: return lv >= ln && same(f, v + lv - ln, nd->value);
    default: return false;
    }
}

bool tw_odata_match(const struct tw_odata_filter *f, const void *item, tw_odata_get_fn get)
{
    return f->root < 0 || node_match(f, f->root, item, get);
}
