//! Names the crate of ops with `registry_core::link_ops!` (inside `main`).

fn main() {
    registry_core::link_ops!(link_test_ops);
    for name in registry_core::OpRegistry::global().op_names() {
        println!("{name}");
    }
}
