#!/usr/bin/env python3
"""ctest entry for test/python: `python3 -m pytest test/python -q` from the source root.

Exits 77, which ctest reports as skipped, where pytest or torch is not installed: torch is
needed only by the benchmark harness (bench/), never by the build.
"""
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

missing = [m for m in ("pytest", "torch") if importlib.util.find_spec(m) is None]
if missing:
    print("SKIP: python module(s) not installed: %s" % ", ".join(missing))
    sys.exit(77)
sys.exit(subprocess.call([sys.executable, "-m", "pytest", "test/python", "-q",
                          "-p", "no:cacheprovider"] + sys.argv[1:], cwd=ROOT))
