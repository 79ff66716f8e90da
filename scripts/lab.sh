#!/usr/bin/env bash
# The README's lab command. Today (issue 2) the lab is the mux on its own:
# it installs what is needed, builds, generates client traffic with scapy,
# runs sluice-mux over it through a net_pcap port, and prints what the mux
# did (its own summary) and what came out (decoded from the output pcap).
# Later issues grow it into namespaces with agents, backends and a manager.
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
