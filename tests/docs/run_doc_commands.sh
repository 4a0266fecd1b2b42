#!/usr/bin/env bash
# Runs every command the user documentation shows: each line starting with "$ " inside a
# ```sh block of docs/*.md and README.md, from a copy of the source tree's root that points
# build/ at the build being tested. scripts/install-deps.sh and scripts/build.sh are run by the
# README's own commands in CI and are skipped here.
# Usage: run_doc_commands.sh <source dir> <build dir>
set -euo pipefail
source_dir=$1
build_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work" /tmp/tileops-doc-prefix' EXIT
ln -s "$build_dir" "$work/build"
ln -s "$source_dir/scripts" "$work/scripts"
cd "$work"
count=0
for doc in "$source_dir"/docs/*.md "$source_dir"/README.md; do
  while IFS= read -r command; do
    case "$command" in
      scripts/install-deps.sh*|scripts/build.sh*|scripts/test.sh*) continue ;;
    esac
    echo "+ $command"
    bash -c "$command" > "$work/out.log" 2>&1 || { cat "$work/out.log"; echo "failed: $command ($doc)"; exit 1; }
    count=$((count + 1))
  done < <(awk '/^```sh/{f=1; next} /^```/{f=0} f && /^\$ /{sub(/^\$ /, ""); print}' "$doc")
done
echo "ran $count documented commands"
