#!/bin/bash
cd "$(dirname "$0")/.."
for rep in 1 2; do for n in t0 t3; do echo "== $n"; .devcarry/dg_$n gen 2>&1 | grep -E "fusec" | head -2; done; done
for n in t3; do echo "== timeline $n"; .devcarry/dt_$n timeline 2>&1 | grep -E "^\| [12] |instrumented"; done
