#!/usr/bin/env bash
# The README's test command: install dependencies, build, run every test
# (unit, packet and the benchmark smoke run). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# Two cores: two tests at a time; each DPDK process uses its own file prefix.
set +e
meson test -C build --num-processes 2 --print-errorlogs "$@"
rc=$?
set -e
/usr/bin/python3 - <<'PY'
import json
ok = bad = 0
for line in open("build/meson-logs/testlog.json"):
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r["result"] != "SKIP":
        bad += 1
        print("failed:", r["name"], r["result"])
print(f"tests: {ok} passed, {bad} failed")
PY
exit "$rc"
