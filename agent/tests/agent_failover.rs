//! Several `--server` addresses (the nodes of one installation): the real agent skips a node it
//! cannot reach, and when its node dies it opens a new session through the next one.

mod support;

use axum::http::StatusCode;
use support::{Agent, Fault, Proxy, Server, fast_timings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_first_server_is_skipped_for_the_next() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    // A port nothing listens on: the first node is down from the start.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dead_url = format!("http://{dead}");
    let mut agent = Agent::spawn_to(&dead_url, &token, &["--server", &server.url()]);
    let session = agent.session().await;
    let lines = agent.lines_so_far();
    let connects: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("connecting to"))
        .collect();
    assert!(
        connects[0].contains(&dead.to_string()),
        "the first node is tried first: {lines:?}"
    );
    assert!(
        connects
            .iter()
            .any(|l| l.contains(&server.addr.to_string())),
        "{lines:?}"
    );
    assert_eq!(server.session_ids(&key).await, vec![session.clone()]);
    server.stop_agent(&mut agent, &session, &key).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_its_node_dies_the_agent_comes_back_through_another() {
    let (server, key, token) = Server::with_credential("3.4.1", fast_timings()).await;
    // Two nodes in front of one server: what matters here is the agent's side.
    let (node_a, node_b) = (
        Proxy::start(server.addr).await,
        Proxy::start(server.addr).await,
    );
    let mut agent = Agent::spawn_to(&node_a.url(), &token, &["--server", &node_b.url()]);
    let first = agent.session().await;

    node_a.fault(Fault::Down);
    let second = agent.session().await;
    assert_ne!(first, second);
    let lines = agent.lines_so_far();
    let last_connect = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("connecting to"))
        .unwrap();
    assert!(
        last_connect.contains(&node_b.addr.to_string()),
        "the new session came through the other node: {lines:?}"
    );
    server
        .wait_session_status(&first, &key, StatusCode::NOT_FOUND)
        .await;
    assert_eq!(server.session_ids(&key).await, vec![second.clone()]);

    // Node B dies too while A is still down: the agent keeps trying both, and stays up.
    node_b.fault(Fault::Down);
    agent
        .wait_line("the loss", |l| {
            l.starts_with("connection lost").then_some(())
        })
        .await;
    assert!(agent.running());
    server
        .wait_session_status(&second, &key, StatusCode::NOT_FOUND)
        .await;
}
