//! Installs, idempotently and only when missing, the tools the build and tests need
//! (`docs/toolchain.md`): the wasm32 target, trunk, wasm-bindgen-cli at the version of the
//! lock file, wasm-opt from npm binaryen, Debian's Chromium and chromedriver, npm axe-core (the
//! accessibility engine of the end-to-end tests), npm lighthouse (`cargo xtask lighthouse`
//! only), PyPI schemathesis in a virtual environment (the generated API requests of
//! `fuzz_api`), Debian's PostgreSQL server, and Debian's nginx (the load balancer of `cargo xtask run
//! --nodes`). A tool counts as present only when `--version` answers with the pinned version
//! (an npm library: when node reads the pinned version from its `package.json`; PostgreSQL:
//! when its server programs are there, any major version; nginx: when `nginx -v` answers).
//!
//! Everything comes from the package registries (crates.io, npm, PyPI, Debian); trunk itself runs
//! offline (`Trunk.toml`) so it never downloads a tool of its own.

use crate::shell::{
    axe_core_dir, binaryen_dir, cmd, done, exec, lighthouse_dir, output, root, step, tool_cache,
};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use tunnel_testkit::postgres::Binaries;

pub const TRUNK_VERSION: &str = "0.21.14";
pub const BINARYEN_VERSION: &str = "132.0.0";
/// The axe-core the end-to-end accessibility test injects (`tests/src/axe.rs`).
pub const AXE_CORE_VERSION: &str = "4.14.1";
/// Lighthouse 12.8 is the last release that runs on Node 20 (13 needs Node 22.19).
pub const LIGHTHOUSE_VERSION: &str = "12.8.2";
/// cargo-fuzz, which builds and runs the fuzz targets of `fuzz/` (`cargo xtask fuzz`).
pub const CARGO_FUZZ_VERSION: &str = "0.13.2";
/// The schemathesis (PyPI) that sends generated requests to the API (`fuzz_api`).
pub const SCHEMATHESIS_VERSION: &str = "4.32.5";
/// The variable naming `axe.min.js` to the end-to-end tests (`tests/src/axe.rs` reads it).
pub const AXE_CORE_ENV: &str = "TUNNEL_AXE_CORE";
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub use tunnel_testkit::nginx::NGINX;

/// The wasm-bindgen version pinned by Cargo.lock; the CLI must match it exactly.
pub fn locked_wasm_bindgen_version() -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).context("reading Cargo.lock")?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\""
            && let Some(version) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
        {
            return Ok(version.trim_end_matches('"').to_owned());
        }
    }
    bail!("Cargo.lock has no wasm-bindgen package")
}

fn version_of(program: &str, arg: &str) -> Option<String> {
    output(cmd(program, &[arg])).map(|s| s.trim().to_owned())
}

/// Installs what the console build needs.
pub fn ensure_build_tools() -> Result<()> {
    let timer = step("tools: wasm32 target, trunk, wasm-bindgen-cli, wasm-opt");
    let targets = output(cmd("rustup", &["target", "list", "--installed"])).unwrap_or_default();
    if !targets
        .lines()
        .any(|t| t.trim() == "wasm32-unknown-unknown")
    {
        exec(cmd("rustup", &["target", "add", "wasm32-unknown-unknown"]))?;
    }

    let trunk = version_of("trunk", "--version").unwrap_or_default();
    if trunk != format!("trunk {TRUNK_VERSION}") {
        println!(
            "    trunk {TRUNK_VERSION} missing (found `{trunk}`): installing (takes a few minutes)"
        );
        // trunk's own work is a small part of a console build (wasm-opt's is the most), so it
        // is built for a short install rather than a fast program: its manifest asks for fat
        // LTO in one codegen unit, which kept a cold install at ten and a half minutes on two
        // cores; without LTO, at opt-level 1 and without its default features (TLS for
        // downloads and the update check, both unused offline) it takes six and a half, and
        // builds the same files in the same time (docs/toolchain.md).
        let mut install = cmd(
            "cargo",
            &[
                "install",
                "trunk",
                "--version",
                TRUNK_VERSION,
                "--locked",
                "--no-default-features",
            ],
        );
        install
            .env("CARGO_PROFILE_RELEASE_LTO", "off")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1");
        exec(install)?;
    }

    let wanted = locked_wasm_bindgen_version()?;
    let found = version_of("wasm-bindgen", "--version").unwrap_or_default();
    if found != format!("wasm-bindgen {wanted}") {
        println!("    wasm-bindgen-cli {wanted} missing (found `{found}`): installing");
        // Without --locked: a locked dependency of the CLI can be newer than the registry mirror.
        // Without its default features: they add TLS to the test runner's HTTP client, which
        // only talks to chromedriver on loopback; leaving them out saves 45 s of a cold install.
        exec(cmd(
            "cargo",
            &[
                "install",
                "wasm-bindgen-cli",
                "--version",
                &wanted,
                "--force",
                "--no-default-features",
            ],
        ))?;
    }

    let wasm_opt = binaryen_dir().join("node_modules/.bin/wasm-opt");
    let found = version_of(&wasm_opt.to_string_lossy(), "--version").unwrap_or_default();
    if !found.contains(&format!(
        "version {}",
        BINARYEN_VERSION.split('.').next().unwrap_or_default()
    )) {
        println!("    wasm-opt (npm binaryen {BINARYEN_VERSION}) missing: installing");
        npm_install(&binaryen_dir(), "binaryen", BINARYEN_VERSION)?;
    }
    done(timer);
    Ok(())
}

/// The version of the npm package `name` installed under `dir`, as node reads it from the
/// package's own `package.json` (`None` when it is not there).
fn npm_package_version(dir: &Path, name: &str) -> Option<String> {
    let manifest = dir.join("node_modules").join(name).join("package.json");
    // `node -e CODE ARG`: the path is `process.argv[1]`, never pasted into the code.
    let code = "process.stdout.write(require(process.argv[1]).version)";
    output(cmd("node", &["-e", code, &manifest.to_string_lossy()])).map(|v| v.trim().to_owned())
}

/// `npm install --prefix dir name@version` (the directory made first).
fn npm_install(dir: &Path, name: &str, version: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let package = format!("{name}@{version}");
    exec(cmd(
        "npm",
        &[
            "install",
            "--prefix",
            &dir.to_string_lossy(),
            "--no-audit",
            "--no-fund",
            &package,
        ],
    ))
}

/// `npm install` of `name@version` under `dir` unless exactly that version is there.
fn ensure_npm_package(dir: &Path, name: &str, version: &str) -> Result<()> {
    let found = npm_package_version(dir, name);
    if found.as_deref() == Some(version) {
        return Ok(());
    }
    println!(
        "    npm {name} {version} missing (found {}): installing",
        found.as_deref().unwrap_or("none")
    );
    npm_install(dir, name, version)?;
    let found = npm_package_version(dir, name);
    if found.as_deref() != Some(version) {
        bail!("npm installed {name} {found:?}, not {version}");
    }
    Ok(())
}

/// Installs npm `axe-core` (pinned) for the end-to-end accessibility test; returns the path of
/// its `axe.min.js`, which `cargo xtask test` gives the tests in [`AXE_CORE_ENV`].
pub fn ensure_axe_core() -> Result<PathBuf> {
    let timer = step("tools: axe-core (npm)");
    let dir = axe_core_dir();
    ensure_npm_package(&dir, "axe-core", AXE_CORE_VERSION)?;
    let script = dir.join("node_modules/axe-core/axe.min.js");
    if !script.is_file() {
        bail!("{} is missing after installing axe-core", script.display());
    }
    println!("    axe-core {AXE_CORE_VERSION}: {}", script.display());
    done(timer);
    Ok(script)
}

/// Installs crates.io `cargo-fuzz` (pinned) for `cargo xtask fuzz`.
pub fn ensure_cargo_fuzz() -> Result<()> {
    let timer = step("tools: cargo-fuzz");
    let wanted = format!("cargo-fuzz {CARGO_FUZZ_VERSION}");
    if version_of("cargo-fuzz", "--version").as_deref() != Some(wanted.as_str()) {
        exec(cmd(
            "cargo",
            &[
                "install",
                "cargo-fuzz",
                "--version",
                CARGO_FUZZ_VERSION,
                "--locked",
            ],
        ))?;
    }
    let found = version_of("cargo-fuzz", "--version").context("cargo-fuzz does not start")?;
    if found != wanted {
        bail!("cargo installed `{found}`, not {wanted}");
    }
    println!("    {found}");
    done(timer);
    Ok(())
}

/// Installs PyPI `schemathesis` (pinned) into a virtual environment of the tool cache, creating
/// it with the machine's `python3` (and Debian's `python3-venv` when `venv` is missing); returns
/// the path of its `st` program.
pub fn ensure_schemathesis() -> Result<PathBuf> {
    let timer = step("tools: schemathesis (PyPI)");
    let venv = tool_cache("schemathesis");
    let st = venv.join("bin/st");
    let wanted = format!("st, version {SCHEMATHESIS_VERSION}");
    let installed = || version_of(&st.to_string_lossy(), "--version");
    if installed().as_deref().map(str::trim) != Some(wanted.as_str()) {
        let venv_text = venv.to_string_lossy().into_owned();
        if !venv.join("bin/pip").is_file() {
            let created = exec(cmd("python3", &["-m", "venv", "--clear", &venv_text]));
            if created.is_err() {
                println!("    python3 has no venv module; installing python3-venv with apt-get");
                apt_install(&["python3-venv"])?;
                exec(cmd("python3", &["-m", "venv", "--clear", &venv_text]))?;
            }
        }
        let pip = venv.join("bin/pip");
        let package = format!("schemathesis=={SCHEMATHESIS_VERSION}");
        exec(cmd(
            &pip.to_string_lossy(),
            &[
                "install",
                "--quiet",
                "--disable-pip-version-check",
                &package,
            ],
        ))?;
    }
    let found = installed().context("schemathesis does not start")?;
    if found.trim() != wanted {
        bail!(
            "pip installed `{}`, not schemathesis {SCHEMATHESIS_VERSION}",
            found.trim()
        );
    }
    println!("    {}: {}", found.trim(), st.display());
    done(timer);
    Ok(st)
}

/// Installs npm `lighthouse` (pinned; with it the `puppeteer-core` that drives Chromium) for
/// `cargo xtask lighthouse`; returns the directory it is installed under.
pub fn ensure_lighthouse() -> Result<PathBuf> {
    let timer = step("tools: lighthouse (npm)");
    let dir = lighthouse_dir();
    ensure_npm_package(&dir, "lighthouse", LIGHTHOUSE_VERSION)?;
    println!("    lighthouse {LIGHTHOUSE_VERSION} in {}", dir.display());
    done(timer);
    Ok(dir)
}

/// Installs Debian's Chromium and chromedriver for the browser tests.
pub fn ensure_browser() -> Result<()> {
    let timer = step("tools: chromium and chromedriver (Debian)");
    let chromium = version_of(CHROMIUM, "--version");
    let driver = version_of(CHROMEDRIVER, "--version");
    if chromium.is_none() || driver.is_none() {
        println!("    installing chromium and chromium-driver with apt-get");
        // With the recommended packages (fonts among them), as docs/toolchain.md installs it.
        apt_install(&["chromium", "chromium-driver"])?;
    }
    let chromium = version_of(CHROMIUM, "--version").context("chromium does not start")?;
    let driver = version_of(CHROMEDRIVER, "--version").context("chromedriver does not start")?;
    println!(
        "    {chromium}; {}",
        driver.lines().next().unwrap_or_default()
    );
    done(timer);
    Ok(())
}

/// Installs Debian's PostgreSQL server (`postgresql`) for the PostgreSQL pass of the tests and
/// the benchmarks' PostgreSQL figures, which start clusters of their own from its programs
/// (`tunnel_testkit::postgres`).
pub fn ensure_postgres() -> Result<()> {
    let timer = step("tools: PostgreSQL server (Debian)");
    if Binaries::find().is_err() {
        println!("    installing postgresql with apt-get");
        apt_install(&["postgresql"])?;
    }
    let binaries = Binaries::find()?;
    println!(
        "    {} in {}",
        binaries.server_version()?,
        binaries.dir.display()
    );
    done(timer);
    Ok(())
}

/// Installs Debian's nginx (`nginx`) for `cargo xtask run --nodes`, which runs it as a plain
/// foreground process of its own (never the system service) in front of the nodes.
pub fn ensure_nginx() -> Result<()> {
    let timer = step("tools: nginx (Debian)");
    if nginx_version().is_none() {
        println!("    installing nginx with apt-get");
        apt_install(&["nginx"])?;
    }
    let version = nginx_version().context("nginx does not start")?;
    println!("    {version}");
    done(timer);
    Ok(())
}

/// `nginx -v`, which answers on stderr (`nginx version: nginx/1.22.1`).
fn nginx_version() -> Option<String> {
    let out = cmd(NGINX, &["-v"]).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stderr).trim().to_owned())
}

/// `apt-get update`, then `apt-get install -y` of `packages`, through sudo unless root.
fn apt_install(packages: &[&str]) -> Result<()> {
    let sudo = !is_root();
    let apt = |args: &[&str]| {
        if sudo {
            // As an argument of sudo: sudo resets the environment it is given.
            let mut full = vec!["DEBIAN_FRONTEND=noninteractive", "apt-get"];
            full.extend_from_slice(args);
            cmd("sudo", &full)
        } else {
            let mut c = cmd("apt-get", args);
            c.env("DEBIAN_FRONTEND", "noninteractive");
            c
        }
    };
    exec(apt(&["update"]))?;
    let mut install = vec!["install", "-y"];
    install.extend_from_slice(packages);
    exec(apt(&install))
}

pub fn is_root() -> bool {
    output(cmd("id", &["-u"])).is_some_and(|u| u.trim() == "0")
}
