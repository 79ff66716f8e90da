# SPDX-License-Identifier: BSD-3-Clause
"""TCP header pieces both families' checks read."""

import struct


def mss_option(d, l4_off):
    """(offset in d, value) of the MSS option of the TCP header at l4_off, or
    None; walks the options as RFC 9293 lays them out."""
    doff = (d[l4_off + 12] >> 4) * 4
    o, end = l4_off + 20, l4_off + doff
    while o < end:
        kind = d[o]
        if kind == 0:
            break
        if kind == 1:
            o += 1
            continue
        if o + 2 > end or d[o + 1] < 2:
            break
        if kind == 2 and d[o + 1] == 4:
            return o + 2, struct.unpack("!H", d[o + 2:o + 4])[0]
        o += d[o + 1]
    return None
