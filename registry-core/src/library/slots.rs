//! Tables of C callbacks that know which registration they serve.
//!
//! The C APIs that host op libraries (TensorFlow's kernel and shape
//! callbacks, XLA's FFI handlers) call a function pointer with no user
//! data: nothing tells it which op or kernel it is for. A host bridge
//! therefore gives each registration a function of its own: a
//! monomorphised copy of one generic function `f::<HI, LO>` (slot
//! `HI * 32 + LO`), collected by [`slot_table!`](crate::slot_table) into a
//! table of [`SLOTS`] entries built at compile time.

/// How many slots a [`slot_table!`](crate::slot_table) has: the most ops
/// or kernel registrations one library can give a host per callback kind.
pub const SLOTS: usize = 32 * 32;

/// The `[[F; 32]; 32]` table of `f::<HI, LO>` for every `HI` and `LO`
/// below 32, as a constant expression; entry `[i / 32][i % 32]` serves
/// slot `i` ([`SLOTS`] in all).
///
/// ```
/// type Callback = extern "C" fn() -> usize;
/// extern "C" fn slot<const HI: usize, const LO: usize>() -> usize {
///     HI * 32 + LO
/// }
/// static TABLE: [[Callback; 32]; 32] = registry_core::slot_table!(slot as Callback);
/// assert_eq!((TABLE[2][5])(), 69);
/// ```
#[macro_export]
macro_rules! slot_table {
    ($f:ident as $ty:ty) => {{
        const fn row<const HI: usize>() -> [$ty; 32] {
            [
                $f::<HI, 0> as $ty,
                $f::<HI, 1>,
                $f::<HI, 2>,
                $f::<HI, 3>,
                $f::<HI, 4>,
                $f::<HI, 5>,
                $f::<HI, 6>,
                $f::<HI, 7>,
                $f::<HI, 8>,
                $f::<HI, 9>,
                $f::<HI, 10>,
                $f::<HI, 11>,
                $f::<HI, 12>,
                $f::<HI, 13>,
                $f::<HI, 14>,
                $f::<HI, 15>,
                $f::<HI, 16>,
                $f::<HI, 17>,
                $f::<HI, 18>,
                $f::<HI, 19>,
                $f::<HI, 20>,
                $f::<HI, 21>,
                $f::<HI, 22>,
                $f::<HI, 23>,
                $f::<HI, 24>,
                $f::<HI, 25>,
                $f::<HI, 26>,
                $f::<HI, 27>,
                $f::<HI, 28>,
                $f::<HI, 29>,
                $f::<HI, 30>,
                $f::<HI, 31>,
            ]
        }
        [
            row::<0>(),
            row::<1>(),
            row::<2>(),
            row::<3>(),
            row::<4>(),
            row::<5>(),
            row::<6>(),
            row::<7>(),
            row::<8>(),
            row::<9>(),
            row::<10>(),
            row::<11>(),
            row::<12>(),
            row::<13>(),
            row::<14>(),
            row::<15>(),
            row::<16>(),
            row::<17>(),
            row::<18>(),
            row::<19>(),
            row::<20>(),
            row::<21>(),
            row::<22>(),
            row::<23>(),
            row::<24>(),
            row::<25>(),
            row::<26>(),
            row::<27>(),
            row::<28>(),
            row::<29>(),
            row::<30>(),
            row::<31>(),
        ]
    }};
}

/// Entry `index` of a [`slot_table!`](crate::slot_table), if it has one.
pub fn slot<F: Copy>(table: &[[F; 32]; 32], index: usize) -> Option<F> {
    table.get(index / 32).map(|row| row[index % 32])
}
