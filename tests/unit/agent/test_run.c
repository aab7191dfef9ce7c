/* test_run.c - tierwise-agent run against a stand-in backend in this
 * process (libmicrohttpd on 127.0.0.1, port 0) that stores reports by id
 * as tierwise serve does: delivery, the spool while the backend is down
 * and its drain (oldest first, each report once), a lost answer, a
 * rejected report, a refused token, the bound, and the daemon loop. */
#include "testhelp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "agent/agent.h"
#include "agent/spool.h"

#define MAX_IDS 64

/* ---- the stand-in backend ---- */

struct srv {
    struct MHD_Daemon *d;
    char base[64];
    pthread_mutex_t mu;
    /* Answers for the next requests (0 = behave normally); -1 drops the
     * connection after storing the report (the answer is lost). */
    int script[16];
    int n_script, next;
    char received[MAX_IDS][40]; /* ids in the order they arrived */
    int n_received;
    char stored[MAX_IDS][40];   /* ids stored once */
    int n_stored;
    char auth[256], ctype[128];
};

struct req {
    char *body;
    size_t len;
};

static bool stored_has(struct srv *s, const char *id)
{
    for (int i = 0; i < s->n_stored; i++)
        if (strcmp(s->stored[i], id) == 0)
            return true;
    return false;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    struct srv *s = cls;
    (void)version;
    struct req *rq = *con_cls;
    if (!rq) {
        *con_cls = rq = calloc(1, sizeof(*rq));
        return rq ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        char *nb = realloc(rq->body, rq->len + *upload_size + 1);
        if (!nb)
            return MHD_NO;
        rq->body = nb;
        memcpy(rq->body + rq->len, upload, *upload_size);
        rq->len += *upload_size;
        rq->body[rq->len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "POST") != 0 || strcmp(url, "/api/v1/reports") != 0)
        return reply(c, 404, "{\"error\":{\"code\":\"not_found\",\"message\":\"no route\"}}");
    json_t *j = json_loadb(rq->body ? rq->body : "", rq->len, 0, NULL);
    const char *id = json_string_value(json_object_get(j, "id"));
    char idc[40];
    snprintf(idc, sizeof(idc), "%s", id ? id : "");
    json_decref(j);

    pthread_mutex_lock(&s->mu);
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    snprintf(s->auth, sizeof(s->auth), "%s", a ? a : "");
    snprintf(s->ctype, sizeof(s->ctype), "%s", t ? t : "");
    int act = s->next < s->n_script ? s->script[s->next] : 0;
    s->next++;
    if (s->n_received < MAX_IDS)
        snprintf(s->received[s->n_received++], 40, "%s", idc);
    bool repeat = stored_has(s, idc);
    if ((act == 0 || act == -1) && !repeat && s->n_stored < MAX_IDS && idc[0])
        snprintf(s->stored[s->n_stored++], 40, "%s", idc);
    pthread_mutex_unlock(&s->mu);

    if (!idc[0])
        return reply(c, 400, "{\"error\":{\"code\":\"bad_report\",\"message\":\"no id\"}}");
    if (act == -1)
        return MHD_NO; /* stored, but the answer never leaves */
    if (act == 401)
        return reply(c, 401, "{\"error\":{\"code\":\"unauthorized\",\"message\":\"bad token\"}}");
    if (act == 299) /* another service at that URL: a 200 that stores nothing */
        return reply(c, 200, "<html><body>Welcome</body></html>");
    if (act == 298) /* "stored", but of another report (a confused proxy or cache) */
        return reply(c, 201, "{\"id\":\"00000000-0000-4000-8000-000000000000\","
                             "\"status\":\"stored\"}");
    if (act == 297) /* "stored" without saying which report */
        return reply(c, 201, "{\"status\":\"stored\"}");
    if (act == 422)
        return reply(c, 422, "{\"error\":{\"code\":\"bad_report\",\"message\":\"results[0]: "
                             "expected an object\"}}");
    if (act)
        return reply(c, (unsigned)act, "{\"error\":{\"code\":\"busy\",\"message\":\"later\"}}");
    char ans[128];
    snprintf(ans, sizeof(ans), "{\"id\":\"%s\",\"status\":\"%s\"}", idc,
             repeat ? "already stored" : "stored");
    return reply(c, repeat ? 200 : 201, ans);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct req *rq = *con_cls;
    if (rq)
        free(rq->body);
    free(rq);
    *con_cls = NULL;
}

static struct srv *srv_start(void)
{
    struct srv *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    pthread_mutex_init(&s->mu, NULL);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                            NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    assert_non_null(s->d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", (unsigned)info->port);
    return s;
}

static void srv_script(struct srv *s, const int *acts, int n)
{
    pthread_mutex_lock(&s->mu);
    memcpy(s->script, acts, (size_t)n * sizeof(int));
    s->n_script = n;
    s->next = 0;
    pthread_mutex_unlock(&s->mu);
}

static void srv_stop(struct srv *s)
{
    MHD_stop_daemon(s->d);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- fixture ---- */

struct fx {
    char *dir;
    char inv[4200], token[4200], spool[4200];
    struct srv *srv;
};

static void put_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    snprintf(f->inv, sizeof(f->inv), "%s/inv.json", f->dir);
    snprintf(f->token, sizeof(f->token), "%s/token", f->dir);
    snprintf(f->spool, sizeof(f->spool), "%s/spool.db", f->dir);
    put_file(f->inv,
             "{\"vm\": {\"name\": \"vm1\", \"vm_size\": \"Standard_D2s_v3\", \"location\": "
             "\"westeurope\"}, \"disks\": [{\"name\": \"vm1-data0\", \"role\": \"data\", "
             "\"lun\": 0, \"sku\": \"Premium_LRS\", \"size_gib\": 128}]}",
             0644);
    put_file(f->token, "tok-123\n", 0600);
    setenv("TIERWISE_LOOPBACK_ONLY", "1", 1);
    f->srv = srv_start();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    if (f->srv)
        srv_stop(f->srv);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Runs `run --once` against SERVER with EXTRA options (NULL-terminated). */
static int run_with(struct fx *f, const char *server, const char *const *extra)
{
    const char *argv[40] = {"run",     "--once",           "--server", server,
                            "--token-file", f->token,      "--spool",  f->spool,
                            "--inventory-file", f->inv,    "--profiles", "none"};
    int argc = 12;
    for (int i = 0; extra && extra[i]; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    return tw_agent_cmd_run(argc, (char **)argv);
}

static int run_once(struct fx *f)
{
    return run_with(f, f->srv->base, NULL);
}

static struct tw_spool_stats spool_stats(struct fx *f)
{
    struct tw_spool *sp;
    struct tw_error err = {0};
    struct tw_spool_stats st;
    assert_int_equal(tw_spool_open(f->spool, NULL, &sp, &err), TW_OK);
    assert_int_equal(tw_spool_stats(sp, &st, &err), TW_OK);
    tw_spool_close(sp);
    return st;
}

/* A URL where nothing listens: a server started and stopped. */
static void dead_url(char *out, size_t n)
{
    struct srv *s = srv_start();
    snprintf(out, n, "%s", s->base);
    srv_stop(s);
}

/* ---- tests ---- */

static void test_delivered(void **state)
{
    struct fx *f = *state;
    assert_int_equal(run_once(f), 0);
    assert_int_equal(f->srv->n_received, 1);
    assert_int_equal(f->srv->n_stored, 1);
    assert_string_equal(f->srv->auth, "Bearer tok-123");
    assert_string_equal(f->srv->ctype, "application/json");
    struct tw_spool_stats st = spool_stats(f);
    assert_int_equal(st.pending + st.rejected, 0);
}

/* Down (nothing listens, then 503s): spooled, exit 7 (nothing delivered);
 * up again: drained oldest first, the new report last, each stored once. */
static void test_down_then_up(void **state)
{
    struct fx *f = *state;
    char dead[64];
    dead_url(dead, sizeof(dead));
    assert_int_equal(run_with(f, dead, NULL), 7);
    assert_int_equal(run_with(f, dead, NULL), 7);
    int busy[] = {503, 503, 503};
    srv_script(f->srv, busy, 3);
    assert_int_equal(run_once(f), 7); /* 3 attempts of the oldest, all 503 */
    assert_int_equal(f->srv->n_stored, 0);
    assert_int_equal(spool_stats(f).pending, 3);

    struct tw_spool *sp;
    struct tw_error err = {0};
    struct tw_spool_entry e;
    assert_int_equal(tw_spool_open(f->spool, NULL, &sp, &err), TW_OK);
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
    char oldest[40];
    snprintf(oldest, sizeof(oldest), "%s", e.id);
    assert_int_equal(e.attempts, 3); /* tried by each of the three runs */
    assert_int_equal(e.http_status, 503);
    tw_spool_entry_cleanup(&e);
    tw_spool_close(sp);

    assert_int_equal(run_once(f), 0);
    assert_int_equal(f->srv->n_stored, 4);
    assert_string_equal(f->srv->stored[0], oldest);
    assert_int_equal(spool_stats(f).pending, 0);
}

/* The report is stored but the answer is lost: it stays spooled (a POST
 * is not resent within the call), and the next run's resend is answered
 * "already stored", which counts as delivered. */
static void test_lost_answer(void **state)
{
    struct fx *f = *state;
    int drop[] = {-1};
    srv_script(f->srv, drop, 1);
    assert_int_equal(run_once(f), 7); /* no answer: kept for the next run */
    assert_int_equal(f->srv->n_stored, 1);
    assert_int_equal(spool_stats(f).pending, 1);
    assert_int_equal(run_once(f), 0);
    assert_int_equal(f->srv->n_stored, 2);
    assert_int_equal(f->srv->n_received, 3); /* the first one twice */
    assert_string_equal(f->srv->received[0], f->srv->received[1]);
    assert_int_equal(spool_stats(f).pending, 0);
}

/* A report the server calls bad is set aside (exit 5), not resent; it can
 * be queued again. */
static void test_rejected(void **state)
{
    struct fx *f = *state;
    int bad[] = {422};
    srv_script(f->srv, bad, 1);
    assert_int_equal(run_once(f), 5);
    struct tw_spool_stats st = spool_stats(f);
    assert_int_equal(st.rejected, 1);
    assert_int_equal(st.pending, 0);
    assert_int_equal(run_once(f), 0); /* the next report goes; the bad one waits */
    assert_int_equal(f->srv->n_received, 2);
    assert_int_equal(spool_stats(f).rejected, 1);

    const char *argv[] = {"run", "--spool", f->spool, "--spool-retry-rejected", NULL};
    assert_int_equal(tw_agent_cmd_run(4, (char **)argv), 0);
    assert_int_equal(run_once(f), 0);
    assert_int_equal(f->srv->n_stored, 3);
    st = spool_stats(f);
    assert_int_equal(st.rejected + st.pending, 0);
}

/* A refused token keeps the report and exits 6. */
static void test_refused(void **state)
{
    struct fx *f = *state;
    int no[] = {401};
    srv_script(f->srv, no, 1);
    assert_int_equal(run_once(f), 6);
    assert_int_equal(spool_stats(f).pending, 1);
    assert_int_equal(run_once(f), 0);
    assert_int_equal(f->srv->n_stored, 2);
}

/* A 2xx that does not say "stored" / "already stored" (a proxy's page, a
 * different service at the URL) delivered nothing: the report stays in
 * the spool and the run exits 6, like a wrong URL. */
static void test_unconfirmed_2xx(void **state)
{
    struct fx *f = *state;
    int other[] = {299};
    srv_script(f->srv, other, 1);
    assert_int_equal(run_once(f), 6);
    assert_int_equal(f->srv->n_stored, 0);
    assert_int_equal(spool_stats(f).pending, 1);
    assert_int_equal(run_once(f), 0); /* the real backend back: both go */
    assert_int_equal(f->srv->n_stored, 2);
    assert_int_equal(spool_stats(f).pending, 0);
}

/* A 201 "stored" that names another report, or none, does not confirm
 * this one: it stays in the spool (exit 6), and goes when the backend
 * answers for it. */
static void test_stored_other_id(void **state)
{
    struct fx *f = *state;
    int other[] = {298};
    srv_script(f->srv, other, 1);
    assert_int_equal(run_once(f), 6);
    assert_int_equal(spool_stats(f).pending, 1);
    int none[] = {297};
    srv_script(f->srv, none, 1);
    assert_int_equal(run_once(f), 6);
    assert_int_equal(spool_stats(f).pending, 2);
    assert_int_equal(run_once(f), 0);
    assert_int_equal(spool_stats(f).pending, 0);
    assert_int_equal(f->srv->n_stored, 3);
}

/* The bound: full while the backend is down is exit 4, nothing dropped. */
static void test_full(void **state)
{
    struct fx *f = *state;
    char dead[64];
    dead_url(dead, sizeof(dead));
    const char *max[] = {"--spool-max", "2", NULL};
    assert_int_equal(run_with(f, dead, max), 7);
    assert_int_equal(run_with(f, dead, max), 7);
    assert_int_equal(run_with(f, dead, max), 4);
    assert_int_equal(spool_stats(f).pending, 2);
    /* Back up: the two kept reports go, then a new one. */
    assert_int_equal(run_with(f, f->srv->base, max), 0);
    assert_int_equal(f->srv->n_stored, 3);
}

/* The token file: too open, empty, missing (exit 2, nothing sent). */
static void test_token_file(void **state)
{
    struct fx *f = *state;
    assert_int_equal(chmod(f->token, 0640), 0);
    assert_int_equal(run_once(f), 2);
    put_file(f->token, "\n", 0600);
    assert_int_equal(run_once(f), 2);
    put_file(f->token, "two words\n", 0600);
    assert_int_equal(run_once(f), 2);
    unlink(f->token);
    assert_int_equal(run_once(f), 2);
    assert_int_equal(f->srv->n_received, 0);
}

/* Runs `run --once` with only ARGS (NULL-terminated) besides the spool,
 * the inventory and no profiles: the backend and the token come from the
 * environment or the config file. */
static int run_bare(struct fx *f, const char *const *args)
{
    const char *argv[40] = {"run", "--once", "--spool", f->spool, "--inventory-file", f->inv,
                            "--profiles", "none"};
    int argc = 8;
    for (int i = 0; args && args[i]; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    return tw_agent_cmd_run(argc, (char **)argv);
}

/* The server URL and the token file: flag, else TIERWISE_SERVER /
 * TIERWISE_TOKEN_FILE, else the config file's "server" / "token_file". */
static void test_backend_sources(void **state)
{
    struct fx *f = *state;
    char dead[64], cfg[4300], text[9000], other_tok[4300];
    dead_url(dead, sizeof(dead));
    snprintf(cfg, sizeof(cfg), "%s/agent.json", f->dir);
    snprintf(other_tok, sizeof(other_tok), "%s/other.token", f->dir);
    put_file(other_tok, "tok-from-env\n", 0600);

    /* The config file alone. */
    snprintf(text, sizeof(text), "{\"server\": \"%s\", \"token_file\": \"%s\"}", f->srv->base,
             f->token);
    put_file(cfg, text, 0600);
    const char *by_cfg[] = {"--config", cfg, NULL};
    assert_int_equal(run_bare(f, by_cfg), 0);
    assert_int_equal(f->srv->n_stored, 1);
    assert_string_equal(f->srv->auth, "Bearer tok-123");
    /* TIERWISE_CONFIG names it too. */
    setenv("TIERWISE_CONFIG", cfg, 1);
    assert_int_equal(run_bare(f, NULL), 0);
    assert_int_equal(f->srv->n_stored, 2);

    /* The environment wins over the file. */
    setenv("TIERWISE_TOKEN_FILE", other_tok, 1);
    assert_int_equal(run_bare(f, NULL), 0);
    assert_string_equal(f->srv->auth, "Bearer tok-from-env");
    snprintf(text, sizeof(text), "{\"server\": \"%s\", \"token_file\": \"%s\"}", dead,
             f->token);
    put_file(cfg, text, 0600);
    setenv("TIERWISE_SERVER", f->srv->base, 1);
    assert_int_equal(run_bare(f, NULL), 0);
    assert_int_equal(f->srv->n_stored, 4);

    /* A flag wins over the environment. */
    const char *by_flag[] = {"--token-file", f->token, NULL};
    assert_int_equal(run_bare(f, by_flag), 0);
    assert_string_equal(f->srv->auth, "Bearer tok-123");
    setenv("TIERWISE_SERVER", dead, 1);
    const char *srv_flag[] = {"--server", f->srv->base, NULL};
    assert_int_equal(run_bare(f, srv_flag), 0);
    assert_int_equal(f->srv->n_stored, 6);

    /* A bad value says where it came from; an empty variable is unset. */
    setenv("TIERWISE_SERVER", "ftp://x", 1);
    assert_int_equal(run_bare(f, NULL), 2);
    setenv("TIERWISE_SERVER", "", 1);
    assert_int_equal(run_bare(f, NULL), 7); /* the file's dead URL: spooled */
    put_file(cfg, "{\"token_file\": \"relative.token\"}", 0600);
    unsetenv("TIERWISE_TOKEN_FILE");
    assert_int_equal(run_bare(f, NULL), 2);
    put_file(cfg, "{\"server\": ", 0600);
    assert_int_equal(run_bare(f, NULL), 2);
    unsetenv("TIERWISE_SERVER");
    unsetenv("TIERWISE_CONFIG");
    /* Neither: the message names all three ways. */
    assert_int_equal(run_bare(f, NULL), 2);
}

/* The spool's folder is made when missing (mode 0700, whatever the
 * umask); where it can't be (a file in the way), the run says which folder
 * and exits 1 before anything is measured or sent. */
static void test_spool_folder(void **state)
{
    struct fx *f = *state;
    char d1[4300], d2[4300];
    snprintf(d1, sizeof(d1), "%s/state", f->dir);
    snprintf(d2, sizeof(d2), "%s/state/tierwise", f->dir);
    snprintf(f->spool, sizeof(f->spool), "%s/state/tierwise/spool.db", f->dir);
    mode_t old = umask(0);
    int st = run_once(f);
    umask(old);
    assert_int_equal(st, 0);
    struct stat sb;
    assert_int_equal(stat(d1, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0700);
    assert_int_equal(stat(d2, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0700);
    assert_int_equal(f->srv->n_stored, 1);
    /* A second run finds it there. */
    assert_int_equal(run_once(f), 0);
    /* A file where a folder should be. */
    char blocker[4300];
    snprintf(blocker, sizeof(blocker), "%s/plain", f->dir);
    put_file(blocker, "x", 0600);
    snprintf(f->spool, sizeof(f->spool), "%s/plain/sub/spool.db", f->dir);
    assert_int_equal(run_once(f), 1);
    assert_int_equal(f->srv->n_received, 2);
}

/* The load is bounded: a plan of more seconds per disk than
 * --max-seconds-per-disk (default 120: the two rated profiles' 70 s fit)
 * is refused before anything is measured or sent. */
static void test_max_seconds(void **state)
{
    struct fx *f = *state;
    const char *dflt[] = {"--profiles", "rated-iops,rated-throughput", NULL};
    assert_int_equal(run_with(f, f->srv->base, dflt), 0);
    const char *longer[] = {"--profiles", "rated-iops,rated-throughput", "--runtime", "56", NULL};
    assert_int_equal(run_with(f, f->srv->base, longer), 2); /* 2 x (56 + 5) = 122 s */
    const char *three[] = {"--profiles", "rated-iops,rated-throughput,db-scan-16k,db-largeio-128k",
                           NULL};
    assert_int_equal(run_with(f, f->srv->base, three), 2); /* 35 + 35 + 32 + 32 s */
    const char *raised[] = {"--profiles", "rated-iops,rated-throughput", "--runtime", "56",
                            "--max-seconds-per-disk", "122", NULL};
    assert_int_equal(run_with(f, f->srv->base, raised), 0);
    const char *lower[] = {"--profiles", "rated-iops", "--max-seconds-per-disk", "34", NULL};
    assert_int_equal(run_with(f, f->srv->base, lower), 2);
    const char *zero[] = {"--max-seconds-per-disk", "0", NULL};
    assert_int_equal(run_with(f, f->srv->base, zero), 2);
    /* Two runtimes of 2^63 ms: their sum wraps round to 10 s unless it
     * saturates, and a runtime over a day is refused anyway. */
    const char *wrap[] = {"--profiles", "rated-iops,rated-throughput", "--runtime",
                          "9223372036854775808ms", NULL};
    assert_int_equal(run_with(f, f->srv->base, wrap), 2);
    const char *day[] = {"--profiles", "rated-iops", "--ramp", "86401", NULL};
    assert_int_equal(run_with(f, f->srv->base, day), 2);
    assert_int_equal(f->srv->n_stored, 2);
}

/* A FIFO (or a folder) given as the token file is refused at once as not
 * a regular file (exit 2), never waited on for a writer.  The alarm turns
 * a hang into a failed test. */
static void test_token_fifo(void **state)
{
    struct fx *f = *state;
    unlink(f->token);
    assert_int_equal(mkfifo(f->token, 0600), 0);
    alarm(20);
    assert_int_equal(run_once(f), 2);
    unlink(f->token);
    assert_int_equal(mkdir(f->token, 0700), 0);
    assert_int_equal(run_once(f), 2);
    alarm(0);
    rmdir(f->token);
    assert_int_equal(f->srv->n_received, 0);
}

/* A benchmark of a file on data disk LUN 0 (null engine, buffered: works
 * on any filesystem) is in the report. */
static void test_file_target(void **state)
{
    struct fx *f = *state;
    char ft[4300];
    snprintf(ft, sizeof(ft), "0=%s/data0.bench", f->dir);
    const char *extra[] = {"--profiles", "rated-iops,rated-throughput", "--engine", "null",
                           "--buffered", "--runtime", "1", "--ramp", "0", "--file-target", ft,
                           "--file-size", "1M", NULL};
    assert_int_equal(run_with(f, f->srv->base, extra), 0);
    assert_int_equal(f->srv->n_stored, 1);
    /* An unknown LUN is bad usage. */
    const char *bad[] = {"--file-target", "7=/tmp/x", NULL};
    assert_int_equal(run_with(f, f->srv->base, bad), 2);
}

struct daemon_arg {
    struct fx *f;
    int status;
};

static void *daemon_main(void *p)
{
    struct daemon_arg *a = p;
    const char *argv[] = {"run",          "--server",  a->f->srv->base,   "--token-file",
                          a->f->token,    "--spool",   a->f->spool,       "--inventory-file",
                          a->f->inv,      "--profiles", "none",           "--interval",
                          "1h",           "--retry-min", "100ms",         "--retry-max",
                          "400ms",        NULL};
    a->status = tw_agent_cmd_run(17, (char **)argv);
    return NULL;
}

/* Without --once: the first report meets 503s, is retried with backoff
 * until delivered, and SIGTERM stops the loop with status 0. */
static void test_daemon(void **state)
{
    struct fx *f = *state;
    int busy[] = {503, 503, 503, 503, 503, 503};
    srv_script(f->srv, busy, 6);
    /* Only the helper thread takes the signal. */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    struct daemon_arg a = {f, -1};
    pthread_t t;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_int_equal(pthread_create(&t, NULL, daemon_main, &a), 0);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    for (int i = 0; i < 300 && f->srv->n_stored == 0; i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(f->srv->n_stored, 1);
    pthread_kill(t, SIGTERM);
    pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_int_equal(a.status, 0);
    assert_int_equal(spool_stats(f).pending, 0);
}

/* Without --once, bad input found by the first cycle ends the agent. */
static void test_daemon_bad_input(void **state)
{
    struct fx *f = *state;
    const char *argv[] = {"run",         "--server", f->srv->base,      "--token-file",
                          f->token,      "--spool",  f->spool,          "--inventory-file",
                          f->inv,        "--profiles", "none",          "--file-target",
                          "7=/nonexistent/x", NULL};
    assert_int_equal(tw_agent_cmd_run(13, (char **)argv), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_delivered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_down_then_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unconfirmed_2xx, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stored_other_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_seconds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backend_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_bad_input, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
