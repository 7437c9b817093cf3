#!/usr/bin/env bash
# clang-format drift check over the C++ sources: src/, tests/fuzz/ and the
# benchmark drivers under bench/. Uses clang-format 14 (Debian 12's
# clang-format package; other major versions format differently, so they
# are refused rather than reporting drift that is not there).
#   scripts/check-format.sh          report files that differ, exit 1 if any
#   scripts/check-format.sh --fix    reformat them in place (`make format`)
set -euo pipefail
cd "$(dirname "$0")/.."

CF=${CLANG_FORMAT:-}
if [ -z "$CF" ]; then
  CF=$(command -v clang-format-14 || command -v clang-format || true)
fi
if [ -z "$CF" ]; then
  echo "clang-format not found: run scripts/install-build-deps.sh --check" >&2
  exit 2
fi
if ! "$CF" --version | grep -q 'version 14\.'; then
  echo "$CF is not clang-format 14 ($("$CF" --version)); set CLANG_FORMAT" >&2
  exit 2
fi

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  'src/*.h' 'src/*.cc' 'tests/fuzz/*.h' 'tests/fuzz/*.cc' 'bench/*.h' 'bench/*.cc' | sort -u)
# Files deleted in the work tree but still in the index.
existing=()
for f in "${files[@]}"; do [ -f "$f" ] && existing+=("$f"); done

if [ "${1:-}" = "--fix" ]; then
  printf '%s\0' "${existing[@]}" | xargs -0 "$CF" -i
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! printf '%s\0' "${existing[@]}" | xargs -0 "$CF" --dry-run -Werror 2>"$log"; then
  grep -o '^[^:]*\.\(h\|cc\):' "$log" | sort -u | sed 's/:$/: not clang-formatted/'
  echo "format-check: run 'make format' (clang-format 14, .clang-format)" >&2
  exit 1
fi
echo "format-check: ${#existing[@]} files clang-formatted"
