#!/usr/bin/env python3
"""ics-check.py FILE - reads an iCalendar file (RFC 5545) the strict way,
independently of tierwise, and prints its events as JSON (one object per
VEVENT: its properties' names to their unescaped TEXT values).

Checked: every line ends in CRLF; no content line is longer than 75 octets;
a folded line's continuation starts with one space and each physical line
is whole UTF-8 (a fold never splits a sequence); the components nest
(VCALENDAR around VEVENTs) with VERSION:2.0 and a PRODID and at least one
component (an empty plan's VTIMEZONE, say); each VEVENT has
UID, DTSTAMP, DTSTART and DTEND, the times in UTC ("YYYYMMDDTHHMMSSZ");
TEXT values have only the escapes \\\\ \\; \\, \\n (and \\N) and no bare ; or ,.
When python3's icalendar is installed the file is read by it as well and
its events' UIDs and SUMMARYs must agree.

Exit 0 when all holds (the JSON on stdout), 1 with the problems, 2 on usage.
"""
import json
import re
import sys

TEXT_PROPS = {"SUMMARY", "DESCRIPTION", "UID", "X-WR-CALNAME", "LOCATION", "COMMENT"}
UTC_RE = re.compile(r"^[0-9]{8}T[0-9]{6}Z$")


def unescape(v, where, problems):
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\":
            n = v[i + 1] if i + 1 < len(v) else ""
            if n in ("\\", ";", ","):
                out.append(n)
            elif n in ("n", "N"):
                out.append("\n")
            else:
                problems.append(f"{where}: a backslash before {n!r} is no TEXT escape")
            i += 2
            continue
        if c in ";,":
            problems.append(f"{where}: a bare {c!r} in a TEXT value (must be escaped)")
        out.append(c)
        i += 1
    return "".join(out)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    data = open(sys.argv[1], "rb").read()
    problems = []
    if not data.endswith(b"\r\n"):
        problems.append("the file does not end with CRLF")
    raw = data.split(b"\r\n")
    if raw and raw[-1] == b"":
        raw.pop()
    logical = []
    for n, line in enumerate(raw, 1):
        if b"\n" in line or b"\r" in line:
            problems.append(f"line {n}: a bare CR or LF (lines end in CRLF)")
        if len(line) > 75:
            problems.append(f"line {n}: {len(line)} octets (at most 75)")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.append(f"line {n}: not whole UTF-8 (a fold inside a sequence?): {e}")
            text = line.decode("utf-8", "replace")
        if text.startswith(" ") or text.startswith("\t"):
            if not logical:
                problems.append(f"line {n}: a continuation with nothing before it")
                continue
            logical[-1] = (logical[-1][0], logical[-1][1] + text[1:])
        else:
            logical.append((n, text))
    stack, events, cal = [], [], {}
    n_components = 0
    cur = None
    for n, text in logical:
        m = re.match(r"^([A-Za-z0-9-]+)((?:;[^:]*)?):(.*)$", text)
        if not m:
            problems.append(f"line {n}: not NAME[;PARAMS]:VALUE: {text[:60]!r}")
            continue
        name, value = m.group(1).upper(), m.group(3)
        if name == "BEGIN":
            if stack == ["VCALENDAR"]:
                n_components += 1
            stack.append(value)
            if value == "VEVENT":
                if stack[:-1] != ["VCALENDAR"]:
                    problems.append(f"line {n}: a VEVENT outside the VCALENDAR")
                cur = {}
            continue
        if name == "END":
            if not stack or stack[-1] != value:
                problems.append(f"line {n}: END:{value} closes {stack[-1] if stack else 'nothing'}")
            else:
                stack.pop()
            if value == "VEVENT" and cur is not None:
                for req in ("UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY"):
                    if req not in cur:
                        problems.append(f"line {n}: a VEVENT without {req}")
                for t in ("DTSTAMP", "DTSTART", "DTEND"):
                    if t in cur and not UTC_RE.match(cur[t]):
                        problems.append(f"line {n}: {t} {cur[t]!r} is not a UTC time")
                events.append(cur)
                cur = None
            continue
        if name in TEXT_PROPS:
            value = unescape(value, f"line {n} {name}", problems)
        if cur is not None:
            cur[name] = value
        elif stack == ["VCALENDAR"]:
            cal[name] = value
    if stack:
        problems.append(f"unclosed: {', '.join(stack)}")
    if n_components == 0:
        problems.append("the VCALENDAR holds no component (RFC 5545: icalbody is 1*component)")
    if cal.get("VERSION") != "2.0":
        problems.append("the VCALENDAR has no VERSION:2.0")
    if "PRODID" not in cal:
        problems.append("the VCALENDAR has no PRODID")
    try:
        import icalendar  # optional: a second, independent reader
    except ImportError:
        icalendar = None
    if icalendar is not None:
        ical = icalendar.Calendar.from_ical(data)
        theirs = [(str(e.get("UID")), str(e.get("SUMMARY"))) for e in ical.walk("VEVENT")]
        ours = [(e.get("UID"), e.get("SUMMARY")) for e in events]
        if theirs != ours:
            problems.append(f"icalendar reads other events: {theirs[:3]} vs {ours[:3]}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    json.dump({"calendar": cal, "events": events}, sys.stdout, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
