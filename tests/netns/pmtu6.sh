#!/usr/bin/env bash
# Path MTU discovery over IPv6: tests/netns/pmtu.sh on the dual-stack lab.
PMTU_FAMILY=6 exec bash "$(dirname "$0")/pmtu.sh"
