# SPDX-License-Identifier: BSD-3-Clause
"""Prometheus metrics of the daemons: an endpoint's URL from the daemon's
log, a scrape read with prometheus_client's parser (python3-prometheus-client),
promtool's lint, and a Prometheus server a test starts.

    url = poll(lambda: url_in_log(daemons.log("mux")))
    s = scrape(url)
    s.value("sluice_drops_total", reason="no_service")    # 7.0
    s.total("sluice_backend_packets_total", vip="192.0.2.10")
    promtool_check(s.text)                                  # (0, "")

Sample names are the exposition's (sluice_x_total), not the parser's
family names (which drop _total).

documented_families() reads a daemon's table of docs/operations.md, so a
test can check that a scrape serves nothing the table leaves out:

    doc = documented_families(path, "sluice-mux")     # {name: (type, labels)}
    set(s.served()) - set(doc)                          # set(): all listed
"""
import json
import os
import re
import subprocess
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

URL_RE = re.compile(r"metrics: serving (http://\S+/metrics)")


def url_in_log(text):
    """The URL a daemon logged when it started serving, or None."""
    m = URL_RE.search(text)
    return m.group(1) if m else None


class Scrape:
    """One scrape: the text, its content type, and its samples as
    name -> [(labels, value)]; families: family name -> type."""

    def __init__(self, text, content_type=None):
        self.text = text
        self.content_type = content_type
        self.samples = {}
        self.families = {}
        self.labels = {}
        for fam in text_string_to_metric_families(text):
            self.families[fam.name] = fam.type
            for s in fam.samples:
                self.samples.setdefault(s.name, []).append((s.labels, s.value))
                self.labels.setdefault(fam.name, set()).update(set(s.labels) - {"le"})

    def names(self):
        """Every sample name."""
        return set(self.samples)

    def exported(self):
        """Every name a query may use: the samples' and those of families
        declared without a sample just now (a labelled gauge with no child,
        e.g. a VIP's share while it had no new connections)."""
        fams = {n + "_total" if t == "counter" else n for n, t in self.families.items()}
        return self.names() | fams

    def served(self):
        """Every family as the exposition names it (a counter's ..._total)
        -> (type, its samples' label names, None when it has no sample)."""
        return {n + "_total" if t == "counter" else n: (t, self.labels.get(n))
                for n, t in self.families.items()}

    def matching(self, name, **labels):
        return [v for l, v in self.samples.get(name, [])
                if all(l.get(k) == str(want) for k, want in labels.items())]

    def value(self, name, **labels):
        """The one sample of name with these labels (among others), or None."""
        vs = self.matching(name, **labels)
        return vs[0] if len(vs) == 1 else None

    def total(self, name, **labels):
        """The sum over the samples of name with these labels."""
        return sum(self.matching(name, **labels))


def documented_families(path, daemon):
    """The metric families the table of DAEMON ("sluice-mux") lists in
    docs/operations.md (at path): the rows under "### DAEMON" in "## Metrics",
    as {name: (type, set of label names)}. A row may name several families
    of one type and labels; a name there that begins with "_" goes on from
    the row's first name without its last word and _total: `sluice_limit_checks_total`,
    `_denied_total` is sluice_limit_denied_total. {} if there is no such table."""
    with open(path) as f:
        lines = f.read().splitlines()
    out, in_metrics, in_table = {}, False, False
    for line in lines:
        level = re.match(r"(#+) ", line)
        if level:
            if len(level.group(1)) <= 2:
                in_metrics = line == "## Metrics"
            in_table = in_metrics and line == f"### {daemon}"
            continue
        if not in_table or not line.startswith("| `"):
            continue
        # cells between unescaped |s: metric, type, labels, meaning
        name_cell, typ, label_cell = (c.strip() for c in re.split(r"(?<!\\)\|", line)[1:4])
        names = re.findall(r"`([a-z0-9_]+)`", name_cell)
        stem = names[0].rsplit("_", 2)[0]
        labels = set(re.findall(r"`([a-z0-9_]+)`", label_cell))
        for n in names:
            out[stem + n if n.startswith("_") else n] = (typ, labels)
    return out


def scrape(url, timeout=5):
    """GET url: a Scrape."""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return Scrape(r.read().decode(), r.headers.get("Content-Type"))


def scrape_until(url, pred, timeout=30, alive=None):
    """Scrape url until pred(scrape) is true (procs.poll): that Scrape, or None."""
    from sluicetest.procs import poll

    def once():
        s = scrape(url)
        return s if pred(s) else None
    return poll(once, timeout=timeout, alive=alive)


def promtool_check(text):
    """promtool check metrics on the text: (exit status, its complaints)."""
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def prometheus_config(path, targets, interval="1s"):
    """Write a Prometheus configuration scraping targets ({job: [host:port]})
    every interval."""
    lines = ["global:", f"  scrape_interval: {interval}", f"  evaluation_interval: {interval}",
             "scrape_configs:"]
    for job, addrs in sorted(targets.items()):
        lines += [f"  - job_name: {job}", "    static_configs:",
                  "      - targets: [%s]" % ", ".join(f'"{a}"' for a in addrs)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def prometheus_argv(config, data_dir, listen):
    """The command line of a Prometheus server for a test: its own data
    folder, only the API (no console templates), a short retention."""
    return ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={data_dir}",
            f"--web.listen-address={listen}", "--storage.tsdb.retention.time=1h",
            "--log.level=warn"]


def query_url(api, expr):
    """The URL of an instant query of the HTTP API at api (http://host:port)."""
    return f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": expr})


def query_result(body):
    """The vector of an /api/v1/query answer (text): [(labels, value)]."""
    j = json.loads(body)
    if j.get("status") != "success":
        raise ValueError(f"query failed: {j}")
    return [(r["metric"], float(r["value"][1])) for r in j["data"]["result"]]


def query(api, expr, timeout=5):
    """An instant query against a Prometheus at api: [(labels, value)]."""
    with urllib.request.urlopen(query_url(api, expr), timeout=timeout) as r:
        return query_result(r.read().decode())


def dashboard_metrics(path):
    """The metric names every panel's queries use in a Grafana dashboard
    (JSON): {panel title: set of names}; a panel without a query maps to
    an empty set. Names are sluice_... identifiers in each target's expr."""
    with open(path) as f:
        dash = json.load(f)
    panels = []

    def walk(ps):
        for p in ps:
            if p.get("type") == "row":
                walk(p.get("panels", []))
            else:
                panels.append(p)

    walk(dash.get("panels", []))
    out = {}
    for p in panels:
        names = set()
        for t in p.get("targets", []):
            names |= set(re.findall(r"\bsluice_[a-z0-9_]+", t.get("expr", "")))
        out[p.get("title", "?")] = names
    return out

