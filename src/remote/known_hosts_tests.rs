//! known_hosts lines read and matched as OpenSSH does; every verdict is one `ssh-keygen -F`
//! agrees with on the same file.

use super::*;

// Real public keys (from `ssh-keygen`), their fingerprints as `ssh-keygen -lf` printed them.
const ED25519: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIIUpBwYODpUF1i6Z8Df3w2MnbI5ihHQz1DvLzp1mBtKI";
const ED25519_FP: &str = "SHA256:ohEXDRaYsuOMDkQY5STT/OBOfwTmFETIYINmCXR+Nkk";
const OTHER_ED25519: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIIlwZ+wSp1FJdxitpnYjCicTEbrBDrHhqN2tBnwAAoT/";
const OTHER_FP: &str = "SHA256:bDekEORjCzsFAd0Om6+diBkmgEqydRbg2LwVHZO2q9g";
const ECDSA: &str = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBP7e92N8425wqrwZzFaVtRpz/9Jtol6Qc9HtR89aVWy2KQtIuJ4YJwBA3TG/HfU9NS/akmQl7Xii73VmJQNKg7k=";
// `ssh-keygen -H` of `[gpu.example]:2222 ssh-ed25519 OTHER_ED25519`.
const HASHED: &str = "|1|a3T6h3/oSZ6Mpk6iAHrU0GF+u6c=|0BF1DE26nNDahcAp5zCKJ5RBfEo=";

fn blob(b64: &str) -> Vec<u8> {
    base64_decode(b64).expect("b64")
}

/// A known_hosts file with `text`, loaded.
fn file_with(dir: &Path, text: &str) -> KnownHostsFile {
    let path = dir.join("known_hosts");
    std::fs::write(&path, text).expect("write");
    KnownHostsFile::load(&[path]).expect("load")
}

fn changed(result: Result<Verdict, RemoteError>) -> String {
    match result {
        Err(e @ RemoteError::HostKeyChanged { .. }) => e.to_string(),
        other => panic!("not a changed key: {other:?}"),
    }
}

#[test]
fn parses_lines_and_markers() {
    let e = parse_line(0, 3, &format!("[h]:2222 ssh-ed25519 {ED25519} c")).expect("entry");
    assert_eq!(e.key_type, "ssh-ed25519");
    assert_eq!(blob_key_type(&e.blob).as_deref(), Some("ssh-ed25519"));
    assert_eq!(fingerprint(&e.blob), ED25519_FP);
    assert_eq!(e.hosts, HostField::Patterns("[h]:2222".into()));
    assert!(!e.revoked);
    let r = parse_line(0, 1, &format!("@revoked * ssh-ed25519 {ED25519}")).expect("entry");
    assert!(r.revoked);
    assert_eq!(parse_line(0, 1, "# comment"), None);
    let ca = parse_line(0, 1, &format!("@cert-authority * ssh-ed25519 {ED25519}")).expect("ca");
    assert!(ca.cert_authority && !ca.revoked);
    assert_eq!(
        parse_line(0, 1, &format!("@other * ssh-ed25519 {ED25519}")),
        None
    );
    assert_eq!(parse_line(0, 1, "h ssh-ed25519 not*base64"), None);
    assert_eq!(
        parse_line(0, 1, &format!("|2|x|y ssh-ed25519 {ED25519}")),
        None
    );
}

#[test]
fn known_as_brackets_other_ports_and_lowercases() {
    assert_eq!(known_as("h.example", 22), "h.example");
    assert_eq!(known_as("127.0.0.1", 2222), "[127.0.0.1]:2222");
    assert_eq!(known_as("GPU.Example", 2222), "[gpu.example]:2222");
}

#[test]
fn a_wildcard_port_line_with_another_key_is_a_changed_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = file_with(
        dir.path(),
        &format!("# pinned\n[127.0.0.1]:* ssh-ed25519 {OTHER_ED25519}\n"),
    );
    let text = changed(kh.check("[127.0.0.1]:2222", &blob(ED25519)));
    assert!(
        text.contains(OTHER_FP) && text.contains(ED25519_FP),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} line 2",
            dir.path().join("known_hosts").display()
        )),
        "{text}"
    );
    assert!(
        text.contains("edit") && !text.contains("ssh-keygen -R"),
        "{text}"
    );
    // The pinned key itself is trusted on any port but 22 (filed as the bare address).
    assert_eq!(
        kh.check("[127.0.0.1]:40022", &blob(OTHER_ED25519)).ok(),
        Some(Verdict::Trusted)
    );
    assert!(matches!(
        kh.check("127.0.0.1", &blob(ED25519)),
        Ok(Verdict::Unknown { .. })
    ));
}

#[test]
fn domain_patterns_and_negations() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = file_with(
        dir.path(),
        &format!("*.EXAMPLE,!bad.example ssh-ed25519 {OTHER_ED25519}\n"),
    );
    let presented = blob(ED25519);
    changed(kh.check("a.example", &presented));
    changed(kh.check("x.a.example", &presented));
    changed(kh.check("A.Example", &presented));
    // Negated: the line says nothing about bad.example, so its key is merely unknown.
    assert!(matches!(
        kh.check("bad.example", &presented),
        Ok(Verdict::Unknown { .. })
    ));
    assert!(matches!(
        kh.check("example", &presented),
        Ok(Verdict::Unknown { .. })
    ));
    assert!(matches!(
        kh.check("a.example.org", &presented),
        Ok(Verdict::Unknown { .. })
    ));
}

#[test]
fn an_exact_line_suggests_ssh_keygen_r() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = file_with(
        dir.path(),
        &format!("[h]:2222 ssh-ed25519 {OTHER_ED25519}\n"),
    );
    let text = changed(kh.check("[H]:2222", &blob(ED25519)));
    assert!(text.contains("ssh-keygen -R '[h]:2222'"), "{text}");
    assert!(text.contains("line 1"), "{text}");
}

#[test]
fn hashed_names_match_the_lowercased_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = file_with(
        dir.path(),
        &format!("{HASHED} ssh-ed25519 {OTHER_ED25519}\n"),
    );
    assert_eq!(
        kh.check("[gpu.example]:2222", &blob(OTHER_ED25519)).ok(),
        Some(Verdict::Trusted)
    );
    assert_eq!(
        kh.check("[GPU.example]:2222", &blob(OTHER_ED25519)).ok(),
        Some(Verdict::Trusted)
    );
    changed(kh.check("[gpu.example]:2222", &blob(ED25519)));
    assert!(matches!(
        kh.check("[gpu.example]:2223", &blob(ED25519)),
        Ok(Verdict::Unknown { .. })
    ));
}

#[test]
fn other_key_types_and_revocations() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = file_with(
        dir.path(),
        &format!(
            "*.example ecdsa-sha2-nistp256 {ECDSA}\n@revoked nothing-matches ssh-ed25519 {OTHER_ED25519}\n"
        ),
    );
    // Only an ecdsa key on file: an ed25519 key is new, with the known type listed.
    match kh.check("a.example", &blob(ED25519)) {
        Ok(Verdict::Unknown { prompt, .. }) => {
            assert_eq!(prompt.other_types_known, vec!["ecdsa-sha2-nistp256"]);
            assert_eq!(prompt.known_as, "a.example");
        }
        other => panic!("{other:?}"),
    }
    // A revoked key is refused whatever host its line names, and the line is named.
    match kh.check("a.example", &blob(OTHER_ED25519)) {
        Err(e @ RemoteError::HostKeyRevoked { .. }) => {
            assert!(e.to_string().contains("line 2"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn several_files_are_read_and_the_first_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = dir.path().join("missing_yet");
    let second = dir.path().join("second");
    std::fs::write(&second, format!("\n\nh ssh-ed25519 {OTHER_ED25519}\n")).expect("write");
    let kh = KnownHostsFile::load(&[first.clone(), second.clone()]).expect("load");
    assert_eq!(kh.path(), first.as_path());
    let text = changed(kh.check("h", &blob(ED25519)));
    assert!(
        text.contains(&format!("{} line 3", second.display())),
        "{text}"
    );
    assert!(KnownHostsFile::load(&[]).is_err());
}

#[test]
fn append_writes_an_openssh_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sub/known_hosts");
    let blob = blob(ED25519);
    append(&path, "[h]:2222", &blob, false).expect("append");
    std::fs::write(
        &path,
        std::fs::read_to_string(&path).expect("read").trim_end(),
    )
    .expect("strip newline");
    append(&path, "other", &blob, false).expect("append");
    let text = std::fs::read_to_string(&path).expect("read");
    assert_eq!(
        text,
        format!("[h]:2222 ssh-ed25519 {ED25519}\nother ssh-ed25519 {ED25519}\n")
    );
    let file = KnownHostsFile::load(&[path]).expect("load");
    assert_eq!(file.entries.len(), 2);
}

#[test]
fn a_host_known_only_through_a_ca_is_refused_and_a_plain_key_still_wins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = file_with(
        dir.path(),
        &format!("@cert-authority *.example ssh-ed25519 {OTHER_ED25519}\n"),
    );
    match file.check("gpu.example", &blob(ED25519)) {
        Err(e @ RemoteError::HostKeyCertOnly { .. }) => {
            assert!(e.to_string().contains("line 1"), "{e}");
        }
        other => panic!("not refused: {other:?}"),
    }
    // A host the CA line does not cover is merely unknown.
    assert!(matches!(
        file.check("other.org", &blob(ED25519)),
        Ok(Verdict::Unknown { .. })
    ));
    // The host's own key on file is trusted whatever the CA line says.
    let file = file_with(
        dir.path(),
        &format!(
            "@cert-authority *.example ssh-ed25519 {OTHER_ED25519}\ngpu.example ssh-ed25519 {ED25519}\n"
        ),
    );
    assert_eq!(
        file.check("gpu.example", &blob(ED25519)).expect("trusted"),
        Verdict::Trusted
    );
}

#[test]
fn hash_known_hosts_files_a_hashed_name_that_matches_only_the_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("known_hosts");
    append(&path, "[gpu.example]:2222", &blob(ED25519), true).expect("append");
    append(&path, "[gpu.example]:2222", &blob(ED25519), true).expect("append");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(
        text.starts_with("|1|") && !text.contains("gpu.example"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_ne!(lines[0], lines[1], "a fresh salt each time");
    let file = KnownHostsFile::load(&[path]).expect("load");
    assert_eq!(
        file.check("[gpu.example]:2222", &blob(ED25519))
            .expect("trusted"),
        Verdict::Trusted
    );
    assert!(matches!(
        file.check("[gpu.example]:22", &blob(ED25519)),
        Ok(Verdict::Unknown { .. })
    ));
}
