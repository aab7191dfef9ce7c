#!/usr/bin/env bash
# Makes a program's man page and its bash completion from its own --help
# text, so neither can drift from what the program says (CMake runs it at
# build time on the programs it has just built; deploy/install.cmake).
#
#   deploy/help-docs.sh man EXE NAME VERSION OUT.1
#   deploy/help-docs.sh completion EXE NAME OUT
#   deploy/help-docs.sh words EXE NAME          what the completion offers, one
#                                               line per context (for the tests)
#
# What is read from the help texts:
#   - commands: the lines "  WORD   text" of the "Commands:" block of
#     `EXE --help` (none: a program without commands, like tierwise-azsim);
#   - a command's subcommands: the words right after "NAME CMD" in the usage
#     lines of `EXE CMD --help` ("tierwise token create ..." gives create);
#   - options: every -x / --long token of the usage block and of the option
#     lines (lines whose first non-blank is "-"; their left column only), so
#     an option mentioned in prose (fio's --output-format) is not offered;
#   - an option's values: the choices of "--opt a|b|c" in a usage line, and
#     for --profile/--profiles the first column of `EXE bench --list-profiles`.
# A --help that fails or prints nothing stops the build: an empty page or a
# completion without words would be wrong in silence.
set -euo pipefail
shopt -s inherit_errexit

die() { echo "help-docs.sh: $*" >&2; exit 1; }

help_of() { # EXE [CMD]: the help text, or die
  local out
  if ! out=$("$@" --help 2>&1); then
    die "'$* --help' failed: ${out:0:300}"
  fi
  [ -n "$out" ] || die "'$* --help' printed nothing"
  printf '%s\n' "$out"
}

commands_of() { # stdin: top-level help
  awk '/^Commands:/ { c = 1; next } c && /^[^ ]/ { c = 0 } c && /^  [a-z][a-z0-9-]*  / { print $1 }'
}

options_of() { # stdin: a help text
  awk '
    /^usage:/ { u = 1 }
    u && /^[ \t]*$/ { u = 0 }
    u { print; next }
    /^[ \t]+-/ {
      line = $0
      sub(/^[ \t]+/, "", line)
      n = index(line, "  ")
      if (n) line = substr(line, 1, n - 1)
      print line
    }' | { grep -oE '(^|[][ ,|])--?[A-Za-z][A-Za-z0-9-]*' || true; } |
    sed -E 's/^[][ ,|]//' | sort -u
}

subcommands_of() { # NAME CMD; stdin: the command's help
  awk -v pre="$1 $2 " '
    /^usage:/ { u = 1 }
    u && /^[ \t]*$/ { u = 0 }
    u {
      line = $0
      sub(/^usage:/, "", line)
      sub(/^[ \t]+/, "", line)
      if (index(line, pre) == 1) {
        rest = substr(line, length(pre) + 1)
        split(rest, w, " ")
        if (w[1] ~ /^[a-z][a-z0-9-]*$/) print w[1]
      }
    }' | sort -u
}

join() { tr '\n' ' ' | sed -E 's/ +$//'; }

values_of() { # stdin: a help text; "OPTION V1 V2..." for each "--opt a|b|c" of its usage
  awk '/^usage:/ { u = 1 } u && /^[ \t]*$/ { u = 0 } u { print }' |
    { grep -oE -- '--[A-Za-z][A-Za-z0-9-]* [a-z0-9-]+(\|[a-z0-9-]+)+' || true; } | tr '|' ' ' | sort -u
}

profiles_of() { # EXE: the names `EXE bench --list-profiles` prints, when its bench has it
  local out cmds h
  cmds=$(help_of "$1" | commands_of)
  grep -qx bench <<<"$cmds" || return 0
  h=$(help_of "$1" bench)
  grep -q -- '--list-profiles' <<<"$h" || return 0
  out=$("$1" bench --list-profiles 2>&1) || die "'$1 bench --list-profiles' failed: ${out:0:300}"
  awk 'NR > 1 && $1 ~ /^[a-z0-9][a-z0-9-]*$/ { print $1 }' <<<"$out"
}

# ---- completion ----
completion() {
  local exe=$1 name=$2 top cmds fn
  top=$(help_of "$exe")
  cmds=$(commands_of <<<"$top" | join)
  fn="_${name//-/_}_complete"
  local topopts
  topopts=$(options_of <<<"$top" | join)
  # --help and --version are asked of every program; offer them at the top.
  topopts=$(printf '%s\n' $topopts --help $("$exe" --version >/dev/null 2>&1 && echo --version) |
            sort -u | join)
  cat <<EOF
# bash completion for $name -*- shell-script -*-
# Generated from '$name --help' and each command's --help by
# deploy/help-docs.sh at build time: do not edit, rebuild.
$fn()
{
    local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]:-} words="" list=""
    local prev=""
    [ "\$COMP_CWORD" -gt 1 ] && prev=\${COMP_WORDS[COMP_CWORD-1]}
    # An option's value, where the help names the choices.
    case \$prev in
EOF
  local h_all c line
  h_all=$(printf '%s\n' "$top"; for c in $cmds; do help_of "$exe" "$c"; printf '\n'; done)
  values_of <<<"$h_all" | while read -r line; do
    printf '    %s) words="%s" ;;\n' "${line%% *}" "${line#* }"
  done
  local profiles
  profiles=$(profiles_of "$exe" | join)
  if [ -n "$profiles" ]; then
    printf '    --profile) words="%s" ;;\n' "$profiles"
    printf '    --profiles) words="%s" list=1 ;;\n' "$profiles"
  fi
  cat <<EOF
    esac
    if [ -z "\$words" ]; then
EOF
  if [ -z "$cmds" ]; then
    cat <<EOF
    case \$cur in
    -*) words="$topopts" ;;
    esac
EOF
  else
    cat <<EOF
    if [ "\$COMP_CWORD" -eq 1 ]; then
        case \$cur in
        -*) words="$topopts" ;;
        *) words="$cmds" ;;
        esac
    else
        case \$cmd in
EOF
    local c h opts subs
    for c in $cmds; do
      h=$(help_of "$exe" "$c")
      opts=$(options_of <<<"$h" | join)
      subs=$(subcommands_of "$name" "$c" <<<"$h" | join)
      printf '        %s)\n' "$c"
      if [ -n "$subs" ]; then
        cat <<EOF
            if [ "\$COMP_CWORD" -eq 2 ] && [ "\${cur#-}" = "\$cur" ]; then
                words="$subs"
            elif [ "\${cur#-}" != "\$cur" ]; then
                words="$opts"
            fi
            ;;
EOF
      else
        cat <<EOF
            case \$cur in
            -*) words="$opts" ;;
            esac
            ;;
EOF
      fi
    done
    cat <<EOF
        esac
    fi
EOF
  fi
  cat <<EOF
    fi
    # Nothing to offer (an option's value, a file): bash completes file
    # names (complete -o default).  A list value (A,B) completes its last item.
    COMPREPLY=()
    local pre=""
    if [ -n "\$list" ] && [ "\${cur%,*}" != "\$cur" ]; then
        pre=\${cur%,*},
        cur=\${cur##*,}
    fi
    [ -n "\$words" ] && COMPREPLY=(\$(compgen -P "\$pre" -W "\$words" -- "\$cur"))
    return 0
}
complete -o default -F $fn $name
EOF
}

# ---- man page ----
roff_verbatim() { # stdin: text; stdout: roff lines safe inside .nf
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

man_page() {
  local exe=$1 name=$2 version=$3 top cmds summary date
  top=$(help_of "$exe")
  cmds=$(commands_of <<<"$top")
  # The paragraph after the usage block says what the program does: its
  # first sentence is the NAME line.
  summary=$(awk '/^usage:/ { u = 1 } u && /^$/ { u = 0; s = 1; next }
                 s && NF { printf "%s%s", sep, $0; sep = " "; next } s && sep { exit }' <<<"$top" |
            sed -E 's/\. .*//; s/\.$//')
  [ -n "$summary" ] || die "no description line in '$name --help'"
  # Reproducible: SOURCE_DATE_EPOCH when the packager sets it.
  date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
  local upper
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$name")
  printf '.\\" Generated from %s --help by deploy/help-docs.sh: do not edit, rebuild.\n' "$name"
  printf '.TH %s 1 "%s" "%s %s" "User Commands"\n' "$upper" "$date" "$name" "$version"
  printf '.nh\n.ad l\n'
  printf '.SH NAME\n%s \\- %s\n' "$name" "$(roff_verbatim <<<"${summary,}")"
  printf '.SH SYNOPSIS\n.nf\n'
  awk '/^usage:/ { u = 1 } u && /^$/ { exit } u { sub(/^usage: /, ""); print }' <<<"$top" |
    roff_verbatim
  printf '.fi\n.SH DESCRIPTION\nWhat\n.B %s \\-\\-help\nsays' "$name"
  if [ -n "$cmds" ]; then
    printf ' (each command'\''s own\n.B \\-\\-help\nfollows under COMMANDS):\n'
  else
    printf ':\n'
  fi
  printf '.PP\n.nf\n'
  awk '/^usage:/ { u = 1 } u && /^$/ { u = 0; s = 1 } s { print }' <<<"$top" |
    sed '1{/^$/d}' | roff_verbatim
  printf '.fi\n'
  if [ -n "$cmds" ]; then
    printf '.SH COMMANDS\n'
    local c
    for c in $cmds; do
      printf '.SS "%s %s"\n.nf\n' "$name" "$c"
      help_of "$exe" "$c" | roff_verbatim
      printf '.fi\n'
    done
  fi
  printf '.SH FILES\n.TP\n.I share/tierwise/\n'
  printf 'under the installation prefix (\\fI/usr\\fR from the .deb, \\fI/usr/local\\fR\n'
  printf 'by default from the sources): the dashboard (web/), the bundled pricing\n'
  printf 'data (pricing/) and examples.\n'
  printf '.SH "SEE ALSO"\n'
  local others=() p
  for p in tierwise tierwise-agent tierwise-azsim; do
    [ "$p" != "$name" ] && others+=("$p")
  done
  printf '.BR %s (1),\n' "${others[0]}"
  printf '.BR %s (1);\n' "${others[1]}"
  printf 'the README of the tierwise sources.\n'
}

# ---- words (what the completion offers, for tests) ----
words() {
  local exe=$1 name=$2 top c h
  top=$(help_of "$exe")
  printf 'commands: %s\n' "$(commands_of <<<"$top" | join)"
  printf 'options: %s\n' "$(options_of <<<"$top" | join)"
  printf 'profiles: %s\n' "$(profiles_of "$exe" | join)"
  for c in $(commands_of <<<"$top"); do
    h=$(help_of "$exe" "$c")
    printf '%s subcommands: %s\n' "$c" "$(subcommands_of "$name" "$c" <<<"$h" | join)"
    printf '%s options: %s\n' "$c" "$(options_of <<<"$h" | join)"
    values_of <<<"$h" | sed "s/^/$c values: /"
  done
}

write_out() { # OUT; stdin: content (written atomically, only when complete)
  local tmp="$1.tmp.$$"
  cat >"$tmp" && mv -f "$tmp" "$1"
}

mode=${1:-}
case $mode in
man)
  [ $# -eq 5 ] || die "usage: help-docs.sh man EXE NAME VERSION OUT"
  content=$(man_page "$2" "$3" "$4")
  printf '%s\n' "$content" | write_out "$5"
  ;;
completion)
  [ $# -eq 4 ] || die "usage: help-docs.sh completion EXE NAME OUT"
  content=$(completion "$2" "$3")
  printf '%s\n' "$content" | write_out "$4"
  ;;
words)
  [ $# -eq 3 ] || die "usage: help-docs.sh words EXE NAME"
  words "$2" "$3"
  ;;
*)
  die "usage: help-docs.sh man|completion|words ... (see the top of this file)"
  ;;
esac
