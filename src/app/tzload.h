/*
 * tzload.h - reading a time zone by its IANA name from the system's tzdata.
 *
 * core/tz parses TZif bytes and reads no file; this reads
 * $TZDIR/NAME (else /usr/share/zoneinfo/NAME, Debian's package tzdata)
 * with a ceiling of TW_TZ_FILE_MAX bytes and hands it to tw_tz_parse.
 */
#ifndef TW_APP_TZLOAD_H
#define TW_APP_TZLOAD_H

#include "core/err.h"
#include "core/tz.h"

#define TW_TZDIR_DEFAULT "/usr/share/zoneinfo"

/*
 * Loads the zone NAME ("Europe/London", "UTC") into *OUT (free with
 * tw_tz_free).  A name that is empty, starts with '/', contains "..", or
 * holds characters no IANA name has is refused with TW_EINVAL, so the
 * name can't reach outside the zone folder.  TW_ENOENT when there is no
 * such zone (the message names the folder searched and says to install
 * tzdata), TW_EIO, TW_EPARSE/TW_EUNSUPPORTED from tw_tz_parse.
 */
enum tw_err tw_tz_load(const char *name, struct tw_tz **out, struct tw_error *err);

#endif
