# SPDX-License-Identifier: BSD-3-Clause
"""sluicetest: the one Python harness of Sluice's tests.

Every Python test (tests/pcap, tests/process, the Python parts of
tests/netns) imports it; meson puts tests/lib on PYTHONPATH for them
(tests/meson.build), and no test changes its own import path. By hand:

    PYTHONPATH=tests/lib /usr/bin/python3 tests/pcap/icmp/test.py --keep

  checks   one line per check, a count of failures, the exit status
  procs    daemons and their DPDK file prefixes and run folders, telemetry,
           polling, free ports
  config   sluice-mux and sluice-agent configuration files from objects
  manager  a manager and its muxes (ManagerLab); readings of sluicectl's
           JSON, also as a command line for the shell tests
  netns    network namespaces, raw sockets inside them, their SNMP counters
  systemd  a NOTIFY_SOCKET, as a Type=notify unit gives a daemon
  lab      the namespace lab's traffic and counters (scripts/lab_tool.py is
           its command line)
  metrics  the daemons' Prometheus endpoints: scrapes, promtool, a
           Prometheus server and its query API, a Grafana dashboard's queries
  pcap     pcap files, frames byte by byte, runs over net_pcap, packet checks
           (needs scapy: /usr/bin/python3)
  rows     the rows of a packet case with several ports, as its gen.py
           writes them (needs scapy)
  limits   the admission-rule packet cases: their services, trains of
           segments with their verdicts, rule counters (needs scapy)
"""
