//! `tunnel-server` as a real process: the command with a clean environment, reading the address
//! it listens on from its log, and a minimal HTTP/1.1 client over a real socket.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The `tunnel-server` binary of this build, with none of the `TUNNEL_*` settings of the
/// environment the tests run in, plain logs at `info`.
pub fn server_bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tunnel-server"));
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .env_remove("TUNNEL_BOOTSTRAP_API_KEY")
        .env_remove("TUNNEL_DATABASE")
        .env_remove("TUNNEL_CORS_ORIGIN")
        .env_remove("TUNNEL_CONSOLE_DIR");
    cmd
}

/// `serve` on `database` (a `sqlite://` or `postgres://` URL) on a free loopback port, its output piped (the
/// log on stderr is where [`listen_addr`] finds the address).
pub fn serve_command(database: &str) -> Command {
    let mut cmd = server_bin();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--database", database])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `serve` on the run's test database (`db`: the PostgreSQL pass's, else the SQLite URL
/// `sqlite`), as node `node` (so a restart frees what its previous run held at once), with the
/// admin key `key` and the server key the database needs, plus `args`; started, with the
/// address it listens on. Several starts on the same arguments are the same server restarted.
pub fn serve_on(
    db: &tunnel_testkit::postgres::TestDatabase,
    sqlite: &str,
    node: &str,
    key: &str,
    args: &[&str],
) -> (Child, SocketAddr) {
    let mut command = serve_command(&db.url_or(sqlite));
    command
        .args(["--node-id", node])
        .args(args)
        .env("TUNNEL_BOOTSTRAP_API_KEY", key);
    // Every start gets the same key: a restarted server unseals what the first one stored.
    if let Some(server_key) = db.server_key() {
        command.env("TUNNEL_SERVER_KEY", server_key);
    }
    let mut child = command.spawn().unwrap();
    let addr = listen_addr(&mut child);
    (child, addr)
}

/// Reads the server's log (stderr, piped) until it says where it listens.
pub fn listen_addr(child: &mut Child) -> SocketAddr {
    let stderr = child.stderr.take().unwrap();
    let mut reader = BufReader::new(stderr);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "server exited before listening"
        );
        if let Some(rest) = line.split("listen=").nth(1) {
            let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
            // Keep draining the log so the server never blocks on a full pipe.
            std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
            return addr;
        }
    }
}

/// Reads the server's log (stderr, piped) until it has named the address of each listener in
/// `wanted`, each the words of its log line (`"tunnel-server listening"`, `"metrics
/// listening"`); the addresses in that order, and the rest of the log, read on by a thread
/// until the server exits (join it for the log, or let it drain).
pub fn listener_addrs(
    child: &mut Child,
    wanted: &[&str],
) -> (Vec<SocketAddr>, std::thread::JoinHandle<String>) {
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut found: Vec<Option<SocketAddr>> = vec![None; wanted.len()];
    let mut line = String::new();
    while found.iter().any(Option::is_none) {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "exited: {line}");
        let Some(at) = wanted.iter().position(|w| line.contains(w)) else {
            continue;
        };
        let addr = [" listen=", " addr="].iter().find_map(|field| {
            let rest = line.split(field).nth(1)?;
            rest.split_whitespace().next()?.parse().ok()
        });
        found[at] = addr;
    }
    let rest = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        rest
    });
    (found.into_iter().flatten().collect(), rest)
}

/// The WebSocket handshake of the agent channel over a raw socket: the socket (open after a
/// 101) and the head of the answer.
pub fn agent_handshake(addr: SocketAddr) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /agent/v1/connect HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\n\
         Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    .unwrap();
    // A 101 leaves the socket open: read the head only, up to the blank line.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
        head.push(byte[0]);
    }
    (stream, String::from_utf8(head).unwrap())
}

/// Sends `text` as a client's masked WebSocket text frame (under 64 KiB), as an agent sends its
/// hello after [`agent_handshake`].
pub fn send_text_frame(stream: &mut TcpStream, text: &str) {
    let payload = text.as_bytes();
    let mut frame = vec![0x81];
    match u8::try_from(payload.len()) {
        Ok(len) if len < 126 => frame.push(0x80 | len),
        _ => {
            frame.push(0x80 | 126);
            frame.extend(u16::try_from(payload.len()).unwrap().to_be_bytes());
        }
    }
    let mask = [7u8, 11, 13, 17];
    frame.extend(mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    stream.write_all(&frame).unwrap();
}

/// Kills the server and reaps it.
pub fn stop(mut child: Child) {
    child.kill().unwrap();
    let _ = child.wait();
}

/// A minimal HTTP/1.1 client over a real socket.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}
