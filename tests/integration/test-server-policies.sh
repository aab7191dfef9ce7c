#!/usr/bin/env bash
# tierwise serve --policies DIR: the folder's policies listed (names,
# descriptions, files, windows summaries, sorted by name) and each one's
# canonical JSON by name, for readers only; an unknown name is a 404 JSON
# error; no folder gives an empty list; a folder of symbolic links (a
# Kubernetes ConfigMap) is read through them; a bad file refuses the start
# with its FILE:LINE:COLUMN (exit 2), so do a name starting with a dot, two
# files of one name and a missing folder (2), and a link to nothing or a
# loop of links (1: can't be read), and a policy whose timezone does not
# load here (2, at its $.timezone);
# the policies are recorded in the store by name; the folder given in the
# config file.  Needs curl, jq, sqlite3 and the examples' zone files.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-policies-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
# The examples' zones load at the start (a policy whose zone does not refuses it).
for z in Europe/London Europe/Berlin; do
  [ -e "${TZDIR:-/usr/share/zoneinfo}/$z" ] || { echo "no zone file $z: skipped"; exit 77; }
done
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1

check() {
  if jq -se "length == 1 and (.[0] | ($3))" >/dev/null 2>&1 <<<"$2"; then ok
  else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

reader=$(make_token reader)
agent=$(make_token agent)
pol="$scratch/policies"
mkdir -p "$pol"
cp "$srcdir"/policies/*.json "$pol"/
start_server main --policies "$pol"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

st=$(req GET /api/v1/policies "$reader")
check "the list ($st)" "$(cat "$scratch/body")" '(.policies | map(.name)) == ["dev-weekends", "sap-production", "test-nightly"] and
  .policies[0] == {"name": "dev-weekends", "description": .policies[0].description, "file": "dev-weekends.json",
                   "target": "StandardSSD_LRS", "windows": {"source": "list", "summary": "Fri 20:00-Mon 06:00",
                   "timezone": "Europe/London"}} and (.policies[0].description | test("weekend")) and
  .policies[1].target == "none" and .policies[1].windows.source == "none" and
  .policies[2].target == "cheapest" and
  .policies[2].windows.summary == "Mon 20:00-Tue 06:00, Tue 20:00-Wed 06:00, Wed 20:00-Thu 06:00, Thu 20:00-Fri 06:00, Fri 20:00-Mon 06:00"'
[ "$st" = 200 ] && ok || bad "GET /api/v1/policies: $st"
st=$(req GET /api/v1/policies/test-nightly "$reader")
body=$(cat "$scratch/body")
check "one policy ($st)" "$body" '.schema_version == "tierwise.policy/1" and .name == "test-nightly" and
  .allowed_targets == ["StandardSSD_LRS", "Standard_LRS"] and .quota == {"changes": 2, "hours": 24} and
  .margins == {"after_deallocate_minutes": 15, "before_start_minutes": 45} and .min_saving == "0.05" and
  .os_disk_to_hdd == false and .reservations == [] and .match.vms == [] and (.windows | length) == 5'
# The canonical JSON is what policy check reads back as the same policy.
printf '%s' "$body" >"$scratch/canon.json"
"$cli" policy check -q "$scratch/canon.json" && ok || bad "the canonical JSON does not check"
grep -qi '^Content-Type: application/json' "$scratch/headers" && ok || bad "content type"
st=$(req GET /api/v1/policies/sap-production "$reader")
check "a policy that never switches ($st)" "$(cat "$scratch/body")" '.target == "none" and (has("windows") | not) and
  .reservations == [{"region": "westeurope", "tier": "P30", "redundancy": "LRS", "count": 8}]'
st=$(req GET /api/v1/policies/nope "$reader")
[ "$st" = 404 ] && ok || bad "an unknown policy: $st"
check "the 404" "$(cat "$scratch/body")" '.error.code == "not_found" and (.error.message | test("no policy \"nope\""))'
st=$(req GET /api/v1/policies "$agent"); [ "$st" = 403 ] && ok || bad "an agent's token: $st"
st=$(req GET /api/v1/policies/dev-weekends -); [ "$st" = 401 ] && ok || bad "no token: $st"
st=$(req GET /api/v1/policies/.hidden "$reader"); [ "$st" = 404 ] && ok || bad "a name the route refuses: $st"
stop_server TERM
# Recorded in the store by name, in canonical form.
n=$(sqlite3 "$db" "SELECT count(*) FROM policies WHERE name IN ('dev-weekends', 'sap-production', 'test-nightly')")
[ "$n" = 3 ] && ok || bad "the store holds $n of the 3 policies"

# Without --policies: an empty list, and every name unknown.
start_server none
st=$(req GET /api/v1/policies "$reader")
check "no folder ($st)" "$(cat "$scratch/body")" '. == {"policies": []}'
st=$(req GET /api/v1/policies/dev-weekends "$reader"); [ "$st" = 404 ] && ok || bad "no folder, one policy: $st"
stop_server TERM

# The folder in the config file.
printf '{"policies": "%s"}\n' "$pol" >"$scratch/config.json"
start_server config --config "$scratch/config.json"
st=$(req GET /api/v1/policies "$reader")
check "from the config file ($st)" "$(cat "$scratch/body")" '(.policies | length) == 3'
stop_server TERM

# A folder of symbolic links, as Kubernetes mounts a ConfigMap: NAME.json
# -> ..data/NAME.json, ..data -> the current version's folder (whose names,
# starting with a dot, are not read themselves).
cm="$scratch/configmap"
mkdir -p "$cm/..2026_12_01_10_00_00.1"
cp "$pol/dev-weekends.json" "$pol/test-nightly.json" "$cm/..2026_12_01_10_00_00.1/"
ln -s ..2026_12_01_10_00_00.1 "$cm/..data"
ln -s ..data/dev-weekends.json "$cm/dev-weekends.json"
ln -s ..data/test-nightly.json "$cm/test-nightly.json"
start_server configmap --policies "$cm"
if [ -z "$port" ]; then
  bad "a folder of links: the server did not start: $(cat "$scratch/configmap.err")"
else
  st=$(req GET /api/v1/policies "$reader")
  check "a folder of links ($st)" "$(cat "$scratch/body")" '(.policies | map([.name, .file])) ==
    [["dev-weekends", "dev-weekends.json"], ["test-nightly", "test-nightly.json"]]'
  st=$(req GET /api/v1/policies/test-nightly "$reader"); [ "$st" = 200 ] && ok || bad "a linked policy: $st"
  stop_server TERM
fi

# refused NAME STATUS WORDS ARGS...: serve does not start, exits STATUS
# (2 a policy with a problem, two of one name or a folder that does not
# exist; 1 a folder or a file that can't be read), says WORDS.
refused() {
  local name=$1 want=$2 words=$3; shift 3
  start_server "$name" "$@"
  if [ -n "$port" ]; then bad "$name: the server started"; stop_server TERM; return; fi
  wait "$pid"; local s=$?
  if [ "$s" != "$want" ] || ! grep -qF -- "$words" "$scratch/$name.err"; then
    bad "$name: exit $s (want $want), stderr: $(cat "$scratch/$name.err")"
  else ok; fi
}
printf '{"schema_version": "tierwise.policy/1", "name": "b", "match": {},\n "target": "none",\n  "quota": {"changes": 1}}\n' \
  >"$pol/b.json"
refused bad 2 "$pol/b.json:3:24: \$.quota.changes: must be an integer from 2 to 10, got 1" --policies "$pol"
rm "$pol/b.json"
# A name starting with a dot: GET /api/v1/policies/.dot could not reach it.
printf '{"schema_version": "tierwise.policy/1", "name": ".dot", "match": {}, "target": "none"}\n' >"$pol/dot.json"
refused dot 2 "$pol/dot.json:1:49: \$.name: must be 1 to 64 of the characters" --policies "$pol"
rm "$pol/dot.json"
cp "$pol/dev-weekends.json" "$pol/copy.json"
refused twice 2 "two policies are named \"dev-weekends\"" --policies "$pol"
rm "$pol/copy.json"
# A zone this machine does not have: the start is refused at its place, not
# every request later.
printf '{"schema_version": "tierwise.policy/1", "name": "typo", "match": {},\n "target": "none", "timezone": "Europe/Lndon"}\n' >"$pol/typo.json"
refused zone 2 "$pol/typo.json:2:32: \$.timezone: the zone \"Europe/Lndon\" does not load here: no time zone Europe/Lndon in" --policies "$pol"
n=$(sqlite3 "$db" "SELECT count(*) FROM policies WHERE name = 'typo'")
[ "$n" = 0 ] && ok || bad "a policy whose zone does not load was stored"
rm "$pol/typo.json"
refused missing 2 "policies folder $scratch/none: can't open" --policies "$scratch/none"
refused not-a-folder 2 "policies folder $pol/dev-weekends.json: can't open" --policies "$pol/dev-weekends.json"
ln -s nowhere.json "$pol/dangling.json"
refused dangling 1 "$pol/dangling.json: can't read: No such file or directory (a symbolic link to nothing)" --policies "$pol"
rm "$pol/dangling.json"
ln -s loop.json "$pol/loop.json"
refused loop 1 "$pol/loop.json: can't read: Too many levels of symbolic links (a loop of symbolic links)" --policies "$pol"
rm "$pol/loop.json"
if [ "$(id -u)" != 0 ]; then
  mkdir "$scratch/locked"; chmod 000 "$scratch/locked"
  refused unreadable 1 "policies folder $scratch/locked: can't open: Permission denied" --policies "$scratch/locked"
  chmod 700 "$scratch/locked"
else
  echo "note: running as root, which reads any folder: the unreadable folder (exit 1) is not tried"
fi
finish test-server-policies
