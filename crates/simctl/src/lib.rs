//! simctl: the command-line front end of mmcsim.
//!
//! The binary is a thin `main` around [`run_cli`], which takes the
//! scheduler [`Registry`] as a parameter so a researcher's own program can
//! start from [`builtin_registry`], register a scheduler and reuse the exact
//! same command line.

#![warn(missing_docs)]

pub mod api;
mod bundled;
mod calibrate;
mod catalogue;
mod check;
mod cli;
mod commands;
mod compare;
mod crash;
mod csv_out;
mod fio_out;
mod fit;
#[doc(hidden)]
pub mod fuzzing;
mod generate;
mod input;
mod measurements;
mod output;
mod plot;
mod reproduce;
pub mod schema;
mod shared_devices;
mod sweep;
mod trace_cmd;

pub use cli::Cli;
pub use mmcsim_elevator::Registry;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// A registry holding every scheduler the simulator ships (`noop`,
/// `deadline`, `cfq`, ...), to hand to [`run_cli`] as is or with a
/// researcher's own schedulers added.
pub fn builtin_registry() -> Registry {
    mmcsim::sched::builtin()
}

/// Parses `args` (including the program name) and runs the command with
/// schedulers from `registry`. Exit codes, the same for every command:
/// 0 success, 1 a run or check failed, 2 unusable input or usage (a
/// command-line error, a missing or malformed input file, a bad setting,
/// an unknown scheduler or phone; `is_usage_error` in the output module). Errors
/// are printed to stderr; output into a pipe whose
/// reader has gone ends the command quietly with exit code 0.
pub fn run_cli<I, T>(args: I, registry: &Registry) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let mut out = output::Stdout::new();
    let result = commands::dispatch(cli, registry, &mut out).and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(e) if output::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let code = if output::is_usage_error(&e) { 2 } else { 1 };
            eprintln!("error: {}", api::error_message(&e));
            ExitCode::from(code)
        }
    }
}
