#!/bin/bash
cd "$(dirname "$0")/.."
.devcarry/dm_gen gen 2>&1 | tail -8
.devcarry/dm_tl timeline 2>&1 | tail -40
