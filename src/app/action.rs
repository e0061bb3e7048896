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
    FilterInput(char),
    FilterBackspace,
    FilterAccept,
    FilterCancel,
}
