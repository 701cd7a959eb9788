#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The API reference builds from the public headers as docs/Doxyfile says, without a warning (the Doxyfile makes
# every warning an error). Exit 77 (a skip) without doxygen (Debian: apt-get install doxygen).
#   bash tests/docs/check_api_reference.sh SOURCE_DIR OUTPUT_DIR
set -euo pipefail
root=$1 out=$2
command -v doxygen > /dev/null || { echo "SKIP: doxygen not found (apt-get install doxygen)"; exit 77; }
rm -rf "$out" && mkdir -p "$out"
cd "$root"
# docs/Doxyfile as written, only the output moved out of the source tree.
log=$( (cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $out") | doxygen - 2>&1) || { echo "$log"; exit 1; }
[ -z "$log" ] || { echo "doxygen said:"; echo "$log"; exit 1; }
[ -s "$out/html/index.html" ] || { echo "no $out/html/index.html"; exit 1; }
pages=$(find "$out/html" -name '*.html' | wc -l)
[ "$pages" -ge 50 ] || { echo "only $pages pages in $out/html; expected the whole API"; exit 1; }
echo "API reference: $pages pages in $out/html, no warnings"
