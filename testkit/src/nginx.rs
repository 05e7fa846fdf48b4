//! nginx (Debian's) as the load balancer in front of the nodes of a cluster: the one
//! configuration `cargo xtask run --nodes` and the benchmarks both write, so what is measured is
//! what a developer runs.
//!
//! Round-robin over the nodes with passive health checks (a node that refuses a connection is
//! left out for 5 s, and the request goes to the next one); WebSocket upgrades passed on (the
//! agent channel, held open for an hour of silence at most); other requests reuse kept-alive
//! connections to the nodes, since a new connection per request costs about a fifth of the
//! throughput of cheap requests (`cargo xtask bench`, section cluster). Every path nginx
//! writes is inside the prefix directory: no root needed, nothing in /etc or /var.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;

/// Debian's nginx.
pub const NGINX: &str = "/usr/sbin/nginx";

/// The nginx.conf of a balancer on `listen` in front of `nodes`, every path inside `prefix`;
/// `written_by` names the program in its first line; `access_log` keeps one line per request
/// in `prefix/access.log`, with the node that served it.
pub fn config(
    prefix: &Path,
    listen: &str,
    nodes: &[SocketAddr],
    access_log: bool,
    written_by: &str,
) -> String {
    let dir = prefix.display();
    let servers = nodes.iter().fold(String::new(), |mut servers, addr| {
        let _ = writeln!(
            servers,
            "        server {addr} max_fails=1 fail_timeout=5s;"
        );
        servers
    });
    // As root the workers would switch to `nobody`, which cannot write the prefix directory;
    // as another user nginx ignores the directive (with a warning), so it is left out.
    let user = if nix::unistd::geteuid().is_root() {
        "user root;\n"
    } else {
        ""
    };
    let log = if access_log {
        format!(
            "# $upstream_addr: the node (or nodes, when one failed) that served the request.
    log_format nodes '$remote_addr [$time_local] \"$request\" $status $body_bytes_sent '
                     'upstream=$upstream_addr upstream_status=$upstream_status ${{request_time}}s';
    access_log {dir}/access.log nodes;"
        )
    } else {
        "access_log off;".to_owned()
    };
    format!(
        r#"# Written by {written_by}; deleted when nginx stops.
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log notice;

events {{
    worker_connections 1024;
}}

http {{
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    {log}

    # A WebSocket upgrade is passed on as one; any other request keeps its upstream connection
    # open for the next (an empty Connection header).
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      '';
    }}

    upstream tunnel_nodes {{
{servers}        keepalive 32;
    }}

    server {{
        listen {listen};

        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        # A node that refuses or times out: the request goes to the next one.
        proxy_next_upstream error timeout;

        location / {{
            proxy_pass http://tunnel_nodes;
        }}

        # The agent channel: a WebSocket held open for as long as the agent runs.
        location = /agent/v1/connect {{
            proxy_pass http://tunnel_nodes;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            proxy_buffering off;
        }}
    }}
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_balances_every_node_keeps_connections_and_upgrades_websockets() {
        let nodes: Vec<SocketAddr> = vec![
            "127.0.0.1:4001".parse().unwrap(),
            "127.0.0.1:4002".parse().unwrap(),
        ];
        let conf = config(
            Path::new("/tmp/x"),
            "127.0.0.1:8080",
            &nodes,
            true,
            "a test",
        );
        assert!(conf.starts_with("# Written by a test;"));
        assert!(conf.contains("server 127.0.0.1:4001 max_fails=1 fail_timeout=5s;"));
        assert!(conf.contains("server 127.0.0.1:4002 max_fails=1 fail_timeout=5s;"));
        assert!(conf.contains("keepalive 32;"));
        assert!(conf.contains("listen 127.0.0.1:8080;"));
        assert!(conf.contains("proxy_set_header Connection $connection_upgrade;"));
        assert!(conf.contains("access_log /tmp/x/access.log nodes;"));
        assert!(conf.contains("${request_time}s"));
        assert_eq!(
            conf.contains("\nuser root;\n"),
            nix::unistd::geteuid().is_root()
        );
        let quiet = config(
            Path::new("/tmp/x"),
            "127.0.0.1:8080",
            &nodes,
            false,
            "a test",
        );
        assert!(quiet.contains("access_log off;") && !quiet.contains("log_format"));
    }
}
