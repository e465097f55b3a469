//! The op registry: TensorFlow's `OpRegistry`, with errors instead of aborts.
//!
//! Ops declared with [`#[op]`](macro@crate::op) anywhere in the binary are collected
//! by `inventory`. The [global](OpRegistry::global) registry is finalized on
//! first use: it walks the inventory once and indexes the op *names* only;
//! each OpDef is decoded from its compile-time bytes the first time that op is
//! looked up. Ops can also be registered at run time from specs
//! ([`OpRegistry::register`]) or OpDefs ([`OpRegistry::register_op_def`]),
//! through the same parser and validation as `#[op]`.
//!
//! ```
//! # use opreg_standard_ops as _; // links the standard ops
//! use registry_core::registry::OpRegistry;
//! use registry_core::spec::OpSpec;
//!
//! let registry = OpRegistry::new(); // or OpRegistry::global()
//! registry
//!     .register(
//!         OpSpec::new("Square")
//!             .input("x: T")
//!             .output("y: T")
//!             .attr("T: {float, int32}")
//!             .doc("Computes x * x."),
//!         None,
//!     )
//!     .unwrap();
//! let op = registry.look_up("Square").unwrap();
//! assert_eq!(op.op_def().input_arg[0].type_attr, "T");
//!
//! let err = registry.look_up("Sqare").unwrap_err();
//! assert!(err.to_string().contains("did you mean 'Square'"), "{err}");
//! ```
//!
//! # Semantics (TensorFlow's, minus the aborts)
//! - A name is registered once. A second registration of it is refused with
//!   [`RegistryError::AlreadyExists`], naming both places; the first stays.
//!   Among inventory registrations of one name, the one whose source location
//!   sorts first is kept, so the outcome does not depend on link order.
//! - Inventory ops are fixed once the registry is finalized and are read
//!   without any lock. Ops registered at run time live in a separate,
//!   lock-protected map that a lookup consults only when the name is not an
//!   inventory op.
//! - Nothing is ever removed or replaced, so references returned by
//!   [`OpRegistry::look_up`] stay valid as long as the registry.
//!
//! # Linking
//! `inventory` only sees registrations that are linked into the binary, and
//! rustc does not even load a dependency that the source never names: a crate
//! of ops that only appears in `Cargo.toml` contributes nothing. Name it once,
//! e.g. with [`link_ops!`](crate::link_ops) (see there).

// A `RegistryError` names the op and where each registration comes from
// (two origins for a duplicate), which takes more than clippy's 128 bytes.
// Errors are returned on cold paths (a failed lookup, a refused
// registration); a successful lookup returns a reference either way.
#![allow(clippy::result_large_err)]

mod error;

use std::fmt;
use std::panic::Location;
use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use opreg_proto::{NodeDef, OpDef, OpList, TextFormat};
use registry_spec::OpSpec;
use rustc_hash::FxHashMap;

pub use error::{InvalidOp, RegistryError};

use crate::op::{OpRegistration, SourceLocation};
use crate::shape::{Shape, ShapeError, ShapeFn};
use crate::tensor::Tensor;

/// Where an op's registration comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpOrigin {
    /// An inventory registration (what `#[op]` emits), declared here.
    Source(SourceLocation),
    /// Registered at run time ([`OpRegistry::register`] or
    /// [`OpRegistry::register_op_def`]) by the call at this location.
    RunTime(&'static Location<'static>),
    /// Declared in an op library loaded at run time
    /// (`opreg_runtime::library::load_op_library`).
    Library(&'static LibraryOrigin),
}

/// Where an op of a loaded op library comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LibraryOrigin {
    /// The library's file.
    pub library: &'static str,
    /// Where the library's source declares the op.
    pub location: SourceLocation,
}

impl OpOrigin {
    /// The source location of an inventory registration, if this is one.
    pub fn source_location(&self) -> Option<&SourceLocation> {
        match self {
            OpOrigin::Source(location) => Some(location),
            OpOrigin::Library(origin) => Some(&origin.location),
            OpOrigin::RunTime(_) => None,
        }
    }
}

impl fmt::Display for OpOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpOrigin::Source(location) => write!(f, "declared at {location}"),
            OpOrigin::RunTime(caller) => write!(f, "registered at run time at {caller}"),
            OpOrigin::Library(origin) => write!(
                f,
                "declared at {} in op library {}",
                origin.location, origin.library
            ),
        }
    }
}

/// A registered op: its OpDef, shape function and origin (TF's
/// `OpRegistrationData`).
#[derive(Debug, Clone)]
pub struct OpRegistrationData {
    op_def: OpDef,
    shape_fn: Option<ShapeFn>,
    origin: OpOrigin,
}

impl OpRegistrationData {
    /// The op's OpDef.
    pub fn op_def(&self) -> &OpDef {
        &self.op_def
    }

    /// The op's name.
    pub fn name(&self) -> &str {
        &self.op_def.name
    }

    /// The op's shape function, if it has one.
    pub fn shape_fn(&self) -> Option<ShapeFn> {
        self.shape_fn
    }

    /// Where the op was declared or registered.
    pub fn origin(&self) -> OpOrigin {
        self.origin
    }

    /// The output shapes of `node`, an instance of this op, given the
    /// shapes of its inputs and, where known, their values
    /// (`input_constants`: one per input, or empty when none is known):
    /// [`shape::infer_shapes`](crate::shape::infer_shapes) with this op's
    /// shape function. Fails with [`ShapeError::NoShapeFn`] when it has none.
    pub fn infer_shapes(
        &self,
        node: &NodeDef,
        input_shapes: &[Shape],
        input_constants: &[Option<&Tensor>],
    ) -> Result<Vec<Shape>, ShapeError> {
        let Some(shape_fn) = self.shape_fn else {
            return Err(ShapeError::NoShapeFn {
                node: node.name.clone(),
                op: self.name().to_owned(),
            });
        };
        crate::shape::infer_shapes(&self.op_def, shape_fn, node, input_shapes, input_constants)
    }
}

/// The callback set with [`OpRegistry::set_watcher`].
pub type Watcher = dyn Fn(&Result<(), RegistryError>, &OpDef) + Send + Sync;

/// How many suggestions a `NotFound` error carries at most.
const MAX_SUGGESTIONS: usize = 3;

/// A registry of ops (TensorFlow's `OpRegistry`): name -> OpDef, shape
/// function and origin.
///
/// Usually the [global](OpRegistry::global) one, which holds every op of the
/// binary. [`OpRegistry::from_inventory`] builds a private copy of it (to
/// measure finalization, or to register test ops without touching the global
/// one) and [`OpRegistry::new`] an empty one.
///
/// `OpRegistry` is `Send + Sync`: lookups and registrations may run on any
/// number of threads at once.
pub struct OpRegistry {
    /// Inventory registrations, fixed at construction.
    inventory: Vec<InventoryEntry>,
    /// Name -> index into `inventory`. Never changes after construction, so
    /// the lookup fast path takes no lock.
    index: FxHashMap<&'static str, usize>,
    /// Errors found while indexing the inventory (duplicate names).
    finalize_errors: Vec<RegistryError>,
    /// Ops registered at run time.
    runtime: RwLock<FxHashMap<Box<str>, RuntimeEntry>>,
    /// The registration watcher, if any.
    watcher: RwLock<Option<Arc<Watcher>>>,
}

/// An inventory registration and its OpDef, decoded on first lookup.
struct InventoryEntry {
    registration: &'static OpRegistration,
    resolved: OnceLock<Result<OpRegistrationData, RegistryError>>,
}

impl InventoryEntry {
    fn resolve(&self) -> Result<&OpRegistrationData, RegistryError> {
        self.resolved
            .get_or_init(|| resolve_registration(self.registration))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Decodes and checks the OpDef of an inventory registration.
fn resolve_registration(
    registration: &OpRegistration,
) -> Result<OpRegistrationData, RegistryError> {
    let origin = OpOrigin::Source(registration.location);
    let invalid = |reason| RegistryError::Invalid {
        name: registration.name.to_owned(),
        origin,
        reason,
    };
    let op_def = <OpDef as prost::Message>::decode(registration.op_def)
        .map_err(|e| invalid(InvalidOp::Decode(e)))?;
    if op_def.name != registration.name {
        return Err(invalid(InvalidOp::NameMismatch {
            registered: registration.name.to_owned(),
            op_def: op_def.name,
        }));
    }
    registry_spec::validate_op_def(&op_def).map_err(|e| invalid(InvalidOp::Validation(e)))?;
    Ok(OpRegistrationData {
        op_def,
        shape_fn: registration.shape_fn,
        origin,
    })
}

/// An op registered at run time. Its data is leaked on purpose: references
/// handed out by `look_up` must outlive the lock guard, and run-time
/// registrations are few and live as long as the process in practice, so a
/// `&'static` costs a few hundred bytes per op and needs no `unsafe`.
#[derive(Clone, Copy)]
struct RuntimeEntry(&'static OpRegistrationData);

impl RuntimeEntry {
    fn new(data: OpRegistrationData) -> Self {
        RuntimeEntry(Box::leak(Box::new(data)))
    }

    fn get(&self) -> &'static OpRegistrationData {
        self.0
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    // No code panics while holding these locks; if one ever did, the data is
    // still consistent (every update is a single insert).
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Default for OpRegistry {
    fn default() -> Self {
        OpRegistry::new()
    }
}

impl fmt::Debug for OpRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpRegistry")
            .field("inventory_ops", &self.inventory.len())
            .field("runtime_ops", &read(&self.runtime).len())
            .field("finalize_errors", &self.finalize_errors.len())
            .finish_non_exhaustive()
    }
}

impl OpRegistry {
    /// The registry of every op in the binary, finalized on first use (the
    /// inventory is walked once; only names are indexed).
    ///
    /// ```
    /// # use opreg_standard_ops as _; // links the standard ops
    /// use registry_core::registry::OpRegistry;
    ///
    /// let registry = OpRegistry::global();
    /// registry.process_registrations().expect("no duplicate or invalid op");
    /// for name in registry.op_names() {
    ///     let op = registry.look_up(name)?;
    ///     println!("{name}: {}", op.op_def().summary);
    /// }
    /// # Ok::<(), registry_core::RegistryError>(())
    /// ```
    pub fn global() -> &'static OpRegistry {
        static GLOBAL: OnceLock<OpRegistry> = OnceLock::new();
        GLOBAL.get_or_init(OpRegistry::from_inventory)
    }

    /// An empty registry (no inventory ops).
    pub fn new() -> Self {
        OpRegistry {
            inventory: Vec::new(),
            index: FxHashMap::default(),
            finalize_errors: Vec::new(),
            runtime: RwLock::new(FxHashMap::default()),
            watcher: RwLock::new(None),
        }
    }

    /// A new registry holding every inventory registration of the binary:
    /// what [`OpRegistry::global`] builds on first use.
    pub fn from_inventory() -> Self {
        // Collected first so that the index is allocated once, at its final size.
        let registrations: Vec<&'static OpRegistration> =
            inventory::iter::<OpRegistration>.into_iter().collect();
        OpRegistry::from_registrations(registrations)
    }

    /// A new registry holding the given `'static` registrations, as if they
    /// were the inventory. Duplicate names are recorded as errors (see
    /// [`OpRegistry::process_registrations`]); nothing is decoded yet.
    pub fn from_registrations(
        registrations: impl IntoIterator<Item = &'static OpRegistration>,
    ) -> Self {
        let registrations = registrations.into_iter();
        let mut registry = OpRegistry::new();
        let capacity = registrations.size_hint().0;
        registry.inventory.reserve(capacity);
        registry.index.reserve(capacity);
        // Registrations refused because their name was taken.
        let mut refused = Vec::new();
        for registration in registrations {
            let entry = InventoryEntry {
                registration,
                resolved: OnceLock::new(),
            };
            match registry.index.get(registration.name) {
                None => {
                    let slot = registry.inventory.len();
                    registry.index.insert(registration.name, slot);
                    registry.inventory.push(entry);
                }
                Some(&slot) => {
                    // Keep the registration whose location sorts first, so
                    // the outcome does not depend on link order.
                    let kept = &mut registry.inventory[slot];
                    if location_key(registration) < location_key(kept.registration) {
                        refused.push(std::mem::replace(kept, entry).registration);
                    } else {
                        refused.push(registration);
                    }
                }
            }
        }
        registry.finalize_errors = refused
            .into_iter()
            .map(|again| {
                let first = registry
                    .index
                    .get(again.name)
                    .map_or(again.location, |&slot| {
                        registry.inventory[slot].registration.location
                    });
                RegistryError::AlreadyExists {
                    name: again.name.to_owned(),
                    first: OpOrigin::Source(first),
                    again: OpOrigin::Source(again.location),
                }
            })
            .collect();
        registry
            .finalize_errors
            .sort_by(|a, b| error_key(a).cmp(&error_key(b)));
        registry
    }

    /// Looks up an op by name. Inventory ops are found without taking a
    /// lock; run-time ops are consulted on a miss.
    ///
    /// The first lookup of an inventory op decodes and checks its OpDef;
    /// an invalid registration gives [`RegistryError::Invalid`] every time.
    ///
    /// ```
    /// # use opreg_standard_ops as _; // links the standard ops
    /// use registry_core::registry::{OpRegistry, RegistryError};
    /// use registry_core::spec::OpSpec;
    /// let registry = OpRegistry::new();
    /// registry.register(OpSpec::new("Noop2"), None).unwrap();
    /// assert_eq!(registry.look_up("Noop2").unwrap().name(), "Noop2");
    /// assert!(matches!(registry.look_up("Nope"), Err(RegistryError::NotFound { .. })));
    /// ```
    #[inline]
    pub fn look_up(&self, name: &str) -> Result<&OpRegistrationData, RegistryError> {
        match self.index.get(name) {
            Some(&slot) => self.inventory[slot].resolve(),
            None => self.look_up_runtime(name),
        }
    }

    /// The OpDef of op `name` ([`OpRegistry::look_up`], then
    /// [`OpRegistrationData::op_def`]).
    pub fn look_up_op_def(&self, name: &str) -> Result<&OpDef, RegistryError> {
        self.look_up(name).map(OpRegistrationData::op_def)
    }

    fn look_up_runtime(&self, name: &str) -> Result<&OpRegistrationData, RegistryError> {
        let found = read(&self.runtime).get(name).map(|entry| entry.get());
        found.ok_or_else(|| self.not_found(name))
    }

    #[cold]
    fn not_found(&self, name: &str) -> RegistryError {
        let names = self.op_names();
        RegistryError::NotFound {
            name: name.to_owned(),
            suggestions: registry_spec::suggest::suggestions(name, names, MAX_SUGGESTIONS)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }

    /// Whether an op of that name is registered (valid or not).
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name) || read(&self.runtime).contains_key(name)
    }

    /// How many op names are registered.
    pub fn len(&self) -> usize {
        self.inventory.len() + read(&self.runtime).len()
    }

    /// Whether no op is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every registered name, sorted, internal (`_`-prefixed) ones included.
    /// Cheap: nothing is decoded, so names of invalid inventory
    /// registrations are listed too.
    pub fn op_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.inventory.iter().map(|e| e.registration.name).collect();
        names.extend(read(&self.runtime).values().map(|entry| entry.get().name()));
        names.sort_unstable();
        names
    }

    /// Registers an op at run time from its specs (TF's `REGISTER_OP` at run
    /// time), parsed and validated exactly as `#[op]` does at compile time.
    ///
    /// Fails with [`RegistryError::Invalid`] (every spec error at once) or
    /// [`RegistryError::AlreadyExists`] (naming both registrations; the
    /// existing one is kept). The watcher, if set, sees the outcome.
    ///
    /// ```
    /// use registry_core::registry::{OpRegistry, RegistryError};
    /// use registry_core::spec::OpSpec;
    /// let registry = OpRegistry::new();
    /// registry.register(OpSpec::new("Twice").input("x: float").output("y: float"), None).unwrap();
    /// let again = registry.register(OpSpec::new("Twice"), None).unwrap_err();
    /// assert!(matches!(again, RegistryError::AlreadyExists { .. }));
    /// assert!(again.to_string().contains("registered at run time at"), "{again}");
    /// ```
    #[track_caller]
    pub fn register(&self, spec: OpSpec, shape_fn: Option<ShapeFn>) -> Result<(), RegistryError> {
        let origin = OpOrigin::RunTime(Location::caller());
        match spec.build() {
            Ok(op_def) => self.insert(OpRegistrationData {
                op_def,
                shape_fn,
                origin,
            }),
            Err(errors) => {
                let error = RegistryError::Invalid {
                    name: spec.name.clone(),
                    origin,
                    reason: InvalidOp::Spec(errors),
                };
                let partial = spec.parse(&mut Vec::new());
                self.reject(error, &partial)
            }
        }
    }

    /// Registers an OpDef at run time after checking it with TensorFlow's
    /// `ValidateOpDef` rules ([`registry_spec::validate_op_def`]). Errors as
    /// for [`OpRegistry::register`].
    #[track_caller]
    pub fn register_op_def(
        &self,
        op_def: OpDef,
        shape_fn: Option<ShapeFn>,
    ) -> Result<(), RegistryError> {
        self.register_validated(op_def, shape_fn, OpOrigin::RunTime(Location::caller()))
    }

    /// Registers an OpDef from `origin` after TF's `ValidateOpDef` checks
    /// (run-time OpDefs and the ops of loaded op libraries).
    pub(crate) fn register_validated(
        &self,
        op_def: OpDef,
        shape_fn: Option<ShapeFn>,
        origin: OpOrigin,
    ) -> Result<(), RegistryError> {
        match registry_spec::validate_op_def(&op_def) {
            Ok(_) => self.insert(OpRegistrationData {
                op_def,
                shape_fn,
                origin,
            }),
            Err(e) => {
                let error = RegistryError::Invalid {
                    name: op_def.name.clone(),
                    origin,
                    reason: InvalidOp::Validation(e),
                };
                self.reject(error, &op_def)
            }
        }
    }

    fn insert(&self, data: OpRegistrationData) -> Result<(), RegistryError> {
        // The origin of the registration that holds the name already, if any.
        let first = match self.index.get(data.name()) {
            Some(&slot) => OpOrigin::Source(self.inventory[slot].registration.location),
            None => {
                let mut runtime = write(&self.runtime);
                match runtime.get(data.name()) {
                    Some(entry) => entry.get().origin,
                    None => {
                        let entry = RuntimeEntry::new(data);
                        let stored = entry.get();
                        runtime.insert(stored.name().into(), entry);
                        drop(runtime);
                        self.notify(&Ok(()), &stored.op_def);
                        return Ok(());
                    }
                }
            }
        };
        let error = RegistryError::AlreadyExists {
            name: data.op_def.name.clone(),
            first,
            again: data.origin,
        };
        self.reject(error, &data.op_def)
    }

    fn reject(&self, error: RegistryError, op_def: &OpDef) -> Result<(), RegistryError> {
        let result = Err(error);
        self.notify(&result, op_def);
        result
    }

    fn notify(&self, result: &Result<(), RegistryError>, op_def: &OpDef) {
        // Called without any registry lock held, so the watcher may use the registry.
        let watcher = read(&self.watcher).clone();
        if let Some(watcher) = watcher {
            watcher(result, op_def);
        }
    }

    /// Sets the watcher: called with the outcome and the OpDef of every later
    /// run-time registration (TF's `OpRegistry::Watcher`). One watcher at a
    /// time: setting a second fails with [`RegistryError::WatcherAlreadySet`]
    /// ([`OpRegistry::clear_watcher`] first).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use registry_core::registry::OpRegistry;
    /// use registry_core::spec::OpSpec;
    ///
    /// let registry = OpRegistry::new();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// registry
    ///     .set_watcher(move |result, op_def| log.lock().unwrap().push((op_def.name.clone(), result.is_ok())))
    ///     .unwrap();
    /// registry.register(OpSpec::new("Watched"), None).unwrap();
    /// let _ = registry.register(OpSpec::new("Watched"), None);
    /// assert_eq!(*seen.lock().unwrap(), [("Watched".to_string(), true), ("Watched".to_string(), false)]);
    /// assert!(registry.set_watcher(|_, _| {}).is_err());
    /// ```
    pub fn set_watcher(
        &self,
        watcher: impl Fn(&Result<(), RegistryError>, &OpDef) + Send + Sync + 'static,
    ) -> Result<(), RegistryError> {
        let mut slot = write(&self.watcher);
        if slot.is_some() {
            return Err(RegistryError::WatcherAlreadySet);
        }
        *slot = Some(Arc::new(watcher));
        Ok(())
    }

    /// Removes the watcher; returns whether one was set.
    pub fn clear_watcher(&self) -> bool {
        write(&self.watcher).take().is_some()
    }

    /// Every problem found in the registrations (TF's
    /// `ProcessRegistrations`): duplicate inventory names found while
    /// finalizing, then every inventory op that fails to decode or validate
    /// (this decodes all of them, once). Lookups keep working for the valid
    /// ops either way. Errors are sorted by op name.
    pub fn process_registrations(&self) -> Result<(), Vec<RegistryError>> {
        let mut errors = self.finalize_errors.clone();
        errors.extend(
            self.inventory
                .iter()
                .filter_map(|entry| entry.resolve().err()),
        );
        errors.sort_by(|a, b| error_key(a).cmp(&error_key(b)));
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Every valid op as an OpList sorted by name (TF's `Export`). Ops whose
    /// name starts with `_` are included only if `include_internal`.
    ///
    /// ```
    /// use registry_core::registry::OpRegistry;
    /// use registry_core::spec::OpSpec;
    /// let registry = OpRegistry::new();
    /// registry.register(OpSpec::new("B"), None).unwrap();
    /// registry.register(OpSpec::new("_A"), None).unwrap();
    /// registry.register(OpSpec::new("A"), None).unwrap();
    /// let names = |list: registry_core::proto::OpList| list.op.into_iter().map(|o| o.name).collect::<Vec<_>>();
    /// assert_eq!(names(registry.export_op_list(false)), ["A", "B"]);
    /// assert_eq!(names(registry.export_op_list(true)), ["A", "B", "_A"]);
    /// ```
    pub fn export_op_list(&self, include_internal: bool) -> OpList {
        let mut ops: Vec<OpDef> = self
            .op_names()
            .into_iter()
            .filter(|name| include_internal || !name.starts_with('_'))
            .filter_map(|name| self.look_up(name).ok())
            .map(|data| data.op_def.clone())
            .collect();
        ops.sort_by(|a, b| a.name.cmp(&b.name));
        OpList { op: ops }
    }

    /// The exported OpList as protobuf text format (TF's
    /// `OpRegistry::DebugString`).
    pub fn debug_string(&self, include_internal: bool) -> String {
        self.export_op_list(include_internal).to_pbtxt()
    }
}

fn location_key(registration: &OpRegistration) -> (&'static str, u32, &'static str) {
    let location = registration.location;
    (location.file, location.line, location.module_path)
}

fn error_key(error: &RegistryError) -> (&str, String) {
    (error.op_name().unwrap_or(""), error.to_string())
}

/// Makes sure crates of ops are linked into this binary, so that their
/// `#[op]` (and `#[kernel]`) registrations are seen.
///
/// # Why this is needed
/// `inventory` collects registrations from every object linked into the
/// binary, but a crate that only appears in `Cargo.toml` is never linked:
/// rustc loads an `--extern` crate only when the source names it, so its
/// registrations are absent (in debug, release and LTO builds alike). No
/// stable Cargo or build-script setting changes that: a dependency's
/// `cargo::rustc-link-arg` applies to that package's own targets only, and
/// rustc's `--extern force:` is unstable. Naming the crate once anywhere in
/// the binary is enough; this macro does that, with a name that says why.
///
/// ```
/// # use opreg_standard_ops as _; // links the standard ops
/// // main.rs of a binary whose Cargo.toml lists crates of ops, say
/// // kernels-cpu and my-ops: `registry_core::link_ops!(kernels_cpu, my_ops);`
/// registry_core::link_ops!(registry_core);
///
/// fn main() {
///     // Every op of the named crates is now in the global registry.
///     # let _ = registry_core::OpRegistry::global();
/// }
/// ```
///
/// Equivalent to `use kernels_cpu as _;` for each crate (crate names with
/// `-` are written with `_`). Usable at module level or inside a function.
/// Turning on rustc's `unused_crate_dependencies` lint in the binary flags
/// crates that are in `Cargo.toml` but never named.
#[macro_export]
macro_rules! link_ops {
    ($($krate:ident),+ $(,)?) => {
        const _: () = {
            $(
                #[allow(unused_imports)]
                use ::$krate as _;
            )+
        };
    };
}
