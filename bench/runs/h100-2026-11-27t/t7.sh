#!/bin/bash
cd "$(dirname "$0")/.."
for rep in 1 2; do
echo "== memset before each run"; .devcarry/column_softmax 8192 8192 2
echo "== back to back"; B2B=1 .devcarry/column_softmax 8192 8192 2
done
