//! Names the crate of ops with `use link_test_ops as _;` and nothing else.

use link_test_ops as _;

fn main() {
    for name in registry_core::OpRegistry::global().op_names() {
        println!("{name}");
    }
}
