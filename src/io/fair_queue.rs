//! A queue of waiters served round-robin across queries, oldest first within a query: the
//! waiting side of [`crate::io::admission`]. Pure bookkeeping (no locking, no I/O): the
//! admission controller owns one per resource and decides what fits.

use std::collections::{HashMap, VecDeque};

use tokio::sync::oneshot;

/// One waiter: what it needs of the resource and where to send its grant.
#[derive(Debug)]
pub(crate) struct Waiter<T> {
    pub(crate) id: u64,
    pub(crate) need: u64,
    pub(crate) tx: oneshot::Sender<T>,
}

/// Waiters per query; a grant goes to the head of the next query in the ring.
#[derive(Debug)]
pub(crate) struct FairQueue<T> {
    /// Waiting requests per query, oldest first.
    queues: HashMap<usize, VecDeque<Waiter<T>>>,
    /// Queries with waiting requests, in the order they are served.
    ring: VecDeque<usize>,
    len: usize,
    next_id: u64,
}

impl<T> Default for FairQueue<T> {
    fn default() -> Self {
        Self {
            queues: HashMap::new(),
            ring: VecDeque::new(),
            len: 0,
            next_id: 0,
        }
    }
}

impl<T> FairQueue<T> {
    /// Waiters in the queue.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Nobody waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queue a waiter of `query` needing `need`; returns its id (for [`forget`](Self::forget)).
    pub(crate) fn push(&mut self, query: usize, need: u64, tx: oneshot::Sender<T>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let queue = self.queues.entry(query).or_default();
        if queue.is_empty() {
            self.ring.push_back(query);
        }
        queue.push_back(Waiter { id, need, tx });
        self.len += 1;
        id
    }

    /// The next waiter to serve when `fits` its need: the head of the query at the front of
    /// the ring (that query then moves to the back). Waiters whose receiver is gone are
    /// dropped on the way. `None` when the queue is empty or the next waiter does not fit
    /// (nobody overtakes it, so a large need is served once enough is free).
    pub(crate) fn pop_fitting(&mut self, fits: impl Fn(u64) -> bool) -> Option<Waiter<T>> {
        loop {
            let &query = self.ring.front()?;
            let queue = self.queues.get_mut(&query)?;
            let head = queue.front()?;
            if !head.tx.is_closed() && !fits(head.need) {
                return None;
            }
            let waiter = queue.pop_front()?;
            if queue.is_empty() {
                self.queues.remove(&query);
                self.ring.pop_front();
            } else {
                self.ring.rotate_left(1);
            }
            self.len -= 1;
            if !waiter.tx.is_closed() {
                return Some(waiter);
            }
        }
    }

    /// Remove waiter `id` of `query` (its future was dropped before it was served).
    pub(crate) fn forget(&mut self, query: usize, id: u64) {
        let Some(queue) = self.queues.get_mut(&query) else {
            return;
        };
        if let Some(pos) = queue.iter().position(|w| w.id == id) {
            queue.remove(pos);
            self.len -= 1;
        }
        if queue.is_empty() {
            self.queues.remove(&query);
            self.ring.retain(|q| *q != query);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiter(q: &mut FairQueue<u8>, query: usize, need: u64) -> (u64, oneshot::Receiver<u8>) {
        let (tx, rx) = oneshot::channel();
        (q.push(query, need, tx), rx)
    }

    #[test]
    fn queries_are_served_in_turn_and_a_head_that_does_not_fit_blocks() {
        let mut q = FairQueue::default();
        let _a = (
            waiter(&mut q, 1, 1),
            waiter(&mut q, 1, 1),
            waiter(&mut q, 1, 1),
        );
        let _b = waiter(&mut q, 2, 50);
        let served: Vec<_> = std::iter::from_fn(|| q.pop_fitting(|n| n <= 10))
            .map(|w| w.need)
            .collect();
        // Query 1's head, then query 2's head (50 does not fit): nothing more.
        assert_eq!(served, vec![1]);
        assert_eq!(q.len(), 3);
        let next = q.pop_fitting(|_| true).map(|w| w.need);
        assert_eq!(next, Some(50), "query 2 is next in the ring");
    }

    #[test]
    fn dropped_and_forgotten_waiters_leave_the_queue() {
        let mut q = FairQueue::default();
        let (id, _rx) = waiter(&mut q, 7, 1);
        let (_, gone) = waiter(&mut q, 8, 1);
        drop(gone);
        q.forget(7, id);
        assert_eq!(q.len(), 1);
        assert!(
            q.pop_fitting(|_| true).is_none(),
            "the closed one is skipped"
        );
        assert!(q.is_empty());
    }
}
