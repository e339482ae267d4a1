//! Saved device state: a preconditioned [`Emmc`] written to a compact,
//! versioned binary file and read back instead of preconditioning again.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `MMCSIMST` |
//! | 4 | format version ([`FORMAT_VERSION`]) |
//! | 24 | geometry: channels, dies per channel, planes, blocks per plane, pages per block, 4 KiB slots per page (u32 each) |
//! | 8 | profile hash: FNV-1a 64 of what the state depends on (the device profile with its overrides, the `[precondition]` settings and the seed) |
//! | 8 | payload length in bytes |
//! | 8 | payload checksum (FNV-1a 64) |
//! | … | payload: the preconditioning summary, the version oracle, then the mapping's own state ([`super::ftl::Mapping::save_state`]) |
//!
//! Only what cannot be derived is stored: the page mapping keeps its L2P
//! table, per-block program positions and erase counts, per-stripe state,
//! clocks and counts of slots written since the last erase (version 2:
//! they tell invalid data from padding) and its write points; the physical-to-logical records, valid
//! counts and the ordered free and victim sets are rebuilt from them.
//! Version 3 adds the hybrid mapping (resolved L2P table, block program
//! positions and erase counts, superblock roles and written-slot counts,
//! log blocks, clock) and DFTL (translation-page versions, the inner page
//! mapping as above, the on-flash translations and the cached mapping
//! table in LRU order); the page mapping's payload is unchanged. A
//! saved state is taken right after preconditioning, when the write buffer
//! is empty and every timeline, cache and counter has been reset, so
//! nothing else needs saving. Loading checks the header against the
//! device the scenario builds, the checksum and the length; every refusal
//! names the file and what differs.

use super::{Emmc, PreconditionSummary};
use crate::device::nand::Geometry;

/// The saved-state format this build writes and reads.
pub const FORMAT_VERSION: u32 = 3;

const MAGIC: &[u8; 8] = b"MMCSIMST";
const HEADER_BYTES: usize = 8 + 4 + 24 + 8 + 8 + 8;

/// Why a saved state cannot be written or used (without the file name,
/// which the caller adds).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The mapping scheme has no saved-state support.
    #[error("mapping `{scheme}` does not support saved state (--save-state / --load-state): precondition in place instead")]
    Unsupported {
        /// The scheme's name.
        scheme: &'static str,
    },
    /// The device is between operations a state cannot capture; the text
    /// says which and when a state is saved.
    #[error("{0}")]
    NotAtRest(&'static str),
    /// Shorter than the header.
    #[error("{len} bytes: shorter than the {HEADER_BYTES}-byte header of a saved device state (truncated, or not a state file)")]
    ShortHeader {
        /// The file's length, bytes.
        len: usize,
    },
    /// No `MMCSIMST` magic.
    #[error("not a saved device state (the file does not start with MMCSIMST)")]
    NotAState,
    /// Another format version.
    #[error("format version {version}; this simctl reads version {FORMAT_VERSION}: save the state again with this build")]
    Version {
        /// The file's version.
        version: u32,
    },
    /// Saved for another NAND geometry.
    #[error("saved for another NAND geometry: {name} = {got}, but this device has {want}")]
    Geometry {
        /// The geometry field, e.g. `blocks_per_plane`.
        name: &'static str,
        /// The file's value.
        got: u64,
        /// This device's.
        want: u64,
    },
    /// Saved from other settings on the same geometry.
    #[error("saved from another device profile, [precondition] setting or seed than this run's (same geometry): precondition in place, or save a state with these settings")]
    OtherSettings,
    /// The payload is not as long as the header announces.
    #[error("the header announces a {announced}-byte payload but {present} bytes follow it: the file is truncated or corrupted")]
    PayloadLength {
        /// Bytes announced.
        announced: u64,
        /// Bytes present.
        present: usize,
    },
    /// The payload checksum differs.
    #[error("the payload checksum does not match: the file is corrupted")]
    Checksum,
    /// The payload ends inside a field.
    #[error("the payload ends at byte {len} of {what} (it needs {needs} bytes from payload offset {offset}): the file is truncated or corrupted")]
    Truncated {
        /// The payload's length, bytes.
        len: usize,
        /// The field.
        what: String,
        /// Bytes the field needs.
        needs: usize,
        /// Where it starts, bytes into the payload.
        offset: usize,
    },
    /// An array of another length than this device's.
    #[error("{what} has {entries} entries but this device has {expected}: the state does not fit this device")]
    Length {
        /// The array.
        what: String,
        /// Entries in the file.
        entries: u64,
        /// Entries this device has.
        expected: usize,
    },
    /// Bytes after the last field.
    #[error("{0} bytes follow the last field of the payload: the file is corrupted")]
    Trailing(usize),
    /// A field whose value no saved state can hold; the text names the
    /// field and its value.
    #[error("{detail}: the file is corrupted")]
    Corrupt {
        /// The field and its value, e.g. `block 7 has 300 pages
        /// programmed, more than 256`.
        detail: String,
    },
    /// The state loads but breaks the device's invariants.
    #[error("the restored state is inconsistent ({0}): the file is corrupted")]
    Inconsistent(Box<super::DeviceError>),
}

impl StateError {
    /// The error of a mapping scheme without saved-state support.
    pub fn unsupported(scheme: super::ftl::MappingScheme) -> StateError {
        StateError::Unsupported {
            scheme: scheme.name(),
        }
    }

    /// A corrupted field: `detail` names it and its value.
    pub fn corrupt(detail: impl Into<String>) -> StateError {
        StateError::Corrupt {
            detail: detail.into(),
        }
    }
}

/// FNV-1a, 64 bits, over little-endian 8-byte words (the tail padded with
/// zeros), then the length: a stable hash (the same in every build and on
/// every platform) for the profile key and the payload checksum, fast
/// enough for a payload of tens of megabytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut step = |w: u64| {
        h ^= w;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        step(u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    step(u64::from_le_bytes(tail));
    step(bytes.len() as u64);
    h
}

/// Appends little-endian values to a state payload.
#[derive(Debug, Default)]
pub struct StateWriter {
    buf: Vec<u8>,
}

impl StateWriter {
    /// A `u8`.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A length-prefixed `u32` array.
    pub fn u32s(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 4);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
    /// A length-prefixed `u64` array.
    pub fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 8);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Reads a state payload back, each read naming the field it wanted when
/// the payload is too short or does not fit this device.
#[derive(Debug)]
pub struct StateReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> StateReader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], StateError> {
        match self.data.get(self.pos..self.pos.saturating_add(n)) {
            Some(b) => {
                self.pos += n;
                Ok(b)
            }
            None => Err(StateError::Truncated {
                len: self.data.len(),
                what: what.to_string(),
                needs: n,
                offset: self.pos,
            }),
        }
    }
    /// A `u8`.
    pub fn u8(&mut self, what: &str) -> Result<u8, StateError> {
        Ok(self.take(1, what)?[0])
    }
    /// A `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, StateError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    /// A `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64, StateError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    fn len(&mut self, what: &str, expected: usize) -> Result<usize, StateError> {
        let n = self.u64(what)?;
        if n != expected as u64 {
            return Err(StateError::Length {
                what: what.to_string(),
                entries: n,
                expected,
            });
        }
        Ok(expected)
    }
    /// A length-prefixed `u32` array into `out`, whose length it must have.
    pub fn u32s_into(&mut self, what: &str, out: &mut [u32]) -> Result<(), StateError> {
        let n = self.len(what, out.len())?;
        let b = self.take(n * 4, what)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
            *o = u32::from_le_bytes(c.try_into().expect("4 bytes"));
        }
        Ok(())
    }
    /// A length-prefixed `u32` array of `n` entries replacing the contents
    /// of `out` (which keeps its allocation).
    pub fn u32s_replace(
        &mut self,
        what: &str,
        n: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), StateError> {
        let n = self.len(what, n)?;
        let b = self.take(n * 4, what)?;
        out.clear();
        out.extend(
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))),
        );
        Ok(())
    }
    /// A length-prefixed `u64` array into `out`, whose length it must have.
    pub fn u64s_into(&mut self, what: &str, out: &mut [u64]) -> Result<(), StateError> {
        let n = self.len(what, out.len())?;
        let b = self.take(n * 8, what)?;
        for (o, c) in out.iter_mut().zip(b.chunks_exact(8)) {
            *o = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        }
        Ok(())
    }
    /// Refuses bytes left over after the last field.
    fn finish(&self) -> Result<(), StateError> {
        if self.pos != self.data.len() {
            return Err(StateError::Trailing(self.data.len() - self.pos));
        }
        Ok(())
    }
}

fn geometry_words(g: &Geometry) -> [u32; 6] {
    [
        g.channels,
        g.dies_per_channel,
        g.planes,
        g.blocks_per_plane,
        g.pages_per_block,
        g.slots_per_page,
    ]
}

/// Writes the state of preconditioned `d` (with the `summary` of its
/// preconditioning) for the profile key `key`.
pub(crate) fn save(
    d: &Emmc,
    summary: &PreconditionSummary,
    key: &str,
) -> Result<Vec<u8>, StateError> {
    if !d.wbuf.pending().is_empty() {
        return Err(StateError::NotAtRest(
            "the write buffer holds data: a state is saved right after preconditioning",
        ));
    }
    let mut w = StateWriter::default();
    w.u64(summary.pages_filled);
    w.u64(summary.pages_overwritten);
    w.u64(summary.gc_runs);
    w.u64(summary.final_waf.to_bits());
    w.u8(summary.steady_reached as u8);
    w.u32(d.oracle.next_version());
    w.u32s(d.oracle.expected());
    d.ftl.save_state(&mut w)?;
    let payload = w.buf;
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    for x in geometry_words(&d.geo) {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&fnv1a(key.as_bytes()).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Restores a state written by [`save`] into `d`, a device freshly built
/// from the profile of `key`; returns the preconditioning summary.
pub(crate) fn load(
    d: &mut Emmc,
    bytes: &[u8],
    key: &str,
) -> Result<PreconditionSummary, StateError> {
    if bytes.len() < HEADER_BYTES {
        return Err(StateError::ShortHeader { len: bytes.len() });
    }
    if &bytes[..8] != MAGIC {
        return Err(StateError::NotAState);
    }
    let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let dword = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let version = word(8);
    if version != FORMAT_VERSION {
        return Err(StateError::Version { version });
    }
    let names = [
        "channels",
        "dies per channel",
        "planes per die",
        "blocks per plane",
        "pages per block",
        "4 KiB slots per page",
    ];
    for (k, (want, name)) in geometry_words(&d.geo).into_iter().zip(names).enumerate() {
        let got = word(12 + 4 * k);
        if got != want {
            return Err(StateError::Geometry {
                name,
                got: u64::from(got),
                want: u64::from(want),
            });
        }
    }
    if dword(36) != fnv1a(key.as_bytes()) {
        return Err(StateError::OtherSettings);
    }
    let len = dword(44);
    let payload = &bytes[HEADER_BYTES..];
    if payload.len() as u64 != len {
        return Err(StateError::PayloadLength {
            announced: len,
            present: payload.len(),
        });
    }
    if fnv1a(payload) != dword(52) {
        return Err(StateError::Checksum);
    }
    let mut r = StateReader {
        data: payload,
        pos: 0,
    };
    let summary = PreconditionSummary {
        pages_filled: r.u64("the preconditioning summary")?,
        pages_overwritten: r.u64("the preconditioning summary")?,
        gc_runs: r.u64("the preconditioning summary")?,
        final_waf: f64::from_bits(r.u64("the preconditioning summary")?),
        steady_reached: r.u8("the preconditioning summary")? != 0,
    };
    let next = r.u32("the version oracle")?;
    d.oracle
        .restore(next, |e| r.u32s_into("the version oracle", e))?;
    d.ftl.load_state(&mut r, d.oracle.expected())?;
    r.finish()?;
    // The checksum catches damage; the full oracle check (tens of ms on a
    // large device) runs in debug builds, i.e. in every test.
    if cfg!(debug_assertions) {
        d.check_integrity()
            .map_err(|e| StateError::Inconsistent(Box::new(e)))?;
    }
    Ok(summary)
}
