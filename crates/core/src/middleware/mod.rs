//! Middleware support that is plain logic: how a thrown value becomes the `ErrorInfo` of an
//! `extension_error` event, with known secrets replaced by `[REDACTED]` (by `crate::redact`, the
//! package's one secret matcher).
//!
//! The chain itself runs in `lib/middleware.js`: every step is a call into host JS with a fresh `next`
//! closure, and `bench/RESULTS.md` (section "Middleware") shows what driving it from Rust would cost.

use std::borrow::Cow;

pub use crate::redact::Secrets;

/// An `ErrorInfo` code: a string or a finite number.
#[derive(Debug, Clone, PartialEq)]
pub enum Code {
    Text(String),
    Number(f64),
}

/// What was read from a thrown value before redaction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Thrown {
    pub name: Option<String>,
    pub message: String,
    pub code: Option<Code>,
}

/// `ErrorInfo` `{ name?, message, code? }` with every string field redacted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorInfo {
    pub name: Option<String>,
    pub message: String,
    pub code: Option<Code>,
}

/// Builds the redacted `ErrorInfo` of a thrown value.
pub fn error_info(thrown: Thrown, secrets: &Secrets) -> ErrorInfo {
    let redact = |s: String| match secrets.redact(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => o,
    };
    ErrorInfo {
        name: thrown.name.map(redact),
        message: redact(thrown.message),
        code: thrown.code.and_then(|code| match code {
            Code::Text(t) => Some(Code::Text(redact(t))),
            Code::Number(n) if n.is_finite() => Some(Code::Number(n)),
            Code::Number(_) => None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(list: &[&str]) -> Secrets {
        Secrets::new(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn redacts_every_occurrence_and_borrows_when_clean() {
        let s = secrets(&["token-123"]);
        assert_eq!(
            s.redact("bad token-123 and token-123"),
            "bad [REDACTED] and [REDACTED]"
        );
        assert!(matches!(s.redact("clean"), Cow::Borrowed(_)));
    }

    #[test]
    fn longer_secret_wins_over_its_prefix() {
        let s = secrets(&["abc", "abcdef"]);
        assert_eq!(s.redact("x abcdef y abc"), "x [REDACTED] y [REDACTED]");
    }

    #[test]
    fn empty_and_duplicate_secrets_are_dropped() {
        let s = secrets(&["", "k", "k"]);
        assert_eq!(s.list(), ["k".to_owned()]);
        assert!(secrets(&[""]).is_empty());
        assert_eq!(secrets(&[""]).redact("anything"), "anything");
    }

    #[test]
    fn error_info_redacts_name_message_and_text_code() {
        let info = error_info(
            Thrown {
                name: Some("Err-s3cr3t".into()),
                message: "leaked s3cr3t".into(),
                code: Some(Code::Text("E_s3cr3t".into())),
            },
            &secrets(&["s3cr3t"]),
        );
        assert_eq!(info.name.as_deref(), Some("Err-[REDACTED]"));
        assert_eq!(info.message, "leaked [REDACTED]");
        assert_eq!(info.code, Some(Code::Text("E_[REDACTED]".into())));
    }

    #[test]
    fn non_finite_numeric_codes_are_dropped() {
        let info = error_info(
            Thrown {
                name: None,
                message: "m".into(),
                code: Some(Code::Number(f64::NAN)),
            },
            &Secrets::default(),
        );
        assert_eq!(info.code, None);
        let info = error_info(
            Thrown {
                name: None,
                message: "m".into(),
                code: Some(Code::Number(42.0)),
            },
            &Secrets::default(),
        );
        assert_eq!(info.code, Some(Code::Number(42.0)));
    }
}
