//! The ACL rule editor: one input per rule, each checked with `tunnel-core` as it is typed (the
//! same parser and messages as the server), and the server's `acl[i]` errors shown on the rule.

use super::{focus_next_frame, text};
use crate::api::ApiError;
use leptos::prelude::*;
use tunnel_core::FieldError;
use tunnel_core::acl::{Acl, AclRule};

/// A short description of what a valid rule permits, shown under it.
pub fn describe(rule: &AclRule) -> String {
    match rule {
        AclRule::Any => "permits everything".to_owned(),
        AclRule::Domain(d) => format!("permits the domain {d}"),
        AclRule::WildcardDomain(s) => format!("permits sub-domains of {s} and *.{s}"),
        AclRule::Address(h, p) => format!("permits the address {h}:{p}"),
        AclRule::Label { key, value } => format!(
            "permits the label {}={}",
            key.as_deref().unwrap_or("*"),
            value.as_deref().unwrap_or("*")
        ),
    }
}

/// Every problem of the rules, named `acl` or `acl[i]`, as the server would report them.
pub fn rule_errors(rules: &[String]) -> Vec<FieldError> {
    Acl::parse(rules).err().unwrap_or_default()
}

/// The "+ Add rule" button's id (focused when the last rule is removed).
const ADD_RULE_ID: &str = "acl-add-rule";

#[component]
pub fn AclEditor(
    rules: RwSignal<Vec<String>>,
    /// The last failed submit, for the server's messages.
    #[prop(into)]
    server_error: Signal<Option<ApiError>>,
) -> impl IntoView {
    let errors = Memo::new(move |_| rules.with(|r| rule_errors(r)));
    let row = move |i: usize| {
        let field = format!("acl[{i}]");
        let id = format!("acl-rule-{i}");
        let msg_field = field.clone();
        let empty = move || rules.with(|r| r.get(i).is_none_or(String::is_empty));
        let message = Signal::derive(move || {
            // A rule not typed yet (just added) is not an error yet: it says what it wants
            // instead; the form still cannot be sent with it.
            let live = errors.with(|e| {
                e.iter()
                    .find(|e| e.field == msg_field)
                    .map(|e| e.message.clone())
            });
            let live = live.filter(|_| !empty());
            live.or_else(|| {
                server_error.with(|s| s.as_ref().and_then(|s| s.field_message(&msg_field)))
            })
        });
        let ok_text = move || {
            let text = rules.with(|r| r.get(i).cloned()).unwrap_or_default();
            AclRule::parse(&text).ok().map(|r| describe(&r))
        };
        let invalid = move || message.with(Option::is_some);
        view! {
            <li class="acl-row" class:invalid=invalid>
                <label for=id.clone() class="sr-only">{format!("Rule {}", i + 1)}</label>
                <input id=id class="mono acl-input" type="text" autocomplete="off" spellcheck="false"
                    placeholder="bind:*.example.com"
                    aria-invalid=move || invalid().to_string()
                    prop:value=move || rules.with(|r| r.get(i).cloned().unwrap_or_default())
                    on:input=move |ev| {
                        let value = event_target_value(&ev);
                        rules.update(|r| if let Some(slot) = r.get_mut(i) { *slot = value });
                    } />
                <button type="button" class="link remove" aria-label=format!("Remove rule {}", i + 1)
                    on:click=move |_| {
                        rules.update(|r| { if i < r.len() { r.remove(i); } });
                        // The focus goes to the rule that took its place, else the one before,
                        // else "Add rule": not back to the top of the page.
                        let left = rules.with_untracked(Vec::len);
                        focus_next_frame(match left {
                            0 => ADD_RULE_ID.to_owned(),
                            n => format!("acl-rule-{}", i.min(n - 1)),
                        });
                    }>"Remove"</button>
                <p class="rule-status" role="status">
                    {move || match message.get() {
                        Some(m) => view! { <span class="error">{text::message(&m)}</span> }.into_any(),
                        None if empty() => view! { <span class="hint">"Type a rule: a domain, host:port or key=value."</span> }.into_any(),
                        None => view! { <span class="ok">{ok_text()}</span> }.into_any(),
                    }}
                </p>
            </li>
        }
    };
    let list_error = move || {
        errors.with(|e| {
            e.iter()
                .find(|e| e.field == "acl")
                .map(|e| e.message.clone())
        })
    };
    view! {
        <fieldset class="acl-editor">
            <legend>"ACL rules"</legend>
            <p class="hint acl-scope" role="status">
                {move || match rules.with(Vec::len) {
                    0 => "No rules: the credential may bind anything.".to_owned(),
                    1 => "1 rule: the credential may bind only what it permits.".to_owned(),
                    n => format!("{n} rules: the credential may bind only what one of them permits."),
                }}
            </p>
            <p class="hint">
                "Rules: " <code>"*"</code>", "
                <code>"bind:example.com"</code>", " <code>"bind:*.example.com"</code>", "
                <code>"bind:host:port"</code>", " <code>"bind:key=value"</code>" (" <code>"*"</code>
                " for the key or value)."
            </p>
            <ul class="acl-rules">
                <For each=move || 0..rules.with(Vec::len) key=|i| *i children=row />
            </ul>
            <p class="error" role="alert">{move || list_error().map(|m| text::message(&m))}</p>
            <button type="button" id=ADD_RULE_ID class="add-rule" on:click=move |_| {
                rules.update(|r| r.push(String::new()));
                // Straight into the new rule, so typing goes there.
                focus_next_frame(format!("acl-rule-{}", rules.with_untracked(Vec::len) - 1));
            }>
                "+ Add rule"
            </button>
        </fieldset>
    }
}

/// The verdict of the ACL tester for one typed bind, as text.
pub fn test_bind(rules: &[String], bind: &str) -> Result<String, String> {
    use tunnel_core::acl::{Bind, Permission};
    let bind = bind.trim();
    if bind.is_empty() {
        return Err("Type a domain, host:port or key=value.".to_owned());
    }
    let acl = Acl::stored(rules)
        .ok_or_else(|| "The saved rules do not parse; fix them first.".to_owned())?;
    let parsed = Bind::parse(bind)?;
    Ok(match acl.check(&parsed) {
        Permission::Unrestricted => {
            format!("Allowed: {parsed} — this credential has no ACL, so it may bind anything.")
        }
        Permission::AllowedBy(rule) => format!("Allowed: {parsed} is permitted by the rule {rule}"),
        Permission::Denied => format!("Denied: no rule permits {parsed}."),
    })
}

/// Type something to bind and see whether these rules permit it, and which rule does.
#[component]
pub fn AclTester(#[prop(into)] rules: Signal<Vec<String>>) -> impl IntoView {
    let input = RwSignal::new(String::new());
    let verdict = move || rules.with(|r| input.with(|i| test_bind(r, i)));
    view! {
        <section class="acl-tester" aria-labelledby="acl-tester-title">
            <h2 id="acl-tester-title">"ACL tester"</h2>
            <div class="field">
                <label for="acl-test-input">"Domain, host:port or key=value"</label>
                <input id="acl-test-input" class="mono" type="text" autocomplete="off" spellcheck="false"
                    placeholder="app.example.com" bind:value=input />
            </div>
            <p class="acl-verdict" role="status" aria-live="polite"
                class:allowed=move || verdict().is_ok_and(|v| v.starts_with("Allowed"))
                class:denied=move || verdict().is_ok_and(|v| v.starts_with("Denied"))>
                // The parser quotes what it names in backticks: shown as code, like every message.
                {move || match verdict() {
                    Ok(v) => text::with_code_spans(&v),
                    Err(e) if input.with(String::is_empty) => text::with_code_spans(&e),
                    Err(e) => text::with_code_spans(&format!("Not a bind: {e}")),
                }}
            </p>
        </section>
    }
}
