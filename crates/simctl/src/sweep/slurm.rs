//! `simctl sweep --slurm`: batch scripts that run a sweep as a Slurm job
//! array, one shard per array task, and merge the shards in a job that
//! depends on the array (`afterok`).
//!
//! ```text
//! DIR/slurm/sweep.sbatch   #SBATCH --array=0-(N-1); task t runs --shard (t+1)/N into DIR/shards/(t+1)-of-N
//! DIR/slurm/merge.sbatch   simctl merge DIR/shards/1-of-N ... --out DIR
//! DIR/slurm/submit.sh      sbatch the array, then the merge with --dependency=afterok:<array job id>
//! DIR/slurm/logs/          the jobs' output
//! ```
//!
//! The scripts run from the directory `--slurm` was given in, with the
//! grid and output paths as given and the same `simctl` binary, so the
//! merged result is byte-identical to `simctl sweep` run there (the
//! directory must be on a file system the compute nodes share).

use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `text` quoted for a POSIX shell when it needs quoting.
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

fn q(p: &Path) -> String {
    quote(&p.display().to_string())
}

/// Writes the executable script `text` to `p`.
fn write_script(p: &Path, text: &str) -> Result<()> {
    crate::output::Output::open("", p)?
        .with_mode(0o755)
        .write(text.as_bytes(), &mut std::io::stdout())
}

/// The directory of shard `i` of `n` under `out`.
pub fn shard_dir(out: &Path, i: usize, n: usize) -> PathBuf {
    out.join("shards").join(format!("{i}-of-{n}"))
}

/// Writes the scripts for `grid` → `out` in `shards` array tasks (each
/// with `jobs` CPUs when given) and returns what to tell the user.
pub fn write(
    grid: &Path,
    out: &Path,
    shards: usize,
    jobs: Option<usize>,
    cells: usize,
) -> Result<String> {
    let cwd = std::env::current_dir().context("the current directory")?;
    let exe = std::env::current_exe().context("locating the simctl binary")?;
    let slurm = out.join("slurm");
    let logs = slurm.join("logs");
    crate::output::create_dir("--out", &logs)?;
    let abs = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };

    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# mmcsim sweep of {}: {cells} cells in {shards} shards, one per array task.",
        grid.display()
    );
    let _ = writeln!(
        s,
        "# Written by `simctl sweep --slurm`; submit with slurm/submit.sh."
    );
    let _ = writeln!(s, "#SBATCH --job-name=mmcsim-sweep");
    let _ = writeln!(s, "#SBATCH --array=0-{}", shards - 1);
    let _ = writeln!(
        s,
        "#SBATCH --output={}",
        abs(&logs).join("sweep-%A_%a.out").display()
    );
    if let Some(j) = jobs {
        let _ = writeln!(s, "#SBATCH --cpus-per-task={j}");
    }
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s, "cd {}", q(&cwd));
    let _ = writeln!(s, "shard=$((SLURM_ARRAY_TASK_ID + 1))");
    let _ = writeln!(
        s,
        "exec {} sweep {} --out {}/\"${{shard}}-of-{shards}\" --shard \"${{shard}}/{shards}\" --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"",
        q(&exe),
        q(grid),
        q(&out.join("shards")),
    );
    let sweep_script = slurm.join("sweep.sbatch");
    write_script(&sweep_script, &s)?;

    let mut m = String::new();
    let _ = writeln!(m, "#!/bin/bash");
    let _ = writeln!(
        m,
        "# Merges the {shards} shards of the mmcsim sweep of {} into {}.",
        grid.display(),
        out.display()
    );
    let _ = writeln!(m, "#SBATCH --job-name=mmcsim-merge");
    let _ = writeln!(
        m,
        "#SBATCH --output={}",
        abs(&logs).join("merge-%j.out").display()
    );
    let _ = writeln!(m, "set -euo pipefail");
    let _ = writeln!(m, "cd {}", q(&cwd));
    let dirs: Vec<String> = (1..=shards)
        .map(|i| q(&shard_dir(out, i, shards)))
        .collect();
    let _ = writeln!(
        m,
        "exec {} merge {} --out {}",
        q(&exe),
        dirs.join(" "),
        q(out)
    );
    let merge_script = slurm.join("merge.sbatch");
    write_script(&merge_script, &m)?;

    let (sweep_abs, merge_abs) = (abs(&sweep_script), abs(&merge_script));
    let submit = format!(
        "#!/bin/sh\n# Submits the sweep's job array, then the merge once every task succeeded.\nset -e\njobid=$(sbatch --parsable {})\njobid=${{jobid%%;*}}\necho \"sweep: job array $jobid\"\nsbatch --dependency=afterok:\"$jobid\" {}\n",
        q(&sweep_abs),
        q(&merge_abs)
    );
    let submit_script = slurm.join("submit.sh");
    write_script(&submit_script, &submit)?;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "wrote {} ({cells} cells as a job array of {shards} shards) and {}",
        sweep_script.display(),
        merge_script.display()
    );
    let _ = writeln!(
        t,
        "submit the array, then the merge once every shard succeeded:"
    );
    let _ = writeln!(t, "  jobid=$(sbatch --parsable {})", q(&sweep_script));
    let _ = writeln!(
        t,
        "  sbatch --dependency=afterok:${{jobid%%;*}} {}",
        q(&merge_script)
    );
    let _ = writeln!(
        t,
        "(or run {}, which does both); or merge by hand when the array is done:",
        q(&submit_script)
    );
    let dirs: Vec<String> = (1..=shards)
        .map(|i| q(&shard_dir(out, i, shards)))
        .collect();
    let _ = writeln!(t, "  simctl merge {} --out {}", dirs.join(" "), q(out));
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quoting_is_shell_safe() {
        assert_eq!(quote("out/shards"), "out/shards");
        assert_eq!(quote("my dir"), "'my dir'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
