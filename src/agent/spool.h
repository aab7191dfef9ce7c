/*
 * spool.h - the agent's reports that the backend has not taken yet.
 *
 * Every report the agent makes is first written here (one SQLite file of
 * the agent's own, default /var/lib/tierwise/spool.db), then posted; it
 * leaves the spool only when the server has answered that it is stored
 * (201) or was stored before (200 "already stored": a report is identified
 * by its UUID, so sending it twice is harmless).  Reports are drained
 * oldest first.
 *
 * Two kinds of entries:
 *  - pending: waiting to be sent (the backend was down, answered 5xx/429,
 *    or refused the token); retried with backoff;
 *  - rejected: the server said the report itself is bad (400, 413, 422,
 *    ...): sending it again would get the same answer, so it is set aside
 *    with the server's words, never deleted behind the user's back.
 *
 * The spool has a bound (reports and bytes, pending and rejected
 * together).  A report that does not fit is refused with TW_ERANGE and a
 * message saying so; nothing already in the spool is ever dropped to make
 * room.
 *
 * The file carries an application id of its own, so the spool refuses to
 * touch a file that is some other program's database, or no database.
 */
#ifndef TW_AGENT_SPOOL_H
#define TW_AGENT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"

#define TW_SPOOL_DEFAULT_PATH "/var/lib/tierwise/spool.db"
#define TW_SPOOL_DEFAULT_MAX_REPORTS 1000
#define TW_SPOOL_DEFAULT_MAX_BYTES (256LL << 20)
#define TW_SPOOL_APPLICATION_ID 0x74777370 /* "twsp" */
#define TW_SPOOL_SCHEMA_VERSION 1

struct tw_spool;

struct tw_spool_opts {
    int64_t max_reports; /* 0: TW_SPOOL_DEFAULT_MAX_REPORTS */
    int64_t max_bytes;   /* 0: TW_SPOOL_DEFAULT_MAX_BYTES */
};

struct tw_spool_entry {
    int64_t seq;         /* order of arrival */
    char id[40];         /* the report's UUID */
    char *body;          /* the report as posted (malloc'd, NUL-terminated) */
    size_t len;
    int64_t queued_ms;   /* Unix time in ms when it was spooled */
    int attempts;        /* failed deliveries so far */
    bool rejected;
    long http_status;    /* of the last answer, 0 when none */
    char last_error[512];
};

struct tw_spool_stats {
    int64_t pending, rejected; /* entries */
    int64_t bytes;             /* bodies, pending and rejected */
    int64_t oldest_ms;         /* queued_ms of the oldest pending entry, 0 when none */
    int64_t max_reports, max_bytes;
};

/*
 * Opens the spool at PATH, creating the file (mode 0600) and its table when
 * needed.  A file that is not a SQLite database, is another program's
 * database, is damaged, or was written by a newer tierwise is refused with
 * TW_EINVAL / TW_EUNSUPPORTED and a message naming the path and what to do.
 * A directory that can't be written gives TW_EIO.
 */
enum tw_err tw_spool_open(const char *path, const struct tw_spool_opts *o, struct tw_spool **out,
                          struct tw_error *err);
void tw_spool_close(struct tw_spool *sp); /* NULL allowed */

/*
 * Adds report ID (BODY, LEN bytes) as the newest pending entry, queued at
 * NOW_MS.  An ID already in the spool changes nothing (TW_OK).  TW_ERANGE
 * when the bound would be passed: the message gives the counts and the
 * bound, and the report is not stored.
 */
enum tw_err tw_spool_put(struct tw_spool *sp, const char *id, const char *body, size_t len,
                         int64_t now_ms, struct tw_error *err);

/* The oldest pending entry into E (free with tw_spool_entry_cleanup);
 * TW_ENOENT when there is none. */
enum tw_err tw_spool_oldest(struct tw_spool *sp, struct tw_spool_entry *e, struct tw_error *err);
void tw_spool_entry_cleanup(struct tw_spool_entry *e);

/* Entry SEQ was delivered: it leaves the spool. */
enum tw_err tw_spool_delivered(struct tw_spool *sp, int64_t seq, struct tw_error *err);

/* Entry SEQ could not be delivered this time (HTTP_STATUS 0 when no
 * answer); it stays pending with one more attempt and MSG kept. */
enum tw_err tw_spool_failed(struct tw_spool *sp, int64_t seq, long http_status, const char *msg,
                            struct tw_error *err);

/* The server refused entry SEQ as bad: it is set aside with MSG. */
enum tw_err tw_spool_reject(struct tw_spool *sp, int64_t seq, long http_status, const char *msg,
                            struct tw_error *err);

/* Puts every rejected entry back in the queue (after the server was
 * fixed); *N gets how many. */
enum tw_err tw_spool_retry_rejected(struct tw_spool *sp, int64_t *n, struct tw_error *err);

enum tw_err tw_spool_stats(struct tw_spool *sp, struct tw_spool_stats *st, struct tw_error *err);

/* Every entry without its body, oldest first, as a new JSON array of
 * {"seq", "id", "state", "queued_at", "bytes", "attempts", "http_status",
 * "last_error"}. */
enum tw_err tw_spool_list(struct tw_spool *sp, json_t **out, struct tw_error *err);

/*
 * The wait before retry number FAILURES (1 = after the first failure):
 * BASE_MS doubled per failure up to MAX_MS, with "equal jitter" (half the
 * step fixed, half random from *RNG, a xorshift64 state), so the result is
 * in [step/2, step].  Agents that lost the backend together don't all come
 * back in the same second.
 */
int64_t tw_spool_backoff_ms(int failures, int64_t base_ms, int64_t max_ms, uint64_t *rng);

#endif
