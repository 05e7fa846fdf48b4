//! The report: `BENCHMARKS.md` (one table per section: figure, measured, baseline, ratio, with a
//! `database` column after the figure when the section measured on SQLite and PostgreSQL) and
//! the raw numbers as JSON next to the scratch data (`target/bench/results.json`).

use crate::server::Kind;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;

/// One line of a section's table.
#[derive(Debug, Clone)]
pub struct Row {
    pub figure: String,
    pub measured: String,
    pub baseline: String,
    /// measured / baseline, as a number (formatted by the writer).
    pub ratio: Option<f64>,
    /// The database the figure was measured on, in sections that measure on more than one.
    pub database: Option<String>,
}

impl Row {
    pub fn new(
        figure: impl Into<String>,
        measured: impl Into<String>,
        baseline: impl Into<String>,
        ratio: Option<f64>,
    ) -> Row {
        Row {
            figure: figure.into(),
            measured: measured.into(),
            baseline: baseline.into(),
            ratio: ratio.filter(|r| r.is_finite()),
            database: None,
        }
    }

    /// The row of a figure measured on `kind`.
    pub fn on(mut self, kind: Kind) -> Row {
        self.database = Some(kind.label().to_owned());
        self
    }
}

/// One numbered section of the report.
#[derive(Debug, Clone)]
pub struct Section {
    pub number: u8,
    pub title: String,
    /// What was measured and how, and what the baseline is.
    pub method: String,
    pub rows: Vec<Row>,
    /// Anything worth knowing about the figures (or why a section could not be measured).
    pub notes: Vec<String>,
    pub raw: serde_json::Value,
    pub seconds: f64,
}

impl Section {
    pub fn new(number: u8, title: &str, method: &str) -> Section {
        Section {
            number,
            title: title.to_owned(),
            method: method.to_owned(),
            rows: Vec::new(),
            notes: Vec::new(),
            raw: serde_json::json!({}),
            seconds: 0.0,
        }
    }
}

/// The machine and the run, for the report's header.
#[derive(Debug, Clone)]
pub struct Header {
    pub date: String,
    pub machine: Vec<(String, String)>,
    pub commands: Vec<String>,
    pub total_seconds: f64,
    pub json_path: String,
}

pub fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

pub fn kib(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

pub fn rps(v: f64) -> String {
    format!("{v:.0} req/s")
}

fn ratio(r: Option<f64>) -> String {
    match r {
        None => "–".to_owned(),
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 10.0 => format!("{r:.1}×"),
        Some(r) => format!("{r:.2}×"),
    }
}

pub fn write(
    path: &Path,
    json_path: &Path,
    header: &Header,
    sections: &[Section],
    closing: &str,
) -> Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "Written by `cargo xtask bench` on {} (total {:.0} s). Benchmarks measure; they never \
         pass or fail. Each figure comes with its baseline, measured in the same run on the same \
         machine, and the ratio measured / baseline. Raw numbers: `{}`.\n",
        header.date, header.total_seconds, header.json_path
    );
    let _ = writeln!(md, "## Machine\n");
    for (k, v) in &header.machine {
        let _ = writeln!(md, "- {k}: {v}");
    }
    let _ = writeln!(md, "\n## Commands\n\n```sh");
    for c in &header.commands {
        let _ = writeln!(md, "{c}");
    }
    let _ = writeln!(md, "```\n");
    for s in sections {
        let _ = writeln!(md, "## {}. {}\n\n{}\n", s.number, s.title, s.method);
        // A `database` column only in sections measured on more than one database.
        let by_database = s.rows.iter().any(|r| r.database.is_some());
        if !s.rows.is_empty() {
            let (head, rule) = if by_database {
                ("| figure | database ", "|---|---")
            } else {
                ("| figure ", "|---")
            };
            let _ = writeln!(
                md,
                "{head}| measured | baseline | ratio |\n{rule}|---:|---:|---:|"
            );
            for r in &s.rows {
                let database = match (by_database, r.database.as_deref()) {
                    (true, d) => format!(" {} |", d.unwrap_or("–")),
                    (false, _) => String::new(),
                };
                let _ = writeln!(
                    md,
                    "| {} |{database} {} | {} | {} |",
                    r.figure,
                    r.measured,
                    r.baseline,
                    ratio(r.ratio)
                );
            }
            md.push('\n');
        }
        for n in &s.notes {
            let _ = writeln!(md, "- {n}");
        }
        let _ = writeln!(md, "\n_Section time: {:.0} s._\n", s.seconds);
    }
    if !closing.is_empty() {
        let _ = writeln!(md, "{closing}");
    }
    std::fs::write(path, md).with_context(|| format!("writing {}", path.display()))?;

    let raw = serde_json::json!({
        "date": header.date,
        "machine": header.machine.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
        "commands": header.commands,
        "total_seconds": header.total_seconds,
        "sections": sections.iter().map(|s| serde_json::json!({
            "number": s.number, "title": s.title, "seconds": s.seconds, "raw": s.raw,
            "rows": s.rows.iter().map(|r| serde_json::json!({
                "figure": r.figure, "database": r.database, "measured": r.measured, "baseline": r.baseline, "ratio": r.ratio,
            })).collect::<Vec<_>>(),
            "notes": s.notes,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(json_path, serde_json::to_string_pretty(&raw)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    Ok(())
}

/// The hand-written closing note (improvements made) is kept across runs: everything after
/// the `<!-- closing -->` marker of the previous report is copied into the new one.
pub fn closing_note(report: &Path) -> String {
    std::fs::read_to_string(report)
        .ok()
        .and_then(|old| {
            old.find("<!-- closing -->")
                .map(|at| old[at..].trim_end().to_owned())
        })
        .unwrap_or_default()
}
