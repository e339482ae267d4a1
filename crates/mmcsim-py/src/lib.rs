//! The Python package `mmcsim` (its extension module `_mmcsim`): runs,
//! replays, comparisons and sweeps from Python, and I/O schedulers
//! written in Python plugged into the same elevator hooks as the
//! built-in ones.
//!
//! The pure-Rust part — [`hooks`], the adapter from fallible hooks to
//! the [`mmcsim_elevator::Elevator`] trait with its contract checks — is
//! built and tested in the workspace without Python. The PyO3 bindings
//! (`python` feature, turned on by maturin through `extension-module`)
//! live in `python/`; the Python package's own code is in
//! `crates/mmcsim-py/python/mmcsim/`.

#![warn(missing_docs)]

pub mod hooks;

#[cfg(feature = "python")]
mod python;
