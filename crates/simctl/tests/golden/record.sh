#!/usr/bin/env bash
# Runs every line of crates/simctl/tests/golden/manifest.txt (from the
# repository root) with the release simctl and
# writes (or, with --check, compares) crates/simctl/tests/golden/reports/NAME.json.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
g=crates/simctl/tests/golden
bin=target/release/simctl
mode=${1:-record}
mkdir -p $g/reports
fail=0
while read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    out=$(mktemp)
    # shellcheck disable=SC2086
    if ! $bin $args --quiet --json "$out" >/dev/null 2>"$out.err"; then
        echo "FAILED $name: $(head -c 400 "$out.err")"; fail=1; rm -f "$out" "$out.err"; continue
    fi
    if [ "$mode" = --check ]; then
        if cmp -s "$out" "$g/reports/$name.json"; then echo "same    $name"; else echo "DIFFERS $name"; fail=1; fi
    else
        mv "$out" "$g/reports/$name.json"; echo "recorded $name"
    fi
    rm -f "$out" "$out.err"
done < $g/manifest.txt
exit $fail
