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
//!   1.7-1.85 ms.
//! - [`DenormalMode::Ieee`]: a run executes on a thread of a pool of its own,
//!   whose threads keep IEEE denormals, so its parallel work lands there too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};
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
                rayon::scope(|_| work())
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
