//! How much work a kernel needs before it splits it over rayon's pool.
//!
//! Called from a thread outside the pool, a split hands the work to the
//! pool's threads, which may be asleep, and waits: a wake-up and two
//! thread switches, 10 to 25 us on a 2-core machine. On a thread of the
//! pool (a long run, which the session starts there and whose other threads
//! it keeps awake) the other threads take the work at once, so much smaller
//! work gains from being split.

/// How much smaller work may be split on a thread of rayon's pool.
const ON_POOL_DIVISOR: usize = 4;

/// The least work worth splitting over rayon's pool now, given
/// `from_outside`, the least worth it from a thread outside the pool (in
/// the caller's unit: elements, multiply-adds).
pub(crate) fn min_parallel_work(from_outside: usize) -> usize {
    if rayon::current_thread_index().is_some() {
        least_parallel_work(from_outside)
    } else {
        from_outside
    }
}

/// The least work [`min_parallel_work`] returns for `from_outside` (on a
/// thread of the pool).
pub(crate) const fn least_parallel_work(from_outside: usize) -> usize {
    from_outside / ON_POOL_DIVISOR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_splits_sooner_on_a_thread_of_the_pool() {
        assert_eq!(min_parallel_work(1 << 16), 1 << 16);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool of 2 threads");
        assert_eq!(pool.install(|| min_parallel_work(1 << 16)), 1 << 14);
    }
}
