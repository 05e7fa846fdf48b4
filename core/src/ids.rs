//! Resource identifiers: kind prefixes, time-sortable generation and parsing
//! (`docs/ids.md`).
//!
//! An id is `<prefix><27 base62 characters>`. The 27 characters encode 20 bytes: 6 bytes of
//! Unix time in milliseconds, then 14 bytes of randomness. The base62 alphabet is in ASCII order,
//! so sorting ids as strings sorts them by creation time. Time and randomness are passed in by
//! the caller: this crate does no I/O.

use std::fmt;

/// Number of base62 characters after the prefix.
pub const SUFFIX_LEN: usize = 27;
const RANDOM_LEN: usize = 14;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Every kind of identifier the API hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    Credential,
    User,
    Bot,
    SshCertificateAuthority,
    TunnelSession,
    TlsEdge,
    TunnelGroupBackend,
    EventDestination,
    EventSubscription,
    Account,
    ApiKey,
    Operation,
    Event,
    EventDelivery,
}

impl IdKind {
    pub const ALL: [IdKind; 14] = [
        IdKind::Credential,
        IdKind::User,
        IdKind::Bot,
        IdKind::SshCertificateAuthority,
        IdKind::TunnelSession,
        IdKind::TlsEdge,
        IdKind::TunnelGroupBackend,
        IdKind::EventDestination,
        IdKind::EventSubscription,
        IdKind::Account,
        IdKind::ApiKey,
        IdKind::Operation,
        IdKind::Event,
        IdKind::EventDelivery,
    ];

    pub const fn prefix(self) -> &'static str {
        match self {
            IdKind::Credential => "cr_",
            IdKind::User => "usr_",
            IdKind::Bot => "bot_",
            IdKind::SshCertificateAuthority => "sshca_",
            IdKind::TunnelSession => "ts_",
            IdKind::TlsEdge => "edgtls_",
            IdKind::TunnelGroupBackend => "bkdtg_",
            IdKind::EventDestination => "ed_",
            IdKind::EventSubscription => "esb_",
            IdKind::Account => "acct_",
            IdKind::ApiKey => "ak_",
            IdKind::Operation => "op_",
            IdKind::Event => "ev_",
            IdKind::EventDelivery => "dlv_",
        }
    }

    /// Human name used in messages ("credential", "tunnel session", …).
    pub const fn noun(self) -> &'static str {
        match self {
            IdKind::Credential => "credential",
            IdKind::User => "user",
            IdKind::Bot => "bot",
            IdKind::SshCertificateAuthority => "SSH certificate authority",
            IdKind::TunnelSession => "tunnel session",
            IdKind::TlsEdge => "TLS edge",
            IdKind::TunnelGroupBackend => "tunnel-group backend",
            IdKind::EventDestination => "event destination",
            IdKind::EventSubscription => "event subscription",
            IdKind::Account => "account",
            IdKind::ApiKey => "API key",
            IdKind::Operation => "operation",
            IdKind::Event => "event",
            IdKind::EventDelivery => "event delivery",
        }
    }

    /// "a" or "an", as the noun is said ("an event", "an SSH certificate authority").
    pub const fn article(self) -> &'static str {
        match self {
            IdKind::SshCertificateAuthority
            | IdKind::EventDestination
            | IdKind::EventSubscription
            | IdKind::Account
            | IdKind::ApiKey
            | IdKind::Operation
            | IdKind::Event
            | IdKind::EventDelivery => "an",
            _ => "a",
        }
    }

    /// The kind whose prefix starts `id`, if any.
    pub fn of(id: &str) -> Option<IdKind> {
        IdKind::ALL.into_iter().find(|k| id.starts_with(k.prefix()))
    }

    /// The kind of a principal's id (an owner, an actor): a bot by its prefix, else a user.
    pub fn of_principal(id: &str) -> IdKind {
        if id.starts_with(IdKind::Bot.prefix()) {
            IdKind::Bot
        } else {
            IdKind::User
        }
    }
}

/// Whether `value` is a well-formed id of some kind (its prefix, then 27 letters and digits).
/// What the audit log's `object_id` and `actor_id` filters accept (an event may name a resource
/// of any kind), checked by the server and by the console before it asks: a value no id can
/// have would only ever find nothing.
pub fn check_id_form(value: &str) -> Result<(), String> {
    match IdKind::of(value) {
        Some(kind) => parse_id(kind, value).map_err(|e| e.to_string()),
        None if value.is_empty() => Err("must be an id, such as `cr_…` or `usr_…`".to_owned()),
        None => Err(format!(
            "`{}` is not an id: ids start with a kind's prefix, such as `cr_` or `usr_`",
            shorten(value)
        )),
    }
}

/// Why a string is not an id of the expected kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("`{got}` is not {article} {noun} id: {noun} ids start with `{prefix}`", article = .expected.article(), noun = .expected.noun(), prefix = .expected.prefix())]
    WrongPrefix { expected: IdKind, got: String },
    #[error("`{got}` is not a valid {noun} id: expected `{prefix}` followed by 27 letters and digits", noun = .expected.noun(), prefix = .expected.prefix())]
    Malformed { expected: IdKind, got: String },
    #[error("`{got}` is not {article} {one} or {other} id: they start with `{p1}` or `{p2}`", article = .expected[0].article(), one = .expected[0].noun(), other = .expected[1].noun(), p1 = .expected[0].prefix(), p2 = .expected[1].prefix())]
    WrongPrefixOfTwo { expected: [IdKind; 2], got: String },
}

/// Checks that `id` is a well-formed id of one of `kinds` (the users' list and `owner_id` take
/// users and bots): as the kind its prefix names; with no such prefix, the error names the
/// first kind, or both kinds when there are two.
pub fn parse_id_of(kinds: &[IdKind], id: &str) -> Result<(), IdError> {
    match kinds.iter().find(|k| id.starts_with(k.prefix())) {
        Some(kind) => parse_id(*kind, id),
        None => match kinds {
            [first, second] => Err(IdError::WrongPrefixOfTwo {
                expected: [*first, *second],
                got: shorten(id),
            }),
            _ => parse_id(kinds.first().copied().unwrap_or(IdKind::Credential), id),
        },
    }
}

/// Checks that `id` is a well-formed id of `kind`.
pub fn parse_id(kind: IdKind, id: &str) -> Result<(), IdError> {
    let Some(suffix) = id.strip_prefix(kind.prefix()) else {
        return Err(IdError::WrongPrefix {
            expected: kind,
            got: shorten(id),
        });
    };
    if suffix.len() == SUFFIX_LEN && suffix.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(IdError::Malformed {
            expected: kind,
            got: shorten(id),
        })
    }
}

/// Keeps error messages bounded when a caller sends a huge "id".
fn shorten(s: &str) -> String {
    match s.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Encodes `bytes` as a big-endian base62 number of exactly `len` digits (leading zeros kept).
///
/// The number is held in 32-bit limbs and divided by 62⁵ (which fits in 32 bits) per pass, five
/// digits at a time: every API request mints an operation id, and dividing byte by byte by 62
/// once per digit cost 2.4 % of the CPU of a `GET` of one credential.
pub fn base62_fixed(bytes: &[u8], len: usize) -> String {
    const PER_PASS: usize = 5;
    const DIVISOR: u64 = 62u64.pow(PER_PASS as u32);
    // Big-endian limbs; a partial first limb takes the leading bytes.
    let mut limbs: Vec<u32> = Vec::with_capacity(bytes.len().div_ceil(4));
    let head = bytes.len() % 4;
    if head != 0 {
        limbs.push(
            bytes[..head]
                .iter()
                .fold(0, |acc, &b| (acc << 8) | u32::from(b)),
        );
    }
    for chunk in bytes[head..].chunks_exact(4) {
        limbs.push(u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
    }
    let mut digits = vec![b'0'; len];
    // What a last pass of fewer than five digits could not write: must be nothing.
    let mut unwritten = 0;
    for pass in digits.rchunks_mut(PER_PASS) {
        let mut rem: u64 = 0;
        for limb in limbs.iter_mut() {
            let acc = (rem << 32) | u64::from(*limb);
            // Fits: `rem` < DIVISOR < 2³², so the quotient is below 2³².
            *limb = (acc / DIVISOR) as u32;
            rem = acc % DIVISOR;
        }
        for slot in pass.iter_mut().rev() {
            *slot = BASE62[(rem % 62) as usize];
            rem /= 62;
        }
        unwritten = rem;
    }
    debug_assert!(
        unwritten == 0 && limbs.iter().all(|&l| l == 0),
        "base62 length too short for input"
    );
    String::from_utf8(digits).expect("base62 digits are ASCII")
}

/// Number of base62 digits needed for `n` bytes.
pub const fn base62_len(n: usize) -> usize {
    // log(256)/log(62) = 1.3436…; 13437/10000 rounds up safely for the sizes used here.
    (n * 13437).div_ceil(10000)
}

/// Builds one id from its time and randomness.
pub fn make_id(kind: IdKind, unix_millis: u64, random: [u8; RANDOM_LEN]) -> String {
    let mut raw = [0u8; 6 + RANDOM_LEN];
    raw[..6].copy_from_slice(&unix_millis.to_be_bytes()[2..]);
    raw[6..].copy_from_slice(&random);
    format!("{}{}", kind.prefix(), base62_fixed(&raw, SUFFIX_LEN))
}

/// Generates ids that are strictly increasing even within one millisecond (like monotonic
/// ULIDs): within the same millisecond the previous randomness is incremented instead of
/// replaced, so keyset pagination never reorders items created in a burst.
#[derive(Debug, Default, Clone)]
pub struct IdGenerator {
    last: Option<(u64, [u8; RANDOM_LEN])>,
}

impl IdGenerator {
    pub fn next(&mut self, kind: IdKind, unix_millis: u64, random: [u8; RANDOM_LEN]) -> String {
        let (millis, random) = match self.last {
            Some((last_ms, mut last_rand)) if unix_millis <= last_ms => {
                increment(&mut last_rand);
                (last_ms, last_rand)
            }
            _ => (unix_millis, random),
        };
        self.last = Some((millis, random));
        make_id(kind, millis, random)
    }
}

fn increment(bytes: &mut [u8]) {
    for b in bytes.iter_mut().rev() {
        let (v, overflow) = b.overflowing_add(1);
        *b = v;
        if !overflow {
            return;
        }
    }
}

/// A secret bearer string (authtoken or API key): `<27 base62>_<secret>` (`docs/ids.md`).
/// The first part names the record, the secret is only ever stored as a hash.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretToken {
    pub lookup: String,
    pub secret: String,
}

/// Minimum length of the secret part of a token.
pub const MIN_SECRET_LEN: usize = 20;
/// Random bytes behind a generated secret (32 bytes = 256 bits).
pub const SECRET_BYTES: usize = 32;

impl SecretToken {
    /// A token for the record whose id suffix is `lookup`, with a secret from `random`.
    pub fn new(lookup: &str, random: [u8; SECRET_BYTES]) -> SecretToken {
        SecretToken {
            lookup: lookup.to_owned(),
            secret: base62_fixed(&random, base62_len(SECRET_BYTES)),
        }
    }

    /// Splits a presented token; `None` when it cannot be one of ours.
    pub fn parse(s: &str) -> Option<SecretToken> {
        let (lookup, secret) = s.split_once('_')?;
        let ok = lookup.len() == SUFFIX_LEN
            && lookup.bytes().all(|b| b.is_ascii_alphanumeric())
            && secret.len() >= MIN_SECRET_LEN
            && secret.len() <= 128
            && secret.bytes().all(|b| b.is_ascii_alphanumeric());
        ok.then(|| SecretToken {
            lookup: lookup.to_owned(),
            secret: secret.to_owned(),
        })
    }

    pub fn expose(&self) -> String {
        format!("{}_{}", self.lookup, self.secret)
    }
}

/// Never prints the secret part.
impl fmt::Debug for SecretToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretToken({}_…)", self.lookup)
    }
}

/// The 27-character suffix of an id, used as the lookup part of its token.
pub fn suffix(id: &str) -> &str {
    &id[id.len().saturating_sub(SUFFIX_LEN)..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn prefixes_match_the_spec() {
        let table = [
            (IdKind::Credential, "cr_"),
            (IdKind::User, "usr_"),
            (IdKind::SshCertificateAuthority, "sshca_"),
            (IdKind::TunnelSession, "ts_"),
            (IdKind::TlsEdge, "edgtls_"),
            (IdKind::TunnelGroupBackend, "bkdtg_"),
            (IdKind::EventDestination, "ed_"),
            (IdKind::EventSubscription, "esb_"),
            (IdKind::Bot, "bot_"),
            (IdKind::Operation, "op_"),
        ];
        for (kind, prefix) in table {
            assert_eq!(kind.prefix(), prefix);
            let id = make_id(kind, 1, [7; 14]);
            assert!(id.starts_with(prefix));
            assert_eq!(id.len(), prefix.len() + SUFFIX_LEN);
            assert_eq!(parse_id(kind, &id), Ok(()));
            assert_eq!(IdKind::of(&id), Some(kind));
        }
    }

    #[test_case]
    fn ids_sort_by_time() {
        let earlier = make_id(IdKind::Credential, 1_700_000_000_000, [255; 14]);
        let later = make_id(IdKind::Credential, 1_700_000_000_001, [0; 14]);
        assert!(earlier < later);
        let max = make_id(IdKind::Credential, (1 << 48) - 1, [255; 14]);
        assert_eq!(max.len(), 3 + SUFFIX_LEN);
    }

    #[test_case]
    fn generator_is_strictly_increasing_within_a_millisecond() {
        let mut generator = IdGenerator::default();
        let a = generator.next(IdKind::Credential, 5, [200; 14]);
        let b = generator.next(IdKind::Credential, 5, [1; 14]);
        let c = generator.next(IdKind::Credential, 4, [9; 14]); // clock went back
        let d = generator.next(IdKind::Credential, 6, [0; 14]);
        assert!(a < b && b < c && c < d, "{a} {b} {c} {d}");
    }

    #[test_case]
    fn wrong_prefix_names_the_expected_one() {
        let id = make_id(IdKind::SshCertificateAuthority, 1, [1; 14]);
        let err = parse_id(IdKind::Credential, &id).unwrap_err();
        assert!(err.to_string().contains("start with `cr_`"), "{err}");
        assert!(err.to_string().contains("is not a credential id"), "{err}");
        let err = parse_id(IdKind::Event, &id).unwrap_err();
        assert!(err.to_string().contains("is not an event id"), "{err}");
        let err = parse_id(IdKind::Credential, "cr_short").unwrap_err();
        assert!(matches!(err, IdError::Malformed { .. }));
        let err = parse_id(IdKind::Credential, "cr_!!!!!!!!!!!!!!!!!!!!!!!!!!!").unwrap_err();
        assert!(matches!(err, IdError::Malformed { .. }));
        // A field taking users and bots names both.
        let principals = [IdKind::User, IdKind::Bot];
        let bot = make_id(IdKind::Bot, 1, [1; 14]);
        assert_eq!(parse_id_of(&principals, &bot), Ok(()));
        let err = parse_id_of(&principals, &id).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("`{id}` is not a user or bot id: they start with `usr_` or `bot_`")
        );
        assert!(matches!(
            parse_id_of(&principals, "bot_short"),
            Err(IdError::Malformed {
                expected: IdKind::Bot,
                ..
            })
        ));
    }

    /// Digit by digit, dividing the bytes by 62 once per digit: the plain definition.
    fn base62_by_digit(bytes: &[u8], len: usize) -> String {
        let mut num = bytes.to_vec();
        let mut digits = vec![b'0'; len];
        for slot in digits.iter_mut().rev() {
            let mut rem: u32 = 0;
            for byte in num.iter_mut() {
                let acc = (rem << 8) | u32::from(*byte);
                *byte = (acc / 62) as u8;
                rem = acc % 62;
            }
            *slot = BASE62[rem as usize];
        }
        assert!(num.iter().all(|&b| b == 0));
        String::from_utf8(digits).unwrap()
    }

    #[test_case]
    fn base62_five_digits_at_a_time_agrees_with_digit_by_digit() {
        // A deterministic spread of inputs: every length from 0 to 33 bytes, all-zero, all-ones
        // and mixed bytes (a linear congruential sequence).
        let mut state: u32 = 12345;
        for n in 0..=33usize {
            for fill in 0..4 {
                let bytes: Vec<u8> = (0..n)
                    .map(|_| match fill {
                        0 => 0,
                        1 => 255,
                        _ => {
                            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                            (state >> 16) as u8
                        }
                    })
                    .collect();
                for extra in 0..7 {
                    let len = base62_len(n) + extra;
                    assert_eq!(
                        base62_fixed(&bytes, len),
                        base62_by_digit(&bytes, len),
                        "{bytes:?} in {len} digits"
                    );
                }
            }
        }
    }

    #[test_case]
    fn base62_is_exact() {
        assert_eq!(base62_fixed(&[0, 61], 3), "00z");
        assert_eq!(base62_fixed(&[0, 62], 3), "010");
        assert_eq!(base62_len(20), 27);
        assert_eq!(base62_len(32), 43);
    }

    #[test_case]
    fn secret_tokens_round_trip_and_hide_the_secret() {
        let id = make_id(IdKind::Credential, 99, [3; 14]);
        let token = SecretToken::new(suffix(&id), [42; SECRET_BYTES]);
        let text = token.expose();
        assert_eq!(SecretToken::parse(&text), Some(token.clone()));
        assert!(!format!("{token:?}").contains(&token.secret));
        assert_eq!(SecretToken::parse("nope"), None);
        assert_eq!(SecretToken::parse(&format!("{}_short", suffix(&id))), None);
    }
}
