//! Running child processes with clear progress lines, from the workspace root, with the
//! project's tool environment (`apply_env`). `tools` depends on this module, never the reverse.

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

/// Where cargo puts the binaries of `profile` (`debug`, `release`), honouring
/// `CARGO_TARGET_DIR`.
pub fn target_dir(profile: &str) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
        .join(profile)
}

/// `~/.cache/tunnel-console/<name>`: where an npm package of the toolchain is installed, a
/// cache outside the clone (so a fresh clone or `cargo clean` does not download it again).
pub fn tool_cache(name: &str) -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    home.join(".cache/tunnel-console").join(name)
}

/// Where the npm-installed wasm-opt lives: a cache outside the clone, reused when present.
pub fn binaryen_dir() -> PathBuf {
    tool_cache("binaryen")
}

/// Where npm `axe-core` lives (the accessibility engine the end-to-end tests inject).
pub fn axe_core_dir() -> PathBuf {
    tool_cache("axe-core")
}

/// Where npm `lighthouse` lives (`cargo xtask lighthouse` only).
pub fn lighthouse_dir() -> PathBuf {
    tool_cache("lighthouse")
}

fn cargo_bin() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    cargo_home.join("bin")
}

/// PATH for children: npm's wasm-opt and cargo's bin first, then the inherited PATH.
fn apply_env(command: &mut Command) {
    let mut paths = vec![binaryen_dir().join("node_modules/.bin"), cargo_bin()];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    if let Ok(joined) = std::env::join_paths(paths) {
        command.env("PATH", joined);
    }
    // Otherwise trunk asks crates.io for its latest version on every run.
    command.env("TRUNK_SKIP_VERSION_CHECK", "true");
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
    apply_env(&mut command);
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

/// Becomes `command` (Unix `exec`): for a program that runs until it is stopped, so that a
/// signal sent to this process (Ctrl-C, `kill`) reaches the program itself instead of leaving it
/// running without its parent. Returns only when the program could not be started.
pub fn exec_replace(mut command: Command) -> Result<()> {
    use std::os::unix::process::CommandExt as _;
    let line = describe(&command);
    println!("    $ {line}");
    let error = command.exec();
    Err(error).with_context(|| format!("could not start `{line}`"))
}

/// Passed and failed tests, summed over the `test result:` lines of cargo's test runners.
#[derive(Debug, Default, Clone, Copy)]
pub struct TestCount {
    pub passed: u64,
    pub failed: u64,
}

impl TestCount {
    /// Adds the counts of one `test result: ok. 12 passed; 0 failed; …` line.
    fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            return;
        };
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(label), Some(number)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = number.parse::<u64>() else {
                continue;
            };
            match label {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                _ => {}
            }
        }
    }

    pub fn add(&mut self, other: TestCount) {
        self.passed += other.passed;
        self.failed += other.failed;
    }
}

/// Like `exec`, echoing the child's stdout line by line while counting its test results.
pub fn exec_tests(mut command: Command) -> Result<TestCount> {
    use std::io::{BufRead, BufReader, Write};
    let line = describe(&command);
    println!("    $ {line}");
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start `{line}`"))?;
    let mut count = TestCount::default();
    if let Some(stdout) = child.stdout.take() {
        for text in BufReader::new(stdout).lines() {
            let text = text.context("reading test output")?;
            count.add_line(&text);
            println!("{text}");
        }
    }
    let _ = std::io::stdout().flush();
    let status = child.wait()?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(count)
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

#[cfg(test)]
mod tests {
    use super::TestCount;

    #[test]
    fn counts_cargo_test_result_lines() {
        let mut count = TestCount::default();
        count.add_line("test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s");
        count.add_line(
            "test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 filtered out; finished in 1.79s",
        );
        count.add_line("running 5 tests");
        assert_eq!((count.passed, count.failed), (15, 2));
    }
}
