//! The app: events in, a pure `update` over the model, commands out.

pub mod action;
pub mod alert_bridge;
pub mod alert_log;
pub mod alerts_view;
pub mod audit_view;
pub mod badges;
pub mod check_pane;
pub mod check_run;
pub mod command;
pub mod cursor;
pub mod dead_man_bridge;
pub mod event;
pub mod keymap;
pub mod model;
pub mod ops;
pub mod ops_bridge;
pub mod pane_common;
pub mod panel;
pub mod pointer;
pub mod prompt;
pub mod prompt_bridge;
pub mod release_bridge;
pub mod release_dialog;
pub mod release_state;
pub mod runbook_bridge;
pub mod runbook_pane;
pub mod runbook_run;
pub mod runbook_watcher;
pub mod runtime;
pub mod screen;
pub mod stop_job_bridge;
pub mod terminal;

pub mod unwatched;
pub mod update;

pub use command::Command;
pub use event::Event;
pub use model::{Model, ModelOptions, View};
pub use update::update;
