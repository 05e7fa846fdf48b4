//! Paging through a list page with "Next →", collecting the ids of its rows.

use super::{click_button, eventually};
use anyhow::{Result, bail};
use fantoccini::{Client, Locator};

/// The ids in the first column of the table on the page now.
pub async fn row_ids(client: &Client) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for cell in client
        .find_all(Locator::Css("table tbody tr td:first-child"))
        .await?
    {
        ids.push(cell.text().await?.trim().to_owned());
    }
    Ok(ids)
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
