//! The threads kernels run on, in a session's [`DenormalMode`] (as
//! TensorFlow puts its executor and thread-pool threads in its mode with
//! `port::ScopedFlushDenormal`).
//!
//! - [`DenormalMode::FlushToZero`], the default: the kernels' parallel
//!   work (rayon's `par_*`, the GEMMs) runs on rayon's global pool, whose
//!   threads are put in the mode once, at the first run. A run executes on
//!   the calling thread, put in the mode for the run, while its signature's
//!   runs are short: no thread hop, which costs 10 to 25 us here. Once a
//!   run took [`Placement::LONG`] or more, the signature's runs try a
//!   thread of the pool instead (one hop per run), and stay there while
//!   they are faster there ([`Placement`]): each parallel kernel
//!   then starts its work there, where from the calling thread it would
//!   hand the work over and sleep until it is done (two thread switches per
//!   kernel). On mobilenet_v2 that is 1.2-1.3 ms per run against
//!   1.7-1.85 ms. While such a run lasts, the pool's other threads stay
//!   awake ([`keep_awake`]): each takes the kernels' parallel work as soon
//!   as it is offered instead of being woken from sleep for it.
//!   A program whose main thread runs sessions can make that thread one of
//!   the pool's ([`join_global_pool`], as the `opreg` command does): its
//!   runs then stay on it, no hop, and start their kernels' parallel work
//!   in place; the placement then chooses between keeping the pool's other
//!   threads awake for the run or not. A run whose batch splits over the
//!   pool's threads ([`crate::batch_split`]) always goes to the pool, and
//!   its time is not counted in the placement of whole runs.
//! - [`DenormalMode::Ieee`]: a run executes on a thread of a pool of its own,
//!   whose threads keep IEEE denormals, so its parallel work lands there too.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
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

thread_local! {
    /// Whether this thread joined rayon's global pool with
    /// [`join_global_pool`].
    static POOL_MEMBER: Cell<bool> = const { Cell::new(false) };
}

/// Makes the calling thread one of the threads of rayon's global pool (the
/// pool the kernels' parallel work runs on), with as many threads in all as
/// rayon would start (one per core, or `RAYON_NUM_THREADS`). For a
/// program's main thread that runs sessions: their runs then stay on it
/// (where another thread would hand a long run over to the pool and wait,
/// 10 to 60 us a run on a 2-core machine) and its kernels start their
/// parallel work in place, the thread working on its share while the
/// others take theirs. Call it once, first thing, before anything uses
/// rayon; it returns false (and changes nothing) if the global pool
/// already exists.
///
/// ```
/// // (A doctest is its own program: nothing has used rayon yet.)
/// assert!(opreg_runtime::join_global_pool());
/// assert_eq!(rayon::current_thread_index(), Some(0));
/// assert!(!opreg_runtime::join_global_pool());
/// ```
pub fn join_global_pool() -> bool {
    let joined = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global()
        .is_ok();
    if joined {
        POOL_MEMBER.with(|member| member.set(true));
    }
    joined
}

/// Puts every thread of rayon's global pool in flush-to-zero mode, once
/// (not a thread that joined it: that one is in the mode during its runs
/// only, as any calling thread).
fn flush_global_pool() {
    static DONE: Once = Once::new();
    DONE.call_once(|| {
        rayon::broadcast(|_| {
            if !POOL_MEMBER.with(Cell::get) {
                set_thread_mode(DenormalMode::FlushToZero);
            }
        });
    });
}

/// Where a signature's runs start (flush-to-zero mode): on the calling
/// thread, or on a thread of rayon's global pool, chosen by [`Placement`].
#[derive(Debug, Default)]
pub(crate) struct RunStart {
    /// Where the next run starts (read without the lock on every run).
    on_pool: AtomicBool,
    placement: Mutex<Placement>,
    /// Never on the pool (plans whose runs gain nothing from it).
    caller_only: bool,
}

impl RunStart {
    /// Runs that always start on the calling thread.
    pub(crate) fn caller_only() -> Self {
        Self {
            caller_only: true,
            ..Self::default()
        }
    }

    /// A choice between two ways to run (`true` and `false`, as "on the
    /// pool" and "on the calling thread" are for [`run_in_mode`]), tried
    /// and kept by their times as the placement is, with `long` for
    /// [`Placement::LONG`] (the least run time that tries the `true` way):
    /// the batch split's choice between split and whole runs. It starts
    /// with `false`.
    pub(crate) fn trying_after(long: Duration) -> Self {
        Self {
            placement: Mutex::new(Placement {
                long,
                ..Placement::default()
            }),
            ..Self::default()
        }
    }

    /// The way the next run goes (`true`: on the pool, or the other way of
    /// a [`trying_after`](Self::trying_after) choice).
    pub(crate) fn chosen(&self) -> bool {
        self.on_pool.load(Ordering::Relaxed)
    }

    /// Records a run that went the way `on_pool` says and took `took`.
    pub(crate) fn record(&self, on_pool: bool, took: Duration) {
        if self.caller_only {
            return;
        }
        // A run that finds the placement busy (another run of the same
        // signature is recording) is not counted.
        if let Ok(mut placement) = self.placement.try_lock() {
            let next = placement.record(on_pool, took);
            self.on_pool.store(next, Ordering::Relaxed);
        }
    }
}

/// Where a signature's runs go, from the times of its recent runs in each
/// place. A run starts on the calling thread; once one takes
/// [`LONG`](Self::LONG) or more, the next [`TRIAL`](Self::TRIAL) runs
/// start on the pool, and the median of those is compared with the median
/// of the last ones on the calling thread: the faster place keeps the runs
/// for [`HOLD`](Self::HOLD) runs, after which the other is tried again
/// (the pool only if runs are still long). A run on the pool shorter than
/// half of `LONG` goes back at once: its hop costs more than it can gain.
///
/// The pool helps a run whose kernels go parallel (mobilenet_v2: 1.2-1.3
/// ms per run against 1.7-1.85 ms); a long run of small serial kernels
/// (a chain of 1,000 one-element `Abs`) only pays the hop and the kept-
/// awake threads there, and on a busy machine a single slow run would
/// otherwise have moved it to the pool for good.
#[derive(Debug)]
struct Placement {
    /// A run at least this long tries the pool ([`LONG`](Self::LONG)
    /// unless made otherwise).
    long: Duration,
    on_pool: bool,
    /// Runs since the runs moved here.
    runs_here: u32,
    /// Runs before the other place may be tried again.
    hold: u32,
    /// The last [`TRIAL`](Self::TRIAL) run times in each place (calling
    /// thread, pool), in nanoseconds, and how many of them are set.
    recent: [[u64; Placement::TRIAL as usize]; 2],
    known: [u32; 2],
}

impl Default for Placement {
    fn default() -> Self {
        Self {
            long: Self::LONG,
            on_pool: false,
            runs_here: 0,
            hold: 0,
            recent: [[0; Self::TRIAL as usize]; 2],
            known: [0; 2],
        }
    }
}

impl Placement {
    /// A run at least this long tries the pool.
    const LONG: Duration = Duration::from_micros(250);
    /// Runs in a place before it is compared with the other.
    const TRIAL: u32 = 4;
    /// Runs the faster place keeps before the other is tried again.
    const HOLD: u32 = 1000;

    /// Records a run (in the place it ran) and says whether the next run
    /// starts on the pool.
    fn record(&mut self, on_pool: bool, took: Duration) -> bool {
        if on_pool != self.on_pool {
            // A run that started before the last move.
            return self.on_pool;
        }
        let here = usize::from(on_pool);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.recent[here][(self.runs_here % Self::TRIAL) as usize] = nanos;
        self.known[here] = (self.known[here] + 1).min(Self::TRIAL);
        self.runs_here = self.runs_here.saturating_add(1);
        self.hold = self.hold.saturating_sub(1);
        let move_away = if on_pool && took < self.long / 2 {
            true
        } else if self.runs_here == Self::TRIAL
            && let (Some(this), Some(other)) = (self.median(here), self.median(1 - here))
        {
            // The trial is over: the faster place keeps the runs for a
            // while (a tie stays).
            self.hold = Self::HOLD;
            this > other
        } else if self.runs_here >= Self::TRIAL && self.hold == 0 {
            // Time to try the other place again.
            on_pool || took >= self.long
        } else {
            false
        };
        if move_away {
            self.on_pool = !on_pool;
            self.runs_here = 0;
            self.known[1 - here] = 0;
        }
        self.on_pool
    }

    /// The median of a place's last runs (the mean of the middle two),
    /// once there are [`TRIAL`](Self::TRIAL) of them.
    fn median(&self, place: usize) -> Option<u64> {
        if self.known[place] < Self::TRIAL {
            return None;
        }
        let mut times = self.recent[place];
        times.sort_unstable();
        let mid = times.len() / 2;
        Some(times[mid - 1] / 2 + times[mid] / 2)
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
/// thread `start` picks (see the module docs), or on the pool when
/// `to_pool` (a run split over the pool's threads, whose time then says
/// nothing of where whole runs go). `work` is told whether the run is on
/// the pool with its other threads awake (where it may split itself over
/// them, see [`crate::batch_split`]).
pub(crate) fn run_in_mode<R: Send>(
    mode: DenormalMode,
    start: &RunStart,
    to_pool: bool,
    work: impl FnOnce(bool) -> R + Send,
) -> R {
    match mode {
        DenormalMode::FlushToZero => {
            flush_global_pool();
            let member = POOL_MEMBER.with(Cell::get);
            let on_pool = (to_pool || start.on_pool.load(Ordering::Relaxed))
                && (member || rayon::current_thread_index().is_none());
            let started = Instant::now();
            let result = if on_pool && member {
                // This thread is one of the pool's: "on the pool" is the
                // run here with the other threads kept awake.
                let _mode = ScopedDenormalMode::new(mode);
                let _awake = keep_awake();
                work(true)
            } else if on_pool {
                // `scope` runs its body on a thread of the global pool.
                rayon::scope(|_| {
                    let _awake = keep_awake();
                    work(true)
                })
            } else {
                let _mode = ScopedDenormalMode::new(mode);
                work(false)
            };
            if !to_pool {
                start.record(on_pool, started.elapsed());
            }
            result
        }
        DenormalMode::Ieee => match ieee_pool() {
            Some(pool) if pool.current_thread_index().is_none() => pool.install(|| work(false)),
            _ => {
                let _mode = ScopedDenormalMode::new(mode);
                work(false)
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

    /// Records runs of `micros` each in the placement's current place and
    /// returns where the next run goes after each.
    fn runs(placement: &mut Placement, micros: &[u64]) -> Vec<bool> {
        micros
            .iter()
            .map(|&us| placement.record(placement.on_pool, Duration::from_micros(us)))
            .collect()
    }

    #[test]
    fn short_runs_stay_on_the_calling_thread() {
        let mut placement = Placement::default();
        assert!(runs(&mut placement, &[240; 3000]).iter().all(|&pool| !pool));
    }

    #[test]
    fn long_runs_move_to_the_pool_while_it_is_faster() {
        let mut placement = Placement::default();
        // Long runs try the pool after the first trial on the caller.
        assert_eq!(
            runs(&mut placement, &[1000; 4]),
            [false, false, false, true]
        );
        // Faster there: it stays, for HOLD runs.
        let on_pool = runs(&mut placement, &[600; Placement::HOLD as usize + 3]);
        assert!(
            on_pool[..Placement::HOLD as usize + 3]
                .iter()
                .all(|&pool| pool)
        );
        // Then the calling thread is tried again, loses, and the pool is back.
        assert!(!runs(&mut placement, &[600])[0]);
        assert_eq!(
            runs(&mut placement, &[1000; 4]),
            [false, false, false, true]
        );
        assert!(runs(&mut placement, &[600; 10]).iter().all(|&pool| pool));
    }

    #[test]
    fn serial_runs_slower_on_the_pool_go_back_and_stay_back() {
        let mut placement = Placement::default();
        assert!(runs(&mut placement, &[70; 20]).iter().all(|&pool| !pool));
        // One slow run (a busy machine) tries the pool ...
        assert!(runs(&mut placement, &[300])[0]);
        // ... where runs are slower than on the caller: back after the trial.
        assert_eq!(runs(&mut placement, &[140; 4]), [true, true, true, false]);
        // The next slow runs within HOLD runs do not move them again.
        let mut times = vec![70; Placement::HOLD as usize - 10];
        times[100] = 400;
        times[500] = 400;
        assert!(runs(&mut placement, &times).iter().all(|&pool| !pool));
    }

    #[test]
    fn a_choice_tries_both_ways_and_keeps_the_faster() {
        let least = Duration::from_micros(125);
        let choice = RunStart::trying_after(least);
        assert!(!choice.chosen());
        let record = |way: bool, micros: u64, times: usize| {
            for _ in 0..times {
                choice.record(way, Duration::from_micros(micros));
            }
            choice.chosen()
        };
        // Runs shorter than the least do not try the other way.
        assert!(!record(false, 100, 20));
        // A longer one does.
        assert!(record(false, 200, 1));
        // Slower that way: back after its trial, and kept.
        assert!(!record(true, 300, 4));
        assert!(!record(false, 200, 200));
        // Where the other way is the faster, it is kept.
        let choice = RunStart::trying_after(least);
        for _ in 0..4 {
            choice.record(false, Duration::from_micros(600));
        }
        for _ in 0..4 {
            choice.record(true, Duration::from_micros(80));
        }
        assert!(choice.chosen());
        // A run that way shorter than half the least goes back at once.
        choice.record(true, Duration::from_micros(50));
        assert!(!choice.chosen());
    }

    #[test]
    fn a_short_run_on_the_pool_goes_back_at_once() {
        let mut placement = Placement::default();
        assert_eq!(runs(&mut placement, &[300; 4]), [false, false, false, true]);
        assert!(!runs(&mut placement, &[100])[0]);
        // A run recorded for the place it no longer starts in is ignored.
        assert!(!placement.record(true, Duration::from_micros(10_000)));
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
