//! Properties of ACL rules and binds (docs/acl.md), over generated domains, wildcards, addresses
//! and labels: every generated bind parses and prints back to its normal form, and every rule
//! permits exactly what a small reference model, written on the texts, says it permits; two
//! rules meaning the same are refused as one rule twice. The model shares no code with
//! `core/src/acl.rs`.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use proptest::sample::select;
use tunnel_core::acl::{Acl, AclRule, Bind, Permission};

/// Domain labels: few, so that generated rules and binds often meet.
const LABELS: [&str; 6] = ["a", "b", "app", "ex", "com", "x-1"];
const LABEL_KEYS: [&str; 2] = ["env", "team"];
const LABEL_VALUES: [&str; 2] = ["prod", "dev"];
const HOSTS: [&str; 4] = ["10.0.0.1", "[::1]", "ex.com", "a.ex.com"];
const PORTS: [u16; 2] = [443, 8080];

/// A domain of one to four labels, in random case, sometimes with the trailing dot of a fully
/// qualified name.
fn domain() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(select(&LABELS[..]), 1..=4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(labels, upper, fqdn)| {
            let mut name = labels.join(".");
            if upper {
                name = name.to_uppercase();
            }
            if fqdn {
                name.push('.');
            }
            name
        })
}

/// What an agent may bind, as text.
fn bind_text() -> impl Strategy<Value = String> {
    prop_oneof![
        domain(),
        domain().prop_map(|d| format!("*.{d}")),
        (select(&HOSTS[..]), select(&PORTS[..])).prop_map(|(h, p)| format!("{h}:{p}")),
        (select(&LABEL_KEYS[..]), select(&LABEL_VALUES[..])).prop_map(|(k, v)| format!("{k}={v}")),
    ]
}

/// A rule, as text.
fn rule_text() -> impl Strategy<Value = String> {
    let key = prop_oneof![Just("*"), select(&LABEL_KEYS[..])];
    let value = prop_oneof![Just("*"), select(&LABEL_VALUES[..])];
    prop_oneof![
        1 => Just("*".to_owned()),
        3 => domain().prop_map(|d| format!("bind:{d}")),
        3 => domain().prop_map(|d| format!("bind:*.{d}")),
        2 => (select(&HOSTS[..]), select(&PORTS[..])).prop_map(|(h, p)| format!("bind:{h}:{p}")),
        2 => (key, value).prop_map(|(k, v)| format!("bind:{k}={v}")),
    ]
}

/// A domain as compared: lower case, without the trailing dot.
fn normal(domain: &str) -> String {
    domain.strip_suffix('.').unwrap_or(domain).to_lowercase()
}

/// What a bind text is, for the model.
enum Kind {
    Domain(String),
    Wildcard(String),
    Address(String),
    Label(String, String),
}

fn kind(text: &str) -> Kind {
    if let Some((k, v)) = text.split_once('=') {
        Kind::Label(k.to_owned(), v.to_owned())
    } else if text.contains(':') {
        Kind::Address(text.to_lowercase())
    } else if let Some(suffix) = text.strip_prefix("*.") {
        Kind::Wildcard(normal(suffix))
    } else {
        Kind::Domain(normal(text))
    }
}

/// What a rule text means, for the model: two rules with the same meaning are the same rule.
fn meaning(rule: &str) -> String {
    match rule.strip_prefix("bind:").map(kind) {
        None => rule.to_owned(),
        Some(Kind::Domain(d)) => d,
        Some(Kind::Wildcard(s)) => format!("*.{s}"),
        Some(Kind::Address(a)) => a,
        Some(Kind::Label(k, v)) => format!("{k}={v}"),
    }
}

/// Whether `name` lies strictly below `suffix`.
fn below(name: &str, suffix: &str) -> bool {
    name.ends_with(&format!(".{suffix}"))
}

/// The reference model: docs/acl.md's table, on the texts.
fn model_permits(rule: &str, bind: &str) -> bool {
    if rule == "*" {
        return true;
    }
    let target = rule
        .strip_prefix("bind:")
        .expect("generated rules are bind rules");
    match (kind(target), kind(bind)) {
        (Kind::Domain(r), Kind::Domain(b)) => r == b,
        (Kind::Wildcard(s), Kind::Domain(b)) => below(&b, &s),
        (Kind::Wildcard(s), Kind::Wildcard(b)) => b == s || below(&b, &s),
        (Kind::Address(r), Kind::Address(b)) => r == b,
        (Kind::Label(rk, rv), Kind::Label(bk, bv)) => {
            (rk == "*" || rk == bk) && (rv == "*" || rv == bv)
        }
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_bind_prints_back_to_its_normal_form(text in bind_text()) {
        let bind = Bind::parse(&text).map_err(TestCaseError::fail)?;
        let shown = bind.to_string();
        prop_assert_eq!(Bind::parse(&shown).map_err(TestCaseError::fail)?, bind);
        let expected = match kind(&text) {
            Kind::Domain(d) => d,
            Kind::Wildcard(s) => format!("*.{s}"),
            // Address hosts print in lower case; labels are case-sensitive, as written.
            Kind::Address(a) => a,
            Kind::Label(k, v) => format!("{k}={v}"),
        };
        prop_assert_eq!(shown, expected);
    }

    #[test]
    fn a_rule_permits_what_the_model_permits(rule in rule_text(), bind in bind_text()) {
        let parsed = AclRule::parse(&rule).map_err(TestCaseError::fail)?;
        let b = Bind::parse(&bind).map_err(TestCaseError::fail)?;
        prop_assert_eq!(parsed.permits(&b), model_permits(&rule, &bind), "{} / {}", rule, bind);
    }

    #[test]
    fn an_acl_permits_by_its_first_permitting_rule(
        rules in prop::collection::btree_set(rule_text(), 0..6),
        bind in bind_text(),
    ) {
        // The same rule twice, in any spelling, is refused (docs/acl.md): one of each meaning,
        // in the set's order, as good as any.
        let mut seen = std::collections::HashSet::new();
        let rules: Vec<String> = rules.into_iter().filter(|r| seen.insert(meaning(r))).collect();
        let acl = Acl::parse(&rules).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let b = Bind::parse(&bind).map_err(TestCaseError::fail)?;
        let expected = if rules.is_empty() {
            Permission::Unrestricted
        } else {
            rules
                .iter()
                .find(|r| model_permits(r, &bind))
                .map_or(Permission::Denied, |r| Permission::AllowedBy(r.clone()))
        };
        prop_assert_eq!(acl.check(&b), expected);
    }

    #[test]
    fn a_rule_in_another_spelling_is_refused_as_the_same(rule in rule_text(), other in rule_text()) {
        let result = Acl::parse(&[rule.clone(), other.clone()]);
        if meaning(&rule) == meaning(&other) {
            let errors = result.expect_err("the same rule twice");
            prop_assert_eq!(errors.len(), 1);
            prop_assert_eq!(errors[0].field.as_str(), "acl[1]");
        } else {
            prop_assert!(result.is_ok(), "{} / {}: {:?}", rule, other, result);
        }
    }

    #[test]
    fn a_rule_made_from_a_bind_permits_that_bind(bind in bind_text()) {
        let b = Bind::parse(&bind).map_err(TestCaseError::fail)?;
        let rule = AclRule::parse(&format!("bind:{bind}")).map_err(TestCaseError::fail)?;
        prop_assert!(rule.permits(&b));
    }
}
