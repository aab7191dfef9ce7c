#!/usr/bin/env python3
"""savings_model.py - an independent model of `tierwise savings` (the
what-if calculator), and the differential test that runs random cases
through the real command and compares.

The model uses no tierwise code: weekly windows are read from their text
here, local times become instants with the standard library's zoneinfo
(PEP 495, fold=0: a time in the autumn overlap is the earlier instant, a
time in the spring gap is read with the offset before the change), and
money is fractions.Fraction, exact.  What it computes, as README
"tierwise savings" says:

  the period      midnight of date A to midnight of date B in the zone
  a window        each week: the local start (day, HH:MM) and the local end
                  (the next time the end comes round strictly after the
                  start, a whole week when they are equal), each made an
                  instant; empty when the end falls before the start
  hours           the union of every window's instants, clipped to the
                  period, summed
  saving per disk (from - to) x seconds / (730 x 3600) - transactions
  transactions    none while deallocated; with an I/O rate (--io-per-hour,
                  --io-size) on Standard SSD each I/O counts its 256 KiB
                  units, on Standard HDD one (S4 outside eastus and
                  northeurope: 16 KiB units, at most 450,000 an hour),
                  priced at the highest of the target's own, the family's
                  4-tier and the tier-less "Disk Transactions" meter in the
                  file, per 10,000, over the seconds
  baseline        from x the period's seconds / (730 x 3600); with_plan
                  baseline - saving
  total           saving (and baseline) per disk, unrounded, x count
  rounding        once, to the currency's minor unit, half away from zero;
                  hours to 6 decimals

Usage:
  savings_model.py model --from-price 16.16 --to-price 7.16 --currency GBP
                   --window "Sat 00:00-Mon 00:00" [--window ...] [--tz ZONE]
                   --period 2026-01-01..2027-01-01 [--count N]
      prints the model's figures as JSON
  savings_model.py diff --cli TIERWISE --work DIR [--seed S] [--cases N]
      runs N random cases through `TIERWISE savings --json` and compares
      seconds, hours and the unrounded and rounded savings exactly; prints
      the seed; status 0 when every case agrees, 1 otherwise
"""

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import time
from decimal import Decimal
from fractions import Fraction

try:
    from zoneinfo import ZoneInfo
except ImportError:  # pragma: no cover
    print("savings_model: no zoneinfo module (Python 3.9+)", file=sys.stderr)
    sys.exit(77)

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEK_MIN = 7 * 24 * 60
HOURS_PER_MONTH = 730
DECIMALS = {"JPY": 0, "KRW": 0}
UTC = dt.timezone.utc


def parse_windows(text):
    """[(start_minute_of_week, length_minutes)] of a window text."""
    out = []
    for piece in text.split(","):
        piece = piece.strip()
        a, b = [s.strip() for s in piece.split("-")]
        mins = []
        for part in (a, b):
            day, hm = part.split()
            h, m = hm.split(":")
            mins.append(DAYS.index(day.lower()) * 1440 + int(h) * 60 + int(m))
        length = (mins[1] - mins[0]) % WEEK_MIN
        out.append((mins[0], length if length else WEEK_MIN))
    return out


def instant(naive, zone):
    """Seconds since 1970 of a local wall-clock time (fold=0)."""
    if zone is None:
        return int(naive.replace(tzinfo=UTC).timestamp())
    return int(naive.replace(tzinfo=zone, fold=0).timestamp())


def parse_date(s):
    y, m, d = s.split("-")
    return dt.datetime(int(y), int(m), int(d))


def covered_seconds(windows, zone, p0, p1):
    """The seconds the windows cover within [p0, p1) (instants)."""
    first = dt.datetime.fromtimestamp(p0, zone or UTC).replace(tzinfo=None)
    last = dt.datetime.fromtimestamp(p1, zone or UTC).replace(tzinfo=None)
    monday = dt.datetime(first.year, first.month, first.day) - dt.timedelta(
        days=first.weekday() + 7)
    spans = []
    while monday <= last + dt.timedelta(days=1):
        for start, length in windows:
            ls = monday + dt.timedelta(minutes=start)
            le = ls + dt.timedelta(minutes=length)
            a, b = max(instant(ls, zone), p0), min(instant(le, zone), p1)
            if b > a:
                spans.append((a, b))
        monday += dt.timedelta(days=7)
    spans.sort()
    total, cur = 0, None
    for a, b in spans:
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
    if cur:
        total += cur[1] - cur[0]
    return total


def round_half_away(x, decimals):
    """The Fraction X rounded to DECIMALS places, half away from zero."""
    q = Fraction(10) ** decimals
    n = abs(x) * q
    whole = n.numerator // n.denominator
    if n - whole >= Fraction(1, 2):
        whole += 1
    r = Fraction(whole) / q
    return -r if x < 0 else r


def model(from_price, to_price, currency, windows_texts, tz, period, count, tx=None):
    """TX: None (no I/O) or (units an hour, price per 10,000 as text)."""
    zone = ZoneInfo(tz) if tz else None
    a, b = period.split("..")
    p0 = instant(parse_date(a), zone)
    p1 = instant(parse_date(b), zone)
    wins = [w for t in windows_texts for w in parse_windows(t)]
    secs = covered_seconds(wins, zone, p0, p1)
    diff = Fraction(Decimal(from_price)) - Fraction(Decimal(to_price))
    txc = Fraction(0)
    if tx:
        txc = Fraction(tx[0]) * Fraction(secs, 3600) * Fraction(Decimal(tx[1])) / 10000
    saving = diff * secs / (HOURS_PER_MONTH * 3600) - txc
    baseline = Fraction(Decimal(from_price)) * (p1 - p0) / (HOURS_PER_MONTH * 3600)
    total = saving * count
    d = DECIMALS.get(currency, 2)
    return {
        "transactions_unrounded": round_half_away(txc, 12),
        "transactions": round_half_away(txc, d),
        "with_plan": round_half_away(baseline - saving, d),
        "total_baseline": round_half_away(baseline * count, d),
        "seconds": secs,
        "hours": Fraction(secs, 3600),
        "saving_unrounded": round_half_away(saving, 12),
        "saving": round_half_away(saving, d),
        "total_unrounded": round_half_away(total, 12),
        "total": round_half_away(total, d),
        "baseline": round_half_away(baseline, d),
        "decimals": d,
    }


def fraction_text(f, digits):
    """F (already rounded to DIGITS places) as a decimal string."""
    q = 10 ** digits
    n = f * q
    assert n.denominator == 1
    v = abs(n.numerator)
    s = str(v).rjust(digits + 1, "0")
    s = s[:-digits] + "." + s[-digits:] if digits else s
    return ("-" if n.numerator < 0 else "") + s


# ---- the differential test --------------------------------------------------

ZONES = [None, "Europe/London", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham",
         "Europe/Berlin", "Asia/Kolkata"]
PAIRS = [("P10", "E10"), ("P30", "E30"), ("P4", "S4"), ("E20", "S20"), ("P6", "E6"),
         ("P15", "E15")]
PRODUCT = {"P": "Premium SSD Managed Disks", "E": "Standard SSD Managed Disks",
           "S": "Standard HDD Managed Disks"}
CURRENCIES = ["GBP", "USD", "EUR", "JPY"]


def price_text(rng, lo, hi):
    """A price from LO to HI with 0 to 6 decimals, as the API writes it."""
    places = rng.choice([0, 1, 2, 2, 3, 4, 6])
    v = Decimal(rng.randint(int(lo * 10 ** places), int(hi * 10 ** places))) / (10 ** places)
    return format(v, "f") if places else str(int(v))


def tx_meters(tier, red):
    """The meters that may price TIER's transactions in RED: its own, the
    family's 4-tier one, the tier-less one."""
    four = tier[0] + "4"
    names = ["%s %s Disk Operations" % (tier, red)]
    if tier != four:
        names.append("%s %s Disk Operations" % (four, red))
    names.append("Disk Transactions %s Disk Operations" % red)
    return names


def tx_model(tier, red, region, io_per_hour, io_size, ops):
    """(units an hour, price text) of a running VM's I/O on TIER, or None
    when the file has none of its meters."""
    present = [ops[(tier[0], m)] for m in tx_meters(tier, red) if (tier[0], m) in ops]
    if not present:
        return None
    price = max(present, key=lambda p: Fraction(Decimal(p)))
    if tier[0] == "E":
        per_io = max(1, -(-io_size // 262144))
        units = io_per_hour * per_io
    elif region in ("eastus", "northeurope") or tier != "S4":
        units = io_per_hour  # S20 and every size there: one an I/O
    else:
        units = min(io_per_hour * max(1, -(-io_size // 16384)), 450000)
    return units, price


def make_price_file(rng, path, region, currency):
    """A Retail Prices page with a monthly price for every tier of PAIRS
    (P and E also in ZRS) and, now and then, each transaction meter that
    may price a target; returns ({tier or tier ZRS: price text},
    {(family letter, meter): price text})."""
    prices, items, ops = {}, [], {}
    for f, t in PAIRS:
        for tier in (f, t):
            if tier in prices:
                continue
            scale = {"P": 30, "E": 12, "S": 6}[tier[0]] * (150 if currency == "JPY" else 1)
            prices[tier] = price_text(rng, 0.5 * scale, 3 * scale)
    # Now and then a "cheaper" tier that costs more: a negative saving.
    if rng.random() < 0.15:
        prices["E10"] = price_text(rng, 40 * (150 if currency == "JPY" else 1),
                                   60 * (150 if currency == "JPY" else 1))
    for tier in list(prices):
        if tier[0] in "PE":
            prices[tier + " ZRS"] = price_text(rng, 1, 3 * {"P": 40, "E": 16}[tier[0]] *
                                               (150 if currency == "JPY" else 1))
    for _, t in PAIRS:
        for red in (["LRS", "ZRS"] if t[0] == "E" else ["LRS"]):
            for m in tx_meters(t, red):
                if (t[0], m) not in ops and rng.random() < 0.6:
                    # 0.0001 to 0.006 (never 0: a zero price is not used)
                    ops[(t[0], m)] = format(Decimal(rng.randint(1, 60)) /
                                            (10 ** rng.choice([4, 5])), "f")
    for key, p in prices.items():
        tier, red = (key.split() + ["LRS"])[:2]
        items.append({"currencyCode": currency, "tierMinimumUnits": 0, "retailPrice": json_num(p),
                      "unitPrice": json_num(p), "armRegionName": region,
                      "effectiveStartDate": "2020-01-01T00:00:00Z",
                      "meterName": "%s %s Disk" % (tier, red), "productName": PRODUCT[tier[0]],
                      "skuName": "%s %s" % (tier, red), "serviceName": "Storage",
                      "unitOfMeasure": "1/Month", "type": "Consumption"})
    for (letter, m), p in ops.items():
        items.append({"currencyCode": currency, "tierMinimumUnits": 0, "retailPrice": json_num(p),
                      "unitPrice": json_num(p), "armRegionName": region,
                      "effectiveStartDate": "2020-01-01T00:00:00Z", "meterName": m,
                      "productName": PRODUCT[letter], "skuName": m.replace(" Disk Operations", ""),
                      "serviceName": "Storage", "unitOfMeasure": "10K", "type": "Consumption"})
    page = {"BillingCurrency": currency, "Items": items, "NextPageLink": None,
            "Count": len(items)}
    text = json.dumps(page, indent=1)
    # Prices as the API writes them: the number's own digits.
    for p in list(prices.values()) + list(ops.values()):
        text = text.replace('"@@%s@@"' % p, p)
    with open(path, "w") as fh:
        fh.write(text)
    return prices, ops


def json_num(p):
    return "@@%s@@" % p


def random_time(rng, zone):
    """HH:MM, often near the hours clocks change at."""
    r = rng.random()
    if r < 0.35:
        h = rng.choice([0, 1, 2, 3, 4])  # where most zones change
        m = rng.choice([0, 15, 30, 45, 59, rng.randint(0, 59)])
    elif r < 0.5:
        h, m = rng.choice([(2, 45), (3, 45), (1, 30), (2, 30), (2, 0), (3, 0)])
    else:
        h, m = rng.randint(0, 23), rng.choice([0, 0, 30, rng.randint(0, 59)])
    return "%02d:%02d" % (h, m)


def random_window(rng, zone):
    r = rng.random()
    if r < 0.08:
        return "Fri 20:00-Fri 19:00"  # 167 hours
    if r < 0.12:
        d = rng.choice(DAYS).capitalize()
        t = random_time(rng, zone)
        return "%s %s-%s %s" % (d, t, d, t)  # the whole week
    d1 = rng.randrange(7)
    d2 = (d1 + rng.choice([0, 0, 1, 1, 2, 3, 6])) % 7
    day = lambda i: rng.choice([DAYS[i].capitalize(), DAYS[i], DAYS[i].upper()])
    sep = rng.choice(["-", " - ", "- "])
    return "%s %s%s%s %s" % (day(d1), random_time(rng, zone), sep, day(d2),
                             random_time(rng, zone))


def random_period(rng):
    if rng.random() < 0.5:
        # Around a change: March, April, September, October, November.
        y = rng.randint(2024, 2031)
        mo = rng.choice([3, 4, 9, 10, 11])
        start = dt.date(y, mo, 1) + dt.timedelta(days=rng.randint(-3, 27))
        days = rng.choice([1, 2, 3, 7, 8, 14, 31, rng.randint(1, 60)])
    else:
        start = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 8 * 365))
        days = rng.choice([rng.randint(1, 40), rng.randint(28, 400), 365, 366,
                           rng.randint(300, 1100)])
    return "%s..%s" % (start.isoformat(), (start + dt.timedelta(days=days)).isoformat())


def compare(case, got, want):
    """The differences between the command's JSON and the model, in words."""
    bad = []
    if got.get("seconds_downgraded") != want["seconds"]:
        bad.append("seconds_downgraded %r, model %r" % (got.get("seconds_downgraded"),
                                                        want["seconds"]))
    h = got.get("hours_downgraded")
    wh = round_half_away(want["hours"], 6)  # micro-hours
    if not isinstance(h, (int, float)) or abs(Fraction(h) - wh) > Fraction(1, 10 ** 9):
        bad.append("hours_downgraded %r, model %s" % (h, float(wh)))
    pd, tot = got.get("per_disk", {}), got.get("total", {})
    pairs = [("per_disk.saving_unrounded", pd.get("saving_unrounded"), want["saving_unrounded"], 12),
             ("per_disk.saving", pd.get("saving"), want["saving"], want["decimals"]),
             ("per_disk.baseline", pd.get("baseline"), want["baseline"], want["decimals"]),
             ("per_disk.with_plan", pd.get("with_plan"), want["with_plan"], want["decimals"]),
             ("per_disk.transactions", pd.get("transactions"), want["transactions"],
              want["decimals"]),
             ("per_disk.transactions_unrounded", pd.get("transactions_unrounded"),
              want["transactions_unrounded"], 12),
             ("total.baseline", tot.get("baseline"), want["total_baseline"], want["decimals"]),
             ("total.saving_unrounded", tot.get("saving_unrounded"), want["total_unrounded"], 12),
             ("total.saving", tot.get("saving"), want["total"], want["decimals"])]
    for name, g, w, digits in pairs:
        ok = isinstance(g, str)
        if ok:
            frac = g.split(".")[1] if "." in g else ""
            ok = len(frac) == digits and Fraction(Decimal(g)) == w
        if not ok:
            bad.append("%s %r, model %s" % (name, g, fraction_text(w, digits)))
    if tot.get("disks") != case["count"]:
        bad.append("total.disks %r, asked %d" % (tot.get("disks"), case["count"]))
    return bad


def self_check():
    """The model on the issue's field example, and the comparison catching
    a wrong figure: a model or a check that can't fail would pass
    anything."""
    m = model("16.16", "7.16", "GBP", ["Sat 00:00-Mon 00:00"], "Europe/London",
              "2026-01-01..2027-01-01", 70)
    assert m["seconds"] == 2496 * 3600, m
    assert fraction_text(m["saving"], 2) == "30.77", m
    assert fraction_text(m["total"], 2) == "2154.08", m
    assert fraction_text(m["saving_unrounded"], 12) == "30.772602739726", m
    # A London weekend over each change: 47 h in March, 49 h in October.
    assert model("1", "0", "GBP", ["Sat 00:00-Mon 00:00"], "Europe/London",
                 "2026-03-28..2026-03-30", 1)["seconds"] == 47 * 3600
    assert model("1", "0", "GBP", ["Sat 00:00-Mon 00:00"], "Europe/London",
                 "2026-10-24..2026-10-26", 1)["seconds"] == 49 * 3600
    assert round_half_away(Fraction(-2345, 1000), 2) == Fraction(-235, 100)
    assert fraction_text(m["with_plan"], 2) == "163.15", m
    assert fraction_text(m["total_baseline"], 2) == "13574.40", m
    # 3,600 I/Os an hour of 256 KiB at 0.001 per 10,000 over 2,496 hours.
    io = model("16.16", "7.16", "GBP", ["Sat 00:00-Mon 00:00"], "Europe/London",
               "2026-01-01..2027-01-01", 70, (3600, "0.001"))
    assert fraction_text(io["transactions_unrounded"], 12) == "0.898560000000", io
    assert fraction_text(io["saving_unrounded"], 12) == "29.874042739726", io
    assert tx_model("S4", "LRS", "westeurope", 10 ** 6, 65536,
                    {("S", "S4 LRS Disk Operations"): "0.0005"}) == (450000, "0.0005")
    assert tx_model("E30", "LRS", "uksouth", 10, 262145,
                    {("E", "E4 LRS Disk Operations"): "0.002",
                     ("E", "Disk Transactions LRS Disk Operations"): "0.0026"}) == (20, "0.0026")
    assert tx_model("E10", "ZRS", "uksouth", 10, 1, {("E", "E10 LRS Disk Operations"): "1"}) is None
    good = {"seconds_downgraded": m["seconds"], "hours_downgraded": 2496,
            "per_disk": {"saving_unrounded": "30.772602739726", "saving": "30.77",
                         "baseline": fraction_text(m["baseline"], 2), "with_plan": "163.15",
                         "transactions": "0.00", "transactions_unrounded": "0.000000000000"},
            "total": {"disks": 70, "saving_unrounded": fraction_text(m["total_unrounded"], 12),
                      "saving": "2154.08", "baseline": "13574.40"}}
    assert compare({"count": 70}, good, m) == [], compare({"count": 70}, good, m)
    for path, wrong in [("seconds_downgraded", m["seconds"] + 60),
                        ("per_disk.saving", "30.78"), ("total.saving", "2154.09"),
                        ("per_disk.saving_unrounded", "30.772602739727"),
                        ("total.saving_unrounded", "2154.08"),
                        ("per_disk.with_plan", "163.16"), ("total.baseline", "13574.41"),
                        ("per_disk.transactions", "0.01"),
                        ("per_disk.transactions_unrounded", "0.000000000001")]:
        g = json.loads(json.dumps(good))
        if "." in path:
            a, b = path.split(".")
            g[a][b] = wrong
        else:
            g[path] = wrong
        assert compare({"count": 70}, g, m), "a wrong %s went unnoticed" % path


def diff(args):
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % (1 << 31)
    print("savings-diff: seed %d (TW_SEED=%d repeats this run), %d cases" %
          (seed, seed, args.cases), flush=True)
    self_check()
    rng = random.Random(seed)
    os.makedirs(args.work, exist_ok=True)
    books = []
    for i in range(8):
        currency = CURRENCIES[i % len(CURRENCIES)]
        region = rng.choice(["westeurope", "uksouth", "eastus", "australiaeast"])
        path = os.path.join(args.work, "prices-%d.json" % i)
        books.append((path, region, currency, make_price_file(rng, path, region, currency)))
    failures, t0 = 0, time.time()
    for n in range(args.cases):
        path, region, currency, (prices, ops) = rng.choice(books)
        tz = rng.choice(ZONES)
        f, t = rng.choice(PAIRS)
        # ZRS stays ZRS (Premium to Standard SSD only: HDD has no ZRS).
        red = "ZRS" if t[0] == "E" and rng.random() < 0.3 else "LRS"
        io = None
        if rng.random() < 0.35:
            io = (rng.choice([0, 1, 3600, 100000, 5000000]),
                  rng.choice([512, 4096, 16384, 16385, 65536, 262144, 262145, 1048576]))
        texts = []
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            w = random_window(rng, tz)
            if rng.random() < 0.2:
                w += ", " + random_window(rng, tz)
            texts.append(w)
        case = {"count": rng.choice([1, 1, 2, 7, 70, rng.randint(1, 5000)]),
                "period": random_period(rng)}
        cmd = [args.cli, "savings", "--price-file", path, "--region", region, "--currency",
               currency, "--from-tier", f, "--to-tier", t, "--period", case["period"],
               "--count", str(case["count"]), "--json"]
        for w in texts:
            cmd += ["--window", w]
        if tz:
            cmd += ["--tz", tz]
        key = (lambda tier: tier if red == "LRS" else tier + " ZRS")
        if red == "ZRS":
            cmd += ["--from-sku", "Premium_ZRS"]
        tx = None
        if io:
            cmd += ["--io-per-hour", str(io[0]), "--io-size", str(io[1])]
            tx = tx_model(t, red, region, io[0], io[1], ops)
        p = subprocess.run(cmd, capture_output=True, text=True)
        shown = " ".join("'%s'" % c if " " in c else c for c in cmd)
        if io and tx is None:
            # None of the target's transaction meters in the file: refused,
            # never priced at zero.
            if p.returncode != 2 or "no transaction price" not in p.stderr:
                print("case %d: status %d, want 2 (no transaction price): %s\n  %s" %
                      (n, p.returncode, shown, p.stderr.strip()))
                failures += 1
            continue
        want = model(prices[key(f)], prices[key(t)], currency, texts, tz, case["period"],
                     case["count"], tx)
        if p.returncode != 0:
            print("case %d: status %d: %s\n  %s" % (n, p.returncode, shown, p.stderr.strip()))
            failures += 1
            continue
        bad = compare(case, json.loads(p.stdout), want)
        if bad:
            failures += 1
            print("case %d differs: %s" % (n, shown))
            for b in bad:
                print("  " + b)
    print("savings-diff: %d cases, %d differ, %.1f s (seed %d)" %
          (args.cases, failures, time.time() - t0, seed))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("--from-price", required=True)
    m.add_argument("--to-price", required=True)
    m.add_argument("--currency", required=True)
    m.add_argument("--window", action="append", required=True)
    m.add_argument("--tz")
    m.add_argument("--period", required=True)
    m.add_argument("--count", type=int, default=1)
    d = sub.add_parser("diff")
    d.add_argument("--cli", required=True)
    d.add_argument("--work", required=True)
    d.add_argument("--seed", type=int)
    d.add_argument("--cases", type=int, default=300)
    a = ap.parse_args()
    if a.cmd == "model":
        r = model(a.from_price, a.to_price, a.currency, a.window, a.tz, a.period, a.count)
        dec = r["decimals"]
        print(json.dumps({"seconds_downgraded": r["seconds"], "hours_downgraded": float(r["hours"]),
                          "per_disk": {"saving": fraction_text(r["saving"], dec),
                                       "saving_unrounded": fraction_text(r["saving_unrounded"], 12)},
                          "total": {"disks": a.count, "saving": fraction_text(r["total"], dec),
                                    "saving_unrounded": fraction_text(r["total_unrounded"], 12)}},
                         indent=2))
        return 0
    return diff(a)


if __name__ == "__main__":
    sys.exit(main())
