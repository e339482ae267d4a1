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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::SchedCtx;
    use crate::request::RqId;
    use crate::tunable::{TunableError, TunableInfo};

    /// A scheduler that holds nothing, named at construction.
    struct Named(&'static str);

    impl Elevator for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn add_request(&mut self, _ctx: &mut SchedCtx, _rq: RqId) {}
        fn merge_requests(&mut self, _ctx: &mut SchedCtx, _rq: RqId, _next: RqId) {}
        fn dispatch(&mut self, _ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
            None
        }
        fn has_work(&self) -> bool {
            false
        }
        fn tunables(&self) -> Vec<TunableInfo> {
            Vec::new()
        }
        fn set_tunable(&mut self, name: &str, _value: &str) -> Result<(), TunableError> {
            Err(TunableError::unknown(self.0, name, &[]))
        }
    }

    #[test]
    fn starts_empty_and_creates_by_name_in_registration_order() {
        let mut r = Registry::new();
        assert!(r.names().is_empty());
        r.register("a", "first", Box::new(|_| Box::new(Named("a"))));
        r.register("b", "second", Box::new(|_| Box::new(Named("b"))));
        assert_eq!(r.names(), vec!["a", "b"]);
        assert_eq!(r.description("b"), Some("second"));
        assert_eq!(r.description("c"), None);
        let e = r.create("b", &SchedParams::default()).unwrap();
        assert_eq!(e.name(), "b");
    }

    #[test]
    fn registering_a_name_again_replaces_it() {
        let mut r = Registry::new();
        r.register("a", "old", Box::new(|_| Box::new(Named("old"))));
        r.register("b", "other", Box::new(|_| Box::new(Named("b"))));
        r.register("a", "new", Box::new(|_| Box::new(Named("new"))));
        assert_eq!(r.names(), vec!["b", "a"]);
        assert_eq!(r.description("a"), Some("new"));
        let e = r.create("a", &SchedParams::default()).unwrap();
        assert_eq!(e.name(), "new");
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let mut r = Registry::new();
        r.register("noop", "", Box::new(|_| Box::new(Named("noop"))));
        r.register("deadline", "", Box::new(|_| Box::new(Named("deadline"))));
        let err = r.create("bogus", &SchedParams::default()).err().unwrap();
        assert_eq!(
            err,
            UnknownScheduler {
                name: "bogus".into(),
                valid: vec!["noop".into(), "deadline".into()]
            }
        );
        assert_eq!(
            err.to_string(),
            "unknown scheduler `bogus`; valid: noop, deadline"
        );
    }
}
