#!/usr/bin/env bash
# The CPU numerics call dtsim's own elementary functions (gpu/portable_math.hpp), never the C library's, whose
# results glibc picks by CPU feature and which differ between C libraries (docs/compute.md, "Pinned
# numerics"). Fails on any call of a libm transcendental function in gpu/ (but the CUDA sources, which run on
# the GPU's own math library), models/ or sim/. sqrt, floor, ceil, fabs and the like are exact everywhere and
# stay allowed.
# Usage: portable_math_only.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: portable_math_only.sh SOURCE_DIR}
pattern='(std::|[^a-z_:.>])(exp|exp2|expm1|log|log2|log10|log1p|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|erf|erfc|cbrt|hypot|lgamma|tgamma)f?[[:space:]]*\('
hits=$(cd "$root" && grep -rnE "$pattern" gpu models sim --include='*.cpp' --include='*.hpp' \
         | grep -v '^gpu/cuda' | grep -v '^gpu/portable_math' \
         | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' \
         | grep -vE '//.*(exp|log|pow|sin|cos|tanh|erf)\(' \
         | grep -vE '"[^"]*(exp|log|log2|pow|sin|cos|tanh|erf)\([^"]*"' \
         | grep -v 'floor_log2')
if [[ -n $hits ]]; then
  echo "C library elementary functions in the numerics; call dtsim::portable:: instead (gpu/portable_math.hpp):"
  echo "$hits"
  exit 1
fi
echo "portable_math_only: no C library elementary function in gpu/, models/ or sim/"
