//! `simctl completions` and `simctl man`: shell completion scripts and
//! manual pages, generated from the command-line grammar itself so they
//! never fall behind it.

use crate::cli::Cli;
use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::Write;
use std::path::Path;

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: Shell, out: &mut dyn Write) -> Result<()> {
    let mut cmd = Cli::command();
    let name = cmd.get_name().to_string();
    // clap_complete writes through `Write` without reporting errors; write
    // into memory first so a failed write to `out` is reported.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// Writes the manual page of `simctl` (roff) to `out`.
pub fn man(out: &mut dyn Write) -> Result<()> {
    clap_mangen::Man::new(Cli::command()).render(out)?;
    Ok(())
}

/// Writes one manual page per command (`simctl.1`, `simctl-replay.1`,
/// `simctl-trace-convert.1`, ...) into `dir`, creating it.
pub fn man_pages(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("--dir {}", dir.display()))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("writing manual pages to {}", dir.display()))
}
