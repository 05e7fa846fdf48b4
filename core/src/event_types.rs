//! Event types: the `<name>.v<digits>` form, and the catalogue of known types that subscriptions
//! may name and the console offers in its picker.

/// Every event type this service knows, grouped by the resource they concern.
pub const CATALOGUE: &[&str] = &[
    "api_key_created.v0",
    "api_key_deleted.v0",
    "api_key_updated.v0",
    "credential_created.v0",
    "credential_deleted.v0",
    "credential_updated.v0",
    "event_destination_created.v0",
    "event_destination_deleted.v0",
    "event_destination_updated.v0",
    "event_subscription_created.v0",
    "event_subscription_deleted.v0",
    "event_subscription_updated.v0",
    "ip_policy_created.v0",
    "ip_policy_deleted.v0",
    "ip_policy_updated.v0",
    "ssh_certificate_authority_created.v0",
    "ssh_certificate_authority_deleted.v0",
    "ssh_certificate_authority_updated.v0",
    "tls_edge_created.v0",
    "tls_edge_deleted.v0",
    "tls_edge_updated.v0",
    "tunnel_session_started.v0",
    "tunnel_session_stopped.v0",
];

/// Checks the form `<name>.v<digits>`: a lower-case name of letters, digits and `_`, starting
/// with a letter, then `.v` and a version number.
pub fn check_form(event_type: &str) -> Result<(), String> {
    let bad = || {
        format!(
            "`{event_type}` is not an event type: write a name and a version, like `ip_policy_created.v0`"
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
        assert!(check_known("ip_policy_created.v0").is_ok());
        assert!(
            check_known("ip_policy_created.v9")
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
