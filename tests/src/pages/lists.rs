//! The list pages: the ids of their rows, opening a row, and paging with "Next →".

use super::{click_button, eventually};
use anyhow::{Result, bail};
use fantoccini::{Client, Locator};

/// The resource ids of the rows of the table on the page now (each row names its id), read in
/// one script so a re-render between finding the rows and reading them cannot leave stale
/// elements behind.
pub async fn row_ids(client: &Client) -> Result<Vec<String>> {
    let ids = client
        .execute(
            "return [...document.querySelectorAll('table tbody tr[data-id]')]\
             .map(r => r.getAttribute('data-id') || '');",
            vec![],
        )
        .await?;
    Ok(ids
        .as_array()
        .into_iter()
        .flatten()
        .map(|id| id.as_str().unwrap_or_default().to_owned())
        .collect())
}

/// Opens the detail page of the row of resource `id` through its name link, as a user does
/// (the list may still be loading or refreshing).
pub async fn open_row(client: &Client, id: &str) -> Result<()> {
    let css = format!("table tbody tr[data-id='{id}'] td.name-cell a.name");
    eventually(&format!("the row of {id}"), || async {
        match client.find(Locator::Css(&css)).await {
            Ok(link) => match link.click().await {
                Ok(_) => Ok(Some(())),
                // Replaced by a refresh between finding and clicking: look again.
                Err(e) if e.to_string().contains("stale") => Ok(None),
                Err(e) => Err(e.into()),
            },
            Err(_) => Ok(None),
        }
    })
    .await
}

/// Whether the "Next →" button is enabled.
async fn has_next(client: &Client) -> Result<bool> {
    let next = client
        .find(Locator::XPath("//button[normalize-space()='Next →']"))
        .await?;
    Ok(next.is_enabled().await?)
}

/// Visits every page from the current one, at most `max_pages`, returning each page's row ids.
pub async fn collect_all_pages(client: &Client, max_pages: usize) -> Result<Vec<Vec<String>>> {
    let mut all = Vec::new();
    let mut current = eventually("a list with rows", || async {
        let ids = row_ids(client).await?;
        Ok((!ids.is_empty()).then_some(ids))
    })
    .await?;
    for _ in 0..max_pages {
        all.push(current.clone());
        if !has_next(client).await? {
            return Ok(all);
        }
        click_button(client, "Next →").await?;
        let previous_first = current.first().cloned();
        current = eventually("the next page", || async {
            let ids = row_ids(client).await?;
            Ok((!ids.is_empty() && ids.first() != previous_first.as_ref()).then_some(ids))
        })
        .await?;
    }
    bail!("more than {max_pages} pages")
}
