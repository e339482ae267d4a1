//! What the host's calls are waiting for, for the simulation core's stall
//! report (a run whose calls can never finish is a simulator bug, and the
//! message must say where to look).

use super::Host;
use std::fmt::Write as _;

impl Host {
    /// One line per call in progress: thread, call, bytes, the phase its
    /// task is in and its bios not yet completed; at most `limit` lines.
    pub fn describe_calls(&self, limit: usize) -> String {
        let mut s = String::new();
        let calls = (0..self.calls.id_bound() as u32)
            .filter_map(|id| self.calls.get(id).map(|c| (id, c)))
            .take(limit);
        for (id, c) in calls {
            let phase = self
                .tasks
                .iter()
                .find(|t| t.call == Some(id))
                .map_or("no task".to_string(), |t| format!("{:?}", t.phase));
            let _ = write!(
                s,
                "\n  thread {}: {:?} of {} bytes issued at {} ns, phase {phase}, {} bio(s) pending",
                c.thread, c.kind, c.bytes, c.issue, c.pending
            );
        }
        if self.calls.len() > limit {
            let _ = write!(s, "\n  ... and {} more", self.calls.len() - limit);
        }
        if let super::vfs::Mount::Fs(fs) = &self.mount {
            let state = fs.describe();
            if !state.is_empty() {
                let _ = write!(s, "\n  {state}");
            }
        }
        s
    }
}
