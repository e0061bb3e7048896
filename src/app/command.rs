//! What `update` asks the runtime to do; the runtime performs it and reports back as events.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Restore the terminal and exit.
    Quit,
}
