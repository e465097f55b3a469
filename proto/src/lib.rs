//! TensorFlow's framework protocol buffers as [prost] messages.
//!
//! Every message keeps TensorFlow's package (`tensorflow`), field numbers and
//! enum values, so bytes written here are read by TensorFlow and the other way
//! round. Fields are declared in field-number order, which makes prost's
//! encoding byte-identical to TensorFlow's C++ serializer for the same message.
//!
//! Besides the binary encoding ([`prost::Message`]), every message reads and
//! writes protobuf text format (`.pbtxt`) through [`TextFormat`].
//!
//! ```
//! use opreg_proto::{OpDef, TextFormat};
//! use prost::Message;
//!
//! let op = OpDef::from_pbtxt(r#"name: "Abs" input_arg { name: "x" type_attr: "T" }"#).unwrap();
//! assert_eq!(op.input_arg[0].type_attr, "T");
//! let bytes = op.encode_to_vec();
//! assert_eq!(OpDef::decode(bytes.as_slice()).unwrap(), op);
//! assert!(op.to_pbtxt().contains("name: \"Abs\""));
//! ```

mod attr_from;
mod data_type;
mod shape;
mod text_format;
mod text_printer;

#[allow(missing_docs, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/tensorflow.rs"));
}

pub use attr_from::ListElement;
pub use data_type::{DATA_TYPES, DataTypeExt, DataTypeInfo, UnknownDataType};
pub use generated::*;
pub use prost_reflect;
pub use text_format::{TextFormat, TextFormatError, descriptor_pool};

/// The serialized `FileDescriptorSet` of every message in this crate.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/tensorflow_descriptors.bin"));

pub use prost;
