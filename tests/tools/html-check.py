#!/usr/bin/env python3
"""html-check.py - a strict check of a self-contained HTML page (the monthly
report's, src/service/monthly_html.c).

    html-check.py FILE [--require-id ID]...   exit 0 good, 1 with the problems
    html-check.py --self-test                 the checker refuses broken pages

Refused: bytes that are not UTF-8, no <!DOCTYPE html> first, an element left
open, closed out of order or closed twice (every non-void element must be
closed explicitly, SVG's self-closed ones aside), a block (<div>, <table>,
<ul>, ...) opened inside a <p> (a browser would close the <p> there), an '&' that starts no
known character reference, a '<' or '>' left raw in text, a duplicate id,
any <script>, <iframe>, <object>, <embed> or <img>, a <link> other than an
inline icon (href="data:..."), an on*= handler,
anything that would load from elsewhere (src=, href= other than '#...',
ping=, action=, formaction=, <meta http-equiv> such as a refresh, and in CSS
url(), image-set(), @import, http:, https:, // or an escape, in any case),
and a page without <html>, <head>, <title>, <body>.
"""
import html.entities
import html.parser
import re
import sys

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}
FORBIDDEN = {"script", "iframe", "object", "embed", "img", "frame", "base", "audio",
             "video", "source", "image"}
# Opening one of these while a <p> is open closes the <p> in a browser: the
# page's tree would not be the one written.
CLOSES_P = {"address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset",
            "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
            "header", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "table", "ul"}
ENTITY = re.compile(r"&(#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)")


# What in CSS loads from elsewhere, case-insensitively: url(, image-set(,
# @import, src(, a scheme (http:, https:, ftp:, file:), a
# protocol-relative // (outside a /* comment */), and a backslash (CSS
# escapes would spell any of these otherwise).
CSS_LOADS = re.compile(r"url\s*\(|image-set\s*\(|@import|\bsrc\s*\(|"
                       r"\b(?:https?|ftp|file|data)\s*:|//|\\", re.IGNORECASE)


def css_loads(css):
    """The first thing in CSS that loads from elsewhere, or None."""
    m = CSS_LOADS.search(re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL))
    return m.group(0) if m else None


class Checker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.stack = []
        self.problems = []
        self.ids = {}
        self.seen = set()
        self.in_raw = None  # <style>: CSS, not text

    def where(self):
        line, col = self.getpos()
        return f"line {line}, column {col + 1}"

    def bad(self, what):
        self.problems.append(f"{self.where()}: {what}")

    def attrs_check(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.bad(f"<{tag}> has an event handler {name}=")
            if name in ("src", "srcset", "data", "poster", "background"):
                self.bad(f"<{tag}> loads {name}={value!r}")
            if name in ("href", "xlink:href") and not value.startswith("#") and tag != "link":
                self.bad(f"<{tag}> links outside the page: {name}={value!r}")
            if name == "style" and css_loads(value):
                self.bad(f"<{tag}> style loads from elsewhere: {css_loads(value)!r}")
            if name in ("ping", "action", "formaction", "manifest", "cite", "longdesc",
                        "profile", "codebase", "archive", "usemap", "itemtype"):
                self.bad(f"<{tag}> points elsewhere: {name}={value!r}")
            if tag == "meta" and name == "http-equiv":
                self.bad(f"<meta http-equiv={value!r}> (a refresh or a header in the page)")
            if name == "id":
                if value in self.ids:
                    self.bad(f"duplicate id {value!r} (first at {self.ids[value]})")
                else:
                    self.ids[value] = self.where()

    def link_check(self, attrs):
        a = dict(attrs)
        if a.get("rel") != "icon" or not (a.get("href") or "").startswith("data:"):
            self.bad(f"<link> other than an inline icon (rel=icon href=data:...): {attrs}")

    def handle_starttag(self, tag, attrs):
        self.seen.add(tag)
        if tag in FORBIDDEN:
            self.bad(f"<{tag}> is not allowed in a self-contained page")
        if tag == "link":
            self.link_check(attrs)
            attrs = [(k, v) for k, v in attrs if k != "href"]
        self.attrs_check(tag, attrs)
        if tag == "style":
            self.in_raw = tag
        if tag in CLOSES_P and not self.in_svg() and any(t == "p" for t, _ in self.stack):
            self.bad(f"<{tag}> inside a <p>: a browser closes the <p> before it")
        if tag not in VOID:
            self.stack.append((tag, self.where()))

    def handle_startendtag(self, tag, attrs):
        self.seen.add(tag)
        if tag in FORBIDDEN:
            self.bad(f"<{tag}> is not allowed in a self-contained page")
        self.attrs_check(tag, attrs)
        if tag not in VOID and not self.in_svg():
            self.bad(f"<{tag}/> self-closed outside SVG")

    def in_svg(self):
        return any(t == "svg" for t, _ in self.stack)

    def handle_endtag(self, tag):
        if tag in VOID:
            self.bad(f"</{tag}> closes a void element")
            return
        if tag == "style":
            self.in_raw = None
        if not self.stack:
            self.bad(f"</{tag}> closes nothing")
            return
        top, at = self.stack[-1]
        if top != tag:
            self.bad(f"</{tag}> while <{top}> (opened at {at}) is still open")
            # recover: pop to the matching one if any
            for i in range(len(self.stack) - 1, -1, -1):
                if self.stack[i][0] == tag:
                    del self.stack[i:]
                    return
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.in_raw == "style":
            found = css_loads(data)
            if found:
                self.bad(f"the style sheet loads from elsewhere ({found!r})")
            return
        if "<" in data or ">" in data:
            self.bad(f"a raw '<' or '>' in text: {data.strip()[:40]!r}")

    def handle_entityref(self, name):
        if name + ";" not in html.entities.html5:
            self.bad(f"unknown character reference &{name};")

    def handle_charref(self, name):
        pass

    def unknown_decl(self, data):
        self.bad(f"unknown declaration {data[:40]!r}")


def check(raw):
    """The problems of the page RAW (bytes), a list of strings."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return [f"byte {e.start}: not UTF-8"], {}
    problems = []
    if not text.startswith("<!DOCTYPE html>"):
        problems.append("line 1: the page does not start with <!DOCTYPE html>")
    # every '&' starts a character reference (outside the style sheet too:
    # CSS never needs one here)
    for m in re.finditer("&", text):
        if not ENTITY.match(text, m.start()):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"line {line}: an '&' that starts no character reference: "
                            f"{text[m.start():m.start() + 12]!r}")
    c = Checker()
    try:
        c.feed(text)
        c.close()
    except Exception as e:  # html.parser raises on some broken declarations
        problems.append(f"the parser stopped: {e}")
    problems += c.problems
    for tag, at in c.stack:
        problems.append(f"<{tag}> opened at {at} is never closed")
    for tag in ("html", "head", "title", "body"):
        if tag not in c.seen:
            problems.append(f"no <{tag}>")
    return problems, c.ids


GOOD = (b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        b"<link rel=\"icon\" href=\"data:,\"><title>t</title>"
        b"<style>p{color:#000}</style></head><body><p id=\"a\">A &amp; B &lt;x&gt; \xe2\x82\xac"
        b"</p><svg viewBox=\"0 0 1 1\"><rect width=\"1\" height=\"1\"/><text>1 &#38; 2</text>"
        b"</svg><a href=\"#a\">top</a></body></html>\n")

BROKEN = {
    "an element left open": GOOD.replace(b"</p>", b""),
    "closed out of order": GOOD.replace(b"<p id=\"a\">A", b"<p id=\"a\"><b>A").replace(
        b"</p><svg", b"</p></b><svg"),
    "a bare ampersand": GOOD.replace(b"A &amp; B", b"A & B"),
    "a raw <": GOOD.replace(b"&lt;x&gt;", b"<x"),
    "not UTF-8": GOOD.replace(b"\xe2\x82\xac", b"\xff"),
    "a script": GOOD.replace(b"</body>", b"<script>alert(1)</script></body>"),
    "an image from elsewhere": GOOD.replace(b"</body>", b"<img src=\"http://x/y.png\"></body>"),
    "a link out": GOOD.replace(b"href=\"#a\"", b"href=\"https://example.com/\""),
    "a style sheet loading a font": GOOD.replace(b"p{color:#000}",
                                                 b"@font-face{src:url(http://x/f.woff)}"),
    "a duplicate id": GOOD.replace(b"<a href", b"<span id=\"a\">x</span><a href"),
    "no doctype": GOOD.replace(b"<!DOCTYPE html>\n", b""),
    "an unknown entity": GOOD.replace(b"&amp; B", b"&ampx; B"),
    "a style sheet linked": GOOD.replace(b"<title>", b"<link rel=\"stylesheet\" href=\"s.css\"><title>"),
    "an icon from elsewhere": GOOD.replace(b"<title>", b"<link rel=\"icon\" href=\"/favicon.ico\"><title>"),
    "a block inside a paragraph": GOOD.replace(b"A &amp; B", b"A <div>x</div> B"),
    "an event handler": GOOD.replace(b"<p id=\"a\">", b"<p id=\"a\" onclick=\"x()\">"),
    "a meta refresh": GOOD.replace(b"<title>",
                                   b"<meta http-equiv=\"Refresh\" content=\"0;url=x\"><title>"),
    "a ping": GOOD.replace(b"<a href=\"#a\"", b"<a href=\"#a\" ping=\"https://x/\""),
    "a form action": GOOD.replace(b"</body>", b"<form action=\"https://x/\"></form></body>"),
    "a formaction": GOOD.replace(b"</body>", b"<button formaction=\"https://x/\">b</button></body>"),
    "an upper-case URL(": GOOD.replace(b"p{color:#000}", b"p{background:URL(x.png)}"),
    "a url( with a space": GOOD.replace(b"p{color:#000}", b"p{background:url (x.png)}"),
    "an image-set": GOOD.replace(b"p{color:#000}", b"p{background:image-set(\"x.png\" 1x)}"),
    "an @IMPORT": GOOD.replace(b"p{color:#000}", b"@IMPORT \"x.css\";p{color:#000}"),
    "an http: in CSS": GOOD.replace(b"p{color:#000}", b"p{content:\"http:x\"}"),
    "an https: in CSS": GOOD.replace(b"p{color:#000}", b"p{content:\"HTTPS:x\"}"),
    "a // in CSS": GOOD.replace(b"p{color:#000}", b"p{content:\"//x\"}"),
    "a CSS escape": GOOD.replace(b"p{color:#000}", b"p{background:u\\72l(x.png)}"),
    "a style attribute loading": GOOD.replace(b"<p id=\"a\">",
                                              b"<p id=\"a\" style=\"background:Url(x)\">"),
}


def self_test():
    problems, _ = check(GOOD)
    if problems:
        print("html-check self-test: the good page was refused:", *problems, sep="\n  ")
        return 1
    failed = 0
    for what, page in BROKEN.items():
        problems, _ = check(page)
        if not problems:
            print(f"html-check self-test: a page with {what} was accepted")
            failed = 1
    if not failed:
        print(f"html-check self-test: the good page passes, {len(BROKEN)} broken ones are refused")
    return failed


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = argv[1]
    need = []
    rest = argv[2:]
    while rest:
        if rest[0] == "--require-id" and len(rest) > 1:
            need.append(rest[1])
            rest = rest[2:]
        else:
            print(f"html-check: unknown argument {rest[0]!r}", file=sys.stderr)
            return 2
    with open(path, "rb") as f:
        raw = f.read()
    problems, ids = check(raw)
    for i in need:
        if i not in ids:
            problems.append(f"no element with id {i!r}")
    if problems:
        print(f"{path}: {len(problems)} problem(s)")
        for p in problems[:50]:
            print("  " + p)
        return 1
    print(f"{path}: well-formed, self-contained ({len(raw)} bytes, {len(ids)} ids)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
