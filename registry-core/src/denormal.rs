//! Denormal (subnormal) floats as TensorFlow's CPU kernels see them.
//!
//! TensorFlow runs every CPU kernel with denormals flushed to zero, inputs and
//! results alike (`port::ScopedFlushDenormal`, set on its executor and
//! thread-pool threads, `tensorflow/core/platform/denormal.cc`): in TF,
//! `Rsqrt(5e-324)` is `inf`, `Log(5e-324)` is `-inf` and `Floor(-5e-324)` is
//! `-0`. It does so with the processor's own switches (on x86-64 the MXCSR's
//! flush-to-zero and denormals-are-zero bits, on AArch64 the FPCR's FZ bit),
//! which act on arithmetic only: `Abs` and `Neg`, bit operations, keep a
//! denormal as it is, in TF and here.
//!
//! [`DenormalMode::FlushToZero`] is opreg's default as it is TF's; a session
//! can ask for [`DenormalMode::Ieee`] to keep IEEE 754 gradual underflow.
//! [`ScopedDenormalMode`] sets a mode on the current thread and restores the
//! previous one when dropped.
//!
//! ```
//! use registry_core::denormal::{DenormalMode, ScopedDenormalMode};
//!
//! let tiny = std::hint::black_box(f64::from_bits(1)); // 5e-324
//! {
//!     let _flush = ScopedDenormalMode::new(DenormalMode::FlushToZero);
//!     if DenormalMode::switchable() {
//!         assert_eq!(std::hint::black_box(tiny) * 1.0, 0.0);
//!     }
//! }
//! assert_eq!(std::hint::black_box(tiny) * 1.0, tiny, "restored on drop");
//! ```

/// How kernels treat denormal floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DenormalMode {
    /// Denormal inputs read as zero and denormal results become zero (with
    /// their sign), as in TensorFlow's CPU kernels. The default.
    #[default]
    FlushToZero,
    /// IEEE 754 gradual underflow: denormals are kept.
    Ieee,
}

impl DenormalMode {
    /// True where this processor's denormal switches can be set (x86-64 and
    /// AArch64); elsewhere every mode behaves as [`Ieee`](Self::Ieee).
    pub const fn switchable() -> bool {
        cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
    }

    /// The mode the current thread is in.
    pub fn current() -> DenormalMode {
        if switches::flushing(switches::read()) {
            DenormalMode::FlushToZero
        } else {
            DenormalMode::Ieee
        }
    }
}

/// Sets a [`DenormalMode`] on the current thread until dropped, then puts
/// back the mode the thread had (TF's `ScopedFlushDenormal`, and its
/// `ScopedDontFlushDenormal` for [`DenormalMode::Ieee`]).
#[must_use = "the mode is restored as soon as the guard is dropped"]
#[derive(Debug)]
pub struct ScopedDenormalMode {
    saved: switches::Word,
    /// The guard belongs to the thread whose control word it saved.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl ScopedDenormalMode {
    /// Puts the current thread in `mode`.
    pub fn new(mode: DenormalMode) -> Self {
        let saved = switches::read();
        let wanted = switches::with_mode(saved, mode);
        if wanted != saved {
            switches::write(wanted);
        }
        ScopedDenormalMode {
            saved,
            _not_send: std::marker::PhantomData,
        }
    }
}

impl Drop for ScopedDenormalMode {
    fn drop(&mut self) {
        if switches::read() != self.saved {
            switches::write(self.saved);
        }
    }
}

/// Sets `mode` on the current thread for the rest of its life (for the
/// start of a worker thread that only runs kernels).
pub fn set_thread_mode(mode: DenormalMode) {
    let word = switches::read();
    let wanted = switches::with_mode(word, mode);
    if wanted != word {
        switches::write(wanted);
    }
}

#[cfg(target_arch = "x86_64")]
mod switches {
    use super::DenormalMode;

    pub(super) type Word = u32;

    /// MXCSR bit 15: results that would be denormal become zero.
    const FLUSH_TO_ZERO: u32 = 1 << 15;
    /// MXCSR bit 6: denormal inputs read as zero.
    const DENORMALS_ARE_ZERO: u32 = 1 << 6;

    pub(super) fn read() -> Word {
        let mut word: u32 = 0;
        // SAFETY: `stmxcsr` stores the 4-byte MXCSR at the given address,
        // which points at the local `word`; SSE is part of x86-64's baseline.
        unsafe {
            std::arch::asm!(
                "stmxcsr [{}]",
                in(reg) &mut word,
                options(nostack, preserves_flags)
            );
        }
        word
    }

    pub(super) fn write(word: Word) {
        // SAFETY: `ldmxcsr` loads MXCSR from the local `word`, which differs
        // from the value read by `read` only in the FTZ and DAZ bits (never
        // the rounding mode or exception masks), so no exception is unmasked
        // and rounding stays to-nearest: only how denormals are treated
        // changes, on this thread, which is the documented purpose.
        unsafe {
            std::arch::asm!(
                "ldmxcsr [{}]",
                in(reg) &word,
                options(nostack, preserves_flags, readonly)
            );
        }
    }

    pub(super) fn with_mode(word: Word, mode: DenormalMode) -> Word {
        match mode {
            DenormalMode::FlushToZero => word | FLUSH_TO_ZERO | DENORMALS_ARE_ZERO,
            DenormalMode::Ieee => word & !(FLUSH_TO_ZERO | DENORMALS_ARE_ZERO),
        }
    }

    pub(super) fn flushing(word: Word) -> bool {
        word & FLUSH_TO_ZERO != 0
    }
}

#[cfg(target_arch = "aarch64")]
mod switches {
    use super::DenormalMode;

    pub(super) type Word = u64;

    /// FPCR bit 24 (FZ): denormal inputs and results of single and double
    /// precision arithmetic are flushed to zero.
    const FLUSH_TO_ZERO: u64 = 1 << 24;

    pub(super) fn read() -> Word {
        let word: u64;
        // SAFETY: reading FPCR has no side effect and is allowed at EL0.
        unsafe {
            std::arch::asm!("mrs {}, fpcr", out(reg) word, options(nomem, nostack, preserves_flags));
        }
        word
    }

    pub(super) fn write(word: Word) {
        // SAFETY: the value differs from the FPCR just read only in the FZ
        // bit (rounding mode and trap enables untouched); writing FPCR is
        // allowed at EL0 and affects this thread only.
        unsafe {
            std::arch::asm!("msr fpcr, {}", in(reg) word, options(nomem, nostack, preserves_flags));
        }
    }

    pub(super) fn with_mode(word: Word, mode: DenormalMode) -> Word {
        match mode {
            DenormalMode::FlushToZero => word | FLUSH_TO_ZERO,
            DenormalMode::Ieee => word & !FLUSH_TO_ZERO,
        }
    }

    pub(super) fn flushing(word: Word) -> bool {
        word & FLUSH_TO_ZERO != 0
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod switches {
    use super::DenormalMode;

    pub(super) type Word = ();

    pub(super) fn read() -> Word {}

    pub(super) fn write(_word: Word) {}

    pub(super) fn with_mode(word: Word, _mode: DenormalMode) -> Word {
        word
    }

    pub(super) fn flushing(_word: Word) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    #[test]
    fn flush_to_zero_acts_on_arithmetic_and_is_restored() {
        if !DenormalMode::switchable() {
            return;
        }
        let tiny64 = black_box(f64::from_bits(1));
        let tiny32 = black_box(f32::from_bits(1));
        assert_eq!(DenormalMode::current(), DenormalMode::Ieee);
        {
            let _guard = ScopedDenormalMode::new(DenormalMode::FlushToZero);
            assert_eq!(DenormalMode::current(), DenormalMode::FlushToZero);
            // Denormal inputs read as zero...
            assert_eq!(black_box(tiny64) * black_box(1.0), 0.0);
            assert_eq!(black_box(tiny32) + black_box(0.0f32), 0.0);
            assert_eq!((1.0 / black_box(tiny64)), f64::INFINITY);
            // ...denormal results become zero, keeping their sign...
            let r = black_box(-f64::MIN_POSITIVE) / black_box(4.0);
            assert_eq!(r.to_bits(), (-0.0f64).to_bits());
            // ...and bit operations keep denormals.
            assert_eq!((-black_box(tiny64)).to_bits(), (-tiny64).to_bits());
            {
                let _ieee = ScopedDenormalMode::new(DenormalMode::Ieee);
                assert_eq!(black_box(tiny64) * black_box(1.0), tiny64);
            }
            assert_eq!(DenormalMode::current(), DenormalMode::FlushToZero);
        }
        assert_eq!(DenormalMode::current(), DenormalMode::Ieee);
        assert_eq!(black_box(tiny64) * black_box(1.0), tiny64);
    }
}
