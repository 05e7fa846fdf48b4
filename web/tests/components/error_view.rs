//! How an API error is shown: message, code, status and operation id, always as text.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use tunnel_web::api::ApiError;
use tunnel_web::components::error_view::ErrorView;
use wasm_bindgen_test::*;
use web_sys::Element;

#[wasm_bindgen_test]
async fn api_error_body_is_shown_with_message_code_and_operation_id_as_text() {
    let body = r#"{"error_code":"ERR_TUNNEL_114","status_code":400,"msg":"<script>alert(1)</script> is not a rule",
        "details":{"operation_id":"op_2kQ3x9","field":"acl[0]","errors":[
            {"field":"acl[0]","message":"first problem"},{"field":"description","message":"second problem"}]}}"#;
    let error = ApiError::from_response(400, body, Some("op_from_header".into()));
    assert_eq!(
        error.field_message("description").as_deref(),
        Some("second problem")
    );
    assert_eq!(
        error.operation_id(),
        Some("op_2kQ3x9"),
        "the body's id wins over the header"
    );

    let root = container();
    let shown = error.clone();
    let _handle = leptos::mount::mount_to(
        root.clone(),
        move || view! { <ErrorView error=shown.clone() /> },
    );
    let root: Element = root.into();
    tick().await;
    assert_eq!(
        text(&root, ".error-msg"),
        "<script>alert(1)</script> is not a rule."
    );
    assert!(
        find(&root, ".error-box script").is_none(),
        "user text must never become markup"
    );
    assert_eq!(text(&root, ".error-code"), "ERR_TUNNEL_114");
    assert_eq!(text(&root, ".error-status"), "400");
    assert_eq!(text(&root, ".operation-id"), "op_2kQ3x9");
    assert_eq!(count(&root, ".error-fields li"), 2);

    // The Operation-Id header fills in when the body has none; a body that is not an error body
    // still produces a readable message.
    let no_op = ApiError::from_response(
        404,
        r#"{"error_code":"ERR_TUNNEL_120","status_code":404,"msg":"gone"}"#,
        Some("op_h".into()),
    );
    assert_eq!(no_op.operation_id(), Some("op_h"));
    let raw = ApiError::from_response(502, "Bad Gateway", Some("op_x".into()));
    assert!(raw.body.is_none() && raw.message.contains("502") && raw.message.contains("op_x"));
}
