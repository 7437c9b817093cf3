#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/, clang, ASan+UBSan) and runs each
# for FUZZ_SECONDS, one at a time, then writes tests/fuzz/results/<date>.md:
# per target the seconds, runs, corpus at the end and findings.
#
#   FUZZ_SECONDS=600          time per target
#   FUZZ_TARGETS="a b"        subset (default: every target below)
#   FUZZ_NICE=10              niceness of the fuzzing processes
#   FUZZ_UPDATE_CORPUS=1      add to tests/fuzz/corpus/<target>/ the inputs
#                             of a -merge=1 minimization of seeds + findings
#                             that the seeds lack, smallest first, up to
#                             FUZZ_CORPUS_KB (32) per target
#   FUZZ_RESULTS=path         results file (default tests/fuzz/results/<UTC date>.md)
#   FUZZ_APPEND=1             add rows to an existing results file
#   FUZZ_NO_BUILD=1           use the targets already built in build-fuzz/
#
# The seeds stay read-only: each target fuzzes into build-fuzz/corpus/<target>,
# and findings (crash-*, leak-*, oom-*, timeout-*) land in
# build-fuzz/findings/<target>/. Exit status 1 when any target had a finding.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-600}
NICE=${FUZZ_NICE:-10}
JOBS=${JOBS:-2}
ALL_TARGETS="parquet_reader expr_parser json_decoder delta_log stream_checkpoint job_yaml s3_xml"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}
RESULTS=${FUZZ_RESULTS:-tests/fuzz/results/$(date -u +%Y-%m-%d).md}

# Longest input per target: what a real file of that kind needs, no more
# (longer inputs only slow the search down).
max_len() {
  case "$1" in
    parquet_reader) echo 65536 ;;
    expr_parser) echo 512 ;;
    delta_log | json_decoder) echo 16384 ;;
    *) echo 8192 ;;
  esac
}
# Seed directory name under tests/fuzz/corpus/.
seed_dir() {
  case "$1" in
    parquet_reader) echo parquet ;;
    *) echo "$1" ;;
  esac
}

if ! command -v clang++ >/dev/null; then
  echo "make fuzz needs clang and libFuzzer: apt-get install clang libclang-rt-14-dev" >&2
  exit 2
fi
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSILT_BUILD_FUZZERS=ON -DSILT_SANITIZE=ON -DSILT_TSAN=OFF -DSILT_BUILD_TESTS=OFF >/dev/null
  bins=()
  for t in $TARGETS; do bins+=("${t}_fuzzer"); done
  nice -n "$NICE" cmake --build "$BUILD" -j"$JOBS" --target "${bins[@]}"
fi

mkdir -p "$(dirname "$RESULTS")"
[ "${FUZZ_APPEND:-0}" = 1 ] && [ -f "$RESULTS" ] || {
  echo "# Fuzz results $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "$(clang++ --version | head -1), ASan+UBSan, ${SECONDS_PER_TARGET} s per target," \
    "one target at a time at nice ${NICE} on $(nproc) shared cores."
  echo
  echo "| target | seconds | runs | exec/s | seeds | corpus at end (files/size) | coverage (cov/ft) | findings |"
  echo "| --- | ---: | ---: | ---: | ---: | --- | --- | --- |"
} > "$RESULTS"

status=0
for t in $TARGETS; do
  bin="$BUILD/tests/fuzz/${t}_fuzzer"
  seeds="tests/fuzz/corpus/$(seed_dir "$t")"
  work="$BUILD/corpus/$t"
  findings="$BUILD/findings/$t"
  log="$BUILD/fuzz-$t.log"
  rm -rf "$work" "$findings"
  mkdir -p "$work" "$findings"
  cp "$seeds"/* "$work"/
  nseeds=$(ls "$seeds" | wc -l)
  echo "fuzzing $t for ${SECONDS_PER_TARGET}s (log: $log)"
  start=$(date +%s)
  set +e
  nice -n "$NICE" "$bin" "$work" -max_len="$(max_len "$t")" -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$(($(date +%s) - start))
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
  execs=$(sed -n 's/^stat::average_exec_per_sec: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | sed 's/cov: \([0-9]*\) ft: \([0-9]*\)/\1\/\2/')
  files=$(ls "$work" | wc -l)
  size=$(du -sk "$work" | cut -f1)
  found=$(ls "$findings" | tr '\n' ' ')
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    status=1
    found="exit $rc: ${found:-see $log}"
  else
    found="none"
  fi
  echo "| $t | $elapsed | ${runs:-?} | ${execs:-?} | $nseeds | $files / ${size} KB | ${cov:-?} | $found |" >>"$RESULTS"
  if [ "${FUZZ_UPDATE_CORPUS:-0}" = 1 ] && [ "$found" = none ]; then
    min="$BUILD/corpus-min/$t"
    rm -rf "$min" && mkdir -p "$min"
    nice -n "$NICE" "$bin" -merge=1 -max_len="$(max_len "$t")" "$min" "$seeds" "$work" \
      >"$BUILD/merge-$t.log" 2>&1
    # New inputs keep libFuzzer's content-hash names (a seed's copy in the
    # merged set has its hash for a name, so it is recognised and skipped);
    # the smallest are added first, up to FUZZ_CORPUS_KB per target.
    declare -A have=()
    for s in "$seeds"/*; do have[$(sha1sum <"$s" | cut -c1-40)]=1; done
    budget=$((${FUZZ_CORPUS_KB:-32} * 1024))
    while read -r bytes f; do
      [ -n "${have[$(basename "$f")]:-}" ] && continue
      [ "$bytes" -le "$budget" ] || break
      cp "$f" "$seeds/"
      budget=$((budget - bytes))
    done < <(find "$min" -type f -printf '%s %p\n' | sort -n)
    unset have
  fi
done
echo "results: $RESULTS"
exit $status
