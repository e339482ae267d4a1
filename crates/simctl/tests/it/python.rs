//! The Python package's tests (`crates/mmcsim-py/tests`, pytest, the
//! notebook among them), run with the virtual environment `.venv` at the
//! repository root that `.ci/run` prepares (maturin, the package, pandas,
//! pytest, nbclient). On a clone without it the test says SKIPPED and
//! why; under CI (`MMCSIM_CI`) a missing environment is a failure.

use crate::common::skip_or_fail;
use std::path::Path;
use std::process::Command;

#[test]
fn the_python_package_passes_its_tests() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        skip_or_fail(
            "the_python_package_passes_its_tests",
            "needs the virtual environment .venv with the package installed (.ci/run makes it: python3 -m venv .venv && .venv/bin/pip install '.[test]')",
        );
        return;
    }
    let import = Command::new(&python)
        .args(["-c", "import mmcsim, pandas, pytest"])
        .current_dir(root.join("crates/mmcsim-py/tests"))
        .status()
        .expect("running .venv/bin/python");
    if !import.success() {
        skip_or_fail(
            "the_python_package_passes_its_tests",
            ".venv has no mmcsim, pandas or pytest (install with .venv/bin/pip install '.[test]')",
        );
        return;
    }
    let out = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "crates/mmcsim-py/tests",
        ])
        .current_dir(root)
        .output()
        .expect("running pytest");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "pytest failed:\n{text}");
}
