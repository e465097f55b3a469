//! The threads kernels run on: one thread pool per
//! [`DenormalMode`], each thread put in its mode once, at its start (as
//! TensorFlow's executor and thread-pool threads are, with
//! `port::ScopedFlushDenormal`).
//!
//! A run of a [`Session`](crate::Session) runs on a thread of its mode's pool,
//! so the kernels' own parallel work (rayon's `par_*`, the GEMMs) lands on
//! that pool's threads too: every thread that touches a run's floats treats
//! denormals the same way.

use std::sync::OnceLock;

use registry_core::denormal::{DenormalMode, set_thread_mode};

/// The pool whose threads run kernels in `mode`, started on first use with
/// rayon's thread count (`RAYON_NUM_THREADS`, else one per CPU). `None` if
/// the threads could not be started.
pub(crate) fn kernel_pool(mode: DenormalMode) -> Option<&'static rayon::ThreadPool> {
    static FLUSH: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    static IEEE: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let (cell, name) = match mode {
        DenormalMode::FlushToZero => (&FLUSH, "opreg-kernels"),
        DenormalMode::Ieee => (&IEEE, "opreg-kernels-ieee"),
    };
    cell.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(move |i| format!("{name}-{i}"))
            .start_handler(move |_| set_thread_mode(mode))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `work` on a thread in `mode`: a thread of that mode's pool (this
/// one, if it is one already), or this thread put in `mode` for the call when
/// the pool cannot be started.
pub(crate) fn run_in_mode<R: Send>(mode: DenormalMode, work: impl FnOnce() -> R + Send) -> R {
    match kernel_pool(mode) {
        Some(pool) if pool.current_thread_index().is_none() => pool.install(work),
        Some(_) => work(),
        None => {
            let _mode = registry_core::denormal::ScopedDenormalMode::new(mode);
            work()
        }
    }
}
