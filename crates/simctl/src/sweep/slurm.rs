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
//!
//! What a cluster requires goes on `#SBATCH` lines of both scripts: the
//! grid's `[slurm]` table, then `--sbatch-opt KEY=VALUE` (later wins), e.g.
//! `time=02:00:00`, `account=...`, `partition=...`, `mem=4G`. Each array
//! task requests the CPUs it uses (`--cpus-per-task`, which is also its
//! `--jobs`); the merge requests one.

use anyhow::{bail, Context, Result};
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

/// One `#SBATCH --KEY=VALUE` option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SbatchOpt {
    /// sbatch's long option name without the dashes (`time`, `account`),
    /// with `_` written as `-`.
    pub key: String,
    /// Its value, as sbatch reads it (no whitespace or quotes).
    pub value: String,
}

/// Options the scripts set themselves (their values follow from the
/// sweep), which an `#SBATCH` option may not replace.
const RESERVED: [&str; 6] = [
    "array",
    "output",
    "error",
    "dependency",
    "chdir",
    "parsable",
];

/// Checks one option; `Err` says what is wrong with it.
pub fn option(key: &str, value: &str) -> Result<SbatchOpt> {
    let key = key.trim().trim_start_matches("--").replace('_', "-");
    let ok_key = key.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok_key {
        bail!("`{key}` is not an sbatch long option name (lower-case letters, digits and '-', e.g. time, account, partition, mem)");
    }
    if RESERVED.contains(&key.as_str()) {
        bail!("`{key}` is set by the scripts themselves (the array, the log files, the merge's dependency); leave it out");
    }
    if value.is_empty() {
        bail!("`{key}` has an empty value");
    }
    if let Some(c) = value
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || "'\"\\#".contains(*c))
    {
        bail!("the value of `{key}` contains {c:?}; an #SBATCH line takes a value without whitespace, quotes, '#' or backslashes");
    }
    if key == "cpus-per-task" && value.parse::<u32>().map_or(true, |n| n == 0) {
        bail!("`cpus-per-task` must be a whole number > 0, not `{value}`");
    }
    Ok(SbatchOpt {
        key,
        value: value.to_string(),
    })
}

/// Parses `--sbatch-opt KEY=VALUE`.
pub fn parse_opt(text: &str) -> Result<SbatchOpt> {
    let Some((k, v)) = text.split_once('=') else {
        bail!("--sbatch-opt `{text}`: expected KEY=VALUE, e.g. time=02:00:00 or account=mylab");
    };
    option(k, v).map_err(|e| anyhow::anyhow!("--sbatch-opt `{text}`: {e}"))
}

/// The grid's `[slurm]` table as options (string or whole-number values).
pub fn from_table(t: &toml::Table) -> Result<Vec<SbatchOpt>> {
    let mut out = Vec::with_capacity(t.len());
    for (k, v) in t {
        let value = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) if *i > 0 => i.to_string(),
            other => bail!(
                "`{k}` = {other}: expected a string (e.g. \"02:00:00\") or a whole number > 0"
            ),
        };
        out.push(option(k, &value)?);
    }
    Ok(out)
}

/// `base` with each option of `over` replacing the one of the same key
/// (or added after them).
pub fn merged(base: &[SbatchOpt], over: &[SbatchOpt]) -> Vec<SbatchOpt> {
    let mut out = base.to_vec();
    for o in over {
        match out.iter_mut().find(|x| x.key == o.key) {
            Some(x) => x.value = o.value.clone(),
            None => out.push(o.clone()),
        }
    }
    out
}

/// The CPUs each array task requests and uses: `--jobs`, or the options'
/// `cpus-per-task`, or 1; an error when both are given and differ.
pub fn cpus_per_task(jobs: Option<usize>, opts: &[SbatchOpt]) -> Result<usize> {
    let asked = opts
        .iter()
        .find(|o| o.key == "cpus-per-task")
        .map(|o| o.value.parse::<usize>().unwrap_or(1));
    match (jobs, asked) {
        (Some(j), Some(c)) if j != c => bail!(
            "--jobs {j} and cpus-per-task={c} disagree: each array task runs --jobs simulations at once on the CPUs it requests; give one of them"
        ),
        (Some(j), _) => Ok(j),
        (None, Some(c)) => Ok(c),
        (None, None) => Ok(1),
    }
}

/// The directory of shard `i` of `n` under `out`.
pub fn shard_dir(out: &Path, i: usize, n: usize) -> PathBuf {
    out.join("shards").join(format!("{i}-of-{n}"))
}

/// What every script of one `sweep --slurm` names: the grid, the output
/// folder, the shard count, the CPUs per task and the absolute paths the
/// batch jobs run with.
struct Job<'a> {
    grid: &'a Path,
    out: &'a Path,
    shards: usize,
    cpus: usize,
    opts: &'a [SbatchOpt],
    cells: usize,
    /// The directory `sbatch` is run from (the scripts `cd` there).
    cwd: PathBuf,
    /// The running `simctl` binary.
    exe: PathBuf,
    /// `OUT/slurm/logs`, absolute.
    logs: PathBuf,
}

impl Job<'_> {
    fn abs(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// The `#SBATCH` lines the user added, except `cpus-per-task` (the
    /// script requests what it uses).
    fn extra(&self, text: &mut String) {
        for o in self.opts.iter().filter(|o| o.key != "cpus-per-task") {
            let _ = writeln!(text, "#SBATCH --{}={}", o.key, o.value);
        }
    }

    /// The shard directories, quoted for the shell.
    fn shard_dirs(&self) -> String {
        let dirs: Vec<String> = (1..=self.shards)
            .map(|i| q(&shard_dir(self.out, i, self.shards)))
            .collect();
        dirs.join(" ")
    }

    /// `sweep.sbatch`: the job array, one shard per task.
    fn sweep_sbatch(&self) -> String {
        let (shards, cpus, cells) = (self.shards, self.cpus, self.cells);
        let mut s = String::new();
        let _ = writeln!(s, "#!/bin/bash");
        let _ = writeln!(
            s,
            "# mmcsim sweep of {}: {cells} cells in {shards} shards, one per array task.",
            self.grid.display()
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
            self.logs.join("sweep-%A_%a.out").display()
        );
        let _ = writeln!(s, "#SBATCH --cpus-per-task={cpus}");
        self.extra(&mut s);
        let _ = writeln!(s, "set -euo pipefail");
        let _ = writeln!(s, "cd {}", q(&self.cwd));
        let _ = writeln!(s, "shard=$((SLURM_ARRAY_TASK_ID + 1))");
        let _ = writeln!(
            s,
            "exec {} sweep {} --out {}/\"${{shard}}-of-{shards}\" --shard \"${{shard}}/{shards}\" --jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\"",
            q(&self.exe),
            q(self.grid),
            q(&self.out.join("shards")),
        );
        s
    }

    /// `merge.sbatch`: merges the shards once the array is done.
    fn merge_sbatch(&self) -> String {
        let mut m = String::new();
        let _ = writeln!(m, "#!/bin/bash");
        let _ = writeln!(
            m,
            "# Merges the {} shards of the mmcsim sweep of {} into {}.",
            self.shards,
            self.grid.display(),
            self.out.display()
        );
        let _ = writeln!(m, "#SBATCH --job-name=mmcsim-merge");
        let _ = writeln!(
            m,
            "#SBATCH --output={}",
            self.logs.join("merge-%j.out").display()
        );
        let _ = writeln!(m, "#SBATCH --cpus-per-task=1");
        self.extra(&mut m);
        let _ = writeln!(m, "set -euo pipefail");
        let _ = writeln!(m, "cd {}", q(&self.cwd));
        let _ = writeln!(
            m,
            "exec {} merge {} --out {}",
            q(&self.exe),
            self.shard_dirs(),
            q(self.out)
        );
        m
    }

    /// What to tell the user once the scripts are written.
    fn instructions(&self, sweep: &Path, merge: &Path, submit: &Path) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "wrote {} ({} cells as a job array of {} shards) and {}",
            sweep.display(),
            self.cells,
            self.shards,
            merge.display()
        );
        let _ = writeln!(
            t,
            "submit the array, then the merge once every shard succeeded:"
        );
        let _ = writeln!(t, "  jobid=$(sbatch --parsable {})", q(sweep));
        let _ = writeln!(
            t,
            "  sbatch --dependency=afterok:${{jobid%%;*}} {}",
            q(merge)
        );
        let _ = writeln!(
            t,
            "(or run {}, which does both); or merge by hand when the array is done:",
            q(submit)
        );
        let _ = writeln!(
            t,
            "  simctl merge {} --out {}",
            self.shard_dirs(),
            q(self.out)
        );
        t
    }
}

/// Writes the scripts for `grid` → `out` in `shards` array tasks, each
/// requesting and using `cpus` CPUs, with the extra `#SBATCH` options
/// `opts` (`cpus-per-task` among them is replaced by `cpus`), and returns
/// what to tell the user.
pub fn write(
    grid: &Path,
    out: &Path,
    shards: usize,
    cpus: usize,
    opts: &[SbatchOpt],
    cells: usize,
) -> Result<String> {
    let cwd = std::env::current_dir().context("the current directory")?;
    let exe = std::env::current_exe().context("locating the simctl binary")?;
    let slurm = out.join("slurm");
    let logs = slurm.join("logs");
    crate::output::create_dir("--out", &logs)?;
    let mut job = Job {
        grid,
        out,
        shards,
        cpus,
        opts,
        cells,
        cwd,
        exe,
        logs: PathBuf::new(),
    };
    job.logs = job.abs(&logs);

    let sweep_script = slurm.join("sweep.sbatch");
    write_script(&sweep_script, &job.sweep_sbatch())?;
    let merge_script = slurm.join("merge.sbatch");
    write_script(&merge_script, &job.merge_sbatch())?;
    let submit = format!(
        "#!/bin/sh\n# Submits the sweep's job array, then the merge once every task succeeded.\nset -e\njobid=$(sbatch --parsable {})\njobid=${{jobid%%;*}}\necho \"sweep: job array $jobid\"\nsbatch --dependency=afterok:\"$jobid\" {}\n",
        q(&job.abs(&sweep_script)),
        q(&job.abs(&merge_script))
    );
    let submit_script = slurm.join("submit.sh");
    write_script(&submit_script, &submit)?;
    Ok(job.instructions(&sweep_script, &merge_script, &submit_script))
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
