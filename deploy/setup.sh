#!/usr/bin/env bash
# Installs the Debian packages that tierwise's build, tests and demo need.
# Non-interactive and idempotent: packages already installed are skipped,
# and nothing is fetched when everything is present.
#
#   ./deploy/setup.sh            build + runtime + test packages
#   TW_SETUP_DRY_RUN=1 ./deploy/setup.sh   only print what would be installed
set -euo pipefail

packages=(
  build-essential cmake pkg-config         # toolchain
  clang libclang-rt-14-dev                 # libFuzzer build of the fuzz targets
  libaio-dev                               # bench engine
  libjansson-dev                           # JSON everywhere
  libcurl4-openssl-dev                     # Azure clients
  libsqlite3-dev                           # store and agent spool
  libmicrohttpd-dev                        # REST backend and the Azure simulator
  libgnutls28-dev                          # SHA-256 of API tokens (and MHD's TLS)
  libcmocka-dev                            # unit tests
  fio jq curl sqlite3                      # tests and tests/perf: reference tool, JSON, HTTP, db checks
  wrk                                      # tests/perf/ingest-load.sh: HTTP load generator
  tzdata                                   # IANA zone files (/usr/share/zoneinfo) read by core/tz through app/tzload
  groff-base                               # tests/install: the generated man pages render without warnings
  prometheus                               # tests: promtool check metrics of /metrics (its daemon is disabled below)
  python3-jsonschema                       # tests: the API's answers checked against its OpenAPI document
  faketime                                 # tests/integration/test-switch-*.sh: the scheduler's ticks at chosen wall-clock times
  libpq-dev                                # the PostgreSQL store (libpq)
  postgresql                               # tests: a private server (initdb in a temporary folder; Debian's own cluster is stopped below)
  haproxy                                  # tests: haproxy -c checks deploy/haproxy-tierwise.cfg (its daemon is disabled below)
)
# Only some Debian releases have these (13 does, 12 does not); the tests that
# need them exit 77 without.
for p in python3-openapi-spec-validator; do  # tests: validates src/server/openapi.json
  apt-cache show "$p" >/dev/null 2>&1 && packages+=("$p")
done
# tests/web: the dashboard and the monthly report in a headless browser
# (playwright-core from npm drives Debian's chromium; pdftotext reads the
# report's PDF).  Node.js and npm only where none is there: a machine's own
# Node.js (which may bundle npm) is kept.
packages+=(chromium poppler-utils)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ -n "${TW_SETUP_DRY_RUN:-}" ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install packages" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Only promtool is wanted of prometheus: its server, which Debian enables
# and starts, is stopped and disabled where systemd runs.
if printf '%s\n' "${missing[@]}" | grep -qx prometheus && [ -d /run/systemd/system ]; then
  $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
# Of postgresql, the tests want the binaries (initdb, pg_ctl) for a private
# server of their own; of haproxy, its configuration check.  The services
# Debian enables and starts are stopped and disabled where systemd runs.
for svc in postgresql haproxy; do
  if printf '%s\n' "${missing[@]}" | grep -qx "$svc" && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done
echo "setup: done"
