//! Choosing and launching the reduction kernels for `[outer, r, inner]`.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use registry_core::kernel::{KernelError, OpKernelContext};
use registry_core::proto::DataType;

use opreg_cuda::{BLOCK, GpuContext, GpuDevice, gpu_error, gpu_ptr_mut, grid_for};
use registry_core::kernel::KernelSource;

use super::source::entry;

/// Reductions this short run one thread per output.
const SERIAL_MAX_R: usize = 32;
/// With at least this many outputs (and `inner` > 1), one thread per output
/// already fills the GPU, with reads coalesced across `inner`.
const SERIAL_MIN_OUTPUTS: usize = 1 << 17;
/// Blocks that fill an H100 several times over; fewer than this and a long
/// reduction is split into parts.
const FEW_BLOCKS: usize = 1024;
/// Blocks aimed for when splitting.
const TARGET_BLOCKS: usize = 2048;
/// The most blocks launched (kernels loop over the rest).
const MAX_GRID: usize = 1 << 20;

/// Which kernel reduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// One thread per output.
    Serial,
    /// One block per row (`inner` = 1).
    Rows,
    /// One block per 32 columns.
    Cols,
}

/// A kernel and how many parts each reduction is split into (`parts` > 1:
/// partial accumulators, then `serial_acc` over them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Strategy {
    /// The kernel.
    pub(crate) pass: Pass,
    /// Slices of the reduced dimension reduced by separate blocks.
    pub(crate) parts: usize,
    /// Elements of the reduced dimension per part.
    pub(crate) chunk: usize,
}

/// `parts` slices of at least `min_chunk` elements, given `blocks` blocks
/// without splitting: at most enough to reach [`TARGET_BLOCKS`].
fn split(r: usize, blocks: usize, min_chunk: usize) -> (usize, usize) {
    if blocks >= FEW_BLOCKS || r < 2 * min_chunk {
        return (1, r.max(1));
    }
    let parts = (r / min_chunk)
        .min((TARGET_BLOCKS / blocks.max(1)).max(1))
        .max(1);
    let chunk = r.div_ceil(parts);
    (r.div_ceil(chunk), chunk)
}

/// The strategy for `[outer, r, inner]` (all non-zero but `r`).
pub(crate) fn strategy(outer: usize, r: usize, inner: usize) -> Strategy {
    let serial = Strategy {
        pass: Pass::Serial,
        parts: 1,
        chunk: r.max(1),
    };
    if r <= SERIAL_MAX_R {
        return serial;
    }
    if inner == 1 {
        let (parts, chunk) = split(r, outer, 16 * 1024);
        return Strategy {
            pass: Pass::Rows,
            parts,
            chunk,
        };
    }
    if outer.saturating_mul(inner) >= SERIAL_MIN_OUTPUTS {
        return serial;
    }
    let blocks = outer.saturating_mul(inner.div_ceil(32));
    let (parts, chunk) = split(r, blocks, 2 * 1024);
    Strategy {
        pass: Pass::Cols,
        parts,
        chunk,
    }
}

/// A launch of `blocks` blocks of [`BLOCK`] threads (capped; the kernels
/// loop over the rest).
pub(crate) fn blocks_config(blocks: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.clamp(1, MAX_GRID) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `n` as the kernels' 64-bit index (tensor sizes always fit).
pub(crate) fn idx(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The compiled kernels of one reduction source.
#[derive(Debug)]
pub(crate) struct ReduceFunctions {
    /// `serial`.
    pub(crate) serial: CudaFunction,
    /// `serial_acc`.
    pub(crate) serial_acc: CudaFunction,
    /// `rows`.
    pub(crate) rows: CudaFunction,
    /// `rows_part`.
    pub(crate) rows_part: CudaFunction,
    /// `cols`.
    pub(crate) cols: CudaFunction,
    /// `cols_part`.
    pub(crate) cols_part: CudaFunction,
}

impl ReduceFunctions {
    /// The entries of the reduction source `source`, compiled (or found
    /// cached) for `gpu`.
    pub(crate) fn new(gpu: &GpuDevice, source: &KernelSource) -> Result<Self, KernelError> {
        Ok(Self {
            serial: gpu.function(source, entry::SERIAL)?,
            serial_acc: gpu.function(source, entry::SERIAL_ACC)?,
            rows: gpu.function(source, entry::ROWS)?,
            rows_part: gpu.function(source, entry::ROWS_PART)?,
            cols: gpu.function(source, entry::COLS)?,
            cols_part: gpu.function(source, entry::COLS_PART)?,
        })
    }
}

/// Queues the reduction of `x` (the device address of `[outer, r, inner]`
/// elements of `T`) into `y` (of `[outer, inner]`), with partial
/// accumulators of `acc_size` bytes (a temporary of `ctx`'s device) when
/// the strategy splits. `outer · inner` must be non-zero; the caller checks
/// that `x` and `y` hold those counts.
pub(crate) fn reduce_into(
    ctx: &OpKernelContext<'_>,
    f: &ReduceFunctions,
    x: u64,
    y: u64,
    (outer, r, inner): (usize, usize, usize),
    acc_size: usize,
) -> Result<(), KernelError> {
    let n_out = outer * inner;
    if n_out == 0 {
        return Err(KernelError::internal(format!(
            "reduction of [{outer}, {r}, {inner}] into no outputs"
        )));
    }
    let dev = ctx.gpu()?;
    let s = strategy(outer, r, inner);
    let (o, rr, i, count) = (idx(outer), idx(r), idx(inner), idx(r));
    let (parts, chunk) = (idx(s.parts), idx(s.chunk));
    let launch_err = |what: &'static str| move |e| gpu_error(what, e);
    if s.parts == 1 {
        match s.pass {
            Pass::Serial => {
                let mut l = dev.stream().launch_builder(&f.serial);
                l.arg(&x).arg(&y).arg(&o).arg(&rr).arg(&i).arg(&count);
                // SAFETY: `serial(const T*, T*, index_t x4)` matches; `x`
                // holds outer·r·inner and `y` outer·inner elements (checked).
                unsafe { l.launch(grid_for(n_out)) }
                    .map_err(launch_err("launching reduce serial"))?;
            }
            Pass::Rows => {
                let mut l = dev.stream().launch_builder(&f.rows);
                l.arg(&x)
                    .arg(&y)
                    .arg(&o)
                    .arg(&rr)
                    .arg(&parts)
                    .arg(&chunk)
                    .arg(&count);
                // SAFETY: `rows(const T*, T*, index_t x5)` matches; inner is
                // 1, `x` holds outer·r elements and `y` outer (parts = 1).
                unsafe { l.launch(blocks_config(outer)) }
                    .map_err(launch_err("launching reduce rows"))?;
            }
            Pass::Cols => {
                let mut l = dev.stream().launch_builder(&f.cols);
                l.arg(&x)
                    .arg(&y)
                    .arg(&o)
                    .arg(&rr)
                    .arg(&i)
                    .arg(&parts)
                    .arg(&chunk)
                    .arg(&count);
                // SAFETY: `cols(const T*, T*, index_t x6)` matches; sizes as
                // for `serial` (parts = 1); blocks are 256 threads.
                unsafe { l.launch(blocks_config(outer * inner.div_ceil(32))) }
                    .map_err(launch_err("launching reduce cols"))?;
            }
        }
        return Ok(());
    }
    // Partial accumulators [outer, parts, inner], then finished in order:
    // the `*_part` launch below writes every [o, p, i] accumulator (each
    // (o, p) block, or (o, tile, p) block, writes its row or columns) before
    // `serial_acc` reads them, in stream order.
    let acc_len = n_out * s.parts;
    let mut acc_tensor = ctx.allocate_temp(DataType::DtUint8, [acc_len * acc_size])?;
    let acc = gpu_ptr_mut(&mut acc_tensor)?;
    match s.pass {
        Pass::Rows => {
            let mut l = dev.stream().launch_builder(&f.rows_part);
            l.arg(&x)
                .arg(&acc)
                .arg(&o)
                .arg(&rr)
                .arg(&parts)
                .arg(&chunk)
                .arg(&count);
            // SAFETY: `rows_part(const T*, acc_t*, index_t x5)` matches;
            // `acc` holds outer·parts accumulators.
            unsafe { l.launch(blocks_config(outer * s.parts)) }
                .map_err(launch_err("launching reduce rows_part"))?;
        }
        _ => {
            let mut l = dev.stream().launch_builder(&f.cols_part);
            l.arg(&x)
                .arg(&acc)
                .arg(&o)
                .arg(&rr)
                .arg(&i)
                .arg(&parts)
                .arg(&chunk)
                .arg(&count);
            // SAFETY: `cols_part(const T*, acc_t*, index_t x6)` matches;
            // `acc` holds outer·parts·inner accumulators.
            unsafe { l.launch(blocks_config(outer * inner.div_ceil(32) * s.parts)) }
                .map_err(launch_err("launching reduce cols_part"))?;
        }
    }
    let mut l = dev.stream().launch_builder(&f.serial_acc);
    l.arg(&acc).arg(&y).arg(&o).arg(&parts).arg(&i).arg(&count);
    // SAFETY: `serial_acc(const acc_t*, T*, index_t x4)` matches: it reads
    // the outer·parts·inner accumulators and writes outer·inner outputs,
    // dividing means by the full count `r`.
    unsafe { l.launch(grid_for(n_out)) }.map_err(launch_err("launching reduce serial_acc"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_reductions_run_a_thread_per_output() {
        assert_eq!(strategy(1000, 8, 1).pass, Pass::Serial);
        assert_eq!(strategy(1, 0, 5).pass, Pass::Serial);
        assert_eq!(strategy(1 << 10, 1000, 1 << 10).pass, Pass::Serial);
    }

    #[test]
    fn long_rows_use_blocks_and_split_when_few() {
        let s = strategy(100_000, 1000, 1);
        assert_eq!((s.pass, s.parts, s.chunk), (Pass::Rows, 1, 1000));
        let s = strategy(1, 100_000_000, 1);
        assert_eq!(s.pass, Pass::Rows);
        assert!(s.parts > 1 && s.parts <= TARGET_BLOCKS);
        assert!(s.parts * s.chunk >= 100_000_000 && (s.parts - 1) * s.chunk < 100_000_000);
    }

    #[test]
    fn columns_use_tiles_and_split_when_few() {
        let s = strategy(1, 1000, 64);
        assert_eq!((s.pass, s.parts), (Pass::Cols, 1));
        let s = strategy(1, 1_000_000, 4);
        assert_eq!(s.pass, Pass::Cols);
        assert!(s.parts > 1);
        assert!(s.parts * s.chunk >= 1_000_000 && (s.parts - 1) * s.chunk < 1_000_000);
    }
}
