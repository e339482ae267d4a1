//! A scheduler whose hooks live outside Rust (in Python), plugged into the
//! block layer through the [`Elevator`] trait like any built-in one.
//!
//! [`Hooks`] is the fallible form of the elevator hooks: each call may
//! fail (a Python exception). [`HookElevator`] adapts a `Hooks` to
//! [`Elevator`] and checks the contract the block layer relies on:
//!
//! * a request id the scheduler hands back (`dispatch`, `merge_lookup`,
//!   `former`, `latter`) must be one it holds (added, not yet dispatched
//!   or merged away);
//! * `has_work` must be true while it holds a request.
//!
//! The first failure — a hook that raised, or broke the contract — is
//! kept in the shared [`HookStatus`] with the hook's name and simulated
//! time. The block layer cannot be stopped from inside a hook, so from
//! then on the adapter stops calling the hooks and serves the requests it
//! holds in arrival order (a FIFO, like noop): the run drains quickly and
//! deterministically instead of hanging, and the caller raises the kept
//! failure instead of using the report. A scheduler that holds requests
//! and never dispatches them leaves the calls waiting: the simulation's
//! stall watchdog ends the run, and [`HookStatus::held`] says how many
//! requests the scheduler still held.

use mmcsim_elevator::types::Ns;
use mmcsim_elevator::{
    Bio, Elevator, FifoList, MergeKind, RqId, SchedCtx, TunableError, TunableInfo,
};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

/// Why a hook call failed: its message (a Python exception's type and
/// text, with the traceback's last frames).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookError(pub String);

/// What a hook call returns.
pub type HookResult<T> = Result<T, HookError>;

/// The optional hooks a [`Hooks`] implementation may leave out; the
/// adapter then does what the [`Elevator`] trait's default does without
/// calling it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Optional {
    /// `merge_lookup` is implemented.
    pub merge_lookup: bool,
    /// `allow_merge` is implemented.
    pub allow_merge: bool,
    /// `merged` is implemented.
    pub merged: bool,
    /// `merge_requests` is implemented.
    pub merge_requests: bool,
    /// `former` is implemented.
    pub former: bool,
    /// `latter` is implemented.
    pub latter: bool,
    /// `activate` is implemented.
    pub activate: bool,
    /// `completed` is implemented.
    pub completed: bool,
    /// `on_timer` is implemented.
    pub on_timer: bool,
}

/// The elevator hooks, each fallible (see [`Elevator`] for what each one
/// means; the names are the same).
pub trait Hooks: Send + 'static {
    /// Which optional hooks are implemented.
    fn optional(&self) -> Optional;
    /// `elevator_add_req_fn`.
    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) -> HookResult<()>;
    /// `elevator_merge_fn`.
    fn merge_lookup(&mut self, ctx: &mut SchedCtx, bio: &Bio) -> HookResult<Option<RqId>>;
    /// `elevator_allow_merge_fn`.
    fn allow_merge(&self, ctx: &SchedCtx, rq: RqId, bio: &Bio) -> HookResult<bool>;
    /// `elevator_merged_fn`.
    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) -> HookResult<()>;
    /// `elevator_merge_req_fn`.
    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) -> HookResult<()>;
    /// `elevator_former_req_fn`.
    fn former(&self, ctx: &SchedCtx, rq: RqId) -> HookResult<Option<RqId>>;
    /// `elevator_latter_req_fn`.
    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> HookResult<Option<RqId>>;
    /// `elevator_dispatch_fn`.
    fn dispatch(&mut self, ctx: &mut SchedCtx, force: bool) -> HookResult<Option<RqId>>;
    /// `elevator_activate_req_fn`.
    fn activate(&mut self, ctx: &mut SchedCtx, rq: RqId) -> HookResult<()>;
    /// `elevator_completed_req_fn`.
    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) -> HookResult<()>;
    /// The scheduler's timer fired.
    fn on_timer(&mut self, ctx: &mut SchedCtx) -> HookResult<()>;
    /// True while the scheduler holds requests.
    fn has_work(&self) -> HookResult<bool>;
    /// Every tunable, in sysfs order.
    fn tunables(&self) -> HookResult<Vec<TunableInfo>>;
    /// Sets tunable `name` from its sysfs text.
    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError>;
}

/// Fixed facts of a hooked scheduler, read once when it is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traits {
    /// Kernel name, as the report shows it.
    pub name: String,
    /// Informational blk-mq flag ([`Elevator::blk_mq`]).
    pub blk_mq: bool,
    /// Dispatched requests go through `elv_dispatch_sort`
    /// ([`Elevator::dispatch_sort`]).
    pub dispatch_sort: bool,
    /// A `None` from `dispatch` stays `None` until the next add, timer or
    /// tunable change ([`Elevator::none_is_stable`]).
    pub none_is_stable: bool,
}

/// The first failure of a hooked scheduler, and what it still held when
/// the run ended; shared between the adapter (inside the simulation) and
/// the caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookStatus {
    /// The first failure: `hook` at simulated time `ns`, and why.
    pub failure: Option<Failure>,
    /// Requests the scheduler held when the adapter was dropped (the end
    /// of the run, or the run's error).
    pub held: usize,
    /// Calls of `dispatch` that answered `None` while the scheduler held
    /// requests.
    pub empty_dispatches: u64,
}

/// A hook that raised or broke the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The hook (`dispatch`, `add_request`, ...).
    pub hook: &'static str,
    /// Simulated time of the call, ns (`None` for a hook called without
    /// the clock: `has_work`, `tunables`).
    pub ns: Option<Ns>,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ns {
            Some(ns) => write!(
                f,
                "hook `{}` at simulated time {ns} ns: {}",
                self.hook, self.message
            ),
            None => write!(f, "hook `{}`: {}", self.hook, self.message),
        }
    }
}

/// The status handle a caller keeps while the adapter runs.
pub type SharedStatus = Arc<Mutex<HookStatus>>;

/// A `&'static str` for a tunable name given at run time (the report's
/// [`TunableInfo::name`] is `&'static str`): each distinct name is leaked
/// once and reused, so memory is bounded by the names ever used.
pub fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(s);
    s
}

/// [`Hooks`] adapted to [`Elevator`], with the contract checks and the
/// fail-safe FIFO described in the module documentation.
pub struct HookElevator<H: Hooks> {
    hooks: H,
    traits: Traits,
    optional: Optional,
    /// Requests the scheduler holds, in arrival order.
    held: FifoList,
    /// True after the first failure: the hooks are no longer called.
    failed: bool,
    status: SharedStatus,
}

impl<H: Hooks> HookElevator<H> {
    /// Adapts `hooks` with `traits`; failures go to `status`.
    pub fn new(hooks: H, traits: Traits, status: SharedStatus) -> Self {
        let optional = hooks.optional();
        HookElevator {
            hooks,
            traits,
            optional,
            held: FifoList::with_capacity(256),
            failed: false,
            status,
        }
    }

    /// The hooks, for a caller that knows the type.
    pub fn hooks(&self) -> &H {
        &self.hooks
    }

    fn status(&self) -> std::sync::MutexGuard<'_, HookStatus> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the first failure and switches to the fail-safe FIFO.
    fn fail(&mut self, hook: &'static str, ns: Ns, message: String) {
        if !self.failed {
            self.failed = true;
            self.status().failure = Some(Failure {
                hook,
                ns: Some(ns),
                message,
            });
        }
    }

    /// `r`'s value, or `fallback` after recording its error.
    fn check<T>(&mut self, hook: &'static str, ns: Ns, r: HookResult<T>, fallback: T) -> T {
        match r {
            Ok(v) => v,
            Err(HookError(m)) => {
                self.fail(hook, ns, m);
                fallback
            }
        }
    }

    /// `id` if the scheduler holds it, else `None` after recording that
    /// `hook` returned a request it does not hold.
    fn held_id(&mut self, hook: &'static str, ns: Ns, id: Option<RqId>) -> Option<RqId> {
        let id = id?;
        if self.held.contains(id) {
            return Some(id);
        }
        let n = self.held.len();
        self.fail(
            hook,
            ns,
            format!("returned request id {id}, which the scheduler does not hold (it holds {n} request(s): ids come from add_request and leave through dispatch or merge_requests)"),
        );
        None
    }
}

impl<H: Hooks> Drop for HookElevator<H> {
    fn drop(&mut self) {
        let n = self.held.len();
        self.status().held = n;
    }
}

impl<H: Hooks> Elevator for HookElevator<H> {
    fn name(&self) -> &str {
        &self.traits.name
    }

    fn blk_mq(&self) -> bool {
        self.traits.blk_mq
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        self.held.push_back(rq);
        if !self.failed {
            let r = self.hooks.add_request(ctx, rq);
            self.check("add_request", ctx.now, r, ());
        }
    }

    fn merge_lookup(&mut self, ctx: &mut SchedCtx, bio: &Bio) -> Option<RqId> {
        if self.failed || !self.optional.merge_lookup {
            return None;
        }
        let r = self.hooks.merge_lookup(ctx, bio);
        let id = self.check("merge_lookup", ctx.now, r, None);
        self.held_id("merge_lookup", ctx.now, id)
    }

    fn allow_merge(&self, ctx: &SchedCtx, rq: RqId, bio: &Bio) -> bool {
        if self.failed || !self.optional.allow_merge {
            return true;
        }
        // `&self`: a failure here is recorded in the shared status and
        // takes effect (fail-safe FIFO) at the next `&mut self` hook.
        match self.hooks.allow_merge(ctx, rq, bio) {
            Ok(v) => v,
            Err(HookError(m)) => {
                let mut s = self.status();
                if s.failure.is_none() {
                    s.failure = Some(Failure {
                        hook: "allow_merge",
                        ns: Some(ctx.now),
                        message: m,
                    });
                }
                false
            }
        }
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if !self.failed && self.optional.merged {
            let r = self.hooks.merged(ctx, rq, kind);
            self.check("merged", ctx.now, r, ());
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        self.held.remove(next);
        if !self.failed && self.optional.merge_requests {
            let r = self.hooks.merge_requests(ctx, rq, next);
            self.check("merge_requests", ctx.now, r, ());
        }
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        if self.failed || !self.optional.former {
            return None;
        }
        let id = self.hooks.former(ctx, rq).ok().flatten()?;
        self.held.contains(id).then_some(id)
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        if self.failed || !self.optional.latter {
            return None;
        }
        let id = self.hooks.latter(ctx, rq).ok().flatten()?;
        self.held.contains(id).then_some(id)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, force: bool) -> Option<RqId> {
        if !self.failed && self.status().failure.is_some() {
            // A `&self` hook failed since the last call.
            self.failed = true;
        }
        if self.failed {
            return self.held.pop_front();
        }
        let r = self.hooks.dispatch(ctx, force);
        let id = self.check("dispatch", ctx.now, r, None);
        let id = self.held_id("dispatch", ctx.now, id);
        if self.failed {
            return self.held.pop_front();
        }
        match id {
            Some(id) => {
                self.held.remove(id);
                Some(id)
            }
            None => {
                if !self.held.is_empty() {
                    self.status().empty_dispatches += 1;
                }
                None
            }
        }
    }

    fn none_is_stable(&self) -> bool {
        self.traits.none_is_stable
    }

    fn dispatch_sort(&self) -> bool {
        self.traits.dispatch_sort
    }

    fn activate(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        if !self.failed && self.optional.activate {
            let r = self.hooks.activate(ctx, rq);
            self.check("activate", ctx.now, r, ());
        }
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        if !self.failed && self.optional.completed {
            let r = self.hooks.completed(ctx, rq);
            self.check("completed", ctx.now, r, ());
        }
    }

    fn on_timer(&mut self, ctx: &mut SchedCtx) {
        if !self.failed && self.optional.on_timer {
            let r = self.hooks.on_timer(ctx);
            self.check("on_timer", ctx.now, r, ());
        }
    }

    fn has_work(&self) -> bool {
        let holds = !self.held.is_empty();
        if self.failed {
            return holds;
        }
        match self.hooks.has_work() {
            Ok(true) => true,
            Ok(false) if !holds => false,
            outcome => {
                let message = match outcome {
                    Err(HookError(m)) => m,
                    _ => format!(
                        "returned False while the scheduler holds {} request(s) (ids added and not yet dispatched or merged away)",
                        self.held.len()
                    ),
                };
                let mut s = self.status();
                if s.failure.is_none() {
                    s.failure = Some(Failure {
                        hook: "has_work",
                        ns: None,
                        message,
                    });
                }
                holds
            }
        }
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        // Asked when the report is built; a failure there is kept like
        // any other (the run's result is then not used).
        match self.hooks.tunables() {
            Ok(v) => v,
            Err(HookError(m)) => {
                let mut s = self.status();
                if s.failure.is_none() {
                    s.failure = Some(Failure {
                        hook: "tunables",
                        ns: None,
                        message: m,
                    });
                }
                Vec::new()
            }
        }
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        self.hooks.set_tunable(name, value)
    }
}

#[cfg(test)]
mod tests;
