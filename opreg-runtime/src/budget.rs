//! [`MemoryBudget`]: the bytes of tensors a run holds at once, against
//! [`SessionOptions::max_memory_bytes`](crate::SessionOptions).

use registry_core::tensor::Tensor;
use rustc_hash::FxHashSet;

/// The bytes of `tensors`, a buffer that several of them share counted
/// once (`seen` is scratch space, cleared first). The executor of graphs
/// with loops checks [`SessionOptions::max_memory_bytes`](crate::SessionOptions)
/// with it over every value it holds.
pub(super) fn distinct_bytes<'a>(
    tensors: impl IntoIterator<Item = &'a Tensor>,
    seen: &mut FxHashSet<usize>,
) -> u64 {
    seen.clear();
    tensors
        .into_iter()
        .filter(|t| t.buffer_id().is_none_or(|id| seen.insert(id)))
        .map(Tensor::allocated_bytes)
        .fold(0, u64::saturating_add)
}

/// Live-tensor accounting for one run: each slot is charged the bytes of
/// the tensor stored in it (nothing when it shares the buffer of a tensor
/// already charged) and refunded when its last consumer takes it. Without a
/// limit, every method is a no-op.
pub(super) struct MemoryBudget {
    limit: Option<u64>,
    live: u64,
    peak: u64,
    charged: Vec<u64>,
}

impl MemoryBudget {
    /// A budget for a run with `slots` slots.
    pub(super) fn new(limit: Option<u64>, slots: usize) -> Self {
        Self {
            limit,
            live: 0,
            peak: 0,
            charged: if limit.is_some() {
                vec![0; slots]
            } else {
                Vec::new()
            },
        }
    }

    /// True when there is a limit to keep.
    #[inline]
    pub(super) fn is_limited(&self) -> bool {
        self.limit.is_some()
    }

    /// Charges `slot` for `tensor` (unless `shared`: its buffer is already
    /// charged to another slot). Returns `Err((live, limit))` when the run
    /// now holds more than the limit.
    pub(super) fn charge(
        &mut self,
        slot: usize,
        tensor: &Tensor,
        shared: bool,
    ) -> Result<(), (u64, u64)> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let bytes = if shared { 0 } else { tensor.allocated_bytes() };
        self.charged[slot] = bytes;
        self.live = self.live.saturating_add(bytes);
        self.peak = self.peak.max(self.live);
        if self.live > limit {
            Err((self.live, limit))
        } else {
            Ok(())
        }
    }

    /// The most bytes held at once so far (0 without a limit: nothing is
    /// counted).
    pub(super) fn peak(&self) -> u64 {
        self.peak
    }

    /// Refunds what `slot` was charged (its value was taken by its last
    /// consumer).
    #[inline]
    pub(super) fn refund(&mut self, slot: usize) {
        if self.limit.is_some() {
            self.live = self
                .live
                .saturating_sub(std::mem::take(&mut self.charged[slot]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_refunds_and_reports_the_overflow() {
        let t = Tensor::from_vec([4], vec![0f32; 4]).unwrap(); // 16 bytes
        let mut budget = MemoryBudget::new(Some(40), 3);
        assert_eq!(budget.charge(0, &t, false), Ok(()));
        assert_eq!(budget.charge(1, &t, true), Ok(()), "shared: free");
        assert_eq!(budget.charge(2, &t, false), Ok(()));
        assert_eq!(budget.peak(), 32);
        budget.refund(0);
        budget.refund(0);
        assert_eq!(budget.charge(0, &t, false), Ok(()));
        assert_eq!(budget.charge(1, &t, false), Err((48, 40)));
        assert_eq!(budget.peak(), 48);
    }

    #[test]
    fn shared_buffers_count_once() {
        let big = Tensor::from_vec([256], vec![0f32; 256]).unwrap(); // 1 KiB
        let view = big.reshape([16, 16]).unwrap();
        let small = Tensor::from_vec([2], vec![0f32; 2]).unwrap(); // inline
        let mut seen = FxHashSet::default();
        assert_eq!(distinct_bytes([&big, &view, &big.clone()], &mut seen), 1024);
        assert_eq!(distinct_bytes([&small, &small.clone()], &mut seen), 16);
        assert_eq!(distinct_bytes([&big, &small], &mut seen), 1032);
    }

    #[test]
    fn without_a_limit_nothing_is_counted() {
        let t = Tensor::from_vec([4], vec![0f32; 4]).unwrap();
        let mut budget = MemoryBudget::new(None, 0);
        assert!(!budget.is_limited());
        assert_eq!(budget.charge(7, &t, false), Ok(()));
        budget.refund(7);
    }
}
