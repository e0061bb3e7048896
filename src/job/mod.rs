//! The job, not only the GPU: what a training run's own log says (progress, loss and eval-loss
//! series, checkpoints, how it ended), whether it still learns, and how much VRAM a run needs
//! before renting a card for it. Pure: bytes and numbers in, plain data out; the wording of
//! findings lives with the rest of triage (`crate::diagnose::labels_job`). One exception:
//! `stop.rs` stops a job that stopped learning (`on_plateau = "stop-job"`) through a
//! [`crate::release::HostRunner`], writing the audit log.

pub mod clock;
pub mod fit;
pub mod formats;
pub mod gpus;
pub mod judge;
pub mod log;
pub mod segments;
pub mod series;
pub mod stop;

pub use formats::{PatternError, UserPattern};
pub use judge::{Diverged, JudgeOptions, Judgement, Overfit, Plateau};
pub use log::{Crash, Format, JobLog, JobOptions, JobReport, JobState, read_log};
pub use series::StepValue;
