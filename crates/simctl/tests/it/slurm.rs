//! A sweep on a real Slurm cluster: a single-node `slurmctld` + `slurmd`
//! on localhost (munge for authentication), a 4-shard job array submitted
//! with `sbatch` from the script `simctl sweep --slurm` writes, the
//! dependent merge job, and the merged result compared byte for byte with
//! an unsharded run.
//!
//! It starts daemons and may install packages, so it runs only when
//! `.ci/run` allows it by setting `MMCSIM_CI` (see `crates/simctl/tests/it/common/shared.rs`);
//! then it needs Linux, root and Debian's `slurm-wlm` and `munge`
//! (installed with `apt-get` when missing; `.ci/run` installs them), and
//! fails if it cannot have them. Without `MMCSIM_CI` it says SKIPPED and
//! why on stderr, and passes without running. Every wait is bounded; the
//! daemons and their files are removed at the end, whatever happens.

use crate::common::{in_ci, say_skipped, scratch, simctl_ok, skip_or_fail, CI_ENV};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The grid the sweep tests share (32 small cells).
const GRID: &str = "crates/simctl/tests/sweep-grid/grid.toml";
/// Array tasks.
const SHARDS: usize = 4;

/// Prints past the test harness's output capture, so a skip is visible.
fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "slurm test: {msg}");
}

/// Runs `cmd` with a time limit; stdout and stderr go through files (no
/// pipe can fill up and block).
fn run_bounded(cmd: &mut Command, limit: Duration) -> Result<Output, String> {
    let tmp = std::env::temp_dir().join(format!("mmcsim-slurm-cmd-{}", std::process::id()));
    let (out_p, err_p) = (tmp.with_extension("out"), tmp.with_extension("err"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(File::create(&out_p).map_err(|e| e.to_string())?)
        .stderr(File::create(&err_p).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{cmd:?} did not finish within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = Output {
        status,
        stdout: std::fs::read(&out_p).unwrap_or_default(),
        stderr: std::fs::read(&err_p).unwrap_or_default(),
    };
    let _ = std::fs::remove_file(&out_p);
    let _ = std::fs::remove_file(&err_p);
    Ok(out)
}

fn found(program: &str) -> bool {
    [
        "/usr/bin",
        "/usr/sbin",
        "/bin",
        "/sbin",
        "/usr/local/bin",
        "/usr/local/sbin",
    ]
    .iter()
    .any(|d| Path::new(d).join(program).is_file())
}

const PROGRAMS: [&str; 9] = [
    "slurmctld",
    "slurmd",
    "sbatch",
    "squeue",
    "scontrol",
    "sinfo",
    "scancel",
    "munged",
    "mungekey",
];

/// Makes sure Slurm and munge are installed; `Err` says why the test
/// cannot run here.
fn ensure_installed() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("Slurm runs on Linux only".into());
    }
    let uid = run_bounded(Command::new("id").arg("-u"), Duration::from_secs(10))
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if uid != "0" {
        return Err(format!(
            "it starts slurmctld, slurmd and munged, which needs root (uid is {uid:?})"
        ));
    }
    if PROGRAMS.iter().all(|p| found(p)) {
        return Ok(());
    }
    if !found("apt-get") {
        return Err(
            "slurm-wlm and munge are not installed and there is no apt-get to install them".into(),
        );
    }
    say("installing slurm-wlm and munge with apt-get (bounded to 15 minutes)");
    let install = || {
        run_bounded(
            Command::new("apt-get")
                .args([
                    "install",
                    "-y",
                    "--no-install-recommends",
                    "slurm-wlm",
                    "munge",
                ])
                .env("DEBIAN_FRONTEND", "noninteractive"),
            Duration::from_secs(600),
        )
    };
    let mut ok = install().is_ok_and(|o| o.status.success());
    if !ok {
        let _ = run_bounded(
            Command::new("apt-get").arg("update"),
            Duration::from_secs(300),
        );
        ok = install().is_ok_and(|o| o.status.success());
    }
    if ok && PROGRAMS.iter().all(|p| found(p)) {
        Ok(())
    } else {
        Err("`apt-get install slurm-wlm munge` failed (no network or no such package?)".into())
    }
}

/// A free TCP port on localhost.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The daemons of a one-node cluster, stopped (and their directory
/// removed) on drop, whatever happened.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
    jobs: Vec<String>,
}

impl Cluster {
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Runs a Slurm client command (bounded); its stdout on success.
    fn client(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let o = run_bounded(self.command(program).args(args), Duration::from_secs(60))?;
        if o.status.success() {
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        } else {
            Err(format!(
                "{program} {args:?}: {}{}",
                String::from_utf8_lossy(&o.stderr),
                self.logs()
            ))
        }
    }

    fn spawn(&mut self, name: &'static str, program: &str, args: &[&str]) {
        let log = File::create(self.dir.join(format!("{name}.stderr"))).unwrap();
        let child = self
            .command(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program}: {e}"));
        self.daemons.push((name, child));
    }

    /// The daemons' logs, for failure messages.
    fn logs(&self) -> String {
        let mut s = String::new();
        for f in [
            "munged.stderr",
            "slurmctld.log",
            "slurmd.log",
            "slurmctld.stderr",
            "slurmd.stderr",
        ] {
            let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s.push_str(&format!("\n--- {f} (last lines)\n"));
            for l in tail.into_iter().rev() {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }

    /// Starts munged, slurmctld and slurmd on localhost and waits (bounded)
    /// until the node is idle.
    fn start() -> Cluster {
        // Short path: a unix socket path must stay under 108 bytes.
        let dir = std::env::temp_dir().join(format!("mmcsim-slurm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["state", "spool", "munge"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let conf = dir.join("slurm.conf");
        let mut c = Cluster {
            dir: dir.clone(),
            conf: conf.clone(),
            daemons: Vec::new(),
            jobs: Vec::new(),
        };
        let p = |f: &str| dir.join(f).display().to_string();

        let key = p("munge/munge.key");
        let o = run_bounded(
            Command::new("mungekey").args(["--create", "--keyfile", &key]),
            Duration::from_secs(30),
        )
        .unwrap();
        assert!(
            o.status.success(),
            "mungekey: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let socket = p("munge/munge.sock");
        c.spawn(
            "munged",
            "munged",
            &[
                "--foreground",
                "--force",
                &format!("--socket={socket}"),
                &format!("--key-file={key}"),
                &format!("--pid-file={}", p("munge/munged.pid")),
                &format!("--log-file={}", p("munge/munged.log")),
                &format!("--seed-file={}", p("munge/munged.seed")),
            ],
        );
        wait_for(Duration::from_secs(20), "munged's socket", || {
            Path::new(&socket).exists().then_some(())
        })
        .unwrap_or_else(|e| panic!("{e}{}", c.logs()));

        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| {
                h.trim()
                    .split('.')
                    .next()
                    .unwrap_or("localhost")
                    .to_string()
            })
            .unwrap_or_else(|_| "localhost".into());
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let text = format!(
            "# One-node test cluster of crates/simctl/tests/it/slurm.rs.
ClusterName=mmcsimtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={d_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={d_log}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
",
            ctld_port = free_port(),
            d_port = free_port(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            d_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            d_log = p("slurmd.log"),
        );
        std::fs::write(&conf, text).unwrap();
        let conf_s = conf.display().to_string();
        c.spawn("slurmctld", "slurmctld", &["-D", "-f", &conf_s]);
        c.spawn("slurmd", "slurmd", &["-D", "-N", &host, "-f", &conf_s]);
        let idle = wait_for(Duration::from_secs(90), "the node to be idle", || {
            let states = c.client("sinfo", &["-h", "-N", "-o", "%t"]).ok()?;
            (states.trim() == "idle").then_some(())
        });
        if let Err(e) = idle {
            panic!("{e}{}", c.logs());
        }
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.jobs.is_empty() {
            let ids: Vec<&str> = self.jobs.iter().map(String::as_str).collect();
            let _ = run_bounded(self.command("scancel").args(&ids), Duration::from_secs(20));
        }
        // Stop in reverse order: slurmd, slurmctld, munged. SIGTERM first
        // (a clean shutdown), SIGKILL after 10 s.
        while let Some((_, mut child)) = self.daemons.pop() {
            let _ = run_bounded(
                Command::new("kill").args(["-TERM", &child.id().to_string()]),
                Duration::from_secs(5),
            );
            let start = Instant::now();
            while child.try_wait().ok().flatten().is_none()
                && start.elapsed() < Duration::from_secs(10)
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Polls `f` every 500 ms until it gives a value or `limit` passes.
fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> Result<T, String> {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return Ok(v);
        }
        if start.elapsed() > limit {
            return Err(format!("timed out after {limit:?} waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// sweep.json, results.csv and cells/ under `dir`, relative path → bytes.
fn layout(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for f in ["sweep.json", "results.csv"] {
        out.insert(
            f.to_string(),
            std::fs::read(dir.join(f)).unwrap_or_default(),
        );
    }
    if let Ok(rd) = std::fs::read_dir(dir.join("cells")) {
        for e in rd {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            out.insert(format!("cells/{name}"), std::fs::read(&p).unwrap());
        }
    }
    out
}

#[test]
fn a_sweep_on_a_slurm_job_array_merges_to_the_unsharded_result() {
    const TEST: &str = "slurm job array sweep";
    if !in_ci() {
        say_skipped(
            TEST,
            &format!("starts slurmctld, slurmd and munged and may install packages: set {CI_ENV}=1 (as .ci/run does) to run it"),
        );
        return;
    }
    if let Err(why) = ensure_installed() {
        skip_or_fail(TEST, &why);
        return;
    }
    let scratch = scratch("slurm-sweep");
    let reference = scratch.join("reference");
    let cluster_out = scratch.join("cluster");
    let reference_s = reference.display().to_string();
    let cluster_s = cluster_out.display().to_string();

    // The reference: the same grid, unsharded, here.
    simctl_ok(&["sweep", GRID, "--out", &reference_s, "--jobs", "2"]);
    // The scripts (simctl runs from the repository root, as the jobs will).
    let shards = SHARDS.to_string();
    // With the options a cluster requires (the test cluster's partition
    // and a time limit), which must reach the jobs.
    let printed = simctl_ok(&[
        "sweep",
        GRID,
        "--out",
        &cluster_s,
        "--slurm",
        "--shards",
        &shards,
        "--jobs",
        "1",
        "--sbatch-opt",
        "time=00:20:00",
        "--sbatch-opt",
        "partition=test",
    ]);
    assert!(printed.contains("sbatch"), "{printed}");

    let mut cluster = Cluster::start();
    let sweep_script = cluster_out.join("slurm/sweep.sbatch").display().to_string();
    let merge_script = cluster_out.join("slurm/merge.sbatch").display().to_string();
    // The commands simctl printed.
    let array = cluster
        .client("sbatch", &["--parsable", &sweep_script])
        .unwrap_or_else(|e| panic!("{e}"));
    let array = array.trim().split(';').next().unwrap().to_string();
    cluster.jobs.push(array.clone());
    let merge = cluster
        .client(
            "sbatch",
            &[
                "--parsable",
                &format!("--dependency=afterok:{array}"),
                &merge_script,
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let merge = merge.trim().split(';').next().unwrap().to_string();
    cluster.jobs.push(merge.clone());
    say(&format!(
        "submitted job array {array} and merge job {merge}"
    ));

    // Wait (bounded) until no job of ours is left in the queue; a merge
    // whose dependency can never be satisfied means a shard failed.
    let job_logs = || {
        let mut s = String::new();
        if let Ok(rd) = std::fs::read_dir(cluster_out.join("slurm/logs")) {
            for e in rd.flatten() {
                s.push_str(&format!(
                    "\n--- {}\n{}",
                    e.path().display(),
                    std::fs::read_to_string(e.path()).unwrap_or_default()
                ));
            }
        }
        s
    };
    let ids = format!("{array},{merge}");
    let done = wait_for(Duration::from_secs(600), "the jobs to finish", || {
        let q = cluster
            .client("squeue", &["-h", "-j", &ids, "-o", "%i %T %r"])
            .ok()?;
        if q.contains("DependencyNeverSatisfied") {
            return Some(Err(format!(
                "a shard failed, the merge can never run:\n{q}"
            )));
        }
        q.trim().is_empty().then_some(Ok(()))
    });
    match done {
        Ok(Ok(())) => {}
        Ok(Err(e)) | Err(e) => panic!("{e}{}{}", job_logs(), cluster.logs()),
    }
    for id in [&array, &merge] {
        let info = cluster
            .client("scontrol", &["show", "job", id])
            .unwrap_or_default();
        // The #SBATCH options reached the job.
        assert!(info.contains("TimeLimit=00:20:00"), "job {id}: {info}");
        assert!(info.contains("Partition=test"), "job {id}: {info}");
        for line in info.lines().filter(|l| l.contains("JobState=")) {
            assert!(
                line.contains("JobState=COMPLETED"),
                "job {id}: {line}{}{}",
                job_logs(),
                cluster.logs()
            );
        }
    }
    drop(cluster);

    let merged = layout(&cluster_out);
    let expected = layout(&reference);
    assert_eq!(
        merged.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the merged cluster run has other files than the unsharded run{}",
        job_logs()
    );
    assert_eq!(
        expected.keys().filter(|k| k.starts_with("cells/")).count(),
        32
    );
    for (k, v) in &expected {
        assert!(
            merged[k] == *v,
            "{k} differs between the Slurm run and the unsharded run"
        );
    }
    for i in 1..=SHARDS {
        assert!(cluster_out
            .join(format!("shards/{i}-of-{SHARDS}/shard.json"))
            .is_file());
    }
    say("ran for real: 4 array tasks + dependent merge, byte-identical to the unsharded sweep");
}
