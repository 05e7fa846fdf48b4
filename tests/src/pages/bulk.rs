//! Acting on many rows of a list: the rows' checkboxes (with Shift for a range), the bar the
//! selection brings, and the run's dialog with each row's result.

use super::{click_in_dialog, eventually, wait_for_text};
use anyhow::{Context, Result};
use fantoccini::actions::{
    Actions, InputSource, KeyAction, KeyActions, MOUSE_BUTTON_LEFT, MouseActions, PointerAction,
};
use fantoccini::key::Key;
use fantoccini::{Client, Locator};
use std::time::Duration;

/// Clicks the checkbox of the row of resource `id`; with `shift`, a Shift+click (a range from
/// the row clicked before).
pub async fn click_row_box(client: &Client, id: &str, shift: bool) -> Result<()> {
    let css = format!("table tbody tr[data-id='{id}'] input.row-select");
    let check = eventually(&format!("the checkbox of {id}"), || async {
        Ok(client.find(Locator::Css(&css)).await.ok())
    })
    .await?;
    if !shift {
        check
            .click()
            .await
            .with_context(|| format!("selecting {id}"))?;
        return Ok(());
    }
    // One sequence, tick by tick: Shift goes down, the pointer moves to the box and clicks,
    // Shift comes up.
    let pause = || KeyAction::Pause {
        duration: Duration::ZERO,
    };
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down {
            value: Key::Shift.into(),
        })
        .then(pause())
        .then(pause())
        .then(pause())
        .then(KeyAction::Up {
            value: Key::Shift.into(),
        });
    let mouse = MouseActions::new("mouse".into())
        .then(PointerAction::Pause {
            duration: Duration::ZERO,
        })
        .then(PointerAction::MoveToElement {
            element: check,
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    client
        .perform_actions(Actions::from(keys).and(mouse))
        .await
        .with_context(|| format!("Shift+clicking {id}"))?;
    client.release_actions().await?;
    Ok(())
}

/// The ids of the rows whose checkbox is ticked, in page order.
pub async fn selected_ids(client: &Client) -> Result<Vec<String>> {
    let ids = client
        .execute(
            "return [...document.querySelectorAll('table tbody tr[data-id]')]\
             .filter(r => r.querySelector('input.row-select')?.checked)\
             .map(r => r.getAttribute('data-id'));",
            vec![],
        )
        .await?;
    Ok(ids
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect())
}

/// The bar's count ("3 credentials selected"), or `None` when there is no bar.
pub async fn bar_text(client: &Client) -> Result<Option<String>> {
    let text = client
        .execute(
            "const b = document.querySelector('.bulk-bar .bulk-count'); return b ? b.innerText : null;",
            vec![],
        )
        .await?;
    Ok(text.as_str().map(str::to_owned))
}

/// Clicks `action` in the bar, checks the confirmation's title, and confirms with its button.
pub async fn act(client: &Client, action: &str, title: &str, confirm: &str) -> Result<()> {
    let xpath = format!("//div[contains(@class,'bulk-bar')]//button[normalize-space()='{action}']");
    client
        .find(Locator::XPath(&xpath))
        .await
        .with_context(|| format!("the bar's {action:?} button"))?
        .click()
        .await?;
    wait_for_text(client, title).await?;
    click_in_dialog(client, confirm).await
}

/// Waits until the run is over (its button says "Close"), then returns each row's result:
/// `(id, class, outcome text)` with class `done` or `failed`.
pub async fn results(client: &Client) -> Result<Vec<(String, String, String)>> {
    eventually("the run to finish", || async {
        let close = client
            .find_all(Locator::XPath(
                "//dialog[@open]//button[contains(@class,'bulk-close') and normalize-space()='Close']",
            ))
            .await?;
        Ok((!close.is_empty()).then_some(()))
    })
    .await?;
    let rows = client
        .execute(
            "return [...document.querySelectorAll('dialog[open] .bulk-results li')]\
             .map(li => [li.getAttribute('data-id'), li.className, \
                         li.querySelector('.bulk-outcome').innerText]);",
            vec![],
        )
        .await?;
    Ok(rows
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let s = |i: usize| r[i].as_str().unwrap_or_default().to_owned();
            (s(0), s(1), s(2))
        })
        .collect())
}
