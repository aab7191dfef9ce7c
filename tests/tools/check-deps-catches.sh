#!/usr/bin/env bash
# Proves that check-deps.sh catches what it must: run on FIXTURE (a source
# tree with violations in every module, tests/fixtures/deps-bad), it must
# exit 1 and print exactly FIXTURE/expected.txt, one message per violation.
# A check that stopped reporting one of them, or reported anything else,
# fails here with the difference.
set -u
check=${1:?usage: check-deps-catches.sh CHECK_DEPS FIXTURE}
fixture=${2:?usage: check-deps-catches.sh CHECK_DEPS FIXTURE}
out=$("$check" "$fixture")
st=$?
fail=0
if [ $st -ne 1 ]; then
  echo "FAIL: check-deps.sh exited $st on $fixture, want 1"
  fail=1
fi
if ! diff -u "$fixture/expected.txt" <(printf '%s\n' "$out"); then
  echo "FAIL: check-deps.sh's messages on $fixture differ from expected.txt (above: - expected, + printed)"
  fail=1
fi
[ $fail -eq 0 ] && echo "check-deps-catches: $(wc -l <"$fixture/expected.txt") violations caught, exit status 1"
exit $fail
