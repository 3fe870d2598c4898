#!/usr/bin/env python3
"""The pgbench script of the SQL ceiling (bench/ceiling.sh), from the code.

Usage: bench/ceiling_script.py <repository root> <script file to write>

Reads errand's claim (the statement `Queue::claim` prepares: `CLAIM`, a call
of errand_claim_due) and its fenced end of a batch of attempts (the one
`finish_many_if_running` prepares: `FINISH_FENCED`) out of their Rust string
literals, wherever under src/ they live, so the ceiling runs the statements
errand runs, whatever they become (it stops, saying so, if their parameters
change); and the batch sizes from the code and the shipped config.toml, as
one errand process at its defaults uses them:

- a claim takes half of the worker slots (`global_limit`, config.toml and
  ERRAND_WORKERS__GLOBAL_LIMIT), walking as many tenants as it may claim
  jobs, within MIN/MAX_TENANTS_PER_CLAIM. (src/actors/dispatcher.rs claims at
  most half of the slots and of the jobs it holds ahead of them; in the
  32-tenant drain at the defaults that came to 42 jobs a claim on average,
  pg_stat_statements over 40,000 jobs, 2026-12-03: the tenants' limits bound
  them. Half the slots is about that size, and keeps runs comparable);
- the Completer ends what is pending, at most MAX_BATCH at once
  (src/actors/completer.rs): a claimed batch of no-op jobs ends together, so
  one claim's jobs are one end.

Each transaction of the script claims one batch (the claim's parameters bound
as errand binds them: config.toml's in-process job types and cross-process
limits, the tenant limit, the lease, one owner for the run, the tenant cursor
each claim returns), then, if it got jobs, ends them all as `completed` with
a null result (email and Web Push off, as shipped; config.toml's breakers)
in one statement: two commits, as in errand. Prints the settings it used as `name=value` words on one line.
"""

import json
import os
import re
import sys
import tomllib


def rust_sources(root):
    for directory, _, files in os.walk(os.path.join(root, "src")):
        for file in sorted(files):
            if file.endswith(".rs"):
                path = os.path.join(directory, file)
                with open(path, encoding="utf-8") as f:
                    yield path, f.read()


def find_consts(root, name, ty, near=None):
    """The definitions `const NAME: <ty> = ` under src/ (in files that match
    the pattern `near`, if given): [(path, source, end of the match)]."""
    pattern = re.compile(r"\bconst\s+" + re.escape(name) + r"\s*:\s*" + ty + r"\s*=\s*")
    found = [(path, source, m.end()) for path, source in rust_sources(root)
             if near is None or re.search(near, source) for m in pattern.finditer(source)]
    if not found:
        sys.exit(f"ceiling: no `const {name}` under src/" + (f" beside {near}" if near else ""))
    return found


def find_const(root, name, ty):
    found = find_consts(root, name, ty)
    if len(found) != 1:
        sys.exit(f"ceiling: {len(found)} definitions of `const {name}` under src/, expected one")
    return found[0]


def rust_str_const(root, name):
    """The value of `const NAME: &str = "...";` (or a raw string) under src/."""
    path, source, i = find_const(root, name, r"&(?:'static\s+)?str")
    raw = re.match(r'r(#*)"', source[i:])
    if raw:
        start = i + raw.end()
        end = source.index('"' + raw.group(1), start)
        return source[start:end]
    if source[i] != '"':
        sys.exit(f"ceiling: `{name}` in {path} is not a string literal")
    out, i = [], i + 1
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
    while True:
        c = source[i]
        if c == '"':
            return "".join(out)
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = source[i + 1]
        if e == "\n":  # a line continuation: the newline and the next line's indent go
            i += 2
            while source[i] in " \t\n\r":
                i += 1
        elif e in escapes:
            out.append(escapes[e])
            i += 2
        elif e == "x":
            out.append(chr(int(source[i + 2 : i + 4], 16)))
            i += 4
        elif e == "u":
            close = source.index("}", i)
            out.append(chr(int(source[i + 3 : close].replace("_", ""), 16)))
            i = close + 1
        else:
            sys.exit(f"ceiling: unknown escape \\{e} in `{name}`")


def rust_usize_const(root, name, near=None):
    """`const NAME: usize` under src/ (beside `near`): one value, however many copies."""
    values = {int(re.match(r"[0-9_]+", source[i:]).group(0).replace("_", ""))
              for _, source, i in find_consts(root, name, "usize", near)}
    if len(values) != 1:
        sys.exit(f"ceiling: `const {name}` has the values {sorted(values)} under src/, expected one")
    return values.pop()


def statement_of(root, function, bindings):
    """The name of the one statement a `fn <function>` under src/ prepares,
    checking that it binds the Rust expressions `bindings`, in this order."""
    found = []
    for path, source in rust_sources(root):
        for m in re.finditer(r"\bfn\s+" + function + r"\b", source):
            body = source[m.end() : m.end() + 6000]
            next_fn = re.search(r"\n    (?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s", body)
            body = body[: next_fn.start()] if next_fn else body
            names = sorted(set(re.findall(r"prepare_cached\(([A-Z_][A-Z0-9_]*)\)", body)))
            if names:
                found.append((path, names, body))
    if len(found) != 1 or len(found[0][1]) != 1:
        sys.exit(f"ceiling: the `fn {function}`s under src/ prepare {[f[1] for f in found]}, expected one statement")
    path, [name], body = found[0]
    params = re.search(r"params:\s*\[[^\]]*;\s*\d+\]\s*=\s*\[([^\]]*)\]", body)
    bound = [p.strip().lstrip("&") for p in params.group(1).split(",") if p.strip()] if params else None
    if bound != bindings:
        sys.exit(f"ceiling: `fn {function}` in {path} binds {bound}, the ceiling mirrors {bindings}: update bench/ceiling_script.py")
    return name


def bind(sql, name, variables):
    """`sql` with $1..$n replaced by the pgbench variables named in order
    (an entry starting with `=` is an SQL expression put in as it is)."""
    # pgbench takes a `:name` for a variable inside a string literal or a
    # comment too ('errand:breaker' would be sent as 'errand$13'): comments
    # go, and such literals are split at the colon ('errand:' || 'breaker').
    # (Comments are matched first: an apostrophe in one opens no literal.)
    def split_colons(m):
        token = m.group(0)
        return "" if token.startswith("--") else re.sub(r":(?=[A-Za-z_])", ":' || '", token)
    sql = re.sub(r"--[^\n]*|'(?:[^']|'')*'", split_colons, sql)
    used = {int(n) for n in re.findall(r"\$(\d+)", sql)}
    if used != set(range(1, len(variables) + 1)):
        sys.exit(f"ceiling: `{name}` takes parameters {sorted(used)}, the ceiling binds {len(variables)}: update bench/ceiling_script.py")
    if re.search(r"(?<![:\w]):[A-Za-z_]", sql):
        sys.exit(f"ceiling: `{name}` holds a `:name` pgbench would take for a variable")
    def value(m):
        variable = variables[int(m.group(1)) - 1]
        return variable[1:] if variable.startswith("=") else ":" + variable
    return re.sub(r"\$(\d+)", value, sql)


def default_setting(config_text, key):
    """The default a commented `# key = value` line of config.toml shows."""
    m = re.search(r"^#\s*" + key + r"\s*=\s*\"?([^\"\s#]+)", config_text, re.M)
    if not m:
        sys.exit(f"ceiling: config.toml shows no default for {key}")
    return m.group(1)


def millis(duration):
    m = re.fullmatch(r"(\d+)(ms|s|m|h)", duration)
    if not m:
        sys.exit(f"ceiling: cannot read the duration {duration!r}")
    return int(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[m.group(2)]


def notification_rules(config, types):
    """The rules `NotificationRules::as_sql` binds (src/domain/preferences.rs),
    from config.toml: each type's category, the required ones, the defaults."""
    preferences = config.get("notifications", {}).get("preferences", {})
    return {
        "categories": {name: t.get("category", name) for name, t in types.items()},
        "required": sorted(set(preferences.get("required", []))),
        "in_app": preferences.get("in_app", True),
        "email": preferences.get("email", True),
    }


def pg_array(items):
    return "{" + ",".join(str(i) for i in items) + "}"


def main():
    root, out = sys.argv[1], sys.argv[2]
    # What errand binds, in order (checked against the code), and the pgbench
    # variables the ceiling binds in their place.
    claim_name = statement_of(root, "claim", [
        "request.after_tenant", "tenants", "tenant_limit", "user_limit", "limits.names", "limits.limits",
        "limit", "request.owner", "lease", "request.only_types", "claim_id"])
    finish_name = statement_of(root, "finish_many_if_running", [
        "ids", "leases", "states", "results", "errors", "delays", "rescues", "self.endings.email_outbox",
        "self.endings.rules.as_sql()", "self.endings.breaker_types", "self.endings.breaker_after",
        "self.endings.push_outbox"])
    claim = rust_str_const(root, claim_name)
    finish = rust_str_const(root, finish_name)
    if "errand_claim_due(" not in claim:
        sys.exit(f"ceiling: `{claim_name}` no longer calls errand_claim_due: update bench/ceiling_script.py")
    min_tenants = rust_usize_const(root, "MIN_TENANTS_PER_CLAIM")
    max_tenants = rust_usize_const(root, "MAX_TENANTS_PER_CLAIM")
    max_batch = rust_usize_const(root, "MAX_BATCH", near=r"\bstruct\s+Completer\b")

    with open(os.path.join(root, "config.toml"), encoding="utf-8") as f:
        config_text = f.read()
    config = tomllib.loads(config_text)
    global_limit = int(os.environ.get("ERRAND_WORKERS__GLOBAL_LIMIT") or default_setting(config_text, "global_limit"))
    tenant_limit = int(os.environ.get("ERRAND_WORKERS__TENANT_LIMIT") or default_setting(config_text, "tenant_limit"))
    # As WorkerSettings::user_limit: unset, all of a tenant's slots but one.
    user_limit = int(os.environ.get("ERRAND_WORKERS__USER_LIMIT") or max(1, tenant_limit - 1))
    lease_ms = millis(os.environ.get("ERRAND_WORKERS__LEASE") or default_setting(config_text, "lease"))
    types = dict(sorted(config.get("job_types", {}).items()))  # errand keeps them in a BTreeMap
    in_process = [n for n, t in types.items() if t.get("handler", "external") != "external"]
    limited = [(n, t["concurrency"]) for n, t in types.items() if "concurrency" in t]
    breakers = [(n, t["breaker_after"]) for n, t in types.items() if "breaker_after" in t]

    # Half the slots (see the module doc), and as many tenants as jobs, clamped.
    claim_jobs = -(-global_limit // 2)
    claim_tenants = min(max(claim_jobs, min_tenants), max_tenants)
    finish_jobs = min(claim_jobs, max_batch)
    if finish_jobs < claim_jobs:
        sys.exit("ceiling: a claim is larger than the Completer's batch: the script ends one claim in one statement")

    claim_sql = bind(claim.strip().rstrip(";"), "CLAIM", [
        "after_tenant", "claim_tenants", "tenant_limit", "user_limit", "limited_types", "type_limits",
        "claim_jobs", "owner", "lease_ms", "only_types", "=gen_random_uuid()"])
    finish_sql = bind(finish.strip().rstrip(";"), "FINISH_FENCED", [
        "ids", "leases", "states", "results", "errors", "delays", "rescues", "email", "rules",
        "=:breaker_types::text[]", "=:breaker_after::int[]", "push"])

    job = "FILTER (WHERE c.kind = 'job')"
    script = f"""\\if :fresh
SELECT '' AS after_tenant
\\gset
\\set fresh 0
\\endif
SELECT count(*) {job} AS claimed,
       coalesce(array_agg(c.id) {job}, '{{}}') AS ids,
       coalesce(array_agg(c.lease_id) {job}, '{{}}') AS leases,
       coalesce(array_agg('completed'::text) {job}, '{{}}') AS states,
       coalesce(array_agg(NULL::jsonb) {job}, '{{}}') AS results,
       coalesce(array_agg(NULL::text) {job}, '{{}}') AS errors,
       coalesce(array_agg(0::float8) {job}, '{{}}') AS delays,
       coalesce(array_agg(false) {job}, '{{}}') AS rescues,
       coalesce(max(c.next_after_tenant) FILTER (WHERE c.kind = 'cursor'), '') AS after_tenant
FROM (
{claim_sql}
) AS c
\\gset
\\if :claimed > 0
{finish_sql};
\\endif
"""
    with open(out, "w", encoding="utf-8") as f:
        f.write(script)
    settings = {
        "claim_jobs": claim_jobs,
        "claim_tenants": claim_tenants,
        "tenant_limit": tenant_limit,
        "user_limit": user_limit,
        "lease_ms": lease_ms,
        "limited_types": pg_array(n for n, _ in limited),
        "type_limits": pg_array(c for _, c in limited),
        "only_types": pg_array(in_process),
        "email": "false",
        "push": "false",
        "breaker_types": pg_array(n for n, _ in breakers),
        "breaker_after": pg_array(a for _, a in breakers),
        "rules": json.dumps(notification_rules(config, types), separators=(",", ":")),
    }
    print(" ".join(f"{k}={v}" for k, v in settings.items()))


if __name__ == "__main__":
    main()
