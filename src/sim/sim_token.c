/*
 * sim_token.c - tokens: the managed-identity endpoint of IMDS, the Entra ID
 * client-credentials endpoint, and ARM's bearer check.
 *
 * A token is JWT-shaped (header.payload.signature, base64url) so clients
 * that peek at "exp" work, but the simulator trusts only its own list of
 * issued tokens: anything else is "The access token is invalid.".  The
 * 401 bodies are ARM's real ones (codes AuthenticationFailed,
 * AuthenticationFailedInvalidHeader, InvalidAuthenticationToken,
 * ExpiredAuthenticationToken, InvalidAuthenticationTokenAudience, with
 * their texts as ARM sends them).
 */
#include "sim/sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The audiences ARM accepts (its InvalidAuthenticationTokenAudience
 * message lists them). */
static const char *const arm_audiences[] = {
    "https://management.core.windows.net/", "https://management.core.windows.net",
    "https://management.azure.com/", "https://management.azure.com"};

static size_t b64url(const unsigned char *in, size_t n, char *out, size_t outlen)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        size_t chars = i + 2 < n ? 4 : i + 1 < n ? 3 : 2;
        for (size_t k = 0; k < chars && o + 1 < outlen; k++)
            out[o++] = tbl[(v >> (18 - 6 * k)) & 63];
    }
    out[o] = '\0';
    return o;
}

/* Issues a token for RESOURCE valid LIFETIME_S from now into T. */
static const struct sim_token *issue(struct tw_sim *sim, const char *resource, long lifetime_s)
{
    struct sim_token *t = &sim->tokens[sim->next_token];
    int64_t now = sim_now_ms(sim);
    memset(t, 0, sizeof(*t));
    snprintf(t->resource, sizeof(t->resource), "%s", resource);
    t->expires_ms = now + (int64_t)lifetime_s * 1000;
    static const char header[] = "{\"typ\":\"JWT\",\"alg\":\"none\"}";
    json_t *pl = json_pack("{s:s, s:s, s:I, s:I}", "aud", t->resource, "iss",
                           "https://sts.windows.net/tierwise-azsim/", "nbf",
                           (json_int_t)(now / 1000), "exp", (json_int_t)(t->expires_ms / 1000));
    char *payload = pl ? json_dumps(pl, JSON_COMPACT) : NULL;
    json_decref(pl);
    char id[37];
    sim_uuid(id);
    size_t o = b64url((const unsigned char *)header, strlen(header), t->value, sizeof(t->value));
    t->value[o++] = '.';
    if (payload)
        o += b64url((const unsigned char *)payload, strlen(payload), t->value + o,
                    sizeof(t->value) - o);
    free(payload);
    snprintf(t->value + o, sizeof(t->value) - o, ".azsim-%s", id);
    sim->next_token = (sim->next_token + 1) % SIM_MAX_TOKENS;
    if (sim->n_tokens < SIM_MAX_TOKENS)
        sim->n_tokens++;
    return t;
}

void sim_token_msi(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!sim_imds_check(rq, rs, true))
        return;
    /* The error texts below are constructed in the documented
     * {"error", "error_description"} shape (imds.md 3). */
    const char *resource = sim_arg(rq, "resource");
    if (!sim_arg(rq, "api-version")) {
        sim_json(rs, 400,
                 json_pack("{s:s, s:s}", "error", "invalid_request", "error_description",
                           "Required query variable 'api-version' is missing"));
        return;
    }
    if (!resource || !*resource) {
        sim_json(rs, 400,
                 json_pack("{s:s, s:s}", "error", "invalid_request", "error_description",
                           "Required query variable 'resource' is missing"));
        return;
    }
    if (strlen(resource) >= sizeof(sim->tokens[0].resource)) {
        sim_json(rs, 400,
                 json_pack("{s:s, s:s}", "error", "invalid_resource", "error_description",
                           "AADSTS50001: The resource name is too long."));
        return;
    }
    long life = sim->sc->settings.token_lifetime_s;
    const struct sim_token *t = issue(sim, resource, life);
    char client_id[37], exp_in[24], exp_on[24], nbf[24];
    const char *cid = sim_arg(rq, "client_id");
    if (!cid) {
        /* The system-assigned identity: a stable id per VM. */
        snprintf(client_id, sizeof(client_id), "%s",
                 sim->sc->self >= 0 ? sim->sc->vms[sim->sc->self].vm_id
                                    : "11111111-2222-3333-4444-555555555555");
        cid = client_id;
    }
    snprintf(exp_in, sizeof(exp_in), "%ld", life);
    snprintf(exp_on, sizeof(exp_on), "%lld", (long long)(t->expires_ms / 1000));
    snprintf(nbf, sizeof(nbf), "%lld", (long long)((t->expires_ms / 1000) - life));
    /* imds-token-sample.json "constructed_arm": every number a string. */
    sim_json(rs, 200,
             json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "access_token", t->value,
                       "client_id", cid, "expires_in", exp_in, "expires_on", exp_on,
                       "ext_expires_in", exp_in, "not_before", nbf, "resource", resource,
                       "token_type", "Bearer"));
}

/* ---- Entra ID client credentials (POST /{tenant}/oauth2/v2.0/token) ---- */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The value of KEY in an application/x-www-form-urlencoded BODY, decoded
 * into OUT; false when absent or too long. */
static bool form_value(const char *body, const char *key, char *out, size_t outlen)
{
    size_t kl = strlen(key);
    const char *p = body;
    while (p && *p) {
        if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
            p += kl + 1;
            size_t o = 0;
            while (*p && *p != '&') {
                char c = *p++;
                if (c == '+') {
                    c = ' ';
                } else if (c == '%' && hexval(p[0]) >= 0 && hexval(p[1]) >= 0) {
                    c = (char)(hexval(p[0]) * 16 + hexval(p[1]));
                    p += 2;
                }
                if (o + 1 >= outlen)
                    return false;
                out[o++] = c;
            }
            out[o] = '\0';
            return true;
        }
        p = strchr(p, '&');
        if (p)
            p++;
    }
    return false;
}

/* The Microsoft identity platform's error shape: error, error_description
 * ("AADSTSnnn: text" plus trace lines), error_codes, timestamp, trace_id,
 * correlation_id. */
static void login_error(struct tw_sim *sim, struct sim_resp *rs, unsigned status, const char *error,
                        long code, const char *text)
{
    char trace[37], corr[37], ts[40], desc[1024];
    sim_uuid(trace);
    sim_uuid(corr);
    int64_t now = sim_now_ms(sim);
    time_t t = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02d %02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    snprintf(desc, sizeof(desc),
             "AADSTS%ld: %s\r\nTrace ID: %s\r\nCorrelation ID: %s\r\n"
             "Timestamp: %s",
             code, text, trace, corr, ts);
    sim_json(rs, status,
             json_pack("{s:s, s:s, s:[I], s:s, s:s, s:s}", "error", error, "error_description",
                       desc, "error_codes", (json_int_t)code, "timestamp", ts, "trace_id", trace,
                       "correlation_id", corr));
}

void sim_token_login(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    char grant[64], client_id[256], secret[256], scope[512], msg[600];
    const char *tenant = rq->params[0];
    static const char *const required[] = {"grant_type", "client_id", "client_secret", "scope"};
    char *const dst[] = {grant, client_id, secret, scope};
    const size_t len[] = {sizeof(grant), sizeof(client_id), sizeof(secret), sizeof(scope)};
    for (size_t i = 0; i < 4; i++) {
        if (!form_value(rq->body, required[i], dst[i], len[i]) || !dst[i][0]) {
            snprintf(msg, sizeof(msg),
                     "The request body must contain the following parameter: "
                     "'%s'.",
                     required[i]);
            login_error(sim, rs, 400, "invalid_request", 900144, msg);
            return;
        }
    }
    if (strcmp(grant, "client_credentials") != 0) {
        snprintf(msg, sizeof(msg), "The app requested an unsupported grant type '%.60s'.", grant);
        login_error(sim, rs, 400, "unsupported_grant_type", 70003, msg);
        return;
    }
    size_t sl = strlen(scope);
    if (sl < 9 || strcmp(scope + sl - 8, ".default") != 0 ||
        sl - 8 >= sizeof(sim->tokens[0].resource)) {
        login_error(sim, rs, 400, "invalid_scope", 70011,
                    "The provided value for the input parameter 'scope' is not valid. The scope "
                    "must be a resource followed by /.default for the client credentials flow.");
        return;
    }
    const json_t *principals = sim->sc->principals;
    if (json_array_size(principals) > 0) {
        const json_t *match = NULL;
        size_t i;
        const json_t *p;
        json_array_foreach(principals, i, p)
        {
            const char *t = json_string_value(json_object_get(p, "tenant_id"));
            if (strcmp(json_string_value(json_object_get(p, "client_id")), client_id) == 0 &&
                (!t || strcasecmp(t, tenant) == 0))
                match = p;
        }
        if (!match) {
            snprintf(msg, sizeof(msg),
                     "Application with identifier '%.100s' was not found in "
                     "the directory '%.100s'. This can happen if the application has not been "
                     "installed by the administrator of the tenant or consented to by any user "
                     "in the tenant. You may have sent your authentication request to the wrong "
                     "tenant.",
                     client_id, tenant);
            login_error(sim, rs, 400, "unauthorized_client", 700016, msg);
            return;
        }
        if (strcmp(json_string_value(json_object_get(match, "client_secret")), secret) != 0) {
            snprintf(msg, sizeof(msg),
                     "Invalid client secret provided. Ensure the secret being "
                     "sent in the request is the client secret value, not the client secret ID, "
                     "for a secret added to app '%.100s'.",
                     client_id);
            login_error(sim, rs, 401, "invalid_client", 7000215, msg);
            return;
        }
    }
    scope[sl - 8] = '\0'; /* "https://management.azure.com/.default" -> the resource */
    long life = sim->sc->settings.token_lifetime_s;
    const struct sim_token *t = issue(sim, scope, life);
    /* v2.0 endpoint: numbers are numbers here, unlike IMDS. */
    sim_json(rs, 200,
             json_pack("{s:s, s:I, s:I, s:s}", "token_type", "Bearer", "expires_in",
                       (json_int_t)life, "ext_expires_in", (json_int_t)life, "access_token",
                       t->value));
}

/* ---- ARM's check ---- */

/* .NET's invariant format, as ARM writes times in this message:
 * "6/15/2026 8:22:51 AM". */
static void dotnet_time(int64_t ms, char *out, size_t n)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    int h = tm.tm_hour % 12;
    snprintf(out, n, "%d/%d/%d %d:%02d:%02d %s", tm.tm_mon + 1, tm.tm_mday, tm.tm_year + 1900,
             h ? h : 12, tm.tm_min, tm.tm_sec, tm.tm_hour < 12 ? "AM" : "PM");
}

bool sim_token_check(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    const char *auth = sim_hdr(rq, "Authorization");
    if (!auth) {
        sim_header(
            rs, "WWW-Authenticate",
            "Bearer authorization_uri=\"https://login.windows.net/\", error=\"invalid_token\", "
            "error_description=\"The authentication failed because of missing "
            "'Authorization' header.\"");
        sim_arm_error(rs, 401, "AuthenticationFailed", NULL,
                      "Authentication failed. The 'Authorization' header is missing.");
        return false;
    }
    if (strncasecmp(auth, "Bearer ", 7) != 0 || !auth[7]) {
        sim_arm_error(rs, 401, "AuthenticationFailedInvalidHeader", NULL,
                      "Authentication failed. The 'Authorization' header is provided in an "
                      "invalid format.");
        return false;
    }
    const char *tok = auth + 7;
    const struct sim_token *t = NULL;
    for (size_t i = 0; i < sim->n_tokens && !t; i++) {
        if (strcmp(sim->tokens[i].value, tok) == 0)
            t = &sim->tokens[i];
    }
    if (!t) {
        sim_header(
            rs, "WWW-Authenticate",
            "Bearer authorization_uri=\"https://login.windows.net/\", error=\"invalid_token\", "
            "error_description=\"The access token is invalid.\"");
        sim_arm_error(rs, 401, "InvalidAuthenticationToken", NULL, "The access token is invalid.");
        return false;
    }
    int64_t now = sim_now_ms(sim);
    if (t->expires_ms <= now) {
        char a[48], b[48];
        dotnet_time(t->expires_ms, a, sizeof(a));
        dotnet_time(now, b, sizeof(b));
        sim_arm_error(rs, 401, "ExpiredAuthenticationToken", NULL,
                      "The access token expiry UTC time '%s' is earlier than current UTC time "
                      "'%s'.",
                      a, b);
        return false;
    }
    for (size_t i = 0; i < sizeof(arm_audiences) / sizeof(arm_audiences[0]); i++) {
        if (strcmp(t->resource, arm_audiences[i]) == 0)
            return true;
    }
    sim_arm_error(rs, 401, "InvalidAuthenticationTokenAudience", NULL,
                  "The access token has been obtained for wrong audience or resource '%s'. It "
                  "should exactly match with one of the allowed audiences "
                  "'https://management.core.windows.net/','https://management.core.windows.net',"
                  "'https://management.azure.com/','https://management.azure.com'.",
                  t->resource);
    return false;
}
