//! [`OpSpec`]: the strings of one op (TF's `OpDefBuilder`), and building its OpDef.

use opreg_proto::{OpDef, OpDeprecation};

use crate::error::{SpecError, SpecErrorKind, SpecErrors, SpecSite};
use crate::type_ctor::TypeConstructor;
use crate::validate::{ValidationError, ValidationSubject};

/// The boolean flags of an op (TF's `SetIsCommutative()` and friends).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OpFlags {
    /// `SetIsCommutative()`: inputs may be reordered.
    pub commutative: bool,
    /// `SetIsAggregate()`: e.g. AddN.
    pub aggregate: bool,
    /// `SetIsStateful()`: not to be folded or deduplicated.
    pub stateful: bool,
    /// `SetAllowsUninitializedInput()`.
    pub allows_uninitialized_input: bool,
    /// `SetIsDistributedCommunication()`.
    pub distributed_communication: bool,
}

/// `Deprecated(version, explanation)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Deprecation {
    /// First GraphDef version in which the op is gone.
    pub version: i32,
    /// Why, and what to use instead.
    pub explanation: String,
}

/// The specs of one op, exactly as TF's `REGISTER_OP` chain gives them.
///
/// Attrs are parsed first, then inputs, then outputs, control outputs and the
/// Doc text, whatever order they were added in (as TensorFlow does). Every
/// problem is collected: [`OpSpec::build`] reports them all at once.
///
/// ```
/// use registry_spec::OpSpec;
/// let op = OpSpec::new("AddN")
///     .input("inputs: N * T")
///     .output("sum: T")
///     .attr("N: int >= 1")
///     .attr("T: {numbertype, variant}")
///     .commutative()
///     .aggregate()
///     .build()
///     .unwrap();
/// assert!(op.is_aggregate && op.is_commutative);
/// assert_eq!(op.input_arg[0].number_attr, "N");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpSpec {
    /// The op's name (`Abs`, `Namespace>Op`, `_Internal`).
    pub name: String,
    /// Attr specs: `name: type[ >= min][ = default]`.
    pub attrs: Vec<String>,
    /// Input specs: `name: [Ref(]type|attr|N * T[)]`.
    pub inputs: Vec<String>,
    /// Output specs, same grammar as inputs.
    pub outputs: Vec<String>,
    /// Control output names.
    pub control_outputs: Vec<String>,
    /// Doc texts (TF allows one; a second is an error).
    pub docs: Vec<String>,
    /// Boolean flags.
    pub flags: OpFlags,
    /// `Deprecated(...)` calls (TF allows one; a second is an error).
    pub deprecations: Vec<Deprecation>,
    /// How many times a shape function was set (a second is an error).
    pub shape_fn_count: usize,
    /// The type constructor (`SetTypeConstructor`; a later one replaces an
    /// earlier one, as in TF).
    pub type_ctor: Option<TypeConstructor>,
}

impl OpSpec {
    /// Starts the specs of op `name`.
    pub fn new(name: impl Into<String>) -> Self {
        OpSpec {
            name: name.into(),
            ..OpSpec::default()
        }
    }
    /// Adds an attr spec, e.g. `"T: {float, int32} = DT_FLOAT"`.
    pub fn attr(mut self, spec: impl Into<String>) -> Self {
        self.attrs.push(spec.into());
        self
    }
    /// Adds an input spec, e.g. `"x: T"`.
    pub fn input(mut self, spec: impl Into<String>) -> Self {
        self.inputs.push(spec.into());
        self
    }
    /// Adds an output spec, e.g. `"y: T"`.
    pub fn output(mut self, spec: impl Into<String>) -> Self {
        self.outputs.push(spec.into());
        self
    }
    /// Adds a control output name.
    pub fn control_output(mut self, name: impl Into<String>) -> Self {
        self.control_outputs.push(name.into());
        self
    }
    /// Sets the Doc text (summary, description, `name: description` lines).
    pub fn doc(mut self, text: impl Into<String>) -> Self {
        self.docs.push(text.into());
        self
    }
    /// Marks the op commutative.
    pub fn commutative(mut self) -> Self {
        self.flags.commutative = true;
        self
    }
    /// Marks the op an aggregate.
    pub fn aggregate(mut self) -> Self {
        self.flags.aggregate = true;
        self
    }
    /// Marks the op stateful.
    pub fn stateful(mut self) -> Self {
        self.flags.stateful = true;
        self
    }
    /// Lets the op take uninitialized inputs.
    pub fn allows_uninitialized_input(mut self) -> Self {
        self.flags.allows_uninitialized_input = true;
        self
    }
    /// Marks the op as distributed communication.
    pub fn distributed_communication(mut self) -> Self {
        self.flags.distributed_communication = true;
        self
    }
    /// Deprecates the op from GraphDef `version` on.
    pub fn deprecated(mut self, version: i32, explanation: impl Into<String>) -> Self {
        self.deprecations.push(Deprecation {
            version,
            explanation: explanation.into(),
        });
        self
    }
    /// Sets the type constructor (TF's `SetTypeConstructor`), which gives
    /// args their full type once the specs are parsed.
    pub fn type_constructor(mut self, ctor: TypeConstructor) -> Self {
        self.type_ctor = Some(ctor);
        self
    }
    /// Records that a shape function was set (the builder API counts calls).
    pub fn with_shape_fn(mut self) -> Self {
        self.shape_fn_count += 1;
        self
    }

    /// Parses every spec and validates the result with TF's `ValidateOpDef`
    /// rules. On success the OpDef is byte-identical to TensorFlow's for the
    /// same specs.
    pub fn build(&self) -> Result<OpDef, SpecErrors> {
        let mut errors = Vec::new();
        let op_def = self.parse(&mut errors);
        if errors.is_empty()
            && let Err(e) = crate::validate::validate_op_def(&op_def)
        {
            errors.push(locate(self, &op_def, e));
        }
        if errors.is_empty() {
            Ok(op_def)
        } else {
            Err(SpecErrors(errors))
        }
    }

    /// Parses the specs without running `ValidateOpDef` (TF's
    /// `OpDefBuilder::Finalize`), collecting every parse error.
    pub fn parse(&self, errors: &mut Vec<SpecError>) -> OpDef {
        let mut op_def = OpDef {
            name: self.name.clone(),
            ..OpDef::default()
        };
        let mut failed_attrs = Vec::new();
        for (i, spec) in self.attrs.iter().enumerate() {
            if let Err(e) = crate::attr::parse_attr(spec, &mut op_def) {
                let name = op_def
                    .attr
                    .last()
                    .map(|a| a.name.clone())
                    .filter(|n| !n.is_empty());
                // When even the name did not parse (`T {float}`), its leading
                // word is still what inputs will refer to.
                failed_attrs.push(name.unwrap_or_else(|| leading_word(spec).to_owned()));
                errors.push(self.error(SpecSite::Attr(i), spec, e));
            }
        }
        for (i, spec) in self.inputs.iter().enumerate() {
            if let Err(e) = crate::arg::parse_arg(spec, false, &mut op_def)
                && !crate::arg::is_cascade(&e, &failed_attrs)
            {
                errors.push(self.error(SpecSite::Input(i), spec, e));
            }
        }
        for (i, spec) in self.outputs.iter().enumerate() {
            if let Err(e) = crate::arg::parse_arg(spec, true, &mut op_def)
                && !crate::arg::is_cascade(&e, &failed_attrs)
            {
                errors.push(self.error(SpecSite::Output(i), spec, e));
            }
        }
        for (i, name) in self.control_outputs.iter().enumerate() {
            if let Err(e) = crate::arg::parse_control_output(name, &mut op_def) {
                errors.push(self.error(SpecSite::ControlOutput(i), name, e));
            }
        }
        if self.docs.len() > 1 {
            errors.push(self.error(
                SpecSite::Doc,
                "",
                crate::scanner::Failure::whole(SpecErrorKind::DocTwice),
            ));
        }
        if let Some(doc) = self.docs.first()
            && let Err(e) = crate::doc::apply_doc(doc, &mut op_def)
        {
            errors.push(self.error(SpecSite::Doc, doc, e));
        }
        if let Some(dep) = self.deprecations.first() {
            op_def.deprecation = Some(OpDeprecation {
                version: dep.version,
                explanation: dep.explanation.clone(),
            });
        }
        if self.deprecations.len() > 1 {
            errors.push(self.error(
                SpecSite::Deprecation,
                "",
                crate::scanner::Failure::whole(SpecErrorKind::DeprecatedTwice),
            ));
        }
        if self.shape_fn_count > 1 {
            errors.push(self.error(
                SpecSite::Op,
                "",
                crate::scanner::Failure::whole(SpecErrorKind::ShapeFnTwice),
            ));
        }
        if let Some(ctor) = &self.type_ctor
            && let Err(message) = ctor.apply(&mut op_def)
        {
            errors.push(self.error(
                SpecSite::Op,
                "",
                crate::scanner::Failure::whole(SpecErrorKind::TypeConstructor(message)),
            ));
        }
        let flags = self.flags;
        op_def.is_commutative |= flags.commutative;
        op_def.is_aggregate |= flags.aggregate;
        op_def.is_stateful |= flags.stateful;
        op_def.allows_uninitialized_input |= flags.allows_uninitialized_input;
        op_def.is_distributed_communication |= flags.distributed_communication;
        op_def
    }

    fn error(&self, site: SpecSite, spec: &str, failure: crate::scanner::Failure) -> SpecError {
        SpecError {
            op: self.name.clone(),
            site,
            spec: spec.to_owned(),
            span: failure.span,
            kind: failure.kind,
            suggestion: failure.suggestion,
        }
    }
}

/// The identifier at the start of a spec (after spaces), or "".
fn leading_word(spec: &str) -> &str {
    let spec = spec.trim_start();
    let end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(spec.len());
    &spec[..end]
}

/// Points a validation error at the spec that declared its subject.
fn locate(spec: &OpSpec, op_def: &OpDef, error: ValidationError) -> SpecError {
    let find = |specs: &[String], name: &str, site: fn(usize) -> SpecSite| {
        specs
            .iter()
            .position(|s| spec_name(s) == Some(name))
            .map(|i| (site(i), specs[i].clone()))
    };
    let found = match &error.subject {
        ValidationSubject::OpName => Some((SpecSite::Name, spec.name.clone())),
        ValidationSubject::Attr(name) | ValidationSubject::AttrDefault(name) => {
            find(&spec.attrs, name, SpecSite::Attr)
        }
        ValidationSubject::Input(name) => find(&spec.inputs, name, SpecSite::Input),
        ValidationSubject::Output(name) => find(&spec.outputs, name, SpecSite::Output),
    };
    let (site, text) = found.unwrap_or((SpecSite::Op, String::new()));
    let span = match &error.subject {
        ValidationSubject::OpName => 0..text.len(),
        ValidationSubject::AttrDefault(_) => match text.find('=') {
            Some(eq) => {
                let start = eq + 1 + (text[eq + 1..].len() - text[eq + 1..].trim_start().len());
                start..text.len()
            }
            None => 0..text.len(),
        },
        ValidationSubject::Attr(_) | ValidationSubject::Input(_) | ValidationSubject::Output(_) => {
            0..text.find(':').unwrap_or(text.len())
        }
    };
    SpecError {
        op: spec.name.clone(),
        site,
        spec: text,
        span,
        kind: SpecErrorKind::Validation {
            context: error.context.text(op_def),
            message: error.message,
        },
        suggestion: None,
    }
}

/// The `name` of a `name: ...` spec.
fn spec_name(spec: &str) -> Option<&str> {
    spec.split_once(':').map(|(name, _)| name.trim())
}
