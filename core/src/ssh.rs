//! SSH certificate authority key parameters: which combinations of `private_key_type`,
//! `elliptic_curve` and `key_size` are valid, and what is used when one is not given.
//!
//! Decisions: a missing `private_key_type` means `ed25519` (fast, small, modern); a missing curve
//! means `p256`; a missing RSA size means `4096`. `""` and `0` mean "not given"
//! (`docs/api/README.md`). A curve given with a non-ECDSA key, or a size given with a non-RSA
//! key, is an error rather than silently ignored, so nobody believes they got a key they did not
//! get. The valid combinations as a table: `docs/api/ssh_cas.md`.

use crate::errors::FieldError;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum KeyType {
    Rsa,
    Ecdsa,
    Ed25519,
}

impl KeyType {
    pub const ALL: [KeyType; 3] = [KeyType::Ed25519, KeyType::Ecdsa, KeyType::Rsa];
    pub const DEFAULT: KeyType = KeyType::Ed25519;

    pub const fn as_str(self) -> &'static str {
        match self {
            KeyType::Rsa => "rsa",
            KeyType::Ecdsa => "ecdsa",
            KeyType::Ed25519 => "ed25519",
        }
    }

    pub fn parse(s: &str) -> Option<KeyType> {
        KeyType::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for KeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EllipticCurve {
    P256,
    P384,
    P521,
}

impl EllipticCurve {
    pub const ALL: [EllipticCurve; 3] = [
        EllipticCurve::P256,
        EllipticCurve::P384,
        EllipticCurve::P521,
    ];
    pub const DEFAULT: EllipticCurve = EllipticCurve::P256;

    pub const fn as_str(self) -> &'static str {
        match self {
            EllipticCurve::P256 => "p256",
            EllipticCurve::P384 => "p384",
            EllipticCurve::P521 => "p521",
        }
    }

    pub fn parse(s: &str) -> Option<EllipticCurve> {
        EllipticCurve::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The curve's usual name: `P-256`.
    pub const fn label(self) -> &'static str {
        match self {
            EllipticCurve::P256 => "P-256",
            EllipticCurve::P384 => "P-384",
            EllipticCurve::P521 => "P-521",
        }
    }
}

/// Accepted RSA key sizes in bits.
pub const RSA_KEY_SIZES: [u32; 2] = [2048, 4096];
pub const DEFAULT_RSA_KEY_SIZE: u32 = 4096;

/// A fully resolved key to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySpec {
    Ed25519,
    Ecdsa(EllipticCurve),
    Rsa(u32),
}

impl KeySpec {
    pub fn key_type(self) -> KeyType {
        match self {
            KeySpec::Ed25519 => KeyType::Ed25519,
            KeySpec::Ecdsa(_) => KeyType::Ecdsa,
            KeySpec::Rsa(_) => KeyType::Rsa,
        }
    }

    /// The OpenSSH algorithm name of the public key line.
    pub fn ssh_algorithm(self) -> &'static str {
        match self {
            KeySpec::Ed25519 => "ssh-ed25519",
            KeySpec::Ecdsa(EllipticCurve::P256) => "ecdsa-sha2-nistp256",
            KeySpec::Ecdsa(EllipticCurve::P384) => "ecdsa-sha2-nistp384",
            KeySpec::Ecdsa(EllipticCurve::P521) => "ecdsa-sha2-nistp521",
            KeySpec::Rsa(_) => "ssh-rsa",
        }
    }

    /// The key of an OpenSSH public key line this server wrote (`<algorithm> <base64> …`):
    /// what the API's `key_type` alone does not say, the curve or the RSA size. The RSA size is
    /// read from the blob's length: `string "ssh-rsa"`, `mpint e`, `mpint n`, each with its
    /// 4-byte length, `e` being 65537 (3 bytes) and `n` carrying a leading zero byte, as every
    /// key the server generates has; another `e` makes it `None` rather than a wrong size.
    pub fn of_public_key(line: &str) -> Option<KeySpec> {
        let mut parts = line.split_whitespace();
        let algorithm = parts.next()?;
        [KeySpec::Ed25519]
            .into_iter()
            .chain(EllipticCurve::ALL.map(KeySpec::Ecdsa))
            .find(|k| k.ssh_algorithm() == algorithm)
            .or_else(|| {
                let blob = parts.next()?;
                let padding = blob.bytes().rev().take_while(|b| *b == b'=').count();
                let bytes = (blob.len() / 4 * 3).checked_sub(padding)?;
                let modulus = bytes.checked_sub(4 + 7 + 4 + 3 + 4 + 1)?;
                let bits = u32::try_from(modulus * 8).ok()?;
                (algorithm == "ssh-rsa" && RSA_KEY_SIZES.contains(&bits))
                    .then_some(KeySpec::Rsa(bits))
            })
    }

    /// How the console names the key: `Ed25519`, `ECDSA P-384`, `RSA 4096`.
    pub fn label(self) -> String {
        match self {
            KeySpec::Ed25519 => "Ed25519".to_owned(),
            KeySpec::Ecdsa(curve) => format!("ECDSA {}", curve.label()),
            KeySpec::Rsa(bits) => format!("RSA {bits}"),
        }
    }

    /// Resolves the create request's parameters, pushing one error per bad field.
    pub fn resolve(
        private_key_type: Option<&str>,
        elliptic_curve: Option<&str>,
        key_size: Option<i64>,
        errors: &mut Vec<FieldError>,
    ) -> Option<KeySpec> {
        let key_size = key_size.filter(|s| *s != 0);
        let key_type = match private_key_type.filter(|s| !s.is_empty()) {
            None => KeyType::DEFAULT,
            Some(s) => match KeyType::parse(s) {
                Some(k) => k,
                None => {
                    errors.push(FieldError::new(
                        "private_key_type",
                        format!("`{s}` is not a key type; choose `rsa`, `ecdsa` or `ed25519`"),
                    ));
                    return None;
                }
            },
        };
        let before = errors.len();
        let curve = match elliptic_curve.filter(|s| !s.is_empty()) {
            None => None,
            Some(_) if key_type != KeyType::Ecdsa => {
                errors.push(FieldError::new(
                    "elliptic_curve",
                    format!("an elliptic curve applies only to `ecdsa` keys, not `{key_type}`"),
                ));
                None
            }
            Some(s) => match EllipticCurve::parse(s) {
                Some(c) => Some(c),
                None => {
                    errors.push(FieldError::new(
                        "elliptic_curve",
                        format!("`{s}` is not a supported curve; choose `p256`, `p384` or `p521`"),
                    ));
                    None
                }
            },
        };
        let size = match key_size {
            None => None,
            Some(_) if key_type != KeyType::Rsa => {
                errors.push(FieldError::new(
                    "key_size",
                    format!("a key size applies only to `rsa` keys, not `{key_type}`"),
                ));
                None
            }
            Some(n) => match u32::try_from(n).ok().filter(|n| RSA_KEY_SIZES.contains(n)) {
                Some(n) => Some(n),
                None => {
                    errors.push(FieldError::new(
                        "key_size",
                        format!("{n} is not a supported RSA key size; choose 2048 or 4096"),
                    ));
                    None
                }
            },
        };
        if errors.len() > before {
            return None;
        }
        Some(match key_type {
            KeyType::Ed25519 => KeySpec::Ed25519,
            KeyType::Ecdsa => KeySpec::Ecdsa(curve.unwrap_or(EllipticCurve::DEFAULT)),
            KeyType::Rsa => KeySpec::Rsa(size.unwrap_or(DEFAULT_RSA_KEY_SIZE)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    /// (private_key_type, elliptic_curve, key_size) of a create request.
    type Params<'a> = (Option<&'a str>, Option<&'a str>, Option<i64>);

    fn resolve(t: Option<&str>, c: Option<&str>, s: Option<i64>) -> Result<KeySpec, Vec<String>> {
        let mut errors = Vec::new();
        KeySpec::resolve(t, c, s, &mut errors)
            .ok_or_else(|| errors.into_iter().map(|e| e.field).collect())
    }

    #[test_case]
    fn valid_combinations_and_defaults() {
        let table: &[(Params, KeySpec)] = &[
            ((None, None, None), KeySpec::Ed25519),
            ((Some(""), Some(""), Some(0)), KeySpec::Ed25519),
            ((Some("ed25519"), None, None), KeySpec::Ed25519),
            (
                (Some("ecdsa"), None, None),
                KeySpec::Ecdsa(EllipticCurve::P256),
            ),
            (
                (Some("ecdsa"), Some("p256"), None),
                KeySpec::Ecdsa(EllipticCurve::P256),
            ),
            (
                (Some("ecdsa"), Some("p384"), Some(0)),
                KeySpec::Ecdsa(EllipticCurve::P384),
            ),
            (
                (Some("ecdsa"), Some("p521"), None),
                KeySpec::Ecdsa(EllipticCurve::P521),
            ),
            ((Some("rsa"), None, None), KeySpec::Rsa(4096)),
            ((Some("rsa"), Some(""), Some(2048)), KeySpec::Rsa(2048)),
            ((Some("rsa"), None, Some(4096)), KeySpec::Rsa(4096)),
        ];
        for ((t, c, s), expected) in table {
            assert_eq!(resolve(*t, *c, *s), Ok(*expected), "{t:?} {c:?} {s:?}");
        }
    }

    #[test_case]
    fn invalid_combinations_name_the_field() {
        let table: &[(Params, &[&str])] = &[
            ((Some("dsa"), None, None), &["private_key_type"]),
            ((Some("RSA"), None, None), &["private_key_type"]),
            ((Some("ecdsa"), Some("p224"), None), &["elliptic_curve"]),
            ((Some("rsa"), Some("p256"), None), &["elliptic_curve"]),
            ((Some("ed25519"), Some("p256"), None), &["elliptic_curve"]),
            ((None, None, Some(2048)), &["key_size"]),
            ((Some("ecdsa"), None, Some(2048)), &["key_size"]),
            ((Some("rsa"), None, Some(1024)), &["key_size"]),
            ((Some("rsa"), None, Some(-1)), &["key_size"]),
            (
                (Some("rsa"), Some("p384"), Some(3072)),
                &["elliptic_curve", "key_size"],
            ),
        ];
        for ((t, c, s), fields) in table {
            assert_eq!(
                resolve(*t, *c, *s).unwrap_err(),
                *fields,
                "{t:?} {c:?} {s:?}"
            );
        }
    }

    #[test_case]
    fn algorithms() {
        assert_eq!(
            KeySpec::Ecdsa(EllipticCurve::P384).ssh_algorithm(),
            "ecdsa-sha2-nistp384"
        );
        assert_eq!(KeySpec::Rsa(2048).key_type().as_str(), "rsa");
    }

    #[test_case]
    fn a_public_key_line_says_its_curve_or_size() {
        // The lengths of the base64 blobs the server writes (RSA 4096 ends in `==`).
        let rsa =
            |chars: usize, padding: &str| format!("ssh-rsa {}{padding} ca", "A".repeat(chars));
        let cases = [
            ("ssh-ed25519 AAAA".to_owned(), Some("Ed25519")),
            ("ecdsa-sha2-nistp256 AAAA".to_owned(), Some("ECDSA P-256")),
            ("ecdsa-sha2-nistp521 AAAA".to_owned(), Some("ECDSA P-521")),
            (rsa(372, ""), Some("RSA 2048")),
            (rsa(714, "=="), Some("RSA 4096")),
            // An exponent other than 65537, or a size this server does not make: not guessed.
            (rsa(376, ""), None),
            ("ssh-dss AAAA".to_owned(), None),
            (String::new(), None),
        ];
        for (line, expected) in cases {
            assert_eq!(
                KeySpec::of_public_key(&line).map(KeySpec::label).as_deref(),
                expected,
                "{line}"
            );
        }
    }
}
