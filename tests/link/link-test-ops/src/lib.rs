//! One op, `LinkTestOp` (`x: float -> y: float`), registered the way `#[op]`
//! does it. Nothing in this crate is ever called by the binaries.

use registry_core::__private::{OpRegistration, SourceLocation, inventory};

inventory::submit! {
    OpRegistration {
        name: "LinkTestOp",
        // OpDef { name: "LinkTestOp", input_arg: [x: float], output_arg: [y: float] }.
        op_def: b"\x0a\x0aLinkTestOp\x12\x05\x0a\x01x\x18\x01\x1a\x05\x0a\x01y\x18\x01",
        shape_fn: None,
        location: SourceLocation { file: file!(), line: line!(), module_path: module_path!() },
    }
}
