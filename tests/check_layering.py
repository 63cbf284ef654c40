#!/usr/bin/env python3
"""Check that #include "..." lines in src/ go the way the parts allow.

Each folder of src/ is a part. A file may include headers of its own folder
(by bare name or by path) and headers of the parts listed for its folder
below; nothing else of ours. The arrows are ARCHITECTURE.md's:

    cli -> engines (scan, verify, bench, ...) -> python, gpu -> core

Usage: check_layering.py [SRC_DIR]   (default: the src/ beside this file's parent)
Exit 0 when every include is allowed; 1 after listing each one that is not
(file:line, the header, and what that folder may use); 2 on a bad tree.
"""

import os
import re
import sys

# part -> the other parts it may include. A part not listed here is an error,
# so a new folder must be given its place on purpose.
ALLOWED = {
    "core": set(),
    "python": {"core"},
    "gpu": {"core"},
    "scan": {"python", "core"},
    "verify": {"core"},
    "bench": {"gpu", "core"},
    # planned parts (ARCHITECTURE.md): their places are set before they exist
    "doctor": {"gpu", "core"},
    "fit": {"gpu", "core"},
    "trace": {"gpu", "core"},
    "try": {"scan", "verify", "bench", "trace", "fit", "doctor", "python", "gpu", "core"},
    "report": {"core"},
    "cli": {"scan", "verify", "bench", "doctor", "fit", "trace", "try", "report",
            "python", "gpu", "core"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check(src):
    problems = []
    parts = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for part in parts:
        if part not in ALLOWED:
            problems.append(f"{src}/{part}/: a folder that tests/check_layering.py does not know: "
                            "give it its place in ALLOWED (and in ARCHITECTURE.md)")
            continue
        for root, _dirs, files in os.walk(os.path.join(src, part)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        header = m.group(1)
                        if "/" not in header:
                            continue  # its own folder (the compiler finds nothing else)
                        target = header.split("/", 1)[0]
                        if target == part or target in ALLOWED[part]:
                            continue
                        may = ", ".join(sorted(ALLOWED[part])) or "nothing outside itself"
                        why = ("no part includes cli" if target == "cli"
                               else f"{part} may use {may}")
                        problems.append(f"{path}:{lineno}: includes \"{header}\": {why}")
    for root, _dirs, files in os.walk(src):
        if root == src:
            for name in files:
                if name.endswith((".c", ".h")):
                    problems.append(f"{os.path.join(root, name)}: C file outside any part folder")
    return problems


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    if not os.path.isdir(src):
        print(f"check_layering: {src}: not a directory", file=sys.stderr)
        return 2
    problems = check(src)
    for p in problems:
        print(f"check_layering: {p}", file=sys.stderr)
    if problems:
        print(f"check_layering: {len(problems)} include(s) go the wrong way", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
