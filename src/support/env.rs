//! The one reader of boolean environment variables, shared by the
//! capabilities' `from_env` (sampling, coverage): `0`/`1`, `true`/`false`,
//! `yes`/`no`, `on`/`off`, any case, surrounding spaces ignored; anything
//! else is an `E_INVALIDARG` error naming the variable.

use alloc::format;

use crate::{Error, E_INVALIDARG};

/// `text`, the value of variable `name`, as a boolean.
pub(crate) fn parse_flag(name: &str, text: &str) -> Result<bool, Error> {
    let value = text.trim();
    let is = |words: [&str; 4]| words.iter().any(|w| value.eq_ignore_ascii_case(w));
    if is(["1", "true", "yes", "on"]) {
        Ok(true)
    } else if is(["0", "false", "no", "off"]) {
        Ok(false)
    } else {
        Err(Error::new(
            E_INVALIDARG,
            format!("{name}={text:?} is not one of 0, 1, true, false, yes, no, on, off"),
        ))
    }
}

/// Variable `name` as a boolean: `default` when it is unset or empty, an
/// error naming it when it is not Unicode or not a boolean.
pub(crate) fn flag(name: &str, default: bool) -> Result<bool, Error> {
    match std::env::var(name) {
        Ok(text) if text.trim().is_empty() => Ok(default),
        Ok(text) => parse_flag(name, &text),
        Err(std::env::VarError::NotPresent) => Ok(default),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::new(
            E_INVALIDARG,
            format!("{name} is not valid Unicode"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_in_any_case() {
        for text in ["1", "true", "TRUE", "Yes", "on", " On ", "tRuE"] {
            assert_eq!(parse_flag("V", text), Ok(true), "{text}");
        }
        for text in ["0", "false", "False", "NO", "off", " OFF\t"] {
            assert_eq!(parse_flag("V", text), Ok(false), "{text}");
        }
    }

    #[test]
    fn anything_else_is_an_error_naming_the_variable() {
        for text in ["", "2", "y", "n", "truee", "enabled", "-1", "yes please"] {
            let error = parse_flag("CORPROF_X", text).unwrap_err();
            assert_eq!(error.code(), E_INVALIDARG);
            assert_eq!(
                error.message(),
                format!("CORPROF_X={text:?} is not one of 0, 1, true, false, yes, no, on, off")
            );
        }
    }
}
