#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""SimGrid platform (XML) of the simulated machines redist is measured on:
platform_xml.py fattree|torus|dragonfly RANKS [X,Y,Z (torus only: its extents, product RANKS)].

One host per rank, every link 12.5 GB/s (100 Gb/s) with 1 us latency, hosts 10 Gflop/s (unused: the runs simulate
the network only). The shapes for RANKS (P):
  fattree    two levels, full bisection: P = d*l hosts, d per leaf switch (d the power of two nearest sqrt(P) from
             below), l leaves, each leaf with one up-link to each of d top switches ("2;d,l;1,d;1,1")
  torus      3-D torus, extents as equal as P's factors allow, largest first (64: 4,4,4; 256: 8,8,4;
             1024: 16,8,8; 4096: 16,16,16) unless given (16,8,1: an asymmetric 2-D torus); SimGrid routes dimension by dimension, first dimension first, the
             shorter way round, and numbers hosts with the first dimension fastest
  dragonfly  G = sqrt(P)/4 groups (at least 2) of 2 chassis x R routers x H hosts, R = max(4, G) (SimGrid 3.32
             crashes with more groups than routers per chassis), H = P / (2 G R); one link per pair of routers and
             of chassis within a group, ceil(R H / (G - 1)) between each pair of groups (a group has about half as
             many global links as hosts: 2:1 tapered). 64: 2 x 2 x 4 x 4; 256: 4 x 2 x 4 x 8; 1024: 8 x 2 x 8 x 8
Prints the XML; the extents chosen go into a comment on its first lines.
"""
import math
import sys

BW, LAT = "12.5GBps", "1us"


def torus_extents(p):
    extents = [1, 1, 1]
    factors = []
    q, f = p, 2
    while q > 1:
        while q % f == 0:
            factors.append(f)
            q //= f
        f += 1
    for f in sorted(factors, reverse=True):
        extents[extents.index(min(extents))] *= f
    return sorted(extents, reverse=True)


def main():
    usage = "usage: platform_xml.py fattree|torus|dragonfly RANKS [X,Y,Z (torus)]"
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("fattree", "torus", "dragonfly") or not sys.argv[2].isdigit():
        sys.exit(usage)
    kind, p = sys.argv[1], int(sys.argv[2])
    given = None
    if len(sys.argv) == 4:
        parts = sys.argv[3].split(",")
        if kind != "torus" or len(parts) != 3 or not all(x.isdigit() and int(x) > 0 for x in parts):
            sys.exit(usage)
        given = [int(x) for x in parts]
        if math.prod(given) != p:
            sys.exit(f"torus: extents {sys.argv[3]} make {math.prod(given)} hosts, not {p}")
    if kind == "fattree":
        d = 1 << int(math.log2(math.isqrt(p)))
        if p % d:
            sys.exit(f"fattree: {p} hosts are not a multiple of {d} per leaf switch")
        topology, parameters = "FAT_TREE", f"2;{d},{p // d};1,{d};1,1"
        shape = f"{p // d} leaf switches of {d} hosts, {d} top switches"
    elif kind == "torus":
        e = given or torus_extents(p)
        topology, parameters = "TORUS", ",".join(map(str, e))
        shape = "torus " + "x".join(map(str, e))
    else:
        # SimGrid 3.32 wires a group's global links by router index within a chassis: more groups than routers
        # per chassis crash it, so routers per chassis = max(4, groups).
        g = max(2, math.isqrt(p) // 4)
        routers = max(4, g)
        hosts = p // (2 * g * routers)
        if hosts < 1 or 2 * g * routers * hosts != p:
            sys.exit(f"dragonfly: {p} hosts do not make {g} groups of 2 chassis x {routers} routers")
        global_links = math.ceil(routers * hosts / (g - 1))
        topology, parameters = "DRAGONFLY", f"{g},{global_links};2,1;{routers},1;{hosts}"
        shape = (f"{g} groups of 2 chassis x {routers} routers x {hosts} hosts, {global_links} links per pair of "
                 f"groups")
    print(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- redist bench/smpi/platform_xml.py {kind} {p}: {shape}; links {BW}, {LAT} -->
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-{p - 1}" suffix="" speed="10Gf" bw="{BW}" lat="{LAT}"
           loopback_bw="50GBps" loopback_lat="0.1us" topology="{topology}" topo_parameters="{parameters}"/>
</platform>""")


if __name__ == "__main__":
    main()
