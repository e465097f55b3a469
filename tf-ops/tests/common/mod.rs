//! Shared by the tests: the conformance cases and the registrations of this
//! crate and of registry-core's standard op set.

#![allow(dead_code)]

use std::path::PathBuf;

use registry_core::__private::{OpRegistration, inventory};

registry_core::link_ops!(tf_registry_ops);

/// One case of `tf_registry_2_21.json`: the op's name and TF's OpDef bytes.
pub struct Case {
    /// The op's name.
    pub name: String,
    /// The serialized OpDef TF 2.21 built.
    pub op_def: Vec<u8>,
}

/// The shared data directory (`$OPREG_SHARED_DIR`, else beside the checkout).
pub fn shared_dir() -> PathBuf {
    std::env::var_os("OPREG_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// The text of `conformance/tf_registry_2_21.json`.
pub fn registry_json() -> String {
    let path = shared_dir().join("conformance/tf_registry_2_21.json");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every case, in file order.
pub fn cases() -> Vec<Case> {
    use base64::Engine as _;
    let json: serde_json::Value = serde_json::from_str(&registry_json()).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let b64 = case["expect"]["op_def_pb_b64"].as_str().unwrap();
            Case {
                name: case["name"].as_str().unwrap().to_owned(),
                op_def: base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap(),
            }
        })
        .collect()
}

/// Whether a registration comes from this crate's generated ops.
pub fn is_generated(reg: &OpRegistration) -> bool {
    reg.location.module_path.starts_with("tf_registry_ops")
}

/// Whether a registration comes from registry-core's standard op set.
pub fn is_standard(reg: &OpRegistration) -> bool {
    reg.location.module_path.starts_with("opreg_standard_ops")
}

/// Every `#[op]` registration linked into the test binary.
pub fn registrations() -> impl Iterator<Item = &'static OpRegistration> {
    inventory::iter::<OpRegistration>.into_iter()
}
