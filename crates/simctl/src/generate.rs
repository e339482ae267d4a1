//! `simctl completions` and `simctl man`: shell completion scripts and
//! manual pages, generated from the command-line grammar itself so they
//! never fall behind it.

use crate::cli::Cli;
use anyhow::Result;
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
/// `simctl-trace-convert.1`, ...) into `dir`, creating it; each page
/// goes through [`crate::output::Output`], as clap_mangen's `generate_to`
/// lays them out.
pub fn man_pages(dir: &Path) -> Result<()> {
    fn pages(cmd: clap::Command, dir: &Path) -> Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            pages(sub, dir)?;
        }
        let man = clap_mangen::Man::new(cmd);
        let mut text = Vec::new();
        man.render(&mut text)?;
        crate::output::write_file(&dir.join(man.get_filename()), &text)
    }
    crate::output::create_dir("--dir", dir)?;
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    pages(cmd, dir)
}
