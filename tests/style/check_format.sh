#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The C and C++ sources are formatted as .clang-format says (clang-format 14, Debian 12's: other versions format
# some constructs differently, so they are not asked). Exit 77 (a skip) without that clang-format.
#   bash tests/style/check_format.sh SOURCE_DIR
set -euo pipefail
root=$1
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ] || ! "$format" --version | grep -q "version 14[.]"; then
  echo "SKIP: clang-format 14 not found (apt-get install clang-format on Debian 12)"
  exit 77
fi
cd "$root"
mapfile -t files < <(find src include tests tools python/src bench examples \
  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' \) -not -path 'bench/results/*' | sort)
[ ${#files[@]} -ge 200 ] || { echo "found ${#files[@]} C/C++ sources under $root; expected the whole tree"; exit 1; }
"$format" --style=file --dry-run --Werror "${files[@]}"
echo "${#files[@]} C and C++ sources formatted as .clang-format says"
