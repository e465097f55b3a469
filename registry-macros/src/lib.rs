//! The `#[op]` attribute macro of opreg: TensorFlow's `REGISTER_OP`, with the
//! op's spec strings parsed and validated by `registry-spec` at compile time.
//!
//! Use it through `registry_core::op` (this crate's items are re-exported
//! there, and the code it generates names `registry_core`). The compiled,
//! tested examples live in registry-core's documentation.

mod args;
mod doc;
mod errors;
mod expand;
mod kernel;

use proc_macro::TokenStream;

/// Declares a TensorFlow op on a struct: the struct becomes the op's marker
/// type, implementing `registry_core::Op`, and the op is registered in the
/// global op registry.
///
/// ```ignore
/// use registry_core::{op, Op};
///
/// /// Computes the absolute value of a tensor.
/// ///
/// /// Given a tensor `x`, this operation returns a tensor containing the
/// /// absolute value of each element in `x`.
/// #[op(input = "x: T", output = "y: T", attr = "T: {half, float, double, int32, int64}")]
/// pub struct Abs;
///
/// assert_eq!(Abs::NAME, "Abs");
/// assert!(Abs::SIGNATURE.allows_type("T", registry_core::proto::DataType::DtFloat));
/// ```
///
/// Every spec string is parsed exactly as TensorFlow parses it, the OpDef is
/// checked with TF's `ValidateOpDef` rules, and every problem of the item is
/// reported at once, on the string literal it is about, with the position
/// inside the string drawn under it:
///
/// ```text
/// error: Unrecognized type string 'flaot'; did you mean 'float'? from Attr("T: {flaot}") for Op Abs
///            T: {flaot}
///                ^^^^^
///  --> src/ops.rs:3:13
///   |
/// 3 | #[op(attr = "T: {flaot}", input = "x: T", output = "y: T")]
///   |             ^^^^^^^^^^^^
/// ```
///
/// # Arguments
///
/// Spec strings, each key repeatable, in any order (attrs are parsed first,
/// as in TensorFlow):
///
/// | key | TF call | example |
/// |---|---|---|
/// | `input = "..."` | `Input(...)` | `input = "x: T"`, `input = "values: N * T"`, `input = "ref: Ref(T)"`, `input = "ids: int64"` |
/// | `output = "..."` | `Output(...)` | `output = "y: T"`, `output = "outputs: out_types"` |
/// | `attr = "..."` | `Attr(...)` | `attr = "T: {float, int32} = DT_FLOAT"`, `attr = "N: int >= 1"`, `attr = "padding: {'SAME', 'VALID'}"`, `attr = "T: <float, int32>"` |
/// | `control_output = "..."` | `ControlOutput(...)` | `control_output = "done"` |
///
/// Other keys, each at most once:
///
/// - `name = "..."`: the op's name; by default the struct's name. Op names
///   may start with `_` (`name = "_Retval"`) or hold `>`
///   (`name = "Namespace>MyOp"`), which Rust identifiers cannot.
/// - Flags, written as bare words: `commutative`, `aggregate`, `stateful`,
///   `allows_uninitialized_input`, `distributed_communication`
///   (`SetIsCommutative()`, `SetIsAggregate()`, ...).
/// - `deprecated(version = 26, explanation = "Use Foo instead")`: TF's
///   `Deprecated(version, explanation)`.
/// - `shape_fn = path::to::function`: the shape function, a
///   `fn(&mut InferenceContext) -> Result<(), ShapeError>`
///   (`registry_core::shape::ShapeFn`).
/// - `type_ctor = unary(TFT_SHAPE_TENSOR, "out_type")`: TF's
///   `SetTypeConstructor(full_type::Unary(TFT_SHAPE_TENSOR, "out_type"))`,
///   which gives output 0 that full type (`experimental_full_type`) of the
///   type attr named; the type id is a `FullTypeId` name.
///   `type_ctor = unary_tensor_container(TFT_ARRAY, "element_dtype")` is
///   TF's `full_type::UnaryTensorContainer` (output 0 is a container of
///   tensors of that type: `TFT_ARRAY[TFT_TENSOR[TFT_VAR]]`, the
///   TensorList ops' handles).
/// - `crate = path`: where `registry_core` is, when it is not reachable as
///   `::registry_core` (a re-export, or `crate = crate` inside registry-core
///   itself). Like serde's `#[serde(crate = "...")]`.
///
/// ```ignore
/// /// Returns x + y element-wise.
/// ///
/// /// x: The first addend.
/// /// y: The second addend.
/// /// z: The sum.
/// #[op(
///     name = "AddV2",
///     input = "x: T",
///     input = "y: T",
///     output = "z: T",
///     attr = "T: {bfloat16, half, float, double, int32, int64}",
///     commutative,
///     shape_fn = shapes::broadcast_binary,
/// )]
/// pub struct AddV2;
///
/// #[op(
///     input = "ref: Ref(T)",
///     output = "output_ref: Ref(T)",
///     attr = "T: type",
///     allows_uninitialized_input,
///     deprecated(version = 27, explanation = "Use ResourceVariable instead"),
///     crate = ::opreg::registry_core,
/// )]
/// pub struct OldAssign;
/// ```
///
/// # Doc text
///
/// The struct's doc comments are the op's TF `Doc(...)` text: one leading
/// space is stripped from each line and the lines are joined with `\n`. The
/// first paragraph is the summary, then the description, then optional
/// `name: description` lines for inputs, outputs and attrs (a line naming no
/// arg or attr is an error, as in TensorFlow). The doc comments stay on the
/// struct for rustdoc.
///
/// # What it generates
///
/// The struct, unchanged, and inside `const _: () = { ... };`:
///
/// - `impl Op for MyOp`: `NAME`, `SIGNATURE` (args and attrs as constants,
///   for other macros' compile-time checks) and `OP_DEF_BYTES` (the OpDef,
///   serialized at compile time);
/// - an `inventory` registration (`OpRegistration`) with the OpDef, the shape
///   function and the source location.
///
/// When the op has errors, the struct and an `Op` impl with an empty
/// signature are still emitted (and nothing is registered), so that other
/// uses of the type do not fail as well.
#[proc_macro_attribute]
pub fn op(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}

/// Registers a kernel: TensorFlow's `REGISTER_KERNEL_BUILDER`, checked
/// against the op at compile time.
///
/// On a function `fn(&mut OpKernelContext<'_>) -> Result<(), KernelError>`
/// (a stateless kernel) or on a type implementing `BuildKernel` and
/// `OpKernel` (built once per node from its attrs):
///
/// ```ignore
/// use registry_core::{kernel, kernel::{KernelError, OpKernelContext}};
/// use opreg_standard_ops::Abs;
///
/// #[kernel(op = Abs, device = CPU, T = [float, double, int32])]
/// fn abs<T: Copy + PartialOrd + std::ops::Neg<Output = T> + Default>(
///     ctx: &mut OpKernelContext<'_>,
/// ) -> Result<(), KernelError> {
///     // ...
/// #   Ok(())
/// }
/// ```
///
/// # Arguments
///
/// - `op = Path`: the op's struct, declared with `#[op]` (in any crate).
/// - `device = CPU | GPU | "Name"`: the device type.
/// - `Attr = [types]`: a type constraint. Types are TF's names (`float`,
///   `int32`, `DT_HALF`) or Rust's (`f32`, `i32`, `f16`). A list expands into
///   one registration per type (every combination, with several
///   constraints). A generic parameter named like the attr (`fn abs<T>`) is
///   instantiated with each type's Rust element type.
/// - `host_memory = ["arg", ...]`: args kept in host memory.
/// - `label = "..."`: only nodes whose `_kernel` attr is this label get it.
/// - `priority = N`: among matching kernels the highest priority wins.
/// - `crate = path`: where `registry_core` is.
///
/// Every key at once, on a kernel struct (TF's `Reshape` keeps its `shape`
/// input on the host; two constraints expand to 2 × 2 registrations):
///
/// ```ignore
/// #[kernel(
///     op = Reshape,
///     device = GPU,
///     T = [float, DT_HALF],
///     Tshape = [int32, i64],
///     host_memory = ["shape"],
///     label = "fast",
///     priority = 1,
///     crate = ::opreg::registry_core,
/// )]
/// struct FastReshape;
/// ```
///
/// # Compile-time checks
///
/// The op must exist and implement `Op`; every constrained attr must be one
/// of its `type` or `list(type)` attrs; every type must be in the attr's
/// allowed set; every host-memory arg must be one of its inputs or outputs.
/// Each violation is a compile error pointing at the offending name, e.g.
/// ``#[kernel]: op `Abs` does not allow type `string` for attr `T` ``.
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(args.into(), item.into()).into()
}

/// Compares a kernel with its op's signature while macros expand (what the
/// hidden macro `#[op]` emits beside each op calls, for `#[kernel]`). Not a
/// public API.
#[doc(hidden)]
#[proc_macro]
pub fn __check_kernel(input: TokenStream) -> TokenStream {
    kernel::check::check(input.into()).into()
}
