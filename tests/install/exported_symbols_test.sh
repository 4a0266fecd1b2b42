#!/usr/bin/env bash
# libtileops exports tileops's symbols only (core/tileops.map): every defined dynamic symbol,
# demangled, is a name of namespace tileops, the typeinfo, vtable, VTT, guard variable, TLS
# function or thunk of one, or a C entry point of the C API; and the C entry points are exactly
# the functions tileops/c_api.h declares.
# Usage: exported_symbols_test.sh <libtileops.so> <c_api.h>
set -euo pipefail
lib=$1
header=$2
fail() { echo "exported symbols: $*" >&2; exit 1; }

symbols=$(nm -D --defined-only -C "$lib" | cut -d' ' -f3-) || fail "nm could not read $lib"
[ -n "$symbols" ] || fail "$lib exports nothing"
derived='typeinfo for|typeinfo name for|vtable for|VTT for|guard variable for|TLS init function for|TLS wrapper function for|non-virtual thunk to|virtual thunk to'
c_exported=$(grep -E '^tileops_[a-z0-9_]+$' <<< "$symbols" | sort || true)
c_declared=$(grep -oE 'TILEOPS_C_API [^(]*[ *]tileops_[a-z0-9_]+\(' "$header" | grep -oE 'tileops_[a-z0-9_]+\($' | tr -d '(' | sort)
[ -n "$c_declared" ] || fail "$header declares no C entry point"
[ "$c_exported" = "$c_declared" ] || fail "the C entry points $lib exports differ from those $header declares:
$(diff <(echo "$c_declared") <(echo "$c_exported") || true)"
foreign=$(grep -vE "^(($derived) )?tileops::" <<< "$symbols" | grep -vE '^tileops_[a-z0-9_]+$' || true)
[ -z "$foreign" ] || fail "$lib exports $(wc -l <<< "$foreign") symbol(s) outside namespace tileops and the C API:
$foreign"
echo "exported symbols: $(wc -l <<< "$symbols"), all tileops's ($(wc -l <<< "$c_exported") C entry points)"
