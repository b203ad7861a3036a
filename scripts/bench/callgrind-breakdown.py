#!/usr/bin/env python3
"""Break a profiler's per-event cost down from a callgrind output file.

Reads the raw callgrind file (not callgrind_annotate's text) and sums, for
every call edge whose CALLER is code of the profiler's own shared library,
the callee's inclusive instructions (Ir) and the number of calls, grouped by
what the callee is: each runtime method the profiler calls, the C library's
malloc and write, and the profiler's own UTF-16 conversion and output writer.
Everything is divided by the number of events (methods named), so one line
reads "instructions per method".

Usage: callgrind-breakdown.py CALLGRIND_FILE LIBRARY_SUBSTRING EVENTS LABEL
       callgrind-breakdown.py --callbacks CALLGRIND_FILE LIBRARY_SUBSTRING

The second form prints a markdown table of every callback the runtime made
into the profiler (the exporter's `VTABLE::Name` thunks): calls, inclusive
instructions in all, and per call.

LIBRARY_SUBSTRING picks the profiler's object (`libjit_tracer.so`); the
file should come from `valgrind --tool=callgrind --toggle-collect=HANDLER`
so its total is the handler's inclusive cost. Prints one markdown table row
per part: `| part | LABEL calls/method | LABEL Ir/method |`, as JSON lines
(`{"part": ..., "calls": ..., "ir": ...}`) for bench-runtime.sh to join.

Standard library only.
"""

import json
import re
import sys

# (part, callee regex). The first match wins; the runtime's methods first.
PARTS = [
    ("GetTokenAndMetaDataFromFunction", r"ProfToEEInterfaceImpl::GetTokenAndMetaDataFromFunction\("),
    ("GetFunctionInfo", r"ProfToEEInterfaceImpl::GetFunctionInfo\("),
    ("GetModuleMetaData", r"ProfToEEInterfaceImpl::GetModuleMetaData\("),
    ("IMetaDataImport::Release", r"RegMeta::Release\("),
    ("GetMethodProps", r"RegMeta::GetMethodProps\("),
    ("GetTypeDefProps", r"RegMeta::GetTypeDefProps\("),
    ("GetNestedClassProps", r"RegMeta::GetNestedClassProps\("),
    ("UTF-16 to UTF-8", r"(put_utf16|write_utf16|from_utf16_lossy|facade::strings::decode|Map<I,F> as core::iter::traits::iterator::Iterator>::fold)"),
    ("output writer", r"(LineWriter|BufWriter|fwrite|JitTracer::line|Output::write|write_line)"),
    ("malloc/realloc (calls)", r"^(malloc|realloc|calloc)$"),
    ("write(2) (calls)", r"^(write|__GI___libc_write|__libc_write)$"),
]

RUNTIME = {"GetTokenAndMetaDataFromFunction", "GetFunctionInfo", "GetModuleMetaData",
           "IMetaDataImport::Release", "GetMethodProps", "GetTypeDefProps", "GetNestedClassProps"}


def parse(path, library):
    names = {"fn": {}, "ob": {}, "fl": {}}
    total = 0
    fn = ob = None
    cfn = cob = None
    pending = None  # calls count of the next cost line
    edges = []  # (caller fn, caller ob, callee fn, callee ob, calls, inclusive)

    def name(kind, value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "?")

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith("ob="):
                ob = name("ob", line[3:])
            elif line.startswith("fn="):
                fn = name("fn", line[3:])
                cob = None
            elif line.startswith("cob="):
                cob = name("ob", line[4:])
            elif line.startswith("cfn="):
                cfn = name("fn", line[4:])
            elif line.startswith(("fl=", "fi=", "fe=")):
                name("fl", line[3:])
            elif line.startswith("cfi=") or line.startswith("cfl="):
                name("fl", line[4:])
            elif line.startswith("calls="):
                pending = int(line.split("=")[1].split()[0])
            elif pending is not None and line and (line[0].isdigit() or line[0] in "+-*"):
                cost = int(line.split()[1]) if len(line.split()) > 1 else 0
                edges.append((fn, ob, cfn, cob or ob, pending, cost))
                pending = None
    own = [e for e in edges if e[1] and library in e[1]]
    return total, own, edges


def parse_all(path, library):
    return parse(path, library)


def callbacks(path, library):
    _, _, edges = parse_all(path, library)
    totals = {}
    for caller, caller_ob, callee, callee_ob, calls, cost in edges:
        m = re.search(r"VTABLE::(\w+)$", callee or "")
        if m and callee_ob and library in callee_ob and not (caller_ob and library in caller_ob):
            t = totals.setdefault(m.group(1), [0, 0])
            t[0] += calls
            t[1] += cost
    print("| callback | calls | Ir in all | Ir per call |")
    print("|---|---|---|---|")
    for name, (calls, cost) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {calls} | {cost} | {cost / max(calls, 1):.0f} |")
    print(f"| all | {sum(t[0] for t in totals.values())} | {sum(t[1] for t in totals.values())} | |")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--callbacks":
        callbacks(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    path, library, events, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    total, edges, _ = parse(path, library)
    sums = {part: [0, 0] for part, _ in PARTS}
    for caller, _, callee, _, calls, cost in edges:
        for part, pattern in PARTS:
            if re.search(pattern, callee or ""):
                # Recursion or a part calling itself: counted once, at the outside.
                if not re.search(pattern, caller or ""):
                    sums[part][0] += calls
                    sums[part][1] += cost
                break
    runtime = sum(sums[p][1] for p in RUNTIME)
    rows = [{"part": "total, per method (the JITCompilationStarted handler)", "calls": None, "ir": total / events}]
    for part, _ in PARTS:
        calls, cost = sums[part]
        rows.append({"part": part, "calls": calls / events, "ir": cost / events})
    rows.append({"part": "the profiler's own code (total minus the runtime's methods)", "calls": None,
                 "ir": (total - runtime) / events})
    for row in rows:
        row["label"] = label
        print(json.dumps(row))


if __name__ == "__main__":
    main()
