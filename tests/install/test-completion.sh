#!/usr/bin/env bash
# The bash completions the build made (deploy/help-docs.sh), sourced by bash:
# `complete -p` names their functions, falling back to file names; the
# first word completes to the commands of `PROG --help`; a command's "-"
# completes to every option its --help lists (the first option of each
# option line, read here with a rule of this test's own); token and prices
# complete their subcommands; --role completes the choices its usage line
# names, --profile and --profiles the profiles of bench --list-profiles;
# any other option's value is left to file names.
set -u
build=${TW_BUILD_DIR:?run through ctest, or set TW_BUILD_DIR and TW_CLI, TW_AGENT}
cli=${TW_CLI:?}
agent=${TW_AGENT:?}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-compl-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
dir=$build/generated/docs/completions

# complete PROG WORD...: what the completion offers for the last WORD, one a line.
complete_words() {
  local prog=$1; shift
  bash --norc --noprofile -c '
    source "$1" || exit 1
    prog=$2; shift 2
    fn=$(complete -p "$prog" | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
    [ -n "$fn" ] || exit 1
    COMP_WORDS=("$prog" "$@"); COMP_CWORD=$#
    COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
    "$fn" "$prog" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$dir/$prog" "$prog" "$@"
}
has() { grep -qxF -- "$1" <<<"$2"; }

# The commands of a --help: the "Commands:" block, "  NAME   text" lines.
commands_of() { sed -n '/^Commands:/,/^[^ ]/p' | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p'; }
# The first option of each option line ("  --db FILE   text", "  -h, --help").
first_options_of() { sed -n 's/^[[:space:]]\{1,\}\(-\{1,2\}[A-Za-z][A-Za-z0-9-]*\).*/\1/p' | sort -u; }

check_program() { # PROG EXE
  local prog=$1 exe=$2 c w got
  local file=$dir/$prog
  [ -s "$file" ] || { bad "no completion $file"; return; }
  bash --norc --noprofile -n "$file" && ok || bad "$file does not parse"
  got=$(bash --norc --noprofile -c 'source "$1" && complete -p "$2"' _ "$file" "$prog" 2>&1)
  grep -qE -- "-o default .*-F [A-Za-z_]+ $prog\$" <<<"$got" && ok || bad "complete -p $prog: $got"
  local cmds
  cmds=$("$exe" --help | commands_of)
  [ "$(wc -w <<<"$cmds")" -ge 4 ] && ok || bad "$prog --help lists only: $cmds"
  got=$(complete_words "$prog" "")
  for c in $cmds; do
    has "$c" "$got" && ok || bad "$prog <TAB> lacks command $c: $(tr '\n' ' ' <<<"$got")"
  done
  [ "$(wc -l <<<"$got")" -eq "$(wc -l <<<"$cmds")" ] && ok ||
    bad "$prog <TAB> offers more than the commands: $(tr '\n' ' ' <<<"$got")"
  got=$(complete_words "$prog" --)
  has --help "$got" && ok || bad "$prog --<TAB> lacks --help: $got"
  for c in $cmds; do
    local opts
    opts=$("$exe" "$c" --help | first_options_of)
    [ -n "$opts" ] || { bad "$prog $c --help lists no option"; continue; }
    got=$(complete_words "$prog" "$c" -)
    for w in $opts; do
      has "$w" "$got" && ok || bad "$prog $c -<TAB> lacks $w: $(tr '\n' ' ' <<<"$got")"
    done
  done
}

check_program tierwise "$cli"
check_program tierwise-agent "$agent"

# Prefixes narrow; subcommands; values are file names (nothing offered).
got=$(complete_words tierwise se)
[ "$got" = serve ] && ok || bad "tierwise se<TAB>: $got"
got=$(complete_words tierwise serve --tl)
[ "$(tr '\n' ' ' <<<"$got")" = "--tls-cert --tls-key " ] && ok || bad "tierwise serve --tl<TAB>: $got"
got=$(complete_words tierwise token "")
for w in create list revoke; do has "$w" "$got" && ok || bad "tierwise token <TAB> lacks $w: $got"; done
got=$(complete_words tierwise prices "")
for w in refresh show import bench; do has "$w" "$got" && ok || bad "tierwise prices <TAB> lacks $w: $got"; done
got=$(complete_words tierwise prices show --re)
[ "$got" = --region ] && ok || bad "tierwise prices show --re<TAB>: $got"
got=$(complete_words tierwise serve --db "")
[ -z "$got" ] && ok || bad "tierwise serve --db <TAB> offers words, not files: $got"
got=$(complete_words tierwise-agent run --spool-)
for w in --spool-list --spool-max --spool-max-bytes --spool-retry-rejected; do
  has "$w" "$got" && ok || bad "tierwise-agent run --spool-<TAB> lacks $w: $got"
done
# Values the help names: --role's choices from the usage line, profiles
# from --list-profiles (a --profiles list completes its last item).
got=$(complete_words tierwise token create --role "")
[ "$(tr '\n' ' ' <<<"$got")" = "agent reader admin " ] && ok || bad "tierwise token create --role <TAB>: $got"
profiles=$("$agent" bench --list-profiles | awk 'NR > 1 { print $1 }')
[ "$(wc -l <<<"$profiles")" -ge 2 ] && ok || bad "bench --list-profiles: $profiles"
got=$(complete_words tierwise-agent bench --profile "")
[ "$got" = "$profiles" ] && ok || bad "tierwise-agent bench --profile <TAB>: $got, want $profiles"
got=$(complete_words tierwise-agent run --profiles rated-iops,rated-t)
[ "$(tr '\n' ' ' <<<"$got")" = "rated-iops,rated-throughput rated-iops,rated-throughput-write " ] && ok ||
  bad "tierwise-agent run --profiles rated-iops,rated-t<TAB>: $got"
got=$(complete_words tierwise-agent run --profiles "")
[ "$got" = "$profiles" ] && ok || bad "tierwise-agent run --profiles <TAB>: $got"
# After a value, options again.
got=$(complete_words tierwise-agent bench --profile rated-iops --js)
[ "$got" = --json ] && ok || bad "tierwise-agent bench --profile rated-iops --js<TAB>: $got"

# An option only named in prose is not offered (import-fio's text names
# fio's --output-format).
got=$(complete_words tierwise-agent import-fio --)
has --output-format "$got" && bad "import-fio offers fio's --output-format" || ok

# The simulator has no commands: its options.
if [ -n "${TW_AZSIM:-}" ]; then
  got=$(complete_words tierwise-azsim --sc)
  [ "$got" = --scenario ] && ok || bad "tierwise-azsim --sc<TAB>: $got"
  opts=$("$TW_AZSIM" --help | first_options_of)
  got=$(complete_words tierwise-azsim -)
  for w in $opts; do has "$w" "$got" && ok || bad "tierwise-azsim -<TAB> lacks $w"; done
fi

finish install-completion
