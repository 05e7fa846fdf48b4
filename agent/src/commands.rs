//! What the restart and stop commands do to the agent process.
//!
//! Restart replaces the process image with a fresh copy of the agent and the same arguments
//! (Unix `exec`), so the new process opens a new session under a new id. An update that
//! completed before the restart is carried across the `exec` in [`UPDATED_VERSION_ENV`], which
//! the new process reads at start-up and reports as its version. Stop is simply exit status 0.

use std::ffi::OsString;
use std::process::Command;

/// Environment variable carrying the version an update installed, across a restart.
/// It stays in the environment, so later restarts keep reporting the updated version.
pub const UPDATED_VERSION_ENV: &str = "TUNNEL_AGENT_UPDATED_VERSION";

/// The version to report: an installed update wins over `--report-version`, which wins over
/// the crate version.
pub fn reported_version(report_version: Option<String>) -> String {
    std::env::var(UPDATED_VERSION_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or(report_version)
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned())
}

/// The command that re-runs this agent with its original arguments.
pub fn restart_command(updated_version: Option<&str>) -> std::io::Result<Command> {
    let exe = std::env::current_exe()?;
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut cmd = Command::new(exe);
    cmd.args(args);
    if let Some(version) = updated_version {
        cmd.env(UPDATED_VERSION_ENV, version);
    }
    Ok(cmd)
}

/// Replaces this process with a fresh agent. Returns only on failure.
#[cfg(unix)]
pub fn restart(updated_version: Option<&str>) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    match restart_command(updated_version) {
        Ok(mut cmd) => cmd.exec(),
        Err(e) => e,
    }
}

/// Restart is not supported off Unix (the server is told so by the agent's refusal; this is
/// only reached if an agent was made to report another OS).
#[cfg(not(unix))]
pub fn restart(_updated_version: Option<&str>) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "restart is only supported on Unix",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_command_keeps_arguments_and_carries_the_update() {
        let cmd = restart_command(Some("3.4.1")).unwrap();
        assert_eq!(
            cmd.get_program(),
            std::env::current_exe().unwrap().as_os_str()
        );
        let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
        let expected: Vec<_> = std::env::args_os().skip(1).collect();
        assert_eq!(args, expected);
        let env: Vec<_> = cmd.get_envs().collect();
        assert_eq!(
            env,
            vec![(
                std::ffi::OsStr::new(UPDATED_VERSION_ENV),
                Some(std::ffi::OsStr::new("3.4.1"))
            )]
        );
        assert!(restart_command(None).unwrap().get_envs().next().is_none());
    }
}
