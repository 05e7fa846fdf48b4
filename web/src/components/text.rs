//! Messages as the user reads them. `tunnel-core` and the server word problems as fragments
//! ("the rule is empty; …", "`x` is listed twice") so they compose into longer messages; the
//! console shows every message as a sentence, with quoted values as code instead of backticks.
//! Every part stays a text node (never HTML).

use leptos::prelude::*;

/// `text` as a sentence: a capital first letter and a closing full stop.
pub fn sentence(text: &str) -> String {
    let text = text.trim();
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    let mut out: String = first.to_uppercase().chain(chars).collect();
    if !out.ends_with(['.', '!', '?', ':', '…']) {
        out.push('.');
    }
    out
}

/// `text` with each `` `quoted` `` part as a `<code>` element. An unpaired backtick is shown as
/// it is.
pub fn with_code_spans(text: &str) -> Vec<AnyView> {
    if text.matches('`').count() % 2 == 1 {
        return vec![text.to_owned().into_any()];
    }
    text.split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(i, part)| {
            let part = part.to_owned();
            if i % 2 == 1 {
                view! { <code>{part}</code> }.into_any()
            } else {
                part.into_any()
            }
        })
        .collect()
}

/// A message ready to show: bounded as the server bounds its own (a value quoted at length, a
/// 10 000-character rule pasted, is cut to 64 characters), then [`sentence`] and
/// [`with_code_spans`].
pub fn message(text: &str) -> Vec<AnyView> {
    with_code_spans(&sentence(&tunnel_core::errors::bounded_message(text)))
}

// Native only: the browser tests are the component tests in `web/tests/`.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::sentence;

    #[test]
    fn messages_read_as_sentences() {
        assert_eq!(sentence("the rule is empty"), "The rule is empty.");
        assert_eq!(sentence("Enter an API key."), "Enter an API key.");
        assert_eq!(sentence("`x` is listed twice"), "`x` is listed twice.");
        assert_eq!(sentence("  "), "");
        assert_eq!(sentence("éa"), "Éa.");
    }
}
