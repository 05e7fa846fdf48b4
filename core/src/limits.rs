//! Size limits in the API's units: bytes for credentials and SSH certificate authorities,
//! characters (Unicode scalar values) for event subscriptions. The whole table:
//! `docs/limits.md`.

use crate::errors::FieldError;

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// UTF-8 bytes.
    Bytes,
    /// Unicode scalar values (`char`s).
    Chars,
}

/// A maximum length for one text field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLimit {
    pub field: &'static str,
    pub max: usize,
    pub unit: Unit,
}

impl TextLimit {
    pub const fn bytes(field: &'static str, max: usize) -> TextLimit {
        TextLimit {
            field,
            max,
            unit: Unit::Bytes,
        }
    }

    pub const fn chars(field: &'static str, max: usize) -> TextLimit {
        TextLimit {
            field,
            max,
            unit: Unit::Chars,
        }
    }

    /// The length of `value` in this limit's unit.
    pub fn measure(&self, value: &str) -> usize {
        match self.unit {
            Unit::Bytes => value.len(),
            Unit::Chars => value.chars().count(),
        }
    }

    /// `None` when `value` fits, otherwise the message the console and the server both show.
    pub fn check(&self, value: &str) -> Option<FieldError> {
        let len = self.measure(value);
        (len > self.max).then(|| {
            let unit = match self.unit {
                Unit::Bytes => "bytes",
                Unit::Chars => "characters",
            };
            FieldError::new(
                self.field,
                format!(
                    "{} must be at most {} {unit}; it is {len} {unit}",
                    self.field, self.max
                ),
            )
        })
    }
}

pub const CREDENTIAL_DESCRIPTION: TextLimit = TextLimit::bytes("description", 255);
pub const CREDENTIAL_METADATA: TextLimit = TextLimit::bytes("metadata", 4096);
pub const API_KEY_DESCRIPTION: TextLimit = TextLimit::bytes("description", 255);
pub const API_KEY_METADATA: TextLimit = TextLimit::bytes("metadata", 4096);
pub const SSH_CA_DESCRIPTION: TextLimit = TextLimit::bytes("description", 255);
pub const SSH_CA_METADATA: TextLimit = TextLimit::bytes("metadata", 4096);
pub const EVENT_SUBSCRIPTION_DESCRIPTION: TextLimit = TextLimit::chars("description", 255);
pub const EVENT_SUBSCRIPTION_METADATA: TextLimit = TextLimit::chars("metadata", 4096);
/// TLS edges, tunnel-group backends and event destinations (the resources managed minimally,
/// `docs/api/README.md`) follow the byte limits of credentials.
pub const OTHER_DESCRIPTION: TextLimit = TextLimit::bytes("description", 255);
pub const OTHER_METADATA: TextLimit = TextLimit::bytes("metadata", 4096);
/// The name of a user or bot, given with the operator's commands.
pub const USER_NAME: TextLimit = TextLimit::chars("name", 64);
/// The name of an account, given with the operator's `account create` (shown in the console's
/// top bar and by `GET /me`).
pub const ACCOUNT_NAME: TextLimit = TextLimit::chars("name", 64);

/// Checks the length of a list field, then marks repeated items.
///
/// Over `max` items is one error on `field` and nothing else, so a huge list costs one
/// comparison rather than a pass over every item (and a huge error body). Otherwise every item
/// comes back with its index and whether an equal key came before it (found with a set: linear,
/// not quadratic).
pub fn bounded_items<'a, T>(
    items: &'a [T],
    field: &str,
    max: usize,
    key: impl Fn(&'a T) -> &'a str,
    errors: &mut Vec<FieldError>,
) -> Vec<(usize, &'a T, bool)> {
    if items.len() > max {
        errors.push(FieldError::new(
            field,
            format!(
                "{field} has {} items; at most {max} are allowed",
                items.len()
            ),
        ));
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (i, item, !seen.insert(key(item))))
        .collect()
}

/// At most this many ACL rules on one credential.
pub const MAX_ACL_RULES: usize = 100;
/// At most this many sources, and as many destinations, on one event subscription.
pub const MAX_EVENT_SOURCES: usize = 100;
pub const MAX_EVENT_DESTINATIONS: usize = 100;
/// Request bodies larger than this are refused with 413 (`docs/api/README.md`).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Page size bounds of list operations (`docs/api/README.md`, "Lists").
pub const MAX_PAGE_SIZE: u32 = 100;
pub const DEFAULT_PAGE_SIZE: u32 = 100;
/// The agent's hello (`docs/agent-channel.md`): its OS name, free-text metadata and number of
/// binds. The server refuses a hello past these; the agent checks them at start-up so a bad
/// configuration fails at once instead of connecting to be refused.
pub const HELLO_OS: TextLimit = TextLimit::bytes("os", 64);
pub const HELLO_METADATA: TextLimit = TextLimit::bytes("metadata", 4096);
pub const MAX_HELLO_BINDS: usize = 100;
/// Largest WebSocket message (and frame) of the agent channel: a hello at its limits
/// (100 binds of a few hundred bytes, 4 KiB of metadata) fits with room to spare.
pub const MAX_AGENT_MESSAGE_BYTES: usize = 64 * 1024;

/// Wait between a successful agent update and a restart (`docs/api/tunnel_sessions.md`).
pub const UPDATE_RESTART_WAIT_SECS: u64 = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn limits_at_and_past_their_bound() {
        let table: &[(TextLimit, &str, usize, bool)] = &[
            (CREDENTIAL_DESCRIPTION, "a", 255, true),
            (CREDENTIAL_DESCRIPTION, "a", 256, false),
            // 128 two-byte characters = 256 bytes: over a byte limit.
            (CREDENTIAL_DESCRIPTION, "é", 128, false),
            (CREDENTIAL_DESCRIPTION, "é", 127, true),
            (CREDENTIAL_METADATA, "x", 4096, true),
            (CREDENTIAL_METADATA, "x", 4097, false),
            (SSH_CA_DESCRIPTION, "€", 85, true), // 255 bytes
            (SSH_CA_DESCRIPTION, "€", 86, false),
            (SSH_CA_METADATA, "x", 4097, false),
            // 255 two-byte characters are valid where the limit is in characters.
            (EVENT_SUBSCRIPTION_DESCRIPTION, "é", 255, true),
            (EVENT_SUBSCRIPTION_DESCRIPTION, "é", 256, false),
            (EVENT_SUBSCRIPTION_METADATA, "😀", 4096, true),
            (EVENT_SUBSCRIPTION_METADATA, "😀", 4097, false),
        ];
        for (limit, unit, count, ok) in table {
            let value = unit.repeat(*count);
            assert_eq!(
                limit.check(&value).is_none(),
                *ok,
                "{limit:?} with {count} × {unit}"
            );
        }
    }

    #[test_case]
    fn lists_are_bounded_before_items_are_looked_at() {
        let mut errors = Vec::new();
        let many = vec!["x".to_owned(); 10_000];
        assert!(bounded_items(&many, "acl", 100, String::as_str, &mut errors).is_empty());
        assert_eq!(errors.len(), 1, "one error, not one per item");
        assert_eq!(
            errors[0].message,
            "acl has 10000 items; at most 100 are allowed"
        );

        let mut errors = Vec::new();
        let items = ["a", "b", "a"];
        let marked = bounded_items(&items, "x", 3, |s| s, &mut errors);
        let dups: Vec<bool> = marked.iter().map(|(_, _, dup)| *dup).collect();
        assert_eq!(dups, [false, false, true]);
        assert!(errors.is_empty());
    }

    #[test_case]
    fn message_names_field_unit_and_length() {
        let err = CREDENTIAL_DESCRIPTION.check(&"é".repeat(128)).unwrap();
        assert_eq!(err.field, "description");
        assert_eq!(
            err.message,
            "description must be at most 255 bytes; it is 256 bytes"
        );
        let err = EVENT_SUBSCRIPTION_DESCRIPTION
            .check(&"é".repeat(256))
            .unwrap();
        assert_eq!(
            err.message,
            "description must be at most 255 characters; it is 256 characters"
        );
    }
}
