# -*- Python -*-
# lit configuration of the fusec tests. The paths of one build come from the
# lit.site.cfg.py that CMake writes into <build>/test/lit; run lit on that folder
# (ctest -L lit does), not on this one.
import os
import sys
import shutil

import lit.formats

config.name = "fusec"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".json", ".test"]
# Inputs/ folders hold files that tests read through %S/Inputs/...; they are not tests.
config.excludes = [
    "Inputs",
    "CMakeLists.txt",
    "README.md",
    "lit.cfg.py",
    "lit.site.cfg.py",
    "lit.site.cfg.py.in",
]

if not hasattr(config, "fusec_tools_dir"):
    lit_config.fatal(
        "no lit.site.cfg.py: run lit on <build>/test/lit (or `ctest -L lit`), "
        "not on the source tree"
    )

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.fusec_lit_binary_dir

# fusec-opt is found on PATH; the LLVM test tools come next, ahead of anything the
# user's PATH may hold, so FileCheck always matches the LLVM that fusec is built with.
fusec_opt = os.path.join(config.fusec_tools_dir, "fusec-opt")
if not os.access(fusec_opt, os.X_OK):
    lit_config.fatal(
        "fusec-opt not found at %s; build it first (ninja fusec-opt)" % fusec_opt
    )
config.environment["PATH"] = os.pathsep.join(
    [config.fusec_tools_dir, config.llvm_tools_dir, config.environment["PATH"]]
)

for tool in ("FileCheck", "not", "count"):
    if not os.access(os.path.join(config.llvm_tools_dir, tool), os.X_OK):
        lit_config.fatal("%s not found in %s" % (tool, config.llvm_tools_dir))

# Tests of the CLI say `REQUIRES: fusec`: they are reported UNSUPPORTED, not failed,
# until build/bin/fusec exists.
fusec_cli = os.path.join(config.fusec_tools_dir, "fusec")
if os.access(fusec_cli, os.X_OK):
    config.available_features.add("fusec")

# Tests that render `fusec explain --format dot` output say `REQUIRES: dot`: they
# run only where Graphviz's `dot` is on PATH.
if shutil.which("dot", path=config.environment["PATH"]):
    config.available_features.add("dot")

# A tool name is replaced by its full path only where a command starts (line start,
# after lit's `%dbg(RUN: at line N)` marker, a pipe, `;`, `&&`, `||` or `(`), so
# `not` inside an argument stays a word.
command_start = r"((?:^|[|;&(])\s*(?:%dbg\([^)]*\)\s*)?)"
config.substitutions.extend(
    [
        ("%fusec", fusec_cli),
        ("%python", sys.executable),
        ("%examples", os.path.join(config.fusec_source_root, "examples")),
        (
            command_start + r"FileCheck\b",
            r"\g<1>" + os.path.join(config.llvm_tools_dir, "FileCheck"),
        ),
        (
            command_start + r"not\b(?![-.])",
            r"\g<1>" + os.path.join(config.llvm_tools_dir, "not"),
        ),
        (
            command_start + r"count\b(?![-.])",
            r"\g<1>" + os.path.join(config.llvm_tools_dir, "count"),
        ),
    ]
)

# A cache folder of the tests' own: measurements or tunings in the user's
# cache must not change what the tests see.
config.environment["FUSEC_CACHE_DIR"] = os.path.join(config.test_exec_root, "fusec-cache")
