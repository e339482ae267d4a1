//! Priority queue of timed events with FIFO tie-breaking.

use crate::types::Ns;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// A queued event. `key` is `time << 64 | seq`: one `u128` comparison
/// orders entries exactly as the pair `(time, seq)` would.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn time(&self) -> Ns {
        (self.key >> 64) as Ns
    }
}

impl<E> PartialEq for Entry<E> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline]
    fn lt(&self, other: &Self) -> bool {
        other.key < self.key
    }
    #[inline]
    fn le(&self, other: &Self) -> bool {
        other.key <= self.key
    }
    #[inline]
    fn gt(&self, other: &Self) -> bool {
        other.key > self.key
    }
    #[inline]
    fn ge(&self, other: &Self) -> bool {
        other.key >= self.key
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The latest simulated time, ns: 2^62 ns, about 146 years. Every time
/// that enters the simulation (scenario times, trace times after rebasing
/// and speed scaling, think times) is checked against it where it is read,
/// with an error naming the job, field or trace line; since the clock and
/// each input are at most 2^62, one sum of the two cannot overflow a u64,
/// and an event scheduled beyond the limit anyway stops the run with an
/// error ([`EventQueue::overflow`]) instead of wrapping.
pub const MAX_SIM_NS: Ns = 1 << 62;

/// [`MAX_SIM_NS`] for messages.
pub const MAX_SIM_TEXT: &str = "2^62 ns (about 146 years)";

/// The simulation's event queue: events ordered by `(time, sequence number)`.
///
/// The heap's storage grows to the high-water mark of pending events and is
/// reused afterwards, so steady-state pushes do not allocate.
///
/// The earliest pending event is often the one just scheduled (a stage's
/// next step comes before anything else pending): it waits in a one-entry
/// front slot, earlier than everything in the heap, so such a push and its
/// pop skip the heap. The order is the same: keys are unique.
///
/// Work a handler defers to right after itself (an interrupt's completions
/// climbing the stack, so that no stage runs inside another's method) goes
/// in a lane of its own ([`EventQueue::immediately`]): it runs at the
/// current time before anything else pending, in the order it was queued,
/// exactly where a nested call would have run.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// Events to run at the current time before every other, in order.
    immediate: VecDeque<E>,
    /// An entry earlier than every entry of `heap`, if any.
    front: Option<Entry<E>>,
    next_seq: u64,
    now: Ns,
    /// The first time scheduled beyond [`MAX_SIM_NS`] (the event was
    /// dropped).
    overflow: Option<Ns>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time 0.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            immediate: VecDeque::with_capacity(64),
            front: None,
            next_seq: 0,
            now: 0,
            overflow: None,
        }
    }

    /// Current simulated time: the time of the last popped event, in ns.
    pub fn now(&self) -> Ns {
        self.now
    }

    /// Schedules `event` at absolute time `time` (ns). A time in the past is
    /// moved to now: the clock never runs backwards.
    /// An event beyond [`MAX_SIM_NS`] is not queued: it is remembered for
    /// [`EventQueue::overflow`], which the run loop checks.
    pub fn push(&mut self, time: Ns, event: E) {
        if time > MAX_SIM_NS {
            self.overflow.get_or_insert(time);
            return;
        }
        let time = time.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry {
            key: (time as u128) << 64 | seq as u128,
            event,
        };
        match &mut self.front {
            Some(f) if e.key < f.key => {
                let old = std::mem::replace(f, e);
                self.heap.push(old);
            }
            Some(_) => self.heap.push(e),
            None if self.heap.peek().is_none_or(|h| e.key < h.key) => self.front = Some(e),
            None => self.heap.push(e),
        }
    }

    /// Schedules a stage's own event at absolute time `time` (ns): every
    /// stage defines its events and the simulation core's event type
    /// converts from each, so a stage never names the core's type.
    pub fn at<T: Into<E>>(&mut self, time: Ns, event: T) {
        self.push(time, event.into());
    }

    /// Queues a stage's own `event` to run at the current time, after the
    /// event being handled and before every other pending event; such
    /// events run in the order they were queued. This is how a handler
    /// hands work to another stage without calling it (an interrupt's
    /// completions): the work runs as if called at the end of the handler.
    pub fn immediately<T: Into<E>>(&mut self, event: T) {
        self.immediate.push_back(event.into());
    }

    /// Schedules `event` `delay` ns from now.
    pub fn push_after(&mut self, delay: Ns, event: E) {
        self.push(self.now.saturating_add(delay), event);
    }

    /// Removes and returns the earliest event, advancing the clock to it.
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        if let Some(e) = self.immediate.pop_front() {
            return Some((self.now, e));
        }
        let e = match self.front.take() {
            Some(e) => e,
            None => self.heap.pop()?,
        };
        let time = e.time();
        self.now = time;
        Some((time, e.event))
    }

    /// Time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<Ns> {
        if !self.immediate.is_empty() {
            return Some(self.now);
        }
        self.front
            .as_ref()
            .or_else(|| self.heap.peek())
            .map(|e| e.time())
    }

    /// The first time an event was scheduled at beyond [`MAX_SIM_NS`],
    /// if any (that event was dropped: the run must stop with an error).
    pub fn overflow(&self) -> Option<Ns> {
        self.overflow
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + usize::from(self.front.is_some()) + self.immediate.len()
    }

    /// True when every pending event satisfies `pred` (cost: one call per
    /// pending event).
    pub fn all_pending(&self, pred: impl Fn(&E) -> bool) -> bool {
        self.immediate.iter().all(&pred)
            && self
                .front
                .iter()
                .chain(self.heap.iter())
                .all(|e| pred(&e.event))
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.is_empty() && self.immediate.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_pop_in_insertion_order_and_time_never_goes_back() {
        let mut q = EventQueue::new();
        q.push(50, 'c');
        q.push(10, 'a');
        q.push(50, 'd');
        q.push(10, 'b');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, 'a'), (10, 'b'), (50, 'c'), (50, 'd')]);
        // A push into the past lands at the current time.
        q.push(5, 'e');
        assert_eq!(q.pop(), Some((50, 'e')));
    }

    #[test]
    fn immediate_events_run_next_in_queue_order() {
        let mut q = EventQueue::new();
        q.push(10, 'a');
        q.push(10, 'b');
        assert_eq!(q.pop(), Some((10, 'a')));
        // Handling 'a' schedules 'c' at the same time, then defers 'd' and
        // 'e': they run before 'b' and 'c', as nested calls would have.
        q.push(10, 'c');
        q.immediately('d');
        q.immediately('e');
        assert_eq!(q.len(), 4);
        assert_eq!(q.peek_time(), Some(10));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, 'd'), (10, 'e'), (10, 'b'), (10, 'c')]);
        assert!(q.is_empty());
    }

    #[test]
    fn front_slot_keeps_time_then_insertion_order() {
        // Random pushes (earlier, equal and later times, into the past)
        // and pops against a sorted model.
        let mut q = EventQueue::new();
        let mut model: Vec<(Ns, u64, u32)> = Vec::new();
        let (mut seq, mut x) = (0u64, 12_345u64);
        for i in 0..20_000u32 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (x >> 33) as u32;
            if r % 5 < 3 {
                let t = q.now() + Ns::from(r % 7) * 10;
                let t = if r % 11 == 0 { t.saturating_sub(5) } else { t };
                q.push(t, i);
                model.push((t.max(q.now()), seq, i));
                seq += 1;
            } else {
                model.sort_unstable();
                let want = (!model.is_empty()).then(|| model.remove(0));
                assert_eq!(q.peek_time(), want.map(|w| w.0));
                assert_eq!(q.pop(), want.map(|w| (w.0, w.2)));
            }
            assert_eq!(q.len(), model.len());
        }
    }
}
