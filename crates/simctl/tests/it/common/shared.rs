//! What a test does when something outside the repository is missing: the
//! project's `../shared/traces` beside the clone, a system tool, root.
//!
//! On a bare clone (no `../shared`, not root, no network) such a test says
//! `SKIPPED` with the reason on standard error (past the harness's output
//! capture, so it shows in `cargo test`'s output) and passes without
//! running. Under CI, `.ci/run` sets [`CI_ENV`]: then the same test runs
//! for real, and a missing input is a failure, never a silent pass.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// Set (to any value) by `.ci/run`: tests that need `../shared`, start
/// daemons or install packages run for real, and fail if they cannot.
pub const CI_ENV: &str = "MMCSIM_CI";

/// True when [`CI_ENV`] is set.
pub fn in_ci() -> bool {
    std::env::var_os(CI_ENV).is_some()
}

/// Prints `SKIPPED test: why` past the test harness's capture.
pub fn say_skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Skips `test` for `why` on a bare clone; under CI, fails with `why`.
pub fn skip_or_fail(test: &str, why: &str) {
    if in_ci() {
        panic!("{test}: {why} ({CI_ENV} is set: CI runs this test for real)");
    }
    say_skipped(test, why);
}

/// The shared traces folder beside a repository root.
pub fn shared_traces(repo_root: &Path) -> PathBuf {
    repo_root.join("../shared/traces")
}

/// `../shared/traces/NAME` beside the repository at `repo_root`, or `None`
/// after saying why `test` is skipped (a failure under CI).
pub fn shared_trace_in(repo_root: &Path, test: &str, name: &str) -> Option<PathBuf> {
    let p = shared_traces(repo_root).join(name);
    if p.exists() {
        return Some(p);
    }
    skip_or_fail(
        test,
        &format!(
            "needs ../shared/traces/{name}, the project's shared traces beside the clone, which are not there"
        ),
    );
    None
}
