/*
 * simtest.h - what the simulator's tests share: starting a simulator
 * in-process on 127.0.0.1 port 0 from the example scenario (with settings
 * changed per test), and a small libcurl client that keeps the status,
 * the headers and the body of each answer.
 *
 * Header-only (static functions): each test program includes it once.
 */
#ifndef TW_SIMTEST_H
#define TW_SIMTEST_H

#include "testhelp.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sim/sim.h"

#define ST_SUB "00000000-1111-2222-3333-444444444444"
#define ST_RG "/subscriptions/" ST_SUB "/resourceGroups/rg-advisor-test"
#define ST_DISKS ST_RG "/providers/Microsoft.Compute/disks/"
#define ST_VMS ST_RG "/providers/Microsoft.Compute/virtualMachines/"
#define ST_ARM_ID "https://management.azure.com/"

struct st_resp {
    long status;
    CURLcode rc; /* CURLE_OK unless the transfer failed (a dropped connection) */
    char *body;  /* NUL-terminated, "" when empty */
    size_t len;
    char headers[8192]; /* raw response header lines */
    json_t *json;       /* the body parsed, NULL when it is not JSON */
};

static inline size_t st_write(char *p, size_t size, size_t n, void *ud)
{
    struct st_resp *r = ud;
    size_t add = size * n;
    char *b = realloc(r->body, r->len + add + 1);
    assert_non_null(b);
    memcpy(b + r->len, p, add);
    r->len += add;
    b[r->len] = '\0';
    r->body = b;
    return add;
}

static inline size_t st_header(char *p, size_t size, size_t n, void *ud)
{
    struct st_resp *r = ud;
    size_t add = size * n, have = strlen(r->headers);
    if (have + add + 1 < sizeof(r->headers)) {
        memcpy(r->headers + have, p, add);
        r->headers[have + add] = '\0';
    }
    return add;
}

/* A response header's value (into a static buffer), NULL when absent. */
static inline const char *st_hdr(const struct st_resp *r, const char *name)
{
    static char val[2048];
    size_t nl = strlen(name);
    for (const char *line = r->headers; line && *line;) {
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ')
                v++;
            size_t l = strcspn(v, "\r\n");
            if (l >= sizeof(val))
                l = sizeof(val) - 1;
            memcpy(val, v, l);
            val[l] = '\0';
            return val;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return NULL;
}

static inline void st_free(struct st_resp *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

/*
 * METHOD URL with BODY (NULL for none) and the request header lines in
 * HEADERS (NULL-terminated, may be NULL).  URL may be a path: it is then
 * put after the simulator's base URL.  Fills *R (free with st_free).
 */
static inline void st_request(struct tw_sim *sim, struct st_resp *r, const char *method,
                              const char *url, const char *const *headers, const char *body)
{
    memset(r, 0, sizeof(*r));
    char full[4096];
    if (url[0] == '/')
        snprintf(full, sizeof(full), "%s%s", tw_sim_url(sim), url);
    else
        snprintf(full, sizeof(full), "%s", url);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    struct curl_slist *hl = NULL;
    bool typed = false;
    for (size_t i = 0; headers && headers[i]; i++) {
        hl = curl_slist_append(hl, headers[i]);
        typed = typed || strncasecmp(headers[i], "Content-Type:", 13) == 0;
    }
    if (body && !typed)
        hl = curl_slist_append(hl, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, full);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, st_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, st_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    r->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    curl_slist_free_all(hl);
    if (!r->body)
        r->body = strdup("");
    r->json = json_loadb(r->body, r->len, 0, NULL);
}

/* GET with the IMDS header. */
static inline void st_imds(struct tw_sim *sim, struct st_resp *r, const char *path)
{
    static const char *const h[] = {"Metadata: true", NULL};
    st_request(sim, r, "GET", path, h, NULL);
}

/* A managed-identity token for ARM (caller frees). */
static inline char *st_token(struct tw_sim *sim)
{
    struct st_resp r;
    st_imds(sim, &r,
            "/metadata/identity/oauth2/token?api-version=2018-02-01&"
            "resource=https://management.azure.com/");
    assert_int_equal(r.status, 200);
    char *t = strdup(json_string_value(json_object_get(r.json, "access_token")));
    st_free(&r);
    return t;
}

/* METHOD PATH on ARM with TOKEN as bearer. */
static inline void st_arm(struct tw_sim *sim, struct st_resp *r, const char *token,
                          const char *method, const char *path, const char *body)
{
    char auth[1024];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    const char *const h[] = {auth, NULL};
    st_request(sim, r, method, path, h, body);
}

/* The example scenario with SETTINGS (a JSON object, may be NULL) merged
 * into its settings and EDIT (may be NULL) applied to the whole document. */
static inline struct tw_sim_scenario *st_scenario(const char *settings, void (*edit)(json_t *root))
{
    size_t len;
    char *text = th_fixture("sim/scenario-basic.json", &len);
    json_t *root = json_loadb(text, len, 0, NULL);
    free(text);
    assert_non_null(root);
    if (settings) {
        json_t *s = json_loads(settings, 0, NULL);
        assert_non_null(s);
        json_object_update(json_object_get(root, "settings"), s);
        json_decref(s);
    }
    if (edit)
        edit(root);
    char *out = json_dumps(root, 0);
    json_decref(root);
    struct tw_sim_scenario *sc;
    struct tw_error err = {0};
    if (tw_sim_scenario_parse(out, strlen(out), &sc, &err) != TW_OK)
        fail_msg("example scenario: %s", err.msg);
    free(out);
    return sc;
}

/* A simulator on 127.0.0.1, port 0, serving the example scenario. */
static inline struct tw_sim *st_start(const char *settings, void (*edit)(json_t *root))
{
    struct tw_sim *sim;
    struct tw_error err = {0};
    if (tw_sim_start(st_scenario(settings, edit), NULL, &sim, &err) != TW_OK)
        fail_msg("tw_sim_start: %s", err.msg);
    assert_true(tw_sim_port(sim) > 0);
    return sim;
}

static inline void st_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline int st_setup(void **state)
{
    (void)state;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return 0;
}

static inline int st_teardown(void **state)
{
    (void)state;
    curl_global_cleanup();
    return 0;
}

#endif
