#!/bin/bash
cd "$(dirname "$0")/.."
for c in g gk; do echo "== $c"; cuobjdump -sass .devcarry/$c.cubin | grep -nE "LDG|STG|HGMMA|SYNCS.PHASECHK|UCGABAR|EXIT" | awk '{$1=$1};1' | cut -c1-90 | head -40; done
.devcarry/dm_keep gen 2>&1 | grep -E "fusec|v5: push, 16 st, 1/SM, no early"
.devcarry/dm_gen gen 2>&1 | grep -E "fusec|v5: push, 16 st, 1/SM, no early"
