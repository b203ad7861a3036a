//! Signature blobs: compressed integers and every signature form, with
//! expected bytes written by hand from ECMA-335 II.23.2.

use corprof::cil::{
    decode_compressed_i32, decode_compressed_u32, decode_type_def_or_ref, encode_compressed_i32,
    encode_compressed_u32, encode_type_def_or_ref, ArrayShape,
};
use corprof::cil::{
    ErrorKind, FieldSig, LocalVarSig, MethodSig, MethodSpecSig, PropertySig, StackSig, Token,
    TypeSig,
};

fn names(t: Token) -> String {
    match t.0 {
        0x0100_0005 => "List`1".into(),
        0x0100_0003 => "IsVolatile".into(),
        0x0100_0020 => "Nullable`1".into(),
        0x0200_0002 => "Program".into(),
        _ => format!("{t}"),
    }
}

#[test]
fn compressed_unsigned_spec_examples() {
    let cases: &[(u32, &[u8])] = &[
        (0x03, &[0x03]),
        (0x7F, &[0x7F]),
        (0x80, &[0x80, 0x80]),
        (0x2E57, &[0xAE, 0x57]),
        (0x3FFF, &[0xBF, 0xFF]),
        (0x4000, &[0xC0, 0x00, 0x40, 0x00]),
        (0x1FFF_FFFF, &[0xDF, 0xFF, 0xFF, 0xFF]),
    ];
    for &(v, bytes) in cases {
        let mut out = Vec::new();
        encode_compressed_u32(&mut out, v).unwrap();
        assert_eq!(out, bytes, "encode {v:#x}");
        assert_eq!(decode_compressed_u32(bytes).unwrap(), (v, bytes.len()));
    }
    assert!(encode_compressed_u32(&mut Vec::new(), 0x2000_0000).is_err());
    let e = decode_compressed_u32(&[0xE0, 0, 0, 0]).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidCompressedInt);
    assert_eq!(
        decode_compressed_u32(&[0xC0, 0]).unwrap_err().kind(),
        &ErrorKind::UnexpectedEnd
    );
}

#[test]
fn compressed_signed_spec_examples() {
    let cases: &[(i32, &[u8])] = &[
        (3, &[0x06]),
        (-3, &[0x7B]),
        (64, &[0x80, 0x80]),
        (-64, &[0x01]),
        (8191, &[0xBF, 0xFE]),
        (-8192, &[0x80, 0x01]),
        (268_435_455, &[0xDF, 0xFF, 0xFF, 0xFE]),
        (-268_435_456, &[0xC0, 0x00, 0x00, 0x01]),
    ];
    for &(v, bytes) in cases {
        let mut out = Vec::new();
        encode_compressed_i32(&mut out, v).unwrap();
        assert_eq!(out, bytes, "encode {v}");
        assert_eq!(decode_compressed_i32(bytes).unwrap(), (v, bytes.len()));
    }
    assert!(encode_compressed_i32(&mut Vec::new(), 1 << 28).is_err());
}

#[test]
fn type_def_or_ref_tokens() {
    // TypeRef row 0x12: (0x12 << 2) | 1 = 0x49; TypeSpec row 2: (2 << 2) | 2 = 0x0A.
    for (tok, bytes) in [
        (Token(0x0100_0012), &[0x49][..]),
        (Token(0x1B00_0002), &[0x0A][..]),
        (Token(0x0200_0100), &[0x84, 0x00][..]),
    ] {
        let mut out = Vec::new();
        encode_type_def_or_ref(&mut out, tok).unwrap();
        assert_eq!(out, bytes);
        assert_eq!(decode_type_def_or_ref(bytes).unwrap(), (tok, bytes.len()));
    }
    assert!(encode_type_def_or_ref(&mut Vec::new(), Token(0x0600_0001)).is_err());
    let e = decode_type_def_or_ref(&[0x03]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidSignature(_)));
}

fn method_rt(bytes: &[u8]) -> MethodSig {
    let m = MethodSig::decode(bytes).unwrap();
    assert_eq!(m.encode().unwrap(), bytes);
    m
}

#[test]
fn method_def_sigs() {
    // static int Fib(int)
    let m = method_rt(&[0x00, 0x01, 0x08, 0x08]);
    assert_eq!(m.ret, TypeSig::I4);
    assert_eq!(m.params, vec![TypeSig::I4]);
    assert_eq!(
        m.format_method("Program::Fib", &names),
        "int Program::Fib(int)"
    );
    assert_eq!(
        m.stack_sig(),
        StackSig {
            params: 1,
            has_this: false,
            returns_value: true
        }
    );
    // instance void .ctor()
    let m = method_rt(&[0x20, 0x00, 0x01]);
    assert!(m.has_this());
    assert_eq!(
        m.stack_sig(),
        StackSig {
            params: 0,
            has_this: true,
            returns_value: false
        }
    );
    assert_eq!(
        m.format_method("Program::.ctor", &names),
        "void Program::.ctor()"
    );
    // !!0 M<T>(!!0[], class List`1<int>)
    let m = method_rt(&[
        0x30, 0x01, 0x02, 0x1E, 0x00, 0x1D, 0x1E, 0x00, 0x15, 0x12, 0x15, 0x01, 0x08,
    ]);
    assert_eq!(m.generic_params, 1);
    assert_eq!(
        m.params[1],
        TypeSig::GenericInst {
            value_type: false,
            ty: Token(0x0100_0005),
            args: vec![TypeSig::I4]
        }
    );
    assert_eq!(
        m.format_method("C::M", &names),
        "!!0 C::M<!!0>(!!0[], List`1<int>)"
    );
    // explicit this: `this` is listed, not implicit
    let m = method_rt(&[0x60, 0x01, 0x01, 0x12, 0x08]);
    assert_eq!(
        m.stack_sig(),
        StackSig {
            params: 1,
            has_this: false,
            returns_value: false
        }
    );
    // modopt on the return type does not make it non-void
    let m = method_rt(&[0x00, 0x00, 0x20, 0x0D, 0x01]);
    assert!(!m.stack_sig().returns_value);
}

#[test]
fn method_ref_vararg_with_sentinel() {
    // vararg void F(int, ..., string, double)
    let m = method_rt(&[0x05, 0x03, 0x01, 0x08, 0x41, 0x0E, 0x0D]);
    assert_eq!(m.sentinel, Some(1));
    assert_eq!(m.params, vec![TypeSig::I4, TypeSig::String, TypeSig::R8]);
    assert_eq!(
        m.format_method("F", &names),
        "void F(int, ..., string, double)"
    );
    assert_eq!(m.stack_sig().params, 3);
    let e = MethodSig::decode(&[0x05, 0x02, 0x01, 0x41, 0x08, 0x41, 0x08]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidSignature(_)));
}

#[test]
fn field_property_local_spec_sigs() {
    // int modreq(IsVolatile) f
    let f = FieldSig::decode(&[0x06, 0x1F, 0x0D, 0x08]).unwrap();
    assert_eq!(
        f.ty,
        TypeSig::Modified {
            required: true,
            modifier: Token(0x0100_0003),
            ty: Box::new(TypeSig::I4)
        }
    );
    assert_eq!(f.encode().unwrap(), [0x06, 0x1F, 0x0D, 0x08]);
    assert_eq!(f.ty.format(&names), "int modreq(IsVolatile)");
    // instance int this[string]
    let p = PropertySig::decode(&[0x28, 0x01, 0x08, 0x0E]).unwrap();
    assert!(p.has_this);
    assert_eq!(
        (p.ty.clone(), p.params.clone()),
        (TypeSig::I4, vec![TypeSig::String])
    );
    assert_eq!(p.encode().unwrap(), [0x28, 0x01, 0x08, 0x0E]);
    // locals: int, pinned ref int, TypedReference, string[,] (sizes [3], lo [-1])
    let bytes = [
        0x07, 0x04, 0x08, 0x45, 0x10, 0x08, 0x16, 0x14, 0x0E, 0x02, 0x01, 0x03, 0x01, 0x7F,
    ];
    let l = LocalVarSig::decode(&bytes).unwrap();
    assert_eq!(l.locals.len(), 4);
    assert_eq!(
        l.locals[1],
        TypeSig::Pinned(Box::new(TypeSig::ByRef(Box::new(TypeSig::I4))))
    );
    assert_eq!(l.locals[2], TypeSig::TypedByRef);
    assert_eq!(
        l.locals[3],
        TypeSig::Array(
            Box::new(TypeSig::String),
            ArrayShape {
                rank: 2,
                sizes: vec![3],
                lower_bounds: vec![-1]
            }
        )
    );
    assert_eq!(l.encode().unwrap(), bytes);
    let shown: Vec<String> = l.locals.iter().map(|t| t.format(&names)).collect();
    assert_eq!(
        shown,
        ["int", "ref int pinned", "TypedReference", "string[,]"]
    );
    // TypeSpec: valuetype Nullable`1<int> (TypeRef row 0x20 → 0x81 → 80 81)
    let t = TypeSig::decode(&[0x15, 0x11, 0x80, 0x81, 0x01, 0x08]).unwrap();
    assert_eq!(t.format(&names), "Nullable`1<int>");
    assert_eq!(t.encode().unwrap(), [0x15, 0x11, 0x80, 0x81, 0x01, 0x08]);
    // FNPTR int(int), PTR void, VAR 0, MVAR 1, nested szarray of object
    for (bytes, text) in [
        (&[0x1B, 0x00, 0x01, 0x08, 0x08][..], "delegate*<int, int>"),
        (&[0x0F, 0x01][..], "void*"),
        (&[0x13, 0x00][..], "!0"),
        (&[0x1E, 0x01][..], "!!1"),
        (&[0x1D, 0x1D, 0x1C][..], "object[][]"),
        (&[0x11, 0x08][..], "Program"),
        (&[0x18][..], "nint"),
    ] {
        let t = TypeSig::decode(bytes).unwrap();
        assert_eq!(t.format(&names), text);
        assert_eq!(t.encode().unwrap(), bytes);
    }
    let s = MethodSpecSig::decode(&[0x0A, 0x02, 0x08, 0x0E]).unwrap();
    assert_eq!(s.args, vec![TypeSig::I4, TypeSig::String]);
    assert_eq!(s.encode().unwrap(), [0x0A, 0x02, 0x08, 0x0E]);
}

#[test]
fn signature_errors() {
    let e = MethodSig::decode(&[0x00, 0x02, 0x08, 0x08]).unwrap_err();
    assert_eq!((e.offset(), e.kind()), (4, &ErrorKind::UnexpectedEnd));
    let e = TypeSig::decode(&[0x17]).unwrap_err();
    assert_eq!(
        (e.offset(), e.kind()),
        (0, &ErrorKind::InvalidSignature("unknown element type"))
    );
    let e = TypeSig::decode(&[0x08, 0x08]).unwrap_err();
    assert_eq!((e.offset(), e.kind()), (1, &ErrorKind::TrailingBytes));
    let deep: Vec<u8> = std::iter::repeat_n(0x0F, 100).chain([0x08]).collect();
    assert_eq!(
        TypeSig::decode(&deep).unwrap_err().kind(),
        &ErrorKind::TooDeep
    );
    let e = MethodSig::decode(&[0x06, 0x00, 0x01]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidSignature(_)));
    assert!(FieldSig::decode(&[0x07, 0x08]).is_err());
    assert!(LocalVarSig::decode(&[0x06, 0x00]).is_err());
    assert!(PropertySig::decode(&[0x00, 0x00, 0x08]).is_err());
    // A local signature claiming 2^28 locals fails on the bytes it has.
    let e = LocalVarSig::decode(&[0x07, 0xD0, 0x00, 0x00, 0x00, 0x08]).unwrap_err();
    assert_eq!((e.offset(), e.kind()), (6, &ErrorKind::UnexpectedEnd));
    let e = TypeSig::decode(&[0x15, 0x08, 0x04]).unwrap_err();
    assert!(e.to_string().contains("GENERICINST"), "{e}");
    let e = TypeSig::decode(&[0x41]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidSignature(_)));
}

#[test]
fn formatting_is_bounded_by_real_sizes_not_claimed_counts() {
    // GENERIC method claiming 0x07138081 generic parameters: the name stays short.
    let m = MethodSig::decode(&[0x10, 0xC7, 0x13, 0x80, 0x81, 0x00, 0x08]).unwrap();
    assert_eq!(m.generic_params, 0x0713_8081);
    assert_eq!(
        m.format_method("M", &names),
        "int M<!!0, ..., !!118718592>()"
    );
    // An array claiming rank 2^28.
    let t = TypeSig::decode(&[0x14, 0x08, 0xD0, 0x00, 0x00, 0x00, 0x00, 0x00]).unwrap();
    assert_eq!(t.format(&names), "int[rank 268435456]");
    let t = TypeSig::decode(&[0x14, 0x08, 0x03, 0x00, 0x00]).unwrap();
    assert_eq!(t.format(&names), "int[,,]");
}

// ---------------------------------------------------------------------------
// Building signatures: builders give the bytes mcs wrote (tests/fixtures/cil,
// `Sample.debug.txt`).

/// A hex string of the fixture as bytes.
fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn builders_match_compiler_blobs() {
    use corprof::cil::Token;
    use corprof::cil::{LocalVarSig, MethodSig, MethodSpecSig, TypeSig};
    // Program::Throws(string): `body ... 0001010e`.
    assert_eq!(
        MethodSig::static_void_string().encode().unwrap(),
        hex("0001010e")
    );
    // ref WriteLine(int) 0x0A00001A: `00010108`.
    assert_eq!(
        MethodSig::static_method(TypeSig::Void, vec![TypeSig::I4])
            .encode()
            .unwrap(),
        hex("00010108")
    );
    // ref Format(string, object, object) 0x0A00002E: `00030e0e1c1c`.
    assert_eq!(
        MethodSig::static_method(
            TypeSig::String,
            vec![TypeSig::String, TypeSig::Object, TypeSig::Object]
        )
        .encode()
        .unwrap(),
        hex("00030e0e1c1c")
    );
    // Program::Boxing(object) returns object: `00011c1c`; the helper shape
    // object (object[]) is 00 01 1C 1D 1C.
    assert_eq!(
        MethodSig::static_method(TypeSig::Object, vec![TypeSig::Object])
            .encode()
            .unwrap(),
        hex("00011c1c")
    );
    assert_eq!(
        MethodSig::static_object_object_array().encode().unwrap(),
        hex("00011c1d1c")
    );
    // ref GetValueOrDefault 0x0A000020: instance !0 (): `20001300`.
    assert_eq!(
        MethodSig::instance_method(TypeSig::Var(0), vec![])
            .encode()
            .unwrap(),
        hex("20001300")
    );
    // Program::Max<T>(T, T): `1001021e001e001e00`.
    assert_eq!(
        MethodSig::static_method(TypeSig::MVar(0), vec![TypeSig::MVar(0), TypeSig::MVar(0)])
            .with_generic_params(1)
            .encode()
            .unwrap(),
        hex("1001021e001e001e00")
    );
    // typespec 0x1B000001: Dictionary`2<string, int> = GENERICINST CLASS
    // TypeRef 4: `151211020e08`.
    let dict = TypeSig::generic_class(Token(0x0100_0004), vec![TypeSig::String, TypeSig::I4]);
    assert_eq!(dict.encode().unwrap(), hex("151211020e08"));
    // spec 0x2B000001: <class TypeRef 2>: `0a011209`.
    assert_eq!(
        MethodSpecSig::new(vec![TypeSig::Class(Token(0x0100_0002))])
            .encode()
            .unwrap(),
        hex("0a011209")
    );
    // standalone 0x11000002: locals (Dictionary<string,int>, int).
    let locals = LocalVarSig {
        locals: vec![dict, TypeSig::I4],
    };
    assert_eq!(locals.encode().unwrap(), hex("0702151211020e0808"));
}

#[test]
fn append_locals_decodes_extends_and_re_encodes() {
    use corprof::cil::{LocalVarSig, TypeSig};
    // standalone 0x11000005 (`07021c02`: object, bool) + object, int.
    let (blob, first) =
        LocalVarSig::append(&hex("07021c02"), &[TypeSig::Object, TypeSig::I4]).unwrap();
    assert_eq!(first, 2);
    assert_eq!(blob, hex("07041c021c08"));
    // Every standalone local signature of the fixture extends the same way.
    let fixture = include_str!("fixtures/cil/Sample.debug.txt");
    let mut seen = 0;
    for line in fixture
        .lines()
        .filter(|l| l.starts_with("sig\tstandalone\t"))
    {
        let blob = hex(line.rsplit('\t').next().unwrap());
        if blob[0] != 0x07 {
            continue; // a calli signature
        }
        let before = LocalVarSig::decode(&blob).unwrap();
        let (extended, first) = LocalVarSig::append(&blob, &[TypeSig::Object]).unwrap();
        let after = LocalVarSig::decode(&extended).unwrap();
        assert_eq!(usize::from(first), before.locals.len());
        assert_eq!(after.locals[..before.locals.len()], before.locals[..]);
        assert_eq!(after.locals.last(), Some(&TypeSig::Object));
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} local signatures in the fixture");
    // No locals yet: an empty blob.
    assert_eq!(
        LocalVarSig::append(&[], &[TypeSig::Object]).unwrap(),
        (hex("07011c"), 0)
    );
    // A malformed blob is an error, not a panic.
    assert!(LocalVarSig::append(&[0x06, 0x01], &[TypeSig::Object]).is_err());
}
