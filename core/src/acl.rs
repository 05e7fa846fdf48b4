//! ACL bind rules of tunnel credentials: parsing into typed rules and matching binds against them.
//!
//! Accepted rules (the reference for users: `docs/acl.md`):
//! - `*`: permits everything, the same as an empty ACL;
//! - `bind:example.com`: exactly that domain;
//! - `bind:*.example.com`: any sub-domain at any depth (`a.example.com`, `a.b.example.com`) and
//!   the wildcard domain `*.example.com` itself (and narrower wildcards like `*.a.example.com`),
//!   but **not** the apex `example.com`, which needs its own rule;
//! - `bind:host:port`: exactly that address (`host` a domain, an IPv4 address or `[IPv6]`);
//! - `bind:key=value`: a label, with `*` standing for the whole key, the whole value, or both.
//!
//! Edge cases, decided once here and used by the server and the console alike:
//! - case: domains and address hosts match case-insensitively; label keys and values are
//!   case-sensitive;
//! - trailing dot: one trailing dot of a fully-qualified domain (`example.com.`) is ignored in
//!   rules and binds;
//! - IDN: domains must be ASCII; internationalised names are written in punycode (`xn--…`), and a
//!   non-ASCII rule is rejected with a message saying so;
//! - whitespace: a rule containing any whitespace is rejected rather than silently trimmed, so
//!   what is stored is exactly what was checked;
//! - kinds do not cross: a domain rule never permits an address bind (`example.com` does not
//!   permit `example.com:443`), and a label rule only permits labels;
//! - a wildcard may only be the whole leftmost domain label; `bind:*` alone is rejected in favour
//!   of the rule `*`.
//!
//! The module is long on purpose: about 380 lines are the rules above (rule and bind parsing,
//! domain, address and label checks, matching) and the rest is their table-driven tests, one
//! table per rule form and edge case, kept next to the code they pin down.

use crate::errors::FieldError;
use crate::limits::{MAX_ACL_RULES, bounded_items};
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

const ACCEPTED: &str = "accepted rules are `*`, `bind:example.com`, `bind:*.example.com`, `bind:host:port` and `bind:key=value` (with `*` for the key or the value)";

/// One parsed ACL rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AclRule {
    /// `*`
    Any,
    /// `bind:example.com` (normalised: lower case, no trailing dot).
    Domain(String),
    /// `bind:*.example.com`; holds the suffix `example.com`.
    WildcardDomain(String),
    /// `bind:host:port`
    Address(Host, u16),
    /// `bind:key=value`; `None` stands for `*`.
    Label {
        key: Option<String>,
        value: Option<String>,
    },
}

/// The host part of an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Domain(String),
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Domain(d) => f.write_str(d),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
        }
    }
}

/// Something an agent asks to bind: a domain, a wildcard domain, an address or a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    Domain(String),
    /// `*.example.com`; holds `example.com`.
    WildcardDomain(String),
    Address(Host, u16),
    Label {
        key: String,
        value: String,
    },
}

impl fmt::Display for Bind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bind::Domain(d) => f.write_str(d),
            Bind::WildcardDomain(d) => write!(f, "*.{d}"),
            Bind::Address(h, p) => write!(f, "{h}:{p}"),
            Bind::Label { key, value } => write!(f, "{key}={value}"),
        }
    }
}

impl AclRule {
    /// Parses one rule; the error is a sentence saying what is wrong and what is accepted.
    pub fn parse(rule: &str) -> Result<AclRule, String> {
        if rule.is_empty() {
            return Err(format!("the rule is empty; {ACCEPTED}"));
        }
        if rule.chars().any(char::is_whitespace) {
            return Err(format!("`{rule}` contains whitespace; remove it"));
        }
        if rule == "*" {
            return Ok(AclRule::Any);
        }
        let Some(target) = rule.strip_prefix("bind:") else {
            return Err(format!("`{rule}` is not a bind rule; {ACCEPTED}"));
        };
        if target.is_empty() {
            return Err(format!("`{rule}` names nothing to bind; {ACCEPTED}"));
        }
        if target == "*" {
            return Err(
                "`bind:*` is not accepted; use the rule `*` to permit everything".to_owned(),
            );
        }
        if let Some((key, value)) = target.split_once('=') {
            let key = label_part(key, "key", true)?;
            let value = label_part(value, "value", true)?;
            return Ok(AclRule::Label { key, value });
        }
        if looks_like_address(target) {
            let (host, port) = parse_address(target)?;
            return Ok(AclRule::Address(host, port));
        }
        match target.strip_prefix("*.") {
            Some(suffix) => Ok(AclRule::WildcardDomain(parse_domain(suffix)?)),
            None => Ok(AclRule::Domain(parse_domain(target)?)),
        }
    }

    /// Whether this rule permits `bind`.
    pub fn permits(&self, bind: &Bind) -> bool {
        match (self, bind) {
            (AclRule::Any, _) => true,
            (AclRule::Domain(rule), Bind::Domain(name)) => rule == name,
            (AclRule::WildcardDomain(suffix), Bind::Domain(name)) => {
                is_strict_subdomain(name, suffix)
            }
            (AclRule::WildcardDomain(suffix), Bind::WildcardDomain(bound)) => {
                bound == suffix || is_strict_subdomain(bound, suffix)
            }
            (AclRule::Address(host, port), Bind::Address(bhost, bport)) => {
                host == bhost && port == bport
            }
            (
                AclRule::Label { key, value },
                Bind::Label {
                    key: bkey,
                    value: bvalue,
                },
            ) => {
                key.as_ref().is_none_or(|k| k == bkey) && value.as_ref().is_none_or(|v| v == bvalue)
            }
            _ => false,
        }
    }
}

impl Bind {
    /// Parses what an agent asks to bind (or what a user types in the ACL tester):
    /// `example.com`, `*.example.com`, `host:port` or `key=value`.
    pub fn parse(text: &str) -> Result<Bind, String> {
        if text.is_empty() {
            return Err("enter a domain, `host:port` or `key=value`".to_owned());
        }
        if text.chars().any(char::is_whitespace) {
            return Err(format!("`{text}` contains whitespace; remove it"));
        }
        if let Some((key, value)) = text.split_once('=') {
            let key = label_part(key, "key", false)?.unwrap_or_default();
            let value = label_part(value, "value", false)?.unwrap_or_default();
            return Ok(Bind::Label { key, value });
        }
        if looks_like_address(text) {
            let (host, port) = parse_address(text)?;
            return Ok(Bind::Address(host, port));
        }
        match text.strip_prefix("*.") {
            Some(suffix) => Ok(Bind::WildcardDomain(parse_domain(suffix)?)),
            None => Ok(Bind::Domain(parse_domain(text)?)),
        }
    }
}

/// `name` is below `suffix` by at least one label.
fn is_strict_subdomain(name: &str, suffix: &str) -> bool {
    name.len() > suffix.len() + 1
        && name.ends_with(suffix)
        && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
}

fn looks_like_address(text: &str) -> bool {
    text.starts_with('[') || text.contains(':')
}

fn parse_address(text: &str) -> Result<(Host, u16), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (ip, port) = rest.split_once("]:").ok_or_else(|| {
            format!("`{text}` is not an address; write IPv6 addresses as `[::1]:443`")
        })?;
        let ip: Ipv6Addr = ip
            .parse()
            .map_err(|_| format!("`{ip}` is not an IPv6 address"))?;
        (Host::Ip(IpAddr::V6(ip)), port)
    } else {
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| format!("`{text}` is not an address of the form `host:port`"))?;
        if host.contains(':') {
            return Err(format!(
                "`{text}` is not an address; write IPv6 addresses as `[::1]:443`"
            ));
        }
        let host = match host.parse::<IpAddr>() {
            Ok(ip) => Host::Ip(ip),
            Err(_) if host.starts_with('*') => {
                return Err(format!("`{text}`: addresses cannot contain wildcards"));
            }
            Err(_) => Host::Domain(parse_domain(host)?),
        };
        (host, port)
    };
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("`{port}` is not a port: ports are numbers from 1 to 65535"))?;
    Ok((host, port))
}

/// Validates and normalises a domain name (lower case, one trailing dot removed).
fn parse_domain(text: &str) -> Result<String, String> {
    if !text.is_ascii() {
        return Err(format!(
            "`{text}` is not ASCII; write internationalised domain names in their punycode form (`xn--…`)"
        ));
    }
    let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
    if name.is_empty() {
        return Err("the domain is empty".to_owned());
    }
    if name.len() > 253 {
        return Err(format!(
            "the domain is {} characters long; at most 253 are allowed",
            name.len()
        ));
    }
    for label in name.split('.') {
        if label.contains('*') {
            return Err(format!(
                "`{text}`: a wildcard may only be the whole leftmost label, as in `*.example.com`"
            ));
        }
        if label.is_empty() {
            return Err(format!(
                "`{text}` has an empty label (two dots in a row, or a leading dot)"
            ));
        }
        if label.len() > 63 {
            return Err(format!("`{text}` has a label longer than 63 characters"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(format!(
                "`{text}` may only contain letters, digits, hyphens and dots"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "`{text}`: a label cannot start or end with a hyphen"
            ));
        }
    }
    Ok(name)
}

/// A label key or value; `*` gives `None` when wildcards are allowed.
fn label_part(text: &str, what: &str, wildcard: bool) -> Result<Option<String>, String> {
    if text.is_empty() {
        return Err(format!(
            "the label {what} is empty; labels are written `key=value`"
        ));
    }
    if text == "*" {
        return if wildcard {
            Ok(None)
        } else {
            Err(format!("a label {what} cannot be `*` here"))
        };
    }
    if text.contains('*') {
        return Err(format!(
            "`{text}`: `*` must stand for the whole label {what}"
        ));
    }
    if text.contains('=') {
        return Err(format!("`{text}`: a label has exactly one `=`"));
    }
    // No text the server stores may hold NUL (PostgreSQL cannot): an agent's hello is not JSON
    // the API checked, so the label says it itself.
    if text.contains('\0') {
        return Err(format!(
            "the label {what} contains the NUL character (\\u0000), which no label may hold"
        ));
    }
    if text.len() > 255 {
        return Err(format!("the label {what} is longer than 255 bytes"));
    }
    Ok(Some(text.to_owned()))
}

/// The answer to "may this credential bind X?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// The ACL is empty: the credential has no restrictions.
    Unrestricted,
    /// Permitted by this rule (as written).
    AllowedBy(String),
    Denied,
}

impl Permission {
    pub fn is_allowed(&self) -> bool {
        !matches!(self, Permission::Denied)
    }
}

/// A credential's ACL, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acl {
    rules: Vec<(String, AclRule)>,
}

impl Acl {
    /// Parses every rule; the errors name each bad rule as `acl[i]`.
    pub fn parse<S: AsRef<str>>(rules: &[S]) -> Result<Acl, Vec<FieldError>> {
        let mut errors = Vec::new();
        let items = bounded_items(rules, "acl", MAX_ACL_RULES, S::as_ref, &mut errors);
        let mut parsed = Vec::with_capacity(items.len());
        for (i, rule, repeated) in items {
            let rule = rule.as_ref();
            if repeated {
                errors.push(FieldError::new(
                    format!("acl[{i}]"),
                    format!("`{rule}` is listed twice"),
                ));
                continue;
            }
            match AclRule::parse(rule) {
                // Written differently, meaning the same (`bind:A.com` and `bind:a.com.`): a
                // second copy would only hide which one the tester reports.
                Ok(r) => match parsed.iter().find(|(_, earlier)| *earlier == r) {
                    Some((earlier, _)) => errors.push(FieldError::new(
                        format!("acl[{i}]"),
                        format!("`{rule}` is the same rule as `{earlier}`"),
                    )),
                    None => parsed.push((rule.to_owned(), r)),
                },
                Err(message) => errors.push(FieldError::new(format!("acl[{i}]"), message)),
            }
        }
        if errors.is_empty() {
            Ok(Acl { rules: parsed })
        } else {
            Err(errors)
        }
    }

    /// A credential's stored ACL, as the server and the tester apply it: every rule must parse
    /// (`None` otherwise), and a rule meaning the same as an earlier one is kept, not refused.
    /// ACLs written before [`Acl::parse`] refused such a rule hold some, and they must keep
    /// permitting what they did.
    pub fn stored<S: AsRef<str>>(rules: &[S]) -> Option<Acl> {
        let rules = rules
            .iter()
            .map(|rule| {
                let rule = rule.as_ref();
                AclRule::parse(rule).ok().map(|r| (rule.to_owned(), r))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Acl { rules })
    }

    pub fn is_unrestricted(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether `bind` is permitted, and by which rule.
    pub fn check(&self, bind: &Bind) -> Permission {
        if self.rules.is_empty() {
            return Permission::Unrestricted;
        }
        self.rules
            .iter()
            .find(|(_, rule)| rule.permits(bind))
            .map_or(Permission::Denied, |(text, _)| {
                Permission::AllowedBy(text.clone())
            })
    }
}

/// Validates a list of rules as the `acl` field of a request.
pub fn validate_rules(rules: &[String], errors: &mut Vec<FieldError>) {
    if let Err(mut found) = Acl::parse(rules) {
        errors.append(&mut found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_case;

    fn check(rules: &[&str], bind: &str) -> Permission {
        let acl = Acl::parse(rules).expect("rules parse");
        acl.check(&Bind::parse(bind).expect("bind parses"))
    }

    #[test_case]
    fn every_rule_form_parses() {
        let table: &[(&str, AclRule)] = &[
            ("*", AclRule::Any),
            ("bind:example.com", AclRule::Domain("example.com".into())),
            ("bind:Example.COM.", AclRule::Domain("example.com".into())),
            (
                "bind:*.example.com",
                AclRule::WildcardDomain("example.com".into()),
            ),
            (
                "bind:xn--bcher-kva.example",
                AclRule::Domain("xn--bcher-kva.example".into()),
            ),
            ("bind:localhost", AclRule::Domain("localhost".into())),
            (
                "bind:1.tcp.example.com:12345",
                AclRule::Address(Host::Domain("1.tcp.example.com".into()), 12345),
            ),
            (
                "bind:10.0.0.1:22",
                AclRule::Address(Host::Ip("10.0.0.1".parse().unwrap()), 22),
            ),
            (
                "bind:[::1]:443",
                AclRule::Address(Host::Ip("::1".parse().unwrap()), 443),
            ),
            (
                "bind:env=prod",
                AclRule::Label {
                    key: Some("env".into()),
                    value: Some("prod".into()),
                },
            ),
            (
                "bind:*=prod",
                AclRule::Label {
                    key: None,
                    value: Some("prod".into()),
                },
            ),
            (
                "bind:env=*",
                AclRule::Label {
                    key: Some("env".into()),
                    value: None,
                },
            ),
            (
                "bind:*=*",
                AclRule::Label {
                    key: None,
                    value: None,
                },
            ),
        ];
        for (text, expected) in table {
            assert_eq!(AclRule::parse(text).as_ref(), Ok(expected), "{text}");
        }
    }

    #[test_case]
    fn bad_rules_are_rejected_with_a_reason() {
        let table: &[(&str, &str)] = &[
            ("", "empty"),
            ("allow:example.com", "not a bind rule"),
            ("bind:", "names nothing"),
            ("bind:*", "use the rule `*`"),
            (" bind:example.com", "whitespace"),
            ("bind:example.com ", "whitespace"),
            ("bind:exa mple.com", "whitespace"),
            ("bind:foo.*.example.com", "leftmost label"),
            ("bind:*example.com", "leftmost label"),
            ("bind:**.example.com", "leftmost label"),
            ("bind:bücher.example", "punycode"),
            ("bind:example..com", "empty label"),
            ("bind:.example.com", "empty label"),
            ("bind:-a.example.com", "hyphen"),
            ("bind:a_b.example.com", "letters, digits"),
            ("bind:example.com:0", "not a port"),
            ("bind:example.com:65536", "not a port"),
            ("bind:example.com:http", "not a port"),
            ("bind:*.example.com:443", "wildcards"),
            ("bind:::1:443", "IPv6"),
            ("bind:[::1]", "IPv6"),
            ("bind:=prod", "key is empty"),
            ("bind:env=", "value is empty"),
            ("bind:e*=prod", "whole label key"),
            ("bind:a=b=c", "exactly one"),
            ("BIND:example.com", "not a bind rule"),
        ];
        for (text, reason) in table {
            let err = AclRule::parse(text).expect_err(text);
            assert!(err.contains(reason), "{text:?}: {err}");
        }
        let long = format!("bind:{}.com", "a".repeat(64));
        assert!(AclRule::parse(&long).unwrap_err().contains("63"));
        let too_long = format!("bind:{}com", "abcdefghi.".repeat(26));
        assert!(AclRule::parse(&too_long).unwrap_err().contains("253"));
    }

    #[test_case]
    fn empty_acl_and_star_permit_everything() {
        for bind in [
            "example.com",
            "*.example.com",
            "host.example:22",
            "env=prod",
        ] {
            assert_eq!(check(&[], bind), Permission::Unrestricted);
            assert_eq!(check(&["*"], bind), Permission::AllowedBy("*".into()));
        }
    }

    #[test_case]
    fn matching_table() {
        let table: &[(&[&str], &str, bool)] = &[
            // exact domain
            (&["bind:example.com"], "example.com", true),
            (&["bind:example.com"], "EXAMPLE.com", true), // case
            (&["bind:example.com"], "example.com.", true), // trailing dot
            (&["bind:example.com."], "example.com", true),
            (&["bind:example.com"], "www.example.com", false),
            (&["bind:example.com"], "example.org", false),
            // wildcard domain
            (&["bind:*.example.com"], "a.example.com", true),
            (&["bind:*.example.com"], "a.b.example.com", true), // several levels
            (&["bind:*.example.com"], "*.example.com", true),   // the wildcard itself
            (&["bind:*.example.com"], "*.a.example.com", true), // a narrower wildcard
            (&["bind:*.example.com"], "example.com", false),    // apex
            (&["bind:*.example.com"], "badexample.com", false),
            (&["bind:*.example.com"], "*.com", false),
            (&["bind:*.Example.com"], "A.EXAMPLE.COM", true),
            (&["bind:a.example.com"], "*.example.com", false),
            // addresses
            (&["bind:tcp.example.com:2222"], "tcp.example.com:2222", true),
            (&["bind:tcp.example.com:2222"], "TCP.example.com:2222", true),
            (
                &["bind:tcp.example.com:2222"],
                "tcp.example.com:2223",
                false,
            ),
            (&["bind:[::1]:443"], "[0:0::1]:443", true),
            (&["bind:127.0.0.1:80"], "127.0.0.2:80", false),
            // kinds do not cross
            (&["bind:example.com"], "example.com:443", false),
            (&["bind:*.example.com"], "a.example.com:443", false),
            (&["bind:env=prod"], "example.com", false),
            // labels
            (&["bind:env=prod"], "env=prod", true),
            (&["bind:env=prod"], "env=Prod", false), // case-sensitive
            (&["bind:env=prod"], "env=dev", false),
            (&["bind:*=prod"], "tier=prod", true),
            (&["bind:*=prod"], "tier=dev", false),
            (&["bind:env=*"], "env=anything", true),
            (&["bind:env=*"], "team=x", false),
            (&["bind:*=*"], "any=thing", true),
            // several rules: any one suffices
            (&["bind:a.com", "bind:*.b.com"], "x.b.com", true),
            (&["bind:a.com", "bind:*.b.com"], "c.com", false),
        ];
        for (rules, bind, allowed) in table {
            assert_eq!(
                check(rules, bind).is_allowed(),
                *allowed,
                "{rules:?} vs {bind}"
            );
        }
    }

    #[test_case]
    fn the_permitting_rule_is_named() {
        assert_eq!(
            check(&["bind:a.com", "bind:*.example.com"], "x.example.com"),
            Permission::AllowedBy("bind:*.example.com".into())
        );
        assert_eq!(check(&["bind:a.com"], "b.com"), Permission::Denied);
    }

    #[test_case]
    fn acl_errors_name_each_rule() {
        let errors = Acl::parse(&["bind:ok.com", "nope", "bind:ok.com"]).unwrap_err();
        assert_eq!(
            errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["acl[1]", "acl[2]"]
        );
        let many: Vec<String> = (0..=MAX_ACL_RULES)
            .map(|i| format!("bind:h{i}.com"))
            .collect();
        let errors = Acl::parse(&many).unwrap_err();
        assert_eq!(
            errors.len(),
            1,
            "one error for the whole list, not one per rule"
        );
        assert_eq!(errors[0].field, "acl");
    }

    #[test_case]
    fn a_rule_written_differently_but_meaning_the_same_is_a_duplicate() {
        let errors = Acl::parse(&[
            "bind:a.com",
            "bind:A.com",
            "bind:a.com.",
            "bind:*.EX.com",
            "bind:*.ex.com",
            "bind:Host.com:80",
            "bind:host.com.:80",
            "bind:env=Prod",
        ])
        .unwrap_err();
        let found: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e.field.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("acl[1]", "`bind:A.com` is the same rule as `bind:a.com`"),
                ("acl[2]", "`bind:a.com.` is the same rule as `bind:a.com`"),
                (
                    "acl[4]",
                    "`bind:*.ex.com` is the same rule as `bind:*.EX.com`"
                ),
                (
                    "acl[6]",
                    "`bind:host.com.:80` is the same rule as `bind:Host.com:80`"
                ),
            ]
        );
        // Labels are case-sensitive: these are two rules.
        assert!(Acl::parse(&["bind:env=prod", "bind:env=Prod"]).is_ok());
        // An ACL stored before such twins were refused keeps permitting what it did.
        let stored = Acl::stored(&["bind:A.com", "bind:a.com."]).expect("every rule parses");
        assert_eq!(
            stored.check(&Bind::parse("a.com").unwrap()),
            Permission::AllowedBy("bind:A.com".into())
        );
        assert_eq!(Acl::stored(&["bind:a.com", "nope"]), None);
    }

    #[test_case]
    fn binds_parse_like_agents_send_them() {
        assert_eq!(
            Bind::parse("env=prod"),
            Ok(Bind::Label {
                key: "env".into(),
                value: "prod".into()
            })
        );
        assert!(Bind::parse("env=*").is_err());
        assert!(Bind::parse("").is_err());
        assert_eq!(Bind::parse("*.x.com").unwrap().to_string(), "*.x.com");
        assert_eq!(Bind::parse("[::1]:80").unwrap().to_string(), "[::1]:80");
    }
}
