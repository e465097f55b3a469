//! Type constructors (TF's `SetTypeConstructor`): functions of the op that
//! set the full type (`experimental_full_type`) of its args, which the spec
//! strings have no words for. The standard ops need TF's `full_type::Unary`
//! (`Shape`: `Unary(TFT_SHAPE_TENSOR, "out_type")`) and
//! `full_type::UnaryTensorContainer` (the TensorList ops:
//! `UnaryTensorContainer(TFT_ARRAY, "element_dtype")`).

use opreg_proto::full_type_def::Attr;
use opreg_proto::{FullTypeDef, FullTypeId, OpDef};

/// A type constructor of an op, applied to its OpDef once the specs are
/// parsed, as TF's `OpDefBuilder::Finalize` applies it.
///
/// ```
/// use registry_spec::{OpSpec, TypeConstructor};
/// use registry_spec::__proto::FullTypeId;
///
/// let op_def = OpSpec::new("Shape")
///     .input("input: T")
///     .output("output: out_type")
///     .attr("T: type")
///     .attr("out_type: {int32, int64} = DT_INT32")
///     .type_constructor(TypeConstructor::unary(FullTypeId::TftShapeTensor, "out_type"))
///     .build()
///     .unwrap();
/// let full = op_def.output_arg[0].experimental_full_type.as_ref().unwrap();
/// assert_eq!(full.type_id, FullTypeId::TftShapeTensor as i32);
/// assert_eq!(full.args[0].type_id, FullTypeId::TftVar as i32);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeConstructor {
    /// TF's `full_type::Unary(type_id, var)`: output 0 has full type
    /// `type_id` of one argument, the type variable `var` (the name of a
    /// type attr).
    Unary {
        /// The full type's id (`TFT_SHAPE_TENSOR`, `TFT_TENSOR`, ...).
        type_id: FullTypeId,
        /// The type variable: the name of the attr holding the type.
        var: String,
    },
    /// TF's `full_type::UnaryTensorContainer(type_id, var)`: output 0 has
    /// full type `type_id` of one tensor of the type variable `var`
    /// (`TFT_ARRAY[TFT_TENSOR[TFT_VAR var]]` for a TensorList handle).
    ///
    /// ```
    /// use registry_spec::{OpSpec, TypeConstructor};
    /// use registry_spec::__proto::FullTypeId;
    ///
    /// let op_def = OpSpec::new("TensorListPushBack")
    ///     .input("input_handle: variant")
    ///     .input("tensor: element_dtype")
    ///     .output("output_handle: variant")
    ///     .attr("element_dtype: type")
    ///     .type_constructor(TypeConstructor::unary_tensor_container(
    ///         FullTypeId::TftArray,
    ///         "element_dtype",
    ///     ))
    ///     .build()
    ///     .unwrap();
    /// let full = op_def.output_arg[0].experimental_full_type.as_ref().unwrap();
    /// assert_eq!(full.type_id, FullTypeId::TftArray as i32);
    /// assert_eq!(full.args[0].type_id, FullTypeId::TftTensor as i32);
    /// assert_eq!(full.args[0].args[0].type_id, FullTypeId::TftVar as i32);
    /// ```
    UnaryTensorContainer {
        /// The container's full type id (`TFT_ARRAY`, ...).
        type_id: FullTypeId,
        /// The type variable of the tensors it holds: the name of a type attr.
        var: String,
    },
}

impl TypeConstructor {
    /// TF's `full_type::Unary(type_id, var)`.
    pub fn unary(type_id: FullTypeId, var: impl Into<String>) -> Self {
        TypeConstructor::Unary {
            type_id,
            var: var.into(),
        }
    }

    /// TF's `full_type::UnaryTensorContainer(type_id, var)`.
    pub fn unary_tensor_container(type_id: FullTypeId, var: impl Into<String>) -> Self {
        TypeConstructor::UnaryTensorContainer {
            type_id,
            var: var.into(),
        }
    }

    /// Sets the full types this constructor gives; an error when the op
    /// lacks the arg it sets (TF would index past the op's outputs).
    pub fn apply(&self, op_def: &mut OpDef) -> Result<(), String> {
        let (type_id, var, function) = match self {
            TypeConstructor::Unary { type_id, var } => (type_id, var, "Unary"),
            TypeConstructor::UnaryTensorContainer { type_id, var } => {
                (type_id, var, "UnaryTensorContainer")
            }
        };
        let Some(output) = op_def.output_arg.first_mut() else {
            return Err(format!(
                "type constructor {function}({}, '{var}') sets output 0, but the op has no \
                 outputs",
                type_id.as_str_name()
            ));
        };
        let type_var = FullTypeDef {
            type_id: FullTypeId::TftVar as i32,
            args: Vec::new(),
            attr: Some(Attr::S(var.clone())),
        };
        let arg = match self {
            TypeConstructor::Unary { .. } => type_var,
            TypeConstructor::UnaryTensorContainer { .. } => FullTypeDef {
                type_id: FullTypeId::TftTensor as i32,
                args: vec![type_var],
                attr: None,
            },
        };
        output.experimental_full_type = Some(FullTypeDef {
            type_id: *type_id as i32,
            args: vec![arg],
            attr: None,
        });
        Ok(())
    }
}
