//! What a key means; only the keymap turns key codes into these.

/// A user intent, independent of which key produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Open the selected host.
    Open,
    /// Close the overlay, clear the filter or go back to the fleet.
    Back,
    /// Move focus to the next pane.
    NextPane,
    ToggleHelp,
    CycleSort,
    StartFilter,
    /// A character typed into the filter or a secret prompt.
    TextInput(char),
    TextBackspace,
    FilterAccept,
    FilterCancel,
    /// Answer the open prompt: accept the host key, or submit the typed secret.
    PromptAccept,
    /// Decline the open prompt (the default for anything but an explicit yes).
    PromptDecline,
}
