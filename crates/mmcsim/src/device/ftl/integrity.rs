//! The integrity check of the page-level FTL against the version oracle.
//!
//! Verifies that every LPN reads its newest version, that every valid slot
//! is mapped exactly once, that valid + invalid + free slots add up per
//! stripe and in total, that stripe states, free pools and victim
//! candidates agree, and that no slot above a block's program point holds
//! data. [`slot_record`] and the [`IntegrityError`] variants after
//! `FreePools` serve the incremental check of every device command
//! (`crate::device::Emmc::start_integrity_check`).

use super::block_manager::BlockManager;
use super::page_table::PageTable;
use super::{BlockState, UNMAPPED};

/// A physical slot for messages: its number, or `unmapped`.
fn slot_text(slot: u32) -> String {
    if slot == UNMAPPED {
        "unmapped".to_string()
    } else {
        format!("slot {slot}")
    }
}

/// A broken FTL invariant: a simulator bug, never a user error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntegrityError {
    /// An LPN's slot records another LPN.
    #[error("lpn {lpn} maps to slot {slot} whose p2l is {p2l}")]
    ReverseMismatch {
        /// Logical page.
        lpn: u32,
        /// Its mapped slot.
        slot: u32,
        /// The LPN the slot records (`u32::MAX` = none).
        p2l: u32,
    },
    /// An LPN reads other data than the host last wrote.
    #[error("lpn {lpn}: read version {got}, newest written {want}")]
    StaleData {
        /// Logical page.
        lpn: u32,
        /// Version read (0 = unmapped).
        got: u32,
        /// Newest version written (0 = never written or trimmed).
        want: u32,
    },
    /// The planes of a stripe are programmed to different pages.
    #[error("stripe {stripe}: planes programmed to different pages")]
    UnevenStripe {
        /// Stripe.
        stripe: u32,
    },
    /// A slot not yet programmed holds data.
    #[error("slot {slot} above block {blk}'s program point holds lpn {lpn}")]
    AboveProgramPoint {
        /// Slot.
        slot: u32,
        /// Its block.
        blk: u32,
        /// The LPN it records.
        lpn: u32,
    },
    /// A valid slot is not where its LPN maps.
    #[error("slot {slot} holds lpn {lpn} which is not mapped to it")]
    Orphan {
        /// Slot.
        slot: u32,
        /// The LPN it records.
        lpn: u32,
    },
    /// A stripe's valid count disagrees with its slots.
    #[error("stripe {stripe}: valid count {recorded} but {counted} slots valid")]
    ValidCount {
        /// Stripe.
        stripe: u32,
        /// The block manager's count.
        recorded: u32,
        /// Valid slots found.
        counted: u32,
    },
    /// A stripe's state disagrees with its pages or its pool.
    #[error("{state:?} stripe {stripe}: {problem}")]
    StripeState {
        /// Stripe.
        stripe: u32,
        /// Its recorded state.
        state: BlockState,
        /// What is wrong.
        problem: &'static str,
    },
    /// Valid, invalid and free slots do not add up to the array.
    #[error("valid + invalid + free slots ({sum}) do not add up to the array ({slots})")]
    SlotTotal {
        /// Their sum.
        sum: u64,
        /// Slots of the array.
        slots: u64,
    },
    /// Mapped LPNs and valid slots differ in number.
    #[error("{mapped} mapped lpns but {valid} valid slots")]
    MappedCount {
        /// Mapped LPNs.
        mapped: u64,
        /// Valid slots.
        valid: u64,
    },
    /// The mapping as the controller sees it (cached entry or translation
    /// page on flash) differs from where the data is.
    #[error(
        "lpn {lpn}: translation says slot {view}, data is in slot {truth} (u32::MAX = unmapped)"
    )]
    Translation {
        /// Logical page.
        lpn: u32,
        /// Slot the cached mapping table or the translation page names.
        view: u32,
        /// Slot holding the newest data.
        truth: u32,
    },
    /// Free pools and free stripes differ in number.
    #[error("{pooled} stripes in free pools, {free} free stripes")]
    FreePools {
        /// Stripes in the pools.
        pooled: usize,
        /// Stripes in state free.
        free: usize,
    },
    /// An LPN's translation differs from the one the FTL last reported in
    /// its journal: a change was made without being reported.
    #[error("lpn {lpn} is mapped to {} but the FTL last reported {} for it", slot_text(*mapped), slot_text(*reported))]
    Unreported {
        /// Logical page.
        lpn: u32,
        /// Its slot in the table ([`UNMAPPED`] = none).
        mapped: u32,
        /// Its slot as last reported ([`UNMAPPED`] = none).
        reported: u32,
    },
    /// An LPN maps to a slot that holds no valid data.
    #[error(
        "lpn {lpn} maps to slot {slot}, which holds no valid data (expected the lpn's newest data)"
    )]
    Unbacked {
        /// Logical page.
        lpn: u32,
        /// Its mapped slot.
        slot: u32,
    },
    /// A slot was reported as the new home of an LPN while another LPN
    /// still mapped to it.
    #[error("slot {slot} reported as the new home of lpn {lpn} while lpn {holder} still maps to it (expected a slot mapped by no lpn)")]
    DoubleMapped {
        /// Physical slot.
        slot: u32,
        /// The LPN it was given to.
        lpn: u32,
        /// The LPN still mapped to it.
        holder: u32,
    },
    /// A valid slot's record names another LPN than the one mapped to it.
    #[error("slot {slot} holds lpn {holds} but lpn {mapped_by} is mapped to it")]
    SlotOwner {
        /// Physical slot.
        slot: u32,
        /// The LPN its record names.
        holds: u32,
        /// The LPN mapped to it, as reported.
        mapped_by: u32,
    },
    /// A reported LPN or slot lies outside the device.
    #[error("reported {what} {value} is out of range (the device has {limit})")]
    OutOfRange {
        /// `lpn` or `slot`.
        what: &'static str,
        /// The number reported.
        value: u32,
        /// How many there are.
        limit: u32,
    },
}

/// The `(lpn, version)` record of the valid data in `slot`: its
/// physical-to-logical entry and stored version, provided the slot lies
/// below its block's program point (`None` otherwise, or when invalid).
pub(super) fn slot_record(blocks: &BlockManager, slot: u32) -> Option<(u32, u32)> {
    let g = blocks.geometry();
    let lpn = blocks.owner(slot)?;
    let programmed = blocks.nand.programmed_pages(g.slot_block(slot));
    (g.slot_page(slot) < programmed).then(|| (lpn, blocks.slot_version(slot)))
}

/// A test-only damage to a page-level FTL's state.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub enum Corruption {
    /// Points `lpn` at `slot`, in the journal when `reported`, else
    /// silently; the previous slot keeps its record.
    L2p {
        /// Logical page.
        lpn: u32,
        /// The wrong slot.
        slot: u32,
        /// Whether the change goes through the journal.
        reported: bool,
    },
    /// Overwrites the version recorded with the data in `slot`.
    Version {
        /// Physical slot.
        slot: u32,
        /// The wrong version.
        version: u32,
    },
}

/// Applies `c` to `table` and `blocks` (test-only).
#[cfg(test)]
pub(super) fn corrupt(table: &mut PageTable, blocks: &mut BlockManager, c: Corruption) {
    match c {
        Corruption::L2p {
            lpn,
            slot,
            reported,
        } => {
            let was = table.journal_mut().is_recording();
            table.journal_mut().set_recording(was && reported);
            table.update(lpn, slot);
            table.journal_mut().set_recording(was);
        }
        Corruption::Version { slot, version } => blocks.slot_version[slot as usize] = version,
    }
}

/// Checks `table` and `blocks` against the oracle: `expected[lpn]` is the
/// newest version the host wrote (0 = never written or trimmed) and
/// `pending` the `(lpn, version)` entries still in the write buffer, oldest
/// first.
pub(super) fn check(
    table: &PageTable,
    blocks: &BlockManager,
    pending: &[(u32, u32)],
    expected: &[u32],
) -> Result<(), IntegrityError> {
    check_versions(table, blocks, pending, expected)?;
    let mut totals = SlotTotals::default();
    for sb in 0..blocks.valid.len() as u32 {
        let stripe = check_stripe_slots(table, blocks, sb)?;
        check_stripe_state(blocks, sb, &stripe)?;
        totals.valid += stripe.valid as u64;
        totals.invalid += stripe.invalid;
        totals.free += stripe.free;
    }
    check_totals(table, blocks, &totals)
}

/// The slots of one stripe (or of the whole array) by kind.
#[derive(Default)]
struct SlotTotals {
    /// Slots holding the mapped copy of a page.
    valid: u64,
    /// Programmed slots holding no mapped copy.
    invalid: u64,
    /// Slots above their block's program point.
    free: u64,
}

/// What walking one stripe found.
struct StripeCount {
    /// Valid slots.
    valid: u32,
    /// Programmed slots holding no mapped copy.
    invalid: u64,
    /// Slots above the program point.
    free: u64,
    /// Pages programmed in each of the stripe's blocks.
    pages: u32,
}

/// Each LPN's newest version (from the write buffer's `pending`, else its
/// mapped slot, whose reverse entry must name it back) is the oracle's
/// `expected`.
fn check_versions(
    table: &PageTable,
    blocks: &BlockManager,
    pending: &[(u32, u32)],
    expected: &[u32],
) -> Result<(), IntegrityError> {
    let lpns = table.lpns();
    let mut newest_pending = vec![0u32; lpns as usize];
    for &(lpn, ver) in pending {
        newest_pending[lpn as usize] = ver;
    }
    for lpn in 0..lpns {
        let want = expected[lpn as usize];
        let got = if newest_pending[lpn as usize] != 0 {
            newest_pending[lpn as usize]
        } else {
            match table.lookup(lpn) {
                Some(slot) => {
                    let p2l = blocks.p2l[slot as usize];
                    if p2l != lpn {
                        return Err(IntegrityError::ReverseMismatch { lpn, slot, p2l });
                    }
                    blocks.slot_version(slot)
                }
                None => 0,
            }
        };
        if got != want {
            return Err(IntegrityError::StaleData { lpn, got, want });
        }
    }
    Ok(())
}

/// Walks stripe `sb`: its blocks are programmed evenly, each valid slot
/// lies below the program point and is the one its LPN maps to, and the
/// count matches the recorded valid count.
fn check_stripe_slots(
    table: &PageTable,
    blocks: &BlockManager,
    sb: u32,
) -> Result<StripeCount, IntegrityError> {
    let g = *blocks.geometry();
    let lpns = table.lpns();
    let spp = g.slots_per_page;
    let pages = blocks.nand.programmed_pages(blocks.stripe_block(sb, 0));
    let mut count = StripeCount {
        valid: 0,
        invalid: 0,
        free: 0,
        pages,
    };
    for pl in 0..g.planes {
        let blk = blocks.stripe_block(sb, pl);
        if blocks.nand.programmed_pages(blk) != pages {
            return Err(IntegrityError::UnevenStripe { stripe: sb });
        }
        let programmed = pages * spp;
        for i in 0..g.slots_per_block() {
            let slot = blk * g.slots_per_block() + i;
            let Some(lpn) = blocks.owner(slot) else {
                continue;
            };
            if i >= programmed {
                return Err(IntegrityError::AboveProgramPoint { slot, blk, lpn });
            }
            if lpn >= lpns || table.lookup(lpn) != Some(slot) {
                return Err(IntegrityError::Orphan { slot, lpn });
            }
            count.valid += 1;
        }
        count.invalid += programmed as u64;
        count.free += (g.slots_per_block() - programmed) as u64;
    }
    count.invalid -= count.valid as u64;
    if count.valid != blocks.valid(sb) {
        return Err(IntegrityError::ValidCount {
            stripe: sb,
            recorded: blocks.valid(sb),
            counted: count.valid,
        });
    }
    Ok(count)
}

/// Stripe `sb`'s state agrees with where it is listed: free ones are
/// erased and pooled, full ones complete and victim candidates, open ones
/// a write point, collecting ones the collection in progress.
fn check_stripe_state(
    blocks: &BlockManager,
    sb: u32,
    count: &StripeCount,
) -> Result<(), IntegrityError> {
    let g = *blocks.geometry();
    let die = blocks.stripe_die(sb);
    let state = blocks.state[sb as usize];
    let problem = match state {
        BlockState::Free if count.pages != 0 || !blocks.in_free_pool(sb) => {
            Some("programmed or not in the free pool")
        }
        BlockState::Full
            if count.pages != g.pages_per_block || !blocks.is_candidate(count.valid, sb) =>
        {
            Some("not full or not a victim candidate")
        }
        BlockState::Open if !blocks.is_write_point(die, sb) => Some("no write point"),
        BlockState::Collecting if blocks.in_progress(die).map(|(v, _)| v) != Some(sb) => {
            Some("left in collecting state")
        }
        _ => None,
    };
    match problem {
        Some(problem) => Err(IntegrityError::StripeState {
            stripe: sb,
            state,
            problem,
        }),
        None => Ok(()),
    }
}

/// The array's slots add up, the mapped pages are the valid slots, and the
/// free pools hold exactly the free stripes.
fn check_totals(
    table: &PageTable,
    blocks: &BlockManager,
    totals: &SlotTotals,
) -> Result<(), IntegrityError> {
    let g = *blocks.geometry();
    let sum = totals.valid + totals.invalid + totals.free;
    if sum != g.slots() as u64 {
        return Err(IntegrityError::SlotTotal {
            sum,
            slots: g.slots() as u64,
        });
    }
    let mapped = table.mapped();
    if mapped != totals.valid {
        return Err(IntegrityError::MappedCount {
            mapped,
            valid: totals.valid,
        });
    }
    let pooled: usize = blocks.free.iter().map(|s| s.len()).sum();
    let free = blocks
        .state
        .iter()
        .filter(|&&s| s == BlockState::Free)
        .count();
    if pooled != free {
        return Err(IntegrityError::FreePools { pooled, free });
    }
    Ok(())
}
