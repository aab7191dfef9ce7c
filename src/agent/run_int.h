/*
 * run_int.h - what the files of tierwise-agent run share: its settings,
 * its exit statuses, the stop flag, and the steps of a cycle.
 *
 * cmd_run.c is the command (the spool actions, one cycle or the loop);
 * run_opts.c reads the options into a struct run_cfg; run_deliver.c posts
 * the spool's reports (the drain) and turns its end into an exit status;
 * run_cycle.c makes one cycle (drain, measure, spool, drain); run_loop.c
 * runs cycles every --interval and retries the spool in between.
 */
#ifndef TW_AGENT_RUN_INT_H
#define TW_AGENT_RUN_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/devmap.h"
#include "agent/report_build.h"
#include "agent/spool.h"
#include "app/app.h"
#include "azure/http.h"

/* Exit statuses of run beyond the shared 0, 1, 2, 3 and 130. */
#define EXIT_SPOOL_FULL 4 /* this cycle's report could not be kept */
#define EXIT_REJECTED 5   /* the server refused a report as bad: set aside */
#define EXIT_REFUSED 6    /* the server refused the token or the URL: kept */
#define EXIT_SPOOLED 7    /* nothing of this cycle delivered: its report waits in the spool */

#define TOKEN_MAX 4096
#define REPORTS_PATH "/api/v1/reports"

#define say(...) tw_app_error(TW_AGENT_PROG, __VA_ARGS__)

struct run_cfg {
    const char *server;                         /* --server, the base URL */
    char url[2048];                             /* where reports are posted */
    const char *token_file;                     /* --token-file */
    char server_from[4200], token_from[4200];   /* where each came from, for messages */
    struct tw_agent_config file_cfg;            /* the config file's "server", "token_file" */
    const char *spool;                          /* --spool, or NULL for the default */
    char spool_path[4096];                      /* the spool file in use */
    struct tw_spool_opts spool_opts;            /* --spool-max, --spool-max-bytes */
    const char *profiles;                       /* --profiles */
    struct tw_agent_bench_plan plan;            /* what to measure on each data disk */
    const char *imds, *config, *inventory_file; /* where the inventory comes from */
    struct tw_devmap_opts dm;                   /* --sysfs-root, --dev-root */
    char doubt[TW_INV_MAX_DISKS][320];          /* why a data disk's device is uncertain */
    bool once;                                  /* --once */
    bool list, retry;                           /* --spool-list, --spool-retry-rejected */
    uint64_t interval_ms;                       /* --interval */
    uint64_t retry_min_ms, retry_max_ms;        /* --retry-min, --retry-max */
};

/* Set by SIGTERM and SIGINT (cmd_run.c). */
extern volatile sig_atomic_t run_stop;

/* ---- options (run_opts.c) ---- */

/* Reads ARGV into C (zeroed by the caller): false with *STATUS the exit
 * status when the command ends here (--help, bad usage), each problem said
 * on stderr. */
bool run_parse_options(int argc, char **argv, struct run_cfg *c, int *status);

/* The checks of a run that posts (--server, --token-file, --profiles, the
 * loopback rule), filling C's URL and plan and HO's defaults: false with
 * *STATUS when it can't go on. */
bool run_check_backend(struct run_cfg *c, struct tw_az_http_opts *ho, int *status);

/* ---- delivery (run_deliver.c) ---- */

enum drain_end {
    DRAIN_EMPTY,   /* everything pending was delivered (or set aside) */
    DRAIN_DOWN,    /* the backend could not be reached, or 5xx/429/408 */
    DRAIN_REFUSED, /* 3xx/401/403/404/405, or a URL refused locally */
    DRAIN_FAILED,  /* the spool itself failed */
    DRAIN_STOPPED, /* a signal came */
    DRAIN_REJECTED /* (one report) the server called it bad */
};

struct drain_sum {
    int delivered, repeated, rejected; /* reports, this drain */
    char last_error[512];              /* why the last one failed */
};

/* Keeps the more important of two exit statuses (see run --help). */
int run_worse(int a, int b);

/* Reads the token from PATH (named by FROM: "--token-file",
 * "TIERWISE_TOKEN_FILE", the config file) into TOK; an exit status. */
int run_read_token(const char *path, const char *from, char *tok, size_t toklen);

/* Sends the spool's pending reports, oldest first, until it is empty or
 * the backend fails; a report the server calls bad is set aside. */
enum drain_end run_drain(const struct run_cfg *c, struct tw_spool *sp, struct tw_az_http *http,
                         struct drain_sum *sum);

/* What a drain's end means for the exit status, said once. */
int run_drain_status(const struct run_cfg *c, struct tw_spool *sp, enum drain_end end,
                     const struct drain_sum *sum);

/* ---- a cycle (run_cycle.c) and the loop (run_loop.c) ---- */

/* The wall clock in ms since the epoch. */
int64_t run_wall_ms(void);

/* Drains, makes this cycle's report into the spool, drains again; an exit
 * status, *END_OUT how the last drain ended. */
int run_cycle(struct run_cfg *c, struct tw_spool *sp, struct tw_az_http *http,
              enum drain_end *end_out);

/* Cycles every --interval, the spool retried with backoff in between,
 * until a signal; an exit status. */
int run_serve_forever(struct run_cfg *c, struct tw_spool *sp, struct tw_az_http *http);

#endif
