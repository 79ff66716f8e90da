#!/usr/bin/env bash
# Install everything Sluice needs to build, test and run its lab, from
# Debian 12's archive only. Safe to run again: apt skips what is present.
set -euo pipefail

PKGS=(
	build-essential pkg-config meson ninja-build
	dpdk dpdk-dev libdpdk-dev libpcap-dev
	libprotobuf-c-dev protobuf-c-compiler libnng-dev libnanomsg-dev
	libconfig-dev libcriterion-dev libsqlite3-dev libmbedtls-dev
	# the manager's etcd store (store = "etcd"): its v3 JSON gateway over
	# libcurl, the JSON with jansson; etcd itself for the HA tests
	libcurl4-openssl-dev libjansson-dev etcd-server etcd-client
	# certificates for the control plane's mutual TLS (scripts/make-certs.sh)
	openssl
	python3-scapy iproute2 procps
	# the netns lab (scripts/lab.sh, tests/netns): namespaces and veths,
	# offloads off, real clients, the backends' python3 http.server
	python3 ethtool iputils-ping curl wrk tcpdump
	# the DPDK-owned veths' ingress drop (lab_dpdk_port): nft's netdev hook
	nftables
	# the PoP (scripts/netns-pop.sh, tests/netns/pop_*): the router's FRR,
	# each mux's BGP speaker (BIRD 2), jq for the tests' JSON
	frr bird2 jq
	# the SYN flood of tests/netns/flood.sh: spoofed sources at line rate
	hping3
	# operations (docs/operations.md): Prometheus and promtool, its client's text
	# parser for the tests, libsystemd (sd_notify), man pages from scdoc, mandoc
	prometheus python3-prometheus-client libsystemd-dev scdoc mandoc
	# systemd-analyze verify for the units (deploy/systemd), dpdk-dumpcap is dpdk's
	systemd
	# the lab's backtrace of a daemon that ignores SIGTERM (lab_kill), before SIGKILL
	gdb
)
# The libFuzzer harnesses (docs/fuzzing.md, -Dfuzz=true) need clang and its
# runtime; the test suite replays their corpora without them.
if [ "${1:-}" = "--fuzz" ]; then
	PKGS+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: need root to install: ${missing[*]}" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
