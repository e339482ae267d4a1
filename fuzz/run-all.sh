#!/usr/bin/env bash
# Runs every cargo-fuzz target (or the ones named) one after another, one
# libFuzzer job at a time, each for at most SECONDS (or its class's
# budget), and prints per target the executions and crashes, then the
# totals. Exits non-zero if any target crashed (panicked, timed out, ran
# out of memory), with the reproducer left in fuzz/artifacts/TARGET/.
#
#   fuzz/run-all.sh [OPTIONS] SECONDS [TARGET...]
#
#   --total T        the whole run takes at most T seconds: each target gets
#                    min(its budget, what is left / targets left)
#   --reader S       seconds per trace-reader target (native ... detect)
#   --config S       seconds per configuration-reader target (scenario_toml,
#                    profile_toml, fio_job, grid, calibration_targets,
#                    check_baseline)
#   --sim S          seconds per whole-simulation target (simulate,
#                    scenario_fs, state_file)
#   --reader-runs N, --config-runs N, --sim-runs N
#                    stop a target of the class after N executions
#                    (libFuzzer -runs; the time budget still applies)
#
# Every class defaults to SECONDS. Each target has its own -max_len (trace
# readers 4 KiB, TOML readers 8 KiB, JSON and structure-aware targets
# more), -rss_limit_mb=2048 and a -timeout per execution (10 s, 30 s for
# whole simulations). Before a target runs, its seed corpus is rebuilt in
# fuzz/seeds/TARGET/ from the repository's own samples (traces/,
# configs/, crates/simctl/tests/golden/, .../sweep-grid/, .../calibrate/, ...) and
# given to libFuzzer after fuzz/corpus/TARGET/, where the corpus grows.
# Neither is committed. The structure-aware targets (simulate, scenario_fs,
# state_file) decode libFuzzer's bytes with `arbitrary`; state_file also
# starts from real saved states it makes itself.
#
# Needs a nightly toolchain and cargo-fuzz. Targets are built without a
# sanitizer (the code under test is safe Rust: AddressSanitizer would cost
# executions, not find more); FUZZ_SANITIZER=address brings it back. Runs
# under `nice -n 10` (FUZZ_NICE=0 to not); FUZZ_BUILD=0 runs the targets
# as last built. Each target's libFuzzer log is
# kept in fuzz/logs/TARGET.log.
set -u

usage() {
    echo "usage: $0 [--total T] [--reader S] [--config S] [--sim S] [--reader-runs N] [--config-runs N] [--sim-runs N] SECONDS [TARGET...]" >&2
    echo "       (seconds and counts: whole numbers > 0)" >&2
    exit 2
}
number() {
    case "$1" in
    '' | *[!0-9]* | 0) usage ;;
    esac
}

total="" reader_s="" config_s="" sim_s="" reader_runs="" config_runs="" sim_runs=""
while [ $# -gt 0 ]; do
    case "$1" in
    --total) total=${2-}; number "$total"; shift 2 ;;
    --reader) reader_s=${2-}; number "$reader_s"; shift 2 ;;
    --config) config_s=${2-}; number "$config_s"; shift 2 ;;
    --sim) sim_s=${2-}; number "$sim_s"; shift 2 ;;
    --reader-runs) reader_runs=${2-}; number "$reader_runs"; shift 2 ;;
    --config-runs) config_runs=${2-}; number "$config_runs"; shift 2 ;;
    --sim-runs) sim_runs=${2-}; number "$sim_runs"; shift 2 ;;
    -h | --help) usage ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage
secs=$1
shift
number "$secs"
: "${reader_s:=$secs}" "${config_s:=$secs}" "${sim_s:=$secs}"

cd "$(dirname "$0")" || exit 2
root=$(cd .. && pwd)
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

# The class of a target: reader, config or sim.
class() {
    case "$1" in
    simulate | scenario_fs | state_file) echo sim ;;
    scenario_toml | profile_toml | fio_job | grid | calibration_targets | check_baseline) echo config ;;
    # Every trace reader, the binary blktrace one (blktrace_bin) included.
    *) echo reader ;;
    esac
}

# libFuzzer's -max_len of a target.
max_len() {
    case "$1" in
    check_baseline | state_file) echo 65536 ;;
    simulate) echo 16384 ;;
    scenario_fs) echo 8192 ;;
    scenario_toml | profile_toml | fio_job | grid | calibration_targets) echo 8192 ;;
    *) echo 4096 ;;
    esac
}

# Copies the repository's samples for target $1 into seeds/$1/ (rebuilt
# every run; files that do not exist are skipped).
seed() {
    local t=$1 d="$PWD/seeds/$1" f
    rm -rf "$d" && mkdir -p "$d"
    # put PATTERN...: copies the files matching the patterns (relative to
    # the repository) as seeds.
    put() {
        local p
        for p in "$@"; do
            for f in "$root"/$p; do
                [ -f "$f" ] && cp "$f" "$d/$(echo "${f#"$root"/}" | tr / _)"
            done
        done
    }
    case "$t" in
    native) put traces/sample.csv traces/native-extended.csv traces/bad/*.csv ;;
    mmc_ftrace) put traces/mmc-ftrace.txt traces/mmc-ftrace-3x.txt traces/bad/mmc-ftrace-*.txt ;;
    block_ftrace) put traces/block-ftrace.txt traces/bad/block-ftrace-*.txt ;;
    blkparse) put traces/blkparse.txt traces/bad/blkparse-*.txt ;;
    blktrace_bin) put traces/*.blktrace.* ;;
    fio_iolog) put traces/fio-v2.log traces/fio-v3.log traces/bad/fio-*.log ;;
    msr) put traces/msr.csv traces/bad/msr-*.csv ;;
    spc) put traces/spc.csv traces/bad/spc-*.csv ;;
    disksim) put traces/disksim.trace traces/bad/disksim-*.trace ;;
    mqsim) put traces/mqsim.trace traces/bad/mqsim-*.trace ;;
    ssdsim) put traces/ssdsim.ascii traces/bad/ssdsim-*.ascii ;;
    pixel6a)
        put traces/pixel6a.csv.gz traces/bad/pixel6a-*.csv
        [ -f "$root/traces/pixel6a.csv.gz" ] && gzip -dc "$root/traces/pixel6a.csv.gz" | head -c 16384 >"$d/pixel6a.csv"
        ;;
    biotracer) put traces/biotracer.txt traces/bad/biotracer-*.txt ;;
    detect) put traces/*.* traces/bad/* ;;
    scenario_toml)
        put configs/scenarios/*.toml configs/calibration/micro/*.toml crates/simctl/tests/golden/scenarios/*.toml \
            crates/simctl/tests/ext4/*.toml crates/simctl/tests/calibrate/*.toml crates/simctl/tests/sweep-grid/small.toml
        ;;
    profile_toml)
        # The first byte chooses: even = a device profile, odd = a host profile.
        for f in "$root"/configs/devices/*.toml; do
            [ -f "$f" ] && { printf '\0'; cat "$f"; } >"$d/device_$(basename "$f")"
        done
        for f in "$root"/configs/hosts/*.toml; do
            [ -f "$f" ] && { printf '\1'; cat "$f"; } >"$d/host_$(basename "$f")"
        done
        ;;
    fio_job) put configs/fio/*.fio ;;
    grid) put crates/simctl/tests/sweep-grid/grid.toml crates/simctl/tests/sweep-grid/phones.toml configs/sweeps/*.toml ;;
    calibration_targets)
        # Targets files, and one followed by a NUL and a report its
        # metrics are looked up in.
        put configs/calibration/*-androbench34.toml configs/calibration/*-heldout.toml configs/calibration/*-micro.toml
        local r="$root/crates/simctl/tests/golden/reports/scn-rand-read-4k.json"
        [ -f "$r" ] && {
            printf '[[targets]]\nscenario = "scenario.toml"\nmetric = "throughput.iops"\nvalue = 1000.0\n\0'
            cat "$r"
        } >"$d/with-report.toml"
        ;;
    check_baseline)
        # REPORT NUL BASELINE [NUL TOLERANCES]: a report against itself,
        # against another scheduler's, and a comparison.
        local g="$root/crates/simctl/tests/golden/reports" b="$root/configs/baselines/rand16-128m-deadline.json"
        pair() { [ -f "$1" ] && [ -f "$2" ] && { cat "$1"; printf '\0'; cat "$2"; [ -n "${4-}" ] && printf '\0%s' "$4"; } >"$d/$3"; }
        pair "$b" "$b" same
        pair "$g/scn-rand16-128m.json" "$b" golden-vs-baseline
        pair "$g/sched-noop.json" "$g/sched-deadline.json" noop-vs-deadline 'latency_us.p99=20
throughput.iops=5%'
        pair "$g/trace-sample.json" "$g/trace-sample-cfq.json" sample-vs-cfq
        ;;
    esac
    return 0
}

sanitizer=${FUZZ_SANITIZER:-none}
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
    echo "building ${#targets[@]} targets ..." >&2
    cargo +nightly fuzz build -O -s "$sanitizer" >&2 || { echo "$0: build failed" >&2; exit 2; }
fi
# The built binaries, run directly (cargo fuzz run would check the build again).
bin="target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

mkdir -p logs
# Artifacts (crash-*, timeout-*, oom-*, leak-*, slow-unit-*) of a target.
artifacts() { ls "artifacts/$1" 2>/dev/null | grep -Ec '^(crash|timeout|oom|leak)-'; }

started=$(date +%s)
total_execs=0
total_crashes=0
printf '%-20s %14s %8s %8s  %s\n' target executions crashes seconds exec/s
left=${#targets[@]}
for t in "${targets[@]}"; do
    c=$(class "$t")
    case "$c" in
    reader) budget=$reader_s runs=$reader_runs timeout=10 ;;
    config) budget=$config_s runs=$config_runs timeout=10 ;;
    sim) budget=$sim_s runs=$sim_runs timeout=30 ;;
    esac
    if [ -n "$total" ]; then
        share=$(((total - ($(date +%s) - started)) / left))
        [ "$share" -lt "$budget" ] && budget=$share
        [ "$budget" -lt 1 ] && budget=1
    fi
    left=$((left - 1))
    seed "$t"
    mkdir -p "corpus/$t" "artifacts/$t"
    log="logs/$t.log"
    before=$(artifacts "$t")
    start=$(date +%s)
    nice -n "${FUZZ_NICE:-10}" "$bin/$t" "corpus/$t" "seeds/$t" \
        -artifact_prefix="artifacts/$t/" -max_len="$(max_len "$t")" -rss_limit_mb=2048 \
        -timeout="$timeout" -max_total_time="$budget" ${runs:+-runs="$runs"} \
        -print_final_stats=1 >"$log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    # The final statistics, else the last "#N DONE" or progress line.
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')
    if [ -z "$execs" ]; then
        execs=$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    fi
    execs=${execs:-0}
    crashes=$(($(artifacts "$t") - before))
    if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
        crashes=1 # failed without an artifact (see the log)
    fi
    printf '%-20s %14s %8s %8s  %s\n' "$t" "$execs" "$crashes" "$took" "$((execs / (took > 0 ? took : 1)))"
    if [ "$crashes" -gt 0 ]; then
        echo "  -> $t crashed: see fuzz/$log and fuzz/artifacts/$t/" >&2
    fi
    total_execs=$((total_execs + execs))
    total_crashes=$((total_crashes + crashes))
done
printf '%-20s %14s %8s %8s\n' TOTAL "$total_execs" "$total_crashes" "$(($(date +%s) - started))"
[ "$total_crashes" -eq 0 ]
