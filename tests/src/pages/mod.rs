//! Page objects: the console driven the way a user does, by labels, buttons and visible text.
//! Every wait is bounded; failures say what was looked for.
//!
//! One module per API area, named as the API names it (`docs/api/<area>.md`): the console's
//! links and headings may say it shorter ("Events", "Sessions"), the code does not. This module
//! holds what every page uses: finding fields by label, clicking buttons, waiting for text.

pub mod activity;
pub mod api_keys;
pub mod backends;
pub mod bulk;
pub mod credentials;
pub mod event_destinations;
pub mod event_subscriptions;
pub mod lists;
pub mod sign_in;
pub mod ssh_cas;
pub mod tls_edges;
pub mod tunnel_sessions;

use anyhow::{Context, Result, bail};
use fantoccini::{Client, Locator, elements::Element};
use std::time::{Duration, Instant};

/// How long any single wait for the UI may take.
pub const UI_TIMEOUT: Duration = Duration::from_secs(20);

/// XPath string literal for arbitrary text (handles both quote kinds).
fn xpath_literal(text: &str) -> String {
    if !text.contains('\'') {
        format!("'{text}'")
    } else if !text.contains('"') {
        format!("\"{text}\"")
    } else {
        let parts: Vec<String> = text.split('\'').map(|p| format!("'{p}'")).collect();
        format!("concat({})", parts.join(", \"'\", "))
    }
}

/// Polls `probe` until it yields `Some`, for at most `UI_TIMEOUT`.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        if let Some(value) = probe().await? {
            return Ok(value);
        }
        if Instant::now() >= deadline {
            bail!("timed out after {UI_TIMEOUT:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The form control labelled `label` (a `<label for=…>` with that text, or wrapping the control).
pub async fn field(client: &Client, label: &str) -> Result<Element> {
    let lit = xpath_literal(label);
    let xpath =
        format!("//label[normalize-space()={lit}]/@for/.. | //label[normalize-space()={lit}]");
    eventually(&format!("the field labelled {label:?}"), || async {
        let labels = client.find_all(Locator::XPath(&xpath)).await?;
        for label_el in labels {
            if let Some(id) = label_el.attr("for").await? {
                if let Ok(el) = client.find(Locator::Id(&id)).await {
                    return Ok(Some(el));
                }
            } else if let Ok(el) = label_el.find(Locator::Css("input, textarea, select")).await {
                return Ok(Some(el));
            }
        }
        Ok(None)
    })
    .await
}

/// Replaces the content of the field labelled `label` with `value`.
pub async fn fill(client: &Client, label: &str, value: &str) -> Result<()> {
    let el = field(client, label).await?;
    el.clear()
        .await
        .with_context(|| format!("clearing {label:?}"))?;
    el.send_keys(value)
        .await
        .with_context(|| format!("typing into {label:?}"))?;
    Ok(())
}

/// Clicks the enabled, visible button (or link styled as one) whose text is `text`. A click that
/// lands on something covering it (a toast) is retried until the cover goes, as a user would.
pub async fn click_button(client: &Client, text: &str) -> Result<()> {
    let xpath = format!(
        "//*[self::button or self::a][normalize-space()={}]",
        xpath_literal(text)
    );
    click_xpath(client, text, &xpath).await
}

/// Clicks the button `text` inside the open dialog (a confirmation often repeats the label of
/// the button that opened it).
pub async fn click_in_dialog(client: &Client, text: &str) -> Result<()> {
    let xpath = format!(
        "//*[@role='dialog' or @role='alertdialog']//button[normalize-space()={}]",
        xpath_literal(text)
    );
    click_xpath(client, text, &xpath).await
}

async fn click_xpath(client: &Client, text: &str, xpath: &str) -> Result<()> {
    eventually(&format!("a click on the button {text:?}"), || async {
        for b in client.find_all(Locator::XPath(xpath)).await? {
            // Unavailable buttons are waited for, `disabled` ones and those the console marks
            // `aria-disabled` while their request runs (they keep the focus).
            let available = b.attr("aria-disabled").await?.as_deref() != Some("true");
            if b.is_displayed().await? && b.is_enabled().await? && available {
                return match b.click().await {
                    Ok(_) => Ok(Some(())),
                    Err(e) if e.to_string().contains("intercepted") => Ok(None),
                    Err(e) => Err(e).with_context(|| format!("clicking {text:?}")),
                };
            }
        }
        Ok(None)
    })
    .await
}

/// Opens a page from the main navigation by its link `link`, waiting until it shows `shown`.
pub async fn open_from_navigation(client: &Client, link: &str, shown: &str) -> Result<()> {
    client
        .find(Locator::LinkText(link))
        .await
        .with_context(|| format!("the navigation link {link:?}"))?
        .click()
        .await?;
    wait_for_text(client, shown).await
}

/// From now on, every request of the page with `method` (`"DELETE"`) waits `ms` before it
/// leaves the browser: a slow server, for what the console does meanwhile.
pub async fn delay_requests(client: &Client, method: &str, ms: u32) -> Result<()> {
    client
        .execute(
            "const [method, ms] = arguments; \
             const send = window.fetch.bind(window); \
             window.fetch = (request, init) => \
               ((request && request.method) || (init && init.method)) === method \
                 ? new Promise(r => setTimeout(r, ms)).then(() => send(request, init)) \
                 : send(request, init);",
            vec![method.into(), ms.into()],
        )
        .await?;
    Ok(())
}

/// From now on, every request of the page whose URL holds `part` fails as a network error
/// would, until [`stop_failing_requests`].
pub async fn fail_requests(client: &Client, part: &str) -> Result<()> {
    client
        .execute(
            "window.__failing = arguments[0]; \
             if (!window.__unfailed) { \
               window.__unfailed = window.fetch.bind(window); \
               window.fetch = (request, init) => { \
                 const url = (request && request.url) || String(request); \
                 return window.__failing && url.includes(window.__failing) \
                   ? Promise.reject(new TypeError('Failed to fetch')) \
                   : window.__unfailed(request, init); \
               }; \
             }",
            vec![part.into()],
        )
        .await?;
    Ok(())
}

/// Ends [`fail_requests`].
pub async fn stop_failing_requests(client: &Client) -> Result<()> {
    client.execute("window.__failing = null;", vec![]).await?;
    Ok(())
}

/// The top bar's links marked current, as `label=value` of their `aria-current`.
pub async fn current_sections(client: &Client) -> Result<Vec<String>> {
    let value = client
        .execute(
            "return [...document.querySelectorAll('.mainnav a[aria-current]')] \
               .map(a => a.textContent + '=' + a.getAttribute('aria-current'));",
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(value)?)
}

/// The visible text of the page.
pub async fn page_text(client: &Client) -> Result<String> {
    Ok(client.find(Locator::Css("body")).await?.text().await?)
}

/// Waits until the page shows `text`.
pub async fn wait_for_text(client: &Client, text: &str) -> Result<()> {
    eventually(&format!("the text {text:?}"), || async {
        Ok(page_text(client).await?.contains(text).then_some(()))
    })
    .await
}

/// Whether a visible button with this text is on the page now (no waiting).
pub async fn has_button(client: &Client, text: &str) -> Result<bool> {
    let xpath = format!("//button[normalize-space()={}]", xpath_literal(text));
    for b in client.find_all(Locator::XPath(&xpath)).await? {
        if b.is_displayed().await? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Picks the option shown as `option` in the select labelled `label`.
pub async fn select(client: &Client, label: &str, option: &str) -> Result<()> {
    let el = field(client, label).await?;
    el.select_by_label(option)
        .await
        .with_context(|| format!("choosing {option:?} in {label:?}"))?;
    Ok(())
}

/// The current value of the field labelled `label`.
pub async fn value_of(client: &Client, label: &str) -> Result<String> {
    let el = field(client, label).await?;
    Ok(el.prop("value").await?.unwrap_or_default())
}

/// Picks the first option containing `text` in the select labelled `label`.
pub async fn select_containing(client: &Client, label: &str, text: &str) -> Result<()> {
    let el = field(client, label).await?;
    let xpath = format!(
        ".//option[contains(normalize-space(), {})]",
        xpath_literal(text)
    );
    let option = eventually(&format!("an option with {text:?} in {label:?}"), || async {
        Ok(el.find(Locator::XPath(&xpath)).await.ok())
    })
    .await?;
    option
        .click()
        .await
        .with_context(|| format!("choosing {text:?} in {label:?}"))?;
    Ok(())
}

/// Presses `keys` (a `fantoccini::key::Key`, or a chord like `Key::Shift + "…"`) where the
/// keyboard focus is, as a user would.
pub async fn press(client: &Client, keys: impl std::fmt::Display) -> Result<()> {
    let keys = keys.to_string();
    let el = client.active_element().await?;
    el.send_keys(&keys)
        .await
        .with_context(|| format!("pressing {keys:?}"))?;
    Ok(())
}

/// A short description of the focused element: `tag#id.class "text"`, for assertions and
/// failure messages.
pub async fn focused(client: &Client) -> Result<String> {
    let value = client
        .execute(
            "const e = document.activeElement; if (!e) return ''; \
             return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + \
             (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '') + \
             ' ' + JSON.stringify((e.innerText || e.value || '').trim().slice(0, 60));",
            vec![],
        )
        .await?;
    Ok(value.as_str().unwrap_or_default().to_owned())
}

/// Takes the focus off any field, as clicking the page's background would (a pointer press,
/// which the console takes as the user's next move, then the focus on nothing).
pub async fn blur(client: &Client) -> Result<()> {
    client
        .execute(
            "document.body.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true})); \
             document.activeElement && document.activeElement.blur();",
            vec![],
        )
        .await?;
    Ok(())
}

/// Waits until the focused element's description ([`focused`]) starts with `start`
/// (`button#edit-toggle`, `h1`).
pub async fn wait_for_focus(client: &Client, start: &str) -> Result<()> {
    eventually(&format!("the focus on {start}"), || async {
        Ok(focused(client).await?.starts_with(start).then_some(()))
    })
    .await
}

/// Whether the focused element is inside an open `<dialog>`.
pub async fn focus_in_dialog(client: &Client) -> Result<bool> {
    let value = client
        .execute(
            "const e = document.activeElement; return !!(e && e.closest('dialog[open]'));",
            vec![],
        )
        .await?;
    Ok(value.as_bool().unwrap_or(false))
}

/// Waits until the keyboard focus is inside an open dialog (`what` names it).
pub async fn wait_focus_in_dialog(client: &Client, what: &str) -> Result<()> {
    eventually(what, || async {
        Ok(focus_in_dialog(client).await?.then_some(()))
    })
    .await
}

/// Presses `keys` `times` times, asserting after each that the focus is still inside the open
/// dialog (`what` names it in the failure, with where the focus went).
pub async fn press_within_dialog(
    client: &Client,
    keys: &str,
    name: &str,
    times: usize,
    what: &str,
) -> Result<()> {
    for _ in 0..times {
        press(client, keys).await?;
        assert!(
            focus_in_dialog(client).await?,
            "{name} left {what} for {}",
            focused(client).await?
        );
    }
    Ok(())
}

/// `(document width, viewport width)`: a page that scrolls sideways has the first larger.
pub async fn page_widths(client: &Client) -> Result<(i64, i64)> {
    let value = client
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth];",
            vec![],
        )
        .await?;
    let width = |i: usize| {
        value
            .get(i)
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0)
    };
    Ok((width(0), width(1)))
}

/// Sets the size of the browser's viewport (the window is resized until the inner width
/// matches, since window decorations differ between builds).
pub async fn set_viewport(client: &Client, width: u32, height: u32) -> Result<()> {
    client.set_window_size(width, height).await?;
    let inner = client.execute("return window.innerWidth;", vec![]).await?;
    let inner = inner.as_u64().unwrap_or(u64::from(width)) as u32;
    if inner != width {
        client
            .set_window_size(width + (width.saturating_sub(inner)), height)
            .await?;
    }
    Ok(())
}
