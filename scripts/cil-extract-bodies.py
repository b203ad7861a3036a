#!/usr/bin/env python3
"""Dump the IL method bodies of a .NET assembly as hex fixtures.

Usage: scripts/cil-extract-bodies.py Sample.dll > tests/fixtures/cil/Sample.bodies.txt

Parses the PE file and the CLI metadata (ECMA-335 II.24, II.25) with the
standard library only: the MethodDef table gives each method's RVA, name and
signature blob; the body's extent is found from its header and its extra
data sections. MemberRef signatures are dumped too (for call resolution).

Output lines (tab-separated):
  body  <Type::Method>  <token>  <body hex>  <signature hex>
  ref   <Type::Member>  <token>  <signature hex>
"""
import struct
import sys


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


class Image:
    def __init__(self, data):
        self.data = data
        pe = u32(data, 0x3C)
        assert data[pe:pe + 4] == b"PE\0\0", "not a PE file"
        coff = pe + 4
        nsections = u16(data, coff + 2)
        opt_size = u16(data, coff + 16)
        opt = coff + 20
        magic = u16(data, opt)
        dd = opt + (96 if magic == 0x10B else 112)
        self.cli_rva = u32(data, dd + 14 * 8)
        self.sections = []
        sec = opt + opt_size
        for i in range(nsections):
            s = sec + 40 * i
            vsize, va, rawsize, rawptr = struct.unpack_from("<IIII", data, s + 8)
            self.sections.append((va, max(vsize, rawsize), rawptr))

    def offset(self, rva):
        for va, size, raw in self.sections:
            if va <= rva < va + size:
                return rva - va + raw
        raise ValueError("RVA 0x%x not in any section" % rva)


def compressed(b, o):
    x = b[o]
    if x & 0x80 == 0:
        return x, o + 1
    if x & 0xC0 == 0x80:
        return ((x & 0x3F) << 8) | b[o + 1], o + 2
    return ((x & 0x1F) << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3], o + 4


def body_extent(b, o):
    """Length of the method body (header, code, sections) starting at o."""
    first = b[o]
    if first & 3 == 2:
        return 1 + (first >> 2)
    flags = u16(b, o)
    hsize = (flags >> 12) * 4
    code_size = u32(b, o + 4)
    end = o + hsize + code_size
    more = flags & 0x8
    while more:
        end = (end + 3) & ~3
        kind = b[end]
        if kind & 0x40:
            size = b[end + 1] | (b[end + 2] << 8) | (b[end + 3] << 16)
        else:
            size = b[end + 1]
        more = kind & 0x80
        end += size
    return end - o


def main(path):
    data = open(path, "rb").read()
    img = Image(data)
    cli = img.offset(img.cli_rva)
    md_rva, md_size = struct.unpack_from("<II", data, cli + 8)
    md = img.offset(md_rva)
    assert u32(data, md) == 0x424A5342, "no metadata root"
    vlen = u32(data, md + 12)
    p = md + 16 + vlen + 2
    nstreams = u16(data, p)
    p += 2
    streams = {}
    for _ in range(nstreams):
        off, size = struct.unpack_from("<II", data, p)
        p += 8
        end = data.index(b"\0", p)
        name = data[p:end].decode()
        p = (end + 4) & ~3
        streams[name] = md + off
    tables = streams.get("#~") or streams["#-"]
    strings = streams["#Strings"]
    blobs = streams["#Blob"]
    heap_sizes = data[tables + 6]
    valid = struct.unpack_from("<Q", data, tables + 8)[0]
    rows = [0] * 64
    p = tables + 24
    for t in range(64):
        if valid >> t & 1:
            rows[t] = u32(data, p)
            p += 4
    str_sz = 4 if heap_sizes & 1 else 2
    guid_sz = 4 if heap_sizes & 2 else 2
    blob_sz = 4 if heap_sizes & 4 else 2

    def idx(t):
        return 4 if rows[t] >= 1 << 16 else 2

    def coded(ts, bits):
        return 4 if max(rows[t] for t in ts) >= 1 << (16 - bits) else 2

    tdor = coded([0x02, 0x01, 0x1B], 2)
    resolution = coded([0x00, 0x1A, 0x23, 0x01], 2)
    member_ref_parent = coded([0x02, 0x01, 0x1A, 0x06, 0x1B], 3)
    # Row layouts (column sizes) of tables 0x00..0x0A.
    layout = {
        0x00: [2, str_sz, guid_sz, guid_sz, guid_sz],
        0x01: [resolution, str_sz, str_sz],
        0x02: [4, str_sz, str_sz, tdor, idx(0x04), idx(0x06)],
        0x03: [idx(0x04)],
        0x04: [2, str_sz, blob_sz],
        0x05: [idx(0x06)],
        0x06: [4, 2, 2, str_sz, blob_sz, idx(0x08)],
        0x07: [idx(0x08)],
        0x08: [2, 2, str_sz],
        0x09: [idx(0x02), tdor],
        0x0A: [member_ref_parent, str_sz, blob_sz],
    }
    starts = {}
    for t in range(0x0B):
        starts[t] = p
        p += rows[t] * sum(layout.get(t, [0]))

    def row(t, i):
        """Columns of 1-based row i of table t."""
        o = starts[t] + (i - 1) * sum(layout[t])
        out = []
        for size in layout[t]:
            out.append(u16(data, o) if size == 2 else u32(data, o))
            o += size
        return out

    def string(i):
        end = data.index(b"\0", strings + i)
        return data[strings + i:end].decode("utf-8")

    def blob(i):
        n, o = compressed(data, blobs + i)
        return data[o:o + n]

    # Owner type of each method: TypeDef.MethodList ranges.
    owner = {}
    ntypes = rows[0x02]
    for t in range(1, ntypes + 1):
        flags, name, ns, ext, fl, ml = row(0x02, t)
        nxt = row(0x02, t + 1)[5] if t < ntypes else rows[0x06] + 1
        for m in range(ml, nxt):
            owner[m] = (ns + "." if ns else "") + string(name)
    for m in range(1, rows[0x06] + 1):
        rva, impl, flags, name, sig, params = row(0x06, m)
        full = "%s::%s" % (owner.get(m, "?"), string(name))
        if rva == 0:
            continue
        o = img.offset(rva)
        body = data[o:o + body_extent(data, o)]
        print("body\t%s\t0x%08X\t%s\t%s" % (full, 0x06000000 | m, body.hex(), blob(sig).hex()))
    for r in range(1, rows[0x0A] + 1):
        parent, name, sig = row(0x0A, r)
        print("ref\t%s\t0x%08X\t%s" % (string(name), 0x0A000000 | r, blob(sig).hex()))


if __name__ == "__main__":
    main(sys.argv[1])
