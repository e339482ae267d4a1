//! A table of schedulers by kernel name, like the kernel's list of
//! registered elevators (`elv_register`). It starts empty: the simulator
//! fills one with its built-in schedulers, and a researcher adds their own.

use crate::elevator::Elevator;
use crate::params::SchedParams;

/// Builds a scheduler instance for a queue.
pub type Factory = Box<dyn Fn(&SchedParams) -> Box<dyn Elevator> + Send + Sync>;

/// The error of [`Registry::create`] for a name nobody registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler `{name}`; valid: {}", .valid.join(", "))]
pub struct UnknownScheduler {
    /// The name asked for.
    pub name: String,
    /// Every registered name, in registration order.
    pub valid: Vec<String>,
}

/// One registered scheduler.
struct Entry {
    name: String,
    description: String,
    factory: Factory,
}

/// Schedulers by name, in registration order.
#[derive(Default)]
pub struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds scheduler `name` with a one-line `description`, replacing any
    /// scheduler already registered under that name.
    pub fn register(&mut self, name: &str, description: &str, factory: Factory) {
        self.entries.retain(|e| e.name != name);
        self.entries.push(Entry {
            name: name.to_string(),
            description: description.to_string(),
            factory,
        });
    }

    /// Creates scheduler `name` for a queue with `params`.
    pub fn create(
        &self,
        name: &str,
        params: &SchedParams,
    ) -> Result<Box<dyn Elevator>, UnknownScheduler> {
        match self.entries.iter().find(|e| e.name == name) {
            Some(e) => Ok((e.factory)(params)),
            None => Err(UnknownScheduler {
                name: name.to_string(),
                valid: self.names().into_iter().map(String::from).collect(),
            }),
        }
    }

    /// Registered names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// One-line description of scheduler `name`, if it is registered.
    pub fn description(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.description.as_str())
    }
}
