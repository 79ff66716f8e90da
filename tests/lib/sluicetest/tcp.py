# SPDX-License-Identifier: BSD-3-Clause
"""TCP header pieces both families' checks read."""

import struct


def mss_options(d, l4_off):
    """[(offset in d, value)] of every MSS option of the TCP header at l4_off
    (a sender may repeat one), options walked as RFC 9293 lays them out."""
    doff = (d[l4_off + 12] >> 4) * 4
    o, end, found = l4_off + 20, l4_off + doff, []
    while o < end:
        kind = d[o]
        if kind == 0:
            break
        if kind == 1:
            o += 1
            continue
        if o + 2 > end or d[o + 1] < 2 or o + d[o + 1] > end:
            break
        if kind == 2 and d[o + 1] == 4:
            found.append((o + 2, struct.unpack("!H", d[o + 2:o + 4])[0]))
        o += d[o + 1]
    return found


def mss_option(d, l4_off):
    """(offset in d, value) of the first MSS option of the TCP header at
    l4_off, or None."""
    found = mss_options(d, l4_off)
    return found[0] if found else None


def mss_clamp_all(d, l4_off, clamp):
    """Lowers, in the bytearray d, every MSS option above clamp to it; True
    if one changed (the caller redoes the checksum)."""
    changed = False
    for off, value in mss_options(d, l4_off):
        if value > clamp:
            d[off:off + 2] = struct.pack("!H", clamp)
            changed = True
    return changed
