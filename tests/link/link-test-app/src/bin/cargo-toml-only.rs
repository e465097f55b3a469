//! Lists link-test-ops in Cargo.toml but never names it: rustc does not load
//! the crate, so its registrations are not linked.

fn main() {
    for name in registry_core::OpRegistry::global().op_names() {
        println!("{name}");
    }
}
