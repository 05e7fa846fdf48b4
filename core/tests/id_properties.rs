//! Properties of ids and secret tokens (docs/ids.md): every made id parses as its kind and names
//! it; ids sort by time as strings; the generator's ids strictly increase whatever the clock
//! does; a token prints and parses back, and a presented token with anything but letters and
//! digits is refused.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use proptest::sample::select;
use tunnel_core::ids::{IdGenerator, IdKind, SecretToken, make_id, parse_id};

/// Milliseconds that fit the id's 6 bytes.
const MAX_MILLIS: u64 = (1 << 48) - 1;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn a_made_id_parses_as_its_kind_and_names_it(
        kind in select(&IdKind::ALL[..]),
        millis in 0..=MAX_MILLIS,
        random in any::<[u8; 14]>(),
    ) {
        let id = make_id(kind, millis, random);
        prop_assert!(parse_id(kind, &id).is_ok(), "{}", id);
        prop_assert_eq!(IdKind::of(&id), Some(kind));
        for other in IdKind::ALL.into_iter().filter(|k| *k != kind) {
            prop_assert!(parse_id(other, &id).is_err(), "{} as {:?}", id, other);
        }
    }

    #[test]
    fn ids_sort_by_time_as_strings(
        a in 0..=MAX_MILLIS,
        b in 0..=MAX_MILLIS,
        ra in any::<[u8; 14]>(),
        rb in any::<[u8; 14]>(),
    ) {
        prop_assume!(a != b);
        let (ia, ib) = (make_id(IdKind::Credential, a, ra), make_id(IdKind::Credential, b, rb));
        prop_assert_eq!(a < b, ia < ib);
    }

    #[test]
    fn the_generators_ids_strictly_increase(
        steps in prop::collection::vec((0..=1_000u64, any::<[u8; 14]>()), 1..50),
    ) {
        // A clock that may stand still or go back: the ids still increase.
        let mut generator = IdGenerator::default();
        let ids: Vec<String> = steps
            .into_iter()
            .map(|(ms, random)| generator.next(IdKind::Event, 1_700_000_000_000 + ms, random))
            .collect();
        prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "{:?}", ids);
    }

    #[test]
    fn a_token_prints_and_parses_back(
        millis in 0..=MAX_MILLIS,
        random in any::<[u8; 14]>(),
        secret in any::<[u8; 32]>(),
    ) {
        let id = make_id(IdKind::Credential, millis, random);
        let token = SecretToken::new(tunnel_core::ids::suffix(&id), secret);
        let parsed = SecretToken::parse(&token.expose());
        prop_assert!(parsed == Some(token.clone()));
        // Debug never shows the secret.
        let shown = format!("{token:?}");
        prop_assert!(!shown.contains(&token.secret), "{}", shown);
    }

    #[test]
    fn a_token_with_any_other_character_is_refused(
        random in any::<[u8; 14]>(),
        secret in any::<[u8; 32]>(),
        at in any::<prop::sample::Index>(),
        bad in select(&['-', '.', ' ', '/', '+', '=', '\u{e9}', '\0'][..]),
    ) {
        let token = SecretToken::new(
            tunnel_core::ids::suffix(&make_id(IdKind::ApiKey, 0, random)),
            secret,
        )
        .expose();
        let mut chars: Vec<char> = token.chars().collect();
        let i = at.index(chars.len());
        // The one `_` between the parts stays; any other position gets the bad character.
        prop_assume!(chars[i] != '_');
        chars[i] = bad;
        let spoilt: String = chars.into_iter().collect();
        prop_assert!(SecretToken::parse(&spoilt).is_none(), "{}", spoilt);
    }
}
