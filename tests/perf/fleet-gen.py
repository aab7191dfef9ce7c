#!/usr/bin/env python3
"""The benchmark fleet, written straight into a tierwise database (schema 5).

  fleet-gen.py DB VMS [--month YYYY-MM]
      the fleet of savings-scale.sh (and plan-scale.sh through it): VMS VMs
      (vm-00001 ...) in 4 regions, 200 resource groups of 10 subscriptions,
      each with an OS disk (Premium P10) and four data disks (Premium P15,
      P20, P30, Standard SSD E10), and the 30 days before --month (default
      2026-12) of power states: each VM deallocated every night at its own
      hours (off 18..21, on 6..9 UTC), about 61 observations a VM.  The
      same rows as before this file was split out (the same seed).

  fleet-gen.py DB VMS --activity YYYY-MM
      the same VMs and disks with that month (report-scale.sh: 2026-11)
      lived through by a policy that takes every Premium data disk to
      Standard SSD each weekend:
        - power states from the Monday two weeks before the month to its
          end: on each weekday morning, deallocated each evening, so that
          a weekend is one deallocation from Friday evening to Monday;
        - per Premium data disk and weekend whose Monday is in the month
          (the first one began before it): a downgrade to StandardSSD_LRS
          15 minutes after the Friday deallocation and an upgrade back 30
          minutes before the Monday start, done through the executor's
          five moves (planned, checked, sent, verified, done) in
          action_transitions, each verified switch an ARM row in
          disk_sku_history (every disk has a first one when first seen);
        - 1 VM in 50: its third weekend never deallocated, the downgrade
          skipped vm_not_deallocated and the upgrade nothing_to_restore;
        - 1 VM in 100: started out of band on its fourth Saturday
          10:00-14:00, a drift row per downgraded disk for those hours;
        - 1 VM in 1000: the last upgrade failed, the disks still on
          Standard SSD at the month's end with their original recorded
          (disk_originals).
      No results or verdicts (see report-scale.sh).

The schema is tierwise's own (run `tierwise prices import --db DB ...` first:
it creates the database and imports the price snapshot); the rows are written
here with sqlite3.  Prints the rows written per table as JSON on stderr.
"""
import argparse
import datetime
import json
import random
import sqlite3
import sys

REGIONS = ["westeurope", "northeurope", "eastus", "uksouth"]
DISKS = [("os", "Premium_LRS", "P10", 128), ("data", "Premium_LRS", "P15", 256),
         ("data", "Premium_LRS", "P20", 512), ("data", "Premium_LRS", "P30", 1024),
         ("data", "StandardSSD_LRS", "E10", 128)]
# Standard SSD's tier of the same size (what a downgrade lands on).
STANDARD = {128: "E10", 256: "E15", 512: "E20", 1024: "E30"}
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
UTC = datetime.timezone.utc


def ms(t):
    return int((t - EPOCH).total_seconds() * 1000)


def rfc(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc_ms(t):
    """The store's own form of a move's time (strftime('%Y-%m-%dT%H:%M:%fZ'))."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def month_start(text):
    y, m = text.split("-")
    return datetime.datetime(int(y), int(m), 1, tzinfo=UTC)


def next_month(t):
    return t.replace(year=t.year + t.month // 12, month=t.month % 12 + 1)


def fleet(n, snapshot, held):
    """VM and disk rows, the inventory seen 12 hours before SNAPSHOT; HELD
    is {disk id: standard tier} of disks left on Standard SSD."""
    seen = snapshot - datetime.timedelta(hours=12)
    vrows, drows = [], []
    did = 0
    for v in range(1, n + 1):
        sub = "sub-%02d" % (v % 10)
        rg = "rg-%03d" % (v % 200)
        off = 18 + v % 4
        on = 6 + v % 4
        tags = {"env": "dev" if v % 3 else "test",
                "schedule": "off=(M-F,%d);on=(M-F,%d);tz=Europe/London" % (off, on)}
        vrows.append((v, "vm:%d" % v, "vm-%05d" % v, sub, rg, REGIONS[v % 4], "Standard_D4s_v3",
                      json.dumps(tags, sort_keys=True), "r%d" % v, rfc(seen), ms(seen),
                      "running", rfc(seen), ms(seen)))
        for k, (role, sku, tier, size) in enumerate(DISKS):
            did += 1
            if did in held:
                sku, tier = "StandardSSD_LRS", held[did]
            drows.append((did, "d%d" % did, v, "vm-%05d-d%d" % (v, k), role,
                          None if role == "os" else k, sku, size, tier, "None", rfc(seen),
                          ms(seen), k))
    return vrows, drows


def insert_fleet(con, vrows, drows):
    con.executemany("INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, "
                    "vm_size, tags, last_report_id, last_report_at, last_report_ms, power_state, "
                    "power_state_at, power_state_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", vrows)
    con.executemany("INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, "
                    "caching, last_seen_at, last_seen_ms, position) VALUES "
                    "(?,?,?,?,?,?,?,?,?,?,?,?,?)", drows)


def insert_power(con, prows):
    con.executemany("INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) "
                    "VALUES (?,?,?,?,'arm')", prows)


def nightly(con, n, month):
    """savings-scale.sh's fleet: a month of nightly deallocations before MONTH."""
    rnd = random.Random(11)
    vrows, drows = fleet(n, month, {})
    prows = []
    for v in range(1, n + 1):
        off = 18 + v % 4
        on = 6 + v % 4
        # A month before the month: running from its start, deallocated
        # every night (about 60 transitions).
        t0 = month - datetime.timedelta(days=30)
        prows.append((v, rfc(t0), ms(t0), "running"))
        for d in range(30):
            day = t0 + datetime.timedelta(days=d)
            a = day.replace(hour=off, minute=rnd.choice((0, 5)))
            b = (day + datetime.timedelta(days=1)).replace(hour=on, minute=0)
            prows.append((v, rfc(a), ms(a), "deallocated"))
            prows.append((v, rfc(b), ms(b), "running"))
    insert_fleet(con, vrows, drows)
    insert_power(con, prows)
    return {"vms": n, "disks": len(drows), "power_states": len(prows)}


def activity(con, n, start):
    """A month of weekend switches (see the module's text)."""
    end = next_month(start)
    rnd = random.Random(13)
    # The weekends: Fridays whose Monday falls in the month.
    fridays = []
    f = start - datetime.timedelta(days=7)
    while f.weekday() != 4:
        f += datetime.timedelta(days=1)
    while f < end:
        if f + datetime.timedelta(days=3) >= start:
            fridays.append(f)
        f += datetime.timedelta(days=7)
    skip_w, drift_w, fail_w = 2, 3, len(fridays) - 1
    h0 = start - datetime.timedelta(days=14)
    while h0.weekday() != 0:
        h0 -= datetime.timedelta(days=1)
    first_seen = h0 - datetime.timedelta(days=30)

    # Disks left on Standard SSD by a failed last upgrade.
    held = {}
    for v in range(1, n + 1):
        if v % 1000 == 11:
            for k, (role, sku, tier, size) in enumerate(DISKS):
                if role == "data" and sku == "Premium_LRS":
                    held[(v - 1) * len(DISKS) + k + 1] = STANDARD[size]
    vrows, drows = fleet(n, end, held)

    insert_fleet(con, vrows, drows)
    counts = {"vms": n, "disks": len(drows), "power_states": 0, "disk_sku_history": 0,
              "actions": 0, "action_transitions": 0, "drift": 0, "disk_originals": 0}
    prows, hrows, arows, trows, drift, originals = [], [], [], [], [], []
    aid = 0

    def flush():
        # Written every few hundred VMs: a month of a large fleet's actions
        # and their moves would not fit in memory as Python tuples.
        insert_power(con, prows)
        con.executemany("INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, "
                        "tier, size_gib, source) VALUES (?,?,?,?,?,?,'arm')", hrows)
        con.executemany("INSERT INTO actions(id, plan_id, disk_id, vm_id, kind, from_sku, to_sku, "
                        "state, due_at, due_ms, requested_at, finished_at, dry_run, detail, "
                        "attempts, last_error, idempotency_key, version, policy, reason, "
                        "currency, updated_at) "
                        "VALUES (?,NULL,?,?,?,?,?,?,?,?,?,?,0,?,?,?,?,?,?,?,?,?)", arows)
        con.executemany("INSERT INTO action_transitions(action_id, from_state, to_state, at, "
                        "owner, detail) VALUES (?,?,?,?,?,?)", trows)
        con.executemany("INSERT INTO drift(disk_id, vm_id, sku, required_sku, policy, since, "
                        "since_ms, seen_at, ended_at, ended_ms) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        drift)
        con.executemany("INSERT INTO disk_originals(disk_id, sku, tier, action_id, set_at) "
                        "VALUES (?,?,?,?,?)", originals)
        for name, rows in (("power_states", prows), ("disk_sku_history", hrows),
                           ("actions", arows), ("action_transitions", trows), ("drift", drift),
                           ("disk_originals", originals)):
            counts[name] += len(rows)
            del rows[:]

    def move(t, a, frm, to, owner, detail):
        trows.append((a, frm, to, rfc_ms(t), owner, detail))

    for v in range(1, n + 1):
        if v % 500 == 0:
            flush()
        off = 18 + v % 4
        on = 6 + v % 4
        skip = v % 50 == 3
        drifts = v % 100 == 7
        fails = v % 1000 == 11
        # Power states: deallocated at h0 (a Monday's night), on each
        # weekday morning, off each weekday evening.
        offs = {}
        prows.append((v, rfc(h0), ms(h0), "deallocated"))
        day = h0
        while day < end:
            wd = day.weekday()
            if wd < 5:
                no_off = skip and wd == 4 and day == fridays[skip_w]
                no_on = skip and wd == 0 and day == fridays[skip_w] + datetime.timedelta(days=3)
                if not no_on:
                    b = day.replace(hour=on)
                    prows.append((v, rfc(b), ms(b), "running"))
                a = day.replace(hour=off, minute=rnd.choice((0, 5)))
                if not no_off:
                    prows.append((v, rfc(a), ms(a), "deallocated"))
                offs[day] = a
            elif drifts and wd == 5 and day == fridays[drift_w] + datetime.timedelta(days=1):
                for hh, st in ((10, "running"), (14, "deallocated")):
                    t = day.replace(hour=hh)
                    prows.append((v, rfc(t), ms(t), st))
            day += datetime.timedelta(days=1)
        for k, (role, sku, tier, size) in enumerate(DISKS):
            did = (v - 1) * len(DISKS) + k + 1
            hrows.append((did, rfc(first_seen), ms(first_seen), sku, tier, size))
            if role != "data" or sku != "Premium_LRS":
                continue
            std = STANDARD[size]
            for w, fri in enumerate(fridays):
                mon = fri + datetime.timedelta(days=3)
                for kind, frm_sku, to_sku, to_tier, due in (
                        ("downgrade", sku, "StandardSSD_LRS", std,
                         offs[fri] + datetime.timedelta(minutes=15)),
                        ("upgrade", "StandardSSD_LRS", sku, tier,
                         mon.replace(hour=on) - datetime.timedelta(minutes=30))):
                    aid += 1
                    moves0 = len(trows)
                    key = "weekends:%d:%s:%s" % (did, kind, rfc(due))
                    planned = due - datetime.timedelta(seconds=60)
                    reason = ("VM deallocated Fri-Mon (weekends)" if kind == "downgrade"
                              else "restore before the VM starts (weekends)")
                    move(planned, aid, None, "planned", "tick", reason)
                    state, last_error, detail = "done", None, None
                    fin = due + datetime.timedelta(seconds=20 + 10 * k)
                    if skip and w == skip_w:
                        state = "skipped"
                        why = ("vm_not_deallocated: the VM still runs when its upgrade is due"
                               if kind == "downgrade" else
                               "nothing_to_restore: the disk is on %s already" % to_sku)
                        fin = mon.replace(hour=on) - datetime.timedelta(minutes=30, seconds=-k)
                        move(fin, aid, "planned", "skipped", "tick", why)
                        reason = detail = why
                    elif fails and w == fail_w and kind == "upgrade":
                        state = "failed"
                        last_error = detail = ("ARM answered 409 OperationNotAllowed on the "
                                               "PATCH; the disk stays on StandardSSD_LRS")
                        move(due + datetime.timedelta(seconds=1), aid, "planned", "checked",
                             "tick", "checks passed")
                        move(due + datetime.timedelta(seconds=2), aid, "checked", "sent", "tick",
                             "PATCH /subscriptions/.../disks/d%d" % did)
                        move(fin, aid, "sent", "failed", "tick", last_error)
                        originals.append((did, sku, tier, aid - 1, rfc_ms(due)))
                    else:
                        verified = due + datetime.timedelta(seconds=19 + 10 * k)
                        move(due + datetime.timedelta(seconds=1), aid, "planned", "checked",
                             "tick", "checks passed")
                        move(due + datetime.timedelta(seconds=2), aid, "checked", "sent", "tick",
                             "PATCH /subscriptions/.../disks/d%d" % did)
                        move(verified, aid, "sent", "verified", "tick", "disk on %s" % to_sku)
                        move(fin, aid, "verified", "done", "tick", "")
                        hrows.append((did, rfc(verified), ms(verified), to_sku, to_tier, size))
                        detail = "disk on %s" % to_sku
                    arows.append((aid, did, v, kind, frm_sku, to_sku, state, rfc(due), ms(due),
                                  rfc_ms(planned), rfc_ms(fin), detail,
                                  0 if state == "skipped" else 1, last_error, key,
                                  len(trows) - moves0 - 1, "weekends", reason, "USD",
                                  rfc_ms(fin)))
                if drifts and w == drift_w:
                    sat = fri + datetime.timedelta(days=1)
                    a, b = sat.replace(hour=10), sat.replace(hour=14)
                    seen = a + datetime.timedelta(minutes=5)
                    drift.append((did, v, "StandardSSD_LRS", sku, "weekends", rfc(a), ms(a),
                                  rfc(seen), rfc(b), ms(b)))
    flush()
    counts["weekends"] = [rfc(f) for f in fridays]
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("vms", type=int)
    ap.add_argument("--month", default="2026-12",
                    help="the nightly fleet: the month whose 30 days before hold the history")
    ap.add_argument("--activity", metavar="YYYY-MM",
                    help="the month of weekend switches (see the text above) instead")
    a = ap.parse_args()
    if a.vms < 1:
        ap.error("VMS must be at least 1")
    con = sqlite3.connect(a.db)
    con.execute("PRAGMA synchronous = OFF")
    if con.execute("PRAGMA user_version").fetchone()[0] != 5:
        sys.exit("fleet-gen.py: %s is not a tierwise database of schema 5 (run `tierwise prices "
                 "import --db %s pricing/azure-disk-prices.json` first)" % (a.db, a.db))
    try:
        if a.activity:
            counts = activity(con, a.vms, month_start(a.activity))
        else:
            counts = nightly(con, a.vms, month_start(a.month))
    except (ValueError, KeyError, sqlite3.Error) as e:
        sys.exit("fleet-gen.py: %s" % e)
    con.commit()
    print(json.dumps(counts), file=sys.stderr)


if __name__ == "__main__":
    main()
