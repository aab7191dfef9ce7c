#!/usr/bin/env bash
# readme-examples.sh README - every shell example of README that is marked
# runnable runs as written.
#
# A fenced block (```sh) is runnable when the line just before its fence is
# an HTML comment (invisible once rendered):
#   <!-- runnable -->            run it, in a bash of its own (-e -o pipefail)
#   <!-- runnable: direct -->    the same, where the scratch folder's
#                                filesystem has O_DIRECT (else skipped, said)
#   <!-- runnable: setup -->     sourced first, in this shell: what it exports
#                                (PATH, the endpoints, TIERWISE_SERVER) holds
#                                for every block, and the programs it starts
#                                in the background are this shell's jobs
#   <!-- runnable: teardown -->  sourced last, in this shell (stops them)
# The blocks run in README's order, in one scratch folder (a block may use
# what an earlier one made, as a reader following README would), which
# holds links to the source tree's deploy/, tests/, pricing/ and web/, so
# the examples run as from the source tree.  The built programs come first
# on PATH, HOME is the scratch folder, and TIERWISE_LOOPBACK_ONLY=1 keeps
# everything on 127.0.0.1 whatever an example says.
#
# TW_README_VERBOSE=1 also shows the end of each passing block's output.
#
# Status: 0 every marked block ran and exited 0; 1 one failed (its README
# line, its output and its status are shown) or none is marked; 77 a
# program or tool the examples use is missing.  It says how many blocks
# ran, how many were skipped and how many shell blocks are left unmarked.
#
# Before README, it runs itself on a README of its own with a block that
# fails halfway, and fails unless that is caught: a runner that passes
# everything can't pass here.
set -u
readme=${1:?usage: readme-examples.sh README.md}
[ -f "$readme" ] || { echo "readme-examples: no file $readme"; exit 2; }
readme=$(cd "$(dirname "$readme")" && pwd)/$(basename "$readme")
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

if [ -z "${TW_README_INNER:-}" ]; then
  for tool in curl jq python3 timeout; do
    command -v "$tool" >/dev/null || { echo "readme-examples: $tool is missing: skipped"; exit 77; }
  done
  for v in TW_CLI TW_AGENT TW_AZSIM TW_SOURCE_DIR; do
    if [ -z "${!v:-}" ]; then echo "readme-examples: $v is not set (run through ctest): skipped"; exit 77; fi
  done
  # The runner catches a failing block (here, its second command).
  t=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-readme-self-XXXXXX")
  printf '%s\n' '# x' '<!-- runnable -->' '```sh' 'echo fine' '```' 'text' \
    '<!-- runnable -->' '```sh' 'echo first' 'false' 'echo never' '```' >"$t/README.md"
  TW_README_INNER=1 "$self" "$t/README.md" >"$t/out" 2>&1; st=$?
  if [ "$st" != 1 ] || ! grep -q "README.md:8: example failed (status 1)" "$t/out" ||
     grep -q "^never" "$t/out"; then
    echo "readme-examples: the runner did not catch a failing example (status $st):"
    cat "$t/out"; rm -rf "$t"; exit 1
  fi
  printf '%s\n' '# x' '```sh' 'true' '```' >"$t/README.md"
  TW_README_INNER=1 "$self" "$t/README.md" >"$t/out" 2>&1; st=$?
  if [ "$st" != 1 ] || ! grep -q "no example is marked runnable" "$t/out"; then
    echo "readme-examples: a README without marked examples passed (status $st)"; cat "$t/out"
    rm -rf "$t"; exit 1
  fi
  rm -rf "$t"
fi

work=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-readme-XXXXXX")
blocks=$work/.blocks
mkdir -p "$blocks" "$work/.bin"
cleanup() {
  local p
  for p in $(jobs -p); do kill -TERM "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The blocks: NNN.sh (the code), NNN.kind (run, direct, setup, teardown)
# and NNN.line (README's line of the opening fence).
awk -v dir="$blocks" '
  function flush() { close(file) }
  /^```/ {
    if (inblock) { inblock = 0; flush(); next }
    fence = NR
    if (prev ~ /^<!-- runnable(: *(setup|teardown|direct))? -->$/ && $0 ~ /^```(sh|bash)[ \t]*$/) {
      kind = "run"
      if (match(prev, /: *[a-z]+/)) { kind = substr(prev, RSTART, RLENGTH); sub(/: */, "", kind) }
      n++; file = sprintf("%s/%03d.sh", dir, n)
      printf "%s\n", kind > sprintf("%s/%03d.kind", dir, n); close(sprintf("%s/%03d.kind", dir, n))
      printf "%d\n", NR > sprintf("%s/%03d.line", dir, n); close(sprintf("%s/%03d.line", dir, n))
      printf "" > file
      inblock = 1; prev = $0; next
    }
    if ($0 ~ /^```(sh|bash|shell)?[ \t]*$/ && $0 !~ /^```[ \t]*$/) unmarked++
    prev = $0
    # skip to the closing fence
    while ((getline line) > 0) { if (line ~ /^```/) break }
    next
  }
  inblock { print >> file; next }
  { prev = $0 }
  END { printf "%d\n", unmarked + 0 > (dir "/unmarked") }
' "$readme"

total=$(ls "$blocks"/*.sh 2>/dev/null | wc -l)
if [ "$total" -eq 0 ]; then
  echo "readme-examples: no example is marked runnable in $readme (<!-- runnable --> before a \`\`\`sh fence)"
  exit 1
fi

# The scratch folder as the source tree, the built programs first on PATH.
if [ -z "${TW_README_INNER:-}" ]; then
  for d in deploy tests pricing web; do
    [ -e "$TW_SOURCE_DIR/$d" ] && ln -s "$TW_SOURCE_DIR/$d" "$work/$d"
  done
  ln -s "$TW_CLI" "$work/.bin/tierwise"
  ln -s "$TW_AGENT" "$work/.bin/tierwise-agent"
  ln -s "$TW_AZSIM" "$work/.bin/tierwise-azsim"
fi
export PATH="$work/.bin:$PATH" HOME="$work" TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_CONFIG TIERWISE_SERVER TIERWISE_TOKEN_FILE TIERWISE_IMDS_URL TIERWISE_ARM_URL \
  TIERWISE_PRICES_URL TIERWISE_LOGIN_URL STATE_DIRECTORY CREDENTIALS_DIRECTORY
direct=1
dd if=/dev/zero of="$work/.probe" bs=4096 count=1 oflag=direct 2>/dev/null || direct=0
rm -f "$work/.probe"

ran=0 skipped=0 failed=0
show() { # FILE: the output's last 30 lines, indented
  tail -n 30 "$1" | sed 's/^/    /'
}
run_block() { # N KIND LINE
  local n=$1 kind=$2 line=$3 st
  local code=$blocks/$n.sh out=$blocks/$n.out
  case "$kind" in
    setup|teardown)
      # In this shell, so that exports and jobs carry; any command that
      # fails (as -e would see it) fails the block.
      cd "$work" || exit 1
      block_err=0
      trap 'block_err=$?' ERR
      . "$code" >"$out" 2>&1
      st=$?
      trap - ERR
      [ "$st" = 0 ] && st=$block_err
      ;;
    direct|run)
      if [ "$kind" = direct ] && [ "$direct" = 0 ]; then
        echo "readme-examples: $(basename "$readme"):$line: skipped (no O_DIRECT under $work)"
        skipped=$((skipped + 1)); return
      fi
      (cd "$work" && timeout 300 bash -e -o pipefail "$code") >"$out" 2>&1 </dev/null; st=$?
      ;;
  esac
  if [ "$st" = 0 ]; then
    ran=$((ran + 1))
    if [ -n "${TW_README_VERBOSE:-}" ]; then
      echo "ok: $(basename "$readme"):$line ($kind)"; show "$out"
    fi
  else
    failed=$((failed + 1))
    echo "FAIL: $(basename "$readme"):$line: example failed (status $st):"
    sed 's/^/  $ /' "$code"
    echo "  output:"
    show "$out"
  fi
}

# setup, then the rest in order, then teardown
for kind in setup run teardown; do
  for k in "$blocks"/*.kind; do
    n=$(basename "$k" .kind)
    kk=$(cat "$k")
    case "$kind:$kk" in
      setup:setup|teardown:teardown|run:run|run:direct) ;;
      *) continue ;;
    esac
    # A setup that fails leaves nothing to run the others against.
    run_block "$n" "$kk" "$(cat "$blocks/$n.line")"
    if [ "$kk" = setup ] && [ "$failed" -gt 0 ]; then
      echo "readme-examples: the setup example failed: the others are not run"
      exit 1
    fi
  done
done

echo "readme-examples: $ran of $total marked example(s) ran, $skipped skipped, $failed failed;" \
  "$(cat "$blocks/unmarked") shell block(s) not marked runnable (they need root, a real disk," \
  "Azure, a build or minutes)"
[ "$failed" -eq 0 ]
