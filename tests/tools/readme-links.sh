#!/usr/bin/env bash
# readme-links.sh README - every internal link of README ([text](#anchor))
# leads to one of its headings, by the anchors GitHub makes of them
# (lower case, punctuation but '-' and '_' dropped, spaces to '-', a
# repeated heading gets -1, -2, ...), and the table of contents lists every
# "## " section in order.  Fenced blocks are left out.  Status 0 all good,
# 1 a link or the table is wrong (each named with its line), 77 without
# python3.
#
# It checks itself first: a README with a broken link, and one whose table
# misses a section, must fail.
set -u
readme=${1:?usage: readme-links.sh README.md}
command -v python3 >/dev/null || { echo "readme-links: python3 is missing: skipped"; exit 77; }

check() {
python3 - "$1" <<'EOF'
import re, sys
path = sys.argv[1]
lines = open(path, encoding='utf-8').read().split('\n')
anchors, seen, sections, links = set(), {}, [], []
fence = False
for no, line in enumerate(lines, 1):
    if line.startswith('```'):
        fence = not fence
        continue
    if fence:
        continue
    m = re.match(r'^(#{1,6}) +(.*?) *#*$', line)
    if m:
        text = re.sub(r'`', '', m.group(2))
        text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
        a = re.sub(r'[^\w\- ]', '', text.lower(), flags=re.UNICODE).replace(' ', '-')
        n = seen.get(a, 0)
        seen[a] = n + 1
        anchors.add(a if n == 0 else '%s-%d' % (a, n))
        if len(m.group(1)) == 2:
            sections.append((no, a))
        continue
    # inline code holds no links
    for m in re.finditer(r'\]\(#([^)\s]+)\)', re.sub(r'`[^`]*`', '', line)):
        links.append((no, m.group(1)))
bad = 0
for no, a in links:
    if a not in anchors:
        print('%s:%d: the link #%s leads to no heading' % (path, no, a))
        bad += 1
# The table of contents: the list under "## Contents", its top-level
# entries the "## " sections after it, in order.
toc = [i for i, (no, a) in enumerate(sections) if a == 'contents']
if not toc:
    print('%s: no "## Contents" section' % path)
    bad += 1
else:
    start = sections[toc[0]][0]
    end = sections[toc[0] + 1][0] if toc[0] + 1 < len(sections) else len(lines)
    listed = []
    for line in lines[start:end - 1]:
        m = re.match(r'^[-*] \[[^\]]*\]\(#([^)]+)\)', line)
        if m:
            listed.append(m.group(1))
    want = [a for no, a in sections[toc[0] + 1:]]
    if listed != want:
        print('%s: the contents list %s; the sections are %s' % (path, listed, want))
        bad += 1
print('readme-links: %d internal link(s), %d heading(s), %d wrong' % (len(links), len(anchors), bad))
sys.exit(1 if bad else 0)
EOF
}

t=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-links-XXXXXX")
trap 'rm -rf "$t"' EXIT
printf '%s\n' '# x' '## Contents' '- [A b](#a-b)' '## A b' 'see [c](#c)' >"$t/broken.md"
printf '%s\n' '# x' '## Contents' '- [A](#a)' '## A' '## B' 'see [a](#a)' >"$t/short.md"
printf '%s\n' '# x' '## Contents' '- [A: `b`](#a-b)' '## A: `b`' 'see [a](#a-b)' >"$t/good.md"
if check "$t/broken.md" >/dev/null || check "$t/short.md" >/dev/null || ! check "$t/good.md" >/dev/null; then
  echo "readme-links: the checker does not tell a broken link or table from a good one"
  exit 1
fi
check "$readme"
