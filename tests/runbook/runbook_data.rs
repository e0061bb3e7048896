//! Runbooks as data: the curated set loads and covers the findings that point at it, a user's
//! runbook directory adds to it, and every rule of the format is enforced when a file loads.

use gpufleet::commands::runbook::{list_command, show_command};
use gpufleet::diagnose::finding::runbook as ids;
use gpufleet::runbook::{Catalog, CatalogError, parse_runbook};

const MINIMAL: &str = r#"
id = "mine"
title = "My runbook"
summary = "Reads the GPUs."

[[steps]]
id = "read"
title = "Read"
why = "To know."
danger = "read"
command = ["nvidia-smi"]
"#;

fn invalid(text: &str) -> String {
    match parse_runbook(text, "test.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_curated_runbooks_load_and_cover_their_findings() {
    let catalog = Catalog::curated().expect("curated runbooks");
    let found: Vec<&str> = catalog
        .entries()
        .iter()
        .map(|e| e.runbook.id.as_str())
        .collect();
    // Every runbook a finding can point at exists.
    for id in [
        ids::POWER_LIMIT,
        ids::GPU_LOST,
        ids::DRIVER_LOST,
        ids::CUDA_MISMATCH,
        ids::THROTTLE,
        ids::ECC_REMAP,
    ] {
        assert!(found.contains(&id), "{id} missing from {found:?}");
    }
    for (label, id) in [
        ("power_throttle", "power-limit"),
        ("gpu_lost", "gpu-lost"),
        ("xid_79", "gpu-lost"),
        ("driver_lib_mismatch", "driver-lost"),
        ("driver_not_loaded", "driver-lost"),
        ("cuda_arch_mismatch", "cuda-mismatch"),
        ("driver_too_old", "cuda-mismatch"),
        ("thermal_throttle", "throttle"),
        ("row_remap_pending", "ecc-remap"),
        ("xid_48", "ecc-remap"),
        ("gsp_error", "gpu-lost"),
    ] {
        let books: Vec<&str> = catalog
            .for_label(label)
            .iter()
            .map(|b| b.id.as_str())
            .collect();
        assert!(books.contains(&id), "{label}: {books:?}");
    }
}

#[test]
fn unknown_keys_are_errors_with_a_line() {
    let typo = MINIMAL.replace("danger = \"read\"", "danger = \"read\"\ntiemout_s = 5");
    let err = invalid(&typo);
    assert!(err.contains("tiemout_s"), "{err}");
    assert!(err.contains("line"), "{err}");
    let bad_danger = MINIMAL.replace("\"read\"\ncommand", "\"harmless\"\ncommand");
    assert!(invalid(&bad_danger).contains("harmless"));
}

#[test]
fn placeholders_are_whole_arguments_naming_known_values() {
    let params = "\n[[params]]\nname = \"gpu\"\nkind = \"gpu\"\nhelp = \"x\"\n";
    let with = |command: &str| format!("{MINIMAL}{params}").replace("[\"nvidia-smi\"]", command);
    assert!(parse_runbook(&with(r#"["nvidia-smi", "-i", "{gpu}"]"#), "t").is_ok());
    let err = invalid(&with(r#"["nvidia-smi", "-i{gpu}"]"#));
    assert!(err.contains("whole argument"), "{err}");
    let err = invalid(&with(r#"["sh", "-c", "nvidia-smi -i {gpu}"]"#));
    assert!(err.contains("whole argument"), "{err}");
    let err = invalid(&with(r#"["nvidia-smi", "-i", "{watts}"]"#));
    assert!(err.contains("neither a parameter nor a fact"), "{err}");
    let err = invalid(&with(r#"["{gpu}"]"#));
    assert!(err.contains("literal"), "{err}");
}

#[test]
fn a_fact_is_usable_only_after_the_step_that_captures_it() {
    let text = format!(
        "{MINIMAL}\n[[steps]]\nid = \"use\"\ntitle = \"Use\"\nwhy = \"w\"\ndanger = \"read\"\n\
         command = [\"echo\", \"{{uid}}\"]\n\
         [[steps]]\nid = \"who\"\ntitle = \"Who\"\nwhy = \"w\"\ndanger = \"read\"\n\
         command = [\"id\", \"-u\"]\ncapture = [{{ fact = \"uid\", from = \"first_line\" }}]\n"
    );
    let err = invalid(&text);
    assert!(err.contains("steps[1] (use)"), "{err}");
}

#[test]
fn danger_levels_must_match_what_a_step_does() {
    let step = |extra: &str| {
        format!(
            "{MINIMAL}\n[[steps]]\nid = \"two\"\ntitle = \"T\"\nwhy = \"w\"\n\
             command = [\"reboot\"]\n{extra}\n"
        )
    };
    let err = invalid(&step("danger = \"change\"\nreboot = true"));
    assert!(err.contains("must be disruptive"), "{err}");
    let err = invalid(&step(
        "danger = \"disruptive\"\nreboot = true\nrerun = [\"nope\"]",
    ));
    assert!(err.contains("not an earlier step"), "{err}");
    let err = invalid(&step(
        "danger = \"read\"\n[steps.undo]\ntitle = \"u\"\ncommand = [\"x\"]",
    ));
    assert!(err.contains("only change steps"), "{err}");
    let err = invalid(&step(
        "danger = \"read\"\nonly_if = [{ step = \"later\", is = \"ok\" }]",
    ));
    assert!(err.contains("not an earlier step"), "{err}");
    let err = invalid(&step("danger = \"change\"\nask = true"));
    assert!(err.contains("ask is for read steps"), "{err}");
}

#[test]
fn watts_parameters_need_the_cards_range() {
    let text = format!("{MINIMAL}\n[[params]]\nname = \"watts\"\nkind = \"watts\"\nhelp = \"h\"\n");
    let err = invalid(&text);
    assert!(err.contains("min and max"), "{err}");
}

#[test]
fn user_runbooks_are_added_and_may_not_replace_curated_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.toml"), MINIMAL).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a runbook").unwrap();
    let catalog = Catalog::load(Some(dir.path())).expect("with user runbooks");
    assert!(catalog.get("mine").is_some());
    assert!(list_command(&catalog).contains("mine.toml"));

    std::fs::write(
        dir.path().join("zz.toml"),
        MINIMAL.replace("id = \"mine\"", "id = \"power-limit\""),
    )
    .unwrap();
    match Catalog::load(Some(dir.path())) {
        Err(CatalogError::Duplicate { id, .. }) => assert_eq!(id, "power-limit"),
        other => panic!("{other:?}"),
    }
    let missing = dir.path().join("nope");
    assert!(Catalog::load(Some(&missing)).is_ok());
}

#[test]
fn list_and_show_describe_every_step() {
    let catalog = Catalog::curated().unwrap();
    let list = list_command(&catalog);
    for id in [
        "power-limit",
        "gpu-lost",
        "driver-lost",
        "cuda-mismatch",
        "throttle",
        "ecc-remap",
    ] {
        assert!(list.contains(id), "{list}");
    }
    let show = show_command(&catalog, "power-limit").unwrap();
    assert!(
        show.contains("nvidia-smi -i '{gpu}' -pl '{watts}'"),
        "{show}"
    );
    assert!(show.contains("[change, needs root]"), "{show}");
    assert!(
        show.contains("undo: nvidia-smi -i '{gpu}' -pl '{enforced_w}'"),
        "{show}"
    );
    let show = show_command(&catalog, "gpu-lost").unwrap();
    assert!(show.contains("re-runs: smi"), "{show}");
    let err = show_command(&catalog, "nope").unwrap_err().to_string();
    assert!(err.contains("power-limit"), "{err}");
}
