//! Admission control: bounds, fairness, cancellation (no timing: order and counters only).

use super::*;
use futures::FutureExt;

fn noop_waker_poll<F: std::future::Future + Unpin>(f: &mut F) -> std::task::Poll<F::Output> {
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    std::pin::Pin::new(f).poll(&mut cx)
}

#[tokio::test]
async fn at_most_limit_in_flight_and_queued_ones_start_as_slots_free() {
    let a = Admission::new(2, u64::MAX);
    let stats = IoStats::new();
    let p1 = a.admit(&stats).await;
    let p2 = a.admit(&stats).await;
    let mut third = Box::pin(a.admit(&stats));
    assert!(noop_waker_poll(&mut third).is_pending());
    assert_eq!(a.snapshot().queued, 1);
    assert_eq!(a.snapshot().in_flight, 2);
    drop(p1);
    let p3 = third.await;
    assert_eq!((a.snapshot().in_flight, a.snapshot().queued), (2, 0));
    drop((p2, p3));
    let s = a.snapshot();
    assert_eq!(
        (s.in_flight, s.queued, s.peak_in_flight, s.admitted),
        (0, 0, 2, 3)
    );
}

#[tokio::test]
async fn a_big_wave_does_not_starve_a_point_lookup() {
    let a = Admission::new(1, u64::MAX);
    let wave = IoStats::new();
    let lookup = IoStats::new();
    let held = a.admit(&wave).await;
    // The wave queues 2,000 requests, then the lookup queues one.
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..2000 {
        let (a, wave, order) = (Arc::clone(&a), wave.clone(), Arc::clone(&order));
        let mut f = Box::pin(async move {
            let _p = a.admit(&wave).await;
            order.lock().unwrap().push(i);
        });
        assert!(noop_waker_poll(&mut f).is_pending());
        tasks.push(tokio::spawn(f));
    }
    let (a2, order2) = (Arc::clone(&a), Arc::clone(&order));
    let mut point = Box::pin(async move {
        let _p = a2.admit(&lookup).await;
        order2.lock().unwrap().push(usize::MAX);
    });
    assert!(noop_waker_poll(&mut point).is_pending());
    assert_eq!(a.snapshot().queued, 2001);
    let point = tokio::spawn(point);
    drop(held);
    point.await.unwrap();
    for t in tasks {
        t.await.unwrap();
    }
    let order = order.lock().unwrap();
    let at = order.iter().position(|&i| i == usize::MAX).unwrap();
    assert!(
        at <= 1,
        "the lookup was served after {at} requests of the wave"
    );
    assert_eq!(a.snapshot().in_flight, 0);
}

#[tokio::test]
async fn dropped_waiters_leave_the_queue_and_dropped_permits_free_their_slot() {
    let a = Admission::new(1, u64::MAX);
    let stats = IoStats::new();
    let held = a.admit(&stats).await;
    let mut waiting: Vec<_> = (0..100).map(|_| Box::pin(a.admit(&stats))).collect();
    for w in &mut waiting {
        assert!(noop_waker_poll(w).is_pending());
    }
    assert_eq!(a.snapshot().queued, 100);
    drop(waiting);
    assert_eq!(a.snapshot().queued, 0);
    drop(held);
    assert_eq!(a.snapshot().in_flight, 0);
    // A permit granted to a waiter that never looked at it is freed with the waiter.
    let held = a.admit(&stats).await;
    let mut w = Box::pin(a.admit(&stats));
    assert!(noop_waker_poll(&mut w).is_pending());
    drop(held); // hands the slot to `w`
    assert_eq!((a.snapshot().in_flight, a.snapshot().queued), (1, 0));
    drop(w);
    assert_eq!(a.snapshot().in_flight, 0);
    // And a new request starts at once.
    assert!(a.admit(&stats).now_or_never().is_some());
}

#[tokio::test]
async fn the_bytes_budget_holds_waves_back_but_one_always_runs() {
    let a = Admission::new(10, 100);
    let stats = IoStats::new();
    let big = a.reserve(&stats, 1000).await; // larger than the budget: runs alone
    let mut next = Box::pin(a.reserve(&stats, 60));
    assert!(noop_waker_poll(&mut next).is_pending());
    assert_eq!(a.snapshot().waves_queued, 1);
    // A wave holding bytes still gets request slots.
    assert!(a.admit(&stats).now_or_never().is_some());
    drop(big);
    let p60 = next.await;
    let mut another = Box::pin(a.reserve(&stats, 60));
    assert!(noop_waker_poll(&mut another).is_pending(), "60 + 60 > 100");
    assert!(a.try_admit(1).is_none(), "nobody jumps the queue");
    assert!(
        a.reserve(&stats, 0).now_or_never().is_some(),
        "nothing to hold"
    );
    drop(p60);
    let _p = another.await;
    assert!(a.try_admit(10).is_some());
    let s = a.snapshot();
    assert_eq!(
        (s.held_bytes, s.peak_held_bytes, s.waves_queued),
        (60, 1000, 0)
    );
}

#[tokio::test]
async fn waves_wait_for_bytes_in_turn_across_queries() {
    let a = Admission::new(10, 100);
    let (big, small) = (IoStats::new(), IoStats::new());
    let held = a.reserve(&big, 100).await;
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (i, stats) in [(0, &big), (1, &big), (2, &small)] {
        let (a, stats, order) = (Arc::clone(&a), stats.clone(), Arc::clone(&order));
        let mut f = Box::pin(async move {
            let _p = a.reserve(&stats, 100).await;
            order.lock().unwrap().push(i);
        });
        assert!(noop_waker_poll(&mut f).is_pending());
        tasks.push(tokio::spawn(f));
    }
    drop(held);
    for t in tasks {
        t.await.unwrap();
    }
    // The small query's wave runs second: after the big query's first, before its second.
    assert_eq!(*order.lock().unwrap(), vec![0, 2, 1]);
    assert_eq!(a.snapshot().held_bytes, 0);
}

#[tokio::test]
async fn queue_time_is_reported_in_the_stats() {
    let a = Admission::new(1, u64::MAX);
    let stats = IoStats::new();
    let held = a.admit(&stats).await;
    let waiting = {
        let (a, stats) = (Arc::clone(&a), stats.clone());
        tokio::spawn(async move { drop(a.admit(&stats).await) })
    };
    while a.snapshot().queued == 0 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    drop(held);
    waiting.await.unwrap();
    assert!(stats.snapshot().queued_micros > 0);
}

#[test]
fn a_registry_gives_one_controller_per_store() {
    let r = AdmissionRegistry::new(3, 1 << 20);
    let a = r.for_store("s3://b");
    let b = r.for_store("s3://b");
    let c = r.for_store("s3://c");
    assert!(Arc::ptr_eq(&a, &b));
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!((a.limit(), r.max_requests()), (3, 3));
}

#[test]
fn controllers_of_handed_in_stores_last_while_something_reads_through_them() {
    let r = AdmissionRegistry::new(3, 1 << 20);
    let kept: Arc<dyn object_store::ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let held = r.for_handle(&kept);
    assert!(Arc::ptr_eq(&held, &r.for_handle(&kept)), "one per handle");
    let by_identity = r.for_store("s3://b");
    drop(by_identity);
    for _ in 0..50 {
        let store: Arc<dyn object_store::ObjectStore> =
            Arc::new(object_store::memory::InMemory::new());
        drop(r.for_handle(&store));
    }
    // The one in use, the last idle one and the identity's (kept for later opens).
    assert_eq!(r.stores(), 3);
    assert!(Arc::ptr_eq(&held, &r.for_handle(&kept)));
    assert!(Arc::ptr_eq(&process_default(), &process_default()));
    assert_eq!(
        process_default().max_requests(),
        crate::DEFAULT_MAX_REQUESTS
    );
}
