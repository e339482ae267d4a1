//! Errors of the device model.
//!
//! Configuration errors are reported while a profile is validated
//! ([`crate::Error::Setting`], with the file, section and key); what remains
//! here are broken invariants — simulator or driver bugs, never user
//! errors — typed so a caller can tell them apart; each converts into
//! [`crate::Error::Device`].

use super::ftl::IntegrityError;
use super::host_interface::CommandError;
use super::integrity_check::Violation;

/// A device-model error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The FTL disagrees with the version oracle or its own accounting.
    #[error("FTL integrity: {0}")]
    Integrity(#[from] IntegrityError),
    /// The per-command integrity check failed (`--check-integrity`).
    #[error("FTL {0}")]
    Violation(#[from] Violation),
    /// The mapping scheme does not report its translation changes, so the
    /// per-command integrity check cannot run on it.
    #[error("--check-integrity: the {0} mapping does not report its translation changes (Mapping::journal), so it cannot be checked per command")]
    IntegrityUnsupported(&'static str),
    /// The driver sent a command sequence that does not fit its request.
    #[error("MMC command: {0}")]
    Command(#[from] CommandError),
}
