#!/usr/bin/env python3
"""Dump the IL method bodies of a .NET assembly as hex fixtures.

Usage: scripts/gen/cil-extract-bodies.py Sample.dll > tests/fixtures/cil/Sample.bodies.txt

Parses the PE file and the CLI metadata (ECMA-335 II.24, II.25) with the
standard library only: the MethodDef table gives each method's RVA, name and
signature blob; the body's extent is found from its header and its extra
data sections. MemberRef signatures are dumped too (for call resolution).

Output lines (tab-separated):
  body  <Type::Method>  <token>  <body hex>  <signature hex>
  ref   <Member>        <token>  <signature hex>              (MemberRef)
  spec  <token>         <method token>  <instantiation hex>   (MethodSpec)
  sig   <kind>          <token>  <blob hex>   (field, property, standalone, typespec)
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
    has_constant = coded([0x04, 0x08, 0x17], 2)
    has_custom_attribute = coded(
        [0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0A, 0x00, 0x0E, 0x17, 0x14, 0x11,
         0x1A, 0x1B, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2A, 0x2C, 0x2B], 5)
    custom_attribute_type = coded([0x06, 0x0A], 3)
    has_field_marshal = coded([0x04, 0x08], 1)
    has_decl_security = coded([0x02, 0x06, 0x20], 2)
    has_semantics = coded([0x14, 0x17], 1)
    method_def_or_ref = coded([0x06, 0x0A], 1)
    member_forwarded = coded([0x04, 0x06], 1)
    implementation = coded([0x26, 0x23, 0x27], 2)
    type_or_method_def = coded([0x02, 0x06], 1)
    # Row layouts (column sizes) of tables 0x00..0x2C (II.22).
    layout = {
        0x00: [2, str_sz, guid_sz, guid_sz, guid_sz],              # Module
        0x01: [resolution, str_sz, str_sz],                        # TypeRef
        0x02: [4, str_sz, str_sz, tdor, idx(0x04), idx(0x06)],     # TypeDef
        0x03: [idx(0x04)],                                         # FieldPtr
        0x04: [2, str_sz, blob_sz],                                # Field
        0x05: [idx(0x06)],                                         # MethodPtr
        0x06: [4, 2, 2, str_sz, blob_sz, idx(0x08)],               # MethodDef
        0x07: [idx(0x08)],                                         # ParamPtr
        0x08: [2, 2, str_sz],                                      # Param
        0x09: [idx(0x02), tdor],                                   # InterfaceImpl
        0x0A: [member_ref_parent, str_sz, blob_sz],                # MemberRef
        0x0B: [2, has_constant, blob_sz],                          # Constant
        0x0C: [has_custom_attribute, custom_attribute_type, blob_sz],
        0x0D: [has_field_marshal, blob_sz],                        # FieldMarshal
        0x0E: [2, has_decl_security, blob_sz],                     # DeclSecurity
        0x0F: [2, 4, idx(0x02)],                                   # ClassLayout
        0x10: [4, idx(0x04)],                                      # FieldLayout
        0x11: [blob_sz],                                           # StandAloneSig
        0x12: [idx(0x02), idx(0x14)],                              # EventMap
        0x13: [idx(0x14)],                                         # EventPtr
        0x14: [2, str_sz, tdor],                                   # Event
        0x15: [idx(0x02), idx(0x17)],                              # PropertyMap
        0x16: [idx(0x17)],                                         # PropertyPtr
        0x17: [2, str_sz, blob_sz],                                # Property
        0x18: [2, idx(0x06), has_semantics],                       # MethodSemantics
        0x19: [idx(0x02), method_def_or_ref, method_def_or_ref],   # MethodImpl
        0x1A: [str_sz],                                            # ModuleRef
        0x1B: [blob_sz],                                           # TypeSpec
        0x1C: [2, member_forwarded, str_sz, idx(0x1A)],            # ImplMap
        0x1D: [4, idx(0x04)],                                      # FieldRVA
        0x1E: [4, 4],                                              # ENCLog
        0x1F: [4],                                                 # ENCMap
        0x20: [4, 2, 2, 2, 2, 4, blob_sz, str_sz, str_sz],         # Assembly
        0x21: [4],                                                 # AssemblyProcessor
        0x22: [4, 4, 4],                                           # AssemblyOS
        0x23: [2, 2, 2, 2, 4, blob_sz, str_sz, str_sz, blob_sz],   # AssemblyRef
        0x24: [4, idx(0x23)],                                      # AssemblyRefProcessor
        0x25: [4, 4, 4, idx(0x23)],                                # AssemblyRefOS
        0x26: [4, str_sz, blob_sz],                                # File
        0x27: [4, 4, str_sz, str_sz, implementation],              # ExportedType
        0x28: [4, 4, str_sz, implementation],                      # ManifestResource
        0x29: [idx(0x02), idx(0x02)],                              # NestedClass
        0x2A: [2, 2, type_or_method_def, str_sz],                  # GenericParam
        0x2B: [method_def_or_ref, blob_sz],                        # MethodSpec
        0x2C: [idx(0x2A), tdor],                                   # GenericParamConstraint
    }
    starts = {}
    for t in range(0x2D):
        starts[t] = p
        p += rows[t] * sum(layout[t])

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
            owner[m] = (string(ns) + "." if ns else "") + string(name)
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
    # MethodSpec: the generic method (MethodDef or MemberRef) and its instantiation.
    for r in range(1, rows[0x2B] + 1):
        method, inst = row(0x2B, r)
        target = (0x06000000 if method & 1 == 0 else 0x0A000000) | (method >> 1)
        print("spec\t0x%08X\t0x%08X\t%s" % (0x2B000000 | r, target, blob(inst).hex()))
    # Other signature blobs: fields, properties, stand-alone sigs, type specs.
    for table, kind, col in [(0x04, "field", 2), (0x17, "property", 2), (0x11, "standalone", 0), (0x1B, "typespec", 0)]:
        for r in range(1, rows[table] + 1):
            print("sig\t%s\t0x%08X\t%s" % (kind, (table << 24) | r, blob(row(table, r)[col]).hex()))


if __name__ == "__main__":
    main(sys.argv[1])
