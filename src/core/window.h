/*
 * window.h - weekly windows in a time zone, and the instants they cover.
 *
 * One grammar everywhere (policies, the CLI, the API):
 *
 *     Sat 00:00-Mon 00:00                 the weekend
 *     Mon 19:00-Tue 07:00, Fri 19:00-Mon 07:00
 *     Fri 19:00-Fri 07:00                 6 days 12 hours: see below
 *
 * A window is a start (day and local time) and an end (day and local
 * time); days are Mon Tue Wed Thu Fri Sat Sun (any case), times HH:MM on
 * the 24-hour clock (00:00..23:59).  The end is the next time the end comes
 * round STRICTLY AFTER the start: "Fri 19:00-Fri 07:00" runs from Friday
 * evening to the next Friday morning (156 h), and an end equal to its start
 * ("Mon 00:00-Mon 00:00") is a whole week.  Windows are separated by
 * commas; spaces around the '-' and ',' are allowed.
 *
 * Cloud Custodian's offhours tag form parses into the same type:
 *
 *     off=(M-F,19);on=(M-F,7);tz=Europe/London
 *     off=[(M-F,21),(U,18)];on=[(M-F,6),(U,10)];tz=pt
 *
 * days M T W H F S U (H Thursday, S Saturday, U Sunday), a range "M-F" (one
 * that wraps, "F-M", is Fri Sat Sun Mon), hours 0..23, a list in [...], any
 * case, quotes around the whole value and empty ';' pieces ignored, as
 * Custodian does.  Each "off" time starts a window that ends at the next
 * "on" time after it.  tz= is an IANA name or one of Custodian's aliases
 * (pt, et, ct, mt, at, gmt, bst, cet, ist, it, jst, kst, sgt, aet, brt,
 * utc and the -st and -dt forms of the US ones), stored as the IANA name.  The policy's
 * default schedule forms ("", "on", "off") are refused: they mean the
 * policy's defaults, which this type does not know.
 *
 * In time: a window's local start and end become instants by core/tz's
 * rule (a time in the spring-forward gap moves forward by the gap; a time
 * in the autumn overlap is the earlier instant), so a Europe/London
 * "Sat 00:00-Mon 00:00" lasts 49 h over the October change and 47 h over
 * the March one.  A window whose end falls before its start because of a
 * gap (a window inside the missing hour) is empty that week.
 */
#ifndef TW_CORE_WINDOW_H
#define TW_CORE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/tz.h"

#define TW_WINDOWS_MAX 64            /* windows in one list */
#define TW_WEEK_MIN 10080            /* minutes in a week */
#define TW_WINDOW_PERIOD_MAX_DAYS 3660 /* the longest period tw_windows_instants takes */

struct tw_window {
    uint16_t start_min;          /* minute of the week from Monday 00:00, 0..10079 */
    uint16_t len_min;            /* wall-clock minutes, 1..10080 */
};

struct tw_windows {
    size_t n;                            /* windows in w */
    struct tw_window w[TW_WINDOWS_MAX];
    char tz[TW_TZ_NAME_MAX];             /* the zone the text named ("" when none) */
};

/* A half-open interval of instants [from_ns, to_ns). */
struct tw_interval {
    int64_t from_ns;
    int64_t to_ns;
};

/*
 * Parses LEN bytes at BUF in the grammar above into OUT (reset first; tz
 * is left ""); TW_EPARSE with the byte (ERR's column) and what was
 * expected there ("at byte 5: expected a time HH:MM"), TW_ERANGE past
 * TW_WINDOWS_MAX windows.
 */
enum tw_err tw_windows_parse(const char *buf, size_t len, struct tw_windows *out,
                             struct tw_error *err);

/* Parses a Cloud Custodian offhours tag value (above) into OUT, windows
 * united (tw_windows_union); errors as tw_windows_parse. */
enum tw_err tw_windows_parse_custodian(const char *buf, size_t len, struct tw_windows *out,
                                       struct tw_error *err);

/*
 * Writes W in the grammar ("Sat 00:00-Mon 00:00, Wed 22:00-Thu 04:00"),
 * which tw_windows_parse reads back to the same windows; false (OUT "")
 * when OUTLEN is too small (21 bytes a window, the NUL included, always suffice).
 */
bool tw_windows_format(const struct tw_windows *w, char *out, size_t outlen);

/* Unites overlapping and touching windows of W on the weekly wall clock,
 * sorted by start; a list that covers the whole week becomes the one
 * window "Mon 00:00-Mon 00:00". */
void tw_windows_union(struct tw_windows *w);

/*
 * The instants that W's windows cover in zone Z within [FROM_NS, TO_NS):
 * sorted, disjoint, non-touching intervals (overlapping windows united),
 * each clipped to the period, in a new array *OUT (caller frees; NULL when
 * *N is 0).  TW_EINVAL when TO_NS < FROM_NS, TW_ERANGE for a period longer
 * than TW_WINDOW_PERIOD_MAX_DAYS or one at the end of the instant range,
 * TW_ENOMEM.
 */
enum tw_err tw_windows_instants(const struct tw_windows *w, const struct tw_tz *z,
                                int64_t from_ns, int64_t to_ns, struct tw_interval **out,
                                size_t *n, struct tw_error *err);

/* The exact time W covers in Z within [FROM_NS, TO_NS), in nanoseconds:
 * the sum of tw_windows_instants' intervals.  Errors as that. */
enum tw_err tw_windows_elapsed(const struct tw_windows *w, const struct tw_tz *z,
                               int64_t from_ns, int64_t to_ns, int64_t *ns,
                               struct tw_error *err);

#endif
