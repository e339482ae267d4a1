//! The table of schedulers by kernel name, open to a researcher's own.

use super::{Elevator, SchedParams};

/// Builds a scheduler instance for a queue.
pub type Factory = Box<dyn Fn(&SchedParams) -> Box<dyn Elevator> + Send + Sync>;

struct Entry {
    name: String,
    description: String,
    factory: Factory,
}

/// Schedulers by name. [`Registry::builtin`] holds the kernel's; a
/// researcher adds their own with [`Registry::register`].
pub struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Self {
        Registry {
            entries: Vec::new(),
        }
    }

    /// Every built-in scheduler.
    pub fn builtin() -> Self {
        let mut r = Registry::empty();
        r.register(
            "noop",
            "one FIFO, merging only",
            Box::new(|p| Box::new(super::noop::Noop::new(p))),
        );
        r.register(
            "deadline",
            "ascending-sector batches per direction with FIFO deadlines, reads preferred",
            Box::new(|p| Box::new(super::deadline::Deadline::new(p))),
        );
        r.register(
            "sio",
            "simple I/O: four unsorted FIFOs (sync/async x read/write) with soft deadlines",
            Box::new(|p| Box::new(super::sio::Sio::new(p))),
        );
        r.register(
            "row",
            "read over write: seven FIFOs in three priority classes, round-robin quanta, read idling",
            Box::new(|p| Box::new(super::row::Row::new(p))),
        );
        r.register(
            "fiops",
            "fair IOPS: per-process queues served by lowest virtual I/O count, no idling",
            Box::new(|p| Box::new(super::fiops::Fiops::new(p))),
        );
        r.register(
            "zen",
            "FCFS over two FIFOs with soft deadlines; as shipped, writes before reads",
            Box::new(|p| Box::new(super::zen::Zen::new(p))),
        );
        r.register(
            "vr",
            "V(R): nearest request to the head with a reversal penalty, sync/async deadlines",
            Box::new(|p| Box::new(super::vr::Vr::new(p))),
        );
        r.register(
            "bfq",
            "BFQ v7r8: per-process queues served in sector budgets by B-WF2Q+, weight raising",
            Box::new(|p| Box::new(super::bfq::Bfq::new(p))),
        );
        r.register(
            "cfq",
            "completely fair queueing: per-process sync time slices, idling, shared async queues",
            Box::new(|p| Box::new(super::cfq::Cfq::new(p))),
        );
        r.register(
            "mq-deadline",
            "blk-mq deadline: section 3 per priority class RT/BE/IDLE, strict classes with prio aging",
            Box::new(|p| Box::new(super::mq_deadline::MqDeadline::new(p))),
        );
        r.register(
            "kyber",
            "blk-mq kyber: token pools per domain (read/write/discard/other) resized to meet latency targets",
            Box::new(|p| Box::new(super::kyber::Kyber::new(p))),
        );
        r.register(
            "bfq-mq",
            "blk-mq BFQ: BFQ with weights (8 - level) x 10, wr_coeff 30, one budget timeout",
            Box::new(|p| Box::new(super::bfq_mq::new(p))),
        );
        r.register(
            "none",
            "blk-mq none: FIFO pass-through, merging only via the generic paths",
            Box::new(|p| Box::new(super::none::NoneSched::new(p))),
        );
        r
    }

    /// Adds (or replaces) scheduler `name`.
    pub fn register(&mut self, name: &str, description: &str, factory: Factory) {
        self.entries.retain(|e| e.name != name);
        self.entries.push(Entry {
            name: name.to_string(),
            description: description.to_string(),
            factory,
        });
    }

    /// Creates scheduler `name`, or explains which names exist.
    pub fn create(&self, name: &str, params: &SchedParams) -> Result<Box<dyn Elevator>, String> {
        match self.entries.iter().find(|e| e.name == name) {
            Some(e) => Ok((e.factory)(params)),
            None => Err(format!(
                "unknown scheduler `{name}`; valid: {}",
                self.names().join(", ")
            )),
        }
    }

    /// Registered names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// One-line description of scheduler `name`.
    pub fn description(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.description.as_str())
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}
