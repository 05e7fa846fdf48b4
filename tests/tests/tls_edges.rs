//! Flow 5: the backend module of a TLS edge: pick a backend, disable it, delete the module;
//! then the edge itself, its uri and metadata shown, deleted from its page, whose link then says
//! "Not found" (and offers no backend form); `n` on the list goes to its create form.

use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, lists, tls_edges};

#[tokio::test]
async fn pick_a_backend_disable_it_and_delete_the_module() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);

    tls_edges::open_list(client).await?;
    tls_edges::create_edge(client, "e2e edge", "app.example.com:443").await?;
    let (_, edges) = api.get("/edges/tls").await?;
    let edge_id = edges["tls_edges"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(edge_id.starts_with("edgtls_"), "{edges}");
    lists::open_row(client, &edge_id).await?;
    pages::wait_for_text(client, "No backend module").await?;

    tls_edges::create_backend(client, "e2e backend", "env=prod").await?;
    // The backend made here is the one the picker now offers to set.
    pages::eventually("the new backend chosen in the picker", || async {
        let chosen = client
            .execute(
                "const s = document.getElementById('field-backend_id');
                 return s && s.selectedOptions[0] ? s.selectedOptions[0].textContent : '';",
                vec![],
            )
            .await?;
        Ok(chosen
            .as_str()
            .is_some_and(|t| t.contains("e2e backend"))
            .then_some(()))
    })
    .await?;
    pages::click_button(client, "Replace backend module").await?;
    pages::wait_for_text(client, "Backend module set to").await?;
    let (status, module) = api.get(&format!("/edges/tls/{edge_id}/backend")).await?;
    assert_eq!(status, 200);
    assert_eq!(module["enabled"], true, "enabled by default");
    let backend_id = module["backend"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        module["backend"]["uri"]
            .as_str()
            .unwrap_or_default()
            .ends_with(&format!("/backends/tunnel_group/{backend_id}"))
    );
    pages::wait_for_text(client, "Enabled: applied to traffic").await?;

    tls_edges::set_enabled(client, false).await?;
    pages::click_button(client, "Replace backend module").await?;
    pages::wait_for_text(client, "Disabled: not applied to traffic").await?;
    browser.screenshot("tls-edge-backend").await?;
    let (_, module) = api.get(&format!("/edges/tls/{edge_id}/backend")).await?;
    assert_eq!(module["enabled"], false);
    assert_eq!(module["backend"]["id"], backend_id.as_str());

    tls_edges::delete_module(client).await?;
    pages::wait_for_text(client, "No backend module").await?;
    let (status, _) = api.get(&format!("/edges/tls/{edge_id}/backend")).await?;
    assert_eq!(status, 404);

    // The edge's own properties, then the edge deleted from its page.
    let (_, edge) = api.get(&format!("/edges/tls/{edge_id}")).await?;
    pages::wait_for_text(client, edge["uri"].as_str().unwrap()).await?;
    pages::wait_for_text(client, "Metadata").await?;
    pages::click_button(client, "Delete").await?;
    pages::wait_for_text(client, "Delete this TLS edge?").await?;
    pages::click_in_dialog(client, "Delete TLS edge").await?;
    pages::wait_for_text(client, &format!("TLS edge {edge_id} deleted.")).await?;
    let (status, _) = api.get(&format!("/edges/tls/{edge_id}")).await?;
    assert_eq!(status, 404);
    let (status, _) = api
        .get(&format!("/backends/tunnel_group/{backend_id}"))
        .await?;
    assert_eq!(status, 200, "the backend stays");

    // The deleted edge's page says it is not found, with the way back, not a load to retry.
    client
        .goto(&format!("{}/tls-edges/{edge_id}", stack.server.url()))
        .await?;
    pages::wait_for_text(client, "Not found").await?;
    pages::wait_for_text(client, "Back to TLS edges").await?;
    assert!(!pages::has_button(client, "Retry").await?);
    // Nor the form that makes a backend for the edge: there is no edge.
    assert!(!pages::has_button(client, "Create backend").await?);
    assert!(
        !pages::page_text(client)
            .await?
            .contains("New tunnel-group backend"),
        "a form of the edge's page under Not found"
    );

    // An id of only a space, typed in the address bar, is not found either (not "no API
    // operation" at the list's path).
    client
        .goto(&format!("{}/tls-edges/%20", stack.server.url()))
        .await?;
    pages::wait_for_text(client, "Back to TLS edges").await?;
    assert!(
        !pages::page_text(client).await?.contains("No API operation"),
        "asked at the list's path"
    );

    // `n` on the list, which creates in place, puts the focus in its form.
    tls_edges::open_list(client).await?;
    pages::blur(client).await?;
    pages::press(client, "n").await?;
    pages::eventually("the focus in the create form", || async {
        let focused = pages::focused(client).await?;
        Ok((focused.starts_with("input") || focused.starts_with("textarea")).then_some(()))
    })
    .await?;
    browser.close().await?;
    Ok(())
}
