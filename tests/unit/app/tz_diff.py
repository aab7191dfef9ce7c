#!/usr/bin/env python3
"""tz_diff.py - checks tierwise's answers about time zones against Python's zoneinfo.

Used only by tests/unit/app/test_tz_diff.c.  Reads the file named on the command
line, written by that test, with lines

    Z <zone>                                  the zone of the lines that follow
    U <utc seconds> <offset s> <isdst 0|1> <abbr>
    L <Y> <M> <D> <h> <m> <s> <utc seconds> <unique|gap|overlap>

U: tierwise's offset, DST flag and abbreviation at an instant.  L: the instant
tierwise gives a local time, by its rule (PEP 495's fold=0: an overlap takes the
earlier instant, a gap time is read with the offset before the change, moving it
forward).  Prints each disagreement and a summary line; exits 1 if any.
"""
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def main(path):
    zone = None
    counts = {"U": 0, "L": 0}
    zones = set()
    bad = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            w = line.split()
            if not w:
                continue
            if w[0] == "Z":
                zone = ZoneInfo(w[1])
                zones.add(w[1])
                continue
            counts[w[0]] += 1
            if w[0] == "U":
                t, off, dst, abbr = int(w[1]), int(w[2]), w[3] == "1", w[4]
                d = (EPOCH + timedelta(seconds=t)).astimezone(zone)
                want = (int(d.utcoffset().total_seconds()), d.dst() != timedelta(0), d.tzname())
                if want != (off, dst, abbr):
                    bad += 1
                    print(f"{zone.key} at {t} ({d.isoformat()}): tierwise {off} {int(dst)} {abbr}, "
                          f"zoneinfo {want[0]} {int(want[1])} {want[2]}")
            else:
                y, mo, da, h, mi, s = map(int, w[1:7])
                got_t, got_kind = int(w[7]), w[8]
                d0 = datetime(y, mo, da, h, mi, s, tzinfo=zone, fold=0)
                d1 = d0.replace(fold=1)
                t0 = int((d0 - EPOCH).total_seconds())
                t1 = int((d1 - EPOCH).total_seconds())
                back = (EPOCH + timedelta(seconds=t0)).astimezone(zone).replace(tzinfo=None)
                if back != d0.replace(tzinfo=None):
                    kind = "gap"
                elif t1 != t0:
                    kind = "overlap"
                else:
                    kind = "unique"
                if (t0, kind) != (got_t, got_kind):
                    bad += 1
                    print(f"{zone.key} local {d0.replace(tzinfo=None).isoformat()}: tierwise "
                          f"{got_t} {got_kind}, zoneinfo {t0} {kind}")
    print(f"compared {counts['U']} instants (UTC to local) and {counts['L']} local times "
          f"(local to UTC) in {len(zones)} zones: {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
