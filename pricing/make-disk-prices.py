#!/usr/bin/env python3
"""Builds pricing/azure-disk-prices.json from the collected real prices.

Input: prices-real.json of the pricing-data collection (each item with its
_source, _date_seen, _derived_fields and _canonical flag).  Output: the
preferred (_canonical) rows in USD and GBP, in the Retail Prices API item
format, each with _src (a key into "_sources", which holds the full
repository, path and commit) and _date_seen.  Nothing is computed: every
price is copied as the source gave it.

usage: make-disk-prices.py PRICES_REAL_JSON > pricing/azure-disk-prices.json
"""
import json
import sys

API_KEYS = ["currencyCode", "tierMinimumUnits", "reservationTerm", "retailPrice", "unitPrice",
            "armRegionName", "location", "effectiveStartDate", "effectiveEndDate", "meterId",
            "meterName", "productId", "skuId", "productName", "skuName", "serviceName",
            "serviceId", "serviceFamily", "unitOfMeasure", "type", "isPrimaryMeterRegion",
            "armSkuName"]

def main():
    data = json.load(open(sys.argv[1]))
    sources, keys, items = {}, {}, []
    for it in data["items"]:
        if it.get("_canonical") is not True or it.get("currencyCode") not in ("USD", "GBP"):
            continue
        if not it.get("retailPrice"):
            continue
        src = it["_source"]
        if src not in keys:
            keys[src] = "s%d" % (len(keys) + 1)
            sources[keys[src]] = {"source": src, "derived_fields": sorted(
                {d for d in it.get("_derived_fields", [])})}
        else:
            s = sources[keys[src]]
            s["derived_fields"] = sorted(set(s["derived_fields"]) |
                                         set(it.get("_derived_fields", [])))
        out = {k: it[k] for k in API_KEYS if k in it}
        out["_src"] = keys[src]
        out["_date_seen"] = it["_date_seen"] or "unknown"
        items.append(out)
    items.sort(key=lambda i: (i["currencyCode"], i["armRegionName"], i["productName"],
                              i["meterName"]))
    doc = {
        "_about": "Azure managed-disk retail prices bundled with tierwise: real items from public "
                  "captures of the Azure Retail Prices API, never computed or invented. See "
                  "pricing/README.md for sources, dates and gaps.",
        "_sources": sources,
        "_fetched_at": max(i["_date_seen"] for i in items if i["_date_seen"] != "unknown") + "T00:00:00Z",
        "Items": items,
    }
    sys.stdout.write("{\n")
    for k in ("_about", "_sources", "_fetched_at"):
        sys.stdout.write(" %s: %s,\n" % (json.dumps(k), json.dumps(doc[k], separators=(",", ":"))))
    sys.stdout.write(' "Items": [\n')
    sys.stdout.write(",\n".join("  " + json.dumps(i, separators=(",", ":")) for i in items))
    sys.stdout.write("\n ]\n}\n")

if __name__ == "__main__":
    main()
