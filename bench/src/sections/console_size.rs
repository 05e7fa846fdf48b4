//! Console size: every file of the release console build, raw and gzip-compressed, against
//! the static page of the same 100 rows.

use super::{console_start, number};
use crate::report::{Row, Section, kib};
use anyhow::Result;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write as _;
use std::path::Path;

pub const NAME: &str = "console_size";

/// The sizes of `dist/` and of the static baseline page.
pub async fn measure(dist: &Path, static_page: &[u8]) -> Result<Section> {
    let method = format!(
        "The release build of the console (`trunk build --release`: `wasm-release` profile, \
         wasm-opt `-Oz`), each file raw and gzip-compressed (flate2, level 9), and as the \
         server sends it to a browser accepting brotli: the `.br` file the build wrote beside \
         it (brotli quality 11, `cargo xtask`'s `precompress`). Baseline: the \
         static HTML page of the same 100 credential rows used in section {} (what a page \
         without any application costs).",
        number(console_start::NAME)
    );
    let mut s = Section::new(number(NAME), "Console size", &method);
    let (mut wasm, mut wasm_gz, mut js_gz, mut css_gz, mut total_gz, mut total) =
        (0, 0, 0, 0, 0, 0);
    // What the server sends a browser accepting brotli: each file's `.br` from the build when
    // there is one, else the file itself (the server would gzip it on the fly, but the build
    // leaves none uncompressed that compresses).
    let (mut sent_br, mut wasm_br) = (0, 0);
    for entry in std::fs::read_dir(dist)? {
        let path = entry?.path();
        let variant = path.extension().is_some_and(|e| e == "br" || e == "gz");
        if !path.is_file() || variant {
            continue;
        }
        let bytes = std::fs::read(&path)?;
        let mut br_path = path.as_os_str().to_owned();
        br_path.push(".br");
        let br = std::fs::metadata(&br_path).map_or(bytes.len() as u64, |m| m.len());
        sent_br += br;
        let gz = gzip_len(&bytes)?;
        total += bytes.len() as u64;
        total_gz += gz;
        match path.extension().and_then(|e| e.to_str()) {
            Some("wasm") => {
                wasm += bytes.len() as u64;
                wasm_gz += gz;
                wasm_br += br;
            }
            Some("js") => js_gz += gz,
            Some("css") => css_gz += gz,
            _ => {}
        }
    }
    let page_gz = gzip_len(static_page)?;
    let page = static_page.len() as u64;
    let r = |a: u64, b: u64| Some(a as f64 / b as f64);
    let base = format!("{} (static page, gzip)", kib(page_gz));
    s.rows = vec![
        Row::new(
            "WASM, raw",
            kib(wasm),
            format!("{} (static page, raw)", kib(page)),
            r(wasm, page),
        ),
        Row::new(
            "WASM, gzip",
            kib(wasm_gz),
            base.clone(),
            r(wasm_gz, page_gz),
        ),
        Row::new("JS glue, gzip", kib(js_gz), base.clone(), r(js_gz, page_gz)),
        Row::new("CSS, gzip", kib(css_gz), base.clone(), r(css_gz, page_gz)),
        Row::new(
            "total (every file of dist/), gzip",
            kib(total_gz),
            base.clone(),
            r(total_gz, page_gz),
        ),
        Row::new(
            "WASM, as sent (the build's brotli)",
            kib(wasm_br),
            base.clone(),
            r(wasm_br, page_gz),
        ),
        Row::new(
            "first visit, as sent (every file, the build's brotli)",
            kib(sent_br),
            base,
            r(sent_br, page_gz),
        ),
        Row::new(
            "total, raw",
            kib(total),
            format!("{} (static page, raw)", kib(page)),
            r(total, page),
        ),
    ];
    s.raw = serde_json::json!({
        "wasm_bytes": wasm, "wasm_gzip": wasm_gz, "js_gzip": js_gz, "css_gzip": css_gz,
        "total_gzip": total_gz, "total_bytes": total, "wasm_brotli": wasm_br,
        "first_visit_brotli": sent_br,
        "static_page_bytes": page, "static_page_gzip": page_gz,
    });
    Ok(s)
}

fn gzip_len(bytes: &[u8]) -> Result<u64> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len() as u64)
}
