//! GUID parsing and formatting, HRESULT semantics and naming.

use corprof::*;

#[test]
fn guid_layout_is_the_windows_one() {
    assert_eq!(core::mem::size_of::<GUID>(), 16);
    assert_eq!(core::mem::align_of::<GUID>(), 4);
    let g = GUID::parse("176FBED1-A55C-4796-98CA-A9DA0EF883E7");
    assert_eq!(g.data1, 0x176FBED1);
    assert_eq!(g.data2, 0xA55C);
    assert_eq!(g.data3, 0x4796);
    assert_eq!(g.data4, [0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7]);
    // In memory, Data1..3 are little-endian and Data4 is in string order.
    // SAFETY: GUID is #[repr(C)], 16 bytes with no padding.
    let bytes: [u8; 16] = unsafe { core::mem::transmute(g) };
    assert_eq!(
        bytes,
        [
            0xD1, 0xBE, 0x6F, 0x17, 0x5C, 0xA5, 0x96, 0x47, 0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8,
            0x83, 0xE7
        ]
    );
}

#[test]
fn guid_parses_braced_and_lowercase_and_round_trips() {
    let plain = GUID::parse("176FBED1-A55C-4796-98CA-A9DA0EF883E7");
    assert_eq!(GUID::parse("{176fbed1-a55c-4796-98ca-a9da0ef883e7}"), plain);
    assert_eq!(
        plain,
        GUID::from_u128(0x176FBED1_A55C_4796_98CA_A9DA0EF883E7)
    );
    assert_eq!(plain.to_u128(), 0x176FBED1_A55C_4796_98CA_A9DA0EF883E7);
    assert_eq!(plain.to_string(), "176FBED1-A55C-4796-98CA-A9DA0EF883E7");
    assert_eq!(
        format!("{plain:#}"),
        "{176FBED1-A55C-4796-98CA-A9DA0EF883E7}"
    );
    assert_eq!(
        format!("{plain:?}"),
        "GUID(176FBED1-A55C-4796-98CA-A9DA0EF883E7)"
    );
    assert_eq!(
        "176FBED1-A55C-4796-98CA-A9DA0EF883E7".parse::<GUID>(),
        Ok(plain)
    );
    assert_eq!(guid!("{176FBED1-A55C-4796-98CA-A9DA0EF883E7}"), plain);
}

#[test]
fn guid_rejects_malformed_strings_with_the_reason() {
    use GuidParseError::*;
    let cases = [
        ("", Length),
        ("176FBED1-A55C-4796-98CA-A9DA0EF883E", Length),
        ("176FBED1-A55C-4796-98CA-A9DA0EF883E7A", Length),
        ("{176FBED1-A55C-4796-98CA-A9DA0EF883E7", Length),
        ("{176FBED1-A55C-4796-98CA-A9DA0EF883E7]", Braces),
        ("{76FBED1-A55C-4796-98CA-A9DA0EF883E7", Braces),
        ("176FBED1A-55C-4796-98CA-A9DA0EF883E7", Hyphen),
        ("176FBED1-A55C-4796-98CAA-9DA0EF883E7", Hyphen),
        ("176FBEDG-A55C-4796-98CA-A9DA0EF883E7", Digit),
        ("176FBED1-A55C-4796-98CA-A9DA0EF883 7", Digit),
    ];
    for (text, expected) in cases {
        assert_eq!(GUID::try_parse(text), Err(expected), "{text:?}");
        assert!(expected.to_string().starts_with("malformed GUID: "));
        // One set of texts: `parse` panics (at run time here; in a `const`
        // it is a compile error) with exactly the error's Display text.
        let panic = std::panic::catch_unwind(|| GUID::parse(text)).expect_err(text);
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied());
        assert_eq!(message, Some(expected.as_str()), "{text:?}");
    }
}

#[test]
fn hresult_success_and_failure() {
    assert!(S_OK.is_ok() && S_FALSE.is_ok());
    assert!(S_FALSE.is_false() && !S_OK.is_false());
    assert_eq!(S_OK.ok(), Ok(()));
    assert_eq!(S_FALSE.ok(), Ok(()));
    assert_eq!(E_FAIL.ok(), Err(E_FAIL));
    assert!(E_FAIL.is_err());
    assert_eq!(E_FAIL.0 as u32, 0x80004005);
    assert_eq!(E_INVALIDARG.0 as u32, 0x80070057);
    assert_eq!(E_OUTOFMEMORY.0 as u32, 0x8007000E);
    assert_eq!(E_UNEXPECTED.0 as u32, 0x8000FFFF);
    assert_eq!(CLASS_E_NOAGGREGATION.0 as u32, 0x80040110);
    assert_eq!(CLASS_E_CLASSNOTAVAILABLE.0 as u32, 0x80040111);
    assert_eq!(HRESULT::from_win32(122), E_NOT_SUFFICIENT_BUFFER);
    assert_eq!(HRESULT::from_win32(0), S_OK);
    assert_eq!(E_INVALIDARG.facility(), 7);
    assert_eq!(E_INVALIDARG.code(), 0x57);
}

#[test]
fn hresult_converts_both_ways_for_question_mark() {
    fn inner(fail: bool) -> Result<(), HRESULT> {
        if fail {
            E_ACCESSDENIED.ok()?;
        }
        S_FALSE.ok()
    }
    fn thunk(fail: bool) -> HRESULT {
        inner(fail).into()
    }
    assert_eq!(thunk(true), E_ACCESSDENIED);
    assert_eq!(thunk(false), S_OK);
    let r: Result<(), HRESULT> = E_POINTER.into();
    assert_eq!(r, Err(E_POINTER));
}

#[test]
fn hresult_names_known_codes_and_shows_hex_otherwise() {
    assert_eq!(format!("{E_NOINTERFACE:?}"), "E_NOINTERFACE");
    assert_eq!(format!("{S_FALSE:?}"), "S_FALSE");
    assert_eq!(E_POINTER.name(), Some("E_POINTER"));
    assert_eq!(
        E_NOINTERFACE.to_string(),
        "E_NOINTERFACE (0x80004002): The object does not support the requested interface."
    );
    let unknown = HRESULT(0x8123_4567_u32 as i32);
    assert_eq!(unknown.name(), None);
    assert_eq!(format!("{unknown:?}"), "HRESULT(0x81234567)");
    assert_eq!(unknown.to_string(), "HRESULT 0x81234567");
}
