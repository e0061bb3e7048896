//! Cursor arithmetic shared by the views and panels.

/// `cursor + delta` within `0..len`.
pub fn step(cursor: usize, delta: i64, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    (cursor as i64)
        .saturating_add(delta)
        .clamp(0, len as i64 - 1) as usize
}
