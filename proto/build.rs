//! Compiles `protos/tensorflow/*.proto` with protox (pure Rust, no system
//! `protoc`) and generates prost code plus the descriptor set that the text
//! format (pbtxt) reader and writer use.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("protos");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("tensorflow"))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "proto"));
    files.sort();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let descriptors = protox::compile(&files, [&root])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out_dir.join("tensorflow_descriptors.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    prost_build::Config::new()
        .btree_map(["."])
        .enable_type_names()
        .compile_fds(descriptors)?;
    Ok(())
}
