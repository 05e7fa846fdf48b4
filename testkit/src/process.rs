//! Child processes owned by a guard that kills the whole process group on drop, loopback ports
//! to start them on, and the command line of the real server.
//!
//! Every guarded child is started in its own process group (`process_group(0)`), so helpers it
//! spawns (Chromium under chromedriver) die with it. The group is killed with a `killpg` signal
//! call, never by running the `kill` command: procps' `kill -KILL -<pgid>` reads the group as
//! `-1` and would kill every process of the user.

use anyhow::{Context, Result, bail};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A free address on 127.0.0.1 (the listener is closed before the address is handed out).
pub fn free_addr() -> Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

/// A free port on 127.0.0.1 (see [`free_addr`]).
pub fn free_port() -> Result<u16> {
    Ok(free_addr()?.port())
}

/// `tunnel-server serve` (the binary at `bin`) on `addr` with `database` (its URL), logging
/// only warnings, its stdout (the first start's banner) discarded: how the end-to-end tests and
/// the benchmarks start the real server. Callers add the console directory and the rest.
pub fn serve_command(bin: &std::path::Path, addr: SocketAddr, database: &str) -> Command {
    let mut command = Command::new(bin);
    command
        .args([
            "serve",
            "--listen",
            &addr.to_string(),
            "--database",
            database,
        ])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null());
    command
}

/// A child process killed, with its whole process group, on drop.
#[derive(Debug)]
pub struct ProcessGuard {
    child: Child,
    name: String,
}

impl ProcessGuard {
    /// Starts `command` in its own process group; `name` appears in every error about it.
    pub fn spawn(name: &str, mut command: Command) -> Result<ProcessGuard> {
        command.process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        Ok(ProcessGuard {
            child,
            name: name.to_owned(),
        })
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (at most `within`) until this process (or a helper of its group) accepts
    /// connections on `addr`; fails early when the process exits first.
    ///
    /// Another program listening there does not count: a free port handed to two starts at
    /// once, or taken between [`free_addr`] and the bind, let a test talk to another test's
    /// server, whose end then reset its requests. The program that lost the port exits, and
    /// its caller starts it again on another one.
    pub fn wait_for_port(&mut self, addr: SocketAddr, within: Duration) -> Result<()> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                // A port in the ephemeral range with nobody listening on it can be connected to
                // by the connecting socket itself (TCP simultaneous open, when the kernel picks
                // that very port as the local one): that is not the program listening. The likely
                // cause of an end-to-end test whose first request was refused.
                if stream.local_addr().ok() != Some(addr)
                    && group_listens_on(self.child.id(), addr).unwrap_or(true)
                {
                    return Ok(());
                }
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("{} exited before listening: {status}", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!(
            "{} did not listen on {addr} within {} s",
            self.name,
            within.as_secs()
        )
    }

    /// Waits up to `timeout` for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                bail!("{} did not exit within {timeout:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Asks the process to stop (SIGTERM), as a service manager does; [`ProcessGuard::wait_exit`]
    /// then sees it go.
    pub fn terminate(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }

    /// Kills the process and its group now (also done on drop).
    pub fn kill(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // The group id is the child's pid (process_group(0)).
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Whether a socket listening on `addr` belongs to a process of the group `pgid` (a guarded
/// child leads its own group). `None` when `/proc` cannot tell (not Linux, or hidden).
fn group_listens_on(pgid: u32, addr: SocketAddr) -> Option<bool> {
    use procfs::net::TcpState;
    use procfs::process::FDTarget;
    let table = match addr {
        SocketAddr::V4(_) => procfs::net::tcp(),
        SocketAddr::V6(_) => procfs::net::tcp6(),
    }
    .ok()?;
    let listeners: Vec<u64> = table
        .iter()
        .filter(|e| e.local_address == addr && e.state == TcpState::Listen)
        .map(|e| e.inode)
        .collect();
    let pgid = i32::try_from(pgid).ok()?;
    let owned = procfs::process::all_processes()
        .ok()?
        .flatten()
        .filter(|p| p.stat().is_ok_and(|s| s.pgrp == pgid))
        .filter_map(|p| p.fd().ok())
        .flatten()
        .flatten()
        .any(|fd| matches!(fd.target, FDTarget::Socket(inode) if listeners.contains(&inode)));
    Some(owned)
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_dies_with_the_guard() {
        // A shell that starts a grandchild in the same group, then waits.
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 60 & echo $! ; wait"]);
        command.stdout(std::process::Stdio::piped());
        let mut guard = ProcessGuard::spawn("sh", command).unwrap();
        let mut line = String::new();
        let stdout = guard.child().stdout.take().unwrap();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(guard.is_running());
        drop(guard);
        // The grandchild was killed with the group (it may linger as a zombie of init, so poll).
        let deadline = Instant::now() + Duration::from_secs(10);
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| !s.contains(") Z"))
                .unwrap_or(false)
        };
        while alive(grandchild) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(grandchild), "grandchild {grandchild} survived");
    }

    #[test]
    fn another_program_on_the_port_is_not_the_process_listening() {
        // This test process holds the port; the guarded child never listens, so the wait ends
        // when the child exits, not when a connection to the port succeeds.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut command = Command::new("sleep");
        command.arg("1");
        let mut guard = ProcessGuard::spawn("sleep", command).unwrap();
        let err = guard
            .wait_for_port(addr, Duration::from_secs(10))
            .unwrap_err();
        assert!(err.to_string().contains("exited before listening"), "{err}");
        // A child that does listen there is found.
        let free = free_addr().unwrap();
        let mut command = Command::new("python3");
        command.args([
            "-c",
            &format!(
                "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',{})); s.listen(); time.sleep(30)",
                free.port()
            ),
        ]);
        let mut guard = ProcessGuard::spawn("python3", command).unwrap();
        guard.wait_for_port(free, Duration::from_secs(10)).unwrap();
        drop(listener);
    }

    #[test]
    fn waiting_for_a_port_fails_when_the_process_exits() {
        let addr = free_addr().unwrap();
        let mut guard = ProcessGuard::spawn("true", Command::new("true")).unwrap();
        let err = guard
            .wait_for_port(addr, Duration::from_secs(10))
            .unwrap_err();
        assert!(err.to_string().contains("exited before listening"), "{err}");
    }
}
