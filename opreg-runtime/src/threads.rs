//! The threads kernels run on, in a session's [`DenormalMode`] (as
//! TensorFlow puts its executor and thread-pool threads in its mode with
//! `port::ScopedFlushDenormal`).
//!
//! - [`DenormalMode::FlushToZero`], the default: a run executes on the
//!   calling thread, put in the mode for the run, and the kernels' parallel
//!   work (rayon's `par_*`, the GEMMs) runs on rayon's global pool, whose
//!   threads are put in the mode once, at the first such run. No thread hop:
//!   a small graph's run costs what it did before.
//! - [`DenormalMode::Ieee`]: a run executes on a thread of a pool of its own,
//!   whose threads keep IEEE denormals, so its parallel work lands there too.

use std::sync::{Once, OnceLock};

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

/// Runs `work` with every thread that runs its kernels in `mode` (see the
/// module docs).
pub(crate) fn run_in_mode<R: Send>(mode: DenormalMode, work: impl FnOnce() -> R + Send) -> R {
    match mode {
        DenormalMode::FlushToZero => {
            flush_global_pool();
            let _mode = ScopedDenormalMode::new(mode);
            work()
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
