//! The event subscription's sources picker: no source is not an error, only a calm note that
//! nothing is delivered until an event type is added.

use super::dom::*;
use leptos::prelude::*;
use leptos::task::tick;
use tunnel_core::Validate;
use tunnel_core::resources::event_subscription::{EventSourceReplace, EventSubscriptionCreate};
use tunnel_web::api::ApiError;
use tunnel_web::pages::event_subscriptions::{NO_SOURCES, SourcesPicker};
use wasm_bindgen_test::*;
use web_sys::Element;

#[wasm_bindgen_test]
async fn no_sources_shows_a_note_not_an_error() {
    let root = container();
    let sources = RwSignal::new(Vec::<String>::new());
    let server_error = RwSignal::new(None::<ApiError>);
    // What the form checks as the user edits: core's rules for the request it would send.
    let live = Signal::derive(move || {
        let request = EventSubscriptionCreate {
            sources: Some(
                sources
                    .get()
                    .into_iter()
                    .map(|event_type| EventSourceReplace { event_type })
                    .collect(),
            ),
            ..Default::default()
        };
        request.field_errors()
    });
    let _handle = leptos::mount::mount_to(root.clone(), move || {
        view! { <SourcesPicker sources=sources live=live server_error=server_error /> }
    });
    let root: Element = root.into();
    tick().await;

    let errors = |root: &Element| {
        let all = root.query_selector_all(".error").unwrap();
        (0..all.length())
            .filter_map(|i| all.item(i).and_then(|n| n.text_content()))
            .collect::<String>()
    };
    assert!(live.get_untracked().is_empty(), "no sources is valid");
    assert_eq!(text(&root, "fieldset.sources > p.hint"), NO_SOURCES);
    assert_eq!(errors(&root), "", "no error for an empty list");

    // A source added: the note goes; removed again: it comes back, still without an error.
    choose(&root, "#source-picker", "credential_created.v0").await;
    assert_eq!(count(&root, ".chip"), 1);
    assert!(find(&root, "fieldset.sources > p.hint").is_none());
    click(&root, "button[aria-label='Remove credential_created.v0']").await;
    assert_eq!(count(&root, ".chip"), 0);
    assert_eq!(text(&root, "fieldset.sources > p.hint"), NO_SOURCES);
    assert_eq!(errors(&root), "");
}
