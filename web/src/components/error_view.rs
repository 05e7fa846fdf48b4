//! Shows an API error: its message, code, status and operation id (what support asks for), and
//! a Retry button where the caller can retry. Words the server quotes in backticks show as code.

use super::text::message;
use crate::api::ApiError;
use leptos::prelude::*;

#[component]
pub fn ErrorView(
    #[prop(into)] error: ApiError,
    #[prop(optional, into)] title: Option<String>,
    /// Offered as a Retry button (loading a page, not a rejected form).
    #[prop(optional)]
    retry: Option<Callback<()>>,
    /// Where the focus goes after Retry, which takes this box (and its button) away: a CSS
    /// selector of what the load brings back (a picker's search field); by default the page's
    /// heading. A heading is made focusable for it.
    #[prop(optional_no_strip)]
    refocus: Option<&'static str>,
) -> impl IntoView {
    let title = title.unwrap_or_else(|| "The request failed".to_owned());
    let code = error.code().map(str::to_owned);
    let op = error.operation_id().map(str::to_owned);
    let status = (error.status != 0).then_some(error.status);
    let field_errors = error
        .body
        .as_ref()
        .map(|b| b.details.errors.clone())
        .unwrap_or_default();
    // A 409's resources still using the one asked about, as links to their pages: what to
    // change before trying again is one click away.
    let used_by: Vec<(String, String)> = error
        .body
        .as_ref()
        .and_then(|b| b.details.extra.get("used_by"))
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|id| {
            let id = id.as_str()?;
            Some((id.to_owned(), crate::routes::for_id(id)?))
        })
        .collect();
    view! {
        <div class="error-box" role="alert">
            <strong>{title}</strong>
            <p class="error-msg">{message(&error.message)}</p>
            {(!used_by.is_empty()).then(|| view! {
                <p class="error-used-by">"Used by: "
                    {used_by.into_iter().enumerate().map(|(i, (id, href))| view! {
                        {(i > 0).then_some(", ")}
                        <leptos_router::components::A href=href><code>{id}</code></leptos_router::components::A>
                    }).collect_view()}
                </p>
            })}
            {(field_errors.len() > 1)
                .then(|| {
                    view! {
                        <ul class="error-fields">
                            {field_errors
                                .into_iter()
                                .map(|e| view! { <li><code>{e.field}</code>": "{message(&e.message)}</li> })
                                .collect_view()}
                        </ul>
                    }
                })}
            <dl class="error-meta">
                {code.map(|c| view! { <dt>"Code"</dt><dd><code class="error-code">{c}</code></dd> })}
                {status.map(|s| view! { <dt>"Status"</dt><dd class="error-status">{s}</dd> })}
                {op.map(|o| view! { <dt>"Operation id"</dt><dd><code class="operation-id">{o}</code></dd> })}
            </dl>
            {retry.map(|retry| view! {
                <button type="button" class="retry" on:click=move |_| {
                    retry.run(());
                    after_retry(refocus);
                }>"Retry"</button>
            })}
        </div>
    }
}

/// Keeps the focus, which Retry's button takes away with it, on `refocus` (else the page's
/// heading, which the loaded page may render anew) until the user acts.
fn after_retry(refocus: Option<&'static str>) {
    super::keep_focus_on(refocus.unwrap_or("main h1"));
}
