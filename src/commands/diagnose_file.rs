//! `gpufleet diagnose`: a pasted or saved text (nvidia-smi output, kernel lines, a program's
//! error, a training log) read and explained, as text or JSON, in the interface's language.

use std::process::ExitCode;

use rust_i18n::t;

/// `gpufleet diagnose [FILE|-] [--json]`: exit 0 healthy, 1 findings, 2 bad input, 3 nothing
/// recognised (no fault and no sign of a working GPU either). The input
/// is read as a stream (bounded memory, at most `crate::diagnose::input::MAX_INPUT_BYTES`); what was
/// not read in full is said on stderr and in the report.
pub fn run(file: Option<&std::path::Path>, json: bool) -> ExitCode {
    let limits = crate::diagnose::ReadLimits::default();
    let report = match file {
        Some(path) if path != std::path::Path::new("-") => std::fs::File::open(path)
            .map_err(|e| format!("{}: {e}", path.display()))
            .and_then(|f| {
                crate::diagnose::diagnose_reader(f, &limits)
                    .map_err(|e| format!("{}: {e}", path.display()))
            }),
        _ => {
            // On a terminal the read would wait with nothing said: say what it waits for.
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!("gpufleet diagnose: {}", t!("diagnose_text.paste_then_eof"));
            }
            crate::diagnose::diagnose_reader(std::io::stdin().lock(), &limits)
                .map_err(|e| format!("{}: {e}", t!("diagnose_text.stdin")))
        }
    };
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            eprintln!("gpufleet diagnose: {e}");
            return ExitCode::from(crate::diagnose::EXIT_BAD_INPUT);
        }
    };
    let notes = report.notes(&limits);
    for note in &notes {
        eprintln!("gpufleet diagnose: {note}");
    }
    let diagnosis = report.diagnosis();
    if json {
        crate::outln!("{}", crate::diagnose::render_json(&diagnosis, &notes));
    } else {
        crate::out!("{}", crate::diagnose::render_text(&diagnosis));
        for note in &notes {
            crate::outln!("{}", t!("diagnose_text.note", note = note));
        }
    }
    ExitCode::from(diagnosis.exit_code())
}
