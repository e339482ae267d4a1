//! What a trace format is to the rest of the crate: the [`TraceFormat`]
//! trait a format's file implements (its names, default time unit, how it
//! recognises a trace's head, and its reader), and [`Format`], a handle on
//! one registered format ([`crate::registry`]).

use crate::common::{Source, TimeUnit};
use crate::error::{Result, UnknownChoice};
use crate::head::Head;
use crate::TraceReader;

/// One trace format: everything the crate needs to list it, recognise it
/// and read it. A format is a unit struct in its own file implementing
/// this trait, plus one line in [`crate::registry::FORMATS`].
pub trait TraceFormat: Sync {
    /// Stable, lower-case CLI name (`native`, `mmc-ftrace`, ...).
    fn name(&self) -> &'static str;
    /// Other lower-case names accepted for the format.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One-line description (fields, units), for listings.
    fn description(&self) -> &'static str;
    /// One example line, for listings.
    fn example(&self) -> &'static str;
    /// The unit the format's timestamps are read in unless overridden
    /// (`None` when the file names its own unit, as the native CSV does).
    fn default_time_unit(&self) -> Option<TimeUnit>;
    /// For a format read from ftrace text: whether ftrace event `event` is
    /// one of its events, and whether one such event settles detection
    /// ([`FtraceEvent::Decisive`]: the head is scanned no further).
    /// `None` (the default) for every event of a format that is not ftrace.
    fn ftrace_event(&self, _event: &[u8]) -> Option<FtraceEvent> {
        None
    }
    /// What the format makes of a trace's `head`: `None` when the head is
    /// not this format; else how sure it is and why (or, for a head that
    /// looks like this format but must not be read as it, the located
    /// error saying what to do).
    fn sniff(&self, head: &Head) -> Option<Sniff>;
    /// A reader of `source` reading times in `unit` (the caller resolves
    /// the default; a format whose file names its unit ignores it).
    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>>;
}

/// How an ftrace event bears on detection ([`TraceFormat::ftrace_event`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtraceEvent {
    /// One of the format's events: noted, and scanning goes on.
    Seen,
    /// One of the format's events that no other ftrace format outranks:
    /// scanning stops here.
    Decisive,
}

/// A format's verdict on a trace's head ([`TraceFormat::sniff`]).
#[derive(Debug)]
pub struct Sniff {
    /// How sure the format is, 0-255: detection takes the most confident
    /// verdict, and the registry's order breaks ties. The scale the
    /// bundled formats use: 100 a signature line (fio's version line);
    /// 90 and 80 events of an ftrace container (MMC events outrank block
    /// events, the level nearer the device); 70 and 60 a header naming
    /// the format's columns; 50 to 20 a first record in the format's
    /// layout, the more specific layout higher; 10 a layout several
    /// formats share, told apart by the file name.
    pub confidence: u8,
    /// Why the format was recognised (for `simctl trace inspect`), or the
    /// located error refusing to guess.
    pub verdict: Result<String>,
}

impl Sniff {
    /// Recognised with `confidence`, because `why`.
    pub fn matched(confidence: u8, why: impl Into<String>) -> Option<Sniff> {
        Some(Sniff {
            confidence,
            verdict: Ok(why.into()),
        })
    }
}

/// A registered trace format: a cheap, copyable handle on its
/// [`TraceFormat`]. Two handles are equal when they name the same format.
#[derive(Clone, Copy)]
pub struct Format(&'static dyn TraceFormat);

impl Format {
    /// The handle of `format` (the registry's entries are made with it).
    pub const fn new(format: &'static dyn TraceFormat) -> Format {
        Format(format)
    }

    /// Every registered format, in listing order.
    pub fn all() -> &'static [Format] {
        &crate::registry::FORMATS
    }

    /// The format's implementation.
    pub fn def(self) -> &'static dyn TraceFormat {
        self.0
    }

    /// Stable CLI name (`native`, `mmc-ftrace`, ...).
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// Other (lower-case) names accepted for the format.
    pub fn aliases(self) -> &'static [&'static str] {
        self.0.aliases()
    }

    /// One-line description.
    pub fn description(self) -> &'static str {
        self.0.description()
    }

    /// One example line.
    pub fn example(self) -> &'static str {
        self.0.example()
    }

    /// The time unit the format's timestamps are read in unless overridden
    /// (`None` for the native CSV, whose header names the unit).
    pub fn default_time_unit(self) -> Option<TimeUnit> {
        self.0.default_time_unit()
    }

    /// Opens `source` with this format's reader, without filtering; `unit`
    /// overrides the default time unit (ignored by the native CSV).
    pub fn open_source(
        self,
        source: &Source,
        unit: Option<TimeUnit>,
    ) -> Result<Box<dyn TraceReader>> {
        let unit = unit.or(self.default_time_unit()).unwrap_or(TimeUnit::Ns);
        self.0.open(source, unit)
    }

    /// The registered names, comma-separated in listing order.
    pub(crate) fn names() -> String {
        Format::all()
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name().hash(h);
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Format({})", self.name())
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = UnknownChoice;
    /// A registered format by its name or an alias, in any case.
    fn from_str(s: &str) -> std::result::Result<Format, UnknownChoice> {
        let l = s.to_ascii_lowercase();
        Format::all()
            .iter()
            .copied()
            .find(|f| f.name() == l || f.aliases().contains(&l.as_str()))
            .ok_or_else(|| UnknownChoice {
                what: "trace format",
                found: s.to_string(),
                expected: Format::names(),
            })
    }
}

/// In a report's JSON Schema: the format's name.
impl schemars::JsonSchema for Format {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TraceFormat".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "a trace format's name, as `simctl trace formats` lists them"
        })
    }
}

/// Written as its name (`blkparse`), read from its name or an alias.
impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Format {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The command-line values: every registered format by its name, aliases
/// accepted.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        Format::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).aliases(self.aliases().iter().copied()))
    }
}
