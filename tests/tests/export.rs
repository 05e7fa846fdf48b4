//! Exporting a list from the console: every page of it (followed through `next_page_uri`), with
//! the search when there is one, as a CSV a spreadsheet reads (the id first, user text that
//! would run as a formula defused) and as JSON with the API's items, each file named by the
//! resource and the day; a cancelled export downloads nothing.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tunnel_e2e::api::id;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, credentials, eventually};

/// More than one page of the list (100 a page).
const MANY: usize = 130;

/// Waits for the finished download `name` in `dir` (Chromium writes `.crdownload` first).
async fn downloaded(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    eventually(&format!("the download {name}"), || async {
        let listed: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let partial = listed.iter().any(|f| f.ends_with(".crdownload"));
        Ok((path.exists() && !partial).then(|| path.clone()))
    })
    .await
}

/// The browser's local date, as the file name has it.
async fn today(client: &fantoccini::Client) -> anyhow::Result<String> {
    let date = client
        .execute(
            "const d = new Date(); const p = n => String(n).padStart(2, '0'); \
             return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;",
            vec![],
        )
        .await?;
    Ok(date.as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn a_list_is_exported_whole_as_csv_and_json() -> anyhow::Result<()> {
    let stack = Stack::start(&[])?;
    let api = &stack.api;
    let mut ids = Vec::new();
    for n in 0..MANY {
        ids.push(id(&api
            .create("/credentials", json!({"description": format!("fleet {n}")}))
            .await?));
    }
    let formula = "=HYPERLINK(\"http://evil.example\",\"x\")";
    let tricky = api
        .create(
            "/credentials",
            json!({
                "description": formula,
                "metadata": "{\"team\": \"a, b\"}\nline two",
                "acl": ["bind:special.example.com"],
            }),
        )
        .await?;
    ids.push(id(&tricky));
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    pages::wait_for_text(client, "fleet 129").await?;
    let day = today(client).await?;

    // CSV: every credential of both pages, the id first, the formula defused.
    pages::click_button(client, "Export CSV").await?;
    let csv_path = downloaded(&browser.downloads(), &format!("credentials-{day}.csv")).await?;
    let mut reader = csv::Reader::from_path(&csv_path)?;
    let header: Vec<String> = reader.headers()?.iter().map(str::to_owned).collect();
    assert_eq!(header.first().map(String::as_str), Some("id"), "{header:?}");
    for column in [
        "acl",
        "created_at",
        "description",
        "metadata",
        "owner_id",
        "uri",
    ] {
        assert!(
            header.iter().any(|h| h == column),
            "{column} missing: {header:?}"
        );
    }
    let at = |name: &str| header.iter().position(|h| h == name).unwrap_or(usize::MAX);
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>()?;
    let mut exported: Vec<String> = rows.iter().map(|r| r[0].to_owned()).collect();
    let mut expected = ids.clone();
    exported.sort();
    expected.sort();
    assert_eq!(exported, expected, "every credential exactly once");
    let row = rows
        .iter()
        .find(|r| r[0] == ids[MANY])
        .expect("the tricky credential's row");
    assert_eq!(&row[at("description")], format!("'{formula}"));
    assert_eq!(&row[at("metadata")], "{\"team\": \"a, b\"}\nline two");
    assert_eq!(&row[at("acl")], "[\"bind:special.example.com\"]");

    // JSON with a search: only what the search finds, as the API gives it.
    pages::fill(client, "Search credentials", "special").await?;
    eventually("the search applied", || async {
        let rows = tunnel_e2e::pages::lists::row_ids(client).await?;
        Ok((rows == [ids[MANY].clone()]).then_some(()))
    })
    .await?;
    pages::click_button(client, "Export JSON").await?;
    let json_path = downloaded(&browser.downloads(), &format!("credentials-{day}.json")).await?;
    let items: Vec<Value> = serde_json::from_slice(&std::fs::read(json_path)?)?;
    let (_, fetched) = api.get(&format!("/credentials/{}", ids[MANY])).await?;
    assert_eq!(items, vec![fetched], "the API's item, unchanged");
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn a_cancelled_export_downloads_nothing() -> anyhow::Result<()> {
    // One request every 3 s per key: after a script empties the bucket, the export's first
    // page waits out a 429, long enough to cancel it, as a long export over many pages would be.
    let stack = Stack::start(&["--rate-limit-key", "20/m,1"])?;
    let api = &stack.api;
    api.create("/credentials", json!({"description": "kept home"}))
        .await?;
    let browser = stack.signed_in_browser().await?;
    let client = &browser.client;
    credentials::open_list(client).await?;
    pages::wait_for_text(client, "kept home").await?;
    let day = today(client).await?;
    let mut drained = false;
    for _ in 0..5 {
        let (status, _) = api
            .call_once(hyper::Method::GET, "/credentials", None)
            .await?;
        if status == 429 {
            drained = true;
            break;
        }
    }
    assert!(drained, "the bucket never emptied");

    pages::click_button(client, "Export JSON").await?;
    pages::wait_for_text(client, "0 fetched").await?;
    pages::click_button(client, "Cancel").await?;
    eventually("the export buttons back", || async {
        let text = pages::page_text(client).await?;
        Ok((!text.contains("fetched")).then_some(()))
    })
    .await?;
    // Longer than the 429's wait: the page arrives, and is dropped.
    tokio::time::sleep(std::time::Duration::from_secs(8)).await;
    let files: Vec<_> = std::fs::read_dir(browser.downloads())
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(files.is_empty(), "a cancelled export downloaded {files:?}");

    // The same export not cancelled does download: the absence above means something.
    pages::click_button(client, "Export JSON").await?;
    let path = downloaded(&browser.downloads(), &format!("credentials-{day}.json")).await?;
    let items: Vec<Value> = serde_json::from_slice(&std::fs::read(path)?)?;
    assert_eq!(items.len(), 1);
    browser.close().await?;
    Ok(())
}
