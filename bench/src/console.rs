//! The console the server serves during a run: a copy of the release build with two pages
//! added, the static baseline page (the same first 100 credential rows as plain HTML with the
//! console's stylesheet) and a blank page the browser opens first to reach the origin.

use crate::server::Server;
use anyhow::{Context, Result};
use std::path::Path;

/// Rows of the static page, and the rows the console start section waits for (the console's
/// credential page size).
pub const ROWS: usize = 100;

/// Copies the files of `from` (not its folders) into a fresh `to`.
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// The static baseline of the console size and console start sections: the same first 100
/// rows the console shows, as plain HTML with the console's stylesheet, served by the same
/// server from the console dir. Also writes `bench-blank.html`, the page the browser opens
/// first to reach the origin.
pub async fn write_static_page(server: &Server, console: &Path) -> Result<Vec<u8>> {
    let page = server
        .conn()
        .json(&server.get(&format!("/credentials?limit={ROWS}")))
        .await?;
    let rows = page["credentials"]
        .as_array()
        .context("no credentials in the list")?;
    let css = std::fs::read_dir(console)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".css"))
        .unwrap_or_default();
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Credentials</title>\
         <link rel=\"stylesheet\" href=\"/{css}\"></head><body><main><h1>Credentials</h1>\
         <div class=\"table-wrap\"><table><thead><tr><th>ID</th><th>Description</th><th>ACL</th>\
         <th>Owner</th><th>Created</th></tr></thead><tbody>\n"
    );
    for c in rows {
        let s = |k: &str| html_escape(c[k].as_str().unwrap_or_default());
        let acl = c["acl"].as_array().map_or(0, Vec::len);
        html.push_str(&format!(
            "<tr><td><a class=\"mono\" href=\"/credentials/{id}\">{id}</a></td><td>{}</td><td>{acl} rule(s)</td><td class=\"mono\">{}</td><td>{}</td></tr>\n",
            s("description"),
            s("owner_id"),
            s("created_at"),
            id = s("id"),
        ));
    }
    html.push_str("</tbody></table></div></main></body></html>\n");
    std::fs::write(console.join("bench-static.html"), &html)?;
    std::fs::write(
        console.join("bench-blank.html"),
        "<!doctype html><title>blank</title>",
    )?;
    Ok(html.into_bytes())
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
