/*
 * run_deliver.c - delivery: posting the spool's reports to the backend,
 * oldest first, and what a drain's end means for the exit status.
 *
 * A report leaves the spool only when the server says it is stored (or
 * was stored before: the server knows reports by their UUID, so sending
 * one twice after a lost answer is harmless).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "agent/run_int.h"

/* Keeps the more important of two exit statuses (see usage). */
int run_worse(int a, int b)
{
    static const int order[] = {TW_EXIT_INTERRUPTED, TW_EXIT_USAGE, EXIT_REFUSED,
                                EXIT_SPOOL_FULL, EXIT_REJECTED, TW_AGENT_EXIT_OFF_AZURE,
                                TW_EXIT_FAIL, EXIT_SPOOLED};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (a == order[i] || b == order[i])
            return order[i];
    return a ? a : b;
}

/* Reads the token (tw_app_read_token: a file only its owner may read, like
 * ssh's private keys, since the token lets anyone post in this VM's name). */
int run_read_token(const char *path, const char *from, char *tok, size_t toklen)
{
    struct tw_error err = {0};
    enum tw_err rc = tw_app_read_token(path, tok, toklen, &err);
    if (rc == TW_OK)
        return TW_EXIT_OK;
    if (from && strcmp(from, "--token-file") != 0)
        say("%s (the token file given by %s)", err.msg, from);
    else
        say("%s", err.msg);
    return rc == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
}

/* Posts one report; fills HOW ("stored", "already stored") on 2xx. */
static enum drain_end post(struct tw_az_http *http, const char *url, const char *token,
                           const struct tw_spool_entry *e, long *status, char *msg,
                           size_t msglen, char *how, size_t howlen)
{
    char auth[TOKEN_MAX + 32];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    const char *headers[] = {auth, "Content-Type: application/json",
                             "Accept: application/json", NULL};
    struct tw_az_http_resp resp;
    struct tw_error err = {0};
    enum tw_err rc = tw_az_http_request(http, "POST", url, headers, e->body, e->len, &resp, &err);
    memset(auth, 0, sizeof(auth));
    *status = resp.status;
    snprintf(msg, msglen, "%s", err.msg);
    enum drain_end end = DRAIN_EMPTY;
    if (rc == TW_OK || (resp.status >= 200 && resp.status <= 299)) {
        /* Delivered only when the backend says so of this report: 201
         * "stored" or 200 "already stored", naming its id.  Any other 2xx
         * (a proxy's page, another service at that URL, an answer about
         * another report) did not store this one: it stays, as for a wrong
         * URL. */
        json_t *j = json_loadb(resp.body.data ? resp.body.data : "", resp.body.len, 0, NULL);
        const char *s = json_string_value(json_object_get(j, "status"));
        const char *id = json_string_value(json_object_get(j, "id"));
        bool said = s && ((resp.status == 201 && strcmp(s, "stored") == 0) ||
                          (resp.status == 200 && strcmp(s, "already stored") == 0));
        if (said && id && strcmp(id, e->id) == 0) {
            snprintf(how, howlen, "%s", s);
        } else if (said) {
            snprintf(msg, msglen,
                     "POST %.300s answered %ld \"%s\" for report %.40s, not for report %.40s "
                     "that was sent (a proxy or cache in between?)",
                     url, resp.status, s, id ? id : "(no id)", e->id);
            end = DRAIN_REFUSED;
        } else {
            snprintf(msg, msglen,
                     "POST %.300s answered %ld without confirming that report %.40s is stored "
                     "(not a tierwise backend?)",
                     url, resp.status, e->id);
            end = DRAIN_REFUSED;
        }
        json_decref(j);
    } else if (resp.net == TW_AZ_NET_BLOCKED) {
        end = DRAIN_REFUSED;
    } else if (resp.status == 0 || resp.status == 408 || resp.status == 429 ||
               resp.status >= 500) {
        end = DRAIN_DOWN;
    } else if ((resp.status >= 300 && resp.status <= 399) || resp.status == 401 ||
               resp.status == 403 || resp.status == 404 || resp.status == 405) {
        /* A redirect (http to https, say), a wrong path or token: the
         * configuration is wrong, not the report. */
        end = DRAIN_REFUSED;
    } else {
        end = DRAIN_REJECTED;
    }
    tw_az_http_resp_cleanup(&resp);
    return end;
}

/* Sends the spool's pending reports, oldest first, until it is empty or
 * the backend fails; a report the server calls bad is set aside. */
enum drain_end run_drain(const struct run_cfg *c, struct tw_spool *sp, struct tw_az_http *http,
                         struct drain_sum *sum)
{
    char token[TOKEN_MAX];
    /* Read each time, so a new token is taken without a restart. */
    if (run_read_token(c->token_file, c->token_from, token, sizeof(token)) != TW_EXIT_OK)
        return DRAIN_REFUSED;
    enum drain_end end = DRAIN_EMPTY;
    for (;;) {
        if (run_stop) {
            end = DRAIN_STOPPED;
            break;
        }
        struct tw_spool_entry e;
        struct tw_error err = {0};
        enum tw_err rc = tw_spool_oldest(sp, &e, &err);
        if (rc == TW_ENOENT)
            break;
        if (rc != TW_OK) {
            say("%s", err.msg);
            end = DRAIN_FAILED;
            break;
        }
        long status = 0;
        char msg[512], how[64] = "";
        enum drain_end one =
            post(http, c->url, token, &e, &status, msg, sizeof(msg), how, sizeof(how));
        if (one == DRAIN_EMPTY) {
            rc = tw_spool_delivered(sp, e.seq, &err);
            if (strcmp(how, "already stored") == 0)
                sum->repeated++;
            else
                sum->delivered++;
            tw_app_note(TW_AGENT_PROG, "report %s delivered (%s)", e.id, how);
        } else if (one == DRAIN_REJECTED) {
            rc = tw_spool_reject(sp, e.seq, status, msg, &err);
            sum->rejected++;
            say("the server rejected report %s as bad (%s); it is set aside in the spool %s "
                "(--spool-list shows it, --spool-retry-rejected queues it again)",
                e.id, msg, c->spool_path);
        } else {
            rc = tw_spool_failed(sp, e.seq, status, msg, &err);
            snprintf(sum->last_error, sizeof(sum->last_error), "%s", msg);
            end = one;
        }
        tw_spool_entry_cleanup(&e);
        if (rc != TW_OK) {
            say("%s", err.msg);
            end = DRAIN_FAILED;
        }
        if (end != DRAIN_EMPTY)
            break;
    }
    memset(token, 0, sizeof(token));
    return end;
}

/* What a drain's end means for the exit status, said once. */
int run_drain_status(const struct run_cfg *c, struct tw_spool *sp, enum drain_end end,
                     const struct drain_sum *sum)
{
    struct tw_spool_stats st = {0};
    struct tw_error err = {0};
    (void)tw_spool_stats(sp, &st, &err);
    int status = sum->rejected ? EXIT_REJECTED : TW_EXIT_OK;
    switch (end) {
    case DRAIN_EMPTY: break;
    case DRAIN_DOWN:
        fprintf(stderr,
                "%s: the backend can't take reports now (%s); %lld report(s) kept in the "
                "spool %s for later\n",
                TW_AGENT_PROG, sum->last_error, (long long)st.pending, c->spool_path);
        break;
    case DRAIN_REFUSED:
        if (sum->last_error[0])
            say("the server refused the agent (%s): check --server and the token in %s "
                "(tierwise token create --role agent); %lld report(s) stay in the spool %s",
                sum->last_error, c->token_file, (long long)st.pending, c->spool_path);
        status = run_worse(status, EXIT_REFUSED);
        break;
    case DRAIN_FAILED: status = run_worse(status, TW_EXIT_FAIL); break;
    case DRAIN_STOPPED: status = run_worse(status, TW_EXIT_INTERRUPTED); break;
    case DRAIN_REJECTED: break;
    }
    return status;
}
