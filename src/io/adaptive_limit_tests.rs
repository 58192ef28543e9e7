//! The limit's decisions, fed by hand and by a simulated store (pure, no clock).

use super::*;
use proptest::prelude::*;

fn answered(ms: u64, generation: u64) -> Completion {
    Completion {
        kind: RequestKind::Get,
        latency: Duration::from_millis(ms),
        outcome: Outcome::Answered,
        generation,
    }
}

fn failed(outcome: Outcome, generation: u64) -> Completion {
    Completion {
        outcome,
        ..answered(10, generation)
    }
}

#[test]
fn throttling_halves_once_per_generation_and_stops_at_the_floor() {
    let mut l = AdaptiveLimit::new(LimitConfig::adaptive(256));
    assert_eq!(l.limit(), 256);
    // 100 requests of generation 0 throttled at once: one decrease.
    let changes: Vec<_> = (0..100)
        .map(|_| l.on_completion(&failed(Outcome::Throttled, 0), 100))
        .collect();
    assert_eq!(
        changes.iter().filter(|c| **c == Change::Decreased).count(),
        1
    );
    assert_eq!((l.limit(), l.generation()), (128, 1));
    assert_eq!(
        l.on_completion(&failed(Outcome::TimedOut, 1), 10),
        Change::Decreased
    );
    assert_eq!(l.limit(), 64);
    for g in 2..40 {
        l.on_completion(&failed(Outcome::TimedOut, g), 1);
    }
    assert_eq!(l.limit(), DEFAULT_MIN_LIMIT);
    let s = l.snapshot();
    assert_eq!((s.min_seen, s.max_seen), (DEFAULT_MIN_LIMIT, 256));
    // Other failures (404s, corrupt bodies) say nothing about load.
    let g = l.generation();
    assert_eq!(l.on_completion(&failed(Outcome::Other, g), 0), Change::None);
}

#[test]
fn fast_answers_raise_it_only_while_it_is_used_and_never_past_the_start() {
    let mut l = AdaptiveLimit::new(LimitConfig::adaptive(16));
    l.on_completion(&failed(Outcome::Throttled, 0), 8);
    assert_eq!(l.limit(), 8);
    // Idle: nothing in flight, fast answers do not raise it.
    for _ in 0..20 {
        l.on_completion(&answered(10, 1), 0);
    }
    assert_eq!(l.limit(), 8);
    for _ in 0..200 {
        l.on_completion(&answered(10, 1), 15);
    }
    assert_eq!(l.limit(), 16, "back to the start, not beyond");
    assert_eq!(l.snapshot().increases, 8);
}

#[test]
fn latency_above_the_baseline_lowers_it() {
    let mut l = AdaptiveLimit::new(LimitConfig::adaptive(100));
    for _ in 0..50 {
        l.on_completion(&answered(10, 0), 100);
    }
    assert_eq!(l.limit(), 100);
    let mut g = 0;
    for _ in 0..200 {
        if l.on_completion(&answered(40, g), 100) == Change::Decreased {
            g = l.generation();
        }
    }
    assert!(l.limit() < 100 && l.snapshot().decreases >= 1, "{l:?}");
}

#[test]
fn a_pinned_limit_never_moves_and_a_list_takes_its_weight() {
    let mut l = AdaptiveLimit::new(LimitConfig::pinned(32));
    for g in 0..10 {
        l.on_completion(&failed(Outcome::Throttled, g), 1);
        l.on_completion(&answered(1000, g), 1);
    }
    assert_eq!((l.limit(), l.generation()), (32, 0));
    assert_eq!(l.units(RequestKind::List), LIST_WEIGHT);
    assert_eq!(l.units(RequestKind::Get), 1);
    let small = AdaptiveLimit::new(LimitConfig::pinned(3));
    assert_eq!(small.units(RequestKind::List), 3, "a LIST still fits alone");
}

/// A store that serves `capacity` requests at a time, each for `service_ms`, the rest
/// waiting in its queue (FIFO). The client keeps `limit` requests in flight (always more
/// work waiting). Returns the limits after each completion.
fn simulate(capacity: usize, service_ms: u64, completions: usize) -> Vec<usize> {
    use std::collections::VecDeque;
    let mut limit = AdaptiveLimit::new(LimitConfig::adaptive(256));
    // (sent_at, generation) of requests at the store, in arrival order.
    let mut at_store: VecDeque<(u64, u64)> = VecDeque::new();
    let mut serving: Vec<(u64, u64, u64)> = Vec::new(); // (done_at, sent_at, generation)
    let mut now = 0u64;
    let mut seen = Vec::new();
    while seen.len() < completions {
        while at_store.len() + serving.len() < limit.limit() {
            at_store.push_back((now, limit.generation()));
        }
        while serving.len() < capacity {
            let Some((sent, g)) = at_store.pop_front() else {
                break;
            };
            serving.push((now + service_ms, sent, g));
        }
        serving.sort_unstable();
        let (done_at, sent, g) = serving.remove(0);
        now = done_at;
        let in_flight = at_store.len() + serving.len();
        limit.on_completion(&answered(now - sent, g), in_flight);
        seen.push(limit.limit());
    }
    seen
}

#[test]
fn against_a_store_of_fixed_capacity_the_limit_settles_near_it() {
    for capacity in [4usize, 8, 32] {
        let limits = simulate(capacity, 10, 5000);
        let tail = &limits[4000..];
        let (lo, hi) = (tail.iter().min().unwrap(), tail.iter().max().unwrap());
        assert!(
            *lo >= capacity / 2 && *hi <= 3 * capacity,
            "capacity {capacity}: the limit moved in {lo}..={hi}"
        );
    }
}

proptest! {
    #[test]
    fn the_limit_stays_between_floor_and_start_and_counts_its_moves(
        initial in 1usize..600,
        events in proptest::collection::vec((0u8..4, 0u64..2000, 0usize..700), 0..300),
    ) {
        let mut l = AdaptiveLimit::new(LimitConfig::adaptive(initial));
        let (mut down, mut up) = (0u64, 0u64);
        for (what, ms, in_flight) in events {
            let outcome = [Outcome::Answered, Outcome::TimedOut, Outcome::Throttled, Outcome::Other]
                [usize::from(what)];
            let g = if ms % 3 == 0 { l.generation().saturating_sub(1) } else { l.generation() };
            let before = l.limit();
            let c = Completion { kind: RequestKind::Get, latency: Duration::from_millis(ms), outcome, generation: g };
            match l.on_completion(&c, in_flight) {
                Change::Decreased => { down += 1; prop_assert!(l.limit() < before); }
                Change::Increased => { up += 1; prop_assert!(l.limit() > before); }
                Change::None => prop_assert_eq!(l.limit(), before),
            }
            prop_assert!(l.limit() >= DEFAULT_MIN_LIMIT.min(initial) && l.limit() <= initial);
            prop_assert!(l.units(RequestKind::List) <= l.limit());
        }
        let s = l.snapshot();
        prop_assert_eq!((s.decreases, s.increases), (down, up));
        prop_assert!(s.min_seen <= s.limit && s.limit <= s.max_seen && s.max_seen <= initial);
    }

    #[test]
    fn a_pinned_limit_ignores_everything(
        n in 1usize..600,
        events in proptest::collection::vec((0u8..4, 0u64..2000), 0..100),
    ) {
        let mut l = AdaptiveLimit::new(LimitConfig::pinned(n));
        for (what, ms) in events {
            let outcome = [Outcome::Answered, Outcome::TimedOut, Outcome::Throttled, Outcome::Other]
                [usize::from(what)];
            let c = Completion { kind: RequestKind::List, latency: Duration::from_millis(ms), outcome, generation: 0 };
            prop_assert_eq!(l.on_completion(&c, n), Change::None);
        }
        prop_assert_eq!(l.limit(), n);
    }
}

#[test]
fn the_sessions_limit_ignores_slow_answers_and_halves_on_timeouts() {
    let mut l = AdaptiveLimit::new(LimitConfig::on_loss(64));
    for _ in 0..50 {
        l.on_completion(&answered(10, 0), 64);
    }
    // Ten times slower (a busy client CPU looks the same): the limit holds.
    for _ in 0..500 {
        assert_eq!(l.on_completion(&answered(100, 0), 64), Change::None);
    }
    assert_eq!(l.limit(), 64);
    assert_eq!(
        l.on_completion(&failed(Outcome::TimedOut, 0), 64),
        Change::Decreased
    );
    assert_eq!(l.limit(), 32);
}
