//! The ACL rule editor and the ACL tester.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use tunnel_core::acl::AclRule;
use tunnel_web::api::ApiError;
use tunnel_web::components::acl_editor::{AclEditor, AclTester};
use tunnel_web::components::text::sentence;
use wasm_bindgen_test::*;
use web_sys::Element;

#[wasm_bindgen_test]
async fn acl_editor_checks_each_rule_as_it_is_typed() {
    let root = container();
    let rules = RwSignal::new(Vec::<String>::new());
    let server_error = RwSignal::new(None::<ApiError>);
    let _handle = leptos::mount::mount_to(
        root.clone(),
        move || view! { <AclEditor rules=rules server_error=server_error /> },
    );
    let root: Element = root.into();
    tick().await;
    assert_eq!(count(&root, ".acl-row"), 0);

    click(&root, ".add-rule").await;
    assert_eq!(count(&root, ".acl-row"), 1);
    // A rule not typed yet says what it wants, and is not (yet) an error.
    assert!(text(&root, ".acl-row .rule-status").contains("Type a rule"));
    assert_eq!(
        get(&root, "#acl-rule-0")
            .get_attribute("aria-invalid")
            .as_deref(),
        Some("false")
    );
    type_into(&root, "#acl-rule-0", "bind:*.example.com").await;
    assert_eq!(rules.get_untracked(), vec!["bind:*.example.com".to_owned()]);
    assert!(text(&root, ".acl-row .rule-status").contains("sub-domains of example.com"));
    assert_eq!(
        get(&root, "#acl-rule-0")
            .get_attribute("aria-invalid")
            .as_deref(),
        Some("false")
    );

    // An invalid rule shows tunnel-core's message (the one the server sends), as a sentence
    // with the quoted rule as code.
    type_into(&root, "#acl-rule-0", "bind:exa mple.com").await;
    let expected = AclRule::parse("bind:exa mple.com").unwrap_err();
    assert_eq!(
        text(&root, ".acl-row .rule-status"),
        sentence(&expected).replace('`', "")
    );
    assert_eq!(
        text(&root, ".acl-row .rule-status code"),
        "bind:exa mple.com"
    );
    assert_eq!(
        get(&root, "#acl-rule-0")
            .get_attribute("aria-invalid")
            .as_deref(),
        Some("true")
    );

    // A second rule equal to the first is flagged on the second row only.
    type_into(&root, "#acl-rule-0", "bind:api.example.com:443").await;
    click(&root, ".add-rule").await;
    type_into(&root, "#acl-rule-1", "bind:api.example.com:443").await;
    let statuses = root.query_selector_all(".rule-status").unwrap();
    assert!(
        statuses
            .get(0)
            .unwrap()
            .text_content()
            .unwrap()
            .contains("permits the address")
    );
    assert!(
        statuses
            .get(1)
            .unwrap()
            .text_content()
            .unwrap()
            .contains("listed twice")
    );

    // Removing the first row leaves the second, now valid again.
    click(&root, ".acl-row .remove").await;
    assert_eq!(count(&root, ".acl-row"), 1);
    assert_eq!(
        rules.get_untracked(),
        vec!["bind:api.example.com:443".to_owned()]
    );
    assert!(!text(&root, ".rule-status").contains("twice"));

    // The server's message for `acl[0]` is shown on that rule.
    let body = r#"{"error_code":"ERR_TUNNEL_114","status_code":400,"msg":"rule refused by the server",
        "details":{"operation_id":"op_1","field":"acl[0]","errors":[{"field":"acl[0]","message":"rule refused by the server"}]}}"#;
    server_error.set(Some(ApiError::from_response(400, body, None)));
    tick().await;
    assert_eq!(text(&root, ".rule-status"), "Rule refused by the server.");
}

#[wasm_bindgen_test]
async fn acl_tester_says_which_rule_allows_a_bind() {
    let root = container();
    let rules = RwSignal::new(vec![
        "bind:*.example.com".to_owned(),
        "bind:env=*".to_owned(),
    ]);
    let _handle =
        leptos::mount::mount_to(root.clone(), move || view! { <AclTester rules=rules /> });
    let root: Element = root.into();
    tick().await;

    type_into(&root, "#acl-test-input", "app.example.com").await;
    let verdict = text(&root, ".acl-verdict");
    assert!(
        verdict.starts_with("Allowed") && verdict.contains("bind:*.example.com"),
        "{verdict}"
    );
    assert!(get(&root, ".acl-verdict").class_list().contains("allowed"));

    type_into(&root, "#acl-test-input", "env=prod").await;
    assert!(text(&root, ".acl-verdict").contains("bind:env=*"));

    type_into(&root, "#acl-test-input", "example.org").await;
    assert!(text(&root, ".acl-verdict").starts_with("Denied"));
    assert!(get(&root, ".acl-verdict").class_list().contains("denied"));

    type_into(&root, "#acl-test-input", "app.example.com:443").await;
    assert!(
        text(&root, ".acl-verdict").starts_with("Denied"),
        "a domain rule never permits an address"
    );

    // Not a bind: the parser's message, its quoted value as code rather than backticks.
    type_into(&root, "#acl-test-input", "app.example.com:99999").await;
    let verdict = text(&root, ".acl-verdict");
    assert!(
        verdict.starts_with("Not a bind") && !verdict.contains('`'),
        "{verdict}"
    );
    assert_eq!(text(&root, ".acl-verdict code"), "99999");
    type_into(&root, "#acl-test-input", "app.example.com").await;

    rules.set(vec![]);
    tick().await;
    assert!(text(&root, ".acl-verdict").contains("no ACL"));
}
