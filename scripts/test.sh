#!/usr/bin/env bash
# The README's test command: install dependencies, build, run every test
# (unit, packet and the benchmark smoke run). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# Two cores: two tests at a time; each DPDK process uses its own file prefix.
set +e
# The soak suite (the SYN flood test: a measurement on the same two cores) runs apart.
meson test -C build --num-processes 2 --print-errorlogs --no-suite soak "$@"
rc=$?
set -e
# The same unit, packet, process and namespace tests again with AddressSanitizer and
# UndefinedBehaviorSanitizer: any report fails the run.
if [ -z "${SLUICE_NO_SANITIZE:-}" ]; then
	[ -f build-asan/build.ninja ] ||
		meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
	ninja -C build-asan
	set +e
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		meson test -C build-asan --num-processes 2 --print-errorlogs \
		--suite unit --suite pcap --suite process --suite netns --suite fuzz \
		--no-suite netns_plain
	arc=$?
	set -e
	[ "$rc" -ne 0 ] || rc=$arc
fi
/usr/bin/python3 - <<'PY'
import json
ok = bad = 0
for log in ("build/meson-logs/testlog.json", "build-asan/meson-logs/testlog.json"):
  try:
    lines = open(log).readlines()
  except FileNotFoundError:
    continue
  for line in lines:
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r["result"] != "SKIP":
        bad += 1
        print("failed:", log.split("/")[0], r["name"], r["result"])
print(f"tests: {ok} passed, {bad} failed")
PY
exit "$rc"
