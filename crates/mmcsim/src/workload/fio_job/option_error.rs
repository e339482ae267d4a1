//! Why one option of an fio job file is refused: the typed error of the
//! option readers ([`super::values`], [`super::pattern`], the job's
//! setters). The file, line and key are added by the caller
//! ([`crate::error::Error::FioOption`]).

use super::MAX_BYTES;
use crate::workload::distribution::DistributionError;
use std::borrow::Cow;

/// Why the value (or the key) of one fio option is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OptionError {
    /// The value is not of the option's form; the text says what is.
    #[error("expected {0}")]
    Expected(Cow<'static, str>),
    /// An integer outside the option's range (or not an integer).
    #[error("expected an integer {min}..={max}")]
    IntRange {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A size of 0 where an I/O needs bytes.
    #[error("expected a size > 0")]
    ZeroSize,
    /// Not a size with fio's suffixes.
    #[error("expected a size in bytes with an optional k/m/g/t/p suffix (base 1024), e.g. 4k; got '{value}'")]
    Size {
        /// The text given.
        value: String,
    },
    /// A size above [`MAX_BYTES`].
    #[error("{value}: expected at most {MAX_BYTES} bytes (2^50, 1 PiB), the limit of a size, offset or block size")]
    SizeLimit {
        /// The text given.
        value: String,
    },
    /// A size given as a percentage of the file.
    #[error("a percentage of the file is not modelled; give a size in bytes (e.g. 64m)")]
    Percentage,
    /// Not a whole time with a unit.
    #[error(
        "expected a whole time with an optional unit (us, ms, s, m, h, d), e.g. 30s; got '{value}'"
    )]
    Time {
        /// The text given.
        value: String,
    },
    /// A time unit fio does not have.
    #[error("unknown time unit '{suffix}': expected us, ms, s, m, h or d")]
    TimeUnit {
        /// The suffix given.
        suffix: String,
    },
    /// One part of a list value (`a:b:c`, `a/b`) is not of its form.
    #[error("'{part}': expected {expected}")]
    Part {
        /// The part given.
        part: String,
        /// What the part must be, e.g. `a whole percentage after '/'`.
        expected: &'static str,
    },
    /// The option (or this value of it) asks for behaviour mmcsim does not
    /// model; the text says which and what to give instead.
    #[error("{0}")]
    NotModelled(&'static str),
    /// A per-direction option given different values for reads and writes
    /// where the model takes one.
    #[error("a different {what} for reads and writes is not modelled; give one")]
    DiffersByDirection {
        /// The option, e.g. `blockalign`.
        what: &'static str,
    },
    /// The percentages of a `bssplit` add up to more than 100.
    #[error("the percentages add up to {sum}: expected at most 100")]
    PercentSum {
        /// Their sum.
        sum: u32,
    },
    /// A distribution with the wrong number of parameters.
    #[error("expected {kind}:value[:center]")]
    DistributionArgs {
        /// The distribution, e.g. `zipf`.
        kind: String,
    },
    /// Files chosen by a skewed distribution.
    #[error("choosing files by a {kind} distribution is not modelled; use roundrobin, sequential or random")]
    FileDistribution {
        /// The distribution, e.g. `zipf`.
        kind: String,
    },
    /// The distribution's parameters break fio's rules.
    #[error(transparent)]
    Distribution(#[from] DistributionError),
    /// The skip of `rw=KIND:N` is unusable.
    #[error("after ':': {0}")]
    AfterColon(Box<OptionError>),
    /// A key fio has whose behaviour mmcsim refuses to approximate.
    #[error("key '{key}' is not modelled by mmcsim ({why}); remove it to run the job without it")]
    Refused {
        /// The key.
        key: String,
        /// The feature it controls, e.g. `verification`.
        why: &'static str,
    },
    /// A key mmcsim does not know.
    #[error("key '{key}' is not an fio option mmcsim knows (it may shape the I/O in a way mmcsim does not model); see the README's fio section for the options modelled")]
    UnknownKey {
        /// The key.
        key: String,
    },
    /// A key listed as modelled that no setter takes.
    #[error("key '{key}' is not modelled by mmcsim")]
    NotHandled {
        /// The key.
        key: String,
    },
}

impl OptionError {
    /// The error of a malformed value: `expected {what}`.
    pub(super) fn expected(what: &'static str) -> OptionError {
        OptionError::Expected(Cow::Borrowed(what))
    }
}

/// Why a line of an fio job file is refused, beyond one option's value
/// ([`OptionError`]): the file's structure, or a job's options together.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LineProblem {
    /// `[` without a closing `]`.
    #[error("`{text}`: expected a section header `[name]`")]
    SectionHeader {
        /// The line, trimmed.
        text: String,
    },
    /// An empty section name, or brackets inside it.
    #[error("`{text}`: expected a section name between [ and ]")]
    SectionName {
        /// The line, trimmed.
        text: String,
    },
    /// A line that is neither a section, a comment nor `key=value`.
    #[error("`{text}`: expected key=value")]
    NotKeyValue {
        /// The line, trimmed.
        text: String,
    },
    /// A key mmcsim refuses or does not know.
    #[error(transparent)]
    Key(OptionError),
    /// A key above the first section.
    #[error("key '{key}' comes before any section: put it under [global] or a [job]")]
    KeyBeforeSection {
        /// The key.
        key: String,
    },
    /// Two jobs with different seeds.
    #[error("key 'randseed' = {seed}: another job set randseed = {previous} (line {previous_line}); a run has one seed")]
    SeedTwice {
        /// This job's seed.
        seed: u64,
        /// The seed set before.
        previous: u64,
        /// Where it was set.
        previous_line: usize,
    },
    /// A stonewall after jobs whose end is known only at run time.
    #[error("key 'stonewall': the jobs above end when their I/O is done, known only at run time; mmcsim models a stonewall only after time_based jobs")]
    StonewallAfterIo,
    /// A job's options that do not fit together.
    #[error("job `{job}`: {problem}")]
    Job {
        /// The job's name.
        job: String,
        /// What does not fit.
        problem: JobProblem,
    },
    /// A job, translated, breaks a rule of synthetic jobs.
    #[error(transparent)]
    Rules(crate::workload::job_error::JobError),
}

/// A job's options that do not fit together.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobProblem {
    /// Less I/O per file than one block.
    #[error("size {bytes} bytes per file is smaller than one block of {block} bytes")]
    SizeBelowBlock {
        /// Bytes per file.
        bytes: u64,
        /// The smallest block, bytes.
        block: u64,
    },
    /// `create_on_open` on a job that reads.
    #[error("key 'create_on_open': a job that reads a file fio has not laid out reads past its end (short reads are not modelled); use it with write jobs")]
    CreateOnOpenRead,
    /// A clone's region past the end of its file.
    #[error("offset {offset} + size {size} bytes runs past the end of the {file_bytes}-byte file")]
    PastFileEnd {
        /// The clone's offset, bytes.
        offset: u64,
        /// Its size, bytes.
        size: u64,
        /// The file, bytes.
        file_bytes: u64,
    },
    /// `nrfiles` above 1 with one file name.
    #[error("key 'nrfiles' = {nrfiles} with one filename: give the files' names separated by ':' in filename, or drop filename (fio then names them jobname.N.i)")]
    NrfilesOneName {
        /// The value given.
        nrfiles: u32,
    },
    /// A file size that leaves nothing after the offset.
    #[error("key 'filesize' = {filesize}: leaves no I/O after offset {offset}")]
    FilesizeNoIo {
        /// The value given, bytes.
        filesize: u64,
        /// The offset, bytes.
        offset: u64,
    },
    /// Neither `size` nor `filesize`.
    #[error("neither size nor filesize is given: fio needs one to know how much I/O to do")]
    NoSize,
    /// `time_based` without a run time.
    #[error("time_based needs a runtime (fio would run forever)")]
    TimeBasedWithoutRuntime,
    /// A run time of 0.
    #[error("key 'runtime': expected a run time > 0")]
    ZeroRuntime,
}
