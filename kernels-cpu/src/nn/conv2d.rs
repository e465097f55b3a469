//! `Conv2D`: validation and output geometry (TF's `InitConv2DParameters`,
//! `ComputeConv2DDimension` and the CPU launcher's checks); the arithmetic
//! is in [`super::im2col`].

use std::marker::PhantomData;

use registry_core::kernel;
use registry_core::kernel::{
    BuildKernel, KernelError, OpKernel, OpKernelConstruction, OpKernelContext,
};
use registry_core::standard_ops::Conv2D;

use super::gemm::GemmElement;
use super::im2col::{ConvGeometry, conv2d_nhwc};
use super::window::{DataFormat, Padding, check_int, check_valid_padding, windowed_output};

/// `Conv2D` on the CPU (NHWC only, as TensorFlow's CPU kernel): im2col
/// patches multiplied by the filter with the `gemm` crate (`int32` with a
/// wrapping integer loop). Grouped convolution (input depth a multiple of
/// the filter's input depth) runs one product per group; 1×1 stride-1
/// convolutions multiply the input directly.
#[kernel(op = Conv2D, device = CPU, T = [half, bfloat16, float, double, int32])]
#[derive(Debug)]
pub struct Conv2DKernel<T> {
    strides: [i64; 4],
    dilations: [i64; 4],
    padding: Padding,
    explicit_paddings: Vec<i64>,
    format: DataFormat,
    _t: PhantomData<fn() -> T>,
}

impl<T: GemmElement> BuildKernel for Conv2DKernel<T> {
    fn build(ctx: &OpKernelConstruction<'_>) -> Result<Self, KernelError> {
        let dilations: Vec<i64> = ctx.attr("dilations")?;
        let strides: Vec<i64> = ctx.attr("strides")?;
        let padding = Padding::parse(&ctx.attr::<String>("padding")?)?;
        let explicit_paddings: Vec<i64> = ctx.attr("explicit_paddings")?;
        let format = DataFormat::parse(&ctx.attr::<String>("data_format")?)?;
        let dilations: [i64; 4] = dilations.try_into().map_err(|_| {
            KernelError::invalid_argument(
                "Sliding window dilations field must specify 4 dimensions",
            )
        })?;
        let strides: [i64; 4] = strides.try_into().map_err(|_| {
            KernelError::invalid_argument("Sliding window strides field must specify 4 dimensions")
        })?;
        let at = |v: &[i64; 4], d: char| v[format.index(d)];
        if at(&strides, 'N') != 1 || at(&strides, 'C') != 1 {
            return Err(KernelError::unimplemented(
                "Current implementation does not yet support strides in the batch and depth \
                 dimensions.",
            ));
        }
        registry_core::kernel_ensure!(
            at(&strides, 'H') > 0 && at(&strides, 'W') > 0,
            "Row and column strides should be larger than 0."
        );
        if at(&dilations, 'N') != 1 || at(&dilations, 'C') != 1 {
            return Err(KernelError::unimplemented(
                "Current implementation does not yet support dilations in the batch and depth \
                 dimensions.",
            ));
        }
        registry_core::kernel_ensure!(
            at(&dilations, 'H') > 0 && at(&dilations, 'W') > 0,
            "Dilated rates should be larger than 0."
        );
        check_valid_padding(padding, &explicit_paddings, format)?;
        Ok(Self {
            strides,
            dilations,
            padding,
            explicit_paddings,
            format,
            _t: PhantomData,
        })
    }
}

impl<T: GemmElement> OpKernel for Conv2DKernel<T> {
    fn compute(&self, ctx: &mut OpKernelContext<'_>) -> Result<(), KernelError> {
        let input = ctx.input(0)?.clone();
        let filter = ctx.input(1)?.clone();
        let geo = self.geometry(input.dims(), filter.dims())?;
        let out_shape = match self.format {
            DataFormat::Nhwc => [geo.batch, geo.out_rows, geo.out_cols, geo.out_depth],
            DataFormat::Nchw => [geo.batch, geo.out_depth, geo.out_rows, geo.out_cols],
        };
        let out = ctx.allocate_output(0, out_shape)?;
        if out.num_elements() == 0 || input.num_elements() == 0 {
            // Nothing to compute, or only padding: the zero-filled output.
            return Ok(());
        }
        if self.format != DataFormat::Nhwc {
            return Err(KernelError::unimplemented(format!(
                "The Conv2D op currently only supports the NHWC tensor format on the CPU. \
                 The op was given the format: {}",
                self.format.name()
            )));
        }
        registry_core::kernel_ensure!(
            self.explicit_paddings
                .iter()
                .all(|&p| i32::try_from(p).is_ok()),
            "filter too large"
        );
        registry_core::kernel_ensure!(
            geo.in_depth.is_multiple_of(geo.patch_depth),
            "input depth must be evenly divisible by filter depth: {} vs {}",
            geo.in_depth,
            geo.patch_depth
        );
        registry_core::kernel_ensure!(
            filter.num_elements() > 0,
            "filter must not have zero elements (i.e. all dimensions must be non-zero)"
        );
        let groups = geo.in_depth / geo.patch_depth;
        registry_core::kernel_ensure!(
            geo.out_depth.is_multiple_of(groups) && geo.out_depth >= groups,
            "output depth must be evenly divisible by number of groups: {} vs {}",
            geo.out_depth,
            groups
        );
        conv2d_nhwc(
            &geo,
            input.as_slice::<T>()?,
            filter.as_slice::<T>()?,
            out.as_mut_slice::<T>()?,
        )
    }
}

impl<T> Conv2DKernel<T> {
    /// Checks the shapes and computes the output geometry (TF's
    /// `ComputeConv2DDimension`).
    fn geometry(&self, input: &[usize], filter: &[usize]) -> Result<ConvGeometry, KernelError> {
        let shape = |d: &[usize]| {
            let dims: Vec<String> = d.iter().map(usize::to_string).collect();
            format!("[{}]", dims.join(","))
        };
        let (&[_, _, _, _], &[fh, fw, patch_depth, out_depth]) = (input, filter) else {
            return Err(KernelError::invalid_argument(if input.len() != 4 {
                format!("convolution input must be 4-dimensional: {}", shape(input))
            } else {
                format!(
                    "convolution filter must be 4-dimensional: {}",
                    shape(filter)
                )
            }));
        };
        for &d in &filter[..3] {
            check_int(d, "filter too large")?;
        }
        let f = self.format;
        let in_depth = input[f.index('C')];
        check_int(in_depth, "Input depth too large")?;
        check_int(patch_depth, "Patch depth too large")?;
        registry_core::kernel_ensure!(
            patch_depth > 0,
            "filter depth must be stricly positive, got {patch_depth}"
        );
        registry_core::kernel_ensure!(
            in_depth.is_multiple_of(patch_depth),
            "input depth must be evenly divisible by filter depth: {in_depth} vs {patch_depth}"
        );
        let (in_rows, in_cols, batch) = (input[f.index('H')], input[f.index('W')], input[0]);
        check_int(in_rows, "Input rows too large")?;
        check_int(in_cols, "Input cols too large")?;
        check_int(batch, "batch is too large")?;
        let explicit = |d: char| {
            let i = 2 * f.index(d);
            match self.explicit_paddings.get(i..i + 2) {
                Some(&[before, after]) => (before, after),
                _ => (0, 0),
            }
        };
        let (stride_rows, stride_cols) = (self.strides[f.index('H')], self.strides[f.index('W')]);
        let (dilation_rows, dilation_cols) =
            (self.dilations[f.index('H')], self.dilations[f.index('W')]);
        let rows = windowed_output(
            in_rows,
            fh,
            dilation_rows,
            stride_rows,
            self.padding,
            explicit('H'),
        )?;
        let cols = windowed_output(
            in_cols,
            fw,
            dilation_cols,
            stride_cols,
            self.padding,
            explicit('W'),
        )?;
        Ok(ConvGeometry {
            batch,
            in_rows,
            in_cols,
            in_depth,
            filter_rows: fh,
            filter_cols: fw,
            patch_depth,
            out_depth,
            out_rows: rows.out,
            out_cols: cols.out,
            stride_rows,
            stride_cols,
            dilation_rows,
            dilation_cols,
            pad_top: rows.pad_before,
            pad_left: cols.pad_before,
        })
    }
}
