//! Child processes for the benchmarks, each owned by a guard that kills its whole process group
//! on drop; loopback ports; resident memory from `/proc`.

use anyhow::{Context, Result, bail};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A free port on 127.0.0.1 (the listener is closed before the port is handed out).
pub fn free_addr() -> Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

/// A child killed, with its process group, on drop.
#[derive(Debug)]
pub struct Guard {
    child: Child,
    name: String,
}

impl Guard {
    /// Starts `command` in its own process group, so helpers it spawns (Chromium) die with it.
    pub fn spawn(name: &str, mut command: Command) -> Result<Guard> {
        command.process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        Ok(Guard {
            child,
            name: name.to_owned(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (bounded) until something accepts connections on `addr`.
    pub fn wait_for_port(&mut self, addr: SocketAddr) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("{} exited before listening: {status}", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!("{} did not listen on {addr} within 60 s", self.name)
    }

    /// Resident set size of the process, in KiB (`VmRSS` of `/proc/<pid>/status`).
    pub fn rss_kib(&self) -> Result<u64> {
        rss_kib(self.pid())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // A signal call on the group, never the `kill` command: procps' `kill -KILL -<pgid>`
            // reads the group as `-1` and would kill every process of the user.
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

/// `VmRSS` of `/proc/<pid>/status`, in KiB.
pub fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no VmRSS line")
}
