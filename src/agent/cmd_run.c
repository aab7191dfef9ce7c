/*
 * cmd_run.c - tierwise-agent run: inventory, benchmarks, and the report
 * posted to the backend, through a spool that never loses one.
 *
 * A cycle: drain what the spool still holds (oldest first), read the
 * inventory, run the configured profiles on each data disk, write the new
 * report into the spool, and drain again, which posts it.  A report leaves
 * the spool only when the server says it is stored (or was stored before:
 * the server knows reports by their UUID, so sending one twice after a
 * lost answer is harmless).  With --once that is all; otherwise a cycle
 * runs every --interval and, in between, the spool is retried with
 * exponential backoff and jitter until it is empty.
 *
 * This file is the command: the spool actions, and the setup (the spool,
 * its lock, the HTTP client, the signals) around one cycle or the loop.
 * The options are run_opts.c's, delivery run_deliver.c's, the cycle
 * run_cycle.c's and the loop run_loop.c's (run_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/run_int.h"

volatile sig_atomic_t run_stop;

/* ---- spool actions ---- */

static int spool_action(const struct run_cfg *c, bool list, bool retry)
{
    struct tw_spool *sp;
    struct tw_error err = {0};
    enum tw_err rc = tw_spool_open(c->spool_path, &c->spool_opts, &sp, &err);
    if (rc != TW_OK) {
        say("%s", err.msg);
        return rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    if (retry) {
        int64_t n = 0;
        if (tw_spool_retry_rejected(sp, &n, &err) != TW_OK) {
            say("%s", err.msg);
            status = TW_EXIT_FAIL;
        } else {
            tw_app_note(TW_AGENT_PROG, "%lld rejected report(s) queued again in %s",
                        (long long)n, c->spool_path);
        }
    }
    if (list && status == TW_EXIT_OK) {
        json_t *arr = NULL;
        if (tw_spool_list(sp, &arr, &err) != TW_OK) {
            say("%s", err.msg);
            status = TW_EXIT_FAIL;
        } else {
            char *s = json_dumps(arr, JSON_INDENT(2));
            if (s)
                printf("%s\n", s);
            else
                status = TW_EXIT_FAIL;
            free(s);
            json_decref(arr);
            if (fflush(stdout) != 0)
                status = TW_EXIT_FAIL;
        }
    }
    tw_spool_close(sp);
    return status;
}

/* ---- the spool's folder ---- */

/*
 * Creates the folders above the spool file PATH that are missing, each
 * mode 0700 (the spool holds whole reports), as mkdir -p would; a folder
 * that exists is left as it is.  False with the reason said, naming the
 * folder and the ways out.
 */
static bool make_spool_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return true; /* the current folder, or / */
    *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0)
        return true; /* there already: the spool says what is wrong with it, if anything */
    for (char *p = dir + 1;; p++) {
        bool last = *p == '\0';
        if (*p != '/' && !last)
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) == 0) {
            /* The umask may have taken more than group and others. */
            if (chmod(dir, 0700) != 0) {
                say("can't set the spool's folder %s to mode 0700: %s", dir, strerror(errno));
                return false;
            }
            tw_app_note(TW_AGENT_PROG, "created the spool's folder %s (mode 0700)", dir);
        } else if (errno != EEXIST) {
            say("can't create the spool's folder %s: %s; create it for the user this runs as "
                "(install -d -m 0700 -o USER %s), let systemd make it (StateDirectory=), or give "
                "--spool a file in a folder this user may write",
                dir, strerror(errno), dir);
            return false;
        }
        if (last)
            return true;
        *p = '/';
    }
}

/* ---- the command ---- */

int tw_agent_cmd_run(int argc, char **argv)
{
    struct run_cfg *c = calloc(1, sizeof(*c));
    if (!c) {
        say("out of memory");
        return TW_EXIT_FAIL;
    }
    struct tw_error err = {0};
    int status = TW_EXIT_USAGE;
    if (!run_parse_options(argc, argv, c, &status))
        goto out;
    if (c->list || c->retry) {
        status = spool_action(c, c->list, c->retry);
        goto out;
    }
    struct tw_az_http_opts ho;
    if (!run_check_backend(c, &ho, &status))
        goto out;
    /* The spool retries over hours; one call only rides out a blip. */
    ho.max_attempts = 3;
    ho.budget_ms = 45000;
    ho.backoff_base_ms = 500;
    ho.backoff_max_ms = 4000;
    ho.max_body = 1u << 20;

    if (!make_spool_dir(c->spool_path)) {
        status = TW_EXIT_FAIL;
        goto out;
    }
    struct tw_spool *sp = NULL;
    enum tw_err rc = tw_spool_open(c->spool_path, &c->spool_opts, &sp, &err);
    if (rc != TW_OK) {
        say("%s", err.msg);
        status = rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
        goto out;
    }
    /* One agent at a time per spool: two would measure the same disks at
     * once and each get half.  (flock does not touch SQLite's own locks.) */
    int lock = open(c->spool_path, O_RDONLY | O_CLOEXEC);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
        say("another tierwise-agent run is using the spool %s (%s); let it finish, or give "
            "this one --spool another file",
            c->spool_path, lock < 0 ? strerror(errno) : "locked");
        if (lock >= 0)
            close(lock);
        tw_spool_close(sp);
        status = TW_EXIT_FAIL;
        goto out;
    }
    struct tw_az_http *http = tw_az_http_new(&ho, &err);
    if (!http) {
        say("%s", err.msg);
        tw_spool_close(sp);
        close(lock);
        status = TW_EXIT_FAIL;
        goto out;
    }
    run_stop = 0;
    tw_app_catch_signals(&run_stop);
    c->plan.interrupt = &run_stop;
    c->plan.progress = isatty(STDERR_FILENO) && tw_app_get_verbosity() != TW_APP_QUIET;
    if (c->once) {
        enum drain_end end;
        status = run_cycle(c, sp, http, &end);
        struct tw_spool_stats st = {0};
        if (status != TW_EXIT_USAGE && tw_spool_stats(sp, &st, &err) == TW_OK &&
            (st.pending || st.rejected))
            tw_app_note(TW_AGENT_PROG, "the spool %s holds %lld pending and %lld rejected report(s)",
                        c->spool_path, (long long)st.pending, (long long)st.rejected);
    } else {
        status = run_serve_forever(c, sp, http);
    }
    tw_az_http_free(http);
    tw_spool_close(sp);
    close(lock); /* after SQLite is done with the file */
out:
    free(c);
    return status;
}
