//! Whether a credential's ACL admits a session's binds: the one rule the channel applies when an
//! agent says hello and the credentials API applies to live sessions when an ACL changes
//! (docs/acl.md), so a session is never judged one way at connect and another way later.

use tunnel_core::acl::{Acl, Bind};
use tunnel_core::errors::ErrorCode;

/// Why `rules` (a credential's stored ACL) refuse a session binding `binds`: the code and
/// sentence the agent receives, in `Refused` at connect or in `Closed` when a changed ACL ends
/// its session. `None` when every bind is permitted (an agent that binds nothing always is).
pub fn acl_refusal(rules: &[String], binds: &[Bind]) -> Option<(ErrorCode, String)> {
    // A stored ACL was validated when it was written; one that no longer parses permits nothing.
    let acl = Acl::stored(rules);
    let refused = binds
        .iter()
        .find(|bind| !acl.as_ref().is_some_and(|acl| acl.check(bind).is_allowed()))?;
    Some((
        ErrorCode::BindNotPermitted,
        format!("The credential's ACL does not permit binding `{refused}`."),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binds(texts: &[&str]) -> Vec<Bind> {
        texts.iter().map(|t| Bind::parse(t).unwrap()).collect()
    }

    fn rules(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn every_bind_must_be_permitted_and_the_first_refused_is_named() {
        let acl = rules(&["bind:*.example.com", "bind:env=prod"]);
        assert_eq!(
            acl_refusal(&acl, &binds(&["a.example.com", "env=prod"])),
            None
        );
        assert_eq!(
            acl_refusal(&acl, &binds(&["a.example.com", "example.com", "env=dev"])),
            Some((
                ErrorCode::BindNotPermitted,
                "The credential's ACL does not permit binding `example.com`.".to_owned()
            ))
        );
    }

    #[test]
    fn no_binds_pass_any_acl_and_an_empty_acl_passes_any_binds() {
        assert_eq!(acl_refusal(&rules(&["bind:x.example.com"]), &[]), None);
        assert_eq!(
            acl_refusal(&[], &binds(&["anything.example.org", "k=v"])),
            None
        );
        // An ACL that no longer parses permits nothing but still admits an agent binding nothing.
        let broken = rules(&["bind:a*.example.com"]);
        assert!(acl_refusal(&broken, &binds(&["a.example.com"])).is_some());
        assert_eq!(acl_refusal(&broken, &[]), None);
        // One stored before spellings were compared, with a rule twice, still admits.
        let twins = rules(&["bind:a.example.com", "bind:A.example.com."]);
        assert_eq!(acl_refusal(&twins, &binds(&["a.example.com"])), None);
    }
}
