//! Hostile text in the console: every user-supplied field of every resource (descriptions,
//! metadata, a label, a webhook URL, an agent's metadata and binds, a search, a rule typed in a
//! form) holds markup that would run script if it ever reached the page as HTML, right-to-left
//! overrides, zero-width characters, 4-byte emoji, at the longest length the API accepts.
//!
//! Every console page is opened with it at 1280 px and at 375 px. A watcher installed in every
//! document before the console's own script records Content-Security-Policy violations and
//! any `alert`/`confirm`/`prompt`; the page must record none, hold none of the markup's
//! elements, show the markup as text, and never scroll sideways.

use tunnel_e2e::every_page::{self, Texts, settle};
use tunnel_e2e::harness::{Browser, Stack};
use tunnel_e2e::pages::{self, credentials};
use tunnel_testkit::browser::run_in_every_document;

/// Markup whose every part would do something if parsed as HTML: an image and an SVG running a
/// handler, an inline script, and an element easy to look for.
const MARKUP: &str = "<img src=x onerror=alert(1)><script>alert(2)</script><svg onload=alert(3)><marquee>m</marquee>";

/// Text that misbehaves in other ways: a right-to-left override left open, zero-width
/// characters (a space and a joiner), 4-byte emoji and a joined family emoji.
const UNICODE: &str = "\u{202E}evil-rtl zero\u{200B}width\u{200D}join 🦀🦀👩‍👩‍👧";

/// Installed before the console's script in every document: what it records is a finding.
const WATCHER: &str = r#"(() => {
  const found = [];
  window.__hostile = found;
  document.addEventListener('securitypolicyviolation', (e) =>
    found.push(`CSP ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sample})`));
  for (const name of ['alert', 'confirm', 'prompt']) {
    window[name] = (message) => { found.push(`${name}(${message})`); };
  }
})();"#;

/// What the watcher recorded, and the markup's elements present in the page.
const FINDINGS: &str = r#"
  const found = (window.__hostile || ['the watcher is not installed']).slice();
  const elements = document.querySelectorAll('[onerror], [onload], marquee').length
    + [...document.scripts].filter((s) => s.text.includes('alert(')).length;
  if (elements > 0) found.push(`${elements} element(s) of the markup in the page`);
  return found;"#;

/// `text` repeated (whole characters) to exactly `bytes` bytes, the rest filled with `.`.
fn filled(text: &str, bytes: usize) -> String {
    let mut out = String::new();
    for c in text.chars().cycle() {
        if out.len() + c.len_utf8() > bytes {
            break;
        }
        out.push(c);
    }
    while out.len() < bytes {
        out.push('.');
    }
    out
}

async fn findings(client: &fantoccini::Client) -> anyhow::Result<Vec<String>> {
    let value = client.execute(FINDINGS, vec![]).await?;
    Ok(serde_json::from_value(value)?)
}

/// Checks the page shown at both widths: nothing recorded, nothing wider than the window; saves
/// a screenshot of each, named after `shot`.
async fn check(
    browser: &Browser,
    what: &str,
    shot: &str,
    problems: &mut Vec<String>,
) -> anyhow::Result<()> {
    let client = &browser.client;
    for (width, height) in [(1280, 900), (375, 740)] {
        pages::set_viewport(client, width, height).await?;
        let (page, viewport) = pages::page_widths(client).await?;
        if page > viewport {
            problems.push(format!(
                "{what} at {width} px: {page} px wide in a {viewport} px window"
            ));
        }
        browser
            .screenshot(&format!("hostile-{width}-{shot}"))
            .await?;
    }
    for finding in findings(client).await? {
        problems.push(format!("{what}: {finding}"));
    }
    Ok(())
}

/// A screenshot's name for `route`, without the ids that change with every run:
/// `credentials`, `credentials-new`, `credentials-detail`.
fn shot_name(route: &str) -> String {
    match route.trim_start_matches('/').split_once('/') {
        None => route.trim_start_matches('/').to_owned(),
        Some((area, "new")) => format!("{area}-new"),
        Some((area, _)) => format!("{area}-detail"),
    }
}

#[tokio::test]
async fn hostile_text_is_shown_as_text_and_runs_nothing() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let texts = Texts {
        prefix: "hostile".into(),
        tail: format!(" {MARKUP} {}", filled(UNICODE, 255)),
        metadata: filled(&format!("{MARKUP} {UNICODE} "), 4096),
        label: "<b>x</b>\u{202E}🦀".into(),
        // A URL has no spaces; markup without them.
        url: "https://hooks.example.com/<svg/onload=alert(4)>?q=\"'><img/src/onerror=alert(5)>"
            .into(),
    };
    let data = every_page::create(server, api, &texts).await?;
    let (_, credential) = api
        .get(&format!("/credentials/{}", data.credential))
        .await?;
    // The longest description the API accepts, to a whole character.
    let length = credential["description"].as_str().map_or(0, str::len);
    assert!((252..=255).contains(&length), "{length} bytes");
    assert_eq!(credential["metadata"].as_str().map(str::len), Some(4096));

    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    run_in_every_document(client, WATCHER).await?;
    let base = server.url();

    // The watcher sees a violation: a script element added now is refused by the CSP.
    client.goto(&format!("{base}/credentials")).await?;
    settle(client, &texts.marker("laptop")).await?;
    client
        .execute(
            "const s = document.createElement('script'); s.text = 'alert(0)';
             document.body.append(s); s.remove();",
            vec![],
        )
        .await?;
    let probe = pages::eventually("the probe's violation", || async {
        let found = findings(client).await?;
        Ok((!found.is_empty()).then_some(found))
    })
    .await?;
    assert!(probe.iter().any(|f| f.starts_with("CSP ")), "{probe:?}");

    let mut problems = Vec::new();
    let routes = every_page::routes(&data, &texts);
    let mut shown_as_text = 0;
    for (route, text) in &routes {
        client.goto(&format!("{base}{route}")).await?;
        settle(client, text).await?;
        if pages::page_text(client).await?.contains(MARKUP) {
            shown_as_text += 1;
        }
        check(&browser, route, &shot_name(route), &mut problems).await?;
    }

    // A search for the markup, and a rule made of it typed into a form: both echo it back.
    pages::set_viewport(client, 1280, 900).await?;
    // Found nowhere (the descriptions hold the markup alone), so the list echoes it back.
    let absent = format!("{MARKUP}{UNICODE}");
    let query: String = url::form_urlencoded::byte_serialize(absent.as_bytes()).collect();
    let search = format!("/credentials?q={query}");
    client.goto(&format!("{base}{search}")).await?;
    settle(client, "Nothing matches").await?;
    // Isolated from the sentence around it, which its right-to-left override would turn.
    let echoed = client
        .execute(
            "const b = document.querySelector('p.empty bdi'); return b && b.textContent;",
            vec![],
        )
        .await?;
    assert_eq!(echoed.as_str(), Some(absent.as_str()), "the echoed search");
    check(&browser, "a search for the markup", "search", &mut problems).await?;
    pages::set_viewport(client, 1280, 900).await?;
    client.goto(&format!("{base}/credentials/new")).await?;
    settle(client, "New credential").await?;
    credentials::set_rule(client, 1, "bind:<svg/onload=alert(5)>").await?;
    pages::wait_for_text(client, "<svg/onload=alert(5)>").await?;
    check(
        &browser,
        "/credentials/new with a bad rule",
        "rule-error",
        &mut problems,
    )
    .await?;

    // Every list and detail page of a described resource shows the markup as text.
    let described = routes
        .iter()
        .filter(|(_, text)| text.starts_with(&texts.prefix))
        .count();
    assert!(
        shown_as_text >= described,
        "the markup shown as text on {shown_as_text} pages, expected at least {described}"
    );
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    drop(data);
    Ok(())
}

#[test]
fn filled_texts_have_the_exact_length() {
    assert_eq!(filled("🦀", 255).len(), 255);
    assert_eq!(filled("🦀", 255).chars().filter(|c| *c == '🦀').count(), 63);
    assert_eq!(filled("ab", 5), "ababa");
}
