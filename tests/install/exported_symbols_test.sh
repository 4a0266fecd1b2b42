#!/usr/bin/env bash
# libtileops exports the application and authors' API only:
#  * every defined dynamic symbol, demangled, is a name of namespace tileops, the typeinfo,
#    vtable, VTT, guard variable, TLS function or thunk of one, or a C entry point of the C API;
#  * the C entry points are exactly the functions tileops/c_api.h declares;
#  * no internal header or source (core/src, core/ops) marks anything TILEOPS_API: internals
#    reach the tests through tileops::internals, never through the library's exports;
#  * the innermost name of every exported C++ symbol is a word of the installed headers (the
#    source tree's and the generated ones), which catches an internal class exported as a member
#    of a public one.
# Usage: exported_symbols_test.sh <libtileops.so> <c_api.h> <source dir> <generated include dir>
set -euo pipefail
lib=$1
header=$2
source_dir=$3
generated_include=$4
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

marked=$(grep -rn --include='*.hpp' --include='*.h' --include='*.cpp' 'TILEOPS_API' "$source_dir/core/src" "$source_dir/core/ops" || true)
[ -z "$marked" ] || fail "internal code is marked for export (TILEOPS_API belongs in the installed headers only):
$marked"

# The innermost name of each C++ symbol: derived prefixes, argument lists and template
# arguments dropped, then the last component of the qualified name (a destructor's without '~',
# an operator's as the word operator).
innermost() {
  sed -E "s/^($derived) //; s/\[abi:[a-z0-9]+\]//g; s/operator[^a-z_(][^(]*\(/operator(/; s/\(.*//; s/<.*//" |
    awk -F'::' '{ n = $NF; sub(/^~/, "", n); print n "\t" $0 }'
}
words=$(find "$source_dir/core/include/tileops" "$generated_include/tileops" -name '*.hpp' -o -name '*.h' |
          xargs cat | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u)
# std's function templates instantiated out of line for tileops types (an -O1 sanitizer build
# keeps std::__do_uninit_copy<Tensor*> out of line, for one) demangle with their tileops return
# type first, so core/tileops.map's tileops::* exports them too. They are weak instances of std's
# own templates, the definition any consumer would make: counted below, not checked by name.
std_instances='^tileops::[^ (]* std::'
undeclared=$(grep -E "^(($derived) )?tileops::" <<< "$symbols" | grep -vE "$std_instances" | innermost | sort -u |
             awk -F'\t' 'NR == FNR { known[$1] = 1; next } !($1 in known) { print $2 }' <(echo "$words") - | sort -u || true)
[ -z "$undeclared" ] || fail "$lib exports $(wc -l <<< "$undeclared") name(s) that no installed header declares:
$undeclared"
echo "exported symbols: $(wc -l <<< "$symbols"), all of the installed API ($(wc -l <<< "$c_exported") C entry points, $(grep -cE "$std_instances" <<< "$symbols" || true) std template instances on tileops types)"
