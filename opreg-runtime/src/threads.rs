//! The threads kernels run on, in a session's [`DenormalMode`] (as
//! TensorFlow puts its executor and thread-pool threads in its mode with
//! `port::ScopedFlushDenormal`).
//!
//! - [`DenormalMode::FlushToZero`], the default: the kernels' parallel
//!   work (rayon's `par_*`, the GEMMs) runs on rayon's global pool, whose
//!   threads are put in the mode once, at the first run. A run executes on
//!   the calling thread, put in the mode for the run, while its signature's
//!   runs are short: no thread hop, which costs 10 to 25 us here. Once a
//!   run took [`RunStart::LONG`] or more, the signature's runs execute on a
//!   thread of the pool instead (one hop per run): each parallel kernel
//!   then starts its work there, where from the calling thread it would
//!   hand the work over and sleep until it is done (two thread switches per
//!   kernel). On mobilenet_v2 that is 1.2-1.3 ms per run against
//!   1.7-1.85 ms. While such a run lasts, the pool's other threads stay
//!   awake ([`keep_awake`]): each takes the kernels' parallel work as soon
//!   as it is offered instead of being woken from sleep for it.
//! - [`DenormalMode::Ieee`]: a run executes on a thread of a pool of its own,
//!   whose threads keep IEEE denormals, so its parallel work lands there too.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once, OnceLock};
use std::time::{Duration, Instant};

use registry_core::denormal::{DenormalMode, ScopedDenormalMode, set_thread_mode};

/// The pool whose threads keep IEEE denormals, started on first use with
/// rayon's thread count. `None` if its threads could not be started.
fn ieee_pool() -> Option<&'static rayon::ThreadPool> {
    static IEEE: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    IEEE.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("opreg-kernels-ieee-{i}"))
            .start_handler(|_| set_thread_mode(DenormalMode::Ieee))
            .build()
            .ok()
    })
    .as_ref()
}

/// Puts every thread of rayon's global pool in flush-to-zero mode, once.
fn flush_global_pool() {
    static DONE: Once = Once::new();
    DONE.call_once(|| {
        rayon::broadcast(|_| set_thread_mode(DenormalMode::FlushToZero));
    });
}

/// Where a signature's runs start (flush-to-zero mode): on the calling
/// thread, or, after a long run, on a thread of rayon's global pool.
#[derive(Debug, Default)]
pub(crate) struct RunStart {
    on_pool: AtomicBool,
    /// Never on the pool (plans whose runs gain nothing from it).
    caller_only: bool,
}

impl RunStart {
    /// Runs that always start on the calling thread.
    pub(crate) fn caller_only() -> Self {
        Self {
            on_pool: AtomicBool::new(false),
            caller_only: true,
        }
    }

    /// A run at least this long moves the signature's runs to the pool; a
    /// run on the pool under half of it moves them back.
    pub(crate) const LONG: Duration = Duration::from_micros(250);

    fn record(&self, on_pool: bool, took: Duration) {
        let next = if self.caller_only {
            false
        } else if on_pool {
            took >= Self::LONG / 2
        } else {
            took >= Self::LONG
        };
        self.on_pool.store(next, Ordering::Relaxed);
    }
}

/// How long a thread kept awake waits for work before it sleeps anyway.
const AWAKE_IDLE_LIMIT: Duration = Duration::from_millis(1);

/// Until the returned guard drops, keeps every thread of the calling
/// thread's rayon pool (the global one, for a run) but the calling one
/// looking for work
/// instead of sleeping: each runs a task that takes pending work as rayon
/// offers it ([`rayon::yield_now`]) and otherwise spins, and ends when the
/// guard drops or after [`AWAKE_IDLE_LIMIT`] without work. Waking a
/// sleeping thread costs several microseconds per parallel kernel.
fn keep_awake() -> AwakeGuard {
    let guard = AwakeGuard {
        done: Arc::new(AtomicBool::new(false)),
        tasks: Arc::new(AwakeTasks::default()),
    };
    let caller = rayon::current_thread_index();
    if rayon::current_num_threads() > 1 {
        let (done, tasks) = (Arc::clone(&guard.done), Arc::clone(&guard.tasks));
        rayon::spawn_broadcast(move |ctx| {
            if Some(ctx.index()) == caller {
                return;
            }
            tasks.started.fetch_add(1, Ordering::AcqRel);
            tasks.running.fetch_add(1, Ordering::AcqRel);
            let mut last_work = Instant::now();
            // (The clock is read once per 64 idle turns.)
            let mut idle_turns = 0u32;
            while !done.load(Ordering::Acquire) {
                if let Some(rayon::Yield::Executed) = rayon::yield_now() {
                    idle_turns = 0;
                    last_work = Instant::now();
                    continue;
                }
                idle_turns = idle_turns.wrapping_add(1);
                if idle_turns.is_multiple_of(64) && last_work.elapsed() >= AWAKE_IDLE_LIMIT {
                    break;
                }
                std::hint::spin_loop();
            }
            tasks.running.fetch_sub(1, Ordering::AcqRel);
        });
    }
    guard
}

/// Ends [`keep_awake`]'s tasks when dropped.
struct AwakeGuard {
    done: Arc<AtomicBool>,
    tasks: Arc<AwakeTasks>,
}

/// Counts of one [`keep_awake`]'s tasks.
#[derive(Debug, Default)]
struct AwakeTasks {
    /// Tasks that have started.
    started: AtomicUsize,
    /// Tasks running now.
    running: AtomicUsize,
}

impl Drop for AwakeGuard {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

/// Runs `work` with every thread that runs its kernels in `mode`, on the
/// thread `start` picks (see the module docs).
pub(crate) fn run_in_mode<R: Send>(
    mode: DenormalMode,
    start: &RunStart,
    work: impl FnOnce() -> R + Send,
) -> R {
    match mode {
        DenormalMode::FlushToZero => {
            flush_global_pool();
            let on_pool =
                start.on_pool.load(Ordering::Relaxed) && rayon::current_thread_index().is_none();
            let started = Instant::now();
            let result = if on_pool {
                // `scope` runs its body on a thread of the global pool.
                rayon::scope(|_| {
                    let _awake = keep_awake();
                    work()
                })
            } else {
                let _mode = ScopedDenormalMode::new(mode);
                work()
            };
            start.record(on_pool, started.elapsed());
            result
        }
        DenormalMode::Ieee => match ieee_pool() {
            Some(pool) if pool.current_thread_index().is_none() => pool.install(work),
            _ => {
                let _mode = ScopedDenormalMode::new(mode);
                work()
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// A pool of its own for a test: `keep_awake` broadcasts to the pool of
    /// the thread it is called on, not to the global one.
    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a test thread pool")
    }

    /// Waits up to 5 s for `done`.
    fn eventually(done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        done()
    }

    #[test]
    fn threads_kept_awake_do_the_work_and_stop_with_the_guard() {
        let (sum, seen_awake, tasks) = pool(3).install(|| {
            let awake = keep_awake();
            let tasks = Arc::clone(&awake.tasks);
            let seen = eventually(|| tasks.started.load(Ordering::Acquire) == 2);
            // The other threads take parallel work while awake.
            let sum: u64 = (0..100_000u64).into_par_iter().sum();
            (sum, seen, tasks)
        });
        assert_eq!(sum, 100_000 * 99_999 / 2);
        assert!(seen_awake, "the pool's 2 other threads were not kept awake");
        assert!(
            eventually(|| tasks.running.load(Ordering::Acquire) == 0),
            "{} threads still awake after the guard dropped",
            tasks.running.load(Ordering::Acquire)
        );
    }

    #[test]
    fn threads_kept_awake_sleep_after_a_while_without_work() {
        pool(2).install(|| {
            let awake = keep_awake();
            assert!(eventually(
                || awake.tasks.started.load(Ordering::Acquire) == 1
            ));
            // The guard is still held: the idle limit ends the task.
            assert!(
                eventually(|| awake.tasks.running.load(Ordering::Acquire) == 0),
                "a thread stayed awake with no work"
            );
        });
    }

    #[test]
    fn a_single_thread_is_not_kept_awake() {
        pool(1).install(|| {
            let awake = keep_awake();
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(awake.tasks.started.load(Ordering::Acquire), 0);
        });
    }
}
