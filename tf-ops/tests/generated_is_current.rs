//! `src/generated.rs` is what the generator writes from the conformance data
//! today; regenerate it with `cargo run -p tf-registry-ops-gen` otherwise.

mod common;

#[test]
fn generated_rs_is_current() {
    let expected =
        tf_registry_ops_gen::generate(&common::registry_json(), &opreg_standard_ops::NAMES)
            .unwrap();
    let path = tf_registry_ops_gen::generated_rs_path();
    let actual = std::fs::read_to_string(&path).unwrap();
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e);
        let line = line.unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} is stale (first difference at line {}): run `cargo run -p tf-registry-ops-gen`",
            path.display(),
            line + 1
        );
    }
}
