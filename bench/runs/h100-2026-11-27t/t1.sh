#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv,noheader
for rep in 1 2; do for n in base sig e8 e16 e16nosig e16at0; do echo "== $n"; .devcarry/t1/dg_$n gen 2>&1 | grep -E "^\|" | grep -v "^| *name\|---" ; done; done
for n in base e16 e16at0; do echo "== timeline $n"; .devcarry/t1/dt_$n timeline 2>&1 | grep -E "^\| [12] |instrumented"; done
