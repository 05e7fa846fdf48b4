//! Ids and secret tokens as they arrive in paths, bodies and headers. Nothing panics; an id that
//! parses as a kind has that kind's prefix; a token that parses prints back to the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tunnel_core::ids::{IdKind, SecretToken, parse_id};

fuzz_target!(|text: &str| {
    for kind in IdKind::ALL {
        if parse_id(kind, text).is_ok() {
            assert_eq!(IdKind::of(text).map(IdKind::prefix), Some(kind.prefix()));
        }
    }
    if let Some(token) = SecretToken::parse(text) {
        assert_eq!(token.expose(), text);
        assert!(SecretToken::parse(&token.expose()).is_some());
    }
});
