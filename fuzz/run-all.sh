#!/usr/bin/env bash
# Runs every cargo-fuzz target (or the ones named) for SECONDS each, one
# after another, one libFuzzer job at a time, and prints per target the
# executions and crashes, then the totals. Exits non-zero if any target
# crashed (panicked, timed out, ran out of memory), with the reproducer
# left in fuzz/artifacts/TARGET/.
#
#   fuzz/run-all.sh SECONDS [TARGET...]
#
# Needs a nightly toolchain and cargo-fuzz. Targets are built without a
# sanitizer (the code under test is safe Rust: AddressSanitizer would cost
# executions, not find more); FUZZ_SANITIZER=address brings it back. Corpora grow in
# fuzz/corpus/TARGET/ (not committed); each target's libFuzzer log is kept
# in fuzz/logs/TARGET.log.
set -u

usage() {
    echo "usage: $0 SECONDS [TARGET...]   (SECONDS: whole seconds per target, > 0)" >&2
    exit 2
}
[ $# -ge 1 ] || usage
secs=$1
shift
case "$secs" in
'' | *[!0-9]* | 0) usage ;;
esac

cd "$(dirname "$0")" || exit 2
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "$0: no nightly toolchain: install it with 'rustup toolchain install nightly'" >&2
    exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "$0: cargo-fuzz is missing: install it with 'cargo install cargo-fuzz'" >&2
    exit 2
fi

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
[ ${#targets[@]} -gt 0 ] || { echo "$0: no fuzz targets found" >&2; exit 2; }

echo "building ${#targets[@]} targets ..." >&2
sanitizer=${FUZZ_SANITIZER:-none}
cargo +nightly fuzz build -O -s "$sanitizer" >&2 || { echo "$0: build failed" >&2; exit 2; }

mkdir -p logs
# Artifacts (crash-*, timeout-*, oom-*, leak-*, slow-unit-*) of a target.
artifacts() { ls "artifacts/$1" 2>/dev/null | grep -Ec '^(crash|timeout|oom|leak)-' ; }

total_execs=0
total_crashes=0
printf '%-14s %14s %8s  %s\n' target executions crashes seconds
for t in "${targets[@]}"; do
    log="logs/$t.log"
    before=$(artifacts "$t")
    start=$(date +%s)
    cargo +nightly fuzz run -O -s "$sanitizer" "$t" -- \
        -max_total_time="$secs" -timeout=30 -print_final_stats=1 >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    # The final statistics, else the last "#N DONE" or progress line.
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
    if [ -z "$execs" ]; then
        execs=$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    fi
    execs=${execs:-0}
    crashes=$(( $(artifacts "$t") - before ))
    if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
        crashes=1 # failed without an artifact (see the log)
    fi
    printf '%-14s %14s %8s  %s\n' "$t" "$execs" "$crashes" "$took"
    if [ "$crashes" -gt 0 ]; then
        echo "  -> $t crashed: see fuzz/$log and fuzz/artifacts/$t/" >&2
    fi
    total_execs=$((total_execs + execs))
    total_crashes=$((total_crashes + crashes))
done
printf '%-14s %14s %8s\n' TOTAL "$total_execs" "$total_crashes"
[ "$total_crashes" -eq 0 ]
