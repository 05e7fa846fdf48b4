//! `cargo xtask fuzz --seconds N`: every cargo-fuzz target of `fuzz/` (libFuzzer, the crate kept
//! out of the workspace) for N seconds each, on the stable toolchain (`--sanitizer none`: no
//! `-Z` flag is needed then; Rust's own checks still panic on a broken invariant). Each target
//! reads its committed seeds in `fuzz/corpus/<target>` and writes what it finds new to
//! `target/fuzz/corpus/<target>`, so the checkout stays as it is; a crash stops the command and
//! names its input, saved under `target/fuzz/artifacts/<target>/`.

use crate::shell::{cmd, done, exec, output, root, step, target_dir};
use crate::tools::ensure_cargo_fuzz;
use anyhow::{Context, Result, bail};

pub fn run(seconds: u64) -> Result<()> {
    ensure_cargo_fuzz()?;
    let fuzz_dir = root().join("fuzz");
    let manifest = fuzz_dir.join("Cargo.toml");
    let manifest = manifest.to_string_lossy().into_owned();
    let mut list = cmd("cargo", &["fuzz", "list", "--fuzz-dir"]);
    list.arg(&fuzz_dir);
    let targets = output(list).context("`cargo fuzz list` failed")?;
    let targets: Vec<&str> = targets
        .lines()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    if targets.is_empty() {
        bail!("no fuzz target in {manifest}");
    }
    let work = target_dir("fuzz");
    for target in targets {
        let timer = step(&format!("fuzz: {target} for {seconds} s"));
        let corpus = work.join("corpus").join(target);
        let artifacts = work.join("artifacts").join(target);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let mut run = cmd(
            "cargo",
            &["fuzz", "run", "-O", "--sanitizer", "none", "--fuzz-dir"],
        );
        run.arg(&fuzz_dir)
            .arg(target)
            .arg(&corpus)
            .arg(fuzz_dir.join("corpus").join(target))
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()));
        exec(run).with_context(|| {
            format!(
                "fuzz target {target} failed; its input is in {}",
                artifacts.display()
            )
        })?;
        done(timer);
    }
    Ok(())
}
