/*
 * tz.h - IANA time zones from TZif files (RFC 8536, versions 1 to 4).
 *
 * A zone is parsed from the bytes of its TZif file (buffer and length; no
 * file is read here: src/app/tzload.h reads $TZDIR/NAME, else
 * /usr/share/zoneinfo/NAME).  Version 1 files use their 32-bit table;
 * version 2+ files their 64-bit table and the POSIX TZ string of their
 * footer ("GMT0BST,M3.5.0/1,M10.5.0", "<+1245>-12:45<+1345>,M9.5.0/2:45,
 * M4.1.0/3:45", "<+01>-1"), which gives the offset for every instant after
 * the table's last transition: Debian's files stop their tables in 2037 (or
 * earlier, "slim" files), so the footer is what answers for later
 * instants.  Version 3's footer extensions are read: transition times from
 * -167 to 167 hours ("M3.5.0/-1", "M10.5.0/25") and daylight saving time
 * all year.  Files with leap seconds ("right/" zones) are refused: tierwise
 * counts POSIX time.  Before the first transition, time type 0 applies.
 *
 * Local (wall-clock) time to instant, the rule used everywhere in
 * tierwise (it is Python's and PEP 495's fold=0):
 *   - a local time that occurs once maps to that instant;
 *   - a local time that occurs twice (the autumn overlap, when clocks go
 *     back) maps to the EARLIER instant, the one with the offset in force
 *     before the change;
 *   - a local time that does not occur (the spring-forward gap) is read
 *     with the offset in force before the change, which moves it FORWARD
 *     by the size of the gap: Europe/London 2026-03-29 01:30 becomes
 *     01:30 UTC, shown as 02:30 BST.
 * Local times are given as "local nanoseconds": the civil fields read as if
 * they were UTC (tw_civil_to_ns), see time.h.
 */
#ifndef TW_CORE_TZ_H
#define TW_CORE_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/time.h"

#define TW_TZ_NAME_MAX 128      /* bytes of a zone name with its NUL */
#define TW_TZ_ABBR_MAX 16       /* bytes of an abbreviation with its NUL */
#define TW_TZ_FILE_MAX (256 * 1024) /* a bigger TZif file is refused */

/* A zone; opaque, immutable once parsed, safe to share between threads. */
struct tw_tz;

/* What the clocks of a zone say at one instant. */
struct tw_tz_info {
    int32_t utoff_s;            /* seconds east of UTC (London summer: 3600) */
    bool is_dst;                /* daylight saving time in effect */
    char abbr[TW_TZ_ABBR_MAX];  /* "BST", "+1345", "LMT" */
};

/* How a local time maps to instants (see the rule above). */
enum tw_tz_local {
    TW_TZ_LOCAL_UNIQUE = 0,   /* occurs once */
    TW_TZ_LOCAL_OVERLAP,      /* occurs twice; the earlier instant was taken */
    TW_TZ_LOCAL_GAP           /* does not occur; moved forward by the gap */
};

/*
 * Parses LEN bytes at BUF (a whole TZif file) as the zone NAME (kept for
 * messages and tw_tz_name; NULL or "" allowed) into *OUT, which the caller
 * frees with tw_tz_free.  A bad file fails with TW_EPARSE, saying what is
 * wrong and at which byte offset (also ERR's column); a footer TZ string
 * that does not parse fails saying where in it.  TW_EUNSUPPORTED for leap
 * second files and versions after 4, TW_ENOMEM when out of memory.
 */
enum tw_err tw_tz_parse(const char *name, const void *buf, size_t len, struct tw_tz **out,
                        struct tw_error *err);

/*
 * A zone from a POSIX TZ string alone ("UTC0", "EST5EDT,M3.2.0,M11.1.0",
 * "<+0330>-3:30"), LEN bytes at BUF, with the version 3 extensions.  DST
 * without a rule is refused (zic always writes one).  TW_EPARSE with the
 * offset in the string.
 */
enum tw_err tw_tz_from_posix(const char *buf, size_t len, struct tw_tz **out,
                             struct tw_error *err);

/* Frees Z (NULL allowed). */
void tw_tz_free(struct tw_tz *z);

/* The name given to tw_tz_parse, or the TZ string of tw_tz_from_posix. */
const char *tw_tz_name(const struct tw_tz *z);

/* The offset, DST flag and abbreviation in force at instant T_NS. */
void tw_tz_at(const struct tw_tz *z, int64_t t_ns, struct tw_tz_info *out);

/*
 * The first instant after T_NS (strictly) at which the offset, the DST
 * flag or the abbreviation changes, into *AT_NS; false when there is none
 * within the instant range.  Entries of the table that change nothing are
 * skipped.
 */
bool tw_tz_next_transition(const struct tw_tz *z, int64_t t_ns, int64_t *at_ns);

/*
 * The instant of the local time LOCAL_NS (civil fields read as UTC) by the
 * rule above, into *T_NS; *KIND (NULL allowed) says which case applied.
 * TW_ERANGE when the instant would be outside the instant range.
 */
enum tw_err tw_tz_local_to_ns(const struct tw_tz *z, int64_t local_ns, int64_t *t_ns,
                              enum tw_tz_local *kind);

/* As tw_tz_local_to_ns, from civil fields; TW_EINVAL when C is not a valid
 * civil time. */
enum tw_err tw_tz_civil_to_ns(const struct tw_tz *z, const struct tw_civil *c,
                              int64_t *t_ns, enum tw_tz_local *kind);

/* The local civil time at instant T_NS, with its offset info (INFO may be
 * NULL). */
void tw_tz_ns_to_civil(const struct tw_tz *z, int64_t t_ns, struct tw_civil *c,
                       struct tw_tz_info *info);

#endif
