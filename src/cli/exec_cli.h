/*
 * exec_cli.h - what apply and vm stop|start share (cmd_apply.c): the
 * executor's ARM table over the shared ARM options, and the printing of
 * its results for people and programs.
 */
#ifndef TW_CLI_EXEC_CLI_H
#define TW_CLI_EXEC_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/arm_args.h"
#include "service/exec.h"

/* The printer of a run's results: text lines on F, or collected into
 * RESULTS (a JSON array) when JSON. */
struct tw_cli_exec_out {
    bool json;
    FILE *f;
    json_t *results;
};
void tw_cli_exec_result(void *arg, const struct tw_exec_result *r);

/* Fills REAL from ENV (the ARM URL, HTTP options, credential, pacer) and O's
 * ARM members, owner, poll and parallel settings. */
void tw_cli_exec_opts(struct tw_exec_opts *o, struct tw_exec_arm_real *real,
                      const struct tw_arm_env *env);

/* serve's ARM for the executor: the credential of the environment (client
 * credentials from AZURE_*, else the managed identity through EP's IMDS)
 * against EP's login, and a pacer at ARM's limits.  Nothing is sent. */
enum tw_err tw_cli_serve_exec_arm(const struct tw_az_endpoints *ep, struct tw_arm_cred **cred,
                                  struct tw_arm_pacer **pacer, struct tw_error *err);

/* "N done, N skipped, ..." for the text output. */
void tw_cli_exec_summary_text(FILE *f, const struct tw_exec_summary *s, bool dry_run);

#endif
