//! simctl: the command-line front end of mmcsim.
//!
//! The binary is a thin `main` around [`run_cli`], which takes the
//! scheduler [`Registry`] as a parameter so a researcher's own program can
//! start from [`builtin_registry`], register a scheduler and reuse the exact
//! same command line.

#![warn(missing_docs)]

mod calibrate;
mod check;
mod cli;
mod commands;
mod compare;
mod csv_out;
#[doc(hidden)]
pub mod fuzzing;
mod generate;
mod input;
mod output;
mod plot;
mod reproduce;
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
/// schedulers from `registry`. Errors are printed to stderr and give exit
/// code 2 for command-line usage errors, unusable input (a located parse
/// or configuration error) and unusable output files, 1 otherwise; output
/// into a pipe whose
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
            let code = if output::is_unusable(&e) {
                2
            } else {
                exit_code(&e)
            };
            // The context chain, skipping causes a message already quotes.
            let mut msg = e.to_string();
            for cause in e.chain().skip(1) {
                let c = cause.to_string();
                if !msg.contains(&c) {
                    msg.push_str(": ");
                    msg.push_str(&c);
                }
            }
            eprintln!("error: {msg}");
            ExitCode::from(code)
        }
    }
}

/// The exit code of a failed command: 2 for unusable input (an input that
/// cannot be read, a located parse, configuration, setting or choice error
/// of the library anywhere in the chain), 1 for any other failure (an
/// output that cannot be written, a run that completed nothing, a
/// simulator bug).
fn exit_code(e: &anyhow::Error) -> u8 {
    use mmcsim::error::Error as E;
    let input = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<E>(),
            Some(E::Io { .. } | E::Parse { .. } | E::Config(_) | E::Setting { .. } | E::Choice(_))
        )
    });
    if input {
        2
    } else {
        1
    }
}
