//! Accessibility: axe-core (npm, pinned and installed by `cargo xtask test`) finds no serious or
//! critical violation on any page of the console, in the light and the dark theme, at 1280 px
//! and at 375 px wide; nor with the open dialogs (the keyboard shortcuts, a delete
//! confirmation, an authtoken shown once), the phone menu open, or a form showing an error.
//!
//! Every list holds real data created through the API first, and the session pages a real
//! agent's session, so rows, names and badges are checked too. One browser visits every page
//! once and checks it in the four variants without reloading: the theme is switched the way
//! the console's switch does it (`web/src/theme.rs`: `data-theme` on `<html>`, kept in
//! `localStorage`) and the window resized. Violations are collected over the whole run and
//! reported together, each with its page, width, theme, rule, impact, help and the nodes'
//! selectors, so one run shows everything to fix.

use serde_json::json;
use std::time::Instant;
use tunnel_e2e::axe;
use tunnel_e2e::every_page::{self, Texts, settle};
use tunnel_e2e::harness::{ADMIN_KEY, Browser, Stack};
use tunnel_e2e::pages::{self, bulk, credentials, eventually, sign_in::sign_in};

/// The widths checked, with a height each (a desktop and a phone).
const VIEWPORTS: [(u32, u32); 2] = [(1280, 900), (375, 740)];
const THEMES: [&str; 2] = ["light", "dark"];

/// The body background of each theme (`--bg` of `web/style.css`), to check the switch worked.
fn background(theme: &str) -> &'static str {
    if theme == "dark" {
        "rgb(17, 20, 24)"
    } else {
        "rgb(246, 247, 249)"
    }
}

/// What one run found, and how many checks it made (so a check that did not run is noticed).
struct Audit {
    axe: String,
    findings: Vec<String>,
    checks: usize,
}

impl Audit {
    /// Runs axe on what the browser shows now in each theme at each of `viewports`; `what`
    /// names the state (a route, or a dialog on it) in the findings.
    async fn check(
        &mut self,
        browser: &Browser,
        what: &str,
        viewports: &[(u32, u32)],
    ) -> anyhow::Result<()> {
        let client = &browser.client;
        for &(width, height) in viewports {
            pages::set_viewport(client, width, height).await?;
            for theme in THEMES {
                set_theme(client, theme).await?;
                for violation in axe::serious_violations(client, &self.axe).await? {
                    self.findings
                        .push(format!("{what} at {width} px, {theme}: {violation}"));
                }
                self.checks += 1;
            }
        }
        Ok(())
    }

    /// Opens `route`, waits until it shows `text` and has finished loading, then checks it.
    async fn page(
        &mut self,
        browser: &Browser,
        base: &str,
        route: &str,
        text: &str,
    ) -> anyhow::Result<()> {
        browser.client.goto(&format!("{base}{route}")).await?;
        settle(&browser.client, text).await?;
        self.check(browser, route, &VIEWPORTS).await
    }
}

/// What the theme switch does: `data-theme` on `<html>`, and the choice kept for later pages.
async fn set_theme(client: &fantoccini::Client, theme: &str) -> anyhow::Result<()> {
    let shown = client
        .execute(
            "const theme = arguments[0];
             localStorage.setItem('tunnel-console.theme', theme);
             document.documentElement.setAttribute('data-theme', theme);
             return getComputedStyle(document.body).backgroundColor;",
            vec![json!(theme)],
        )
        .await?;
    assert_eq!(
        shown.as_str(),
        Some(background(theme)),
        "the {theme} theme is not applied"
    );
    Ok(())
}

/// Closes the open dialog with Escape, as a keyboard user does, and waits until it is gone.
async fn close_dialog(client: &fantoccini::Client) -> anyhow::Result<()> {
    pages::press(client, fantoccini::key::Key::Escape).await?;
    eventually("the dialog closed", || async {
        let open = client
            .execute("return !!document.querySelector('dialog[open]');", vec![])
            .await?;
        Ok((open.as_bool() == Some(false)).then_some(()))
    })
    .await
}

#[tokio::test]
async fn axe_finds_no_serious_violation_on_any_console_page() -> anyhow::Result<()> {
    let started = Instant::now();
    let mut audit = Audit {
        axe: axe::source()?,
        findings: Vec::new(),
        checks: 0,
    };
    let stack = Stack::start(&[])?;
    let (server, api) = (&stack.server, &stack.api);
    let texts = Texts::plain("a11y");
    let data = every_page::create(server, api, &texts).await?;

    let browser = Browser::start().await?;
    let client = &browser.client;
    let base = server.url();

    // Before signing in.
    client.goto(&base).await?;
    settle(client, "Sign in").await?;
    audit.check(&browser, "sign-in", &VIEWPORTS).await?;
    sign_in(client, &base, ADMIN_KEY).await?;
    pages::set_viewport(client, 1280, 900).await?;

    let routes = every_page::routes(&data, &texts);
    for (route, text) in &routes {
        audit.page(&browser, &base, route, text).await?;
    }

    // The keyboard shortcuts dialog (`?`) over a list.
    pages::set_viewport(client, 1280, 900).await?;
    client.goto(&format!("{base}/credentials")).await?;
    settle(client, "a11y laptop").await?;
    pages::blur(client).await?;
    pages::press(client, "?").await?;
    pages::wait_for_text(client, "Keyboard shortcuts").await?;
    pages::wait_focus_in_dialog(client, "the shortcuts dialog").await?;
    audit
        .check(&browser, "the keyboard shortcuts dialog", &VIEWPORTS)
        .await?;
    close_dialog(client).await?;

    // A row selected (the bulk bar), then the bulk delete's confirmation.
    pages::set_viewport(client, 1280, 900).await?;
    client.goto(&format!("{base}/credentials")).await?;
    settle(client, "a11y laptop").await?;
    bulk::click_row_box(client, &data.credential, false).await?;
    pages::wait_for_text(client, "1 credential selected").await?;
    audit.check(&browser, "the bulk bar", &VIEWPORTS).await?;
    pages::set_viewport(client, 1280, 900).await?;
    pages::click_button(client, "Delete").await?;
    pages::wait_focus_in_dialog(client, "the bulk delete confirmation").await?;
    audit
        .check(&browser, "the bulk delete confirmation", &VIEWPORTS)
        .await?;
    close_dialog(client).await?;

    // The delete confirmation of a detail page.
    pages::set_viewport(client, 1280, 900).await?;
    client
        .goto(&format!("{base}/credentials/{}", data.credential))
        .await?;
    settle(client, "ACL tester").await?;
    pages::click_button(client, "Delete").await?;
    pages::wait_focus_in_dialog(client, "the delete confirmation").await?;
    audit
        .check(&browser, "the delete confirmation", &VIEWPORTS)
        .await?;
    close_dialog(client).await?;

    // The phone menu, open.
    pages::set_viewport(client, 375, 740).await?;
    pages::click_button(client, "Menu").await?;
    pages::wait_for_text(client, "Sign out").await?;
    audit
        .check(&browser, "the phone menu", &[(375, 740)])
        .await?;
    pages::click_button(client, "Close menu").await?;

    // A form showing a field's error, then the authtoken dialog after creating.
    pages::set_viewport(client, 1280, 900).await?;
    client.goto(&format!("{base}/credentials/new")).await?;
    settle(client, "New credential").await?;
    pages::fill(client, "Description", "a11y form").await?;
    credentials::set_rule(client, 1, "bind:bad rule").await?;
    pages::wait_for_text(client, "contains whitespace").await?;
    audit
        .check(&browser, "a form with an error", &VIEWPORTS)
        .await?;
    pages::set_viewport(client, 1280, 900).await?;
    credentials::set_rule(client, 1, "bind:*.example.com").await?;
    pages::click_button(client, "Create credential").await?;
    pages::wait_for_text(client, "you will not see it again").await?;
    audit
        .check(&browser, "the authtoken dialog", &VIEWPORTS)
        .await?;

    // Every page and state in each theme at each width: sign-in, the routes and six states
    // (the bulk bar, three dialogs, a form's error, the token dialog) at both widths, the phone
    // menu at 375 px.
    let expected = (1 + routes.len() + 6) * VIEWPORTS.len() * THEMES.len() + THEMES.len();
    assert_eq!(audit.checks, expected, "checks made");
    println!(
        "axe: {} checks in {:.1} s",
        audit.checks,
        started.elapsed().as_secs_f64()
    );
    assert!(
        audit.findings.is_empty(),
        "axe found {} serious or critical violation(s):\n{}",
        audit.findings.len(),
        audit.findings.join("\n")
    );
    Ok(())
}
