//! The ledger file: round trips, refuses a corrupt file instead of overwriting it, keeps a
//! release made by another process, and survives the writer being SIGKILLed mid-write (a child
//! process, this test binary re-run, saves in a loop and is killed at random moments).

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpufleet::cost::{LedgerBook, LedgerState, LedgerStore, Released, StoreError};

const CHILD_ENV: &str = "GPUFLEET_TEST_LEDGER_WRITER";
const HOSTS: u64 = 400;
/// The writer's name as the test harness knows it: its module, then the function.
const WRITER_TEST: &str = "cost_store::ledger_writer_child";

/// A book whose every number derives from `generation`, so a torn or mixed file cannot pass
/// [`check_whole`].
fn book(generation: u64) -> LedgerBook {
    let hosts: BTreeMap<String, LedgerState> = (0..HOSTS)
        .map(|i| {
            let state = LedgerState {
                billing_started_ms: Some(1_000 + i),
                accounted_to_ms: Some(generation),
                billed_ms: generation,
                busy_ms: generation * i,
                idle_ms: generation + i,
                parked_ms: i,
                unobserved_ms: 0,
                idle_run: None,
                released: None,
                ..LedgerState::default()
            };
            (format!("host-{i:04}"), state)
        })
        .collect();
    LedgerBook { version: 1, hosts }
}

/// The generation of a book written whole by [`book`].
fn check_whole(book: &LedgerBook) -> u64 {
    if book.hosts.is_empty() {
        return 0;
    }
    assert_eq!(book.hosts.len() as u64, HOSTS, "a partial book");
    let generation = book.hosts["host-0000"].billed_ms;
    assert_eq!(book, &self::book(generation), "a mixed book");
    generation
}

/// Not a test on its own: the writer the kill test starts and kills.
#[test]
fn ledger_writer_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = LedgerStore::at(path);
    let mut generation = check_whole(&store.load().unwrap());
    loop {
        generation += 1;
        store.save(&book(generation)).unwrap();
    }
}

#[test]
fn the_ledger_survives_the_writer_being_killed_mid_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.json");
    let store = LedgerStore::at(&path);
    let exe = std::env::current_exe().unwrap();
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut last_generation = 0;
    let mut generations_seen = 0;
    for _ in 0..40 {
        let mut child = Command::new(&exe)
            .args(["--exact", WRITER_TEST, "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // xorshift: a different moment each round, and each run.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(40 + seed % 160));
        child.kill().unwrap(); // SIGKILL: no destructor, no flush, no cleanup
        child.wait().unwrap();

        let loaded = store.load().expect("the ledger loads after every kill");
        let generation = check_whole(&loaded);
        assert!(generation >= last_generation, "went back in time");
        if generation > last_generation {
            generations_seen += 1;
        }
        last_generation = generation;
    }
    assert!(
        generations_seen >= 10,
        "the writer barely ran: {generations_seen}"
    );
    // Killed between creating and renaming its temporary file at least once: the kills did
    // land mid-write, and the ledger was whole anyway.
    let torn = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        })
        .count();
    assert!(torn > 0, "no kill landed mid-write");
}

#[test]
fn a_book_round_trips_and_a_missing_file_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = LedgerStore::at(dir.path().join("state/ledger.json"));
    assert_eq!(store.load().unwrap(), LedgerBook::default());
    store.save(&book(7)).unwrap();
    assert_eq!(store.load().unwrap(), book(7));
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("state"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".ledger.json.lock", "ledger.json"],
        "no temporary file left behind, only the lock file"
    );
}

#[test]
fn a_corrupt_file_is_reported_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.json");
    std::fs::write(&path, "{\"hosts\": {\"a\": ").unwrap();
    let store = LedgerStore::at(&path);
    assert!(matches!(store.load(), Err(StoreError::Corrupt { .. })));
    assert!(store.update(|_| ()).is_err());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"hosts\": {\"a\": "
    );
    std::fs::write(&path, "{\"version\": 99, \"hosts\": {}}").unwrap();
    assert!(matches!(store.load(), Err(StoreError::NewerFormat { .. })));
}

#[test]
fn saving_a_console_book_keeps_a_release_made_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let store = LedgerStore::at(dir.path().join("ledger.json"));
    let open = LedgerState {
        billing_started_ms: Some(0),
        accounted_to_ms: Some(100_000),
        billed_ms: 100_000,
        ..LedgerState::default()
    };
    let mut released = open.clone();
    released.released = Some(Released {
        at_ms: 90_000,
        action: "stop".into(),
        provider: "vast".into(),
    });
    // `gpufleet release` closed "a"; the console still holds it open (and never saw "b").
    let mut on_disk = LedgerBook::default();
    on_disk.hosts.insert("a".into(), released.clone());
    on_disk.hosts.insert("b".into(), open.clone());
    store.save(&on_disk).unwrap();
    let mut console = LedgerBook::default();
    console.hosts.insert("a".into(), open.clone());
    let merged = store.save_merging(&console).unwrap();
    assert_eq!(merged.hosts["a"], released);
    assert_eq!(merged.hosts["b"], open);
    assert_eq!(store.load().unwrap(), merged);
}
