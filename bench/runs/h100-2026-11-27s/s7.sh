#!/bin/bash
cd "$(dirname "$0")/.."
for n in t0 t1 t2; do echo "== $n"; .devcarry/dg_$n gen 2>&1 | grep -E "fusec" | head -2; done
for n in t0 t1; do echo "== timeline $n"; .devcarry/dt_$n timeline 2>&1 | grep -E "^\| [123] |instrumented"; done
