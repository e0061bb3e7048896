//! The process list's and the job probe's command lines, kept while what they are built from
//! stays the same. Each is a few kilobytes of quoted shell (the probe's script and its scan), and
//! a link built them again for every run: twice a minute a host, about a hundredth of the
//! console's CPU at 200 hosts. A host's jobs and what the scan knows change seldom.

use std::cell::RefCell;
use std::sync::Arc;

use crate::remote::link::job_find::Scan;
use crate::remote::quote::CommandError;

/// Which command: each kind keeps its last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandKind {
    /// The process list alone.
    List = 0,
    /// The process list, then the probe of the jobs known.
    ListAndProbe = 1,
    /// The probe alone.
    Probe = 2,
}

/// What a probe is built from besides the link's own fixed settings (its nvidia-smi and log
/// pattern, the same for the link's life).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProbeKey {
    pids: Vec<u32>,
    container: bool,
    minors_known: bool,
    scanned: Vec<u32>,
}

impl ProbeKey {
    pub(crate) fn of(pids: &[u32], scan: &Scan<'_>) -> Self {
        Self {
            pids: pids.to_vec(),
            container: scan.container,
            minors_known: scan.minors_known,
            scanned: scan.scanned.to_vec(),
        }
    }
}

/// A command line and what it was built for (`None`: the process list, built from fixed words).
type Kept = (Option<ProbeKey>, Arc<str>);

/// The last command of each kind and what it was built for.
#[derive(Debug, Default)]
pub(crate) struct CommandMemo {
    kept: RefCell<[Option<Kept>; 3]>,
}

impl CommandMemo {
    /// The command of `kind` for `key`: the kept one when it was built for the same, else
    /// `build`'s (kept in its place). A command that could not be built is not kept.
    pub(crate) fn get(
        &self,
        kind: CommandKind,
        key: Option<ProbeKey>,
        build: impl FnOnce() -> Result<String, CommandError>,
    ) -> Result<Arc<str>, CommandError> {
        let mut kept = self.kept.borrow_mut();
        let slot = &mut kept[kind as usize];
        if let Some((built_for, command)) = slot.as_ref()
            && *built_for == key
        {
            return Ok(Arc::clone(command));
        }
        let command: Arc<str> = build()?.into();
        *slot = Some((key, Arc::clone(&command)));
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(scanned: &[u32]) -> Scan<'_> {
        Scan {
            nvidia_smi: "nvidia-smi",
            log_glob: None,
            container: false,
            minors_known: false,
            scanned,
        }
    }

    #[test]
    fn a_command_is_built_once_for_the_same_inputs_and_again_when_they_change() {
        let memo = CommandMemo::default();
        let mut built = 0;
        let mut get = |pids: &[u32], scanned: &[u32]| {
            let key = ProbeKey::of(pids, &scan(scanned));
            memo.get(CommandKind::Probe, Some(key), || {
                built += 1;
                Ok(format!("probe {pids:?} {scanned:?}"))
            })
            .expect("built")
        };
        let first = get(&[7, 42], &[]);
        let again = get(&[7, 42], &[]);
        assert!(
            Arc::ptr_eq(&first, &again),
            "the same inputs: the kept command"
        );
        assert_eq!(&*get(&[7], &[]), "probe [7] []", "another job set");
        assert_eq!(&*get(&[7], &[9]), "probe [7] [9]", "the scan learned more");
        assert_eq!(built, 3);
    }

    #[test]
    fn each_kind_keeps_its_own_and_a_failed_build_is_not_kept() {
        let memo = CommandMemo::default();
        let list = memo
            .get(CommandKind::List, None, || Ok("list".to_string()))
            .expect("list");
        let key = Some(ProbeKey::of(&[7], &scan(&[])));
        let failed = memo.get(CommandKind::ListAndProbe, key.clone(), || {
            Err(CommandError::Nul { argument: None })
        });
        assert!(failed.is_err());
        let both = memo
            .get(CommandKind::ListAndProbe, key, || {
                Ok("list+probe".to_string())
            })
            .expect("built after the failure");
        assert_eq!(&*both, "list+probe");
        let list_again = memo
            .get(CommandKind::List, None, || Ok("other".to_string()))
            .expect("list");
        assert!(Arc::ptr_eq(&list, &list_again));
    }
}
