use std::os::unix::fs::PermissionsExt;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_new_file_and_its_new_directories_are_private() {
    let root = tempfile::tempdir().unwrap();
    let file = StateFile::at(root.path().join("a/b/ledger.json"));
    file.lock().unwrap().replace(b"{}\n").unwrap();
    assert_eq!(std::fs::read(file.path()).unwrap(), b"{}\n");
    assert_eq!(mode(file.path()), 0o600);
    assert_eq!(mode(&root.path().join("a")), 0o700);
    assert_eq!(mode(&root.path().join("a/b")), 0o700);
    assert_eq!(mode(&root.path().join("a/b/.ledger.json.lock")), 0o600);
}

#[test]
fn an_existing_open_file_and_its_directory_are_tightened_when_written() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("state");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ledger = dir.join("ledger.json");
    let audit = dir.join("audit.jsonl");
    for path in [&ledger, &audit] {
        std::fs::write(path, b"old\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    StateFile::at(&ledger)
        .lock()
        .unwrap()
        .replace(b"new\n")
        .unwrap();
    StateFile::at(&audit).append(b"line\n").unwrap();
    assert_eq!(mode(&ledger), 0o600);
    assert_eq!(mode(&audit), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(std::fs::read(&audit).unwrap(), b"old\nline\n");
}

#[test]
fn a_sticky_shared_directory_is_left_as_it_is() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    StateFile::at(dir.join("ledger.json"))
        .lock()
        .unwrap()
        .replace(b"x")
        .unwrap();
    assert_eq!(mode(&dir), 0o1777);
    assert_eq!(mode(&dir.join("ledger.json")), 0o600);
}

#[test]
fn a_held_lock_keeps_a_second_writer_out_and_says_so() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("ledger.json");
    let first = StateFile::at(&path);
    let held = first.lock().unwrap();
    let second = StateFile::at(&path);
    let err = second.lock_within(Duration::from_millis(50)).unwrap_err();
    assert!(matches!(err, StateFileError::Busy { .. }), "{err}");
    assert!(err.to_string().contains(".ledger.json.lock"), "{err}");
    drop(held);
    second.lock_within(Duration::from_millis(50)).unwrap();
}

#[test]
fn concurrent_read_modify_writes_lose_nothing() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("counter");
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let file = StateFile::at(&path);
                for _ in 0..25 {
                    let locked = file.lock().unwrap();
                    let n: u32 = locked
                        .read()
                        .unwrap()
                        .map_or(0, |b| String::from_utf8(b).unwrap().parse().unwrap());
                    locked.replace((n + 1).to_string().as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "200");
    let leftovers: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn create_new_never_overwrites() {
    let root = tempfile::tempdir().unwrap();
    let file = StateFile::at(root.path().join("r/report.json"));
    file.create_new(b"one").unwrap();
    assert!(file.create_new(b"two").is_err());
    assert_eq!(std::fs::read(file.path()).unwrap(), b"one");
    assert_eq!(mode(file.path()), 0o600);
}

#[cfg(unix)]
#[test]
fn tightening_leaves_a_shared_sticky_folder_and_its_files_alone() {
    let dir = tempfile::tempdir().expect("temp");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("dir");
    let file = shared.join("someone-elses.txt");
    std::fs::write(&file, "x").expect("file");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    assert_eq!(tighten_tree(&shared), 0);
    assert_eq!(mode(&shared), 0o1777);
    assert_eq!(mode(&file), 0o644);
    // The same folder without the sticky bit is gpufleet's to tighten.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(tighten_tree(&shared), 2);
    assert_eq!(mode(&shared), 0o700);
    assert_eq!(mode(&file), 0o600);
}
