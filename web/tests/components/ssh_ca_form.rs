//! The SSH certificate authority form: key type first, then only the valid curve or size.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use tunnel_core::resources::ssh_ca::SshCertificateAuthorityCreate;
use tunnel_web::pages::ssh_cas::SshCaForm;
use wasm_bindgen_test::*;
use web_sys::Element;

#[wasm_bindgen_test]
async fn ssh_form_offers_only_valid_curve_or_size_choices() {
    let root = container();
    let submitted = RwSignal::new(None::<SshCertificateAuthorityCreate>);
    let busy = RwSignal::new(false);
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! {
            <leptos_router::components::Router>
                <SshCaForm on_submit=Callback::new(move |r| submitted.set(Some(r))) busy=busy server_error=Signal::stored(None) />
            </leptos_router::components::Router>
        }
    });
    let root: Element = root.into();
    tick().await;

    // Key type comes first; Ed25519 has neither curve nor size.
    let first_select = get(&root, "select");
    assert_eq!(first_select.id(), "field-private_key_type");
    assert!(find(&root, "#field-elliptic_curve").is_none());
    assert!(find(&root, "#field-key_size").is_none());

    choose(&root, "#field-private_key_type", "ecdsa").await;
    assert!(find(&root, "#field-key_size").is_none());
    let curves = option_values(&root, "#field-elliptic_curve");
    assert_eq!(curves, ["p256", "p384", "p521"]);
    choose(&root, "#field-elliptic_curve", "p384").await;
    click(&root, "button[type=submit]").await;
    let req = submitted.get_untracked().expect("submitted");
    assert_eq!(req.private_key_type.as_deref(), Some("ecdsa"));
    assert_eq!(req.elliptic_curve.as_deref(), Some("p384"));
    assert_eq!(req.key_size, None);

    choose(&root, "#field-private_key_type", "rsa").await;
    assert!(find(&root, "#field-elliptic_curve").is_none());
    let sizes = option_values(&root, "#field-key_size");
    assert_eq!(sizes, ["2048", "4096"]);
    click(&root, "button[type=submit]").await;
    let req = submitted.get_untracked().unwrap();
    assert_eq!(
        (
            req.private_key_type.as_deref(),
            req.elliptic_curve.as_deref(),
            req.key_size
        ),
        (Some("rsa"), None, Some(4096))
    );

    // While an RSA 4096 key is generated the form says so and cannot be sent twice; its button
    // keeps the focus it has (`aria-disabled`, not `disabled`, which would drop it).
    busy.set(true);
    tick().await;
    assert!(text(&root, ".progress").contains("4096-bit RSA key"));
    assert!(find(&root, ".progress progress").is_some());
    let button = get(&root, "button[type=submit]");
    assert_eq!(
        button.get_attribute("aria-disabled").as_deref(),
        Some("true")
    );
    assert!(!is_disabled(&root, "button[type=submit]"));
    submitted.set(None);
    click(&root, "button[type=submit]").await;
    assert!(
        submitted.get_untracked().is_none(),
        "not sent again while busy"
    );

    // Live validation: a too-long description blocks the submit with core's message.
    busy.set(false);
    tick().await;
    type_into(&root, "#field-description", &"x".repeat(256)).await;
    assert!(text(&root, ".field.invalid .error").contains("Description must be at most 255 bytes"));
    assert!(is_disabled(&root, "button[type=submit]"));
}
