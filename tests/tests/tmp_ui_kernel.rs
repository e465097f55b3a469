//! Temporary: only the #[kernel] UI cases.
#[test]
fn ui_kernel() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass_kernel_*.rs");
    t.compile_fail("ui/fail_kernel_*.rs");
}
