#!/usr/bin/env bash
# Live capture with dpdk-dumpcap on the lab's hugepages path (LAB_HUGEPAGES=1,
# the one scripts/lab.sh --hugepages takes): the lab mounts a hugetlbfs of
# its own and grows the page pool, the mux and both agents run on it
# without --no-huge, keeping DPDK's multi-process support; dumpcap attaches
# to the mux and to agent 1 with the filter 'ip proto 4' while 100
# requests go through the VIP (tests/netns/check_capture.py has the
# checks). The daemons' EAL memory is at a fixed base address, the same for
# every build (lab_eal_hugepages says why). The pages and the mount are
# given back on any exit.
# Topology: scripts/netns-lab.sh.
. "$(dirname "$0")/lib.sh"
command -v dpdk-dumpcap >/dev/null || { echo "FAIL $T_NAME: no dpdk-dumpcap (dpdk)"; exit 1; }
export LAB_HUGEPAGES=1
t_init
pages_before=$(cat /proc/sys/vm/nr_hugepages)
lab_topology_up
check "hugepages: $LAB_HUGE_PAGES free 2 MiB pages on the lab's own hugetlbfs" lab_hugepages_up
lab_configs 1 1 1 1
check "the daemons run without --no-huge, on the lab's hugetlbfs" \
	bash -c "! grep -q no-huge '$LAB_DIR/mux.cfg' && grep -q 'huge-dir=$LAB_DIR/huge' '$LAB_DIR/agent1.cfg'"
lab_start_all 1 1 1 1
echo "# lab up in $((SECONDS - T_START)) s"
# dumpcap must map the daemons' memory where they have it: at the lab's fixed
# base (lab_eal_hugepages), not wherever the kernel put it.
eal_at_base() {
	local n pid
	for n in mux agent1; do
		pid=$(lab_pid "$n") || return 1
		grep -q "^${LAB_EAL_BASE#0x}-" "/proc/$pid/maps" || return 1
	done
}
check "the mux's and agent 1's EAL memory starts at $LAB_EAL_BASE (--base-virtaddr)" eal_at_base

dips=
for v in "${LAB_VMS[@]}"; do dips+=${LAB_VM_DIP[$v]},; done
check "dpdk-dumpcap on the mux and agent 1: the captures hold what was forwarded" \
	t_py "$LAB_SRC/tests/netns/check_capture.py" --dir "$LAB_DIR" \
	--client-ns "$LAB_NS_CLIENT" --url "http://$LAB_VIP/" -n 100 \
	--mux "${LAB_PREFIX[mux]}" --mux-port net_af_packet0 \
	--agent "${LAB_PREFIX[1]}" --agent-port net_af_packet0 \
	--mux-ta "$LAB_MUX_TA" --pa "${LAB_HOST_PA[1]}" \
	--pas "${LAB_HOST_PA[1]},${LAB_HOST_PA[2]}" --dips "${dips%,}" \
	--be-port "$LAB_BE_PORT" --client "$LAB_CLIENT_IP"

t_end
lab_down
check "the hugetlbfs is unmounted and the page pool back at $pages_before" \
	bash -c "! mountpoint -q '$LAB_DIR/huge' && [ \$(cat /proc/sys/vm/nr_hugepages) -eq $pages_before ]"
t_check_clean
t_finish
