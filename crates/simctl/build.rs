//! Embeds the bundled configuration tree (the repository's `configs/`: phones, device and
//! host profiles, scenarios, fio jobs, sweeps, calibration files and
//! baselines) in the `simctl` binary, so an installed `simctl` finds
//! `--phone motog-2013` or `run androbench-3.4` from any directory
//! (`src/bundled.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

fn main() {
    // The package sits at crates/simctl/; the configuration tree is the
    // repository's top-level configs/.
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let configs = manifest.join("../../configs");
    println!("cargo:rerun-if-changed=../../configs");
    let mut files = Vec::new();
    walk(&configs, &mut files);
    let mut src = String::from(
        "/// The bundled configuration files: (path under `configs/`, text).\npub static FILES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(&configs)
            .expect("under configs/")
            .to_str()
            .expect("UTF-8 file names in configs/")
            .replace('\\', "/");
        let _ = writeln!(
            src,
            "    ({rel:?}, include_str!({:?})),",
            f.display().to_string()
        );
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("bundled_configs.rs"), src).expect("writing bundled_configs.rs");
}
