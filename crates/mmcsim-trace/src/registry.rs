//! The registry of trace formats: one line per format, in listing order
//! (`simctl trace formats`, the names in messages, the command line's
//! choices). Detection asks every format listed here; the most confident
//! verdict wins, and this order breaks ties.
//!
//! Adding a format: a new file with a reader and a unit struct
//! implementing [`TraceFormat`](crate::TraceFormat), its `pub mod` in
//! `lib.rs`, and its line here.

use crate::format::Format;
use crate::{
    biotracer, blkparse, blktrace_bin, disksim, fio, ftrace_block, ftrace_mmc, mqsim, msr,
    native_csv, pixel6a, spc, ssdsim,
};

/// Every format this crate reads.
pub static FORMATS: [Format; 13] = [
    Format::new(&native_csv::NativeCsv),
    Format::new(&ftrace_mmc::MmcFtrace),
    Format::new(&ftrace_block::BlockFtrace),
    Format::new(&blkparse::Blkparse),
    Format::new(&blktrace_bin::BlktraceBin),
    Format::new(&fio::FioIolog),
    Format::new(&msr::Msr),
    Format::new(&spc::Spc),
    Format::new(&disksim::DiskSim),
    Format::new(&mqsim::MqSim),
    Format::new(&ssdsim::SsdSim),
    Format::new(&pixel6a::Pixel6a),
    Format::new(&biotracer::Biotracer),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::{Source, TimeUnit};
    use crate::detect::{detect_among, detect_explained};
    use crate::format::{FtraceEvent, Sniff, TraceFormat};
    use crate::head::Head;
    use crate::{Result, TraceReader};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Every `impl TraceFormat for X` in `src/m.rs` has its registry line
    /// `Format::new(&m::X)` (`src/m/mod.rs` for a format in a folder): a
    /// format file cannot be forgotten here.
    #[test]
    fn every_format_file_is_registered() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let registry = std::fs::read_to_string(src.join("registry.rs")).unwrap();
        let mut impls = 0;
        for entry in std::fs::read_dir(&src).unwrap() {
            let mut path = entry.unwrap().path();
            let module = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                path = path.join("mod.rs"); // a format in a folder of its own
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines() {
                let Some(rest) = line.strip_prefix("impl TraceFormat for ") else {
                    continue;
                };
                let ty = rest.trim_end_matches(" {");
                let entry = format!("Format::new(&{module}::{ty}),");
                assert!(
                    registry.contains(&entry),
                    "{module}.rs implements TraceFormat for {ty}, but registry.rs lacks `{entry}`"
                );
                impls += 1;
            }
        }
        assert_eq!(impls, FORMATS.len(), "one registry line per format file");
    }

    /// Names and aliases are lower case and name one format each; every
    /// format has a description and an example for the listing.
    #[test]
    fn names_are_unique_and_listings_complete() {
        let mut seen: Vec<&str> = Vec::new();
        for f in Format::all() {
            for n in std::iter::once(f.name()).chain(f.aliases().iter().copied()) {
                assert_eq!(n, n.to_ascii_lowercase(), "{n}");
                assert!(!seen.contains(&n), "`{n}` names two formats");
                seen.push(n);
                assert_eq!(n.parse::<Format>().unwrap(), *f);
            }
            assert!(!f.description().is_empty() && !f.example().is_empty());
        }
    }

    /// A registered format wrapped to count how often detection asks it.
    struct Counting {
        inner: Format,
        sniffs: AtomicUsize,
    }

    impl TraceFormat for Counting {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        fn description(&self) -> &'static str {
            self.inner.description()
        }
        fn example(&self) -> &'static str {
            self.inner.example()
        }
        fn default_time_unit(&self) -> Option<TimeUnit> {
            self.inner.default_time_unit()
        }
        fn ftrace_event(&self, event: &[u8]) -> Option<FtraceEvent> {
            self.inner.def().ftrace_event(event)
        }
        fn sniff(&self, head: &Head) -> Option<Sniff> {
            self.sniffs.fetch_add(1, Ordering::Relaxed);
            self.inner.def().sniff(head)
        }
        fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
            self.inner.def().open(source, unit)
        }
    }

    fn sample(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../traces")
            .join(name)
    }

    /// Detection asks every registered format, whatever the trace, and
    /// picks as it does through the registry.
    #[test]
    fn detection_asks_every_registered_format() {
        let counting: Vec<&'static Counting> = Format::all()
            .iter()
            .map(|&inner| {
                &*Box::leak(Box::new(Counting {
                    inner,
                    sniffs: AtomicUsize::new(0),
                }))
            })
            .collect();
        let formats: Vec<Format> = counting.iter().map(|&c| Format::new(c)).collect();
        let sources = [
            Source::File(sample("blkparse.txt")),
            Source::File(sample("mmc-ftrace.txt")),
            Source::File(sample("sample.csv")),
            Source::Memory(Arc::from(&b"26214000 0 303574 7 0\n"[..]), "x.ascii".into()),
        ];
        for (i, source) in sources.iter().enumerate() {
            let (f, why) = detect_among(source, &formats).unwrap();
            assert_eq!((f, why), detect_explained(source).unwrap());
            for c in &counting {
                assert_eq!(c.sniffs.load(Ordering::Relaxed), i + 1, "{}", c.name());
            }
        }
    }
}
