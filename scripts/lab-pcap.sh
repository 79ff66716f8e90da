#!/usr/bin/env bash
# The mux on its own, no namespaces (scripts/lab.sh --pcap runs this): it
# installs what is needed, builds, generates client traffic with scapy, runs
# sluice-mux over it through a net_pcap port, and prints what the mux did
# (its own summary) and what came out (decoded from the output pcap).
# The full lab with agents and backends is scripts/lab.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
work=$(mktemp -d /tmp/sluice-lab.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
/usr/bin/python3 scripts/lab_traffic.py gen "$work/in.pcap"
sed "s|@IN@|$work/in.pcap|; s|@OUT@|$work/out.pcap|" examples/lab-mux.cfg >"$work/mux.cfg"
./build/mux/sluice-mux -c "$work/mux.cfg" --exit-on-eof
/usr/bin/python3 scripts/lab_traffic.py report "$work/out.pcap"
