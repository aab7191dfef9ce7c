#!/usr/bin/env python3
"""Builds pricing/azure-vm-disk-caps.json from the research table of VM sizes.

Input: azure-vm-disk-caps.json of the shared research catalog (1,112 VM
sizes typed in from Microsoft's size pages, each row with the repository,
path and commit it came from).  Output: the same document with a schema
name and an "about" line added in front; every other key, row and figure is
copied as it is (nothing is computed, rounded or dropped).  The script
checks what the reader (src/core/vmcap.c) relies on and stops with a
message naming the row otherwise: unique names (case-insensitive), whole
IOPS, MB/s numbers, premium_storage true/false, a source on every row.

usage: make-vm-caps.py RESEARCH_JSON > pricing/azure-vm-disk-caps.json
"""
import json
import sys

SCHEMA = "tierwise.vm-disk-caps/1"
INTS = ["uncached_disk_iops", "uncached_burst_iops", "cached_iops"]
NUMS = ["uncached_disk_mbps", "uncached_burst_mbps", "cached_mbps"]


def fail(msg):
    sys.stderr.write("make-vm-caps.py: %s\n" % msg)
    sys.exit(2)


def check(vms):
    seen = set()
    for i, v in enumerate(vms):
        name = v.get("vm_size")
        if not isinstance(name, str) or not 0 < len(name) < 64:
            fail("vms[%d]: vm_size must be a name of 1 to 63 bytes" % i)
        if name.lower() in seen:
            fail("vms[%d]: %s is listed twice" % (i, name))
        seen.add(name.lower())
        for k in INTS:
            x = v.get(k)
            if x is not None and (not isinstance(x, int) or isinstance(x, bool) or x < 0):
                fail("%s: %s must be a whole number or null" % (name, k))
        for k in NUMS:
            x = v.get(k)
            if x is not None and (not isinstance(x, (int, float)) or isinstance(x, bool) or x < 0):
                fail("%s: %s must be a number or null" % (name, k))
        if v.get("premium_storage") not in (True, False, None):
            fail("%s: premium_storage must be true, false or null" % name)
        if not isinstance(v.get("source"), dict):
            fail("%s: no source" % name)


def main():
    if len(sys.argv) != 2:
        fail("usage: make-vm-caps.py RESEARCH_JSON > pricing/azure-vm-disk-caps.json")
    data = json.load(open(sys.argv[1], encoding="utf-8"))
    if "schema_version" in data and data["schema_version"] != SCHEMA:
        fail("input has schema_version %r, not %s" % (data["schema_version"], SCHEMA))
    check(data["vms"])
    out = {
        "schema_version": SCHEMA,
        "about": ("Disk limits of %d Azure VM sizes for the verdict's expected figure and the "
                  "savings model: uncached (and, where a page has them, burst and cached) IOPS "
                  "and MB/s, and whether the size supports Premium storage. Copied by "
                  "pricing/make-vm-caps.py from the research table "
                  "../shared/catalog/azure-vm-disk-caps.json; every row names the size page "
                  "(repository, path, commit) it came from. uncached_disk_mbps is 10^6 "
                  "bytes/s. See pricing/README.md." % len(data["vms"])),
    }
    for k, v in data.items():
        if k not in out:
            out[k] = v
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


main()
