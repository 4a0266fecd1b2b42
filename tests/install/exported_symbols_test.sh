#!/usr/bin/env bash
# libtileops exports tileops's symbols only (core/tileops.map): every defined dynamic symbol,
# demangled, is a name of namespace tileops or the typeinfo, vtable, VTT, guard variable, TLS
# function or thunk of one. The core has no C entry points, so none is allowed by name.
# Usage: exported_symbols_test.sh <libtileops.so>
set -euo pipefail
lib=$1
fail() { echo "exported symbols: $*" >&2; exit 1; }

symbols=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3-) || fail "nm could not read $lib"
[ -n "$symbols" ] || fail "$lib exports nothing"
derived='typeinfo for|typeinfo name for|vtable for|VTT for|guard variable for|TLS init function for|TLS wrapper function for|non-virtual thunk to|virtual thunk to'
foreign=$(grep -vE "^(($derived) )?tileops::" <<< "$symbols" || true)
[ -z "$foreign" ] || fail "$lib exports $(wc -l <<< "$foreign") symbol(s) outside namespace tileops:
$foreign"
echo "exported symbols: $(wc -l <<< "$symbols"), all tileops's"
