//! Event types: the `<object>_<verb>.v<digits>` form, and the catalogue of the types this server
//! emits, which subscriptions may name and the console offers in its picker
//! (docs/api/events.md lists what each carries).

use crate::ids::IdKind;

/// Every event type the server emits, sorted. Tests check that each is emitted and that nothing
/// else is.
pub const CATALOGUE: &[&str] = &[
    "api_key_created.v0",
    "api_key_deleted.v0",
    "api_key_updated.v0",
    "credential_created.v0",
    "credential_deleted.v0",
    "credential_updated.v0",
    "event_destination_created.v0",
    "event_destination_deleted.v0",
    "event_destination_secret_rotated.v0",
    "event_destination_updated.v0",
    "event_subscription_created.v0",
    "event_subscription_deleted.v0",
    "event_subscription_updated.v0",
    "ssh_certificate_authority_created.v0",
    "ssh_certificate_authority_deleted.v0",
    "ssh_certificate_authority_updated.v0",
    "tls_edge_backend_created.v0",
    "tls_edge_backend_deleted.v0",
    "tls_edge_backend_updated.v0",
    "tls_edge_created.v0",
    "tls_edge_deleted.v0",
    "tls_edge_updated.v0",
    "tunnel_group_backend_created.v0",
    "tunnel_group_backend_deleted.v0",
    "tunnel_group_backend_updated.v0",
    "tunnel_session_ended.v0",
    "tunnel_session_restart_requested.v0",
    "tunnel_session_started.v0",
    "tunnel_session_stop_requested.v0",
    "tunnel_session_update_requested.v0",
];

/// The event a destination test sends (`POST /event_destinations/{id}/test`): never stored in
/// the audit log and not subscribable.
pub const PING: &str = "ping.v0";

/// The object part of the event types about resources of `kind` (`credential`, `tls_edge`, …).
pub const fn object_name(kind: IdKind) -> &'static str {
    match kind {
        IdKind::Credential => "credential",
        IdKind::User => "user",
        IdKind::Bot => "bot",
        IdKind::SshCertificateAuthority => "ssh_certificate_authority",
        IdKind::TunnelSession => "tunnel_session",
        IdKind::TlsEdge => "tls_edge",
        IdKind::TunnelGroupBackend => "tunnel_group_backend",
        IdKind::EventDestination => "event_destination",
        IdKind::EventSubscription => "event_subscription",
        IdKind::Account => "account",
        IdKind::ApiKey => "api_key",
        IdKind::Operation => "operation",
        IdKind::Event => "event",
        IdKind::EventDelivery => "event_delivery",
    }
}

/// The type `<object>_<verb>.v0` of an event about a resource of `kind`: `verb` is `created`,
/// `updated`, `deleted`, or what is particular to the object (`started`, `backend_updated`, …).
pub fn event_type(kind: IdKind, verb: &str) -> String {
    format!("{}_{verb}.v0", object_name(kind))
}

/// [`check_form`]'s rule as a regular expression (the OpenAPI document's pattern).
pub const FORM_PATTERN: &str = "^[a-z][a-z0-9_]*\\.v[0-9]{1,9}$";

/// Checks the form `<name>.v<digits>`: a lower-case name of letters, digits and `_`, starting
/// with a letter, then `.v` and a version number.
pub fn check_form(event_type: &str) -> Result<(), String> {
    if event_type.is_empty() {
        return Err(
            "the event type is missing: write one, like `credential_created.v0`".to_owned(),
        );
    }
    let bad = || {
        format!(
            "`{event_type}` is not an event type: write a name and a version, like `credential_created.v0`"
        )
    };
    let (name, version) = event_type.rsplit_once(".v").ok_or_else(bad)?;
    let name_ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let version_ok =
        !version.is_empty() && version.len() <= 9 && version.bytes().all(|b| b.is_ascii_digit());
    if name_ok && version_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Checks the form and that the type is in the catalogue.
pub fn check_known(event_type: &str) -> Result<(), String> {
    check_form(event_type)?;
    if CATALOGUE.contains(&event_type) {
        Ok(())
    } else {
        Err(format!(
            "`{event_type}` is not a known event type; pick one from the catalogue"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    #[test_case]
    fn forms() {
        for ok in ["ip_policy_created.v0", "a.v1", "x2_y.v10"] {
            assert_eq!(check_form(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "ip_policy_created",
            "ip_policy_created.v",
            "ip_policy_created.vx",
            "IP.v0",
            "_a.v0",
            "a b.v0",
            ".v0",
            "a.v0 ",
            "a.V0",
        ] {
            assert!(check_form(bad).is_err(), "{bad:?}");
        }
    }

    #[test_case]
    fn catalogue_is_well_formed_sorted_and_checked() {
        for t in CATALOGUE {
            assert_eq!(check_form(t), Ok(()));
        }
        assert!(CATALOGUE.windows(2).all(|w| w[0] < w[1]));
        assert!(check_known("credential_created.v0").is_ok());
        assert!(check_known(PING).is_err());
        assert_eq!(
            event_type(IdKind::TlsEdge, "backend_updated"),
            "tls_edge_backend_updated.v0"
        );
        assert!(
            check_known("credential_created.v9")
                .unwrap_err()
                .contains("not a known")
        );
        assert!(
            check_known("nope")
                .unwrap_err()
                .contains("not an event type")
        );
    }
}
