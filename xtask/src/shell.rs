//! Running child processes with clear progress lines, from the workspace root.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The workspace root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// Prints a step header; returns a timer for `done`.
pub fn step(name: &str) -> (String, Instant) {
    println!("\n==> {name}");
    (name.to_owned(), Instant::now())
}

pub fn done((name, started): (String, Instant)) {
    println!("==> {name}: ok ({:.1}s)", started.elapsed().as_secs_f64());
}

/// A command run from the workspace root with the project's tool environment.
pub fn cmd(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args).current_dir(root());
    crate::tools::apply_env(&mut command);
    command
}

/// Runs to completion, failing with the command line when it exits non-zero.
pub fn exec(mut command: Command) -> Result<()> {
    let line = describe(&command);
    println!("    $ {line}");
    let status = command
        .status()
        .with_context(|| format!("could not start `{line}`"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// Runs and returns stdout, or `None` when the program is missing or fails.
pub fn output(mut command: Command) -> Option<String> {
    let out = command.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn describe(command: &Command) -> String {
    let mut parts = vec![command.get_program().to_string_lossy().into_owned()];
    parts.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}
