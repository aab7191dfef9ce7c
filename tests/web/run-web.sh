#!/usr/bin/env bash
# The dashboard and the monthly report in a real browser: Debian's chromium,
# headless, driven by playwright-core (pinned in tests/web/package-lock.json)
# from tests/web/dashboard.js.  This script installs nothing: it copies
# package.json and package-lock.json to $TW_BUILD_DIR/web-node and runs
# `npm ci` there unless tests/run.sh already did (same lock): first `npm
# ping` (10 s), then `npm ci` (180 s at most, 30 s per fetch, one retry).
# Without an answering npm registry, or when npm ci fails for it (times out,
# a network error), it is skipped (exit 77) with a SKIP line that says so,
# as it is without chromium, node, npm, pdftotext, jq, curl or libfaketime.
#
# It seeds a fresh database with a month of simulated weekend switches
# (deploy/demo-month.sh: five VMs, a drift, agent reports of mixed
# verdicts), writes that month's report as HTML and JSON (tierwise report
# monthly), starts tierwise serve on 127.0.0.1 port 0 with --policies
# deploy/demo-policies and the dashboard (web/), creates a reader and an
# agent token, and runs dashboard.js: each page, the figures against the
# API's, the filters, the sign-in refusals, the report's PDF.  Screenshots
# (one per page, screenshot-dashboard.png and screenshot-report.png) go to
# $TW_BUILD_DIR/web-screenshots.
set -u
src=${TW_SOURCE_DIR:?run through ctest, or set TW_SOURCE_DIR, TW_BUILD_DIR, TW_CLI and TW_AZSIM}
build=${TW_BUILD_DIR:?}
cli=${TW_CLI:?}
azsim=${TW_AZSIM:-}
chromium=${TW_WEB_CHROMIUM:-/usr/bin/chromium}
for t in node npm jq curl pdftotext; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (deploy/setup.sh installs it)"; exit 77; }
done
[ -x "$chromium" ] || { echo "SKIP: $chromium is not installed (deploy/setup.sh installs chromium)"; exit 77; }
[ -n "$azsim" ] && [ -x "$azsim" ] || { echo "SKIP: tierwise-azsim is not built (TW_AZSIM)"; exit 77; }

# playwright-core, as the lock pins it, in the build folder.
node_dir="$build/web-node"
mkdir -p "$node_dir"
if ! cmp -s "$src/tests/web/package-lock.json" "$node_dir/package-lock.json" ||
   [ ! -f "$node_dir/node_modules/playwright-core/package.json" ]; then
  # Each npm call has a time limit: a registry that takes the connection and
  # never answers is a skip, not a hang past ctest's timeout.
  registry=$(npm config get registry 2>/dev/null || echo "the npm registry")
  if ! timeout 30 npm ping --fetch-timeout=10000 --fetch-retries=0 >"$node_dir/npm-ping.log" 2>&1; then
    echo "SKIP: the npm registry ($registry) does not answer npm ping within 10 s, so npm ci can't install playwright-core ($node_dir/npm-ping.log)"
    exit 77
  fi
  cp "$src/tests/web/package.json" "$src/tests/web/package-lock.json" "$node_dir/"
  st=0
  (cd "$node_dir" && timeout 180 npm ci --no-audit --no-fund --loglevel=error \
     --fetch-timeout=30000 --fetch-retries=1) >"$node_dir/npm-ci.log" 2>&1 || st=$?
  if [ "$st" != 0 ]; then
    rm -f "$node_dir/package-lock.json"   # not installed: the next run tries again
    if [ "$st" = 124 ]; then
      echo "SKIP: npm ci did not finish within 180 s (the registry $registry is too slow; $node_dir/npm-ci.log)"; exit 77
    fi
    if grep -Eq 'E(TIMEDOUT|CONNRESET|CONNREFUSED|NOTFOUND|AI_AGAIN|HOSTUNREACH|NETUNREACH)|ERR_SOCKET_TIMEOUT|network|code E5[0-9][0-9]|code E429' \
         "$node_dir/npm-ci.log" ||
       ! timeout 30 npm ping --fetch-timeout=10000 --fetch-retries=0 >/dev/null 2>&1; then
      echo "SKIP: npm ci failed for the registry $registry (a network error or no answer; $node_dir/npm-ci.log)"; exit 77
    fi
    echo "FAIL: npm ci failed (exit $st) with the registry reachable:"; cat "$node_dir/npm-ci.log"; exit 1
  fi
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-web-XXXXXX")
srv_pid=""
cleanup() {
  if [ -n "$srv_pid" ]; then kill -TERM "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
export TIERWISE_LOOPBACK_ONLY=1
db="$scratch/tw.db"

# The month before this one, seeded.
month=$(date -u -d "$(date -u +%Y-%m-01) -1 month" +%Y-%m)
"$src/deploy/demo-month.sh" --db "$db" --work "$scratch/month" --month "$month" --cli "$cli" --azsim "$azsim"
st=$?
[ "$st" = 77 ] && exit 77
[ "$st" = 0 ] || { echo "FAIL: deploy/demo-month.sh exited $st"; tail -40 "$scratch/month/month.log"; exit 1; }

# The month's report, as the finance partner gets it.
pol="$src/deploy/demo-policies/weekend-downgrade.json"
shots="$build/web-screenshots"
rm -rf "$shots"
mkdir -p "$shots"
html="$shots/report-$month.html" json="$scratch/report-$month.json"
if "$cli" report monthly --help >/dev/null 2>&1; then
  "$cli" report monthly --db "$db" --month "$month" --format html --policy "$pol" --out "$html" ||
    { echo "FAIL: tierwise report monthly --format html exited $?"; exit 1; }
  "$cli" report monthly --db "$db" --month "$month" --format json --policy "$pol" --out "$json" ||
    { echo "FAIL: tierwise report monthly --format json exited $?"; exit 1; }
else
  echo "not ok - tierwise report monthly is missing: the report's checks fail"
  html="" json=""
fi

reader=$("$cli" token create --db "$db" --role reader --name web-reader 2>/dev/null)
agent=$("$cli" token create --db "$db" --role agent --name web-agent 2>/dev/null)
[ -n "$reader" ] && [ -n "$agent" ] || { echo "FAIL: token create"; exit 1; }
# a token of the right form that the server never issued
bad_token="tw_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n' | head -c 43)"

"$cli" serve -q --db "$db" --listen 127.0.0.1:0 --port-file "$scratch/srv.port" --web "$src/web" \
  --policies "$src/deploy/demo-policies" 2>"$scratch/serve.err" &
srv_pid=$!
for _ in $(seq 100); do [ -s "$scratch/srv.port" ] && break; sleep 0.1; done
[ -s "$scratch/srv.port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/serve.err")"; exit 1; }
base="http://127.0.0.1:$(cat "$scratch/srv.port")"

TW_WEB_BASE=$base TW_WEB_READER=$reader TW_WEB_AGENT=$agent TW_WEB_BAD=$bad_token \
TW_WEB_OUT=$shots TW_WEB_REPORT=$html TW_WEB_MONTH=$month TW_WEB_MONTH_JSON=$json \
TW_WEB_MODULES="$node_dir/node_modules" TW_WEB_CHROMIUM=$chromium \
  node "$src/tests/web/dashboard.js"
st=$?
echo "screenshots: $shots"
[ "$st" = 0 ] || { echo "--- serve's log"; tail -20 "$scratch/serve.err"; }
exit "$st"
