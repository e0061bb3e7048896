//! The documents and the message catalogues.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../support/literals.rs"]
mod literals;

mod doc_examples;
mod i18n_catalogue;
