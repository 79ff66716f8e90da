# SPDX-License-Identifier: BSD-3-Clause
"""Configuration files of sluice-mux and sluice-agent, written from objects.

    cfg = MuxConfig([Service("192.0.2.10", "tcp", 80,
                             [Backend("10.1.0.1", 8080, "10.0.1.1", weight=2)])])
    text = cfg.render(devargs="net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap",
                      file_prefix=test_prefix("reload"))

The text is libconfig as docs/configuration.md describes it, laid out the
same way every time: tests/pcap/config_errors edits it by string
replacement, so a change of layout here is a change of that test's input.
The same objects are what the packet checks compare outputs against
(MuxConfig.service(), Backend.takes_new).
"""

DEFAULT_SEED = "5a1ce0f10e5eed5a1ce0f10e5eed0001"
# the process tests' seed, of their managers and muxes alike
TEST_SEED = "00112233445566778899aabbccddeeff"
PROTO_NUM = {"tcp": 6, "udp": 17}
# The EAL options every test process runs with: no hugepages, no PCI scan.
EAL = ["--no-huge", "-m", "256", "--no-pci"]


def eal_line(file_prefix=None):
    """The eal group: EAL, and --file-prefix when given."""
    args = EAL + (["--file-prefix=" + file_prefix] if file_prefix else [])
    return "eal = [ %s ];" % ", ".join('"%s"' % a for a in args)


def pcap_port_mac(i):
    """MAC of the i-th net_pcap port a process probes: the PMD numbers its
    fixed locally administered addresses 02:70:63:61:70:NN (0x02, "pcap", a
    per-process counter) in probe order."""
    return "02:70:63:61:70:%02x" % i


class Backend:
    """A backend; weight None and state None: the defaults (1, active)."""

    def __init__(self, dip, port, host, weight=None, state=None, zone=None):
        self.dip, self.port, self.host, self.weight = dip, port, host, weight
        self.state, self.zone = state, zone

    @property
    def takes_new(self):
        """Whether new flows may go to it (active, weight not 0)."""
        return self.state in (None, "active") and self.weight != 0

    def render(self):
        w = "" if self.weight is None else " weight = %d;" % self.weight
        st = "" if self.state is None else ' state = "%s";' % self.state
        z = "" if self.zone is None else ' zone = "%s";' % self.zone
        return '{ dip = "%s"; port = %d;%s%s%s host = "%s"; }' % (
            self.dip, self.port, w, st, z, self.host)


def render_rule(name, rule):
    """One admission rule: name = { limit = ...; burst = ...; mode = "..."; };"""
    body = " ".join('%s = %s;' % (k, '"%s"' % v if isinstance(v, str) else v)
                    for k, v in rule.items())
    return "%s = { %s };" % (name, body)


def render_limits(limits):
    """A service's limits group from a dict: rule name -> dict of fields,
    and "refuse" -> "drop" | "rst" | "icmp" (docs/protection.md)."""
    parts = []
    for k, v in limits.items():
        parts.append('refuse = "%s";' % v if k == "refuse" else render_rule(k, v))
    return "limits = { %s };" % " ".join(parts)


class Service:
    def __init__(self, vip, proto, port, backends, limits=None, affinity=None,
                 on_unusable=None, cross_zone=None):
        self.vip, self.proto, self.port, self.backends = vip, proto, port, backends
        self.limits = limits
        self.affinity, self.on_unusable, self.cross_zone = affinity, on_unusable, cross_zone

    def render_choice(self):
        """The choice fields (lb_choice.h) the service sets, as one string."""
        out = ""
        for name in ("affinity", "on_unusable"):
            if getattr(self, name) is not None:
                out += ' %s = "%s";' % (name, getattr(self, name))
        if self.cross_zone is not None:
            out += " cross_zone = %s;" % ("true" if self.cross_zone else "false")
        return out

    def key(self):
        return (self.vip, PROTO_NUM[self.proto], self.port)


def render_flow_table(services, hash_seed=DEFAULT_SEED, maglev_size=None, mux_rate=None):
    """The flow_table group (the mux's and the agent's), as lines; mux_rate:
    the mux-wide rule (a dict, as render_rule takes)."""
    lines = ["flow_table = {", '\thash_seed = "%s";' % hash_seed]
    if maglev_size is not None:
        lines.append("\tmaglev_size = %d;" % maglev_size)
    if mux_rate is not None:
        lines.append("\t" + render_rule("mux_new_per_second", mux_rate))
    lines.append("\tservices = (")
    for i, s in enumerate(services):
        lim = "" if s.limits is None else " " + render_limits(s.limits)
        lines.append('\t\t{ vip = "%s"; protocol = "%s"; port = %d;%s%s backends = (' % (
            s.vip, s.proto, s.port, lim, s.render_choice()))
        for j, b in enumerate(s.backends):
            lines.append("\t\t\t" + b.render() + ("," if j + 1 < len(s.backends) else ""))
        lines.append("\t\t) }" + ("," if i + 1 < len(services) else ""))
    lines += ["\t);", "};"]
    return lines


def metrics_lines(listen):
    """The metrics group for an endpoint on listen ("127.0.0.1:0"), or none."""
    return [] if listen is None else ['metrics = { listen = "%s"; };' % listen]


def _strings(values):
    return "[ %s ]" % ", ".join('"%s"' % v for v in values)


class MuxConfig:
    """A mux configuration. services None: no flow_table group (a member
    of a manager starts empty)."""

    def __init__(self, services, tunnel_address="10.255.0.1",
                 next_hop_mac="02:00:00:00:00:fe", mtu=None, tunnel_ttl=None,
                 arp_for_vips=None, workers=None, hash_seed=DEFAULT_SEED,
                 maglev_size=None, probers=None, idle_sleep_us=None, mux_rate=None,
                 conn_table=None, tunnel_address6=None, next_hop_mac6=None, nd_for_vips=None,
                 zone=None):
        self.services = services
        self.zone = zone
        self.tunnel_address = tunnel_address
        self.tunnel_address6 = tunnel_address6
        self.next_hop_mac = next_hop_mac
        self.next_hop_mac6 = next_hop_mac6
        self.nd_for_vips = nd_for_vips
        self.mtu = mtu
        self.tunnel_ttl = tunnel_ttl
        self.arp_for_vips = arp_for_vips
        self.workers = workers
        self.hash_seed = hash_seed
        self.maglev_size = maglev_size
        self.probers = probers
        self.idle_sleep_us = idle_sleep_us
        self.mux_rate = mux_rate
        self.conn_table = conn_table  # dict: the mux's conn_table group

    @property
    def ttl(self):
        return 64 if self.tunnel_ttl is None else self.tunnel_ttl

    def service(self, vip, proto, port):
        for s in self.services:
            if s.key() == (vip, proto, port):
                return s
        return None

    def vips(self):
        return sorted({s.vip for s in self.services})

    def render(self, devargs=None, workers=None, file_prefix=None, port_name="pcap",
               metrics=None):
        """The file's text; devargs: one port, named port_name (None: the
        mux's default name; no devargs: the mux's --pcap option gives the
        port); workers overrides the configured count; metrics: the
        endpoint's listen address (None: no metrics group)."""
        mux = ['\tnext_hop_mac = "%s";' % self.next_hop_mac]
        if self.tunnel_address is not None:
            mux.insert(0, '\ttunnel_address = "%s";' % self.tunnel_address)
        for name in ("tunnel_address6", "next_hop_mac6", "zone"):
            if getattr(self, name) is not None:
                mux.append('\t%s = "%s";' % (name, getattr(self, name)))
        if self.nd_for_vips is not None:
            mux.append("\tnd_for_vips = %s;" % ("true" if self.nd_for_vips else "false"))
        for name in ("mtu", "tunnel_ttl", "idle_sleep_us"):
            if getattr(self, name) is not None:
                mux.append("\t%s = %d;" % (name, getattr(self, name)))
        if self.arp_for_vips is not None:
            mux.append("\tarp_for_vips = %s;" % ("true" if self.arp_for_vips else "false"))
        if self.probers is not None:
            mux.append("\tprobers = %s;" % _strings(self.probers))
        if self.conn_table is not None:
            mux.append("\tconn_table = { %s };" % " ".join(
                "%s = %d;" % kv for kv in self.conn_table.items()))
        w = workers if workers is not None else self.workers
        if w is not None:
            mux.append("\tworkers = %d;" % w)
        lines = ["# generated by sluicetest.config", eal_line(file_prefix),
                 "mux = {"] + mux + ["};"]
        if devargs is not None:
            name = "" if port_name is None else 'name = "%s"; ' % port_name
            lines.append('ports = ( { %sdevargs = "%s"; } );' % (name, devargs))
        lines += metrics_lines(metrics)
        if self.services is not None:
            lines += render_flow_table(self.services, self.hash_seed, self.maglev_size,
                                       self.mux_rate)
        return "\n".join(lines + [""])


class AgentVM:
    """A VM: dip (IPv4) and/or dip6 (IPv6); None leaves the field out."""

    def __init__(self, name, dip, mac, dip6=None):
        self.name, self.dip, self.mac, self.dip6 = name, dip, mac, dip6


class AgentConfig:
    """A host agent configuration: its PA, the muxes it accepts tunnels from,
    its VMs and the flow table. Ports are probed uplink first, then the VMs
    in order, so the uplink has pcap_port_mac(0) and VM i pcap_port_mac(i + 1)."""

    def __init__(self, pa, muxes, vms, services, next_hop_mac="02:00:00:00:fe:11",
                 mss_clamp=None, hash_seed=DEFAULT_SEED, probers=(), pa6=None, gateway6=None,
                 mss_clamp6=None):
        self.pa, self.muxes, self.vms = pa, muxes, vms
        self.pa6, self.gateway6, self.mss_clamp6 = pa6, gateway6, mss_clamp6
        self.probers = list(probers)
        self.services = services
        self.next_hop_mac = next_hop_mac
        self.mss_clamp = mss_clamp
        self.hash_seed = hash_seed

    def ports(self):
        """Port names in probe order: "uplink", then the VM names."""
        return ["uplink"] + [v.name for v in self.vms]

    def port_mac(self, name):
        return pcap_port_mac(self.ports().index(name))

    def vm(self, name):
        return [v for v in self.vms if v.name == name][0]

    def render(self, devargs, file_prefix=None, metrics=None):
        """devargs: port name -> devargs; metrics: as MuxConfig.render()."""
        agent = ["\tmuxes = %s;" % _strings(self.muxes),
                 '\tnext_hop_mac = "%s";' % self.next_hop_mac]
        for name in ("pa", "pa6", "gateway6"):
            if getattr(self, name) is not None:
                agent.insert(0, '\t%s = "%s";' % (name, getattr(self, name)))
        for name in ("mss_clamp", "mss_clamp6"):
            if getattr(self, name) is not None:
                agent.append("\t%s = %d;" % (name, getattr(self, name)))
        if self.probers:
            agent.append("\tprobers = %s;" % _strings(self.probers))
        lines = ["# generated by sluicetest.config", eal_line(file_prefix),
                 "agent = {"] + agent + ["};",
                 'uplink = { devargs = "%s"; };' % devargs["uplink"], "vms = ("]
        for i, v in enumerate(self.vms):
            addrs = "".join(' %s = "%s";' % (k, a) for k, a in (("dip", v.dip), ("dip6", v.dip6))
                            if a is not None)
            lines.append('\t{ name = "%s"; devargs = "%s";%s mac = "%s"; }%s' % (
                v.name, devargs[v.name], addrs, v.mac, "," if i + 1 < len(self.vms) else ""))
        lines.append(");")
        lines += metrics_lines(metrics)
        lines += render_flow_table(self.services, self.hash_seed)
        return "\n".join(lines + [""])
