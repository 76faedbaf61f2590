#!/usr/bin/env python3
"""Every example README.md shows as a shell session (a ``` block opening with "$ COMMAND" and
followed by its output) must print that output exactly. Run from the checkout; KSCHED stands
in for build/ksched in the commands.

Usage: readme_examples.py KSCHED README
"""
import difflib
import re
import subprocess
import sys


def main():
    ksched, readme = sys.argv[1:3]
    with open(readme, encoding="utf-8") as f:
        blocks = re.findall(r"```\n(\$ .*?)```", f.read(), re.S)
    failed = 0
    for block in blocks:
        lines = block.split("\n")
        cmd = lines[0][2:].replace("build/ksched", ksched, 1)
        want = "\n".join(lines[1:]).rstrip("\n")
        proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
        got = (proc.stdout + proc.stderr).rstrip("\n")
        if got != want:
            failed += 1
            print("FAIL %s" % lines[0])
            print("\n".join(difflib.unified_diff(want.split("\n"), got.split("\n"), "README", "output", lineterm="")))
    print("%d examples, %d failed" % (len(blocks), failed))
    return 1 if failed or not blocks else 0


if __name__ == "__main__":
    sys.exit(main())
