#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv,noheader
for rep in 1 2; do for n in base sig e8 e8f1 e8f2 e8f1f2 e4f1f2 e12f1f2; do echo "== $n"; .devcarry/t2/dg_$n gen 2>&1 | grep -E "^\|" | grep -v "^| variant\|---" ; done; done
for n in e8f1f2; do echo "== timeline $n"; .devcarry/t2/dt_$n timeline 2>&1 | grep -E "^\| [12] |instrumented"; done
