//! The nodes the kernel tests build: valid ones, from their inputs' dtypes,
//! with `NodeDefBuilder`.

use registry_core::node_def::NodeDefBuilder;
use registry_core::proto::{AttrValue, DataType, NodeDef};

/// A node `n` of `op` whose inputs have `dtypes` (setting the type attrs
/// and `N` they imply), with `attrs` and the op's defaults; panics unless
/// it is valid.
pub fn node(op: &str, dtypes: &[DataType], attrs: &[(&str, AttrValue)]) -> NodeDef {
    attrs
        .iter()
        .fold(
            NodeDefBuilder::new("n", op).fake_inputs(dtypes),
            |builder, (name, value)| builder.attr(*name, value.clone()),
        )
        .finalize()
        .unwrap_or_else(|e| panic!("{e}"))
}
