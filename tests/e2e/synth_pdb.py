#!/usr/bin/env python3
"""Writes a Portable PDB for an assembly that has none: one document,
/synthetic/<Assembly>.cs, and for MethodDef row N one sequence point at IL
offset 0 on line N (columns 1-2). The PDB id is the one the assembly's
Portable CodeView entry names, so that a reader that checks ids accepts it.

    python3 synth_pdb.py ASSEMBLY.dll OUT.pdb

For tests only (tests/e2e_coverage.rs): it lets coverage be checked on a
ReadyToRun assembly, whose real PDB is not available here. Written from
ECMA-335 II.24 (metadata root, #~ stream) and the Portable PDB
specification (PortablePdb-Metadata.md: #Pdb stream, Document and
MethodDebugInformation tables, sequence-point blobs), and PE-COFF.md (the
CodeView entry); independent of corprof's own reader.
"""
import struct
import sys


def pe_sections(d):
    pe = struct.unpack_from("<I", d, 0x3C)[0]
    assert d[pe:pe + 4] == b"PE\0\0", "not a PE file"
    nsec, optsz = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
    opt = pe + 24
    dirs = opt + (96 if struct.unpack_from("<H", d, opt)[0] == 0x10B else 112)
    secs = [struct.unpack_from("<IIII", d, opt + optsz + i * 40 + 8) for i in range(nsec)]

    def off(rva):
        for vsize, va, rsize, raw in secs:
            if va <= rva < va + max(vsize, rsize):
                return raw + rva - va
        raise ValueError(f"RVA {rva:#x} outside every section")

    return dirs, off


def pdb_id(d):
    dirs, off = pe_sections(d)
    rva, size = struct.unpack_from("<II", d, dirs + 6 * 8)
    o = off(rva)
    for i in range(size // 28):
        _, stamp, _, minor, kind, _, _, ptr = struct.unpack_from("<IIHHIIII", d, o + i * 28)
        if kind == 2 and minor == 0x504D and d[ptr:ptr + 4] == b"RSDS":
            return d[ptr + 4:ptr + 20] + struct.pack("<I", stamp)
    raise ValueError("no Portable CodeView entry")


def table_rows(d):
    """The row counts of the assembly's tables (#~ header)."""
    dirs, off = pe_sections(d)
    cli = off(struct.unpack_from("<I", d, dirs + 14 * 8)[0])
    root = off(struct.unpack_from("<I", d, cli + 8)[0])
    assert struct.unpack_from("<I", d, root)[0] == 0x424A5342, "no metadata root"
    vlen = struct.unpack_from("<I", d, root + 12)[0]
    p = root + 16 + vlen + 2
    streams = struct.unpack_from("<H", d, p)[0]
    p += 2
    for _ in range(streams):
        offset, _ = struct.unpack_from("<II", d, p)
        name_end = d.index(b"\0", p + 8)
        name = d[p + 8:name_end]
        p = (name_end + 4) & ~3
        if name in (b"#~", b"#-"):
            t = root + offset
            valid = struct.unpack_from("<Q", d, t + 8)[0]
            present = [i for i in range(64) if valid >> i & 1]
            rows = struct.unpack_from(f"<{len(present)}I", d, t + 24)
            return valid, dict(zip(present, rows))
    raise ValueError("no #~ stream")


def compressed(n):
    if n < 0x80:
        return bytes([n])
    if n < 0x4000:
        return struct.pack(">H", 0x8000 | n)
    return struct.pack(">I", 0xC0000000 | n)


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def main(assembly, out):
    d = open(assembly, "rb").read()
    ident = pdb_id(d)
    valid, rows = table_rows(d)
    methods = rows.get(0x06, 0)
    type_system = valid & ((1 << 0x30) - 1)

    blob = bytearray(b"\0")

    def add_blob(data):
        index = len(blob)
        blob.extend(compressed(len(data)) + data)
        return index

    name = assembly.rsplit("/", 1)[-1].rsplit(".", 1)[0] + ".cs"
    parts = [add_blob(p.encode()) if p else 0 for p in ["", "synthetic", name]]
    doc_name = add_blob(b"/" + b"".join(compressed(p) for p in parts))
    points = []
    for row in range(1, methods + 1):
        # LocalSignature 0; IL offset 0; ΔLines 0, ΔColumns 1; line `row`, column 1.
        points.append(add_blob(compressed(0) + compressed(0) + compressed(0) + compressed(1)
                               + compressed(row) + compressed(1)))
    assert len(blob) < 0x10000, "blob heap too large for 2-byte indexes"
    guid = bytes.fromhex("f862513f c607 d311 9053 00c04fa302a1".replace(" ", ""))  # C#

    tables = bytearray(struct.pack("<IBBBBQQ", 0, 2, 0, 0, 1, (1 << 0x30) | (1 << 0x31), 0))
    tables += struct.pack("<II", 1, methods)
    tables += struct.pack("<HHHH", doc_name, 0, 0, 1)  # Name, HashAlgorithm, Hash, Language
    for p in points:
        tables += struct.pack("<HH", 1, p)  # Document, SequencePoints
    pdb_stream = ident + struct.pack("<IQ", 0, type_system)
    pdb_stream += b"".join(struct.pack("<I", rows[i]) for i in sorted(rows) if i < 0x30)

    streams = [(b"#Pdb", pad4(pdb_stream)), (b"#~", pad4(bytes(tables))),
               (b"#Strings", b"\0\0\0\0"), (b"#Blob", pad4(bytes(blob))), (b"#GUID", guid)]
    version = pad4(b"PDB v1.0\0")
    header_len = 16 + len(version) + 4 + sum(8 + len(pad4(n + b"\0")) for n, _ in streams)
    head = struct.pack("<IHHII", 0x424A5342, 1, 1, 0, len(version)) + version + struct.pack("<HH", 0, len(streams))
    body = b""
    offset = header_len
    for n, data in streams:
        head += struct.pack("<II", offset, len(data)) + pad4(n + b"\0")
        body += data
        offset += len(data)
    assert len(head) == header_len
    open(out, "wb").write(head + body)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
