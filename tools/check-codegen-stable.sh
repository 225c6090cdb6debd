#!/usr/bin/env bash
# Checks that a refactoring left fusec's output unchanged: for every example,
# bench graph and lit-input graph, on sm_90a and sm_80, fused and --no-fuse,
# with --gemm auto, fusec and cublaslt, the generated CUDA (--emit cuda) and
# the plan (explain --format json) must be byte-identical to a reference
# build's. With --ptx, the PTX too (NVRTC; slower).
#
#   tools/check-codegen-stable.sh --snapshot REF_FUSEC DIR   # write the reference
#   tools/check-codegen-stable.sh --check NEW_FUSEC DIR      # compare against it
#
# A reference is usually made from a build of the commit before the change:
#   git worktree add /tmp/ref HEAD~1 && cmake -S /tmp/ref -B /tmp/ref/build -G Ninja \
#     && cmake --build /tmp/ref/build --target fusec
# No GPU is needed: compiling and explaining only name a device profile.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 (--snapshot|--check) FUSEC DIR [--ptx]" >&2; exit 2; }
[ $# -ge 3 ] || usage
mode=$1 fusec=$2 dir=$3
ptx=0
[ "${4:-}" = "--ptx" ] && ptx=1
case "$mode" in --snapshot|--check) ;; *) usage ;; esac
[ -x "$fusec" ] || { echo "error: $fusec is not an executable" >&2; exit 2; }

out=$dir
[ "$mode" = --check ] && out=$(mktemp -d)
if [ "$mode" = --snapshot ]; then
  # Only a folder this script made before is replaced: never a file, a
  # device or someone's folder.
  if [ -e "$out" ] && { [ ! -d "$out" ] || [ -L "$out" ] ||
                        { [ -n "$(ls -A "$out")" ] && [ ! -f "$out/.check-codegen-stable" ]; }; }; then
    echo "error: $out exists and is not a snapshot of this script's; give a new folder" >&2
    exit 2
  fi
  rm -rf "$out"
  mkdir -p "$out"
  touch "$out/.check-codegen-stable"
fi

graphs=$(ls examples/*.json bench/graphs/*.json test/lit/*/Inputs/*.json | sort)
count=0
for g in $graphs; do
  # Inputs that are not graphs (measurement files) are skipped: the reference
  # rejects them too, and what it says is compared like any output.
  key=$(echo "$g" | tr '/' '_')
  for arch in sm_90a sm_80; do
    for fuse in fused unfused; do
      flag=""
      [ "$fuse" = unfused ] && flag="--no-fuse"
      for gemm in auto fusec cublaslt; do
        # --no-fuse takes no GEMM choice: one run covers it.
        [ "$fuse" = unfused ] && [ "$gemm" != auto ] && continue
        base="$out/$key.$arch.$fuse.$gemm"
        "$fusec" explain "$g" --arch "$arch" $flag --gemm "$gemm" --format json \
          >"$base.explain.json" 2>"$base.explain.err" || echo "exit $?" >>"$base.explain.err"
        mkdir -p "$base.cuda"
        "$fusec" compile "$g" --arch "$arch" $flag --gemm "$gemm" --emit cuda -o "$base.cuda" \
          >/dev/null 2>"$base.cuda.err" || echo "exit $?" >>"$base.cuda.err"
        if [ "$ptx" = 1 ] && [ "$gemm" = auto ]; then
          mkdir -p "$base.ptx"
          "$fusec" compile "$g" --arch "$arch" $flag --emit ptx -o "$base.ptx" \
            >/dev/null 2>"$base.ptx.err" || echo "exit $?" >>"$base.ptx.err"
        fi
        # What the CLI says names the output folder: compare it without.
        sed -i "s#$out/##g" "$base".*.err
        count=$((count + 1))
      done
    done
  done
done

if [ "$mode" = --snapshot ]; then
  echo "check-codegen-stable: reference of $count configurations written to $dir"
  exit 0
fi
if [ "$ptx" = 0 ]; then
  # A reference made with --ptx is compared without its PTX.
  if diff -r -q -x '*.ptx' -x '*.ptx.err' -x .check-codegen-stable "$dir" "$out" >"$out.diff" 2>&1; then
    echo "check-codegen-stable: $count configurations identical to $dir"
    rm -rf "$out" "$out.diff"
    exit 0
  fi
elif diff -r -q -x .check-codegen-stable "$dir" "$out" >"$out.diff" 2>&1; then
  echo "check-codegen-stable: $count configurations identical to $dir (PTX too)"
  rm -rf "$out" "$out.diff"
  exit 0
fi
echo "check-codegen-stable: output differs from $dir:" >&2
head -n 40 "$out.diff" >&2
echo "(new output kept in $out; the full list in $out.diff)" >&2
exit 1
