//! Flow 4: SSH certificate authorities: ed25519, ECDSA P-384 and RSA 2048 created in the console;
//! the public keys shown parse with `ssh-keygen -l`; edit and delete.

use std::process::Command;
use tunnel_e2e::harness::Stack;
use tunnel_e2e::pages::{self, ssh_cas};

/// `ssh-keygen -l` of one public key line: "<bits> <fingerprint> <comment> (<TYPE>)".
fn fingerprint(public_key: &str) -> anyhow::Result<String> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("ca.pub");
    std::fs::write(&path, format!("{public_key}\n"))?;
    let out = Command::new("ssh-keygen")
        .arg("-l")
        .arg("-f")
        .arg(&path)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "ssh-keygen refused {public_key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

#[tokio::test]
async fn create_three_key_types_edit_and_delete() -> anyhow::Result<()> {
    let (stack, browser) = Stack::signed_in(&[]).await?;
    let (api, client) = (&stack.api, &browser.client);

    let cases = [
        (
            "e2e ed25519",
            "Ed25519 (recommended)",
            None,
            "256",
            "(ED25519)",
            "Ed25519",
        ),
        (
            "e2e ecdsa",
            "ECDSA",
            Some(("Elliptic curve", "P-384")),
            "384",
            "(ECDSA)",
            "ECDSA P-384",
        ),
        (
            "e2e rsa",
            "RSA",
            Some(("Key size", "2048 bits")),
            "2048",
            "(RSA)",
            "RSA 2048",
        ),
    ];
    for (description, key_type, second, bits, kind, shown) in cases {
        let public_key = ssh_cas::create(client, description, key_type, second).await?;
        let print = fingerprint(&public_key)?;
        assert!(
            print.starts_with(&format!("{bits} ")) && print.trim_end().ends_with(kind),
            "{description}: {print}"
        );
        // The page names the key as ssh-keygen does: its curve or size, not only its type.
        pages::wait_for_text(client, shown).await?;
    }
    browser.screenshot("ssh-ca-detail").await?;

    // Edit the last one (its detail page is open).
    pages::fill(client, "Description", "e2e rsa (renamed)").await?;
    pages::click_button(client, "Save changes").await?;
    pages::wait_for_text(client, "SSH CA saved.").await?;
    // "Save changes" is disabled once saved: the focus goes back to the form, not to nothing.
    pages::wait_for_focus(client, "input#field-description").await?;
    let (_, list) = api.get("/ssh_certificate_authorities").await?;
    let newest = &list["ssh_certificate_authorities"][0];
    assert_eq!(newest["description"], "e2e rsa (renamed)");
    assert_eq!(newest["key_type"], "rsa");

    ssh_cas::delete(client).await?;
    pages::wait_for_text(client, "deleted").await?;
    ssh_cas::open_list(client).await?;
    pages::wait_for_text(client, "e2e ecdsa").await?;
    pages::wait_for_text(client, "ECDSA P-384").await?;
    browser.screenshot("ssh-cas-list").await?;
    let (_, list) = api.get("/ssh_certificate_authorities").await?;
    let descriptions: Vec<_> = list["ssh_certificate_authorities"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|ca| ca["description"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(descriptions, ["e2e ecdsa", "e2e ed25519"]);
    browser.close().await?;
    Ok(())
}
