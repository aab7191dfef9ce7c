#!/usr/bin/env python3
"""The two halves of tests/perf/fleet-read.sh that talk HTTP (standard library only).

  fleet-load.py post URL TOKEN --vms N [--threads T]
      builds N reports from tests/fixtures/reports/web-03.json (VM vm-00001 ...,
      5 disks each, 10 results each: rated-iops and rated-throughput on every
      disk, so all are latest) and POSTs them over keep-alive connections; prints
      {"posted", "seconds", "bad"} as JSON.
  fleet-load.py read URL TOKEN --path P [--requests N] [--walk] [--timeout S]
      GETs P N times (keep-alive) and prints p50/p99/max in ms and the body size;
      with --walk, follows the answer's next cursor ("next_cursor" or "cursor")
      from the first page to the last (one request when there is none) and
      prints the walk's time, pages and rows.
"""
import argparse
import copy
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, '..', 'fixtures', 'reports', 'web-03.json')
SKUS = [('Premium_LRS', 128, 'P10'), ('Premium_LRS', 256, 'P15'), ('StandardSSD_LRS', 512, 'E20'),
        ('Premium_LRS', 512, 'P20'), ('StandardSSD_LRS', 128, 'E10')]
LOCATIONS = ['westeurope', 'northeurope', 'eastus', 'uksouth']


def reports(n):
    with open(TEMPLATE) as f:
        t = json.load(f)
    sub = t['inventory']['vm']['subscription_id']
    disk_t = t['inventory']['disks'][1]
    res_t = {r['profile']: r for r in t['results']}
    for i in range(1, n + 1):
        r = copy.deepcopy(t)
        name = 'vm-%05d' % i
        rg = 'rg-%02d' % (i % 50)
        r['id'] = str(uuid.UUID(int=(0x5eed << 112) | i, version=4))
        r['agent']['hostname'] = name
        vm = r['inventory']['vm']
        vm['name'] = name
        vm['resource_group'] = rg
        vm['location'] = LOCATIONS[i % len(LOCATIONS)]
        disks = r['inventory']['disks'][:1]
        disks[0]['name'] = name + '-os'
        for k in range(4):
            d = copy.deepcopy(disk_t)
            sku, size, tier = SKUS[(i + k) % len(SKUS)]
            d.update(name='%s-data%d' % (name, k), lun=k, sku=sku, size_gib=size, tier=tier,
                     device='/dev/sd%s' % 'cdef'[k])
            disks.append(d)
        for d in disks:
            d['managed_disk_id'] = ('/subscriptions/%s/resourceGroups/%s/providers/'
                                    'Microsoft.Compute/disks/%s' % (sub, rg, d['name']))
        r['inventory']['disks'] = disks
        results = []
        for d in disks:
            dev = d['device'][len('/dev/'):]
            for prof in ('rated-iops', 'rated-throughput'):
                x = copy.deepcopy(res_t.get(prof) or t['results'][0])
                x['profile'] = prof
                x['id'] = str(uuid.UUID(int=(0xbe5 << 112) | (i << 8) | len(results), version=4))
                x['target'].update(path=d['device'], device=dev, members=[dev])
                results.append(x)
        r['results'] = results
        yield json.dumps(r, separators=(',', ':')).encode()


def conn(url, timeout):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)


def cmd_post(a):
    bodies = list(reports(a.vms))
    lock = threading.Lock()
    state = {'next': 0, 'bad': 0}

    def work():
        c = conn(a.url, 60)
        while True:
            with lock:
                i = state['next']
                state['next'] += 1
            if i >= len(bodies):
                break
            for attempt in range(5):
                try:
                    c.request('POST', '/api/v1/reports', bodies[i],
                              {'Authorization': 'Bearer ' + a.token,
                               'Content-Type': 'application/json'})
                    resp = c.getresponse()
                    resp.read()
                    if resp.status in (200, 201):
                        break
                    if resp.status != 503:
                        raise RuntimeError('status %d' % resp.status)
                    time.sleep(0.5)
                except (OSError, http.client.HTTPException):
                    c.close()
                    c = conn(a.url, 60)
            else:
                with lock:
                    state['bad'] += 1
        c.close()

    t0 = time.monotonic()
    ts = [threading.Thread(target=work) for _ in range(a.threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({'posted': len(bodies), 'seconds': round(time.monotonic() - t0, 2),
                      'bad': state['bad']}))


def get(c, path, token):
    t0 = time.perf_counter()
    c.request('GET', path, headers={'Authorization': 'Bearer ' + token})
    resp = c.getresponse()
    body = resp.read()
    return time.perf_counter() - t0, resp.status, body


def pct(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def rows_of(doc):
    for key in ('verdicts', 'disks', 'vms'):
        if isinstance(doc.get(key), list):
            return len(doc[key])
    return 0


def next_cursor(doc):
    for key in ('next_cursor', 'cursor'):
        v = doc.get(key)
        if isinstance(v, str) and v:
            return v
    return None


def cmd_read(a):
    c = conn(a.url, a.timeout)
    out = {'path': a.path}
    try:
        times, size = [], 0
        for _ in range(a.requests):
            dt, status, body = get(c, a.path, a.token)
            if status != 200:
                raise RuntimeError('%s: HTTP %d %s' % (a.path, status, body[:200]))
            times.append(dt * 1e3)
            size = len(body)
        if times:
            out.update(p50_ms=round(pct(times, 50), 2), p99_ms=round(pct(times, 99), 2),
                       max_ms=round(max(times), 2), bytes=size, requests=len(times))
        if a.walk:
            t0 = time.perf_counter()
            path, pages, rows, cursor = a.path, 0, 0, None
            while True:
                _, status, body = get(c, path, a.token)
                if status != 200:
                    raise RuntimeError('%s: HTTP %d %s' % (path, status, body[:200]))
                doc = json.loads(body)
                pages += 1
                rows += rows_of(doc)
                cursor = next_cursor(doc)
                if not cursor or time.perf_counter() - t0 > a.timeout:
                    break
                sep = '&' if '?' in a.path else '?'
                path = a.path + sep + 'cursor=' + urllib.parse.quote(cursor, safe='')
            out.update(walk_s=round(time.perf_counter() - t0, 3), pages=pages, rows=rows,
                       walk_complete=cursor is None)
    except (OSError, http.client.HTTPException, RuntimeError, ValueError) as e:
        out['error'] = str(e)[:300]
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest='cmd', required=True)
    q = sp.add_parser('post')
    q.add_argument('url')
    q.add_argument('token')
    q.add_argument('--vms', type=int, default=10000)
    q.add_argument('--threads', type=int, default=4)
    r = sp.add_parser('read')
    r.add_argument('url')
    r.add_argument('token')
    r.add_argument('--path', required=True)
    r.add_argument('--requests', type=int, default=50)
    r.add_argument('--walk', action='store_true')
    r.add_argument('--timeout', type=float, default=120)
    a = p.parse_args()
    (cmd_post if a.cmd == 'post' else cmd_read)(a)


if __name__ == '__main__':
    sys.exit(main())
