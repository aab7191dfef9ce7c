#!/usr/bin/env python3
"""openapi-check.py - the OpenAPI document of tierwise serve against the
server's route table and against the answers a live server gave.

  openapi-check.py validate DOC API_C
      DOC is a valid OpenAPI 3.1 document (openapi-spec-validator), and its
      operations are exactly the routes of API_C's table (src/server/api.c):
      none missing, none documented that the server does not have.

  openapi-check.py answers DOC API_C ANSWERS
      ANSWERS is a file of lines "METHOD PATH STATUS CONTENT-TYPE BODY-FILE"
      (tab-separated; PATH as requested, without the query).  Each answer's
      route is found in DOC by its path template, its status must be one
      the operation documents, its media type the documented one, and a
      JSON body must validate against the documented schema (jsonschema,
      draft 2020-12, the dialect of OpenAPI 3.1).  Every route of API_C
      must have at least one answer with a 2xx status.

Exit 0 when all holds; 1 with one line per problem; 2 on usage.
"""
import json
import re
import sys

ROUTE_RE = re.compile(r'\{"(GET|POST|PUT|PATCH|DELETE)", "([^"]+)", TW_AUTH_[A-Z]+, ')


def routes_of(api_c):
    with open(api_c, encoding="utf-8") as f:
        found = ROUTE_RE.findall(f.read())
    if not found:
        sys.exit(f"openapi-check: no routes found in {api_c}")
    return [(m.lower(), p) for m, p in found]


def doc_operations(doc):
    ops = []
    for path, item in doc.get("paths", {}).items():
        for method in ("get", "put", "post", "delete", "patch", "head", "options", "trace"):
            if method in item:
                ops.append((method, path))
    return ops


def pointer_escape(s):
    return s.replace("~", "~0").replace("/", "~1")


def resolve(doc, obj, ptr):
    """Follows OpenAPI-level $refs (a response kept in components); returns
    (object, its JSON pointer)."""
    seen = 0
    while isinstance(obj, dict) and "$ref" in obj and len(obj) == 1:
        ref = obj["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"{ptr}: $ref {ref} is not inside the document")
        ptr = ref
        obj = doc
        for part in ref[2:].split("/"):
            obj = obj[part.replace("~1", "/").replace("~0", "~")]
        seen += 1
        if seen > 20:
            raise ValueError(f"{ptr}: a loop of $refs")
    return obj, ptr


def match_path(doc, path):
    """The path template of DOC that PATH is an instance of (literal
    segments first), or None."""
    segs = path.split("/")
    best = None
    for tmpl in doc.get("paths", {}):
        t = tmpl.split("/")
        if len(t) != len(segs):
            continue
        literal = 0
        for a, b in zip(t, segs):
            if a.startswith("{") and a.endswith("}"):
                if not b:
                    break
            elif a == b:
                literal += 1
            else:
                break
        else:
            if best is None or literal > best[0]:
                best = (literal, tmpl)
    return best[1] if best else None


def cmd_validate(doc_path, api_c):
    from openapi_spec_validator import validate

    with open(doc_path, encoding="utf-8") as f:
        doc = json.load(f)
    problems = []
    try:
        validate(doc)
    except Exception as e:  # the validator's own error types vary by version
        problems.append(f"{doc_path} is not valid OpenAPI: {e}")
    if not str(doc.get("openapi", "")).startswith("3.1"):
        problems.append(f"{doc_path}: openapi is {doc.get('openapi')!r}, not 3.1.x")
    table = set(routes_of(api_c))
    documented = set(doc_operations(doc))
    for m, p in sorted(table - documented):
        problems.append(f"{doc_path}: the route {m.upper()} {p} of {api_c} is not documented")
    for m, p in sorted(documented - table):
        problems.append(f"{doc_path}: {m.upper()} {p} is documented but {api_c} has no such route")
    return problems


def cmd_answers(doc_path, api_c, answers):
    from jsonschema import Draft202012Validator

    with open(doc_path, encoding="utf-8") as f:
        doc = json.load(f)
    problems = []
    ok_routes = set()
    n = 0
    with open(answers, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    for line in lines:
        try:
            method, path, status, ctype, body_file = line.split("\t")
        except ValueError:
            problems.append(f"{answers}: not 5 tab-separated fields: {line!r}")
            continue
        n += 1
        where = f"{method} {path} -> {status}"
        tmpl = match_path(doc, path)
        if tmpl is None:
            problems.append(f"{where}: no path of the document matches {path}")
            continue
        op = doc["paths"][tmpl].get(method.lower())
        if op is None:
            problems.append(f"{where}: {tmpl} documents no {method}")
            continue
        responses = op.get("responses", {})
        key = status if status in responses else (status[0] + "XX" if status[0] + "XX" in responses else "default")
        if key not in responses:
            problems.append(f"{where}: status {status} is not documented for {method} {tmpl} "
                            f"(documented: {', '.join(sorted(responses))})")
            continue
        base = f"#/paths/{pointer_escape(tmpl)}/{method.lower()}/responses/{pointer_escape(key)}"
        try:
            resp, ptr = resolve(doc, responses[key], base)
        except (ValueError, KeyError) as e:
            problems.append(f"{where}: {e}")
            continue
        content = resp.get("content", {})
        media = ctype.split(";")[0].strip().lower()
        if not content:
            if body_file != "-" and open(body_file, "rb").read():
                problems.append(f"{where}: a body where the document says none")
            elif status.startswith("2"):
                ok_routes.add((method.lower(), tmpl))
            continue
        if media not in content:
            problems.append(f"{where}: Content-Type {ctype!r}, documented: {', '.join(content)}")
            continue
        with open(body_file, "rb") as bf:
            raw = bf.read()
        if media == "application/json":
            try:
                body = json.loads(raw)
            except ValueError as e:
                problems.append(f"{where}: the body is not JSON ({e}): {raw[:120]!r}")
                continue
            schema = dict(doc)
            schema["$ref"] = f"{ptr}/content/{pointer_escape(media)}/schema"
            errors = sorted(Draft202012Validator(schema).iter_errors(body), key=lambda e: list(e.path))
            for e in errors[:5]:
                at = "/".join(str(p) for p in e.absolute_path) or "(the root)"
                problems.append(f"{where}: at {at}: {e.message[:300]}")
            if errors:
                continue
        elif not raw:
            problems.append(f"{where}: an empty {media} body")
            continue
        if status.startswith("2"):
            ok_routes.add((method.lower(), tmpl))
    for m, p in sorted(set(routes_of(api_c)) - ok_routes):
        problems.append(f"the route {m.upper()} {p} has no 2xx answer that matches the document")
    if not problems:
        print(f"openapi-check: {n} answers match {doc_path}")
    return problems


def main(argv):
    if len(argv) == 4 and argv[1] == "validate":
        problems = cmd_validate(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "answers":
        problems = cmd_answers(argv[2], argv[3], argv[4])
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    for p in problems:
        print(f"openapi-check: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
