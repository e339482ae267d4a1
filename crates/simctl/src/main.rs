//! `simctl`: simulate Android/Linux I/O schedulers on a modelled eMMC.

use std::process::ExitCode;

fn main() -> ExitCode {
    simctl::run_cli(std::env::args_os(), &simctl::builtin_registry())
}
