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
            "cfq",
            "completely fair queueing: per-process sync time slices, idling, shared async queues",
            Box::new(|p| Box::new(super::cfq::Cfq::new(p))),
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
