#!/usr/bin/env bash
# Writes the plugin guide's complete example plugin NAME (the ```cpp block that defines
# TILEOPS_PLUGIN(NAME, ...)) to OUT, exactly as the guide shows it, so that the test corpus
# builds and loads what a reader would copy.
# Usage: extract_guide_plugin.sh NAME GUIDE.md OUT.cpp
set -euo pipefail
name=$1
guide=$2
out=$3
code=$(awk -v name="$name" '
  /^```cpp$/ { inside = 1; block = ""; next }
  /^```$/ && inside { inside = 0; if (block ~ ("TILEOPS_PLUGIN\\(" name ",")) { printf "%s", block; found = 1; exit } next }
  inside { block = block $0 "\n" }
  END { if (!found) exit 1 }' "$guide") || { echo "$guide has no cpp block defining TILEOPS_PLUGIN($name, ...)" >&2; exit 1; }
tmp=$(mktemp "$out.XXXXXX")
printf '%s\n' "$code" > "$tmp"
# Rewritten only when the guide's block changed, so that an unrelated edit rebuilds nothing.
if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv "$tmp" "$out"; fi
