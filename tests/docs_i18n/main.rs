//! The documents and the message catalogues.
//!
//! One test binary for this area: each module is one former test file.

mod catalogue;
mod doc_examples;
