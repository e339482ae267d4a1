//! The adapter driven through whole simulations with schedulers written
//! against [`Hooks`] in Rust: a transparent FIFO matches the built-in
//! noop byte for byte, and each broken contract is kept as a failure
//! while the run still ends.

use super::*;
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{RunOptions, Simulation};
use std::path::PathBuf;

/// How a test scheduler misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// `dispatch` fails on its `n`th call.
    RaiseAt(u32),
    /// `dispatch` returns an id nobody added.
    UnknownId,
    /// `dispatch` never returns a request.
    NeverDispatch,
}

/// noop through [`Hooks`]: one FIFO, with the misbehaviour `fault`.
struct Fifo {
    queue: FifoList,
    fault: Fault,
    calls: u32,
}

impl Hooks for Fifo {
    fn optional(&self) -> Optional {
        Optional {
            merge_requests: true,
            former: true,
            latter: true,
            ..Optional::default()
        }
    }
    fn add_request(&mut self, _ctx: &mut SchedCtx, rq: RqId) -> HookResult<()> {
        self.queue.push_back(rq);
        Ok(())
    }
    fn merge_lookup(&mut self, _: &mut SchedCtx, _: &Bio) -> HookResult<Option<RqId>> {
        Ok(None)
    }
    fn allow_merge(&self, _: &SchedCtx, _: RqId, _: &Bio) -> HookResult<bool> {
        Ok(true)
    }
    fn merged(&mut self, _: &mut SchedCtx, _: RqId, _: MergeKind) -> HookResult<()> {
        Ok(())
    }
    fn merge_requests(&mut self, _: &mut SchedCtx, _rq: RqId, next: RqId) -> HookResult<()> {
        self.queue.remove(next);
        Ok(())
    }
    fn former(&self, _: &SchedCtx, rq: RqId) -> HookResult<Option<RqId>> {
        Ok(self.queue.prev(rq))
    }
    fn latter(&self, _: &SchedCtx, rq: RqId) -> HookResult<Option<RqId>> {
        Ok(self.queue.next(rq))
    }
    fn dispatch(&mut self, _: &mut SchedCtx, _force: bool) -> HookResult<Option<RqId>> {
        self.calls += 1;
        match self.fault {
            Fault::RaiseAt(n) if self.calls == n => Err(HookError("ValueError: boom".into())),
            Fault::UnknownId if self.calls == 5 => Ok(Some(123_456)),
            Fault::NeverDispatch => Ok(None),
            _ => Ok(self.queue.pop_front()),
        }
    }
    fn activate(&mut self, _: &mut SchedCtx, _: RqId) -> HookResult<()> {
        Ok(())
    }
    fn completed(&mut self, _: &mut SchedCtx, _: RqId) -> HookResult<()> {
        Ok(())
    }
    fn on_timer(&mut self, _: &mut SchedCtx) -> HookResult<()> {
        Ok(())
    }
    fn has_work(&self) -> HookResult<bool> {
        Ok(!self.queue.is_empty())
    }
    fn tunables(&self) -> HookResult<Vec<TunableInfo>> {
        Ok(Vec::new())
    }
    fn set_tunable(&mut self, name: &str, _value: &str) -> Result<(), TunableError> {
        Err(TunableError::unknown("noop", name, &[]))
    }
}

fn scenario(name: &str, scheduler: &str) -> Scenario {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../configs/scenarios")
        .join(format!("{name}.toml"));
    Scenario::load(&p, &[("scheduler.name".into(), scheduler.into())]).unwrap()
}

/// A registry whose `noop` is the hooked FIFO with `fault`; its status.
fn registry(fault: Fault) -> (Registry, SharedStatus) {
    let status = SharedStatus::default();
    let s = status.clone();
    let mut r = mmcsim::sched::builtin();
    r.register(
        "noop",
        "noop through the hook adapter",
        Box::new(move |_| {
            let traits = Traits {
                name: "noop".into(),
                blk_mq: false,
                dispatch_sort: true,
                none_is_stable: false,
            };
            let hooks = Fifo {
                queue: FifoList::new(),
                fault,
                calls: 0,
            };
            Box::new(HookElevator::new(hooks, traits, s.clone()))
        }),
    );
    (r, status)
}

fn run(sc: Scenario, r: &Registry) -> mmcsim::Result<String> {
    Ok(Simulation::with_registry(sc, r)?
        .run(RunOptions::default())?
        .to_json())
}

#[test]
fn a_transparent_hooked_fifo_gives_the_built_in_noops_report_byte_for_byte() {
    for name in ["rand16-128m", "androbench-3.4"] {
        let builtin = run(scenario(name, "noop"), &mmcsim::sched::builtin()).unwrap();
        let (r, status) = registry(Fault::None);
        let hooked = run(scenario(name, "noop"), &r).unwrap();
        assert!(builtin == hooked, "{name}: reports differ");
        let s = status.lock().unwrap();
        assert_eq!((s.failure.clone(), s.held), (None, 0), "{name}");
    }
}

#[test]
fn a_hook_that_fails_is_kept_and_the_run_still_drains() {
    let (r, status) = registry(Fault::RaiseAt(10));
    run(scenario("rand16-128m", "noop"), &r).expect("the fail-safe FIFO drains the run");
    let s = status.lock().unwrap();
    let f = s.failure.as_ref().expect("the failure is kept");
    assert_eq!(f.hook, "dispatch");
    assert!(f.to_string().contains("ValueError: boom"), "{f}");
    assert!(f.ns.is_some());
    assert_eq!(s.held, 0);
}

#[test]
fn an_unknown_request_id_is_a_contract_failure() {
    let (r, status) = registry(Fault::UnknownId);
    run(scenario("rand16-128m", "noop"), &r).unwrap();
    let s = status.lock().unwrap();
    let f = s.failure.as_ref().expect("the failure is kept");
    assert_eq!(f.hook, "dispatch");
    assert!(
        f.message.contains("123456") && f.message.contains("does not hold"),
        "{f}"
    );
}

#[test]
fn a_scheduler_that_never_dispatches_stalls_the_run_and_says_what_it_held() {
    let (r, status) = registry(Fault::NeverDispatch);
    let e = run(scenario("rand16-128m", "noop"), &r).unwrap_err();
    assert!(matches!(e, mmcsim::Error::Stalled(_)), "{e}");
    let s = status.lock().unwrap();
    assert!(s.failure.is_none());
    assert!(s.held > 0 && s.empty_dispatches > 0, "{s:?}");
}

#[test]
fn names_are_interned_once() {
    let a = intern("fifo_batch");
    let b = intern(&String::from("fifo_batch"));
    assert!(std::ptr::eq(a, b));
}
