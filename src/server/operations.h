/*
 * operations.h - the server's table of long operations (a prices refresh
 * now, the scheduler's runs later): what GET /api/v1/operations/{id}
 * answers.
 *
 * An operation has a UUID, a kind ("prices.refresh"), a key (what makes
 * two requests the same operation: "westeurope USD"), its request, a
 * state (queued, running, succeeded, failed), the RFC 3339 times it was
 * created, started and finished, and its result or its error {code,
 * message}.  The table lives in memory (a restart forgets it) and holds at
 * most a fixed number; a new one evicts the oldest finished, and when all
 * are unfinished it is refused.  Thread-safe: the request threads create
 * and read, the worker updates.
 */
#ifndef TW_SERVER_OPERATIONS_H
#define TW_SERVER_OPERATIONS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"
#include "core/uuid.h"

#define TW_OPS_MAX 256       /* operations kept */
#define TW_OPS_WAIT_MAX_S 60 /* the longest ?wait= */
#define TW_OPS_QUEUE_MAX 16  /* operations queued behind the running one */

enum tw_op_state { TW_OP_QUEUED, TW_OP_RUNNING, TW_OP_SUCCEEDED, TW_OP_FAILED };

struct tw_ops;

/* A table of MAX operations (0: TW_OPS_MAX); NULL when out of memory. */
struct tw_ops *tw_ops_new(size_t max);
/* Frees the table (a void * for tw_worker_opts.ctx_free); NULL allowed. */
void tw_ops_free(void *ops);

/*
 * A queued operation of KIND with KEY and REQUEST (stolen), its id in ID.
 * When an unfinished one of the same kind and key exists, nothing is
 * created: *JOINED is set and ID is that one's.  TW_ENOMEM when the table
 * is full of unfinished operations (or out of memory), TW_EIO when the
 * random source fails.
 */
enum tw_err tw_ops_create(struct tw_ops *ops, const char *kind, const char *key, json_t *request,
                          char id[TW_UUID_STRLEN + 1], bool *joined, struct tw_error *err);

/* The worker's updates.  RESULT is stolen. */
void tw_ops_start(struct tw_ops *ops, const char *id);
void tw_ops_succeed(struct tw_ops *ops, const char *id, json_t *result);
void tw_ops_fail(struct tw_ops *ops, const char *id, const char *code, const char *message);

/*
 * The operation's JSON (new reference), or NULL when there is no such id.
 * With UNTIL_NS > 0 (CLOCK_REALTIME), waits until it has finished or
 * UNTIL_NS passes or *STOPPING becomes true (looked at every 100 ms).
 */
json_t *tw_ops_get(struct tw_ops *ops, const char *id, int64_t until_ns,
                   const atomic_bool *stopping);

/* Counts the callers in a wait: a claim fails when MAX are waiting. */
bool tw_ops_wait_claim(struct tw_ops *ops, unsigned max);
void tw_ops_wait_release(struct tw_ops *ops);

#endif
